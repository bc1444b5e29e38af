// attention_ref_eft.h — the attention reference's error-free transformations and double-double
// steps (binary64, round to nearest), written once for its scalar path (attention_ref_fast.c) and
// its vector paths (attention_ref_lanes.c); not a public interface. Bounds: PROOFS.md#attention.
#ifndef PP_ATTENTION_REF_EFT_H
#define PP_ATTENTION_REF_EFT_H

#include <math.h>
#include <stdint.h>
#include <string.h>

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

// The anchored accumulation's multiplier x = xh + xl as x1 + x2: x1 of pp_attn_split29_ (≤ 29
// significant bits, so x1·y is exact for a binary32 y) and x2 = RN((xh − x1) + xl), within
// u·2^−27.99|xh| of the rest (PROOFS.md#attention, "Anchored accumulation").
static inline void pp_attn_acc_x_(double xh, double xl, double *x1, double *x2)
{
    double a, b;
    pp_attn_split29_(xh, &a, &b);
    *x1 = a;
    *x2 = b + xl;  // ±u|x2|
}

// The anchored step, the one both long sums take (PROOFS.md#attention, "The anchor"): H holds an
// anchor A = 1.5·2^k plus the sum so far, and the caller keeps |H − A| ≤ 2^(k−2), so that s and H
// lie in [2^k, 2^(k+1)). For an exact product x·y, H becomes RN(H + x·y) and the step's rounding
// error is returned, exactly: s − H is exact (Sterbenz), and x·y − (s − H) is a binary64 number.
static inline double pp_attn_anchored_step_(double *H, double x, double y)
{
    double s = fma(x, y, *H);          // RN(H + x·y), x·y exact
    double r = fma(x, y, -(s - *H));   // exact: H + x·y − s
    *H = s;
    return r;
}

// One element of the anchored accumulation: (H, lo) += (x1 + x2)·y, x1 and x2 from
// pp_attn_acc_x_, y a binary32 value (x1·y exact): the anchored step on x1·y, its error and x2·y
// into lo (PROOFS.md#attention, "Anchored accumulation").
static inline void pp_attn_acc_elem_(double *H, double *lo, double y, double x1, double x2)
{
    double r = pp_attn_anchored_step_(H, x1, y);
    *lo += fma(x2, y, r);  // ±u twice
}

// One step of the anchored dot: (H, lo) += x·y for binary32 values x, y (x·y exact)
// (PROOFS.md#attention, "Anchored dot"): the anchored step, its error into lo.
static inline void pp_attn_dot_elem_(double *H, double *lo, double x, double y)
{
    *lo += pp_attn_anchored_step_(H, x, y);  // ±u
}

// The anchor of one element moves from A0 to a larger A1 (both 1.5 times a power of two, |H − A0|
// within the old capacity): H − A0 is exact, its sum with A1 rounds once and the rounding error,
// exact, goes to lo (one more rounding of lo).
static inline void pp_attn_acc_rebase_elem_(double *H, double *lo, double A0, double A1)
{
    double hi = *H - A0;   // exact (Sterbenz)
    double s = A1 + hi;
    double z = s - A1;     // exact
    *H = s;
    *lo += hi - z;         // hi − z exact; ±u
}

// ---------------------------------------------------------------------------------------------
// Per-key steps, written once: the scalar path runs them key by key, the vector paths' tails too
// (and their lanes the same statements, attention_ref_lanes_body.h).

// E = exp((Sh − M) + Sl) as a double-double (PROOFS.md#attention, "exp"), tab and L from
// pp_attn_exp_init_: for |Sh|, |M| < 2^40, |Sl| ≤ u|Sh|, Sh − M ∈ [−500, 0], within 2^−81
// relative. x = N·ln2/256 + r with |r| ≤ 2^−9.5, exp(r) by its degree-7 Taylor polynomial (the
// r² factor in double-double), times 2^(j/256) from the table and 2^k, N = 256k + j.
static inline void pp_attn_exp_dd_(const double (*tab)[2], const double *L, double Sh, double M,
                                   double Sl, double *eh, double *el)
{
    double a, b, c, e2, xh, t;
    pp_attn_two_sum_(Sh, -M, &a, &b);   // exact
    pp_attn_two_sum_(b, Sl, &c, &e2);   // exact
    pp_attn_two_sum_(a, c, &xh, &t);    // exact
    double xl = t + e2;        // ±u|xl|: |x̂ − x| ≤ u²(|xh| + 1)
    double Nd = (xh * 369.3299304675746 + 0x1.8p52) - 0x1.8p52;  // an integer near x·256/ln2
    int64_t N = (int64_t)Nd;
    int j = (int)(N & 255);
    int64_t kk = (N - j) / 256;  // ≥ −723
    double r1 = xh - Nd * L[0];  // N·L1 exact (18 + 35 bits), the difference exact (Sterbenz)
    double rh0, rb;
    pp_attn_two_sum_(r1, -(Nd * L[1]), &rh0, &rb);  // N·L2 exact; exact
    double cc = xl - Nd * L[2];  // ±u|N·L3| ±u|cc|
    double rh, rl;
    pp_attn_two_sum_(rh0, rb + cc, &rh, &rl);    // rb + cc: ±u;  |r̂ − r| ≤ 2^−95.9
    // exp(r) = 1 + r + r²·(1/2 + r·y), y = 1/6 + r·w, w = 1/24 + r/120 + r²/720 + r³/5040;
    // remainder ≤ r^8/8!·e^|r| ≤ 2^−91.3
    double w = 1.0 / 24.0 + rh * (1.0 / 120.0 + rh * (1.0 / 720.0 + rh * (1.0 / 5040.0)));  // ±2^−56
    double y = 1.0 / 6.0 + rh * w;                        // ±2^−54.5 (with 1/6's rounding)
    double p = rh * y;
    double pe = fma(rh, y, -p) + rl * y;                 // rh·y exact in p + fma; rl·y ±u
    double zh, zl;
    pp_attn_two_sum_(0.5, p, &zh, &zl);                           // exact
    pp_attn_two_sum_(zh, zl + pe, &zh, &zl);                      // z = 1/2 + r·ŷ: ±2^−100
    double s2h = rh * rh, s2l;
    pp_attn_two_sum_(s2h, fma(rh, rh, -s2h) + 2.0 * rh * rl, &s2h, &s2l);  // r²: ±2^−125
    double qh, ql, fh, fl, gh, gl;
    pp_attn_dd_mul_inl_(s2h, s2l, zh, zl, &qh, &ql);                  // r²·z: ±9.1u²;  |q − r²(1/2 + r·y(r))| ≤ 2^−82.6
    pp_attn_dd_add_inl_(1.0, 0.0, rh, rl, &fh, &fl);                  // ±3.02u²·2
    pp_attn_dd_add_inl_(fh, fl, qh, ql, &fh, &fl);                    // ±3.02u²·2;  |f − exp(r)| ≤ 2^−82.4
    pp_attn_dd_mul_inl_(tab[j][0], tab[j][1], fh, fl, &gh, &gl);  // ±9.1u², table ±2^−105
    uint64_t sb = (uint64_t)(kk + 1023) << 52;
    double s;
    memcpy(&s, &sb, sizeof s);  // 2^k, k ≥ −723: exact
    *eh = gh * s;  // exact
    *el = gl * s;  // exact unless subnormal (±2^−1075, below 2^−353·E)
}

