// attention_te_fp8.h — TransformerEngine's FP8 dot-product attention forward (the attention knob
// fp8 = "te": cuDNN's sdpa_fp8 graph as TE calls it), one query row at a time: the score scale
// descale_q·descale_k·attn_scale, the softmax (online or two-pass, e or 2 as its base), P scaled by
// scale_s into e4m3, P8·V8 with descale_s·descale_v, and the row's O before its FP8 store.
// PP_HD C11: the CPU (kernels/cpu/attention_te_fp8.c) and the GPU
// (kernels/cuda/attention_te_kernels.cu) run the same row body. The specification with its sources and the measured effect of
// every unknown is kernels/attention.h, "FP8 (fp8 = te)". mma = "sm90-fp8" swaps the fp32 chains of
// the two GEMMs for Hopper's FP8 accumulator (pp_attn_te_sm90 below: a bound, not cuDNN's known order).
#ifndef PP_ATTENTION_TE_FP8_H
#define PP_ATTENTION_TE_FP8_H

#include <math.h>
#include <stdint.h>

#include "attention.h"
#include "attention_threads.h"
#include "format.h"
#include "pp_hd.h"
#include "pp_math.h"
#include "scaling.h"
#include "sm90_fp8_mma.h"

// The scalars of one run (pp_attn_te_cfg_make), binary32 as the graph's scalar tensors are.
typedef struct pp_attn_te_cfg {
    pp_attn_te_softmax softmax;
    pp_attn_te_exp base;
    pp_attn_te_pv pv;
    int block_n;     // keys per tile (online tiles; the P·V blocks of both)
    double thr;      // online: the lazy-rescale threshold in the exponent's units (0: every new max)
    float sigma;     // x = acc ⊗ sigma: RN_32(X_q·X_k·α) (exp), RN_32(that ⊗ RN_32(log2 e)) (exp2)
    float scale_s;   // P's factor into e4m3: scale_s ⊗ 2^−threshold (exact)
    float xs;        // descale_s ⊗ 2^threshold (exact)
    float xv;        // descale_v
    float xsv;       // chain: RN_32(xv ⊗ xs), applied once after the last key
    uint64_t order_seed;  // the order band (attention.h "FP8 (fp8 = te)", order band): 0 nominal
    int sm90;             // mma = sm90-fp8: every FP8 GEMM through pp_attn_te_sm90 (0: fp32 fma chains)
} pp_attn_te_cfg;

// ---- mma = "sm90-fp8" for fp8 = "te": Hopper's FP8 tensor-core accumulation (kernels/sm90_fp8_mma.h,
// measured bit for bit on an H100 and an H200 for wgmma and cuBLASLt) put into cuDNN's GEMMs. A
// BOUND, not a claim: cuDNN's FP8 attention kernels are closed, and whether they accumulate in the
// wgmma fragments, how long they go before promoting into a full binary32 register, and in which
// order, is not public. What is known is the hardware: any kernel that runs e4m3/e5m2 wgmma on
// sm90 gets this truncating 14-bit accumulator for each k-step of 32, so the knob measures how far
// results move between the exact fp32 chain (the default, the reference's torch matmul in fp32)
// and the hardware's accumulator promoted as cuBLASLt does without fast accumulation (every
// PP_SM90_FP8_PROMOTE = 128 elements: 4 groups). A kernel that promoted less often would move
// them more; one that promoted every group, less.
//
// total ⊕ the sm90 accumulation of the n products a[l·sa]·b[l·sb] in l order: groups of 32 into an
// accumulator C from +0, C added into total (one RN_32) every 128 elements and at the end. With
// total = +0 this is pp_sm90_fp8_dot(…, PP_SM90_FP8_PROMOTE) (tests/test_attention_te_sm90.c).
// The chain forms pass the running binary32 value as total. emin_a, emin_b: the operands' formats'.
// One group of that accumulation, the one statement of its promotion: the group starting at
// element l0 (m ≤ 32 products x[i·sx]·y[i·sy]) into *c, after *c is added into *total (one RN_32)
// at every PP_SM90_FP8_PROMOTE-th element. The binary64 explain body (attention_te_fp8_x.h) steps
// through it too.
PP_HD static inline void pp_attn_te_sm90_group(int64_t l0, float *total, float *c, const double *x, int64_t sx,
                                               const double *y, int64_t sy, int64_t m, int emin_a, int emin_b)
{
    if (l0 > 0 && l0 % PP_SM90_FP8_PROMOTE == 0) {
        *total = *total + *c;
        *c = 0.0f;
    }
    *c = pp_sm90_fp8_group(*c, x, sx, y, sy, m, emin_a, emin_b);
}

