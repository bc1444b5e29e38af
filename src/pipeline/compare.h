// compare.h — the third stage of a run (pipeline/plan.h): the statistics of the plan's
// comparisons, from what the execute stage produced.
#ifndef PP_COMPARE_H
#define PP_COMPARE_H

#include "pipeline/execute.h"

// Runs the plan's COMPARE and COMPARE_PAIR tasks that selected flags (NULL: all), in id order,
// into *out (allocated here, *n of them; the caller owns them: pp_run_assemble takes them).
// Returns PP_OK, PP_ERR_INPUT (a pair's tensor group a variant lacks, a view that does not fit
// the tensors) or PP_ERR_RUNTIME (out of memory).
int pp_run_compare(const pp_run_plan *plan, const pp_run_products *p, const unsigned char *selected,
                   pp_comparison **out, int *n, pp_error *err);

// One COMPARE or COMPARE_PAIR task into *cmp (*compared = 1), or nothing (*compared = 0: another
// kind, or a pair's output one of its variants lacks); its dependencies' tensors must exist.
// What pp_run_compare runs for each selected task. Returns as pp_run_compare.
int pp_run_compare_task(const pp_run_plan *plan, const pp_run_products *p, const pp_task *t, pp_comparison *cmp,
                        int *compared, pp_error *err);

// Frees n comparisons and the array.
void pp_comparisons_free(pp_comparison *cmps, int n);

#endif
