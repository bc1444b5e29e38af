// test_sweep.c — a case's [sweep] expanded into points (src/pipeline/sweep.c), and the sweep's
// reports (src/report/sweep_*.c): order, names, the point's case, line numbers in messages,
// invalid combinations, sweep.h5 round trip, the text table against hand-made values.
// run: make build/rel/tests/test_sweep && build/rel/tests/test_sweep
#include "test_util.h"

#include "pipeline/sweep.h"
#include "report/sweep_h5.h"
#include "report/sweep_html.h"
#include "report/sweep_result.h"
#include "report/sweep_txt.h"

// A gemm sweep: m x accumulate x seed, 2 x 2 x 3 points; variant "pinned" sets accumulate itself.
static const char gemm_sweep[] =
    "[case]\n"                               // 1
    "name = \"g\"\n"                         // 2
    "op = \"gemm\"\n"                        // 3
    "seed = 9\n"                             // 4
    "[op]\n"                                 // 5
    "m = 4\n"                                // 6
    "n = 4\n"                                // 7
    "k = 8\n"                                // 8
    "[sweep]\n"                              // 9
    "m = [8, 16]\n"                          // 10
    "accumulate = [\"fp32\",\n"              // 11
    "              \"storage\"]  # two\n"    // 12
    "\n"                                     // 13
    "seed = [1, 2, 3]\n"                     // 14
    "[variants.free]\n"                      // 15
    "format = \"fp16\"\n"                    // 16
    "[variants.pinned]\n"                    // 17
    "accumulate = \"fp32\"\n";               // 18

static void parse_ok(const char *text, pp_sweep *s)
{
    pp_error err = {0};
    int rc = pp_sweep_parse(text, strlen(text), "t.toml", s, &err);
    if (rc)
        print_message("%s\n", err.msg);
    assert_int_equal(rc, PP_OK);
}

static void parse_fails(const char *text, const char *want)
{
    pp_sweep s;
    pp_error err = {0};
    int rc = pp_sweep_parse(text, strlen(text), "t.toml", &s, &err);
    pp_sweep_free(&s);
    if (!strstr(err.msg, want))
        print_message("got: %s\nwant: %s\n", err.msg, want);
    assert_int_equal(rc, PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, want));
}

// An attention case with sweep_lines from line 10 and then the variants (tail; NULL: non-cp with
// cp_world 1 and cp with cp_world 2).
static char *with_sweep_tail(const char *sweep_lines, const char *tail_lines)
{
    static const char head[] = "[case]\nname = \"a\"\nop = \"attention\"\n[op]\ns = 32\nh = 1\nd = 16\n"
                               "mask = \"causal\"\npasses = \"fwd\"\n";  // 9 lines
    const char *tail = tail_lines ? tail_lines : "[variants.non-cp]\ncp_world = 1\n[variants.cp]\ncp_world = 2\n";
    size_t n = strlen(head) + strlen(sweep_lines) + strlen(tail) + 1;
    char *t = malloc(n);
    assert_non_null(t);
    snprintf(t, n, "%s%s%s", head, sweep_lines, tail);
    return t;
}

static char *with_sweep(const char *sweep_lines)
{
    return with_sweep_tail(sweep_lines, NULL);
}

static void sweep_expands_in_key_order_last_fastest(void **state)
{
    (void)state;
    pp_sweep s;
    parse_ok(gemm_sweep, &s);
    assert_int_equal(s.n_keys, 3);
    assert_int_equal(s.n_points, 12);
    assert_int_equal(s.line, 9);
    assert_string_equal(s.points[0].name, "m=8,accumulate=fp32,seed=1");
    assert_string_equal(s.points[1].name, "m=8,accumulate=fp32,seed=2");
    assert_string_equal(s.points[3].name, "m=8,accumulate=storage,seed=1");
    assert_string_equal(s.points[6].name, "m=16,accumulate=fp32,seed=1");
    assert_string_equal(s.points[11].name, "m=16,accumulate=storage,seed=3");
    for (int i = 0; i < 12; i++) {  // value indices: i = 6·m + 3·accumulate + seed
        assert_int_equal(s.points[i].value[0], i / 6);
        assert_int_equal(s.points[i].value[1], i / 3 % 2);
        assert_int_equal(s.points[i].value[2], i % 3);
        assert_int_equal(pp_sweep_point_index(&s, s.points[i].name), i);
    }
    assert_true(s.keys[0].numeric);
    assert_false(s.keys[1].numeric);
    char values[256];
    pp_sweep_point_values(&s, 4, values, sizeof values);
    assert_string_equal(values, "m=8 accumulate=storage seed=2");
    assert_null(s.notes);
    pp_sweep_free(&s);
}

