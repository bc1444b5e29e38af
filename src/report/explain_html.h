// explain_html.h — the HTML report's "where the error comes from" section: per variant explained
// and compared tensor, a bar chart of each rounding site's share of the error (core/explain_result.h).
#ifndef PP_EXPLAIN_HTML_H
#define PP_EXPLAIN_HTML_H

#include "core/results.h"
#include "core/textbuf.h"

// Appends the section (nothing when no variant of r has explain tables). width: the page's chart
// width in pixels.
void pp_report_explain_html(pp_textbuf *b, const pp_run_result *r, int width);

#endif
