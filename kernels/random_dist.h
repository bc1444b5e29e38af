// random_dist.h — bit-reproducible distributions from Philox bits: uniform from 53 bits, a
// deterministic log, and a standard normal (Marsaglia's polar method). C11 and nvcc (PP_HD).
// Only IEEE + − × ÷ sqrt are used, never libm's log/sin/cos, whose last bits differ by library.
#ifndef PP_RANDOM_DIST_H
#define PP_RANDOM_DIST_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "philox.h"
#include "pp_hd.h"

// Every operation below must round once, to binary64: no x87 excess precision. The build's
// -ffp-contract=off (nvcc --fmad=false) keeps a*b+c from becoming an FMA, which would change
// the last bit and break the exact splits in pp_det_log; the golden values in
// tests/test_inputs.c fail if either assumption breaks.
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD > 0
#error "random_dist.h needs FLT_EVAL_METHOD == 0 (SSE2, not x87): bits would differ by machine"
#endif

// ---------------------------------------------------------------------------------------------
// Uniform from 53 bits

// The 64 bits of words 0 (low) and 1 (high), or 2 (low) and 3 (high), of a Philox block.
PP_HD static inline uint64_t pp_philox_bits64(pp_philox4x32_ctr w, int half)
{
    return (uint64_t)w.v[2 * half] | ((uint64_t)w.v[2 * half + 1] << 32);
}

// U = floor(bits / 2^11) · 2^-53: the top 53 bits as a value of the grid {k·2^-53}, in [0, 1).
// Exact; every grid point has probability 2^-53.
PP_HD static inline double pp_u01_co(uint64_t bits)
{
    return (double)(bits >> 11) * 0x1p-53;
}

// U = (2·floor(bits / 2^12) + 1) · 2^-53: the midpoints of the grid {k·2^-52}, in (0, 1),
// symmetric about 1/2, from 2^52 equally likely values in [2^-53, 1 − 2^-53]. Exact. It takes
// 52 bits, not 53: the 53-bit midpoints (2k + 1)·2^-54 just below 1 are not binary64 values
// (the spacing in [1/2, 1) is 2^-53), so they would round, and 1 − 2^-54 would round to 1.
PP_HD static inline double pp_u01_oo(uint64_t bits)
{
    return (double)(((bits >> 12) << 1) | 1u) * 0x1p-53;
}

// V = (2·floor(bits / 2^11) + 1 − 2^53) · 2^-53: 2^53 odd multiples of 2^-53 in (−1, 1),
// symmetric about 0 and never 0. Exact (|2k + 1 − 2^53| < 2^53).
PP_HD static inline double pp_u11_oo(uint64_t bits)
{
    int64_t k = (int64_t)((bits >> 11) << 1) + 1 - ((int64_t)1 << 53);
    return (double)k * 0x1p-53;
}

// ---------------------------------------------------------------------------------------------
// A deterministic natural logarithm

// ln 2 split so that e·PP_LN2_HI is exact for |e| < 2^24 (PP_LN2_HI has 29 significant bits):
// PP_LN2_HI = RN_29bits(ln 2), PP_LN2_LO = RN(ln 2 − PP_LN2_HI); |ln 2 − HI − LO| < 1.4e-27.
#define PP_LN2_HI 0x1.62e42ffp-1
#define PP_LN2_LO (-0x1.718432a1b0e26p-35)

