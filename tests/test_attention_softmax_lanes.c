// test_attention_softmax_lanes.c — the CPU device's vector lanes of the unfused softmax
// (kernels/cpu/attention_device.c) against their scalar definitions, bit for bit, at every x86-64
// level this CPU runs: the exponentials pp_attn_cpu_expf (p_i = pp_expf(x_i − m), AVX-512 and AVX2)
// and the probabilities pp_attn_cpu_prob (p_i = pp_attn_store(f, e_i / sum) for bf16, fp16, fp32):
// hand-computed values, special values (±0, ±Inf, NaN payloads in x, in m, in e and in sum), the
// clamp's edges and the overflow and underflow thresholds, ties of the stores, every run length
// 0 … 131 (the masked and scalar tails), in place, and random bit patterns.
// Run: build/rel/tests/test_attention_softmax_lanes
#include <math.h>
#include <string.h>

#include "test_util.h"

#include "attention.h"
#include "cpu/attention_device.h"

static const pp_isa LEVELS[] = {PP_ISA_AVX512, PP_ISA_AVX2, PP_ISA_BASELINE};
static const pp_format_id FORMATS[] = {PP_FMT_BF16, PP_FMT_FP16, PP_FMT_FP32};

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

// Every level's exponentials of x[0..n) against pp_expf(x − m), out of place and in place, and
// nothing written past the run; returns the mismatches (printed, at most 10).
static int check_expf(const float *x, float m, int64_t n)
{
    float p[160], want[160];
    int bad = 0;
    for (int64_t i = 0; i < n; i++)
        want[i] = pp_expf(x[i] - m);
    for (size_t v = 0; v < sizeof LEVELS / sizeof *LEVELS; v++)
        for (int inplace = 0; inplace < 2; inplace++) {
            memset(p, 0x5A, sizeof p);
            if (inplace)
                memcpy(p, x, sizeof(float) * (size_t)n);
            pp_attn_cpu_expf(LEVELS[v], inplace ? p : x, m, p, n);
            for (int64_t i = 0; i < n; i++)
                if (bits32(p[i]) != bits32(want[i]) && bad++ < 10)
                    fprintf(stderr, "  expf lanes (%s%s), lane %lld of %lld: x = %a, m = %a: got %a (0x%08x), want %a "
                            "(0x%08x)\n", pp_isa_name(LEVELS[v]), inplace ? ", in place" : "", (long long)i,
                            (long long)n, (double)x[i], (double)m, (double)p[i], bits32(p[i]), (double)want[i],
                            bits32(want[i]));
            for (int64_t i = n; i < 160; i++)
                if (bits32(p[i]) != 0x5A5A5A5Au && bad++ < 10)
                    fprintf(stderr, "  expf lanes (%s): wrote lane %lld past the run of %lld\n", pp_isa_name(LEVELS[v]),
                            (long long)i, (long long)n);
        }
    return bad;
}

// The same for the probabilities in format f.
static int check_prob(pp_format_id f, const float *e, float sum, int64_t n)
{
    float p[160], want[160];
    int bad = 0;
    for (int64_t i = 0; i < n; i++)
        want[i] = pp_attn_store(f, e[i] / sum);
    for (size_t v = 0; v < sizeof LEVELS / sizeof *LEVELS; v++)
        for (int inplace = 0; inplace < 2; inplace++) {
            memset(p, 0x5A, sizeof p);
            if (inplace)
                memcpy(p, e, sizeof(float) * (size_t)n);
            pp_attn_cpu_prob(LEVELS[v], f, inplace ? p : e, sum, p, n);
            for (int64_t i = 0; i < n; i++)
                if (bits32(p[i]) != bits32(want[i]) && bad++ < 10)
                    fprintf(stderr, "  prob lanes (%s, %s%s), lane %lld of %lld: e = %a, sum = %a: got %a (0x%08x), "
                            "want %a (0x%08x)\n", pp_isa_name(LEVELS[v]), pp_format_get(f).name,
                            inplace ? ", in place" : "", (long long)i, (long long)n, (double)e[i], (double)sum,
                            (double)p[i], bits32(p[i]), (double)want[i], bits32(want[i]));
            for (int64_t i = n; i < 160; i++)
                if (bits32(p[i]) != 0x5A5A5A5Au && bad++ < 10)
                    fprintf(stderr, "  prob lanes (%s): wrote lane %lld past the run of %lld\n", pp_isa_name(LEVELS[v]),
                            (long long)i, (long long)n);
        }
    return bad;
}

