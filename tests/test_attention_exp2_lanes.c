// test_attention_exp2_lanes.c — the CPU device's vector exponentials of the flash softmax
// (kernels/cpu/attention_device.c, pp_attn_cpu_exp2: p_i = pp_attn_exp2f(fmaf(s_i, a, b)) in
// AVX-512 and AVX2 lanes) against the scalar statements, bit for bit, at every x86-64 level this
// CPU runs: hand-computed powers of two (exact, the overflow to Inf, the underflow through the
// binary32 subnormals and the tie at 2^−150), special values (±0, ±Inf, NaN payloads in s and in b),
// the clamp's edges, every run length 0 … 131 (the masked and scalar tails), and random inputs.
// Run: build/rel/tests/test_attention_exp2_lanes
#include <math.h>
#include <string.h>

#include "test_util.h"

#include "attention.h"
#include "cpu/attention_device.h"

static const pp_isa LEVELS[] = {PP_ISA_AVX512, PP_ISA_AVX2, PP_ISA_BASELINE};

static float f32(uint32_t bits)
{
    float x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

static uint32_t bits32(float x)
{
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

// Every level's p for s[0..n) against the scalar statements; returns the mismatches (printed,
// at most 10).
static int check_run(const float *s, float a, float b, int64_t n)
{
    float p[160], want[160];
    int bad = 0;
    for (int64_t i = 0; i < n; i++)
        want[i] = pp_attn_exp2f(fmaf(s[i], a, b));
    for (size_t v = 0; v < sizeof LEVELS / sizeof *LEVELS; v++) {
        memset(p, 0x5A, sizeof p);
        pp_attn_cpu_exp2(LEVELS[v], s, a, b, p, n);
        for (int64_t i = 0; i < n; i++)
            if (bits32(p[i]) != bits32(want[i]) && bad++ < 10)
                fprintf(stderr, "  exp2 lanes (%s), lane %lld of %lld: s = %a, a = %a, b = %a: got %a (0x%08x), "
                        "want %a (0x%08x)\n", pp_isa_name(LEVELS[v]), (long long)i, (long long)n, (double)s[i],
                        (double)a, (double)b, (double)p[i], bits32(p[i]), (double)want[i], bits32(want[i]));
        for (int64_t i = n; i < 160; i++)  // nothing past the run is written
            if (bits32(p[i]) != 0x5A5A5A5Au && bad++ < 10)
                fprintf(stderr, "  exp2 lanes (%s): wrote lane %lld past the run of %lld\n", pp_isa_name(LEVELS[v]),
                        (long long)i, (long long)n);
    }
    return bad;
}

// 2^x of hand-computed x (a = 1, b = 0: the argument is s itself), in every lane position.
static void exp2_lanes_exact_powers(void **state)
{
    (void)state;
    static const struct {
        float x;
        uint32_t want;
    } C[] = {
        {0.0f, 0x3F800000u},          // 1
        {-0.0f, 0x3F800000u},         // 1
        {-1.0f, 0x3F000000u},         // 0.5
        {10.0f, 0x44800000u},         // 1024
        {127.0f, 0x7F000000u},        // 2^127, the largest power
        {128.0f, 0x7F800000u},        // overflow: +Inf
        {150.0f, 0x7F800000u},        // the clamp's top
        {1e30f, 0x7F800000u},         // clamped to 150: +Inf
        {-126.0f, 0x00800000u},       // the smallest normal
        {-127.0f, 0x00400000u},       // subnormal
        {-149.0f, 0x00000001u},       // the smallest subnormal
        {-150.0f, 0x00000000u},       // 2^−150: the tie between 0 and 2^−149, to even (0)
        {-160.0f, 0x00000000u},       // the clamp's bottom
        {-1e30f, 0x00000000u},        // clamped to −160: +0
        {0.5f, 0x3FB504F3u},          // √2 rounded to nearest
    };
    float s[16], p[16];
    int bad = 0;
    for (size_t c = 0; c < sizeof C / sizeof *C; c++)
        for (size_t v = 0; v < sizeof LEVELS / sizeof *LEVELS; v++) {
            for (int i = 0; i < 16; i++)
                s[i] = C[c].x;
            pp_attn_cpu_exp2(LEVELS[v], s, 1.0f, 0.0f, p, 16);
            for (int i = 0; i < 16; i++)
                if (bits32(p[i]) != C[c].want && bad++ < 10)
                    fprintf(stderr, "  exp2 lanes (%s): 2^%a = %a (0x%08x), want 0x%08x\n", pp_isa_name(LEVELS[v]),
                            (double)C[c].x, (double)p[i], bits32(p[i]), C[c].want);
        }
    bad += check_run((const float[]){-INFINITY, INFINITY, -INFINITY, 0.0f}, 1.0f, 0.0f, 4);
    assert_int_equal(bad, 0);
    assert_int_equal(bits32(pp_attn_exp2f(-INFINITY)), 0x00000000u);  // the oracle itself
    assert_int_equal(bits32(pp_attn_exp2f(INFINITY)), 0x7F800000u);
}

// NaN in s (with payloads and signs) and in b: the scalar statements' NaN, bit for bit.
static void exp2_lanes_nan(void **state)
{
    (void)state;
    float s[40];
    for (int i = 0; i < 40; i++)
        s[i] = i % 3 == 0 ? f32(0x7FC00000u | (uint32_t)i) : i % 3 == 1 ? f32(0xFF800001u + (uint32_t)i) : (float)i - 20.0f;
    int bad = check_run(s, 1.4426950f, -3.0f, 40);
    bad += check_run(s, 1.4426950f, f32(0x7FC12345u), 40);   // b NaN: every lane NaN
    bad += check_run(s, 1.4426950f, f32(0xFFA00001u), 33);   // a signalling b, a tail
    bad += check_run(s, f32(0x7FC00077u), 0.0f, 17);
    assert_int_equal(bad, 0);
}

// Every run length 0 … 131 at scores around the softmax's range (s·a − b within [−200, 30]).
static void exp2_lanes_lengths(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed()};
    float s[160];
    int bad = 0;
    for (int64_t n = 0; n <= 131 && bad == 0; n++) {
        for (int64_t i = 0; i < n; i++)
            s[i] = (float)(pp_test_rng_unit(&r) * 60.0 - 40.0);
        bad += check_run(s, 1.4426950f, (float)(pp_test_rng_unit(&r) * 20.0), n);
    }
    if (bad)
        pp_test_report_seed();
    assert_int_equal(bad, 0);
}

// Random bit patterns of s (every binade, subnormals, specials) and of the scalars, and the clamp's
// edges with their neighbours.
static void exp2_lanes_random(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() ^ 0x5EEDu};
    float s[128];
    int bad = 0;
    uint64_t iters = pp_test_iters(2000);
    for (uint64_t it = 0; it < iters && bad == 0; it++) {
        for (int i = 0; i < 128; i++)
            s[i] = f32((uint32_t)pp_test_rng_next(&r));
        float a = it % 2 ? 1.0f : f32((uint32_t)pp_test_rng_next(&r) & 0xBFFFFFFFu);  // |a| < 2
        float b = it % 3 ? (float)(pp_test_rng_unit(&r) * 300.0 - 150.0) : f32((uint32_t)pp_test_rng_next(&r));
        bad += check_run(s, a, b, 1 + (int64_t)(pp_test_rng_next(&r) % 128));
    }
    static const float edges[] = {150.0f, 149.99998f, 150.00002f, -160.0f, -159.99998f, -160.00002f,
                                  127.99999f, 128.0f, -149.5f, -149.50002f, -150.00002f, -126.00001f,
                                  0.49999997f, -0.5f, 1e-45f, -1e-45f, 3.4028235e38f, -3.4028235e38f};
    bad += check_run(edges, 1.0f, 0.0f, (int64_t)(sizeof edges / sizeof *edges));
    bad += check_run(edges, -1.0f, -0.0f, (int64_t)(sizeof edges / sizeof *edges));
    if (bad)
        pp_test_report_seed();
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exp2_lanes_exact_powers),
        cmocka_unit_test(exp2_lanes_nan),
        cmocka_unit_test(exp2_lanes_lengths),
        cmocka_unit_test(exp2_lanes_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
