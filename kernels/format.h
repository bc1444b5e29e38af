// format.h — the one table of number formats and the one definition of rounding into them.
// Compiled by the C compiler (CPU emulation, host code) and by nvcc (CUDA kernels): PP_HD.
// Every value of every format is exactly a binary64 value, so host code carries values as double.
#ifndef PP_FORMAT_H
#define PP_FORMAT_H

#include <math.h>  // not needed here; kept because includers have relied on it
#include <stdint.h>
#include <string.h>

#include "pp_hd.h"

// ---------------------------------------------------------------------------------------------
// The formats

typedef enum pp_format_id {
    PP_FMT_FP64 = 0,
    PP_FMT_FP32,
    PP_FMT_TF32,  // p = 11 in binary32's exponent range, stored as binary32 with 13 low zero bits
    PP_FMT_FP16,
    PP_FMT_BF16,
    PP_FMT_E4M3,  // OCP FP8 E4M3: no infinities, S.1111.111 is NaN, max finite 448
    PP_FMT_E5M2,  // OCP FP8 E5M2: IEEE-like, with infinities
    // Appended (ids above keep their meaning in stored reports). OCP MX v1.0 §5.3-5.4:
    PP_FMT_E8M0,  // MX scale: unsigned, exponent only, 2^−127..2^127, 0xFF is NaN, no zero
    PP_FMT_E2M1,  // FP4: max 6.0, subnormal 0.5, no Inf or NaN
    PP_FMT_E2M3,  // FP6: max 7.5, no Inf or NaN
    PP_FMT_E3M2,  // FP6: max 28.0, no Inf or NaN
    PP_FMT_COUNT
} pp_format_id;

typedef struct pp_format {
    const char *name;    // the name used on the command line and in case files
    int p;               // precision in bits, implicit bit included
    int emin;            // exponent of the smallest normal: 2^emin
    int emax;            // exponent of the largest binade
    double max_finite;   // stored explicitly: E4M3 stops at 448, not the 480 p and emax imply
    int has_inf;         // ±Inf exists (all-ones exponent, zero fraction)
    int has_nan;         // PP_NAN_NONE, PP_NAN_IEEE or PP_NAN_ALL_ONES (where NaN lives)
    int has_subnormals;  // 0 only for E8M0 (no zero either: its smallest value is 2^−127)
    int is_signed;       // 0 only for E8M0 (no sign bit)
    int storage_bits;    // width of the stored bit pattern (tf32 is stored in 32 bits)
} pp_format;

// Where a format keeps its NaN.
enum {
    PP_NAN_NONE = 0,     // no NaN (FP4, FP6: OCP MX v1.0 §5.3)
    PP_NAN_IEEE = 1,     // all-ones exponent with a nonzero fraction
    PP_NAN_ALL_ONES = 2  // only the all-ones magnitude (E4M3 S.1111.111, E8M0 0xFF)
};

// Rounding modes: one line each.
typedef enum pp_rounding {
    PP_RND_NE = 0,  // to nearest, ties to even
    PP_RND_TZ,      // toward zero
    PP_RND_SR,      // stochastic: away from zero with probability floor(frac·2^32)/2^32 (below)
    // A flag OR-ed into a mode, not a mode: overflow and ±Inf give ±max_finite instead of Inf
    // (or NaN where the format has NaN but no Inf). What TransformerEngine's casts do (cvt with
    // .satfinite); torch's .to(float8_*) does not saturate. From C++: (pp_rounding)(m | PP_RND_SAT).
    PP_RND_SAT = 0x10
} pp_rounding;

#define PP_RND_MODE_MASK 0x0F

// What an overflow becomes (pp_round_mag64_/32_'s ovf): the format and the saturation flag decide.
enum { PP_OVF_SAT = 0, PP_OVF_INF = 1, PP_OVF_NAN = 2 };

// A constructor instead of a compound literal, which C++ (nvcc) does not have.
// has_nan PP_NAN_IEEE with has_inf, PP_NAN_ALL_ONES without: set apart by pp_format_get below.
PP_HD static inline pp_format pp_format_make_(const char *name, int p, int emin, int emax,
                                              double max_finite, int has_inf, int storage_bits)
{
    pp_format F;
    F.name = name;
    F.p = p;
    F.emin = emin;
    F.emax = emax;
    F.max_finite = max_finite;
    F.has_inf = has_inf;
    F.has_nan = has_inf ? PP_NAN_IEEE : PP_NAN_ALL_ONES;
    F.has_subnormals = 1;
    F.is_signed = 1;
    F.storage_bits = storage_bits;
    return F;
}

// An OCP MX element format (FP6, FP4): signed, subnormals, no Inf, no NaN (OCP MX v1.0 §5.3).
PP_HD static inline pp_format pp_format_mx_elem_(const char *name, int p, int emin, int emax,
                                                 double max_finite, int storage_bits)
{
    pp_format F = pp_format_make_(name, p, emin, emax, max_finite, 0, storage_bits);
    F.has_nan = PP_NAN_NONE;
    return F;
}

// E8M0 (OCP MX v1.0 §5.4.1): 2^(e−127) for e = 0..254, 0xFF NaN; no sign, zero, subnormal, Inf.
PP_HD static inline pp_format pp_format_e8m0_(void)
{
    pp_format F = pp_format_make_("e8m0", 1, -127, 127, 1.7014118346046923e38, 0, 8);
    F.has_subnormals = 0;
    F.is_signed = 0;
    return F;
}

