// test_statistic.c — the one table of statistic names (src/core/statistic.h): every name
// resolves to its own value, the case reader accepts exactly those names in gate rules and lists
// them when a rule names another, and the gate reads its values (max_abs_error included).
#include "test_util.h"

#include <math.h>

#include "core/statistic.h"
#include "pipeline/case.h"
#include "pipeline/gate.h"
#include "pipeline/order_band.h"

// Statistics of actual {1, 2, 4, NaN} against expected {1, 2.5, 3, 1} at rtol 0, atol 0.1.
static pp_close_stats sample(void)
{
    static const double a[] = {1.0, 2.0, 4.0, NAN}, e[] = {1.0, 2.5, 3.0, 1.0};
    pp_close_opts o;
    memset(&o, 0, sizeof o);
    o.atol = 0.1;
    o.torch_major = 2;
    o.torch_minor = 1;
    o.actual_format = o.expected_format = PP_FMT_FP64;
    pp_close_stats s;
    pp_close_stats_init(&s);
    pp_close_stats_update(&s, &o, a, e, 4, 0);
    return s;
}

static void every_name_resolves(void **state)
{
    (void)state;
    pp_close_stats s = sample();
    assert_true(pp_statistic_count() >= 11);
    for (int i = 0; i < pp_statistic_count(); i++) {
        const pp_statistic *st = pp_statistic_at(i);
        assert_non_null(st->name);
        assert_non_null(st->doc);
        assert_ptr_equal(pp_statistic_find(st->name), st);
        for (int j = 0; j < i; j++)
            assert_string_not_equal(pp_statistic_at(j)->name, st->name);
        double v = st->value(&s), w = pp_statistic_value(st->name, &s);
        assert_memory_equal(&v, &w, sizeof v);
    }
    assert_null(pp_statistic_at(pp_statistic_count()));
    assert_null(pp_statistic_find("max_ulps"));
    assert_true(isnan(pp_statistic_value("max_ulps", &s)));
    // the values: 3 of 4 mismatched (2 vs 2.5, 4 vs 3, the NaN); the greatest finite |a - e| is 1
    assert_true(pp_statistic_value("mismatched", &s) == 3.0);
    assert_true(pp_statistic_value("mismatch_fraction", &s) == 0.75);
    assert_true(pp_statistic_value("nan_count", &s) == 1.0);
    assert_true(pp_statistic_value("inf_count", &s) == 0.0);
    assert_true(pp_statistic_value("max_abs_error", &s) == 1.0);
    char names[1024];
    pp_statistic_names(names, sizeof names);
    assert_non_null(strstr(names, "mismatch_fraction, mismatched, max_abs_diff"));
    assert_non_null(strstr(names, "max_abs_error"));
}

static const char *case_with_rule(const char *rule, char *buf, size_t n)
{
    snprintf(buf, n,
             "[case]\nname = \"g\"\nop = \"gemm\"\nseed = 1\n[op]\nm = 4\nn = 4\nk = 8\n"
             "[variants.fp32acc]\naccumulate = \"fp32\"\n[variants.fp16acc]\naccumulate = \"storage\"\n"
             "[gate]\n%s\n", rule);
    return buf;
}

// Every name of the table is a gate statistic; another name's error lists them all.
static void the_case_reader_reads_the_table(void **state)
{
    (void)state;
    char text[1024], rule[128];
    for (int i = 0; i < pp_statistic_count(); i++) {
        snprintf(rule, sizeof rule, "\"*.c.%s\" = { max = 1e300 }", pp_statistic_at(i)->name);
        case_with_rule(rule, text, sizeof text);
        pp_case c;
        pp_error err = {0};
        int rc = pp_case_parse(text, strlen(text), "g.toml", &c, &err);
        if (rc)
            fprintf(stderr, "  %s\n", err.msg);
        assert_int_equal(rc, PP_OK);
        pp_case_free(&c);
    }
    case_with_rule("\"*.c.max_ulps\" = { max = 1 }", text, sizeof text);
    pp_case c;
    pp_error err = {0};
    assert_int_equal(pp_case_parse(text, strlen(text), "g.toml", &c, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "g.toml:14: unknown statistic 'max_ulps' in [gate] (did you mean 'max_ulp'? known: "));
    char names[1024];
    pp_statistic_names(names, sizeof names);
    assert_non_null(strstr(err.msg, names));
    pp_case_free(&c);
}

