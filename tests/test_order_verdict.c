// test_order_verdict.c — the order band's verdict (pipeline/order_band.h pp_order_verdict_of,
// pp_order_pair; report/order_verdict.h's line): hand-worked bands, touching bands, equal figures,
// NaN and ±Inf, and one line over the whole statistic table. Run: build/rel/tests/test_order_verdict
#include <math.h>

#include "test_util.h"

#include "core/statistic.h"
#include "core/textbuf.h"
#include "pipeline/order_band.h"
#include "report/order_verdict.h"

static void order_verdict_hand_worked(void **state)
{
    (void)state;
    const double lo[3] = {0.40, 0.41, 0.42}, hi[3] = {0.48, 0.50, 0.52}, touch[3] = {0.42, 0.45, 0.50};
    assert_int_equal(pp_order_verdict_of(0.41, lo, 0.50, hi), PP_ORDER_LOWER_ROBUST);
    assert_int_equal(pp_order_verdict_of(0.50, hi, 0.41, lo), PP_ORDER_HIGHER_ROBUST);
    // bands that share one value: some pair of orders makes the figures equal, not robust
    assert_int_equal(pp_order_verdict_of(0.41, lo, 0.45, touch), PP_ORDER_LOWER);
    assert_int_equal(pp_order_verdict_of(0.45, touch, 0.41, lo), PP_ORDER_HIGHER);
    // equal nominal figures: equal, whatever the bands
    assert_int_equal(pp_order_verdict_of(0.45, touch, 0.45, hi), PP_ORDER_EQUAL);
    const double zero[3] = {0.0, 0.0, 0.0};
    assert_int_equal(pp_order_verdict_of(0.0, zero, -0.0, zero), PP_ORDER_EQUAL);
    // NaN figures are undecided; a NaN band bound overlaps everything
    const double nanb[3] = {NAN, 0.5, 0.6};
    assert_int_equal(pp_order_verdict_of(NAN, lo, 0.5, hi), PP_ORDER_UNDECIDED);
    assert_int_equal(pp_order_verdict_of(0.41, lo, NAN, hi), PP_ORDER_UNDECIDED);
    assert_int_equal(pp_order_verdict_of(0.41, lo, 0.5, nanb), PP_ORDER_LOWER);
    // +Inf is a figure like any other (an overflowing variant is farther)
    const double inf[3] = {INFINITY, INFINITY, INFINITY};
    assert_int_equal(pp_order_verdict_of(0.41, lo, INFINITY, inf), PP_ORDER_LOWER_ROBUST);
    assert_int_equal(pp_order_verdict_of(INFINITY, inf, INFINITY, inf), PP_ORDER_EQUAL);
}

static pp_comparison banded(const char *variant, const char *tensor, const char *against)
{
    pp_comparison c;
    memset(&c, 0, sizeof c);
    snprintf(c.variant, sizeof c.variant, "%s", variant);
    snprintf(c.tensor, sizeof c.tensor, "%s", tensor);
    snprintf(c.against, sizeof c.against, "%s", against);
    pp_close_stats_init(&c.stats);
    c.band_runs = 5;
    c.n_band_stats = pp_statistic_count();
    for (int k = 0; k < c.n_band_stats; k++) {  // every band the nominal figure alone
        double x = pp_statistic_at(k)->value(&c.stats);
        c.band[k][0] = c.band[k][1] = c.band[k][2] = x;
    }
    return c;
}

static int stat_k(const char *name)
{
    for (int k = 0; k < pp_statistic_count(); k++)
        if (!strcmp(pp_statistic_at(k)->name, name))
            return k;
    fail_msg("no statistic %s", name);
    return -1;
}

static void set_band(pp_comparison *c, const char *name, double lo, double hi)
{
    int k = stat_k(name);
    c->band[k][0] = lo, c->band[k][2] = hi;
    c->band[k][1] = pp_statistic_at(k)->value(&c->stats);
}

