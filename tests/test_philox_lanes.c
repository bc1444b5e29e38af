// test_philox_lanes.c — Philox4x32-10 side by side at each x86-64 level (cpu/philox_lanes.h)
// against pp_philox4x32_10 word for word: Random123's known-answer counters and keys in every
// lane position, and random counters and keys at every count 0..70 (whole registers of 16 and 8
// and the scalar tail), outputs written to unaligned offsets. A level this CPU lacks runs the
// widest below it (said on stdout).
// Run: make build/rel/tests/test_philox_lanes && build/rel/tests/test_philox_lanes
#include "test_util.h"

#include "cpu/philox_lanes.h"

#define NMAX 70

// n counters through fn against the scalar definition; returns the number of wrong lanes.
static int check(pp_philox_words_fn fn, const char *level, pp_philox4x32_key key, const uint32_t *c0,
                 const uint32_t *c1, const uint32_t *c2, uint32_t d, int n)
{
    uint32_t buf[4][NMAX + 1];
    uint32_t *const w[4] = {buf[0] + 1, buf[1] + 1, buf[2] + 1, buf[3] + 1};  // unaligned on purpose
    fn(key, c0, c1, c2, d, n, w);
    int bad = 0;
    for (int k = 0; k < n; k++) {
        pp_philox4x32_ctr c = {{c0[k], c1[k], c2[k], d}};
        pp_philox4x32_ctr y = pp_philox4x32_10(c, key);
        for (int j = 0; j < 4; j++)
            if (w[j][k] != y.v[j] && bad++ < 10)
                fprintf(stderr, "philox_lanes (%s): n %d, lane %d, word %d: 0x%08x, want 0x%08x (ctr %08x %08x %08x %08x, "
                        "key %08x %08x)\n", level, n, k, j, w[j][k], y.v[j], c0[k], c1[k], c2[k], d, key.v[0], key.v[1]);
    }
    return bad;
}

static const struct {
    pp_isa isa;
    const char *name;
} levels[] = {{PP_ISA_AVX512, "avx512"}, {PP_ISA_AVX2, "avx2"}, {PP_ISA_BASELINE, "baseline"}, {PP_ISA_AUTO, "auto"}};

// Random123's kat_vectors for Philox4x32-10 (also in test_philox.c), each in every lane of a
// 16- or 8-wide register among other counters: the words known, not only equal to the scalar.
static void philox_lanes_known_answers(void **state)
{
    (void)state;
    static const uint32_t kat[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d, 0x41c83b0e, 0xa20bc7c6,
         0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09, 0x94fdcceb, 0x5001e420,
         0x24126ea1}};
    for (size_t li = 0; li < sizeof levels / sizeof levels[0]; li++) {
        pp_philox_words_fn fn = pp_philox_words_for(levels[li].isa);
        for (int v = 0; v < 3; v++)
            for (int pos = 0; pos < 16; pos++) {
                uint32_t c0[16], c1[16], c2[16], buf[4][16];
                uint32_t *const w[4] = {buf[0], buf[1], buf[2], buf[3]};
                for (int k = 0; k < 16; k++)
                    c0[k] = (uint32_t)k * 77u, c1[k] = ~(uint32_t)k, c2[k] = (uint32_t)k << 20;
                c0[pos] = kat[v][0], c1[pos] = kat[v][1], c2[pos] = kat[v][2];
                pp_philox4x32_key key = {{kat[v][4], kat[v][5]}};
                fn(key, c0, c1, c2, kat[v][3], 16, w);
                for (int j = 0; j < 4; j++)
                    if (buf[j][pos] != kat[v][6 + j]) {
                        fprintf(stderr, "philox_lanes_known_answers (%s): vector %d, lane %d, word %d: 0x%08x, want "
                                "0x%08x\n", levels[li].name, v, pos, j, buf[j][pos], kat[v][6 + j]);
                        fail();
                    }
            }
    }
}

static void philox_lanes_equal_scalar(void **state)
{
    (void)state;
    int bad = 0;
    for (size_t li = 0; li < sizeof levels / sizeof levels[0]; li++) {
        if (levels[li].isa != PP_ISA_AUTO && pp_isa_resolve(levels[li].isa) != levels[li].isa)
            printf("philox_lanes: this CPU lacks %s, runs %s\n", levels[li].name,
                   pp_isa_name(pp_isa_resolve(levels[li].isa)));
        pp_philox_words_fn fn = pp_philox_words_for(levels[li].isa);
        pp_test_rng rng = {pp_test_seed() + li};
        for (int rep = 0; rep < (int)pp_test_iters(20); rep++)
            for (int n = 0; n <= NMAX; n++) {
                uint32_t c0[NMAX], c1[NMAX], c2[NMAX];
                for (int k = 0; k < n; k++) {
                    uint64_t r = pp_test_rng_next(&rng);
                    c0[k] = (uint32_t)r, c1[k] = (uint32_t)(r >> 32), c2[k] = (uint32_t)pp_test_rng_next(&rng);
                }
                uint64_t kr = pp_test_rng_next(&rng);
                pp_philox4x32_key key = {{(uint32_t)kr, (uint32_t)(kr >> 32)}};
                bad += check(fn, levels[li].name, key, c0, c1, c2, (uint32_t)pp_test_rng_next(&rng), n);
            }
    }
    if (bad)
        pp_test_report_seed();
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(philox_lanes_known_answers),
        cmocka_unit_test(philox_lanes_equal_scalar),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
