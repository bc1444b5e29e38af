// cpu/adamw_lanes.h — the CPU emulation's vector path: PP_ADAMW_LANES elements side by side, each
// lane running kernels/adamw_thread.h's statements (the same inline functions, called in a loop
// over lanes that the compiler vectorises). Bit-identical to the scalar body by construction
// (same operations per lane, no reassociation: -ffp-contract=off, no -ffast-math) and by
// tests/test_adamw_lanes.c, which compares the two over every knob and gradient source.
#ifndef PP_CPU_ADAMW_LANES_H
#define PP_CPU_ADAMW_LANES_H

#include <stdint.h>

#include "../adamw.h"
#include "../adamw_problem.h"
#include "../adamw_thread.h"
#include "../random_lanes.h"
#include "isa.h"

// Lanes per group: 16 binary32 lanes fill one AVX-512 register (two AVX2 ones).
#define PP_ADAMW_LANES 16

// Elements i0 .. i0 + PP_ADAMW_LANES − 1 of a θ-independent source (synthetic, quadratic,
// input) through steps t0 .. t1 (1 ≤ t0 ≤ t1 ≤ pr->steps; loss index 0 too when t0 = 1): what
// pp_adamw_elem_thread(va, pr, sc, i, t0 − 1, t1, ...) does for each of them, with the loss
// terms added in increasing i for each loss index (the documented order). th, m, v, c: the
// lanes' state before step t0 in (θ₀ and zeros for t0 = 1), after step t1 out.
// isa: the code that runs, x86-64-v4 (AVX-512), x86-64-v3 (AVX2) or baseline — a level this CPU
// runs (pp_isa_resolve's), or PP_ISA_AUTO: the CPU's dispatch — the same bits at every level.
void pp_adamw_lanes_run(pp_isa isa, const pp_adamw_variant *va, const pp_adamw_problem *pr, const pp_adamw_scalars *sc,
                        int64_t i0, int t0, int t1, float *th, float *m, float *v, float *c, pp_adamw_loss_out lo,
                        pp_adamw_snap_out so);

// The entry with the CPU's dispatch (target_clones; internal: call pp_adamw_lanes_run), rf
// the synthetic source's Philox and rejected lists (cpu/reject_lanes.h).
void pp_adamw_lanes_run_auto_(const pp_adamw_variant *va, const pp_adamw_problem *pr, const pp_adamw_scalars *sc,
                              int64_t i0, int t0, int t1, float *th, float *m, float *v, float *c,
                              pp_adamw_loss_out lo, pp_adamw_snap_out so, pp_rand_lanes_fns rf);

#endif
