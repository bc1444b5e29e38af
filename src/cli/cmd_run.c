// cmd_run.c — `precprobe run`, `precprobe baseline` and `precprobe check`: a case run end to end,
// its reports written atomically, and the gate (absolute rules, and a committed baseline).
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_args.h"
#include "core/progress.h"
#include "pipeline/case_identity.h"
#include "pipeline/gate.h"
#include "report/report_h5.h"
#include "report/report_html.h"
#include "report/report_junit.h"
#include "report/report_txt.h"
#include "io/atomic_file.h"
#include "pipeline/ref_cache.h"
#include "pipeline/run.h"

// The options run, baseline and check share (how a case is run).
typedef struct run_cli {
    const char *device, *threads_s, *reference, *cache, *orders_s;
    int threads, quiet, no_cache, cross_check, orders, ranges;
} run_cli;

#define RUN_CLI_OPTS(x)                                                                                  \
    {"--device", &(x).device, NULL}, {"--threads", &(x).threads_s, NULL},                               \
        {"--reference", &(x).reference, NULL}, {"--quiet", NULL, &(x).quiet}, {"-q", NULL, &(x).quiet},  \
        {"--cache", &(x).cache, NULL}, {"--no-cache", NULL, &(x).no_cache}
#define RUN_CLI_N 7
#define RUN_CLI_HELP                                                                                     \
    "  --device cpu|cuda|auto   backend (default auto: cuda when usable, else cpu; the report\n"         \
    "                           says which)\n"                                                           \
    "  --reference METHOD       the reference method, overriding the case's (precprobe list names\n"    \
    "                           each op's: e.g. fast, mpfr-plain)\n"                                     \
    "  --threads N              worker threads (default: one per CPU)\n"                                 \
    "  --cache DIR              reference cache (default $PRECPROBE_CACHE, $XDG_CACHE_HOME/precprobe\n"  \
    "                           or ~/.cache/precprobe): a reference is reused when op, parameters,\n"    \
    "                           method and the exact input bits match; --no-cache: off\n"               \
    "  -q, --quiet              no progress (a bar when stderr is a terminal, else a line every 10 s)\n"

static void run_usage(FILE *f)
{
    fprintf(f,
        "usage: precprobe run CASE.toml... [options]\n"
        "\n"
        "Runs every variant of each case, computes the reference once, compares every variant's\n"
        "outputs with the reference and every [compare] pair, and writes the reports.\n"
        "\n"
        "options:\n"
        RUN_CLI_HELP
        "  -o, --out DIR            report folder (default reports/out/CASE-NAME/; with several\n"
        "                           cases, DIR/CASE-NAME/). A case with [sweep]: each point's\n"
        "                           reports in DIR/points/NAME/, the sweep's report.txt, sweep.h5\n"
        "                           and report.html (--html FILE: there instead) in DIR\n"
        "  --junit FILE             also write JUnit XML\n"
        "  --html FILE              also write the HTML report (one self-contained page with charts);\n"
        "                           with several cases FILE is a folder, holding CASE-NAME.html each\n"
        "  --save-tensors           keep inputs, outputs and references in report.h5\n"
        "  --cross-check            on cuda, also run the CPU emulation and compare every output with\n"
        "                           it (\"cpu-emulation\"): identical for precprobe's kernels, measured\n"
        "                           for vendor engines (cuBLAS)\n"
        "  --orders N               run each emulated variant N more times, each under another\n"
        "                           admissible order of what the GPU leaves unspecified (reduction\n"
        "                           orders, approximate exp), and report each statistic's band\n"
        "                           (min-max over the N + 1 runs); gates use the nominal value\n"
        "  --shard I/N              run only shard I of N (a slice of the plan's tasks, the same\n"
        "                           for every I on any machine) and write its partial result,\n"
        "                           DIR/partial.h5 (-o/--out DIR; default reports/out/CASE-NAME/\n"
        "                           shard-I-of-N); `precprobe merge` makes the reports\n"
        "  --ranges                 range diagnostics: per rounding site (kernels/sites.h) and head,\n"
        "                           amax, overflows, NaN, underflows, subnormals and headroom of each\n"
        "                           emulated variant (the CPU emulation, and attention on the GPU; the\n"
        "                           outputs are unchanged; not with --shard)\n"
        "  -h, --help               this text\n"
        "\n"
        "writes: report.txt (torch's messages, statistics, summary), report.h5 (schema in\n"
        "reports/README.md). Mismatches are the measurement, not a failure: the exit status is\n"
        "0 when every [gate] rule holds, 1 when one fails, 2 bad input, 3 runtime failure.\n");
}