PP_HD static inline float pp_attn_te_sm90(float total, const float *a, int64_t sa, const float *b, int64_t sb,
                                          int64_t n, int emin_a, int emin_b)
{
    double x[PP_SM90_FP8_GROUP], y[PP_SM90_FP8_GROUP];
    float c = 0.0f;
    for (int64_t l0 = 0; l0 < n; l0 += PP_SM90_FP8_GROUP) {
        int64_t m = n - l0 < PP_SM90_FP8_GROUP ? n - l0 : PP_SM90_FP8_GROUP;
        for (int64_t i = 0; i < m; i++)
            x[i] = a[(l0 + i) * sa], y[i] = b[(l0 + i) * sb];
        pp_attn_te_sm90_group(l0, &total, &c, x, 1, y, 1, m, emin_a, emin_b);
    }
    return total + c;
}

// e4m3's emin (the exponent its subnormals count as in the sm90 alignment)
#define PP_ATTN_TE_EMIN_E4M3 (pp_format_get(PP_FMT_E4M3).emin)

// The run's scalars from v and the descales X_q, X_k, X_v of the quantised q, k, v (binary32
// values); alpha32 = RN_32(α), cuDNN's attn_scale (a float attribute). scale_s from v (TE's recipe).
PP_HD static inline pp_attn_te_cfg pp_attn_te_cfg_make(const pp_attn_variant *v, float alpha32, double xq, double xk,
                                                       double xv)
{
    pp_attn_te_cfg c;
    int thr = v->te_rescale > 0 ? v->te_rescale : 0;
    c.softmax = v->te_softmax;
    c.base = v->te_exp;
    c.pv = v->te_pv;
    c.block_n = v->block_n > 0 ? v->block_n : PP_ATTN_TE_BLOCK_N;
    // the reference's scalar: a Python float product, rounded once where it meets the fp32 scores
    float sigma = (float)((double)(float)xq * (double)(float)xk * (double)alpha32);
    c.sigma = c.base == PP_ATTN_TE_EXP2 ? sigma * 1.44269502f : sigma;
    c.thr = c.softmax == PP_ATTN_TE_TWO_PASS ? 0.0 : c.base == PP_ATTN_TE_EXP2 ? (double)thr : thr * 0.6931471805599453;
    double ss = v->te_scale_s > 0 ? v->te_scale_s : pp_tensor_scale(PP_FMT_E4M3, 1.0);  // 0: the bound P ≤ 1
    int sh = c.softmax == PP_ATTN_TE_TWO_PASS ? 0 : thr;
    c.scale_s = (float)ldexp(ss, -sh);
    c.xs = (float)ldexp(pp_tensor_scale_inv(ss), sh);
    c.xv = (float)xv;
    c.xsv = c.xv * c.xs;
    c.order_seed = v->order_seed;
    c.sm90 = v->mma == PP_ATTN_FP8_MMA_SM90;
    return c;
}

// e^x or 2^x, correctly rounded binary32 (the GPU's ex2.approx is not reproduced: attention.h).
PP_HD static inline float pp_attn_te_expf(const pp_attn_te_cfg *c, float x)
{
    return c->base == PP_ATTN_TE_EXP2 ? pp_attn_exp2f(x) : pp_expf(x);
}

// p as the row's key `key` sees it: pp_attn_te_expf moved by the order band's
// exp draw (pp_attn_order_exp, stream FWD_P: ±2 ulps, nothing at seed 0).
PP_HD static inline float pp_attn_te_exp_at(const pp_attn_te_cfg *c, int64_t row, int64_t key, float x)
{
    return pp_attn_order_exp(c->order_seed, PP_ATTN_ORDER_FWD_P, row, key, pp_attn_te_expf(c, x));
}

// P's e4m3 code value: RN_e4m3,sat(p ⊗ scale_s) (saturating: cvt.rn.satfinite, as TE's casts).
PP_HD static inline float pp_attn_te_p8(const pp_attn_te_cfg *c, float p)
{
    return (float)pp_round(PP_FMT_E4M3, (double)(p * c->scale_s), (pp_rounding)(PP_RND_NE | PP_RND_SAT), 0);
}

// The larger of m and x, a NaN x winning (so a NaN score makes its row NaN, as torch's max does).
PP_HD static inline float pp_attn_te_max(float m, float x)
{
    return (x > m || x != x) ? x : m;
}

