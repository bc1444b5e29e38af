// test_format_mx.c — the OCP MX formats appended to the table (E8M0, E2M1, E2M3, E3M2) and the
// saturation flag (PP_RND_SAT) in every small format: the table against the OCP MX v1.0 spec's
// numbers (§5.3, §5.4.1), decode of every pattern against the textbook formula, encode/decode
// round trips, and rounding against MPFR over every class of binary32 input (below) and the
// neighbourhood of every value, in NE, TZ, SR, with and without PP_RND_SAT.
//
// "Every class": the result of rounding a binary32 to a format with p ≤ 4 depends on the sign,
// the exponent, the kept fraction bits (≤ 3), the round bit and whether anything below it is
// nonzero. Every sign and exponent with every top-8 fraction bit pattern and the low 15 bits
// 0, 1, 2^14 or 2^15 − 1 covers every class (deeper in the subnormal range the kept and round
// bits move up into the enumerated ones), so the sweep is exhaustive for these formats.
#include "test_util.h"

#include <math.h>
#include <mpfr.h>

#include "format.h"

#define MAX_FAILS 10

static const pp_format_id small_fmts[5] = {PP_FMT_E4M3, PP_FMT_E5M2, PP_FMT_E2M1, PP_FMT_E2M3, PP_FMT_E3M2};

// ---------------------------------------------------------------------------------------------
// The table: the spec's numbers, written out here

