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

#endif
