// sweep_html.c — a sweep's HTML page (sweep_html.h), drawn with the chart primitives of svg.h.
#include "report/sweep_html.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/statistic.h"
#include "core/textbuf.h"
#include "report/svg.h"
#include "report/sweep_txt.h"

static const char CSS[] =
    "body{font-family:sans-serif;margin:1.5em;color:#222}h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}"
    "figure{display:inline-block;margin:0.5em;vertical-align:top}figcaption{font-size:0.85em;max-width:600px}"
    "svg text{font-size:11px}svg .frame{fill:none;stroke:#999}svg .grid{stroke:#eee}svg .tick{stroke:#999}table{border-collapse:collapse;font-size:0.85em}td,th{border:1px solid #ccc;"
    "padding:2px 6px;text-align:right}@media print{figure{break-inside:avoid}}";

// The statistics charted: the headline ones (fewer charts than the text's tables).
static const char *const charted[] = {"mismatch_fraction", "max_abs_error", "max_ulp_at_scale"};

// Whether row i has the values of row ref on every key but key x.
static int same_others(const pp_sweep_result *res, int i, int ref, int x)
{
    for (int k = 0; k < res->n_keys; k++)
        if (k != x && res->rows[i].value[k] != res->rows[ref].value[k])
            return 0;
    return 1;
}

// One chart: statistic stat of group g against key x; a line per variant and per combination of
// the other keys' values (the first row showing it stands for the combination).
static void chart(pp_textbuf *b, const pp_sweep_result *res, const pp_sweep_group *g, int stat, int x)
{
    const pp_sweep_key *key = &res->keys[x];
    enum { MAX_LINES = 48 };
    int first_row[MAX_LINES], line_variant[MAX_LINES], n_lines = 0;
    double ymin = INFINITY, ymax = -INFINITY;
    for (int v = 0; v < g->n_variants; v++)
        for (int i = 0; i < res->n_rows && n_lines < MAX_LINES; i++) {
            int seen = 0;
            for (int l = 0; l < n_lines; l++)
                seen |= line_variant[l] == v && same_others(res, i, first_row[l], x);
            const pp_sweep_cell *c = pp_sweep_row_find(&res->rows[i], g->variant[v], g->tensor, g->against);
            if (!c)
                continue;
            for (int e = 0; e < 3; e++) {
                double y = e == 1 || !c->band_runs ? c->value[stat] : c->band[stat][e];
                if (isfinite(y)) {
                    ymin = y < ymin ? y : ymin;
                    ymax = y > ymax ? y : ymax;
                }
            }
            if (!seen) {
                first_row[n_lines] = i;
                line_variant[n_lines++] = v;
            }
        }
    if (!n_lines || !(ymax >= ymin))
        return;
    const pp_statistic *st = pp_statistic_find(res->stat[stat]);
    int mismatch = !strcmp(res->stat[stat], "mismatch_fraction");
    int ylog = !mismatch && ymin > 0 && ymax / ymin > 20;
    double xmin = INFINITY, xmax = -INFINITY;
    for (int j = 0; j < key->n_values; j++) {
        xmin = key->number[j] < xmin ? key->number[j] : xmin;
        xmax = key->number[j] > xmax ? key->number[j] : xmax;
    }
    int xlog = xmin > 0 && xmax / xmin >= 8;
    pp_chart c = {60, 20, 360, 220, xmin, xmax, ylog ? ymin / 1.5 : (mismatch ? 0 : fmin(0, ymin)),
                  ylog ? ymax * 1.5 : (ymax > 0 ? ymax * 1.08 : 1), xlog, ylog};
    if (c.xmax == c.xmin)
        c.xmin -= 1, c.xmax += 1;
    if (c.ymax <= c.ymin)
        c.ymax = c.ymin + 1;
    char title[512];
    snprintf(title, sizeof title, "%s of %s against %s vs %s", res->stat[stat], g->tensor, g->against, key->name);
    pp_tb_str(b, "<figure>");
    pp_svg_begin(b, 640, 290, title);
    pp_svg_axes(b, &c, 0, key->name, st && st->label ? st->label : res->stat[stat]);
    for (int j = 0; j < key->n_values; j++)  // the swept values as the x labels
        pp_svg_text(b, pp_chart_x(&c, key->number[j]), c.py + c.ph + 14, "middle", key->text[j]);
    // each line's points, in the key's order; a line equal to an earlier one of its variant (a
    // variant the other keys do not change, like the non-CP kernel in a cp_world sweep) is drawn once
    typedef struct series {
        int n;
        double x[PP_SWEEP_MAX_VALUES], y[PP_SWEEP_MAX_VALUES];
        const pp_sweep_cell *cell[PP_SWEEP_MAX_VALUES];
    } series;
    series *lines = calloc((size_t)n_lines, sizeof *lines);
    if (!lines) {
        b->oom = 1;
        return;
    }
    int same_as[MAX_LINES];
    for (int l = 0; l < n_lines; l++) {
        const char *variant = g->variant[line_variant[l]];
        for (int j = 0; j < key->n_values; j++)
            for (int i = 0; i < res->n_rows; i++) {
                if (res->rows[i].value[x] != j || !same_others(res, i, first_row[l], x))
                    continue;
                const pp_sweep_cell *cell = pp_sweep_row_find(&res->rows[i], variant, g->tensor, g->against);
                if (!cell)
                    continue;
                lines[l].x[lines[l].n] = key->number[j];
                lines[l].y[lines[l].n] = cell->value[stat];
                lines[l].cell[lines[l].n++] = cell;
            }
        same_as[l] = -1;
        for (int m = 0; m < l && same_as[l] < 0; m++)
            if (line_variant[m] == line_variant[l] && same_as[m] < 0 && lines[m].n == lines[l].n &&
                !memcmp(lines[m].x, lines[l].x, (size_t)lines[l].n * sizeof(double)) &&
                !memcmp(lines[m].y, lines[l].y, (size_t)lines[l].n * sizeof(double)))
                same_as[l] = m;
    }
    const char *names[MAX_LINES], *colors[MAX_LINES];
    char label[MAX_LINES][PP_NAME_MAX + PP_SWEEP_NAME_MAX];
    int n_drawn = 0;
    for (int l = 0; l < n_lines; l++) {
        if (same_as[l] >= 0)
            continue;
        int shared = 0;  // other lines equal to this one: its label names the variant only
        for (int m = l + 1; m < n_lines; m++)
            shared |= same_as[m] == l;
        const char *color = pp_svg_color(n_drawn);
        for (int p = 0; p < lines[l].n; p++) {
            const pp_sweep_cell *cell = lines[l].cell[p];
            if (cell->band_runs) {  // the order band as an error bar
                double bx[2] = {lines[l].x[p], lines[l].x[p]};
                double by[2] = {cell->band[stat][0], cell->band[stat][2]};
                pp_svg_polyline(b, &c, bx, by, 2, color, 0);
            }
        }
        pp_svg_polyline(b, &c, lines[l].x, lines[l].y, lines[l].n, color, 0);
        for (int p = 0; p < lines[l].n; p++) {
            char tip[64];
            snprintf(tip, sizeof tip, "%s = %.6g", res->stat[stat], lines[l].y[p]);
            pp_svg_rect(b, pp_chart_x(&c, lines[l].x[p]) - 2.5, pp_chart_y(&c, lines[l].y[p]) - 2.5, 5, 5, color, tip);
        }
        // the line's name: the variant, and the other keys' values when there are others
        size_t at = (size_t)snprintf(label[n_drawn], sizeof label[n_drawn], "%s", g->variant[line_variant[l]]);
        for (int k = 0; k < res->n_keys && !shared; k++)
            if (k != x && res->keys[k].n_values > 1 && at < sizeof label[n_drawn])
                at += (size_t)snprintf(label[n_drawn] + at, sizeof label[n_drawn] - at, " %s=%s", res->keys[k].name,
                                       res->keys[k].text[res->rows[first_row[l]].value[k]]);
        names[n_drawn] = label[n_drawn];
        colors[n_drawn++] = color;
    }
    free(lines);
    pp_svg_legend(b, 435, 20, names, colors, n_drawn);
    pp_svg_end(b);
    pp_tb_str(b, "<figcaption>");
    pp_tb_html(b, title);
    pp_tb_str(b, "</figcaption></figure>\n");
}

