// cmd_sweep_shard.c — shards and merge of a case with [sweep] (src/pipeline/sweep.h): the work
// is the points' tasks, cut by one rule over all of them (pp_shard_owners_multi: units (point,
// variant) in point order, so a shard gets whole points when points are many and a slice of a
// point when they are few). A shard writes DIR/points/NAME/partial.h5 for every point (empty
// where it owns nothing there), the sweep's text DIR/sweep.toml, and last DIR/sweep-shard.txt,
// its manifest (format, precprobe version, shard I/N, points, the case's path): present only
// when the shard finished. `precprobe merge` of such folders merges each point as a plain case
// (pipeline/merge.h) into OUT/points/NAME/ and writes the sweep's reports from the merged points,
// as `precprobe run` of the sweep does.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/build_info.h"
#include "core/textbuf.h"
#include "io/atomic_file.h"
#include "io/file_bytes.h"
#include "pipeline/gate.h"
#include "pipeline/merge.h"
#include "pipeline/shard.h"
#include "pipeline/shard_run.h"
#include "pipeline/sweep.h"
#include "report/partial_h5.h"

#define MANIFEST "sweep-shard.txt"
#define MANIFEST_FORMAT "precprobe sweep shard 1"

static char *read_text(const char *path, size_t *len, pp_error *err)
{
    pp_file_buf b;
    if (pp_file_load(path, &b, err))
        return NULL;
    char *t = malloc(b.size + 1);
    if (t) {
        if (b.size)
            memcpy(t, b.data, b.size);
        t[b.size] = '\0';
        *len = b.size;
    } else {
        pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    }
    pp_file_release(&b);
    return t;
}

