// test_format.c — the format table (E4M3: 448, no Inf), pp_format_validate, special values in
// pp_round (NaN, ±0, ±Inf, overflow), every 8- and 16-bit pattern (and every tf32 pattern)
// through decode → round → encode, NaN patterns, and hand-computed rounding cases.
#include "test_util.h"

#include <float.h>
#include <math.h>

#include "format.h"

// ---------------------------------------------------------------------------------------------
// Helpers

#define MAX_FAILS 10

static const pp_rounding all_modes[3] = {PP_RND_NE, PP_RND_TZ, PP_RND_SR};
static const char *const mode_names[3] = {"NE", "TZ", "SR"};

// Prints one mismatch (up to MAX_FAILS per test); returns nonzero when the test should stop.
static int report(int *fails, const char *prop, pp_format_id f, int mode, uint64_t idx, double x,
                  double got, double want)
{
    if (++*fails <= MAX_FAILS) {
        fprintf(stderr, "FAIL %s: format %s, mode %s, index/pattern 0x%llx\n", prop,
                pp_format_get(f).name, mode >= 0 ? mode_names[mode] : "-", (unsigned long long)idx);
        pp_test_print_double("x", x);
        pp_test_print_double("got", got);
        pp_test_print_double("want", want);
    }
    return *fails >= MAX_FAILS;
}

// Storage layout, written out here independently of format.h: exponent and fraction widths of
// the pattern (tf32: of the pattern shifted right by 13).
typedef struct layout {
    int ebits, mbits, shift;
} layout;

static layout layout_of(pp_format_id f)
{
    switch (f) {
    case PP_FMT_FP64: return (layout){11, 52, 0};
    case PP_FMT_FP32: return (layout){8, 23, 0};
    case PP_FMT_TF32: return (layout){8, 10, 13};
    case PP_FMT_FP16: return (layout){5, 10, 0};
    case PP_FMT_BF16: return (layout){8, 7, 0};
    case PP_FMT_E4M3: return (layout){4, 3, 0};
    default: return (layout){5, 2, 0};  // E5M2
    }
}

// The value of pattern b from the textbook formula, with ldexp: the independent reference for
// pp_decode. *kind: 0 finite, 1 Inf, 2 NaN.
static double ref_value(pp_format_id f, uint64_t b, int *kind)
{
    layout L = layout_of(f);
    b >>= L.shift;
    uint64_t m = b & ((1ull << L.mbits) - 1), e = (b >> L.mbits) & ((1ull << L.ebits) - 1);
    int s = (int)((b >> (L.mbits + L.ebits)) & 1), bias = (1 << (L.ebits - 1)) - 1;
    uint64_t eall = (1ull << L.ebits) - 1;
    double v;
    *kind = 0;
    if (f == PP_FMT_E4M3 && e == eall && m == 7) {
        *kind = 2;  // S.1111.111: E4M3's only NaNs
        v = NAN;
    } else if (f != PP_FMT_E4M3 && e == eall) {
        *kind = m ? 2 : 1;
        v = m ? NAN : INFINITY;
    } else if (e == 0) {
        v = ldexp((double)m, 1 - bias - L.mbits);
    } else {
        v = ldexp((double)(m | (1ull << L.mbits)), (int)e - bias - L.mbits);
    }
    return s ? -v : v;
}

static const uint32_t some_rbits[6] = {0, 1, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFEu, 0xFFFFFFFFu};

static uint64_t mix(uint64_t x)  // a fixed hash: reproducible "random" bits per index
{
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDull;
    x ^= x >> 33;
    x *= 0xC4CEB9FE1A85EC53ull;
    return x ^ (x >> 33);
}

// ---------------------------------------------------------------------------------------------
// Special values: the table

static void format_get_table_consistent(void **state)
{
    (void)state;
    const char *names[PP_TEST_FMT_IEEE] = {"fp64", "fp32", "tf32", "fp16", "bf16", "e4m3", "e5m2"};
    const int p[PP_TEST_FMT_IEEE] = {53, 24, 11, 11, 8, 4, 3};
    const int emin[PP_TEST_FMT_IEEE] = {-1022, -126, -126, -14, -126, -6, -14};
    const int emax[PP_TEST_FMT_IEEE] = {1023, 127, 127, 15, 127, 8, 15};
    const int bits[PP_TEST_FMT_IEEE] = {64, 32, 32, 16, 16, 8, 8};
    for (int i = 0; i < PP_TEST_FMT_IEEE; i++) {
        pp_format_id f = (pp_format_id)i;
        pp_format F = pp_format_get(f);
        layout L = layout_of(f);
        assert_string_equal(F.name, names[i]);
        assert_int_equal(F.p, p[i]);
        assert_int_equal(F.emin, emin[i]);
        assert_int_equal(F.emax, emax[i]);
        assert_int_equal(F.storage_bits, bits[i]);
        assert_int_equal(F.has_subnormals, 1);
        assert_int_equal(F.has_inf, f != PP_FMT_E4M3);
        // the layout agrees with the table: emin = 1 − bias, p − 1 fraction bits
        assert_int_equal(F.emin, 2 - (1 << (L.ebits - 1)));
        assert_int_equal(F.p - 1, f == PP_FMT_TF32 ? 10 : L.mbits);
        // max_finite = (2 − 2^(1−p))·2^emax, except E4M3
        if (f != PP_FMT_E4M3)
            assert_true(F.max_finite == ldexp(2.0 - ldexp(1.0, 1 - F.p), F.emax));
        // the top finite pattern decodes to max_finite, pattern 1 to the smallest subnormal
        uint64_t top = f == PP_FMT_E4M3 ? 0x7E : (((1ull << L.ebits) - 1) << L.mbits) - 1;
        assert_true(pp_decode(f, top << L.shift) == F.max_finite);
        assert_true(pp_decode(f, 1ull << L.shift) == ldexp(1.0, F.emin - F.p + 1));
        assert_true(pp_decode(f, (1ull << L.mbits) << L.shift) == ldexp(1.0, F.emin));
    }
    assert_true(pp_format_get(PP_FMT_FP64).max_finite == DBL_MAX);
    assert_true(pp_format_get(PP_FMT_FP32).max_finite == FLT_MAX);
}

