// random_lanes.h — standard normals of many elements side by side (CPU): pp_rand_normal_batch (one
// value per entry, or both values of each entry's pair), every entry's polar attempts side by side
// (Philox, the polar test: the cheap half), the rejected ones (probability 1 − π/4 ≈ 21%) gathered
// and retried side by side, then the deterministic log, division and square root once per entry
// (the costly half); pp_rand_normal_range, one tensor's consecutive elements through it. The same
// operations per entry as pp_rand_normal_pair, so the same bits (tests/test_random_lanes.c).
#ifndef PP_RANDOM_LANES_H
#define PP_RANDOM_LANES_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "random_dist.h"

#if defined(__GNUC__) && !defined(__clang__)
#define PP_RAND_LANES_INLINE static inline __attribute__((always_inline))
#else
#define PP_RAND_LANES_INLINE static inline
#endif

// Philox of n counters side by side: for k < n, word j of pp_philox4x32_10((c0[k], c1[k], c2[k],
// d), key) into w[j][k] (kernels/cpu/philox_lanes.h writes one per x86-64 level).
typedef void (*pp_philox_words_fn)(pp_philox4x32_key key, const uint32_t *c0, const uint32_t *c1,
                                   const uint32_t *c2, uint32_t d, int n, uint32_t *const w[4]);

// The rejected entries listed: for j < n, in increasing j, src[j] (src NULL: j itself) of each j
// with acc[j] == 0 into dst[0 .. r − 1]; returns r. Writes dst[0 .. n − 1] at most (entries past
// r are scratch); dst may be src (compaction in place). kernels/cpu/reject_lanes.h writes one per
// x86-64 level; pp_rejected_scalar is the definition.
typedef int (*pp_rejected_fn)(const int *acc, const int *src, int n, int *dst);

// The cheap half of a polar attempt for n entries side by side: pp_polar_us_lanes below (u[k],
// v[k], s[k], acc[k] of draw d of element idx[k] of tensor tid[k]). kernels/cpu/polar_lanes.h
// writes one per x86-64 level.
typedef void (*pp_polar_us_fn)(uint64_t seed, const uint32_t *tid, const uint64_t *idx, uint32_t d, int n,
                               double *u, double *v, double *s, int *acc);

// The costly half for n entries side by side: pp_polar_z_lanes below. kernels/cpu/polar_lanes.h
// writes one per x86-64 level.
typedef void (*pp_polar_z_fn)(int n, const double *u, const double *v, const double *s, double *z0, double *z1);

// A level's lane functions, passed together; a NULL member: the inline definition. us, where
// set, replaces words (it runs its own Philox).
typedef struct pp_rand_lanes_fns {
    pp_philox_words_fn words;
    pp_rejected_fn rejected;
    pp_polar_us_fn us;
    pp_polar_z_fn z;
} pp_rand_lanes_fns;

// pp_rejected_fn's definition, branch-free (a rejection is random: a branch on it mispredicts).
PP_RAND_LANES_INLINE int pp_rejected_scalar(const int *acc, const int *src, int n, int *dst)
{
    int r = 0;
    for (int j = 0; j < n; j++) {
        dst[r] = src ? src[j] : j;
        r += !acc[j];
    }
    return r;
}

#define PP_RAND_BATCH_MAX 512
#define PP_RAND_BATCH_DRAWS 64  // draws tried side by side; later ones (never, in practice) scalar

