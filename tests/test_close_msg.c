// test_close_msg.c — pp_close_message byte for byte against torch's text (the seed report's
// lines, torch's own docstring examples, and hand-made cases for each version difference), and
// the layout of pp_close_stats_text.
#include "test_util.h"

#include <math.h>

#include "core/close.h"

// ---------------------------------------------------------------------------------------------
// Helpers

static pp_close_opts opts(pp_format_id fa, pp_format_id fe, double rtol, double atol, int equal_nan,
                          int major, int minor)
{
    return (pp_close_opts){rtol, atol, equal_nan, major, minor, fa, fe};
}

static void expect_message(const pp_close_opts *o, const double *a, const double *e, int ndim,
                           const int64_t *shape, int want_rc, const char *want)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        n *= shape[d];
    pp_close_stats s;
    pp_close_stats_init(&s);
    pp_close_stats_update(&s, o, a, e, n, 0);
    char buf[2048];
    int rc = pp_close_message(&s, o, ndim, shape, buf, sizeof buf);
    if (rc != want_rc || strcmp(buf, want) != 0) {
        fprintf(stderr, "FAIL message (torch %d.%d): rc %d (want %d)\n--- want\n%s\n--- got\n%s\n---\n",
                o->torch_major, o->torch_minor, rc, want_rc, want, buf);
        fail();
    }
}

// ---------------------------------------------------------------------------------------------
// The seed report (TransformerEngine PR 821): bf16 attention outputs of shape (1, 2, 256, 1536)
// compared at fp32 tolerances. The values are built so that torch >= 2.1 prints the report's
// numbers: 0.001953125 is a bf16 difference, 2784.0 a bf16 quotient.

enum { S0 = 1, S1 = 2, S2 = 256, S3 = 1536, SEED_N = S0 * S1 * S2 * S3 };

static int64_t flat(int64_t i, int64_t j, int64_t k, int64_t l)
{
    return ((i * S1 + j) * S2 + k) * S3 + l;
}

// Fills a seed-like pair: the first n_mis elements (skipping the two named ones) mismatch
// with a small difference (base_e + quantum vs base_e), the two named indices hold the greatest
// absolute and relative differences, the rest are equal.
static void seed_pair(double *a, double *e, int64_t n_mis, double base_e, double quantum,
                      int64_t abs_at, double abs_a, double abs_e, int64_t rel_at, double rel_a,
                      double rel_e)
{
    int64_t placed = 2;
    for (int64_t i = 0; i < SEED_N; i++) {
        if (i == abs_at || i == rel_at)
            continue;
        e[i] = base_e;
        a[i] = placed < n_mis ? base_e + quantum : base_e;
        placed += placed < n_mis;
    }
    a[abs_at] = abs_a, e[abs_at] = abs_e;
    a[rel_at] = rel_a, e[rel_at] = rel_e;
}

static void message_seed_report(void **state)
{
    (void)state;
    double *a = malloc(SEED_N * sizeof *a), *e = malloc(SEED_N * sizeof *e);
    assert_true(a && e);
    const int64_t shape[] = {S0, S1, S2, S3};
    pp_close_opts o = opts(PP_FMT_BF16, PP_FMT_BF16, 1.3e-6, 1e-5, 0, 2, 1);
    // "before": 0.25 + 2^-9 vs 0.25 (difference 2^-9); 87·2^-17 vs −2^-22, whose fp32
    // difference 87·2^-17 + 2^-22 rounds to 87·2^-17 in bf16: 87·2^-17 / 2^-22 = 2784.
    seed_pair(a, e, 487642, 0.125, ldexp(1.0, -10), flat(0, 0, 23, 1430), 0.25 + ldexp(1.0, -9),
              0.25, flat(0, 1, 97, 826), 87 * ldexp(1.0, -17), -ldexp(1.0, -22));
    expect_message(&o, a, e, 4, shape, 1,
                   "Tensor-likes are not close!\n"
                   "\n"
                   "Mismatched elements: 487642 / 786432 (62.0%)\n"
                   "Greatest absolute difference: 0.001953125 at index (0, 0, 23, 1430) (up to 1e-05 allowed)\n"
                   "Greatest relative difference: 2784.0 at index (0, 1, 97, 826) (up to 1.3e-06 allowed)");
    // torch 2.0 computes in float64: the relative difference is 2785·2^-22 / 2^-22
    o.torch_minor = 0;
    expect_message(&o, a, e, 4, shape, 1,
                   "Tensor-likes are not close!\n"
                   "\n"
                   "Mismatched elements: 487642 / 786432 (62.0%)\n"
                   "Greatest absolute difference: 0.001953125 at index (0, 0, 23, 1430) (up to 1e-05 allowed)\n"
                   "Greatest relative difference: 2785.0 at index (0, 1, 97, 826) (up to 1.3e-06 allowed)");
    // "after": 0.0625 + 2^-11 vs 0.0625 elsewhere, 0.125 + 2^-10 vs 0.125, 181·2^-18 vs −2^-22
    o.torch_minor = 1;
    seed_pair(a, e, 398818, 0.0625, ldexp(1.0, -11), flat(0, 0, 4, 1135), 0.125 + ldexp(1.0, -10),
              0.125, flat(0, 1, 97, 826), 181 * ldexp(1.0, -18), -ldexp(1.0, -22));
    expect_message(&o, a, e, 4, shape, 1,
                   "Tensor-likes are not close!\n"
                   "\n"
                   "Mismatched elements: 398818 / 786432 (50.7%)\n"
                   "Greatest absolute difference: 0.0009765625 at index (0, 0, 4, 1135) (up to 1e-05 allowed)\n"
                   "Greatest relative difference: 2896.0 at index (0, 1, 97, 826) (up to 1.3e-06 allowed)");
    free(a);
    free(e);
}

