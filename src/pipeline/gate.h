// gate.h — `precprobe check`: a run compared with a committed baseline report, statistic by
// statistic, with the case's slack; every regression is one verdict line.
#ifndef PP_GATE_H
#define PP_GATE_H

#include "pipeline/case.h"
#include "core/results.h"

// Appends to now's verdicts one verdict per comparison and statistic checked against base
// (mismatch_fraction + slack, max_abs_diff and max_rel_diff × slack, max_ulp + slack; a
// comparison missing from now is a regression). Returns the number of regressions, -1 when
// out of memory.
int pp_gate_baseline(const pp_slack *slack, pp_run_result *now, const pp_run_result *base);

// Appends a verdict to r; returns 0, or -1 when out of memory.
int pp_add_verdict(pp_run_result *r, const char *rule, int passed, const char *detail);

#endif