// OCP FP8 E4M3: S.1111.111 is NaN, so the largest finite value is S.1111.110 = 1.75·2^8 = 448,
// not the 480 = 1.875·2^8 that p = 4 and emax = 8 imply; no pattern is an infinity, and overflow
// (and ±Inf input) saturates to ±448.
static void format_get_e4m3_max_448_no_inf(void **state)
{
    (void)state;
    pp_format F = pp_format_get(PP_FMT_E4M3);
    assert_true(F.max_finite == 448.0);
    assert_int_equal(F.has_inf, 0);
    assert_true(pp_decode(PP_FMT_E4M3, 0x7E) == 448.0);
    assert_true(pp_decode(PP_FMT_E4M3, 0xFE) == -448.0);
    assert_true(isnan(pp_decode(PP_FMT_E4M3, 0x7F)) && isnan(pp_decode(PP_FMT_E4M3, 0xFF)));
    for (uint64_t b = 0; b < 256; b++)
        assert_false(isinf(pp_decode(PP_FMT_E4M3, b)));
    assert_false(pp_is_representable(PP_FMT_E4M3, INFINITY));
    assert_false(pp_is_representable(PP_FMT_E4M3, 480.0));
    assert_true(pp_is_representable(PP_FMT_E4M3, 448.0));
    // torch's float8_e4m3fn (c10/util/Float8_e4m3fn.h): ±Inf and an overflow give NaN (with the
    // sign: 0x7F, 0xFF); with PP_RND_SAT (TransformerEngine) ±448 in every mode; TZ stays at 448
    for (int m = 0; m < 3; m++) {
        pp_rounding sat = (pp_rounding)(all_modes[m] | PP_RND_SAT);
        assert_true(isnan(pp_round(PP_FMT_E4M3, INFINITY, all_modes[m], 0)));
        assert_true(signbit(pp_round(PP_FMT_E4M3, -INFINITY, all_modes[m], 0)));
        assert_true(pp_round(PP_FMT_E4M3, INFINITY, sat, 0) == 448.0);
        assert_true(pp_round(PP_FMT_E4M3, -INFINITY, sat, 0) == -448.0);
        assert_true(pp_round(PP_FMT_E4M3, 1e300, sat, 0) == 448.0);
        assert_true(pp_round(PP_FMT_E4M3, -480.0, sat, 0) == -448.0);
        assert_true(pp_round(PP_FMT_E4M3, 479.99, sat, 0x0) == 448.0);
        double over = all_modes[m] == PP_RND_TZ ? 448.0 : NAN;
        assert_true(pp_test_same_value(pp_round(PP_FMT_E4M3, 1e300, all_modes[m], 0), over));
        assert_true(pp_test_same_value(pp_round(PP_FMT_E4M3, 479.99, all_modes[m], 0), over));
    }
    assert_true(isnan(pp_round_e4m3_ne(-1e30f)) && isnan(pp_round_e4m3_sr(1e30f, 0)));
    assert_true(pp_round_e4m3_tz(1e30f) == 448.0f);
    // 464 is the midpoint of 448 = 1.110·2^8 (even) and 480 = 1.111·2^8: ties to 448; above, NaN
    assert_true(pp_round(PP_FMT_E4M3, 464.0, PP_RND_NE, 0) == 448.0);
    assert_true(isnan(pp_round(PP_FMT_E4M3, 465.0, PP_RND_NE, 0)));
    assert_true(pp_round(PP_FMT_E4M3, 465.0, (pp_rounding)(PP_RND_NE | PP_RND_SAT), 0) == 448.0);
    assert_true(pp_encode(PP_FMT_E4M3, pp_round(PP_FMT_E4M3, -500.0, PP_RND_NE, 0)) == 0xFF);
    assert_true(pp_encode(PP_FMT_E4M3, 448.0) == 0x7E);
    assert_true(pp_encode(PP_FMT_E4M3, INFINITY) == 0x7F);  // no Inf pattern: the NaN pattern
    assert_true(pp_encode(PP_FMT_E4M3, -INFINITY) == 0xFF);
}