// ---------------------------------------------------------------------------------------------
// Version differences and layout rules

static void message_equality_and_1d_index(void **state)
{
    (void)state;
    double a[] = {1.0, 3.0, 2.0}, e[] = {1.0, 1.0, 1.0};
    const int64_t shape[] = {3};
    pp_close_opts o = opts(PP_FMT_FP32, PP_FMT_FP32, 0, 0, 0, 1, 13);
    expect_message(&o, a, e, 1, shape, 1,
                   "Tensor-likes are not equal!\n"
                   "\n"
                   "Mismatched elements: 2 / 3 (66.7%)\n"
                   "Greatest absolute difference: 2.0 at index (1,)\n"
                   "Greatest relative difference: 2.0 at index (1,)");
    o.torch_minor = 12;  // before 1.13 a 1-D index is a bare int
    expect_message(&o, a, e, 1, shape, 1,
                   "Tensor-likes are not equal!\n"
                   "\n"
                   "Mismatched elements: 2 / 3 (66.7%)\n"
                   "Greatest absolute difference: 2.0 at index 1\n"
                   "Greatest relative difference: 2.0 at index 1");
    // 2-D before 1.13: still a tuple
    const int64_t shape2[] = {1, 3};
    expect_message(&o, a, e, 2, shape2, 1,
                   "Tensor-likes are not equal!\n"
                   "\n"
                   "Mismatched elements: 2 / 3 (66.7%)\n"
                   "Greatest absolute difference: 2.0 at index (0, 1)\n"
                   "Greatest relative difference: 2.0 at index (0, 1)");
    // the line of torch 1.13's docstring example: "… 2.0 at index (1,) (up to 1e-05 allowed)"
    double a3[] = {1.0, 2.0, 3.0}, e3[] = {1.0, 4.0, 3.0};
    pp_close_opts d = opts(PP_FMT_FP32, PP_FMT_FP32, 1.3e-6, 1e-5, 0, 1, 13);
    expect_message(&d, a3, e3, 1, shape, 1,
                   "Tensor-likes are not close!\n"
                   "\n"
                   "Mismatched elements: 1 / 3 (33.3%)\n"
                   "Greatest absolute difference: 2.0 at index (1,) (up to 1e-05 allowed)\n"
                   "Greatest relative difference: 0.5 at index (1,) (up to 1.3e-06 allowed)");
}

static void message_all_close_is_empty(void **state)
{
    (void)state;
    double a[] = {1.0, 2.0}, e[] = {1.0, 2.0000001};
    const int64_t shape[] = {2};
    pp_close_opts o = opts(PP_FMT_FP64, PP_FMT_FP64, 1e-7, 1e-7, 0, 2, 1);
    expect_message(&o, a, e, 1, shape, 0, "");
    const int64_t empty_shape[] = {0};
    expect_message(&o, a, e, 1, empty_shape, 0, "");
}

