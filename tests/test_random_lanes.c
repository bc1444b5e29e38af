// test_random_lanes.c — the normals drawn side by side (kernels/random_lanes.h: a tensor's range,
// the batch below, rows drawn in pairs) against pp_rand_normal(_pair) element by element, bit for bit: every count
// 1..16, many elements (so that lanes are rejected at draw 0, and some at draw 1 too), several
// seeds and tensor ids; and pp_det_log_normal against pp_det_log on normal inputs.
// Run: make build/rel/tests/test_random_lanes && build/rel/tests/test_random_lanes
#include "test_util.h"

#include "cpu/philox_lanes.h"
#include "cpu/reject_lanes.h"
#include "random_lanes.h"

// pp_rand_normal_range (one tensor's consecutive elements): every count 1..16, with the inline
// lane functions and with this CPU's level's.
static void rand_normal_lanes_bit_identical(void **state)
{
    (void)state;
    int bad = 0, rejected = 0, rejected_twice = 0;
    uint64_t seeds[3] = {pp_test_seed(), 0, UINT64_MAX};
    const pp_rand_lanes_fns fns[2] = {{0}, pp_rand_lanes_fns_for(PP_ISA_AUTO)};
    for (int si = 0; si < 3; si++)
        for (uint32_t tid = 0x4E000000u; tid < 0x4E000000u + 3; tid++)
            for (int n = 1; n <= 16; n++)
                for (int64_t i0 = 0; i0 < (int64_t)pp_test_iters(400); i0 += n) {
                    double z[16];
                    pp_rand_normal_range(seeds[si], tid, i0, n, fns[(i0 / n) & 1], z);
                    for (int l = 0; l < n; l++) {
                        double want = pp_rand_normal(seeds[si], tid, (uint64_t)(i0 + l)), dummy;
                        rejected += !pp_polar_try(pp_philox_element(seeds[si], tid, (uint64_t)(i0 + l), 0), &dummy);
                        rejected_twice +=
                            !pp_polar_try(pp_philox_element(seeds[si], tid, (uint64_t)(i0 + l), 0), &dummy) &&
                            !pp_polar_try(pp_philox_element(seeds[si], tid, (uint64_t)(i0 + l), 1), &dummy);
                        if (memcmp(&z[l], &want, sizeof want) != 0 && bad++ < 10) {
                            fprintf(stderr, "rand_normal_lanes_bit_identical: seed %llu, tensor %u, element %lld\n",
                                    (unsigned long long)seeds[si], tid, (long long)(i0 + l));
                            pp_test_print_double("lanes", z[l]), pp_test_print_double("scalar", want);
                        }
                    }
                }
    assert_true(rejected > 100 && rejected_twice > 10);  // both continuations are exercised
    if (bad)
        pp_test_report_seed();
    assert_int_equal(bad, 0);
}

// The batch (pp_rand_normal_batch): entries of mixed tensors and elements, every count 1..512 of
// a few shapes (one tensor's consecutive elements; 16 lanes × 16 tensors as the emulation's
// lanes draw them), bit for bit against pp_rand_normal_pair (both values; z1 NULL on every other
// count: the single draws, against z[0] alone); rejections at draws 1 and 2 occur. Philox and the
// rejected lists inline, and by each x86-64 level's functions (cpu/reject_lanes.h).
static int batch_bit_identical(pp_rand_lanes_fns f)
{
    int bad = 0;
    uint64_t seeds[2] = {pp_test_seed(), UINT64_MAX};
    uint32_t tid[PP_RAND_BATCH_MAX];
    uint64_t idx[PP_RAND_BATCH_MAX];
    double z0[PP_RAND_BATCH_MAX], z1[PP_RAND_BATCH_MAX];
    int reps = (int)pp_test_iters(40);
    for (int si = 0; si < 2; si++)
        for (int rep = 0; rep < reps; rep++)
            for (int n = 1; n <= PP_RAND_BATCH_MAX; n += rep % 2 ? 1 : 37) {
                for (int k = 0; k < n; k++) {
                    tid[k] = rep % 2 ? 0x4E000000u + (uint32_t)rep : 0x4E000000u + (uint32_t)(k / 16);
                    idx[k] = rep % 2 ? (uint64_t)(rep * 1000 + k) : (uint64_t)(rep * 16 + k % 16);
                }
                int pairs = n % 2;
                pp_rand_normal_batch(seeds[si], tid, idx, n, f, z0, pairs ? z1 : NULL);
                for (int k = 0; k < n; k++) {
                    double want[2];
                    pp_rand_normal_pair(seeds[si], tid[k], idx[k], want);
                    if ((memcmp(&z0[k], &want[0], sizeof(double)) != 0 ||
                         (pairs && memcmp(&z1[k], &want[1], sizeof(double)) != 0)) &&
                        bad++ < 10) {
                        fprintf(stderr, "rand_normal_batch_bit_identical: seed %llu, tensor %u, element %llu\n",
                                (unsigned long long)seeds[si], tid[k], (unsigned long long)idx[k]);
                        pp_test_print_double("batch", z0[k]), pp_test_print_double("scalar", want[0]);
                        if (pairs)
                            pp_test_print_double("batch z1", z1[k]), pp_test_print_double("scalar z1", want[1]);
                    }
                }
            }
    if (bad)
        pp_test_report_seed();
    return bad;
}

