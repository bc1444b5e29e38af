// cmd_run_sweep.c — `precprobe run` of a case with [sweep]: each point (src/pipeline/sweep.h) run
// as a case of its own into DIR/points/NAME/, then the sweep's reports over all of them:
// DIR/report.txt (a table per statistic), DIR/sweep.h5 and the HTML page of line charts.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "io/atomic_file.h"
#include "io/toml.h"
#include "pipeline/gate.h"
#include "pipeline/run.h"
#include "pipeline/sweep.h"
#include "report/sweep_h5.h"
#include "report/sweep_html.h"
#include "report/sweep_result.h"
#include "report/sweep_txt.h"

int pp_cli_is_sweep(const char *path)
{
    pp_toml_value *root = NULL;
    if (pp_toml_parse_file(path, &root, NULL))
        return 0;
    int swept = pp_toml_get(root, "sweep") != NULL;
    pp_toml_free(root);
    return swept;
}

// Point i run, judged by the case's gate and written into dir; its statistics added to res.
// Returns an exit status: 0, 1 (a gate rule failed), or the error's.
static int run_point(const pp_sweep *s, int i, const pp_run_opts *o, const char *dir, pp_sweep_result *res)
{
    pp_error err = {0};
    pp_case c;
    pp_run_result r;
    memset(&r, 0, sizeof r);
    int rc = pp_sweep_point_case(s, i, &c, &err);
    if (!rc && c.notes)
        fputs(c.notes, stderr);
    if (!rc)
        rc = pp_run_case(&c, o, &r, &err);
    if (!rc && pp_gate_evaluate(&c, &r) < 0)
        rc = pp_fail(&err, PP_ERR_RUNTIME, "out of memory");
    if (!rc)
        rc = pp_sweep_result_add(res, s, i, &r, &err);
    if (rc) {
        fprintf(stderr, "precprobe: point '%s': %s\n", s->points[i].name, err.msg);
    } else if (!(rc = pp_cli_write_reports(&r, dir, NULL, NULL))) {
        int failed = 0;
        for (int v = 0; v < r.n_verdicts; v++)
            failed += !r.verdicts[v].passed;
        printf("point %d/%d %s: %s (gate: %d of %d rules failed)\n", i + 1, s->n_points, s->points[i].name,
               dir, failed, r.n_verdicts);
        fflush(stdout);
        rc = failed ? 1 : 0;
    }
    pp_run_result_free(&r);
    pp_case_free(&c);
    return rc;
}

// The sweep's own reports, staged and renamed together.
static int write_sweep_reports(const pp_sweep_result *res, const pp_sweep *s, const char *dir, const char *html)
{
    pp_error err = {0};
    char txt[PP_PATH_MAX + 16], h5[PP_PATH_MAX + 16], page[PP_PATH_MAX + 16], points[PP_PATH_MAX + 16];
    snprintf(txt, sizeof txt, "%s/report.txt", dir);
    snprintf(h5, sizeof h5, "%s/sweep.h5", dir);
    snprintf(page, sizeof page, "%s", html ? html : "");
    if (!html)
        snprintf(page, sizeof page, "%s/report.html", dir);
    snprintf(points, sizeof points, "%s/points", dir);
    char *text = pp_sweep_report_text(res, points, s->notes);
    char *html_text = pp_sweep_report_html(res);
    pp_atomic_set set = {0};
    const char *txt_tmp = NULL, *h5_tmp = NULL, *html_tmp = NULL;
    int rc = !text || !html_text ? pp_fail(&err, PP_ERR_RUNTIME, "out of memory") : 0;
    if (!rc)
        rc = pp_atomic_set_add(&set, txt, &txt_tmp, &err);
    if (!rc)
        rc = pp_atomic_set_add(&set, h5, &h5_tmp, &err);
    if (!rc)
        rc = pp_atomic_set_add(&set, page, &html_tmp, &err);
    if (!rc)
        rc = pp_atomic_write_text(txt_tmp, text, &err);
    if (!rc)
        rc = pp_sweep_h5_write(h5_tmp, res, &err);
    if (!rc)
        rc = pp_atomic_write_text(html_tmp, html_text, &err);
    if (!rc)
        rc = pp_atomic_set_commit(&set, &err);
    pp_atomic_set_discard(&set);
    if (rc)
        fprintf(stderr, "precprobe: %s\n", err.msg);
    else
        printf("sweep %s: %d points\nreports: %s %s %s\n", res->case_name, res->n_rows, txt, h5, page);
    free(text);
    free(html_text);
    return rc;
}

int pp_cli_load_sweep(const char *path, pp_sweep *s)
{
    pp_error err = {0};
    int rc = pp_sweep_load(path, s, &err);
    if (s->notes)
        fputs(s->notes, stderr);  // the combinations the op cannot run, skipped
    if (rc) {
        fprintf(stderr, "precprobe: %s\n", err.msg);
        pp_sweep_free(s);
    }
    return rc;
}

int pp_cli_run_sweep(const char *path, const pp_run_opts *o, const char *out, const char *out_root, const char *html)
{
    pp_sweep s;
    pp_error err = {0};
    int rc = pp_cli_load_sweep(path, &s);
    if (rc)
        return rc;
    char dir[PP_PATH_MAX];
    if (out)
        snprintf(dir, sizeof dir, "%s", out);
    else
        snprintf(dir, sizeof dir, "%s/%s", out_root ? out_root : "reports/out", s.case_name);
    pp_sweep_result res;
    int status = 0;
    if ((rc = pp_sweep_result_init(&res, &s, &err))) {
        if (s.notes)
            fputs(s.notes, stderr);  // the skipped points the error speaks of
        fprintf(stderr, "precprobe: %s\n", err.msg);
        pp_sweep_free(&s);
        return rc;
    }
    printf("%s: sweep of %d points\n", s.case_name, s.n_points);
    for (int i = 0; i < s.n_points; i++) {
        char point_dir[PP_PATH_MAX + PP_SWEEP_NAME_MAX + 16];
        snprintf(point_dir, sizeof point_dir, "%s/points/%s", dir, s.points[i].name);
        rc = run_point(&s, i, o, point_dir, &res);
        if (rc > 1) {  // an error: the sweep's reports would miss the point
            status = rc;
            break;
        }
        status = rc > status ? rc : status;
    }
    if (status <= 1) {
        if (pp_mkdir_p(dir)) {
            fprintf(stderr, "precprobe: %s: cannot create the report folder: %s\n", dir, strerror(errno));
            rc = 3;
        } else {
            rc = write_sweep_reports(&res, &s, dir, html);
        }
        status = rc ? rc : status;
    }
    pp_sweep_result_free(&res);
    pp_sweep_free(&s);
    return status;
}

// Declared in cli.h by the sweep's branch for `precprobe merge` of a sweep's shards
// (cmd_sweep_shard.c), defined here: the sweep's reports from the points' stored report.h5 files.
int pp_cli_write_sweep_reports(const pp_sweep *s, const char *dir, const char *html)
{
    pp_error err = {0};
    pp_sweep_result res;
    memset(&res, 0, sizeof res);
    char points[PP_PATH_MAX + 16];
    snprintf(points, sizeof points, "%s/points", dir);
    int rc = pp_sweep_result_from_points(&res, s, points, &err);
    if (rc)
        fprintf(stderr, "precprobe: %s\n", err.msg);
    else
        rc = write_sweep_reports(&res, s, dir, html);
    pp_sweep_result_free(&res);
    return rc;
}