static void format_get_unknown_id(void **state)
{
    (void)state;
    pp_format_id bad = PP_FMT_COUNT;
    assert_string_equal(pp_format_get(bad).name, "?");
    assert_int_equal(pp_format_get(bad).p, 0);
    assert_int_equal(pp_format_validate(bad), PP_FMT_ERR_UNKNOWN);
    assert_int_equal(pp_format_validate((pp_format_id)-1), PP_FMT_ERR_UNKNOWN);
    assert_true(isnan(pp_round(bad, 1.0, PP_RND_NE, 0)));
    assert_true(isnan(pp_decode(bad, 0)));
    assert_true(isnan(pp_ulp(bad, 1.0)));
    assert_true(pp_encode(bad, 1.0) == 0);
    assert_false(pp_is_representable(bad, 1.0));
    assert_true(pp_ordinal(bad, 1.0) == INT64_MIN);
}

// 24 ≥ 2p + 2 for p ≤ 11 and, in binary32's subnormal range, ≥ 2p bits below the format's last
// place (see format.h): fp32 is its own operation; tf32 and fp64 warn.
static void format_validate_codes(void **state)
{
    (void)state;
    assert_int_equal(pp_format_validate(PP_FMT_FP32), PP_FMT_OK);
    assert_int_equal(pp_format_validate(PP_FMT_FP16), PP_FMT_OK);
    assert_int_equal(pp_format_validate(PP_FMT_BF16), PP_FMT_OK);
    assert_int_equal(pp_format_validate(PP_FMT_E4M3), PP_FMT_OK);
    assert_int_equal(pp_format_validate(PP_FMT_E5M2), PP_FMT_OK);
    assert_int_equal(pp_format_validate(PP_FMT_TF32), PP_FMT_WARN_BINARY32_INEXACT);
    assert_int_equal(pp_format_validate(PP_FMT_FP64), PP_FMT_WARN_BINARY32_INEXACT);
    assert_true(PP_FMT_WARN_BINARY32_INEXACT < 0 && PP_FMT_ERR_UNKNOWN > 0);
}

// ---------------------------------------------------------------------------------------------
// Special values: NaN, ±0, ±Inf, overflow

// NaN in, the same NaN out, bit for bit: quiet and signalling, both signs, any payload.
static void round_nan_propagates_unchanged(void **state)
{
    (void)state;
    const uint64_t nans[6] = {0x7FF8000000000000ull, 0xFFF8000000000000ull, 0x7FF0000000000001ull,
                              0xFFF4000000000000ull, 0x7FFFFFFFFFFFFFFFull, 0xFFF00000DEADBEEFull};
    const uint32_t nans32[5] = {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFFA00000u, 0x7FFFFFFFu};
    int fails = 0;
    for (int f = 0; f < PP_TEST_FMT_IEEE; f++)
        for (int m = 0; m < 3; m++)
            for (int r = 0; r < 6; r++) {
                for (int i = 0; i < 6; i++) {
                    double x = pp_f64_from_bits(nans[i]), y = pp_round((pp_format_id)f, x, all_modes[m], some_rbits[r]);
                    if (!pp_test_same_bits(x, y))
                        report(&fails, "round_nan_propagates_unchanged", (pp_format_id)f, m, nans[i], x, y, x);
                }
                for (int i = 0; i < 5; i++) {
                    float x = pp_f32_from_bits(nans32[i]);
                    float y = pp_round_from_f32((pp_format_id)f, x, all_modes[m], some_rbits[r]);
                    float z = pp_test_round_named((pp_format_id)f, all_modes[m], x, some_rbits[r]);
                    if (pp_f32_bits(y) != nans32[i] || pp_f32_bits(z) != nans32[i])
                        report(&fails, "round_from_f32_nan_propagates_unchanged", (pp_format_id)f, m, nans32[i], x, y, x);
                }
            }
    // binary64 NaN → fp32: quiet, sign kept, top 22 payload bits kept (the IEEE conversion)
    assert_true(pp_f32_bits(pp_round_fp32_ne(pp_f64_from_bits(0x7FF0000000000001ull))) == 0x7FC00000u);
    assert_true(pp_f32_bits(pp_round_fp32_tz(pp_f64_from_bits(0xFFF4000020000000ull))) == 0xFFE00001u);
    assert_true(pp_f32_bits(pp_round_fp32_sr(pp_f64_from_bits(0x7FFFFFFFFFFFFFFFull), 0)) == 0x7FFFFFFFu);
    assert_int_equal(fails, 0);
}

static void round_signed_zero_kept(void **state)
{
    (void)state;
    for (int f = 0; f < PP_TEST_FMT_IEEE; f++)
        for (int m = 0; m < 3; m++)
            for (int r = 0; r < 6; r++) {
                assert_true(pp_test_same_bits(pp_round((pp_format_id)f, 0.0, all_modes[m], some_rbits[r]), 0.0));
                assert_true(pp_test_same_bits(pp_round((pp_format_id)f, -0.0, all_modes[m], some_rbits[r]), -0.0));
                assert_true(pp_f32_bits(pp_test_round_named((pp_format_id)f, all_modes[m], -0.0f, some_rbits[r])) == 0x80000000u);
                assert_true(pp_f32_bits(pp_test_round_named((pp_format_id)f, all_modes[m], 0.0f, some_rbits[r])) == 0);
            }
    assert_true(pp_f32_bits(pp_round_fp32_tz(-0.0)) == 0x80000000u);
    assert_true(pp_encode(PP_FMT_FP16, -0.0) == 0x8000 && pp_encode(PP_FMT_E4M3, -0.0) == 0x80);
}