// y = ln(x), from IEEE + − × ÷ only, so it is the same bits on every machine and compiler.
// @param [in] x  any binary64
// Special values: ln(±0) = −Inf, ln(+Inf) = +Inf, ln(x < 0) = NaN, NaN in NaN out, ln(1) = +0.
// Bound: |y − ln x| ≤ 0.65 ulp(y) for finite x > 0 (subnormals included), checked against MPFR
// in tests/test_inputs.c.
//
// Method. x = 2^e·m with m in (1/√2, √2) (bit manipulation; subnormals scaled by 2^54 first),
// and ln m = 2·atanh(f) with f = (m − 1)/(m + 1), |f| < 0.1716, so z = f² < 0.02944.
//   2·atanh(f) = 2f + 2f·t(z),  t(z) = z/3 + z²/5 + ... + z^11/23  (+ a tail < 2^-65 relative).
// The leading 2f carries most of the value, so f is formed to about 2^-106 relative: m − 1 is
// exact (Sterbenz), m + 1 = b + eb exactly (Fast2Sum), q = RN((m−1)/b), the remainder
// (m−1) − q·b is exact (Dekker's product), and f = q + corr with corr = (rem − q·eb)/b.
// Then ln x = (e·HI + 2q) + (e·LO + 2·corr + 2q·t), the first sum split exactly (Fast2Sum).
// Error budget in units of u = 2^-53, relative to ln x, before the final rounding (½ ulp):
//   t = z·P(z) is at most 1.02% of ln m, and is evaluated at q instead of f (≤ 4.02u
//   relative, as t ∝ f²) with z, Estrin's sums and products (≤ 5u): ≤ 0.092u; rounding of the
//   11 coefficients 1/(2k+1): ≤ 0.0102u; forming the low part r_lo (2 roundings): ≤ 0.0204u;
//   adding e·LO and s_err (e ≠ 0 only, |y| > 0.346): ≤ 0.021u; truncation of the series,
//   corr's own error, the ln 2 split: < 0.001u. Total < 0.145u, and u·|y| < ulp(y), so
//   |y − ln x| ≤ (0.5 + 0.145) ulp(y) < 0.65 ulp(y).
//
// pp_det_log_normal is the method for a positive normal x given by its bits b, times 2^e0 (the
// subnormal scaling); branch-free, so a loop over lanes calling it vectorises
// (kernels/random_lanes.h). pp_det_log = the special values, the scaling, then it.
PP_HD static inline double pp_det_log_normal(uint64_t b, int e0)
{
    int e = e0 + (int)(b >> 52) - 1023;
    b = (b & UINT64_C(0x000FFFFFFFFFFFFF)) | UINT64_C(0x3FF0000000000000);  // m in [1, 2)
    int big = b >= UINT64_C(0x3FF6A09E667F3BCD);  // m >= RN(√2) > √2: halve, so m in (1/√2, √2)
    b -= big ? UINT64_C(0x0010000000000000) : 0;
    e += big;
    double m;
    memcpy(&m, &b, sizeof m);

    // f = (m − 1)/(m + 1) to about 2^-106 relative, as q + corr.
    double a = m - 1.0;          // exact: m in [1/2, 2] (Sterbenz)
    double den = 1.0 + m;        // rounded ...
    double eb = m - (den - 1.0); // ... and its error, exactly (Fast2Sum: exponent(1) >= exponent(m))
    double q = a / den;
    // Dekker's exact product q·den = p + pe (Veltkamp splits by 2^27 + 1; no overflow: |q|, den < 3).
    double p = q * den;
    double cq = 134217729.0 * q, qh = cq - (cq - q), ql = q - qh;
    double cd = 134217729.0 * den, dh = cd - (cd - den), dl = den - dh;
    double pe = ((qh * dh - p) + qh * dl + ql * dh) + ql * dl;
    double rem = (a - p) - pe;   // exact: the remainder of a correctly rounded quotient
    // corr = (rem − q·eb)/den, with 1/den = (1 − q)/2 (exact in real arithmetic, as
    // q = (m − 1)/(m + 1)): a multiplication instead of a second division; corr's own relative
    // error (~3u) is harmless, since |corr| ≤ 2.01u·|q|.
    double corr = (rem - q * eb) * (0.5 * (1.0 - q));

    // t(z) = z·P(z), P(z) = 1/3 + z/5 + ... + z^10/23, the coefficients RN(1/(2k+1)) written
    // exactly, evaluated in Estrin's form (a dependency chain of 5 multiply-adds, not 11).
    // Every coefficient and z are positive: no cancellation anywhere.
    double z = q * q;
    double z2 = z * z, z4 = z2 * z2, z8 = z4 * z4;
    double p0 = 0x1.5555555555555p-2 + 0x1.999999999999ap-3 * z;  // 1/3 + z/5
    double p1 = 0x1.2492492492492p-3 + 0x1.c71c71c71c71cp-4 * z;  // 1/7 + z/9
    double p2 = 0x1.745d1745d1746p-4 + 0x1.3b13b13b13b14p-4 * z;  // 1/11 + z/13
    double p3 = 0x1.1111111111111p-4 + 0x1.e1e1e1e1e1e1ep-5 * z;  // 1/15 + z/17
    double p4 = 0x1.af286bca1af28p-5 + 0x1.8618618618618p-5 * z;  // 1/19 + z/21
    double p5 = 0x1.642c8590b2164p-5;                              // 1/23
    double P = (p0 + p1 * z2) + (p2 + p3 * z2) * z4 + (p4 + p5 * z2) * z8;
    double t = z * P;

    double r_hi = 2.0 * q;
    double r_lo = 2.0 * corr + r_hi * t;
    double eh = (double)e * PP_LN2_HI;  // exact
    double s = eh + r_hi;               // Fast2Sum: |eh| >= 0.69 > 0.35 > |r_hi| unless e = 0,
    double s_err = r_hi - (s - eh);     // and then eh = 0 and s = r_hi exactly
    double w = s_err + ((double)e * PP_LN2_LO + r_lo);
    return s + w;
}