// e^(x − m) of hand-computed arguments in every lane position, and the specials.
static void expf_lanes_hand_computed(void **state)
{
    (void)state;
    static const struct {
        float x, m;
        uint32_t want;
    } C[] = {
        {0.0f, 0.0f, 0x3F800000u},        // e^0 = 1
        {-0.0f, 0.0f, 0x3F800000u},       // −0 − 0 = −0: 1
        {5.0f, 5.0f, 0x3F800000u},        // the row's max: 1
        {1.0f, 0.0f, 0x402DF854u},        // e rounded to nearest
        {-1.0f, 0.0f, 0x3EBC5AB2u},       // 1/e rounded to nearest
        {89.0f, 0.0f, 0x7F800000u},       // overflow: +Inf
        {1e30f, 0.0f, 0x7F800000u},       // clamped to 100: +Inf
        {-104.0f, 0.0f, 0x00000000u},     // below the smallest subnormal's half: +0
        {-1e30f, 0.0f, 0x00000000u},      // clamped to −120: +0
        {-100.0f, 0.0f, 0x0000001Bu},     // e^−100 ≈ 26.6·2^−149: subnormal, 27·2^−149
        {0.0f, -INFINITY, 0x7F800000u},   // x − m = +Inf
        {-INFINITY, 0.0f, 0x00000000u},   // −Inf: +0
    };
    float x[16], p[16];
    int bad = 0;
    for (size_t c = 0; c < sizeof C / sizeof *C; c++)
        for (size_t v = 0; v < sizeof LEVELS / sizeof *LEVELS; v++) {
            for (int i = 0; i < 16; i++)
                x[i] = C[c].x;
            pp_attn_cpu_expf(LEVELS[v], x, C[c].m, p, 16);
            for (int i = 0; i < 16; i++)
                if (bits32(p[i]) != C[c].want && bad++ < 10)
                    fprintf(stderr, "  expf lanes (%s): e^(%a − %a) = %a (0x%08x), want 0x%08x\n",
                            pp_isa_name(LEVELS[v]), (double)C[c].x, (double)C[c].m, (double)p[i], bits32(p[i]),
                            C[c].want);
            bad += check_expf(x, C[c].m, 16);
        }
    assert_int_equal(bad, 0);
    assert_int_equal(bits32(pp_expf(-INFINITY)), 0x00000000u);  // the oracle itself
    assert_int_equal(bits32(pp_expf(1.0f)), 0x402DF854u);
}

// NaN in x (payloads, signs, signalling) and in m, Inf − Inf: the scalar statements' NaN.
static void expf_lanes_nan(void **state)
{
    (void)state;
    float x[40];
    for (int i = 0; i < 40; i++)
        x[i] = i % 3 == 0 ? f32(0x7FC00000u | (uint32_t)i) : i % 3 == 1 ? f32(0xFF800001u + (uint32_t)i) : (float)i - 20.0f;
    int bad = check_expf(x, 3.0f, 40);
    bad += check_expf(x, f32(0x7FC12345u), 40);  // m NaN: every lane NaN
    bad += check_expf(x, f32(0xFFA00001u), 33);  // a signalling m, a tail
    bad += check_expf((const float[]){INFINITY, -INFINITY, 1.0f, INFINITY, 0.0f}, INFINITY, 5);
    bad += check_expf((const float[]){INFINITY, -INFINITY, 1.0f, INFINITY, 0.0f}, -INFINITY, 5);
    assert_int_equal(bad, 0);
}

