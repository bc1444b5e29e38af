// test_close.c — pp_close_stats: hand-computed cases for torch's isclose and message numbers in
// both torch modes, the extra statistics, exact merging under random splits, and a brute-force
// cross-check of torch >= 2.1 arithmetic emulated a second way with MPFR.
#include "test_util.h"

#include <math.h>
#include <mpfr.h>

#include "core/close.h"

// ---------------------------------------------------------------------------------------------
// Helpers

static pp_close_opts opts(pp_format_id fa, pp_format_id fe, double rtol, double atol, int equal_nan,
                          int major, int minor)
{
    return (pp_close_opts){rtol, atol, equal_nan, major, minor, fa, fe};
}

static pp_close_stats run(const pp_close_opts *o, const double *a, const double *e, int64_t n)
{
    pp_close_stats s;
    pp_close_stats_init(&s);
    pp_close_stats_update(&s, o, a, e, n, 0);
    return s;
}

static int failures;

static void expect_max(const char *what, const pp_close_max *m, double value, int64_t index)
{
    if (!pp_test_same_or_nan(m->value, value) || m->index != index) {
        if (failures++ < 10) {
            fprintf(stderr, "FAIL %s: expected index %lld, got %lld\n", what, (long long)index,
                    (long long)m->index);
            pp_test_print_double("expected value", value);
            pp_test_print_double("got value", m->value);
        }
    }
}

static void expect_count(const char *what, int64_t got, int64_t want)
{
    if (got != want && failures++ < 10)
        fprintf(stderr, "FAIL %s: expected %lld, got %lld\n", what, (long long)want, (long long)got);
}

// ---------------------------------------------------------------------------------------------
// Formats, tolerances, versions

static void close_common_format_table(void **state)
{
    (void)state;
    const pp_format_id H = PP_FMT_FP16, B = PP_FMT_BF16, F = PP_FMT_FP32, T = PP_FMT_TF32,
                       D = PP_FMT_FP64, E4 = PP_FMT_E4M3, E5 = PP_FMT_E5M2;
    struct {
        pp_format_id a, b, want;
    } c[] = {
        {H, H, H},   {B, B, B},   {F, F, F},   {D, D, D},  {T, T, F},   {H, B, F},  {B, H, F},
        {H, F, F},   {B, F, F},   {T, H, F},   {B, T, F},  {D, H, D},   {B, D, D},  {T, D, D},
        {E4, E4, F}, {E5, E5, F}, {E4, E5, F}, {E4, H, F}, {B, E5, F},  {E4, D, D}, {F, E4, F},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        if (pp_common_format(c[i].a, c[i].b) != c[i].want) {
            fprintf(stderr, "FAIL common format of %s and %s\n", pp_format_get(c[i].a).name,
                    pp_format_get(c[i].b).name);
            fail();
        }
    }
}

static void close_default_tolerances(void **state)
{
    (void)state;
    double r, a;
    pp_default_tolerances(PP_FMT_FP16, PP_FMT_FP16, &r, &a);
    assert_true(r == 1e-3 && a == 1e-5);
    pp_default_tolerances(PP_FMT_BF16, PP_FMT_BF16, &r, &a);
    assert_true(r == 1.6e-2 && a == 1e-5);
    pp_default_tolerances(PP_FMT_FP32, PP_FMT_FP32, &r, &a);
    assert_true(r == 1.3e-6 && a == 1e-5);
    pp_default_tolerances(PP_FMT_TF32, PP_FMT_TF32, &r, &a);
    assert_true(r == 1.3e-6 && a == 1e-5);
    pp_default_tolerances(PP_FMT_FP64, PP_FMT_FP64, &r, &a);
    assert_true(r == 1e-7 && a == 1e-7);
    pp_default_tolerances(PP_FMT_E4M3, PP_FMT_E5M2, &r, &a);
    assert_true(r == 0 && a == 0);
    pp_default_tolerances(PP_FMT_BF16, PP_FMT_FP64, &r, &a);  // max of each: 1.6e-2, 1e-5
    assert_true(r == 1.6e-2 && a == 1e-5);
    pp_default_tolerances(PP_FMT_FP64, PP_FMT_FP32, &r, &a);  // 1.3e-6, 1e-5
    assert_true(r == 1.3e-6 && a == 1e-5);
    pp_default_tolerances(PP_FMT_E4M3, PP_FMT_FP16, &r, &a);
    assert_true(r == 1e-3 && a == 1e-5);
}

