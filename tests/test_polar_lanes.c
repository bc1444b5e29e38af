// test_polar_lanes.c — the polar attempt's halves side by side (kernels/cpu/polar_lanes.h) at
// every x86-64 level against their scalar definitions, bit for bit: the lanes' log (Dekker's
// product as an FMA) against pp_det_log_normal on millions of s in [2^-106, 1) and on every
// boundary of the reduction (m around RN(√2), m near 1, powers of two); the cheap half (Philox in
// 64-bit lanes, u, v, s, s < 1) against pp_polar_us_lanes's inline definition, the costly half
// (both values of the pair, and the first alone) against pp_polar_z_lanes's, and those against
// pp_polar_pair_try, over counts 0..300 (tails of every width), random counters and draws; and
// pp_rand_normal_batch on elements whose draws 0..k − 1 are all rejected (chains found by search,
// k up to 6 and more) against pp_rand_normal_pair.
// Run: make build/rel/tests/test_polar_lanes && build/rel/tests/test_polar_lanes
#include "test_util.h"

#include "cpu/polar_lanes.h"
#include "cpu/reject_lanes.h"
#include "random_lanes.h"

static const pp_isa levels[] = {PP_ISA_AVX512, PP_ISA_AVX2, PP_ISA_BASELINE};
#define N_LEVELS 3

