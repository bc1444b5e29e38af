// test_opmath_round.c — pp_opmath_round against pp_round, bit for bit: for fp16 and bf16, in the
// binades around each format's edges (subnormal range, smallest normal, largest finite,
// overflow), every kept significand with the dropped bits below, at and above the tie; special
// patterns; and random patterns everywhere.
// Run: make build/rel/tests/test_opmath_round && build/rel/tests/test_opmath_round
#include "test_util.h"

#include "core/opmath_round.h"

// Checks x and reports the first few mismatches; returns 1 on a mismatch.
static int check(pp_format_id f, uint32_t u, int *shown)
{
    float x;
    memcpy(&x, &u, sizeof x);
    double want = pp_round(f, (double)x, PP_RND_NE, 0), got = pp_opmath_round(f, x);
    if (pp_test_same_bits(got, want))
        return 0;
    if ((*shown)++ < 5)
        fprintf(stderr, "FAIL pp_opmath_round(%s, 0x%08x): got %a, pp_round gives %a\n", pp_format_get(f).name,
                (unsigned)u, got, want);
    return 1;
}

static void opmath_round_edges_exhaustive(void **state)
{
    (void)state;
    // binary32 exponent fields: fp16's subnormals and smallest normal (2^−25 .. 2^−13), its
    // largest binades (2^14, 2^15, 2^16), bf16's (= binary32's) subnormals, smallest normals and
    // largest binade, and 1.
    static const int exps[] = {102, 103, 111, 112, 113, 114, 141, 142, 143, 0, 1, 2, 254, 127};
    // every kept significand (bf16: the top 7 bits of binary32's 23, fp16: the top 10) with
    // the dropped bits just below, at and above the tie, zero, one and all ones
    static const uint32_t low_b[] = {0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF};
    static const uint32_t low_h[] = {0x0000, 0x0001, 0x0FFF, 0x1000, 0x1001, 0x1FFF};
    int bad = 0, shown = 0;
    for (int f = 0; f < 2; f++) {
        pp_format_id F = f ? PP_FMT_BF16 : PP_FMT_FP16;
        int kept = f ? 7 : 10, drop = 23 - kept;
        for (size_t k = 0; k < sizeof exps / sizeof exps[0]; k++)
            for (uint32_t hi = 0; hi < (1u << kept); hi++)
                for (int l = 0; l < 6; l++)
                    for (uint32_t s = 0; s < 2; s++)
                        bad += check(F, s << 31 | (uint32_t)exps[k] << 23 | hi << drop | (f ? low_b[l] : low_h[l]),
                                     &shown);
    }
    assert_int_equal(bad, 0);
}

static void opmath_round_random_and_special(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() ^ 0x0A7Bu};
    int bad = 0, shown = 0;
    for (int f = 0; f < 2; f++) {
        pp_format_id F = f ? PP_FMT_BF16 : PP_FMT_FP16;
        static const uint32_t sp[] = {0, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00001u,
                                      0x7F7FFFFFu, 0x7F7F8000u, 0x7F7F7FFFu, 0x477FE000u, 0x477FF000u,
                                      0x477FEFFFu, 0x38800000u, 0x387FFFFFu, 0x33000000u, 0x00000001u};
        for (size_t k = 0; k < sizeof sp / sizeof sp[0]; k++)
            bad += check(F, sp[k], &shown) + check(F, sp[k] ^ 0x80000000u, &shown);
        for (uint64_t i = 0; i < pp_test_iters(1u << 20); i++)
            bad += check(F, (uint32_t)pp_test_rng_next(&r), &shown);
    }
    if (bad)
        pp_test_report_seed();
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(opmath_round_edges_exhaustive),
        cmocka_unit_test(opmath_round_random_and_special),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