static void baseline_usage(FILE *f)
{
    fprintf(f,
        "usage: precprobe baseline CASE.toml -o BASELINE.h5 [options]\n"
        "\n"
        "Runs the case and writes its report.h5 to BASELINE.h5 (atomically), the file\n"
        "`precprobe check CASE.toml --baseline BASELINE.h5` later compares a run with. The\n"
        "baseline holds the case's text, so check can tell when the case has changed since.\n"
        "\n"
        "options:\n"
        "  -o, --output FILE        where to write the baseline (required)\n"
        RUN_CLI_HELP
        "  -h, --help               this text\n"
        "\n"
        "exit status: 0 written (the case's [gate] rules are not applied), 2 bad input,\n"
        "3 runtime failure, 130 interrupted\n");
}

static void check_usage(FILE *f)
{
    fprintf(f,
        "usage: precprobe check CASE.toml --baseline BASELINE.h5 [options]\n"
        "\n"
        "check: runs the case (or reads --report RUN.h5 from an earlier run) and fails (exit 1)\n"
        "when a statistic got worse than in the baseline by more than the slack, or a [gate]\n"
        "rule of the case fails. One line per regression: variant, tensor, statistic,\n"
        "baseline -> now. Slack (default; the case's [gate] slack = {...} overrides):\n"
        "mismatch_fraction +0.005, max_abs_diff x1.10, max_rel_diff x1.10, max_ulp +1.\n"
        "A baseline made from another experiment (the case's op, parameters, seed, inputs or\n"
        "a variant's knobs changed since) is refused with the list of changes (exit 2).\n"
        "\n"
        "options:\n"
        "  --baseline FILE          the committed baseline report (check)\n"
        "  --report FILE            judge this report instead of running the case (check)\n"
        "  --junit FILE             also write the verdicts as JUnit XML: one testcase per gate rule\n"
        "                           and per baseline statistic, failing exactly when check fails (check)\n"
        "  --allow-changed-case     compare even when the case's identity (op, parameters, seed,\n"
        "                           inputs, a variant's knobs) changed since the baseline (check)\n"
        RUN_CLI_HELP
        "  -h, --help               this text\n");
}

static int parse_threads(const char *s, int *out)
{
    if (!s)
        return 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < 1 || v > 1024) {
        fprintf(stderr, "precprobe: --threads: '%s' is not a number from 1 to 1024\n", s);
        return 2;
    }
    *out = (int)v;
    return 0;
}

static int parse_orders(const char *s, int *out)
{
    if (!s)
        return 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < 0 || v > 1000) {
        fprintf(stderr, "precprobe: --orders: '%s' is not a number from 0 to 1000\n", s);
        return 2;
    }
    *out = (int)v;
    return 0;
}

// The run options of the command line; cache (n bytes) holds the cache folder o names.
static void run_opts_of(const run_cli *cli, int save, char *cache, size_t n, pp_run_opts *o)
{
    if (!cli->no_cache)
        cli->cache ? (void)snprintf(cache, n, "%s", cli->cache) : pp_ref_cache_default_dir(cache, n);
    int progress = cli->quiet ? PP_PROGRESS_OFF : isatty(2) ? PP_PROGRESS_BAR : PP_PROGRESS_LOG;
    *o = (pp_run_opts){cli->device, cli->threads, save, progress, cli->reference, cache, cli->cross_check,
                       cli->orders, cli->ranges};
}

// The result of case path, judged: the case run (or, with report, the run stored in that
// report.h5 read back), then the case's gate rules evaluated on it, once, here. Prints errors.
// Returns an exit status (0 or the error's).
static int judged_result(const char *path, const run_cli *cli, int save, const char *report, pp_case *c,
                         pp_run_result *r)
{
    pp_error err = {0};
    memset(r, 0, sizeof *r);
    int rc = pp_case_load(path, c, &err);
    if (!rc && c->notes)
        fputs(c->notes, stderr);  // e.g. a [matrix] combination the op cannot run, skipped
    if (!rc && report) {
        rc = pp_report_h5_read(report, r, &err);
        if (!rc && (rc = pp_gate_rules_recorded(c, r, report, &err)))
            pp_run_result_free(r);
    } else if (!rc) {
        char cache[PP_PATH_MAX] = "";
        pp_run_opts o;
        run_opts_of(cli, save, cache, sizeof cache, &o);
        rc = pp_run_case(c, &o, r, &err);
    }
    if (!rc && pp_gate_evaluate(c, r) < 0) {
        pp_run_result_free(r);
        rc = pp_fail(&err, PP_ERR_RUNTIME, "out of memory");
    }
    if (rc)
        fprintf(stderr, "precprobe: %s\n", err.msg);
    return rc;
}