PP_HD static inline double pp_det_log(double x)
{
    if (x != x)
        return x;
    if (x == 0.0)
        return -INFINITY;
    if (x < 0.0)
        return NAN;
    if (x == INFINITY)
        return x;

    uint64_t b;
    memcpy(&b, &x, sizeof b);
    int e = 0;
    if (b < UINT64_C(0x0010000000000000)) {  // subnormal: scale into the normal range, exactly
        double xs = x * 0x1p54;
        memcpy(&b, &xs, sizeof b);
        e = -54;
    }
    return pp_det_log_normal(b, e);
}

// ---------------------------------------------------------------------------------------------
// Standard normal: Marsaglia's polar method

// One attempt of the polar method on one 128-bit block w: u = pp_u11_oo(bits 0..63),
// v = pp_u11_oo(bits 64..127), s = RN(RN(u²) + RN(v²)). If s < 1, sets f = RN(sqrt(RN(−2·
// pp_det_log(s) / s))), z[0] = RN(u·f) and z[1] = RN(v·f), and returns 1; else returns 0
// (rejected, probability ≈ 1 − π/4). s > 0 always (|u| >= 2^-53). z[0] and z[1] are independent
// standard normals (Marsaglia): the pair draws (pp_rand_normal_pair) use both, the element draws
// (pp_polar_try, pp_rand_normal) z[0] alone, so each element owns its draws.
// Bound: with S = u² + v² < 1 exact and Z = u·sqrt(−2 ln S / S) the exact polar transform,
// |z[0] − Z| ≤ (u/|ln S| + 4.2u)·|Z|, u = 2^-53 (s has relative error ≤ 2u, which ln turns into
// an absolute error; pp_det_log adds ≤ 1.3u; ÷, sqrt, × one rounding each; sqrt halves); z[1]
// the same with v for u.
PP_HD static inline int pp_polar_pair_try(pp_philox4x32_ctr w, double z[2])
{
    double u = pp_u11_oo(pp_philox_bits64(w, 0));
    double v = pp_u11_oo(pp_philox_bits64(w, 1));
    double s = u * u + v * v;
    if (!(s < 1.0))
        return 0;
    double f = sqrt(-2.0 * pp_det_log(s) / s);
    z[0] = u * f, z[1] = v * f;
    return 1;
}

// pp_polar_pair_try's z[0] alone (*z = RN(u·f)).
PP_HD static inline int pp_polar_try(pp_philox4x32_ctr w, double *z)
{
    double zz[2];
    if (!pp_polar_pair_try(w, zz))
        return 0;
    *z = zz[0];
    return 1;
}

// ---------------------------------------------------------------------------------------------
// Element values (the mapping of philox.h)

// Element i of tensor t under seed s, uniform on [0, 1): pp_u01_co of bits 0..63 of draw 0.
PP_HD static inline double pp_rand_uniform01(uint64_t seed, uint32_t tensor_id, uint64_t i)
{
    return pp_u01_co(pp_philox_bits64(pp_philox_element(seed, tensor_id, i, 0), 0));
}

// Element i of tensor t under seed s, standard normal: the first accepted pp_polar_try over
// draws d = 0, 1, 2, .... Expected draws 4/π ≈ 1.27; more than 40 happens with probability
// (1 − π/4)^40 < 2^-88. |z| < 12.2 (s >= 2^-106). Should all 2^32 draws be rejected (never, in
// this universe) the value is 0. A pure function of (seed, tensor_id, i).
// pp_rand_normal_from: the same from draw d0 on (kernels/random_lanes.h tries draw 0 of many
// elements side by side and continues a rejected one here).
// pp_rand_normal_pair(_from): both values of the same first accepted attempt of counter j
// (z[0] = pp_rand_normal(seed, tensor_id, j)), two independent standard normals for the price of
// one: a tensor drawn in pairs (the AdamW synthetic source's noise, kernels/adamw_problem.h)
// gives elements 2j and 2j + 1 the pair of counter j. Both 0 in the never-happening case.
PP_HD static inline void pp_rand_normal_pair_from(uint64_t seed, uint32_t tensor_id, uint64_t j, uint32_t d0,
                                                  double z[2])
{
    for (uint32_t d = d0;; d++) {
        if (pp_polar_pair_try(pp_philox_element(seed, tensor_id, j, d), z))
            return;
        if (d == UINT32_MAX) {
            z[0] = z[1] = 0.0;
            return;
        }
    }
}

PP_HD static inline double pp_rand_normal_from(uint64_t seed, uint32_t tensor_id, uint64_t i, uint32_t d0)
{
    double z[2];
    pp_rand_normal_pair_from(seed, tensor_id, i, d0, z);
    return z[0];
}

PP_HD static inline double pp_rand_normal(uint64_t seed, uint32_t tensor_id, uint64_t i)
{
    return pp_rand_normal_from(seed, tensor_id, i, 0);
}

PP_HD static inline void pp_rand_normal_pair(uint64_t seed, uint32_t tensor_id, uint64_t j, double z[2])
{
    pp_rand_normal_pair_from(seed, tensor_id, j, 0, z);
}

#endif
