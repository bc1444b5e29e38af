// attention_fp8.h — FP8 attention, FlashAttention-3's FP8 forward (the attention knob fp8 = "fa3"):
// the per-tensor quantisation of Q, K, V to e4m3, the descales folded into the softmax's exp2
// scale, FA3's max offset, P converted to e4m3 before P·V, v's descale in the epilogue. Element
// steps as PP_HD C11 (the flash loop of kernels/attention_threads.h calls them inside its tile
// loop, on every device); the per-tensor amax and scale are host steps of the launch plan.
// The specification, with its sources, is kernels/attention.h, "FP8 (fp8 = fa3)".
#ifndef PP_ATTENTION_FP8_H
#define PP_ATTENTION_FP8_H

#include <math.h>
#include <stdint.h>

#include "attention.h"
#include "format.h"
#include "pp_hd.h"
#include "scaling.h"
#include "sm90_fp8_mma.h"

// FA3 subtracts 8 from the scaled row max, so that p = 2^(s·σ' − m·σ' + 8) lies in [0, 256]
// and P uses more of e4m3's range (hopper/softmax.h @7a80279:67-69, Max_offset = 8 for FP8:
// flash_fwd_kernel_sm90.h @c082294, the consumer's Softmax<…, Is_FP8 ? 8 : 0>).
#define PP_ATTN_FP8_MAX_OFFSET 8.0f

// ---------------------------------------------------------------------------------------------
// Host: the per-tensor quantisation the caller applies before calling FA3

// The per-tensor current scale s of the n values x (kernels/scaling.h, tensor-current, as
// TransformerEngine computes it: s = RN_32(448/amax), 1 for amax 0, NaN when x holds NaN or ±Inf);
// the elements are multiplied by s, and FA3's descale argument is X = RN_32(1/s) (pp_attn_fp8_descale).
static inline double pp_attn_fp8_tensor_scale(const double *x, int64_t n)
{
    double amax = 0;
    for (int64_t i = 0; i < n; i++)
        amax = pp_amax_step(amax, x[i]);
    return pp_tensor_scale(PP_FMT_E4M3, amax);
}

// FA3's descale of a tensor quantised with scale s: X = RN_32(1/s) (TE's scale_inv).
static inline double pp_attn_fp8_descale(double s)
{
    return pp_tensor_scale_inv(s);
}

// The e4m3 element of x under scale s: RN_e4m3,sat(RN_32(x·s)) (kernels/scaling.h), a binary32.
PP_HD static inline float pp_attn_fp8_quantise(double x, double s)
{
    return (float)pp_tensor_quantise(PP_FMT_E4M3, x, s);
}

// The values the kernel's e4m3 elements stand for, X·P exactly (a binary64 holds the product of
// a binary32 and a 4-bit-significand e4m3): what a reference over the quantised inputs reads.
// out may alias x. Returns X, the descale.
static inline double pp_attn_fp8_dequantised(const double *x, int64_t n, double *out)
{
    double s = pp_attn_fp8_tensor_scale(x, n), X = pp_attn_fp8_descale(s);
    for (int64_t i = 0; i < n; i++)
        out[i] = X * (double)pp_attn_fp8_quantise(x[i], s);
    return X;
}

// FA3's exp2 scale with the descales folded in: σ'log2e = RN_32(sl2 · RN_32(X_q·X_k)), sl2 =
// RN_32(σ32 · log2 e) as the host computes it (flash_fwd_kernel_sm90.h @c082294: the consumer
// multiplies softmax_scale_log2 by q_descale·k_descale, both binary32).
static inline float pp_attn_fp8_sl2(float sl2, double xq, double xk)
{
    return sl2 * ((float)xq * (float)xk);
}

// ---------------------------------------------------------------------------------------------
// Element steps (the flash loop's; fp8 0 is FA2's arithmetic, unchanged)

// The scaled max the exponent subtracts: FA2's m·σlog2e, or FA3's m·σ'log2e − 8, contracted into
// one FFMA by nvcc (softmax.h @7a80279:77-79); 0 for m = −Inf (Check_inf, no offset).
PP_HD static inline float pp_attn_fp8_max_scaled(int fp8, const pp_attn_scalars *sc, float m)
{
    if (!fp8)
        return pp_attn_flash_max_scaled(sc, m);
    return m == -INFINITY ? 0.0f : fmaf(m, sc->sl2, -PP_ATTN_FP8_MAX_OFFSET);
}