static void close_parse_torch_version(void **state)
{
    (void)state;
    struct {
        const char *s;
        int ok, major, minor;
    } c[] = {
        {"2.1", 1, 2, 1},         {"1.13", 1, 1, 13},        {"2.5.1", 1, 2, 5},
        {"1.10", 1, 1, 10},       {"2.3.0+cu121", 1, 2, 3},  {"2.6.0a0", 1, 2, 6},
        {"2.4.0rc1", 1, 2, 4},    {"2.5.0.dev20240801", 1, 2, 5}, {"10.0", 1, 10, 0},
        {"1.9", 0, 0, 0},         {"1.9.1", 0, 0, 0},        {"0.4", 0, 0, 0},
        {"2", 0, 0, 0},           {"2.", 0, 0, 0},           {".1", 0, 0, 0},
        {"2.1x", 0, 0, 0},        {"", 0, 0, 0},             {"2.1+", 0, 0, 0},
        {"v2.1", 0, 0, 0},        {"2.1.", 0, 0, 0},         {"2.1 ", 0, 0, 0},
        {"2.1rc", 0, 0, 0},       {"99999999.1", 0, 0, 0},   {"-2.1", 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        int ma = -7, mi = -7;
        int rc = pp_parse_torch_version(c[i].s, &ma, &mi);
        if ((rc == 0) != c[i].ok || (c[i].ok && (ma != c[i].major || mi != c[i].minor))) {
            fprintf(stderr, "FAIL parse '%s': rc %d, %d.%d\n", c[i].s, rc, ma, mi);
            fail();
        }
    }
    assert_int_equal(pp_parse_torch_version(NULL, &(int){0}, &(int){0}), -1);
    pp_close_opts o = opts(PP_FMT_FP32, PP_FMT_FP32, 0, 0, 0, 2, 0);
    assert_int_equal(pp_close_uses_common_dtype(&o), 0);
    o.torch_minor = 1;
    assert_int_equal(pp_close_uses_common_dtype(&o), 1);
    o.torch_major = 1, o.torch_minor = 13;
    assert_int_equal(pp_close_uses_common_dtype(&o), 0);
    o.torch_major = 3, o.torch_minor = 0;
    assert_int_equal(pp_close_uses_common_dtype(&o), 1);
}

// ---------------------------------------------------------------------------------------------
// Hand-computed cases

static void close_zeros_and_signed_zero(void **state)
{
    (void)state;
    failures = 0;
    double a[] = {0.0, -0.0, 0.0, 1e-6, -0.0};
    double e[] = {-0.0, 0.0, 0.0, 0.0, 1.0};
    for (int v = 0; v < 2; v++) {
        pp_close_opts o = opts(PP_FMT_FP32, PP_FMT_FP32, 0, 0, 0, 2, v ? 1 : 0);  // equality
        pp_close_stats s = run(&o, a, e, 5);
        // ±0 are equal; fl32(1e-6) vs 0 and -0 vs 1 mismatch
        expect_count("mismatched, equality with zeros", s.mismatched, 2);
        expect_max("abs", &s.abs_diff, 1.0, 4);
        expect_max("rel: 1e-6/0 is inf", &s.rel_diff, INFINITY, 3);
        o.rtol = 1.3e-6, o.atol = 1e-5;
        s = run(&o, a, e, 5);
        expect_count("mismatched, fp32 defaults", s.mismatched, 1);
        expect_max("abs", &s.abs_diff, 1.0, 4);
        expect_max("rel", &s.rel_diff, 1.0, 4);
        expect_count("all zero pairs in the equal bin", s.ulp_hist[PP_CLOSE_BIN_EQUAL], 3);
    }
    assert_int_equal(failures, 0);
}

static void close_nan_equal_nan(void **state)
{
    (void)state;
    failures = 0;
    double a[] = {1.0, NAN, NAN, 5.0, 2.0};
    double e[] = {1.0, NAN, 3.0, NAN, 9.0};
    for (int v = 0; v < 2; v++) {
        int major = 2, minor = v ? 1 : 0;
        pp_close_opts o = opts(PP_FMT_FP32, PP_FMT_FP32, 1.3e-6, 1e-5, 0, major, minor);
        pp_close_stats s = run(&o, a, e, 5);
        expect_count("mismatched, equal_nan off", s.mismatched, 4);
        expect_max("abs: the first NaN wins", &s.abs_diff, NAN, 1);
        expect_max("rel: the first NaN wins", &s.rel_diff, NAN, 1);
        expect_max("tolerance ratio: NaN", &s.tol_ratio, NAN, 1);
        expect_count("nan actual", s.nan_actual, 2);
        expect_count("nan expected", s.nan_expected, 2);
        expect_count("non-finite bin", s.ulp_hist[PP_CLOSE_BIN_NONFINITE], 3);
        o.equal_nan = 1;
        s = run(&o, a, e, 5);
        expect_count("mismatched, equal_nan on", s.mismatched, 3);
        expect_max("abs: NaN at 2", &s.abs_diff, NAN, 2);
        expect_max("tolerance ratio: NaN at 2", &s.tol_ratio, NAN, 2);
        expect_count("NaN/NaN stays in the non-finite bin", s.ulp_hist[PP_CLOSE_BIN_NONFINITE], 3);
        expect_count("non-finite pairs", pp_close_stats_nonfinite_pairs(&s), 3);
    }
    assert_int_equal(failures, 0);
}

static void close_infinities(void **state)
{
    (void)state;
    failures = 0;
    double a[] = {INFINITY, -INFINITY, INFINITY, INFINITY, 1.0, -INFINITY};
    double e[] = {INFINITY, -INFINITY, -INFINITY, 2.0, INFINITY, 0.0};
    for (int v = 0; v < 2; v++) {
        pp_close_opts o = opts(PP_FMT_FP32, PP_FMT_FP32, 1.3e-6, 1e-5, 0, 2, v ? 1 : 0);
        pp_close_stats s = run(&o, a, e, 6);
        expect_count("mismatched", s.mismatched, 4);
        expect_max("abs: first Inf", &s.abs_diff, INFINITY, 2);
        expect_max("rel: Inf/Inf is NaN (opposite infinities)", &s.rel_diff, NAN, 2);
        expect_max("tolerance ratio: Inf", &s.tol_ratio, INFINITY, 2);
        expect_count("equal infinities in the equal bin", s.ulp_hist[PP_CLOSE_BIN_EQUAL], 2);
        expect_count("non-finite bin", s.ulp_hist[PP_CLOSE_BIN_NONFINITE], 4);
        expect_count("inf actual", s.inf_actual, 5);
        expect_count("inf expected", s.inf_expected, 4);
        // Inf against a finite, nonzero expected: rel Inf; against zero: Inf too
        double a2[] = {INFINITY, 1.0}, e2[] = {2.0, INFINITY};
        s = run(&o, a2, e2, 2);
        expect_max("abs", &s.abs_diff, INFINITY, 0);
        expect_max("rel: 1.0 vs Inf is Inf/Inf", &s.rel_diff, NAN, 1);
    }
    assert_int_equal(failures, 0);
}

static void close_subnormals(void **state)
{
    (void)state;
    failures = 0;
    const double t32 = ldexp(1.0, -149), t16 = ldexp(1.0, -24);
    double a[] = {t32, 3 * t32, 0.0};
    double e[] = {0.0, t32, -t32};
    pp_close_opts o = opts(PP_FMT_FP32, PP_FMT_FP32, 1.3e-6, 1e-5, 0, 2, 1);
    pp_close_stats s = run(&o, a, e, 3);
    expect_count("subnormal fp32 differences are within atol", s.mismatched, 0);
    o.rtol = o.atol = 0;
    s = run(&o, a, e, 3);
    expect_count("equality", s.mismatched, 3);
    expect_max("abs", &s.abs_diff, 2 * t32, 1);
    expect_max("rel", &s.rel_diff, INFINITY, 0);
    expect_max("ulp: 2 quanta", &s.ulp_err, 2.0, 1);
    expect_count("<=1 ulp bin", s.ulp_hist[2], 2);
    expect_count("<=2 ulp bin", s.ulp_hist[3], 1);
    // fp16 subnormals in both modes
    double ah[] = {t16, 2 * t16}, eh[] = {0.0, t16};
    for (int v = 0; v < 2; v++) {
        pp_close_opts oh = opts(PP_FMT_FP16, PP_FMT_FP16, 0, 0, 0, 2, v ? 1 : 0);
        s = run(&oh, ah, eh, 2);
        expect_max("abs fp16", &s.abs_diff, t16, 0);
        expect_max("rel fp16", &s.rel_diff, INFINITY, 0);
    }
    assert_int_equal(failures, 0);
}

static void close_ties_first_index(void **state)
{
    (void)state;
    failures = 0;
    double a[] = {1.0, 3.0, 2.0, 3.0, 0.5};
    double e[] = {0.0, 0.0, 0.0, 0.0, 0.0};
    for (int v = 0; v < 2; v++) {
        pp_close_opts o = opts(PP_FMT_FP64, PP_FMT_FP64, 1e-7, 1e-7, 0, 2, v ? 1 : 0);
        pp_close_stats s = run(&o, a, e, 5);
        expect_max("abs: first of the tied maxima", &s.abs_diff, 3.0, 1);
        expect_max("rel: all Inf, the first wins", &s.rel_diff, INFINITY, 0);
        // the same in reversed chunks merged the other way round
        pp_close_stats p, q;
        pp_close_stats_init(&p);
        pp_close_stats_init(&q);
        pp_close_stats_update(&p, &o, a + 2, e + 2, 3, 2);
        pp_close_stats_update(&q, &o, a, e, 2, 0);
        pp_close_stats_merge(&p, &q);
        expect_max("merged abs", &p.abs_diff, 3.0, 1);
        expect_max("merged rel", &p.rel_diff, INFINITY, 0);
        // an update of an earlier range after a later one: the earlier tie still wins
        pp_close_stats_init(&p);
        pp_close_stats_update(&p, &o, a + 2, e + 2, 3, 2);
        pp_close_stats_update(&p, &o, a, e, 2, 0);
        expect_max("out-of-order updates abs", &p.abs_diff, 3.0, 1);
    }
    // matched pairs count as 0 at their own index: a tie of zeros resolves to index 0
    double a2[] = {1.0, 1.0}, e2[] = {1.0, 1.0};
    pp_close_opts o2 = opts(PP_FMT_FP32, PP_FMT_FP32, 0, 0, 0, 2, 1);
    pp_close_stats s2 = run(&o2, a2, e2, 2);
    expect_max("all close: abs 0 at index 0", &s2.abs_diff, 0.0, 0);
    expect_count("all close", s2.mismatched, 0);
    assert_int_equal(failures, 0);
}

static void close_all_close_and_all_mismatched(void **state)
{
    (void)state;
    failures = 0;
    enum { N = 64 };
    double a[N], e[N];
    for (int i = 0; i < N; i++) {
        e[i] = 1.0 + i / 64.0;
        a[i] = e[i];
    }
    pp_close_opts o = opts(PP_FMT_BF16, PP_FMT_BF16, 1.6e-2, 1e-5, 0, 2, 1);
    pp_close_stats s = run(&o, a, e, N);
    expect_count("all close", s.mismatched, 0);
    expect_count("numel", s.numel, N);
    for (int i = 0; i < N; i++)
        a[i] = -e[i];
    s = run(&o, a, e, N);
    expect_count("all mismatched", s.mismatched, N);
    expect_max("abs: largest |2e| (bf16 exact)", &s.abs_diff, 2 * e[N - 1], N - 1);
    expect_max("rel: 2 everywhere, first index", &s.rel_diff, 2.0, 0);
    assert_int_equal(failures, 0);
}

// The seed's "Greatest relative difference: 2784.0": in bf16 arithmetic (torch >= 2.1) the
// quotient is a bf16 value; in float64 (torch 1.10–2.0) it is the plain quotient.
static void close_bf16_rel_diff_is_bf16_value(void **state)
{
    (void)state;
    failures = 0;
    const double e0 = ldexp(1.0, -10);  // 0.0009765625
    double a[] = {2.71875, 2.0}, e[] = {e0, 0.000732421875};
    pp_close_opts o = opts(PP_FMT_BF16, PP_FMT_BF16, 1.3e-6, 1e-5, 0, 2, 1);
    pp_close_stats s = run(&o, a, e, 1);
    // a − e = 2.7177734375 in fp32, bf16 rounds it to 2.71875; 2.71875 / 2^-10 = 2784 exactly
    expect_max("bf16 abs", &s.abs_diff, 2.71875, 0);
    expect_max("bf16 rel", &s.rel_diff, 2784.0, 0);
    o.torch_minor = 0;
    s = run(&o, a, e, 1);
    expect_max("float64 abs", &s.abs_diff, 2.7177734375, 0);
    expect_max("float64 rel", &s.rel_diff, 2783.0, 0);
    // a rounded quotient: err = bf16(1.999267578125) = 2, fl32(2/0.000732421875) = 2730.6667,
    // whose bf16 neighbours are 2720 and 2736 (quantum 16): 2736
    o.torch_minor = 1;
    s = run(&o, a + 1, e + 1, 1);
    expect_max("bf16 abs rounded", &s.abs_diff, 2.0, 0);
    expect_max("bf16 rel rounded", &s.rel_diff, 2736.0, 0);
    o.torch_minor = 0;
    s = run(&o, a + 1, e + 1, 1);
    expect_max("float64 rel", &s.rel_diff, 1.999267578125 / 0.000732421875, 0);
    assert_int_equal(failures, 0);
}

// fp16 with bf16 promotes to fp32: the difference keeps fp32's bits, where bf16 would round
// 2.001953125 to 2 and fp16 arithmetic would keep it; the tolerance is fl32(atol).
static void close_fp16_bf16_mix_computes_in_fp32(void **state)
{
    (void)state;
    failures = 0;
    double a[] = {3.001953125}, e[] = {1.0};  // a is fp16 (quantum 2^-9 at 2), e bf16
    pp_close_opts o = opts(PP_FMT_FP16, PP_FMT_BF16, 0, 0, 0, 2, 1);
    pp_close_stats s = run(&o, a, e, 1);
    expect_max("fp32 abs", &s.abs_diff, 2.001953125, 0);
    // atol just below 2^-10 rounds to 2^-10 in fp32: close in fp32, not in float64
    double a2[] = {1.0009765625}, e2[] = {1.0};
    o.atol = 0.0009765625 - 1e-12;
    s = run(&o, a2, e2, 1);
    expect_count("fp32 tolerance: close", s.mismatched, 0);
    o.torch_minor = 0;
    s = run(&o, a2, e2, 1);
    expect_count("float64 tolerance: not close", s.mismatched, 1);
    // fp16 overflow of the difference (torch >= 2.1): err = Inf is never close, even with a
    // huge rtol; in float64 it is 131008, within 3·65504
    double a3[] = {65504.0}, e3[] = {-65504.0};
    pp_close_opts oh = opts(PP_FMT_FP16, PP_FMT_FP16, 3.0, 0.0, 0, 2, 1);
    s = run(&oh, a3, e3, 1);
    expect_count("fp16 difference overflows", s.mismatched, 1);
    expect_max("fp16 abs Inf", &s.abs_diff, INFINITY, 0);
    expect_max("fp16 rel Inf", &s.rel_diff, INFINITY, 0);
    oh.torch_minor = 0;
    s = run(&oh, a3, e3, 1);
    expect_count("float64: close", s.mismatched, 0);
    assert_int_equal(failures, 0);
}

// Tolerance ratio, ulp bins at their exact edges, mean and RMS.
static void close_extra_stats_by_hand(void **state)
{
    (void)state;
    failures = 0;
    // Actual fp32, expected 1.0 (ulp_fp32(1) = U = 2^-23): ratios 0, 0.5, 1, 1.5, 2, 3, 4, 2^10,
    // 2^20, 2^21 (each a an fp32 value, each ratio exact).
    const double U = ldexp(1.0, -23);
    double a[] = {1.0, 1.0 - U / 2, 1.0 + U, 1.0 - 1.5 * U, 1.0 + 2 * U, 1.0 + 3 * U,
                  1.0 + 4 * U, 1.0 + 1024 * U, 1.0 + 1048576 * U, 1.0 + 2097152 * U};
    double e[10];
    for (int i = 0; i < 10; i++)
        e[i] = 1.0;
    pp_close_opts o = opts(PP_FMT_FP32, PP_FMT_FP64, 0.0, 0.0, 0, 2, 1);
    pp_close_stats s = run(&o, a, e, 10);
    int64_t want[PP_CLOSE_ULP_BINS] = {0};
    want[0] = 1, want[1] = 1, want[2] = 1, want[3] = 2, want[4] = 2, want[12] = 1, want[22] = 1,
    want[23] = 1;
    for (int k = 0; k < PP_CLOSE_ULP_BINS; k++) {
        char what[64];
        snprintf(what, sizeof what, "ulp bin %d", k);
        expect_count(what, s.ulp_hist[k], want[k]);
    }
    expect_max("max ulp error", &s.ulp_err, 2097152.0, 9);
    expect_max("max absolute error", &s.abs_err, 2097152.0 * U, 9);  // 2^-2, every pair counted

    // The max absolute error covers close pairs too (torch's abs_diff counts them as 0), skips
    // NaN and infinite operands, and its ties go to the first index: |−0 − +0| = 0 at 0,
    // |0.5 − 0.25| = 0.25 at 1 (close under rtol 1), NaN at 2 and Inf at 3 skipped, 0.25 again at 4.
    pp_close_opts ol = opts(PP_FMT_FP32, PP_FMT_FP32, 1.0, 0.0, 0, 2, 1);
    double az[] = {-0.0, 0.5, NAN, INFINITY, 1.0}, ez[] = {0.0, 0.25, 1.0, 1.0, 0.75};
    s = run(&ol, az, ez, 5);
    expect_count("close pairs", s.numel - s.mismatched, 3);
    expect_max("torch's greatest abs diff (NaN above all)", &s.abs_diff, NAN, 2);
    expect_max("max absolute error", &s.abs_err, 0.25, 1);

    // Edges met by the rounded difference. Actual fp16 a = 2^-12; expected −(2^-12 − 2^-65)
    // (binade [2^-13, 2^-12): ulp_fp16 = 2^-23): a − e = 2^-11 − 2^-65, a binary64 tie that
    // rounds to even 2^-11, so fl(d)/ulp = 2^12 exactly while the exact ratio is just below:
    // bin "<= 2^12" (14).
    pp_close_opts oh = opts(PP_FMT_FP16, PP_FMT_FP64, 0.0, 0.0, 0, 2, 1);
    double a1[] = {ldexp(1.0, -12)}, e1[] = {-(ldexp(1.0, -12) - ldexp(1.0, -65))};
    s = run(&oh, a1, e1, 1);
    expect_count("edge from below stays in bin <=2^12", s.ulp_hist[14], 1);
    expect_max("rounded ratio", &s.ulp_err, 4096.0, 0);
    // Expected −(2^-12 + 2^-64) (binade [2^-12, 2^-11): ulp 2^-22): a − e = 2^-11 + 2^-64, a tie
    // rounding to 2^-11; fl(d)/ulp = 2^11 exactly, the exact ratio just above: bin "<= 2^12" (14),
    // not "<= 2^11" (13).
    double e2[] = {-(ldexp(1.0, -12) + ldexp(1.0, -64))};
    s = run(&oh, a1, e2, 1);
    expect_count("edge from above moves to bin <=2^12", s.ulp_hist[14], 1);
    expect_max("rounded ratio", &s.ulp_err, 2048.0, 0);

    // Tolerance ratio |a − e| / (atol + rtol·|e|), mean and RMS of |a − e| (fp64: plain numbers).
    double a3[] = {1.0, 3.0, 2.0, 0.0}, e3[] = {1.0, 1.0, 0.0, INFINITY};
    pp_close_opts o3 = opts(PP_FMT_FP64, PP_FMT_FP64, 0.5, 0.5, 0, 2, 1);
    s = run(&o3, a3, e3, 3);
    expect_max("tolerance ratio: 2/(0.5 + 0.5) = 2, then 2/0.5 = 4", &s.tol_ratio, 4.0, 2);
    if (!pp_test_same_or_nan(pp_close_stats_mean_abs(&s), 4.0 / 3.0) ||
        !pp_test_same_or_nan(pp_close_stats_rms(&s), sqrt(8.0 / 3.0))) {
        failures++;
        fprintf(stderr, "FAIL mean/RMS of |d| = 0, 2, 2\n");
        pp_test_print_double("mean", pp_close_stats_mean_abs(&s));
        pp_test_print_double("rms", pp_close_stats_rms(&s));
    }
    s = run(&o3, a3, e3, 4);
    expect_max("tolerance ratio: Inf from the infinite pair", &s.tol_ratio, INFINITY, 3);
    expect_count("finite pairs", s.n_finite, 3);
    expect_count("non-finite pairs", pp_close_stats_nonfinite_pairs(&s), 1);
    if (!pp_test_same_or_nan(pp_close_stats_mean_abs(&s), 4.0 / 3.0))
        failures++;
    pp_close_opts oz = opts(PP_FMT_FP64, PP_FMT_FP64, 0, 0, 0, 2, 1);
    s = run(&oz, a3, e3, 2);
    expect_max("zero tolerance and a difference: Inf", &s.tol_ratio, INFINITY, 1);
    pp_close_stats empty;
    pp_close_stats_init(&empty);
    assert_true(isnan(pp_close_stats_mean_abs(&empty)) && isnan(pp_close_stats_rms(&empty)));
    // a difference beyond binary64: exact sums still hold it (mean of one pair = 2·max)
    double a4[] = {1.7976931348623157e308}, e4[] = {-1.7976931348623157e308};
    s = run(&oz, a4, e4, 1);
    expect_max("tolerance ratio: overflowing difference", &s.tol_ratio, INFINITY, 0);
    expect_count("overflowing difference: huge bin", s.ulp_hist[PP_CLOSE_BIN_HUGE], 1);
    if (!pp_test_same_or_nan(pp_close_stats_mean_abs(&s), INFINITY))  // 2·max rounds to Inf
        failures++;
    double a5[] = {1.7976931348623157e308, 0.0}, e5[] = {-1.7976931348623157e308, 0.0};
    s = run(&oz, a5, e5, 2);
    if (!pp_test_same_or_nan(pp_close_stats_mean_abs(&s), INFINITY))  // Σ is 2·max, rounded Inf before /2
        failures++;
    assert_int_equal(failures, 0);
}

// ---------------------------------------------------------------------------------------------
// Random pairs (shared by the merge test and the brute-force cross-check)

static const pp_format_id any_formats[] = {PP_FMT_FP16, PP_FMT_BF16, PP_FMT_FP32, PP_FMT_TF32,
                                           PP_FMT_FP64, PP_FMT_E4M3, PP_FMT_E5M2};

static double random_in(pp_test_rng *r, pp_format_id f)
{
    pp_format F = pp_format_get(f);
    uint64_t k = pp_test_rng_next(r) % 16;
    if (k == 0) {
        static const double sp[] = {0.0, -0.0, NAN, INFINITY, -INFINITY, 1.0, -1.0};
        return pp_round(f, sp[pp_test_rng_next(r) % 7], PP_RND_NE, 0);
    }
    if (k == 1)  // any bit pattern
        return f == PP_FMT_FP64 ? (double)0 + (double)(int64_t)0 + ldexp(pp_test_rng_unit(r) - 0.5, (int)(pp_test_rng_next(r) % 2000) - 1000)
                                : pp_decode(f, pp_test_rng_next(r) & (F.storage_bits == 64 ? ~0ull : ((1ull << F.storage_bits) - 1)));
    if (k == 2)  // subnormal of f
        return pp_round(f, ldexp(pp_test_rng_unit(r), F.emin) * ((pp_test_rng_next(r) & 1) ? -1 : 1), PP_RND_NE, 0);
    // moderate magnitude
    double x = (1.0 + pp_test_rng_unit(r)) * ldexp(1.0, (int)(pp_test_rng_next(r) % 24) - 12) * ((pp_test_rng_next(r) & 1) ? -1 : 1);
    return pp_round(f, x, PP_RND_NE, 0);
}

// n pairs: mostly near each other (a small relative or ulp-sized perturbation), many right at
// the tolerance boundary |a − e| ≈ atol + rtol·|e| (where each rounding step of isclose decides),
// some unrelated, some copies of an earlier pair (tied maxima).
static void random_pairs(pp_test_rng *r, const pp_close_opts *o, double *a, double *e, int64_t n)
{
    pp_format_id fa = o->actual_format, fe = o->expected_format;
    for (int64_t i = 0; i < n; i++) {
        uint64_t k = pp_test_rng_next(r) % 10;
        if (k >= 7) {  // at the boundary, give or take a few ulps of the actual format
            double x = random_in(r, fe);
            e[i] = x;
            double allowed = o->atol + o->rtol * fabs(x);
            double y = x + ((pp_test_rng_next(r) & 1) ? allowed : -allowed);
            y = pp_round(fa, y, PP_RND_NE, 0);
            int steps = (int)(pp_test_rng_next(r) % 5) - 2;
            if (isfinite(y))
                y = pp_round(fa, y + steps * pp_ulp(fa, y), PP_RND_NE, 0);
            a[i] = y;
        } else if (k == 0 && i > 0) {
            int64_t j = (int64_t)(pp_test_rng_next(r) % (uint64_t)i);
            a[i] = a[j];
            e[i] = e[j];
        } else if (k <= 2) {
            a[i] = random_in(r, fa);
            e[i] = random_in(r, fe);
        } else {
            double x = random_in(r, fe);
            e[i] = x;
            double d = ldexp(pp_test_rng_unit(r) - 0.5, -(int)(pp_test_rng_next(r) % 30));
            double y = isfinite(x) ? x + x * d + (pp_test_rng_next(r) % 4 == 0 ? ldexp(pp_test_rng_unit(r), -20) : 0.0) : x;
            a[i] = pp_round(fa, y, PP_RND_NE, 0);
        }
    }
}

static void random_opts(pp_test_rng *r, pp_close_opts *o)
{
    o->actual_format = any_formats[pp_test_rng_next(r) % 7];
    o->expected_format = pp_test_rng_next(r) % 2 ? o->actual_format : any_formats[pp_test_rng_next(r) % 7];
    static const int ver[][2] = {{1, 12}, {1, 13}, {2, 0}, {2, 1}, {2, 5}, {2, 1}};
    int v = (int)(pp_test_rng_next(r) % 6);
    o->torch_major = ver[v][0];
    o->torch_minor = ver[v][1];
    o->equal_nan = (int)(pp_test_rng_next(r) & 1);
    static const double rt[] = {1e-3, 1.6e-2, 1.3e-6, 1e-7, 0.5, 0.0, 3.0};
    static const double at[] = {1e-5, 1e-7, 0.0, 1e-3, 1.0, 1e-30};
    switch (pp_test_rng_next(r) % 3) {
    case 0: pp_default_tolerances(o->actual_format, o->expected_format, &o->rtol, &o->atol); break;
    case 1: o->rtol = 0, o->atol = 0; break;
    default: o->rtol = rt[pp_test_rng_next(r) % 7], o->atol = at[pp_test_rng_next(r) % 6]; break;
    }
}

// Are the two accumulators' sums the same real number? The rounded values agree, and so do the
// rounded residuals after subtracting that value (twice: 106+ bits of agreement at every scale).
static int sums_equal(const pp_exactsum *x, const pp_exactsum *y)
{
    pp_exactsum cx = *x, cy = *y;
    for (int level = 0; level < 3; level++) {
        double vx = pp_exactsum_value(&cx), vy = pp_exactsum_value(&cy);
        if (!pp_test_same_or_nan(vx, vy) && !(vx == 0 && vy == 0))
            return 0;
        if (!isfinite(vx))
            return 1;
        pp_exactsum_add(&cx, -vx);
        pp_exactsum_add(&cy, -vx);
    }
    return 1;
}

static int max_equal(const pp_close_max *x, const pp_close_max *y)
{
    return x->index == y->index && (x->index < 0 || (pp_test_same_or_nan(x->value, y->value) &&
                                                     pp_test_same_or_nan(x->actual, y->actual) &&
                                                     pp_test_same_or_nan(x->expected, y->expected)));
}

// Every field of two statistics, by value (the accumulators by the real number they hold).
static int stats_equal(const pp_close_stats *x, const pp_close_stats *y, const char **field)
{
    *field = "numel";
    if (x->numel != y->numel)
        return 0;
    *field = "mismatched";
    if (x->mismatched != y->mismatched)
        return 0;
    *field = "abs_diff";
    if (!max_equal(&x->abs_diff, &y->abs_diff))
        return 0;
    *field = "rel_diff";
    if (!max_equal(&x->rel_diff, &y->rel_diff))
        return 0;
    *field = "tol_ratio";
    if (!max_equal(&x->tol_ratio, &y->tol_ratio))
        return 0;
    *field = "ulp_err";
    if (!max_equal(&x->ulp_err, &y->ulp_err))
        return 0;
    *field = "abs_err";
    if (!max_equal(&x->abs_err, &y->abs_err))
        return 0;
    *field = "counts";
    if (x->n_finite != y->n_finite || x->nan_actual != y->nan_actual ||
        x->inf_actual != y->inf_actual || x->nan_expected != y->nan_expected ||
        x->inf_expected != y->inf_expected)
        return 0;
    *field = "ulp_hist";
    if (memcmp(x->ulp_hist, y->ulp_hist, sizeof x->ulp_hist))
        return 0;
    *field = "sum_abs";
    if (!sums_equal(&x->sum_abs, &y->sum_abs))
        return 0;
    *field = "sum_sq";
    if (!sums_equal(&x->sum_sq, &y->sum_sq))
        return 0;
    return 1;
}

static void print_opts(const pp_close_opts *o)
{
    fprintf(stderr, "  opts: %s vs %s, rtol %.17g, atol %.17g, equal_nan %d, torch %d.%d\n",
            pp_format_get(o->actual_format).name, pp_format_get(o->expected_format).name, o->rtol,
            o->atol, o->equal_nan, o->torch_major, o->torch_minor);
}

// ---------------------------------------------------------------------------------------------
// Exact merging

static void close_merge_random_splits(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() + 11};
    failures = 0;
    enum { NMAX = 400, K = 6 };
    double a[NMAX], e[NMAX];
    uint64_t iters = pp_test_iters(300);
    for (uint64_t it = 0; it < iters && failures < 10; it++) {
        pp_close_opts o;
        random_opts(&r, &o);
        int64_t n = 1 + (int64_t)(pp_test_rng_next(&r) % NMAX);
        random_pairs(&r, &o, a, e, n);
        pp_close_stats one = run(&o, a, e, n);
        // cut [0, n) into chunks; give each chunk to a random accumulator, in a random order
        int64_t cut[2 * K + 1];
        int nc = 1 + (int)(pp_test_rng_next(&r) % (2 * K));
        cut[0] = 0;
        cut[nc] = n;
        for (int k = 1; k < nc; k++)
            cut[k] = (int64_t)(pp_test_rng_next(&r) % (uint64_t)(n + 1));
        for (int k = 1; k < nc; k++)
            for (int j = k; j > 1 && cut[j - 1] > cut[j]; j--) {
                int64_t t = cut[j];
                cut[j] = cut[j - 1];
                cut[j - 1] = t;
            }
        int order[2 * K];
        for (int k = 0; k < nc; k++)
            order[k] = k;
        for (int k = nc; k > 1; k--) {
            int j = (int)(pp_test_rng_next(&r) % (uint64_t)k), t = order[k - 1];
            order[k - 1] = order[j];
            order[j] = t;
        }
        pp_close_stats part[K];
        int alive[K];
        for (int k = 0; k < K; k++) {
            pp_close_stats_init(&part[k]);
            alive[k] = 1;
        }
        for (int k = 0; k < nc; k++) {
            int c = order[k];
            pp_close_stats_update(&part[pp_test_rng_next(&r) % K], &o, a + cut[c], e + cut[c],
                                  cut[c + 1] - cut[c], cut[c]);
        }
        for (int left = K; left > 1; left--) {
            int x, y;
            do {
                x = (int)(pp_test_rng_next(&r) % K);
                y = (int)(pp_test_rng_next(&r) % K);
            } while (x == y || !alive[x] || !alive[y]);
            pp_close_stats_merge(&part[x], &part[y]);
            alive[y] = 0;
        }
        int last = 0;
        while (!alive[last])
            last++;
        const char *field;
        if (!stats_equal(&one, &part[last], &field) && failures++ < 10) {
            fprintf(stderr, "FAIL merged statistics differ from one pass in %s (n %lld, %d chunks)\n",
                    field, (long long)n, nc);
            print_opts(&o);
            pp_test_report_seed();
        }
    }
    assert_int_equal(failures, 0);
}

