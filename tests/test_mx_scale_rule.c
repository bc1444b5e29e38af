// test_mx_scale_rule.c — the MX shared exponent's two rules (kernels/scaling.h, knob mx_scale):
// OCP's floor(log2 amax) − emax_elem and TransformerEngine's round-up of RN_32(amax·RN_32(1/max)),
// by hand over powers of two, just above and below them, subnormal amax, 0, NaN, ±Inf and E8M0's
// limits; TE's quantisation (its byte-0 quirk included); and the scaled GEMM with each rule.
// Run: build/rel/tests/test_mx_scale_rule
#include "test_util.h"

#include "cpu/gemm.h"
#include "scaling.h"

#define OCP PP_MX_RULE_OCP
#define TE PP_MX_RULE_TE

// RN_32(1/448) = 2^−9·(8/7)·(1 + 3·2^−26): 8/7 = 1.001001…b rounds up at its 24th bit, so
// 448·rcp = 1 + 3·2^−26 rounds back to 1 in binary32 (1/57344 has the same significand; 1/6 =
// 2^−3·1.0101…b also rounds up, 6·rcp = 1 + 2^−25 → 1). Hence amax = max_finite gives e = 0 under
// both rules: the largest element is stored as itself.
static void max_finite_amax_keeps_exponent_0(void **state)
{
    (void)state;
    assert_int_equal(pp_mx_rule_exp(OCP, 448.0, PP_FMT_E4M3), 0);
    assert_int_equal(pp_mx_rule_exp(TE, 448.0, PP_FMT_E4M3), 0);
    assert_int_equal(pp_mx_rule_exp(OCP, 57344.0, PP_FMT_E5M2), 0);
    assert_int_equal(pp_mx_rule_exp(TE, 57344.0, PP_FMT_E5M2), 0);
    assert_int_equal(pp_mx_rule_exp(OCP, 6.0, PP_FMT_E2M1), 0);
    assert_int_equal(pp_mx_rule_exp(TE, 6.0, PP_FMT_E2M1), 0);
    // the OCP rule is pp_mx_shared_exp (the default: every existing bit stays)
    const double amaxes[] = {0.0, 1e-40, 0.5, 1.0, 447.0, 449.0, 1000.0, 3.4028234663852886e38};
    for (size_t i = 0; i < sizeof amaxes / sizeof amaxes[0]; i++)
        assert_int_equal(pp_mx_rule_exp(OCP, amaxes[i], PP_FMT_E4M3), pp_mx_shared_exp(amaxes[i], 8));
}

// Between 448 and 512 (significands 1.75…2 of 2^8) OCP keeps 2^0 and saturates the block's
// largest elements; TE goes up to 2^1. Powers of two: OCP floor, TE exact (val = 2^p·8/7·2^−9
// rounds up to 2^(p−8)).
static void above_max_finite_te_rounds_up(void **state)
{
    (void)state;
    // 448 + ulp_32(448) = 448 + 2^−15: val = RN_32((1 + 2^−15/448)(1 + 3·2^−26)) = 1 + 2^−23
    const double just_above = 448.0 + 0x1p-15;
    assert_int_equal(pp_mx_rule_exp(OCP, just_above, PP_FMT_E4M3), 0);
    assert_int_equal(pp_mx_rule_exp(TE, just_above, PP_FMT_E4M3), 1);
    assert_int_equal(pp_mx_rule_exp(OCP, 480.0, PP_FMT_E4M3), 0);
    assert_int_equal(pp_mx_rule_exp(TE, 480.0, PP_FMT_E4M3), 1);
    assert_int_equal(pp_mx_rule_exp(OCP, 512.0 - 0x1p-15, PP_FMT_E4M3), 0);  // just below 2^9
    assert_int_equal(pp_mx_rule_exp(TE, 512.0 - 0x1p-15, PP_FMT_E4M3), 1);
    assert_int_equal(pp_mx_rule_exp(OCP, 512.0, PP_FMT_E4M3), 1);  // 2^9: floor 9 − 8
    assert_int_equal(pp_mx_rule_exp(TE, 512.0, PP_FMT_E4M3), 1);   // val = 8/7 → 2^1
    assert_int_equal(pp_mx_rule_exp(OCP, 256.0, PP_FMT_E4M3), 0);
    assert_int_equal(pp_mx_rule_exp(TE, 256.0, PP_FMT_E4M3), 0);   // val = 4/7 → 2^0
    assert_int_equal(pp_mx_rule_exp(OCP, 447.0, PP_FMT_E4M3), 0);  // below 448: no saturation
    assert_int_equal(pp_mx_rule_exp(TE, 447.0, PP_FMT_E4M3), 0);
    assert_int_equal(pp_mx_rule_exp(OCP, 1.0, PP_FMT_E4M3), -8);
    assert_int_equal(pp_mx_rule_exp(TE, 1.0, PP_FMT_E4M3), -8);    // val = 2^−9·8/7 → 2^−8
    assert_int_equal(pp_mx_rule_exp(OCP, 1.0, PP_FMT_E2M1), -2);
    assert_int_equal(pp_mx_rule_exp(TE, 1.0, PP_FMT_E2M1), -2);    // val = 1/6 → 2^−2
    assert_int_equal(pp_mx_rule_exp(OCP, 60000.0, PP_FMT_E5M2), 0);
    assert_int_equal(pp_mx_rule_exp(TE, 60000.0, PP_FMT_E5M2), 1);
    assert_int_equal(pp_mx_rule_exp(OCP, 6.5, PP_FMT_E2M1), 0);
    assert_int_equal(pp_mx_rule_exp(TE, 6.5, PP_FMT_E2M1), 1);
}