// The table. A function, not a global, so that nvcc and the C compiler see the same constants.
// max_finite is (2 − 2^(1−p))·2^emax except for E4M3, whose top pattern S.1111.111 is NaN.
// An id outside [0, PP_FMT_COUNT) gives name "?" and p = 0.
PP_HD static inline pp_format pp_format_get(pp_format_id f)
{
    switch (f) {
    case PP_FMT_FP64: return pp_format_make_("fp64", 53, -1022, 1023, 1.7976931348623157e308, 1, 64);
    case PP_FMT_FP32: return pp_format_make_("fp32", 24, -126, 127, 3.4028234663852886e38, 1, 32);
    case PP_FMT_TF32: return pp_format_make_("tf32", 11, -126, 127, 3.4011621342146535e38, 1, 32);
    case PP_FMT_FP16: return pp_format_make_("fp16", 11, -14, 15, 65504.0, 1, 16);
    case PP_FMT_BF16: return pp_format_make_("bf16", 8, -126, 127, 3.3895313892515355e38, 1, 16);
    case PP_FMT_E4M3: return pp_format_make_("e4m3", 4, -6, 8, 448.0, 0, 8);
    case PP_FMT_E5M2: return pp_format_make_("e5m2", 3, -14, 15, 57344.0, 1, 8);
    case PP_FMT_E8M0: return pp_format_e8m0_();
    case PP_FMT_E2M1: return pp_format_mx_elem_("e2m1", 2, 0, 2, 6.0, 4);
    case PP_FMT_E2M3: return pp_format_mx_elem_("e2m3", 4, 0, 2, 7.5, 6);
    case PP_FMT_E3M2: return pp_format_mx_elem_("e3m2", 3, -2, 4, 28.0, 6);
    default: return pp_format_make_("?", 0, 0, 0, 0.0, 0, 0);
    }
}

// Return codes of pp_format_validate: errors positive, warnings negative.
enum {
    PP_FMT_OK = 0,
    PP_FMT_ERR_UNKNOWN = 1,            // the id names no format
    PP_FMT_WARN_BINARY32_INEXACT = -1  // one binary32 operation then rounding is not exact
};

// Whether one binary32 operation (+ − × ÷ √ on values of f), rounded to nearest and then
// rounded to f with pp_round (PP_RND_NE), equals the correctly rounded operation in f.
// @param [in] f  the format.
// The rule: p ≤ 11, so 24 ≥ 2p + 2 and the double rounding is innocuous while binary32 is normal
// (Figueroa, "When is double rounding innocuous?", 1995); and where f reaches binary32's
// subnormal range (|r| < 2^−126) binary32 must still keep ≥ 2p bits below f's last place
// (149 + emin − p + 1 ≥ 2p). bf16 passes with exactly 2p = 16: there sums are exact, products
// are exact or below half of bf16's smallest subnormal, and quotients stay more than 2^−150 from
// a bf16 midpoint. tf32 fails with 13 < 22: (1099·2^−75)·(1379·2^−75) rounds to 92·2^−136, not
// 93·2^−136 (tests/test_round_mpfr.c). fp16, E4M3 and E5M2 never reach binary32's subnormals.
// Returns PP_FMT_OK for fp32 (the binary32 operation is the fp32 operation), fp16, bf16, E4M3,
// E5M2, E2M1, E2M3, E3M2; PP_FMT_WARN_BINARY32_INEXACT for tf32 (inexact only for results below
// 2^−126), fp64 (compute in binary64 or MPFR instead) and E8M0 (its ties round up, so a binary32
// result rounded onto a midpoint goes up); PP_FMT_ERR_UNKNOWN for an id outside the table.
PP_HD static inline int pp_format_validate(pp_format_id f)
{
    if ((unsigned)f >= (unsigned)PP_FMT_COUNT)
        return PP_FMT_ERR_UNKNOWN;
    if (f == PP_FMT_FP32)
        return PP_FMT_OK;
    pp_format F = pp_format_get(f);
    if (!F.has_subnormals)  // E8M0: ties go up (the kept digit is always 1), so not Figueroa's case
        return PP_FMT_WARN_BINARY32_INEXACT;
    if (24 >= 2 * F.p + 2 && F.emin >= -126 && F.emax <= 127 && 149 + F.emin - F.p + 1 >= 2 * F.p)
        return PP_FMT_OK;
    return PP_FMT_WARN_BINARY32_INEXACT;
}

// ---------------------------------------------------------------------------------------------
// Bit access (exact reinterpretation; no floating-point operation touches the value)

PP_HD static inline uint64_t pp_f64_bits(double x)
{
#ifdef __CUDA_ARCH__
    return (uint64_t)__double_as_longlong(x);
#else
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
#endif
}

PP_HD static inline double pp_f64_from_bits(uint64_t b)
{
#ifdef __CUDA_ARCH__
    return __longlong_as_double((long long)b);
#else
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
#endif
}

PP_HD static inline uint32_t pp_f32_bits(float x)
{
#ifdef __CUDA_ARCH__
    return __float_as_uint(x);
#else
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    return b;
#endif
}

PP_HD static inline float pp_f32_from_bits(uint32_t b)
{
#ifdef __CUDA_ARCH__
    return __uint_as_float(b);
#else
    float x;
    memcpy(&x, &b, sizeof x);
    return x;
#endif
}

