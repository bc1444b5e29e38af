// attention_ref_eft.h — the attention reference's error-free transformations and double-double
// steps (binary64, round to nearest), written once for its scalar path (attention_ref_fast.c) and
// its vector paths (attention_ref_lanes.c); not a public interface. Bounds: PROOFS.md#attention.
#ifndef PP_ATTENTION_REF_EFT_H
#define PP_ATTENTION_REF_EFT_H

#include <math.h>

// s + e = a + b exactly (Knuth's TwoSum; also when the sum is subnormal).
static inline void pp_attn_two_sum_(double a, double b, double *s, double *e)
{
    double t = a + b;
    double z = t - a;
    *e = (a - (t - z)) + (b - z);
    *s = t;
}

// (zh, zl) ≈ (xh + xl)(yh + yl), normalised (|zl| ≤ ½ulp(zh)). For |xl| ≤ u|xh|, |yl| ≤ u|yh|
// and no underflow: |zh + zl − x·y| ≤ 9.1u²·|xh·yh| (PROOFS.md#attention, "dd_mul").
static inline void pp_attn_dd_mul_inl_(double xh, double xl, double yh, double yl, double *zh,
                                       double *zl)
{
    double p = xh * yh;
    double pe = fma(xh, yh, -p);  // exact: xh·yh = p + pe
    double t1 = xh * yl;          // ±u|t1|
    double t2 = xl * yh;          // ±u|t2|
    double t3 = t1 + t2;          // ±u|t3|
    double pl = pe + t3;          // ±u|pl|; xl·yl left out (≤ u²|xh·yh|)
    pp_attn_two_sum_(p, pl, zh, zl);  // exact
}

// (zh, zl) ≈ (xh + xl) + (yh + yl), normalised. For |xl| ≤ u|xh|, |yl| ≤ u|yh|:
// |zh + zl − (x + y)| ≤ 3.02u²·(|xh| + |yh|) (PROOFS.md#attention, "dd_add"), any cancellation.
static inline void pp_attn_dd_add_inl_(double xh, double xl, double yh, double yl, double *zh,
                                       double *zl)
{
    double sh, se;
    pp_attn_two_sum_(xh, yh, &sh, &se);  // exact
    double t = xl + yl;                  // ±u|t|
    double w = se + t;                   // ±u|w|
    pp_attn_two_sum_(sh, w, zh, zl);     // exact
}

// Veltkamp's split of a double into x1 (≤ 29 significant bits) + x2 (≤ 24 bits), exactly; for
// |x| < 2^998. Then x1·y and x2·y are exact for a binary32 value y (no underflow).
static inline void pp_attn_split29_(double x, double *x1, double *x2)
{
    double c = 16777217.0 * x;  // 2^24 + 1
    *x1 = c - (c - x);
    *x2 = x - *x1;
}

// One element of the split accumulation: (h, lo) += (x1 + x2 + xl)·y, x1 and x2 from
// pp_attn_split29_(xh), y a binary32 value (PROOFS.md#attention, "Split accumulation").
static inline void pp_attn_acc_split_elem_(double *h, double *lo, double y, double x1, double x2,
                                           double xl)
{
    double a = x1 * y;  // exact: 29 + 24 bits
    double s = *h + a;
    double z = s - *h;
    double e = (*h - (s - z)) + (a - z);  // exact error of h + a
    *h = s;
    *lo += e + (x2 * y + xl * y);  // x2·y exact; xl·y ±u; two additions ±u each
}

#endif
