// report_html.c — the HTML report (see report_html.h): header, plain-language verdicts, the
// sortable comparison table with torch's messages, and per tensor the charts that show where the
// error lives: ulp histogram, error along the sequence, heads × sequence blocks, CP ring chunks.
#include "report/report_html.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/atomic_file.h"
#include "core/close.h"
#include "core/repr.h"
#include "core/statistic.h"
#include "report/ranges_html.h"
#include "report/summary_row.h"
#include "report/svg.h"
#include "core/textbuf.h"
#include "ops/op.h"
#include "pipeline/order_band.h"
#include "report/order_verdict.h"

// Chart geometry (pixels): the plot area leaves room for tick labels and axis titles on the left
// and below, and for the legend on the right.
enum { CW = 1000, CH = 280, PAD_L = 70, PAD_T = 14, PAD_B = 44, LEGEND_W = 200 };
// A line chart draws at most this many points per line: longer series are bucketed (max of the
// maxima, mean of the means), which keeps a 128k-token sequence's page small.
enum { MAX_POINTS = 1024 };
// Heat-strip cells with a hover tooltip, at most (per strip).
enum { MAX_TIPS = 4096 };

// ---------------------------------------------------------------------------------------------
// Small helpers

static int variant_index(const pp_run_result *r, const char *name)
{
    for (int v = 0; v < r->n_variants; v++)
        if (!strcmp(r->variants[v].name, name))
            return v;
    return -1;
}

static const char *color_of(const pp_run_result *r, const char *variant)
{
    int v = variant_index(r, variant);
    return v < 0 ? "#777777" : pp_svg_color(v);
}

// A number for a table cell's sort key: finite as %.17g, ±Inf as ±1e999 (parsed as Infinity),
// NaN as -1 (no value sorts first).
static void sort_key(double v, char *buf, size_t n)
{
    if (isnan(v))
        snprintf(buf, n, "-1");
    else if (isinf(v))
        snprintf(buf, n, v > 0 ? "1e999" : "-1e999");
    else
        snprintf(buf, n, "%.17g", v);
}

static void swatch(pp_textbuf *b, const char *color)
{
    pp_tb_printf(b, "<span class=\"sw\" style=\"background:%s\"></span>", color);
}

// The comparisons against the reference of tensor t, in run order, into idx; returns the count.
static int reference_comparisons(const pp_run_result *r, const char *tensor, int *idx)
{
    int n = 0;
    for (int i = 0; i < r->n_comparisons; i++)
        if (!strcmp(r->comparisons[i].against, "reference") && !strcmp(r->comparisons[i].tensor, tensor))
            idx[n++] = i;
    return n;
}

// ---------------------------------------------------------------------------------------------
// Page frame

static const char CSS[] =
    "body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1240px}"
    "h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ccc}"
    "h3{font-size:1em;margin-bottom:4px}"
    "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ddd;padding:3px 6px;"
    "vertical-align:top}th{background:#f3f3f3;cursor:pointer;user-select:none}"
    ".wide{overflow-x:auto}td.n{text-align:right;font-variant-numeric:tabular-nums}"
    "pre{margin:0;font-size:12px;white-space:pre-wrap}td pre{min-width:24em}"
    "dl.hdr{display:grid;grid-template-columns:max-content auto;gap:2px 12px}dl.hdr dt{font-weight:600}"
    "dl.hdr dd{margin:0}"
    ".sw{display:inline-block;width:11px;height:11px;margin-right:6px;border:1px solid #0003}"
    "ul.verdicts li{margin:3px 0}.bad{color:#b00020}.good{color:#1b5e20}"
    "svg{display:block;margin:6px 0 2px 0}svg text{font-size:11px;fill:#333}"
    "svg .frame{fill:none;stroke:#999}svg .grid{stroke:#eee}svg .tick{stroke:#999}"
    "p.cap{font-size:12px;color:#555;margin:0 0 12px 0}"
    ".chart{break-inside:avoid;page-break-inside:avoid}"
    "@media print{body{margin:0;max-width:none}th{cursor:auto}details{display:block}"
    "details>*{display:block}h2{break-after:avoid}}";

// Sorts a table by the clicked column: numerically by data-v where both cells have one, else by
// text; a second click reverses. Written without '&', '<' and '//' so the page stays well-formed
// XML and holds nothing that looks like a URL.
static const char SCRIPT[] =
    "document.querySelectorAll('table.sortable th').forEach(function (th, col) {\n"
    "  th.addEventListener('click', function () {\n"
    "    var tb = th.closest('table').tBodies[0];\n"
    "    var rows = Array.prototype.slice.call(tb.rows);\n"
    "    var dir = th.getAttribute('data-dir') === 'asc' ? -1 : 1;\n"
    "    th.setAttribute('data-dir', dir > 0 ? 'asc' : 'desc');\n"
    "    rows.sort(function (a, b) {\n"
    "      var x = a.cells[col].getAttribute('data-v'), y = b.cells[col].getAttribute('data-v');\n"
    "      if (x !== null) { if (y !== null) { return dir * (parseFloat(x) - parseFloat(y)); } }\n"
    "      return dir * a.cells[col].textContent.localeCompare(b.cells[col].textContent);\n"
    "    });\n"
    "    rows.forEach(function (row) { tb.appendChild(row); });\n"
    "  });\n"
    "});\n";

