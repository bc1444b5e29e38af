// test_second_reference.c — the second comparison (src/ops/op.h pp_ref2_kind): each variant
// against the exact result on the inputs it read and on the inputs before they were rounded or
// quantised, so a report tells quantisation error from arithmetic error. Hand-computed cases:
//   tensor-current e4m3, A = [448, 1.0625], B = [7, 7]ᵀ, α = 1: s_A = 448/448 = 1, so
//   q_A = [448, 1] (1.0625 is the midpoint of 1 and 1.125: ties to even); s_B = 448/7 = 64,
//   q_B = [448, 448], X_B = 1/64. The variant's chain 448·448 + 1·448 = 201152, times 1/64 =
//   3143, exactly; the exact product of the quantised inputs is 3143 too (error 0: the arithmetic
//   is exact here), that of the original inputs 448·7 + 1.0625·7 = 3143.4375 (error 0.4375: all of
//   it quantisation, 0.0625·7).
//   fp16, A = [448, 1.0625], B = [7 + 2^−9, …]: fp16 rounds B to 7 (a midpoint, to even), the
//   variant gives RN_fp16(3143.4375) = 3144; the group's reference (on the rounded inputs)
//   3143.4375 (error 0.5625), the original inputs' 449.0625·(7 + 2^−9) = 25758225/8192 =
//   3144.3145751953125 (error 0.3145751953125).
#include "test_util.h"

#include "core/statistic.h"
#include "pipeline/gate.h"
#include "pipeline/run.h"

static const char scaled_case[] =
    "[case]\nname = \"hand\"\nop = \"gemm\"\nseed = 1\n[op]\nm = 1\nn = 1\nk = 2\nalpha = 1.0\n"
    "[inputs.a]\ndistribution = \"uniform\"\nlow = 1.0\nhigh = 1.0\naxis = 2\naxis_scale = [448.0, 1.0625]\n"
    "[inputs.b]\ndistribution = \"uniform\"\nlow = 7.0\nhigh = 7.0\n"
    "[variants.current]\nformat = \"e4m3\"\nscaling = \"tensor-current\"\n"
    "[gate]\n\"current.c.exact-quantised.max_abs_error\" = { max = 0 }\n"
    "\"current.c.max_abs_error\" = { min = 0.4375, max = 0.4375 }\n";

static const char half_case[] =
    "[case]\nname = \"hand\"\nop = \"gemm\"\nseed = 1\n[op]\nm = 1\nn = 1\nk = 2\nalpha = 1.0\n"
    "[inputs.a]\ndistribution = \"uniform\"\nlow = 1.0\nhigh = 1.0\naxis = 2\naxis_scale = [448.0, 1.0625]\n"
    "[inputs.b]\ndistribution = \"uniform\"\nlow = 7.001953125\nhigh = 7.001953125\n"
    "[variants.half]\nformat = \"fp16\"\n";

static const pp_run_opts cpu_opts = {.device = "cpu", .threads = 1};

static void run(const char *text, pp_case *c, pp_run_result *r)
{
    pp_error err = {0};
    assert_int_equal(pp_case_parse(text, strlen(text), "hand.toml", c, &err), PP_OK);
    int rc = pp_run_case(c, &cpu_opts, r, &err);
    if (rc)
        fprintf(stderr, "  %s\n", err.msg);
    assert_int_equal(rc, PP_OK);
}

static double max_abs_error(const pp_run_result *r, const char *variant, const char *against)
{
    const pp_comparison *cmp = pp_run_result_find(r, variant, "c", against);
    assert_non_null(cmp);
    return pp_statistic_find("max_abs_error")->value(&cmp->stats);
}

static void scaled_variant_separates_quantisation_from_arithmetic(void **state)
{
    (void)state;
    pp_case c;
    pp_run_result r;
    run(scaled_case, &c, &r);
    assert_int_equal(r.n_comparisons, 2);
    assert_string_equal(r.comparisons[0].against, "reference");
    assert_string_equal(r.comparisons[1].against, PP_AGAINST_QUANTISED);
    assert_true(max_abs_error(&r, "current", "reference") == 0.4375);
    assert_true(max_abs_error(&r, "current", PP_AGAINST_QUANTISED) == 0.0);
    // the report's words: the group's reference is the original inputs' here
    assert_string_equal(pp_against_label(&r, &r.comparisons[0]), "exact (original inputs)");
    assert_string_equal(pp_against_label(&r, &r.comparisons[1]), "exact (quantised inputs)");
    // a gate rule names the comparison it reads (VARIANT.TENSOR.AGAINST.STAT)
    assert_int_equal(pp_gate_evaluate(&c, &r), 0);
    assert_int_equal(r.n_verdicts, 2);
    pp_run_result_free(&r);
    pp_case_free(&c);
}

static void rounding_storage_is_compared_with_the_original_inputs(void **state)
{
    (void)state;
    pp_case c;
    pp_run_result r;
    run(half_case, &c, &r);
    assert_int_equal(r.n_comparisons, 2);
    assert_string_equal(r.comparisons[1].against, PP_AGAINST_ORIGINAL);
    assert_true(max_abs_error(&r, "half", "reference") == 0.5625);
    assert_true(max_abs_error(&r, "half", PP_AGAINST_ORIGINAL) == 0.3145751953125);
    assert_string_equal(pp_against_label(&r, &r.comparisons[0]), "exact (quantised inputs)");
    assert_string_equal(pp_against_label(&r, &r.comparisons[1]), "exact (original inputs)");
    pp_run_result_free(&r);
    pp_case_free(&c);
}

// fp32 storage rounds nothing the case draws: one comparison, no label.
static void fp32_storage_has_no_second_comparison(void **state)
{
    (void)state;
    char text[sizeof half_case + 8];
    snprintf(text, sizeof text, "%s", half_case);
    char *f = strstr(text, "\"fp16\"");
    memcpy(f, "\"fp32\"", 6);
    pp_case c;
    pp_run_result r;
    run(text, &c, &r);
    assert_int_equal(r.n_comparisons, 1);
    assert_null(pp_against_label(&r, &r.comparisons[0]));
    pp_run_result_free(&r);
    pp_case_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scaled_variant_separates_quantisation_from_arithmetic),
        cmocka_unit_test(rounding_storage_is_compared_with_the_original_inputs),
        cmocka_unit_test(fp32_storage_has_no_second_comparison),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