static int failed_verdicts(const pp_run_result *r)
{
    int n = 0;
    for (int i = 0; i < r->n_verdicts; i++)
        n += !r->verdicts[i].passed;
    return n;
}

int pp_cli_write_reports(const pp_run_result *r, const char *dir, const char *junit, const char *html)
{
    pp_error err = {0};
    char path[PP_PATH_MAX + 32];
    if (pp_mkdir_p(dir)) {
        fprintf(stderr, "precprobe: %s: cannot create the report folder: %s\n", dir, strerror(errno));
        return 3;
    }
    char *text = pp_report_text(r);
    if (!text) {
        fprintf(stderr, "precprobe: out of memory\n");
        return 3;
    }
    // Every report is written to its staging name first and all are renamed together, so a
    // failing --html (say) leaves the previous report.txt and report.h5 as they were.
    char txt_path[PP_PATH_MAX + 32];
    snprintf(txt_path, sizeof txt_path, "%s/report.txt", dir);
    snprintf(path, sizeof path, "%s/report.h5", dir);
    pp_atomic_set set = {0};
    const char *txt_tmp = NULL, *h5_tmp = NULL, *junit_tmp = NULL, *html_tmp = NULL;
    int rc = pp_atomic_set_add(&set, txt_path, &txt_tmp, &err);
    if (!rc)
        rc = pp_atomic_set_add(&set, path, &h5_tmp, &err);
    if (!rc && junit)
        rc = pp_atomic_set_add(&set, junit, &junit_tmp, &err);
    if (!rc && html)
        rc = pp_atomic_set_add(&set, html, &html_tmp, &err);
    if (!rc)
        rc = pp_atomic_write_text(txt_tmp, text, &err);
    free(text);
    if (!rc)
        rc = pp_report_h5_write(h5_tmp, r, &err);
    if (!rc && junit)
        rc = pp_report_junit_write(junit_tmp, r, NULL, &err);
    if (!rc && html)
        rc = pp_report_html_write(html_tmp, r, &err);
    if (!rc)
        rc = pp_atomic_set_commit(&set, &err);
    pp_atomic_set_discard(&set);
    if (rc) {
        fprintf(stderr, "precprobe: %s\n", err.msg);
        return rc;
    }
    return 0;
}

