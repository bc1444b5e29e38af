// gemm_scaled_thread.h — the scaled-storage GEMM's per-thread bodies (kernels/gemm.h "Scaled
// storage"), written once (PP_HD) for both devices: the CPU emulation (kernels/cpu/gemm_scaled.c)
// runs them in loops, the GPU (kernels/cuda/gemm_scaled_kernels.cu) one thread each. Three steps:
//   1. amax of each operand (pp_amax_step folded over every element: a maximum, NaN sticky, so
//      any order — the CPU's loop, the GPU's atomicMax on the bit patterns — gives the same value);
//   2. quantise: one body per (line, block) of an operand, reading only that block;
//   3. one body per output element: the block partials over k in order, then the epilogue.
// No body reads what another body of the same step writes, so the bits do not depend on the order
// the threads run in (tests/test_gemm_scaled_threads.c runs them in an adversarial order).
// C11 and nvcc.
#ifndef PP_GEMM_SCALED_THREAD_H
#define PP_GEMM_SCALED_THREAD_H

#include <stdint.h>

#include "exact_sites.h"
#include "gemm.h"
#include "pp_hd.h"
#include "scaling.h"
#include "sites.h"

// One operand seen as lines along k: line t = (batch b, row or column r) holds elements
// base(t) + l·stride for l < k. A: lines (b, i), stride 1; B: lines (b, j), stride n.
// site: the operand's exact site (quant_a for A, quant_b for B; kernels/gemm.h "Exact sites").
typedef struct pp_gemm_scaled_operand {
    int64_t batch, lines, k, stride, line_step, batch_step, nblk, bs;
    int site;
} pp_gemm_scaled_operand;

// Step 1 on a device with atomics: the amax as the maximum of a key per element, key(v) = the bits
// of |v| for finite v, of a quiet NaN otherwise. Non-negative binary64 values order as their bit
// patterns, and the NaN's pattern lies above +Inf's, so the largest key of a tensor, read back,
// is pp_amax_step's fold from 0 (the largest |v|, or NaN when some v is not finite), whatever
// order the keys meet in (the GPU's atomicMax on unsigned 64-bit words). Start from key(0) = 0.
PP_HD static inline uint64_t pp_amax_key(double v)
{
    double a = fabs(v);
    return a <= 1.7976931348623157e308 ? pp_f64_bits(a) : PP_F64_QNAN;
}

PP_HD static inline double pp_amax_of_key(uint64_t key)
{
    return pp_f64_from_bits(key);
}

// A [batch, m, k] (is_b 0) or B [batch, k, n] (is_b 1) under scaling s.
PP_HD static inline pp_gemm_scaled_operand pp_gemm_scaled_operand_of(pp_scaling s, int is_b, int64_t batch,
                                                                     int64_t m, int64_t n, int64_t k)
{
    int64_t bs = pp_gemm_scaling_block(s, k), nblk = k ? (k + bs - 1) / bs : 0;
    pp_gemm_scaled_operand o = {batch, is_b ? n : m, k, is_b ? n : 1, is_b ? 1 : k, is_b ? k * n : m * k, nblk, bs,
                                is_b ? PP_SITE_GEMM_QUANT_B : PP_SITE_GEMM_QUANT_A};
    return o;
}

PP_HD static inline int64_t pp_gemm_scaled_line_base(const pp_gemm_scaled_operand *o, int64_t t)
{
    return (t / o->lines) * o->batch_step + (t % o->lines) * o->line_step;
}

// The per-tensor scale s that multiplies an operand's elements before the cast (TE's `scale`):
// tensor-current from the operand's amax (step 1), tensor-delayed s_delayed (from the recipe's
// history); 1 for the block scalings.
PP_HD static inline double pp_gemm_scaled_tensor_s(const pp_gemm_variant *v, double amax, double s_delayed)
{
    return v->scaling == PP_SCALING_TENSOR ? pp_tensor_scale(v->format, amax)
         : v->scaling == PP_SCALING_DELAYED ? s_delayed : 1.0;
}

