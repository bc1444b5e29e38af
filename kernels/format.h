// format.h — the one table of number formats and the one definition of rounding into them.
// Compiled by the C compiler (CPU emulation, host code) and by nvcc (CUDA kernels): PP_HD.
// Every value of every format is exactly a binary64 value, so host code carries values as double.
#ifndef PP_FORMAT_H
#define PP_FORMAT_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "pp_hd.h"

// ---------------------------------------------------------------------------------------------
// The formats

typedef enum pp_format_id {
    PP_FMT_FP64 = 0,
    PP_FMT_FP32,
    PP_FMT_TF32,
    PP_FMT_FP16,
    PP_FMT_BF16,
    PP_FMT_E4M3,  // OCP FP8 E4M3: no infinities, S.1111.111 is NaN, max finite 448
    PP_FMT_E5M2,  // OCP FP8 E5M2: IEEE-like, with infinities
    PP_FMT_COUNT
} pp_format_id;

typedef struct pp_format {
    const char *name;    // the name used on the command line and in case files
    int p;               // precision in bits, implicit bit included
    int emin;            // exponent of the smallest normal: 2^emin
    int emax;            // exponent of the largest binade
    double max_finite;   // stored explicitly: E4M3 stops at 448, not the 480 p and emax imply
    int has_inf;         // 0: overflow saturates to ±max_finite (E4M3)
    int has_subnormals;  // 1 for every format here; kept so a future format can say otherwise
    int storage_bits;    // width of the stored bit pattern (tf32 is stored in 32 bits)
} pp_format;

// Rounding modes: one line each.
typedef enum pp_rounding {
    PP_RND_NE = 0,  // to nearest, ties to even
    PP_RND_TZ,      // toward zero
    PP_RND_SR       // stochastic: away from zero with probability (|x|-RZ(|x|))/ulp, from caller bits
} pp_rounding;

// The table. A function, not a global, so that nvcc and the C compiler see the same constants.
PP_HD static inline pp_format pp_format_get(pp_format_id f)
{
    switch (f) {
    case PP_FMT_FP64: return (pp_format){"fp64", 53, -1022, 1023, 1.7976931348623157e308, 1, 1, 64};
    case PP_FMT_FP32: return (pp_format){"fp32", 24, -126, 127, 3.4028234663852886e38, 1, 1, 32};
    case PP_FMT_TF32: return (pp_format){"tf32", 11, -126, 127, 3.4011621342146535e38, 1, 1, 32};
    case PP_FMT_FP16: return (pp_format){"fp16", 11, -14, 15, 65504.0, 1, 1, 16};
    case PP_FMT_BF16: return (pp_format){"bf16", 8, -126, 127, 3.3895313892515355e38, 1, 1, 16};
    case PP_FMT_E4M3: return (pp_format){"e4m3", 4, -6, 8, 448.0, 0, 1, 8};
    case PP_FMT_E5M2: return (pp_format){"e5m2", 3, -14, 15, 57344.0, 1, 1, 8};
    default: return (pp_format){"?", 0, 0, 0, 0.0, 0, 0, 0};
    }
}

// ---------------------------------------------------------------------------------------------
// Rounding from binary64

// Rounds x to format f in mode mode. rbits are the caller's 32 random bits (used only by
// PP_RND_SR): the magnitude rounds away from zero iff rbits < floor(frac·2^32), where frac in
// [0,1) is the fraction of an ulp that RZ drops, so P(away) = floor(frac·2^32)/2^32, biased
// toward zero by less than 2^-32 ulp.
// Overflow: PP_RND_NE gives ±Inf (±max_finite where the format has no Inf), PP_RND_TZ gives
// ±max_finite, PP_RND_SR rounds between max_finite and the next binade's value, which is ±Inf.
// NaN in, NaN out. The result is the rounded value as a binary64, exactly.
// Bound: |r − x| ≤ ½ ulp_f(r) (NE), < 1 ulp_f(x) (TZ, SR) for finite, non-overflowing x.
PP_HD static inline double pp_round(pp_format_id f, double x, pp_rounding mode, uint32_t rbits)
{
    pp_format F = pp_format_get(f);
    if (x != x)
        return x;
    double ax = fabs(x);
    if (ax == INFINITY)
        return F.has_inf ? x : copysign(F.max_finite, x);
    if (ax == 0.0 || f == PP_FMT_FP64)
        return x;  // binary64 into binary64 is exact (and 2^(p-1-emin) would overflow below)
    int e2;
    frexp(ax, &e2);
    int E = e2 - 1;  // ax in [2^E, 2^(E+1))
    if (E < F.emin)
        E = F.emin;  // subnormal range: the quantum stops shrinking
    double scale = ldexp(1.0, F.p - 1 - E);  // ax * scale is exact: a power-of-two scaling
    double t = ax * scale;
    double r = floor(t);
    double frac = t - r;  // exact: t and r share the binade
    if (mode == PP_RND_NE) {
        if (frac > 0.5 || (frac == 0.5 && fmod(r, 2.0) != 0.0))
            r += 1.0;
    } else if (mode == PP_RND_SR) {
        double thresh = floor(frac * 4294967296.0);
        if ((double)rbits < thresh)
            r += 1.0;
    }
    double y = r / scale;
    if (y > F.max_finite) {
        if (mode == PP_RND_TZ || !F.has_inf)
            y = F.max_finite;
        else
            y = INFINITY;
    }
    return copysign(y, x);
}

// Rounding from binary32: every binary32 is a binary64, so this is the same function.
PP_HD static inline float pp_round_from_f32(pp_format_id f, float x, pp_rounding mode, uint32_t rbits)
{
    return (float)pp_round(f, (double)x, mode, rbits);
}

