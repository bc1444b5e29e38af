// report_txt.h — report.txt: a header, torch's message (or "close") and precprobe's statistics
// for every comparison, a summary table, and the gate's verdicts.
#ifndef PP_REPORT_TXT_H
#define PP_REPORT_TXT_H

#include "core/results.h"

// The whole text report, malloc'd (NULL when out of memory).
char *pp_report_text(const pp_run_result *r);

// Only the summary table and the gate verdicts (what `precprobe run` prints), malloc'd.
char *pp_report_summary(const pp_run_result *r);

#endif