// The per-tensor dequantisation scale g of an operand: X = RN_32(1/s) for both per-tensor
// scalings (TE's scale_inv), nvfp4's global g from the amax; 1 for mx.
PP_HD static inline double pp_gemm_scaled_tensor_g(const pp_gemm_variant *v, double amax, double s)
{
    return v->scaling == PP_SCALING_TENSOR || v->scaling == PP_SCALING_DELAYED ? pp_tensor_scale_inv(s)
         : v->scaling == PP_SCALING_NVFP4 ? pp_nvfp4_global(amax) : 1.0;
}

// Step 2, the body of (line t, block blk): q (same layout as x) gets the block's quantised
// elements, xs[t·nblk + blk] its block scale (mx: 2^e; nvfp4: the E4M3 s; per-tensor: 1);
// g and s are the operand's per-tensor scales above.
PP_HD static inline void pp_gemm_scaled_quantise_block(const pp_gemm_variant *v, const pp_gemm_scaled_operand *o,
                                                       const double *x, double *q, double *xs, double g,
                                                       double s, int64_t t, int64_t blk)
{
    int64_t base = pp_gemm_scaled_line_base(o, t);
    int64_t l0 = blk * o->bs, l1 = l0 + o->bs < o->k ? l0 + o->bs : o->k;
    double bamax = 0;
    for (int64_t l = l0; l < l1; l++)
        bamax = pp_amax_step(bamax, x[base + l * o->stride]);
    int e = pp_mx_shared_exp(bamax, pp_format_get(v->format).emax);
    double x_blk = v->scaling == PP_SCALING_MX ? pp_mx_scale(e)
                 : v->scaling == PP_SCALING_NVFP4 ? pp_nvfp4_block_scale(bamax, g) : 1.0;
    if (pp_site_exact(v->exact_sites, o->site)) {  // exact quant site: x itself, block scale 1 (gemm.h)
        xs[t * o->nblk + blk] = 1.0;
        for (int64_t l = l0; l < l1; l++)
            q[base + l * o->stride] = x[base + l * o->stride];
        return;
    }
    xs[t * o->nblk + blk] = x_blk;
    for (int64_t l = l0; l < l1; l++) {
        int64_t i = base + l * o->stride;
        double xv = x[i];
        q[i] = v->scaling == PP_SCALING_TENSOR || v->scaling == PP_SCALING_DELAYED ? pp_tensor_quantise(v->format, xv, s)
             : v->scaling == PP_SCALING_MX ? pp_mx_quantise(v->format, xv, e, PP_RND_NE, 0)
             : pp_nvfp4_quantise(xv, x_blk, g);
    }
}

// Step 3, the body of output element (bi, i, j): per block in order, p = fmaf chain over the
// block's l in order (per-tensor scalings: one chain over all of k, or the variant's mma), scaled and added
// (pp_gemm_block_add) into acc; then c = RN_32(α_c·RN_32(d·acc)), d = RN_32(g_a·g_b). Written as
// its two halves (the accumulation, the descale) so range diagnostics can see acc.
PP_HD static inline float pp_gemm_scaled_accum(const pp_gemm_variant *v, const pp_gemm_scaled_operand *A,
                                               const double *qa, const double *xsa, const pp_gemm_scaled_operand *B,
                                               const double *qb, const double *xsb, int64_t bi, int64_t i, int64_t j)
{
    int64_t ta = bi * A->lines + i, tb = bi * B->lines + j;
    const double *ra = qa + pp_gemm_scaled_line_base(A, ta), *rb = qb + pp_gemm_scaled_line_base(B, tb);
    int blocked = v->scaling != PP_SCALING_TENSOR && v->scaling != PP_SCALING_DELAYED;
    if (v->mma != PP_GEMM_MMA_FP32_CHAIN && !blocked) {  // a tensor core's accumulation (gemm.h "mma")
        int emin = pp_format_get(v->format).emin;
        return pp_sm90_fp8_dot(ra, 1, rb, B->stride, A->k, emin, emin, pp_gemm_mma_promote(v->mma));
    }
    float acc = 0.0f;
    for (int64_t blk = 0; blk < A->nblk; blk++) {
        int64_t l0 = blk * A->bs, l1 = l0 + A->bs < A->k ? l0 + A->bs : A->k;
        float p = blocked ? 0.0f : acc;
        for (int64_t l = l0; l < l1; l++)
            p = pp_gemm_step_fp32((float)ra[l], (float)rb[l * B->stride], p);
        acc = blocked ? pp_gemm_block_add(acc, p, xsa[ta * A->nblk + blk] * xsb[tb * B->nblk + blk]) : p;
    }
    return acc;
}

