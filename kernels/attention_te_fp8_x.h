// attention_te_fp8_x.h — fp8 = "te"'s forward row (kernels/attention_te_fp8.h) with `explain`'s
// exact sites (kernels/attention.h "Exact sites", fp8 = te): the same steps in binary64 variables,
// each rounded as the kernel rounds it unless its site is exact. Host C, CPU only (explain runs the
// CPU emulation; the CUDA launchers refuse exact sites): the run, kernels/attention_te_exact.c.
// With mask 0 every value is a binary32 value and every op is the kernel's own op, so the row gives
// pp_attn_te_row's bits (tests/test_explain_attention_te.c checks it on every knob).
#ifndef PP_ATTENTION_TE_FP8_X_H
#define PP_ATTENTION_TE_FP8_X_H

#include <math.h>
#include <stdint.h>

#include "attention_te_fp8.h"
#include "exact_sites.h"
#include "ranges.h"

// The run's scalars as the exact-site row reads them: binary64 values, binary32 values where
// their site rounds (pp_attn_te_cfg_x_make). c: the kernel's scalars (the knobs, the order seed).
typedef struct pp_attn_te_cfg_x {
    pp_attn_te_cfg c;
    pp_site_mask x;  // the exact sites
    double sigma;    // σ (base-2: σ·log2 e): RN_32 as the kernel, or binary64 (softmax_scale)
    double scale_s;  // P's scale into e4m3 (scale_s·2^−τ, a binary32 value: not a rounding)
    double xs;       // X_s·2^τ: RN_32(1/scale_s)·2^τ, or (block_scale_p) 2^τ/scale_s in binary64
    double xv;       // X_v: binary32, or binary64 (block_scale_v: 1/s)
    double xsv;      // chain: RN_32(X_v·X_s), or the binary64 product (out_partial)
    double ln2;      // base-2's lse factor: RN_32(ln 2), or ln 2 in binary64 (lse)
} pp_attn_te_cfg_x;

// The scalars from the variant v, the descales X_q, X_k, X_v (binary32 values, or binary64 with
// their block_scale site exact: 1/s; 1 with the quant site exact) and α: alpha32 = RN_32(α) the
// kernel's, alpha64 its binary64 value. softmax_scale exact: σ = X_q·X_k·α64 (·log2 e) in binary64,
// the kernel's float attribute α32 and both RN_32 gone; else RN_32 of the binary64 product of the
// three (the kernel's when X_q, X_k are binary32: the reference's one rounding of a Python float).
static inline pp_attn_te_cfg_x pp_attn_te_cfg_x_make(const pp_attn_variant *v, float alpha32, double alpha64,
                                                     double xq, double xk, double xv)
{
    pp_attn_te_cfg_x t;
    pp_site_mask x = v->exact_sites;
    t.c = pp_attn_te_cfg_make(v, alpha32, xq, xk, xv);
    t.x = x;
    int two = t.c.base == PP_ATTN_TE_EXP2;
    if (pp_site_exact(x, PP_SITE_ATTN_SOFTMAX_SCALE)) {
        t.sigma = xq * xk * alpha64 * (two ? 1.4426950408889634 : 1.0);
    } else {
        double s = (double)(float)(xq * xk * (double)alpha32);
        t.sigma = two ? (double)((float)s * 1.44269502f) : s;
    }
    t.scale_s = (double)t.c.scale_s;
    if (pp_site_exact(x, PP_SITE_ATTN_BLOCK_SCALE_P))  // 2^τ/scale_s' with scale_s' = scale_s·2^−τ
        t.xs = 1.0 / t.scale_s;
    else
        t.xs = (double)t.c.xs;
    t.xv = xv;  // the kernel's float of a binary32 value is that value
    t.xsv = pp_site_exact(x, PP_SITE_ATTN_OUT_PARTIAL) ? t.xv * t.xs : (double)(float)(t.xv * t.xs);
    t.ln2 = pp_site_exact(x, PP_SITE_ATTN_LSE) ? 0.6931471805599453 : (double)0.693147182f;
    return t;
}

