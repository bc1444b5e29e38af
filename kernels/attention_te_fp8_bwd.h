// attention_te_fp8_bwd.h — TransformerEngine's FP8 dot-product attention BACKWARD (fp8 = "te" with
// passes = "fwd+bwd": cuDNN's sdpa_fp8_backward graph as TE calls it), one query row (D, dP's
// amax, dQ) or one key column (dK, dV) at a time: P recomputed from the forward's lse and scaled
// into e4m3 by scale_s, dP = dO8·V8ᵀ descaled, dS = P·(dP − D)·attn_scale scaled by scale_dP into
// e4m3, and the three gradient GEMMs with their descales, before the host's FP8 stores (whose
// scales, and dO's, are current or TE's delayed recipe's: attention_te_bwd_run.c). With mma =
// "sm90-fp8" every FP8 GEMM here (dP, dq's dS8·K8, dk's dS8ᵀ·Q8, dv's P8ᵀ·dO8, S recomputed) goes
// through pp_attn_te_sm90 (attention_te_fp8.h: Hopper's accumulator as a bound on cuDNN's).
// PP_HD C11: the CPU (kernels/cpu/attention_te_fp8_bwd.c) and the GPU
// (kernels/cuda/attention_te_bwd_kernels.cu) run the same bodies. The specification, its sources
// and the measured effect of every choice: kernels/attention.h, "FP8 (fp8 = te)", "Backward:".
// explain's exact sites and the range notes: a second, binary64 body of these passes
// (kernels/attention_te_fp8_bwd_x.h; CPU only, mask 0 = these bodies' bits), attention.h "Exact
// sites", fp8 = te, "Its backward". The R notes of the passes below (d, dp, ds) are those the
// kernel path takes itself; `run --ranges` takes every backward note from that second body.
#ifndef PP_ATTENTION_TE_FP8_BWD_H
#define PP_ATTENTION_TE_FP8_BWD_H

#include <math.h>
#include <stdint.h>

#include "attention_te_fp8.h"
#include "format.h"
#include "pp_hd.h"
#include "ranges.h"
#include "sites.h"

// The scalars of one backward run (binary32, as the graph's scalar tensors). Every descale is
// RN_32(1/scale) of its tensor's scale (kernels/scaling.h's pp_tensor_scale_inv).
typedef struct pp_attn_te_bwd_cfg {
    pp_attn_te_cfg f;  // the forward's: σ and the exponential's base (S recomputed as the forward makes it)
    float alpha;       // attn_scale, RN_32(α)
    float scale_s;     // P's scale into e4m3 (no lazy-rescale factor: the backward's P ≤ 1 is normalised)
    float xs;          // descale_s = RN_32(1/scale_s)
    float xq, xk, xv;  // the forward's descales of q, k, v
    float xo;          // descale_o: O8's (the forward's RN_32(1/scale_o))
    float xdo;         // descale_dO
    float scale_dp;    // dS's scale into e4m3 (scale_dP: from dP's amax, or amax_history_dp)
    float xdp;         // descale_dP = RN_32(1/scale_dp)
    int block_n;       // dQ's key tiles (the reference's blocks of 128 keys)
    pp_attn_te_dq dq;  // dQ per key tile, descaled and added (the reference), or one chain
    int ds_amax;       // pass 1's amax: max |dP| over all keys (0, the reference) or max |dS| (visible keys)
    int emin_g;        // f.sm90: the exponent dO8's subnormals count as (te_grad_format's emin)
} pp_attn_te_bwd_cfg;

// p = exp(S − lse) for S recomputed as the forward's (σ·the fp32 chain of q8·k8; base 2: the
// log2 e-scaled score and lse ⊗ RN_32(log2 e)); correctly rounded, nominal order (attention.h).
PP_HD static inline float pp_attn_te_bwd_p(const pp_attn_te_bwd_cfg *c, const float *q8, const float *k8, int64_t d,
                                           float lse)
{
    float x = pp_attn_te_dot(&c->f, q8, k8, d) * c->f.sigma;
    return c->f.base == PP_ATTN_TE_EXP2 ? pp_attn_exp2f(x - lse * 1.44269502f) : pp_expf(x - lse);
}