static void sweep_point_is_a_case_of_its_values(void **state)
{
    (void)state;
    pp_sweep s;
    parse_ok(gemm_sweep, &s);
    pp_case c;
    pp_error err = {0};
    assert_int_equal(pp_sweep_point_case(&s, 10, &c, &err), PP_OK);  // m=16, storage, seed=2
    assert_int_equal(c.seed, 2);
    assert_int_equal(c.params.seed, 2);
    assert_true(c.params.v[1] == 16);  // gemm's parameters: batch, m, n, k, alpha
    assert_true(c.params.v[2] == 4);
    int acc = -1;
    for (int k = 0; k < c.op->n_knobs; k++)
        if (!strcmp(c.op->knobs[k].name, "accumulate"))
            acc = k;
    assert_true(acc >= 0);
    int free_v = pp_case_variant_index(&c, "free"), pinned = pp_case_variant_index(&c, "pinned");
    // the point's accumulate reaches the variant that leaves it unset, not the one that sets it
    assert_string_equal(c.op->knobs[acc].values[c.variants[free_v].knobs.v[acc]], "storage");
    assert_string_equal(c.op->knobs[acc].values[c.variants[pinned].knobs.v[acc]], "fp32");
    pp_case_free(&c);
    pp_sweep_free(&s);
}

static int count_lines(const char *t)
{
    int n = 0;
    for (; *t; t++)
        n += *t == '\n';
    return n;
}

static void sweep_point_text_keeps_every_line_number(void **state)
{
    (void)state;
    pp_sweep s;
    parse_ok(gemm_sweep, &s);
    const char *t = s.points[5].text;  // m=8, storage, seed=3
    assert_int_equal(count_lines(t), count_lines(gemm_sweep));
    // line 9 is [point], 10 m, 11 accumulate, 12 and 13 empty, 14 seed, 15 the next table
    const char *want = "[point]\nm = 8\naccumulate = \"storage\"\n\n\nseed = 3\n[variants.free]\n";
    assert_non_null(strstr(t, want));
    assert_null(strstr(t, "[sweep]"));
    pp_sweep_free(&s);
}

static void sweep_plain_case_is_one_point(void **state)
{
    (void)state;
    static const char plain[] = "[case]\nname = \"p\"\nop = \"gemm\"\n[op]\nm = 4\nn = 4\nk = 4\n[variants.v]\n";
    pp_sweep s;
    parse_ok(plain, &s);
    assert_int_equal(s.n_keys, 0);
    assert_int_equal(s.n_points, 1);
    assert_string_equal(s.points[0].name, "");
    assert_string_equal(s.points[0].text, plain);
    pp_sweep_free(&s);
}

static void sweep_mistakes_name_their_line(void **state)
{
    (void)state;
    char *t;
    t = with_sweep("[sweep]\nh = [1,\n  -3]\n");  // the value is checked where the point reads it
    parse_fails(t, "t.toml:11: 'h' = -3 is out of range");
    free(t);
    t = with_sweep("[sweep]\nseed = [1]\nformt = [\"bf16\"]\n");
    parse_fails(t, "t.toml:12: unknown key 'formt' in [sweep] (did you mean 'format'? allowed: skip_invalid, seed, b, s,");
    free(t);
    t = with_sweep("[sweep]\nformat = [\"bf16\", \"fp8\"]\n");
    parse_fails(t, "t.toml:11: knob 'format' in [sweep] cannot be 'fp8' (allowed: bf16, fp16, fp32)");
    free(t);
    t = with_sweep("[sweep]\nh = 2\n");
    parse_fails(t, "t.toml:11: [sweep] 'h' must be a list of 1 to 64 values");
    free(t);
    t = with_sweep("[sweep]\nh = [2, 2]\n");
    parse_fails(t, "t.toml:11: [sweep] 'h' lists 2 twice");
    free(t);
    t = with_sweep("[sweep]\nh = [{ x = 1 }]\n");
    parse_fails(t, "t.toml:11: each value of [sweep] 'h' must be a number, string or boolean, not a table");
    free(t);
    t = with_sweep("[sweep]\n");
    parse_fails(t, "t.toml:10: [sweep] lists no values");
    free(t);
    t = with_sweep("[sweep]\nh = [1]\n[point]\nh = 1\n");
    parse_fails(t, "t.toml:12: a case with [sweep] cannot have a [point]");
    free(t);
    t = with_sweep("[sweep]\nskip_invalid = 1\nh = [1]\n");
    parse_fails(t, "t.toml:11: 'skip_invalid' must be a boolean, not an integer");
    free(t);
}

