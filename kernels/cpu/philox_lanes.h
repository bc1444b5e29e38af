// cpu/philox_lanes.h — Philox4x32-10 (kernels/philox.h) of many counters side by side, written
// for each x86-64 level with intrinsics: 16 counters per AVX-512 register, 8 per AVX2 one, each
// 32×32→64 multiplication done as two even/odd-lane multiplies whose halves are blended back
// (the compiler's own vectorisation of pp_philox4x32_10 widens every word to 64 bits first: about
// twice the instructions). The same bits as pp_philox4x32_10 (tests/test_philox_lanes.c).
#ifndef PP_CPU_PHILOX_LANES_H
#define PP_CPU_PHILOX_LANES_H

#include <stdint.h>

#include "../philox.h"
#include "../random_lanes.h"
#include "isa.h"

// The words function of level isa (PP_ISA_AUTO: the widest this CPU runs; a level the CPU lacks:
// the widest below it, pp_isa_resolve's): for k < n, word j of
// pp_philox4x32_10((c0[k], c1[k], c2[k], d), key) into w[j][k]. Any n ≥ 0; no alignment needed.
pp_philox_words_fn pp_philox_words_for(pp_isa isa);

#endif
