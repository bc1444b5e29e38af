// engine_knob.h — the engine knob that gemm and attention share: whose arithmetic runs a variant
// (precprobe's kernels, or a vendor library's), its meanings and the note the reports print.
#ifndef PP_ENGINE_KNOB_H
#define PP_ENGINE_KNOB_H

#include "ops/op.h"

typedef enum { PP_ENGINE_OURS, PP_ENGINE_CUBLAS } pp_engine_id;

extern const char *const pp_engine_values[];
extern const pp_knob_meaning pp_engine_meanings[];

// The reports' note beside a variant run by cuBLAS (its reduction order and tensor cores, not the
// emulation's), from the variant's knob settings as text; NULL for our own kernels.
const char *pp_engine_vendor_note(const pp_knob_setting *knobs, int n_knobs);

#endif