// The accumulation under exact site accum (kernels/gemm.h "Exact sites"): the same chains and
// block adds in binary64. Each product of two binary32 values is exact in binary64 (as is x_a·x_b
// of two block scales), so the only roundings left are binary64's: the additions and p·x_a·x_b.
PP_HD static inline double pp_gemm_scaled_accum64(const pp_gemm_variant *v, const pp_gemm_scaled_operand *A,
                                                  const double *qa, const double *xsa,
                                                  const pp_gemm_scaled_operand *B, const double *qb,
                                                  const double *xsb, int64_t bi, int64_t i, int64_t j)
{
    int64_t ta = bi * A->lines + i, tb = bi * B->lines + j;
    const double *ra = qa + pp_gemm_scaled_line_base(A, ta), *rb = qb + pp_gemm_scaled_line_base(B, tb);
    int blocked = v->scaling != PP_SCALING_TENSOR && v->scaling != PP_SCALING_DELAYED;
    double acc = 0.0;
    for (int64_t blk = 0; blk < A->nblk; blk++) {
        int64_t l0 = blk * A->bs, l1 = l0 + A->bs < A->k ? l0 + A->bs : A->k;
        double p = blocked ? 0.0 : acc;
        for (int64_t l = l0; l < l1; l++)
            p = (double)(float)ra[l] * (double)(float)rb[l * B->stride] + p;
        acc = blocked ? acc + p * (xsa[ta * A->nblk + blk] * xsb[tb * B->nblk + blk]) : p;
    }
    return acc;
}

PP_HD static inline float pp_gemm_scaled_descale(double d, float acc)
{
    return (float)pp_round(PP_FMT_FP32, d * (double)acc, PP_RND_NE, 0);
}

PP_HD static inline double pp_gemm_scaled_element(const pp_gemm_variant *v, double alpha_c, double d,
                                                  const pp_gemm_scaled_operand *A, const double *qa, const double *xsa,
                                                  const pp_gemm_scaled_operand *B, const double *qb, const double *xsb,
                                                  int64_t bi, int64_t i, int64_t j)
{
    pp_site_mask x = v->exact_sites;
    if (x) {  // "Exact sites" (kernels/gemm.h); mask 0 runs the statements below, as before
        double acc64 = pp_site_exact(x, PP_SITE_GEMM_ACCUM)
                     ? pp_gemm_scaled_accum64(v, A, qa, xsa, B, qb, xsb, bi, i, j)
                     : (double)pp_gemm_scaled_accum(v, A, qa, xsa, B, qb, xsb, bi, i, j);
        double da = pp_site_round(x, PP_SITE_GEMM_SCALE, PP_FMT_FP32, d * acc64);
        return pp_site_round(x, PP_SITE_GEMM_C, PP_FMT_FP32, alpha_c * da);
    }
    float acc = pp_gemm_scaled_accum(v, A, qa, xsa, B, qb, xsb, bi, i, j);
    return pp_gemm_epilogue_fp32(PP_FMT_FP32, alpha_c, pp_gemm_scaled_descale(d, acc));
}

#endif
