// report_html.h — the HTML report: one self-contained page (inline CSS, inline SVG charts drawn
// here, a few lines of inline script to sort the table; no URL anywhere), written atomically.
#ifndef PP_REPORT_HTML_H
#define PP_REPORT_HTML_H

#include "error.h"
#include "core/results.h"

// The page for run r, malloc'd (NULL when out of memory). Every name and message is
// HTML-escaped; the page is also well-formed XML (every element closed, nothing in the script
// that XML would read as markup).
char *pp_report_html(const pp_run_result *r);

// Writes pp_report_html(r) to path with pp_atomic_write_text: path holds the old file or the
// whole new page, never a part. Returns PP_OK or PP_ERR_RUNTIME (out of memory, cannot write).
int pp_report_html_write(const char *path, const pp_run_result *r, pp_error *err);

#endif