// The cheap half of a polar attempt (pp_polar_pair_try on draw d) for each of n entries side by
// side, entry k being element idx[k] of tensor tid[k]: Philox (by words, or inline where words is
// NULL), u, v and s = u² + v² (u[k], v[k], s[k]) and acc[k] = s < 1. Branch-free.
PP_RAND_LANES_INLINE void pp_polar_us_lanes(uint64_t seed, const uint32_t *tid, const uint64_t *idx, uint32_t d,
                                            int n, pp_philox_words_fn words, double *u, double *v, double *s,
                                            int *acc)
{
    if (words) {
        uint32_t c0[PP_RAND_BATCH_MAX], c1[PP_RAND_BATCH_MAX], w0[PP_RAND_BATCH_MAX], w1[PP_RAND_BATCH_MAX],
            w2[PP_RAND_BATCH_MAX], w3[PP_RAND_BATCH_MAX];
        uint32_t *const w[4] = {w0, w1, w2, w3};
        for (int k = 0; k < n; k++)  // pp_philox_element's counter
            c0[k] = (uint32_t)idx[k], c1[k] = (uint32_t)(idx[k] >> 32);
        pp_philox4x32_key key = {{(uint32_t)seed, (uint32_t)(seed >> 32)}};
#if defined(__GNUC__) && !defined(__clang__)
        // GCC cannot see that the loops above filled the first n entries the call reads
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
        words(key, c0, c1, tid, d, n, w);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
        for (int k = 0; k < n; k++) {
            double uk = pp_u11_oo((uint64_t)w0[k] | ((uint64_t)w1[k] << 32));  // pp_philox_bits64
            double vk = pp_u11_oo((uint64_t)w2[k] | ((uint64_t)w3[k] << 32));
            double sk = uk * uk + vk * vk;
            u[k] = uk, v[k] = vk, s[k] = sk, acc[k] = sk < 1.0;
        }
        return;
    }
    for (int k = 0; k < n; k++) {
        pp_philox4x32_ctr w = pp_philox_element(seed, tid[k], idx[k], d);
        double uk = pp_u11_oo(pp_philox_bits64(w, 0));
        double vk = pp_u11_oo(pp_philox_bits64(w, 1));
        double sk = uk * uk + vk * vk;
        u[k] = uk, v[k] = vk, s[k] = sk, acc[k] = sk < 1.0;
    }
}

// The costly half, once per entry: f = RN(sqrt(RN(−2·pp_det_log(s) / s))) of an accepted
// attempt's s[k] (2^−106 ≤ s < 1, a positive normal: pp_det_log(s) = pp_det_log_normal(bits of s,
// 0)), z0[k] = RN(u[k]·f) and, where z1 is not NULL, z1[k] = RN(v[k]·f) (pp_polar_pair_try's z[0]
// and z[1]). Branch-free but for the test on z1, the same for every entry.
PP_RAND_LANES_INLINE void pp_polar_z_lanes(int n, const double *u, const double *v, const double *s, double *z0,
                                           double *z1)
{
    for (int k = 0; k < n; k++) {
        uint64_t b;
        memcpy(&b, &s[k], sizeof b);
        double f = sqrt(-2.0 * pp_det_log_normal(b, 0) / s[k]);
        z0[k] = u[k] * f;
        if (z1)
            z1[k] = v[k] * f;
    }
}

