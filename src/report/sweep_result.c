// sweep_result.c — a sweep's statistics in memory (sweep_result.h).
#include "report/sweep_result.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/build_info.h"
#include "core/statistic.h"
#include "report/report_h5.h"

int pp_sweep_result_init(pp_sweep_result *res, const pp_sweep *s, pp_error *err)
{
    memset(res, 0, sizeof *res);
    snprintf(res->case_name, sizeof res->case_name, "%s", s->case_name);
    snprintf(res->precprobe_version, sizeof res->precprobe_version, "%s", PP_VERSION);
    res->n_keys = s->n_keys;
    memcpy(res->keys, s->keys, sizeof res->keys);
    int n = pp_statistic_count();
    res->n_stats = n < PP_BAND_MAX_STATS ? n : PP_BAND_MAX_STATS;
    for (int k = 0; k < res->n_stats; k++)
        snprintf(res->stat[k], PP_NAME_MAX, "%s", pp_statistic_at(k)->name);
    res->rows = calloc((size_t)(s->n_points ? s->n_points : 1), sizeof *res->rows);
    if (!res->rows)
        return pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    return 0;
}

int pp_sweep_result_add(pp_sweep_result *res, const pp_sweep *s, int i, const pp_run_result *r, pp_error *err)
{
    pp_sweep_row *row = &res->rows[res->n_rows];
    memset(row, 0, sizeof *row);
    snprintf(row->name, sizeof row->name, "%s", s->points[i].name);
    memcpy(row->value, s->points[i].value, sizeof row->value);
    row->cells = calloc((size_t)(r->n_comparisons ? r->n_comparisons : 1), sizeof *row->cells);
    if (!row->cells)
        return pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    for (int c = 0; c < r->n_comparisons; c++) {
        const pp_comparison *cmp = &r->comparisons[c];
        pp_sweep_cell *cell = &row->cells[c];
        snprintf(cell->variant, PP_NAME_MAX, "%s", cmp->variant);
        snprintf(cell->tensor, PP_NAME_MAX, "%s", cmp->tensor);
        snprintf(cell->against, PP_NAME_MAX, "%s", cmp->against);
        for (int k = 0; k < res->n_stats; k++)
            cell->value[k] = pp_statistic_at(k)->value(&cmp->stats);
        cell->band_runs = cmp->band_runs;
        for (int k = 0; k < cmp->n_band_stats && k < res->n_stats; k++)
            memcpy(cell->band[k], cmp->band[k], sizeof cell->band[k]);
    }
    row->n_cells = r->n_comparisons;
    if (!res->device[0])
        snprintf(res->device, sizeof res->device, "%s", r->device);
    res->n_rows++;
    return 0;
}

int pp_sweep_result_from_points(pp_sweep_result *res, const pp_sweep *s, const char *points_dir, pp_error *err)
{
    int rc = pp_sweep_result_init(res, s, err);
    for (int i = 0; !rc && i < s->n_points; i++) {
        char path[PP_PATH_MAX + PP_SWEEP_NAME_MAX + 32];
        snprintf(path, sizeof path, "%s/%s/report.h5", points_dir, s->points[i].name);
        pp_run_result r;
        rc = pp_report_h5_read(path, &r, err);
        if (!rc && strcmp(r.case_name, s->case_name))
            rc = pp_fail(err, PP_ERR_INPUT, "%s: the report of case '%s', not of the sweep's '%s'", path, r.case_name,
                         s->case_name);
        if (!rc)
            rc = pp_sweep_result_add(res, s, i, &r, err);
        pp_run_result_free(&r);
    }
    return rc;
}

void pp_sweep_result_free(pp_sweep_result *res)
{
    for (int i = 0; res->rows && i < res->n_rows; i++)
        free(res->rows[i].cells);
    free(res->rows);
    memset(res, 0, sizeof *res);
}

const pp_sweep_cell *pp_sweep_row_find(const pp_sweep_row *row, const char *variant, const char *tensor,
                                       const char *against)
{
    for (int c = 0; c < row->n_cells; c++) {
        const pp_sweep_cell *cell = &row->cells[c];
        if (!strcmp(cell->variant, variant) && !strcmp(cell->tensor, tensor) && !strcmp(cell->against, against))
            return cell;
    }
    return NULL;
}

int pp_sweep_result_groups(const pp_sweep_result *res, pp_sweep_group *groups, int max)
{
    int n = 0;
    for (int i = 0; i < res->n_rows; i++)
        for (int c = 0; c < res->rows[i].n_cells; c++) {
            const pp_sweep_cell *cell = &res->rows[i].cells[c];
            int g = 0;
            while (g < n && (strcmp(groups[g].tensor, cell->tensor) || strcmp(groups[g].against, cell->against)))
                g++;
            if (g == n) {
                if (n == max)
                    continue;  // more groups than the caller can show
                groups[n++] = (pp_sweep_group){cell->tensor, cell->against, 0, {0}};
            }
            pp_sweep_group *grp = &groups[g];
            int v = 0;
            while (v < grp->n_variants && strcmp(grp->variant[v], cell->variant))
                v++;
            if (v == grp->n_variants && v < PP_SWEEP_MAX_GROUP_VARIANTS)
                grp->variant[grp->n_variants++] = cell->variant;
        }
    return n;
}