static void header(pp_textbuf *b, const pp_run_result *r)
{
    pp_tb_str(b, "<h1>precprobe report: ");
    pp_tb_html(b, r->case_name);
    pp_tb_str(b, "</h1>\n<dl class=\"hdr\">\n");
    struct {
        const char *k, *v;
    } rows[] = {{"case", r->case_name}, {"operation", r->op},      {"shapes", r->shapes ? r->shapes : ""},
                {"device", r->device},  {"created", r->created_utc}, {"precprobe", r->precprobe_version}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        pp_tb_printf(b, "<dt>%s</dt><dd>", rows[i].k);
        pp_tb_html(b, rows[i].v);
        pp_tb_str(b, "</dd>\n");
    }
    pp_tb_printf(b, "<dt>seed</dt><dd>%llu</dd>\n", (unsigned long long)r->seed);
    for (int i = 0; i < r->n_references; i++) {
        char bound[PP_REPR_MAX];
        pp_repr_double(r->references[i].error_bound, bound, sizeof bound);
        pp_tb_str(b, "<dt>reference</dt><dd>");
        pp_tb_html(b, r->references[i].tensor);
        pp_tb_str(b, ": ");
        pp_tb_html(b, r->references[i].method);
        pp_tb_printf(b, ", |error| &lt;= %s</dd>\n", bound);
    }
    // every distinct (rtol, atol) the comparisons used
    pp_tb_str(b, "<dt>tolerances</dt><dd>");
    int shown = 0;
    for (int i = 0; i < r->n_comparisons; i++) {
        const pp_close_opts *o = &r->comparisons[i].opts;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = r->comparisons[j].opts.rtol == o->rtol && r->comparisons[j].opts.atol == o->atol;
        if (seen)
            continue;
        char rt[PP_REPR_MAX], at[PP_REPR_MAX];
        pp_repr_double(o->rtol, rt, sizeof rt);
        pp_repr_double(o->atol, at, sizeof at);
        pp_tb_printf(b, "%srtol %s, atol %s", shown++ ? "; " : "", rt, at);
    }
    pp_tb_str(b, shown ? "</dd>\n" : "none</dd>\n");
    if (r->n_comparisons) {
        const pp_close_opts *o = &r->comparisons[0].opts;
        pp_tb_printf(b, "<dt>semantics</dt><dd>torch.testing.assert_close as in torch %d.%d%s</dd>\n", o->torch_major,
                     o->torch_minor,
                     pp_close_uses_common_dtype(o) ? " (computed in the operands' common dtype)"
                                                   : " (computed in float64)");
    }
    pp_tb_str(b, "</dl>\n");
}

// One line per variant: its colour, name and knobs.
static void variants(pp_textbuf *b, const pp_run_result *r)
{
    pp_tb_str(b, "<h2>Variants</h2>\n<ul class=\"verdicts\">\n");
    for (int v = 0; v < r->n_variants; v++) {
        const pp_variant_result *vr = &r->variants[v];
        pp_tb_str(b, "<li>");
        swatch(b, pp_svg_color(v));
        pp_tb_str(b, "<b>");
        pp_tb_html(b, vr->name);
        pp_tb_str(b, "</b>");
        for (int k = 0; k < vr->n_knobs; k++) {
            pp_tb_str(b, k ? ", " : ": ");
            pp_tb_html(b, vr->knobs[k].name);
            pp_tb_str(b, "=");
            pp_tb_html(b, vr->knobs[k].value);
        }
        if (vr->external)
            pp_tb_str(b, " (external: outputs read from files)");
        const char *note = pp_op_vendor_note(pp_op_find(r->op), vr);
        if (note) {
            pp_tb_str(b, " ");
            pp_tb_html(b, note);
        }
        pp_tb_str(b, "</li>\n");
    }
    pp_tb_str(b, "</ul>\n");
}

// The verdict of one comparison in words: "59.0% of c elements not close to the reference at
// rtol 1.3e-06, atol 1e-05 (max 1905 ulp; 12 NaN/Inf)".
static void verdict_line(pp_textbuf *b, const pp_comparison *c)
{
    const pp_close_stats *s = &c->stats;
    char pct[32];
    if (pp_format_percent((double)s->mismatched, (double)s->numel, pct, sizeof pct) < 0)
        snprintf(pct, sizeof pct, "-");
    if (s->mismatched)
        pp_tb_printf(b, "<span class=\"bad\">%s</span> of ", pct);
    else
        pp_tb_printf(b, "<span class=\"good\">all %lld</span> ", (long long)s->numel);
    pp_tb_html(b, c->tensor);
    pp_tb_str(b, s->mismatched ? " elements not close to " : " elements close to ");
    if (!strcmp(c->against, "reference"))
        pp_tb_str(b, "the ");
    pp_tb_html(b, c->against);
    pp_tb_printf(b, " at rtol %g, atol %g", c->opts.rtol, c->opts.atol);
    if (s->ulp_err.index >= 0)
        pp_tb_printf(b, " (max error %.4g ulp", s->ulp_err.value);
    else
        pp_tb_str(b, " (");
    int64_t nonfinite = s->nan_actual + s->inf_actual;
    if (nonfinite)
        pp_tb_printf(b, "%s<span class=\"bad\">%lld NaN/Inf</span>", s->ulp_err.index >= 0 ? "; " : "",
                     (long long)nonfinite);
    pp_tb_str(b, ")");
}

