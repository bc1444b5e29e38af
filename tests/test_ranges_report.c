// test_ranges_report.c — the range diagnostics in the reports: report.h5 /variants/V/ranges
// round-trips every counter bit for bit (NaN-free doubles, +Inf amax and min_nonzero, a note for
// a variant that recorded none, reports without the group), and the text says the findings in
// words (overflow, NaN, flushes, little headroom), rows with something to say first. Run: build/rel/tests/test_ranges_report.
#include "test_util.h"

#include "core/results.h"
#include "report/ranges_txt.h"
#include "report/report_h5.h"
#include "report/report_txt.h"

static void set(char *dst, const char *src)
{
    snprintf(dst, PP_NAME_MAX, "%s", src);
}

static pp_range_row row_make(const char *site, const char *fmt, const char *axis, int64_t heads)
{
    pp_range_row row;
    memset(&row, 0, sizeof row);
    snprintf(row.site, sizeof row.site, "%s", site);
    snprintf(row.format, sizeof row.format, "%s", fmt);
    snprintf(row.axis, sizeof row.axis, "%s", axis);
    row.heads = heads;
    row.cells = calloc((size_t)heads, sizeof *row.cells);
    for (int64_t h = 0; h < heads; h++) {
        pp_range_cell_clear(&row.cells[h]);
        row.cells[h].count = 100 + h;
        row.cells[h].amax = 1.5 * (double)(h + 1);
        row.cells[h].min_nz = 0x1p-24;
    }
    return row;
}

// Two variants of an attention run: "fp16" recorded (scaled_scores overflows in head 3 only,
// p holds NaN in heads 1 and 3, out is plain; one cell never noted: min_nz +Inf), "ext" not.
static void build(pp_run_result *r)
{
    memset(r, 0, sizeof *r);
    set(r->case_name, "ranges");
    set(r->op, "attention");
    r->n_variants = 2;
    r->variants = calloc(2, sizeof *r->variants);
    set(r->variants[0].name, "fp16");
    set(r->variants[1].name, "ext");
    r->variants[1].external = 1;
    pp_variant_ranges *g = &r->variants[0].ranges;
    g->recorded = 1;
    g->n_rows = 3;
    g->rows = calloc(3, sizeof *g->rows);
    g->rows[0] = row_make("out", "fp16", "head", 4);
    g->rows[1] = row_make("scaled_scores", "fp16", "head", 4);
    g->rows[1].cells[3].overflow = g->rows[1].cells[3].inf = 7;
    g->rows[1].cells[3].amax = INFINITY;
    g->rows[1].cells[0].near_max = 50;
    g->rows[0].cells[1].near_max = 10;  // 10 of 101: under 1 in 10, nothing to say
    g->rows[2] = row_make("p", "fp16", "head", 4);
    g->rows[2].cells[1].nan = 2, g->rows[2].cells[3].nan = 9;
    g->rows[2].cells[2].underflow = 3, g->rows[2].cells[2].subnormal = 4, g->rows[2].cells[2].clamped = 1;
    g->rows[2].cells[0].count = 0, g->rows[2].cells[0].min_nz = INFINITY, g->rows[2].cells[0].amax = 0;
    snprintf(r->variants[1].ranges.note, sizeof r->variants[1].ranges.note, "external variant: read from files");
}

