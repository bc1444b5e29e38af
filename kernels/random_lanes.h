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

// One polar attempt (pp_polar_try on draw d) for each of n entries side by side, entry k being
// element idx[k] of tensor tid[k]: acc[k] whether it was accepted, z[k] its value if so (a
// rejected entry's z is computed and meaningless). Branch-free, as the first loop above.
PP_RAND_LANES_INLINE void pp_polar_try_lanes(uint64_t seed, const uint32_t *tid, const uint64_t *idx, uint32_t d,
                                             int n, double *z, int *acc)
{
    for (int k = 0; k < n; k++) {
        pp_philox4x32_ctr w = pp_philox_element(seed, tid[k], idx[k], d);
        double u = pp_u11_oo(pp_philox_bits64(w, 0));
        double v = pp_u11_oo(pp_philox_bits64(w, 1));
        double s = u * u + v * v;
        acc[k] = s < 1.0;
        uint64_t b;
        memcpy(&b, &s, sizeof b);
        z[k] = u * sqrt(-2.0 * pp_det_log_normal(b, 0) / s);
    }
}

#define PP_RAND_BATCH_MAX 256
#define PP_RAND_BATCH_DRAWS 64  // draws tried side by side; later ones (never, in practice) scalar

// z[k] = pp_rand_normal(seed, tid[k], idx[k]) for k < n ≤ PP_RAND_BATCH_MAX (n a multiple of 16
// runs fastest). Draw 0 of every
// entry side by side; then the rejected entries gathered into a compact list and their draw 1
// tried side by side, and so on: with p = 1 − π/4 rejected per draw the vector work is about
// 1/(1 − p) ≈ 1.27 attempts per entry, where continuing each rejected entry alone (as
// pp_rand_normal_lanes does) costs a scalar draw, several times a vector lane's. The same
// attempts in the same order per entry as pp_rand_normal, so the same bits
// (tests/test_random_lanes.c).
PP_RAND_LANES_INLINE void pp_rand_normal_batch(uint64_t seed, const uint32_t *tid, const uint64_t *idx, int n,
                                               double *z)
{
    int acc[PP_RAND_BATCH_MAX], pend[PP_RAND_BATCH_MAX];
    uint32_t pt[PP_RAND_BATCH_MAX];
    uint64_t pi[PP_RAND_BATCH_MAX];
    double pz[PP_RAND_BATCH_MAX];
    pp_polar_try_lanes(seed, tid, idx, 0, n, z, acc);
    int np = 0;
    for (int k = 0; k < n; k++) {  // branch-free: a rejection is random, a branch on it mispredicts
        pend[np] = k;
        np += !acc[k];
    }
    for (uint32_t d = 1; np > 0; d++) {
        if (d == PP_RAND_BATCH_DRAWS) {
            for (int j = 0; j < np; j++)
                z[pend[j]] = pp_rand_normal_from(seed, tid[pend[j]], idx[pend[j]], d);
            return;
        }
        // padded to a multiple of 16 with copies of the last entry (their results unused), so
        // the attempts run as whole vectors with no scalar remainder loop
        int nv = (np + 15) & ~15;
        for (int j = 0; j < nv; j++) {
            int k = pend[j < np ? j : np - 1];
            pt[j] = tid[k], pi[j] = idx[k];
        }
        pp_polar_try_lanes(seed, pt, pi, d, nv, pz, acc);
        int still = 0;
        for (int j = 0; j < np; j++) {
            int k = pend[j];
            z[k] = acc[j] ? pz[j] : z[k];
            pend[still] = k;
            still += !acc[j];
        }
        np = still;
    }
}

#endif
