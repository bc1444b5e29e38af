// gemm_scaled_thread.h — the scaled-storage GEMM's per-thread bodies (kernels/gemm.h "Scaled
// storage"), written once (PP_HD) for both devices: the CPU emulation (kernels/cpu/gemm_scaled.c)
// runs them in loops, the GPU (kernels/cuda/gemm_scaled_kernels.cu) one thread each. Three steps:
//   1. amax of each operand (pp_amax_step folded over every element: a maximum, NaN sticky, so
//      any order — the CPU's loop, the GPU's atomicMax on the bit patterns — gives the same value);
//   2. quantise: one body per (line, block) of an operand, reading only that block;
//   3. one body per output element: the block partials over k in order, then the epilogue.
// No body reads what another body of the same step writes, so the bits do not depend on the order
// the threads run in (tests/test_gemm_scaled_threads.c runs them in an adversarial order).
// Range diagnostics (kernels/ranges.h): each body's notes, read-only, after it ran
// (pp_gemm_scaled_block_notes, pp_gemm_scaled_element_notes; the per-tensor scale once per
// operand, pp_gemm_scaled_scale_notes), the same calls on both devices.
// C11 and nvcc.
#ifndef PP_GEMM_SCALED_THREAD_H
#define PP_GEMM_SCALED_THREAD_H

#include <stdint.h>

#include "exact_sites.h"
#include "gemm.h"
#include "pp_hd.h"
#include "ranges.h"
#include "scaling.h"
#include "sites.h"

// One operand seen as lines along k: line t = (batch b, row or column r) holds elements
// base(t) + l·stride for l < k. A: lines (b, i), stride 1; B: lines (b, j), stride n.
// site, scale_site: the operand's exact sites (quant_a and block_scale_a for A, quant_b and
// block_scale_b for B; kernels/gemm.h "Exact sites").
typedef struct pp_gemm_scaled_operand {
    int64_t batch, lines, k, stride, line_step, batch_step, nblk, bs;
    int site, scale_site;
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
                                is_b ? PP_SITE_GEMM_QUANT_B : PP_SITE_GEMM_QUANT_A,
                                is_b ? PP_SITE_GEMM_BLOCK_SCALE_B : PP_SITE_GEMM_BLOCK_SCALE_A};
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

// Exact site block_scale_a/b under a per-tensor scaling (kernels/gemm.h "Exact sites"): s
// without its binary32 roundings, max_finite(F)/amax (tensor-current; amax the operand's) or
// (max_finite(F)·2^−margin)/amax (tensor-delayed; amax the recipe's), one binary64 quotient;
// the same special values as pp_tensor_scale and pp_delayed_scale (1 for amax 0, NaN for a
// non-finite tensor with current scaling, 1 for a delayed amax that is not positive and finite)
// and the same clamp to FLT_MAX, a range limit of TE's binary32 scale rather than a rounding.
// The caller takes X = 1/s in binary64 (pp_gemm_scaled_tensor_g64).
PP_HD static inline double pp_gemm_scaled_tensor_s64(const pp_gemm_variant *v, double amax, int margin)
{
    double max_finite = pp_format_get(v->format).max_finite, s;
    if (v->scaling == PP_SCALING_TENSOR) {
        if (amax == 0 || isnan(amax))
            return amax == 0 ? 1.0 : amax;
        s = max_finite / amax;
    } else {
        if (!(amax > 0) || !(amax <= 1.7976931348623157e308))
            return 1.0;
        s = ldexp(max_finite, -margin) / amax;
    }
    return s > 3.4028234663852886e38 ? 3.4028234663852886e38 : s;
}