// 0 → 2^−127 (E8M0's byte 0), no clamp noted; NaN, and ±Inf through pp_amax_step, → the NaN
// scale, noted as clamped.
static void zero_nan_inf(void **state)
{
    (void)state;
    for (int r = OCP; r <= TE; r++) {
        assert_int_equal(pp_mx_rule_exp((pp_mx_rule)r, 0.0, PP_FMT_E4M3), -127);
        assert_false(pp_mx_rule_clamped((pp_mx_rule)r, 0.0, PP_FMT_E4M3));
        assert_int_equal(pp_mx_rule_exp((pp_mx_rule)r, NAN, PP_FMT_E4M3), PP_MX_NAN_EXP);
        assert_int_equal(pp_mx_rule_exp((pp_mx_rule)r, pp_amax_step(0.0, INFINITY), PP_FMT_E4M3), PP_MX_NAN_EXP);
        assert_int_equal(pp_mx_rule_exp((pp_mx_rule)r, pp_amax_step(3.0, -INFINITY), PP_FMT_E4M3), PP_MX_NAN_EXP);
        assert_true(pp_mx_rule_clamped((pp_mx_rule)r, NAN, PP_FMT_E4M3));
        assert_true(isnan(pp_mx_scale(pp_mx_rule_exp((pp_mx_rule)r, NAN, PP_FMT_E4M3))));
        // a NaN block's elements: round(V) as pp_mx_quantise (the product X·P is NaN)
        assert_true(pp_mx_rule_quantise((pp_mx_rule)r, PP_FMT_E4M3, 3.0, PP_MX_NAN_EXP) == 3.0);
    }
}