static void verdicts(pp_textbuf *b, const pp_run_result *r)
{
    pp_tb_str(b, "<h2>Verdict</h2>\n<ul class=\"verdicts\">\n");
    for (int v = 0; v < r->n_variants; v++) {
        for (int i = 0; i < r->n_comparisons; i++) {
            const pp_comparison *c = &r->comparisons[i];
            if (strcmp(c->variant, r->variants[v].name))
                continue;
            pp_tb_str(b, "<li>");
            swatch(b, pp_svg_color(v));
            pp_tb_str(b, "<b>");
            pp_tb_html(b, c->variant);
            pp_tb_str(b, "</b>: ");
            verdict_line(b, c);
            pp_tb_str(b, "</li>\n");
        }
    }
    if (r->n_verdicts) {
        int failed = 0;
        for (int i = 0; i < r->n_verdicts; i++)
            failed += !r->verdicts[i].passed;
        pp_tb_printf(b, "<li><b>gate</b>: <span class=\"%s\">%d of %d rules failed</span><ul>\n",
                     failed ? "bad" : "good", failed, r->n_verdicts);
        for (int i = 0; i < r->n_verdicts; i++) {
            pp_tb_printf(b, "<li><span class=\"%s\">%s</span> ", r->verdicts[i].passed ? "good" : "bad",
                         r->verdicts[i].passed ? "PASS" : "FAIL");
            pp_tb_html(b, r->verdicts[i].rule);
            pp_tb_str(b, ": ");
            pp_tb_html(b, r->verdicts[i].detail);
            pp_tb_str(b, "</li>\n");
        }
        pp_tb_str(b, "</ul></li>\n");
    }
    pp_tb_str(b, "</ul>\n");
}

// ---------------------------------------------------------------------------------------------
// The comparison table (the text report's summary, plus torch's message per row)

static void num_cell(pp_textbuf *b, double v, const char *text)
{
    char key[40];
    sort_key(v, key, sizeof key);
    pp_tb_printf(b, "<td class=\"n\" data-v=\"%s\">", key);
    pp_tb_html(b, text);
    pp_tb_str(b, "</td>");
}

static void table(pp_textbuf *b, const pp_run_result *r)
{
    pp_tb_str(b, "<h2>Comparisons</h2>\n<p class=\"cap\">Click a column heading to sort by it.</p>\n"
                 "<div class=\"wide\"><table class=\"sortable\" id=\"comparisons\">\n<thead><tr><th>variant</th><th>tensor</th>"
                 "<th>against</th>");
    // the statistics' headings as the statistic table (core/statistic.h) names them
    static const char *const columns[] = {"mismatch_fraction", "max_abs_diff", "max_rel_diff", "max_ulp", "mean_abs",
                                          "max_abs_error", "max_ulp_at_scale"};
    for (size_t k = 0; k < sizeof columns / sizeof columns[0]; k++)
        pp_tb_printf(b, "<th>%s</th>", pp_statistic_find(columns[k])->label);
    pp_tb_str(b, "<th>NaN/Inf</th><th>torch's message</th></tr></thead>\n<tbody>\n");
    char msg[8192];
    for (int i = 0; i < r->n_comparisons; i++) {
        const pp_comparison *c = &r->comparisons[i];
        const pp_close_stats *s = &c->stats;
        pp_summary_row row = pp_summary_row_of_comparison(c);
        char mean[PP_REPR_MAX];
        double mabs = pp_close_stats_mean_abs(s);
        pp_repr_double(mabs, mean, sizeof mean);
        pp_tb_str(b, "<tr><td>");
        swatch(b, color_of(r, c->variant));
        pp_tb_html(b, c->variant);
        pp_tb_str(b, "</td><td>");
        pp_tb_html(b, c->tensor);
        pp_tb_str(b, "</td><td>");
        pp_tb_html(b, c->against);
        if (pp_against_label(r, c)) {  // which inputs the exact result is on
            pp_tb_str(b, "<br/><small>vs ");
            pp_tb_html(b, pp_against_label(r, c));
            pp_tb_str(b, "</small>");
        }
        pp_tb_str(b, "</td>");
        num_cell(b, row.mismatch.value, row.mismatch.text);
        num_cell(b, row.max_abs.value, row.max_abs.text);
        num_cell(b, row.max_rel.value, row.max_rel.text);
        num_cell(b, row.max_ulp.value, row.max_ulp.text);
        num_cell(b, mabs, mean);
        num_cell(b, row.max_err.value, row.max_err.text);
        num_cell(b, row.ulp_scale.value, row.ulp_scale.text);
        num_cell(b, row.nonfinite.value, row.nonfinite.text);
        pp_tb_str(b, "<td><pre>");
        int m = pp_close_message(&c->stats, &c->opts, c->ndim, c->shape, msg, sizeof msg);
        pp_tb_html(b, m == 1 || m < 0 ? msg : "close");
        pp_tb_str(b, "</pre></td></tr>\n");
    }
    pp_tb_str(b, "</tbody>\n</table></div>\n");
}

// ---------------------------------------------------------------------------------------------
// Charts

static void chart_begin(pp_textbuf *b, const char *title, const char *tensor)
{
    pp_tb_str(b, "<div class=\"chart\">\n<h3>");
    pp_tb_html(b, title);
    pp_tb_str(b, ": ");
    pp_tb_html(b, tensor);
    pp_tb_str(b, "</h3>\n");
}

static void caption_end(pp_textbuf *b, const char *caption)
{
    pp_tb_str(b, "<p class=\"cap\">");
    pp_tb_html(b, caption);
    pp_tb_str(b, "</p>\n</div>\n");
}

// The plot area of a chart CW × height with a legend column on the right.
static pp_chart plot_area(int height)
{
    pp_chart c = {0};
    c.px = PAD_L;
    c.py = PAD_T;
    c.pw = CW - PAD_L - LEGEND_W;
    c.ph = height - PAD_T - PAD_B;
    return c;
}

// A log-scale y range [lo, hi] covering the positive finite values seen (lo/hi start as +Inf/0).
static void log_range(double *lo, double *hi)
{
    if (!(*hi > 0) || !isfinite(*lo)) {
        *lo = 1e-8;
        *hi = 1.0;
        return;
    }
    *lo = pow(10.0, floor(log10(*lo)));
    *hi = pow(10.0, ceil(log10(*hi)));
    if (*hi <= *lo)
        *hi = *lo * 10;
}