static void mx_table_matches_spec(void **state)
{
    (void)state;
    const struct {
        pp_format_id f;
        const char *name;
        int p, emin, emax, bits;
        double max, min_sub;
    } want[3] = {
        {PP_FMT_E2M1, "e2m1", 2, 0, 2, 4, 6.0, 0.5},
        {PP_FMT_E2M3, "e2m3", 4, 0, 2, 6, 7.5, 0.125},
        {PP_FMT_E3M2, "e3m2", 3, -2, 4, 6, 28.0, 0.0625},
    };
    for (int i = 0; i < 3; i++) {
        pp_format F = pp_format_get(want[i].f);
        assert_string_equal(F.name, want[i].name);
        assert_int_equal(F.p, want[i].p);
        assert_int_equal(F.emin, want[i].emin);
        assert_int_equal(F.emax, want[i].emax);
        assert_int_equal(F.storage_bits, want[i].bits);
        assert_true(F.max_finite == want[i].max);
        assert_int_equal(F.has_inf, 0);
        assert_int_equal(F.has_nan, PP_NAN_NONE);
        assert_int_equal(F.has_subnormals, 1);
        assert_int_equal(F.is_signed, 1);
        assert_true(pp_decode(want[i].f, 1) == want[i].min_sub);
        uint64_t top = (1ull << (want[i].bits - 1)) - 1;  // S.111…1 is the largest finite
        assert_true(pp_decode(want[i].f, top) == want[i].max);
        assert_true(pp_decode(want[i].f, top | 1ull << (want[i].bits - 1)) == -want[i].max);
        assert_int_equal(pp_format_validate(want[i].f), PP_FMT_OK);
    }
    // E2M1's eight magnitudes (OCP MX v1.0 Table 5)
    const double e2m1[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
    for (uint64_t b = 0; b < 8; b++)
        assert_true(pp_decode(PP_FMT_E2M1, b) == e2m1[b] && pp_decode(PP_FMT_E2M1, b | 8) == -e2m1[b]);
    assert_true(signbit(pp_decode(PP_FMT_E2M1, 8)));
    // E8M0: unsigned, 2^(e−127), 0xFF NaN
    pp_format E = pp_format_get(PP_FMT_E8M0);
    assert_string_equal(E.name, "e8m0");
    assert_int_equal(E.is_signed, 0);
    assert_int_equal(E.has_subnormals, 0);
    assert_int_equal(E.has_nan, PP_NAN_ALL_ONES);
    assert_true(E.max_finite == ldexp(1.0, 127));
    assert_true(pp_decode(PP_FMT_E8M0, 0) == ldexp(1.0, -127));
    assert_true(pp_decode(PP_FMT_E8M0, 127) == 1.0);
    assert_true(pp_decode(PP_FMT_E8M0, 254) == ldexp(1.0, 127));
    assert_true(isnan(pp_decode(PP_FMT_E8M0, 255)));
    assert_int_equal(pp_format_validate(PP_FMT_E8M0), PP_FMT_WARN_BINARY32_INEXACT);
    // the names, and torch's / ml_dtypes' dtype names
    const char *names[] = {"e8m0", "e2m1", "e2m3", "e3m2", "float8_e8m0fnu", "float4_e2m1fn",
                           "float6_e2m3fn", "float6_e3m2fn", "e4m3fn"};
    const pp_format_id ids[] = {PP_FMT_E8M0, PP_FMT_E2M1, PP_FMT_E2M3, PP_FMT_E3M2, PP_FMT_E8M0,
                                PP_FMT_E2M1, PP_FMT_E2M3, PP_FMT_E3M2, PP_FMT_E4M3};
    for (int i = 0; i < 9; i++) {
        pp_format_id f;
        assert_int_equal(pp_format_from_name(names[i], &f), 0);
        assert_int_equal(f, ids[i]);
    }
    // the ids of the formats before them keep their values (stored reports name formats by id)
    assert_int_equal(PP_FMT_E5M2, 6);
    assert_int_equal(PP_FMT_E8M0, 7);
}

// Every pattern of the FP4/FP6 formats decodes to the textbook value and encodes back.
static void mx_decode_encode_every_pattern(void **state)
{
    (void)state;
    const pp_format_id fs[3] = {PP_FMT_E2M1, PP_FMT_E2M3, PP_FMT_E3M2};
    const int eb[3] = {2, 2, 3};
    for (int i = 0; i < 3; i++) {
        pp_format F = pp_format_get(fs[i]);
        int mb = F.p - 1, bias = (1 << (eb[i] - 1)) - 1;
        for (uint64_t b = 0; b < (1ull << F.storage_bits); b++) {
            uint64_t m = b & ((1ull << mb) - 1), e = (b >> mb) & ((1ull << eb[i]) - 1);
            double v = e ? ldexp((double)(m | 1ull << mb), (int)e - bias - mb) : ldexp((double)m, 1 - bias - mb);
            if (b >> (F.storage_bits - 1))
                v = -v;
            double d = pp_decode(fs[i], b);
            assert_true(pp_test_same_bits(d, v));
            assert_true(pp_is_representable(fs[i], d));
            assert_int_equal(pp_encode(fs[i], d), b);
        }
        // no NaN, no Inf: they encode saturated, and are not values of the format
        uint64_t top = (1ull << (F.storage_bits - 1)) - 1;
        assert_int_equal(pp_encode(fs[i], INFINITY), top);
        assert_int_equal(pp_encode(fs[i], -INFINITY), top | (top + 1));
        assert_int_equal(pp_encode(fs[i], NAN), top);
        assert_false(pp_is_representable(fs[i], NAN));
        assert_false(pp_is_representable(fs[i], INFINITY));
    }
    for (uint64_t b = 0; b < 255; b++) {
        double d = pp_decode(PP_FMT_E8M0, b);
        assert_true(d == ldexp(1.0, (int)b - 127));
        assert_int_equal(pp_encode(PP_FMT_E8M0, d), b);
        assert_true(pp_is_representable(PP_FMT_E8M0, d));
        assert_false(pp_is_representable(PP_FMT_E8M0, -d));
    }
    assert_int_equal(pp_encode(PP_FMT_E8M0, NAN), 0xFF);
    assert_false(pp_is_representable(PP_FMT_E8M0, 0.0));
    assert_false(pp_is_representable(PP_FMT_E8M0, 3.0));
}

// ---------------------------------------------------------------------------------------------
// The oracle: MPFR in the format's precision and exponent range (see tests/test_round_mpfr.c),
// then the overflow rule of the flag: ±max with PP_RND_SAT and in FP4/FP6; NaN (E4M3) or Inf
// (E5M2) for ±Inf in any mode and an overflow in NE and RA; RZ saturates.

typedef struct oracle {
    pp_format F;
    mpfr_t v, max;
} oracle;

static void oracle_init(oracle *o, pp_format_id f)
{
    o->F = pp_format_get(f);
    mpfr_set_emin(o->F.emin - o->F.p + 2);
    mpfr_set_emax(o->F.emax + 1);
    mpfr_init2(o->v, o->F.p);
    mpfr_init2(o->max, 53);
    mpfr_set_d(o->max, o->F.max_finite, MPFR_RNDN);
}

static void oracle_clear(oracle *o)
{
    mpfr_clears(o->v, o->max, (mpfr_ptr)0);
    mpfr_set_emin(mpfr_get_emin_min());
    mpfr_set_emax(mpfr_get_emax_max());
}

static double oracle_round(oracle *o, double x, mpfr_rnd_t rnd, int sat)
{
    if (isnan(x))
        return x;
    int t = mpfr_set_d(o->v, x, rnd);
    mpfr_subnormalize(o->v, t, rnd);
    double r = mpfr_get_d(o->v, MPFR_RNDN);
    if (fabs(r) <= o->F.max_finite)
        return r;
    int over_inf = isinf(x) || rnd != MPFR_RNDZ;
    double ovf = sat || !over_inf ? o->F.max_finite : pp_test_overflow_value(&o->F);
    return copysign(ovf, r);
}

typedef struct tally {
    int fails;
    uint64_t checked;
} tally;

static void check(tally *t, pp_format_id f, const char *what, double x, uint32_t rb, double got, double want)
{
    t->checked++;
    if (pp_test_same_value(got, want))
        return;
    if (++t->fails <= MAX_FAILS) {
        fprintf(stderr, "FAIL %s: format %s, rbits 0x%08x\n", what, pp_format_get(f).name, rb);
        pp_test_print_double("x", x);
        pp_test_print_double("got", got);
        pp_test_print_double("want", want);
    }
}

static uint32_t hash32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7FEB352Du;
    x ^= x >> 15;
    x *= 0x846CA68Bu;
    return x ^ (x >> 16);
}