// One key's score from its dot (h, c) and error scale T (PROOFS.md#attention, "Scores"): t = h + c
// normalised (exact), S = σ·t by dd_mul (±9.1u²|σh·th|), eS = σb·T·coef its bound. Returns nonzero when a
// precondition of the proof fails (eS > 2^−40 or |Sh| ≥ 2^40, NaN included).
static inline int pp_attn_score_elem_(double h, double c, double T, double sig_h, double sig_l,
                                      double sig_b, double coef, double *Sh, double *Sl, double *eS)
{
    double th, tl;
    pp_attn_two_sum_(h, c, &th, &tl);                      // exact
    pp_attn_dd_mul_inl_(sig_h, sig_l, th, tl, Sh, Sl);     // ±9.1u²|σh·th|
    *eS = sig_b * T * coef;  // |Ŝ − S| (σ: 2^−105, dd_mul, the dot)
    return !(*eS <= 0x1p-40) || !(fabs(*Sh) < 0x1p40);
}

// One key's dP from its dot (h, c) and error scale V (PROOFS.md#attention, "Backward"): dP̂ = h + c
// normalised (exact), its bound V·coef, and m = P̂·dP̂ by dd_mul (±9.1u²), the term D sums.
static inline void pp_attn_dp_elem_(double h, double c, double V, double coef, double ph, double pl,
                                    double *dph, double *dpl, double *edp, double *mh, double *ml)
{
    pp_attn_two_sum_(h, c, dph, dpl);  // exact
    *edp = V * coef;                   // |dP̂ − dP|
    pp_attn_dd_mul_inl_(ph, pl, *dph, *dpl, mh, ml);  // ±9.1u²
}

// A key's state in the backward's row block: cut (P̂ = 0), dŜ dropped (|dŜ| < 2^−800), or
// accumulated into dq, dk.
enum { PP_ATTN_BLK_CUT, PP_ATTN_BLK_DROP, PP_ATTN_BLK_ACC };

// What one row's dS step needs of the row: D̂ = Dh + Dl, its bound eD, aD ≥ |D̂|, P̂'s relative
// bound dP.
typedef struct pp_attn_ds_row_ {
    double Dh, Dl, eD, aD, dP;
} pp_attn_ds_row_;

// One key's dS_j = P_j·(dP_j − D) (PROOFS.md#attention, "Backward"): dd_add then dd_mul, its
// bound e; the key's state. A cut key (P̂ = 0) has dŜ = 0 and only the bound of what was cut.
static inline unsigned char pp_attn_ds_elem_(const pp_attn_ds_row_ *R, double ph, double pl,
                                             double dph, double dpl, double edp, int cut,
                                             double *sh, double *sl, double *e)
{
    double adp = fabs(dph) * (1.0 + 0x1p-50);
    if (cut) {  // P ≤ 2^−720, P̂ = 0: dŜ = 0
        *e = 0x1p-720 * (adp + edp + R->aD + R->eD);
        return PP_ATTN_BLK_CUT;
    }
    double xh, xl, dP = R->dP;
    pp_attn_dd_add_inl_(dph, dpl, -R->Dh, -R->Dl, &xh, &xl);  // ±3.02u²(|dP|+|D|)
    double eX = edp + R->eD + 3.02 * 0x1p-106 * (adp + R->aD);
    double aX = fabs(xh) * (1.0 + 0x1p-50);
    pp_attn_dd_mul_inl_(ph, pl, xh, xl, sh, sl);  // ±9.1u²
    double edS = (dP * ph * aX + ph * (1.0 + dP) * eX + 9.2 * 0x1p-106 * ph * aX) *
                 (1.0 + 0x1p-40) + 0x1p-1072;  // + underflow in dd_mul
    if (fabs(*sh) < 0x1p-800) {  // dropped: |dŜ| < 2^−800(1 + u)
        *e = edS + 0x1p-799;
        return PP_ATTN_BLK_DROP;
    }
    *e = edS;
    return PP_ATTN_BLK_ACC;
}

#endif