// An e4m3 code of x·scale: RN_e4m3,sat(RN_32(x ⊗ scale)) (saturating, as cvt.rn.satfinite).
PP_HD static inline float pp_attn_te_bwd_e4m3(float x, float scale)
{
    return (float)pp_round(PP_FMT_E4M3, (double)(x * scale), (pp_rounding)(PP_RND_NE | PP_RND_SAT), 0);
}

// The fp32 chain Σ_e a[e]·b[e] from +0 over e in the order band's walk of GEMM `gemm` (e
// increasing at seed 0; FP8 products are exact in binary32).
PP_HD static inline float pp_attn_te_bwd_dot(uint64_t seed, int gemm, const float *a, const float *b, int64_t d)
{
    float acc = 0.0f;
    pp_attn_mma_walk w;
    int64_t e;
    for (pp_attn_mma_begin(&w, seed, gemm, 0, d); pp_attn_mma_next(&w, &e);)
        acc = fmaf(a[e], b[e], acc);
    return acc;
}

// dO8·V8ᵀ's entry before its descales: the fp32 chain over d, or (mma sm90-fp8) pp_attn_te_sm90.
PP_HD static inline float pp_attn_te_bwd_dpa(const pp_attn_te_bwd_cfg *c, const float *do8, const float *v8, int64_t d)
{
    if (c->f.sm90)
        return pp_attn_te_sm90(0.0f, do8, 1, v8, 1, d, c->emin_g, PP_ATTN_TE_EMIN_E4M3);
    return pp_attn_te_bwd_dot(c->f.order_seed, PP_ATTN_MMA_DP, do8, v8, d);
}

// dP = RN_32(RN_32(dO8·V8ᵀ ⊗ descale_dO) ⊗ descale_v) (the reference's two scalar products).
PP_HD static inline float pp_attn_te_bwd_dp(const pp_attn_te_bwd_cfg *c, const float *do8, const float *v8, int64_t d)
{
    return (pp_attn_te_bwd_dpa(c, do8, v8, d) * c->xdo) * c->xv;
}

// dS's e4m3 code for p, dP, the row's D: ds = RN_32(RN_32(p ⊗ RN_32(dP ⊖ D)) ⊗ α) (left to right,
// as the reference), *pre = RN_32(ds ⊗ scale_dP) (noted by the range site ds).
PP_HD static inline float pp_attn_te_bwd_ds8(const pp_attn_te_bwd_cfg *c, float p, float dp, float D, float *pre)
{
    float ds = (p * (dp - D)) * c->alpha;
    *pre = ds * c->scale_dp;
    return pp_attn_te_bwd_e4m3(ds, c->scale_dp);
}

// Row pass 1 (the reference's D and dP's amax pass), query row q8/o8/do8 of head `head` over
// the kv head's keys k8, v8 (n of them visible): *D = RN_32(RN_32(chain(O8·dO8) ⊗ descale_o) ⊗
// descale_dO); *amax = max |dP_j| over ALL s_kv keys (the reference's dP blocks are not masked),
// or with c->ds_amax max |dS_j| (dS before its scale: p recomputed from lse) over the n visible
// keys; NaN when one is NaN.
PP_HD static inline void pp_attn_te_bwd_pre_row(const pp_attn_te_bwd_cfg *c, const float *q8, const float *o8,
                                                const float *do8, const float *k8, const float *v8, int64_t kstride,
                                                int64_t s_kv, int64_t n, int64_t d, float lse, int64_t head,
                                                pp_ranges *R, float *D, float *amax_dp)
{
    float acc = pp_attn_te_bwd_dot(c->f.order_seed, PP_ATTN_MMA_TE_D, o8, do8, d);
    *D = (acc * c->xo) * c->xdo;
    pp_range_note(R, PP_SITE_ATTN_D, head, PP_FMT_FP32, (double)acc * c->xo * c->xdo, *D);
    float am = 0.0f;
    for (int64_t j = 0; j < (c->ds_amax ? n : s_kv); j++) {
        float dp = pp_attn_te_bwd_dp(c, do8, v8 + j * kstride, d), a = fabsf(dp);
        if (c->ds_amax)
            a = fabsf((pp_attn_te_bwd_p(c, q8, k8 + j * kstride, d, lse) * (dp - *D)) * c->alpha);
        am = (a > am || a != a) && am == am ? a : am;  // a NaN stays
    }
    *amax_dp = am;
}

