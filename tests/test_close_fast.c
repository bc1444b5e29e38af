// test_close_fast.c — the fast streaming pass of pp_close_stats_update against the
// one-pair-at-a-time oracle (close_oracle.h, the pass as it was), bit for bit: every count, every
// maximum's value, index and operands (NaN payloads included), the histogram, and the exact
// accumulators' limbs and counters as stored in report.h5. Inputs are adversarial: NaN of both
// signs, ±Inf, ±0, subnormals of the format and of binary64, the largest finite values (and
// binary64 differences that overflow or are inexact), values next to fp16/bf16 rounding ties and
// range edges, repeated pairs (tied maxima), mixed formats, both torch semantics, equality mode,
// calls over shuffled index ranges, and an accumulator one step from its carry pass.
// Run: make build/rel/tests/test_close_fast && build/rel/tests/test_close_fast
#include "test_util.h"

#include <float.h>
#include <math.h>

#include "close_oracle.h"
#include "core/close.h"
#include "core/close_lanes.h"

// Every level of the pass: the one-pair code alone, then the chunk lanes of each x86-64 level
// (a level this CPU lacks resolves to the widest below it).
static const int levels[] = {PP_CLOSE_ISA_NONE, PP_ISA_BASELINE, PP_ISA_AVX2, PP_ISA_AVX512};
enum { NLEVELS = sizeof levels / sizeof levels[0] };

// ---------------------------------------------------------------------------------------------
// Inputs

static const pp_format_id fmts[] = {PP_FMT_FP64, PP_FMT_FP32, PP_FMT_TF32, PP_FMT_FP16,
                                    PP_FMT_BF16, PP_FMT_E4M3, PP_FMT_E5M2};

// A value of f: a special one, a random bit pattern, a value at a rounding tie of fp16 or bf16
// (as a binary32 then rounded to f), or one near fp16's range edges (2^−14, 65504, 65520).
static double value_of(pp_test_rng *r, pp_format_id f)
{
    double sp[PP_TEST_SPECIAL_MAX];
    uint64_t k = pp_test_rng_next(r) % 8;
    double x;
    if (k == 0) {
        int n = pp_test_special_values(f, sp);
        return sp[pp_test_rng_next(r) % (uint64_t)n];
    } else if (k == 1) {  // any bit pattern of binary64, rounded
        uint64_t b = pp_test_rng_next(r);
        memcpy(&x, &b, sizeof x);
    } else if (k == 2) {  // a binary32 halfway between two bf16 (or fp16) values
        uint32_t u = (uint32_t)pp_test_rng_next(r);
        u = (u & 0xFFFF0000u) | ((pp_test_rng_next(r) & 1) ? 0x8000u : 0x1000u);
        float fx;
        memcpy(&fx, &u, sizeof fx);
        x = fx;
    } else if (k == 3) {
        static const double edges[] = {0x1p-14, 65504.0, 65520.0, 65519.99, 0x1p-24, 0x1.ffcp-15, 3.3895e38};
        x = edges[pp_test_rng_next(r) % 7] * ((pp_test_rng_next(r) & 1) ? -1.0 : 1.0);
        x *= 1.0 + ldexp((double)(int)(pp_test_rng_next(r) % 9) - 4.0, -24);
    } else {
        x = (pp_test_rng_unit(r) - 0.5) * ldexp(1.0, (int)(pp_test_rng_next(r) % 40) - 20);
    }
    return isnan(x) ? x : pp_round(f, x, PP_RND_NE, 0);
}