// ---- binary32 ops on binary64 operands: the kernel's op where every operand is a binary32 value
// (then the bits are the kernel's), else the binary64 op rounded once to binary32 (a double
// rounding for the fma and the transcendental functions: an ulp_32 off one rounding where the
// binary64 value lies next to a binary32 midpoint; +, −, ×, ÷ of binary32 operands in binary64
// rounded to binary32 are correctly rounded, 53 ≥ 2·24 + 2).

// Whether x is a binary32 value (NaN counts: its float is NaN too).
static inline int pp_te_is32(double x)
{
    return (double)(float)x == x || x != x;
}

static inline double pp_te_r32(double x)
{
    return (double)(float)x;
}

static inline double pp_te_fma32(double a, double b, double c)
{
    if (pp_te_is32(a) && pp_te_is32(b) && pp_te_is32(c))
        return (double)fmaf((float)a, (float)b, (float)c);
    return pp_te_r32(fma(a, b, c));
}

// e^x or 2^x (the knob's base) in binary64: the C library's exp/exp2, within an ulp of binary64
static inline double pp_te_exp64(const pp_attn_te_cfg *c, double x)
{
    return c->base == PP_ATTN_TE_EXP2 ? exp2(x) : exp(x);
}

// the kernel's binary32 exponential of x (pp_attn_te_expf), or RN_32 of the binary64 one
static inline double pp_te_exp32(const pp_attn_te_cfg *c, double x)
{
    return pp_te_is32(x) ? (double)pp_attn_te_expf(c, (float)x) : pp_te_r32(pp_te_exp64(c, x));
}

// The larger of m and x, a NaN x winning (pp_attn_te_max on binary64 values).
static inline double pp_te_max_x(double m, double x)
{
    return (x > m || x != x) ? x : m;
}

// ---- The sites (kernels/attention.h "Exact sites", fp8 = te); exact: kept in binary64 and carried
// to every reader, else the kernel's rounding.

// mma sm90-fp8 where the site is not exact: pp_attn_te_sm90 on binary64 operands (the model's
// groups take them as they are: the kernel's bits on e4m3 codes and a binary32 total; a total
// that is not binary32 is rounded to it once first, as pp_te_fma32 rounds). emin_a, emin_b: the
// operands' formats' (the backward's e5m2 dO8: te_grad_format's); pp_attn_te_sm90_x: both e4m3.
static inline double pp_attn_te_sm90_xe(double total, const double *a, int64_t sa, const double *b, int64_t sb,
                                        int64_t n, int emin_a, int emin_b)
{
    float tot = (float)total, c = 0.0f;
    for (int64_t l0 = 0; l0 < n; l0 += PP_SM90_FP8_GROUP) {
        int64_t m = n - l0 < PP_SM90_FP8_GROUP ? n - l0 : PP_SM90_FP8_GROUP;
        pp_attn_te_sm90_group(l0, &tot, &c, a + l0 * sa, sa, b + l0 * sb, sb, m, emin_a, emin_b);
    }
    return (double)(tot + c);
}
static inline double pp_attn_te_sm90_x(double total, const double *a, int64_t sa, const double *b, int64_t sb,
                                       int64_t n)
{
    return pp_attn_te_sm90_xe(total, a, sa, b, sb, n, PP_ATTN_TE_EMIN_E4M3, PP_ATTN_TE_EMIN_E4M3);
}

// S_j: the fp32 chain of q8·k8 over d in the order band's walk (scores exact: the binary64 sum in
// the same order; exact for e4m3 elements: each product is a multiple of 2^−18 below 2^18 (e4m3's
// smallest subnormal 2^−9, largest 448 < 2^9), so d ≤ 256 of them sum below 2^26 on the grid
// 2^−18: 44 bits, within binary64's 53; with quant sites exact the bf16 inputs' products are exact
// in binary64 but their sum may round there, by 2^−53 relative per step).
static inline double pp_attn_te_dot_x(const pp_attn_te_cfg_x *t, const double *q8, const double *k8, int64_t d)
{
    int ex = pp_site_exact(t->x, PP_SITE_ATTN_SCORES);
    if (!ex && t->c.sm90)
        return pp_attn_te_sm90_x(0.0, q8, 1, k8, 1, d);
    double acc = 0.0;
    pp_attn_mma_walk w;
    int64_t e;
    for (pp_attn_mma_begin(&w, t->c.order_seed, PP_ATTN_MMA_S, 0, d); pp_attn_mma_next(&w, &e);)
        acc = ex ? acc + q8[e] * k8[e] : pp_te_fma32(q8[e], k8[e], acc);
    return acc;
}

