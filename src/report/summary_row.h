// summary_row.h — the numbers of one comparison's summary row (mismatch, torch's max abs and max
// rel, the true max error, max ulp, ulps at the tensor's scale, NaN/Inf), each as the text shown and the value it sorts by: written once, so the text
// report's summary and the HTML report's comparison table show the same cells.
#ifndef PP_SUMMARY_ROW_H
#define PP_SUMMARY_ROW_H

#include "core/close.h"
#include "core/repr.h"
#include "core/results.h"

typedef struct pp_summary_cell {
    char text[PP_REPR_MAX];
    double value;  // what a table sorts the column by
} pp_summary_cell;

typedef struct pp_summary_row {
    pp_summary_cell mismatch;   // Python's {:.1%} of mismatched/numel; "-" (NaN) with no elements
    pp_summary_cell max_abs;    // shortest round-trip repr; "0.0" (0) when no pair was compared
    pp_summary_cell max_rel;    // likewise
    pp_summary_cell max_ulp;    // %.4g; "0" (0) when no pair was compared
    pp_summary_cell max_err;    // max_abs_error (every pair, close or not), as max_abs
    pp_summary_cell ulp_scale;  // max_ulp_at_scale, %.4g; "-" (NaN) in a report older than it
    pp_summary_cell nonfinite;  // NaN and Inf in the actual tensor, a count
} pp_summary_row;

// The summary row of a comparison's statistics.
pp_summary_row pp_summary_row_of(const pp_close_stats *s);

// The summary row of a comparison: as pp_summary_row_of, with "—" (value NaN) in each cell whose
// statistic the report it was read from did not record (core/statistic.h, pp_statistic_recorded).
pp_summary_row pp_summary_row_of_comparison(const pp_comparison *c);

// The printf field width that shows text in width columns: width plus the bytes of text beyond
// one per character (UTF-8 continuation bytes, e.g. the two of "—").
int pp_summary_width(const char *text, int width);

#endif
