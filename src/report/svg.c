// svg.c — chart primitives as inline SVG text (see svg.h). No xmlns attribute: an <svg> inside
// HTML needs none, and the page must not contain a single URL.
#include "report/svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// Colours

// Ten colours distinguishable in print and by most colour-blind readers (the Tableau 10 hues).
static const char *const PALETTE[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

const char *pp_svg_color(int i)
{
    int n = (int)(sizeof PALETTE / sizeof PALETTE[0]);
    return PALETTE[((i % n) + n) % n];
}

void pp_svg_ramp(double t, char out[8])
{
    if (isnan(t)) {
        snprintf(out, 8, "#000000");
        return;
    }
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    // from #f7fbff (no error) to #08306b (the largest error on the chart)
    int r = (int)lround(0xf7 + t * (0x08 - 0xf7)), g = (int)lround(0xfb + t * (0x30 - 0xfb)),
        bl = (int)lround(0xff + t * (0x6b - 0xff));
    snprintf(out, 8, "#%02x%02x%02x", r & 0xff, g & 0xff, bl & 0xff);
}

// ---------------------------------------------------------------------------------------------
// Frame and mapping

void pp_svg_begin(pp_textbuf *b, int width, int height, const char *title)
{
    pp_tb_printf(b, "<svg width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\"><title>", width, height,
                 width, height);
    pp_tb_html(b, title);
    pp_tb_str(b, "</title>\n");
}

void pp_svg_end(pp_textbuf *b)
{
    pp_tb_str(b, "</svg>\n");
}

// t in [0, 1] across an axis; clamped.
static double frac(double v, double lo, double hi, int log)
{
    if (log) {
        if (!(v > 0))
            return isnan(v) || v <= 0 ? 0.0 : 1.0;
        v = log10(v);
        lo = log10(lo);
        hi = log10(hi);
    }
    if (isinf(v))
        return v > 0 ? 1.0 : 0.0;
    if (isnan(v) || !(hi > lo))
        return 0.0;
    double t = (v - lo) / (hi - lo);
    return t < 0 ? 0 : t > 1 ? 1 : t;
}

double pp_chart_x(const pp_chart *c, double x)
{
    return c->px + frac(x, c->xmin, c->xmax, c->xlog) * c->pw;
}

double pp_chart_y(const pp_chart *c, double y)
{
    return c->py + c->ph - frac(y, c->ymin, c->ymax, c->ylog) * c->ph;
}

// A tick label: integers plainly, powers of ten as 1e-5, others with 3 significant digits.
static void tick_label(double v, int log, char *buf, size_t n)
{
    if (log)
        snprintf(buf, n, "1e%d", (int)lround(log10(v)));
    else if (fabs(v) < 1e15 && v == floor(v))
        snprintf(buf, n, "%.0f", v);
    else
        snprintf(buf, n, "%.3g", v);
}

// Tick values on one axis into t[], at most max of them; returns the count.
static int ticks(double lo, double hi, int log, double *t, int max)
{
    int n = 0;
    if (log) {
        int a = (int)ceil(log10(lo) - 1e-9), z = (int)floor(log10(hi) + 1e-9);
        int step = 1;
        while ((z - a) / step + 1 > max)
            step++;
        for (int k = a; k <= z && n < max; k += step)
            t[n++] = pow(10.0, k);
        return n;
    }
    if (!(hi > lo))
        return 0;
    double raw = (hi - lo) / 5, mag = pow(10.0, floor(log10(raw))), step = mag;
    if (raw / mag > 5)
        step = 10 * mag;
    else if (raw / mag > 2)
        step = 5 * mag;
    else if (raw / mag > 1)
        step = 2 * mag;
    for (double v = ceil(lo / step) * step; v <= hi + step * 1e-9 && n < max; v += step)
        t[n++] = fabs(v) < step * 1e-9 ? 0.0 : v;
    return n;
}

void pp_svg_axes(pp_textbuf *b, const pp_chart *c, int xticks, const char *xlabel, const char *ylabel)
{
    pp_tb_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" class=\"frame\"/>\n", c->px, c->py,
                 c->pw, c->ph);
    double t[16];
    char lab[32];
    int n = ticks(c->ymin, c->ymax, c->ylog, t, 8);
    for (int i = 0; i < n; i++) {
        double y = pp_chart_y(c, t[i]);
        pp_tb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>\n", c->px, y,
                     c->px + c->pw, y);
        tick_label(t[i], c->ylog, lab, sizeof lab);
        pp_svg_text(b, c->px - 4, y + 4, "end", lab);
    }
    if (xticks) {
        n = ticks(c->xmin, c->xmax, c->xlog, t, 10);
        for (int i = 0; i < n; i++) {
            double x = pp_chart_x(c, t[i]);
            pp_tb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"tick\"/>\n", x,
                         c->py + c->ph, x, c->py + c->ph + 4);
            tick_label(t[i], c->xlog, lab, sizeof lab);
            pp_svg_text(b, x, c->py + c->ph + 16, "middle", lab);
        }
    }
    if (xlabel)
        pp_svg_text(b, c->px + c->pw / 2, c->py + c->ph + 32, "middle", xlabel);
    if (ylabel) {
        pp_tb_printf(b, "<text x=\"0\" y=\"0\" text-anchor=\"middle\" transform=\"translate(%.1f %.1f) rotate(-90)\">",
                     c->px - 48, c->py + c->ph / 2);
        pp_tb_html(b, ylabel);
        pp_tb_str(b, "</text>\n");
    }
}

// ---------------------------------------------------------------------------------------------
// Marks

void pp_svg_polyline(pp_textbuf *b, const pp_chart *c, const double *x, const double *y, int n, const char *color,
                     int dashed)
{
    int open = 0;
    for (int i = 0; i <= n; i++) {
        int gap = i == n || isnan(y[i]);
        if (gap) {
            if (open)
                pp_tb_str(b, "\"/>\n");
            open = 0;
            continue;
        }
        if (!open)
            pp_tb_printf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"%s points=\"", color,
                         dashed ? " stroke-dasharray=\"4 3\"" : "");
        pp_tb_printf(b, "%s%.1f,%.1f", open ? " " : "", pp_chart_x(c, x[i]), pp_chart_y(c, y[i]));
        open = 1;
    }
}

void pp_svg_rect(pp_textbuf *b, double x, double y, double w, double h, const char *fill, const char *tip)
{
    pp_tb_printf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"", x, y, w < 0 ? 0 : w,
                 h < 0 ? 0 : h, fill);
    if (tip) {
        pp_tb_str(b, "><title>");
        pp_tb_html(b, tip);
        pp_tb_str(b, "</title></rect>\n");
    } else {
        pp_tb_str(b, "/>\n");
    }
}

void pp_svg_text(pp_textbuf *b, double x, double y, const char *anchor, const char *text)
{
    pp_tb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", x, y, anchor);
    pp_tb_html(b, text);
    pp_tb_str(b, "</text>\n");
}

void pp_svg_legend(pp_textbuf *b, double x, double y, const char *const *names, const char *const *colors, int n)
{
    for (int i = 0; i < n; i++) {
        pp_svg_rect(b, x, y + 16 * i, 12, 12, colors[i], NULL);
        pp_svg_text(b, x + 18, y + 16 * i + 10, "start", names[i]);
    }
}
