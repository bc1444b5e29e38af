// test_ulp.c — pp_ulp, pp_ordinal, pp_ulp_distance(_u64): hand-computed cases (0, subnormals,
// powers of two, max_finite, Inf, NaN), the gap to the next value for every 8/16-bit and tf32
// value, ordinal monotonicity, distance 1 to the next value, and the NE/TZ error bounds.
#include "test_util.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "format.h"

#define MAX_FAILS 10

static int report(int *fails, const char *prop, pp_format_id f, uint64_t idx, double a, double b,
                  double got, double want)
{
    if (++*fails <= MAX_FAILS) {
        fprintf(stderr, "FAIL %s: format %s, pattern/index 0x%llx\n", prop, pp_format_get(f).name,
                (unsigned long long)idx);
        pp_test_print_double("a", a);
        pp_test_print_double("b", b);
        pp_test_print_double("got", got);
        pp_test_print_double("want", want);
    }
    return *fails >= MAX_FAILS;
}

// The small formats whose values are enumerated: patterns 0..count-1 shifted left by shift.
typedef struct small_fmt {
    pp_format_id f;
    uint64_t count;
    int shift;
} small_fmt;

static const small_fmt smalls[5] = {
    {PP_FMT_FP16, 1u << 16, 0}, {PP_FMT_BF16, 1u << 16, 0}, {PP_FMT_E4M3, 256, 0},
    {PP_FMT_E5M2, 256, 0},      {PP_FMT_TF32, 1u << 19, 13},
};

// ---------------------------------------------------------------------------------------------
// Special values and hand-computed cases

typedef struct ulp_case {
    pp_format_id f;
    double x, ulp;
} ulp_case;

static void ulp_hand_cases(void **state)
{
    (void)state;
    const ulp_case cases[] = {
        {PP_FMT_FP16, 0, 0x1p-24},          // 0: the smallest subnormal
        {PP_FMT_FP16, -0.0, 0x1p-24},
        {PP_FMT_FP16, 0x1p-24, 0x1p-24},    // subnormals share the quantum of 2^emin
        {PP_FMT_FP16, 0x1p-14, 0x1p-24},    // 2^emin: the gap above it
        {PP_FMT_FP16, 0x1p-13, 0x1p-23},
        {PP_FMT_FP16, 1, 0x1p-10},          // a power of two: the gap above
        {PP_FMT_FP16, 1.5, 0x1p-10},
        {PP_FMT_FP16, -2, 0x1p-9},
        {PP_FMT_FP16, 65504, 32},           // max_finite
        {PP_FMT_FP16, 1e300, 32},           // beyond max: max's ulp
        {PP_FMT_FP16, INFINITY, 32},
        {PP_FMT_FP16, -INFINITY, 32},
        {PP_FMT_BF16, 1, 0x1p-7},
        {PP_FMT_BF16, 0, 0x1p-133},
        {PP_FMT_BF16, 0x1.fep127, 0x1p120},
        {PP_FMT_TF32, 1, 0x1p-10},
        {PP_FMT_TF32, 0x1p-140, 0x1p-136},
        {PP_FMT_E4M3, 448, 32},             // 416, 448 are the top two values
        {PP_FMT_E4M3, INFINITY, 32},
        {PP_FMT_E4M3, 0, 0x1p-9},
        {PP_FMT_E4M3, 1, 0.125},
        {PP_FMT_E5M2, 57344, 8192},
        {PP_FMT_E5M2, 0x1p-16, 0x1p-16},
        {PP_FMT_FP32, 1, 0x1p-23},
        {PP_FMT_FP32, FLT_MAX, 0x1p104},
        {PP_FMT_FP32, 0, 0x1p-149},
        {PP_FMT_FP64, 1, 0x1p-52},
        {PP_FMT_FP64, 0, 0x1p-1074},
        {PP_FMT_FP64, 0x1p-1074, 0x1p-1074},
        {PP_FMT_FP64, DBL_MIN, 0x1p-1074},
        {PP_FMT_FP64, DBL_MAX, 0x1p971},
        {PP_FMT_FP64, INFINITY, 0x1p971},
    };
    int fails = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double u = pp_ulp(cases[i].f, cases[i].x);
        if (u != cases[i].ulp)
            report(&fails, "ulp_hand_cases", cases[i].f, i, cases[i].x, 0, u, cases[i].ulp);
    }
    for (int f = 0; f < PP_TEST_FMT_IEEE; f++)
        assert_true(isnan(pp_ulp((pp_format_id)f, NAN)));
    assert_int_equal(fails, 0);
}

