// attention_te_fp8_bwd_x.h — fp8 = "te"'s BACKWARD bodies (kernels/attention_te_fp8_bwd.h) with
// `explain`'s exact sites (kernels/attention.h "Exact sites", fp8 = te, backward): the same steps in
// binary64 variables, each rounded as the kernel rounds it unless its site is exact, and the range
// notes of every intermediate. Host C, CPU only (the CUDA launchers refuse exact sites): the run is
// kernels/attention_te_bwd_exact.c. With mask 0 every value is a binary32 value and every op the
// kernel's own (pp_te_fma32 and friends: kernels/attention_te_fp8_x.h), so the bodies give
// pp_attn_te_bwd_*'s bits (tests/test_explain_attention_te_bwd.c checks it on every knob).
#ifndef PP_ATTENTION_TE_FP8_BWD_X_H
#define PP_ATTENTION_TE_FP8_BWD_X_H

#include <math.h>
#include <stdint.h>

#include "attention_te_fp8_bwd.h"
#include "attention_te_fp8_x.h"
#include "exact_sites.h"
#include "ranges.h"

// The backward's scalars as the exact-site bodies read them (binary32 values where their site
// rounds, binary64 where it is exact; pp_attn_te_bwd_cfg_x is filled by attention_te_bwd_exact.c).
typedef struct pp_attn_te_bwd_cfg_x {
    pp_attn_te_bwd_cfg c;  // the kernel's (knobs: dq, ds_amax, block_n; the binary32 scalars)
    pp_attn_te_cfg_x f;    // the forward's as its exact row read them: σ, the order seed, the mask
    pp_site_mask x;        // the exact sites
    double l2e;            // base-2: lse's factor, RN_32(log2 e) or (softmax_scale exact) log2 e
    double alpha;          // dS's attn_scale: RN_32(α), or α in binary64 (softmax_scale exact)
    double scale_s, xs;    // P's scale and descale X_s (block_scale_p exact: 1/scale_s)
    double xq, xk, xv;     // the forward's descales (binary64 where their scale sites are exact)
    double xo;             // O8's descale (out exact: 1, O8 is then O itself)
    double xdo;            // dO's descale (block_scale_do exact: 1/s; quant_do exact: 1)
    double scale_dp, xdp;  // dS's scale_dP and descale_dP (block_scale_ds exact: unrounded, 1/s)
} pp_attn_te_bwd_cfg_x;

// a ⊗ b at site (kernel: one binary32 rounding; exact: binary64)
static inline double pp_te_bwd_mul_x(const pp_attn_te_bwd_cfg_x *t, int site, double a, double b)
{
    return pp_site_exact(t->x, site) ? a * b : pp_te_r32(a * b);
}

// The chain Σ_e a[e]·b[e] from +0 in e order at site (pp_attn_te_bwd_dot; exact: the binary64 sum,
// exact for e4m3/e5m2 operands as S's chain, attention_te_fp8_x.h pp_attn_te_dot_x).
static inline double pp_te_bwd_dot_x(const pp_attn_te_bwd_cfg_x *t, int site, int gemm, const double *a,
                                     const double *b, int64_t d)
{
    int ex = pp_site_exact(t->x, site);
    double acc = 0.0;
    pp_attn_mma_walk w;
    int64_t e;
    for (pp_attn_mma_begin(&w, t->c.f.order_seed, gemm, 0, d); pp_attn_mma_next(&w, &e);)
        acc = ex ? acc + a[e] * b[e] : pp_te_fma32(a[e], b[e], acc);
    return acc;
}

// p = exp(S − lse) recomputed (pp_attn_te_bwd_p): S's chain (scores), x = acc·σ and the argument
// (softmax_in; base 2: x − lse·log2 e), the exponential (exp). lse as the forward left it.
static inline double pp_attn_te_bwd_p_x(const pp_attn_te_bwd_cfg_x *t, const double *q8, const double *k8,
                                        int64_t d, double lse)
{
    const pp_attn_te_cfg_x *f = &t->f;
    double x = pp_attn_te_mul_x(f, PP_SITE_ATTN_SOFTMAX_IN, pp_attn_te_dot_x(f, q8, k8, d), f->sigma);
    double l = f->c.base == PP_ATTN_TE_EXP2 ? pp_attn_te_mul_x(f, PP_SITE_ATTN_SOFTMAX_IN, lse, t->l2e) : lse;
    double arg = pp_attn_te_add_x(f, PP_SITE_ATTN_SOFTMAX_IN, x, -l);
    return pp_site_exact(t->x, PP_SITE_ATTN_EXP) ? pp_te_exp64(&f->c, arg) : pp_te_exp32(&f->c, arg);
}