// n pairs: unrelated, equal, a few ulps or one tolerance apart, and copies of earlier pairs.
static void pairs(pp_test_rng *r, const pp_close_opts *o, double *a, double *e, int64_t n)
{
    pp_format_id fa = o->actual_format, fe = o->expected_format;
    for (int64_t i = 0; i < n; i++) {
        uint64_t k = pp_test_rng_next(r) % 8;
        e[i] = value_of(r, fe);
        if (k == 0 && i > 0) {
            int64_t j = (int64_t)(pp_test_rng_next(r) % (uint64_t)i);
            a[i] = a[j], e[i] = e[j];
        } else if (k <= 2) {
            a[i] = value_of(r, fa);
        } else if (k == 3) {
            a[i] = isnan(e[i]) ? e[i] : pp_round(fa, e[i], PP_RND_NE, 0);
        } else if (!isfinite(e[i])) {
            a[i] = value_of(r, fa);
        } else if (k <= 5) {
            double y = pp_round(fa, e[i], PP_RND_NE, 0);
            int steps = (int)(pp_test_rng_next(r) % 9) - 4;
            a[i] = isfinite(y) ? pp_round(fa, y + steps * pp_ulp(fa, y), PP_RND_NE, 0) : y;
        } else {
            double allowed = o->atol + o->rtol * fabs(e[i]);
            double y = e[i] + ((pp_test_rng_next(r) & 1) ? allowed : -allowed);
            a[i] = pp_round(fa, y, PP_RND_NE, 0);
        }
    }
}

static void some_opts(pp_test_rng *r, pp_close_opts *o)
{
    o->actual_format = fmts[pp_test_rng_next(r) % 7];
    o->expected_format = pp_test_rng_next(r) % 2 ? o->actual_format : fmts[pp_test_rng_next(r) % 7];
    static const int ver[][2] = {{1, 13}, {2, 0}, {2, 1}, {2, 5}};
    int v = (int)(pp_test_rng_next(r) % 4);
    o->torch_major = ver[v][0];
    o->torch_minor = ver[v][1];
    o->equal_nan = (int)(pp_test_rng_next(r) & 1);
    static const double rt[] = {1e-3, 1.6e-2, 1.3e-6, 0.5, 0.0, 3.0};
    static const double at[] = {1e-5, 0.0, 1e-3, 1.0, 1e-30, 1e300};
    switch (pp_test_rng_next(r) % 3) {
    case 0: pp_default_tolerances(o->actual_format, o->expected_format, &o->rtol, &o->atol); break;
    case 1: o->rtol = 0, o->atol = 0; break;
    default: o->rtol = rt[pp_test_rng_next(r) % 6], o->atol = at[pp_test_rng_next(r) % 6]; break;
    }
}

// ---------------------------------------------------------------------------------------------
// Bitwise equality

static int same_max(const pp_close_max *x, const pp_close_max *y)
{
    return x->index == y->index && pp_test_same_bits(x->value, y->value) &&
           pp_test_same_bits(x->actual, y->actual) && pp_test_same_bits(x->expected, y->expected);
}

static int same_sum(const pp_exactsum *x, const pp_exactsum *y)
{
    return !memcmp(x->limb, y->limb, sizeof x->limb) && x->pending == y->pending && x->n_pinf == y->n_pinf &&
           x->n_ninf == y->n_ninf && x->n_nan == y->n_nan;
}

// The first field that differs, or NULL.
static const char *diff(const pp_close_stats *x, const pp_close_stats *y)
{
    if (x->numel != y->numel || x->mismatched != y->mismatched)
        return "numel/mismatched";
    if (!same_max(&x->abs_diff, &y->abs_diff))
        return "abs_diff";
    if (!same_max(&x->rel_diff, &y->rel_diff))
        return "rel_diff";
    if (!same_max(&x->tol_ratio, &y->tol_ratio))
        return "tol_ratio";
    if (!same_max(&x->ulp_err, &y->ulp_err))
        return "ulp_err";
    if (!same_max(&x->abs_err, &y->abs_err))
        return "abs_err";
    if (x->n_finite != y->n_finite || x->nan_actual != y->nan_actual || x->inf_actual != y->inf_actual ||
        x->nan_expected != y->nan_expected || x->inf_expected != y->inf_expected)
        return "counts";
    if (memcmp(&x->ulp_scale, &y->ulp_scale, sizeof x->ulp_scale))
        return "ulp_scale";
    if (memcmp(x->ulp_hist, y->ulp_hist, sizeof x->ulp_hist))
        return "ulp_hist";
    if (!same_sum(&x->sum_abs, &y->sum_abs))
        return "sum_abs";
    if (!same_sum(&x->sum_sq, &y->sum_sq))
        return "sum_sq";
    return NULL;
}

