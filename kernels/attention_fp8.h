// attention_fp8.h — FP8 attention, FlashAttention-3's FP8 forward (the attention knob fp8 = "fa3"):
// the quantisation of Q, K, V under each scaling (per tensor to e4m3; mx and nvfp4 in blocks),
// the descales folded into the softmax's exp2 scale, FA3's max offset, P converted to e4m3 (per
// block for mx, nvfp4) before P·V, v's descale in the epilogue. Element steps as PP_HD C11 (the
// flash loop of kernels/attention_threads.h calls them inside its tile loop, on every device);
// q, k, v are quantised on the host by the launch plan (pp_attn_fp8_quantise_tensor).
// The specification, with its sources, is kernels/attention.h, "FP8 (fp8 = fa3)" and "FP8
// scaling schemes".
#ifndef PP_ATTENTION_FP8_H
#define PP_ATTENTION_FP8_H

#include <math.h>
#include <stdint.h>

#include "attention.h"
#include "format.h"
#include "pp_hd.h"
#include "ranges.h"
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
// Scaling schemes (the knob scaling; kernels/attention.h "FP8 scaling schemes")

// The scheme of v's fp8 (auto: tensor-current, FA3's per-tensor descales); none without fp8.
PP_HD static inline pp_scaling pp_attn_fp8_scheme(const pp_attn_variant *v)
{
    if (v->fp8 == PP_ATTN_FP8_NONE)
        return PP_SCALING_NONE;
    switch (v->fp8_scaling) {
    case PP_ATTN_FP8_SCALING_NONE: return PP_SCALING_NONE;
    case PP_ATTN_FP8_SCALING_DELAYED: return PP_SCALING_DELAYED;
    case PP_ATTN_FP8_SCALING_MX: return PP_SCALING_MX;
    case PP_ATTN_FP8_SCALING_NVFP4: return PP_SCALING_NVFP4;
    default: return PP_SCALING_TENSOR;
    }
}

// The element format of the MMAs' operands: e2m1 for nvfp4, e4m3 otherwise.
PP_HD static inline pp_format_id pp_attn_fp8_elem(pp_scaling sch)
{
    return sch == PP_SCALING_NVFP4 ? PP_FMT_E2M1 : PP_FMT_E4M3;
}

// The block of the block scalings (along each GEMM's reduction: d for q, k; keys for v and P):
// 32 for mx, 16 for nvfp4; 0 for the per-tensor ones.
PP_HD static inline int pp_attn_fp8_block(pp_scaling sch)
{
    return sch == PP_SCALING_MX ? PP_MX_BLOCK : sch == PP_SCALING_NVFP4 ? PP_NVFP4_BLOCK : 0;
}

// nvfp4's P: its global scale from the bound p ≤ 2^8 that FA3's max offset gives every p (the
// row max maps to 2^8), g_P = RN_32(256/2688), not from an amax of P (which no kernel has before
// the row ends): precprobe's own choice, kernels/attention.h "FP8 scaling schemes".
#define PP_ATTN_FP8_P_AMAX 256.0

PP_HD static inline double pp_attn_fp8_p_global(void)
{
    return pp_nvfp4_global(PP_ATTN_FP8_P_AMAX);
}

// The epilogue's factor (FA3's v_descale): the per-tensor X_v; nvfp4 RN_32(g_P·g_v) (both global
// scales of P·V, applied once, as FA3 applies X_v; g_v alone when P is exact: explain); mx 1.
PP_HD static inline float pp_attn_fp8_xv(pp_scaling sch, double xv, int p_exact)
{
    if (sch == PP_SCALING_NVFP4 && !p_exact)
        return (float)pp_attn_fp8_p_global() * (float)xv;
    return (float)xv;
}

// nvfp4's block scale s = RN_e4m3,sat(amax/(6g)); exact (explain's block_scale sites): the
// quotient unrounded but for binary32 (the kernel holds scales in binary32 buffers: exact up to
// ½ ulp_32, 2^20 times finer than the E4M3 rounding it replaces).
PP_HD static inline double pp_attn_fp8_nvfp4_scale(double amax, double g, int exact)
{
    return exact ? (double)(float)(amax / (6.0 * g)) : pp_nvfp4_block_scale(amax, g);
}