static void order_pair_rules(void **state)
{
    (void)state;
    pp_comparison a = banded("a", "out", "reference"), b = banded("b", "out", "reference");
    assert_true(pp_order_pair(&a, &b));
    pp_comparison c = banded("a", "out", "reference");
    assert_false(pp_order_pair(&a, &c));  // one variant
    c = banded("c", "dq", "reference");
    assert_false(pp_order_pair(&a, &c));  // another tensor
    c = banded("c", "out", "b");
    assert_false(pp_order_pair(&a, &c));  // against another expected
    c = banded("c", "out", "reference");
    c.band_runs = 0;
    assert_false(pp_order_pair(&a, &c));  // no band
}

// a: 40 of 100 mismatched (band 39–41), greatest difference 1 (band 1–2.5); b: 50 (45–52) and 2
// (2–3); no finite pair in either, so mean_abs and rms are NaN; max_ulp both 0, b's band to 1.
static void order_verdict_line_groups_statistics(void **state)
{
    (void)state;
    pp_comparison a = banded("a", "out", "reference"), b = banded("b", "out", "reference");
    a.stats.numel = b.stats.numel = 100;
    a.stats.mismatched = 40, b.stats.mismatched = 50;
    a.stats.abs_diff.index = b.stats.abs_diff.index = 0;
    a.stats.abs_diff.value = 1.0, b.stats.abs_diff.value = 2.0;
    set_band(&a, "mismatch_fraction", 0.39, 0.41);
    set_band(&b, "mismatch_fraction", 0.45, 0.52);
    set_band(&a, "mismatched", 39, 41);
    set_band(&b, "mismatched", 45, 52);
    set_band(&a, "max_abs_diff", 1.0, 2.5);
    set_band(&b, "max_abs_diff", 2.0, 3.0);
    set_band(&b, "max_ulp", 0.0, 1.0);
    pp_textbuf t = {0};
    pp_order_verdict_line(&t, &a, &b);
    char *s = pp_tb_take(&t);
    const char *want = "a vs b, out against reference: a closer, robust to order: mismatch_fraction, mismatched; "
                       "a closer, not robust to order: max_abs_diff; equal under every order: max_rel_diff, "
                       "worst_tolerance_ratio, nan_count, inf_count, max_abs_error, max_ulp_at_scale; equal "
                       "nominally, not under every order: max_ulp; undecided (NaN): mean_abs, rms";
    if (strcmp(s, want))
        fail_msg("got  %s\nwant %s", s, want);
    free(s);
    pp_order_verdict_line(&t, &b, &a);  // the other way round: the same groups, named for a
    s = pp_tb_take(&t);
    assert_non_null(strstr(s, "b vs a, out against reference: a closer, robust to order: mismatch_fraction, mismatched; "
                              "a closer, not robust to order: max_abs_diff; equal under every order"));
    free(s);
}

// The pairs both reports list: every i < j that pp_order_pair accepts, in that order, k from 0.
static void record_pair(void *ctx, int k, const pp_comparison *a, const pp_comparison *c)
{
    pp_textbuf *t = ctx;
    pp_tb_printf(t, "%d:%s/%s>%s/%s ", k, a->variant, a->tensor, c->variant, c->against);
}

static void order_verdict_each_lists_pairs_in_order(void **state)
{
    (void)state;
    pp_comparison cs[5] = {banded("a", "out", "reference"), banded("b", "dq", "reference"),
                           banded("b", "out", "reference"), banded("c", "out", "reference"),
                           banded("c", "dq", "reference")};
    pp_run_result r;
    memset(&r, 0, sizeof r);
    r.comparisons = cs;
    r.n_comparisons = 5;
    pp_textbuf t = {0};
    assert_int_equal(pp_order_verdict_each(&r, record_pair, &t), 4);
    char *s = pp_tb_take(&t);
    assert_string_equal(s, "0:a/out>b/reference 1:a/out>c/reference 2:b/dq>c/reference 3:b/out>c/reference ");
    free(s);
    r.n_comparisons = 1;  // no pair: fn never called
    assert_int_equal(pp_order_verdict_each(&r, record_pair, &t), 0);
    s = pp_tb_take(&t);
    assert_true(!s || !*s);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(order_verdict_hand_worked),
        cmocka_unit_test(order_pair_rules),
        cmocka_unit_test(order_verdict_line_groups_statistics),
        cmocka_unit_test(order_verdict_each_lists_pairs_in_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
