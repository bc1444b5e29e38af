// test_gemm_knobs.c — the gemm row's check_knobs: a combination the GEMM cannot run (a scaling on
// the cuBLAS engine, cuBLAS storage accumulation in bf16, a quantised format without a scaling)
// is refused when the case is read, with FILE:LINE and the variant's name; in a [matrix] it is
// skipped with a note (or refused with skip_unsupported = false), as attention's are.
// Run from the repository root (tools/run-tests.sh does).
#include "test_util.h"

#include "ops/op.h"
#include "pipeline/case.h"

static const char head[] = "[case]\nname = \"x\"\nop = \"gemm\"\n[op]\nm = 4\nn = 4\nk = 4\n";

// The row's answer for one combination given as "knob=value" pairs (NULL-terminated).
static int row_check(const char *const *settings, char *msg, size_t n)
{
    const pp_op *gemm = pp_op_find("gemm");
    pp_op_knobs k;
    for (int i = 0; i < gemm->n_knobs; i++)
        k.v[i] = pp_knob_value_index(&gemm->knobs[i], gemm->knobs[i].def);
    for (int i = 0; settings[i]; i += 2)
        k.v[pp_op_knob_index(gemm, settings[i])] =
            pp_knob_value_index(&gemm->knobs[pp_op_knob_index(gemm, settings[i])], settings[i + 1]);
    pp_op_params p = {0};
    msg[0] = 0;
    return gemm->check_knobs(&p, &k, msg, n);
}

// What the cuBLAS engine can run (kernels/cuda/gemm_cuda.h): fp16/fp32 storage accumulation and
// any fp32 accumulation; not bf16 storage accumulation (no bf16 compute type), never a scaling.
static void test_cublas_combinations(void **state)
{
    (void)state;
    char msg[512];
    const char *fp16_storage[] = {"engine", "cublas", "format", "fp16", "accumulate", "storage", NULL};
    const char *fp32_storage[] = {"engine", "cublas", "format", "fp32", "accumulate", "storage", NULL};
    const char *bf16_fp32[] = {"engine", "cublas", "format", "bf16", "accumulate", "fp32", "scale", "pre", NULL};
    const char *bf16_storage[] = {"engine", "cublas", "format", "bf16", "accumulate", "storage", NULL};
    const char *mx[] = {"engine", "cublas", "format", "e4m3", "scaling", "mx", NULL};
    const char *ours_bf16_storage[] = {"engine", "ours", "format", "bf16", "accumulate", "storage", NULL};
    assert_int_equal(row_check(fp16_storage, msg, sizeof msg), 0);
    assert_int_equal(row_check(fp32_storage, msg, sizeof msg), 0);
    assert_int_equal(row_check(bf16_fp32, msg, sizeof msg), 0);
    assert_int_equal(row_check(ours_bf16_storage, msg, sizeof msg), 0);
    assert_int_equal(row_check(bf16_storage, msg, sizeof msg), -1);
    assert_string_equal(msg, "engine \"cublas\" with accumulate = \"storage\" needs format fp16 or fp32 (cuBLAS has "
                             "no bf16 compute type)");
    assert_int_equal(row_check(mx, msg, sizeof msg), -1);
    assert_string_equal(msg, "scaling 'mx' needs engine = \"ours\"");
    // torch's spelling of the format is the same value
    const char *torch_bf16[] = {"engine", "cublas", "format", "bfloat16", "accumulate", "storage", NULL};
    assert_int_equal(row_check(torch_bf16, msg, sizeof msg), -1);
}

// A named variant: FILE:LINE of its table and its name.
static void test_named_variant_names_file_line(void **state)
{
    (void)state;
    char text[1024];
    snprintf(text, sizeof text, "%s[variants.ok]\nengine = \"cublas\"\nformat = \"fp16\"\naccumulate = \"storage\"\n"
                                "[variants.vendor-bf16]\nengine = \"cublas\"\nformat = \"bf16\"\n"
                                "accumulate = \"storage\"\n", head);
    pp_case c;
    pp_error err = {0};
    assert_int_equal(pp_case_parse(text, strlen(text), "named.toml", &c, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "named.toml:12: variant 'vendor-bf16': "));
    assert_non_null(strstr(err.msg, "cuBLAS has no bf16 compute type"));
    pp_case_free(&c);
    // [knobs] defaults make the combination too: the variant that inherits them is named
    snprintf(text, sizeof text, "%s[knobs]\nengine = \"cublas\"\nscaling = \"mx\"\nformat = \"e4m3\"\n"
                                "[variants.scaled]\n", head);
    memset(&err, 0, sizeof err);
    assert_int_equal(pp_case_parse(text, strlen(text), "knobs.toml", &c, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "knobs.toml:12: variant 'scaled': "));
    assert_non_null(strstr(err.msg, "needs engine = \"ours\""));
    pp_case_free(&c);
}

// A [matrix]: skipped with a note naming the combination and why (the others stay, in order), or
// an error at the [matrix] line with skip_unsupported = false.
static void test_matrix_skips_or_refuses(void **state)
{
    (void)state;
    char text[1024];
    snprintf(text, sizeof text, "%s[knobs]\nengine = \"cublas\"\n[matrix]\nformat = [\"fp16\", \"bf16\"]\n"
                                "accumulate = [\"fp32\", \"storage\"]\n", head);
    pp_case c;
    pp_error err = {0};
    assert_int_equal(pp_case_parse(text, strlen(text), "skip.toml", &c, &err), PP_OK);
    assert_int_equal(c.n_variants, 3);
    assert_string_equal(c.variants[0].name, "fp16-fp32");
    assert_string_equal(c.variants[1].name, "fp16-storage");
    assert_string_equal(c.variants[2].name, "bf16-fp32");
    assert_non_null(c.notes);
    assert_non_null(strstr(c.notes, "skip.toml:10: note: [matrix] combination 'bf16-storage' skipped: engine "
                                    "\"cublas\" with accumulate = \"storage\" needs format fp16 or fp32"));
    pp_case_free(&c);
    snprintf(text, sizeof text, "%s[knobs]\nengine = \"cublas\"\n[matrix]\nformat = [\"fp16\", \"bf16\"]\n"
                                "accumulate = [\"fp32\", \"storage\"]\nskip_unsupported = false\n", head);
    memset(&err, 0, sizeof err);
    assert_int_equal(pp_case_parse(text, strlen(text), "strict.toml", &c, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "strict.toml:10: variant 'bf16-storage' (from [matrix]): "));
    assert_non_null(strstr(err.msg, "(skip_unsupported = false)"));
    pp_case_free(&c);
}

// `precprobe list` states the rule.
static void test_rules_are_listed(void **state)
{
    (void)state;
    const pp_op *gemm = pp_op_find("gemm");
    assert_non_null(gemm->knob_rules);
    assert_non_null(strstr(gemm->knob_rules, "engine cublas with accumulate storage needs format fp16 or fp32"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cublas_combinations),
        cmocka_unit_test(test_named_variant_names_file_line),
        cmocka_unit_test(test_matrix_skips_or_refuses),
        cmocka_unit_test(test_rules_are_listed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