// P of one block of keys [0, n) quantised in place (mx: e4m3 with 2^e, e from the block's amax;
// nvfp4: e2m1 with the E4M3 scale s over g_P); returns the block scale the MMA applies (2^e or s;
// g_P is the epilogue's). p holds binary32 values ≥ 0 (or NaN).
PP_HD static inline double pp_attn_fp8_p_block(pp_scaling sch, pp_mx_rule rule, float *p, int64_t n,
                                               int scale_exact, double *amax_out)
{
    double amax = 0;
    for (int64_t j = 0; j < n; j++)
        amax = pp_amax_step(amax, (double)p[j]);
    *amax_out = amax;
    if (sch == PP_SCALING_MX) {
        int e = pp_mx_rule_exp(rule, amax, PP_FMT_E4M3);
        for (int64_t j = 0; j < n; j++)
            p[j] = (float)pp_mx_rule_quantise(rule, PP_FMT_E4M3, (double)p[j], e);
        return pp_mx_scale(e);
    }
    double g = pp_attn_fp8_p_global(), s = pp_attn_fp8_nvfp4_scale(amax, g, scale_exact);
    for (int64_t j = 0; j < n; j++)
        p[j] = (float)pp_nvfp4_quantise((double)p[j], s, g);
    return s;
}

// Range notes of one scale x of a block with amax bamax (sites block_scale_q/k/v/p; as the scaled
// GEMM's block_scale sites): its value in the scale's format and whether it hit that format's
// limits — mx: the shared exponent clamped to E8M0's [−127, 127] or a NaN block; nvfp4: the E4M3
// scale saturated at 448, or 0 for a non-zero block (g: the global scale); per-tensor: the
// descale X not a positive normal binary32.
PP_HD static inline void pp_attn_fp8_scale_note(pp_ranges *R, int site, int64_t head, pp_scaling sch,
                                                pp_mx_rule rule, double bamax, double g, double x)
{
    int clamped;
    if (sch == PP_SCALING_MX) {
        clamped = pp_mx_rule_clamped(rule, bamax, PP_FMT_E4M3);
        pp_range_note1(R, site, head, PP_FMT_E8M0, x);
    } else if (sch == PP_SCALING_NVFP4) {
        double want = bamax / (6.0 * g);  // the scale before its E4M3 rounding
        clamped = want > 448.0 || (bamax > 0 && x == 0);
        pp_range_note(R, site, head, PP_FMT_E4M3, want, x);
    } else {
        clamped = !(x > 0 && x <= 3.4028234663852886e38 && x >= 0x1p-126);
        pp_range_note1(R, site, head, PP_FMT_FP32, x);
    }
    if (clamped)
        pp_range_note_clamp(R, site, head);
}

// ---------------------------------------------------------------------------------------------
// Host: the quantisation of q, k, v under every scheme (the plan uploads its results; the
// quantised-inputs reference and the range diagnostics read the same values)

// Tensor which (0 q, 1 k, 2 v) of dims dm as lines along its GEMM's reduction: q, k rows of d
// (line t at t·d, stride 1); v per (batch, kv head, column) the s_kv keys (stride h_kv·d).
static inline int64_t pp_attn_fp8_lines(const pp_attn_dims *dm, int which, int64_t *len, int64_t *stride)
{
    int64_t rows = which == 0 ? dm->b * dm->s_q * dm->h : dm->b * dm->s_kv * dm->h_kv;
    if (which < 2) {
        *len = dm->d, *stride = 1;
        return rows;
    }
    *len = dm->s_kv, *stride = dm->h_kv * dm->d;
    return dm->b * dm->h_kv * dm->d;
}

static inline int64_t pp_attn_fp8_line_base(const pp_attn_dims *dm, int which, int64_t t)
{
    if (which < 2)
        return t * dm->d;
    int64_t c = t % dm->d, g = (t / dm->d) % dm->h_kv, bi = t / (dm->d * dm->h_kv);
    return (bi * dm->s_kv * dm->h_kv + g) * dm->d + c;
}