// ---------------------------------------------------------------------------------------------
// Tests

enum { NMAX = 4096 };

// Runs the pairs as `calls` updates over shuffled index ranges (each call's range contiguous,
// the calls in random order), through both passes; returns the first differing field or NULL.
static const char *run_both_at(pp_test_rng *r, const pp_close_opts *o, const double *a, const double *e, int64_t n,
                               pp_close_stats *fast, pp_close_stats *slow, int isa)
{
    int64_t cut[6] = {0};
    int calls = 1 + (int)(pp_test_rng_next(r) % 4);
    for (int k = 1; k < calls; k++)
        cut[k] = (int64_t)(pp_test_rng_next(r) % (uint64_t)(n + 1));
    cut[calls] = n;
    for (int k = 1; k < calls; k++)  // sort the cuts (insertion)
        for (int j = k; j > 0 && cut[j] < cut[j - 1]; j--) {
            int64_t t = cut[j];
            cut[j] = cut[j - 1], cut[j - 1] = t;
        }
    int order[5] = {0, 1, 2, 3, 4};
    for (int k = calls - 1; k > 0; k--) {
        int j = (int)(pp_test_rng_next(r) % (uint64_t)(k + 1)), t = order[k];
        order[k] = order[j], order[j] = t;
    }
    for (int k = 0; k < calls; k++) {
        int64_t lo = cut[order[k]], hi = cut[order[k] + 1];
        pp_close_stats_update_isa(fast, o, a + lo, e + lo, hi - lo, lo, isa);
        oracle_update(slow, o, a + lo, e + lo, hi - lo, lo);
    }
    return diff(fast, slow);
}

// run_both_at at every level, each from fresh statistics; the first difference or NULL.
static const char *run_both(pp_test_rng *r, const pp_close_opts *o, const double *a, const double *e, int64_t n,
                            pp_close_stats *fast, pp_close_stats *slow)
{
    for (int l = 0; l < NLEVELS; l++) {
        pp_close_stats_init(fast);
        pp_close_stats_init(slow);
        const char *f = run_both_at(r, o, a, e, n, fast, slow, levels[l]);
        if (f) {
            fprintf(stderr, "  at level %d\n", levels[l]);
            return f;
        }
    }
    return NULL;
}

static void report(const char *field, const pp_close_opts *o, int iter)
{
    fprintf(stderr, "FAIL fast pass differs from the oracle in %s (iteration %d): %s vs %s, rtol %.17g, atol %.17g, "
            "equal_nan %d, torch %d.%d\n", field, iter, pp_format_get(o->actual_format).name,
            pp_format_get(o->expected_format).name, o->rtol, o->atol, o->equal_nan, o->torch_major, o->torch_minor);
    pp_test_report_seed();
}

static void close_fast_equals_oracle(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() ^ 0xC105Eu};
    static double a[NMAX], e[NMAX];
    int iters = (int)pp_test_iters(400), bad = 0;
    for (int it = 0; it < iters && bad < 5; it++) {
        pp_close_opts o;
        some_opts(&r, &o);
        int64_t n = 1 + (int64_t)(pp_test_rng_next(&r) % NMAX);
        pairs(&r, &o, a, e, n);
        pp_close_stats fast, slow;
        pp_close_stats_init(&fast);
        pp_close_stats_init(&slow);
        const char *f = run_both(&r, &o, a, e, n, &fast, &slow);
        if (f)
            report(f, &o, it), bad++;
    }
    assert_int_equal(bad, 0);
}

