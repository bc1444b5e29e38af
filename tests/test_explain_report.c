// test_explain_report.c — how explain's tables print a share (core/explain_result.h
// pp_explain_percent, report/explain_txt.c, report/explain_html.c): a share that rounds to zero is
// "0.0%" whatever its sign, a real negative keeps its sign, NaN is "-".
#include "test_util.h"

#include "core/explain_result.h"
#include "core/results.h"
#include "report/explain_html.h"
#include "report/explain_txt.h"

static void explain_percent_zero_has_no_sign(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(pp_explain_percent(b, sizeof b, -0.0), "0.0%");
    assert_string_equal(pp_explain_percent(b, sizeof b, 0.0), "0.0%");
    assert_string_equal(pp_explain_percent(b, sizeof b, -1e-9), "0.0%");
    assert_string_equal(pp_explain_percent(b, sizeof b, -0.0004), "0.0%");  // −0.04%: rounds to 0.0
    assert_string_equal(pp_explain_percent(b, sizeof b, 0.0004), "0.0%");
    assert_string_equal(pp_explain_percent(b, sizeof b, -0x1p-1074), "0.0%");  // the least subnormal
}

static void explain_percent_keeps_real_negatives(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(pp_explain_percent(b, sizeof b, -0.012), "-1.2%");
    assert_string_equal(pp_explain_percent(b, sizeof b, -0.0006), "-0.1%");  // −0.06%: rounds to −0.1
    assert_string_equal(pp_explain_percent(b, sizeof b, 0.9876), "98.8%");
    assert_string_equal(pp_explain_percent(b, sizeof b, 1.0), "100.0%");
    assert_string_equal(pp_explain_percent(b, sizeof b, NAN), "-");
    assert_string_equal(pp_explain_percent(b, sizeof b, INFINITY), "inf%");
    assert_string_equal(pp_explain_percent(b, sizeof b, -INFINITY), "-inf%");
}

// One variant with three sites: shares 1.0, −1e-5 (prints 0.0%) and −0.012 (prints −1.2%), an
// interaction of −0.0 (prints 0.0%), and share bands with negative zeros at their ends.
static void explain_tables_print_no_negative_zero(void **state)
{
    (void)state;
    pp_explain_site sites[3];
    memset(sites, 0, sizeof sites);
    snprintf(sites[0].name, sizeof sites[0].name, "theta");
    snprintf(sites[1].name, sizeof sites[1].name, "m");
    snprintf(sites[2].name, sizeof sites[2].name, "v");
    sites[0].share = 1.0, sites[1].share = -1e-5, sites[2].share = -0.012;
    sites[0].share_band[0] = -1e-6, sites[0].share_band[1] = 1.0;
    sites[1].share_band[0] = -0.02, sites[1].share_band[1] = -0.0;
    sites[2].share_band[0] = sites[2].share_band[1] = -0.012;
    pp_explain_table t;
    memset(&t, 0, sizeof t);
    snprintf(t.tensor, sizeof t.tensor, "theta");
    snprintf(t.against, sizeof t.against, "reference");
    t.interaction = -0.0;
    t.band_runs = 4;
    t.n_sites = 3;
    t.sites = sites;
    pp_variant_result v;
    memset(&v, 0, sizeof v);
    snprintf(v.name, sizeof v.name, "bf16-plain");
    v.n_explain = 1;
    v.explain = &t;
    pp_run_result r;
    memset(&r, 0, sizeof r);
    r.n_variants = 1;
    r.variants = &v;
    pp_textbuf b = {0};
    pp_report_explain_text(&b, &r);
    char *txt = pp_tb_take(&b);
    assert_non_null(txt);
    assert_null(strstr(txt, "-0.0%"));
    assert_non_null(strstr(txt, "-1.2%"));
    assert_non_null(strstr(txt, "theta 0.0% to 100.0%"));
    assert_non_null(strstr(txt, "m -2.0% to 0.0%"));
    assert_non_null(strstr(txt, "v -1.2% to -1.2%"));
    free(txt);
    pp_report_explain_html(&b, &r, 800);
    char *html = pp_tb_take(&b);
    assert_non_null(html);
    assert_null(strstr(html, "-0.0%"));
    assert_non_null(strstr(html, "m exact: share 0.0%"));
    assert_non_null(strstr(html, "v exact: share -1.2%"));
    assert_non_null(strstr(html, "interaction: 0.0%"));
    free(html);
}

int main(void)
{
    pp_test_report_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(explain_percent_zero_has_no_sign),
        cmocka_unit_test(explain_percent_keeps_real_negatives),
        cmocka_unit_test(explain_tables_print_no_negative_zero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
