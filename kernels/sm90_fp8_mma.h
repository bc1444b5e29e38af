// sm90_fp8_mma.h — Hopper's FP8 tensor-core accumulation (wgmma e4m3/e5m2 → fp32), as measured
// bit for bit on an H200 and an H100, and cuBLASLt's promotion of it. C11 and nvcc (PP_HD): the scaled GEMM
// (kernels/gemm_scaled_thread.h) and FA3's FP8 forward (kernels/attention_fp8.h) call it on the
// CPU and the GPU alike, so the two cannot drift.
//
// The model (every output of tools/probe_fp8_accum.py reproduced bit for bit: measurement and
// sources in kernels/gemm.h "Hopper FP8 accumulation"). Products are taken 32 at a time along the
// reduction (one wgmma k-step for 8-bit inputs), l = 32g … 32g + 31, into the fp32 accumulator C:
//   1. exponents: e(p) = e(a) + e(b) for each nonzero product, e(x) = max(⌊log2|x|⌋, emin_F) the
//      input's own exponent field (a subnormal counts as emin_F), so a product with significand
//      in [2, 4) has its leading bit one above e(p); e(C) = ⌊log2|C|⌋ when C ≠ 0. E = the maximum
//      of all of them (C included: a large C swamps the group's small products).
//   2. alignment: C and every product truncated toward zero (sign-magnitude) to a multiple of
//      2^(E − 13), then summed exactly (at most 33 terms below 2^(E+2): 21 bits, exact).
//   3. normalisation: the sum truncated toward zero to 14 significant bits becomes the new C
//      (an e8m13 accumulator: the group result keeps no more bits than the alignment did).
// Promotion (cuBLASLt without CUBLASLT_MATMUL_DESC_FAST_ACCUM; CUTLASS's 2xAcc): every
// PP_SM90_FP8_PROMOTE elements of the reduction, total = RN_32(total + C) and C restarts from +0;
// the output is RN_32(total + C) at the end. With fast accumulation (promote 0) the output is C.
// Non-finite products (e5m2 ±Inf, NaN): a group with one returns the IEEE sum of C and its
// non-finite products (NaN or ±Inf), which then stays — measured on an H100 with e4m3 × e5m2 and
// e5m2 × e4m3 (±Inf·1, Inf − Inf, Inf·0, NaN, Inf beside 2^12), as e5m2's subnormals at emin −14.
#ifndef PP_SM90_FP8_MMA_H
#define PP_SM90_FP8_MMA_H

#include <math.h>
#include <stdint.h>

#include "pp_hd.h"

#define PP_SM90_FP8_GROUP 32     // products per alignment group (a wgmma k-step for FP8)
#define PP_SM90_FP8_FRAC 13      // fraction bits kept below the group's largest exponent
#define PP_SM90_FP8_PROMOTE 128  // cuBLASLt's promotion interval without fast accumulation

// The exponent the adder aligns by: ⌊log2|x|⌋, at least emin (x ≠ 0, finite).
PP_HD static inline int pp_sm90_exp(double x, int emin)
{
    int e = ilogb(x);
    return e < emin ? emin : e;
}

// x truncated toward zero to a multiple of 2^q, in units of 2^q (an integer held exactly in
// binary64: x < 2^(q+53) in every call here).
PP_HD static inline double pp_sm90_trunc_units(double x, int q)
{
    return trunc(ldexp(x, -q));
}

// One group: C (a value of the accumulator, or +0) plus the n ≤ 32 products a[i·sa]·b[i·sb]
// (binary64 values of formats with exponents from emin_a, emin_b; their products are exact in
// binary64). Returns the new C.
PP_HD static inline float pp_sm90_fp8_group(float c, const double *a, int64_t sa, const double *b, int64_t sb,
                                            int64_t n, int emin_a, int emin_b)
{
    int special = !isfinite(c), have = c != 0.0f;
    double nonfinite = special ? (double)c : 0.0;
    int emax = have && !special ? ilogb((double)c) : 0;
    for (int64_t i = 0; i < n; i++) {
        double x = a[i * sa], y = b[i * sb], p = x * y;
        if (!isfinite(p) || isnan(x) || isnan(y)) {  // NaN·0 is NaN already; ±Inf·0 too
            nonfinite = special ? nonfinite + p : p;
            special = 1;
        } else if (p != 0.0) {
            int e = pp_sm90_exp(x, emin_a) + pp_sm90_exp(y, emin_b);
            emax = have && emax > e ? emax : e;
            have = 1;
        }
    }
    if (special)
        return (float)nonfinite;
    if (!have)
        return 0.0f;  // every product ±0 (and C = 0): the adder's +0
    int q = emax - PP_SM90_FP8_FRAC;
    double s = pp_sm90_trunc_units((double)c, q);
    for (int64_t i = 0; i < n; i++)
        s += pp_sm90_trunc_units(a[i * sa] * b[i * sb], q);
    if (s == 0.0)
        return 0.0f;
    int lead = ilogb(s);  // keep 14 significant bits: drop lead − 13 more, toward zero
    if (lead > PP_SM90_FP8_FRAC) {
        s = pp_sm90_trunc_units(s, lead - PP_SM90_FP8_FRAC);
        q += lead - PP_SM90_FP8_FRAC;
    }
    return (float)ldexp(s, q);  // 14 bits: exact unless beyond binary32's range
}

// The accumulation of one dot product of length k, products a[l·sa]·b[l·sb] in l order:
// groups of 32 into C; with promote > 0 (a multiple of 32), C is added into the binary32 total
// (one RN_32) every promote elements and restarts from +0.
PP_HD static inline float pp_sm90_fp8_dot(const double *a, int64_t sa, const double *b, int64_t sb, int64_t k,
                                          int emin_a, int emin_b, int64_t promote)
{
    float total = 0.0f, c = 0.0f;
    for (int64_t l0 = 0; l0 < k; l0 += PP_SM90_FP8_GROUP) {
        if (promote > 0 && l0 > 0 && l0 % promote == 0) {
            total = total + c;
            c = 0.0f;
        }
        int64_t n = k - l0 < PP_SM90_FP8_GROUP ? k - l0 : PP_SM90_FP8_GROUP;
        c = pp_sm90_fp8_group(c, a + l0 * sa, sa, b + l0 * sb, sb, n, emin_a, emin_b);
    }
    return promote > 0 ? total + c : c;
}

#endif