static void legend_of(pp_textbuf *b, const pp_run_result *r, const int *idx, int n, double x, double y)
{
    const char *names[64], *colors[64];
    int k = 0;
    for (int i = 0; i < n && k < 64; i++) {
        names[k] = r->comparisons[idx[i]].variant;
        colors[k++] = color_of(r, r->comparisons[idx[i]].variant);
    }
    pp_svg_legend(b, x, y, names, colors, k);
}

// The ulp-error histogram of every variant against the reference, side by side per bin; counts
// on a log scale, only the bins that some variant fills (in bin order), so a lone NaN/Inf bin
// does not stretch the axis over twenty empty ones.
static void ulp_histogram(pp_textbuf *b, const pp_run_result *r, const char *tensor, const int *idx, int n)
{
    int bins[PP_CLOSE_ULP_BINS], nb = 0;
    double top = 1;
    for (int k = 0; k < PP_CLOSE_ULP_BINS; k++) {
        int used = 0;
        for (int i = 0; i < n; i++) {
            int64_t cnt = r->comparisons[idx[i]].stats.ulp_hist[k];
            if (cnt > 0) {
                used = 1;
                top = (double)cnt > top ? (double)cnt : top;
            }
        }
        if (used)
            bins[nb++] = k;
    }
    if (!nb)
        return;
    chart_begin(b, "ulp error histogram", tensor);
    pp_svg_begin(b, CW, CH, "ulp error histogram");
    pp_chart c = plot_area(CH);
    c.ylog = 1;
    c.ymin = 0.5;  // a bin holding one pair still shows as a bar
    c.ymax = pow(10.0, ceil(log10(top * 1.01)));
    c.xmin = 0;
    c.xmax = nb;
    pp_svg_axes(b, &c, 0, "|actual - expected| / ulp(expected), in ulps", "pairs (log scale)");
    double slot = c.pw / nb, bw = slot * 0.8 / n;
    for (int j = 0; j < nb; j++) {
        int k = bins[j];
        char label[24], tip[PP_NAME_MAX + 64];
        if (k == PP_CLOSE_BIN_EQUAL)
            snprintf(label, sizeof label, "0");
        else if (k == PP_CLOSE_BIN_HUGE)
            snprintf(label, sizeof label, ">2^20");
        else if (k == PP_CLOSE_BIN_NONFINITE)
            snprintf(label, sizeof label, "NaN/Inf");
        else if (k == 1)
            snprintf(label, sizeof label, "\xe2\x89\xa4" "0.5");
        else if (k - 2 < 10)
            snprintf(label, sizeof label, "\xe2\x89\xa4%ld", 1L << (k - 2));
        else
            snprintf(label, sizeof label, "\xe2\x89\xa4" "2^%d", k - 2);
        double x0 = c.px + slot * j;
        // every label when they fit (about 40 px each), else every step-th, and always the last
        int step = slot >= 40 ? 1 : (int)ceil(40 / slot);
        if ((j % step == 0 && nb - 1 - j >= step) || j == nb - 1)
            pp_svg_text(b, x0 + slot / 2, c.py + c.ph + 14, "middle", label);
        for (int i = 0; i < n; i++) {
            int64_t cnt = r->comparisons[idx[i]].stats.ulp_hist[k];
            if (cnt <= 0)
                continue;
            double y = pp_chart_y(&c, (double)cnt);
            snprintf(tip, sizeof tip, "%s: %lld pairs", r->comparisons[idx[i]].variant, (long long)cnt);
            pp_svg_rect(b, x0 + slot * 0.1 + bw * i, y, bw, c.py + c.ph - y, color_of(r, r->comparisons[idx[i]].variant),
                        tip);
        }
    }
    legend_of(b, r, idx, n, CW - LEGEND_W + 16, PAD_T);
    pp_svg_end(b);
    caption_end(b, "Pairs per ulp-error bin, only the bins some variant fills (0: equal; NaN/Inf: a NaN operand "
                   "or unequal infinities). Bars further right are worse.");
}

// A line chart: n lines, line i through (x[i][k], y[i][k]) for k < len[i], in colors[i], dashed
// where dashed[i]; the first n_names lines' colours and names make the legend. ylog: log10 y axis
// (values <= 0 on the bottom edge), else linear over the finite values. Used by the per-position
// chart and by the per-step series charts.
static void line_chart(pp_textbuf *b, const char *title, const char *xlabel, const char *ylabel, int ylog, int n,
                       const double *const *x, const double *const *y, const int *len, const char *const *colors,
                       const int *dashed, const char *const *names, int n_names)
{
    double lo = INFINITY, hi = ylog ? 0 : -INFINITY, xmin = INFINITY, xmax = -INFINITY;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < len[i]; k++) {
            if (isfinite(y[i][k]) && (!ylog || y[i][k] > 0)) {
                lo = y[i][k] < lo ? y[i][k] : lo;
                hi = y[i][k] > hi ? y[i][k] : hi;
            }
            xmin = x[i][k] < xmin ? x[i][k] : xmin;
            xmax = x[i][k] > xmax ? x[i][k] : xmax;
        }
    if (ylog) {
        log_range(&lo, &hi);
    } else if (!(hi >= lo)) {
        lo = 0;
        hi = 1;
    } else {
        double pad = hi > lo ? (hi - lo) * 0.05 : fabs(hi) * 0.05 + 1e-300;
        lo -= pad;
        hi += pad;
    }
    pp_svg_begin(b, CW, CH, title);
    pp_chart c = plot_area(CH);
    c.ylog = ylog;
    c.ymin = lo;
    c.ymax = hi;
    c.xmin = isfinite(xmin) ? xmin : 0;
    c.xmax = xmax > c.xmin ? xmax : c.xmin + 1;
    pp_svg_axes(b, &c, 1, xlabel, ylabel);
    for (int i = 0; i < n; i++)
        pp_svg_polyline(b, &c, x[i], y[i], len[i], colors[i], dashed[i]);
    const char *lc[64];
    int nl = n_names < 64 ? n_names : 64;
    for (int i = 0; i < nl; i++)
        lc[i] = colors[i];
    pp_svg_legend(b, CW - LEGEND_W + 16, PAD_T, names, lc, nl);
    pp_svg_end(b);
}