// The buffered additions must meet the carry pass where one-by-one additions do: start both
// accumulators a few additions short of it.
static void close_fast_carry_pass_where_oracle_carries(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() ^ 0xCA77u};
    static double a[NMAX], e[NMAX];
    int bad = 0;
    for (int it = 0; it < 60 && bad < 5; it++) {
        pp_close_opts o;
        some_opts(&r, &o);
        o.rtol = 1e-3, o.atol = 1e-5;
        int64_t n = 1 + (int64_t)(pp_test_rng_next(&r) % NMAX);
        pairs(&r, &o, a, e, n);
        pp_close_stats fast, slow;
        pp_close_stats_init(&slow);
        oracle_update(&slow, &o, a, e, n / 2, 0);  // some digits in the limbs
        slow.sum_abs.pending = (1u << 30) - 1 - (uint32_t)(pp_test_rng_next(&r) % 600);
        slow.sum_sq.pending = (1u << 30) - 1 - (uint32_t)(pp_test_rng_next(&r) % 600);
        pp_close_stats start = slow;
        oracle_update(&slow, &o, a + n / 2, e + n / 2, n - n / 2, n / 2);
        for (int l = 0; l < NLEVELS; l++) {
            fast = start;
            pp_close_stats_update_isa(&fast, &o, a + n / 2, e + n / 2, n - n / 2, n / 2, levels[l]);
            const char *f = diff(&fast, &slow);
            if (f)
                report(f, &o, it), bad++;
        }
    }
    assert_int_equal(bad, 0);
}

// binary64 operands whose differences are inexact or overflow (the accumulators' slow terms)
// between exact ones, and ties of every maximum at several indices.
static void close_fast_fp64_inexact_and_overflow(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() ^ 0xF64u};
    static double a[NMAX], e[NMAX];
    pp_close_opts o = {.rtol = 1e-7, .atol = 1e-7, .torch_major = 2, .torch_minor = 1,
                       .actual_format = PP_FMT_FP64, .expected_format = PP_FMT_FP64};
    for (int64_t i = 0; i < NMAX; i++) {
        switch (pp_test_rng_next(&r) % 6) {
        case 0: a[i] = DBL_MAX, e[i] = -DBL_MAX; break;                          // overflows
        case 1: a[i] = 1.0 + ldexp(1.0, -52), e[i] = ldexp(1.0, -80); break;     // inexact
        case 2: a[i] = 3.0, e[i] = 2.0; break;                                   // tied maxima
        case 3: a[i] = 0x1p-1074, e[i] = -0x1p-1074; break;                      // subnormal
        case 4: a[i] = pp_test_rng_unit(&r), e[i] = pp_test_rng_unit(&r); break;
        default: a[i] = ldexp(pp_test_rng_unit(&r), 1000), e[i] = -ldexp(pp_test_rng_unit(&r), 1000); break;
        }
    }
    for (int it = 0; it < 20; it++) {
        pp_close_stats fast, slow;
        pp_close_stats_init(&fast);
        pp_close_stats_init(&slow);
        const char *f = run_both(&r, &o, a, e, NMAX, &fast, &slow);
        if (f)
            report(f, &o, it);
        assert_null(f);
    }
}