static void ordinal_hand_cases(void **state)
{
    (void)state;
    assert_true(pp_ordinal(PP_FMT_FP16, 0.0) == 0 && pp_ordinal(PP_FMT_FP16, -0.0) == 0);
    assert_true(pp_ordinal(PP_FMT_FP16, 0x1p-24) == 1 && pp_ordinal(PP_FMT_FP16, -0x1p-24) == -1);
    assert_true(pp_ordinal(PP_FMT_FP16, 1.0) == 0x3C00 && pp_ordinal(PP_FMT_FP16, 65504) == 0x7BFF);
    assert_true(pp_ordinal(PP_FMT_FP16, INFINITY) == 0x7C00 && pp_ordinal(PP_FMT_FP16, -INFINITY) == -0x7C00);
    assert_true(pp_ordinal(PP_FMT_E4M3, 448) == 126 && pp_ordinal(PP_FMT_E4M3, INFINITY) == 127);
    assert_true(pp_ordinal(PP_FMT_TF32, 1.0) == 0x3F800000 >> 13);
    assert_true(pp_ordinal(PP_FMT_TF32, INFINITY) == pp_ordinal(PP_FMT_TF32, 0x1.ffcp127) + 1);
    assert_true(pp_ordinal(PP_FMT_FP32, FLT_MAX) == 0x7F7FFFFF);
    assert_true(pp_ordinal(PP_FMT_FP64, -DBL_MAX) == -0x7FEFFFFFFFFFFFFFll);
    assert_true(pp_ordinal(PP_FMT_FP64, INFINITY) == 0x7FF0000000000000ll);
    for (int f = 0; f < PP_TEST_FMT_IEEE; f++)
        assert_true(pp_ordinal((pp_format_id)f, NAN) == INT64_MIN);
}

static void ulp_distance_hand_cases(void **state)
{
    (void)state;
    assert_true(pp_ulp_distance(PP_FMT_FP16, 0.0, -0.0) == 0);
    assert_true(pp_ulp_distance(PP_FMT_FP16, -0x1p-24, 0x1p-24) == 2);  // across zero, counted once
    assert_true(pp_ulp_distance(PP_FMT_FP16, 1, 2) == 1024);
    assert_true(pp_ulp_distance(PP_FMT_FP16, 65504, INFINITY) == 1);
    assert_true(pp_ulp_distance(PP_FMT_FP16, -65504, 65504) == 2 * 0x7BFF);
    assert_true(pp_ulp_distance(PP_FMT_E4M3, -448, 448) == 252);
    assert_true(isnan(pp_ulp_distance(PP_FMT_BF16, NAN, 1)) && isnan(pp_ulp_distance(PP_FMT_BF16, 1, NAN)));
    assert_true(pp_ulp_distance_u64(PP_FMT_BF16, NAN, 1) == UINT64_MAX);
    // fp64 far apart: the int64 difference of the ordinals would overflow; the u64 one is exact
    assert_true(pp_ulp_distance_u64(PP_FMT_FP64, -DBL_MAX, DBL_MAX) == 0xFFDFFFFFFFFFFFFEull);
    assert_true(pp_ulp_distance_u64(PP_FMT_FP64, INFINITY, -INFINITY) == 0xFFE0000000000000ull);
    assert_true(pp_ulp_distance(PP_FMT_FP64, -DBL_MAX, DBL_MAX) == (double)0xFFDFFFFFFFFFFFFEull);
    assert_true(pp_ulp_distance(PP_FMT_FP64, 1.0, nextafter(1.0, 2.0)) == 1);
    assert_true(pp_ulp_distance(PP_FMT_FP32, -0x1p-149, 0x1p-149) == 2);
}

// ---------------------------------------------------------------------------------------------
// Exact inputs: every value of the small formats