// ---------------------------------------------------------------------------------------------
// Brute force: torch's arithmetic emulated a second way, with MPFR

typedef struct emu {
    mpfr_t x, y, r, t;
} emu;

static void emu_init(emu *m)
{
    mpfr_inits2(64, m->x, m->y, (mpfr_ptr)0);
    mpfr_init2(m->r, 400);  // + − × of binary32 values are exact here; ÷ is rounded far below
    mpfr_init2(m->t, 420);
}

static void emu_clear(emu *m)
{
    mpfr_clears(m->x, m->y, m->r, m->t, (mpfr_ptr)0);
}

// Rounds m->r to format f, to nearest even, with f's subnormals and overflow to Inf: scale to
// the quantum, mpfr_rint (ties to even), scale back. Independent of pp_round.
static double quantum_round(emu *m, pp_format_id f)
{
    if (mpfr_nan_p(m->r))
        return NAN;
    if (mpfr_inf_p(m->r) || mpfr_zero_p(m->r))
        return mpfr_get_d(m->r, MPFR_RNDN);
    pp_format F = pp_format_get(f);
    long E = (long)mpfr_get_exp(m->r) - 1;  // |r| in [2^E, 2^(E+1))
    if (E < F.emin)
        E = F.emin;
    long qe = E - F.p + 1;
    mpfr_mul_2si(m->t, m->r, -qe, MPFR_RNDN);
    mpfr_rint(m->t, m->t, MPFR_RNDN);
    mpfr_mul_2si(m->t, m->t, qe, MPFR_RNDN);
    double v = mpfr_get_d(m->t, MPFR_RNDN);
    if (fabs(v) > F.max_finite)
        v = copysign(INFINITY, v);
    return v;
}

