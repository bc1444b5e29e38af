// pp_math.h — precprobe's own binary32 exp and log: the same bits from gcc (-ffp-contract=off)
// and nvcc (--fmad=false), because they use only IEEE binary64 + − × ÷, integer bit operations
// and one binary64 → binary32 conversion (round to nearest even). No libm, no __expf/ex2.approx.
#ifndef PP_MATH_H
#define PP_MATH_H

#include <stdint.h>

#include "format.h"
#include "pp_hd.h"

// e^r for |r| ≤ ln2/2 + 2^−40, Taylor to degree 13 in Horner form, binary64:
// 1 + r(1 + r(1/2 + r(1/6 + …))). The one polynomial of pp_expf and kernels/attention.h's
// pp_attn_exp2f (truncation below 2^−57 relative on that range).
PP_HD static inline double pp_exp_taylor13(double r)
{
    double p = 1.0 / 6227020800.0;
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    return p;
}

// ---------------------------------------------------------------------------------------------
// exp
//
// pp_expf(x) = RN_32(e^x), up to a binary64 evaluation error below 2^−49 relative.
// Method: n = nearest integer to x·log2(e) (binary64, the 1.5·2^52 rounding trick);
// r = (x − n·LN2_HI) − n·LN2_LO with LN2_HI = ln 2 to 32 bits (so n·LN2_HI and the first
// subtraction are exact for |n| ≤ 2^10), |r| ≤ 0.3467; e^r by its Taylor polynomial of degree 13
// in Horner form (truncation < 0.3467^14/14! < 2^−58); the result p·2^n is exact in binary64
// (2^n is a binary64 normal for the clamped range), then one conversion to binary32, which also
// produces binary32 subnormals, 0 and +Inf with a single rounding.
// Accuracy: |pp_expf(x) − e^x| ≤ (½ + 2^−25) ulp_32; correctly rounded except where e^x lies
// within 2^−25 ulp of a binary32 midpoint. tests/test_math_exp.c checks against a correctly
// rounded oracle (binary64 libm exp, MPFR near midpoints) exhaustively over [−104, 89] on a
// stride, every binary32 in the critical ranges, and the thresholds; it counts misroundings.
// Special values: NaN → NaN (same bits), −Inf → +0, +Inf → +Inf, x ≥ 88.72283935546875 (0x42B17218)
// → +Inf, x ≤ −103.972084045410156 → +0 (or the smallest subnormal, as rounding says).
PP_HD static inline float pp_expf(float x)
{
    if (x != x)
        return x;
    double xd = (double)x;
    if (xd > 100.0)
        xd = 100.0;  // e^100 overflows binary32 just the same
    if (xd < -120.0)
        xd = -120.0;  // e^−120 < 2^−173 rounds to +0 just the same
    const double LOG2E = 1.4426950408889634;
    const double LN2_HI = 6.93147180369123816490e-01;  // 0x3FE62E42FEE00000: 32 significant bits
    const double LN2_LO = 1.90821492927058770002e-10;  // ln 2 − LN2_HI to binary64
    const double SHIFT = 6755399441055744.0;            // 1.5·2^52
    double t = xd * LOG2E + SHIFT;  // two roundings: t − SHIFT is an integer within 1 of x·log2 e
    double n = t - SHIFT;
    double r = (xd - n * LN2_HI) - n * LN2_LO;
    double p = pp_exp_taylor13(r);
    int ni = (int)n;  // |n| ≤ 174
    double scale = pp_f64_from_bits((uint64_t)(ni + 1023) << 52);
    return (float)(p * scale);
}

// ---------------------------------------------------------------------------------------------
// log
//
// pp_logf(x) = RN_32(ln x), up to a binary64 evaluation error below 2^−49 relative.
// Method: x = m·2^e exactly with m in [√½, √2) (binary32 subnormals normalised by integer
// shifts); f = m − 1 (exact), s = f/(2 + f), ln m = 2·atanh(s) = s·(2 + z(2/3 + z(2/5 + …)))
// with z = s², |s| < 0.1716, to the z^9 term (truncation < 2^−55 relative); then
// ln x = e·LN2_HI + (e·LN2_LO + ln m) in binary64, |e·ln 2| ≥ 2|ln m| whenever e ≠ 0 (no
// cancellation worse than a factor 2), and one conversion to binary32.
// Accuracy: |pp_logf(x) − ln x| ≤ (½ + 2^−25) ulp_32; checked by tests/test_math_log.c like exp.
// Special values: NaN → NaN (same bits), x < 0 (−Inf too) → NaN, ±0 → −Inf, +Inf → +Inf, 1 → +0.
PP_HD static inline float pp_logf(float x)
{
    uint32_t u = pp_f32_bits(x);
    if (x != x)
        return x;
    if ((u & 0x7FFFFFFFu) == 0)
        return pp_f32_from_bits(0xFF800000u);  // −Inf
    if (u >> 31)
        return pp_f32_from_bits(0x7FC00000u);  // NaN
    if (u == PP_F32_INF)
        return x;
    int e = (int)(u >> 23) - 127;
    uint32_t frac = u & 0x7FFFFFu;
    if ((u >> 23) == 0) {  // subnormal: normalise the fraction
        e = -126;
        while (!(frac & 0x800000u)) {
            frac <<= 1;
            e--;
        }
        frac &= 0x7FFFFFu;
    }
    double m = pp_f64_from_bits((uint64_t)1023 << 52 | (uint64_t)frac << 29);  // [1, 2), exact
    if (m > 1.4142135623730951) {
        m *= 0.5;  // exact
        e++;
    }
    const double LN2_HI = 6.93147180369123816490e-01;
    const double LN2_LO = 1.90821492927058770002e-10;
    double f = m - 1.0;  // exact (Sterbenz)
    double s = f / (2.0 + f);
    double z = s * s;
    double p = 2.0 / 19.0;
    p = p * z + 2.0 / 17.0;
    p = p * z + 2.0 / 15.0;
    p = p * z + 2.0 / 13.0;
    p = p * z + 2.0 / 11.0;
    p = p * z + 2.0 / 9.0;
    p = p * z + 2.0 / 7.0;
    p = p * z + 2.0 / 5.0;
    p = p * z + 2.0 / 3.0;
    double lnm = s * 2.0 + s * (z * p);
    double ed = (double)e;
    return (float)(ed * LN2_HI + (ed * LN2_LO + lnm));
}

#endif