#define PP_F64_SIGN UINT64_C(0x8000000000000000)
#define PP_F64_INF UINT64_C(0x7FF0000000000000)
#define PP_F64_QNAN UINT64_C(0x7FF8000000000000)
#define PP_F64_FRAC UINT64_C(0x000FFFFFFFFFFFFF)
#define PP_F32_INF 0x7F800000u

// Bits of 2^e as binary64, for −1074 ≤ e ≤ 1023.
PP_HD static inline uint64_t pp_pow2_bits_(int e)
{
    return e >= -1022 ? (uint64_t)(e + 1023) << 52 : (uint64_t)1 << (e + 1074);
}

// Bits of 2^e as binary32, for −149 ≤ e ≤ 127.
PP_HD static inline uint32_t pp_pow2_bits32_(int e)
{
    return e >= -126 ? (uint32_t)(e + 127) << 23 : (uint32_t)1 << (e + 149);
}

// The stochastic-rounding threshold floor(rem·2^(32−k)) = floor(frac·2^32), where rem < 2^k are
// the k dropped bits and frac = rem/2^k the dropped fraction of an ulp. Requires k ≥ 1.
PP_HD static inline uint64_t pp_sr_threshold_(uint64_t rem, int k)
{
    if (k <= 32)
        return rem << (32 - k);  // rem < 2^k, so the result is < 2^32
    return k - 32 < 64 ? rem >> (k - 32) : 0;
}

// ---------------------------------------------------------------------------------------------
// Rounding: the rule, once, on binary64 bits and on binary32 bits
//
// Let |x| = M·2^e (M the significand as an integer, e the exponent of its last bit). The target's
// quantum at |x| is 2^q with q = max(E, emin) − (p − 1), E = floor(log2 |x|); so the k = q − e
// low bits of M are dropped. Kept bits: clear them; rounding up: add 2^k to the bit pattern,
// whose carry runs into the exponent field exactly as the value's does (the layout is
// monotonic). When k exceeds the fraction field, every bit is dropped and the result is 0 or
// 2^q. Overflow is decided last, on the rounded magnitude: result > max_finite.

// Rounds the magnitude bits a (binary64, not NaN) to (p, emin, max_bits) in mode (no flag bits).
// Any mode other than PP_RND_NE and PP_RND_SR rounds toward zero. ovf (PP_OVF_*) says what ±Inf
// and an overflow in NE or SR become: Inf, NaN, or max_bits; TZ overflows to max_bits always.
PP_HD static inline uint64_t pp_round_mag64_(uint64_t a, int p, int emin, uint64_t max_bits,
                                              int ovf, pp_rounding mode, uint32_t rbits)
{
    int ne = mode == PP_RND_NE, sr = mode == PP_RND_SR;
    uint64_t lo = (uint64_t)(emin + 1023) << 52;  // 2^emin
    if (a - lo < max_bits - lo) {  // the common case: 2^emin ≤ |x| < max_finite, k = 53 − p
        int kn = 53 - p;
        if (kn == 0)
            return a;
        uint64_t mask = ((uint64_t)1 << kn) - 1, rem = a & mask;
        // no overflow: rounding up from below max_finite reaches at most max_finite
        int up = ne ? rem + ((a >> kn) & 1) > ((uint64_t)1 << (kn - 1))
                    : sr && (uint64_t)rbits < pp_sr_threshold_(rem, kn);
        return (a - rem) + (up ? mask + 1 : 0);
    }
    int be = (int)(a >> 52);
    if (be == 2047)  // ±Inf: exact where the format has it, else NaN or saturated
        return ovf == PP_OVF_INF ? a : ovf == PP_OVF_NAN ? PP_F64_QNAN : max_bits;
    int e = (be ? be : 1) - 1075;  // |x| = M·2^e
    int E = be - 1023;
    if (be == 0 || E < emin)
        E = emin;                  // subnormal range of the target: the quantum stops shrinking
    int k = E - (p - 1) - e;       // dropped bits
    uint64_t r = a;
    if (k > 0 && k <= 52) {
        uint64_t mask = ((uint64_t)1 << k) - 1, rem = a & mask;
        // parity of the kept part M >> k: bit k of the pattern, except at k = 52 where it is
        // the implicit bit (1 for a normal binary64)
        uint64_t odd = k < 52 ? (a >> k) & 1 : (uint64_t)(be != 0);
        int up = ne ? rem + odd > ((uint64_t)1 << (k - 1))
                    : sr && (uint64_t)rbits < pp_sr_threshold_(rem, k);
        r = (a - rem) + (up ? mask + 1 : 0);
    } else if (k > 52) {  // |x| < 2^q: the result is 0 or 2^q
        uint64_t M = (a & PP_F64_FRAC) | (be ? PP_F64_FRAC + 1 : 0);
        int up = ne ? k == 53 && M > PP_F64_FRAC + 1  // above the midpoint 2^52·2^e = 2^(q−1)
                    : sr && (uint64_t)rbits < pp_sr_threshold_(M, k);
        r = up ? pp_pow2_bits_(e + k) : 0;
    }
    if (r > max_bits)
        r = !(ne || sr) || ovf == PP_OVF_SAT ? max_bits : ovf == PP_OVF_INF ? PP_F64_INF : PP_F64_QNAN;
    return r;
}