// Error along the sequence: max (solid) and mean (dashed) |error| per position, every variant
// on the same axes. Long sequences are bucketed to MAX_POINTS points.
static void by_position(pp_textbuf *b, const pp_run_result *r, const char *tensor, const int *idx, int n)
{
    double *xs[64], *ys[64];
    const double *cx[64], *cy[64];
    int len[64], dashed[64], m = 0;
    const char *colors[64], *names[64];
    int n_names = 0, ok = 1;
    for (int i = 0; i < n && m + 2 <= 64; i++) {
        const pp_axis_stats *a = &r->comparisons[idx[i]].axes;
        if (a->n_pos <= 0)
            continue;
        int64_t P = a->n_pos, per = (P + MAX_POINTS - 1) / MAX_POINTS, np = (P + per - 1) / per;
        for (int line = 0; line < 2; line++) {
            xs[m] = malloc(sizeof(double) * (size_t)np);
            ys[m] = malloc(sizeof(double) * (size_t)np);
            if (!xs[m] || !ys[m]) {
                free(xs[m]);
                free(ys[m]);
                ok = 0;
                break;
            }
            for (int64_t k = 0; k < np; k++) {
                int64_t p0 = k * per, p1 = p0 + per < P ? p0 + per : P;
                double acc = line ? 0.0 : -INFINITY;
                int64_t cnt = 0;
                for (int64_t p = p0; p < p1; p++) {
                    double v = line ? a->pos_mean[p] : a->pos_max[p];
                    if (line) {
                        if (!isnan(v)) {
                            acc += v;
                            cnt++;
                        }
                    } else if (v > acc || isnan(v)) {
                        acc = isnan(v) ? INFINITY : v;
                    }
                }
                xs[m][k] = (double)p0;
                ys[m][k] = line ? (cnt ? acc / (double)cnt : NAN) : acc;
            }
            cx[m] = xs[m];
            cy[m] = ys[m];
            len[m] = (int)np;
            dashed[m] = line;
            colors[m] = color_of(r, r->comparisons[idx[i]].variant);
            m++;
        }
        if (!ok)
            break;
        names[n_names++] = r->comparisons[idx[i]].variant;
    }
    if (ok && m) {
        chart_begin(b, "|error| along the sequence position", tensor);
        double const *ox[64], *oy[64];
        int olen[64], odash[64];
        const char *ocol[64];
        // solid (max) lines first, in variant order, then the dashed (mean) lines: the legend
        // reads the first n_names colours
        int k = 0;
        for (int pass = 0; pass < 2; pass++)
            for (int i = pass; i < m; i += 2) {
                ox[k] = cx[i];
                oy[k] = cy[i];
                olen[k] = len[i];
                odash[k] = dashed[i];
                ocol[k++] = colors[i];
            }
        line_chart(b, "|error| along the sequence position", "position", "|actual - reference| (log)", 1, m, ox, oy,
                   olen, ocol, odash, names, n_names);
        caption_end(b, "Solid: max |error| at each position (over the other axes); dashed: mean |error| over the "
                       "finite pairs. Zero errors sit on the bottom edge, NaN/Inf on the top edge.");
    }
    for (int i = 0; i < m; i++) {
        free(xs[i]);
        free(ys[i]);
    }
}