// Row pass 2, dQ of one query row over its n visible keys: per key j p, dP, dS8 (notes: dp, ds);
// per tile of block_n keys and column e the fp32 chain t = Σ_j dS8_j·k8_je from +0, then
// dq_e = dq_e ⊕ RN_32(RN_32(t ⊗ descale_k) ⊗ descale_dP) (te_dq per-tile, the reference); chain:
// one accumulator through every tile, descaled once at the end. mma sm90-fp8: each tile's keys in
// order through pp_attn_te_sm90 (its dS8 codes gathered PP_SM90_FP8_PROMOTE at a time; per-tile:
// from +0; chain: onto the running value). t: d binary32 scratch.
PP_HD static inline void pp_attn_te_bwd_dq_row(const pp_attn_te_bwd_cfg *c, const float *q8, const float *do8,
                                               const float *k8, const float *v8, int64_t kstride, int64_t n, int64_t d,
                                               float lse, float D, int64_t head, pp_ranges *R, float *t, float *dq)
{
    int chain = c->dq == PP_ATTN_TE_DQ_CHAIN;
    int64_t bn = c->block_n > 0 ? c->block_n : 128;
    float dsb[PP_SM90_FP8_PROMOTE];
    int64_t jb = 0;  // sm90: the first key of the gathered codes dsb
    for (int64_t e = 0; e < d; e++)
        dq[e] = 0.0f;
    for (int64_t j0 = 0; j0 < n; j0 += bn) {
        int64_t j1 = j0 + bn < n ? j0 + bn : n;
        for (int64_t e = 0; e < d; e++)
            t[e] = chain ? dq[e] : 0.0f;
        jb = j0;
        // the tile's keys in the order band's walk (sm90: in order, its groups are the model's)
        pp_attn_mma_walk w;
        int64_t j;
        for (pp_attn_mma_begin(&w, c->f.sm90 ? 0 : c->f.order_seed, PP_ATTN_MMA_DQ, j0, j1);
             pp_attn_mma_next(&w, &j);) {
            const float *kj = k8 + j * kstride;
            float p = pp_attn_te_bwd_p(c, q8, kj, d, lse), dpa = pp_attn_te_bwd_dpa(c, do8, v8 + j * kstride, d);
            float dp = (dpa * c->xdo) * c->xv, pre;
            pp_range_note(R, PP_SITE_ATTN_DP, head, PP_FMT_FP32, (double)dpa * c->xdo * c->xv, dp);
            float ds8 = pp_attn_te_bwd_ds8(c, p, dp, D, &pre);
            pp_range_note(R, PP_SITE_ATTN_DS, head, PP_FMT_E4M3, pre, ds8);
            if (!c->f.sm90) {
                for (int64_t e = 0; e < d; e++)
                    t[e] = fmaf(ds8, kj[e], t[e]);
                continue;
            }
            dsb[j - jb] = ds8;
            if (j + 1 - jb == PP_SM90_FP8_PROMOTE || j + 1 == j1) {  // a promotion's worth, or the tile's end
                for (int64_t e = 0; e < d; e++)
                    t[e] = pp_attn_te_sm90(t[e], dsb, 1, k8 + jb * kstride + e, kstride, j + 1 - jb,
                                           PP_ATTN_TE_EMIN_E4M3, PP_ATTN_TE_EMIN_E4M3);
                jb = j + 1;
            }
        }
        for (int64_t e = 0; e < d; e++)
            dq[e] = chain ? t[e] : dq[e] + (t[e] * c->xk) * c->xdp;
    }
    for (int64_t e = 0; chain && e < d; e++)
        dq[e] = (dq[e] * c->xk) * c->xdp;
}

