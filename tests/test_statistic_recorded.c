// test_statistic_recorded.c — a statistic a report.h5 did not record (written before it existed)
// reads back as "not recorded", never as 0: the statistic table's stored attributes give the mask,
// text and HTML show "—", and a gate rule on it is refused (exit 2) naming the statistic and the
// report. The old-style report is made here: a fresh report.h5 with the attributes removed.
// Run from the repository root (tools/run-tests.sh does).
#include "test_util.h"

#include <hdf5.h>

#include "core/statistic.h"
#include "pipeline/case.h"
#include "pipeline/gate.h"
#include "pipeline/ref_cache.h"
#include "pipeline/run.h"
#include "report/report_h5.h"
#include "report/report_html.h"
#include "report/report_txt.h"

static int stat_index(const char *name)
{
    return (int)(pp_statistic_find(name) - pp_statistic_at(0));
}

// present(): every item but the one named by ctx
static int all_but(void *ctx, const char *item)
{
    return strcmp(item, (const char *)ctx) != 0;
}

static int all_present(void *ctx, const char *item)
{
    (void)ctx, (void)item;
    return 1;
}

// The mask from the table: max_abs_error absent takes max_ulp_at_scale with it (computed from it);
// ulp_scale absent only max_ulp_at_scale; a derived statistic follows the items it is computed from.
static void test_mask_follows_the_stored_items(void **state)
{
    (void)state;
    uint32_t bit_err = 1u << stat_index("max_abs_error"), bit_scale = 1u << stat_index("max_ulp_at_scale");
    assert_int_equal(pp_statistic_unrecorded_mask(all_present, NULL), 0);
    assert_int_equal(pp_statistic_unrecorded_mask(all_but, "max_abs_error"), bit_err | bit_scale);
    assert_int_equal(pp_statistic_unrecorded_mask(all_but, "ulp_scale"), bit_scale);
    uint32_t sums = pp_statistic_unrecorded_mask(all_but, "exact_sums");
    assert_int_equal(sums, (1u << stat_index("mean_abs")) | (1u << stat_index("rms")));
    assert_int_equal(pp_statistic_unrecorded_mask(all_but, "max_ulp"), 1u << stat_index("max_ulp"));
    // every statistic names at least one item, its own name by default
    for (int k = 0; k < pp_statistic_count(); k++)
        assert_non_null(pp_statistic_stored(k, 0));
    assert_string_equal(pp_statistic_stored(stat_index("max_ulp"), 0), "max_ulp");
    assert_null(pp_statistic_stored(stat_index("max_ulp"), 1));
    assert_null(pp_statistic_stored(-1, 0));
    // a comparison a run computes records everything; out-of-table indices count as recorded
    pp_comparison c;
    memset(&c, 0, sizeof c);
    for (int k = 0; k < pp_statistic_count(); k++)
        assert_true(pp_statistic_recorded(&c, k));
    c.unrecorded = bit_err;
    assert_false(pp_statistic_recorded(&c, stat_index("max_abs_error")));
    assert_true(pp_statistic_recorded(&c, stat_index("max_ulp")));
    assert_true(pp_statistic_recorded(&c, 99));
}

static const char case_text[] =
    "[case]\nname = \"old-report\"\nop = \"gemm\"\nseed = 4\n"
    "[op]\nm = 3\nn = 5\nk = 16\n"
    "[variants.storage]\naccumulate = \"storage\"\n"
    "[gate]\n"
    "\"*.c.mismatch_fraction\" = { max = 1.0 }\n"
    "\"storage.c.max_abs_error\" = { max = 1e-30 }\n";

