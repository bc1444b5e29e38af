// close_oracle.h — the assert_close streaming pass one pair at a time, as src/core/close.c had
// it before the fast pass (commit 0ab1a0d): every pair offered to every maximum, every term
// added to the exact accumulators as it comes, every rounding through pp_round. The test of the
// fast pass (test_close_fast.c) compares against it bit for bit. Kept verbatim but for the
// oracle_ prefix; do not optimise it.
#ifndef PP_TEST_CLOSE_ORACLE_H
#define PP_TEST_CLOSE_ORACLE_H

#include <math.h>
#include <string.h>

#include "core/close.h"

typedef enum oracle_arith { oracle_AR_F64, oracle_AR_F32, oracle_AR_HALF } oracle_arith;

typedef struct oracle_pair_ctx {
    oracle_arith ar;
    pp_format_id c;  // the rounding target of oracle_AR_HALF: fp16 or bf16
    int equality;    // rtol == atol == 0: isclose is equality (+ equal_nan) only
    int equal_nan;
    double rtol, atol;
    float rtol32, atol32;  // fl32(rtol), fl32(atol): the scalars as opmath sees them
} oracle_pair_ctx;

static void oracle_ctx_init(oracle_pair_ctx *c, const pp_close_opts *o)
{
    pp_format_id f = pp_close_uses_common_dtype(o)
                         ? pp_common_format(o->actual_format, o->expected_format)
                         : PP_FMT_FP64;
    c->c = f;
    c->ar = f == PP_FMT_FP64 ? oracle_AR_F64 : f == PP_FMT_FP32 ? oracle_AR_F32 : oracle_AR_HALF;
    c->equality = o->rtol == 0 && o->atol == 0;
    c->equal_nan = o->equal_nan != 0;
    c->rtol = o->rtol;
    c->atol = o->atol;
    c->rtol32 = (float)o->rtol;
    c->atol32 = (float)o->atol;
}

static double oracle_round_c(const oracle_pair_ctx *c, float x)
{
    return pp_round(c->c, (double)x, PP_RND_NE, 0);
}