// Key column j of one kv head: dV_j and dK_j over the rows that see it, the group's q heads in
// ascending order, each head's rows i ascending (at seed 0; the order band walks these steps in
// chunks of 16 as any MMA k-chain, PP_ATTN_MMA_DKV), one fp32 chain per column e from +0 (the
// reference's _kv_reduce: one reduction over (head, i)): av = Σ P8_ij·dO8_ie, ak = Σ dS8_ij·q8_ie;
// dv = RN_32(RN_32(av ⊗ descale_s) ⊗ descale_dO), dk = RN_32(RN_32(ak ⊗ descale_q) ⊗ descale_dP).
// q8, do8: the batch's first query row of the group's first head (row stride qstride, head
// stride d); lse, D of those rows at lse[hg·s_q + i] for the hg-th head of the group.
// mma sm90-fp8: the same reduction over (head, i) through pp_attn_te_sm90, PP_SM90_FP8_PROMOTE
// steps gathered at a time (P8 and dS8; step k is head k / (s_q − i0), row i0 + k mod (s_q − i0);
// its groups of 32 run across heads).
PP_HD static inline void pp_attn_te_bwd_dkv_col(const pp_attn_te_bwd_cfg *c, const float *q8, const float *do8,
                                                int64_t qstride, const float *lse, const float *D, int64_t s_q,
                                                int64_t i0, int64_t group, const float *k8j, const float *v8j,
                                                int64_t d, float *dk, float *dv)
{
    float p8b[PP_SM90_FP8_PROMOTE], dsb[PP_SM90_FP8_PROMOTE], col[PP_SM90_FP8_PROMOTE];
    int64_t span = s_q > i0 ? s_q - i0 : 0;
    int64_t m = 0, k0 = 0, left = group * span;  // sm90: steps gathered, the first's step, steps to come
    for (int64_t e = 0; e < d; e++)
        dk[e] = dv[e] = 0.0f;
    // step k = (head hg, row i0 + r), k = hg·span + r, in the order band's walk (k increasing at
    // seed 0: heads ascending, rows ascending; sm90: in order, its groups are the model's)
    pp_attn_mma_walk w;
    int64_t k;
    for (pp_attn_mma_begin(&w, c->f.sm90 ? 0 : c->f.order_seed, PP_ATTN_MMA_DKV, 0, group * span);
         pp_attn_mma_next(&w, &k);) {
        int64_t hg = k / span, i = i0 + k % span;
        const float *qi = q8 + i * qstride + hg * d, *doi = do8 + i * qstride + hg * d;
        float p = pp_attn_te_bwd_p(c, qi, k8j, d, lse[hg * s_q + i]), p8 = pp_attn_te_bwd_e4m3(p, c->scale_s);
        float dp = pp_attn_te_bwd_dp(c, doi, v8j, d), pre;
        float ds8 = pp_attn_te_bwd_ds8(c, p, dp, D[hg * s_q + i], &pre);
        if (!c->f.sm90) {
            for (int64_t e = 0; e < d; e++) {
                dv[e] = fmaf(p8, doi[e], dv[e]);
                dk[e] = fmaf(ds8, qi[e], dk[e]);
            }
            continue;
        }
        p8b[m] = p8, dsb[m] = ds8;
        m++, left--;
        if (m < PP_SM90_FP8_PROMOTE && left > 0)
            continue;
        for (int64_t e = 0; e < d; e++) {
            for (int64_t l = 0; l < m; l++)  // step k0 + l's dO8 row
                col[l] = do8[(i0 + (k0 + l) % span) * qstride + (k0 + l) / span * d + e];
            dv[e] = pp_attn_te_sm90(dv[e], p8b, 1, col, 1, m, PP_ATTN_TE_EMIN_E4M3, c->emin_g);
            for (int64_t l = 0; l < m; l++)
                col[l] = q8[(i0 + (k0 + l) % span) * qstride + (k0 + l) / span * d + e];
            dk[e] = pp_attn_te_sm90(dk[e], dsb, 1, col, 1, m, PP_ATTN_TE_EMIN_E4M3, PP_ATTN_TE_EMIN_E4M3);
        }
        k0 += m, m = 0;
    }
    for (int64_t e = 0; e < d; e++) {
        dv[e] = (dv[e] * c->xs) * c->xdo;
        dk[e] = (dk[e] * c->xq) * c->xdp;
    }
}