// An e4m3 code of v·scale at site: RN_e4m3,sat(RN_32(v·scale)), or (exact) v·scale in binary64.
static inline double pp_te_bwd_e4m3_x(const pp_attn_te_bwd_cfg_x *t, int site, double v, double scale)
{
    if (pp_site_exact(t->x, site))
        return v * scale;
    return pp_round(PP_FMT_E4M3, pp_te_r32(v * scale), (pp_rounding)(PP_RND_NE | PP_RND_SAT), 0);
}

// dP = RN_32(RN_32(chain(dO8·V8) ⊗ X_dO) ⊗ X_v) (site dp: the chain and both products); *pre
// (may be NULL) the chain's value times both descales in binary64 (the range note's value before).
static inline double pp_attn_te_bwd_dp_x(const pp_attn_te_bwd_cfg_x *t, const double *do8, const double *v8,
                                         int64_t d, double *pre)
{
    // mma sm90-fp8 (site dp not exact): the kernel's pp_attn_te_bwd_dpa through Hopper's model
    double acc = t->c.f.sm90 && !pp_site_exact(t->x, PP_SITE_ATTN_DP)
                   ? pp_attn_te_sm90_xe(0.0, do8, 1, v8, 1, d, t->c.emin_g, PP_ATTN_TE_EMIN_E4M3)
                   : pp_te_bwd_dot_x(t, PP_SITE_ATTN_DP, PP_ATTN_MMA_DP, do8, v8, d);
    if (pre)
        *pre = acc * t->xdo * t->xv;
    return pp_te_bwd_mul_x(t, PP_SITE_ATTN_DP, pp_te_bwd_mul_x(t, PP_SITE_ATTN_DP, acc, t->xdo), t->xv);
}

// dS before its scale: RN_32(RN_32(p ⊗ RN_32(dP ⊖ D)) ⊗ α) (site ds: the three binary32 steps)
static inline double pp_attn_te_bwd_ds_x(const pp_attn_te_bwd_cfg_x *t, double p, double dp, double D)
{
    if (pp_site_exact(t->x, PP_SITE_ATTN_DS))
        return p * (dp - D) * t->alpha;
    return pp_te_r32(pp_te_r32(p * pp_te_r32(dp - D)) * t->alpha);
}

// Row pass 1 (pp_attn_te_bwd_pre_row): *D (site d: the chain of O8·dO8 and its two descales) and
// *amax_dp (dP's max over all s_kv keys, or with ds_amax dS's over the n visible ones, NaN
// sticky), binary64. Notes: d.
static inline void pp_attn_te_bwd_pre_row_x(const pp_attn_te_bwd_cfg_x *t, const double *q8, const double *o8,
                                            const double *do8, const double *k8, const double *v8, int64_t kstride,
                                            int64_t s_kv, int64_t n, int64_t d, double lse, int64_t head,
                                            pp_ranges *R, double *D, double *amax_dp)
{
    double acc = pp_te_bwd_dot_x(t, PP_SITE_ATTN_D, PP_ATTN_MMA_TE_D, o8, do8, d);
    *D = pp_te_bwd_mul_x(t, PP_SITE_ATTN_D, pp_te_bwd_mul_x(t, PP_SITE_ATTN_D, acc, t->xo), t->xdo);
    pp_range_note(R, PP_SITE_ATTN_D, head, PP_FMT_FP32, acc * t->xo * t->xdo, *D);
    double am = 0.0;
    for (int64_t j = 0; j < (t->c.ds_amax ? n : s_kv); j++) {
        double dp = pp_attn_te_bwd_dp_x(t, do8, v8 + j * kstride, d, NULL), a = fabs(dp);
        if (t->c.ds_amax)
            a = fabs(pp_attn_te_bwd_ds_x(t, pp_attn_te_bwd_p_x(t, q8, k8 + j * kstride, d, lse), dp, *D));
        am = (a > am || a != a) && am == am ? a : am;
    }
    *amax_dp = am;
}