int pp_cmd_run(int argc, char **argv)
{
    const char *out = NULL, *junit = NULL, *html = NULL, *shard = NULL;
    run_cli cli = {0};
    int save = 0, n_cases = 0;
    const char *cases[64];
    const pp_cli_opt opts[] = {
        RUN_CLI_OPTS(cli), {"--out", &out, NULL}, {"--junit", &junit, NULL}, {"--save-tensors", NULL, &save},
        {"--cross-check", NULL, &cli.cross_check}, {"--html", &html, NULL}, {"--orders", &cli.orders_s, NULL},
        {"--shard", &shard, NULL}, {"-o", &out, NULL}, {"--ranges", NULL, &cli.ranges},
    };
    int rc = pp_cli_parse("run", argc, argv, opts, RUN_CLI_N + 9, cases, 64, &n_cases);
    if (rc == 1) {
        run_usage(stdout);
        return 0;
    }
    if (rc || (rc = parse_threads(cli.threads_s, &cli.threads)) || (rc = parse_orders(cli.orders_s, &cli.orders)))
        return rc;
    if (n_cases == 0) {
        fprintf(stderr, "precprobe run: name at least one case file (see precprobe run --help)\n");
        return 2;
    }
    if (shard) {  // a slice of the run, written as a partial result (cli/cmd_run_shard.c)
        if (n_cases != 1 || junit || html) {
            fprintf(stderr, "precprobe run: --shard takes one case, and no --junit or --html "
                            "(precprobe merge writes the reports)\n");
            return 2;
        }
        if (cli.ranges) {  // a partial result has no place for range counters, so a merge could not carry them
            fprintf(stderr, "precprobe run: --ranges does not combine with --shard (partial results hold no "
                            "range diagnostics); run the case whole with --ranges\n");
            return 2;
        }
        char cache[PP_PATH_MAX] = "";
        pp_run_opts o;
        run_opts_of(&cli, save, cache, sizeof cache, &o);
        return pp_cli_run_shard(cases[0], shard, out, &o);
    }
    if (junit && n_cases > 1) {
        fprintf(stderr, "precprobe run: --junit takes one case at a time\n");
        return 2;
    }
    if (html && n_cases > 1 && pp_mkdir_p(html)) {
        fprintf(stderr, "precprobe: %s: cannot create the HTML report folder: %s\n", html, strerror(errno));
        return 3;
    }
    int status = 0;
    for (int i = 0; i < n_cases; i++) {
        pp_case c;
        pp_run_result r;
        int swept = pp_cli_is_sweep(cases[i]);
        if (swept) {  // a case with [sweep]: each point a run, then the sweep's reports (cmd_run_sweep.c)
            char cache[PP_PATH_MAX] = "";
            pp_run_opts o;
            run_opts_of(&cli, save, cache, sizeof cache, &o);
            rc = junit ? (fprintf(stderr, "precprobe run: --junit takes a case without [sweep]\n"), 2)
                       : pp_cli_run_sweep(cases[i], &o, n_cases == 1 ? out : NULL, out,
                                          n_cases == 1 ? html : NULL);  // several: DIR/report.html
            status = rc > status ? rc : status;
            if (rc == PP_ERR_INTERRUPTED)
                break;
            continue;
        }
        rc = judged_result(cases[i], &cli, save, NULL, &c, &r);
        if (!rc) {
            char dir[PP_PATH_MAX];
            if (out && n_cases == 1)
                snprintf(dir, sizeof dir, "%s", out);
            else
                snprintf(dir, sizeof dir, "%s/%s", out ? out : "reports/out", c.name);
            char page[PP_PATH_MAX + PP_NAME_MAX + 8] = "";
            if (html)  // several cases: one page each in the folder html
                snprintf(page, sizeof page, n_cases > 1 ? "%s/%s.html" : "%s", html, c.name);
            rc = pp_cli_write_reports(&r, dir, junit, html ? page : NULL);
            if (!rc) {
                char *summary = pp_report_summary(&r);
                printf("%s: %s on %s\n%s\nreports: %s/report.txt %s/report.h5%s%s%s%s\n", c.name, c.op->name,
                       r.device, summary ? summary : "", dir, dir, junit ? " " : "", junit ? junit : "",
                       html ? " " : "", page);
                free(summary);
                rc = failed_verdicts(&r) ? 1 : 0;
            }
            pp_run_result_free(&r);
        }
        pp_case_free(&c);
        if (rc > status)
            status = rc;
        if (rc == PP_ERR_INTERRUPTED)
            break;  // the cases after it are not started
    }
    return status;
}

int pp_cmd_baseline(int argc, char **argv)
{
    const char *output = NULL, *pos[1];
    run_cli cli = {0};
    int n_pos = 0;
    const pp_cli_opt opts[] = {
        RUN_CLI_OPTS(cli), {"-o", &output, NULL}, {"--output", &output, NULL},
    };
    int rc = pp_cli_parse("baseline", argc, argv, opts, RUN_CLI_N + 2, pos, 1, &n_pos);
    if (rc == 1) {
        baseline_usage(stdout);
        return 0;
    }
    if (rc || (rc = parse_threads(cli.threads_s, &cli.threads)))
        return rc;
    if (n_pos != 1 || !output) {
        fprintf(stderr, "precprobe baseline: usage: precprobe baseline CASE.toml -o BASELINE.h5\n");
        return 2;
    }
    pp_case c;
    pp_run_result r;
    rc = judged_result(pos[0], &cli, 0, NULL, &c, &r);
    if (!rc) {
        pp_error err = {0};
        if ((rc = pp_report_h5_write(output, &r, &err)))
            fprintf(stderr, "precprobe: %s\n", err.msg);
        else
            printf("baseline of %s written to %s (%d comparisons)\n", c.name, output, r.n_comparisons);
        pp_run_result_free(&r);
    }
    pp_case_free(&c);
    return rc;
}