// X = 1/s in binary64 (one rounding, relative 2^−53, where TE's RN_32(1/s) is off by up to 2^−24):
// the dequantisation factor under exact block_scale_a/b with a per-tensor scaling.
PP_HD static inline double pp_gemm_scaled_tensor_g64(double s)
{
    return 1.0 / s;
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
    int e = pp_mx_rule_exp(v->mx_rule, bamax, v->format);
    double x_blk = v->scaling == PP_SCALING_MX ? pp_mx_scale(e)
                 : v->scaling == PP_SCALING_NVFP4 ? pp_nvfp4_block_scale(bamax, g) : 1.0;
    if (v->scaling == PP_SCALING_NVFP4 && pp_site_exact(v->exact_sites, o->scale_site))
        x_blk = bamax / (6.0 * g);  // exact block scale: no RN_e4m3,sat (gemm.h "Exact sites")
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
             : v->scaling == PP_SCALING_MX ? pp_mx_rule_quantise(v->mx_rule, v->format, xv, e)
             : pp_nvfp4_quantise(xv, x_blk, g);
    }
}

// Step 3, the body of output element (bi, i, j): per block in order, p = fmaf chain over the
// block's l in order (per-tensor scalings: one chain over all of k, or the variant's mma), scaled and added
// (pp_gemm_block_add) into acc; then c = RN_32(α_c·RN_32(d·acc)), d = RN_32(g_a·g_b). Written as
// its two halves (the accumulation, the descale) so range diagnostics can see acc.
//
// The loop is written once, PP_GEMM_SCALED_CHAINS, for two arithmetics that differ by design: the
// binary32 emulation (pp_gemm_scaled_accum) and exact site accum (pp_gemm_scaled_accum64). T is the
// accumulator's type, STEP(a, b, p) one step of a block's chain (a, b the stored operands),
// BLOCK_ADD(acc, p, x) a block's partial p with scale x = x_a·x_b added into acc.
#define PP_GEMM_SCALED_CHAINS(T, STEP, BLOCK_ADD)                                                 \
    int64_t ta = bi * A->lines + i, tb = bi * B->lines + j;                                       \
    const double *ra = qa + pp_gemm_scaled_line_base(A, ta), *rb = qb + pp_gemm_scaled_line_base(B, tb); \
    int blocked = v->scaling != PP_SCALING_TENSOR && v->scaling != PP_SCALING_DELAYED;           \
    T acc = 0;                                                                                    \
    for (int64_t blk = 0; blk < A->nblk; blk++) {                                                 \
        int64_t l0 = blk * A->bs, l1 = l0 + A->bs < A->k ? l0 + A->bs : A->k;                     \
        T p = blocked ? (T)0 : acc;                                                               \
        for (int64_t l = l0; l < l1; l++)                                                         \
            p = STEP(ra[l], rb[l * B->stride], p);                                                \
        acc = blocked ? BLOCK_ADD(acc, p, xsa[ta * A->nblk + blk] * xsb[tb * B->nblk + blk]) : p; \
    }                                                                                             \
    return acc

// The binary32 step: one fmaf (the operands are values of binary32, so the casts are exact).
PP_HD static inline float pp_gemm_scaled_step32(double a, double b, float p)
{
    return pp_gemm_step_fp32((float)a, (float)b, p);
}

PP_HD static inline float pp_gemm_scaled_accum(const pp_gemm_variant *v, const pp_gemm_scaled_operand *A,
                                               const double *qa, const double *xsa, const pp_gemm_scaled_operand *B,
                                               const double *qb, const double *xsb, int64_t bi, int64_t i, int64_t j)
{
    if (v->mma != PP_GEMM_MMA_FP32_CHAIN && (v->scaling == PP_SCALING_TENSOR || v->scaling == PP_SCALING_DELAYED)) {
        // a tensor core's accumulation (gemm.h "mma"): per-tensor scalings only (refused with blocks)
        int64_t ta = bi * A->lines + i, tb = bi * B->lines + j;
        const double *ra = qa + pp_gemm_scaled_line_base(A, ta), *rb = qb + pp_gemm_scaled_line_base(B, tb);
        int emin = pp_format_get(v->format).emin;
        return pp_sm90_fp8_dot(ra, 1, rb, B->stride, A->k, emin, emin, pp_gemm_mma_promote(v->mma));
    }
    PP_GEMM_SCALED_CHAINS(float, pp_gemm_scaled_step32, pp_gemm_block_add);
}

