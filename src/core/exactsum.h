// exactsum.h — an exact accumulator for sums of binary64 values and of exact products of two
// binary64 values: a long fixed-point integer with lazy carries, read correctly rounded.
// Integer arithmetic only, so the sum does not depend on the order of additions or merges.
#ifndef PP_EXACTSUM_H
#define PP_EXACTSUM_H

#include <stdint.h>

// Digit k (base 2^32) weighs 2^(32k + PP_EXACTSUM_LSB). The lowest bit of any product of two
// doubles is 2^-2148 (subnormal × subnormal) >= 2^PP_EXACTSUM_LSB; every product is below
// 2^2048, the weight of the top limb, which is signed and holds the carries out of the digits.
#define PP_EXACTSUM_LSB (-2176)
#define PP_EXACTSUM_LIMBS 134

typedef struct pp_exactsum {
    // Limbs 0..LIMBS-2 are base-2^32 digits, kept in [0, 2^32) after a carry pass and drifting
    // by less than 2^32 per pending addition in between; limb LIMBS-1 is signed.
    int64_t limb[PP_EXACTSUM_LIMBS];
    uint32_t pending;  // digit additions since the last carry pass (carried before 2^30)
    // Non-finite terms are not added to the limbs; they are counted and decide the result:
    // any NaN, or both +Inf and -Inf, gives NaN; else any +Inf gives +Inf, any -Inf gives -Inf.
    uint64_t n_pinf, n_ninf, n_nan;
} pp_exactsum;

// s = 0 (no terms).
void pp_exactsum_init(pp_exactsum *s);

// s += x, exactly. NaN and ±Inf are counted (see pp_exactsum).
void pp_exactsum_add(pp_exactsum *s, double x);

// s += a·b, exactly: the 106-bit integer product of the significands at the summed exponents,
// rather than TwoProduct via fma, whose hi + lo is inexact once a·b underflows and which
// overflows near the top of the range. A non-finite a or b adds the non-finite value of a·b:
// ±Inf, or NaN (NaN, Inf·0).
void pp_exactsum_add_product(pp_exactsum *s, double a, double b);

// For i < n in turn: abs += |d[i]| (pp_exactsum_add) and sq += d[i]·d[i] (pp_exactsum_add_product).
// The limbs and counters afterwards are bit for bit those of the 2n calls, carry passes included:
// a batch that could reach a carry pass makes the calls one by one. abs may not alias sq.
void pp_exactsum_add_abs_sq(pp_exactsum *abs, pp_exactsum *sq, const double *d, int n);

// into += from, exactly. from is unchanged; into may not alias from.
void pp_exactsum_merge(pp_exactsum *into, const pp_exactsum *from);

// The sum correctly rounded to binary64 (to nearest, ties to even; subnormal results rounded
// once, at the subnormal quantum; exact sums >= 2^1024 - 2^970 in magnitude give ±Inf). An exact
// zero reads as +0.0.
// Precondition for exactness: the sum of the magnitudes of all finite terms is below 2^2110.
double pp_exactsum_value(const pp_exactsum *s);

#endif
