// explain_html.c — explain's bar charts (explain_html.h): one horizontal bar per site, its share
// of the squared RMS error, the interaction as the last bar; a bar's tooltip holds its figures.
#include "report/explain_html.h"

#include <math.h>
#include <stdio.h>

#include "report/svg.h"

enum { ROW = 22, LABEL_W = 160, TOP = 8, AXIS_H = 44, RIGHT = 24 };

static void bar(pp_textbuf *b, const pp_chart *c, int row, double share, const char *color, const char *tip)
{
    double x0 = pp_chart_x(c, 0.0), x1 = pp_chart_x(c, share);
    double y = c->py + ROW * row + 4;
    pp_svg_rect(b, x1 < x0 ? x1 : x0, y, fabs(x1 - x0), ROW - 8, color, tip);
}

static void chart(pp_textbuf *b, const char *variant, const pp_explain_table *t, int width)
{
    int n = t->n_sites + 1;  // the sites, then the interaction
    double lo = 0.0, hi = 1.0;
    for (int s = 0; s < t->n_sites; s++)
        if (isfinite(t->sites[s].share))
            lo = fmin(lo, t->sites[s].share), hi = fmax(hi, t->sites[s].share);
    if (isfinite(t->interaction))
        lo = fmin(lo, t->interaction), hi = fmax(hi, t->interaction);
    pp_tb_str(b, "<div class=\"chart\">\n<h3>");
    pp_tb_html(b, variant);
    pp_tb_str(b, ": ");
    pp_tb_html(b, t->tensor);
    pp_tb_str(b, " vs ");
    pp_tb_html(b, t->against);
    pp_tb_str(b, "</h3>\n");
    pp_svg_begin(b, width, TOP + ROW * n + AXIS_H, "share of the error per rounding site");
    pp_chart c = {0};
    c.px = LABEL_W;
    c.py = TOP;
    c.pw = width - LABEL_W - RIGHT;
    c.ph = ROW * n;
    c.xmin = lo;
    c.xmax = hi;
    c.ymin = 0.0;
    c.ymax = 1.0;
    char tip[512];
    for (int s = 0; s < t->n_sites; s++) {
        const pp_explain_site *x = &t->sites[s];
        char pc[32];
        snprintf(tip, sizeof tip,
                 "%s exact: share %s, mismatch %.4g%% (as is %.4g%%), max error %.4g (%.4g), rms %.4g (%.4g), "
                 "max ulp %.4g (%.4g), NaN/Inf %lld (%lld); alone: rms %.4g",
                 x->name, pp_explain_percent(pc, sizeof pc, x->share), x->exact.mismatch_fraction * 100.0, t->nominal.mismatch_fraction * 100.0,
                 x->exact.max_abs_error, t->nominal.max_abs_error, x->exact.rms, t->nominal.rms, x->exact.max_ulp,
                 t->nominal.max_ulp, (long long)x->exact.nonfinite, (long long)t->nominal.nonfinite, x->alone.rms);
        if (isfinite(x->share))
            bar(b, &c, s, x->share, pp_svg_color(s), tip);
        char label[PP_EXPLAIN_NAME_MAX + 48];
        long long removed = (long long)(t->nominal.nonfinite - x->exact.nonfinite);
        if (removed > 0)
            snprintf(label, sizeof label, "%s (−%lld NaN/Inf)", x->name, removed);
        else
            snprintf(label, sizeof label, "%s", x->name);
        pp_svg_text(b, LABEL_W - 6, c.py + ROW * s + ROW * 0.7, "end", label);
    }
    if (isfinite(t->interaction)) {
        char pc[32];
        snprintf(tip, sizeof tip, "interaction: %s (1 − the shares' sum)",
                 pp_explain_percent(pc, sizeof pc, t->interaction));
        bar(b, &c, t->n_sites, t->interaction, "#888888", tip);
    }
    pp_svg_text(b, LABEL_W - 6, c.py + ROW * t->n_sites + ROW * 0.7, "end", "interaction");
    // the share axis: a grid line and label every 25 %, the zero line darker (the rows are
    // categories: no y axis)
    for (double g = ceil(lo * 4.0) / 4.0; g <= hi + 1e-12; g += 0.25) {
        double x = pp_chart_x(&c, g);
        char lab[32];
        snprintf(lab, sizeof lab, "%.0f%%", g * 100.0);
        pp_svg_rect(b, x - 0.25, TOP, 0.5, ROW * n, g == 0.0 ? "#555555" : "#cccccc", NULL);
        pp_svg_text(b, x, TOP + ROW * n + 16, "middle", lab);
    }
    pp_svg_text(b, LABEL_W + c.pw / 2, TOP + ROW * n + AXIS_H - 6, "middle",
                "share of the squared RMS error removed by making the site exact");
    pp_svg_end(b);
    pp_tb_str(b, "<p class=\"cap\">Each bar: the fraction of the error (squared RMS, as is minus every site exact) "
                 "that making this one site exact removes; the grey bar, what one-at-a-time exactness leaves "
                 "unexplained. Hover a bar for its statistics.</p>\n</div>\n");
}

void pp_report_explain_html(pp_textbuf *b, const pp_run_result *r, int width)
{
    int any = 0;
    for (int v = 0; v < r->n_variants; v++)
        any |= r->variants[v].n_explain > 0;
    if (!any)
        return;
    pp_tb_str(b, "<h2>Where the error comes from</h2>\n");
    for (int v = 0; v < r->n_variants; v++)
        for (int k = 0; k < r->variants[v].n_explain; k++)
            chart(b, r->variants[v].name, &r->variants[v].explain[k], width);
}
