// cmd_explain.c — `precprobe explain CASE [--variant V] [--against reference|VARIANT]`: where a
// variant's error comes from, site by site (pipeline/explain.h), printed as tables and written as
// report.txt, report.h5 (/variants/V/explain) and, with --html, the HTML report with a bar chart.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_args.h"
#include "core/progress.h"
#include "io/atomic_file.h"
#include "pipeline/explain.h"
#include "pipeline/ref_cache.h"
#include "report/explain_txt.h"
#include "report/report_h5.h"
#include "report/report_html.h"
#include "report/report_txt.h"

static void explain_usage(FILE *f)
{
    fprintf(f,
        "usage: precprobe explain CASE.toml [--variant V] [--against reference|VARIANT] [options]\n"
        "\n"
        "Where the error comes from: every rounding site of the variant (kernels/sites.h) is made\n"
        "exact (kept in binary64) one at a time, and separately every site but one, on the CPU\n"
        "emulation; each run is compared like the variant itself. With no site exact the run is the\n"
        "emulation bit for bit (checked on every call). Prints, per compared tensor, the statistics\n"
        "with each site exact and their change, each site's share of the error and the interaction\n"
        "left over; most of the error first.\n"
        "\n"
        "options:\n"
        "  --variant V              the variant explained (default: every variant with exact sites)\n"
        "  --against X              reference (default), or another variant: the case's [compare]\n"
        "                           pair (actual V, expected X) with its view, else whole tensors\n"
        "  --out DIR                report folder (default reports/out/CASE-NAME-explain/):\n"
        "                           report.txt, report.h5 (/variants/V/explain)\n"
        "  --html FILE              also write the HTML report with the explain bar chart\n"
        "  --orders N               the nominal comparisons' order band, as run --orders\n"
        "  --reference METHOD       the reference method, overriding the case's\n"
        "  --threads N              worker threads (default: one per CPU); up to 4 masked runs\n"
        "                           go side by side and share them (same tables at any N)\n"
        "  --cache DIR, --no-cache  the reference cache, as precprobe run\n"
        "  -q, --quiet              no progress\n"
        "  -h, --help               this text\n"
        "\n"
        "exit status: 0 explained, 2 bad usage or input (unknown variant, a variant without exact\n"
        "sites: external, a vendor library's path), 3 runtime failure, 130 interrupted.\n");
}

static int parse_count(const char *opt, const char *s, int lo, int hi, int *out)
{
    if (!s)
        return 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "precprobe: %s: '%s' is not a number from %d to %d\n", opt, s, lo, hi);
        return 2;
    }
    *out = (int)v;
    return 0;
}

// report.txt (the run's text, the explain tables at its end), report.h5 and the HTML page, staged
// and renamed together.
static int write_reports(const pp_run_result *r, const char *dir, const char *html)
{
    pp_error err = {0};
    if (pp_mkdir_p(dir)) {
        fprintf(stderr, "precprobe: %s: cannot create the report folder: %s\n", dir, strerror(errno));
        return 3;
    }
    char *text = pp_report_text(r);
    char txt_path[PP_PATH_MAX + 32], h5_path[PP_PATH_MAX + 32];
    snprintf(txt_path, sizeof txt_path, "%s/report.txt", dir);
    snprintf(h5_path, sizeof h5_path, "%s/report.h5", dir);
    pp_atomic_set set = {0};
    const char *txt_tmp = NULL, *h5_tmp = NULL, *html_tmp = NULL;
    int rc = text ? PP_OK : pp_fail(&err, PP_ERR_RUNTIME, "out of memory");
    if (!rc)
        rc = pp_atomic_set_add(&set, txt_path, &txt_tmp, &err);
    if (!rc)
        rc = pp_atomic_set_add(&set, h5_path, &h5_tmp, &err);
    if (!rc && html)
        rc = pp_atomic_set_add(&set, html, &html_tmp, &err);
    if (!rc)
        rc = pp_atomic_write_text(txt_tmp, text, &err);
    if (!rc)
        rc = pp_report_h5_write(h5_tmp, r, &err);
    if (!rc && html)
        rc = pp_report_html_write(html_tmp, r, &err);
    if (!rc)
        rc = pp_atomic_set_commit(&set, &err);
    pp_atomic_set_discard(&set);
    free(text);
    if (rc)
        fprintf(stderr, "precprobe: %s\n", err.msg);
    return rc;
}

