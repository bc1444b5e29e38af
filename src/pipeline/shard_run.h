// shard_run.h — one shard of a run: the tasks shard I of N owns (pipeline/shard.h) and their
// dependencies executed, compared (and order-banded), and kept as a pp_partial
// (pipeline/partial.h) for `precprobe merge`.
#ifndef PP_SHARD_RUN_H
#define PP_SHARD_RUN_H

#include "pipeline/partial.h"

// Runs shard i of n of case c under options o into *out (zeroed here; free with
// pp_partial_free, also after a failure); with o->save_tensors the owned tasks' tensors are kept
// in it. Returns PP_OK, PP_ERR_INPUT, PP_ERR_RUNTIME or PP_ERR_INTERRUPTED, as
// pp_run_case.
int pp_run_shard(const pp_case *c, const pp_run_opts *o, int i, int n, pp_partial *out, pp_error *err);

// The same with the owner table made beforehand (owner[t] = the shard of task t of c's plan:
// pp_shard_owners_multi over a sweep's points); NULL: pp_shard_owners of c's plan alone. The
// plan made here must be the one the table was made from (plans are functions of the case and
// the options).
int pp_run_shard_of(const pp_case *c, const pp_run_opts *o, int i, int n, const int *owner, pp_partial *out,
                    pp_error *err);

#endif