static void rand_normal_batch_bit_identical(void **state)
{
    (void)state;
    const pp_rand_lanes_fns fs[5] = {
        {.words = NULL, .rejected = NULL},
        pp_rand_lanes_fns_for(PP_ISA_AVX512),
        pp_rand_lanes_fns_for(PP_ISA_AVX2),
        pp_rand_lanes_fns_for(PP_ISA_BASELINE),
        {.words = pp_philox_words_for(PP_ISA_AVX512), .rejected = pp_rejected_for(PP_ISA_AVX2)},
    };
    for (int fi = 0; fi < 5; fi++)
        assert_int_equal(batch_bit_identical(fs[fi]), 0);
}

// Rows drawn in pairs (pp_rand_normal_pair_rows, the AdamW synthetic noise's lanes): every row
// width 1..16, odd and even first elements, 1..32 rows, bit for bit against value (i mod 2) of
// pp_rand_normal_pair(⌊i/2⌋), with the inline lane functions and this CPU's level's.
static void rand_normal_pair_rows_bit_identical(void **state)
{
    (void)state;
    const pp_rand_lanes_fns fns[2] = {{0}, pp_rand_lanes_fns_for(PP_ISA_AUTO)};
    uint64_t seed = pp_test_seed();
    double z[32 * 16];
    int bad = 0, checked = 0;
    for (int w = 1; w <= 16; w++)
        for (int ns = 1; ns <= 32; ns += ns < 4 ? 1 : 7)
            for (int64_t i0 = 0; i0 < (int64_t)pp_test_iters(40); i0 += 1 + (i0 % 5)) {
                uint32_t tid0 = 0x4E000000u + (uint32_t)(i0 % 7);
                pp_rand_normal_pair_rows(seed, tid0, ns, i0, w, fns[(w + i0) & 1], z);
                for (int s = 0; s < ns; s++)
                    for (int l = 0; l < w; l++) {
                        uint64_t i = (uint64_t)(i0 + l);
                        double want[2];
                        pp_rand_normal_pair(seed, tid0 + (uint32_t)s, i >> 1, want);
                        checked++;
                        if (memcmp(&z[s * w + l], &want[i & 1], sizeof(double)) != 0 && bad++ < 10) {
                            fprintf(stderr, "pair rows: w %d ns %d i0 %lld row %d lane %d\n", w, ns, (long long)i0,
                                    s, l);
                            pp_test_print_double("rows", z[s * w + l]), pp_test_print_double("pair", want[i & 1]);
                        }
                    }
            }
    assert_true(checked > 10000);
    if (bad)
        pp_test_report_seed();
    assert_int_equal(bad, 0);
}

static void det_log_normal_is_det_log(void **state)
{
    (void)state;
    pp_test_rng rng = {pp_test_seed()};
    const double fixed[] = {0x1p-1022, 0x1.6a09e667f3bccp0, 0x1.6a09e667f3bcdp0, 1.0, 0x1p-106, 0.5, DBL_MAX};
    int bad = 0;
    for (int k = 0; k < (int)pp_test_iters(20000) + 7; k++) {
        double x = k < 7 ? fixed[k] : ldexp(1.0 + pp_test_rng_unit(&rng), (int)(pp_test_rng_next(&rng) % 2000) - 1000);
        uint64_t b;
        memcpy(&b, &x, sizeof b);
        double a = pp_det_log_normal(b, 0), w = pp_det_log(x);
        if (memcmp(&a, &w, sizeof a) != 0 && bad++ < 10)
            pp_test_print_double("x", x), pp_test_print_double("normal", a), pp_test_print_double("det_log", w);
    }
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rand_normal_lanes_bit_identical),
        cmocka_unit_test(rand_normal_batch_bit_identical),
        cmocka_unit_test(rand_normal_pair_rows_bit_identical),
        cmocka_unit_test(det_log_normal_is_det_log),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