// The accumulation under exact site accum (kernels/gemm.h "Exact sites"): the same chains and
// block adds in binary64. Each product of two binary32 values is exact in binary64 (as is x_a·x_b
// of two block scales), so the only roundings left are binary64's: the additions and p·x_a·x_b.
PP_HD static inline double pp_gemm_scaled_step64(double a, double b, double p)
{
    return (double)(float)a * (double)(float)b + p;
}

PP_HD static inline double pp_gemm_scaled_block_add64(double acc, double p, double x)
{
    return acc + p * x;
}

PP_HD static inline double pp_gemm_scaled_accum64(const pp_gemm_variant *v, const pp_gemm_scaled_operand *A,
                                                  const double *qa, const double *xsa,
                                                  const pp_gemm_scaled_operand *B, const double *qb,
                                                  const double *xsb, int64_t bi, int64_t i, int64_t j)
{
    PP_GEMM_SCALED_CHAINS(double, pp_gemm_scaled_step64, pp_gemm_scaled_block_add64);
}

// Step 3's descale factor d from dg = g_a·g_b (tensor-current/-delayed: TE's scale_inv_a·scale_inv_b;
// nvfp4: the global scales' product; mx: 1): d = RN_32(dg), dg itself with site scale exact
// (kernels/gemm.h "Exact sites"). Its rounding is site scale's: d overflows to +Inf when
// X_a·X_b > FLT_MAX (amaxes whose product is above about 6.8e43 for e4m3), so the scale notes
// (pp_gemm_scaled_element_notes) take dg·acc as the value before the site's rounding.
PP_HD static inline double pp_gemm_scaled_d(const pp_gemm_variant *v, double dg)
{
    return pp_site_round(v->exact_sites, PP_SITE_GEMM_SCALE, PP_FMT_FP32, dg);
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

// ---------------------------------------------------------------------------------------------
// Range diagnostics (kernels/ranges.h), the same on both devices

// Range notes of one block's scale s (sites block_scale_a, block_scale_b): its value in the
// scale's own format, and whether it hit that format's limits — mx: the shared exponent clamped
// to E8M0's [−127, 127] (or a NaN block); nvfp4: the E4M3 scale saturated at 448 or 0 for a
// non-zero block; per-tensor: the dequantisation scale X not a positive normal binary32.
PP_HD static inline void pp_gemm_scaled_scale_notes(const pp_gemm_variant *v, pp_ranges *R, int site, double bamax,
                                                    double s, double g)
{
    int clamped = 0;
    if (v->scaling == PP_SCALING_MX) {
        clamped = pp_mx_rule_clamped(v->mx_rule, bamax, v->format);
        pp_range_note1(R, site, 0, PP_FMT_E8M0, s);
    } else if (v->scaling == PP_SCALING_NVFP4) {
        double want = bamax / (6.0 * g);  // the scale before its E4M3 rounding
        clamped = want > 448.0 || (bamax > 0 && s == 0);
        pp_range_note(R, site, 0, PP_FMT_E4M3, want, s);
    } else {
        clamped = !(s > 0 && isfinite(s) && s >= 0x1p-126);
        pp_range_note1(R, site, 0, PP_FMT_FP32, s);
    }
    if (clamped)
        pp_range_note_clamp(R, site, 0);
}

// Range notes of step 2's body (line t, block blk) after it ran (site quant_a or quant_b, the
// operand's o->site; the block scales at site + 2): each element before its (saturating) cast —
// x·s for the per-tensor scalings (TE multiplies by its scale), x over the block's scale for mx
// and nvfp4 — and after. R NULL: nothing.
PP_HD static inline void pp_gemm_scaled_block_notes(const pp_gemm_variant *v, const pp_gemm_scaled_operand *o,
                                                    const double *x, const double *q, const double *xs, double g,
                                                    double s, int64_t t, int64_t blk, pp_ranges *R)
{
    if (!R)
        return;
    int64_t base = pp_gemm_scaled_line_base(o, t);
    int64_t l0 = blk * o->bs, l1 = l0 + o->bs < o->k ? l0 + o->bs : o->k;
    int per_tensor = v->scaling == PP_SCALING_TENSOR || v->scaling == PP_SCALING_DELAYED;
    double x_blk = xs[t * o->nblk + blk];
    if (!per_tensor) {
        double bamax = 0;
        for (int64_t l = l0; l < l1; l++)
            bamax = pp_amax_step(bamax, x[base + l * o->stride]);
        pp_gemm_scaled_scale_notes(v, R, o->site + 2, bamax, x_blk, g);
    }
    double X = v->scaling == PP_SCALING_MX ? x_blk : x_blk * g;
    for (int64_t l = l0; l < l1; l++) {
        int64_t i = base + l * o->stride;
        double pre = per_tensor ? x[i] * s : X != 0 ? x[i] / X : 0.0;
        pp_range_note(R, o->site, 0, v->format, pre, q[i]);
    }
}

// Whether every operand of output element (bi, i, j)'s chains is finite: the stored elements
// of its two lines and their block scales. An infinite accumulator from finite operands was made
// by the accumulation itself (an fp32 chain step, or a block add p·x_a·x_b past binary32's range:
// an overflow at site accum, kernels/ranges.h); from an infinite operand it was passed on.
PP_HD static inline int pp_gemm_scaled_operands_finite(const pp_gemm_scaled_operand *A, const double *qa,
                                                       const double *xsa, const pp_gemm_scaled_operand *B,
                                                       const double *qb, const double *xsb, int64_t bi, int64_t i,
                                                       int64_t j)
{
    int64_t ta = bi * A->lines + i, tb = bi * B->lines + j;
    const double *ra = qa + pp_gemm_scaled_line_base(A, ta), *rb = qb + pp_gemm_scaled_line_base(B, tb);
    int finite = 1;
    for (int64_t blk = 0; blk < A->nblk; blk++)
        finite &= isfinite(xsa[ta * A->nblk + blk]) && isfinite(xsb[tb * B->nblk + blk]);
    for (int64_t l = 0; l < A->k; l++)
        finite &= isfinite(ra[l]) && isfinite(rb[l * B->stride]);
    return finite;
}

// Step 3's body with its range notes (sites accum, scale, c): the statements of
// pp_gemm_scaled_element with no exact site, in its two halves, so the notes see acc and d·acc.
// accum is noted as a chain's end (pp_range_note_chain), as the plain GEMM's is, so an Inf made
// inside the accumulation counts as an overflow there; scale and c then pass it on (their e is
// already infinite), so they count none. Site scale rounds twice, d = RN_32(dg) (pp_gemm_scaled_d)
// and RN_32(d·acc): its note takes e = dg·acc in binary64 (finite for every binary32 dg and acc),
// so a d that overflowed (or flushed to zero) counts at scale, per output element it reaches.
PP_HD static inline double pp_gemm_scaled_element_notes(const pp_gemm_variant *v, double alpha_c, double d,
                                                        double dg, const pp_gemm_scaled_operand *A, const double *qa,
                                                        const double *xsa, const pp_gemm_scaled_operand *B,
                                                        const double *qb, const double *xsb, int64_t bi, int64_t i,
                                                        int64_t j, pp_ranges *R)
{
    float acc = pp_gemm_scaled_accum(v, A, qa, xsa, B, qb, xsb, bi, i, j);
    float da = pp_gemm_scaled_descale(d, acc);
    double c = pp_gemm_epilogue_fp32(PP_FMT_FP32, alpha_c, da);
    if (R)  // the operands' scan only when noting
        pp_range_note_chain(R, PP_SITE_GEMM_ACCUM, 0, PP_FMT_FP32, acc,
                            pp_gemm_scaled_operands_finite(A, qa, xsa, B, qb, xsb, bi, i, j));
    pp_range_note(R, PP_SITE_GEMM_SCALE, 0, PP_FMT_FP32, dg * (double)acc, da);
    pp_range_note(R, PP_SITE_GEMM_C, 0, PP_FMT_FP32, alpha_c * (double)da, c);
    return c;
}

#endif
