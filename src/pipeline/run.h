// run.h — running a case: inputs, every variant on a backend, the reference once per input
// format, every comparison (against the reference and the case's pairs). The gate's rules are
// not the run's: the caller evaluates them once on the result (pipeline/gate.h).
#ifndef PP_RUN_H
#define PP_RUN_H

#include "core/results.h"
#include "pipeline/case.h"
#include "pipeline/run_opts.h"

// Runs case c: its plan, executed, compared and assembled (pipeline/plan.h). On success r holds
// everything the reports show but the gate's verdicts (free with pp_run_result_free).
// Returns PP_OK, PP_ERR_INPUT (bad input files, shapes, unusable device request) or
// PP_ERR_RUNTIME (out of memory, CUDA failure).
int pp_run_case(const pp_case *c, const pp_run_opts *o, pp_run_result *r, pp_error *err);

// The inputs (in format) and the reference of case c, as the run computes them for the variants
// of that format: inputs[0..n_inputs), refs[0..n_outputs) (binary64; an output no variant of the
// case has is left zeroed, data NULL) and info. The caller frees the tensors.
// Returns PP_OK, PP_ERR_INPUT or PP_ERR_RUNTIME.
int pp_run_reference(const pp_case *c, const pp_run_opts *o, pp_format_id format, pp_tensor *inputs,
                     pp_tensor *refs, pp_reference_info *info, pp_error *err);

#endif