static void sweep_invalid_combination_is_skipped_with_a_note(void **state)
{
    (void)state;
    // s = 36 is not divisible by 2·cp_world = 8 at cp_world 4 (the "cp" variant takes the point's)
    // the cp variant leaves cp_world to the sweep
    static const char tail[] = "[variants.non-cp]\ncp_world = 1\n[variants.cp]\ncp_flavour = \"pr-821\"\n";
    char *t = with_sweep_tail("[sweep]\ns = [32, 36]\ncp_world = [2, 4]\n", tail);
    pp_sweep s;
    parse_ok(t, &s);
    assert_int_equal(s.n_points, 3);
    assert_int_equal(s.n_skipped, 1);
    assert_string_equal(s.points[2].name, "s=36,cp_world=2");
    assert_non_null(s.notes);
    assert_non_null(strstr(s.notes, "t.toml:10: note: [sweep] point 's=36,cp_world=4' skipped: variant 'cp': "));
    assert_non_null(strstr(s.notes, "divisible by 2"));
    pp_sweep_free(&s);
    // the same with skip_invalid = false is an error naming the point
    char *strict = with_sweep_tail("[sweep]\nskip_invalid = false\ns = [32, 36]\ncp_world = [2, 4]\n", tail);
    parse_fails(strict, "t.toml:10: [sweep] point 's=36,cp_world=4': variant 'cp': ");
    free(strict);
    free(t);
}

static void sweep_float_values_name_and_read_back(void **state)
{
    (void)state;
    static const char t[] = "[case]\nname = \"f\"\nop = \"gemm\"\n[op]\nm = 4\nn = 4\nk = 4\n"
                            "[sweep]\nalpha = [0.1, 2.0, 1e-3]\n[variants.v]\n";
    pp_sweep s;
    parse_ok(t, &s);
    assert_int_equal(s.n_points, 3);
    assert_string_equal(s.points[0].name, "alpha=0.1");
    assert_string_equal(s.points[1].name, "alpha=2");
    assert_string_equal(s.points[2].name, "alpha=0.001");
    assert_non_null(strstr(s.points[1].text, "alpha = 2.0\n"));  // still a TOML float
    pp_case c;
    pp_error err = {0};
    assert_int_equal(pp_sweep_point_case(&s, 0, &c, &err), PP_OK);
    assert_true(c.params.v[4] == 0.1);
    pp_case_free(&c);
    pp_sweep_free(&s);
}

// ---- the sweep's reports ---------------------------------------------------------------------

// Two keys (s: 2 values, cp_world: 2), 3 rows; the last row lacks variant b's cell, row 1 has a band.
static void hand_result(pp_sweep_result *res)
{
    memset(res, 0, sizeof *res);
    snprintf(res->case_name, sizeof res->case_name, "hand");
    snprintf(res->precprobe_version, sizeof res->precprobe_version, "9.9");
    snprintf(res->device, sizeof res->device, "cpu");
    res->n_keys = 2;
    snprintf(res->keys[0].name, PP_NAME_MAX, "s");
    res->keys[0].n_values = 2;
    res->keys[0].numeric = 1;
    snprintf(res->keys[0].text[0], PP_NAME_MAX, "1024");
    snprintf(res->keys[0].text[1], PP_NAME_MAX, "2048");
    res->keys[0].number[0] = 1024;
    res->keys[0].number[1] = 2048;
    snprintf(res->keys[1].name, PP_NAME_MAX, "cp_flavour");
    res->keys[1].n_values = 1;
    snprintf(res->keys[1].text[0], PP_NAME_MAX, "pr-821");
    res->n_stats = 2;
    snprintf(res->stat[0], PP_NAME_MAX, "mismatch_fraction");
    snprintf(res->stat[1], PP_NAME_MAX, "max_abs_error");
    res->n_rows = 3;
    res->rows = calloc(3, sizeof *res->rows);
    assert_non_null(res->rows);
    const char *names[3] = {"s=1024,cp_flavour=pr-821", "s=2048,cp_flavour=pr-821", "s=4096,cp_flavour=pr-821"};
    for (int i = 0; i < 3; i++) {
        pp_sweep_row *row = &res->rows[i];
        snprintf(row->name, sizeof row->name, "%s", names[i]);
        row->value[0] = i < 2 ? i : 1;
        row->n_cells = i < 2 ? 2 : 1;
        row->cells = calloc(2, sizeof *row->cells);
        assert_non_null(row->cells);
        for (int c = 0; c < row->n_cells; c++) {
            pp_sweep_cell *cell = &row->cells[c];
            snprintf(cell->variant, PP_NAME_MAX, "%s", c ? "b" : "a");
            snprintf(cell->tensor, PP_NAME_MAX, "out");
            snprintf(cell->against, PP_NAME_MAX, "reference");
            cell->value[0] = 0.125 * (i + 1) + 0.5 * c;  // 12.50%, 25.00%, 37.50%; b: +50 points
            cell->value[1] = 0.0625 * (i + 1);
        }
    }
    pp_sweep_cell *banded = &res->rows[1].cells[0];
    banded->band_runs = 3;
    double band[2][3] = {{0.25, 0.25, 0.3125}, {0.0625, 0.125, 0.1875}};
    memcpy(banded->band, band, sizeof band);
}