// Heads × sequence blocks: one strip per variant, colour = log10 of the max |error| in the cell
// on one scale shared by all strips of the tensor (black: NaN/Inf).
static void head_strips(pp_textbuf *b, const pp_run_result *r, const char *tensor, const int *idx, int n)
{
    double lo = INFINITY, hi = 0;
    int any = 0;
    for (int i = 0; i < n; i++) {
        const pp_axis_stats *a = &r->comparisons[idx[i]].axes;
        any |= a->n_pos > 0;
        for (int64_t k = 0; k < a->n_heads * a->n_blocks; k++) {
            double v = a->head_block_max[k];
            if (v > 0 && isfinite(v)) {
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
            }
        }
    }
    if (!any)
        return;
    log_range(&lo, &hi);
    double llo = log10(lo), lhi = log10(hi);
    chart_begin(b, "max |error| per head and sequence block", tensor);
    for (int i = 0; i < n; i++) {
        const pp_comparison *cmp = &r->comparisons[idx[i]];
        const pp_axis_stats *a = &cmp->axes;
        if (a->n_pos <= 0)
            continue;
        double rowh = a->n_heads > 0 ? 160.0 / (double)a->n_heads : 1;
        rowh = rowh > 16 ? 16 : rowh < 1.5 ? 1.5 : rowh;
        int height = (int)ceil(rowh * (double)a->n_heads) + 40;
        double x0 = PAD_L, w = CW - PAD_L - LEGEND_W, cw = w / (double)a->n_blocks;
        char title[PP_NAME_MAX + 32];
        snprintf(title, sizeof title, "%s: heads x blocks", cmp->variant);
        pp_svg_begin(b, CW, height, title);
        pp_svg_rect(b, 4, 8, 10, 10, color_of(r, cmp->variant), NULL);
        pp_svg_text(b, 18, 17, "start", cmp->variant);
        for (int64_t h = 0; h < a->n_heads; h++)
            for (int64_t k = 0; k < a->n_blocks; k++) {
                double v = a->head_block_max[h * a->n_blocks + k], t;
                char fill[8], tip[96];
                if (!isfinite(v) || isnan(v))
                    t = NAN;
                else
                    t = v > 0 ? (log10(v) - llo) / (lhi - llo) : 0.0;
                pp_svg_ramp(t, fill);
                int64_t p0 = k * a->block, p1 = p0 + a->block < a->n_pos ? p0 + a->block : a->n_pos;
                snprintf(tip, sizeof tip, "head %lld, positions %lld..%lld: %.4g", (long long)h, (long long)p0,
                         (long long)(p1 - 1), v);
                // tooltips cost ~60 bytes a cell: kept for strips up to MAX_TIPS cells, so 64 heads x
                // 256 blocks x 8 variants stays a page of a few MB
                pp_svg_rect(b, x0 + cw * (double)k, 22 + rowh * (double)h, cw + 0.05, rowh + 0.05, fill,
                            a->n_heads * a->n_blocks <= MAX_TIPS ? tip : NULL);
            }
        char lab[64];
        snprintf(lab, sizeof lab, "%lld heads", (long long)a->n_heads);
        pp_svg_text(b, x0 - 4, 22 + rowh * (double)a->n_heads / 2 + 4, "end", lab);
        snprintf(lab, sizeof lab, "position 0 .. %lld (blocks of %lld)", (long long)(a->n_pos - 1),
                 (long long)a->block);
        pp_svg_text(b, x0 + w / 2, height - 4, "middle", lab);
        pp_svg_end(b);
    }
    // the colour scale
    pp_svg_begin(b, CW, 34, "colour scale");
    for (int k = 0; k < 50; k++) {
        char fill[8];
        pp_svg_ramp(k / 49.0, fill);
        pp_svg_rect(b, PAD_L + k * 6.0, 4, 6.05, 12, fill, NULL);
    }
    pp_svg_rect(b, PAD_L + 310, 4, 12, 12, "#000000", NULL);
    char lab[64];
    snprintf(lab, sizeof lab, "%.2g (or 0)", lo);
    pp_svg_text(b, PAD_L, 30, "start", lab);
    snprintf(lab, sizeof lab, "%.2g", hi);
    pp_svg_text(b, PAD_L + 300, 30, "end", lab);
    pp_svg_text(b, PAD_L + 326, 14, "start", "NaN/Inf");
    pp_svg_end(b);
    caption_end(b, "Each row a head, each column a block of positions; darker is a larger max |error| "
                   "(log scale, shared by the strips above).");
}

// The number of chunks the sequence of variant's outputs is cut into (pp_seq_chunking), 0 when
// it is not cut.
static int n_chunks(const pp_run_result *r, const pp_seq_chunking *ch, const char *variant)
{
    int v = variant_index(r, variant);
    return v < 0 ? 0 : ch->n_chunks(r->variants[v].knobs, r->variants[v].n_knobs);
}

// The max |error| per chunk of the sequence for variants that cut it (the operation's chunk map,
// e.g. attention's context-parallel ring chunks, each held by a rank): chunk = position / (s / n).
static void seq_chunks(pp_textbuf *b, const pp_run_result *r, const char *tensor, const int *idx, int n)
{
    const pp_seq_chunking *ch = pp_op_chunking(r->op);
    if (!ch)
        return;
    int sel[64], ns = 0, max_chunks = 0;
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < n && ns < 64; i++) {
        const pp_comparison *c = &r->comparisons[idx[i]];
        int chunks = n_chunks(r, ch, c->variant);
        if (chunks > 1 && c->axes.n_pos >= chunks) {
            sel[ns++] = idx[i];
            max_chunks = chunks > max_chunks ? chunks : max_chunks;
            for (int64_t p = 0; p < c->axes.n_pos; p++) {
                double v = c->axes.pos_max[p];
                if (v > 0 && isfinite(v)) {
                    lo = v < lo ? v : lo;
                    hi = v > hi ? v : hi;
                }
            }
        }
    }
    if (!ns)
        return;
    log_range(&lo, &hi);
    chart_begin(b, ch->title, tensor);
    pp_svg_begin(b, CW, CH, ch->svg_title);
    pp_chart c = plot_area(CH);
    c.ylog = 1;
    c.ymin = lo;
    c.ymax = hi;
    c.xmin = 0;
    c.xmax = max_chunks;
    pp_svg_axes(b, &c, 0, ch->x_label, "max |error| (log)");
    double slot = c.pw / max_chunks, bw = slot * 0.8 / ns;
    for (int k = 0; k < max_chunks; k++) {
        char lab[32];
        snprintf(lab, sizeof lab, "%d", k);
        pp_svg_text(b, c.px + slot * (k + 0.5), c.py + c.ph + 14, "middle", lab);
    }
    for (int i = 0; i < ns; i++) {
        const pp_comparison *cmp = &r->comparisons[sel[i]];
        int chunks = n_chunks(r, ch, cmp->variant);
        int64_t P = cmp->axes.n_pos, len = P / chunks;
        for (int k = 0; k < chunks; k++) {
            double m = 0;
            for (int64_t p = k * len; p < (k == chunks - 1 ? P : (k + 1) * len); p++)
                if (cmp->axes.pos_max[p] > m || isnan(cmp->axes.pos_max[p]))
                    m = isnan(cmp->axes.pos_max[p]) ? INFINITY : cmp->axes.pos_max[p];
            char tip[PP_NAME_MAX + 96];
            snprintf(tip, sizeof tip, "%s: chunk %d (%s %d): %.4g", cmp->variant, k, ch->owner, ch->owner_of(k, chunks),
                     m);
            double y = pp_chart_y(&c, m);
            pp_svg_rect(b, c.px + slot * (k + 0.1) + bw * i, y, bw, c.py + c.ph - y, color_of(r, cmp->variant), tip);
        }
    }
    legend_of(b, r, sel, ns, CW - LEGEND_W + 16, PAD_T);
    pp_svg_end(b);
    caption_end(b, ch->caption);
}

