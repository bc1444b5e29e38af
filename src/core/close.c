// close.c — torch.testing.assert_close's isclose and its message numbers, emulated in the
// arithmetic of the torch version named, plus binary64 error statistics; all exactly mergeable.
#include "core/close.h"
#include "core/close_lanes.h"
#include "core/opmath_round.h"

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

static inline __attribute__((always_inline)) double round_c(const pair_ctx *c, float x)
{
    return pp_opmath_round(c->c, x);
}

// x when keep, else +0.0, without a branch (half the pairs of a typical comparison mismatch, in
// no pattern a branch predictor could learn).
static inline double keep_if(int keep, double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    b &= -(uint64_t)(keep != 0);
    memcpy(&x, &b, sizeof x);
    return x;
}

// Returns 1 when (a, e) is close; else 0. *ad, *rd: torch's abs and rel differences when not
// close, +0.0 when close. Every quantity is computed for every pair and the verdict selects
// (a NaN or Inf operand only makes some of them NaN or Inf: no traps, no side effects).
static inline __attribute__((always_inline)) int torch_pair(const pair_ctx *c, double a, double e, double *ad, double *rd)
{
    int same = a == e || (c->equal_nan && isnan(a) && isnan(e));
    double err, rel;
    int within;
    if (c->ar == AR_F64) {
        err = fabs(a - e);
        within = isfinite(err) && err <= c->atol + fabs(c->rtol * e);
        rel = err / fabs(e);
    } else if (c->ar == AR_F32) {
        // Every intermediate is stored in a float: C11 rounds on assignment even where float
        // arithmetic is evaluated wider (FLT_EVAL_METHOD != 0).
        float af = (float)a, ef = (float)e;
        float err32 = fabsf(af - ef);
        float t32 = c->rtol32 * ef;
        float allowed32 = c->atol32 + fabsf(t32);
        within = isfinite(err32) && err32 <= allowed32;
        float rel32 = err32 / fabsf(ef);
        err = err32;
        rel = rel32;
    } else {  // fp32 opmath, each result passed as a float (rounded), then rounded to C
        float af = (float)a, ef = (float)e;
        err = fabs(round_c(c, af - ef));
        double t = round_c(c, c->rtol32 * ef);
        double allowed = round_c(c, c->atol32 + (float)fabs(t));
        within = isfinite(err) && err <= allowed;
        rel = round_c(c, (float)err / fabsf(ef));
    }
    int close = same | ((c->equality == 0) & within);
    *ad = keep_if(!close, err);
    *rd = keep_if(!close, rel);
    return close;
}

// ---------------------------------------------------------------------------------------------
// torch's pair in fp16/bf16 opmath, four pairs at a time
//
// The same statements as torch_pair's AR_HALF branch, lane by lane (GCC vector extensions:
// binary32 IEEE operations, correctly rounded, no contraction under -ffp-contract=off; the
// conversions are cvtpd2ps/cvtps2pd, the scalar casts' roundings). pp_opmath_round's bit trick is
// the vector form of its usual-operand branch; a lane that needs its other branch (zeros, NaN,
// Inf, fp16's subnormal range and overflow edge) is redone by torch_pair alone, so every lane
// gives torch_pair's bits. tests/test_close_fast.c checks the pass against its oracle.

typedef float v4f __attribute__((vector_size(16)));
typedef uint32_t v4u __attribute__((vector_size(16)));
typedef double v4d __attribute__((vector_size(32)));
typedef int64_t v4l __attribute__((vector_size(32)));

enum { HALF_CHUNK = PP_CLOSE_CHUNK };  // the lanes' chunk (close_lanes.h)

static inline v4f abs_v(v4f x)
{
    v4u u;
    memcpy(&u, &x, sizeof u);
    u &= 0x7FFFFFFFu;
    memcpy(&x, &u, sizeof x);
    return x;
}