char *pp_sweep_report_html(const pp_sweep_result *res)
{
    pp_textbuf b = {0};
    pp_tb_str(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>precprobe sweep: ");
    pp_tb_html(&b, res->case_name);
    pp_tb_printf(&b, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>sweep ", CSS);
    pp_tb_html(&b, res->case_name);
    pp_tb_printf(&b, ": %d points</h1>\n<p>device: ", res->n_rows);
    pp_tb_html(&b, res->device);
    pp_tb_str(&b, "; precprobe ");
    pp_tb_html(&b, res->precprobe_version);
    pp_tb_str(&b, "</p>\n<table><tr><th>key</th><th>values</th></tr>\n");
    for (int k = 0; k < res->n_keys; k++) {
        pp_tb_str(&b, "<tr><td>");
        pp_tb_html(&b, res->keys[k].name);
        pp_tb_str(&b, "</td><td>");
        for (int j = 0; j < res->keys[k].n_values; j++) {
            pp_tb_str(&b, j ? ", " : "");
            pp_tb_html(&b, res->keys[k].text[j]);
        }
        pp_tb_str(&b, "</td></tr>\n");
    }
    pp_tb_str(&b, "</table>\n<p>Each point's own report (with its charts): points/NAME/report.h5, "
                  "<code>precprobe show points/NAME/report.h5 --html FILE</code>. Error bars: the order band "
                  "(min to max over the --orders runs).</p>\n");
    pp_sweep_group groups[64];
    int ng = pp_sweep_result_groups(res, groups, 64);
    for (size_t s = 0; s < sizeof charted / sizeof charted[0]; s++) {
        int stat = -1;
        for (int k = 0; k < res->n_stats; k++)
            if (!strcmp(res->stat[k], charted[s]))
                stat = k;
        if (stat < 0)
            continue;
        const pp_statistic *st = pp_statistic_find(charted[s]);
        pp_tb_str(&b, "<h2>");
        pp_tb_html(&b, charted[s]);
        if (st) {
            pp_tb_str(&b, ": ");
            pp_tb_html(&b, st->doc);
        }
        pp_tb_str(&b, "</h2>\n");
        for (int g = 0; g < ng; g++)
            for (int x = 0; x < res->n_keys; x++)
                if (res->keys[x].numeric && res->keys[x].n_values > 1)
                    chart(&b, res, &groups[g], stat, x);
    }
    pp_tb_str(&b, "</body>\n</html>\n");
    return pp_tb_take(&b);
}