// Returns 1 when (a, e) is close; else 0 with torch's abs and rel differences in *ad, *rd.
static int oracle_torch_pair(const oracle_pair_ctx *c, double a, double e, double *ad, double *rd)
{
    if (a == e || (c->equal_nan && isnan(a) && isnan(e)))
        return 1;
    double err, rel;
    if (c->ar == oracle_AR_F64) {
        err = fabs(a - e);
        if (!c->equality && isfinite(err) && err <= c->atol + fabs(c->rtol * e))
            return 1;
        rel = err / fabs(e);
    } else if (c->ar == oracle_AR_F32) {
        // Every intermediate is stored in a float: C11 rounds on assignment even where float
        // arithmetic is evaluated wider (FLT_EVAL_METHOD != 0).
        float af = (float)a, ef = (float)e;
        float err32 = fabsf(af - ef);
        if (!c->equality) {
            float t32 = c->rtol32 * ef;
            float allowed32 = c->atol32 + fabsf(t32);
            if (isfinite(err32) && err32 <= allowed32)
                return 1;
        }
        float rel32 = err32 / fabsf(ef);
        err = err32;
        rel = rel32;
    } else {  // fp32 opmath, each result passed as a float (rounded), then rounded to C
        float af = (float)a, ef = (float)e;
        err = fabs(oracle_round_c(c, af - ef));
        if (!c->equality) {
            double t = oracle_round_c(c, c->rtol32 * ef);
            double allowed = oracle_round_c(c, c->atol32 + (float)fabs(t));
            if (isfinite(err) && err <= allowed)
                return 1;
        }
        rel = oracle_round_c(c, (float)err / fabsf(ef));
    }
    *ad = err;
    *rd = rel;
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Maxima

// Does (v, i) beat the current maximum m? NaN oracle_beats numbers; equal values and NaNs go to the
// smaller index.
static int oracle_beats(double v, int64_t i, const pp_close_max *m)
{
    if (m->index < 0)
        return 1;
    if (isnan(v))
        return !isnan(m->value) || i < m->index;
    if (isnan(m->value))
        return 0;
    return v > m->value || (v == m->value && i < m->index);
}

static void oracle_offer(pp_close_max *m, double v, int64_t i, double a, double e)
{
    if (oracle_beats(v, i, m))
        *m = (pp_close_max){v, i, a, e};
}

// ---------------------------------------------------------------------------------------------
// Beyond torch, in binary64

// The tolerance ratio r = |a − e| / (atol + rtol·|e|), each operation in binary64:
//   a == e (equal infinities and ±0 included): 0;
//   a NaN operand: NaN, except 0 for NaN/NaN with equal_nan;
//   |a − e| infinite (one operand infinite, opposite infinities, or binary64 overflow): Inf;
//   tolerance 0 (and a != e): Inf;
//   else fl(fl|a − e| / fl(atol + fl(rtol·|e|))), which overflows to Inf or is 0 for Inf tolerance.
static double oracle_tol_ratio(const oracle_pair_ctx *c, double a, double e)
{
    if (a == e)
        return 0.0;
    if (isnan(a) || isnan(e))
        return c->equal_nan && isnan(a) && isnan(e) ? 0.0 : NAN;
    double d = fabs(a - e);
    if (isinf(d))
        return INFINITY;
    double tol = c->atol + c->rtol * fabs(e);
    return tol == 0.0 ? INFINITY : d / tol;
}

// 2^q as a binary64, for q in [-1074, 1023], built from its bits.
static double oracle_pow2(int q)
{
    uint64_t b = q >= -1022 ? (uint64_t)(q + 1023) << 52 : (uint64_t)1 << (q + 1074);
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

// pp_ulp(f, x) for finite x, from x's exponent bits instead of frexp/ldexp (the hot loop calls
// it once per pair): the quantum of f in |x|'s binade, the binade clamped below at f's emin and
// above at max_finite's. The brute-force test checks it against pp_ulp through the statistics.
static double oracle_ulp_of(const pp_format *F, double x)
{
    double ax = fabs(x);
    if (ax > F->max_finite)
        ax = F->max_finite;
    uint64_t b;
    memcpy(&b, &ax, sizeof b);
    int E = (int)(b >> 52) - 1023;  // binary64 zero and subnormals give -1023, below every emin
    if (E < F->emin)
        E = F->emin;
    return oracle_pow2(E - F->p + 1);
}

// The ulp bin of u = |s| / ulp > 0 (s = fl(a − e), ulp a power of two, so u is exact barring
// overflow to Inf). above says the exact |a − e| exceeds |s| (the rounding residual has s's
// sign), which matters only when u lands exactly on an edge 2^j: the exact ratio is then above
// the edge. Edges: bin 1 holds u <= 0.5, bin 2 0.5 < u <= 1, bin j+2 2^(j−1) < u <= 2^j (1 <= j
// <= 20), bin 23 beyond 2^20.
static int oracle_ulp_bin(double u, int above)
{
    uint64_t b;
    memcpy(&b, &u, sizeof b);
    int E = (int)(b >> 52) - 1023;  // u in [2^E, 2^(E+1)) for normal u; Inf gives 1024
    if (E == -1023)
        return 1;  // subnormal u: far below 0.5
    int pow = (b & (((uint64_t)1 << 52) - 1)) == 0;
    int j = (pow && !above) ? E : E + 1;  // the least j with exact ratio <= 2^j
    if (j <= -1)
        return 1;
    if (j > 20)
        return PP_CLOSE_BIN_HUGE;
    return j + 2;
}

// Adds |a − e| and (a − e)² for finite a, e exactly; s = fl(a − e), t the TwoSum residual
// (meaningful when s is finite).
static void oracle_add_error_sums(pp_close_stats *st, double a, double e, double s, double t)
{
    if (t == 0.0 && isfinite(s)) {  // a − e is exactly s: the usual case
        pp_exactsum_add(&st->sum_abs, fabs(s));
        pp_exactsum_add_product(&st->sum_sq, s, s);
        return;
    }
    // |a − e| = ±(a − e) term by term; (a − e)² = a² + e² − 2ae, each product exact.
    double sg = a > e ? 1.0 : -1.0;
    pp_exactsum_add(&st->sum_abs, sg * a);
    pp_exactsum_add(&st->sum_abs, -sg * e);
    pp_exactsum_add_product(&st->sum_sq, a, a);
    pp_exactsum_add_product(&st->sum_sq, e, e);
    pp_exactsum_add_product(&st->sum_sq, -a, e);
    pp_exactsum_add_product(&st->sum_sq, -a, e);
}

static void oracle_update(pp_close_stats *s, const pp_close_opts *o, const double *actual,
                           const double *expected, int64_t n, int64_t first_flat_index)
{
    oracle_pair_ctx c;
    oracle_ctx_init(&c, o);
    pp_format F = pp_format_get(o->actual_format);
    for (int64_t i = 0; i < n; i++) {
        double a = actual[i], e = expected[i];
        int64_t idx = first_flat_index + i;
        double ad = 0.0, rd = 0.0;
        if (!oracle_torch_pair(&c, a, e, &ad, &rd))
            s->mismatched++;
        oracle_offer(&s->abs_diff, ad, idx, a, e);
        oracle_offer(&s->rel_diff, rd, idx, a, e);
        oracle_offer(&s->tol_ratio, oracle_tol_ratio(&c, a, e), idx, a, e);

        s->nan_actual += isnan(a) != 0;
        s->inf_actual += isinf(a) != 0;
        s->nan_expected += isnan(e) != 0;
        s->inf_expected += isinf(e) != 0;
        int bin;
        if (isfinite(a) && isfinite(e)) {
            s->n_finite++;
            double ue = oracle_ulp_of(&F, e);  // the per-pair definition of ulp_scale
            if (ue > s->ulp_scale)
                s->ulp_scale = ue;
            if (a == e) {
                bin = PP_CLOSE_BIN_EQUAL;
                oracle_offer(&s->ulp_err, 0.0, idx, a, e);
                oracle_offer(&s->abs_err, 0.0, idx, a, e);
            } else {
                double d = a - e;  // TwoSum(a, −e): d + t == a − e exactly when d is finite
                double bp = d - a;
                double t = (a - (d - bp)) + (-e - bp);
                oracle_add_error_sums(s, a, e, d, t);
                double u = fabs(d) / oracle_ulp_of(&F, e);
                bin = oracle_ulp_bin(u, isfinite(d) && t != 0.0 && ((t > 0) == (d > 0)));
                oracle_offer(&s->ulp_err, u, idx, a, e);
                oracle_offer(&s->abs_err, fabs(d), idx, a, e);
            }
        } else if (a == e) {  // equal infinities
            bin = PP_CLOSE_BIN_EQUAL;
            oracle_offer(&s->ulp_err, 0.0, idx, a, e);
        } else {
            bin = PP_CLOSE_BIN_NONFINITE;
        }
        s->ulp_hist[bin]++;
    }
    s->numel += n > 0 ? n : 0;
}

#endif