// S_j = the fp32 chain of q8·k8 over d from +0 (e4m3 products are exact), in the order band's
// MMA k-chunk walk of GEMM PP_ATTN_MMA_S (0, 1, …, d − 1 at seed 0); sm90: pp_attn_te_sm90 over d
// in order (the order band does not move it: its groups are the model's).
PP_HD static inline float pp_attn_te_dot(const pp_attn_te_cfg *c, const float *q8, const float *k8, int64_t d)
{
    if (c->sm90)
        return pp_attn_te_sm90(0.0f, q8, 1, k8, 1, d, PP_ATTN_TE_EMIN_E4M3, PP_ATTN_TE_EMIN_E4M3);
    float acc = 0.0f;
    pp_attn_mma_walk w;
    int64_t e;
    for (pp_attn_mma_begin(&w, c->order_seed, PP_ATTN_MMA_S, 0, d); pp_attn_mma_next(&w, &e);)
        acc = fmaf(q8[e], k8[e], acc);
    return acc;
}

// O += P8·V8 over keys [j0, j1) whose e4m3 P codes are in p8[j] (pv knob): block: per column the
// fp32 chain of the tile from +0, then o ⊕ RN_32(RN_32(t ⊗ X_v) ⊗ X_s) (cudnn-frontend's reference);
// chain: the running fp32 accumulator itself (o = fma(p8, v8, o)), its descales after the last key.
// Each chain over the tile's keys in the order band's MMA k-chunk walk of GEMM PP_ATTN_MMA_PV
// (key order at seed 0; one draw for every column, as one instruction shape would). sm90: the
// tile's keys in order through pp_attn_te_sm90 (per-tile: total +0; chain: total the running o).
PP_HD static inline void pp_attn_te_pv_tile(const pp_attn_te_cfg *c, const float *p8, const float *v, int64_t vstride,
                                            int64_t j0, int64_t j1, int64_t d, float *o)
{
    pp_attn_mma_walk w;
    int64_t j;
    for (int64_t e = 0; e < d; e++) {
        float a = c->pv == PP_ATTN_TE_PV_CHAIN ? o[e] : 0.0f;
        if (c->sm90)
            a = pp_attn_te_sm90(a, p8 + j0, 1, v + j0 * vstride + e, vstride, j1 - j0, PP_ATTN_TE_EMIN_E4M3,
                                PP_ATTN_TE_EMIN_E4M3);
        else
            for (pp_attn_mma_begin(&w, c->order_seed, PP_ATTN_MMA_PV, j0, j1); pp_attn_mma_next(&w, &j);)
                a = fmaf(p8[j], v[j * vstride + e], a);
        o[e] = c->pv == PP_ATTN_TE_PV_CHAIN ? a : o[e] + (a * c->xv) * c->xs;
    }
}

