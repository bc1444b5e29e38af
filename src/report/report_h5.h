// report_h5.h — report.h5: everything a run produced (pp_run_result) as one HDF5 file, written
// by `precprobe run`, read back by `precprobe check` and `precprobe show`. The layout is
// documented item by item in reports/README.md; h5py and h5dump read it as it is.
#ifndef PP_REPORT_H5_H
#define PP_REPORT_H5_H

#include "error.h"
#include "core/results.h"

// The layout's version, the root attribute "schema_version". A reader refuses any other.
#define PP_REPORT_H5_SCHEMA 1

// Writes r as the report at path: HDF5 builds the file in memory, and its image is written to a
// temporary name in path's directory, synced, then renamed over path, so path holds either the
// old file or the whole new one (memory: the image and, briefly, a copy).
// Names (variants, tensors, inputs) become HDF5 link names with '%' written "%25", '/' "%2F"
// and a name that is exactly "." "%2E"; the read restores them.
// @param [in] r  a consistent result: every comparison's variant among r->variants, no two
//                comparisons with the same (variant, tensor, against), no knob named "external",
//                no empty names; outputs kept (variants[v].outputs, reference_outputs) hold
//                n_references tensors named after references[i].tensor, inputs n_inputs;
//                statistics a read accepts (counts within the total, flat indices inside the
//                shape, rtol and atol finite and >= 0, a torch version precprobe knows).
// Returns PP_OK, PP_ERR_INPUT (r breaks the rules above, the message naming the item; nothing
// is left on disk) or PP_ERR_RUNTIME (the file could not be created, written, synced or
// renamed; neither the temporary file nor a partial report is left, and an existing file at
// path is unchanged).
int pp_report_h5_write(const char *path, const pp_run_result *r, pp_error *err);

// Reads the report at path into *r (which the caller frees with pp_run_result_free). Every field
// pp_report_h5_write stored comes back bit for bit: names, knobs, flags, verdicts, the case text,
// the kept tensors, and every comparison's pp_close_opts and pp_close_stats (the exact sums
// included), in the original order, so pp_close_message and pp_close_stats_text print the same
// bytes as before the write. Derived attributes (mismatch_fraction, mean_abs, rms, multi-indices)
// are for other readers and are not consulted.
// @param [out] r  zeroed first; zeroed again on failure
// Returns PP_OK, PP_ERR_INPUT (a missing or unreadable file, not HDF5, another schema version,
// a missing or mistyped item; the message names the file and the item) or PP_ERR_RUNTIME
// (out of memory).
int pp_report_h5_read(const char *path, pp_run_result *r, pp_error *err);

#endif