// pp_opmath_round(f, x) on four lanes: its bit trick, plus what pp_round gives for ±0 (itself)
// and, for fp16, on |x| < 2^−14, where the grid is the multiples of 2^−24 (subnormals, and 2^−14
// itself): |x| + 0.75 rounds |x| to that grid (0.75's binade has quantum 2^−24; nearest even),
// − 0.75 is exact (Sterbenz), and the result takes x's sign (a zero result included, as
// rounding to nearest gives). *slow marks the lanes left to pp_round: NaN, ±Inf, fp16 from 65504.
static inline __attribute__((always_inline)) v4f round_half_v(pp_format_id f, v4f x, v4u *slow)
{
    v4u u, ok, r;
    memcpy(&u, &x, sizeof u);
    v4u ax = u & 0x7FFFFFFFu;
    if (f == PP_FMT_BF16) {
        v4u zero = (v4u)(ax == 0u);
        ok = (v4u)(ax - 1u < 0x7F7FFFFFu) | zero;  // finite
        r = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
        r = (zero & u) | (~zero & r);
    } else {
        v4u tiny = (v4u)(ax < 0x38800000u);
        ok = (v4u)(ax < 0x477FE000u);  // below fp16's overflow edge (NaN and Inf are above)
        v4f y = (abs_v(x) + 0.75f) - 0.75f;
        v4u yb;
        memcpy(&yb, &y, sizeof yb);
        yb |= u & 0x80000000u;
        r = (u + 0xFFFu + ((u >> 13) & 1u)) & 0xFFFFE000u;
        r = (tiny & yb) | (~tiny & r);
    }
    *slow |= ~ok;
    memcpy(&x, &r, sizeof x);
    return x;
}