// ±Inf stays ±Inf in every mode (TZ included: Inf is exact), or is NaN where f has no Inf
// (E4M3); with PP_RND_SAT it saturates to ±max_finite.
static void round_inf_kept_or_saturated(void **state)
{
    (void)state;
    for (int f = 0; f < PP_TEST_FMT_IEEE; f++) {
        pp_format F = pp_format_get((pp_format_id)f);
        double want = pp_test_overflow_value(&F);
        for (int m = 0; m < 3; m++)
            for (int r = 0; r < 6; r++) {
                pp_rounding sat = (pp_rounding)(all_modes[m] | PP_RND_SAT);
                assert_true(pp_test_same_value(pp_round((pp_format_id)f, INFINITY, all_modes[m], some_rbits[r]), want));
                assert_true(pp_test_same_value(pp_round((pp_format_id)f, -INFINITY, all_modes[m], some_rbits[r]), -want));
                assert_true(pp_test_same_value(pp_test_round_named((pp_format_id)f, all_modes[m], -INFINITY, some_rbits[r]), (float)-want));
                assert_true(pp_round((pp_format_id)f, -INFINITY, sat, some_rbits[r]) == -F.max_finite);
            }
    }
    assert_true(pp_round_fp32_tz(-INFINITY) == -INFINITY);
}

// Overflow: NE reaches Inf at max + ½ulp (a tie, to the even 2^(emax+1)); TZ stays at max; SR
// rounds between max and max + ulp = 2^(emax+1), i.e. Inf.
static void round_overflow_rules(void **state)
{
    (void)state;
    for (int f = 0; f < PP_TEST_FMT_IEEE; f++) {
        pp_format_id id = (pp_format_id)f;
        pp_format F = pp_format_get(id);
        double max = F.max_finite, inf = pp_test_overflow_value(&F);
#define assert_true_same(a, b) assert_true(pp_test_same_value((a), (b)))
        double half = ldexp(1.0, F.emax - F.p);  // ½ ulp(max)
        double mid = max + half;                 // exact except for fp64 (DBL_MAX + 2^970 = Inf)
        double top = ldexp(1.0, F.emax) * 2;     // 2^(emax+1), Inf for fp64
        if (id != PP_FMT_FP64) {
            // E4M3's max 448 = 1.110·2^8 is even: its midpoint 464 ties down, to 448
            assert_true_same(pp_round(id, mid, PP_RND_NE, 0), pp_ordinal(id, max) & 1 ? inf : max);
            assert_true(pp_round(id, mid, (pp_rounding)(PP_RND_NE | PP_RND_SAT), 0) == max);
            assert_true(pp_round(id, -top, (pp_rounding)(PP_RND_SR | PP_RND_SAT), 0) == -max);
            assert_true(pp_round(id, nextafter(mid, 0), PP_RND_NE, 0) == max);
            assert_true(pp_round(id, -nextafter(mid, 0), PP_RND_NE, 0) == -max);
            assert_true(pp_round(id, mid, PP_RND_SR, 0xFFFFFFFFu) == max);  // never away
            assert_true_same(pp_round(id, mid, PP_RND_SR, 0), inf);           // P(away) = ½
            assert_true_same(pp_round(id, mid, PP_RND_SR, 0x7FFFFFFFu), inf);
            assert_true(pp_round(id, mid, PP_RND_SR, 0x80000000u) == max);
            for (int r = 0; r < 6; r++)
                assert_true_same(pp_round(id, -top, PP_RND_SR, some_rbits[r]), -inf);
        }
        assert_true(pp_round(id, -DBL_MAX, PP_RND_TZ, 0) == -max);
        assert_true_same(pp_round(id, DBL_MAX, PP_RND_NE, 0), (id == PP_FMT_FP64 ? DBL_MAX : inf));
        for (int r = 0; r < 6; r++)
            assert_true_same(pp_round(id, DBL_MAX, PP_RND_SR, some_rbits[r]), (id == PP_FMT_FP64 ? DBL_MAX : inf));
        (void)top;
    }
#undef assert_true_same
    // the named functions at the same thresholds
    assert_true(pp_round_fp16_ne(65520.0f) == INFINITY && pp_round_fp16_ne(65519.996f) == 65504.0f);
    assert_true(pp_round_fp16_tz(1e30f) == 65504.0f && pp_round_fp16_sr(65536.0f, 0xFFFFFFFFu) == INFINITY);
    assert_true(pp_round_bf16_ne(FLT_MAX) == INFINITY && pp_round_bf16_tz(-FLT_MAX) == -0x1.fep127f);
    assert_true(pp_round_tf32_ne(FLT_MAX) == INFINITY && pp_round_tf32_tz(FLT_MAX) == 0x1.ffcp127f);
    assert_true(pp_round_e5m2_ne(61440.0f) == INFINITY && pp_round_e5m2_ne(61439.0f) == 57344.0f);
    assert_true(pp_round_fp32_ne(0x1.ffffffp127) == INFINITY && pp_round_fp32_tz(DBL_MAX) == FLT_MAX);
}