// fl_f(x op y) for binary32-or-narrower operands (op one of + - * /), the result rounded to f.
static double emu_op(emu *m, char op, double x, double y, pp_format_id f)
{
    mpfr_set_d(m->x, x, MPFR_RNDN);
    mpfr_set_d(m->y, y, MPFR_RNDN);
    switch (op) {
    case '+': mpfr_add(m->r, m->x, m->y, MPFR_RNDN); break;
    case '-': mpfr_sub(m->r, m->x, m->y, MPFR_RNDN); break;
    case '*': mpfr_mul(m->r, m->x, m->y, MPFR_RNDN); break;
    default: mpfr_div(m->r, m->x, m->y, MPFR_RNDN); break;
    }
    return quantum_round(m, f);
}

// round_C(fl32(x op y)): fp16/bf16 opmath, or plain fl32 for C = fp32.
static double emu_c(emu *m, char op, double x, double y, pp_format_id c)
{
    double v = emu_op(m, op, x, y, PP_FMT_FP32);
    if (c == PP_FMT_FP32)
        return v;
    mpfr_set_d(m->r, v, MPFR_RNDN);
    return quantum_round(m, c);
}

// torch.max(v, 0) on CPU: the first NaN, else the first maximal value.
static void naive_max(const double *v, int64_t n, double *value, int64_t *index)
{
    *value = v[0];
    *index = 0;
    for (int64_t i = 1; i < n && !isnan(*value); i++) {
        if (isnan(v[i]) || v[i] > *value) {
            *value = v[i];
            *index = i;
        }
    }
}

