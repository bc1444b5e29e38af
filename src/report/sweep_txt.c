// sweep_txt.c — a sweep's report.txt (sweep_txt.h).
#include "report/sweep_txt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/statistic.h"
#include "core/textbuf.h"

int pp_sweep_shown_stats(const pp_sweep_result *res, int *idx)
{
    int n = 0;
    for (int k = 0; k < res->n_stats; k++) {
        const pp_statistic *st = pp_statistic_find(res->stat[k]);
        if (st && st->label)
            idx[n++] = k;
    }
    return n;
}

static void value_text(const char *stat, double v, char *buf, size_t n)
{
    if (!strcmp(stat, "mismatch_fraction"))
        snprintf(buf, n, "%.2f%%", 100.0 * v);
    else
        snprintf(buf, n, "%.6g", v);
}

void pp_sweep_cell_text(const pp_sweep_result *res, const pp_sweep_cell *cell, int stat, char *buf, size_t n)
{
    char v[64], lo[64], hi[64];
    value_text(res->stat[stat], cell->value[stat], v, sizeof v);
    if (!cell->band_runs) {
        snprintf(buf, n, "%s", v);
        return;
    }
    value_text(res->stat[stat], cell->band[stat][0], lo, sizeof lo);
    value_text(res->stat[stat], cell->band[stat][2], hi, sizeof hi);
    snprintf(buf, n, "%s [%s, %s]", v, lo, hi);
}

// One table: the statistic stat of group g, a row per point, a column per variant.
static void table(pp_textbuf *b, const pp_sweep_result *res, const pp_sweep_group *g, int stat)
{
    const pp_statistic *st = pp_statistic_find(res->stat[stat]);
    pp_tb_printf(b, "\n== %s (%s): %s against %s ==\n", st ? st->label : res->stat[stat], res->stat[stat], g->tensor,
                 g->against);
    int wname = 5;
    for (int i = 0; i < res->n_rows; i++) {
        int l = (int)strlen(res->rows[i].name);
        wname = l > wname ? l : wname;
    }
    int width[PP_SWEEP_MAX_GROUP_VARIANTS];
    char cell[96];
    for (int v = 0; v < g->n_variants; v++) {
        width[v] = (int)strlen(g->variant[v]);
        for (int i = 0; i < res->n_rows; i++) {
            const pp_sweep_cell *c = pp_sweep_row_find(&res->rows[i], g->variant[v], g->tensor, g->against);
            if (c)
                pp_sweep_cell_text(res, c, stat, cell, sizeof cell);
            int l = c ? (int)strlen(cell) : 1;
            width[v] = l > width[v] ? l : width[v];
        }
    }
    pp_tb_printf(b, "%-*s", wname, "point");
    for (int v = 0; v < g->n_variants; v++)
        pp_tb_printf(b, "  %*s", width[v], g->variant[v]);
    pp_tb_str(b, "\n");
    for (int i = 0; i < res->n_rows; i++) {
        pp_tb_printf(b, "%-*s", wname, res->rows[i].name);
        for (int v = 0; v < g->n_variants; v++) {
            const pp_sweep_cell *c = pp_sweep_row_find(&res->rows[i], g->variant[v], g->tensor, g->against);
            if (c)
                pp_sweep_cell_text(res, c, stat, cell, sizeof cell);
            pp_tb_printf(b, "  %*s", width[v], c ? cell : "-");
        }
        pp_tb_str(b, "\n");
    }
}

char *pp_sweep_report_text(const pp_sweep_result *res, const char *points_dir, const char *notes)
{
    pp_textbuf b = {0};
    pp_tb_printf(&b, "sweep %s: %d point%s over", res->case_name, res->n_rows, res->n_rows == 1 ? "" : "s");
    for (int k = 0; k < res->n_keys; k++) {
        pp_tb_printf(&b, "%s %s = [", k ? "," : "", res->keys[k].name);
        for (int j = 0; j < res->keys[k].n_values; j++)
            pp_tb_printf(&b, "%s%s", j ? ", " : "", res->keys[k].text[j]);
        pp_tb_str(&b, "]");
    }
    pp_tb_printf(&b, "\ndevice: %s\nprecprobe %s\n", res->device[0] ? res->device : "-", res->precprobe_version);
    if (points_dir)
        pp_tb_printf(&b, "each point's own reports: %s/NAME/report.txt, report.h5\n", points_dir);
    if (notes)
        pp_tb_printf(&b, "%s", notes);
    int shown[PP_BAND_MAX_STATS];
    int ns = pp_sweep_shown_stats(res, shown);
    pp_sweep_group groups[64];
    int ng = pp_sweep_result_groups(res, groups, 64);
    // a table per statistic: the statistic outer, so each statistic's tables read together
    for (int s = 0; s < ns; s++)
        for (int g = 0; g < ng; g++)
            table(&b, res, &groups[g], shown[s]);
    return pp_tb_take(&b);
}