// Every NaN pattern decodes to NaN with the pattern's sign, and a NaN encodes to the canonical
// quiet pattern: all 16-bit and 8-bit patterns, all binary32 (and tf32) NaN patterns.
static void decode_nan_patterns_all(void **state)
{
    (void)state;
    const pp_format_id small[4] = {PP_FMT_FP16, PP_FMT_BF16, PP_FMT_E4M3, PP_FMT_E5M2};
    const uint64_t canon[4] = {0x7E00, 0x7FC0, 0x7F, 0x7E};
    int fails = 0;
    for (int i = 0; i < 4; i++) {
        pp_format_id f = small[i];
        uint64_t n = 1ull << pp_format_get(f).storage_bits, sbit = n >> 1;
        for (uint64_t b = 0; b < n; b++) {
            int kind;
            double want = ref_value(f, b, &kind), got = pp_decode(f, b);
            if (kind == 2 && !(isnan(got) && !signbit(got) == !(b & sbit)))
                report(&fails, "decode_nan_patterns_all", f, -1, b, 0, got, want);
            if (kind == 2 && pp_encode(f, got) != (canon[i] | (b & sbit)))
                report(&fails, "encode_nan_canonical", f, -1, b, got, (double)pp_encode(f, got), (double)canon[i]);
        }
        assert_true(isnan(pp_decode(f, canon[i])));
    }
    // binary32 and tf32: every exponent-all-ones pattern with a nonzero fraction, both signs (for
    // tf32 also those whose payload lies only in the 13 low bits a tf32 pattern keeps zero)
    for (uint64_t m = 1; m < (1u << 23) && fails < MAX_FAILS; m++)
        for (uint64_t s = 0; s < 2; s++) {
            uint64_t b = s << 31 | 0x7F800000u | m;
            double v32 = pp_decode(PP_FMT_FP32, b), vtf = pp_decode(PP_FMT_TF32, b);
            if (!isnan(v32) || !isnan(vtf) || !signbit(v32) != !s || !signbit(vtf) != !s)
                report(&fails, "decode_nan_patterns_binary32", PP_FMT_FP32, -1, b, 0, v32, NAN);
        }
    assert_true(pp_encode(PP_FMT_FP32, NAN) == 0x7FC00000u && pp_encode(PP_FMT_TF32, -NAN) == 0xFFC00000u);
    assert_true(pp_encode(PP_FMT_FP64, pp_f64_from_bits(0xFFF0000000000001ull)) == 0xFFF8000000000000ull);
    // fp64 decode is the identity, payload and signalling bit included
    assert_true(pp_f64_bits(pp_decode(PP_FMT_FP64, 0x7FF0000000000001ull)) == 0x7FF0000000000001ull);
    // NaN payloads move to the top of the binary64 fraction, quiet (as a hardware conversion does)
    assert_true(pp_f64_bits(pp_decode(PP_FMT_FP16, 0xFC01)) == 0xFFF8040000000000ull);
    assert_true(pp_f64_bits(pp_decode(PP_FMT_FP32, 0x7F800001u)) == 0x7FF8000020000000ull);
    assert_int_equal(fails, 0);
}

static void encode_inf_and_out_of_range(void **state)
{
    (void)state;
    assert_true(pp_encode(PP_FMT_FP16, INFINITY) == 0x7C00 && pp_encode(PP_FMT_FP16, -INFINITY) == 0xFC00);
    assert_true(pp_encode(PP_FMT_BF16, INFINITY) == 0x7F80 && pp_encode(PP_FMT_E5M2, -INFINITY) == 0xFC);
    assert_true(pp_encode(PP_FMT_TF32, INFINITY) == 0x7F800000u);
    assert_true(pp_encode(PP_FMT_FP64, -INFINITY) == 0xFFF0000000000000ull);
    assert_true(pp_decode(PP_FMT_E5M2, 0x7C) == INFINITY && pp_decode(PP_FMT_BF16, 0xFF80) == -INFINITY);
    // outside the precondition the result is defined: truncated, or Inf beyond the top binade
    assert_true(pp_encode(PP_FMT_FP16, 1.0 + 0x1p-20) == 0x3C00);
    assert_true(pp_encode(PP_FMT_FP16, 1e10) == 0x7C00 && pp_encode(PP_FMT_E4M3, -1e10) == 0xFF);
    assert_true(pp_encode(PP_FMT_FP16, 0x1p-40) == 0 && pp_encode(PP_FMT_BF16, 0x1p-1074) == 0);
    // bits above storage_bits are ignored by decode
    assert_true(pp_decode(PP_FMT_FP16, 0xABCD3C00ull) == 1.0 && pp_decode(PP_FMT_E4M3, 0x1238) == 1.0);
}

