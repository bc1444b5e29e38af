// explain_txt.h — the text of `precprobe explain`: per variant and compared tensor, the table
// "where the error comes from" (core/explain_result.h), most of the error first.
#ifndef PP_EXPLAIN_TXT_H
#define PP_EXPLAIN_TXT_H

#include "core/results.h"
#include "core/textbuf.h"

// Appends the tables of every variant of r that has explain tables (nothing when none).
void pp_report_explain_text(pp_textbuf *b, const pp_run_result *r);

#endif