static void ranges_h5_roundtrip(void **state)
{
    (void)state;
    char dir[64], path[160];
    assert_int_equal(pp_test_mkdtemp(dir, sizeof dir, "ranges_h5"), 0);
    snprintf(path, sizeof path, "%s/report.h5", dir);
    pp_run_result r, back;
    build(&r);
    pp_error e = {0};
    assert_int_equal(pp_report_h5_write(path, &r, &e), PP_OK);
    int rc = pp_report_h5_read(path, &back, &e);
    if (rc)
        fprintf(stderr, "read: %s\n", e.msg);
    assert_int_equal(rc, PP_OK);
    const pp_variant_ranges *a = &r.variants[0].ranges, *b = &back.variants[0].ranges;
    assert_int_equal(b->recorded, 1);
    assert_int_equal(b->n_rows, a->n_rows);
    for (int i = 0; i < a->n_rows; i++) {  // in the order written
        assert_string_equal(b->rows[i].site, a->rows[i].site);
        assert_string_equal(b->rows[i].format, a->rows[i].format);
        assert_string_equal(b->rows[i].axis, a->rows[i].axis);
        assert_int_equal(b->rows[i].heads, a->rows[i].heads);
        assert_memory_equal(b->rows[i].cells, a->rows[i].cells, (size_t)a->rows[i].heads * sizeof(pp_range_cell));
    }
    assert_int_equal(back.variants[1].ranges.recorded, 0);
    assert_string_equal(back.variants[1].ranges.note, r.variants[1].ranges.note);
    // the text of the stored report is the text of the run
    char *t1 = pp_report_text(&r), *t2 = pp_report_text(&back);
    assert_string_equal(t1, t2);
    free(t1), free(t2);
    pp_run_result_free(&back);
    // a report without ranges reads as not recorded
    pp_variant_ranges_free(&r.variants[0].ranges);
    memset(&r.variants[1].ranges, 0, sizeof r.variants[1].ranges);
    assert_int_equal(pp_report_h5_write(path, &r, &e), PP_OK);
    assert_int_equal(pp_report_h5_read(path, &back, &e), PP_OK);
    assert_int_equal(back.variants[0].ranges.recorded, 0);
    assert_int_equal(back.variants[0].ranges.n_rows, 0);
    assert_string_equal(back.variants[0].ranges.note, "");
    pp_run_result_free(&back);
    pp_run_result_free(&r);
    pp_test_rm_tree(dir);
}

static void ranges_text_words(void **state)
{
    (void)state;
    pp_run_result r;
    build(&r);
    pp_textbuf b = {0};
    pp_report_ranges_text(&b, &r, 1);
    char *t = pp_tb_take(&b);
    assert_non_null(strstr(t, "fp16: scaled_scores overflows to ±Inf in head 3 (7 of 406 values, fp16)\n"));
    assert_non_null(strstr(t, "fp16: p holds NaN in heads 1, 3 (11 of 306 values, fp16)\n"));
    assert_non_null(strstr(t, "fp16: p flushes non-zero values to zero in head 2 (3 of 306 values, fp16)\n"));
    // headroom: 50 of head 0's 100 values within a factor 2 of fp16's largest (1 in 10 is enough)
    assert_non_null(strstr(t, "fp16: scaled_scores lies within a factor 2 of its format's largest in head 0 "
                              "(50 of 406 values, fp16)\n"));
    assert_null(strstr(t, "fp16: out lies within"));
    assert_null(strstr(t, "fp16: no NaN at any site"));  // it has NaN: never said
    assert_null(strstr(t, "fp16: no overflow"));
    assert_non_null(strstr(t, "ext: no range diagnostics (external variant: read from files)\n"));
    // table: the overflowing row first, then NaN, then the plain out row
    const char *ov = strstr(t, "fp16                     scaled_scores"), *nan = strstr(t, "fp16                     p ");
    const char *plain = strstr(t, "fp16                     out ");
    assert_true(ov && nan && plain && ov < nan && nan < plain);
    assert_non_null(strstr(t, "1 scale at the format's limits"));
    free(t);
    // a variant with nothing to say
    pp_variant_ranges_free(&r.variants[0].ranges);
    r.variants[0].ranges.recorded = 1;
    b = (pp_textbuf){0};
    pp_report_ranges_text(&b, &r, 0);
    t = pp_tb_take(&b);
    assert_non_null(strstr(t, "fp16: no overflow and no NaN at any site\n"));
    free(t);
    // no variant recorded or noted anything: no section at all
    memset(&r.variants[1].ranges, 0, sizeof r.variants[1].ranges);
    r.variants[0].ranges.recorded = 0;
    b = (pp_textbuf){0};
    pp_report_ranges_text(&b, &r, 1);
    t = pp_tb_take(&b);
    assert_string_equal(t ? t : "", "");
    free(t);
    pp_run_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ranges_h5_roundtrip),
        cmocka_unit_test(ranges_text_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
