// test_round_exhaustive.c — the named rounding functions (pp_round_<fmt>_<mode>) bit for bit
// against the generic pp_round (via pp_round_from_f32) over structured sweeps of binary32, and the
// binary64 → fp32 ones against the hardware conversion in both rounding directions.
//
// Not all 2^32 inputs: one comparison costs ~5–8 ns here, so all 2^32 binary32 inputs for NE
// alone in tf32, fp16 and bf16 would take 60–100 s (over 6 min for the 15 format × mode pairs).
// Instead, for each of tf32, fp16, bf16, E4M3, E5M2 and NE, TZ, SR:
//   - every one of the 65536 high halves (sign, every exponent, the top 7 fraction bits) with
//     ~140 low halves: every 2^(j−1) + d (d = −3..3, the midpoints of every possible number of
//     dropped bits j = 1..16 and their neighbours), every 2^j − 1 − d (carries), 0..3, and 8
//     fixed hashed patterns. Every binade, both parities of the kept last bit (for bf16 the high
//     half is the bf16 value itself), and every midpoint pattern of the normal range of all five
//     formats; in the subnormal ranges the midpoint bits lie in the enumerated high half;
//   - every 1021st pattern of all 2^32 (an odd stride: all residues of the low bits recur);
//   - SR with hashed random bits, and with 0, 2^31 − 1, 2^31, 2^32 − 1.
#include "test_util.h"

#include <fenv.h>
#include <float.h>
#include <math.h>

#include "format.h"

#define MAX_FAILS 10

static uint32_t hash32(uint32_t x)  // a fixed mixing function: reproducible "random" bits
{
    x ^= x >> 16;
    x *= 0x7FEB352Du;
    x ^= x >> 15;
    x *= 0x846CA68Bu;
    return x ^ (x >> 16);
}

typedef struct sweep {
    pp_format_id f;
    pp_rounding m;
    int fails;
    uint64_t checked;
} sweep;

static void check_one(sweep *s, uint32_t u)
{
    float x = pp_f32_from_bits(u);
    uint32_t h = hash32(u ^ (uint32_t)s->m * 0x9E3779B9u);
    uint32_t rb = h & 0x7 ? h : (const uint32_t[4]){0, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu}[(h >> 3) & 3];
    float got = pp_test_round_named(s->f, s->m, x, rb), want = pp_round_from_f32(s->f, x, s->m, rb);
    s->checked++;
    if (pp_f32_bits(got) != pp_f32_bits(want) && ++s->fails <= MAX_FAILS) {
        const char *mn[3] = {"ne", "tz", "sr"};
        fprintf(stderr, "FAIL round_%s_%s_matches_generic: input 0x%08x, rbits 0x%08x\n",
                pp_format_get(s->f).name, mn[s->m], u, rb);
        pp_test_print_double("x", x);
        pp_test_print_double("got", got);
        pp_test_print_double("want", want);
    }
}

static void structured_sweep(pp_format_id f)
{
    // the low halves
    uint32_t low[200];
    int nl = 0;
    for (int j = 1; j <= 16; j++) {
        for (int d = -3; d <= 3; d++)
            low[nl++] = (uint32_t)((1 << (j - 1)) + d) & 0xFFFF;
        for (int d = 0; d < 3; d++)
            low[nl++] = (uint32_t)((1 << j) - 1 - d) & 0xFFFF;
    }
    for (uint32_t d = 0; d < 4; d++)
        low[nl++] = d;
    for (uint32_t d = 0; d < 8; d++)
        low[nl++] = hash32(d + 12345) & 0xFFFF;
    for (int mi = 0; mi < 3; mi++) {
        sweep s = {f, (pp_rounding)mi, 0, 0};
        for (uint32_t hi = 0; hi < 0x10000 && s.fails < MAX_FAILS; hi++)
            for (int k = 0; k < nl; k++)
                check_one(&s, hi << 16 | low[k]);
        // a sample: fewer under PRECPROBE_TEST_MULTIPLIER < 1 (odd, so the low bits still cycle)
        uint64_t stride = ((1ull << 32) / pp_test_iters((1ull << 32) / 1021)) | 1;
        for (uint64_t u = 0; u < (1ull << 32) && s.fails < MAX_FAILS; u += stride)
            check_one(&s, (uint32_t)u);
        assert_int_equal(s.fails, 0);
        assert_true(s.checked > 11000000);
    }
}

// ---------------------------------------------------------------------------------------------
// Deterministic and stochastic rounding: named binary32 functions against the generic one