// Every pair from a list of fp16 and bf16 values at the edges of the half formats' rounding
// (the fp16 overflow threshold 65520 = 65504 + 16 and the binade below it, fp16's smallest
// normal and subnormals, bf16's largest finite and its overflow, ties at 11 and 8 bits), so that
// the opmath results a − e and rtol·e that the fast rounding sees land on those edges exactly.
static void close_fast_half_rounding_edges(void **state)
{
    (void)state;
    static const double h[] = {65504.0, 65472.0, 32768.0, 16.0, 15.9921875, 8.0, 2048.0, 2.0, 1.0, 0.0,
                               0x1p-14, 0x1.ff8p-15, 0x1p-24, 0x1p-23, 0x3p-24, 0.5, 1.5, 1024.0, 1.0009765625,
                               0x1p-5, 0x1.47cp-5, 0x1.998p-5};
    static const double b[] = {0x1.fep127, 0x1.fcp127, 0x1p127, 0x1p-133, 0x1p-126, 0x1.fcp-127, 1.0,
                               1.0078125, 256.0, 2.0, 0.0, 0x1p120, 3.0, 0x1.02p0, 65536.0};
    enum { NH = sizeof h / sizeof h[0], NB = sizeof b / sizeof b[0], M = 4 * 22 * 22 };
    static double a[M], e[M];
    static const double rt[] = {1e-3, 3.0, 0.5, 1.6e-2, 0.0}, at[] = {1e-5, 16.0, 0.0, 8.0, 1e-30};
    for (int fmt = 0; fmt < 2; fmt++) {
        const double *v = fmt ? b : h;
        int nv = fmt ? NB : NH, n = 0;
        for (int i = 0; i < 2 * nv; i++)
            for (int j = 0; j < 2 * nv; j++) {
                a[n] = (i & 1 ? -1 : 1) * v[i / 2];
                e[n++] = (j & 1 ? -1 : 1) * v[j / 2];
            }
        for (int t = 0; t < 5; t++)
            for (int eq = 0; eq < 2; eq++) {
                pp_format_id f = fmt ? PP_FMT_BF16 : PP_FMT_FP16;
                pp_close_opts o = {.rtol = rt[t], .atol = at[t], .equal_nan = eq, .torch_major = 2, .torch_minor = 1,
                                   .actual_format = f, .expected_format = f};
                pp_close_stats fast, slow;
                pp_close_stats_init(&slow);
                oracle_update(&slow, &o, a, e, n, 0);
                for (int l = 0; l < NLEVELS; l++) {
                    pp_close_stats_init(&fast);
                    pp_close_stats_update_isa(&fast, &o, a, e, n, 0, levels[l]);
                    const char *d = diff(&fast, &slow);
                    if (d)
                        report(d, &o, t);
                    assert_null(d);
                }
            }
    }
}

// The fp16/bf16 pass runs four pairs per vector (close.c, half_chunk): lanes whose roundings
// land in fp16's subnormal grid, on its ties (rtol·e and atol + |t| at odd multiples of 2^−25),
// on ±0, next to lanes that need pp_round (NaN, ±Inf, 65504 and beyond), over call lengths that
// leave every remainder of four and of the 64-pair chunk.
static void close_fast_half_lanes(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() ^ 0x4A1Fu};
    enum { M = 300 };
    static double a[M], e[M];
    static const double rt[] = {0.5, 0.25, 1.5, 1e-3, 3.0}, at[] = {0.0, 0x1p-25, 0x3p-26, 1e-5, 0x1p-14};
    static const double odd[] = {NAN, -NAN, INFINITY, -INFINITY, 65504.0, -65504.0, 65520.0, 0.0, -0.0};
    int bad = 0;
    for (int it = 0; it < (int)pp_test_iters(600) && bad < 5; it++) {
        pp_format_id f = pp_test_rng_next(&r) & 1 ? PP_FMT_BF16 : PP_FMT_FP16;
        // every other iteration without the odd values, in whole chunks, so that the chunk lanes
        // (close_lanes.h) take them and meet the same subnormal grid, ties and zeros
        int usual = it & 1;
        int n = usual ? PP_CLOSE_CHUNK * (1 + (int)(pp_test_rng_next(&r) % (M / PP_CLOSE_CHUNK)))
                      : 1 + (int)(pp_test_rng_next(&r) % M);
        for (int i = 0; i < n; i++) {
            uint64_t k = pp_test_rng_next(&r);
            double sg = k & 1 ? -1.0 : 1.0, x = sg * (double)((k >> 1) % 2048) * 0x1p-24;  // fp16 subnormals
            if ((k >> 20) % 4 == 0)
                x = sg * ldexp(1.0 + (double)((k >> 24) % 1024) / 1024.0, (int)((k >> 40) % 30) - 20);
            e[i] = pp_round(f, x, PP_RND_NE, 0);
            a[i] = pp_round(f, e[i] + (double)((int)((k >> 50) % 9) - 4) * 0x1p-24, PP_RND_NE, 0);
            if ((k >> 60) == 0 && !usual)
                a[i] = odd[(k >> 32) % 9];
            if ((k >> 56) % 32 == 1 && !usual)
                e[i] = odd[(k >> 36) % 9];
        }
        pp_close_opts o = {.rtol = rt[pp_test_rng_next(&r) % 5],
                           .atol = at[pp_test_rng_next(&r) % 5],
                           .equal_nan = (int)(pp_test_rng_next(&r) & 1),
                           .torch_major = 2,
                           .torch_minor = 1,
                           .actual_format = f,
                           .expected_format = f};
        pp_close_stats fast, slow;
        pp_close_stats_init(&fast);
        pp_close_stats_init(&slow);
        const char *d = run_both(&r, &o, a, e, n, &fast, &slow);
        if (d)
            report(d, &o, it), bad++;
    }
    assert_int_equal(bad, 0);
}

