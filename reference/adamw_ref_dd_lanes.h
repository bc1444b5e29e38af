// adamw_ref_dd_lanes.h — the double-double AdamW reference for PP_ADAMW_DD_LANES elements of a
// θ-independent source (synthetic or input) side by side: each lane runs adamw_ref_dd_step.h's
// statements (the same inline functions as the scalar element, pp_adamw_ref_dd_elem_, in a loop
// over lanes that GCC vectorises), so every output is bit-identical to the scalar path, which
// stays the oracle (tests/test_adamw_ref_dd_lanes.c). Internal to reference/.
#ifndef PP_ADAMW_REF_DD_LANES_H
#define PP_ADAMW_REF_DD_LANES_H

#include <stdint.h>

#include "adamw_ref_dd.h"
#include "isa.h"

// Eight binary64 lanes fill one AVX-512 register (two AVX2 ones).
#define PP_ADAMW_DD_LANES 8

// Elements i0 .. i0 + PP_ADAMW_DD_LANES − 1 of a θ-independent source (pr->kind must be
// PP_ADAMW_GRAD_SYNTHETIC or PP_ADAMW_GRAD_INPUT), from theta0[l]: out[l] and ok[l] exactly as pp_adamw_ref_dd_elem_
// gives them for element i0 + l, and th64 (NULL, or [PP_ADAMW_DD_LANES][T + 1]) row l its th64.
// Runs the widest x86-64 level this CPU runs (AVX-512, AVX2, else baseline: GCC's target_clones).
void pp_adamw_ref_dd_lanes_(const pp_adamw_problem *pr, pp_format_id P, const pp_adamw_dd_scal_ *sc, int64_t i0,
                            const double *theta0, double max_rel, double *th64, pp_adamw_dd_elem_ *out, int *ok);

// The same with the level's code named (base/isa.h; a level the CPU lacks runs the widest below
// it): the same bits at every level (tests/test_adamw_ref_dd_lanes.c runs each).
void pp_adamw_ref_dd_lanes_isa_(pp_isa isa, const pp_adamw_problem *pr, pp_format_id P, const pp_adamw_dd_scal_ *sc,
                                int64_t i0, const double *theta0, double max_rel, double *th64,
                                pp_adamw_dd_elem_ *out, int *ok);

#endif