int pp_cli_is_sweep_shard(const char *dir)
{
    char path[PP_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", dir, MANIFEST);
    FILE *f = fopen(path, "r");
    if (f)
        fclose(f);
    return f != NULL;
}

// Every point's plan, and the owner table over all of them.
static int sweep_owners(const pp_sweep *s, pp_case *cases, const pp_run_opts *o, int n, int **owner, pp_error *err)
{
    int np = s->n_points, rc = PP_OK;
    pp_run_plan *plans = calloc((size_t)np, sizeof *plans);
    const pp_run_plan **ptrs = calloc((size_t)np, sizeof *ptrs);
    if (!plans || !ptrs)
        rc = pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    for (int p = 0; !rc && p < np; p++) {
        rc = pp_run_plan_make(&cases[p], o, &plans[p], err);
        ptrs[p] = &plans[p];
        if (!rc && !(owner[p] = calloc((size_t)plans[p].n_tasks + 1, sizeof **owner)))
            rc = pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    }
    if (!rc && pp_shard_owners_multi(ptrs, np, n, owner))
        rc = pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    for (int p = 0; plans && p < np; p++)
        if (plans[p].c)
            pp_run_plan_free(&plans[p]);
    free(plans);
    free(ptrs);
    return rc;
}

int pp_cli_run_sweep_shard(const char *path, int i, int n, const char *out, const pp_run_opts *o)
{
    pp_error err = {0};
    pp_sweep s;
    memset(&s, 0, sizeof s);
    size_t len = 0;
    char *text = read_text(path, &len, &err);
    int rc = text ? pp_sweep_parse(text, len, path, &s, &err) : err.code;
    if (s.notes)
        fputs(s.notes, stderr);
    int np = rc ? 0 : s.n_points;
    pp_case *cases = calloc((size_t)(np ? np : 1), sizeof *cases);
    int **owner = calloc((size_t)(np ? np : 1), sizeof *owner);
    if (!rc && (!cases || !owner))
        rc = pp_fail(&err, PP_ERR_RUNTIME, "out of memory");
    for (int p = 0; !rc && p < np; p++)
        rc = pp_sweep_point_case(&s, p, &cases[p], &err);
    if (!rc)
        rc = sweep_owners(&s, cases, o, n, owner, &err);
    char dir[PP_PATH_MAX];
    snprintf(dir, sizeof dir, out ? "%s" : "reports/out/%s/shard-%d-of-%d", out ? out : s.case_name, i, n);
    int owned_points = 0;
    for (int p = 0; !rc && p < np; p++) {
        pp_partial part;
        char pdir[PP_PATH_MAX + PP_SWEEP_NAME_MAX + 16];
        snprintf(pdir, sizeof pdir, "%s/points/%s", dir, s.points[p].name);
        rc = pp_run_shard_of(&cases[p], o, i, n, owner[p], &part, &err);
        if (!rc)
            rc = pp_partial_write(pdir, &part, &err);
        int any = 0;
        for (int t = 0; !rc && t < part.n_tasks; t++)
            any |= part.owned[t];
        owned_points += any;
        pp_partial_free(&part);
        if (rc)
            pp_fail(&err, err.code, "point '%s': %.900s", s.points[p].name, err.msg);
    }
    if (!rc) {  // the manifest last: its presence says the shard finished
        char tpath[PP_PATH_MAX + 32], mpath[PP_PATH_MAX + 32];
        snprintf(tpath, sizeof tpath, "%s/sweep.toml", dir);
        snprintf(mpath, sizeof mpath, "%s/%s", dir, MANIFEST);
        pp_textbuf m = {0};
        pp_tb_printf(&m, "%s\nprecprobe_version %s\nshard %d/%d\npoints %d\ncase_path %s\n", MANIFEST_FORMAT,
                     PP_VERSION, i, n, np, path);
        char *mtext = pp_tb_take(&m);
        rc = !mtext ? pp_fail(&err, PP_ERR_RUNTIME, "out of memory") : pp_atomic_write_text(tpath, text, &err);
        if (!rc)
            rc = pp_atomic_write_text(mpath, mtext, &err);
        free(mtext);
    }
    if (rc)
        fprintf(stderr, "precprobe: %s\n", err.msg);
    else
        printf("%s: sweep shard %d/%d: work in %d of %d points\npartials: %s/points/*/partial.h5\n", s.case_name, i,
               n, owned_points, np, dir);
    for (int p = 0; cases && p < np; p++) {
        pp_case_free(&cases[p]);
        free(owner[p]);
    }
    free(cases);
    free(owner);
    free(text);
    pp_sweep_free(&s);
    return rc;
}

// ---- merge ---------------------------------------------------------------------------------

typedef struct sweep_manifest {
    char version[64];
    int shard, n_shards, n_points;
    char case_path[PP_PATH_MAX];
    char *text;  // the sweep's case text, owned
    size_t len;
} sweep_manifest;

static int read_manifest(const char *dir, sweep_manifest *m, pp_error *err)
{
    memset(m, 0, sizeof *m);
    char path[PP_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", dir, MANIFEST);
    size_t len;
    char *t = read_text(path, &len, err);
    if (!t)
        return pp_fail(err, PP_ERR_INPUT, "%s: no sweep shard here (%s): did the shard finish?", dir, err->msg);
    char format[64] = "";
    int ok = sscanf(t, "%63[^\n]\nprecprobe_version %63s\nshard %d/%d\npoints %d\ncase_path %1023[^\n]", format,
                    m->version, &m->shard, &m->n_shards, &m->n_points, m->case_path) == 6 &&
             !strcmp(format, MANIFEST_FORMAT) && m->n_shards >= 1 && m->shard >= 1 && m->shard <= m->n_shards;
    free(t);
    if (!ok)
        return pp_fail(err, PP_ERR_INPUT, "%s: not a sweep shard's manifest", path);
    snprintf(path, sizeof path, "%s/sweep.toml", dir);
    if (!(m->text = read_text(path, &m->len, err)))
        return pp_fail(err, PP_ERR_INPUT, "%s: the sweep's text is missing", dir);
    return PP_OK;
}

// The manifests are one sweep's, of this version; every shard present.
static int check_sweep(const sweep_manifest *m, const char *const *names, int n, pp_error *err)
{
    for (int k = 0; k < n; k++) {
        if (strcmp(m[k].version, PP_VERSION))
            return pp_fail(err, PP_ERR_INPUT, "%s was written by precprobe %s, this is precprobe %s", names[k],
                           m[k].version, PP_VERSION);
        if (m[k].len != m[0].len || memcmp(m[k].text, m[0].text, m[0].len) || m[k].n_points != m[0].n_points)
            return pp_fail(err, PP_ERR_INPUT, "%s and %s are shards of different sweeps (their case texts differ)",
                           names[0], names[k]);
        if (m[k].n_shards != m[0].n_shards)
            return pp_fail(err, PP_ERR_INPUT, "%s is shard %d/%d, %s shard %d/%d: one sweep is cut one way", names[0],
                           m[0].shard, m[0].n_shards, names[k], m[k].shard, m[k].n_shards);
    }
    int N = m[0].n_shards, missing = 0;
    pp_textbuf b = {0};
    for (int i = 1; i <= N; i++) {
        int have = 0;
        for (int k = 0; k < n && !have; k++)
            have = m[k].shard == i;
        if (!have)
            pp_tb_printf(&b, "%s%d/%d", missing++ ? ", " : "", i, N);
    }
    char *list = pp_tb_take(&b);
    int rc = !list ? pp_fail(err, PP_ERR_RUNTIME, "out of memory")
           : missing ? pp_fail(err, PP_ERR_INPUT, "%d of %d shards missing: %s (sweep %s)", missing, N, list,
                               m[0].case_path)
                     : PP_OK;
    free(list);
    return rc;
}

// Point p merged from every shard's partial, written to OUT/points/NAME/. Returns
// the exit status: 0, 1 (a gate rule of the point failed), or the error's.
static int merge_point(const pp_sweep *s, int p, const char *const *names, int n, const char *out)
{
    pp_error err = {0};
    pp_partial *parts = calloc((size_t)n, sizeof *parts);
    char **pnames = calloc((size_t)n, sizeof *pnames);
    int rc = parts && pnames ? PP_OK : pp_fail(&err, PP_ERR_RUNTIME, "out of memory");
    int n_read = 0;
    for (; !rc && n_read < n; n_read++) {
        size_t sz = strlen(names[n_read]) + strlen(s->points[p].name) + 16;
        if (!(pnames[n_read] = malloc(sz))) {
            rc = pp_fail(&err, PP_ERR_RUNTIME, "out of memory");
            break;
        }
        snprintf(pnames[n_read], sz, "%s/points/%s", names[n_read], s->points[p].name);
        rc = pp_partial_read(pnames[n_read], &parts[n_read], &err);
    }
    pp_case c;
    pp_run_result r;
    memset(&c, 0, sizeof c);
    memset(&r, 0, sizeof r);
    if (!rc)
        rc = pp_merge_partials(parts, (const char *const *)pnames, n, &c, &r, &err);
    if (!rc && pp_gate_evaluate(&c, &r) < 0)
        rc = pp_fail(&err, PP_ERR_RUNTIME, "out of memory");
    if (rc) {
        fprintf(stderr, "precprobe merge: point '%s': %s\n", s->points[p].name, err.msg);
    } else {
        char dir[PP_PATH_MAX + PP_SWEEP_NAME_MAX + 16];
        snprintf(dir, sizeof dir, "%s/points/%s", out, s->points[p].name);
        if (!(rc = pp_cli_write_reports(&r, dir, NULL, NULL)))
            for (int v = 0; v < r.n_verdicts; v++)
                rc |= !r.verdicts[v].passed;
    }
    for (int k = 0; k < n; k++) {
        if (parts && k < n_read)
            pp_partial_free(&parts[k]);
        if (pnames)
            free(pnames[k]);
    }
    free(parts);
    free(pnames);
    pp_run_result_free(&r);
    pp_case_free(&c);
    return rc;
}

int pp_cli_merge_sweep(const char *const *names, int n, const char *out, const char *html)
{
    pp_error err = {0};
    sweep_manifest *m = calloc((size_t)n, sizeof *m);
    int rc = m ? PP_OK : pp_fail(&err, PP_ERR_RUNTIME, "out of memory");
    for (int k = 0; !rc && k < n; k++)
        rc = read_manifest(names[k], &m[k], &err);
    if (!rc)
        rc = check_sweep(m, names, n, &err);
    pp_sweep s;
    memset(&s, 0, sizeof s);
    if (!rc)
        rc = pp_sweep_parse(m[0].text, m[0].len, m[0].case_path, &s, &err);
    if (!rc && s.n_points != m[0].n_points)
        rc = pp_fail(&err, PP_ERR_INPUT, "%s: the sweep's text expands to %d points with this precprobe, not %d",
                     names[0], s.n_points, m[0].n_points);
    if (rc)
        fprintf(stderr, "precprobe merge: %s\n", err.msg);
    int status = rc;
    for (int p = 0; !rc && p < s.n_points; p++) {
        int prc = merge_point(&s, p, names, n, out);
        if (prc > 1) {
            status = rc = prc;
            break;
        }
        status = prc > status ? prc : status;
    }
    if (!rc) {  // from the merged points' report.h5 files, as `precprobe run` of the sweep does
        int wrc = pp_cli_write_sweep_reports(&s, out, html);
        status = wrc ? wrc : status;
    }
    pp_sweep_free(&s);
    for (int k = 0; m && k < n; k++)
        free(m[k].text);
    free(m);
    return status;
}