// Removes the attributes of the comparison group named prefix and prefix_<suffix>, as a report
// written before the statistic existed lacks them.
static void strip_attributes(hid_t g, const char *prefix)
{
    static const char *const suffixes[] = {"", "_index", "_flat_index", "_actual", "_expected"};
    int removed = 0;
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        char name[256];
        snprintf(name, sizeof name, "%s%s", prefix, suffixes[i]);
        if (H5Aexists(g, name) > 0) {
            assert_true(H5Adelete(g, name) >= 0);
            removed++;
        }
    }
    assert_true(removed > 0);
}

// The case above run on the CPU and its report written to the test's file name (path): a fresh
// report of this build, which records this build's reference epoch. The parsed case goes to *keep
// (NULL: freed).
static void write_fresh_report(void **state, const char *name, char *path, pp_case *keep)
{
    pp_test_tmp_path(state, name, path);
    pp_error err = {0};
    pp_case c;
    assert_int_equal(pp_case_parse(case_text, strlen(case_text), "old.toml", &c, &err), PP_OK);
    pp_run_opts o = {.device = "cpu", .threads = 1};
    pp_run_result r;
    memset(&r, 0, sizeof r);
    assert_int_equal(pp_run_case(&c, &o, &r, &err), PP_OK);
    assert_int_equal(r.reference_epoch, PP_REF_EPOCH);
    assert_int_equal(pp_report_h5_write(path, &r, &err), PP_OK);
    pp_run_result_free(&r);
    if (keep)
        *keep = c;
    else
        pp_case_free(&c);
}

// A fresh report of a run, then the same report as one written before max_abs_error and ulp_scale
// existed: the fresh one records everything and its gate measures max_abs_error (a real value that
// fails 1e-30); the old one reads them as not recorded, shows "—" and refuses the rule.
static void test_old_report_refuses_and_shows_dash(void **state)
{
    char path[PP_TEST_PATH_MAX];
    pp_case c;
    pp_error err = {0};
    pp_run_result r;
    write_fresh_report(state, "report.h5", path, &c);

    // fresh: everything recorded, the rule measured (and failed: storage accumulation errs)
    assert_int_equal(pp_report_h5_read(path, &r, &err), PP_OK);
    for (int i = 0; i < r.n_comparisons; i++)
        assert_int_equal(r.comparisons[i].unrecorded, 0);
    assert_int_equal(pp_gate_rules_recorded(&c, &r, path, &err), PP_OK);
    assert_int_equal(pp_gate_evaluate(&c, &r), 1);
    const pp_comparison *s = pp_run_result_find(&r, "storage", "c", "reference");
    assert_non_null(s);
    assert_true(pp_statistic_value("max_abs_error", &s->stats) > 1e-30);
    char *text = pp_report_text(&r);
    assert_null(strstr(text, "\u2014"));
    free(text);
    pp_run_result_free(&r);

    // old style: the attributes of max_abs_error (and its index and operands) and ulp_scale gone
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t g = H5Gopen2(f, "/variants/storage/stats/c/reference", H5P_DEFAULT);
    assert_true(g >= 0);
    strip_attributes(g, "max_abs_error");
    strip_attributes(g, "ulp_scale");
    H5Gclose(g);
    H5Fclose(f);

    memset(&err, 0, sizeof err);
    assert_int_equal(pp_report_h5_read(path, &r, &err), PP_OK);
    s = pp_run_result_find(&r, "storage", "c", "reference");
    assert_non_null(s);
    assert_false(pp_statistic_recorded(s, stat_index("max_abs_error")));
    assert_false(pp_statistic_recorded(s, stat_index("max_ulp_at_scale")));
    assert_true(pp_statistic_recorded(s, stat_index("max_ulp")));
    assert_true(pp_statistic_recorded(s, stat_index("mismatch_fraction")));
    // the other comparisons of the file keep theirs
    const pp_comparison *d = pp_run_result_find(&r, "default", "c", "reference");
    if (d)
        assert_int_equal(d->unrecorded, 0);

    assert_int_equal(pp_gate_rules_recorded(&c, &r, path, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, "gate rule 'storage.c.max_abs_error' (old.toml:13) names max_abs_error, which "
                                    "this report did not record for storage c vs reference"));
    // a rule on a statistic it did record is not refused
    pp_case only_mismatch = c;
    only_mismatch.n_rules = 1;
    assert_int_equal(pp_gate_rules_recorded(&only_mismatch, &r, path, &err), PP_OK);

    // text and HTML: "—" in the max error and ulp@scale cells, no "0.0" made up
    text = pp_report_text(&r);
    const char *summary = strstr(text, "== summary ==");
    assert_non_null(summary);
    const char *row = strstr(summary, "\nstorage ");
    assert_non_null(row);
    const char *eol = strchr(row + 1, '\n');
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)(eol - row - 1), row + 1);
    assert_non_null(strstr(line, "\u2014"));
    assert_non_null(strstr(strstr(line, "\u2014") + 1, "\u2014"));
    // the columns stay aligned: the row is as wide in characters as the heading
    const char *head = strchr(summary, '\n') + 1;
    int head_cols = (int)(strchr(head, '\n') - head), row_cols = 0;
    for (const unsigned char *p = (const unsigned char *)line; *p; p++)
        row_cols += (*p & 0xC0) != 0x80;
    assert_int_equal(row_cols, head_cols);
    free(text);
    char *html = pp_report_html(&r);
    assert_non_null(html);
    assert_non_null(strstr(html, "\u2014</td>"));
    free(html);
    pp_run_result_free(&r);
    pp_case_free(&c);
}

