// test_attention_rowmax_lanes.c — the CPU device's flash row max (kernels/cpu/attention_device.c,
// pp_attn_cpu_rowmax: AVX-512 lanes find the largest value, then the first key equal to it; a NaN
// sends the run to the scalar loop) against the scalar loop "if (s_i > m || s_i != s_i) m = s_i",
// bit for bit, at every x86-64 level this CPU runs: hand-computed runs (−0 before +0 and after it,
// ties, the running m above, equal to and below the run, ±Inf, NaN in the run and as m, the last
// NaN's payload), every run length 0 … 128 (the masked last vector) with the maximum at every
// position, and random runs biased to special values.
// Run: build/rel/tests/test_attention_rowmax_lanes
#include <math.h>
#include <string.h>

#include "test_util.h"

#include "format.h"

#include "cpu/attention_device.h"

static const pp_isa LEVELS[] = {PP_ISA_AVX512, PP_ISA_AVX2, PP_ISA_BASELINE};

#define MAXN 128

static float scalar_max(const float *s, int64_t n, float m)
{
    for (int64_t i = 0; i < n; i++)
        if (s[i] > m || s[i] != s[i])
            m = s[i];
    return m;
}

// Every level against the scalar loop (and want's bits when want_bits is not NULL); returns the
// mismatches, printed (at most 10 per call).
static int check(const float *s, int64_t n, float m, const uint32_t *want_bits, const char *why)
{
    uint32_t want = want_bits ? *want_bits : pp_f32_bits(scalar_max(s, n, m));
    int bad = 0;
    if (want_bits && pp_f32_bits(scalar_max(s, n, m)) != want && bad++ < 10)
        fprintf(stderr, "  %s: the scalar loop gives 0x%08x, the hand-computed value 0x%08x\n", why,
                pp_f32_bits(scalar_max(s, n, m)), want);
    for (size_t v = 0; v < sizeof LEVELS / sizeof *LEVELS; v++) {
        float got = pp_attn_cpu_rowmax(LEVELS[v], s, n, m);
        if (pp_f32_bits(got) != want && bad++ < 10)
            fprintf(stderr, "  %s (%s), n %lld, m %a: got %a (0x%08x), want 0x%08x\n", why, pp_isa_name(LEVELS[v]),
                    (long long)n, (double)m, (double)got, pp_f32_bits(got), want);
    }
    return bad;
}

// ---------------------------------------------------------------------------------------------
// Special values and exact inputs: hand-computed results

static void rowmax_lanes_hand_computed(void **state)
{
    (void)state;
    static const struct {
        uint32_t m;
        int n;
        uint32_t s[4];
        uint32_t want;
        const char *why;
    } cases[] = {
        {0xff800000u, 2, {0x80000000u, 0x00000000u}, 0x80000000u, "-0 then +0: the first, -0"},
        {0xff800000u, 2, {0x00000000u, 0x80000000u}, 0x00000000u, "+0 then -0: the first, +0"},
        {0x80000000u, 1, {0x00000000u}, 0x80000000u, "m -0, run +0: equal, m stays -0"},
        {0x3f800000u, 3, {0x3f800000u, 0x40000000u, 0x40000000u}, 0x40000000u, "tie at 2: 2"},
        {0x40000000u, 2, {0x3f800000u, 0x3f800000u}, 0x40000000u, "m above the run: m"},
        {0xff800000u, 3, {0xff800000u, 0xff800000u, 0xff800000u}, 0xff800000u, "all -Inf: m -Inf"},
        {0xff800000u, 2, {0x3f800000u, 0x7f800000u}, 0x7f800000u, "+Inf wins"},
        {0xff800000u, 3, {0x3f800000u, 0x7fc00001u, 0x40000000u}, 0x7fc00001u, "NaN sticks past a larger key"},
        {0xff800000u, 3, {0x7fc00001u, 0x3f800000u, 0xffc00002u}, 0xffc00002u, "the last NaN wins"},
        {0x7fc00001u, 2, {0x3f800000u, 0x7f800000u}, 0x7fc00001u, "m NaN: stays, no NaN in the run"},
        {0x3f800000u, 0, {0}, 0x3f800000u, "no keys: m"},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (int64_t pos = 0; pos + cases[i].n <= MAXN; pos += 13) {  // the run at every lane offset
            float s[MAXN];
            for (int64_t j = 0; j < MAXN; j++)
                s[j] = -INFINITY;  // the keys before the run: never above m's rule's outcome
            for (int j = 0; j < cases[i].n; j++)
                s[pos + j] = pp_f32_from_bits(cases[i].s[j]);
            int64_t n = pos + cases[i].n;
            bad += check(s, n, pp_f32_from_bits(cases[i].m), &cases[i].want, cases[i].why);
        }
    assert_int_equal(bad, 0);
}

// ---------------------------------------------------------------------------------------------
// Every run length, the maximum at every position (with an equal value of the other zero sign
// after it), and random runs

static uint64_t rng_next(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 11;
}

// A random float, 1 in 8 a special value (±0, ±Inf, NaN, subnormal, huge); 1 in 64 runs may
// carry NaN at all (NaN keys are rare in a row).
static float rand_float(uint64_t *s, int nan_ok)
{
    static const uint32_t special[] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00001u,
                                       0x00000001u, 0x807fffffu, 0x7f7fffffu};
    uint64_t r = rng_next(s);
    if (r % 8 == 0) {
        uint32_t b = special[(r >> 3) % 8];
        return !nan_ok && b == 0x7fc00001u ? 0.0f : pp_f32_from_bits(b);
    }
    return (float)((double)(int64_t)(rng_next(s) % 2001) / 1000.0 - 1.0);  // many ties
}

static void rowmax_lanes_every_length_and_position(void **state)
{
    (void)state;
    int bad = 0;
    for (int64_t n = 0; n <= MAXN; n++)
        for (int64_t at = 0; at < (n ? n : 1); at++) {
            float s[MAXN];
            for (int64_t j = 0; j < n; j++)
                s[j] = (float)(j % 5) - 10.0f;
            if (n) {
                s[at] = 0.0f;
                if (at + 1 < n)
                    s[n - 1] = -0.0f;  // equal to the maximum, later: must not replace it
            }
            bad += check(s, n, -INFINITY, NULL, "max at a position");
            bad += check(s, n, -0.0f, NULL, "m -0 equal to the max");
            bad += check(s, n, -20.0f, NULL, "m below the run");
        }
    assert_int_equal(bad, 0);
}

static void rowmax_lanes_random(void **state)
{
    (void)state;
    uint64_t seed = pp_test_seed();
    int bad = 0;
    for (uint64_t it = 0; it < pp_test_iters(20000) && bad < 10; it++) {
        int64_t n = (int64_t)(rng_next(&seed) % (MAXN + 1));
        int nan_ok = rng_next(&seed) % 64 == 0;
        float s[MAXN];
        for (int64_t j = 0; j < n; j++)
            s[j] = rand_float(&seed, nan_ok);
        float m = rng_next(&seed) % 4 ? -INFINITY : rand_float(&seed, nan_ok);
        bad += check(s, n, m, NULL, "random");
    }
    if (bad)
        fprintf(stderr, "  PRECPROBE_SEED=%llu\n", (unsigned long long)pp_test_seed());
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rowmax_lanes_hand_computed),
        cmocka_unit_test(rowmax_lanes_every_length_and_position),
        cmocka_unit_test(rowmax_lanes_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