// Long runs of usual pairs (close_lanes.h: finite, exact differences), so that most chunks take
// the lanes, with a rare unusual pair (NaN, Inf, an overflowing or inexact binary64 difference,
// fp64's subnormal quantum) that sends its chunk to the one-pair code between lane chunks; ties
// of every maximum (repeated pairs); every format, version, tolerance and equality mode.
static void usual_pairs(pp_test_rng *r, const pp_close_opts *o, double *a, double *e, int64_t n)
{
    pp_format_id fa = o->actual_format, fe = o->expected_format;
    static const double odd[] = {NAN, -NAN, INFINITY, -INFINITY, DBL_MAX, -DBL_MAX, 0x1p-1074, 0x1p-1060, 0.0, -0.0};
    int scale = (int)(pp_test_rng_next(r) % 24) - 12;
    for (int64_t i = 0; i < n; i++) {
        uint64_t k = pp_test_rng_next(r);
        double x = (pp_test_rng_unit(r) - 0.5) * ldexp(1.0, scale + (int)(k % 8));
        if (k % 97 == 0)  // the format's smallest magnitudes
            x = (pp_test_rng_unit(r) - 0.5) * ldexp(1.0, pp_format_get(fe).emin - (int)(k % 3));
        e[i] = pp_round(fe, x, PP_RND_NE, 0);
        switch ((k >> 8) % 8) {
        case 0: a[i] = pp_round(fa, e[i], PP_RND_NE, 0); break;  // equal where fa holds e
        case 1:
            if (i > 0) {
                int64_t j = (int64_t)(pp_test_rng_next(r) % (uint64_t)i);
                a[i] = a[j], e[i] = e[j];
                break;
            }
            /* fall through */
        case 2:
        case 3: {
            double y = pp_round(fa, e[i], PP_RND_NE, 0);
            a[i] = pp_round(fa, y + (double)((int)((k >> 16) % 9) - 4) * pp_ulp(fa, y), PP_RND_NE, 0);
            break;
        }
        default: {
            double allowed = o->atol + o->rtol * fabs(e[i]);
            a[i] = pp_round(fa, e[i] + allowed * ((double)((k >> 16) % 4096) / 1024.0 - 2.0), PP_RND_NE, 0);
            break;
        }
        }
        if ((k >> 40) % 1000 == 0)
            a[i] = odd[(k >> 50) % 10];
        if ((k >> 40) % 1000 == 1)
            e[i] = odd[(k >> 50) % 10];
        if (!isnan(a[i]))
            a[i] = pp_round(fa, a[i], PP_RND_NE, 0);
        if (!isnan(e[i]))
            e[i] = pp_round(fe, e[i], PP_RND_NE, 0);
    }
}

static void close_fast_lane_chunks(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() ^ 0x1A9Eu};
    static double a[NMAX], e[NMAX];
    int iters = (int)pp_test_iters(300), bad = 0;
    for (int it = 0; it < iters && bad < 5; it++) {
        pp_close_opts o;
        some_opts(&r, &o);
        if (pp_test_rng_next(&r) % 3 == 0)  // torch's defaults: about half the pairs mismatch
            pp_default_tolerances(o.actual_format, o.expected_format, &o.rtol, &o.atol);
        int64_t n = pp_test_rng_next(&r) % 2 ? 64 * (1 + (int64_t)(pp_test_rng_next(&r) % 60))
                                              : 1 + (int64_t)(pp_test_rng_next(&r) % NMAX);
        usual_pairs(&r, &o, a, e, n);
        pp_close_stats fast, slow;
        const char *f = run_both(&r, &o, a, e, n, &fast, &slow);
        if (f)
            report(f, &o, it), bad++;
    }
    assert_int_equal(bad, 0);
}