static void message_default_tolerances_printed(void **state)
{
    (void)state;
    double a[] = {1.0, 2.0}, e[] = {1.0, 1.0};
    const int64_t shape[] = {2};
    pp_close_opts o = opts(PP_FMT_BF16, PP_FMT_BF16, 0, 0, 0, 2, 1);
    pp_default_tolerances(o.actual_format, o.expected_format, &o.rtol, &o.atol);
    expect_message(&o, a, e, 1, shape, 1,
                   "Tensor-likes are not close!\n\nMismatched elements: 1 / 2 (50.0%)\n"
                   "Greatest absolute difference: 1.0 at index (1,) (up to 1e-05 allowed)\n"
                   "Greatest relative difference: 1.0 at index (1,) (up to 0.016 allowed)");
    o = opts(PP_FMT_FP16, PP_FMT_FP64, 0, 0, 0, 2, 1);
    pp_default_tolerances(o.actual_format, o.expected_format, &o.rtol, &o.atol);
    expect_message(&o, a, e, 1, shape, 1,
                   "Tensor-likes are not close!\n\nMismatched elements: 1 / 2 (50.0%)\n"
                   "Greatest absolute difference: 1.0 at index (1,) (up to 1e-05 allowed)\n"
                   "Greatest relative difference: 1.0 at index (1,) (up to 0.001 allowed)");
    o = opts(PP_FMT_FP64, PP_FMT_FP64, 0, 0, 0, 2, 1);
    pp_default_tolerances(o.actual_format, o.expected_format, &o.rtol, &o.atol);
    expect_message(&o, a, e, 1, shape, 1,
                   "Tensor-likes are not close!\n\nMismatched elements: 1 / 2 (50.0%)\n"
                   "Greatest absolute difference: 1.0 at index (1,) (up to 1e-07 allowed)\n"
                   "Greatest relative difference: 1.0 at index (1,) (up to 1e-07 allowed)");
}

// One mismatch in 453120 elements prints "0.0%"; NaN and Inf differences print as nan / inf.
static void message_percent_nan_inf(void **state)
{
    (void)state;
    enum { N = 453120 };
    double *a = calloc(N, sizeof *a), *e = calloc(N, sizeof *e);
    assert_true(a && e);
    a[N - 1] = INFINITY;
    e[N - 1] = 1.0;
    const int64_t shape[] = {N};
    pp_close_opts o = opts(PP_FMT_FP32, PP_FMT_FP32, 1.3e-6, 1e-5, 0, 2, 1);
    expect_message(&o, a, e, 1, shape, 1,
                   "Tensor-likes are not close!\n\nMismatched elements: 1 / 453120 (0.0%)\n"
                   "Greatest absolute difference: inf at index (453119,) (up to 1e-05 allowed)\n"
                   "Greatest relative difference: inf at index (453119,) (up to 1.3e-06 allowed)");
    a[7] = NAN;
    e[N - 1] = INFINITY;
    a[N - 1] = -INFINITY;
    expect_message(&o, a, e, 1, shape, 1,
                   "Tensor-likes are not close!\n\nMismatched elements: 2 / 453120 (0.0%)\n"
                   "Greatest absolute difference: nan at index (7,) (up to 1e-05 allowed)\n"
                   "Greatest relative difference: nan at index (7,) (up to 1.3e-06 allowed)");
    free(a);
    free(e);
    // 31 of 50: "62.0%"
    double a2[50] = {0}, e2[50] = {0};
    for (int i = 0; i < 31; i++)
        a2[i] = 1.0;
    const int64_t shape2[] = {5, 10};
    expect_message(&o, a2, e2, 2, shape2, 1,
                   "Tensor-likes are not close!\n\nMismatched elements: 31 / 50 (62.0%)\n"
                   "Greatest absolute difference: 1.0 at index (0, 0) (up to 1e-05 allowed)\n"
                   "Greatest relative difference: inf at index (0, 0) (up to 1.3e-06 allowed)");
}

