// sweep_txt.h — a sweep's report.txt: one table per statistic and compared tensor, the points
// as rows and the variants as columns (reports/README.md, "The sweep report").
#ifndef PP_SWEEP_TXT_H
#define PP_SWEEP_TXT_H

#include "report/sweep_result.h"

// The statistics the sweep's tables and charts show: those with a report column of their own
// (the statistic table's labels), in table order. Fills idx (indices into res->stat) and returns
// how many.
int pp_sweep_shown_stats(const pp_sweep_result *res, int *idx);

// One value as the sweep's tables print it: a mismatch fraction in percent, else %.6g; with a
// band (band_runs > 0), " [min, max]" after it.
void pp_sweep_cell_text(const pp_sweep_result *res, const pp_sweep_cell *cell, int stat, char *buf, size_t n);

// The whole report.txt, malloc'd (NULL when out of memory). points_dir names where each
// point's own reports are, for the header.
char *pp_sweep_report_text(const pp_sweep_result *res, const char *points_dir, const char *notes);

#endif