// Every run length 0 … 131 at scores around the softmax's range (x − m within [−110, 0]), and the
// clamp's and thresholds' edges with their neighbours.
static void expf_lanes_lengths_edges(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed()};
    float x[160];
    int bad = 0;
    for (int64_t n = 0; n <= 131 && bad == 0; n++) {
        for (int64_t i = 0; i < n; i++)
            x[i] = (float)(pp_test_rng_unit(&r) * 110.0 - 100.0);
        bad += check_expf(x, (float)(pp_test_rng_unit(&r) * 10.0), n);
    }
    static const float edges[] = {100.0f, 99.99999f, 100.00001f, -120.0f, -119.99999f, -120.00001f,
                                  88.72283935546875f, 88.7228317f, 88.7228394f, -103.972084045410156f,
                                  -103.97208f, -103.97209f, -87.33654f, 0.34657359f, -0.34657359f,
                                  1e-45f, -1e-45f, 3.4028235e38f, -3.4028235e38f, 0.0f, -0.0f};
    int64_t ne = (int64_t)(sizeof edges / sizeof *edges);
    bad += check_expf(edges, 0.0f, ne);
    bad += check_expf(edges, -0.0f, ne);
    bad += check_expf(edges, 1e-38f, ne);
    if (bad)
        pp_test_report_seed();
    assert_int_equal(bad, 0);
}

// Random bit patterns of x (every binade, subnormals, specials) and of m.
static void expf_lanes_random(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() ^ 0xE4Fu};
    float x[128];
    int bad = 0;
    uint64_t iters = pp_test_iters(2000);
    for (uint64_t it = 0; it < iters && bad == 0; it++) {
        for (int i = 0; i < 128; i++)
            x[i] = it % 2 ? f32((uint32_t)pp_test_rng_next(&r)) : (float)(pp_test_rng_unit(&r) * 240.0 - 130.0);
        float m = it % 3 ? (float)(pp_test_rng_unit(&r) * 40.0 - 20.0) : f32((uint32_t)pp_test_rng_next(&r));
        bad += check_expf(x, m, 1 + (int64_t)(pp_test_rng_next(&r) % 128));
    }
    if (bad)
        pp_test_report_seed();
    assert_int_equal(bad, 0);
}

// Probabilities: hand-computed stores (bf16 and fp16 ties to even, fp32 the quotient), specials
// (0/0, x/0, Inf, NaN payloads in e and in sum, ±0), in every format.
static void prob_lanes_hand_computed(void **state)
{
    (void)state;
    float e[16], p[16];
    int bad = 0;
    // 1 + 2^−8 is a bf16 tie (to even 1); 1 + 3·2^−8 one to 1 + 2^−6
    static const struct {
        float e, sum;
        uint32_t bf16;
    } C[] = {
        {0x1.01p0f, 1.0f, 0x3F800000u},
        {0x1.03p0f, 1.0f, 0x3F820000u},
        {0x1.0101p0f, 1.0f, 0x3F810000u},  // just above the tie: up
        {1.0f, 3.0f, 0x3EAB0000u},         // 1/3 rounded to bf16
        {0.0f, 7.0f, 0x00000000u},
        {-0.0f, 7.0f, 0x80000000u},
        {1.0f, 0.0f, 0x7F800000u},         // x/0: +Inf
        {3.3895314e38f, 0.5f, 0x7F800000u},  // overflow in the quotient
        {0x1.fffffep127f, 1.0f, 0x7F800000u},  // the largest binary32 rounds up to Inf in bf16
    };
    for (size_t c = 0; c < sizeof C / sizeof *C; c++)
        for (size_t v = 0; v < sizeof LEVELS / sizeof *LEVELS; v++) {
            for (int i = 0; i < 16; i++)
                e[i] = C[c].e;
            pp_attn_cpu_prob(LEVELS[v], PP_FMT_BF16, e, C[c].sum, p, 16);
            for (int i = 0; i < 16; i++)
                if (bits32(p[i]) != C[c].bf16 && bad++ < 10)
                    fprintf(stderr, "  prob lanes (%s): bf16(%a / %a) = %a (0x%08x), want 0x%08x\n",
                            pp_isa_name(LEVELS[v]), (double)C[c].e, (double)C[c].sum, (double)p[i], bits32(p[i]),
                            C[c].bf16);
            for (size_t f = 0; f < sizeof FORMATS / sizeof *FORMATS; f++)
                bad += check_prob(FORMATS[f], e, C[c].sum, 16);
        }
    float s[40];
    for (int i = 0; i < 40; i++)
        s[i] = i % 4 == 0 ? f32(0x7FC00000u | (uint32_t)i) : i % 4 == 1 ? f32(0xFF800001u + (uint32_t)i)
             : i % 4 == 2 ? (i % 8 == 2 ? INFINITY : 0.0f) : (float)i * 0.37f;
    for (size_t f = 0; f < sizeof FORMATS / sizeof *FORMATS; f++) {
        bad += check_prob(FORMATS[f], s, 3.0f, 40);
        bad += check_prob(FORMATS[f], s, 0.0f, 37);
        bad += check_prob(FORMATS[f], s, INFINITY, 35);
        bad += check_prob(FORMATS[f], s, f32(0x7FC00321u), 40);
        bad += check_prob(FORMATS[f], s, f32(0xFFA00001u), 19);
    }
    assert_int_equal(bad, 0);
}