// One query row over its n visible keys: q8 [d]; key j's e4m3 row at k8 + j·kstride, v8 likewise.
// row: the row's number in the run (lse's order), which the order band's exp and log draws key on.
// x: n binary32 scratch. The row sums (two-pass: over all keys; online: each tile's) are fp32
// chains in the order band's walk of PP_ATTN_MMA_TE_L (key order at seed 0), each p computed where
// the walk reaches its key (p does not depend on the order; only the sums do). Writes o [d] (the row's binary32 O before the FP8 store), *lse (natural
// log; −Inf for n = 0) and *amax_s (max of P before its scale, as the softmax made it).
PP_HD static inline void pp_attn_te_row(const pp_attn_te_cfg *c, int64_t row, const float *q8, const float *k8,
                                        const float *v8, int64_t kstride, int64_t n, int64_t d, float *x, float *o,
                                        float *lse, float *amax_s)
{
    pp_attn_mma_walk w;
    int64_t j;
    *amax_s = 0.0f;
    for (int64_t e = 0; e < d; e++)
        o[e] = 0.0f;
    if (n == 0) {
        *lse = -INFINITY;
        return;
    }
    for (j = 0; j < n; j++)  // S = Q8·K8ᵀ
        x[j] = pp_attn_te_dot(c, q8, k8 + j * kstride, d) * c->sigma;
    float m = -INFINITY, l = 0.0f, am = 0.0f;
    int64_t bn = c->block_n;
    if (c->softmax == PP_ATTN_TE_TWO_PASS) {
        for (j = 0; j < n; j++)
            m = pp_attn_te_max(m, x[j]);
        for (pp_attn_mma_begin(&w, c->order_seed, PP_ATTN_MMA_TE_L, 0, n); pp_attn_mma_next(&w, &j);)
            l = l + pp_attn_te_exp_at(c, row, j, x[j] - m);
        for (int64_t j0 = 0; j0 < n; j0 += bn) {
            int64_t j1 = j0 + bn < n ? j0 + bn : n;
            for (j = j0; j < j1; j++) {
                float p = pp_attn_te_exp_at(c, row, j, x[j] - m) / l;
                am = pp_attn_te_max(am, p);
                x[j] = pp_attn_te_p8(c, p);
            }
            pp_attn_te_pv_tile(c, x, v8, kstride, j0, j1, d, o);
        }
    } else {
        for (int64_t j0 = 0; j0 < n; j0 += bn) {
            int64_t j1 = j0 + bn < n ? j0 + bn : n;
            float mb = -INFINITY;
            for (j = j0; j < j1; j++)
                mb = pp_attn_te_max(mb, x[j]);
            // the running max moves only past the threshold (0: any larger max), as the reference
            float mn = (m == -INFINITY || mb != mb || (double)(mb - m) > c->thr) ? mb : m;
            if (m != -INFINITY && (double)(m - mn) < -c->thr) {
                float corr = pp_attn_te_expf(c, m - mn);  // not moved, as FA2's correction
                for (int64_t e = 0; e < d; e++)
                    o[e] = o[e] * corr;
                l = l * corr;
            }
            float ts = 0.0f;
            for (pp_attn_mma_begin(&w, c->order_seed, PP_ATTN_MMA_TE_L, j0, j1); pp_attn_mma_next(&w, &j);) {
                float p = pp_attn_te_exp_at(c, row, j, x[j] - mn);
                ts = ts + p;
                am = pp_attn_te_max(am, p);
                x[j] = pp_attn_te_p8(c, p);
            }
            pp_attn_te_pv_tile(c, x, v8, kstride, j0, j1, d, o);
            l = l + ts;
            m = mn;
        }
    }
    float div = c->softmax == PP_ATTN_TE_TWO_PASS ? 1.0f : (l < 1.0f ? 1.0f : l);
    for (int64_t e = 0; e < d; e++) {
        float t = c->pv == PP_ATTN_TE_PV_CHAIN ? o[e] * c->xsv : o[e];
        o[e] = div == 1.0f ? t : t / div;
    }
    float lnm = c->base == PP_ATTN_TE_EXP2 ? m * 0.693147182f : m;
    *lse = lnm + pp_attn_order_log(c->order_seed, row, l, pp_logf(l));
    *amax_s = am;
}

// Where row r's data lie: its q (and o) row's index *row in [b, s_q, h], its kv head's first key's
// element offset *kv in k8 and v8, and its number of visible keys (the causal limit) returned.
PP_HD static inline int64_t pp_attn_te_row_span(const pp_attn_dims *dm, int64_t r, int64_t *row, int64_t *kv)
{
    int64_t i = r % dm->s_q, bh = r / dm->s_q, bi = bh / dm->h, hh = bh % dm->h, g = hh / (dm->h / dm->h_kv);
    int64_t n = dm->s_kv;
    if (dm->causal) {  // keys j ≤ i + s_kv − s_q
        int64_t last = i + dm->s_kv - dm->s_q;
        n = last < 0 ? 0 : last + 1 < dm->s_kv ? last + 1 : dm->s_kv;
    }
    *row = (bi * dm->s_q + i) * dm->h + hh, *kv = (bi * dm->s_kv * dm->h_kv + g) * dm->d;
    return n;
}

// Row r of the run (r = (batch·h + head)·s_q + i, lse's order): its q8 row, its kv head's keys
// (GQA), the causal limit, then pp_attn_te_row into o [b, s_q, h, d], lse and amax_s (per row).
// x: s_kv binary32 scratch of this row's own. One call per row, in any order, on any device.
PP_HD static inline void pp_attn_te_row_at(const pp_attn_te_cfg *c, const pp_attn_dims *dm, const float *q8,
                                           const float *k8, const float *v8, int64_t r, float *x, float *o,
                                           float *lse, float *amax_s)
{
    int64_t row, kv, n = pp_attn_te_row_span(dm, r, &row, &kv);
    pp_attn_te_row(c, r, q8 + row * dm->d, k8 + kv, v8 + kv, dm->h_kv * dm->d, n, dm->d, x, o + row * dm->d, &lse[r],
                   &amax_s[r]);
}

#endif
