// test_round_stochastic.c — PP_RND_SR: the result is always RZ(x) or RA(x) (MPFR), chosen by the
// documented rule rbits < floor(frac·2^32); the frequency of rounding away and the mean of SR(x)
// over seeded draws within stated bounds; representable x never moves; overflow; symmetry.
#include "test_util.h"

#include <math.h>
#include <mpfr.h>

#include "format.h"

#define MAX_FAILS 10

// Statistical bounds below fail a correct implementation with probability at most DELTA each.
#define DELTA 1e-9

static int report(int *fails, const char *prop, pp_format_id f, uint64_t idx, double x, uint32_t rbits,
                  double got, double want)
{
    if (++*fails <= MAX_FAILS) {
        fprintf(stderr, "FAIL %s: format %s, index %llu, rbits 0x%08x\n", prop, pp_format_get(f).name,
                (unsigned long long)idx, rbits);
        pp_test_print_double("x", x);
        pp_test_print_double("got", got);
        pp_test_print_double("want", want);
        pp_test_report_seed();
    }
    return *fails >= MAX_FAILS;
}

// ---------------------------------------------------------------------------------------------
// Random numbers (test_util.h's xoshiro256**, one stream per sweep)

// A random finite binary64 around format F's range: binade uniform over the subnormal range and
// a little beyond both ends; fraction random, or of few bits (exact fractions of an ulp).
static double random_input(pp_test_xoshiro *g, const pp_format *F)
{
    uint64_t r = pp_test_xoshiro_next(g);
    int E = F->emin - F->p - 2 + (int)(r % (uint64_t)(F->emax - F->emin + F->p + 4));
    uint64_t frac = pp_test_xoshiro_next(g) >> 12;
    if (r >> 60 == 0)
        frac &= ~((1ull << (pp_test_xoshiro_next(g) % 52)) - 1);  // trailing zeros: representable or few bits
    double x = ldexp(1.0 + ldexp((double)frac, -52), E);
    return r >> 59 & 1 ? -x : x;
}

// ---------------------------------------------------------------------------------------------
// The two candidates, from MPFR: RZ (toward zero) and RA (away from zero), in the format's range
// (MPFR exponents emin − p + 2 .. emax + 1, mpfr_subnormalize below 2^emin; see
// tests/test_round_mpfr.c). RA beyond max_finite is ±Inf, saturated to ±max_finite for E4M3.

static double mpfr_round_fmt(const pp_format *F, mpfr_t v, double x, mpfr_rnd_t rnd)
{
    int t = mpfr_set_d(v, x, rnd);
    mpfr_subnormalize(v, t, rnd);
    double r = mpfr_get_d(v, MPFR_RNDN);
    if (!F->has_inf && !(fabs(r) <= F->max_finite))  // E4M3 (torch): RA NaN with the sign, RZ 448
        r = copysign(rnd == MPFR_RNDZ && !isinf(r) ? F->max_finite : pp_test_overflow_value(F), r);
    return r;
}

typedef struct neighbours {
    double rz, ra;
} neighbours;

static neighbours mpfr_neighbours(pp_format_id f, double x)
{
    pp_format F = pp_format_get(f);
    mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
    mpfr_set_emin(F.emin - F.p + 2);
    mpfr_set_emax(F.emax + 1);
    mpfr_t v;
    mpfr_init2(v, F.p);
    neighbours n = {mpfr_round_fmt(&F, v, x, MPFR_RNDZ), mpfr_round_fmt(&F, v, x, MPFR_RNDA)};
    mpfr_clear(v);
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
    return n;
}

// The documented rule, computed independently in binary64 from the two candidates: away from zero
// iff rbits < floor(frac·2^32), frac = (|x| − |RZ|)/gap, gap = |RA| − |RZ| (ulp(max) = 2^(emax−p+1)
// when RA is Inf). |x| − |RZ| is exact (Sterbenz: |RZ| ≤ |x| < 2|RZ|, or RZ = 0), the gap is a
// power of two, so frac is exact; frac ≥ 1 (far overflow) always rounds away.
static double rule(pp_format_id f, double x, uint32_t rbits, neighbours n)
{
    if (n.rz == n.ra)
        return n.rz;
    pp_format F = pp_format_get(f);
    double gap = isinf(n.ra) || isnan(n.ra) ? ldexp(1.0, F.emax - F.p + 1) : fabs(n.ra) - fabs(n.rz);
    double frac = (fabs(x) - fabs(n.rz)) / gap;
    double thresh = frac >= 1 ? 0x1p33 : floor(ldexp(frac, 32));
    return (double)rbits < thresh ? n.ra : n.rz;
}

// ---------------------------------------------------------------------------------------------
// Stochastic rounding: the candidates and the rule