// Every run length 0 … 131, ties of every format's store, subnormal quotients, random bits.
static void prob_lanes_lengths_random(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() ^ 0x9B0Bu};
    float e[160];
    int bad = 0;
    for (size_t f = 0; f < sizeof FORMATS / sizeof *FORMATS; f++)
        for (int64_t n = 0; n <= 131 && bad == 0; n++) {
            for (int64_t i = 0; i < n; i++)
                e[i] = (float)pp_test_rng_unit(&r);
            bad += check_prob(FORMATS[f], e, 1.0f + (float)(pp_test_rng_unit(&r) * 500.0), n);
        }
    // quotients on the stores' ties (sum 1: e itself), fp16's subnormals and its overflow tie
    for (int i = 0; i < 128; i++) {
        uint32_t hi = (uint32_t)pp_test_rng_next(&r) & 0x7FFF0000u;
        e[i] = f32(hi | (i % 4 == 0 ? 0x8000u : i % 4 == 1 ? 0x1000u : i % 4 == 2 ? 0x7FFFu : 0x18000u));
    }
    for (size_t f = 0; f < sizeof FORMATS / sizeof *FORMATS; f++) {
        bad += check_prob(FORMATS[f], e, 1.0f, 128);
        bad += check_prob(FORMATS[f], (const float[]){65520.0f, 65519.0f, 0x1p-25f, 0x1.8p-24f, 0x1p-15f, 6e-8f,
                                                      -65520.0f, 0x1p-149f, 1e-40f, 70000.0f, 0x1.002p-14f},
                          1.0f, 11);
    }
    uint64_t iters = pp_test_iters(2000);
    for (uint64_t it = 0; it < iters && bad == 0; it++) {
        for (int i = 0; i < 128; i++)
            e[i] = f32((uint32_t)pp_test_rng_next(&r));
        float sum = it % 2 ? (float)(pp_test_rng_unit(&r) * 1000.0) : f32((uint32_t)pp_test_rng_next(&r));
        bad += check_prob(FORMATS[it % 3], e, sum, 1 + (int64_t)(pp_test_rng_next(&r) % 128));
    }
    if (bad)
        pp_test_report_seed();
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(expf_lanes_hand_computed),
        cmocka_unit_test(expf_lanes_nan),
        cmocka_unit_test(expf_lanes_lengths_edges),
        cmocka_unit_test(expf_lanes_random),
        cmocka_unit_test(prob_lanes_hand_computed),
        cmocka_unit_test(prob_lanes_lengths_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