// ulp(v) is the gap from v to the next value up (for max: to the value below), for every
// positive finite pattern; it is even in x, and the same at both ends of a binade's gap.
static void ulp_is_gap_to_next_all_values(void **state)
{
    (void)state;
    int fails = 0;
    for (int s = 0; s < 5; s++) {
        const small_fmt *S = &smalls[s];
        for (uint64_t b = 0; b < S->count / 2 && fails < MAX_FAILS; b++) {
            double v = pp_decode(S->f, b << S->shift), next = pp_decode(S->f, (b + 1) << S->shift);
            if (!isfinite(v))
                break;
            double gap = isfinite(next) ? next - v : v - pp_decode(S->f, (b - 1) << S->shift);
            if (pp_ulp(S->f, v) != gap || pp_ulp(S->f, -v) != gap)
                report(&fails, "ulp_is_gap_to_next", S->f, b, v, next, pp_ulp(S->f, v), gap);
        }
    }
    assert_int_equal(fails, 0);
}

typedef struct valpat {
    double v;
    uint64_t b;
} valpat;

static int cmp_val(const void *a, const void *b)
{
    double x = ((const valpat *)a)->v, y = ((const valpat *)b)->v;
    if (x != y)
        return x < y ? -1 : 1;
    return !!signbit(y) - !!signbit(x);  // −0 before +0
}

// Sorted by value, consecutive non-NaN values of f (±Inf included) have consecutive ordinals,
// except +0 and −0, which share 0: over every pattern of fp16, bf16, E4M3, E5M2, tf32.
static void ordinal_monotonic_all_values(void **state)
{
    (void)state;
    int fails = 0;
    for (int s = 0; s < 5; s++) {
        const small_fmt *S = &smalls[s];
        valpat *all = malloc(S->count * sizeof *all);
        assert_non_null(all);
        size_t n = 0;
        for (uint64_t b = 0; b < S->count; b++) {
            double v = pp_decode(S->f, b << S->shift);
            if (!isnan(v))
                all[n++] = (valpat){v, b};
        }
        qsort(all, n, sizeof *all, cmp_val);
        for (size_t i = 1; i < n && fails < MAX_FAILS; i++) {
            int64_t o0 = pp_ordinal(S->f, all[i - 1].v), o1 = pp_ordinal(S->f, all[i].v);
            int64_t want = all[i - 1].v == all[i].v ? 0 : 1;  // only ±0 compare equal
            if (o1 - o0 != want)
                report(&fails, "ordinal_monotonic", S->f, all[i].b, all[i - 1].v, all[i].v, (double)(o1 - o0), (double)want);
        }
        // the middle of the sorted list is −0, +0 at ordinal 0; the ends are ±(max or Inf)
        assert_true(pp_ordinal(S->f, all[0].v) == -pp_ordinal(S->f, all[n - 1].v));
        free(all);
    }
    assert_int_equal(fails, 0);
}

// ulp_distance(a, next value of f after a, away from zero) == 1, both signs, and the distance
// is symmetric and equals the ulp count |next − a| / ulp within a binade.
static void ulp_distance_next_is_one(void **state)
{
    (void)state;
    int fails = 0;
    for (int s = 0; s < 5; s++) {
        const small_fmt *S = &smalls[s];
        uint64_t sbit = S->f == PP_FMT_TF32 ? 1u << 18 : S->count >> 1;
        for (uint64_t b = 0; b + 1 < S->count && fails < MAX_FAILS; b++) {
            if (((b + 1) & (sbit - 1)) == 0)
                continue;  // b is the last pattern of a sign: no next
            double a = pp_decode(S->f, b << S->shift), n = pp_decode(S->f, (b + 1) << S->shift);
            if (isnan(a) || isnan(n))
                continue;
            double d = pp_ulp_distance(S->f, a, n), e = pp_ulp_distance(S->f, n, a);
            if (d != 1 || e != 1 || pp_ulp_distance_u64(S->f, a, n) != 1)
                report(&fails, "ulp_distance_next_is_one", S->f, b, a, n, d, 1);
        }
    }
    assert_int_equal(fails, 0);
}

// For every pair of E4M3 values, the distance is the number of E4M3 values in (min, max],
// counted by scanning all patterns (±0 counted once).
static void ulp_distance_counts_values_e4m3(void **state)
{
    (void)state;
    double vals[256];
    int n = 0, fails = 0;
    for (uint64_t b = 0; b < 256; b++) {
        double v = pp_decode(PP_FMT_E4M3, b);
        if (!isnan(v) && !(v == 0 && signbit(v)))
            vals[n++] = v;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n && fails < MAX_FAILS; j++) {
            double lo = fmin(vals[i], vals[j]), hi = fmax(vals[i], vals[j]);
            int count = 0;
            for (int k = 0; k < n; k++)
                count += vals[k] > lo && vals[k] <= hi;
            if (pp_ulp_distance(PP_FMT_E4M3, vals[i], vals[j]) != count)
                report(&fails, "ulp_distance_counts_values", PP_FMT_E4M3, (uint64_t)(i * 256 + j), vals[i],
                       vals[j], pp_ulp_distance(PP_FMT_E4M3, vals[i], vals[j]), count);
        }
    assert_int_equal(fails, 0);
}