// For biased random x and rbits (random, 0, 0xFFFFFFFF, around 2^31): SR(x) is RZ(x) or RA(x),
// exactly the one the rule picks; rbits = 0xFFFFFFFF gives RZ below 2^(emax+1) (beyond it
// frac ≥ 1: always away, to Inf); SR(−x) = −SR(x).
static void round_sr_is_rz_or_ra_by_rule(void **state)
{
    (void)state;
    int fails = 0;
    for (int fi = 0; fi < PP_TEST_FMT_IEEE; fi++) {
        pp_format_id f = (pp_format_id)fi;
        pp_format F = pp_format_get(f);
        pp_test_xoshiro g;
        pp_test_xoshiro_seed(&g, 0x5200 + (uint64_t)fi);
        uint64_t n = pp_test_iters(300000);
        for (uint64_t i = 0; i < n && fails < MAX_FAILS; i++) {
            double x = random_input(&g, &F);
            uint64_t r = pp_test_xoshiro_next(&g);
            uint32_t rb = (uint32_t)r;
            switch (r >> 61) {
            case 0: rb = 0; break;
            case 1: rb = 0xFFFFFFFFu; break;
            case 2: rb = 0x80000000u + (uint32_t)(r >> 32) % 5 - 2; break;
            default: break;
            }
            neighbours nb = mpfr_neighbours(f, x);
            double got = pp_round(f, x, PP_RND_SR, rb), want = rule(f, x, rb, nb);
            if (!pp_test_same_bits(got, nb.rz) && !pp_test_same_bits(got, nb.ra))
                report(&fails, "round_sr_is_rz_or_ra", f, i, x, rb, got, nb.rz);
            else if (!pp_test_same_bits(got, want))
                report(&fails, "round_sr_follows_rule", f, i, x, rb, got, want);
            // below max + ulp(max): 2^(emax+1), but 480 for E4M3 (beyond it frac ≥ 1: away, NaN)
            if (rb == 0xFFFFFFFFu && fabs(x) < F.max_finite + pp_ulp(f, F.max_finite) &&
                !pp_test_same_bits(got, nb.rz))
                report(&fails, "round_sr_all_ones_is_rz", f, i, x, rb, got, nb.rz);
            if (!pp_test_same_bits(pp_round(f, -x, PP_RND_SR, rb), -got))
                report(&fails, "round_sr_sign_symmetric", f, i, -x, rb, pp_round(f, -x, PP_RND_SR, rb), -got);
        }
    }
    assert_int_equal(fails, 0);
}

// Values of the format never move, whatever the bits; in fp64 every binary64 is one.
static void round_sr_representable_never_moves(void **state)
{
    (void)state;
    int fails = 0;
    pp_test_xoshiro g;
    pp_test_xoshiro_seed(&g, 0x5300);
    for (uint64_t i = 0; i < pp_test_iters(1000000) && fails < MAX_FAILS; i++) {
        pp_format_id f = (pp_format_id)(i % PP_TEST_FMT_IEEE);
        pp_format F = pp_format_get(f);
        uint32_t rb = (uint32_t)pp_test_xoshiro_next(&g);
        double x = f == PP_FMT_FP64 ? pp_f64_from_bits(pp_test_xoshiro_next(&g)) : random_input(&g, &F);
        double v = f == PP_FMT_FP64 ? x : pp_round(f, x, PP_RND_TZ, 0);  // a value of f
        if (isnan(v))
            continue;
        double got = pp_round(f, v, PP_RND_SR, rb);
        if (!pp_test_same_bits(got, v))
            report(&fails, "round_sr_representable_never_moves", f, i, v, rb, got, v);
    }
    assert_int_equal(fails, 0);
}

// rbits on the grid i·2^(32−s), i < 2^s, stratify [0, 2^32): for frac = k/2^m with m ≤ 32 the
// number rounding away is exactly #{i : i·2^(32−s) < frac·2^32} = ceil(frac·2^s).
static void round_sr_stratified_count_exact(void **state)
{
    (void)state;
    const int s = 12;
    const double fracs[6] = {0.5, 0.25, 0.75, 0x1p-10, 1 - 0x1p-10, 0x1.5555p-2};
    for (int fi = 1; fi < PP_TEST_FMT_IEEE; fi++) {
        pp_format_id f = (pp_format_id)fi;
        pp_format F = pp_format_get(f);
        const double bases[3] = {1.0, ldexp(3.0, F.emin - F.p + 1), F.max_finite / 2};
        for (int b = 0; b < 3; b++)
            for (int k = 0; k < 6; k++) {
                double ulp = pp_ulp(f, bases[b]), x = bases[b] + fracs[k] * ulp;
                uint64_t up = 0;
                for (uint64_t i = 0; i < (1u << s); i++)
                    up += pp_round(f, x, PP_RND_SR, (uint32_t)(i << (32 - s))) != bases[b];
                uint64_t want = (uint64_t)ceil(ldexp(fracs[k], s));
                if (up != want)
                    fprintf(stderr, "FAIL round_sr_stratified_count_exact: %s x=%a up=%llu want=%llu\n",
                            F.name, x, (unsigned long long)up, (unsigned long long)want);
                assert_true(up == want);
            }
    }
}