// The same on binary32 magnitude bits a (not NaN). Requires emin ≥ −126 and p ≤ 24 (a target
// no wider than binary32), so the result is a binary32 value.
PP_HD static inline uint32_t pp_round_mag32_(uint32_t a, int p, int emin, uint32_t max_bits,
                                              int ovf, pp_rounding mode, uint32_t rbits)
{
    int ne = mode == PP_RND_NE, sr = mode == PP_RND_SR;
    uint32_t lo = (uint32_t)(emin + 127) << 23;
    if (a - lo < max_bits - lo) {  // the common case, as in pp_round_mag64_
        int kn = 24 - p;
        if (kn == 0)
            return a;
        uint32_t mask = (1u << kn) - 1, rem = a & mask;
        int up = ne ? rem + ((a >> kn) & 1) > (1u << (kn - 1))
                    : sr && (uint64_t)rbits < pp_sr_threshold_(rem, kn);
        return (a - rem) + (up ? mask + 1 : 0);
    }
    int be = (int)(a >> 23);
    if (be == 255)
        return ovf == PP_OVF_INF ? a : ovf == PP_OVF_NAN ? 0x7FC00000u : max_bits;
    int e = (be ? be : 1) - 150;
    int E = be - 127;
    if (be == 0 || E < emin)
        E = emin;
    int k = E - (p - 1) - e;
    uint32_t r = a;
    if (k > 0 && k <= 23) {
        uint32_t mask = (1u << k) - 1, rem = a & mask;
        uint32_t odd = k < 23 ? (a >> k) & 1 : (uint32_t)(be != 0);
        int up = ne ? rem + odd > (1u << (k - 1))
                    : sr && (uint64_t)rbits < pp_sr_threshold_(rem, k);
        r = (a - rem) + (up ? mask + 1 : 0);
    } else if (k > 23) {
        uint32_t M = (a & 0x7FFFFFu) | (be ? 0x800000u : 0);
        int up = ne ? k == 24 && M > 0x800000u : sr && (uint64_t)rbits < pp_sr_threshold_(M, k);
        r = up ? pp_pow2_bits32_(e + k) : 0;
    }
    if (r > max_bits)
        r = !(ne || sr) || ovf == PP_OVF_SAT ? max_bits : ovf == PP_OVF_INF ? PP_F32_INF : 0x7FC00000u;
    return r;
}

// Signed binary64 rounding with explicit format parameters (the body of pp_round and of the
// named fp32 functions). NaN in: the same NaN out, bits unchanged.
PP_HD static inline double pp_round_f64_(double x, int p, int emin, uint64_t max_bits, int ovf,
                                         pp_rounding mode, uint32_t rbits)
{
    uint64_t u = pp_f64_bits(x), a = u & ~PP_F64_SIGN;
    if (a > PP_F64_INF)
        return x;
    return pp_f64_from_bits((u ^ a) | pp_round_mag64_(a, p, emin, max_bits, ovf, mode, rbits));
}

// Signed binary32 rounding with explicit format parameters (the body of the named functions).
PP_HD static inline float pp_round_f32_(float x, int p, int emin, uint32_t max_bits, int ovf,
                                        pp_rounding mode, uint32_t rbits)
{
    uint32_t u = pp_f32_bits(x), a = u & 0x7FFFFFFFu;
    if (a > PP_F32_INF)
        return x;
    return pp_f32_from_bits((u ^ a) | pp_round_mag32_(a, p, emin, max_bits, ovf, mode, rbits));
}

// E8M0, from binary64: torch's rule (c10/util/Float8_e8m0fnu.h, fp8e8m0fnu_from_fp32_value) on
// binary64 bits. The sign is dropped (the format has none). NE rounds to the nearest power of
// two with ties up: the kept digit is the implicit 1, always odd, so a tie (1.5·2^E) goes to
// 2^(E+1). SR goes up with probability floor(frac·2^32)/2^32, frac = |x|/2^E − 1. There is no
// zero: |x| < 2^−127 (0 included) gives 2^−127 in every mode (torch: fp32 subnormals give 2^−127
// or 2^−126 from their top fraction bits; binary32 inputs below 2^−127 are the one difference).
// ±Inf gives NaN, or 2^127 with sat; an overflow (NE: |x| ≥ 1.5·2^127) NaN, or 2^127 with sat,
// TZ 2^127. NaN in, the same NaN out.
PP_HD static inline double pp_round_e8m0_(double x, pp_rounding mode, int sat, uint32_t rbits)
{
    uint64_t a = pp_f64_bits(x) & ~PP_F64_SIGN, frac = a & PP_F64_FRAC;
    if (a > PP_F64_INF)
        return x;
    int be = (int)(a >> 52), E = be - 1023;
    if (a == PP_F64_INF)
        return pp_f64_from_bits(sat ? pp_pow2_bits_(127) : PP_F64_QNAN);
    if (be == 0 || E < -127)
        return pp_f64_from_bits(pp_pow2_bits_(-127));
    int up = mode == PP_RND_NE ? frac >= (PP_F64_FRAC + 1) / 2
                               : mode == PP_RND_SR && (uint64_t)rbits < pp_sr_threshold_(frac, 52);
    E += up;
    if (E > 127)
        return pp_f64_from_bits(sat ? pp_pow2_bits_(127) : PP_F64_QNAN);
    return pp_f64_from_bits(pp_pow2_bits_(E));
}

// The overflow policy of format F under the saturation flag sat.
PP_HD static inline int pp_ovf_(const pp_format *F, int sat)
{
    return sat ? PP_OVF_SAT : F->has_inf ? PP_OVF_INF : F->has_nan ? PP_OVF_NAN : PP_OVF_SAT;
}