// x rounded in NE, TZ and SR, each with and without PP_RND_SAT, from binary64 (pp_round) and
// from binary32 (pp_round_from_f32 and the named functions, when x is a binary32), against the
// oracle. SR: RA (MPFR's RNDA) iff rbits < floor(frac·2^32), frac the dropped part of an ulp.
static void check_all_modes(tally *t, oracle *o, pp_format_id f, double x, int is_f32)
{
    for (int sat = 0; sat < 2; sat++) {
        int fl = sat ? PP_RND_SAT : 0;
        double ne = oracle_round(o, x, MPFR_RNDN, sat), tz = oracle_round(o, x, MPFR_RNDZ, sat);
        double ra = oracle_round(o, x, MPFR_RNDA, sat);
        check(t, f, sat ? "round_ne_sat_matches_mpfr" : "round_ne_matches_mpfr", x, 0,
              pp_round(f, x, (pp_rounding)(PP_RND_NE | fl), 0), ne);
        check(t, f, sat ? "round_tz_sat_matches_mpfr" : "round_tz_matches_mpfr", x, 0,
              pp_round(f, x, (pp_rounding)(PP_RND_TZ | fl), 0), tz);
        uint32_t rb = hash32(pp_f32_bits((float)x) ^ (uint32_t)sat);
        double frac = 0;  // the dropped fraction of the gap between |tz| and |ra| (exact)
        if (!isnan(x) && fabs(ra) != fabs(tz)) {
            double gap = isfinite(ra) && fabs(ra) <= o->F.max_finite ? fabs(ra) - fabs(tz) : pp_ulp(f, o->F.max_finite);
            frac = (fabs(x) - fabs(tz)) / gap;
        }
        double thresh = frac >= 1 ? 0x1p33 : floor(ldexp(frac, 32));
        double sr = (double)rb < thresh ? ra : tz;
        check(t, f, sat ? "round_sr_sat_follows_rule" : "round_sr_follows_rule", x, rb,
              pp_round(f, x, (pp_rounding)(PP_RND_SR | fl), rb), sr);
        if (is_f32) {
            float xf = (float)x;
            check(t, f, "round_from_f32_ne", x, 0, pp_round_from_f32(f, xf, (pp_rounding)(PP_RND_NE | fl), 0), ne);
            check(t, f, "round_from_f32_sr", x, rb, pp_round_from_f32(f, xf, (pp_rounding)(PP_RND_SR | fl), rb), sr);
            if (!sat) {
                check(t, f, "round_named_ne", x, 0, pp_test_round_named(f, PP_RND_NE, xf, 0), ne);
                check(t, f, "round_named_tz", x, 0, pp_test_round_named(f, PP_RND_TZ, xf, 0), tz);
                check(t, f, "round_named_sr", x, rb, pp_test_round_named(f, PP_RND_SR, xf, rb), sr);
            }
        }
    }
}