// The baseline's case (the text it holds) against the case being checked: 0 when they are the
// same experiment (or the baseline holds no case text), else 2 after printing what changed.
static int check_same_case(const char *baseline, const pp_run_result *base, const pp_case *c)
{
    if (!base->case_text)
        return 0;
    pp_case bc;
    pp_error err = {0};
    // parsed as if at the case's path, so relative input files name the same files
    if (pp_case_parse(base->case_text, strlen(base->case_text), c->path, &bc, &err)) {
        fprintf(stderr, "precprobe check: %s: the baseline's case text no longer reads (%s); "
                        "--allow-changed-case to compare anyway\n", baseline, err.msg);
        return 2;
    }
    char diff[4096];
    int n = pp_case_identity_diff(&bc, c, diff, sizeof diff);
    pp_case_free(&bc);
    if (!n)
        return 0;
    fprintf(stderr, "precprobe check: %s is the baseline of another experiment: %d change%s since it was made "
                    "(--allow-changed-case to compare anyway):\n%s", baseline, n, n == 1 ? "" : "s", diff);
    return 2;
}

// A failed check against a baseline from another reference epoch says so (pp_gate_epoch_note).
static void epoch_note(const char *baseline, const pp_run_result *base, const pp_run_result *now)
{
    char note[PP_PATH_MAX + 512];
    if (pp_gate_epoch_note(baseline, base->reference_epoch, now->reference_epoch, note, sizeof note))
        fprintf(stderr, "precprobe check: %s\n", note);
}

int pp_cmd_check(int argc, char **argv)
{
    const char *baseline = NULL, *report = NULL, *junit = NULL, *pos[1];
    run_cli cli = {0};
    int n_pos = 0, allow_changed = 0;
    const pp_cli_opt opts[] = {
        RUN_CLI_OPTS(cli), {"--baseline", &baseline, NULL}, {"--report", &report, NULL},
        {"--allow-changed-case", NULL, &allow_changed}, {"--junit", &junit, NULL},
    };
    int rc = pp_cli_parse("check", argc, argv, opts, RUN_CLI_N + 4, pos, 1, &n_pos);
    if (rc == 1) {
        check_usage(stdout);
        return 0;
    }
    if (rc || (rc = parse_threads(cli.threads_s, &cli.threads)))
        return rc;
    if (n_pos != 1 || !baseline) {
        fprintf(stderr, "precprobe check: usage: precprobe check CASE.toml --baseline BASELINE.h5 [--report RUN.h5]\n");
        return 2;
    }
    pp_error err = {0};
    pp_case c;
    pp_run_result now, base;
    memset(&base, 0, sizeof base);
    rc = judged_result(pos[0], &cli, 0, report, &c, &now);
    if (rc) {
        pp_case_free(&c);
        return rc;
    }
    if ((rc = pp_report_h5_read(baseline, &base, &err))) {
        fprintf(stderr, "precprobe: %s\n", err.msg);
    } else if (strcmp(base.case_name, now.case_name)) {
        fprintf(stderr, "precprobe check: %s is the baseline of case '%s', not '%s'\n", baseline, base.case_name,
                now.case_name);
        rc = 2;
    } else if (!allow_changed && (rc = check_same_case(baseline, &base, &c))) {
        // printed
    } else if (pp_gate_baseline(&c.slack, &now, &base) < 0) {
        fprintf(stderr, "precprobe: out of memory\n");
        rc = 3;
    } else {
        int failed = 0;
        for (int i = 0; i < now.n_verdicts; i++) {
            if (now.verdicts[i].passed)
                continue;
            failed++;
            printf("%s\n", now.verdicts[i].detail);
        }
        printf("check %s: %s (%d of %d checks failed)\n", c.name, failed ? "FAILED" : "passed", failed,
               now.n_verdicts);
        if (failed)
            epoch_note(baseline, &base, &now);
        rc = failed ? 1 : 0;
        // the same verdicts for CI: one testcase per gate rule and per baseline statistic, so
        // the JUnit failures are exactly what made this exit 1
        if (junit && pp_report_junit_write(junit, &now, NULL, &err)) {
            fprintf(stderr, "precprobe: %s\n", err.msg);
            rc = err.code;
        }
    }
    pp_run_result_free(&now);
    pp_run_result_free(&base);
    pp_case_free(&c);
    return rc;
}