// The gate reads a rule's statistic through the table: max_abs_error is gateable.
static void the_gate_reads_the_table(void **state)
{
    (void)state;
    char text[1024];
    case_with_rule("\"fp16acc.c.max_abs_error\" = { max = 0.5 }\n\"fp32acc.c.max_abs_error\" = { max = 2 }", text,
                   sizeof text);
    pp_case c;
    pp_error err = {0};
    assert_int_equal(pp_case_parse(text, strlen(text), "g.toml", &c, &err), PP_OK);
    pp_run_result r;
    memset(&r, 0, sizeof r);
    r.n_comparisons = 2;
    r.comparisons = calloc(2, sizeof *r.comparisons);
    assert_non_null(r.comparisons);
    for (int i = 0; i < 2; i++) {
        snprintf(r.comparisons[i].variant, PP_NAME_MAX, "%s", i ? "fp32acc" : "fp16acc");
        snprintf(r.comparisons[i].tensor, PP_NAME_MAX, "c");
        snprintf(r.comparisons[i].against, PP_NAME_MAX, "reference");
        r.comparisons[i].stats = sample();  // max_abs_error 1
    }
    assert_int_equal(pp_gate_evaluate(&c, &r), 1);
    assert_int_equal(r.n_verdicts, 2);
    assert_false(r.verdicts[0].passed);
    assert_non_null(strstr(r.verdicts[0].detail, "max_abs_error = 1.0"));
    assert_true(r.verdicts[1].passed);
    // evaluated again (a stored report judged anew): the verdicts are replaced, not appended
    assert_int_equal(pp_gate_evaluate(&c, &r), 1);
    assert_int_equal(r.n_verdicts, 2);
    pp_run_result_free(&r);
    pp_case_free(&c);
}

// max_ulp_at_scale: the largest |a − e| in ulps at the expected tensor's largest magnitude. A
// near-zero expected element off by a tiny amount makes max_ulp explode (its own ulp is tiny) but
// not max_ulp_at_scale; the statistic merges across any split; a report older than it (scale
// unknown) gives NaN, an empty comparison 0.
// "<stat>_band_max" names a statistic of the table (gate rules on --orders' bands); the gate
// reads the band's max when the comparison has a band, the nominal value otherwise.
static void band_max_names_and_values(void **state)
{
    (void)state;
    assert_int_equal(pp_statistic_band_max("mismatch_fraction_band_max"), 0);
    assert_true(pp_statistic_band_max("max_ulp_band_max") >= 0);
    assert_int_equal(pp_statistic_band_max("mismatch_fraction"), -1);
    assert_int_equal(pp_statistic_band_max("_band_max"), -1);
    assert_int_equal(pp_statistic_band_max("nonsense_band_max"), -1);
    double a[3] = {0.1, 0.2, 0.3}, b[3] = {0.3, 0.4, 0.5}, c[3] = {0.31, 0.4, 0.5}, n[3] = {NAN, 0.4, 0.5};
    assert_true(pp_band_overlap(a, b));   // touching bands overlap
    assert_false(pp_band_overlap(a, c));
    assert_false(pp_band_overlap(c, a));
    assert_true(pp_band_overlap(a, n));   // unknown: not robust
}

static void max_ulp_at_scale_ignores_near_zero_elements(void **state)
{
    (void)state;
    // fp16: expected {1, 2, 2^-24 (the smallest subnormal, whose ulp is 2^-24)}; actual off by
    // ulp(2) = 2^-9 at 2, and by 2^-20 (16 of its ulps) at the subnormal
    static const double e[] = {1.0, 2.0, 0x1p-24};
    const double a[] = {1.0, 2.0 + 0x1p-9, 0x1p-24 + 0x1p-20};
    pp_close_opts o;
    memset(&o, 0, sizeof o);
    o.torch_major = 2;
    o.torch_minor = 1;
    o.actual_format = o.expected_format = PP_FMT_FP16;
    pp_close_stats s, part;
    pp_close_stats_init(&s);
    pp_close_stats_update(&s, &o, a, e, 3, 0);
    assert_true(pp_statistic_value("max_ulp", &s) == 16.0);            // the subnormal dominates
    assert_true(pp_statistic_value("max_ulp_at_scale", &s) == 1.0);    // 2^-9 / ulp(2) = 1
    assert_true(pp_statistic_value("max_abs_error", &s) == 0x1p-9);
    // split in two and merged: the same
    pp_close_stats_init(&part);
    pp_close_stats_update(&part, &o, a + 1, e + 1, 2, 1);
    pp_close_stats merged;
    pp_close_stats_init(&merged);
    pp_close_stats_update(&merged, &o, a, e, 1, 0);
    pp_close_stats_merge(&merged, &part);
    assert_true(pp_statistic_value("max_ulp_at_scale", &merged) == 1.0);
    // a report older than the statistic: the scale unknown
    s.ulp_scale = 0.0;
    assert_true(isnan(pp_statistic_value("max_ulp_at_scale", &s)));
    pp_close_stats empty;
    pp_close_stats_init(&empty);
    assert_true(pp_statistic_value("max_ulp_at_scale", &empty) == 0.0);
    assert_string_equal(pp_statistic_find("max_ulp_at_scale")->label, "ulp@scale");
    assert_string_equal(pp_statistic_find("max_abs_error")->label, "max error");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_name_resolves),
        cmocka_unit_test(the_case_reader_reads_the_table),
        cmocka_unit_test(the_gate_reads_the_table),
        cmocka_unit_test(max_ulp_at_scale_ignores_near_zero_elements),
        cmocka_unit_test(band_max_names_and_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