// The lanes take a chunk of usual pairs at every level and decline one with a single unusual
// pair in any lane, so the tests above exercise both sides of the split.
static void close_lanes_take_usual_decline_unusual(void **state)
{
    (void)state;
    double a[PP_CLOSE_CHUNK], e[PP_CLOSE_CHUNK];
    pp_close_chunk ch;
    static const pp_format_id fm[] = {PP_FMT_FP64, PP_FMT_FP32, PP_FMT_BF16};
    static const double bad_a[] = {NAN, INFINITY, -INFINITY, DBL_MAX, 1.0 + 0x1p-52, 0x1p-1070};
    static const double bad_e[] = {1.0, 1.0, 1.0, -DBL_MAX, 0x1p-80, 0x1p-1072};
    for (int f = 0; f < 3; f++) {
        pp_format F = pp_format_get(fm[f]);
        pp_close_lanes_ctx c = {.verdict = f == 0 ? PP_CLOSE_V_F64 : f == 1 ? PP_CLOSE_V_F32 : PP_CLOSE_V_BF16,
                                .rtol = 1e-3, .atol = 1e-5, .rtol32 = 1e-3f, .atol32 = 1e-5f,
                                .max_finite = F.max_finite, .emin = F.emin, .p = F.p};
        for (int l = 1; l < NLEVELS; l++) {
            pp_close_chunk_fn fn = pp_close_chunk_for((pp_isa)levels[l]);
            for (int i = 0; i < PP_CLOSE_CHUNK; i++)
                e[i] = pp_round(fm[f], 1.0 + i / 64.0, PP_RND_NE, 0), a[i] = pp_round(fm[f], e[i] * 1.001, PP_RND_NE, 0);
            assert_int_equal(fn(&c, a, e, &ch), 1);
            for (int b = 0; b < 6; b++) {
                if (f > 0 && b >= 3)  // the binary64-only cases
                    break;
                int lane = (b * 11) % PP_CLOSE_CHUNK;
                double sa = a[lane], se = e[lane];
                a[lane] = bad_a[b], e[lane] = bad_e[b];
                if (b == 5)  // fp64's subnormal quantum: ulp exponent −1074
                    assert_int_equal(f, 0);
                assert_int_equal(fn(&c, a, e, &ch), 0);
                a[lane] = sa, e[lane] = se;
            }
        }
    }
}

// The lanes' fp16/bf16 opmath roundings against pp_round, value by value: random finite fp16
// and bf16 values within a few binades of a random centre (subnormals included), mostly a few
// ulps apart or equal, so that a − e, rtol·e, atol + |t| and err/|e| land on the
// subnormal grid, on ties and on zeros. Per lane, torch's differences (reported where not
// close) and the verdict, from the chunk at every level, against the binary32 operations
// rounded by pp_round.
static double half_value(pp_test_rng *r, pp_format_id f, int center)
{
    uint64_t k = pp_test_rng_next(r);
    int E = center + (int)(k % 13) - 6;  // the exponent field, within 6 binades of center
    E = E < 0 ? 0 : E;
    int fr = (int)((k >> 8) % (f == PP_FMT_FP16 ? 1024 : 128)), bits = f == PP_FMT_FP16 ? 10 : 7;
    int bias = f == PP_FMT_FP16 ? 15 : 127;
    double v = E == 0 ? ldexp(fr, 1 - bias - bits) : ldexp((1 << bits) + fr, E - bias - bits);
    return (k >> 20) & 1 ? -v : v;
}

