// cpu/reject_lanes.h — the rejected entries of a batch of polar attempts gathered into a list
// (kernels/random_lanes.h's pp_rand_normal_batch), written for each x86-64 level: AVX-512 packs
// 16 entries per step with vpcompressd, AVX2 8 per step with a permutation made by pext, baseline
// is the scalar loop. The same list at every level (tests/test_reject_lanes.c).
#ifndef PP_CPU_REJECT_LANES_H
#define PP_CPU_REJECT_LANES_H

#include "../random_lanes.h"
#include "isa.h"

// The rejected function of level isa (PP_ISA_AUTO: the widest this CPU runs; a level the CPU
// lacks: the widest below it, pp_isa_resolve's). See pp_rejected_fn (random_lanes.h).
pp_rejected_fn pp_rejected_for(pp_isa isa);

// The lane functions of level isa together: its Philox words (cpu/philox_lanes.h), its rejected
// list, and its halves of a polar attempt (cpu/polar_lanes.h).
pp_rand_lanes_fns pp_rand_lanes_fns_for(pp_isa isa);

#endif
