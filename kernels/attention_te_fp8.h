// attention_te_fp8.h — TransformerEngine's FP8 dot-product attention forward (the attention knob
// fp8 = "te": cuDNN's sdpa_fp8 graph as TE calls it), one query row at a time: the score scale
// descale_q·descale_k·attn_scale, the softmax (online or two-pass, e or 2 as its base), P scaled by
// scale_s into e4m3, P8·V8 with descale_s·descale_v, and the row's O before its FP8 store.
// PP_HD C11: the CPU (kernels/cpu/attention_te_fp8.c) and the GPU
// (kernels/cuda/attention_te_kernels.cu) run the same row body. The specification with its sources and the measured effect of
// every unknown is kernels/attention.h, "FP8 (fp8 = te)".
#ifndef PP_ATTENTION_TE_FP8_H
#define PP_ATTENTION_TE_FP8_H

#include <math.h>
#include <stdint.h>

#include "attention.h"
#include "format.h"
#include "pp_hd.h"
#include "pp_math.h"
#include "scaling.h"

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
} pp_attn_te_cfg;

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
    return c;
}

// e^x or 2^x, correctly rounded binary32 (the GPU's ex2.approx is not reproduced: attention.h).
PP_HD static inline float pp_attn_te_expf(const pp_attn_te_cfg *c, float x)
{
    return c->base == PP_ATTN_TE_EXP2 ? pp_attn_exp2f(x) : pp_expf(x);
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

// O += P8·V8 over keys [j0, j1) whose e4m3 P codes are in p8[j] (pv knob): block: per column the
// fp32 chain of the tile from +0, then o ⊕ RN_32(RN_32(t ⊗ X_v) ⊗ X_s) (cudnn-frontend's reference);
// chain: the running fp32 accumulator itself (o = fma(p8, v8, o)), its descales after the last key.
PP_HD static inline void pp_attn_te_pv_tile(const pp_attn_te_cfg *c, const float *p8, const float *v, int64_t vstride,
                                            int64_t j0, int64_t j1, int64_t d, float *o)
{
    for (int64_t e = 0; e < d; e++) {
        if (c->pv == PP_ATTN_TE_PV_CHAIN) {
            float a = o[e];
            for (int64_t j = j0; j < j1; j++)
                a = fmaf(p8[j], v[j * vstride + e], a);
            o[e] = a;
        } else {
            float t = 0.0f;
            for (int64_t j = j0; j < j1; j++)
                t = fmaf(p8[j], v[j * vstride + e], t);
            o[e] = o[e] + (t * c->xv) * c->xs;
        }
    }
}

// One query row over its n visible keys: q8 [d]; key j's e4m3 row at k8 + j·kstride, v8 likewise.
// x: n binary32 scratch. Writes o [d] (the row's binary32 O before the FP8 store), *lse (natural
// log; −Inf for n = 0) and *amax_s (max of P before its scale, as the softmax made it).
PP_HD static inline void pp_attn_te_row(const pp_attn_te_cfg *c, const float *q8, const float *k8, const float *v8,
                                        int64_t kstride, int64_t n, int64_t d, float *x, float *o, float *lse,
                                        float *amax_s)
{
    *amax_s = 0.0f;
    for (int64_t e = 0; e < d; e++)
        o[e] = 0.0f;
    if (n == 0) {
        *lse = -INFINITY;
        return;
    }
    for (int64_t j = 0; j < n; j++) {  // S = Q8·K8ᵀ, an fp32 chain over d (e4m3 products are exact)
        float acc = 0.0f;
        for (int64_t e = 0; e < d; e++)
            acc = fmaf(q8[e], k8[j * kstride + e], acc);
        x[j] = acc * c->sigma;
    }
    float m = -INFINITY, l = 0.0f, am = 0.0f;
    int64_t bn = c->block_n;
    if (c->softmax == PP_ATTN_TE_TWO_PASS) {
        for (int64_t j = 0; j < n; j++)
            m = pp_attn_te_max(m, x[j]);
        for (int64_t j = 0; j < n; j++)
            l = l + pp_attn_te_expf(c, x[j] - m);
        for (int64_t j0 = 0; j0 < n; j0 += bn) {
            int64_t j1 = j0 + bn < n ? j0 + bn : n;
            for (int64_t j = j0; j < j1; j++) {
                float p = pp_attn_te_expf(c, x[j] - m) / l;
                am = pp_attn_te_max(am, p);
                x[j] = pp_attn_te_p8(c, p);
            }
            pp_attn_te_pv_tile(c, x, v8, kstride, j0, j1, d, o);
        }
    } else {
        for (int64_t j0 = 0; j0 < n; j0 += bn) {
            int64_t j1 = j0 + bn < n ? j0 + bn : n;
            float mb = -INFINITY;
            for (int64_t j = j0; j < j1; j++)
                mb = pp_attn_te_max(mb, x[j]);
            // the running max moves only past the threshold (0: any larger max), as the reference
            float mn = (m == -INFINITY || mb != mb || (double)(mb - m) > c->thr) ? mb : m;
            if (m != -INFINITY && (double)(m - mn) < -c->thr) {
                float corr = pp_attn_te_expf(c, m - mn);
                for (int64_t e = 0; e < d; e++)
                    o[e] = o[e] * corr;
                l = l * corr;
            }
            float ts = 0.0f;
            for (int64_t j = j0; j < j1; j++) {
                float p = pp_attn_te_expf(c, x[j] - mn);
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
    *lse = lnm + pp_logf(l);
    *amax_s = am;
}

// Row r of the run (r = (batch·h + head)·s_q + i, lse's order): its q8 row, its kv head's keys
// (GQA), the causal limit, then pp_attn_te_row into o [b, s_q, h, d], lse and amax_s (per row).
// x: s_kv binary32 scratch of this row's own. One call per row, in any order, on any device.
PP_HD static inline void pp_attn_te_row_at(const pp_attn_te_cfg *c, const pp_attn_dims *dm, const float *q8,
                                           const float *k8, const float *v8, int64_t r, float *x, float *o,
                                           float *lse, float *amax_s)
{
    int64_t i = r % dm->s_q, bh = r / dm->s_q, bi = bh / dm->h, hh = bh % dm->h, g = hh / (dm->h / dm->h_kv);
    int64_t n = dm->s_kv;
    if (dm->causal) {  // keys j ≤ i + s_kv − s_q
        int64_t last = i + dm->s_kv - dm->s_q;
        n = last < 0 ? 0 : last + 1 < dm->s_kv ? last + 1 : dm->s_kv;
    }
    int64_t row = (bi * dm->s_q + i) * dm->h + hh, kv = (bi * dm->s_kv * dm->h_kv + g) * dm->d;
    pp_attn_te_row(c, q8 + row * dm->d, k8 + kv, v8 + kv, dm->h_kv * dm->d, n, dm->d, x, o + row * dm->d, &lse[r],
                   &amax_s[r]);
}

#endif