// Binary64 x that is exactly a binary32 value (or NaN) as binary32, with integer operations
// only, so CPU and GPU agree on every bit. A NaN keeps its sign and the top 22 bits of its
// payload and comes out quiet (as x86 and IEEE 754 conversions do).
PP_HD static inline float pp_f32_from_exact_f64_(double x)
{
    uint64_t u = pp_f64_bits(x), a = u & ~PP_F64_SIGN;
    uint32_t s = (uint32_t)(u >> 32) & 0x80000000u, r;
    int be = (int)(a >> 52);
    if (a > PP_F64_INF)
        r = 0x7FC00000u | (uint32_t)((a >> 29) & 0x7FFFFFu);
    else if (be == 2047)
        r = PP_F32_INF;
    else if (be >= 897)  // ≥ 2^−126: a binary32 normal
        r = (uint32_t)(be - 896) << 23 | (uint32_t)((a >> 29) & 0x7FFFFFu);
    else if (be >= 874)  // binary32 subnormal, ≥ 2^−149: M·2^(be−1075) / 2^−149, exact shift
        r = (uint32_t)(((a & PP_F64_FRAC) | (PP_F64_FRAC + 1)) >> (926 - be));
    else
        r = 0;
    return pp_f32_from_bits(s | r);
}

// ---------------------------------------------------------------------------------------------
// Rounding from binary64

// r = round_f(x) in mode: the value of format f nearest x (NE), next toward zero (TZ), or one of
// the two neighbours of x chosen from the caller's random bits (SR).
// @param [in] f      the target format.
// @param [in] x      any binary64 (NaN, ±Inf, ±0, subnormals included).
// @param [in] mode   PP_RND_NE, PP_RND_TZ or PP_RND_SR (any other value rounds as PP_RND_TZ),
//                    optionally | PP_RND_SAT: overflow and ±Inf give ±max_finite.
// @param [in] rbits  32 uniformly random bits, used only by PP_RND_SR: with frac in [0,1) the
//                    fraction of an ulp that rounding toward zero drops, the magnitude rounds
//                    away from zero iff rbits < floor(frac·2^32). So P(away) = floor(frac·2^32)/2^32,
//                    E[SR(x)] − x lies in (−2^−32·ulp, 0]·sign(x) (exactly 0 when at most 32 bits
//                    are dropped); rbits = 0xFFFFFFFF gives TZ (for |x| < max + ulp(max)), rbits = 0
//                    gives away from zero whenever frac ≥ 2^−32.
// Special values: NaN in, the same NaN out (bits unchanged); −0 stays −0; ±Inf stays ±Inf where
// the format has it. Overflow without PP_RND_SAT, as torch's .to(float8_*) (c10/util/
// Float8_e4m3fn.h, Float8_e5m2.h): NE gives ±Inf once |x| > max + ½ulp, and at |x| = max + ½ulp
// when max's last bit is odd (ties to even; E5M2: |x| ≥ 61440); SR rounds between max_finite and
// max_finite + ulp, the latter ±Inf, so |x| ≥ 2^(emax+1) gives ±Inf; TZ gives ±max_finite.
// E4M3 (no Inf) gives NaN where the others give Inf: |x| > 464 in NE (464 ties to even 448), and
// ±Inf in every mode. FP4/FP6 (no Inf, no NaN) always saturate to ±max_finite (OCP MX v1.0 §5.3:
// the only choice). With PP_RND_SAT (TransformerEngine's casts), overflow and ±Inf give
// ±max_finite in every format. E8M0: pp_round_e8m0_ above (unsigned, no zero, ties up).
// An id outside the table gives a quiet NaN.
// Returns the rounded value as a binary64, exactly. Integer operations only: the result does not
// depend on the floating-point environment, and is the same on CPU and GPU.
// Bound: |r − x| ≤ ½ ulp_f(r) (NE), < ulp_f(x) (TZ, SR) for finite, non-overflowing x.
PP_HD static inline double pp_round(pp_format_id f, double x, pp_rounding mode, uint32_t rbits)
{
    if ((unsigned)f >= (unsigned)PP_FMT_COUNT)
        return pp_f64_from_bits(PP_F64_QNAN);
    pp_format F = pp_format_get(f);
    int sat = ((int)mode & PP_RND_SAT) != 0;
    pp_rounding m = (pp_rounding)((int)mode & PP_RND_MODE_MASK);
    if (f == PP_FMT_E8M0)
        return pp_round_e8m0_(x, m, sat, rbits);
    return pp_round_f64_(x, F.p, F.emin, pp_f64_bits(F.max_finite), pp_ovf_(&F, sat), m, rbits);
}

// r = round_f(x) for a binary32 x: pp_round on (double)x, returned as binary32 (exact for every
// format but fp64, whose result is x itself). NaN in, the same NaN out, bits unchanged.
PP_HD static inline float pp_round_from_f32(pp_format_id f, float x, pp_rounding mode, uint32_t rbits)
{
    if (x != x)
        return x;
    return pp_f32_from_exact_f64_(pp_round(f, (double)x, mode, rbits));
}

