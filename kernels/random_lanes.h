// random_lanes.h — standard normals of many elements side by side (CPU): pp_rand_normal's first
// polar attempt (draw 0) for every lane in one branch-free loop (Philox, the polar test and the
// deterministic log of a normal s: GCC vectorises it where the caller's flags allow, as in
// kernels/cpu/adamw_lanes.c), then each rejected lane (probability 1 − π/4 ≈ 21%) continues with
// the scalar pp_rand_normal_from at draw 1. The same operations per element as pp_rand_normal,
// so the same bits (tests/test_random_lanes.c).
#ifndef PP_RANDOM_LANES_H
#define PP_RANDOM_LANES_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "random_dist.h"

#define PP_RAND_LANES_MAX 16

#if defined(__GNUC__) && !defined(__clang__)
#define PP_RAND_LANES_INLINE static inline __attribute__((always_inline))
#else
#define PP_RAND_LANES_INLINE static inline
#endif

// z[l] = pp_rand_normal(seed, tensor_id, i0 + l) for l < n ≤ PP_RAND_LANES_MAX.
PP_RAND_LANES_INLINE void pp_rand_normal_lanes(uint64_t seed, uint32_t tensor_id, int64_t i0, int n, double *z)
{
    double zz[PP_RAND_LANES_MAX];
    int acc[PP_RAND_LANES_MAX];
    for (int l = 0; l < n; l++) {  // pp_polar_try on draw 0, its branch as a flag
        pp_philox4x32_ctr w = pp_philox_element(seed, tensor_id, (uint64_t)(i0 + l), 0);
        double u = pp_u11_oo(pp_philox_bits64(w, 0));
        double v = pp_u11_oo(pp_philox_bits64(w, 1));
        double s = u * u + v * v;
        acc[l] = s < 1.0;
        // s ≥ 2^−106 is a positive normal, so pp_det_log(s) = pp_det_log_normal(bits of s, 0);
        // a rejected lane's value (s ≥ 1) is computed and not used
        uint64_t b;
        memcpy(&b, &s, sizeof b);
        zz[l] = u * sqrt(-2.0 * pp_det_log_normal(b, 0) / s);
    }
    for (int l = 0; l < n; l++)
        z[l] = acc[l] ? zz[l] : pp_rand_normal_from(seed, tensor_id, (uint64_t)(i0 + l), 1);
}

#endif
