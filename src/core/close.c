// close.c — torch.testing.assert_close's isclose and its message numbers, emulated in the
// arithmetic of the torch version named, plus binary64 error statistics; all exactly mergeable.
#include "core/close.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// Formats, tolerances, versions

static int is_fp8(pp_format_id f)  // and the narrower OCP MX formats: no torch arithmetic either
{
    return (unsigned)f < (unsigned)PP_FMT_COUNT && pp_format_get(f).storage_bits <= 8;
}

pp_format_id pp_common_format(pp_format_id a, pp_format_id b)
{
    if (a == PP_FMT_TF32)
        a = PP_FMT_FP32;
    if (b == PP_FMT_TF32)
        b = PP_FMT_FP32;
    if (a == PP_FMT_FP64 || b == PP_FMT_FP64)
        return PP_FMT_FP64;
    if (is_fp8(a) || is_fp8(b))
        return PP_FMT_FP32;
    if (a == b)
        return a;
    return PP_FMT_FP32;  // fp32 with fp16 or bf16, and bf16 with fp16
}

static void tolerances_of(pp_format_id f, double *rtol, double *atol)
{
    switch (f) {
    case PP_FMT_FP16: *rtol = 1e-3, *atol = 1e-5; break;
    case PP_FMT_BF16: *rtol = 1.6e-2, *atol = 1e-5; break;
    case PP_FMT_FP32:
    case PP_FMT_TF32: *rtol = 1.3e-6, *atol = 1e-5; break;
    case PP_FMT_FP64: *rtol = 1e-7, *atol = 1e-7; break;
    default: *rtol = 0.0, *atol = 0.0; break;  // fp8: absent from torch's table
    }
}

void pp_default_tolerances(pp_format_id a, pp_format_id b, double *rtol, double *atol)
{
    double ra, aa, rb, ab;
    tolerances_of(a, &ra, &aa);
    tolerances_of(b, &rb, &ab);
    *rtol = ra > rb ? ra : rb;
    *atol = aa > ab ? aa : ab;
}

// Reads a decimal number of at most 6 digits at *p; -1 when there is none.
static int read_number(const char **p)
{
    const char *s = *p;
    int v = 0, k = 0;
    while (isdigit((unsigned char)s[k]) && k < 6)
        v = 10 * v + (s[k++] - '0');
    if (k == 0 || isdigit((unsigned char)s[k]))
        return -1;
    *p = s + k;
    return v;
}

static int digits_to_end(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return 0;
    return 1;
}

int pp_parse_torch_version(const char *s, int *major, int *minor)
{
    if (!s)
        return -1;
    int ma = read_number(&s);
    if (ma < 0 || *s != '.')
        return -1;
    s++;
    int mi = read_number(&s);
    if (mi < 0)
        return -1;
    if (*s == '.' && isdigit((unsigned char)s[1])) {  // patch level
        s++;
        if (read_number(&s) < 0)
            return -1;
    }
    if (*s == '+') {
        if (!s[1])
            return -1;
    } else if (*s == 'a' || *s == 'b') {
        if (!digits_to_end(s + 1))
            return -1;
    } else if (s[0] == 'r' && s[1] == 'c') {
        if (!digits_to_end(s + 2))
            return -1;
    } else if (strncmp(s, ".dev", 4) == 0) {
        if (!digits_to_end(s + 4))
            return -1;
    } else if (*s) {
        return -1;
    }
    if (ma < 1 || (ma == 1 && mi < 10))
        return -1;
    *major = ma;
    *minor = mi;
    return 0;
}

int pp_close_uses_common_dtype(const pp_close_opts *o)
{
    return o->torch_major > 2 || (o->torch_major == 2 && o->torch_minor >= 1);
}

// ---------------------------------------------------------------------------------------------
// torch's isclose and message differences, one pair at a time
//
// torch >= 2.1 evaluates `close = (a == e) [| (isnan(a) & isnan(e))]`, then, unless
// rtol == atol == 0, `allowed = atol + (rtol * e).abs()`, `err = (a - e).abs()`,
// `close |= isfinite(err) & (err <= allowed)`, in the common dtype C; its message uses
// `abs_diff = (a - e).abs()` and `abs_diff / e.abs()` in C, with matched pairs zeroed.
// An element-wise op on fp16/bf16 tensors computes in fp32 ("opmath") from fp32-converted
// operands, with Python-float scalars converted to fp32, and rounds the result to C to nearest
// even; fp32 ops are single fp32 operations; fp64 ones binary64. torch 1.10–2.0 first converts
// both operands to float64, so every step is binary64. Converting an operand to C is exact (C
// holds both formats), so a and e are used as given.

typedef enum arith { AR_F64, AR_F32, AR_HALF } arith;