// ---------------------------------------------------------------------------------------------
// Stochastic rounding: frequency and mean over N seeded draws
//
// Bound (Bernstein's inequality for a sum of N independent Bernoulli(P)): with L = ln(2/DELTA),
//   P(|count − N·P| ≥ t) ≤ DELTA  for  t = L/3 + sqrt((L/3)² + 2·N·P(1−P)·L).
// P = floor(frac·2^32)/2^32 exactly (the documented rule, rbits uniform). Unlike "5 sigma" this
// holds for every P, including P near 0 or 1 where the normal approximation fails.
//
// Mean: SR(x) − x ∈ {−frac·ulp, (1−frac)·ulp} exactly (Sterbenz), E[SR(x) − x] = (P − frac)·ulp
// ∈ (−2^−32·ulp, 0] (the rule's bias toward zero). Summing N such terms in binary64, each partial
// sum is ≤ k·ulp in magnitude and each addition errs by ≤ 2^−53 of it: ≤ N²·2^−53·ulp in all. So
//   |mean − x| ≤ (t/N + 2^−32 + N·2^−53)·ulp.

static double bernstein_t(double n, double p)
{
    double L = log(2 / DELTA), a = L / 3;
    return a + sqrt(a * a + 2 * n * p * (1 - p) * L);
}

typedef struct sr_case {
    double base;  // RZ(x), a value of f
    double frac;  // x = base + frac·ulp(base)
} sr_case;

static void frequency_and_mean(pp_format_id f, sr_case c, uint64_t n, pp_test_xoshiro *g, int *fails)
{
    pp_format F = pp_format_get(f);
    double ulp = pp_ulp(f, c.base), x = c.base + c.frac * ulp;
    c.frac = (x - c.base) / ulp;  // exact; differs from the asked one where x has too few bits
    // the value away from zero: the next one, Inf past max (saturated for E4M3)
    double away = c.base == F.max_finite ? pp_test_overflow_value(&F) : c.base + ulp;
    double P = floor(ldexp(c.frac, 32)) / 0x1p32;
    uint64_t count = 0;
    double sum = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint32_t rb = (uint32_t)pp_test_xoshiro_next(g);
        double r = pp_round(f, x, PP_RND_SR, rb);
        if (r != c.base && !pp_test_same_value(r, away)) {
            report(fails, "round_sr_is_rz_or_ra", f, i, x, rb, r, c.base);
            return;
        }
        count += pp_test_same_value(r, away) && away != c.base;
        if (isfinite(away))
            sum += r - x;
    }
    double t = bernstein_t((double)n, P);
    if (away == c.base)  // E4M3 beyond 448: saturation leaves one candidate
        P = 0;
    if (fabs((double)count - (double)n * P) > t) {
        fprintf(stderr, "FAIL round_sr_frequency_within_bound: %s x=%a frac=%a count=%llu of %llu, "
                        "expected %.1f ± %.1f\n",
                F.name, x, c.frac, (unsigned long long)count, (unsigned long long)n, n * P, t);
        ++*fails;
    }
    if (isfinite(away) && away != c.base) {
        double mean = sum / (double)n;
        double bound = (t / (double)n + 0x1p-32 + (double)n * 0x1p-53) * ulp;
        if (!(fabs(mean) <= bound)) {
            fprintf(stderr, "FAIL round_sr_mean_unbiased: %s x=%a frac=%a mean(SR(x)) − x = %a > %a\n",
                    F.name, x, c.frac, mean, bound);
            ++*fails;
        }
    }
}