// E8M0's range [2^−127, 2^127]: where each rule's raw exponent leaves it.
static void e8m0_limits(void **state)
{
    (void)state;
    // top: OCP 135 − 8 = 127 fits, 136 − 8 = 128 clamps; TE val = 2^(p−9)·8/7 → p − 8
    assert_int_equal(pp_mx_rule_exp(OCP, 0x1p135, PP_FMT_E4M3), 127);
    assert_false(pp_mx_rule_clamped(OCP, 0x1p135, PP_FMT_E4M3));
    assert_int_equal(pp_mx_rule_exp(TE, 0x1p135, PP_FMT_E4M3), 127);
    assert_false(pp_mx_rule_clamped(TE, 0x1p135, PP_FMT_E4M3));
    assert_int_equal(pp_mx_rule_exp(OCP, 0x1p136, PP_FMT_E4M3), 127);
    assert_true(pp_mx_rule_clamped(OCP, 0x1p136, PP_FMT_E4M3));
    assert_int_equal(pp_mx_rule_exp(TE, 0x1p136, PP_FMT_E4M3), 127);
    assert_true(pp_mx_rule_clamped(TE, 0x1p136, PP_FMT_E4M3));
    // FLT_MAX = (2 − 2^−23)·2^127: OCP 119; TE val ≈ 2^119.2 → 120
    assert_int_equal(pp_mx_rule_exp(OCP, 3.4028234663852886e38, PP_FMT_E4M3), 119);
    assert_int_equal(pp_mx_rule_exp(TE, 3.4028234663852886e38, PP_FMT_E4M3), 120);
    // an amax beyond binary32 (a binary64 input): val overflows binary32 → 2^127 (satfinite)
    assert_int_equal(pp_mx_rule_exp(TE, 0x1p200, PP_FMT_E4M3), 127);
    assert_true(pp_mx_rule_clamped(TE, 0x1p200, PP_FMT_E4M3));
    // bottom: 2^−119 → OCP −127 (fits); TE val = 2^−128·8/7, a binary32 subnormal ≤ 2^−127 → byte 0
    assert_int_equal(pp_mx_rule_exp(OCP, 0x1p-119, PP_FMT_E4M3), -127);
    assert_false(pp_mx_rule_clamped(OCP, 0x1p-119, PP_FMT_E4M3));
    assert_int_equal(pp_mx_rule_exp(TE, 0x1p-119, PP_FMT_E4M3), -127);
    assert_false(pp_mx_rule_clamped(TE, 0x1p-119, PP_FMT_E4M3));
    // 2^−118: OCP −126; TE val = 2^−127·8/7 (subnormal, above 2^−127: TE's "mantissa > 0x400000") → −126
    assert_int_equal(pp_mx_rule_exp(OCP, 0x1p-118, PP_FMT_E4M3), -126);
    assert_int_equal(pp_mx_rule_exp(TE, 0x1p-118, PP_FMT_E4M3), -126);
    // 2^−120: both want −128 and clamp to −127
    assert_int_equal(pp_mx_rule_exp(OCP, 0x1p-120, PP_FMT_E4M3), -127);
    assert_true(pp_mx_rule_clamped(OCP, 0x1p-120, PP_FMT_E4M3));
    assert_int_equal(pp_mx_rule_exp(TE, 0x1p-120, PP_FMT_E4M3), -127);
    assert_true(pp_mx_rule_clamped(TE, 0x1p-120, PP_FMT_E4M3));
    // subnormal binary32 amax: 2^−130 (val 2^−139·8/7, still a binary32 subnormal → −138 → −127)
    assert_int_equal(pp_mx_rule_exp(OCP, 0x1p-130, PP_FMT_E4M3), -127);
    assert_int_equal(pp_mx_rule_exp(TE, 0x1p-130, PP_FMT_E4M3), -127);
    assert_true(pp_mx_rule_clamped(TE, 0x1p-130, PP_FMT_E4M3));
    // 2^−149, the least binary32: val = 2^−158·8/7 underflows to 0 → byte 0, raw exponent clamped
    assert_int_equal(pp_mx_rule_exp(OCP, 0x1p-149, PP_FMT_E4M3), -127);
    assert_int_equal(pp_mx_rule_exp(TE, 0x1p-149, PP_FMT_E4M3), -127);
    assert_true(pp_mx_rule_clamped(TE, 0x1p-149, PP_FMT_E4M3));
}