// True when x is exactly a value of format f (NaN and ±Inf count where the format has them).
PP_HD static inline int pp_is_representable(pp_format_id f, double x)
{
    uint64_t a = pp_f64_bits(x) & ~PP_F64_SIGN;
    if ((unsigned)f >= (unsigned)PP_FMT_COUNT)
        return 0;
    if (a > PP_F64_INF)
        return pp_format_get(f).has_nan != PP_NAN_NONE;
    if (a == PP_F64_INF)
        return pp_format_get(f).has_inf;
    return pp_f64_bits(pp_round(f, x, PP_RND_TZ, 0)) == pp_f64_bits(x);
}

// ---------------------------------------------------------------------------------------------
// Named rounding functions for hot loops: the same rule with the format's constants folded in.
// From binary32: tf32, fp16, bf16, E4M3, E5M2. From binary64: fp32. Each equals pp_round (via
// pp_round_from_f32 for binary32 input) bit for bit, NaN and −0 included: checked by
// tests/test_round_exhaustive.c over every sign, exponent and top-7-fraction-bit pattern with
// all near-midpoint low bits, plus every 1021st binary32 (fp32: against the hardware
// conversion), and against MPFR by tests/test_round_mpfr.c. Named like PP_RND_* modes:
// pp_round_<fmt>_ne, _tz, _sr(x, rbits).

#define PP_TF32_MAX_BITS 0x7F7FE000u  // (2 − 2^−10)·2^127
#define PP_FP16_MAX_BITS 0x477FE000u  // 65504
#define PP_BF16_MAX_BITS 0x7F7F0000u  // (2 − 2^−7)·2^127
#define PP_E4M3_MAX_BITS 0x43E00000u  // 448 (overflow gives NaN: torch's float8_e4m3fn)
#define PP_E5M2_MAX_BITS 0x47600000u  // 57344
#define PP_FP32_MAX_BITS64 UINT64_C(0x47EFFFFFE0000000)  // FLT_MAX as binary64

PP_HD static inline float pp_round_tf32_ne(float x) { return pp_round_f32_(x, 11, -126, PP_TF32_MAX_BITS, 1, PP_RND_NE, 0); }
PP_HD static inline float pp_round_tf32_tz(float x) { return pp_round_f32_(x, 11, -126, PP_TF32_MAX_BITS, 1, PP_RND_TZ, 0); }
PP_HD static inline float pp_round_tf32_sr(float x, uint32_t rbits) { return pp_round_f32_(x, 11, -126, PP_TF32_MAX_BITS, 1, PP_RND_SR, rbits); }

PP_HD static inline float pp_round_fp16_ne(float x) { return pp_round_f32_(x, 11, -14, PP_FP16_MAX_BITS, 1, PP_RND_NE, 0); }
PP_HD static inline float pp_round_fp16_tz(float x) { return pp_round_f32_(x, 11, -14, PP_FP16_MAX_BITS, 1, PP_RND_TZ, 0); }
PP_HD static inline float pp_round_fp16_sr(float x, uint32_t rbits) { return pp_round_f32_(x, 11, -14, PP_FP16_MAX_BITS, 1, PP_RND_SR, rbits); }

// bf16 has binary32's exponent range, so every binary32 other than NaN drops exactly its low 16
// bits (normal, subnormal, overflow to Inf alike): the generic rule's k is 16 everywhere, and
// nearest-even and stochastic reduce to a few integer operations on the whole pattern (a carry
// out of the top magnitude gives Inf's pattern, never the sign bit). Branch-free, so lane loops
// vectorise them (cpu/adamw_lanes.c); the same bits as pp_round_f32_ (test_round_exhaustive.c).
PP_HD static inline float pp_round_bf16_ne(float x)
{
    uint32_t u = pp_f32_bits(x);
    uint32_t r = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;  // up iff rem + odd > 2^15
    return (u & 0x7FFFFFFFu) > PP_F32_INF ? x : pp_f32_from_bits(r);
}
PP_HD static inline float pp_round_bf16_tz(float x) { return pp_round_f32_(x, 8, -126, PP_BF16_MAX_BITS, 1, PP_RND_TZ, 0); }
// up iff rbits < rem·2^16: the generic SR threshold for k = 16 (rem·2^16 < 2^32)
PP_HD static inline float pp_round_bf16_sr(float x, uint32_t rbits)
{
    uint32_t u = pp_f32_bits(x);
    uint32_t r = (u & 0xFFFF0000u) + (rbits < (u << 16) ? 0x10000u : 0u);
    return (u & 0x7FFFFFFFu) > PP_F32_INF ? x : pp_f32_from_bits(r);
}

PP_HD static inline float pp_round_e4m3_ne(float x) { return pp_round_f32_(x, 4, -6, PP_E4M3_MAX_BITS, PP_OVF_NAN, PP_RND_NE, 0); }
PP_HD static inline float pp_round_e4m3_tz(float x) { return pp_round_f32_(x, 4, -6, PP_E4M3_MAX_BITS, PP_OVF_NAN, PP_RND_TZ, 0); }
PP_HD static inline float pp_round_e4m3_sr(float x, uint32_t rbits) { return pp_round_f32_(x, 4, -6, PP_E4M3_MAX_BITS, PP_OVF_NAN, PP_RND_SR, rbits); }

PP_HD static inline float pp_round_e5m2_ne(float x) { return pp_round_f32_(x, 3, -14, PP_E5M2_MAX_BITS, 1, PP_RND_NE, 0); }
PP_HD static inline float pp_round_e5m2_tz(float x) { return pp_round_f32_(x, 3, -14, PP_E5M2_MAX_BITS, 1, PP_RND_TZ, 0); }
PP_HD static inline float pp_round_e5m2_sr(float x, uint32_t rbits) { return pp_round_f32_(x, 3, -14, PP_E5M2_MAX_BITS, 1, PP_RND_SR, rbits); }