// ---------------------------------------------------------------------------------------------
// Exact inputs: every pattern decodes (to the textbook value), rounds to itself in every mode
// with any random bits (generic and named functions), and re-encodes to the same pattern

static void all_patterns(pp_format_id f, uint64_t count, int shift)
{
    int fails = 0;
    for (uint64_t i = 0; i < count && fails < MAX_FAILS; i++) {
        uint64_t b = i << shift;
        int kind;
        double want = ref_value(f, b, &kind), v = pp_decode(f, b);
        if (kind == 2) {
            if (!isnan(v))
                report(&fails, "decode_nan", f, -1, b, 0, v, want);
            for (int m = 0; m < 3; m++)
                if (!pp_test_same_bits(pp_round(f, v, all_modes[m], (uint32_t)mix(i)), v))
                    report(&fails, "round_nan_stays", f, m, b, v, pp_round(f, v, all_modes[m], 0), v);
            continue;
        }
        if (!pp_test_same_bits(v, want)) {
            report(&fails, "decode_matches_formula", f, -1, b, 0, v, want);
            continue;
        }
        if (!pp_is_representable(f, v))
            report(&fails, "is_representable_all_patterns", f, -1, b, v, 0, 1);
        if (pp_encode(f, v) != b)
            report(&fails, "encode_decode_roundtrip", f, -1, b, v, (double)pp_encode(f, v), (double)b);
        for (int m = 0; m < 3; m++) {
            for (int r = 0; r < 7; r++) {
                uint32_t rb = r < 6 ? some_rbits[r] : (uint32_t)mix(i * 7 + (uint64_t)m);
                double y = pp_round(f, v, all_modes[m], rb);
                if (!pp_test_same_bits(y, v) && report(&fails, "round_exact_input_unchanged", f, m, b, v, y, v))
                    break;
                float y32 = pp_round_from_f32(f, (float)v, all_modes[m], rb);
                float n32 = pp_test_round_named(f, all_modes[m], (float)v, rb);
                if ((!pp_test_same_bits((double)y32, v) || !pp_test_same_bits((double)n32, v)) &&
                    report(&fails, "round_named_exact_input_unchanged", f, m, b, v, n32, v))
                    break;
            }
        }
    }
    assert_int_equal(fails, 0);
}

static void decode_round_encode_all_patterns_fp16(void **state) { (void)state; all_patterns(PP_FMT_FP16, 1u << 16, 0); }
static void decode_round_encode_all_patterns_bf16(void **state) { (void)state; all_patterns(PP_FMT_BF16, 1u << 16, 0); }
static void decode_round_encode_all_patterns_e4m3(void **state) { (void)state; all_patterns(PP_FMT_E4M3, 256, 0); }
static void decode_round_encode_all_patterns_e5m2(void **state) { (void)state; all_patterns(PP_FMT_E5M2, 256, 0); }
static void decode_round_encode_all_patterns_tf32(void **state) { (void)state; all_patterns(PP_FMT_TF32, 1u << 19, 13); }

// fp32 (and fp64) have too many patterns: every exponent with fractions from a fixed hash.
static void decode_round_encode_sampled_fp32_fp64(void **state)
{
    (void)state;
    int fails = 0;
    uint64_t n = pp_test_iters(1000000);
    for (uint64_t i = 0; i < n && fails < MAX_FAILS; i++) {
        uint64_t h = mix(i);
        uint32_t b32 = (uint32_t)(i & 0x1FF) << 23 | (uint32_t)(h & 0x7FFFFF);
        uint64_t b64 = ((uint64_t)(i & 0xFFF) << 52) | (h >> 12);
        if (i < 512)
            b32 = (uint32_t)i << 23;  // every exponent with a zero fraction
        float x32 = pp_f32_from_bits(b32);
        double v = pp_decode(PP_FMT_FP32, b32), x64 = pp_f64_from_bits(b64);
        if (isnan(x32)) {
            if (!isnan(v))
                report(&fails, "decode_fp32_nan", PP_FMT_FP32, -1, b32, 0, v, NAN);
        } else if (!pp_test_same_bits(v, (double)x32) || pp_encode(PP_FMT_FP32, v) != b32 ||
                   !pp_test_same_bits(pp_round(PP_FMT_FP32, v, all_modes[i % 3], (uint32_t)h), v)) {
            report(&fails, "decode_round_encode_fp32", PP_FMT_FP32, (int)(i % 3), b32, (double)x32, v, (double)x32);
        }
        if (!pp_test_same_bits(pp_decode(PP_FMT_FP64, b64), x64) ||
            !pp_test_same_bits(pp_round(PP_FMT_FP64, x64, all_modes[i % 3], (uint32_t)h), x64) ||
            (!isnan(x64) && pp_encode(PP_FMT_FP64, x64) != b64))
            report(&fails, "decode_round_encode_fp64", PP_FMT_FP64, (int)(i % 3), b64, x64, pp_decode(PP_FMT_FP64, b64), x64);
    }
    assert_int_equal(fails, 0);
}