int pp_cmd_explain(int argc, char **argv)
{
    const char *variant = NULL, *against = NULL, *out = NULL, *html = NULL, *orders_s = NULL, *threads_s = NULL,
               *reference = NULL, *cache_s = NULL, *pos[1];
    int quiet = 0, no_cache = 0, n_pos = 0, threads = 0, orders = 0;
    const pp_cli_opt opts[] = {
        {"--variant", &variant, NULL}, {"--against", &against, NULL},     {"--out", &out, NULL},
        {"--html", &html, NULL},       {"--orders", &orders_s, NULL},     {"--threads", &threads_s, NULL},
        {"--reference", &reference, NULL}, {"--cache", &cache_s, NULL},   {"--no-cache", NULL, &no_cache},
        {"--quiet", NULL, &quiet},     {"-q", NULL, &quiet},
    };
    int rc = pp_cli_parse("explain", argc, argv, opts, (int)(sizeof opts / sizeof opts[0]), pos, 1, &n_pos);
    if (rc == 1) {
        explain_usage(stdout);
        return 0;
    }
    if (rc || (rc = parse_count("--threads", threads_s, 1, 1024, &threads)) ||
        (rc = parse_count("--orders", orders_s, 0, 1000, &orders)))
        return rc;
    if (n_pos != 1) {
        fprintf(stderr, "precprobe explain: name one case file (see precprobe explain --help)\n");
        return 2;
    }
    pp_error err = {0};
    pp_case c;
    pp_run_result r;
    memset(&r, 0, sizeof r);
    rc = pp_case_load(pos[0], &c, &err);
    if (rc) {
        fprintf(stderr, "precprobe: %s\n", err.msg);
        return rc;
    }
    char cache[PP_PATH_MAX] = "";
    if (!no_cache)
        cache_s ? (void)snprintf(cache, sizeof cache, "%s", cache_s) : pp_ref_cache_default_dir(cache, sizeof cache);
    pp_run_opts o = {.device = "cpu",
                     .threads = threads,
                     .progress = quiet ? PP_PROGRESS_OFF : isatty(2) ? PP_PROGRESS_BAR : PP_PROGRESS_LOG,
                     .reference_method = reference,
                     .cache_dir = cache,
                     .orders = orders};
    pp_explain_opts e = {.variant = variant, .against = against};
    rc = pp_explain_case(&c, &o, &e, &r, &err);
    if (rc) {
        fprintf(stderr, "precprobe: %s\n", err.msg);
    } else {
        pp_textbuf b = {0};
        pp_report_explain_text(&b, &r);
        char *tables = pp_tb_take(&b);
        char dir[PP_PATH_MAX];
        if (out)
            snprintf(dir, sizeof dir, "%s", out);
        else
            snprintf(dir, sizeof dir, "reports/out/%s-explain", c.name);
        if (!tables) {
            fprintf(stderr, "precprobe: out of memory\n");
            rc = 3;
        } else if (!(rc = write_reports(&r, dir, html))) {
            printf("%s: explain (%s on %s)\n%s\n", c.name, c.op->name, r.device, tables);
            // the variants left out for a reason their op gives (one the user may have expected)
            for (int v = 0; !variant && v < c.n_variants; v++)
                if (pp_explain_none(&c, v))
                    printf("note: variant '%s' not explained: %s\n", c.variants[v].name, pp_explain_none(&c, v));
            printf("reports: %s/report.txt %s/report.h5%s%s\n", dir, dir, html ? " " : "", html ? html : "");
        }
        free(tables);
    }
    pp_run_result_free(&r);
    pp_case_free(&c);
    return rc;
}