static int same(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

// A batch of s values for the log test: kind 0 uniform in [2^-106, 1) by exponent, kind 1 the
// uniform s of the polar method itself (u² + v² from random u, v), kind 2 boundaries.
#define LOG_BATCH 1000

static int det_log_level(pp_det_log_lanes_fn fn, const double *x, int n)
{
    double y[LOG_BATCH];
    int bad = 0;
    fn(n, x, y);
    for (int k = 0; k < n; k++) {
        uint64_t b;
        memcpy(&b, &x[k], sizeof b);
        double w = pp_det_log_normal(b, 0);
        if (!same(y[k], w) && bad++ < 5)
            pp_test_print_double("s", x[k]), pp_test_print_double("lanes", y[k]), pp_test_print_double("scalar", w);
    }
    return bad;
}

static void det_log_lanes_bit_identical(void **state)
{
    (void)state;
    pp_test_rng rng = {pp_test_seed()};
    double x[LOG_BATCH];
    int bad = 0;
    long checked = 0;
    // boundaries: m = RN(√2)'s bits ± 600 ulps, m = 1 ± 600 ulps (a = m − 1 tiny: q near 0),
    // m = 2 − 600 ulps .. 2, with exponents −106 .. 0 (s in [2^-106, 1) and beyond to 2)
    for (int e = -106; e <= 0; e++) {
        static const uint64_t centres[] = {UINT64_C(0x3FF6A09E667F3BCD), UINT64_C(0x3FF0000000000000),
                                           UINT64_C(0x3FFFFFFFFFFFFFFF) - 600};
        for (int c = 0; c < 3; c++) {
            int n = 0;
            for (int64_t d = -600; d < 600 && n < LOG_BATCH; d++) {
                uint64_t b = centres[c] + (uint64_t)d;
                if ((b >> 52) != 0x3FF)  // stay in [1, 2) before the scaling by 2^e
                    continue;
                double m;
                memcpy(&m, &b, sizeof m);
                x[n++] = ldexp(m, e);
            }
            for (int li = 0; li < N_LEVELS; li++)
                bad += det_log_level(pp_det_log_lanes_for(levels[li]), x, n);
            checked += n;
        }
    }
    // millions of random s (the count not a multiple of any width: tails every batch)
    long reps = (long)pp_test_iters(2000);
    for (long r = 0; r < reps; r++) {
        int n = LOG_BATCH - (int)(r % 13);
        for (int k = 0; k < n; k++) {
            if (k % 2) {  // uniform exponent in [-106, -1], uniform significand
                double m = 1.0 + pp_test_rng_unit(&rng);
                x[k] = ldexp(m < 2.0 ? m : 1.0, -(int)(pp_test_rng_next(&rng) % 106) - 1);
            } else {  // the polar method's s: u² + v² < 1
                double u = 2.0 * pp_test_rng_unit(&rng) - 1.0, v = 2.0 * pp_test_rng_unit(&rng) - 1.0;
                double s = u * u + v * v;
                x[k] = s > 0x1p-106 && s < 1.0 ? s : 0.5;
            }
        }
        for (int li = 0; li < N_LEVELS; li++)
            bad += det_log_level(pp_det_log_lanes_for(levels[li]), x, n);
        checked += n;
    }
    printf("det_log_lanes_bit_identical: %ld values at each of %d levels\n", checked, N_LEVELS);
    if (bad)
        pp_test_report_seed();
    assert_int_equal(bad, 0);
}

// The halves at each level against the inline definitions (pp_polar_us_lanes with Philox inline,
// pp_polar_z_lanes), every count 0..300 (AVX-512's masked tails, AVX2's scalar ones).
#define HALVES_MAX 300

static void polar_halves_bit_identical(void **state)
{
    (void)state;
    pp_test_rng rng = {pp_test_seed() ^ 0x5A5A};
    uint32_t tid[HALVES_MAX];
    uint64_t idx[HALVES_MAX];
    double u0[HALVES_MAX], v0[HALVES_MAX], s0[HALVES_MAX], z0[HALVES_MAX], w0[HALVES_MAX], u1[HALVES_MAX],
        v1[HALVES_MAX], s1[HALVES_MAX], z1[HALVES_MAX], w1[HALVES_MAX], sr[HALVES_MAX];
    int a0[HALVES_MAX], a1[HALVES_MAX], bad = 0, rejected = 0;
    int reps = (int)pp_test_iters(3);
    for (int rep = 0; rep < reps; rep++)
        for (int n = 0; n <= HALVES_MAX; n++) {
            uint64_t seed = pp_test_rng_next(&rng);
            uint32_t d = rep == 0 ? 0 : (uint32_t)(pp_test_rng_next(&rng) % (rep == 1 ? 4 : 0xFFFFFFFFu));
            for (int k = 0; k < n; k++) {
                uint64_t r = pp_test_rng_next(&rng);
                // consecutive elements of one tensor (the emulation's), or anything (high words too)
                tid[k] = k % 3 ? 0x4E000000u + (uint32_t)(k / 16) : (uint32_t)r;
                idx[k] = k % 3 ? (uint64_t)(n * 7 + k) : pp_test_rng_next(&rng);
            }
            pp_polar_us_lanes(seed, tid, idx, d, n, NULL, u0, v0, s0, a0);
            for (int k = 0; k < n; k++)  // the costly half's input: an accepted s (as the batch passes)
                sr[k] = s0[k], s0[k] = a0[k] ? s0[k] : 0.5, rejected += !a0[k];
            pp_polar_z_lanes(n, u0, v0, s0, z0, w0);
            for (int k = 0; k < n; k++) {  // the inline halves against pp_polar_pair_try itself
                double zz[2] = {0.0, 0.0};
                int acc = pp_polar_pair_try(pp_philox_element(seed, tid[k], idx[k], d), zz);
                if ((acc != a0[k] || (acc && (!same(zz[0], z0[k]) || !same(zz[1], w0[k])))) && bad++ < 5)
                    fprintf(stderr, "inline halves vs pp_polar_pair_try: n %d entry %d\n", n, k);
            }
            for (int li = 0; li < N_LEVELS; li++) {
                pp_polar_us_fn us = pp_polar_us_for(levels[li]);
                pp_polar_z_fn zf = pp_polar_z_for(levels[li]);
                if (us) {
                    us(seed, tid, idx, d, n, u1, v1, s1, a1);
                    for (int k = 0; k < n; k++) {
                        if ((!same(u1[k], u0[k]) || !same(v1[k], v0[k]) || !same(s1[k], sr[k]) || a1[k] != a0[k]) &&
                            bad++ < 5)
                            fprintf(stderr, "us %s: n %d entry %d tid %u idx %llu d %u\n", pp_isa_name(levels[li]),
                                    n, k, tid[k], (unsigned long long)idx[k], d);
                    }
                }
                if (zf) {
                    // both values (pairs), then the first alone (z1 NULL: v not read)
                    zf(n, u0, v0, s0, z1, w1);
                    for (int k = 0; k < n; k++)
                        if ((!same(z1[k], z0[k]) || !same(w1[k], w0[k])) && bad++ < 5) {
                            fprintf(stderr, "z pairs %s: n %d entry %d\n", pp_isa_name(levels[li]), n, k);
                            pp_test_print_double("lanes", w1[k]), pp_test_print_double("inline", w0[k]);
                        }
                    zf(n, u0, NULL, s0, z1, NULL);
                    for (int k = 0; k < n; k++)
                        if (!same(z1[k], z0[k]) && bad++ < 5) {
                            fprintf(stderr, "z %s: n %d entry %d\n", pp_isa_name(levels[li]), n, k);
                            pp_test_print_double("lanes", z1[k]), pp_test_print_double("inline", z0[k]);
                        }
                }
            }
        }
    assert_true(rejected > 1000);
    if (bad)
        pp_test_report_seed();
    assert_int_equal(bad, 0);
}

// Elements whose first k draws are all rejected, found by search: the batch's retries then run
// k rounds, the last ones with a handful of entries (tails of one lane).
static int rejected_run(uint64_t seed, uint32_t tid, uint64_t i)
{
    double z;
    int k = 0;
    while (!pp_polar_try(pp_philox_element(seed, tid, i, (uint32_t)k), &z))
        k++;
    return k;
}

static void batch_long_rejection_chains(void **state)
{
    (void)state;
    uint64_t seed = pp_test_seed();
    enum { N = PP_RAND_BATCH_MAX };
    uint32_t tid[N];
    uint64_t idx[N];
    double z[N], z1[N];
    int n = 0, longest = 0;
    // chains of 3 or more (probability 0.215^3 ≈ 1%), the first 200, and every one of 6 or more
    // (≈ 1e-4) among 400,000 elements, up to N − 3 in all
    for (uint64_t i = 0; n < N - 3 && i < 400000; i++) {
        int k = rejected_run(seed, 0x4E000007u, i);
        if (k >= 6 || (k >= 3 && n < 200)) {
            tid[n] = 0x4E000007u, idx[n] = i, n++;
            longest = k > longest ? k : longest;
        }
    }
    assert_true(n >= 40 && longest >= 6);
    tid[n] = 1, idx[n] = 0, n++;  // and a few that are most likely accepted at once
    tid[n] = 2, idx[n] = 0, n++;
    tid[n] = 3, idx[n] = 0, n++;
    int bad = 0;
    for (int li = 0; li <= N_LEVELS; li++) {
        pp_rand_lanes_fns f = li < N_LEVELS ? pp_rand_lanes_fns_for(levels[li]) : (pp_rand_lanes_fns){0};
        for (int m = 1; m <= n; m += m < 20 ? 1 : 17) {  // counts with tails of every width
            pp_rand_normal_batch(seed, tid, idx, m, f, z, m % 2 ? z1 : NULL);
            for (int k = 0; k < m; k++) {
                double w[2];
                pp_rand_normal_pair(seed, tid[k], idx[k], w);
                if ((!same(z[k], w[0]) || (m % 2 && !same(z1[k], w[1]))) && bad++ < 5)
                    fprintf(stderr, "chain level %d: element %llu (run %d)\n", li, (unsigned long long)idx[k],
                            rejected_run(seed, tid[k], idx[k]));
            }
        }
    }
    printf("batch_long_rejection_chains: %d elements, longest run of rejected draws %d\n", n - 3, longest);
    if (bad)
        pp_test_report_seed();
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(det_log_lanes_bit_identical),
        cmocka_unit_test(polar_halves_bit_identical),
        cmocka_unit_test(batch_long_rejection_chains),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