// True when x is exactly a value of format f (NaN and, where the format has them, ±Inf count).
PP_HD static inline int pp_is_representable(pp_format_id f, double x)
{
    if (x != x)
        return 1;
    double r = pp_round(f, x, PP_RND_TZ, 0);
    if (isinf(x))
        return pp_format_get(f).has_inf;
    return r == x;
}

// ---------------------------------------------------------------------------------------------
// ulp and distance

// ulp_f(x): the gap between the two values of f around |x| in x's binade (for a power of two,
// the gap above it). 0 gives the smallest subnormal; beyond max_finite, the ulp of max_finite.
// NaN gives NaN; ±Inf gives the ulp of max_finite.
PP_HD static inline double pp_ulp(pp_format_id f, double x)
{
    pp_format F = pp_format_get(f);
    if (x != x)
        return x;
    double ax = fabs(x);
    if (ax > F.max_finite)
        ax = F.max_finite;
    int E = F.emin;
    if (ax != 0.0) {
        int e2;
        frexp(ax, &e2);
        E = e2 - 1 < F.emin ? F.emin : e2 - 1;
    }
    return ldexp(1.0, E - F.p + 1);
}

// Ordinal of a value of f: consecutive values of f get consecutive integers, +0 and −0 both 0,
// negatives negative. Requires x representable in f and not NaN; ±Inf sit one past ±max_finite.
PP_HD static inline int64_t pp_ordinal(pp_format_id f, double x)
{
    pp_format F = pp_format_get(f);
    double ax = fabs(x);
    int64_t per_binade = (int64_t)1 << (F.p - 1);
    int64_t ord;
    if (ax == INFINITY) {
        ax = F.max_finite;
        ord = 1;
    } else {
        ord = 0;
    }
    if (ax < ldexp(1.0, F.emin)) {
        ord += (int64_t)(ax / ldexp(1.0, F.emin - F.p + 1));
    } else {
        int e2;
        double m = frexp(ax, &e2);  // ax = m·2^e2, m in [0.5, 1)
        int E = e2 - 1;
        int64_t mant = (int64_t)ldexp(m, F.p) - per_binade;  // the stored fraction field
        ord += per_binade * (int64_t)(E - F.emin + 1) + mant;
    }
    return x < 0 ? -ord : ord;
}

// Distance in ulps between two values a, b of f: how many steps through f's values separate
// them (|ordinal(a) − ordinal(b)|), exact. NaN in either gives NaN.
PP_HD static inline double pp_ulp_distance(pp_format_id f, double a, double b)
{
    if (a != a || b != b)
        return a + b;
    int64_t d = pp_ordinal(f, a) - pp_ordinal(f, b);
    return (double)(d < 0 ? -d : d);
}

// ---------------------------------------------------------------------------------------------
// Storage bit patterns

// Bit pattern of x (a value of f) in f's storage layout. NaN encodes as the format's canonical
// quiet NaN with x's sign. Requires pp_is_representable(f, x).
PP_HD static inline uint64_t pp_encode(pp_format_id f, double x)
{
    pp_format F = pp_format_get(f);
    int mbits = F.p - 1;
    int ebits = F.storage_bits - 1 - mbits;
    if (f == PP_FMT_TF32)
        ebits = 8;  // stored as binary32 with the 13 low fraction bits zero
    uint64_t sign = signbit(x) ? 1 : 0;
    uint64_t e_field, m_field;
    int bias = 1 - F.emin;  // emin = 1 − bias
    if (x != x) {
        if (f == PP_FMT_E4M3) {
            e_field = 0xF;
            m_field = 0x7;
        } else {
            e_field = ((uint64_t)1 << ebits) - 1;
            m_field = (uint64_t)1 << (mbits - 1);
        }
    } else if (isinf(x)) {
        e_field = ((uint64_t)1 << ebits) - 1;
        m_field = 0;
    } else {
        double ax = fabs(x);
        if (ax < ldexp(1.0, F.emin)) {
            e_field = 0;
            m_field = (uint64_t)(ax / ldexp(1.0, F.emin - mbits));
        } else {
            int e2;
            double m = frexp(ax, &e2);
            e_field = (uint64_t)(e2 - 1 + bias);
            m_field = (uint64_t)ldexp(m, F.p) - ((uint64_t)1 << mbits);
        }
    }
    uint64_t bits = (sign << (ebits + mbits)) | (e_field << mbits) | m_field;
    if (f == PP_FMT_TF32)
        bits <<= 13;
    return bits;
}

// The value of bit pattern bits in f's storage layout, as binary64 (exact).
PP_HD static inline double pp_decode(pp_format_id f, uint64_t bits)
{
    pp_format F = pp_format_get(f);
    int mbits = F.p - 1;
    int ebits = F.storage_bits - 1 - mbits;
    if (f == PP_FMT_TF32) {
        bits >>= 13;
        ebits = 8;
    }
    int bias = 1 - F.emin;
    uint64_t m_field = bits & (((uint64_t)1 << mbits) - 1);
    uint64_t e_field = (bits >> mbits) & (((uint64_t)1 << ebits) - 1);
    int neg = (int)((bits >> (ebits + mbits)) & 1);
    double v;
    uint64_t e_all = ((uint64_t)1 << ebits) - 1;
    if (f == PP_FMT_E4M3 && e_field == e_all && m_field == 0x7)
        v = NAN;
    else if (f != PP_FMT_E4M3 && e_field == e_all)
        v = m_field ? NAN : INFINITY;
    else if (e_field == 0)
        v = ldexp((double)m_field, F.emin - mbits);
    else
        v = ldexp((double)(m_field | ((uint64_t)1 << mbits)), (int)e_field - bias - mbits);
    return neg ? -v : v;
}

#endif