static void sweep_text_tables_hold_the_hand_values(void **state)
{
    (void)state;
    pp_sweep_result res;
    hand_result(&res);
    char *text = pp_sweep_report_text(&res, NULL, NULL);
    assert_non_null(text);
    // the name column as wide as the longest name (24), each column as its widest cell (23, 6)
    const char *mismatch = "\n== mismatch (mismatch_fraction): out against reference ==\n"
                           "point                                           a       b\n"
                           "s=1024,cp_flavour=pr-821                   12.50%  62.50%\n"
                           "s=2048,cp_flavour=pr-821  25.00% [25.00%, 31.25%]  75.00%\n"
                           "s=4096,cp_flavour=pr-821                   37.50%       -\n";
    if (!strstr(text, mismatch))
        print_message("%s", text);
    assert_non_null(strstr(text, mismatch));
    assert_non_null(strstr(text, "sweep hand: 3 points over s = [1024, 2048], cp_flavour = [pr-821]\n"));
    const char *max_error = "s=2048,cp_flavour=pr-821  0.125 [0.0625, 0.1875]   0.125\n";
    assert_non_null(strstr(text, max_error));
    free(text);
    pp_sweep_result_free(&res);
}

static void sweep_groups_are_the_union_of_the_rows(void **state)
{
    (void)state;
    pp_sweep_result res;
    hand_result(&res);
    snprintf(res.rows[2].cells[0].against, PP_NAME_MAX, "a");  // a third row compares out with a
    pp_sweep_group g[4];
    assert_int_equal(pp_sweep_result_groups(&res, g, 4), 2);
    assert_string_equal(g[0].against, "reference");
    assert_int_equal(g[0].n_variants, 2);
    assert_string_equal(g[1].against, "a");
    assert_int_equal(g[1].n_variants, 1);
    assert_null(pp_sweep_row_find(&res.rows[2], "a", "out", "reference"));
    pp_sweep_result_free(&res);
}

static int count_of(const char *text, const char *word)
{
    int n = 0;
    for (const char *p = strstr(text, word); p; p = strstr(p + 1, word))
        n++;
    return n;
}

static void sweep_html_draws_a_chart_per_statistic_and_key(void **state)
{
    (void)state;
    pp_sweep_result res;
    hand_result(&res);
    snprintf(res.rows[0].cells[1].variant, PP_NAME_MAX, "<b>");  // a name from a file: escaped
    char *page = pp_sweep_report_html(&res);
    assert_non_null(page);
    // charted statistics present (mismatch_fraction, max_abs_error) x 1 group x 1 numeric key (s)
    assert_int_equal(count_of(page, "<svg"), 2);
    assert_int_equal(count_of(page, "</svg>"), 2);
    assert_null(strstr(page, "http"));
    assert_null(strstr(page, "<b>"));
    assert_non_null(strstr(page, "&lt;b&gt;"));
    int with_band = count_of(page, "<polyline");
    // without the band, one error bar (a 2-point polyline) per chart fewer
    res.rows[1].cells[0].band_runs = 0;
    char *plain = pp_sweep_report_html(&res);
    assert_non_null(plain);
    assert_int_equal(count_of(plain, "<polyline") + 2, with_band);
    free(plain);
    free(page);
    pp_sweep_result_free(&res);
}