// Row pass 2 (pp_attn_te_bwd_dq_row): dq of one query row. Per key p, dP, dS8 (site ds: dS·scale_dP
// without its e4m3 cast when exact); per tile and column the chain of dS8·k8 and the tile's
// RN_32(RN_32(t ⊗ X_k) ⊗ X_dP) added into dq (te_dq chain: one chain, descaled once): site dq_acc.
// Notes: dp, ds (dS8 against RN_32(ds ⊗ scale_dP)), dq_acc (each tile's chain, then the row's dq
// before its store). acc: d binary64 scratch.
static inline void pp_attn_te_bwd_dq_row_x(const pp_attn_te_bwd_cfg_x *t, const double *q8, const double *do8,
                                           const double *k8, const double *v8, int64_t kstride, int64_t n, int64_t d,
                                           double lse, double D, int64_t head, pp_ranges *R, double *acc, double *dq)
{
    int chain = t->c.dq == PP_ATTN_TE_DQ_CHAIN, ex = pp_site_exact(t->x, PP_SITE_ATTN_DQ_ACC);
    int sm90 = t->c.f.sm90 && !ex;  // the kernel's gathered dS8 codes through Hopper's model
    int64_t bn = t->c.block_n > 0 ? t->c.block_n : 128, jb = 0;
    double dsb[PP_SM90_FP8_PROMOTE];
    for (int64_t e = 0; e < d; e++)
        dq[e] = 0.0;
    for (int64_t j0 = 0; j0 < n; j0 += bn) {
        int64_t j1 = j0 + bn < n ? j0 + bn : n;
        for (int64_t e = 0; e < d; e++)
            acc[e] = chain ? dq[e] : 0.0;
        jb = j0;
        pp_attn_mma_walk w;  // the kernel's walk of the tile's keys (sm90: in order)
        int64_t j;
        for (pp_attn_mma_begin(&w, t->c.f.sm90 ? 0 : t->c.f.order_seed, PP_ATTN_MMA_DQ, j0, j1);
             pp_attn_mma_next(&w, &j);) {
            const double *kj = k8 + j * kstride;
            double pre, p = pp_attn_te_bwd_p_x(t, q8, kj, d, lse);
            double dp = pp_attn_te_bwd_dp_x(t, do8, v8 + j * kstride, d, &pre);
            double ds = pp_attn_te_bwd_ds_x(t, p, dp, D), ds8 = pp_te_bwd_e4m3_x(t, PP_SITE_ATTN_DS, ds, t->scale_dp);
            pp_range_note(R, PP_SITE_ATTN_DP, head, PP_FMT_FP32, pre, dp);
            pp_range_note(R, PP_SITE_ATTN_DS, head, PP_FMT_E4M3, pp_te_r32(ds * t->scale_dp), ds8);
            if (sm90) {
                dsb[j - jb] = ds8;
                if (j + 1 - jb == PP_SM90_FP8_PROMOTE || j + 1 == j1) {  // as pp_attn_te_bwd_dq_row
                    for (int64_t e = 0; e < d; e++)
                        acc[e] = pp_attn_te_sm90_x(acc[e], dsb, 1, k8 + jb * kstride + e, kstride, j + 1 - jb);
                    jb = j + 1;
                }
                continue;
            }
            for (int64_t e = 0; e < d; e++)
                acc[e] = ex ? acc[e] + ds8 * kj[e] : pp_te_fma32(ds8, kj[e], acc[e]);
        }
        for (int64_t e = 0; e < d; e++)  // the tile's chain (te_dq chain: the running one)
            pp_range_note1(R, PP_SITE_ATTN_DQ_ACC, head, PP_FMT_FP32, acc[e]);
        for (int64_t e = 0; e < d; e++)
            dq[e] = chain ? acc[e]
                  : ex    ? dq[e] + acc[e] * t->xk * t->xdp
                          : pp_te_r32(dq[e] + pp_te_r32(pp_te_r32(acc[e] * t->xk) * t->xdp));
    }
    for (int64_t e = 0; chain && e < d; e++)
        dq[e] = ex ? dq[e] * t->xk * t->xdp : pp_te_r32(pp_te_r32(dq[e] * t->xk) * t->xdp);
    for (int64_t e = 0; e < d; e++)
        pp_range_note1(R, PP_SITE_ATTN_DQ_ACC, head, PP_FMT_FP32, dq[e]);
}