// Quantisation: TE's round-up stores a block's largest element unsaturated; at e = −127 TE
// multiplies by exp2f_rcp(0) = 1, not 2^127, so a tiny block stores zeros where OCP keeps it.
static void quantise_by_rule(void **state)
{
    (void)state;
    // amax 480: OCP e = 0, 480 → 448 (saturated); TE e = 1, 480/2 = 240 exact in e4m3
    int eo = pp_mx_rule_exp(OCP, 480.0, PP_FMT_E4M3), et = pp_mx_rule_exp(TE, 480.0, PP_FMT_E4M3);
    assert_true(pp_mx_rule_quantise(OCP, PP_FMT_E4M3, 480.0, eo) == 448.0);
    assert_true(pp_mx_rule_quantise(TE, PP_FMT_E4M3, 480.0, et) == 240.0);
    assert_true(pp_mx_rule_quantise(TE, PP_FMT_E4M3, -480.0, et) == -240.0);
    // a small element of the same block: 1.0625 = 1 + 2^−4; OCP stores 1 (tie to even at 3 bits),
    // TE 0.53125 → 0.5 (e4m3 at 2^−1: steps of 2^−4, 0.53125 ties to 0.5)
    assert_true(pp_mx_rule_quantise(OCP, PP_FMT_E4M3, 1.0625, eo) == 1.0);
    assert_true(pp_mx_rule_quantise(TE, PP_FMT_E4M3, 1.0625, et) == 0.5);
    // signed zero survives
    assert_true(signbit(pp_mx_rule_quantise(TE, PP_FMT_E4M3, -0.0, et)));
    // byte 0: amax 2^−119, e = −127 under both; OCP P = 2^−119/2^−127 = 2^8; TE P = RN_e4m3(2^−119) = 0
    assert_true(pp_mx_rule_quantise(OCP, PP_FMT_E4M3, 0x1p-119, -127) == 256.0);
    assert_true(pp_mx_rule_quantise(TE, PP_FMT_E4M3, 0x1p-119, -127) == 0.0);
    assert_true(pp_mx_rule_quantise(TE, PP_FMT_E4M3, 0x1p-130, -127) == 0.0);
    // a subnormal binary32 element in a block with a large scale: RN_32 then RN_e4m3, both → 0
    assert_true(pp_mx_rule_quantise(TE, PP_FMT_E4M3, 0x1p-140, 10) == 0.0);
    // e2m1 with TE: amax 6.5 → e = 1, 6.5/2 = 3.25 → 3 (e2m1: 2, 3, 4, 6)
    assert_true(pp_mx_rule_quantise(TE, PP_FMT_E2M1, 6.5, pp_mx_rule_exp(TE, 6.5, PP_FMT_E2M1)) == 3.0);
    assert_true(pp_mx_rule_quantise(OCP, PP_FMT_E2M1, 6.5, pp_mx_rule_exp(OCP, 6.5, PP_FMT_E2M1)) == 6.0);
    // saturation still applies past the scale (TE's satfinite cast): 600 with e = 0 → 448
    assert_true(pp_mx_rule_quantise(TE, PP_FMT_E4M3, 600.0, 0) == 448.0);
    assert_true(pp_mx_rule_quantise(TE, PP_FMT_E4M3, INFINITY, 0) == 448.0);
}

// The scaled GEMM with mx_rule: one block of k = 32, A's row 0 = [480, 1.0625, 0…], B = e_0 + e_1
// columns: C[0][0] = α·X·(P0 + P1) with α = 1. OCP: 448 + 1 = 449; TE: 2·(240 + 0.5) = 481.
static void gemm_takes_the_rule(void **state)
{
    (void)state;
    enum { M = 1, N = 1, K = 32 };
    double a[M * K] = {480.0, 1.0625}, b[K * N] = {1.0, 1.0}, c[M * N];
    pp_gemm_variant v = {.format = PP_FMT_E4M3, .scaling = PP_SCALING_MX, .alpha_given = 1, .alpha = 1.0};
    pp_error err = {0};
    assert_int_equal(pp_gemm_cpu(&v, 1, M, N, K, a, b, c, 1, &err), PP_OK);
    assert_true(c[0] == 449.0);
    v.mx_rule = PP_MX_RULE_TE;
    assert_int_equal(pp_gemm_cpu(&v, 1, M, N, K, a, b, c, 1, &err), PP_OK);
    assert_true(c[0] == 481.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(max_finite_amax_keeps_exponent_0),
        cmocka_unit_test(above_max_finite_te_rounds_up),
        cmocka_unit_test(zero_nan_inf),
        cmocka_unit_test(e8m0_limits),
        cmocka_unit_test(quantise_by_rule),
        cmocka_unit_test(gemm_takes_the_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
