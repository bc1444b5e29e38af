// attention_ref_quantised.c — the exact attention of the values FP8 attention's quantisation gives
// q, k, v, under every scaling (attention_ref_quantised.h says how and why it is exact).
#include "ops/attention_ref_quantised.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attention_fp8.h"
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

int pp_attention_ref_quantised(const pp_attn_ref_opts *o, const pp_attn_variant *v, const double *q, const double *k,
                               const double *vv, double *out, double *lse, double *bound_out, double *bound_lse,
                               pp_error *err)
{
    int64_t d = o->d, nq = o->b * o->s_q * o->h, nkv = o->b * o->s_kv * o->h_kv;
    pp_attn_dims dm = {o->b, o->s_q, o->s_kv, o->h, o->h_kv, o->d, o->causal};
    double *wq = malloc((size_t)(nq * 4 * d + 1) * sizeof *wq), *wk = malloc((size_t)(nkv * 4 * d + 1) * sizeof *wk);
    double *wv = malloc((size_t)(nkv * 4 * d + 1) * sizeof *wv), *wo = malloc((size_t)(nq * 4 * d + 1) * sizeof *wo);
    int rc = PP_OK;
    if (!wq || !wk || !wv || !wo) {
        rc = pp_fail(err, PP_ERR_RUNTIME, "attention: out of memory for the quantised reference");
        goto done;
    }
    // σ not given: the reference's 1/√(4d) is half of 1/√d, so k is doubled (exact in binary32
    // unless it overflows, which the check refuses)
    static const int pq[4] = {0, 0, 1, 1}, pk[4] = {0, 1, 0, 1}, pv[4] = {0, 1, 2, 2};
    int w1 = widen(v, &dm, 0, q, pq, 1.0, wq), w2 = w1 ? 0 : widen(v, &dm, 1, k, pk, o->sigma_given ? 1.0 : 2.0, wk);
    int w3 = w1 || w2 ? 0 : widen(v, &dm, 2, vv, pv, 1.0, wv);
    if (w1 == 3 || w2 == 3 || w3 == 3) {
        rc = pp_fail(err, PP_ERR_RUNTIME, "attention: out of memory for the quantised reference");
        goto done;
    }
    if (w1 || w2 || w3) {
        rc = pp_fail(err, PP_ERR_INPUT, "attention: the quantised reference's split inputs are not binary32 values "
                                        "(a scale outside binary32's normal range)");
        goto done;
    }
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