// ---- AdamW: per-step series ------------------------------------------------------------------
// "θ error vs step" and "loss vs step": one chart per series name, every variant that has a
// series of that name on it in the variant's colour, with a legend. series_chart draws one;
// series_charts finds them in pp_variant_result.series (stored as /variants/<v>/series/<name>).
static void series_chart(pp_textbuf *b, const char *series_name, int n, const char *const *variants,
                         const char *const *colors, const double *const *step, const double *const *value,
                         const int *len, int ylog)
{
    int dashed[64] = {0};
    n = n < 64 ? n : 64;
    chart_begin(b, "per optimizer step", series_name);
    line_chart(b, series_name, "step", series_name, ylog, n, step, value, len, colors, dashed, variants, n);
    caption_end(b, "Each variant's series after every step, on shared axes.");
}

static void series_charts(pp_textbuf *b, const pp_run_result *r)
{
    for (int v = 0; v < r->n_variants; v++)
        for (int s = 0; s < r->variants[v].n_series; s++) {
            const char *name = r->variants[v].series[s].name;
            int seen = 0;  // each name once, at the first variant that has it
            for (int u = 0; u < v && !seen; u++)
                for (int t = 0; t < r->variants[u].n_series && !seen; t++)
                    seen = !strcmp(r->variants[u].series[t].name, name);
            for (int t = 0; t < s && !seen; t++)
                seen = !strcmp(r->variants[v].series[t].name, name);
            if (seen)
                continue;
            const char *variants[64], *colors[64];
            const double *step[64], *value[64];
            int len[64], k = 0;
            for (int u = v; u < r->n_variants && k < 64; u++)
                for (int t = 0; t < r->variants[u].n_series; t++) {
                    const pp_series *ser = &r->variants[u].series[t];
                    if (strcmp(ser->name, name) || ser->length < 1)
                        continue;
                    variants[k] = r->variants[u].name;
                    colors[k] = color_of(r, r->variants[u].name);
                    step[k] = ser->step;
                    value[k] = ser->value;
                    len[k] = ser->length > INT32_MAX ? INT32_MAX : (int)ser->length;
                    k++;
                    break;
                }
            if (k)  // errors on a log axis, losses linear
                series_chart(b, name, k, variants, colors, step, value, len, strstr(name, "error") != NULL);
        }
}

static void charts(pp_textbuf *b, const pp_run_result *r)
{
    int *idx = malloc(sizeof(int) * (size_t)(r->n_comparisons + 1));
    if (!idx) {
        b->oom = 1;
        return;
    }
    for (int i = 0; i < r->n_comparisons; i++) {
        const char *t = r->comparisons[i].tensor;
        if (strcmp(r->comparisons[i].against, "reference"))
            continue;
        int first = 1;  // each tensor once, at its first comparison against the reference
        for (int j = 0; j < i && first; j++)
            first = strcmp(r->comparisons[j].against, "reference") || strcmp(r->comparisons[j].tensor, t);
        if (!first)
            continue;
        int n = reference_comparisons(r, t, idx);
        if (n > 64)
            n = 64;  // the legend's limit; a case with more variants shows the first 64
        pp_tb_str(b, "<h2>Where the error lives: ");
        pp_tb_html(b, t);
        pp_tb_str(b, " against the reference</h2>\n");
        ulp_histogram(b, r, t, idx, n);
        int axes = 0;
        for (int k = 0; k < n; k++)
            axes |= r->comparisons[idx[k]].axes.n_pos > 0;
        if (!axes)
            pp_tb_str(b, "<p class=\"cap\">No error per position or head for this tensor: the operation declares "
                         "no such axes for it, or the report predates them.</p>\n");
        by_position(b, r, t, idx, n);
        head_strips(b, r, t, idx, n);
        seq_chunks(b, r, t, idx, n);
    }
    free(idx);
    series_charts(b, r);
}

// ---------------------------------------------------------------------------------------------
// The page

// ---------------------------------------------------------------------------------------------
// The order band (--orders): every banded comparison's mismatch as a bar, the band over the
// admissible orders as an error bar from its min to its max (the nominal run is the bar's end).

// The verdict beside the error bars, in words: per pair of banded comparisons of one tensor
// against the same expected tensor, which variant is closer in each statistic and whether under
// every order (report/order_verdict.h, the text report's lines).
static void order_verdict_item(void *ctx, int k, const pp_comparison *x, const pp_comparison *y)
{
    pp_textbuf *b = ctx;
    if (!k)
        pp_tb_str(b, "<h3>Verdict under every order</h3>\n<p>Per pair of variants compared with the same "
                     "tensor, each statistic (lower is closer): which variant is closer, and whether it "
                     "stays closer under every admissible order (the error bars do not overlap).</p>\n"
                     "<ul class=\"order-verdict\">\n");
    pp_textbuf line = {0};
    pp_order_verdict_line(&line, x, y);
    char *t = pp_tb_take(&line);
    pp_tb_str(b, "<li>");
    pp_tb_html(b, t ? t : "");
    pp_tb_str(b, "</li>\n");
    free(t);
}

