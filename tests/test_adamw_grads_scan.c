// test_adamw_grads_scan.c — the input-gradient check's fast scan (kernels/adamw_thread.h:
// pp_adamw_grad_bits_ok, pp_adamw_grads_fast_scan): hand-picked patterns (zeros, NaN, ±Inf,
// binary64 and binary32 subnormals, the largest binary32, one bit past it, bf16 patterns) must
// be vouched for only when they are finite values of P; the scan must find the first unvouched
// index wherever it falls in its blocks; and pp_adamw_check's verdicts and messages must be the
// general ones (pp_is_representable) whatever the scan declines.
// Run: make build/rel/tests/test_adamw_grads_scan && build/rel/tests/test_adamw_grads_scan
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adamw_thread.h"

static int vouched(pp_format_id P, double x)
{
    return pp_adamw_grads_fast_scan(P, &x, 0, 1) == 1;
}

// ---------------------------------------------------------------------------------------------
// special values

static void grads_scan_special_values(void **state)
{
    (void)state;
    const pp_format_id fmts[2] = {PP_FMT_FP32, PP_FMT_BF16};
    for (int k = 0; k < 2; k++) {
        pp_format_id P = fmts[k];
        assert_true(vouched(P, 0.0));
        assert_true(vouched(P, -0.0));
        assert_false(vouched(P, NAN));
        assert_false(vouched(P, -NAN));
        assert_false(vouched(P, INFINITY));
        assert_false(vouched(P, -INFINITY));
        assert_false(vouched(P, 0x1p-1074));  // binary64 subnormal: not a value of P
        assert_false(vouched(P, 0x1p-149));   // a binary32 subnormal: declined, pp_is_representable decides
        assert_false(vouched(P, 0x1p-127));
        assert_true(vouched(P, 0x1p-126));    // the smallest binary32 normal
        assert_true(vouched(P, -0x1p-126));
        assert_false(vouched(P, 0x1p128));    // past binary32's range
        assert_true(vouched(P, 1.0));
        assert_true(vouched(P, -1.5));
    }
    // fp16 is never vouched for (every value goes to pp_is_representable)
    assert_false(vouched(PP_FMT_FP16, 1.0));
}

// ---------------------------------------------------------------------------------------------
// exact inputs: the mantissa bits each format keeps

static void grads_scan_mantissa_bits(void **state)
{
    (void)state;
    assert_true(vouched(PP_FMT_FP32, 0x1.fffffep127));                  // FLT_MAX
    assert_false(vouched(PP_FMT_FP32, 0x1.fffffe8p127));                // one binary64 bit past it, between binary32s
    assert_true(vouched(PP_FMT_FP32, 1.0 + 0x1p-23));                   // binary32's last bit
    assert_false(vouched(PP_FMT_FP32, 1.0 + 0x1p-24));                  // one past it
    assert_false(vouched(PP_FMT_FP32, 1.0 + 0x1p-52));                  // binary64's last bit
    assert_true(vouched(PP_FMT_BF16, 1.0 + 0x1p-7));                    // bf16's last bit
    assert_false(vouched(PP_FMT_BF16, 1.0 + 0x1p-8));                   // a binary32, not a bf16
    assert_true(vouched(PP_FMT_BF16, -0x1.fep127));                     // bf16's largest
    assert_false(vouched(PP_FMT_BF16, 0x1.fffffep127));
    // every vouched value really is one: the general test agrees on a sweep of patterns
    for (uint64_t u = 0; u < 4096; u++) {
        uint64_t pat = (u * 0x9E3779B97F4A7C15u) ^ (u << 52);
        double x;
        memcpy(&x, &pat, sizeof x);
        for (int k = 0; k < 2; k++) {
            pp_format_id P = k ? PP_FMT_BF16 : PP_FMT_FP32;
            if (vouched(P, x))
                assert_true(isfinite(x) && pp_is_representable(P, x));
        }
        float f = (float)(fabs(x) <= 0x1.fffffep127 ? x : 1.0);  // a binary32 value: vouched unless subnormal
        if (fabsf(f) >= 0x1p-126f || f == 0.0f)
            assert_true(vouched(PP_FMT_FP32, (double)f));
    }
}

