// delayed_knobs.h — the knobs of TE's DelayedScaling recipe that gemm and attention share
// (amax_history_<tensor>, amax_compute_algo, margin): one definition, one help text each.
#ifndef PP_DELAYED_KNOBS_H
#define PP_DELAYED_KNOBS_H

#include "ops/op.h"
#include "scaling.h"

// amax_compute_algo's values and what each means to kernels/scaling.h (pp_amax_algo).
extern const char *const pp_amax_algo_values[];
extern const pp_knob_meaning pp_amax_algo_meanings[];

// The knob definitions, as initialisers for an op's knob table (a table of constants cannot copy
// a shared object, so these are macros). Only scaling = "tensor-delayed" reads them; each op's
// check_knobs refuses them elsewhere. TENSOR is the tensor's name as the op's inputs spell it.
#define PP_DELAYED_HISTORY_KNOB(NAME, TENSOR)                                                               \
    {.name = NAME, .def = "[]",                                                                             \
     .doc = "tensor-delayed: " TENSOR "'s amax at the earlier steps, most recent first (TE's amax_history, " \
            "its length amax_history_len), e.g. [3.0, 2.5]",                                                \
     .list_max = PP_KNOB_LIST_MAX}
#define PP_DELAYED_AMAX_ALGO_KNOB                                                                           \
    {.name = "amax_compute_algo", .values = pp_amax_algo_values, .def = "max",                              \
     .doc = "tensor-delayed: the amax the scale is made from: max over the history, or its most recent "    \
            "entry (TE's amax_compute_algo)",                                                               \
     .meanings = pp_amax_algo_meanings}
#define PP_DELAYED_MARGIN_KNOB                                                                              \
    {.name = "margin", .def = "0",                                                                          \
     .doc = "tensor-delayed: scale = (max_finite / amax) / 2^margin, max_finite the quantised format's "    \
            "largest value (448 for e4m3) (TE's margin)",                                                   \
     .int_min = 0, .int_max = 64}

#endif