// Key column j of one kv head (pp_attn_te_bwd_dkv_col): per (q head of the group, row i) p, P8
// (site p: p·scale_s without its e4m3 cast when exact), dP, dS8; the chains av = Σ P8·dO8 and
// ak = Σ dS8·q8 and their descales RN_32(RN_32(av ⊗ X_s) ⊗ X_dO), RN_32(RN_32(ak ⊗ X_q) ⊗ X_dP):
// site dkv_acc. Notes: exp (p recomputed) and p (P8) under the row's q head h0 + hg; dkv_acc (dk's
// and dv's ends) under the kv head kvh (TE sums the group in one chain: no per-q-head value).
static inline void pp_attn_te_bwd_dkv_col_x(const pp_attn_te_bwd_cfg_x *t, const double *q8, const double *do8,
                                            int64_t qstride, const double *lse, const double *D, int64_t s_q,
                                            int64_t i0, int64_t group, const double *k8j, const double *v8j,
                                            int64_t d, int64_t h0, int64_t kvh, pp_ranges *R, double *dk, double *dv)
{
    int ex = pp_site_exact(t->x, PP_SITE_ATTN_DKV_ACC), sm90 = t->c.f.sm90 && !ex;
    // sm90: the kernel's gathered steps (pp_attn_te_bwd_dkv_col): step k is head k / span, row
    // i0 + k mod span; PP_SM90_FP8_PROMOTE of them at a time through Hopper's model
    double p8b[PP_SM90_FP8_PROMOTE], dsb[PP_SM90_FP8_PROMOTE], col[PP_SM90_FP8_PROMOTE];
    int64_t span = s_q > i0 ? s_q - i0 : 0, nst = 0, k0 = 0, left = group * span;
    for (int64_t e = 0; e < d; e++)
        dk[e] = dv[e] = 0.0;
    // the kernel's steps k = (head k / span, row i0 + k mod span) in its walk (sm90: in order)
    pp_attn_mma_walk w;
    int64_t k;
    for (pp_attn_mma_begin(&w, t->c.f.sm90 ? 0 : t->c.f.order_seed, PP_ATTN_MMA_DKV, 0, group * span);
         pp_attn_mma_next(&w, &k);) {
        int64_t hg = k / span, i = i0 + k % span;
        const double *qi = q8 + i * qstride + hg * d, *doi = do8 + i * qstride + hg * d;
        double p = pp_attn_te_bwd_p_x(t, qi, k8j, d, lse[hg * s_q + i]);
        double p8 = pp_te_bwd_e4m3_x(t, PP_SITE_ATTN_P, p, t->scale_s);
        double dp = pp_attn_te_bwd_dp_x(t, doi, v8j, d, NULL);
        double ds8 = pp_te_bwd_e4m3_x(t, PP_SITE_ATTN_DS, pp_attn_te_bwd_ds_x(t, p, dp, D[hg * s_q + i]),
                                      t->scale_dp);
        pp_range_note1(R, PP_SITE_ATTN_EXP, h0 + hg, PP_FMT_FP32, p);
        pp_range_note(R, PP_SITE_ATTN_P, h0 + hg, PP_FMT_E4M3, pp_te_r32(p * t->scale_s), p8);
        if (sm90) {
            p8b[nst] = p8, dsb[nst] = ds8;
            nst++, left--;
            if (nst < PP_SM90_FP8_PROMOTE && left > 0)
                continue;
            for (int64_t e = 0; e < d; e++) {
                for (int64_t l = 0; l < nst; l++)
                    col[l] = do8[(i0 + (k0 + l) % span) * qstride + (k0 + l) / span * d + e];
                dv[e] = pp_attn_te_sm90_xe(dv[e], p8b, 1, col, 1, nst, PP_ATTN_TE_EMIN_E4M3, t->c.emin_g);
                for (int64_t l = 0; l < nst; l++)
                    col[l] = q8[(i0 + (k0 + l) % span) * qstride + (k0 + l) / span * d + e];
                dk[e] = pp_attn_te_sm90_xe(dk[e], dsb, 1, col, 1, nst, PP_ATTN_TE_EMIN_E4M3, PP_ATTN_TE_EMIN_E4M3);
            }
            k0 += nst, nst = 0;
            continue;
        }
        for (int64_t e = 0; e < d; e++) {
            dv[e] = ex ? dv[e] + p8 * doi[e] : pp_te_fma32(p8, doi[e], dv[e]);
            dk[e] = ex ? dk[e] + ds8 * qi[e] : pp_te_fma32(ds8, qi[e], dk[e]);
        }
    }
    for (int64_t e = 0; e < d; e++) {
        dv[e] = ex ? dv[e] * t->xs * t->xdo : pp_te_r32(pp_te_r32(dv[e] * t->xs) * t->xdo);
        dk[e] = ex ? dk[e] * t->xq * t->xdp : pp_te_r32(pp_te_r32(dk[e] * t->xq) * t->xdp);
        pp_range_note1(R, PP_SITE_ATTN_DKV_ACC, kvh, PP_FMT_FP32, dv[e]);
        pp_range_note1(R, PP_SITE_ATTN_DKV_ACC, kvh, PP_FMT_FP32, dk[e]);
    }
}

#endif