// ---------------------------------------------------------------------------------------------
// Index maps: row r = (batch·h + head)·s_q + i (lse's order), column cidx = (batch·h_kv + g)·s_kv + j.
// q8, o8, do8, dq [b, s_q, h, d]; k8, v8, dk, dv [b, s_kv, h_kv, d]; lse, D per row r.

// The causal limit: the number of keys query i sees (j ≤ i + s_kv − s_q).
PP_HD static inline int64_t pp_attn_te_bwd_visible(const pp_attn_dims *dm, int64_t i)
{
    if (!dm->causal)
        return dm->s_kv;
    int64_t last = i + dm->s_kv - dm->s_q;
    return last < 0 ? 0 : last + 1 < dm->s_kv ? last + 1 : dm->s_kv;
}

// Row pass 1 for row r: D[r], amax_dp[r].
PP_HD static inline void pp_attn_te_bwd_pre_at(const pp_attn_te_bwd_cfg *c, const pp_attn_dims *dm, const float *q8,
                                               const float *k8, const float *v8, const float *o8, const float *do8,
                                               const float *lse, int64_t r, pp_ranges *R, float *D, float *amax_dp)
{
    int64_t i = r % dm->s_q, bh = r / dm->s_q, bi = bh / dm->h, hh = bh % dm->h, g = hh / (dm->h / dm->h_kv);
    int64_t row = ((bi * dm->s_q + i) * dm->h + hh) * dm->d, kv = (bi * dm->s_kv * dm->h_kv + g) * dm->d;
    pp_attn_te_bwd_pre_row(c, q8 + row, o8 + row, do8 + row, k8 + kv, v8 + kv, dm->h_kv * dm->d, dm->s_kv,
                           pp_attn_te_bwd_visible(dm, i), dm->d, lse[r], hh, R, &D[r], &amax_dp[r]);
}

// Row pass 2 for row r: its dq row (t: d binary32 scratch of this row's own).
PP_HD static inline void pp_attn_te_bwd_dq_at(const pp_attn_te_bwd_cfg *c, const pp_attn_dims *dm, const float *q8,
                                              const float *k8, const float *v8, const float *do8, const float *lse,
                                              const float *D, int64_t r, pp_ranges *R, float *t, float *dq)
{
    int64_t i = r % dm->s_q, bh = r / dm->s_q, bi = bh / dm->h, hh = bh % dm->h, g = hh / (dm->h / dm->h_kv);
    int64_t row = ((bi * dm->s_q + i) * dm->h + hh) * dm->d, kv = (bi * dm->s_kv * dm->h_kv + g) * dm->d;
    pp_attn_te_bwd_dq_row(c, q8 + row, do8 + row, k8 + kv, v8 + kv, dm->h_kv * dm->d, pp_attn_te_bwd_visible(dm, i),
                          dm->d, lse[r], D[r], hh, R, t, dq + row);
}

// Column pass for column cidx: its dk and dv rows.
PP_HD static inline void pp_attn_te_bwd_dkv_at(const pp_attn_te_bwd_cfg *c, const pp_attn_dims *dm, const float *q8,
                                               const float *k8, const float *v8, const float *do8, const float *lse,
                                               const float *D, int64_t cidx, float *dk, float *dv)
{
    int64_t j = cidx % dm->s_kv, bg = cidx / dm->s_kv, bi = bg / dm->h_kv, g = bg % dm->h_kv;
    int64_t group = dm->h / dm->h_kv, h0 = g * group;
    int64_t i0 = dm->causal ? j - (dm->s_kv - dm->s_q) : 0;  // the first query that sees key j
    i0 = i0 < 0 ? 0 : i0;
    int64_t kv = ((bi * dm->s_kv + j) * dm->h_kv + g) * dm->d, q0 = (bi * dm->s_q * dm->h + h0) * dm->d;
    int64_t r0 = (bi * dm->h + h0) * dm->s_q;
    pp_attn_te_bwd_dkv_col(c, q8 + q0, do8 + q0, dm->h * dm->d, lse + r0, D + r0, dm->s_q, i0, group, k8 + kv,
                           v8 + kv, dm->d, dk + kv, dv + kv);
}

#endif
