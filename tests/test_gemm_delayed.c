// test_gemm_delayed.c — per-tensor delayed scaling (kernels/scaling.h pp_delayed_*, TE's
// DelayedScaling recipe) and the scaled GEMM under it (kernels/cpu/gemm_scaled.c): the recipe's
// amax selection, scale and margin by hand, and a stale history that lets an outlier saturate.
#include "test_util.h"

#include <math.h>

#include "cpu/gemm.h"
#include "scaling.h"

static void delayed_amax_max_and_most_recent(void **state)
{
    (void)state;
    const double h[4] = {2.0, 8.0, NAN, 4.0};  // h[0] the most recent; NaN skipped as fmaxf does
    assert_true(pp_delayed_amax(h, 4, PP_AMAX_MAX) == 8.0);
    assert_true(pp_delayed_amax(h, 4, PP_AMAX_MOST_RECENT) == 2.0);
    const double z[2] = {0.0, 0.0};
    assert_true(pp_delayed_amax(z, 2, PP_AMAX_MAX) == 0.0);
}

// s = RN_32(RN_32(448·2^−margin) / amax): 448/8 = 56, margin 1: 224/8 = 28, 448/3 rounded to
// binary32 (149.33… → 0x1.2aaaaap+7); amax 0, Inf, NaN keep the previous scale (1); a tiny amax
// whose quotient overflows binary32 gives FLT_MAX; e5m2: 57344/7 rounded.
static void delayed_scale_by_hand(void **state)
{
    (void)state;
    assert_true(pp_delayed_scale(PP_FMT_E4M3, 8.0, 0) == 56.0);
    assert_true(pp_delayed_scale(PP_FMT_E4M3, 8.0, 1) == 28.0);
    assert_true(pp_delayed_scale(PP_FMT_E4M3, 3.0, 0) == 0x1.2aaaaap+7);
    assert_true(pp_delayed_scale(PP_FMT_E4M3, 0.0, 0) == 1.0);
    assert_true(pp_delayed_scale(PP_FMT_E4M3, INFINITY, 0) == 1.0);
    assert_true(pp_delayed_scale(PP_FMT_E4M3, NAN, 0) == 1.0);
    assert_true(pp_delayed_scale(PP_FMT_E4M3, 0x1p-149, 0) == 0x1.fffffep+127);
    assert_true(pp_delayed_scale(PP_FMT_E5M2, 7.0, 0) == (double)(float)(57344.0 / 7.0));
    // P = RN_F,sat(RN_32(V·s)): 8·56 = 448; 100·56 = 5600 saturates to 448; 1·56 = 56;
    // 0.53125·56 = 29.75 → e4m3 (16..32 in steps of 2) 30; −0 keeps its sign
    assert_true(pp_delayed_quantise(PP_FMT_E4M3, 8.0, 56.0) == 448.0);
    assert_true(pp_delayed_quantise(PP_FMT_E4M3, 100.0, 56.0) == 448.0);
    assert_true(pp_delayed_quantise(PP_FMT_E4M3, -100.0, 56.0) == -448.0);
    assert_true(pp_delayed_quantise(PP_FMT_E4M3, 1.0, 56.0) == 56.0);
    assert_true(pp_delayed_quantise(PP_FMT_E4M3, 0.53125, 56.0) == 30.0);
    assert_true(pp_test_same_bits(pp_delayed_quantise(PP_FMT_E4M3, -0.0, 56.0), -0.0));
}

// C = A·B with A = [1, 1, 1, 100], B = [1, 1, 1, 1]ᵀ (exact 103), α = 1, e4m3.
static double one_dot(const double *hist_a, int len_a, pp_amax_algo algo, int margin)
{
    const double a[4] = {1.0, 1.0, 1.0, 100.0}, b[4] = {1.0, 1.0, 1.0, 1.0}, hb[1] = {1.0};
    pp_delayed_recipe r = {.history = {hist_a, hb}, .len = {len_a, 1}, .algo = algo, .margin = margin};
    pp_gemm_variant v = {.format = PP_FMT_E4M3, .scaling = PP_SCALING_DELAYED, .alpha_given = 1, .alpha = 1.0};
    assert_true(pp_gemm_variant_formats_ok(&v));
    double c = NAN;
    pp_error err = {0};
    assert_int_equal(pp_gemm_delayed_cpu(&v, &r, 1.0, 1, 1, 1, 4, a, b, &c, 1, &err), PP_OK);
    return c;
}

