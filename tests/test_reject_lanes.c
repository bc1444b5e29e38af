// test_reject_lanes.c — the rejected lists of every x86-64 level (cpu/reject_lanes.h) against
// the definition, pp_rejected_scalar: hand-made masks (none, all, alternate, one lane at each
// place of a register, the tails of every count), then random ones of every count 0..256 with
// and without src, out of place and in place; and that nothing at or past n is written.
// Run: make build/rel/tests/test_reject_lanes && build/rel/tests/test_reject_lanes
#include "test_util.h"

#include "cpu/reject_lanes.h"

static const struct {
    pp_isa isa;
    const char *name;
} levels[3] = {{PP_ISA_AVX512, "avx512"}, {PP_ISA_AVX2, "avx2"}, {PP_ISA_BASELINE, "baseline"}};

#define N PP_RAND_BATCH_MAX
#define GUARD 32  // entries past n that must keep their fill

// One case: fn against the definition, out of place (src NULL and src given) and in place.
// Returns the number of differences (printed, the first 10).
static int check(pp_rejected_fn fn, const char *level, const int *acc, const int *src, int n)
{
    int want[N], got[N + GUARD], inpl[N + GUARD], bad = 0;
    for (int pass = 0; pass < 3; pass++) {
        const int *s = pass == 0 ? NULL : src;
        int r0 = pp_rejected_scalar(acc, s, n, want), r1;
        int *out = pass == 2 ? inpl : got;
        for (int j = 0; j < N + GUARD; j++)
            out[j] = j < n && pass == 2 ? src[j] : -7;
        r1 = fn(acc, pass == 2 ? out : s, n, out);
        int diff = r1 != r0;
        for (int j = 0; j < r0 && !diff; j++)
            diff = out[j] != want[j];
        for (int j = n; j < N + GUARD && !diff; j++)  // nothing written at or past n
            diff = out[j] != -7;
        if (diff && bad++ < 10)
            fprintf(stderr, "rejected_%s: n %d, pass %d (0: src NULL, 1: src, 2: in place): count %d, want %d\n",
                    level, n, pass, r1, r0);
    }
    return bad;
}

static void rejected_hand_masks(void **state)
{
    (void)state;
    int acc[N], src[N], bad = 0;
    for (int j = 0; j < N; j++)
        src[j] = 1000 + 3 * j;
    for (int li = 0; li < 3; li++) {
        pp_rejected_fn fn = pp_rejected_for(levels[li].isa);
        for (int n = 0; n <= 40; n++)
            for (int pat = 0; pat < 4 + 16; pat++) {
                for (int j = 0; j < n; j++)  // 0: none rejected, 1: all, 2, 3: alternate, then lane pat − 4 alone
                    acc[j] = pat == 0 ? 1 : pat == 1 ? 0 : pat < 4 ? (j + pat) % 2 : (j % 16 != pat - 4);
                bad += check(fn, levels[li].name, acc, src, n);
            }
    }
    assert_int_equal(bad, 0);
}

static void rejected_random_masks(void **state)
{
    (void)state;
    pp_test_rng rng = {.s = pp_test_seed()};
    int acc[N], src[N], bad = 0;
    for (int rep = 0; rep < (int)pp_test_iters(20); rep++)
        for (int n = 0; n <= N; n++) {
            int p = (int)(pp_test_rng_next(&rng) % 5);  // rejected with probability p/4
            for (int j = 0; j < n; j++) {
                acc[j] = (int)(pp_test_rng_next(&rng) % 4) >= p;
                src[j] = (int)(pp_test_rng_next(&rng) % 100000);
            }
            for (int li = 0; li < 3; li++)
                bad += check(pp_rejected_for(levels[li].isa), levels[li].name, acc, src, n);
        }
    if (bad)
        pp_test_report_seed();
    assert_int_equal(bad, 0);
}

// A non-zero acc other than 1 counts as accepted (acc is a flag, any non-zero value).
static void rejected_any_nonzero_accepts(void **state)
{
    (void)state;
    int acc[N], src[N], bad = 0;
    for (int j = 0; j < N; j++)
        acc[j] = j % 3 == 0 ? 0 : j % 3 == 1 ? -1 : 0x40000000, src[j] = j;
    for (int li = 0; li < 3; li++)
        bad += check(pp_rejected_for(levels[li].isa), levels[li].name, acc, src, N);
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rejected_hand_masks),
        cmocka_unit_test(rejected_random_masks),
        cmocka_unit_test(rejected_any_nonzero_accepts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