// The reference epoch: a fresh run records this build's (PP_REF_EPOCH) and reads it back; a report
// written before it was recorded (the attribute gone) reads 0. pp_gate_epoch_note: nothing when
// the epochs agree, "records no reference epoch" for 0, both epochs named otherwise.
static void test_reference_epoch_recorded_and_noted(void **state)
{
    char path[PP_TEST_PATH_MAX];
    write_fresh_report(state, "epoch.h5", path, NULL);
    pp_error err = {0};
    pp_run_result r;
    assert_int_equal(pp_report_h5_read(path, &r, &err), PP_OK);
    assert_int_equal(r.reference_epoch, PP_REF_EPOCH);
    pp_run_result_free(&r);

    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    assert_true(H5Adelete(f, "reference_epoch") >= 0);
    H5Fclose(f);
    memset(&r, 0, sizeof r);
    assert_int_equal(pp_report_h5_read(path, &r, &err), PP_OK);
    assert_int_equal(r.reference_epoch, 0);
    pp_run_result_free(&r);

    char note[512];
    assert_int_equal(pp_gate_epoch_note("b.h5", 6, 6, note, sizeof note), 0);
    assert_string_equal(note, "");
    assert_int_equal(pp_gate_epoch_note("b.h5", 0, 6, note, sizeof note), 1);
    assert_non_null(strstr(note, "note: b.h5 records no reference epoch"));
    assert_non_null(strstr(note, "this build is at epoch 6"));
    assert_int_equal(pp_gate_epoch_note("old/b.h5", 5, 6, note, sizeof note), 1);
    assert_non_null(strstr(note, "note: old/b.h5 was written at reference epoch 5; this build is at epoch 6"));
    assert_non_null(strstr(note, "regenerate the baseline"));
    assert_null(strchr(note, '\n'));
    // a buffer too small for the note is cut, never overrun
    char tiny[8];
    assert_int_equal(pp_gate_epoch_note("b.h5", 5, 6, tiny, sizeof tiny), 1);
    assert_int_equal((int)strlen(tiny), 7);
}

int main(void)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mask_follows_the_stored_items),
        cmocka_unit_test(test_old_report_refuses_and_shows_dash),
        cmocka_unit_test(test_reference_epoch_recorded_and_noted),
    };
    return cmocka_run_group_tests(tests, pp_test_tmpdir_setup, pp_test_tmpdir_teardown);
}
