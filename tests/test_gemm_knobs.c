// test_gemm_knobs.c — the gemm row's check_knobs: a combination the GEMM cannot run (a scaling on
// the cuBLAS engine, cuBLAS storage accumulation in bf16, a quantised format without a scaling)
// is refused when the case is read, with FILE:LINE and the variant's name; in a [matrix] it is
// skipped with a note (or refused with skip_unsupported = false), as attention's are.
// Run from the repository root (tools/run-tests.sh does).
#include "test_util.h"

#include "ops/op.h"
#include "pipeline/case.h"
#include "scaling.h"

static const char head[] = "[case]\nname = \"x\"\nop = \"gemm\"\n[op]\nm = 4\nn = 4\nk = 4\n";

// The row's answer for one combination given as "knob=value" pairs (NULL-terminated).
static int row_check(const char *const *settings, char *msg, size_t n)
{
    const pp_op *gemm = pp_op_find("gemm");
    pp_op_knobs k;
    memset(&k, 0, sizeof k);
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

// Parses head + body as FILE; expects rc and, when want is given, that the message holds it.
static void parse_expect(const char *file, const char *body, int rc, const char *want, pp_case *c)
{
    char text[2048];
    snprintf(text, sizeof text, "%s%s", head, body);
    pp_error err = {0};
    int got = pp_case_parse(text, strlen(text), file, c, &err);
    if (got != rc || (want && !strstr(err.msg, want)))
        fail_msg("%s: rc %d (want %d), message '%s' (want '%s')", file, got, rc, err.msg, want ? want : "");
}

// mx_scale (kernels/scaling.h): "ocp" by default, "te" read into the variant; te on any scaling
// but mx is refused when the case is read, with FILE:LINE; a value not in the list likewise.
static void test_mx_scale_knob(void **state)
{
    (void)state;
    pp_case c;
    parse_expect("ok.toml", "[knobs]\nformat = \"e4m3\"\nscaling = \"mx\"\n[matrix]\nmx_scale = [\"ocp\", \"te\"]\n",
                 PP_OK, NULL, &c);
    const pp_op *gemm = pp_op_find("gemm");
    int ms = pp_op_knob_index(gemm, "mx_scale");
    assert_true(ms >= 0);
    assert_int_equal(c.n_variants, 2);
    assert_int_equal(pp_knob_id(&gemm->knobs[ms], c.variants[0].knobs.v[ms]), PP_MX_RULE_OCP);
    assert_int_equal(pp_knob_id(&gemm->knobs[ms], c.variants[1].knobs.v[ms]), PP_MX_RULE_TE);
    pp_case_free(&c);
    parse_expect("tensor.toml", "[knobs]\nformat = \"e4m3\"\n[variants.t]\nscaling = \"tensor-current\"\n"
                 "mx_scale = \"te\"\n", PP_ERR_INPUT,
                 "tensor.toml:10: variant 't': mx_scale \"te\" is scaling = \"mx\"'s (this variant's scaling is "
                 "'tensor-current')", &c);
    pp_case_free(&c);
    parse_expect("none.toml", "[variants.t]\nmx_scale = \"te\"\n", PP_ERR_INPUT,
                 "none.toml:8: variant 't': mx_scale \"te\" is scaling = \"mx\"'s", &c);
    pp_case_free(&c);
    parse_expect("bad.toml", "[variants.t]\nmx_scale = \"up\"\n", PP_ERR_INPUT, "bad.toml:9:", &c);
    pp_case_free(&c);
}

// tensor-delayed's recipe knobs (TE's DelayedScaling): the histories are list knobs, read as TOML
// arrays of non-negative finite numbers with FILE:LINE errors; tensor-delayed needs both; no
// other scaling takes any of them; a list knob is not a [matrix] axis; the knob text a report
// records is the list's TOML spelling.
static void test_delayed_recipe_knobs(void **state)
{
    (void)state;
    pp_case c;
    const char *ok = "[knobs]\nformat = \"e4m3\"\n[variants.d]\nscaling = \"tensor-delayed\"\n"
                     "amax_history_a = [5, 4.75, 0]\namax_history_b = [2]\namax_compute_algo = \"most_recent\"\n"
                     "margin = 2\n";
    parse_expect("ok.toml", ok, PP_OK, NULL, &c);
    const pp_op *gemm = pp_op_find("gemm");
    int ha = pp_op_knob_index(gemm, "amax_history_a");
    assert_int_equal(c.variants[0].knobs.v[ha], 3);
    assert_true(c.variants[0].knobs.list[ha][1] == 4.75);
    char text[PP_NAME_MAX];
    pp_knob_setting_text(&gemm->knobs[ha], &c.variants[0].knobs, ha, text, sizeof text);
    assert_string_equal(text, "[5, 4.75, 0]");
    pp_case_free(&c);
    parse_expect("nohist.toml", "[knobs]\nformat = \"e4m3\"\n[variants.d]\nscaling = \"tensor-delayed\"\n"
                 "amax_history_a = [5]\n", PP_ERR_INPUT,
                 "nohist.toml:10: variant 'd': scaling \"tensor-delayed\" needs amax_history_a and amax_history_b", &c);
    pp_case_free(&c);
    parse_expect("other.toml", "[knobs]\nformat = \"e4m3\"\n[variants.m]\nscaling = \"mx\"\nmargin = 1\n",
                 PP_ERR_INPUT, "are scaling = \"tensor-delayed\"'s (this variant's scaling is 'mx')", &c);
    pp_case_free(&c);
    parse_expect("scalar.toml", "[variants.d]\namax_history_a = 3.0\n", PP_ERR_INPUT,
                 "scalar.toml:9: knob 'amax_history_a' in [variants.d] takes a list of numbers", &c);
    pp_case_free(&c);
    parse_expect("neg.toml", "[variants.d]\namax_history_b = [1.0,\n -2.0]\n", PP_ERR_INPUT,
                 "neg.toml:10: knob 'amax_history_b' in [variants.d]: element 2 must be a finite number >= 0", &c);
    pp_case_free(&c);
    parse_expect("str.toml", "[variants.d]\namax_history_b = [\"4\"]\n", PP_ERR_INPUT,
                 "element 1 must be a finite number >= 0", &c);
    pp_case_free(&c);
    parse_expect("long.toml", "[variants.d]\namax_history_a = [1, 2, 3, 4, 5, 6, 7, 8, 9]\n", PP_ERR_INPUT,
                 "long.toml:9: knob 'amax_history_a' in [variants.d] has 9 numbers; at most 8", &c);
    pp_case_free(&c);
    parse_expect("text.toml", "[variants.d]\namax_history_a = [0.1, 0.2, 0.3, 0.4, 0.6, 0.7]\n", PP_ERR_INPUT,
                 "text.toml:9: knob 'amax_history_a' in [variants.d] is too long to record", &c);
    pp_case_free(&c);
    parse_expect("matrix.toml", "[knobs]\nformat = \"e4m3\"\nscaling = \"tensor-delayed\"\n[matrix]\n"
                 "amax_history_a = [[1.0], [2.0]]\n", PP_ERR_INPUT,
                 "matrix.toml:12: knob 'amax_history_a' takes a list: set it in [knobs] or a variant, not in [matrix]",
                 &c);
    pp_case_free(&c);
    parse_expect("margin.toml", "[variants.d]\nmargin = 65\n", PP_ERR_INPUT,
                 "margin.toml:9: knob 'margin' in [variants.d] cannot be '65'", &c);
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
        cmocka_unit_test(test_delayed_recipe_knobs),
        cmocka_unit_test(test_mx_scale_knob),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