static void order_verdict_list(pp_textbuf *b, const pp_run_result *r)
{
    if (pp_order_verdict_each(r, order_verdict_item, b))
        pp_tb_str(b, "</ul>\n");
}

static void order_band_chart(pp_textbuf *b, const pp_run_result *r)
{
    int k = -1;
    for (int i = 0; i < pp_statistic_count(); i++)
        if (!strcmp(pp_statistic_at(i)->name, "mismatch_fraction"))
            k = i;
    int n = 0;
    for (int i = 0; i < r->n_comparisons; i++)
        n += r->comparisons[i].band_runs > 0 && k >= 0 && k < r->comparisons[i].n_band_stats;
    if (!n)
        return;
    enum { ROW = 22, LABEL_W = 420, TOP = 8, AXIS_H = 40 };
    int height = TOP + ROW * n + AXIS_H;
    pp_tb_str(b, "<h2>Order band</h2>\n<div class=\"chart\">\n<h3>mismatch under every admissible order</h3>\n");
    pp_svg_begin(b, CW, height, "mismatch per comparison with its order band");
    pp_chart c = {0};
    c.px = LABEL_W;
    c.py = TOP;
    c.pw = CW - LABEL_W - 24;
    c.ph = ROW * n;
    c.xmin = 0.0;
    c.xmax = 1.0;
    c.ymin = 0.0;
    c.ymax = 1.0;
    int row = 0, runs = 0;
    char lab[3 * PP_NAME_MAX + 16], tip[3 * PP_NAME_MAX + 96];
    for (int i = 0; i < r->n_comparisons; i++) {
        const pp_comparison *cmp = &r->comparisons[i];
        if (!(cmp->band_runs > 0 && k < cmp->n_band_stats))
            continue;
        runs = cmp->band_runs;
        const double *band = cmp->band[k];
        double nominal = pp_statistic_at(k)->value(&cmp->stats), y = TOP + ROW * row + 4;
        snprintf(lab, sizeof lab, "%s: %s vs %s", cmp->variant, cmp->tensor, cmp->against);
        pp_svg_text(b, LABEL_W - 6, y + 11, "end", lab);
        snprintf(tip, sizeof tip, "%s: %.4g%% (%.4g%%..%.4g%% over %d orders)", lab, 100 * nominal, 100 * band[0],
                 100 * band[2], cmp->band_runs);
        double x0 = pp_chart_x(&c, 0.0), x1 = pp_chart_x(&c, nominal);
        pp_svg_rect(b, x0, y, x1 - x0, ROW - 8, color_of(r, cmp->variant), tip);
        double lo = pp_chart_x(&c, band[0]), hi = pp_chart_x(&c, band[2]), mid = y + (ROW - 8) / 2.0;
        pp_svg_rect(b, lo, mid - 0.75, hi - lo > 0.5 ? hi - lo : 0.5, 1.5, "#000000", tip);  // the bar
        pp_svg_rect(b, lo - 0.75, y - 1, 1.5, ROW - 6, "#000000", NULL);                     // its caps
        pp_svg_rect(b, hi - 0.75, y - 1, 1.5, ROW - 6, "#000000", NULL);
        row++;
    }
    for (int t = 0; t <= 4; t++) {
        char pct[16];
        snprintf(pct, sizeof pct, "%d%%", 25 * t);
        double x = pp_chart_x(&c, t / 4.0);
        pp_svg_rect(b, x - 0.25, TOP, 0.5, ROW * n, "#cccccc", NULL);
        pp_svg_text(b, x, TOP + ROW * n + 16, "middle", pct);
    }
    pp_svg_text(b, LABEL_W + c.pw / 2, height - 6, "middle", "mismatched elements (torch's isclose)");
    pp_svg_end(b);
    char cap[200];
    snprintf(cap, sizeof cap,
             "Bars: the nominal run; black error bars: min to max over %d runs (the nominal and each admissible "
             "order, kernels/attention.h \"Order band\"). Hover a bar for its figures.", runs);
    caption_end(b, cap);
    order_verdict_list(b, r);
}

char *pp_report_html(const pp_run_result *r)
{
    pp_textbuf b = {0};
    pp_tb_str(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>precprobe: ");
    pp_tb_html(&b, r->case_name);
    pp_tb_str(&b, "</title>\n<style>");
    pp_tb_str(&b, CSS);
    pp_tb_str(&b, "</style>\n</head>\n<body>\n");
    header(&b, r);
    verdicts(&b, r);
    variants(&b, r);
    table(&b, r);
    order_band_chart(&b, r);
    charts(&b, r);
    pp_report_ranges_html(&b, r);
    if (r->case_text && r->case_text[0]) {
        pp_tb_str(&b, "<h2>Case file</h2>\n<details><summary>show</summary><pre>");
        pp_tb_html(&b, r->case_text);
        pp_tb_str(&b, "</pre></details>\n");
    }
    pp_tb_str(&b, "<script>\n");
    pp_tb_str(&b, SCRIPT);
    pp_tb_str(&b, "</script>\n</body>\n</html>\n");
    if (b.oom) {
        pp_tb_free(&b);
        return NULL;
    }
    return b.s;
}

int pp_report_html_write(const char *path, const pp_run_result *r, pp_error *err)
{
    char *page = pp_report_html(r);
    if (!page)
        return pp_fail(err, PP_ERR_RUNTIME, "%s: out of memory building the report", path);
    int rc = pp_atomic_write_text(path, page, err);
    free(page);
    return rc;
}