// Every class of binary32 input (see the header), every mode, with and without saturation.
static void round_small_formats_every_binary32_class(void **state)
{
    (void)state;
    const uint32_t low[4] = {0, 1, 0x4000, 0x7FFF};
    for (int i = 0; i < 5; i++) {
        pp_format_id f = small_fmts[i];
        oracle o;
        oracle_init(&o, f);
        tally t = {0, 0};
        for (uint32_t hi = 0; hi < (1u << 17) && t.fails < MAX_FAILS; hi++)
            for (int k = 0; k < 4; k++) {
                float x = pp_f32_from_bits(hi << 15 | low[k]);
                check_all_modes(&t, &o, f, (double)x, 1);
            }
        oracle_clear(&o);
        assert_int_equal(t.fails, 0);
        assert_true(t.checked > 4000000);
    }
}

// The neighbourhood of every value in binary64: v, v ± 1 binary64 ulp, the midpoint to the next
// value up and its neighbours, both signs; plus the overflow thresholds and the specials.
static void round_small_formats_every_value_neighbourhood(void **state)
{
    (void)state;
    for (int i = 0; i < 5; i++) {
        pp_format_id f = small_fmts[i];
        pp_format F = pp_format_get(f);
        oracle o;
        oracle_init(&o, f);
        tally t = {0, 0};
        for (uint64_t b = 0; b < (1ull << (F.storage_bits - 1)); b++) {
            double v = pp_decode(f, b);
            if (!isfinite(v) || v > F.max_finite)
                continue;
            double next = v == F.max_finite ? v + pp_ulp(f, v) : pp_decode(f, b + 1);
            double m = (v + next) / 2;
            double in[8] = {v, nextafter(v, INFINITY), nextafter(v, -INFINITY), m,
                            nextafter(m, INFINITY), nextafter(m, -INFINITY), next, next * 4};
            for (int k = 0; k < 16; k++)
                check_all_modes(&t, &o, f, k < 8 ? in[k] : -in[k - 8], 0);
        }
        const double sp[6] = {INFINITY, -INFINITY, 1e300, -1e300, 0x1p-1074, -0.0};
        for (int k = 0; k < 6; k++)
            check_all_modes(&t, &o, f, sp[k], 0);
        oracle_clear(&o);
        assert_int_equal(t.fails, 0);
    }
}

// The facts each spec and library states, by hand: FP4/FP6 saturate (OCP MX v1.0 §5.3); torch's
// float8_e4m3fn gives NaN beyond 464 (c10/util/Float8_e4m3fn.h: |x| ≥ 480 and every rounding
// onto 480 is 0x7F), E5M2 Inf beyond 61440; PP_RND_SAT gives ±max (TransformerEngine).
static void round_overflow_by_spec(void **state)
{
    (void)state;
    const pp_rounding NE = PP_RND_NE, NES = (pp_rounding)(PP_RND_NE | PP_RND_SAT);
    assert_true(pp_round(PP_FMT_E2M1, 7.0, NE, 0) == 6.0 && pp_round(PP_FMT_E2M1, -INFINITY, NE, 0) == -6.0);
    assert_true(pp_round(PP_FMT_E2M1, 5.0, NE, 0) == 4.0);   // tie between 4 (even) and 6
    assert_true(pp_round(PP_FMT_E2M1, 0.25, NE, 0) == 0.0);  // tie between 0 (even) and 0.5
    assert_true(pp_round(PP_FMT_E2M1, 0.26, NE, 0) == 0.5);
    assert_true(pp_round(PP_FMT_E2M3, 1e9, NE, 0) == 7.5 && pp_round(PP_FMT_E3M2, 1e9, NE, 0) == 28.0);
    assert_int_equal(pp_encode(PP_FMT_E4M3, pp_round(PP_FMT_E4M3, 464.0, NE, 0)), 0x7E);
    assert_int_equal(pp_encode(PP_FMT_E4M3, pp_round(PP_FMT_E4M3, 464.5, NE, 0)), 0x7F);
    assert_int_equal(pp_encode(PP_FMT_E4M3, pp_round(PP_FMT_E4M3, -480.0, NE, 0)), 0xFF);
    assert_int_equal(pp_encode(PP_FMT_E4M3, pp_round(PP_FMT_E4M3, INFINITY, NE, 0)), 0x7F);
    assert_int_equal(pp_encode(PP_FMT_E4M3, pp_round(PP_FMT_E4M3, 1e30, NES, 0)), 0x7E);
    assert_true(pp_round(PP_FMT_E5M2, 61440.0, NE, 0) == INFINITY && pp_round(PP_FMT_E5M2, 61439.0, NE, 0) == 57344.0);
    assert_true(pp_round(PP_FMT_E5M2, INFINITY, NES, 0) == 57344.0);
    assert_true(pp_round(PP_FMT_E5M2, -1e30, NES, 0) == -57344.0);
    assert_true(isnan(pp_round(PP_FMT_E5M2, NAN, NES, 0)));  // NaN stays NaN under saturation
}