// Quantises tensor which (x, laid out [b][s][H][d]) as v's scheme does: elem[i] the element (a
// value of pp_attn_fp8_elem), bs[i] the scale of its block (1 for the per-tensor schemes), and
// returns the per-tensor factor the kernel folds in (X = RN_32(1/s) for tensor-current and
// -delayed, 1 for none and mx, g for nvfp4). elem·bs·X is the value the kernel computes with,
// exact in binary64. quant_exact (explain's quant site of this tensor): elem = x, bs = 1, X = 1;
// v's exact block_scale site of this tensor (nvfp4): s unrounded (pp_attn_fp8_nvfp4_scale).
static inline double pp_attn_fp8_quantise_tensor(const pp_attn_variant *v, const pp_attn_dims *dm, int which,
                                                 const double *x, int quant_exact, double *elem, double *bs)
{
    static const int scale_site[3] = {PP_SITE_ATTN_BLOCK_SCALE_Q, PP_SITE_ATTN_BLOCK_SCALE_K,
                                      PP_SITE_ATTN_BLOCK_SCALE_V};
    int scale_exact = pp_site_exact(v->exact_sites, scale_site[which]);
    pp_scaling sch = pp_attn_fp8_scheme(v);
    int64_t len, stride, lines = pp_attn_fp8_lines(dm, which, &len, &stride), n = lines * len;
    int blk = pp_attn_fp8_block(sch);
    if (quant_exact) {
        for (int64_t i = 0; i < n; i++)
            elem[i] = x[i], bs[i] = 1.0;
        return 1.0;
    }
    double amax = 0;
    for (int64_t i = 0; i < n; i++)
        amax = pp_amax_step(amax, x[i]);
    if (!blk) {
        double s = sch == PP_SCALING_TENSOR ? pp_tensor_scale(PP_FMT_E4M3, amax)
                 : sch == PP_SCALING_DELAYED ? v->fp8_delayed_s[which] : 1.0;
        for (int64_t i = 0; i < n; i++)
            elem[i] = pp_tensor_quantise(PP_FMT_E4M3, x[i], s), bs[i] = 1.0;
        return sch == PP_SCALING_NONE ? 1.0 : pp_tensor_scale_inv(s);
    }
    double g = sch == PP_SCALING_NVFP4 ? pp_nvfp4_global(amax) : 1.0;
    for (int64_t t = 0; t < lines; t++) {
        int64_t base = pp_attn_fp8_line_base(dm, which, t);
        for (int64_t l0 = 0; l0 < len; l0 += blk) {
            int64_t l1 = l0 + blk < len ? l0 + blk : len;
            double bamax = 0;
            for (int64_t l = l0; l < l1; l++)
                bamax = pp_amax_step(bamax, x[base + l * stride]);
            int e = pp_mx_rule_exp(v->mx_rule, bamax, PP_FMT_E4M3);
            double sb = sch == PP_SCALING_MX ? pp_mx_scale(e) : pp_attn_fp8_nvfp4_scale(bamax, g, scale_exact);
            for (int64_t l = l0; l < l1; l++) {
                int64_t i = base + l * stride;
                elem[i] = sch == PP_SCALING_MX ? pp_mx_rule_quantise(v->mx_rule, PP_FMT_E4M3, x[i], e)
                                               : pp_nvfp4_quantise(x[i], sb, g);
                bs[i] = sb;
            }
        }
    }
    return g;
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
    if (!fp8 || f == PP_FMT_FP32)  // fp32 under fp8: explain's exact site p (P kept in binary32)
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

// ---- FA3's softmax scalars with explain's exact sites (kernels/attention.h "Exact sites", FP8):
// row_max (ms), softmax_scale (σ'), softmax_in (the exp2 argument and the correction's), row_sum
// (the 4 partials and their reduce), row_inv (1/l), out_scale (s), lse, each kept in binary64
// when exact. An op whose operand is binary64 but whose own site still rounds computes in binary64
// and rounds once to binary32 (RN_32 of the binary64 fma: a double rounding, an ulp_32 off fmaf's
// one rounding where the binary64 value lies next to a binary32 midpoint); with binary32 operands
// each is the kernel's op. Only the CPU emulation runs these (the CUDA launchers refuse exact sites).
#define PP_ATTN_FP8_SOFTMAX_SITES                                                                          \
    (PP_SITE_BIT(PP_SITE_ATTN_ROW_MAX) | PP_SITE_BIT(PP_SITE_ATTN_SOFTMAX_SCALE) |                          \
     PP_SITE_BIT(PP_SITE_ATTN_SOFTMAX_IN) | PP_SITE_BIT(PP_SITE_ATTN_ROW_SUM) | PP_SITE_BIT(PP_SITE_ATTN_ROW_INV) | \
     PP_SITE_BIT(PP_SITE_ATTN_OUT_SCALE) | PP_SITE_BIT(PP_SITE_ATTN_LSE))

// σ' with site softmax_scale exact: sl2·X_q·X_k in binary64 (sl2, X_q, X_k binary32: one
// rounding, the product's 72 bits to 53), else the kernel's binary32 σ' (pp_attn_fp8_sl2). Host.
static inline double pp_attn_fp8_sig64(pp_site_mask x, float sl2, double xq, double xk)
{
    if (pp_site_exact(x, PP_SITE_ATTN_SOFTMAX_SCALE))
        return (double)sl2 * (double)(float)xq * (double)(float)xk;
    return (double)pp_attn_fp8_sl2(sl2, xq, xk);
}

// ms = fma(m, σ', −8): binary64 (row_max exact), RN_32 of the binary64 fma (σ' a binary64 value
// finer than binary32), or fmaf (the kernel's); 0 for m = −Inf.
PP_HD static inline double pp_attn_fp8_ms_x(pp_site_mask x, double sig, float m)
{
    if (m == -INFINITY)
        return 0.0;
    if (pp_site_exact(x, PP_SITE_ATTN_ROW_MAX))
        return fma((double)m, sig, -(double)PP_ATTN_FP8_MAX_OFFSET);
    if ((double)(float)sig != sig)
        return (double)(float)fma((double)m, sig, -(double)PP_ATTN_FP8_MAX_OFFSET);
    return (double)fmaf(m, (float)sig, -PP_ATTN_FP8_MAX_OFFSET);
}

// p = exp2(fma(s, σ', −ms)): the argument and 2^x in binary64 (softmax_in exact; 2^x rounded once
// to binary32, p's own site follows), else the argument rounded to binary32 (fmaf when σ' and ms
// are binary32) and the kernel's exp2.
PP_HD static inline float pp_attn_fp8_p_x(pp_site_mask x, double sig, float s, double ms)
{
    double a = fma((double)s, sig, -ms);
    if (pp_site_exact(x, PP_SITE_ATTN_SOFTMAX_IN))
        return pp_attn_exp2_64(a);
    if ((double)(float)sig == sig && (double)(float)ms == ms)
        return pp_attn_exp2f(fmaf(s, (float)sig, -(float)ms));
    return pp_attn_exp2f((float)a);
}

// p from S kept in binary64 (explain's scores exact, attention.h "Exact sites", FP8 chains): the
// argument fma(s, σ', −ms) in binary64 and 2^x as pp_attn_fp8_p_x rounds them; an s that is a
// binary32 value (the chain had nothing to round) takes pp_attn_fp8_p_x itself, so its bits are
// the kernel's (no double rounding of the argument where the kernel's fmaf rounds once).
PP_HD static inline float pp_attn_fp8_p_s64(pp_site_mask x, double sig, double s, double ms)
{
    if ((double)(float)s == s)
        return pp_attn_fp8_p_x(x, sig, (float)s, ms);
    double a = fma(s, sig, -ms);
    return pp_site_exact(x, PP_SITE_ATTN_SOFTMAX_IN) ? pp_attn_exp2_64(a) : pp_attn_exp2f((float)a);
}

// The correction exp2((m_old − m_new)·σ'): binary64 argument (softmax_in exact), else RN_32 of
// (m_old ⊖ m_new)·σ' (the binary32 multiply when σ' is binary32); 0 when m_old = −Inf.
PP_HD static inline float pp_attn_fp8_corr_x(pp_site_mask x, double sig, float m_old, float m_new)
{
    if (m_old == -INFINITY)
        return 0.0f;
    if (pp_site_exact(x, PP_SITE_ATTN_SOFTMAX_IN))
        return pp_attn_exp2_64(((double)m_old - (double)m_new) * sig);
    return pp_attn_exp2f((float)((double)(m_old - m_new) * sig));
}

// The flash epilogues' binary64 steps shared by FA2's and FA3 fp8's (explain's exact sites,
// attention.h "Exact sites"): the row sum l, from the binary64 partials l4d when row_sum is exact,
// else the kernel's binary32 sum, in the order band's tree either way;
PP_HD static inline double pp_attn_finish_l_x(pp_site_mask x, uint64_t order_seed, int64_t row, const float *l4,
                                              const double *l4d)
{
    return pp_site_exact(x, PP_SITE_ATTN_ROW_SUM) ? pp_attn_order_row_sum64(order_seed, row, l4d)
                                                  : (double)pp_attn_order_row_sum(order_seed, row, l4);
}
// the empty row (no key seen, or l = 0): zeros and lse −Inf, the shadows too;
PP_HD static inline void pp_attn_finish_empty_x(float *o, double *o64, int64_t d, float *lse, double *lse64)
{
    for (int64_t c = 0; c < d; c++) {
        o[c] = 0.0f;
        if (o64)
            o64[c] = 0.0;
    }
    *lse = -INFINITY;
    if (lse64)
        *lse64 = -INFINITY;
}
// lse = fma(m, a, log(l·w)): with the lse exact in binary64 (a64, kept in lse64), else the kernel's
// fmaf with its binary32 factor a32 on RN_32(l·w) (w: FA2 1, FA3 fp8 2^−8, exact either way).
PP_HD static inline void pp_attn_finish_lse_x(pp_site_mask x, float m, double a64, float a32, double l, double w,
                                              uint64_t order_seed, int64_t row, float *lse, double *lse64)
{
    if (pp_site_exact(x, PP_SITE_ATTN_LSE)) {
        double v = fma((double)m, a64, log(l * w));
        *lse = (float)v;
        if (lse64)
            *lse64 = v;
        return;
    }
    float ls = (float)(l * w);
    *lse = fmaf(m, a32, pp_attn_order_log(order_seed, row, ls, pp_logf(ls)));
    if (lse64)
        *lse64 = *lse;
}

// FA3's epilogue (pp_attn_fp8_finish) with the exact sites: l from the binary32 partials l4, or
// (row_sum exact) from their binary64 shadows l4d, in the order band's tree either way; inv = 1/l,
// s = inv·X_v, out = RN_F(RN_32(o·s)) (o64: the out store exact, o·s kept in binary64, o then
// RN_32 of it); o the binary64 P·V accumulator od where pv_acc is exact (NULL: the kernel's
// binary32 o; o·s is then the binary64 product rounded as above); lse = fma(m, σ'·ln2_32, log(l·2^−8)) (ln2_32 = RN_32(ln 2), the
// kernel's constant; lse exact: binary64, into *lse64 when the lse store keeps it, else rounded
// once). Zeros and lse −Inf for a row that saw no key or whose sum is 0.
PP_HD static inline void pp_attn_fp8_finish_x(pp_site_mask x, pp_format_id f, double sig, float xv, int seen, float m,
                                              const float *l4, const double *l4d, const double *od, float *o,
                                              int64_t d, float *lse, double *o64, double *lse64, uint64_t order_seed,
                                              int64_t row)
{
    double l = pp_attn_finish_l_x(x, order_seed, row, l4, l4d);
    if (!seen || l == 0.0) {
        pp_attn_finish_empty_x(o, o64, d, lse, lse64);
        return;
    }
    double inv = pp_site_exact(x, PP_SITE_ATTN_ROW_INV) ? 1.0 / l : (double)(float)(1.0 / l);
    double sc = pp_site_exact(x, PP_SITE_ATTN_OUT_SCALE) ? inv * (double)xv : (double)(float)(inv * (double)xv);
    for (int64_t c = 0; c < d; c++) {
        double oc = od ? od[c] : (double)o[c];
        if (o64) {
            o64[c] = oc * sc;
            o[c] = (float)o64[c];
        } else {
            o[c] = pp_attn_store(f, (float)(oc * sc));
        }
    }
    const float ln2 = 0.693147182f;
    pp_attn_finish_lse_x(x, m, sig * (double)ln2, (float)(sig * (double)ln2), l, 0x1p-8, order_seed, row, lse, lse64);
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

// The out store of either epilogue kept in binary64 (explain's site out or out_partial exact;
// attention.h "Exact sites"): o64_c = o_c·inv (FA2: inv = 1 ⊘ l) or o_c·s (FA3: s = (1 ⊘ l) ⊗ X_v),
// the exact binary64 product of the two binary32 factors, in place of RN_F(RN_32(·)); zeros for a
// row that saw no key or whose sum is 0. l: the epilogue's row sum (pp_attn_order_row_sum).
PP_HD static inline void pp_attn_fp8_flash_out64(int fp8, float xv, int seen, float l, const float *o, int64_t d,
                                                 double *o64)
{
    float s = !seen || l == 0.0f ? 0.0f : fp8 ? (1.0f / l) * xv : 1.0f / l;
    for (int64_t c = 0; c < d; c++)
        o64[c] = (double)o[c] * (double)s;
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

// Why fp8 = "te" cannot run v (kernels/attention.h "FP8 (fp8 = te)"), or NULL. Host only.
static inline const char *pp_attn_te_error(const pp_attn_variant *v, int backward)
{
    (void)backward;  // the backward is modelled too (attention_te_fp8_bwd.h), under the same limits
    if (v->kernel != PP_ATTN_FLASH)
        return "attention: fp8 = \"te\" needs kernel = \"flash\" (cuDNN's FP8 attention is one fused kernel)";
    if (v->format != PP_FMT_BF16)
        return "attention: fp8 = \"te\" needs format = \"bf16\" (q, k, v are bf16 before TE quantises them)";
    if (v->cp_world > 1)
        return "attention: fp8 = \"te\" needs cp_world = 1 (FP8 context parallelism is not modelled)";
    if (v->scale != PP_ATTN_SCALE_POST || v->max_subtract != PP_ATTN_MAX_ROW)
        return "attention: fp8 = \"te\" needs scale = \"post\" and max_subtract = \"row\" (cuDNN's attn_scale and "
               "safe softmax)";
    if (v->fp8_scaling == PP_ATTN_FP8_SCALING_MX || v->fp8_scaling == PP_ATTN_FP8_SCALING_NVFP4)
        return "attention: fp8 = \"te\" takes per-tensor scaling only (auto, none, tensor-current, tensor-delayed): "
               "TE's FP8 DPA graph has one descale per tensor";
    if (v->fp8_scaling < PP_ATTN_FP8_SCALING_AUTO || v->fp8_scaling > PP_ATTN_FP8_SCALING_NVFP4)
        return "attention: unknown scaling value";
    if ((unsigned)v->te_softmax > PP_ATTN_TE_TWO_PASS || (unsigned)v->te_exp > PP_ATTN_TE_EXP2 ||
        (unsigned)v->te_pv > PP_ATTN_TE_PV_CHAIN || v->te_rescale < 0 || v->te_rescale > 16)
        return "attention: unknown te_softmax, te_exp, te_pv or te_rescale_threshold value";
    if (v->te_rescale > 0 && v->te_softmax == PP_ATTN_TE_TWO_PASS)
        return "attention: te_rescale_threshold is the online softmax's (te_softmax = \"online\")";
    if (!(v->te_scale_s >= 0) || !(v->te_scale_o >= 0) || v->te_scale_s > 3.4028234663852886e38 ||
        v->te_scale_o > 3.4028234663852886e38)
        return "attention: fp8 = \"te\": amax_history_s and amax_history_o must give finite positive scales";
    if (!(v->te_scale_dp >= 0) || v->te_scale_dp > 3.4028234663852886e38 || (unsigned)v->te_dq > PP_ATTN_TE_DQ_CHAIN ||
        (unsigned)v->te_ds_amax > 1)
        return "attention: fp8 = \"te\": amax_history_dp must give a finite positive scale, te_dq per-tile or chain, te_ds_amax max-dp or max-ds";
    const double grad_s[4] = {v->te_scale_do, v->te_scale_dq, v->te_scale_dk, v->te_scale_dv};
    for (int i = 0; i < 4; i++)
        if (!(grad_s[i] >= 0) || grad_s[i] > 3.4028234663852886e38)
            return "attention: fp8 = \"te\": amax_history_do, _dq, _dk and _dv must give finite positive scales";
    if (pp_attn_fp8_scheme(v) == PP_SCALING_DELAYED)
        for (int i = 0; i < 3; i++)
            if (!(v->fp8_delayed_s[i] > 0) || !(v->fp8_delayed_s[i] <= 3.4028234663852886e38))
                return "attention: scaling = \"tensor-delayed\" needs amax_history_q, amax_history_k and "
                       "amax_history_v (each tensor's amax at the earlier steps, most recent first)";
    return (const char *)0;
}

// Why v's fp8 setting cannot run (a one-line message naming the knob), or NULL. Host only.
static inline const char *pp_attn_fp8_error(const pp_attn_variant *v, int backward)
{
    if (v->fp8 == PP_ATTN_FP8_NONE)
        return v->fp8_scaling == PP_ATTN_FP8_SCALING_AUTO || v->fp8_scaling == PP_ATTN_FP8_SCALING_NONE
                   ? (const char *)0
                   : "attention: a scaling (tensor-current, tensor-delayed, mx, nvfp4) needs fp8 = \"fa3\" or \"te\" (it scales "
                     "the FP8 forward's quantisation; without fp8, q, k, v stay in the storage format)";
    if (v->fp8 == PP_ATTN_FP8_TE)
        return pp_attn_te_error(v, backward);
    if (v->fp8 != PP_ATTN_FP8_FA3)
        return "attention: unknown fp8 value";
    if (v->fp8_scaling < PP_ATTN_FP8_SCALING_AUTO || v->fp8_scaling > PP_ATTN_FP8_SCALING_NVFP4)
        return "attention: unknown scaling value";
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
    pp_scaling sch = pp_attn_fp8_scheme(v);
    for (int i = 0; sch == PP_SCALING_DELAYED && i < 3; i++)
        if (!(v->fp8_delayed_s[i] > 0) || !(v->fp8_delayed_s[i] <= 3.4028234663852886e38))
            return "attention: scaling = \"tensor-delayed\" needs amax_history_q, amax_history_k and amax_history_v "
                   "(each tensor's amax at the earlier steps, most recent first)";
    int blk = pp_attn_fp8_block(sch);
    if (blk && v->block_n > 0 && v->block_n % blk)
        return sch == PP_SCALING_MX ? "attention: scaling = \"mx\" needs block_n a multiple of 32 (P's and v's blocks "
                                      "of 32 keys lie within a key tile)"
                                    : "attention: scaling = \"nvfp4\" needs block_n a multiple of 16 (P's and v's "
                                      "blocks of 16 keys lie within a key tile)";
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

// Why v's mma setting cannot run at head dimension d, or NULL (fp8 te's sm90-fp8: kernels/
// attention_te_fp8.h pp_attn_te_sm90, every GEMM of its forward and backward). Host only.
static inline const char *pp_attn_fp8_mma_error(const pp_attn_variant *v, int64_t d)
{
    if (v->mma == PP_ATTN_FP8_MMA_CHAIN)
        return (const char *)0;
    if (v->mma != PP_ATTN_FP8_MMA_SM90)
        return "attention: unknown mma value";
    if (v->fp8 != PP_ATTN_FP8_FA3 && v->fp8 != PP_ATTN_FP8_TE)
        return "attention: mma = \"sm90-fp8\" is Hopper's FP8 tensor-core accumulation: it needs fp8 = \"fa3\" or "
               "\"te\"";
    if (v->fp8 == PP_ATTN_FP8_TE)  // te's own tile (te's scalings are per-tensor: pp_attn_te_error)
        return (v->block_n > 0 ? v->block_n : PP_ATTN_TE_BLOCK_N) % PP_SM90_FP8_GROUP != 0
                   ? "attention: mma = \"sm90-fp8\" needs block_n a multiple of 32 (an FP8 wgmma k-step is 32 keys)"
                   : (const char *)0;
    if (v->fp8_scaling == PP_ATTN_FP8_SCALING_MX || v->fp8_scaling == PP_ATTN_FP8_SCALING_NVFP4)
        return "attention: mma = \"sm90-fp8\" is Hopper's per-tensor-scaled FP8 wgmma: block scalings (mx, nvfp4) "
               "are another hardware's MMA (Blackwell's block-scaled tcgen05), not measured";
    if (pp_attn_fp8_block_n(v, d) % PP_SM90_FP8_GROUP != 0)
        return "attention: mma = \"sm90-fp8\" needs block_n a multiple of 32 (an FP8 wgmma k-step is 32 keys)";
    return (const char *)0;
}

#endif