// tf32 decode ignores the 13 low bits (zero in a tf32 pattern) of a non-NaN pattern.
static void decode_tf32_ignores_low_bits(void **state)
{
    (void)state;
    assert_true(pp_decode(PP_FMT_TF32, 0x3F801FFFu) == 1.0);
    assert_true(pp_decode(PP_FMT_TF32, 0xBF803000u) == -(1.0 + 0x1p-10));
    assert_true(pp_decode(PP_FMT_TF32, 0x7F801FFFu) != pp_decode(PP_FMT_TF32, 0x7F801FFFu));  // NaN
}

// ---------------------------------------------------------------------------------------------
// Deterministic rounding: hand-computed cases (the value's neighbours worked out in comments)

typedef struct hand_case {
    pp_format_id f;
    double x, ne, tz;
} hand_case;

static void round_hand_cases(void **state)
{
    (void)state;
    const hand_case cases[] = {
        // fp16, p = 11: neighbours of 1 are 1 and 1 + 2^-10
        {PP_FMT_FP16, 1 + 0x1p-11, 1, 1},                                  // tie, 1 is even
        {PP_FMT_FP16, 1 + 0x1p-10 + 0x1p-11, 1 + 0x1p-9, 1 + 0x1p-10},     // tie, 1 + 2^-10 is odd
        {PP_FMT_FP16, 1 + 0x1p-11 + 0x1p-40, 1 + 0x1p-10, 1},              // just above the tie
        {PP_FMT_FP16, 2 - 0x1p-12, 2, 2 - 0x1p-10},                        // rounds up into the next binade
        {PP_FMT_FP16, 0x1p-25, 0, 0},                                      // half the smallest subnormal: tie to 0
        {PP_FMT_FP16, 0x1p-25 + 0x1p-60, 0x1p-24, 0},                      // just above it
        {PP_FMT_FP16, 0x3p-25, 0x1p-23, 0x1p-24},                          // 1.5 subnormal ulps: tie to 2
        {PP_FMT_FP16, 0x1p-14 - 0x1p-25, 0x1p-14, 0x1p-14 - 0x1p-24},      // top subnormal to 2^emin
        {PP_FMT_FP16, -65519.99, -65504, -65504},
        {PP_FMT_FP16, 65520, INFINITY, 65504},                             // max + ½ulp: tie to 2^16
        {PP_FMT_FP16, 0x1p-1074, 0, 0},                                    // binary64 subnormal
        // bf16, p = 8
        {PP_FMT_BF16, 1 + 0x1p-8, 1, 1},
        {PP_FMT_BF16, 1 + 0x3p-8, 1 + 0x1p-6, 1 + 0x1p-7},
        {PP_FMT_BF16, 0x1p-134, 0, 0},                                     // half of 2^-133
        {PP_FMT_BF16, 0x1.8p-134, 0x1p-133, 0},
        {PP_FMT_BF16, -0x1.ffp127, -INFINITY, -0x1.fep127},                // max + ½ulp: tie to 2^128
        // tf32, p = 11 in binary32's range
        {PP_FMT_TF32, 1 + 0x1p-11, 1, 1},
        {PP_FMT_TF32, 0x1p-137, 0, 0},                                     // half of 2^-136
        {PP_FMT_TF32, 0x1.0000001p-137, 0x1p-136, 0},
        // E4M3, p = 4: 16, 18, 20 are neighbours in [16, 32)
        {PP_FMT_E4M3, 17, 16, 16},
        {PP_FMT_E4M3, 19, 20, 18},
        {PP_FMT_E4M3, 0x1p-10, 0, 0},                                      // half of 2^-9
        {PP_FMT_E4M3, 0x3p-10, 0x1p-8, 0x1p-9},
        {PP_FMT_E4M3, 449, 448, 448},
        // E5M2, p = 3: 1, 1.25, 1.5 are neighbours
        {PP_FMT_E5M2, 1.125, 1, 1},
        {PP_FMT_E5M2, 1.375, 1.5, 1.25},
        {PP_FMT_E5M2, 0x1p-17, 0, 0},
        {PP_FMT_E5M2, 61440, INFINITY, 57344},                             // 57344 = 1.11·2^15 is odd
        {PP_FMT_E5M2, 61439, 57344, 57344},
        // fp32 and fp64
        {PP_FMT_FP32, 1 + 0x1p-24, 1, 1},
        {PP_FMT_FP32, 1 + 0x1p-24 + 0x1p-50, 1 + 0x1p-23, 1},
        {PP_FMT_FP32, 0x1p-150, 0, 0},
        {PP_FMT_FP32, 0x1.000001p-150, 0x1p-149, 0},
        {PP_FMT_FP32, 0x1.ffffffp127, INFINITY, 0x1.fffffep127},
        {PP_FMT_FP64, 0x1p-1074, 0x1p-1074, 0x1p-1074},
        {PP_FMT_FP64, -DBL_MIN / 3, -DBL_MIN / 3, -DBL_MIN / 3},
    };
    int fails = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const hand_case *c = &cases[i];
        double ne = pp_round(c->f, c->x, PP_RND_NE, 0), tz = pp_round(c->f, c->x, PP_RND_TZ, 0);
        if (!pp_test_same_bits(ne, c->ne))
            report(&fails, "round_hand_cases", c->f, 0, i, c->x, ne, c->ne);
        if (!pp_test_same_bits(tz, c->tz))
            report(&fails, "round_hand_cases", c->f, 1, i, c->x, tz, c->tz);
        // sign flip: rounding is symmetric
        if (!pp_test_same_bits(pp_round(c->f, -c->x, PP_RND_NE, 0), -c->ne))
            report(&fails, "round_hand_cases_negated", c->f, 0, i, -c->x, pp_round(c->f, -c->x, PP_RND_NE, 0), -c->ne);
        if (!pp_test_same_bits(pp_round(c->f, -c->x, PP_RND_TZ, 0), -c->tz))
            report(&fails, "round_hand_cases_negated", c->f, 1, i, -c->x, pp_round(c->f, -c->x, PP_RND_TZ, 0), -c->tz);
        // SR: rbits = 0xFFFFFFFF never rounds away, so it equals TZ
        double sr = pp_round(c->f, c->x, PP_RND_SR, 0xFFFFFFFFu);
        if (!pp_test_same_bits(sr, c->tz))
            report(&fails, "round_sr_all_ones_is_tz", c->f, 2, i, c->x, sr, c->tz);
    }
    assert_int_equal(fails, 0);
}

