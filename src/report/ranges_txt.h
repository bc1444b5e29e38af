// ranges_txt.h — the text form of the range diagnostics (run --ranges; core/range_table.h): the
// findings in words (which site overflows, holds NaN or flushes to zero, in which heads; which
// variants have none), and in report.txt a compact table, rows with something to say first.
#ifndef PP_RANGES_TXT_H
#define PP_RANGES_TXT_H

#include "core/results.h"
#include "core/textbuf.h"

// Appends the range diagnostics of r to b: nothing when no variant recorded any (and none has a
// note); the words, then (table = 1) the table.
void pp_report_ranges_text(pp_textbuf *b, const pp_run_result *r, int table);

#endif
