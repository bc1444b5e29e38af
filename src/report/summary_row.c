// summary_row.c — a comparison's summary cells (see summary_row.h).
#include "report/summary_row.h"

#include "core/statistic.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

// A largest difference as its repr, or "0.0" when no pair set it (index < 0).
static pp_summary_cell max_cell(const pp_close_max *m)
{
    pp_summary_cell c = {"0.0", 0.0};
    if (m->index >= 0) {
        pp_repr_double(m->value, c.text, sizeof c.text);
        c.value = m->value;
    }
    return c;
}

pp_summary_row pp_summary_row_of(const pp_close_stats *s)
{
    pp_summary_row r;
    memset(&r, 0, sizeof r);
    if (pp_format_percent((double)s->mismatched, (double)s->numel, r.mismatch.text, sizeof r.mismatch.text) < 0)
        snprintf(r.mismatch.text, sizeof r.mismatch.text, "-");
    r.mismatch.value = s->numel ? (double)s->mismatched / (double)s->numel : NAN;
    r.max_abs = max_cell(&s->abs_diff);
    r.max_rel = max_cell(&s->rel_diff);
    snprintf(r.max_ulp.text, sizeof r.max_ulp.text, "0");
    if (s->ulp_err.index >= 0) {
        snprintf(r.max_ulp.text, sizeof r.max_ulp.text, "%.4g", s->ulp_err.value);
        r.max_ulp.value = s->ulp_err.value;
    }
    r.max_err = max_cell(&s->abs_err);
    double us = pp_statistic_value("max_ulp_at_scale", s);
    snprintf(r.ulp_scale.text, sizeof r.ulp_scale.text, us != us ? "-" : "%.4g", us);
    r.ulp_scale.value = us;
    int64_t nonfinite = s->nan_actual + s->inf_actual;
    snprintf(r.nonfinite.text, sizeof r.nonfinite.text, "%lld", (long long)nonfinite);
    r.nonfinite.value = (double)nonfinite;
    return r;
}

// A cell shown as not recorded: the em dash, sorting as NaN.
static void unrecorded_cell(const pp_comparison *c, const char *statistic, pp_summary_cell *cell)
{
    for (int k = 0; k < pp_statistic_count(); k++)
        if (!strcmp(pp_statistic_at(k)->name, statistic) && !pp_statistic_recorded(c, k)) {
            snprintf(cell->text, sizeof cell->text, "\u2014");
            cell->value = NAN;
        }
}

pp_summary_row pp_summary_row_of_comparison(const pp_comparison *c)
{
    pp_summary_row r = pp_summary_row_of(&c->stats);
    if (!c->unrecorded)
        return r;
    unrecorded_cell(c, "mismatch_fraction", &r.mismatch);
    unrecorded_cell(c, "max_abs_diff", &r.max_abs);
    unrecorded_cell(c, "max_rel_diff", &r.max_rel);
    unrecorded_cell(c, "max_ulp", &r.max_ulp);
    unrecorded_cell(c, "max_abs_error", &r.max_err);
    unrecorded_cell(c, "max_ulp_at_scale", &r.ulp_scale);
    unrecorded_cell(c, "nan_count", &r.nonfinite);
    unrecorded_cell(c, "inf_count", &r.nonfinite);
    return r;
}

int pp_summary_width(const char *text, int width)
{
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        width += (*p & 0xC0) == 0x80;
    return width;
}