// 0-d tensors: the scalar block. torch's docstring examples: 1e-9 vs 1e-10 with zero
// tolerances ("Scalars are not equal!"), and NaN vs NaN in float32.
static void message_scalars(void **state)
{
    (void)state;
    double a[] = {1e-9}, e[] = {1e-10};
    pp_close_opts o = opts(PP_FMT_FP64, PP_FMT_FP64, 0, 0, 0, 2, 0);
    expect_message(&o, a, e, 0, NULL, 1,
                   "Scalars are not equal!\n\nAbsolute difference: 9.000000000000001e-10\n"
                   "Relative difference: 9.0");
    o.torch_minor = 1;  // 2.1 added the "Expected … but got …." line
    expect_message(&o, a, e, 0, NULL, 1,
                   "Scalars are not equal!\n\nExpected 1e-10 but got 1e-09.\n"
                   "Absolute difference: 9.000000000000001e-10\nRelative difference: 9.0");
    double n1[] = {NAN}, n2[] = {NAN};
    pp_close_opts f = opts(PP_FMT_FP32, PP_FMT_FP32, 1.3e-6, 1e-5, 0, 1, 13);
    expect_message(&f, n1, n2, 0, NULL, 1,
                   "Scalars are not close!\n\nAbsolute difference: nan (up to 1e-05 allowed)\n"
                   "Relative difference: nan (up to 1.3e-06 allowed)");
    f.torch_major = 2, f.torch_minor = 5;
    expect_message(&f, n1, n2, 0, NULL, 1,
                   "Scalars are not close!\n\nExpected nan but got nan.\n"
                   "Absolute difference: nan (up to 1e-05 allowed)\n"
                   "Relative difference: nan (up to 1.3e-06 allowed)");
    f.equal_nan = 1;
    expect_message(&f, n1, n2, 0, NULL, 0, "");
    // bf16 scalars: the differences are Python floats of the values, not bf16 arithmetic
    double b1[] = {2.71875}, b2[] = {0.0009765625};
    pp_close_opts b = opts(PP_FMT_BF16, PP_FMT_BF16, 1.6e-2, 1e-5, 0, 2, 1);
    expect_message(&b, b1, b2, 0, NULL, 1,
                   "Scalars are not close!\n\nExpected 0.0009765625 but got 2.71875.\n"
                   "Absolute difference: 2.7177734375 (up to 1e-05 allowed)\n"
                   "Relative difference: 2783.0 (up to 0.016 allowed)");
    // expected 0 (also −0): relative difference inf, whatever the actual (even NaN)
    double z1[] = {NAN}, z2[] = {-0.0};
    expect_message(&b, z1, z2, 0, NULL, 1,
                   "Scalars are not close!\n\nExpected -0.0 but got nan.\n"
                   "Absolute difference: nan (up to 1e-05 allowed)\n"
                   "Relative difference: inf (up to 0.016 allowed)");
    double i1[] = {INFINITY}, i2[] = {-INFINITY};
    expect_message(&b, i1, i2, 0, NULL, 1,
                   "Scalars are not close!\n\nExpected -inf but got inf.\n"
                   "Absolute difference: inf (up to 1e-05 allowed)\n"
                   "Relative difference: nan (up to 0.016 allowed)");
}

// The message from merged partial statistics is the one-pass message.
static void message_from_merged_stats(void **state)
{
    (void)state;
    enum { N = 24 };
    double a[N], e[N];
    for (int i = 0; i < N; i++) {
        e[i] = 1.0 + i;
        a[i] = e[i] + ((i % 5 == 1) ? 0.5 : 0.0) + (i == 17 ? 3.0 : 0.0);
    }
    const int64_t shape[] = {2, 3, 4};
    pp_close_opts o = opts(PP_FMT_FP32, PP_FMT_FP32, 1.3e-6, 1e-5, 0, 2, 1);
    pp_close_stats one, p, q;
    pp_close_stats_init(&one);
    pp_close_stats_init(&p);
    pp_close_stats_init(&q);
    pp_close_stats_update(&one, &o, a, e, N, 0);
    pp_close_stats_update(&q, &o, a + 10, e + 10, N - 10, 10);
    pp_close_stats_update(&p, &o, a, e, 10, 0);
    pp_close_stats_merge(&q, &p);
    char m1[1024], m2[1024], t1[4096], t2[4096];
    assert_int_equal(pp_close_message(&one, &o, 3, shape, m1, sizeof m1), 1);
    assert_int_equal(pp_close_message(&q, &o, 3, shape, m2, sizeof m2), 1);
    assert_string_equal(m1, m2);
    assert_string_equal(m1, "Tensor-likes are not close!\n\nMismatched elements: 6 / 24 (25.0%)\n"
                            "Greatest absolute difference: 3.0 at index (1, 1, 1) (up to 1e-05 allowed)\n"
                            "Greatest relative difference: 0.25 at index (0, 0, 1) (up to 1.3e-06 allowed)");
    assert_int_equal(pp_close_stats_text(&one, &o, 3, shape, t1, sizeof t1), 0);
    assert_int_equal(pp_close_stats_text(&q, &o, 3, shape, t2, sizeof t2), 0);
    assert_string_equal(t1, t2);
}

