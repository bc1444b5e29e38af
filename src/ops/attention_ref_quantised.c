// attention_ref_quantised.c — the exact attention of the values FP8 attention's quantisation gives
// q, k, v, under every scaling (attention_ref_quantised.h says how and why it is exact).
#include "ops/attention_ref_quantised.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attention_fp8.h"
#include "attention_te_bwd_run.h"
#include "attention_ref.h"

// y's leading 24 significant bits (y exact in binary64 with at most 30: the rest has at most 6):
// the significand cut by truncation, exact in binary64.
static double split_hi(double y)
{
    if (y == 0 || !isfinite(y))
        return y;
    int e;
    double m = frexp(y, &e);  // y = m·2^e, ½ ≤ |m| < 1
    return ldexp(trunc(ldexp(m, 24)), e - 24);
}

// 1: y is a binary32 value (NaN and ±Inf count: the reference takes them).
static int is_fp32(double y)
{
    return !isfinite(y) || (double)(float)y == y;
}

// Tensor t (0 q, 1 k, 2 v) of n = rows·d values quantised as v's scheme does, y = elem·bs·X
// (exact), widened to rows of 4d: pat[c] = 0: y_hi·f, 1: y_lo·f, 2: zero. Returns 1 when a part
// is not a binary32 value, 3 when out of memory.
static int widen(const pp_attn_variant *v, const pp_attn_dims *dm, int t, const double *x, const int pat[4],
                 double f, double *w)
{
    int64_t rows = (t ? dm->s_kv * dm->h_kv : dm->s_q * dm->h) * dm->b, d = dm->d, n = rows * d;
    double *e = malloc((size_t)(n ? n : 1) * sizeof *e), *bs = malloc((size_t)(n ? n : 1) * sizeof *bs);
    int rc = 0;
    if (!e || !bs) {
        rc = 3;
        goto done;
    }
    double X = pp_attn_fp8_quantise_tensor(v, dm, t, x, 0, e, bs);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t l = 0; l < d; l++) {
            double y = e[r * d + l] * bs[r * d + l] * X, yh = split_hi(y), yl = y - yh;
            for (int c = 0; c < 4; c++) {
                double z = pat[c] == 0 ? f * yh : pat[c] == 1 ? f * yl : 0.0;
                if (!is_fp32(z)) {
                    rc = 1;
                    goto done;
                }
                w[r * 4 * d + c * d + l] = z;
            }
        }
done:
    free(e);
    free(bs);
    return rc;
}

// q, k, v widened for the reference (widen: the split values of each quantised element; k doubled
// when σ is not given: the reference's 1/√(4d) is half of 1/√d, exact in binary32 unless it
// overflows, which the check refuses). PP_OK, or the error set.
static int widen_qkv(const pp_attn_variant *v, const pp_attn_dims *dm, const pp_attn_ref_opts *o, const double *q,
                     const double *k, const double *vv, double *wq, double *wk, double *wv, pp_error *err)
{
    static const int pq[4] = {0, 0, 1, 1}, pk[4] = {0, 1, 0, 1}, pv[4] = {0, 1, 2, 2};
    int w1 = widen(v, dm, 0, q, pq, 1.0, wq), w2 = w1 ? 0 : widen(v, dm, 1, k, pk, o->sigma_given ? 1.0 : 2.0, wk);
    int w3 = w1 || w2 ? 0 : widen(v, dm, 2, vv, pv, 1.0, wv);
    if (w1 == 3 || w2 == 3 || w3 == 3)
        return pp_fail(err, PP_ERR_RUNTIME, "attention: out of memory for the quantised reference");
    if (w1 || w2 || w3)
        return pp_fail(err, PP_ERR_INPUT, "attention: the quantised reference's split inputs are not binary32 values "
                                          "(a scale outside binary32's normal range)");
    return PP_OK;
}

int pp_attention_ref_quantised(const pp_attn_ref_opts *o, const pp_attn_variant *v, const double *q, const double *k,
                               const double *vv, double *out, double *lse, double *bound_out, double *bound_lse,
                               pp_error *err)
{
    int64_t d = o->d, nq = o->b * o->s_q * o->h, nkv = o->b * o->s_kv * o->h_kv;
    pp_attn_dims dm = {.b = o->b, .s_q = o->s_q, .s_kv = o->s_kv, .h = o->h, .h_kv = o->h_kv, .d = o->d,
                       .causal = o->causal};
    double *wq = malloc((size_t)(nq * 4 * d + 1) * sizeof *wq), *wk = malloc((size_t)(nkv * 4 * d + 1) * sizeof *wk);
    double *wv = malloc((size_t)(nkv * 4 * d + 1) * sizeof *wv), *wo = malloc((size_t)(nq * 4 * d + 1) * sizeof *wo);
    int rc = PP_OK;
    if (!wq || !wk || !wv || !wo) {
        rc = pp_fail(err, PP_ERR_RUNTIME, "attention: out of memory for the quantised reference");
        goto done;
    }
    if ((rc = widen_qkv(v, &dm, o, q, k, vv, wq, wk, wv, err)) != PP_OK)
        goto done;
    pp_attn_ref_opts w = *o;
    w.d = 4 * d;
    w.backward = 0;
    pp_attn_ref_bounds b;
    rc = pp_attention_ref(&w, wq, wk, wv, NULL, wo, lse, NULL, NULL, NULL, &b, err);
    if (rc)
        goto done;
    double half = 0;
    for (int64_t r = 0; r < nq; r++)
        for (int64_t l = 0; l < d; l++) {
            double y = wo[r * 4 * d + l] + wo[r * 4 * d + d + l];  // P·v_hi + P·v_lo
            out[r * d + l] = y;
            if (isfinite(y)) {  // ½ulp(y), covered by the step up from |y|
                double hf = 0.5 * (nextafter(fabs(y), INFINITY) - fabs(y));
                half = hf > half ? hf : half;
            }
        }
    *bound_out = nextafter(nextafter(2.0 * b.out, INFINITY) + half, INFINITY);
    *bound_lse = b.lse;
done:
    free(wq);
    free(wk);
    free(wv);
    free(wo);
    return rc;
}