// p_j = exp(arg) at key j: exp exact: the binary64 exp; else RN_32 (the kernel's expf on a binary32
// argument) moved by the order band's draw, as pp_attn_te_exp_at.
static inline double pp_attn_te_p_x(const pp_attn_te_cfg_x *t, int64_t row, int64_t j, double arg)
{
    if (pp_site_exact(t->x, PP_SITE_ATTN_EXP))
        return pp_te_exp64(&t->c, arg);
    return (double)pp_attn_order_exp(t->c.order_seed, PP_ATTN_ORDER_FWD_P, row, j, (float)pp_te_exp32(&t->c, arg));
}

// The P8 code P·V reads: RN_e4m3,sat(RN_32(p·scale_s)), or (p exact) p·scale_s in binary64:
// neither the binary32 product nor the e4m3 cast (nor its saturation).
static inline double pp_attn_te_p8_x(const pp_attn_te_cfg_x *t, double p)
{
    if (pp_site_exact(t->x, PP_SITE_ATTN_P))
        return p * t->scale_s;
    return pp_round(PP_FMT_E4M3, pp_te_r32(p * t->scale_s), (pp_rounding)(PP_RND_NE | PP_RND_SAT), 0);
}

// a ⊕ b (a row-sum step, site row_sum; a sum of the binary32 values is the kernel's ⊕)
static inline double pp_attn_te_add_x(const pp_attn_te_cfg_x *t, int site, double a, double b)
{
    return pp_site_exact(t->x, site) ? a + b : pp_te_r32(a + b);
}

// a ⊗ b at site
static inline double pp_attn_te_mul_x(const pp_attn_te_cfg_x *t, int site, double a, double b)
{
    return pp_site_exact(t->x, site) ? a * b : pp_te_r32(a * b);
}

// O += P8·V8 over the tile [j0, j1) (pp_attn_te_pv_tile): the chains, the descales and the sum into
// O are site out_partial's (exact: binary64, exact for e4m3 P8 and V8 as the scores' chain).
static inline void pp_attn_te_pv_tile_x(const pp_attn_te_cfg_x *t, const double *p8, const double *v,
                                        int64_t vstride, int64_t j0, int64_t j1, int64_t d, double *o)
{
    int ex = pp_site_exact(t->x, PP_SITE_ATTN_OUT_PARTIAL), chain = t->c.pv == PP_ATTN_TE_PV_CHAIN;
    pp_attn_mma_walk w;
    int64_t j;
    for (int64_t e = 0; e < d; e++) {
        double a = chain ? o[e] : 0.0;
        if (!ex && t->c.sm90)
            a = pp_attn_te_sm90_x(a, p8 + j0, 1, v + j0 * vstride + e, vstride, j1 - j0);
        else
            for (pp_attn_mma_begin(&w, t->c.order_seed, PP_ATTN_MMA_PV, j0, j1); pp_attn_mma_next(&w, &j);)
                a = ex ? a + p8[j] * v[j * vstride + e] : pp_te_fma32(p8[j], v[j * vstride + e], a);
        if (chain)
            o[e] = a;
        else if (ex)
            o[e] = o[e] + a * t->xv * t->xs;
        else
            o[e] = pp_te_r32(o[e] + pp_te_r32(pp_te_r32(a * t->xv) * t->xs));
    }
}