static void round_tf32_named_matches_generic(void **state) { (void)state; structured_sweep(PP_FMT_TF32); }
static void round_fp16_named_matches_generic(void **state) { (void)state; structured_sweep(PP_FMT_FP16); }
static void round_bf16_named_matches_generic(void **state) { (void)state; structured_sweep(PP_FMT_BF16); }
static void round_e4m3_named_matches_generic(void **state) { (void)state; structured_sweep(PP_FMT_E4M3); }
static void round_e5m2_named_matches_generic(void **state) { (void)state; structured_sweep(PP_FMT_E5M2); }

// ---------------------------------------------------------------------------------------------
// binary64 → fp32: the hardware conversion in the current rounding direction is the oracle

static double biased_double(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t r = *s, b;
    uint64_t frac = (r >> 11) ^ (r << 29);
    switch (r >> 61) {
    case 0: b = r; break;                                                      // anything
    case 1: b = (uint64_t)(1023 - 160 + (r >> 20) % 40) << 52 | (frac & 0xFFFFFFFFFFFFFull); break;  // fp32 subnormal range
    case 2: b = 0x47EFFFFFE0000000ull + (frac % 0x40000000ull) - 0x20000000ull; break;     // near FLT_MAX
    case 3: b = ((uint64_t)(1023 - 130 + (r >> 20) % 260) << 52) | (frac & 0xFFFFFFE0000000ull) | 0x10000000ull; break;  // midpoints
    case 4: b = ((uint64_t)(1023 - 130 + (r >> 20) % 260) << 52) | (frac & 0xFFFFFFE0000000ull) | ((r >> 7) & 1 ? 0x1FFFFFFFull : 0x10000001ull); break;
    default: b = ((uint64_t)(1023 - 150 + (r >> 20) % 300) << 52) | (frac & 0xFFFFFFFFFFFFFull); break;
    }
    if (r >> 61)
        b = (b & ~PP_F64_SIGN) | ((r >> 5) & 1) << 63;  // a random sign
    return pp_f64_from_bits(b);
}

static void round_fp32_named_matches_hardware_conversion(void **state)
{
    (void)state;
    uint64_t s = pp_test_seed();
    int fails = 0;
    const int dirs[2] = {FE_TONEAREST, FE_TOWARDZERO};
    for (uint64_t i = 0; i < pp_test_iters(4000000) && fails < MAX_FAILS; i++) {
        double x = biased_double(&s);
        if (isnan(x))
            continue;  // NaN: tests/test_format.c checks the quiet-NaN rule bit by bit
        for (int k = 0; k < 2; k++) {
            fesetround(dirs[k]);
            volatile double vx = x;  // the conversion happens at run time, in this direction
            float hw = (float)vx;
            fesetround(FE_TONEAREST);
            float got = k ? pp_round_fp32_tz(x) : pp_round_fp32_ne(x);
            double gen = pp_round(PP_FMT_FP32, x, k ? PP_RND_TZ : PP_RND_NE, 0);
            if ((pp_f32_bits(got) != pp_f32_bits(hw) || pp_f64_bits(gen) != pp_f64_bits((double)hw)) &&
                ++fails <= MAX_FAILS) {
                fprintf(stderr, "FAIL round_fp32_%s_matches_hardware: index %llu\n", k ? "tz" : "ne",
                        (unsigned long long)i);
                pp_test_print_double("x", x);
                pp_test_print_double("named", got);
                pp_test_print_double("generic", gen);
                pp_test_print_double("hardware", hw);
                pp_test_report_seed();
            }
        }
        uint32_t rb = hash32((uint32_t)i);
        float sr = pp_round_fp32_sr(x, rb);
        double gsr = pp_round(PP_FMT_FP32, x, PP_RND_SR, rb);
        if (pp_f64_bits((double)sr) != pp_f64_bits(gsr) && ++fails <= MAX_FAILS) {
            fprintf(stderr, "FAIL round_fp32_sr_matches_generic: index %llu rbits 0x%08x\n", (unsigned long long)i, rb);
            pp_test_print_double("x", x);
            pp_test_print_double("named", sr);
            pp_test_print_double("generic", gsr);
        }
    }
    assert_int_equal(fails, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        // deterministic and stochastic rounding
        cmocka_unit_test(round_tf32_named_matches_generic),
        cmocka_unit_test(round_fp16_named_matches_generic),
        cmocka_unit_test(round_bf16_named_matches_generic),
        cmocka_unit_test(round_e4m3_named_matches_generic),
        cmocka_unit_test(round_e5m2_named_matches_generic),
        cmocka_unit_test(round_fp32_named_matches_hardware_conversion),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