// ½ulp(|y|) for finite y (0 otherwise): the step up from |y|, halved.
static double half_ulp(double y)
{
    return isfinite(y) ? 0.5 * (nextafter(fabs(y), INFINITY) - fabs(y)) : 0.0;
}

// dst[r·d + l] = RN_64(f·RN_64(w[r·4d + c0·d + l] + w[r·4d + c1·d + l])) (c1 < 0: the one term),
// f = X·m exactly (X binary32, m a power of two); returns the bound m·X·(terms·b + ½ulp(sum)) +
// ½ulp(dst), taken over the tensor and rounded up.
static double combine(const double *w, int64_t rows, int64_t d, int c0, int c1, double X, double m, double b,
                      double *dst)
{
    double hs = 0, hz = 0;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t l = 0; l < d; l++) {
            const double *wr = w + r * 4 * d;
            double y = c1 < 0 ? wr[c0 * d + l] : wr[c0 * d + l] + wr[c1 * d + l], z = X * m * y;
            double a = c1 < 0 ? 0 : half_ulp(y), c = half_ulp(z);
            hs = a > hs ? a : hs, hz = c > hz ? c : hz;
            dst[r * d + l] = z;
        }
    double terms = c1 < 0 ? 1.0 : 2.0;
    return nextafter(nextafter(m * X * nextafter(terms * b + hs, INFINITY), INFINITY) + hz, INFINITY);
}

int pp_attention_ref_quantised_bwd(const pp_attn_ref_opts *o, const pp_attn_variant *v, const double *q, const double *k,
                                   const double *vv, const double *dout, double *out, double *lse, double *dq,
                                   double *dk, double *dv, double *bound, pp_error *err)
{
    int64_t d = o->d, nq = o->b * o->s_q * o->h, nkv = o->b * o->s_kv * o->h_kv;
    pp_attn_dims dm = {.b = o->b, .s_q = o->s_q, .s_kv = o->s_kv, .h = o->h, .h_kv = o->h_kv, .d = o->d,
                       .causal = o->causal};
    size_t wq_n = (size_t)(nq * 4 * d + 1), wk_n = (size_t)(nkv * 4 * d + 1);
    double *wq = malloc(wq_n * sizeof *wq), *wk = malloc(wk_n * sizeof *wk), *wv = malloc(wk_n * sizeof *wv),
           *wo = malloc(wq_n * sizeof *wo), *wdo = malloc(wq_n * sizeof *wdo), *wdq = malloc(wq_n * sizeof *wdq),
           *wdk = malloc(wk_n * sizeof *wdk), *wdv = malloc(wk_n * sizeof *wdv),
           *e = malloc((size_t)(nq * d + 1) * sizeof *e);
    int rc = PP_OK;
    if (!wq || !wk || !wv || !wo || !wdo || !wdq || !wdk || !wdv || !e) {
        rc = pp_fail(err, PP_ERR_RUNTIME, "attention: out of memory for the quantised reference");
        goto done;
    }
    // q, k, v widened as the forward's; dO' = X_dO·E with E the FP8 codes (binary32 values): the
    // gradients are linear in dO, so the reference runs on [E, E, 0, 0] (out' = P·v_hi + P·v_lo)
    // and each gradient is X_dO times its result
    if ((rc = widen_qkv(v, &dm, o, q, k, vv, wq, wk, wv, err)) != PP_OK)
        goto done;
    double X = pp_attn_te_quantise_dout(v, nq * d, dout, e, NULL, NULL);
    for (int64_t r = 0; r < nq; r++)
        for (int64_t l = 0; l < d; l++) {
            double E = e[r * d + l];
            wdo[r * 4 * d + l] = wdo[r * 4 * d + d + l] = E;
            wdo[r * 4 * d + 2 * d + l] = wdo[r * 4 * d + 3 * d + l] = 0.0;
        }
    pp_attn_ref_opts w = *o;
    w.d = 4 * d;
    w.backward = 1;
    pp_attn_ref_bounds b;
    rc = pp_attention_ref(&w, wq, wk, wv, wdo, wo, lse, wdq, wdk, wdv, &b, err);
    if (rc)
        goto done;
    // out as the forward reference; dq' = dQ4[0] + dQ4[1]; dk' = f·(dK4[0] + dK4[2]) (k doubled by
    // f = 2 when σ is 1/√d); dv' = dV4[0]
    bound[0] = combine(wo, nq, d, 0, 1, 1.0, 1.0, b.out, out);
    bound[1] = b.lse;
    bound[2] = combine(wdq, nq, d, 0, 1, X, 1.0, b.dq, dq);
    bound[3] = combine(wdk, nkv, d, 0, 2, X, o->sigma_given ? 1.0 : 2.0, b.dk, dk);
    bound[4] = combine(wdv, nkv, d, 0, -1, X, 1.0, b.dv, dv);
done:
    free(wq), free(wk), free(wv), free(wo), free(wdo), free(wdq), free(wdk), free(wdv), free(e);
    return rc;
}