typedef struct naive {
    int64_t mismatched, n_finite, nan_a, inf_a, nan_e, inf_e;
    double abs_v, rel_v, tol_v, ulp_v;
    int64_t abs_i, rel_i, tol_i, ulp_i;
    int64_t hist[PP_CLOSE_ULP_BINS];
    double sum_abs, sum_sq;
} naive;

// The whole computation, the slow way: torch's tensor program step by step (isclose, abs_diff
// with matched zeroed, rel_diff, max), then the extra statistics with exact MPFR comparisons.
static void naive_stats(emu *m, const pp_close_opts *o, const double *a, const double *e, int64_t n,
                        double *absd, double *reld, double *tolr, double *ulps, naive *out)
{
    memset(out, 0, sizeof *out);
    int half = o->torch_major > 2 || (o->torch_major == 2 && o->torch_minor >= 1);
    pp_format_id c = half ? pp_common_format(o->actual_format, o->expected_format) : PP_FMT_FP64;
    int equality = o->rtol == 0 && o->atol == 0;
    mpfr_set_d(m->r, o->rtol, MPFR_RNDN);
    double r32 = quantum_round(m, PP_FMT_FP32);
    mpfr_set_d(m->r, o->atol, MPFR_RNDN);
    double a32 = quantum_round(m, PP_FMT_FP32);
    mpfr_t S1, S2, D, B;
    mpfr_inits2(4400, S1, S2, D, B, (mpfr_ptr)0);
    mpfr_set_zero(S1, 1);
    mpfr_set_zero(S2, 1);
    int matched_count = 0;
    for (int64_t i = 0; i < n; i++) {
        double x = a[i], y = e[i];
        int close = x == y || (o->equal_nan && isnan(x) && isnan(y));
        double err;
        if (c == PP_FMT_FP64)
            err = fabs(x - y);
        else
            err = fabs(emu_c(m, '-', x, y, c));
        if (!close && !equality) {
            double allowed;
            if (c == PP_FMT_FP64)
                allowed = o->atol + fabs(o->rtol * y);
            else
                allowed = emu_c(m, '+', a32, fabs(emu_c(m, '*', r32, y, c)), c);
            close = isfinite(err) && err <= allowed;
        }
        matched_count += close;
        absd[i] = close ? 0.0 : err;
        double rel = c == PP_FMT_FP64 ? absd[i] / fabs(y) : emu_c(m, '/', absd[i], fabs(y), c);
        reld[i] = close ? 0.0 : rel;

        // extra statistics
        if (x == y)
            tolr[i] = 0;
        else if (isnan(x) || isnan(y))
            tolr[i] = (o->equal_nan && isnan(x) && isnan(y)) ? 0 : NAN;
        else if (isinf(fabs(x - y)))
            tolr[i] = INFINITY;
        else
            tolr[i] = (o->atol + o->rtol * fabs(y)) == 0 ? INFINITY : fabs(x - y) / (o->atol + o->rtol * fabs(y));
        out->nan_a += isnan(x) != 0;
        out->inf_a += isinf(x) != 0;
        out->nan_e += isnan(y) != 0;
        out->inf_e += isinf(y) != 0;
        ulps[i] = -1;  // not offered
        if (isfinite(x) && isfinite(y)) {
            out->n_finite++;
            mpfr_set_d(D, x, MPFR_RNDN);
            mpfr_sub_d(D, D, y, MPFR_RNDN);  // exact at 4400 bits
            mpfr_abs(D, D, MPFR_RNDN);
            mpfr_add(S1, S1, D, MPFR_RNDN);
            mpfr_sqr(B, D, MPFR_RNDN);
            mpfr_add(S2, S2, B, MPFR_RNDN);
            if (x == y) {
                out->hist[0]++;
                ulps[i] = 0;
                continue;
            }
            double ulp = pp_ulp(o->actual_format, y);
            ulps[i] = fabs(x - y) / ulp;
            int bin = PP_CLOSE_BIN_HUGE;
            for (int j = -1; j <= 20; j++) {  // the first edge 2^j·ulp that |d| does not exceed
                mpfr_set_d(B, ulp, MPFR_RNDN);
                mpfr_mul_2si(B, B, j, MPFR_RNDN);
                if (mpfr_cmp(D, B) <= 0) {
                    bin = j + 2;
                    break;
                }
            }
            out->hist[bin]++;
        } else if (x == y) {
            out->hist[0]++;
            ulps[i] = 0;
        } else {
            out->hist[PP_CLOSE_BIN_NONFINITE]++;
        }
    }
    out->mismatched = n - matched_count;
    naive_max(absd, n, &out->abs_v, &out->abs_i);
    naive_max(reld, n, &out->rel_v, &out->rel_i);
    naive_max(tolr, n, &out->tol_v, &out->tol_i);
    out->ulp_v = -1;
    out->ulp_i = -1;
    for (int64_t i = 0; i < n; i++) {  // offered only where ulps[i] >= 0 (no NaN there)
        if (ulps[i] >= 0 && (out->ulp_i < 0 || ulps[i] > out->ulp_v)) {
            out->ulp_v = ulps[i];
            out->ulp_i = i;
        }
    }
    out->sum_abs = mpfr_get_d(S1, MPFR_RNDN);
    out->sum_sq = mpfr_get_d(S2, MPFR_RNDN);
    mpfr_clears(S1, S2, D, B, (mpfr_ptr)0);
}