static void message_buffer_too_small(void **state)
{
    (void)state;
    double a[] = {1.0, 3.0}, e[] = {1.0, 1.0};
    const int64_t shape[] = {2};
    pp_close_opts o = opts(PP_FMT_FP32, PP_FMT_FP32, 1.3e-6, 1e-5, 0, 2, 1);
    pp_close_stats s;
    pp_close_stats_init(&s);
    pp_close_stats_update(&s, &o, a, e, 2, 0);
    char buf[40];
    assert_int_equal(pp_close_message(&s, &o, 1, shape, buf, sizeof buf), -1);
    assert_true(strlen(buf) < sizeof buf);
    assert_int_equal(pp_close_message(&s, &o, 1, shape, buf, 0), -1);
    assert_int_equal(pp_close_stats_text(&s, &o, 1, shape, buf, sizeof buf), -1);
    assert_true(strlen(buf) < sizeof buf);
}

// ---------------------------------------------------------------------------------------------
// The extra statistics' layout

static void stats_text_layout(void **state)
{
    (void)state;
    // ulp_fp16(1) = 2^-10; ulp_fp16(0) = 2^-24, so 2 vs 0 is 2^25 ulp; mean (0 + 2^-10 + 3·2^-10
    // + 2) / 4; RMS sqrt((10·2^-20 + 4) / 4) (values checked with Python)
    const double u = ldexp(1.0, -10);
    double a[] = {1.0, 1.0 + u, 1.0 + 3 * u, NAN, INFINITY, 2.0};
    double e[] = {1.0, 1.0, 1.0, 1.0, INFINITY, 0.0};
    const int64_t shape[] = {2, 3};
    pp_close_opts o = opts(PP_FMT_FP16, PP_FMT_FP64, 1e-3, 1e-5, 0, 2, 1);
    pp_close_stats s;
    pp_close_stats_init(&s);
    pp_close_stats_update(&s, &o, a, e, 6, 0);
    char buf[4096];
    assert_int_equal(pp_close_stats_text(&s, &o, 2, shape, buf, sizeof buf), 0);
    const char *want =
        "At greatest absolute diff:    actual nan, expected 1.0 at index (1, 0)\n"
        "At greatest relative diff:    actual nan, expected 1.0 at index (1, 0)\n"
        "Max absolute error:           2.0 at index (1, 2) (actual 2.0, expected 0.0)\n"
        "Worst tolerance ratio:        nan at index (1, 0) (actual nan, expected 1.0)\n"
        "Max ulp error (fp16):         33554432.0 at index (1, 2) (actual 2.0, expected 0.0)\n"
        "Mean absolute error:          0.5009765625 over 4 finite pairs (2 non-finite)\n"
        "RMS error:                    1.000001192092185\n"
        "Actual non-finite:            1 NaN, 1 Inf\n"
        "Expected non-finite:          0 NaN, 1 Inf\n"
        "ulp error histogram:          0:2 <=1:1 <=4:1 >1048576:1 nan/inf:1\n";
    if (strcmp(buf, want) != 0) {
        fprintf(stderr, "--- want\n%s--- got\n%s---\n", want, buf);
        fail();
    }
    pp_close_stats empty;
    pp_close_stats_init(&empty);
    assert_int_equal(pp_close_stats_text(&empty, &o, 2, shape, buf, sizeof buf), 0);
    assert_non_null(strstr(buf, "Worst tolerance ratio:        none\n"));
    assert_non_null(strstr(buf, "Max absolute error:           none\n"));
    assert_non_null(strstr(buf, "ulp error histogram:          empty\n"));
    // A close comparison: torch's greatest differences count close pairs as 0 and name no
    // element, so those lines are left out; the max absolute error still covers every pair
    // (|1.0009765625 − 1.0| = 2^-10 at (0, 1), within rtol 1e-3 · 1 + atol 1e-5).
    double ac[] = {1.0, 1.0 + u}, ec[] = {1.0, 1.0};
    const int64_t shape_c[] = {1, 2};
    pp_close_stats sc;
    pp_close_stats_init(&sc);
    pp_close_stats_update(&sc, &o, ac, ec, 2, 0);
    assert_int_equal(sc.mismatched, 0);
    assert_int_equal(pp_close_stats_text(&sc, &o, 2, shape_c, buf, sizeof buf), 0);
    assert_null(strstr(buf, "At greatest"));
    assert_non_null(strstr(buf, "Max absolute error:           0.0009765625 at index (0, 1) (actual 1.0009765625, "
                                "expected 1.0)\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(message_seed_report),
        cmocka_unit_test(message_equality_and_1d_index),
        cmocka_unit_test(message_all_close_is_empty),
        cmocka_unit_test(message_default_tolerances_printed),
        cmocka_unit_test(message_percent_nan_inf),
        cmocka_unit_test(message_scalars),
        cmocka_unit_test(message_from_merged_stats),
        cmocka_unit_test(message_buffer_too_small),
        cmocka_unit_test(stats_text_layout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