// ---------------------------------------------------------------------------------------------
// operations: the first unvouched index, in and across blocks

static void grads_scan_finds_first_anywhere(void **state)
{
    (void)state;
    enum { N = 2 * 512 + 37 };
    double g[N];
    for (int j = 0; j < N; j++)
        g[j] = (double)(j % 7) - 3.0;  // binary32 and bf16 values
    assert_int_equal(pp_adamw_grads_fast_scan(PP_FMT_BF16, g, 0, N), N);
    const int at[] = {0, 1, 511, 512, 513, 1023, 1024, N - 1};
    for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
        double keep = g[at[k]];
        g[at[k]] = NAN;
        assert_int_equal(pp_adamw_grads_fast_scan(PP_FMT_FP32, g, 0, N), at[k]);
        assert_int_equal(pp_adamw_grads_fast_scan(PP_FMT_BF16, g, 0, N), at[k]);
        // from just after it: none
        assert_int_equal(pp_adamw_grads_fast_scan(PP_FMT_FP32, g, at[k] + 1, N), N);
        // two: the first, then the second from just after the first
        g[N - 1 - at[k] / 2] = 1.0 + 0x1p-20;  // binary32, not bf16
        int64_t second = N - 1 - at[k] / 2;
        int64_t first = at[k] < second ? at[k] : second;
        assert_int_equal(pp_adamw_grads_fast_scan(PP_FMT_BF16, g, 0, N), first);
        if (second != at[k])
            assert_int_equal(pp_adamw_grads_fast_scan(PP_FMT_BF16, g, first + 1, N), at[k] > second ? at[k] : second);
        assert_int_equal(pp_adamw_grads_fast_scan(PP_FMT_FP32, g, 0, N), at[k]);  // fp32 takes 1 + 2^−20
        g[second] = (double)(second % 7) - 3.0;
        g[at[k]] = keep;
    }
    assert_int_equal(pp_adamw_grads_fast_scan(PP_FMT_FP32, g, N, N), N);
    assert_int_equal(pp_adamw_grads_fast_scan(PP_FMT_FP16, g, 5, N), 5);
}

// pp_adamw_check with input gradients: a binary32 subnormal (declined by the scan) is accepted,
// a NaN or a non-value of P is refused naming its [t, i].
static void grads_check_general_verdicts(void **state)
{
    (void)state;
    enum { n = 600, T = 3 };
    static double g[n * T];
    double th0[n];
    for (int j = 0; j < n * T; j++)
        g[j] = 0.25 * (j % 5);
    for (int i = 0; i < n; i++)
        th0[i] = 0.5;
    pp_adamw_variant va = {.param = PP_FMT_FP32, .momentum = PP_FMT_FP32, .variance = PP_FMT_FP32,
                           .compensation = PP_FMT_FP32, .update = PP_ADAMW_TORCH};
    pp_adamw_problem pr = {.kind = PP_ADAMW_GRAD_INPUT, .n = n, .steps = T, .grads = g};
    char msg[200];
    g[700] = 0x1p-149;
    assert_int_equal(pp_adamw_check(&va, &pr, th0, msg, sizeof msg), 0);
    g[1300] = 1.0 + 0x1p-30;
    g[1500] = NAN;
    assert_int_equal(pp_adamw_check(&va, &pr, th0, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "grads[2, 100]"));
    g[1300] = 0.0;
    assert_int_equal(pp_adamw_check(&va, &pr, th0, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "grads[2, 300]"));
    g[1500] = 0.0;
    g[700] = 0.0;  // 2^−149 is no bf16 value
    va.param = PP_FMT_BF16;
    g[3] = 1.0 + 0x1p-9;
    assert_int_equal(pp_adamw_check(&va, &pr, th0, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "grads[0, 3]"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(grads_scan_special_values),
        cmocka_unit_test(grads_scan_mantissa_bits),
        cmocka_unit_test(grads_scan_finds_first_anywhere),
        cmocka_unit_test(grads_check_general_verdicts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