static void brute_fail(const char *what, const pp_close_opts *o, double want, int64_t wi, double got,
                       int64_t gi, const double *a, const double *e)
{
    if (failures++ >= 10)
        return;
    fprintf(stderr, "FAIL brute force: %s: naive index %lld, pp_close index %lld\n", what,
            (long long)wi, (long long)gi);
    print_opts(o);
    pp_test_print_double("naive", want);
    pp_test_print_double("pp_close", got);
    if (wi >= 0) {
        pp_test_print_double("actual[naive index]", a[wi]);
        pp_test_print_double("expected[naive index]", e[wi]);
    }
    pp_test_report_seed();
}

static void close_bruteforce_against_mpfr(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() + 23};
    failures = 0;
    enum { NMAX = 300 };
    static double a[NMAX], e[NMAX], w1[NMAX], w2[NMAX], w3[NMAX], w4[NMAX];
    emu m;
    emu_init(&m);
    uint64_t iters = pp_test_iters(1500);
    for (uint64_t it = 0; it < iters && failures < 10; it++) {
        pp_close_opts o;
        random_opts(&r, &o);
        if (it % 2 == 0) {  // half the runs in the half-precision opmath paths
            static const pp_format_id h[] = {PP_FMT_FP16, PP_FMT_BF16};
            o.actual_format = h[pp_test_rng_next(&r) % 2];
            o.expected_format = pp_test_rng_next(&r) % 4 ? o.actual_format : h[pp_test_rng_next(&r) % 2];
            o.torch_major = 2;
            o.torch_minor = 1 + (int)(pp_test_rng_next(&r) % 5);
        }
        int64_t n = 1 + (int64_t)(pp_test_rng_next(&r) % NMAX);
        random_pairs(&r, &o, a, e, n);
        pp_close_stats s = run(&o, a, e, n);
        naive nv;
        naive_stats(&m, &o, a, e, n, w1, w2, w3, w4, &nv);
        if (s.mismatched != nv.mismatched)
            brute_fail("mismatched count", &o, (double)nv.mismatched, -1, (double)s.mismatched, -1, a, e);
        if (!pp_test_same_or_nan(s.abs_diff.value, nv.abs_v) || s.abs_diff.index != nv.abs_i)
            brute_fail("greatest absolute difference", &o, nv.abs_v, nv.abs_i, s.abs_diff.value, s.abs_diff.index, a, e);
        if (!pp_test_same_or_nan(s.rel_diff.value, nv.rel_v) || s.rel_diff.index != nv.rel_i)
            brute_fail("greatest relative difference", &o, nv.rel_v, nv.rel_i, s.rel_diff.value, s.rel_diff.index, a, e);
        if (!pp_test_same_or_nan(s.tol_ratio.value, nv.tol_v) || s.tol_ratio.index != nv.tol_i)
            brute_fail("tolerance ratio", &o, nv.tol_v, nv.tol_i, s.tol_ratio.value, s.tol_ratio.index, a, e);
        if (s.ulp_err.index != nv.ulp_i || (nv.ulp_i >= 0 && !pp_test_same_or_nan(s.ulp_err.value, nv.ulp_v)))
            brute_fail("max ulp error", &o, nv.ulp_v, nv.ulp_i, s.ulp_err.value, s.ulp_err.index, a, e);
        if (s.abs_diff.index >= 0 && (!pp_test_same_or_nan(s.abs_diff.actual, a[s.abs_diff.index]) ||
                                      !pp_test_same_or_nan(s.abs_diff.expected, e[s.abs_diff.index])))
            brute_fail("operands stored at the abs index", &o, 0, -1, 0, s.abs_diff.index, a, e);
        for (int k = 0; k < PP_CLOSE_ULP_BINS; k++) {
            if (s.ulp_hist[k] != nv.hist[k]) {
                char what[64];
                snprintf(what, sizeof what, "ulp histogram bin %d", k);
                brute_fail(what, &o, (double)nv.hist[k], -1, (double)s.ulp_hist[k], -1, a, e);
            }
        }
        if (s.n_finite != nv.n_finite || s.nan_actual != nv.nan_a || s.inf_actual != nv.inf_a ||
            s.nan_expected != nv.nan_e || s.inf_expected != nv.inf_e)
            brute_fail("finite/NaN/Inf counts", &o, 0, -1, 0, -1, a, e);
        double s1 = pp_exactsum_value(&s.sum_abs), s2 = pp_exactsum_value(&s.sum_sq);
        if (!pp_test_same_or_nan(s1, nv.sum_abs))
            brute_fail("exact sum of |a - e|", &o, nv.sum_abs, -1, s1, -1, a, e);
        if (!pp_test_same_or_nan(s2, nv.sum_sq))
            brute_fail("exact sum of (a - e)^2", &o, nv.sum_sq, -1, s2, -1, a, e);
        if (nv.n_finite && !pp_test_same_or_nan(pp_close_stats_mean_abs(&s), nv.sum_abs / (double)nv.n_finite))
            brute_fail("mean", &o, nv.sum_abs / (double)nv.n_finite, -1, pp_close_stats_mean_abs(&s), -1, a, e);
    }
    emu_clear(&m);
    assert_int_equal(failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(close_common_format_table),
        cmocka_unit_test(close_default_tolerances),
        cmocka_unit_test(close_parse_torch_version),
        cmocka_unit_test(close_zeros_and_signed_zero),
        cmocka_unit_test(close_nan_equal_nan),
        cmocka_unit_test(close_infinities),
        cmocka_unit_test(close_subnormals),
        cmocka_unit_test(close_ties_first_index),
        cmocka_unit_test(close_all_close_and_all_mismatched),
        cmocka_unit_test(close_bf16_rel_diff_is_bf16_value),
        cmocka_unit_test(close_fp16_bf16_mix_computes_in_fp32),
        cmocka_unit_test(close_extra_stats_by_hand),
        cmocka_unit_test(close_merge_random_splits),
        cmocka_unit_test(close_bruteforce_against_mpfr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