// fp32 and fp64: consecutive values by nextafter have ordinals one apart (a random sample).
static void ordinal_next_fp32_fp64(void **state)
{
    (void)state;
    uint64_t x = pp_test_seed();
    int fails = 0;
    for (uint64_t i = 0; i < pp_test_iters(200000) && fails < MAX_FAILS; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        double a = pp_f64_from_bits(x >> 1);  // positive
        if (!isfinite(a) || a == DBL_MAX)
            continue;
        double n = nextafter(a, INFINITY);
        if (pp_ordinal(PP_FMT_FP64, n) - pp_ordinal(PP_FMT_FP64, a) != 1 ||
            pp_ordinal(PP_FMT_FP64, -n) - pp_ordinal(PP_FMT_FP64, -a) != -1)
            report(&fails, "ordinal_next_fp64", PP_FMT_FP64, i, a, n, 0, 1);
        float a32 = pp_f32_from_bits((uint32_t)(x >> 33));
        if (!isfinite(a32) || a32 == FLT_MAX)
            continue;
        float n32 = nextafterf(a32, INFINITY);
        if (pp_ulp_distance(PP_FMT_FP32, a32, n32) != 1 || pp_ulp(PP_FMT_FP32, a32) != (double)n32 - (double)a32)
            report(&fails, "ordinal_next_fp32", PP_FMT_FP32, i, a32, n32, pp_ulp_distance(PP_FMT_FP32, a32, n32), 1);
    }
    assert_int_equal(fails, 0);
}

// ---------------------------------------------------------------------------------------------
// Operations: the bounds in pp_round's contract, measured with pp_ulp
// |NE(x) − x| ≤ ½ ulp(NE(x)) and |TZ(x) − x| < ulp(x), for finite non-overflowing x.

static void round_error_within_ulp_bound(void **state)
{
    (void)state;
    uint64_t s = pp_test_seed() ^ 0x5555;
    int fails = 0;
    for (uint64_t i = 0; i < pp_test_iters(1000000) && fails < MAX_FAILS; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        pp_format_id f = (pp_format_id)(i % PP_TEST_FMT_IEEE);
        pp_format F = pp_format_get(f);
        // exponent within the format's range (subnormals included), random fraction and sign
        int E = F.emin - F.p - 1 + (int)((s >> 40) % (uint64_t)(F.emax - F.emin + F.p + 2));
        double x = ldexp(1.0 + (double)(s >> 12 & 0xFFFFFFFFFull) * 0x1p-36, E) * (s & 1 ? -1 : 1);
        double ne = pp_round(f, x, PP_RND_NE, 0), tz = pp_round(f, x, PP_RND_TZ, 0);
        if (fabs(x) >= F.max_finite)
            continue;  // overflow has its own rules
        // differences are exact: r and x are within a factor 2 of each other, or r is 0
        if (!(fabs(ne - x) <= pp_ulp(f, ne) / 2) && isfinite(ne))
            report(&fails, "round_ne_error_within_half_ulp", f, i, x, 0, ne, pp_ulp(f, ne) / 2);
        if (!(fabs(tz - x) < pp_ulp(f, x)) || fabs(tz) > fabs(x))
            report(&fails, "round_tz_error_below_one_ulp", f, i, x, 0, tz, pp_ulp(f, x));
    }
    assert_int_equal(fails, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        // special values
        cmocka_unit_test(ulp_hand_cases),
        cmocka_unit_test(ordinal_hand_cases),
        cmocka_unit_test(ulp_distance_hand_cases),
        // exact inputs
        cmocka_unit_test(ulp_is_gap_to_next_all_values),
        cmocka_unit_test(ordinal_monotonic_all_values),
        cmocka_unit_test(ulp_distance_next_is_one),
        cmocka_unit_test(ulp_distance_counts_values_e4m3),
        cmocka_unit_test(ordinal_next_fp32_fp64),
        // operations
        cmocka_unit_test(round_error_within_ulp_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