// pp_attn_te_row with the exact sites of t->x, every step binary64 (see the sites above):
// q8 [d] and key j's rows at k8 + j·kstride, v8 likewise (e4m3 values, or the inputs with the quant
// sites exact); x: n binary64 scratch. o [d] the row's O before the FP8 store, *lse, *amax_s as
// pp_attn_te_row's (binary64 where their sites keep them).
//   softmax_in  x_j = acc_j·σ and the exponent's argument x_j − m
//   row_max     online: the running max's threshold test m_b − m and the correction's argument and
//               exp(m − m_new) (two-pass: its max rounds nothing, not offered)
//   exp         p_j = exp(x_j − m): the binary64 exp (else RN_32, the order band's draw on it)
//   row_sum     the tile sums ts (two-pass: l), l·corr and l + ts
//   p           P8 = p·scale_s (no binary32 product, no e4m3 cast)
//   row_inv     the division by l: online O/max(l, 1), two-pass p/l
//   out_partial P8·V8's chains, their descales, O's sum and O·corr (chain: O·X_sv)
//   lse         m (·ln 2) + log l
// With R (may be NULL), the row's range notes into head `head`: each value as the row computes
// it (mask 0: the kernel's own values, so `run --ranges` notes what the kernel rounds): scores (S's
// fp32 chain), softmax_in (x = acc ⊗ σ), exp (p), p (P8: p·scale_s into e4m3), row_max, row_sum
// and lse (binary32).
static inline void pp_attn_te_row_xr(const pp_attn_te_cfg_x *t, int64_t row, const double *q8, const double *k8,
                                     const double *v8, int64_t kstride, int64_t n, int64_t d, double *x, double *o,
                                     double *lse, double *amax_s, pp_ranges *R, int64_t head)
{
    const pp_attn_te_cfg *c = &t->c;
    pp_site_mask xm = t->x;
    pp_attn_mma_walk w;
    int64_t j;
    *amax_s = 0.0;
    for (int64_t e = 0; e < d; e++)
        o[e] = 0.0;
    if (n == 0) {
        *lse = -INFINITY;
        return;
    }
    for (j = 0; j < n; j++) {
        double acc = pp_attn_te_dot_x(t, q8, k8 + j * kstride, d);
        x[j] = pp_attn_te_mul_x(t, PP_SITE_ATTN_SOFTMAX_IN, acc, t->sigma);
        pp_range_note1(R, PP_SITE_ATTN_SCORES, head, PP_FMT_FP32, acc);
        pp_range_note1(R, PP_SITE_ATTN_SOFTMAX_IN, head, PP_FMT_FP32, x[j]);
    }
    double m = -INFINITY, l = 0.0, am = 0.0;
    int64_t bn = c->block_n;
    if (c->softmax == PP_ATTN_TE_TWO_PASS) {
        for (j = 0; j < n; j++)
            m = pp_te_max_x(m, x[j]);
        for (pp_attn_mma_begin(&w, c->order_seed, PP_ATTN_MMA_TE_L, 0, n); pp_attn_mma_next(&w, &j);)
            l = pp_attn_te_add_x(t, PP_SITE_ATTN_ROW_SUM, l,
                                 pp_attn_te_p_x(t, row, j, pp_attn_te_add_x(t, PP_SITE_ATTN_SOFTMAX_IN, x[j], -m)));
        for (int64_t j0 = 0; j0 < n; j0 += bn) {
            int64_t j1 = j0 + bn < n ? j0 + bn : n;
            for (j = j0; j < j1; j++) {
                double e = pp_attn_te_p_x(t, row, j, pp_attn_te_add_x(t, PP_SITE_ATTN_SOFTMAX_IN, x[j], -m));
                double p = pp_site_exact(xm, PP_SITE_ATTN_ROW_INV) ? e / l : pp_te_r32(e / l);
                am = pp_te_max_x(am, p);
                x[j] = pp_attn_te_p8_x(t, p);
                pp_range_note1(R, PP_SITE_ATTN_EXP, head, PP_FMT_FP32, e);
                pp_range_note(R, PP_SITE_ATTN_P, head, PP_FMT_E4M3, p * t->scale_s, x[j]);
            }
            pp_attn_te_pv_tile_x(t, x, v8, kstride, j0, j1, d, o);
        }
    } else {
        for (int64_t j0 = 0; j0 < n; j0 += bn) {
            int64_t j1 = j0 + bn < n ? j0 + bn : n;
            double mb = -INFINITY;
            for (j = j0; j < j1; j++)
                mb = pp_te_max_x(mb, x[j]);
            double mn = (m == -INFINITY || mb != mb || pp_attn_te_add_x(t, PP_SITE_ATTN_ROW_MAX, mb, -m) > c->thr)
                            ? mb
                            : m;
            if (m != -INFINITY && pp_attn_te_add_x(t, PP_SITE_ATTN_ROW_MAX, m, -mn) < -c->thr) {
                double arg = pp_attn_te_add_x(t, PP_SITE_ATTN_ROW_MAX, m, -mn);
                double corr = pp_site_exact(xm, PP_SITE_ATTN_ROW_MAX) ? pp_te_exp64(c, arg) : pp_te_exp32(c, arg);
                for (int64_t e = 0; e < d; e++)
                    o[e] = pp_attn_te_mul_x(t, PP_SITE_ATTN_OUT_PARTIAL, o[e], corr);
                l = pp_attn_te_mul_x(t, PP_SITE_ATTN_ROW_SUM, l, corr);
            }
            double ts = 0.0;
            for (pp_attn_mma_begin(&w, c->order_seed, PP_ATTN_MMA_TE_L, j0, j1); pp_attn_mma_next(&w, &j);) {
                double p = pp_attn_te_p_x(t, row, j, pp_attn_te_add_x(t, PP_SITE_ATTN_SOFTMAX_IN, x[j], -mn));
                ts = pp_attn_te_add_x(t, PP_SITE_ATTN_ROW_SUM, ts, p);
                am = pp_te_max_x(am, p);
                x[j] = pp_attn_te_p8_x(t, p);
                pp_range_note1(R, PP_SITE_ATTN_EXP, head, PP_FMT_FP32, p);
                pp_range_note(R, PP_SITE_ATTN_P, head, PP_FMT_E4M3, p * t->scale_s, x[j]);
            }
            pp_attn_te_pv_tile_x(t, x, v8, kstride, j0, j1, d, o);
            l = pp_attn_te_add_x(t, PP_SITE_ATTN_ROW_SUM, l, ts);
            m = mn;
        }
    }
    double div = c->softmax == PP_ATTN_TE_TWO_PASS ? 1.0 : (l < 1.0 ? 1.0 : l);
    for (int64_t e = 0; e < d; e++) {
        double v = c->pv == PP_ATTN_TE_PV_CHAIN ? pp_attn_te_mul_x(t, PP_SITE_ATTN_OUT_PARTIAL, o[e], t->xsv) : o[e];
        o[e] = div == 1.0 ? v : pp_site_exact(xm, PP_SITE_ATTN_ROW_INV) ? v / div : pp_te_r32(v / div);
    }
    if (pp_site_exact(xm, PP_SITE_ATTN_LSE)) {
        *lse = (c->base == PP_ATTN_TE_EXP2 ? m * t->ln2 : m) + log(l);
    } else {
        double lnm = c->base == PP_ATTN_TE_EXP2 ? pp_te_r32(m * t->ln2) : m;
        float lg = pp_te_is32(l) ? pp_logf((float)l) : (float)log(l);
        *lse = pp_te_r32(lnm + (double)pp_attn_order_log(c->order_seed, row, (float)l, lg));
    }
    *amax_s = am;
    pp_range_note1(R, PP_SITE_ATTN_ROW_MAX, head, PP_FMT_FP32, m);
    pp_range_note1(R, PP_SITE_ATTN_ROW_SUM, head, PP_FMT_FP32, l);
    pp_range_note1(R, PP_SITE_ATTN_LSE, head, PP_FMT_FP32, *lse);
}

// The row without range notes (explain's runs, the tests).
static inline void pp_attn_te_row_x(const pp_attn_te_cfg_x *t, int64_t row, const double *q8, const double *k8,
                                    const double *v8, int64_t kstride, int64_t n, int64_t d, double *x, double *o,
                                    double *lse, double *amax_s)
{
    pp_attn_te_row_xr(t, row, q8, k8, v8, kstride, n, d, x, o, lse, amax_s, (pp_ranges *)0, 0);
}

#endif