// For x = v + frac·ulp with known frac (below 2^−32 ones too: P = 0 there, never away), at a
// normal value, a subnormal, just below max, and at max (away is Inf, or 448 again for E4M3).
static void round_sr_frequency_and_mean_within_bound(void **state)
{
    (void)state;
    const double fracs[9] = {0.5, 0.25, 0.75, 0x1p-10, 1 - 0x1p-10, 0x1.5555p-2, 0x1.999999999p-4,
                             0x1p-40, 1 - 0x1p-40};
    int fails = 0;
    uint64_t n = pp_test_iters(20000);
    pp_test_xoshiro g;
    pp_test_xoshiro_seed(&g, 0x5400);
    for (int fi = 1; fi < PP_TEST_FMT_IEEE; fi++) {  // fp64 has no room below its last bit
        pp_format_id f = (pp_format_id)fi;
        pp_format F = pp_format_get(f);
        double max = F.max_finite;
        const double bases[4] = {1.0, ldexp(5.0, F.emin - F.p + 1), max - pp_ulp(f, max), max};
        for (int b = 0; b < 4; b++)
            for (int k = 0; k < 9; k++)
                frequency_and_mean(f, (sr_case){bases[b], fracs[k]}, n, &g, &fails);
    }
    assert_int_equal(fails, 0);
}

// Random x (random binade, random 52-bit fraction), one draw each: d_j = (SR(x_j) − x_j)/ulp_j
// lies in an interval of width 1 with mean in (−2^−32, 0], so by Hoeffding's inequality
// P(|Σ (d_j − E d_j)| ≥ t) ≤ DELTA for t = sqrt(N·ln(2/DELTA)/2); the binary64 sum errs by
// ≤ N²·2^−53 (partial sums ≤ N). Hence |Σ d_j| ≤ t + N·2^−32 + N²·2^−53.
static void round_sr_mean_unbiased_random_x(void **state)
{
    (void)state;
    uint64_t n = pp_test_iters(1000000);
    for (int fi = 1; fi < PP_TEST_FMT_IEEE; fi++) {
        pp_format_id f = (pp_format_id)fi;
        pp_format F = pp_format_get(f);
        pp_test_xoshiro g;
        pp_test_xoshiro_seed(&g, 0x5500 + (uint64_t)fi);
        double sum = 0;
        for (uint64_t i = 0; i < n; i++) {
            // a binade inside the normal range, away from the top (no overflow)
            int E = F.emin + (int)(pp_test_xoshiro_next(&g) % (uint64_t)(F.emax - F.emin));
            double x = ldexp(1.0 + ldexp((double)(pp_test_xoshiro_next(&g) >> 12), -52), E);
            double r = pp_round(f, x, PP_RND_SR, (uint32_t)pp_test_xoshiro_next(&g));
            sum += (r - x) / pp_ulp(f, x);
        }
        double dn = (double)n, bound = sqrt(dn * log(2 / DELTA) / 2) + dn * 0x1p-32 + dn * dn * 0x1p-53;
        if (!(fabs(sum) <= bound))
            fprintf(stderr, "FAIL round_sr_mean_unbiased_random_x: %s sum of d = %g > %g\n", F.name, sum, bound);
        assert_true(fabs(sum) <= bound);
    }
}

// Overflow: beyond 2^(emax+1) (= max + ulp) SR always gives Inf; E4M3 always 448.
static void round_sr_overflow(void **state)
{
    (void)state;
    pp_test_xoshiro g;
    pp_test_xoshiro_seed(&g, 0x5600);
    for (int fi = 1; fi < PP_TEST_FMT_IEEE; fi++) {
        pp_format_id f = (pp_format_id)fi;
        pp_format F = pp_format_get(f);
        double top = ldexp(1.0, F.emax + 1), inf = pp_test_overflow_value(&F);
        for (int i = 0; i < 1000; i++) {
            uint32_t rb = (uint32_t)pp_test_xoshiro_next(&g);
            assert_true(pp_test_same_value(pp_round(f, top, PP_RND_SR, rb), inf));
            assert_true(pp_test_same_value(pp_round(f, -top * 1.7, PP_RND_SR, rb), -inf));
            assert_true(pp_round(f, -top * 1.7, (pp_rounding)(PP_RND_SR | PP_RND_SAT), rb) == -F.max_finite);
            double r = pp_round(f, F.max_finite + pp_ulp(f, F.max_finite) * 0.3, PP_RND_SR, rb);
            assert_true(r == F.max_finite || pp_test_same_value(r, inf));
        }
    }
    assert_true(isnan(pp_round(PP_FMT_E4M3, 470.0, PP_RND_SR, 0)));  // torch: 480 is NaN
    assert_true(pp_round(PP_FMT_E4M3, 470.0, (pp_rounding)(PP_RND_SR | PP_RND_SAT), 0) == 448.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        // stochastic rounding
        cmocka_unit_test(round_sr_is_rz_or_ra_by_rule),
        cmocka_unit_test(round_sr_representable_never_moves),
        cmocka_unit_test(round_sr_stratified_count_exact),
        cmocka_unit_test(round_sr_frequency_and_mean_within_bound),
        cmocka_unit_test(round_sr_mean_unbiased_random_x),
        cmocka_unit_test(round_sr_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
