// attention_ref_lanes.h — the attention reference's vector paths (attention_ref_lanes.c): the two
// loops that carry its work, the anchored dot over keys and the anchored accumulation over d, and its per-key
// steps (scores, exp, P, dP, dS), in AVX-512 (8 lanes) or AVX2 (4 lanes), chosen at run time. Each lane runs the scalar path's IEEE operations
// in the scalar path's order on its own chain, so the values are the scalar path's, bit for bit
// (PROOFS.md#attention, "Vector paths"). Not a public interface.
#ifndef PP_ATTENTION_REF_LANES_H
#define PP_ATTENTION_REF_LANES_H

#include <stdint.h>

#include "attention_ref_eft.h"
#include "attention_ref_types.h"

// Keys per transposed block: kt[l·8 + m] is element l of key m of the block.
#define PP_ATTN_KEY_BLOCK 8

typedef struct pp_attn_lanes_ pp_attn_lanes_;

// The per-key steps over a row's keys j < n (or a block's), element by element: the portable
// loops below and each vector path's lanes run the same scalar step (attention_ref_eft.h).
// cut[j] = (Sh[j] − M < −500); (eh, el)[j] = 0 when cut, else pp_attn_exp_dd_ (Sh − M ≥ −500 for
// the keys not cut, |Sh|, |M| < 2^40, |Sl| ≤ u|Sh|).
void pp_attn_exp_row_(const double (*tab)[2], const double *L, int64_t n, const double *Sh,
                      const double *Sl, double M, double *eh, double *el, unsigned char *cut);
// pp_attn_score_elem_ for each key; nonzero when any key fails its precondition.
int pp_attn_score_keys_(int64_t n, const double *h, const double *c, const double *T, double sig_h,
                        double sig_l, double sig_b, double coef, double *Sh, double *Sl, double *eS);
// (Ph, Pl)[j] = dd_mul(Ph[j], Pl[j], rh, rl) where !cut[j]: P = E·(1/l).
void pp_attn_scale_row_(int64_t n, double *Ph, double *Pl, const unsigned char *cut, double rh,
                        double rl);
// pp_attn_dp_elem_ for each key.
void pp_attn_dp_keys_(int64_t n, const double *h, const double *c, const double *V, double coef,
                      const double *Ph, const double *Pl, double *dph, double *dpl, double *edp,
                      double *mh, double *ml);
// pp_attn_ds_elem_ for each key: state[j] and e[j] always, (sh, sl)[j] where not cut.
void pp_attn_ds_keys_(const pp_attn_ds_row_ *R, int64_t n, const double *Ph, const double *Pl,
                      const double *dph, const double *dpl, const double *edp,
                      const unsigned char *cut, double *sh, double *sl, double *e,
                      unsigned char *state);

// The most terms one pp_attn_acc_multi_ call takes.
#define PP_ATTN_ACC_TERMS 32


struct pp_attn_lanes_ {
    const char *name;
    // The anchored dot of x (d binary32 values) with the 16 keys of two transposed blocks kt0,
    // kt1, from the anchor A = 1.5·p (p = pp_attn_acc_scale_ of Σ_l |x_l|·max_j |y_jl|): for each
    // key, H − A and lo after pp_attn_dot_elem_ over l = 0…d−1 in order — the portable dotx4's
    // chain per key. Results for key m of kt0 at [m], of kt1 at [8 + m].
    void (*dot_keys16)(const double *x, double A, const double *kt0, const double *kt1, int64_t d,
                       double h[16], double c[16]);
    // dot_keys16 of two rows x0, x1 (anchors A0, A1) with the same 16 keys: row i's results at
    // [16·i + m], the same values as two calls.
    void (*dot_rows2)(const double *x0, double A0, const double *x1, double A1, const double *kt0,
                      const double *kt1, int64_t d, double h[32], double c[32]);
    // The per-key steps above, key by key in lanes: the same values as the portable loops.
    void (*exp_row)(const double (*tab)[2], const double *L, int64_t n, const double *Sh,
                    const double *Sl, double M, double *eh, double *el, unsigned char *cut);
    int (*score_keys)(int64_t n, const double *h, const double *c, const double *T, double sig_h,
                      double sig_l, double sig_b, double coef, double *Sh, double *Sl, double *eS);
    void (*scale_row)(int64_t n, double *Ph, double *Pl, const unsigned char *cut, double rh,
                      double rl);
    void (*dp_keys)(int64_t n, const double *h, const double *c, const double *V, double coef,
                    const double *Ph, const double *Pl, double *dph, double *dpl, double *edp,
                    double *mh, double *ml);
    void (*ds_keys)(const pp_attn_ds_row_ *R, int64_t n, const double *Ph, const double *Pl,
                    const double *dph, const double *dpl, const double *edp,
                    const unsigned char *cut, double *sh, double *sl, double *e,
                    unsigned char *state);
    // pp_attn_acc_multi_ (attention_ref_fast.h), the accumulator in registers across the terms.
    // For 2^−800 ≤ |xh| < 2^998 and y binary32 values (x1·y exact: the fast path's domain).
    void (*acc_multi)(double *restrict h, double *restrict lo, int64_t d, int64_t n,
                      const double *const *y, const double *xh, const double *xl);
};

// The widest vector path this CPU runs within the choice; NULL for the portable loops (chosen, or
// no vector path runs here).
const pp_attn_lanes_ *pp_attn_lanes_pick_(pp_attn_ref_lanes choice);

// "avx512", "avx2" or "portable" (for NULL).
const char *pp_attn_lanes_name_(const pp_attn_lanes_ *lanes);

#endif
