// attention_ref_quantised.c — the exact attention of FA3's e4m3 q, k, v (attention_ref_quantised.h
// says how and why it is exact).
#include "ops/attention_ref_quantised.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attention_fp8.h"
#include "attention_ref.h"

// X's leading 20 significant bits (X a binary32 value, so X − X_hi has at most 4): the
// significand cut by truncation, exact in binary64.
static double split_hi(double x)
{
    if (x == 0 || !isfinite(x))
        return x;
    int e;
    double m = frexp(x, &e);  // x = m·2^e, ½ ≤ |m| < 1
    return ldexp(trunc(ldexp(m, 20)), e - 20);
}

// 1: y is a binary32 value (NaN and ±Inf count: the reference takes them).
static int is_fp32(double y)
{
    return !isfinite(y) || (double)(float)y == y;
}

// The rows of one tensor [n rows of d] widened to 4d: the pattern's four parts per row (hi or
// lo of T8·X, times f; zero), pat[c] = 0: T8·X_hi, 1: T8·X_lo, 2: zero, 3: T8 (no descale).
static int widen(const double *x, int64_t rows, int64_t d, const int pat[4], double f, double *w)
{
    int64_t n = rows * d;
    double s = pp_attn_fp8_tensor_scale(x, n), X = pp_attn_fp8_descale(s);
    double xh = split_hi(X), xl = X - xh;  // exact: both within X's 24 bits
    for (int64_t r = 0; r < rows; r++)
        for (int64_t l = 0; l < d; l++) {
            double t = (double)pp_attn_fp8_quantise(x[r * d + l], s);
            for (int c = 0; c < 4; c++) {
                double y = pat[c] == 0 ? f * (t * xh) : pat[c] == 1 ? f * (t * xl) : pat[c] == 2 ? 0.0 : t;
                if (!is_fp32(y))
                    return 1;
                w[r * 4 * d + c * d + l] = y;
            }
        }
    return 0;
}

int pp_attention_ref_quantised(const pp_attn_ref_opts *o, const double *q, const double *k, const double *v,
                               double *out, double *lse, double *bound_out, double *bound_lse, pp_error *err)
{
    int64_t d = o->d, nq = o->b * o->s_q * o->h, nkv = o->b * o->s_kv * o->h_kv;
    double *wq = malloc((size_t)(nq * 4 * d + 1) * sizeof *wq), *wk = malloc((size_t)(nkv * 4 * d + 1) * sizeof *wk);
    double *wv = malloc((size_t)(nkv * 4 * d + 1) * sizeof *wv), *wo = malloc((size_t)(nq * 4 * d + 1) * sizeof *wo);
    int rc = PP_OK;
    if (!wq || !wk || !wv || !wo) {
        rc = pp_fail(err, PP_ERR_RUNTIME, "attention: out of memory for the quantised reference");
        goto done;
    }
    // σ not given: the reference's 1/√(4d) is half of 1/√d, so k is doubled (exact in binary32
    // unless it overflows, which the check refuses)
    static const int pq[4] = {0, 0, 1, 1}, pk[4] = {0, 1, 0, 1}, pv[4] = {3, 2, 2, 2};
    if (widen(q, nq, d, pq, 1.0, wq) || widen(k, nkv, d, pk, o->sigma_given ? 1.0 : 2.0, wk) ||
        widen(v, nkv, d, pv, 1.0, wv)) {
        rc = pp_fail(err, PP_ERR_INPUT, "attention: the quantised reference's split inputs are not binary32 values "
                                        "(a descale outside binary32's normal range)");
        goto done;
    }
    pp_attn_ref_opts w = *o;
    w.d = 4 * d;
    w.backward = 0;
    pp_attn_ref_bounds b;
    rc = pp_attention_ref(&w, wq, wk, wv, NULL, wo, lse, NULL, NULL, NULL, &b, err);
    if (rc)
        goto done;
    double Xv = pp_attn_fp8_descale(pp_attn_fp8_tensor_scale(v, nkv * d)), half = 0;
    for (int64_t r = 0; r < nq; r++)
        for (int64_t l = 0; l < d; l++) {
            double y = Xv * wo[r * 4 * d + l];
            out[r * d + l] = y;
            if (isfinite(y)) {  // ½ulp(y), covered by the step up from |y|
                double hf = 0.5 * (nextafter(fabs(y), INFINITY) - fabs(y));
                half = hf > half ? hf : half;
            }
        }
    *bound_out = nextafter(nextafter(Xv * b.out, INFINITY) + half, INFINITY);
    *bound_lse = b.lse;
done:
    free(wq);
    free(wk);
    free(wv);
    free(wo);
    return rc;
}
