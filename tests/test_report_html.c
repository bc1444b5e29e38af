// test_report_html.c — the HTML report: no URL anywhere, every chart present with data, names
// and messages escaped, well-formed XML (xmllint, where installed), written atomically; and the
// per-axis statistics survive report.h5, so `show --html` draws the same page.
#include "test_util.h"

#include <dirent.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/report_h5.h"
#include "core/statistic.h"
#include "report/report_html.h"
#include "report/report_txt.h"
#include "core/results.h"

#define NASTY "<b>&\"x'"
#define NASTY_ESCAPED "&lt;b&gt;&amp;&quot;x&#39;"

// ---------------------------------------------------------------------------------------------
// A run: three variants (one with a name that would inject markup, one with cp_world = 2), a
// [4 heads, 256 positions, 2] tensor each compared with the reference, and one pair.

static void set_name(char *dst, const char *src)
{
    snprintf(dst, PP_NAME_MAX, "%s", src);
}

enum { H = 4, P = 256, D = 2, N = H * P * D };

static void add_cmp(pp_run_result *r, const char *variant, const char *against, const double *a, const double *e)
{
    pp_comparison *c = &r->comparisons[r->n_comparisons++];
    set_name(c->variant, variant);
    set_name(c->tensor, "out");
    set_name(c->against, against);
    c->ndim = 3;
    c->shape[0] = H;
    c->shape[1] = P;
    c->shape[2] = D;
    c->opts = (pp_close_opts){1.3e-6, 1e-5, 0, 2, 1, PP_FMT_BF16, PP_FMT_FP64};
    pp_close_stats_init(&c->stats);
    pp_close_stats_update(&c->stats, &c->opts, a, e, N, 0);
    if (!strcmp(against, "reference"))
        assert_int_equal(pp_axis_stats_compute(&c->axes, 3, c->shape, 1, 0, a, e), 0);
}