// z0[k] = pp_rand_normal(seed, tid[k], idx[k]) for k < n ≤ PP_RAND_BATCH_MAX (n a multiple of 16
// runs fastest) and, where z1 is not NULL, z1[k] the pair's other value (pp_rand_normal_pair's
// z[1]); the cheap half by f.us (else Philox by f.words), the rejected lists by f.rejected, the
// costly half by f.z (each NULL: inline). The cheap half of draw 0 of every entry side by side;
// then the rejected entries gathered into a compact list and the cheap half of their draw 1 tried
// side by side, and so on (with p = 1 − π/4 rejected per draw, about 1/(1 − p) ≈ 1.27 attempts
// per entry); then the costly half (the log, a division, a square root) once per entry, on the
// accepted attempt's u, v and s, with no lane wasted on a rejected attempt. The same attempts in
// the same order per entry as pp_rand_normal_pair, and the accepted one's operations, so the same
// bits (tests/test_random_lanes.c).
#if defined(__GNUC__) && !defined(__clang__)
// GCC (-O1, the sanitizer build) cannot see that pp_polar_us_lanes filled the acc entries the
// rejected function reads
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
PP_RAND_LANES_INLINE void pp_rand_normal_batch(uint64_t seed, const uint32_t *tid, const uint64_t *idx, int n,
                                               pp_rand_lanes_fns f, double *z0, double *z1)
{
    int acc[PP_RAND_BATCH_MAX], pend[PP_RAND_BATCH_MAX];
    uint32_t pt[PP_RAND_BATCH_MAX];
    uint64_t pi[PP_RAND_BATCH_MAX];
    double u[PP_RAND_BATCH_MAX], v[PP_RAND_BATCH_MAX], s[PP_RAND_BATCH_MAX], pu[PP_RAND_BATCH_MAX],
        pv[PP_RAND_BATCH_MAX], ps[PP_RAND_BATCH_MAX];
    pp_rejected_fn rejected = f.rejected ? f.rejected : pp_rejected_scalar;
    if (f.us)
        f.us(seed, tid, idx, 0, n, u, v, s, acc);
    else
        pp_polar_us_lanes(seed, tid, idx, 0, n, f.words, u, v, s, acc);
    int np = rejected(acc, NULL, n, pend);
    uint32_t d = 1;
    for (; np > 0 && d < PP_RAND_BATCH_DRAWS; d++) {
        // padded to a multiple of 16 with copies of the last entry (their results unused), so
        // the attempts run as whole vectors with no scalar remainder loop; f.us masks its own
        // tail, whole registers of 8 (fewer wasted attempts)
        int nv = f.us ? (np + 7) & ~7 : (np + 15) & ~15;
        for (int j = 0; j < nv; j++) {
            int k = pend[j < np ? j : np - 1];
            pt[j] = tid[k], pi[j] = idx[k];
        }
        if (f.us)
            f.us(seed, pt, pi, d, nv, pu, pv, ps, acc);
        else
            pp_polar_us_lanes(seed, pt, pi, d, nv, f.words, pu, pv, ps, acc);
        // every attempt's u, v and s to its entry, accepted or not: a rejected entry's are
        // overwritten by its accepted attempt's later (or by the placeholder below); no select
        // on acc (GCC made it a branch, mispredicted a fifth of the time)
        for (int j = 0; j < np; j++) {
            int k = pend[j];
            u[k] = pu[j], v[k] = pv[j], s[k] = ps[j];
        }
        np = rejected(acc, pend, np, pend);
    }
    for (int j = 0; j < np; j++)  // still rejected (never, in practice): a valid s for the lanes
        u[pend[j]] = v[pend[j]] = 0.0, s[pend[j]] = 0.5;
    if (f.z)
        f.z(n, u, v, s, z0, z1);
    else
        pp_polar_z_lanes(n, u, v, s, z0, z1);
    for (int j = 0; j < np; j++) {
        double zz[2];
        pp_rand_normal_pair_from(seed, tid[pend[j]], idx[pend[j]], d, zz);
        z0[pend[j]] = zz[0];
        if (z1)
            z1[pend[j]] = zz[1];
    }
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

// z[k] = pp_rand_normal(seed, tensor_id, i0 + k) for k < n ≤ PP_RAND_BATCH_MAX: one tensor's
// consecutive elements through pp_rand_normal_batch with the lane functions f (each NULL: inline).
PP_RAND_LANES_INLINE void pp_rand_normal_range(uint64_t seed, uint32_t tensor_id, int64_t i0, int n,
                                               pp_rand_lanes_fns f, double *z)
{
    uint32_t tid[PP_RAND_BATCH_MAX];
    uint64_t idx[PP_RAND_BATCH_MAX];
    for (int k = 0; k < n; k++)
        tid[k] = tensor_id, idx[k] = (uint64_t)(i0 + k);
    pp_rand_normal_batch(seed, tid, idx, n, f, z, NULL);
}

// Rows of a tensor drawn in pairs (pp_rand_normal_pair: elements 2j and 2j + 1 take the two
// values of counter j), for ns tensors tid0, tid0 + 1, ... and the w consecutive elements i0 ..
// i0 + w − 1 of each (i0 ≥ 0): z[s·w + l] = value (i0 + l) mod 2 of pair ⌊(i0 + l)/2⌋ of tensor
// tid0 + s, the same bits. One batch of every row's pairs (ns·(⌊w/2⌋ + 1) ≤ PP_RAND_BATCH_MAX),
// both values of each used: half the attempts of w single draws.
#define PP_RAND_PAIR_ROWS_MAX(w) ((w) / 2 + 1)  // pairs per row at most
PP_RAND_LANES_INLINE void pp_rand_normal_pair_rows(uint64_t seed, uint32_t tid0, int ns, int64_t i0, int w,
                                                   pp_rand_lanes_fns f, double *z)
{
    uint32_t tid[PP_RAND_BATCH_MAX];
    uint64_t idx[PP_RAND_BATCH_MAX];
    double z0[PP_RAND_BATCH_MAX], z1[PP_RAND_BATCH_MAX];
    int64_t j0 = i0 >> 1;
    int np = (int)(((i0 + w - 1) >> 1) - j0 + 1);
    for (int s = 0; s < ns; s++)
        for (int p = 0; p < np; p++)
            tid[s * np + p] = tid0 + (uint32_t)s, idx[s * np + p] = (uint64_t)(j0 + p);
    pp_rand_normal_batch(seed, tid, idx, ns * np, f, z0, z1);
    int odd = (int)(i0 & 1);
    for (int s = 0; s < ns; s++)
        for (int l = 0; l < w; l++) {
            int p = s * np + ((l + odd) >> 1);
            z[s * w + l] = (l + odd) & 1 ? z1[p] : z0[p];
        }
}

#endif