// P as P·V reads it: RN_F(p) (FA2), or RN_e4m3,sat(p) (FA3 FP8: the fp32 P converted to the
// element type e4m3, cvt.rn.satfinite; mainloop_fwd_sm90_tma_gmma_ws.hpp @0473b46, convert_type_out
// of the softmax's output before the P·V GEMM). p ≤ 256 here, so the saturation never acts.
PP_HD static inline float pp_attn_fp8_p(int fp8, pp_format_id f, float p)
{
    if (!fp8)
        return pp_attn_store(f, p);
    return (float)pp_round(PP_FMT_E4M3, (double)p, (pp_rounding)(PP_RND_NE | PP_RND_SAT), 0);
}

// FA3 FP8 epilogue of a row (softmax.h @7a80279:137-153, finalize(v_descale), then rescale_o):
// l = (l0 + l2) + (l1 + l3) (quad all-reduce); inv = 1/l; s = inv·X_v (one binary32 multiply);
// out = RN_F(o·s); lse = fma(m, RN_32(σ'log2e · RN_32(ln 2)), log(l·2^−8)) (the sum divided by
// the 2^8 of the max offset, __logf; the product and add contracted). A row that saw no key or
// whose sum is 0: zeros, lse −Inf (as FA3: inv 0, lse −Inf). order_seed, row: "Order band".
PP_HD static inline void pp_attn_fp8_finish(pp_format_id f, const pp_attn_scalars *sc, float xv, int seen, float m,
                                            const float *l4, float *o, int64_t d, float *lse, uint64_t order_seed,
                                            int64_t row)
{
    float l = pp_attn_order_row_sum(order_seed, row, l4);
    if (!seen || l == 0.0f) {
        for (int64_t c = 0; c < d; c++)
            o[c] = 0.0f;
        *lse = -INFINITY;
        return;
    }
    float s = (1.0f / l) * xv;
    for (int64_t c = 0; c < d; c++)
        o[c] = pp_attn_store(f, o[c] * s);
    float ls = l * (1.0f / 256.0f);
    *lse = fmaf(m, sc->sl2 * 0.693147182f, pp_attn_order_log(order_seed, row, ls, pp_logf(ls)));
}

// The flash epilogue of either arithmetic (fp8 0: pp_attn_flash_finish, FA2's).
PP_HD static inline void pp_attn_fp8_flash_finish(int fp8, float xv, pp_format_id f, const pp_attn_scalars *sc,
                                                  int seen, float m, const float *l4, float *o, int64_t d, float *lse,
                                                  uint64_t order_seed, int64_t row)
{
    if (fp8)
        pp_attn_fp8_finish(f, sc, xv, seen, m, l4, o, d, lse, order_seed, row);
    else
        pp_attn_flash_finish(f, sc, seen, m, l4, o, d, lse, order_seed, row);
}

// FA3's FP8 forward tiles on sm90 (hopper/tile_size.h @07602ad:53-72, tile_size_fwd_sm90 with
// element_size 1, two MMA warpgroups, V row-major): keys per tile 160 (d ≤ 64), 128 (d ≤ 96),
// 224 (d ≤ 128), 160 (d ≤ 192), 128 above; block_n (nonzero) overrides. Query rows 192 or 128
// change nothing (a tile a row cannot see is a no-op).
PP_HD static inline int pp_attn_fp8_block_n(const pp_attn_variant *v, int64_t d)
{
    if (v->block_n > 0)
        return v->block_n;
    return d <= 64 ? 160 : d <= 96 ? 128 : d <= 128 ? 224 : d <= 192 ? 160 : 128;
}