static void build_run(pp_run_result *r, double *e, double *a0, double *a1, double *a2)
{
    memset(r, 0, sizeof *r);
    snprintf(r->precprobe_version, sizeof r->precprobe_version, "0.1.0");
    set_name(r->case_name, "html & <case>");
    set_name(r->op, "attention");
    snprintf(r->device, sizeof r->device, "cpu");
    snprintf(r->created_utc, sizeof r->created_utc, "2026-11-23T15:00:00Z");
    r->seed = 7;
    r->shapes = strdup("out [4, 256, 2] <shapes & such>");
    r->case_text = strdup("name = \"html\"\n# <script>alert(1)</script>\n");
    assert_non_null(r->shapes);
    assert_non_null(r->case_text);
    for (int i = 0; i < N; i++) {
        e[i] = 1.0 + i / 1024.0;
        a0[i] = e[i];                                   // exact
        a1[i] = e[i] + (i % 7 ? 0x1p-9 : 0.0);          // small errors everywhere
        a2[i] = e[i] + ((i / D) % P >= 192 ? 0x1p-4 : 0x1p-12);  // last chunk worst
    }
    a2[5] = NAN;
    r->n_variants = 3;
    r->variants = calloc(3, sizeof *r->variants);
    assert_non_null(r->variants);
    set_name(r->variants[0].name, "fp32acc");
    set_name(r->variants[1].name, NASTY);
    set_name(r->variants[2].name, "cp-bf16acc");
    r->variants[2].n_knobs = 1;
    set_name(r->variants[2].knobs[0].name, "cp_world");
    set_name(r->variants[2].knobs[0].value, "2");
    r->references = calloc(1, sizeof *r->references);
    assert_non_null(r->references);
    r->n_references = 1;
    set_name(r->references[0].tensor, "out");
    set_name(r->references[0].method, "mpfr-plain-128");
    r->references[0].error_bound = 1e-30;
    r->comparisons = calloc(4, sizeof *r->comparisons);
    assert_non_null(r->comparisons);
    add_cmp(r, "fp32acc", "reference", a0, e);
    add_cmp(r, NASTY, "reference", a1, e);
    add_cmp(r, "cp-bf16acc", "reference", a2, e);
    add_cmp(r, "cp-bf16acc", "fp32acc", a2, a0);
    r->verdicts = calloc(1, sizeof *r->verdicts);
    assert_non_null(r->verdicts);
    r->n_verdicts = 1;
    snprintf(r->verdicts[0].rule, sizeof r->verdicts[0].rule, "*.out.nan_count <= 0");
    snprintf(r->verdicts[0].detail, sizeof r->verdicts[0].detail, "cp-bf16acc.out: 1 > 0 <&>");
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

typedef struct fixture {
    pp_run_result r;
    double *e, *a0, *a1, *a2;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->e = malloc(sizeof(double) * N * 4);
    if (!f || !f->e)
        return -1;
    f->a0 = f->e + N;
    f->a1 = f->e + 2 * N;
    f->a2 = f->e + 3 * N;
    build_run(&f->r, f->e, f->a0, f->a1, f->a2);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    pp_run_result_free(&f->r);
    free(f->e);
    free(f);
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Tests

static void report_html_has_no_url(void **state)
{
    char *page = pp_report_html(&((fixture *)*state)->r);
    assert_non_null(page);
    assert_null(strstr(page, "http"));
    assert_null(strstr(page, "//"));
    assert_null(strstr(page, "src="));
    assert_null(strstr(page, "href="));
    assert_null(strstr(page, "url("));
    free(page);
}

static void report_html_every_chart_has_data(void **state)
{
    char *page = pp_report_html(&((fixture *)*state)->r);
    assert_non_null(page);
    // histogram, along the sequence, 3 head strips + their colour scale, CP chunks
    assert_int_equal(count(page, "<svg"), 7);
    assert_int_equal(count(page, "</svg>"), 7);
    assert_non_null(strstr(page, "ulp error histogram"));
    assert_non_null(strstr(page, "along the sequence position"));
    assert_non_null(strstr(page, "per head and sequence block"));
    assert_non_null(strstr(page, "per context-parallel ring chunk"));
    // max and mean lines of 3 variants, each with points
    assert_true(count(page, "<polyline") >= 6);
    assert_null(strstr(page, "points=\"\""));
    // heat cells: 4 heads x 4 blocks per variant, each with a tooltip
    assert_true(count(page, "<title>head ") == 3 * H * (P / 64));
    // CP chunk bars: 2 x cp_world = 4 chunks, ranks 0 1 1 0
    assert_non_null(strstr(page, "chunk 3 (rank 0)"));
    assert_non_null(strstr(page, "chunk 2 (rank 1)"));
    // the table: one row per comparison, torch's message in each mismatching row
    assert_int_equal(count(page, "<tr>"), 1 + 4);
    assert_true(count(page, "Tensor-likes are not close!") >= 3);
    // the verdict in words
    assert_non_null(strstr(page, "of out elements not close to the reference at rtol 1.3e-06, atol 1e-05"));
    assert_non_null(strstr(page, "all 2048</span> out elements close to the reference"));
    free(page);
}

// --orders: a banded comparison gets a bar with its error bar (min to max over the runs); a page
// without bands has no order-band chart.
static void report_html_draws_order_bands(void **state)
{
    pp_run_result *r = &((fixture *)*state)->r;
    char *plain = pp_report_html(r);
    assert_non_null(plain);
    assert_null(strstr(plain, "Order band"));
    free(plain);
    int k = -1;
    for (int i = 0; i < pp_statistic_count(); i++)
        if (!strcmp(pp_statistic_at(i)->name, "mismatch_fraction"))
            k = i;
    assert_true(k >= 0);
    pp_comparison *c = &r->comparisons[0];
    double nominal = pp_statistic_at(k)->value(&c->stats);
    c->band_runs = 9;
    c->n_band_stats = pp_statistic_count();
    c->band[k][0] = nominal - 0.01;
    c->band[k][1] = nominal;
    c->band[k][2] = nominal + 0.02;
    char *page = pp_report_html(r);
    assert_non_null(page);
    assert_non_null(strstr(page, "<h2>Order band</h2>"));
    assert_non_null(strstr(page, "min to max over 9 runs"));
    char want[160];
    snprintf(want, sizeof want, "(%.4g%%..%.4g%% over 9 orders)", 100 * (nominal - 0.01), 100 * (nominal + 0.02));
    assert_non_null(strstr(page, want));  // the bar's tooltip names its band
    assert_int_equal(count(page, "<svg"), 8);  // the other charts and this one
    free(page);
    c->band_runs = 0;
}

static void report_html_escapes_names(void **state)
{
    char *page = pp_report_html(&((fixture *)*state)->r);
    assert_non_null(page);
    assert_null(strstr(page, NASTY));
    assert_true(count(page, NASTY_ESCAPED) >= 4);  // variants, verdict, table, legends
    assert_null(strstr(page, "<script>alert"));
    assert_non_null(strstr(page, "&lt;script&gt;alert"));
    assert_null(strstr(page, "<case>"));
    assert_null(strstr(page, "<shapes"));
    assert_int_equal(count(page, "<script>"), 1);  // only the table sorter
    free(page);
}

// A variant whose GEMMs are cuBLAS's says so in both reports, and only that variant.
static void reports_say_when_cublas_orders_the_sums(void **state)
{
    pp_run_result *r = &((fixture *)*state)->r;
    const char *note = "(GEMMs in cuBLAS: its reduction order";
    char *page = pp_report_html(r), *text = pp_report_text(r);
    assert_non_null(page);
    assert_non_null(text);
    assert_null(strstr(page, note));
    assert_null(strstr(text, note));
    free(page);
    free(text);
    pp_variant_result *vr = &r->variants[0];
    vr->n_knobs = 1;
    set_name(vr->knobs[0].name, "engine");
    set_name(vr->knobs[0].value, "cublas");
    page = pp_report_html(r);
    text = pp_report_text(r);
    assert_non_null(page);
    assert_non_null(text);
    assert_int_equal(count(page, note), 1);
    assert_int_equal(count(text, note), 1);
    assert_non_null(strstr(text, "variant:   fp32acc                  engine=cublas (GEMMs in cuBLAS"));
    free(page);
    free(text);
}

static int have_xmllint(void)
{
    return system("command -v xmllint >/dev/null 2>&1") == 0;
}

static void report_html_is_well_formed_xml(void **state)
{
    if (!have_xmllint()) {
        fprintf(stderr, "  xmllint not installed (make deps installs libxml2-utils): well-formedness not checked\n");
        skip();
    }
    char dir[64], path[96], cmd[160];
    assert_int_equal(pp_test_mkdtemp(dir, sizeof dir, "report_html"), 0);
    snprintf(path, sizeof path, "%s/r.html", dir);
    pp_error err = {0};
    assert_int_equal(pp_report_html_write(path, &((fixture *)*state)->r, &err), PP_OK);
    snprintf(cmd, sizeof cmd, "xmllint --noout %s", path);
    assert_int_equal(system(cmd), 0);
    pp_test_rm_tree(dir);
}

static void report_html_written_atomically(void **state)
{
    fixture *f = *state;
    char dir[64], path[96];
    assert_int_equal(pp_test_mkdtemp(dir, sizeof dir, "report_html"), 0);
    pp_error err = {0};
    // a missing folder: a runtime error, nothing on disk
    snprintf(path, sizeof path, "%s/missing/r.html", dir);
    assert_int_equal(pp_report_html_write(path, &f->r, &err), PP_ERR_RUNTIME);
    assert_int_equal(pp_test_dir_entries(dir), 0);
    // a path that is a folder: refused, the folder untouched, no temporary file left
    snprintf(path, sizeof path, "%s/sub", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    assert_int_equal(pp_report_html_write(path, &f->r, &err), PP_ERR_RUNTIME);
    assert_int_equal(pp_test_dir_entries(dir), 1);
    rmdir(path);
    // an existing file is replaced whole, with nothing left beside it
    snprintf(path, sizeof path, "%s/r.html", dir);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("old", fp);
    fclose(fp);
    assert_int_equal(pp_report_html_write(path, &f->r, &err), PP_OK);
    assert_int_equal(pp_test_dir_entries(dir), 1);
    char *page = pp_report_html(&f->r);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal((size_t)st.st_size, strlen(page));
    free(page);
    pp_test_rm_tree(dir);
}

// The per-axis statistics go through report.h5 bit for bit: the page drawn from the file is
// the page drawn from the run.
static void report_html_same_after_h5_roundtrip(void **state)
{
    fixture *f = *state;
    char dir[64], path[96];
    assert_int_equal(pp_test_mkdtemp(dir, sizeof dir, "report_html"), 0);
    snprintf(path, sizeof path, "%s/report.h5", dir);
    pp_error err = {0};
    assert_int_equal(pp_report_h5_write(path, &f->r, &err), PP_OK);
    pp_run_result back;
    assert_int_equal(pp_report_h5_read(path, &back, &err), PP_OK);
    const pp_axis_stats *x = &back.comparisons[2].axes, *y = &f->r.comparisons[2].axes;
    assert_int_equal(x->n_pos, P);
    assert_int_equal(x->n_heads, H);
    assert_int_equal(x->block, y->block);
    assert_int_equal(x->pos_dim, 1);
    assert_int_equal(x->head_dim, 0);
    assert_memory_equal(x->pos_max, y->pos_max, sizeof(double) * P);
    assert_memory_equal(x->pos_mean, y->pos_mean, sizeof(double) * P);
    assert_memory_equal(x->head_block_max, y->head_block_max, sizeof(double) * (size_t)(H * y->n_blocks));
    assert_int_equal(back.comparisons[3].axes.n_pos, 0);  // the pair: no per-axis statistics
    char *p1 = pp_report_html(&f->r), *p2 = pp_report_html(&back);
    assert_non_null(p1);
    assert_non_null(p2);
    assert_string_equal(p1, p2);
    free(p1);
    free(p2);
    pp_run_result_free(&back);
    pp_test_rm_tree(dir);
}

// A run with no comparisons still gives a page (no charts).
static void report_html_empty_run(void **state)
{
    (void)state;
    pp_run_result r;
    memset(&r, 0, sizeof r);
    char *page = pp_report_html(&r);
    assert_non_null(page);
    assert_int_equal(count(page, "<svg"), 0);
    assert_non_null(strstr(page, "</html>"));
    free(page);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(report_html_has_no_url, setup, teardown),
        cmocka_unit_test_setup_teardown(report_html_every_chart_has_data, setup, teardown),
        cmocka_unit_test_setup_teardown(report_html_draws_order_bands, setup, teardown),
        cmocka_unit_test_setup_teardown(report_html_escapes_names, setup, teardown),
        cmocka_unit_test_setup_teardown(report_html_is_well_formed_xml, setup, teardown),
        cmocka_unit_test_setup_teardown(report_html_written_atomically, setup, teardown),
        cmocka_unit_test_setup_teardown(report_html_same_after_h5_roundtrip, setup, teardown),
        cmocka_unit_test(report_html_empty_run),
        cmocka_unit_test_setup_teardown(reports_say_when_cublas_orders_the_sums, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
