// ranges_html.h — the range diagnostics in the HTML report (run --ranges; core/range_table.h):
// per variant a heat strip, one row per rounding site, one cell per head (kv head, parameter
// block; one for a tensor), coloured by what the cell has to say — overflow, NaN, underflow —
// else by its headroom (the share of values within a factor 2 of the format's largest).
#ifndef PP_RANGES_HTML_H
#define PP_RANGES_HTML_H

#include "core/results.h"
#include "core/textbuf.h"

// Appends the section to b (nothing when no variant recorded ranges).
void pp_report_ranges_html(pp_textbuf *b, const pp_run_result *r);

#endif