// Why v's fp8 setting cannot run (a one-line message naming the knob), or NULL. Host only.
static inline const char *pp_attn_fp8_error(const pp_attn_variant *v, int backward)
{
    if (v->fp8 == PP_ATTN_FP8_NONE)
        return (const char *)0;
    if (v->fp8 != PP_ATTN_FP8_FA3)
        return "attention: unknown fp8 value";
    if (backward)
        return "attention: fp8 = \"fa3\" is forward only (FlashAttention-3's FP8 path has no backward): use "
               "passes = \"fwd\"";
    if (v->kernel != PP_ATTN_FLASH)
        return "attention: fp8 = \"fa3\" needs kernel = \"flash\" (FlashAttention-3 is a fused kernel)";
    if (v->format != PP_FMT_BF16)
        return "attention: fp8 = \"fa3\" needs format = \"bf16\" (FlashAttention-3 writes an FP8 run's out in bf16; "
               "q, k, v are bf16 before the per-tensor quantisation)";
    if (v->cp_world > 1)
        return "attention: fp8 = \"fa3\" needs cp_world = 1 (FP8 context parallelism is not modelled)";
    if (v->scale != PP_ATTN_SCALE_POST || v->max_subtract != PP_ATTN_MAX_ROW)
        return "attention: fp8 = \"fa3\" needs scale = \"post\" and max_subtract = \"row\" (FlashAttention-3's "
               "softmax_scale and safe softmax)";
    return (const char *)0;
}

// ---------------------------------------------------------------------------------------------
// mma = sm90-fp8: Hopper's FP8 accumulation in FA3's two GEMMs (kernels/sm90_fp8_mma.h; the
// specification in kernels/attention.h, "FP8 (fp8 = fa3)"). No promotion: FA3 accumulates in the
// wgmma fragments themselves.

// S for m keys of one query row: acc[l] = the sm90 dot product over c < d of q8[c]·k8[c·ld + l]
// (k key-major), groups of 32 along d from c = 0, starting from +0 (FA3's zero_init).
PP_HD static inline void pp_attn_fp8_sm90_dots(const float *q, const float *kT, int64_t ld, int64_t d, int64_t m,
                                               float *acc)
{
    double a[PP_SM90_FP8_GROUP], b[PP_SM90_FP8_GROUP];
    int emin = pp_format_get(PP_FMT_E4M3).emin;
    for (int64_t l = 0; l < m; l++) {
        float c = 0.0f;
        for (int64_t c0 = 0; c0 < d; c0 += PP_SM90_FP8_GROUP) {
            int64_t n = d - c0 < PP_SM90_FP8_GROUP ? d - c0 : PP_SM90_FP8_GROUP;
            for (int64_t i = 0; i < n; i++)
                a[i] = q[c0 + i], b[i] = kT[(c0 + i) * ld + l];
            c = pp_sm90_fp8_group(c, a, 1, b, 1, n, emin, emin);
        }
        acc[l] = c;
    }
}

// O += P·V over one group of n ≤ 32 keys of a tile: o[e] = the sm90 group of o[e] (the running,
// rescaled accumulator) and the products p[i]·v_i[e] (p: e4m3 P; vrow[i]: key i's e4m3 row of V).
PP_HD static inline void pp_attn_fp8_sm90_pv(const float *p, const float *const *vrow, int64_t n, float *o, int64_t d)
{
    double a[PP_SM90_FP8_GROUP], b[PP_SM90_FP8_GROUP];
    int emin = pp_format_get(PP_FMT_E4M3).emin;
    for (int64_t i = 0; i < n; i++)
        a[i] = p[i];
    for (int64_t e = 0; e < d; e++) {
        for (int64_t i = 0; i < n; i++)
            b[i] = vrow[i][e];
        o[e] = pp_sm90_fp8_group(o[e], a, 1, b, 1, n, emin, emin);
    }
}

// Why v's mma setting cannot run at head dimension d, or NULL. Host only.
static inline const char *pp_attn_fp8_mma_error(const pp_attn_variant *v, int64_t d)
{
    if (v->mma == PP_ATTN_FP8_MMA_CHAIN)
        return (const char *)0;
    if (v->mma != PP_ATTN_FP8_MMA_SM90)
        return "attention: unknown mma value";
    if (v->fp8 != PP_ATTN_FP8_FA3)
        return "attention: mma = \"sm90-fp8\" is Hopper's FP8 tensor-core accumulation: it needs fp8 = \"fa3\"";
    if (pp_attn_fp8_block_n(v, d) % PP_SM90_FP8_GROUP != 0)
        return "attention: mma = \"sm90-fp8\" needs block_n a multiple of 32 (an FP8 wgmma k-step is 32 keys)";
    return (const char *)0;
}

#endif
