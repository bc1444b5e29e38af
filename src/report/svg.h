// svg.h — chart primitives as inline SVG text: a plot area mapping data to pixels (linear or
// log10 axes), axes with ticks, bars, polylines, heat cells, a legend. The HTML report composes
// its charts from these; nothing here knows about runs or statistics.
#ifndef PP_SVG_H
#define PP_SVG_H

#include "core/textbuf.h"

// A plot area: data (xmin..xmax, ymin..ymax) drawn into the pixel rectangle (px, py, pw, ph)
// of the enclosing <svg>. A log axis needs min > 0 and maps log10 of the value.
typedef struct pp_chart {
    double px, py, pw, ph;
    double xmin, xmax, ymin, ymax;
    int xlog, ylog;
} pp_chart;

// The fixed colour of the i-th variant, so a variant looks the same in every chart of a page.
const char *pp_svg_color(int i);

// <svg> of width × height pixels with an accessible title; pp_svg_end closes it.
void pp_svg_begin(pp_textbuf *b, int width, int height, const char *title);
void pp_svg_end(pp_textbuf *b);

// Pixel coordinates of a data value; values outside the range (or <= 0 on a log axis, or not
// finite) are clamped to the nearest edge.
double pp_chart_x(const pp_chart *c, double x);
double pp_chart_y(const pp_chart *c, double y);

// The frame, ticks with labels (powers of ten on a log axis; 1-2-5 steps otherwise) and axis
// titles. xticks 0: no x ticks (a categorical axis draws its own labels).
void pp_svg_axes(pp_textbuf *b, const pp_chart *c, int xticks, const char *xlabel, const char *ylabel);

// A polyline through (x[i], y[i]); a point whose y is NaN breaks the line. dashed: a dashed stroke.
void pp_svg_polyline(pp_textbuf *b, const pp_chart *c, const double *x, const double *y, int n,
                     const char *color, int dashed);

// A filled rectangle in pixels, with a tooltip (NULL: none; escaped).
void pp_svg_rect(pp_textbuf *b, double x, double y, double w, double h, const char *fill, const char *tip);

// Text at pixel (x, y); anchor "start", "middle" or "end"; escaped.
void pp_svg_text(pp_textbuf *b, double x, double y, const char *anchor, const char *text);

// A legend: one coloured swatch and (escaped) name per entry, in rows from (x, y).
void pp_svg_legend(pp_textbuf *b, double x, double y, const char *const *names, const char *const *colors, int n);

// A colour on a white-to-dark-blue ramp for t in [0, 1]; NaN: black (for non-finite values).
void pp_svg_ramp(double t, char out[8]);

#endif