// fp32 from binary64 (what a binary64 → binary32 conversion does, in each mode). A NaN comes out
// as the quiet binary32 NaN with x's sign and the top of its payload.
PP_HD static inline float pp_round_fp32_ne(double x) { return pp_f32_from_exact_f64_(pp_round_f64_(x, 24, -126, PP_FP32_MAX_BITS64, 1, PP_RND_NE, 0)); }
PP_HD static inline float pp_round_fp32_tz(double x) { return pp_f32_from_exact_f64_(pp_round_f64_(x, 24, -126, PP_FP32_MAX_BITS64, 1, PP_RND_TZ, 0)); }
PP_HD static inline float pp_round_fp32_sr(double x, uint32_t rbits) { return pp_f32_from_exact_f64_(pp_round_f64_(x, 24, -126, PP_FP32_MAX_BITS64, 1, PP_RND_SR, rbits)); }

// ---------------------------------------------------------------------------------------------
// Storage bit patterns

// Storage layout of f: widths of the exponent and fraction fields. tf32 is laid out as binary32.
PP_HD static inline void pp_layout_(pp_format_id f, int *ebits, int *mbits)
{
    pp_format F = pp_format_get(f);
    *mbits = f == PP_FMT_TF32 ? 23 : F.p - 1;
    *ebits = F.storage_bits - F.is_signed - *mbits;
}

// Bit pattern of x (a value of f) in f's storage layout, in the low storage_bits bits.
// @param [in] f  the format; @param [in] x  a value of f.
// NaN encodes as the format's canonical quiet NaN with x's sign (E4M3: S.1111.111; E8M0: 0xFF;
// the others: all-ones exponent, top fraction bit set, payload dropped). ±Inf encodes as the Inf
// pattern, or as the NaN pattern where f has no Inf. FP4/FP6 (neither Inf nor NaN) encode NaN,
// ±Inf and magnitudes beyond their top binade as ±max_finite. E8M0 has no sign bit (x's sign is
// dropped) and encodes magnitudes below 2^−127 (0 included) as 0x00, i.e. 2^−127.
// Requires pp_is_representable(f, x); otherwise the low bits are truncated (toward zero), and a
// magnitude beyond f's top binade encodes as Inf (or NaN without Inf): defined, never UB.
// An id outside the table gives 0.
PP_HD static inline uint64_t pp_encode(pp_format_id f, double x)
{
    if ((unsigned)f >= (unsigned)PP_FMT_COUNT)
        return 0;
    pp_format F = pp_format_get(f);
    int ebits, mbits;
    pp_layout_(f, &ebits, &mbits);
    int bias = (1 << (ebits - 1)) - 1;
    uint64_t u = pp_f64_bits(x), a = u & ~PP_F64_SIGN;
    uint64_t emask = ((uint64_t)1 << ebits) - 1, mmask = ((uint64_t)1 << mbits) - 1;
    uint64_t e_field, m_field;
    uint64_t nan_m = F.has_nan == PP_NAN_ALL_ONES ? mmask : (uint64_t)1 << (mbits - 1);
    int be = (int)(a >> 52), E = be - 1023;
    if (F.has_nan == PP_NAN_NONE && (a >= PP_F64_INF || E > F.emax)) {  // FP4/FP6: saturated
        a = pp_f64_bits(F.max_finite);
        be = (int)(a >> 52);
        E = be - 1023;
    }
    if (a > PP_F64_INF || ((a == PP_F64_INF || E > F.emax) && !F.has_inf)) {
        e_field = emask;
        m_field = nan_m;
    } else if (a == PP_F64_INF || E > F.emax) {
        e_field = emask;
        m_field = 0;
    } else if (f == PP_FMT_FP64) {
        e_field = (uint64_t)be;
        m_field = a & PP_F64_FRAC;
    } else if (be == 0) {  // binary64 subnormal: below every other format's smallest subnormal
        e_field = 0;
        m_field = 0;
    } else {
        uint64_t M = (a & PP_F64_FRAC) | (PP_F64_FRAC + 1);
        if (E >= F.emin) {
            e_field = (uint64_t)(E + bias);
            m_field = (M >> (52 - mbits)) & mmask;
        } else if (!F.has_subnormals) {  // E8M0: below its smallest value
            e_field = 0;
            m_field = 0;
        } else {
            int sh = 52 - mbits + (F.emin - E);
            e_field = 0;
            m_field = sh < 64 ? M >> sh : 0;
        }
    }
    return (F.is_signed ? (u >> 63) << (ebits + mbits) : 0) | e_field << mbits | m_field;
}

