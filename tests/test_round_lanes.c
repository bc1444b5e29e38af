// test_round_lanes.c — the side-by-side rounding to nearest even (kernels/round_lanes.h) against
// (float)pp_round element by element, bit for bit (memcmp, NaN payloads included), for every
// format id and one outside the table: each format's special values, their binary64 neighbours,
// the exact midpoints between neighbouring values (ties, both parities) and ±½ulp(binary64)
// around them, the overflow threshold, values below the smallest subnormal, NaNs with payloads,
// and random bit patterns and values; rare lanes (those redone one by one) mixed with common
// ones in every call, at every count 1..64.
// Run: make build/rel/tests/test_round_lanes && build/rel/tests/test_round_lanes
#include <float.h>

#include "test_util.h"

#include "round_lanes.h"

#define NV 4096

static double from_bits(uint64_t b)
{
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

static double next_up(double x)
{
    return nextafter(x, INFINITY);
}

static double next_down(double x)
{
    return nextafter(x, -INFINITY);
}

// The inputs for format f (see the header comment); returns the count (≤ NV).
static int inputs(pp_format_id f, double *x, pp_test_rng *rng)
{
    int n = 0;
    double sp[PP_TEST_SPECIAL_MAX];
    int ns = (unsigned)f < (unsigned)PP_FMT_COUNT ? pp_test_special_values(f, sp) : 0;
    for (int k = 0; k < ns; k++) {
        x[n++] = sp[k];
        if (isfinite(sp[k]))
            x[n++] = next_up(sp[k]), x[n++] = next_down(sp[k]);
    }
    pp_format F = pp_format_get((unsigned)f < (unsigned)PP_FMT_COUNT ? f : PP_FMT_FP32);
    // midpoints between consecutive values of f: sweep the values of f from the smallest
    // subnormal up by exponent, at a few significands (even and odd last bits), both signs
    for (int e = F.emin - F.p; e <= (F.emax < 200 ? F.emax : 200) && n < NV - 64; e += (e < F.emin + 2 ? 1 : 7)) {
        for (int j = 0; j < 4; j++) {
            double ulp = ldexp(1.0, (e < F.emin ? F.emin : e) - F.p + 1);
            double v = ldexp(1.0, e) + (double)j * ulp;  // j = 0..3: both parities of the last bit
            double mid = v + 0.5 * ulp;
            double s = j % 2 ? -1.0 : 1.0;
            x[n++] = s * mid, x[n++] = s * next_up(mid), x[n++] = s * next_down(mid);
        }
    }
    // the overflow threshold: max_finite + ½ulp and its neighbours; twice max; the top of binary64
    double ulpmax = ldexp(1.0, F.emax - F.p + 1);
    double thr = F.max_finite + 0.5 * ulpmax;
    x[n++] = thr, x[n++] = next_up(thr), x[n++] = next_down(thr), x[n++] = -thr;
    x[n++] = 2.0 * F.max_finite, x[n++] = DBL_MAX, x[n++] = -DBL_MAX;
    // below half the smallest subnormal, at it, just above; binary64 subnormals
    double half_min = ldexp(1.0, F.emin - F.p);
    x[n++] = half_min, x[n++] = next_up(half_min), x[n++] = next_down(half_min), x[n++] = -next_up(half_min);
    x[n++] = 1.5 * half_min, x[n++] = 0x1p-1074, x[n++] = -0x1p-1060;
    // NaNs with payloads, both signs
    x[n++] = from_bits(UINT64_C(0x7FF0000000000001)), x[n++] = from_bits(UINT64_C(0xFFF4000000000123));
    x[n++] = from_bits(UINT64_C(0x7FFFFFFFFFFFFFFF));
    // random bit patterns (every exponent) and random values of ordinary size
    while (n < NV) {
        uint64_t r = pp_test_rng_next(rng);
        x[n] = n % 2 ? from_bits(r) : (pp_test_rng_unit(rng) - 0.5) * ldexp(1.0, (int)(r % 40) - 20);
        n++;
    }
    return n;
}

static void round_lanes_ne_every_format(void **state)
{
    (void)state;
    pp_test_rng rng = {pp_test_seed()};
    static double x[NV];
    static float got[NV];
    int bad = 0, rare = 0;
    for (int fi = 0; fi <= (int)PP_FMT_COUNT; fi++) {
        pp_format_id f = (pp_format_id)fi;
        int n = inputs(f, x, &rng);
        for (int start = 0, cnt = 1; start < n; start += cnt, cnt = cnt % 64 + 1) {
            int m = start + cnt <= n ? cnt : n - start;
            pp_round_ne_f32_lanes(f, m, x + start, got + start);
        }
        for (int k = 0; k < n; k++) {
            float want = (float)pp_round(f, x[k], PP_RND_NE, 0);
            rare += isnan(want) || isinf(want) || want == 0.0f;
            if (memcmp(&got[k], &want, sizeof want) != 0 && bad++ < 10) {
                fprintf(stderr, "round_lanes_ne_every_format: format %d, input %d\n", fi, k);
                pp_test_print_double("x", x[k]);
                pp_test_print_double("lanes", (double)got[k]), pp_test_print_double("pp_round", (double)want);
            }
        }
    }
    assert_true(rare > 1000);  // the one-by-one lanes ran, among common ones
    if (bad)
        pp_test_report_seed();
    assert_int_equal(bad, 0);
}

// Hand-computed bf16 cases: ties to even both ways, the overflow tie, the subnormal tie.
static void round_lanes_ne_bf16_hand(void **state)
{
    (void)state;
    const double x[] = {1.0 + 0x1p-8,            // tie, 1.0 even: down
                        1.0 + 3 * 0x1p-8,        // tie, 1 + 2^-7 odd: up to 1 + 2^-6
                        1.0 + 0x1p-8 + 0x1p-52,  // above the tie: up
                        0x1.fep127 + 0x1p119,    // max + ½ulp, max odd: +Inf
                        0x1.fep127 + 0x1p119 - 0x1p75, // just below: max
                        0x1p-134,                // ½ of the smallest subnormal 2^-133: tie to 0
                        0x1.8p-133,              // 1.5 subnormals: tie to even 2^-132
                        -0.0};
    const float want[] = {1.0f, 1.0f + 0x1p-6f, 1.0f + 0x1p-7f, INFINITY, 0x1.fep127f, 0.0f, 0x1p-132f, -0.0f};
    float got[8];
    pp_round_ne_f32_lanes(PP_FMT_BF16, 8, x, got);
    for (int k = 0; k < 8; k++)
        if (memcmp(&got[k], &want[k], sizeof got[k]) != 0) {
            fprintf(stderr, "round_lanes_ne_bf16_hand: case %d\n", k);
            pp_test_print_double("x", x[k]);
            pp_test_print_double("got", (double)got[k]), pp_test_print_double("want", (double)want[k]);
            fail();
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_lanes_ne_bf16_hand),
        cmocka_unit_test(round_lanes_ne_every_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
