// ranges_html.c — the range diagnostics' heat strips (see ranges_html.h).
#include "report/ranges_html.h"

#include <stdio.h>
#include <string.h>

#include "report/svg.h"

enum {
    STRIP_W = 900,   // the strip's width in pixels
    LABEL_W = 200,   // the site names' column
    ROW_H = 14,      // one site
    TOP = 24,        // the variant's name above the rows
    MAX_TIPS = 4096  // cells with a tooltip at most (a tooltip costs ~100 bytes)
};

// What a cell says, as its colour: overflow red (an Inf passed on from before the site: pink),
// NaN black, underflow orange, else the headroom on the white-to-blue ramp; grey when nothing
// was noted there.
static void cell_fill(const pp_range_cell *c, char fill[8])
{
    if (c->overflow)
        snprintf(fill, 8, "#d62728");
    else if (c->inf)
        snprintf(fill, 8, "#f4a3a3");
    else if (c->nan)
        snprintf(fill, 8, "#000000");
    else if (c->underflow)
        snprintf(fill, 8, "#ff7f0e");
    else if (!c->count)
        snprintf(fill, 8, "#e8e8e8");
    else
        pp_svg_ramp((double)c->near_max / (double)c->count, fill);
}

static void strip(pp_textbuf *b, const pp_variant_result *vr)
{
    const pp_variant_ranges *g = &vr->ranges;
    int64_t heads = 1;
    for (int i = 0; i < g->n_rows; i++)
        heads = g->rows[i].heads > heads ? g->rows[i].heads : heads;
    int height = TOP + ROW_H * g->n_rows + 22;
    double cw = (double)(STRIP_W - LABEL_W - 10) / (double)heads;
    char title[PP_NAME_MAX + 32];
    snprintf(title, sizeof title, "%s: sites x heads", vr->name);
    pp_svg_begin(b, STRIP_W, height, title);
    pp_svg_text(b, 4, 16, "start", vr->name);
    for (int i = 0; i < g->n_rows; i++) {
        const pp_range_row *row = &g->rows[i];
        double y = TOP + ROW_H * (double)i;
        char lab[PP_RANGE_NAME_MAX * 2 + 4];
        snprintf(lab, sizeof lab, "%s (%s)", row->site, row->format);
        pp_svg_text(b, LABEL_W - 4, y + ROW_H - 3, "end", lab);
        for (int64_t h = 0; h < row->heads; h++) {
            const pp_range_cell *c = &row->cells[h];
            char fill[8], tip[256];
            cell_fill(c, fill);
            snprintf(tip, sizeof tip,
                     "%s, %s %lld: %lld values; overflow %lld, Inf %lld, NaN %lld, underflow %lld, subnormal %lld, "
                     "headroom %.2f%%, amax %.6g, clamped %lld",
                     row->site, row->axis, (long long)h, (long long)c->count, (long long)c->overflow,
                     (long long)c->inf, (long long)c->nan, (long long)c->underflow, (long long)c->subnormal,
                     c->count ? 100.0 * (double)c->near_max / (double)c->count : 0.0, c->amax, (long long)c->clamped);
            pp_svg_rect(b, LABEL_W + cw * (double)h, y + 1, cw - (cw > 3 ? 1 : 0) + 0.05, ROW_H - 2, fill,
                        (int64_t)g->n_rows * heads <= MAX_TIPS ? tip : NULL);
        }
    }
    char lab[96];
    snprintf(lab, sizeof lab, "%lld %s%s (0 .. %lld)", (long long)heads,
             g->n_rows ? (!strcmp(g->rows[0].axis, "kv_head") ? "kv head" : g->rows[0].axis) : "head",
             heads == 1 ? "" : "s", (long long)(heads - 1));
    pp_svg_text(b, LABEL_W + (STRIP_W - LABEL_W) / 2.0, height - 6, "middle", lab);
    pp_svg_end(b);
}

static void legend(pp_textbuf *b)
{
    static const char *const names[] = {"overflow to ±Inf", "±Inf passed on", "NaN", "underflow (non-zero to 0)",
                                        "nothing noted"};
    static const char *const colors[] = {"#d62728", "#f4a3a3", "#000000", "#ff7f0e", "#e8e8e8"};
    pp_svg_begin(b, STRIP_W, 80, "colour key");
    pp_svg_legend(b, 4, 6, names, colors, 5);
    for (int k = 0; k < 50; k++) {
        char fill[8];
        pp_svg_ramp(k / 49.0, fill);
        pp_svg_rect(b, 300 + k * 4.0, 8, 4.05, 12, fill, NULL);
    }
    pp_svg_text(b, 300, 34, "start", "headroom 0%");
    pp_svg_text(b, 500, 34, "end", "100%");
    pp_svg_end(b);
}

void pp_report_ranges_html(pp_textbuf *b, const pp_run_result *r)
{
    int any = 0;
    for (int v = 0; v < r->n_variants; v++)
        any |= r->variants[v].ranges.recorded && r->variants[v].ranges.n_rows > 0;
    if (!any)
        return;
    pp_tb_str(b, "<h2>Range diagnostics</h2>\n<div class=\"chart\">\n<h3>every rounding site, per head</h3>\n");
    for (int v = 0; v < r->n_variants; v++) {
        const pp_variant_result *vr = &r->variants[v];
        if (vr->ranges.recorded && vr->ranges.n_rows > 0)
            strip(b, vr);
        else if (vr->ranges.note[0]) {
            pp_tb_str(b, "<p class=\"cap\">");
            pp_tb_html(b, vr->name);
            pp_tb_str(b, ": no range diagnostics (");
            pp_tb_html(b, vr->ranges.note);
            pp_tb_str(b, ")</p>\n");
        }
    }
    legend(b);
    pp_tb_str(b, "<p class=\"cap\">");
    pp_tb_html(b, "Each row a rounding site (kernels/sites.h) in the format it was stored in, each cell a head "
                  "(or parameter block, or the tensor): red where values overflowed to ±Inf (pink: an Inf that "
                  "came in), black where they "
                  "are NaN, orange where non-zero values were flushed to zero, else darker the more values lie "
                  "within a factor 2 of the format's largest. Hover a cell for its counts; report.txt says the "
                  "findings in words.");
    pp_tb_str(b, "</p>\n</div>\n");
}