// The value of bit pattern bits in f's storage layout, as binary64 (exact). Bits above
// storage_bits are ignored. NaN patterns (E4M3: S.1111.111 only; E8M0: 0xFF; FP4/FP6: none; the
// others: all-ones exponent, nonzero fraction) give a quiet binary64 NaN with the pattern's sign
// and its payload in the top fraction bits (fp64: the pattern itself, unchanged). FP4/FP6's
// all-ones exponent is a normal binade. E8M0 is unsigned, pattern e is 2^(e−127). tf32: the 13 low bits, zero in a tf32
// pattern, are ignored, except that a binary32 NaN pattern stays NaN.
// An id outside the table gives a quiet NaN.
PP_HD static inline double pp_decode(pp_format_id f, uint64_t bits)
{
    if ((unsigned)f >= (unsigned)PP_FMT_COUNT)
        return pp_f64_from_bits(PP_F64_QNAN);
    if (f == PP_FMT_FP64)
        return pp_f64_from_bits(bits);
    pp_format F = pp_format_get(f);
    int ebits, mbits;
    pp_layout_(f, &ebits, &mbits);
    int bias = (1 << (ebits - 1)) - 1;
    uint64_t emask = ((uint64_t)1 << ebits) - 1, mmask = ((uint64_t)1 << mbits) - 1;
    uint64_t e_field = (bits >> mbits) & emask, m_field = bits & mmask;
    uint64_t sign = F.is_signed ? ((bits >> (ebits + mbits)) & 1) << 63 : 0;
    int is_nan = e_field == emask && (F.has_nan == PP_NAN_ALL_ONES ? m_field == mmask
                                      : F.has_nan == PP_NAN_IEEE && m_field != 0);
    if (is_nan)
        return pp_f64_from_bits(sign | PP_F64_QNAN | m_field << (52 - mbits));
    if (f == PP_FMT_TF32)
        m_field &= ~(uint64_t)0x1FFF;
    if (e_field == emask && F.has_inf)
        return pp_f64_from_bits(sign | PP_F64_INF);
    uint64_t mag;
    if (e_field == 0 && F.has_subnormals)  // m·2^(emin − mbits): exact (m < 2^53, 2^… normal)
        mag = pp_f64_bits((double)m_field * pp_f64_from_bits(pp_pow2_bits_(F.emin - mbits)));
    else
        mag = (e_field - (uint64_t)bias + 1023) << 52 | m_field << (52 - mbits);
    return pp_f64_from_bits(sign | mag);
}

// ---------------------------------------------------------------------------------------------
// ulp and distance

// ulp_f(x): the gap between the two values of f around |x| in x's binade (for a power of two,
// the gap above it). 0 gives the smallest subnormal; beyond max_finite, the ulp of max_finite.
// NaN gives NaN; ±Inf gives the ulp of max_finite. An id outside the table gives NaN.
PP_HD static inline double pp_ulp(pp_format_id f, double x)
{
    uint64_t a = pp_f64_bits(x) & ~PP_F64_SIGN;
    if (a > PP_F64_INF)
        return x;
    if ((unsigned)f >= (unsigned)PP_FMT_COUNT)
        return pp_f64_from_bits(PP_F64_QNAN);
    pp_format F = pp_format_get(f);
    uint64_t max_bits = pp_f64_bits(F.max_finite);
    if (a > max_bits)
        a = max_bits;
    int be = (int)(a >> 52), E = be - 1023;
    if (be == 0 || E < F.emin)
        E = F.emin;
    return pp_f64_from_bits(pp_pow2_bits_(E - F.p + 1));
}

// Ordinal of a value of f: consecutive values of f get consecutive integers, +0 and −0 both 0,
// negatives negative; it is the magnitude's storage pattern (shifted down 13 bits for tf32).
// ±Inf sit one past ±max_finite (also for E4M3, which has no Inf).
// Requires x representable in f (else the magnitude is truncated as pp_encode does). NaN or an
// id outside the table gives INT64_MIN.
PP_HD static inline int64_t pp_ordinal(pp_format_id f, double x)
{
    uint64_t u = pp_f64_bits(x), a = u & ~PP_F64_SIGN;
    if (a > PP_F64_INF || (unsigned)f >= (unsigned)PP_FMT_COUNT)
        return INT64_MIN;
    uint64_t ord;
    if (a == PP_F64_INF)
        ord = pp_encode(f, pp_format_get(f).max_finite) + (f == PP_FMT_TF32 ? 0x2000 : 1);
    else
        ord = pp_encode(f, pp_f64_from_bits(a));
    if (f == PP_FMT_TF32)
        ord >>= 13;
    return u >> 63 ? -(int64_t)ord : (int64_t)ord;
}

// |ordinal_f(a) − ordinal_f(b)|: how many steps through f's values separate a and b, exactly.
// Requires a, b representable in f. NaN in either (or an id outside the table) gives UINT64_MAX.
PP_HD static inline uint64_t pp_ulp_distance_u64(pp_format_id f, double a, double b)
{
    int64_t oa = pp_ordinal(f, a), ob = pp_ordinal(f, b);
    if (oa == INT64_MIN || ob == INT64_MIN)
        return UINT64_MAX;
    // unsigned subtraction: the true difference of two ordinals in (−2^63, 2^63) fits in 64 bits
    return oa >= ob ? (uint64_t)oa - (uint64_t)ob : (uint64_t)ob - (uint64_t)oa;
}

// Distance in ulps between two values a, b of f: pp_ulp_distance_u64 as a double, so exact
// below 2^53 (always, but for fp64 values far apart: use pp_ulp_distance_u64 there).
// NaN in either gives NaN.
PP_HD static inline double pp_ulp_distance(pp_format_id f, double a, double b)
{
    if (a != a || b != b)
        return a + b;
    uint64_t d = pp_ulp_distance_u64(f, a, b);
    return d == UINT64_MAX ? pp_f64_from_bits(PP_F64_QNAN) : (double)d;
}

#endif