typedef struct pair_ctx {
    arith ar;
    pp_format_id c;  // the rounding target of AR_HALF: fp16 or bf16
    int equality;    // rtol == atol == 0: isclose is equality (+ equal_nan) only
    int equal_nan;
    double rtol, atol;
    float rtol32, atol32;  // fl32(rtol), fl32(atol): the scalars as opmath sees them
} pair_ctx;

static void ctx_init(pair_ctx *c, const pp_close_opts *o)
{
    pp_format_id f = pp_close_uses_common_dtype(o)
                         ? pp_common_format(o->actual_format, o->expected_format)
                         : PP_FMT_FP64;
    c->c = f;
    c->ar = f == PP_FMT_FP64 ? AR_F64 : f == PP_FMT_FP32 ? AR_F32 : AR_HALF;
    c->equality = o->rtol == 0 && o->atol == 0;
    c->equal_nan = o->equal_nan != 0;
    c->rtol = o->rtol;
    c->atol = o->atol;
    c->rtol32 = (float)o->rtol;
    c->atol32 = (float)o->atol;
}

static double round_c(const pair_ctx *c, float x)
{
    return pp_round(c->c, (double)x, PP_RND_NE, 0);
}

// Returns 1 when (a, e) is close; else 0 with torch's abs and rel differences in *ad, *rd.
static int torch_pair(const pair_ctx *c, double a, double e, double *ad, double *rd)
{
    if (a == e || (c->equal_nan && isnan(a) && isnan(e)))
        return 1;
    double err, rel;
    if (c->ar == AR_F64) {
        err = fabs(a - e);
        if (!c->equality && isfinite(err) && err <= c->atol + fabs(c->rtol * e))
            return 1;
        rel = err / fabs(e);
    } else if (c->ar == AR_F32) {
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
        err = fabs(round_c(c, af - ef));
        if (!c->equality) {
            double t = round_c(c, c->rtol32 * ef);
            double allowed = round_c(c, c->atol32 + (float)fabs(t));
            if (isfinite(err) && err <= allowed)
                return 1;
        }
        rel = round_c(c, (float)err / fabsf(ef));
    }
    *ad = err;
    *rd = rel;
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Maxima

// Does (v, i) beat the current maximum m? NaN beats numbers; equal values and NaNs go to the
// smaller index.
static int beats(double v, int64_t i, const pp_close_max *m)
{
    if (m->index < 0)
        return 1;
    if (isnan(v))
        return !isnan(m->value) || i < m->index;
    if (isnan(m->value))
        return 0;
    return v > m->value || (v == m->value && i < m->index);
}

static void offer(pp_close_max *m, double v, int64_t i, double a, double e)
{
    if (beats(v, i, m))
        *m = (pp_close_max){v, i, a, e};
}

static void max_init(pp_close_max *m)
{
    *m = (pp_close_max){0.0, -1, 0.0, 0.0};
}

// ---------------------------------------------------------------------------------------------
// Beyond torch, in binary64

// The tolerance ratio r = |a − e| / (atol + rtol·|e|), each operation in binary64:
//   a == e (equal infinities and ±0 included): 0;
//   a NaN operand: NaN, except 0 for NaN/NaN with equal_nan;
//   |a − e| infinite (one operand infinite, opposite infinities, or binary64 overflow): Inf;
//   tolerance 0 (and a != e): Inf;
//   else fl(fl|a − e| / fl(atol + fl(rtol·|e|))), which overflows to Inf or is 0 for Inf tolerance.
static double tol_ratio(const pair_ctx *c, double a, double e)
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
static double pow2(int q)
{
    uint64_t b = q >= -1022 ? (uint64_t)(q + 1023) << 52 : (uint64_t)1 << (q + 1074);
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

// pp_ulp(f, x) for finite x, from x's exponent bits instead of frexp/ldexp (the hot loop calls
// it once per pair): the quantum of f in |x|'s binade, the binade clamped below at f's emin and
// above at max_finite's. The brute-force test checks it against pp_ulp through the statistics.
static double ulp_of(const pp_format *F, double x)
{
    double ax = fabs(x);
    if (ax > F->max_finite)
        ax = F->max_finite;
    uint64_t b;
    memcpy(&b, &ax, sizeof b);
    int E = (int)(b >> 52) - 1023;  // binary64 zero and subnormals give -1023, below every emin
    if (E < F->emin)
        E = F->emin;
    return pow2(E - F->p + 1);
}

// The ulp bin of u = |s| / ulp > 0 (s = fl(a − e), ulp a power of two, so u is exact barring
// overflow to Inf). above says the exact |a − e| exceeds |s| (the rounding residual has s's
// sign), which matters only when u lands exactly on an edge 2^j: the exact ratio is then above
// the edge. Edges: bin 1 holds u <= 0.5, bin 2 0.5 < u <= 1, bin j+2 2^(j−1) < u <= 2^j (1 <= j
// <= 20), bin 23 beyond 2^20.
static int ulp_bin(double u, int above)
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
static void add_error_sums(pp_close_stats *st, double a, double e, double s, double t)
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

// ---------------------------------------------------------------------------------------------
// Public functions

void pp_close_stats_init(pp_close_stats *s)
{
    memset(s, 0, sizeof *s);
    max_init(&s->abs_diff);
    max_init(&s->rel_diff);
    max_init(&s->tol_ratio);
    max_init(&s->ulp_err);
    max_init(&s->abs_err);
    pp_exactsum_init(&s->sum_abs);
    pp_exactsum_init(&s->sum_sq);
}

void pp_close_stats_update(pp_close_stats *s, const pp_close_opts *o, const double *actual,
                           const double *expected, int64_t n, int64_t first_flat_index)
{
    pair_ctx c;
    ctx_init(&c, o);
    pp_format F = pp_format_get(o->actual_format);
    for (int64_t i = 0; i < n; i++) {
        double a = actual[i], e = expected[i];
        int64_t idx = first_flat_index + i;
        double ad = 0.0, rd = 0.0;
        if (!torch_pair(&c, a, e, &ad, &rd))
            s->mismatched++;
        offer(&s->abs_diff, ad, idx, a, e);
        offer(&s->rel_diff, rd, idx, a, e);
        offer(&s->tol_ratio, tol_ratio(&c, a, e), idx, a, e);

        s->nan_actual += isnan(a) != 0;
        s->inf_actual += isinf(a) != 0;
        s->nan_expected += isnan(e) != 0;
        s->inf_expected += isinf(e) != 0;
        int bin;
        if (isfinite(a) && isfinite(e)) {
            s->n_finite++;
            if (a == e) {
                bin = PP_CLOSE_BIN_EQUAL;
                offer(&s->ulp_err, 0.0, idx, a, e);
                offer(&s->abs_err, 0.0, idx, a, e);
            } else {
                double d = a - e;  // TwoSum(a, −e): d + t == a − e exactly when d is finite
                double bp = d - a;
                double t = (a - (d - bp)) + (-e - bp);
                add_error_sums(s, a, e, d, t);
                double u = fabs(d) / ulp_of(&F, e);
                bin = ulp_bin(u, isfinite(d) && t != 0.0 && ((t > 0) == (d > 0)));
                offer(&s->ulp_err, u, idx, a, e);
                offer(&s->abs_err, fabs(d), idx, a, e);
            }
        } else if (a == e) {  // equal infinities
            bin = PP_CLOSE_BIN_EQUAL;
            offer(&s->ulp_err, 0.0, idx, a, e);
        } else {
            bin = PP_CLOSE_BIN_NONFINITE;
        }
        s->ulp_hist[bin]++;
    }
    s->numel += n > 0 ? n : 0;
}

static void max_merge(pp_close_max *into, const pp_close_max *from)
{
    if (from->index >= 0 && beats(from->value, from->index, into))
        *into = *from;
}

void pp_close_stats_merge(pp_close_stats *into, const pp_close_stats *from)
{
    into->numel += from->numel;
    into->mismatched += from->mismatched;
    max_merge(&into->abs_diff, &from->abs_diff);
    max_merge(&into->rel_diff, &from->rel_diff);
    max_merge(&into->tol_ratio, &from->tol_ratio);
    max_merge(&into->ulp_err, &from->ulp_err);
    max_merge(&into->abs_err, &from->abs_err);
    into->n_finite += from->n_finite;
    pp_exactsum_merge(&into->sum_abs, &from->sum_abs);
    pp_exactsum_merge(&into->sum_sq, &from->sum_sq);
    into->nan_actual += from->nan_actual;
    into->inf_actual += from->inf_actual;
    into->nan_expected += from->nan_expected;
    into->inf_expected += from->inf_expected;
    for (int k = 0; k < PP_CLOSE_ULP_BINS; k++)
        into->ulp_hist[k] += from->ulp_hist[k];
}

double pp_close_stats_mean_abs(const pp_close_stats *s)
{
    if (s->n_finite == 0)
        return NAN;
    return pp_exactsum_value(&s->sum_abs) / (double)s->n_finite;
}

double pp_close_stats_rms(const pp_close_stats *s)
{
    if (s->n_finite == 0)
        return NAN;
    return sqrt(pp_exactsum_value(&s->sum_sq) / (double)s->n_finite);
}

int64_t pp_close_stats_nonfinite_pairs(const pp_close_stats *s)
{
    return s->numel - s->n_finite;
}
