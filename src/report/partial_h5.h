// partial_h5.h — a shard's partial result on disk: DIR/partial.h5, a report.h5 (the same schema
// tables, so the comparisons' exact sums, axes and bands round-trip bit for bit) holding the
// shard's comparisons and series, plus the group /shard with the manifest as attributes (format,
// precprobe_version, identity, shard, n_shards, case_path, device, created_utc,
// reference_method, orders, cross_check, plan_signature, n_tasks, owned_tasks and
// comparison_tasks as comma-separated task ids, and per owned reference "reference_G_T_method",
// "reference_G_T_bound", "reference_G_T_tensor"). Layout in reports/README.md.
#ifndef PP_PARTIAL_H5_H
#define PP_PARTIAL_H5_H

#include "error.h"
#include "pipeline/partial.h"

// Writes p to DIR/partial.h5 (DIR created if needed), atomically: a reader sees no file or the
// whole one. Returns PP_OK or PP_ERR_RUNTIME.
int pp_partial_write(const char *dir, const pp_partial *p, pp_error *err);

// Reads DIR/partial.h5 (or DIR itself when it names a file) into *p (zeroed here; free with
// pp_partial_free, also after a failure). Returns PP_OK, or PP_ERR_INPUT naming the file and
// what is wrong with it (missing, not a partial, an unknown format, a damaged manifest).
int pp_partial_read(const char *dir, pp_partial *p, pp_error *err);

#endif