static void close_lanes_half_roundings(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() ^ 0x4A1Du};
    double a[PP_CLOSE_CHUNK], e[PP_CLOSE_CHUNK];
    pp_close_chunk ch;
    static const float rt[] = {0.0f, 0.5f, 1.5f, 3.0f, 1e-3f, 1.6e-2f};
    static const float at[] = {0.0f, 0x1p-25f, 0x3p-26f, 1e-5f, 0x1p-14f, 0x1p-130f};
    int bad = 0, taken = 0, iters = (int)pp_test_iters(3000);
    for (int it = 0; it < iters && bad < 5; it++) {
        pp_format_id f = it & 1 ? PP_FMT_BF16 : PP_FMT_FP16;
        pp_format F = pp_format_get(f);
        float rtol = rt[pp_test_rng_next(&r) % 6], atol = at[pp_test_rng_next(&r) % 6];
        pp_close_lanes_ctx c = {.verdict = f == PP_FMT_BF16 ? PP_CLOSE_V_BF16 : PP_CLOSE_V_FP16,
                                .equality = rtol == 0.0f && atol == 0.0f, .rtol = rtol, .atol = atol,
                                .rtol32 = rtol, .atol32 = atol, .max_finite = F.max_finite, .emin = F.emin, .p = F.p};
        // exponents around a centre (fp16's up to 2^11: no overflow), subnormals included
        int center = (int)(pp_test_rng_next(&r) % (f == PP_FMT_FP16 ? 26 : 230));
        for (int i = 0; i < PP_CLOSE_CHUNK; i++) {
            e[i] = half_value(&r, f, center);
            uint64_t k = pp_test_rng_next(&r) % 64;
            if (k == 0)  // unrelated
                a[i] = half_value(&r, f, center);
            else if (k < 16)
                a[i] = e[i];
            else  // near e: small differences, the subnormal grid
                a[i] = pp_round(f, e[i] + (double)((int)(pp_test_rng_next(&r) % 9) - 4) * pp_ulp(f, e[i]), PP_RND_NE, 0);
        }
        int64_t mism = 0;
        double ad[PP_CLOSE_CHUNK], rd[PP_CLOSE_CHUNK];
        for (int i = 0; i < PP_CLOSE_CHUNK; i++) {  // the oracle: binary32 operations, pp_round
            float af = (float)a[i], ef = (float)e[i];
            double err = fabs(pp_round(f, (double)(af - ef), PP_RND_NE, 0));
            double t = pp_round(f, (double)(rtol * ef), PP_RND_NE, 0);
            double allowed = pp_round(f, (double)(atol + (float)fabs(t)), PP_RND_NE, 0);
            double rel = pp_round(f, (double)((float)err / fabsf(ef)), PP_RND_NE, 0);
            int close = a[i] == e[i] || (!c.equality && isfinite(err) && err <= allowed);
            mism += !close;
            ad[i] = close ? 0.0 : err;
            rd[i] = close ? 0.0 : rel;
        }
        for (int l = 1; l < NLEVELS; l++) {
            if (!pp_close_chunk_for((pp_isa)levels[l])(&c, a, e, &ch))
                continue;  // a rounding for pp_round, or a NaN statistic: the one-pair code's
            taken++;
            int ok = ch.mismatched == mism;
            for (int i = 0; i < PP_CLOSE_CHUNK; i++)
                ok &= pp_test_same_bits(ch.ad[i], ad[i]) && pp_test_same_bits(ch.rd[i], rd[i]);
            if (!ok) {
                fprintf(stderr, "FAIL half lanes differ from pp_round (iteration %d, level %d, %s, rtol %g, atol %a)\n",
                        it, levels[l], F.name, (double)rtol, (double)atol);
                bad++;
            }
        }
    }
    assert_int_equal(bad, 0);
    assert_true(taken > iters / 2);  // many chunks taken: the lanes were tested, not skipped
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(close_fast_equals_oracle),
        cmocka_unit_test(close_fast_carry_pass_where_oracle_carries),
        cmocka_unit_test(close_fast_fp64_inexact_and_overflow),
        cmocka_unit_test(close_fast_half_rounding_edges),
        cmocka_unit_test(close_fast_half_lanes),
        cmocka_unit_test(close_fast_lane_chunks),
        cmocka_unit_test(close_lanes_take_usual_decline_unusual),
        cmocka_unit_test(close_lanes_half_roundings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
