// assemble.h — the last stage of a run (pipeline/plan.h): the pp_run_result the reports show,
// from the plan's metadata, the comparisons and what the execute stage produced.
#ifndef PP_ASSEMBLE_H
#define PP_ASSEMBLE_H

#include "pipeline/execute.h"

// Fills r (zeroed here; free with pp_run_result_free) with the run's metadata, every variant
// (knobs as text, series moved from p), the comparisons cmps[0..n) (taken: r owns them, or they
// are freed on failure) followed by p's cross-check comparisons (moved), the references (each
// output's method and the largest bound over the groups that computed it), and with
// o->save_tensors the first group's inputs, the references and the variants' outputs (moved
// from p). The gate's verdicts are left to the caller (pipeline/gate.h).
// Returns PP_OK or PP_ERR_RUNTIME (out of memory).
int pp_run_assemble(const pp_run_plan *plan, const pp_run_opts *o, pp_run_products *p, pp_comparison *cmps, int n,
                    pp_run_result *r, pp_error *err);

#endif