// For the m <= HALF_CHUNK pairs at a, e: cl[i] = torch_pair's verdict, and err[i], rel[i] its
// abs and rel differences as binary32 values (they are C values: fp16/bf16), meaningful where
// cl[i] is 0 (torch_pair's *ad, *rd are (double)err, (double)rel there, +0.0 where close).
static inline __attribute__((always_inline)) void half_chunk(const pair_ctx *c, const double *a,
                                                             const double *e, int m, int *cl,
                                                             float *err, float *rel)
{
    const pp_format_id f = c->c;
    const v4f rtol = {c->rtol32, c->rtol32, c->rtol32, c->rtol32};
    const v4f atol = {c->atol32, c->atol32, c->atol32, c->atol32};
    const v4u not_eq_mode = (v4u){1, 1, 1, 1} * (uint32_t)(c->equality == 0);
    int k = 0;
    for (; k + 4 <= m; k += 4) {
        v4d av, ev;
        memcpy(&av, a + k, sizeof av);
        memcpy(&ev, e + k, sizeof ev);
        v4f af = __builtin_convertvector(av, v4f), ef = __builtin_convertvector(ev, v4f);
        v4u slow = {0, 0, 0, 0};
        v4f er = abs_v(round_half_v(f, af - ef, &slow));
        v4f t = round_half_v(f, rtol * ef, &slow);
        v4f allowed = round_half_v(f, atol + abs_v(t), &slow);
        v4u eb;
        memcpy(&eb, &er, sizeof eb);
        v4u within = (v4u)((eb & 0x7F800000u) != 0x7F800000u) & (v4u)(er <= allowed);
        v4f rl = round_half_v(f, er / abs_v(ef), &slow);
        v4u same = __builtin_convertvector(av == ev, v4u);
        if (c->equal_nan)
            same |= __builtin_convertvector((av != av) & (ev != ev), v4u);
        v4u close = (same & 1u) | (within & not_eq_mode & 1u);
        memcpy(cl + k, &close, sizeof close);  // lanes of 0 or 1: the ints' bits
        memcpy(err + k, &er, sizeof er);
        memcpy(rel + k, &rl, sizeof rl);
        if (slow[0] | slow[1] | slow[2] | slow[3])
            for (int j = 0; j < 4; j++)
                if (slow[j]) {
                    double ad, rd;
                    cl[k + j] = torch_pair(c, a[k + j], e[k + j], &ad, &rd);
                    err[k + j] = (float)ad;  // exact: a C value (or +0.0 where close)
                    rel[k + j] = (float)rd;
                }
    }
    for (; k < m; k++) {
        double ad, rd;
        cl[k] = torch_pair(c, a[k], e[k], &ad, &rd);
        err[k] = (float)ad;
        rel[k] = (float)rd;
    }
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
static inline double tol_ratio(const pair_ctx *c, double a, double e)
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
static inline double pow2(int q)
{
    uint64_t b = q >= -1022 ? (uint64_t)(q + 1023) << 52 : (uint64_t)1 << (q + 1074);
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

// The exponent k of pp_ulp(f, x) = 2^k for finite x, from x's exponent bits instead of
// frexp/ldexp (the hot loop needs it once per pair): the quantum of f in |x|'s binade, the binade
// clamped below at f's emin and above at max_finite's. The brute-force test checks it against
// pp_ulp through the statistics.
static inline int ulp_exp(const pp_format *F, double x)
{
    double ax = fabs(x);
    if (ax > F->max_finite)
        ax = F->max_finite;
    uint64_t b;
    memcpy(&b, &ax, sizeof b);
    int E = (int)(b >> 52) - 1023;  // binary64 zero and subnormals give -1023, below every emin
    if (E < F->emin)
        E = F->emin;
    return E - F->p + 1;
}

// fl(ad / pp_ulp(f, e)). Dividing by 2^k and multiplying by 2^−k are the same real number, so
// one correctly rounded product gives the quotient's bits; 2^−k is a binary64 for k >= −1023,
// which leaves only fp64's subnormal quantum to the division.
static inline double ulp_ratio(const pp_format *F, double ad, double e)
{
    int k = ulp_exp(F, e);
    return k >= -1023 ? ad * pow2(-k) : ad / pow2(k);
}

// The ulp bin of u = |s| / ulp > 0 (s = fl(a − e), ulp a power of two, so u is exact barring
// overflow to Inf). above says the exact |a − e| exceeds |s| (the rounding residual has s's
// sign), which matters only when u lands exactly on an edge 2^j: the exact ratio is then above
// the edge. Edges: bin 1 holds u <= 0.5, bin 2 0.5 < u <= 1, bin j+2 2^(j−1) < u <= 2^j (1 <= j
// <= 20), bin 23 beyond 2^20.
static inline int ulp_bin(double u, int above)
{
    uint64_t b;
    memcpy(&b, &u, sizeof b);
    int E = (int)(b >> 52) - 1023;  // u in [2^E, 2^(E+1)) for normal u; Inf gives 1024
    int pow = (b & (((uint64_t)1 << 52) - 1)) == 0;
    int j = E + 1 - (pow & !above);  // the least j with exact ratio <= 2^j (subnormal u: < −1000)
    // Clamped without branches (the bins of a comparison's pairs follow no pattern): j <= −1 is
    // bin 1, j > 20 bin 23 (PP_CLOSE_BIN_HUGE), else bin j + 2.
    j = j < -1 ? -1 : j;
    j = j > 21 ? 21 : j;
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

// ---------------------------------------------------------------------------------------------
// The streaming pass
//
// One call's pairs have increasing flat indices, so within a call "first index wins ties"
// means "a strictly greater value wins" and the first NaN stays: the call keeps its own maxima
// that way (lmax) and merges them into s at the end with the full rule (max_merge), which gives
// what offering every pair to s would. Counts go to locals. The exact differences go through a
// buffer to pp_exactsum_add_abs_sq, which adds the same digits and counts as one call per term;
// the rare pair whose difference is inexact in binary64 flushes the buffer first, so the
// accumulators see the terms in the order offering them one by one would (only that order's
// carry passes could tell). test_close_fast.c checks all of it against the one-pair-at-a-time
// oracle, bit for bit.

typedef struct lmax {
    double value;  // −1 while empty: every statistic offered is >= 0 or NaN
    int64_t index;
    double actual, expected;
} lmax;

static inline void lmax_offer(lmax *m, double v, int64_t i, double a, double e)
{
    if (v > m->value || (isnan(v) && !isnan(m->value)))
        *m = (lmax){v, i, a, e};
}

// A chunk's offers at once (close_lanes.h): its maximum vmax of v[0 .. PP_CLOSE_CHUNK − 1], none
// NaN, beats m only by being greater, and then its first occurrence is what offering the values
// one by one would keep.
static inline void lmax_offer_chunk(lmax *m, double vmax, const double *v, int64_t idx0, const double *a,
                                    const double *e)
{
    if (!(vmax > m->value))
        return;
    int j = 0;
    while (v[j] != vmax)
        j++;
    *m = (lmax){vmax, idx0 + j, a[j], e[j]};
}

static void max_merge(pp_close_max *into, const pp_close_max *from);

static void lmax_merge(pp_close_max *into, const lmax *m)
{
    pp_close_max f = {m->value, m->index, m->actual, m->expected};
    if (m->index >= 0)
        max_merge(into, &f);
}

enum { SUMBUF = 256 };

typedef struct pass {
    lmax abs_diff, rel_diff, tol_ratio, ulp_err, abs_err;
    int64_t mismatched, n_finite, nan_a, inf_a, nan_e, inf_e;
    double max_abs_e;  // the greatest |e| over finite pairs (−1: none), for ulp_scale
    int64_t hist[PP_CLOSE_ULP_BINS];
    double buf[SUMBUF];  // exact differences a − e not yet in the accumulators
    int nbuf;
} pass;

static void pass_flush(pass *P, pp_close_stats *s)
{
    pp_exactsum_add_abs_sq(&s->sum_abs, &s->sum_sq, P->buf, P->nbuf);
    P->nbuf = 0;
}

// The pairs [lo, hi) of one call under arithmetic ar (a constant where inlined, so each
// arithmetic gets its own loop without the per-pair switch).
static inline __attribute__((always_inline)) void pass_run(pass *P, pp_close_stats *s, const pair_ctx *c,
                                                          const pp_format *F, arith ar, const double *actual,
                                                          const double *expected, int64_t n, int64_t first,
                                                          pp_close_chunk_fn chunk, const pp_close_lanes_ctx *lc,
                                                          pp_close_chunk *ch)
{
    pair_ctx cc = *c;
    cc.ar = ar;
    // The two hottest counters in locals, the histogram in two copies by index parity: the
    // pairs of a comparison crowd into a few bins, and one copy would make each increment wait
    // for the previous one's store.
    int64_t mismatched = 0, n_finite = 0, hist2[2][PP_CLOSE_ULP_BINS];
    double max_abs_e = P->max_abs_e;
    memset(hist2, 0, sizeof hist2);
    // fp16/bf16 opmath: torch's pair a chunk at a time, four lanes at once (half_chunk)
    int hcl[HALF_CHUNK];
    float herr[HALF_CHUNK], hrel[HALF_CHUNK];
    for (int64_t i0 = 0; i0 < n; i0 += HALF_CHUNK) {
    int64_t i1 = n - i0 < HALF_CHUNK ? n : i0 + HALF_CHUNK;
    if (chunk && i1 - i0 == PP_CLOSE_CHUNK && chunk(lc, actual + i0, expected + i0, ch)) {
        // every pair usual: the lanes' results offered as the loop below would offer them
        mismatched += ch->mismatched;
        n_finite += PP_CLOSE_CHUNK;
        max_abs_e = ch->max_abs_e > max_abs_e ? ch->max_abs_e : max_abs_e;
        for (int j = 0; j < PP_CLOSE_CHUNK; j++)
            hist2[j & 1][ch->bin[j]]++;
        pass_flush(P, s);  // the terms in index order: the buffer's before the chunk's
        pp_exactsum_add_abs_sq(&s->sum_abs, &s->sum_sq, ch->d, PP_CLOSE_CHUNK);  // zeros add nothing
        const double *a0 = actual + i0, *e0 = expected + i0;
        int64_t idx0 = first + i0;
        lmax_offer_chunk(&P->abs_diff, ch->max_ad, ch->ad, idx0, a0, e0);
        lmax_offer_chunk(&P->rel_diff, ch->max_rd, ch->rd, idx0, a0, e0);
        lmax_offer_chunk(&P->tol_ratio, ch->max_tr, ch->tr, idx0, a0, e0);
        lmax_offer_chunk(&P->ulp_err, ch->max_u, ch->u, idx0, a0, e0);
        if (ch->max_absd > P->abs_err.value) {  // its values are |d|, not stored
            int j = 0;
            while (fabs(ch->d[j]) != ch->max_absd)
                j++;
            P->abs_err = (lmax){ch->max_absd, idx0 + j, a0[j], e0[j]};
        }
        continue;
    }
    if (ar == AR_HALF)
        half_chunk(&cc, actual + i0, expected + i0, (int)(i1 - i0), hcl, herr, hrel);
    for (int64_t i = i0; i < i1; i++) {
        double a = actual[i], e = expected[i];
        int64_t idx = first + i, *hist = hist2[i & 1];
        double ad = 0.0, rd = 0.0;
        if (ar == AR_HALF) {
            int cl = hcl[i - i0];
            mismatched += !cl;
            ad = keep_if(!cl, (double)herr[i - i0]);
            rd = keep_if(!cl, (double)hrel[i - i0]);
        } else {
            mismatched += !torch_pair(&cc, a, e, &ad, &rd);
        }
        lmax_offer(&P->abs_diff, ad, idx, a, e);
        lmax_offer(&P->rel_diff, rd, idx, a, e);
        lmax_offer(&P->tol_ratio, tol_ratio(&cc, a, e), idx, a, e);
        if (isfinite(a) && isfinite(e)) {
            n_finite++;
            double ae = fabs(e);
            max_abs_e = ae > max_abs_e ? ae : max_abs_e;
            if (a == e) {
                hist[PP_CLOSE_BIN_EQUAL]++;
                lmax_offer(&P->ulp_err, 0.0, idx, a, e);
                lmax_offer(&P->abs_err, 0.0, idx, a, e);
                continue;
            }
            double d = a - e;  // TwoSum(a, −e): d + t == a − e exactly when d is finite
            double bp = d - a;
            double t = (a - (d - bp)) + (-e - bp);
            if (t == 0.0 && isfinite(d)) {
                P->buf[P->nbuf++] = d;
                if (P->nbuf == SUMBUF)
                    pass_flush(P, s);
            } else {
                pass_flush(P, s);
                add_error_sums(s, a, e, d, t);
            }
            double u = ulp_ratio(F, fabs(d), e);
            hist[ulp_bin(u, isfinite(d) & (t != 0.0) & ((t > 0) == (d > 0)))]++;
            lmax_offer(&P->ulp_err, u, idx, a, e);
            lmax_offer(&P->abs_err, fabs(d), idx, a, e);
            continue;
        }
        P->nan_a += isnan(a) != 0;
        P->inf_a += isinf(a) != 0;
        P->nan_e += isnan(e) != 0;
        P->inf_e += isinf(e) != 0;
        if (a == e) {  // equal infinities
            hist[PP_CLOSE_BIN_EQUAL]++;
            lmax_offer(&P->ulp_err, 0.0, idx, a, e);
        } else {
            hist[PP_CLOSE_BIN_NONFINITE]++;
        }
    }
    }
    P->mismatched += mismatched;
    P->n_finite += n_finite;
    P->max_abs_e = max_abs_e;
    for (int k = 0; k < PP_CLOSE_ULP_BINS; k++)
        P->hist[k] += hist2[0][k] + hist2[1][k];
}

void pp_close_stats_update(pp_close_stats *s, const pp_close_opts *o, const double *actual,
                           const double *expected, int64_t n, int64_t first_flat_index)
{
    pp_close_stats_update_isa(s, o, actual, expected, n, first_flat_index, PP_ISA_AUTO);
}

void pp_close_stats_update_isa(pp_close_stats *s, const pp_close_opts *o, const double *actual,
                               const double *expected, int64_t n, int64_t first_flat_index, int isa)
{
    pair_ctx c;
    ctx_init(&c, o);
    pp_format F = pp_format_get(o->actual_format);
    pass P;
    memset(&P, 0, sizeof P);
    P.abs_diff = P.rel_diff = P.tol_ratio = P.ulp_err = P.abs_err = (lmax){-1.0, -1, 0.0, 0.0};
    P.max_abs_e = -1.0;
    pp_close_lanes_ctx lc = {.verdict = c.ar == AR_F64       ? PP_CLOSE_V_F64
                                        : c.ar == AR_F32     ? PP_CLOSE_V_F32
                                        : c.c == PP_FMT_BF16 ? PP_CLOSE_V_BF16
                                                             : PP_CLOSE_V_FP16,
                             .equality = c.equality,
                             .rtol = c.rtol,
                             .atol = c.atol,
                             .rtol32 = c.rtol32,
                             .atol32 = c.atol32,
                             .max_finite = F.max_finite,
                             .emin = F.emin,
                             .p = F.p};
    pp_close_chunk_fn chunk = isa == PP_CLOSE_ISA_NONE ? NULL : pp_close_chunk_for((pp_isa)isa);
    pp_close_chunk ch;
    switch (c.ar) {
    case AR_F64: pass_run(&P, s, &c, &F, AR_F64, actual, expected, n, first_flat_index, chunk, &lc, &ch); break;
    case AR_F32: pass_run(&P, s, &c, &F, AR_F32, actual, expected, n, first_flat_index, chunk, &lc, &ch); break;
    default: pass_run(&P, s, &c, &F, AR_HALF, actual, expected, n, first_flat_index, chunk, &lc, &ch); break;
    }
    pass_flush(&P, s);
    s->mismatched += P.mismatched;
    lmax_merge(&s->abs_diff, &P.abs_diff);
    lmax_merge(&s->rel_diff, &P.rel_diff);
    lmax_merge(&s->tol_ratio, &P.tol_ratio);
    lmax_merge(&s->ulp_err, &P.ulp_err);
    lmax_merge(&s->abs_err, &P.abs_err);
    s->n_finite += P.n_finite;
    // ulp_f is non-decreasing in |e|, so the greatest ulp over the pairs is the ulp of the
    // greatest |e|: one ulp per call instead of one per pair.
    if (P.max_abs_e >= 0.0) {
        double ue = pow2(ulp_exp(&F, P.max_abs_e));
        if (ue > s->ulp_scale)
            s->ulp_scale = ue;
    }
    s->nan_actual += P.nan_a;
    s->inf_actual += P.inf_a;
    s->nan_expected += P.nan_e;
    s->inf_expected += P.inf_e;
    for (int k = 0; k < PP_CLOSE_ULP_BINS; k++)
        s->ulp_hist[k] += P.hist[k];
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
    if (from->ulp_scale > into->ulp_scale)
        into->ulp_scale = from->ulp_scale;
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