// ---------------------------------------------------------------------------------------------
// E8M0: torch's rule (c10/util/Float8_e8m0fnu.h), restated here from its description: the
// binary32 exponent field, plus one when the dropped fraction is ≥ ½ (the kept digit, the
// implicit 1, is odd, so ties go up); sign dropped; NaN and ±Inf give 0xFF.

static double e8m0_rule(double x, pp_rounding m, int sat, uint32_t rb)
{
    double a = fabs(x);
    if (isnan(x))
        return x;
    if (isinf(a))
        return sat ? ldexp(1.0, 127) : NAN;
    if (a < ldexp(1.0, -127))
        return ldexp(1.0, -127);
    int E = ilogb(a);
    double frac = ldexp(a, -E) - 1;  // exact, in [0, 1)
    int up = m == PP_RND_NE ? frac >= 0.5 : m == PP_RND_SR ? (double)rb < floor(ldexp(frac, 32)) : 0;
    E += up;
    if (E > 127)
        return sat || m == PP_RND_TZ ? ldexp(1.0, 127) : NAN;
    return ldexp(1.0, E);
}

static void round_e8m0_follows_torch_rule(void **state)
{
    (void)state;
    tally t = {0, 0};
    const uint32_t low[4] = {0, 1, 0x4000, 0x7FFF};
    const pp_rounding modes[3] = {PP_RND_NE, PP_RND_TZ, PP_RND_SR};
    for (uint32_t hi = 0; hi < (1u << 17) && t.fails < MAX_FAILS; hi++)
        for (int k = 0; k < 4; k++) {
            float xf = pp_f32_from_bits(hi << 15 | low[k]);
            double x = xf;
            uint32_t rb = hash32(hi << 2 | (uint32_t)k);
            for (int mi = 0; mi < 3; mi++)
                for (int sat = 0; sat < 2; sat++) {
                    pp_rounding m = (pp_rounding)(modes[mi] | (sat ? PP_RND_SAT : 0));
                    double want = e8m0_rule(x, modes[mi], sat, rb);
                    check(&t, PP_FMT_E8M0, "round_e8m0_rule", x, rb, pp_round(PP_FMT_E8M0, x, m, rb), want);
                    check(&t, PP_FMT_E8M0, "round_e8m0_from_f32", x, rb, pp_round_from_f32(PP_FMT_E8M0, xf, m, rb), want);
                }
        }
    assert_int_equal(t.fails, 0);
    // by hand: ties up, no zero, sign dropped, overflow NaN (0xFF) or 2^127 saturated
    assert_true(pp_round(PP_FMT_E8M0, 1.5, PP_RND_NE, 0) == 2.0);
    assert_true(pp_round(PP_FMT_E8M0, 1.4999, PP_RND_NE, 0) == 1.0);
    assert_true(pp_round(PP_FMT_E8M0, -3.0, PP_RND_NE, 0) == 4.0);
    assert_true(pp_round(PP_FMT_E8M0, 0.0, PP_RND_NE, 0) == ldexp(1.0, -127));
    assert_int_equal(pp_encode(PP_FMT_E8M0, pp_round(PP_FMT_E8M0, 0x1.8p127, PP_RND_NE, 0)), 0xFF);
    assert_true(pp_round(PP_FMT_E8M0, 0x1.8p127, (pp_rounding)(PP_RND_NE | PP_RND_SAT), 0) == 0x1p127);
    assert_int_equal(pp_encode(PP_FMT_E8M0, pp_round(PP_FMT_E8M0, 1.0, PP_RND_NE, 0)), 127);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mx_table_matches_spec),
        cmocka_unit_test(mx_decode_encode_every_pattern),
        cmocka_unit_test(round_small_formats_every_binary32_class),
        cmocka_unit_test(round_small_formats_every_value_neighbourhood),
        cmocka_unit_test(round_overflow_by_spec),
        cmocka_unit_test(round_e8m0_follows_torch_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
