// cpu/polar_lanes.h — the two halves of a polar attempt (kernels/random_dist.h's pp_polar_try)
// side by side, written with intrinsics per x86-64 level, for kernels/random_lanes.h's
// pp_rand_normal_batch: the cheap half (Philox4x32-10, u, v, s = u² + v², s < 1) with one
// Philox block per 64-bit lane, each 32×32→64 multiplication a single vpmuludq whose product
// holds both halves (8 blocks per AVX-512 register, 4 per AVX2 one); and the costly half (the
// deterministic log of s, a division, a square root) with Dekker's exact product as one FMA
// (cpu/det_log_lanes_body.h says why the bits are the same), 4 lanes at both levels. The same bits as the inline
// definitions at every level (tests/test_random_lanes.c).
#ifndef PP_CPU_POLAR_LANES_H
#define PP_CPU_POLAR_LANES_H

#include "../random_lanes.h"
#include "isa.h"

// The level's cheap half (pp_polar_us_fn), costly half (pp_polar_z_fn), or NULL at the baseline
// level (pp_rand_normal_batch then runs the inline definitions). PP_ISA_AUTO: the widest this
// CPU runs; a level the CPU lacks: the widest below it (pp_isa_resolve's).
pp_polar_us_fn pp_polar_us_for(pp_isa isa);
pp_polar_z_fn pp_polar_z_for(pp_isa isa);

// y[k] = pp_det_log_normal(bits of x[k], 0) for k < n, x[k] positive normal values, at level isa
// (the baseline: the inline definition in a loop). Any n ≥ 0. What pp_polar_z_for's functions
// compute inside; exposed for tests.
typedef void (*pp_det_log_lanes_fn)(int n, const double *x, double *y);
pp_det_log_lanes_fn pp_det_log_lanes_for(pp_isa isa);

#endif