// Binary64 subnormal inputs lie below every other format's smallest subnormal by far: NE and TZ
// give ±0, and so does SR for any bits (the dropped fraction is below 2^-32).
static void round_binary64_subnormal_inputs(void **state)
{
    (void)state;
    const double xs[4] = {0x1p-1074, DBL_MIN / 2, DBL_MIN - 0x1p-1074, 0x1.23456789p-1030};
    for (int f = 1; f < PP_TEST_FMT_IEEE; f++)
        for (int i = 0; i < 4; i++)
            for (int m = 0; m < 3; m++)
                for (int r = 0; r < 6; r++) {
                    assert_true(pp_test_same_bits(pp_round((pp_format_id)f, xs[i], all_modes[m], some_rbits[r]), 0.0));
                    assert_true(pp_test_same_bits(pp_round((pp_format_id)f, -xs[i], all_modes[m], some_rbits[r]), -0.0));
                }
    // and DBL_MIN itself is still tiny for every format but fp64
    assert_true(pp_test_same_bits(pp_round(PP_FMT_FP64, -0x1p-1074, PP_RND_NE, 0), -0x1p-1074));
}

static void is_representable_cases(void **state)
{
    (void)state;
    for (int f = 0; f < PP_TEST_FMT_IEEE; f++) {
        assert_true(pp_is_representable((pp_format_id)f, NAN));
        assert_true(pp_is_representable((pp_format_id)f, -0.0));
        assert_false(pp_is_representable((pp_format_id)f, 0.1) && f != PP_FMT_FP64);
        assert_false(pp_is_representable((pp_format_id)f, 1.0 / 3.0) && f != PP_FMT_FP64);
    }
    assert_true(pp_is_representable(PP_FMT_FP16, 65504) && !pp_is_representable(PP_FMT_FP16, 65505));
    assert_true(pp_is_representable(PP_FMT_FP16, 0x1p-24) && !pp_is_representable(PP_FMT_FP16, 0x1p-25));
    assert_true(pp_is_representable(PP_FMT_BF16, 0x1p-133) && !pp_is_representable(PP_FMT_BF16, 0x1p-134));
    assert_true(pp_is_representable(PP_FMT_FP64, 1.0 / 3.0) && pp_is_representable(PP_FMT_FP64, INFINITY));
    assert_false(pp_is_representable(PP_FMT_FP32, 1e39) || pp_is_representable(PP_FMT_TF32, 1 + 0x1p-11));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        // special values
        cmocka_unit_test(format_get_table_consistent),
        cmocka_unit_test(format_get_e4m3_max_448_no_inf),
        cmocka_unit_test(format_get_unknown_id),
        cmocka_unit_test(format_validate_codes),
        cmocka_unit_test(round_nan_propagates_unchanged),
        cmocka_unit_test(round_signed_zero_kept),
        cmocka_unit_test(round_inf_kept_or_saturated),
        cmocka_unit_test(round_overflow_rules),
        cmocka_unit_test(decode_nan_patterns_all),
        cmocka_unit_test(encode_inf_and_out_of_range),
        // exact inputs
        cmocka_unit_test(decode_round_encode_all_patterns_fp16),
        cmocka_unit_test(decode_round_encode_all_patterns_bf16),
        cmocka_unit_test(decode_round_encode_all_patterns_e4m3),
        cmocka_unit_test(decode_round_encode_all_patterns_e5m2),
        cmocka_unit_test(decode_round_encode_all_patterns_tf32),
        cmocka_unit_test(decode_round_encode_sampled_fp32_fp64),
        cmocka_unit_test(decode_tf32_ignores_low_bits),
        cmocka_unit_test(is_representable_cases),
        // deterministic rounding
        cmocka_unit_test(round_hand_cases),
        cmocka_unit_test(round_binary64_subnormal_inputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