static void sweep_result_from_points_names_a_missing_point(void **state)
{
    pp_sweep s;
    parse_ok(gemm_sweep, &s);
    pp_sweep_result res;
    pp_error err = {0};
    char dir[PP_TEST_PATH_MAX];
    pp_test_tmp_path(state, "no-points", dir);
    assert_int_equal(pp_sweep_result_from_points(&res, &s, dir, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "no-points/m=8,accumulate=fp32,seed=1/report.h5"));
    pp_sweep_result_free(&res);
    pp_sweep_free(&s);
}

static void sweep_h5_round_trip(void **state)
{
    pp_sweep_result res, back;
    hand_result(&res);
    char path[PP_TEST_PATH_MAX];
    pp_test_tmp_path(state, "sweep.h5", path);
    pp_error err = {0};
    assert_int_equal(pp_sweep_h5_write(path, &res, &err), PP_OK);
    assert_false(pp_test_has_temp_file(*state));
    assert_int_equal(pp_sweep_h5_read(path, &back, &err), PP_OK);
    assert_string_equal(back.case_name, "hand");
    assert_string_equal(back.precprobe_version, "9.9");
    assert_string_equal(back.device, "cpu");
    assert_int_equal(back.n_keys, 2);
    for (int k = 0; k < 2; k++) {
        assert_string_equal(back.keys[k].name, res.keys[k].name);
        assert_int_equal(back.keys[k].n_values, res.keys[k].n_values);
        assert_int_equal(back.keys[k].numeric, res.keys[k].numeric);
        for (int j = 0; j < res.keys[k].n_values; j++) {
            assert_string_equal(back.keys[k].text[j], res.keys[k].text[j]);
            assert_memory_equal(&back.keys[k].number[j], &res.keys[k].number[j], sizeof(double));
        }
    }
    assert_int_equal(back.n_stats, 2);
    assert_string_equal(back.stat[1], "max_abs_error");
    assert_int_equal(back.n_rows, 3);
    for (int i = 0; i < 3; i++) {
        assert_string_equal(back.rows[i].name, res.rows[i].name);
        assert_memory_equal(back.rows[i].value, res.rows[i].value, sizeof res.rows[i].value);
        assert_int_equal(back.rows[i].n_cells, res.rows[i].n_cells);
        for (int c = 0; c < res.rows[i].n_cells; c++) {
            const pp_sweep_cell *a = &res.rows[i].cells[c], *b = &back.rows[i].cells[c];
            assert_string_equal(a->variant, b->variant);
            assert_string_equal(a->tensor, b->tensor);
            assert_string_equal(a->against, b->against);
            assert_memory_equal(a->value, b->value, 2 * sizeof(double));  // bit for bit
            assert_int_equal(a->band_runs, b->band_runs);
            if (a->band_runs)
                assert_memory_equal(a->band, b->band, 2 * sizeof a->band[0]);
        }
    }
    // the same tables from the file as from memory
    char *t1 = pp_sweep_report_text(&res, NULL, NULL), *t2 = pp_sweep_report_text(&back, NULL, NULL);
    assert_string_equal(t1, t2);
    free(t1);
    free(t2);
    pp_sweep_result_free(&back);
    // a file of another kind is refused, naming what is missing
    FILE *f = fopen(path, "w");
    fputs("not hdf5", f);
    fclose(f);
    assert_int_equal(pp_sweep_h5_read(path, &back, &err), PP_ERR_INPUT);
    pp_sweep_result_free(&back);
    pp_sweep_result_free(&res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sweep_expands_in_key_order_last_fastest),
        cmocka_unit_test(sweep_point_is_a_case_of_its_values),
        cmocka_unit_test(sweep_point_text_keeps_every_line_number),
        cmocka_unit_test(sweep_plain_case_is_one_point),
        cmocka_unit_test(sweep_mistakes_name_their_line),
        cmocka_unit_test(sweep_invalid_combination_is_skipped_with_a_note),
        cmocka_unit_test(sweep_float_values_name_and_read_back),
        cmocka_unit_test(sweep_text_tables_hold_the_hand_values),
        cmocka_unit_test(sweep_groups_are_the_union_of_the_rows),
        cmocka_unit_test(sweep_html_draws_a_chart_per_statistic_and_key),
        cmocka_unit_test(sweep_h5_round_trip),
        cmocka_unit_test(sweep_result_from_points_names_a_missing_point),
    };
    return cmocka_run_group_tests(tests, pp_test_tmpdir_setup, pp_test_tmpdir_teardown);
}