// A stale history (last step's amax 1, the outlier 100 is new): s_a = 448, the outlier saturates
// to 448 = 1·s_a, so C counts it as 1: 4·448·448 = 802816 exactly in the fp32 chain, times
// d = RN_32(RN_32(1/448)²) ≈ 1/448², C = 4 within three binary32 roundings (|rel| ≤ 3·2^−24).
// A history that saw 100 (max over the window): s_a = RN_32(448/100), A = [4.5, 4.5, 4.5, 448]
// (1·4.48 rounds to e4m3's 4.5), C ≈ 103.01, within e4m3's half ulp at 1 (2^−4) per small term.
static void delayed_gemm_stale_history_saturates_the_outlier(void **state)
{
    (void)state;
    const double stale[1] = {1.0}, window[3] = {1.0, 100.0, 2.0};
    double c = one_dot(stale, 1, PP_AMAX_MAX, 0);
    assert_true(isfinite(c));
    assert_true(fabs(c - 4.0) <= 4.0 * 3 * 0x1p-24);
    c = one_dot(window, 3, PP_AMAX_MOST_RECENT, 0);  // most recent: 1, stale again
    assert_true(fabs(c - 4.0) <= 4.0 * 3 * 0x1p-24);
    c = one_dot(window, 3, PP_AMAX_MAX, 0);  // the window's max: 100, no saturation
    assert_true(fabs(c - 103.0) <= 3 * 0x1p-4 * 1.0 + 1e-3);
    // margin 7 on the stale history: s_a = 448/128 = 3.5, 100·3.5 = 350 → e4m3 352 (no saturation),
    // 1·3.5 = 3.5: C = (3·3.5 + 352)·448 · RN_32(1/3.5)·RN_32(1/448) ≈ 103.57
    c = one_dot(stale, 1, PP_AMAX_MAX, 7);
    assert_true(fabs(c - (3 * 3.5 + 352.0) / 3.5) <= 1e-4);
    // without a recipe, with an empty history, or in e2m1, the variant is refused
    const double a[1] = {1.0}, b[1] = {1.0}, h[1] = {1.0};
    double out = 0;
    pp_error err = {0};
    pp_gemm_variant v = {.format = PP_FMT_E4M3, .scaling = PP_SCALING_DELAYED, .alpha_given = 1, .alpha = 1.0};
    pp_delayed_recipe empty = {.history = {h, h}, .len = {0, 1}, .algo = PP_AMAX_MAX};
    assert_int_equal(pp_gemm_delayed_cpu(&v, NULL, 1.0, 1, 1, 1, 1, a, b, &out, 1, &err), PP_ERR_INPUT);
    assert_int_equal(pp_gemm_delayed_cpu(&v, &empty, 1.0, 1, 1, 1, 1, a, b, &out, 1, &err), PP_ERR_INPUT);
    assert_int_equal(pp_gemm_cpu(&v, 1, 1, 1, 1, a, b, &out, 1, &err), PP_ERR_INPUT);
    pp_gemm_variant fp4 = {.format = PP_FMT_E2M1, .scaling = PP_SCALING_DELAYED};
    assert_false(pp_gemm_variant_formats_ok(&fp4));
    assert_string_equal(pp_scaling_name(PP_SCALING_DELAYED), "tensor-delayed");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(delayed_amax_max_and_most_recent),
        cmocka_unit_test(delayed_scale_by_hand),
        cmocka_unit_test(delayed_gemm_stale_history_saturates_the_outlier),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
