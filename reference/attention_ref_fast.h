// attention_ref_fast.h — the attention reference's fast path (attention_ref_fast.c): exact
// products, compensated sums, double-double; not a public interface.
#ifndef PP_ATTENTION_REF_FAST_H
#define PP_ATTENTION_REF_FAST_H

#include <stdint.h>

#include "attention_ref_job.h"

// exp((Sh − M) + Sl) as a double-double within 2^−81 relative, for |Sh|, |M| < 2^40,
// |Sl| ≤ 2^−53|Sh|, Sh − M ∈ [−500, 0]; J->exp_tab and J->exp_L set by pp_attn_exp_init_.
void pp_attn_fast_exp_(const pp_attn_job_ *J, double Sh, double M, double Sl, double *eh, double *el);
void pp_attn_exp_init_(pp_attn_job_ *J);

// The fast path's building blocks, exported for their tests (PROOFS.md#attention): dd_mul
// (±9.1u²|xh·yh|), dd_add (±3.02u²(|xh| + |yh|)), the anchored dot and accumulation.
void pp_attn_dd_mul_(double xh, double xl, double yh, double yl, double *zh, double *zl);
void pp_attn_dd_add_(double xh, double xl, double yh, double yl, double *zh, double *zl);
// The portable anchored dots of x with four keys y[0..3] from the anchor A = 1.5·p
// (attention_ref_lanes.h runs the same per lane): h = H − A, c = lo, |h + c − x·y| ≤ d²·p·u²(1 + 2^−19)
// when p = pp_attn_acc_scale_(X), X ≥ Σ_l |x_l·y_l| (PROOFS.md#attention, "Anchored dot").
void pp_attn_dotx4_(const double *x, const double *const y[4], int64_t d, double A, double h[4],
                    double c[4]);
// (H, lo)[l] += (xh[t] + xl[t])·y[t][l] for t = 0…n−1 in order, l < d, n ≤ PP_ATTN_ACC_TERMS
// (attention_ref_lanes.h): pp_attn_acc_elem_ per element and term, each element's terms in order,
// so a call with n terms gives the bits of n one-term calls; the portable loop, and the vector
// paths' oracle (their acc_multi keeps the accumulator in registers across the terms). H[l] holds
// the anchor 1.5·scale·ypow[l] plus the sum so far: the caller keeps the terms' multipliers'
// magnitudes summed to at most X with scale = pp_attn_acc_scale_(X) and ypow[l] ≥ |y[t][l]| a
// power of two (PROOFS.md#attention, "Anchored accumulation").
void pp_attn_acc_multi_(double *restrict h, double *restrict lo, int64_t d, int64_t n,
                        const double *const *y, const double *xh, const double *xl);
// The anchor's scale for multipliers whose magnitudes sum to X: the power of two p with
// p/4 > 1.001·X (0 for X = 0).
double pp_attn_acc_scale_(double X);
// The power of two p ≥ max(m, 2^−149): a column's ypow for |y| ≤ m.
double pp_attn_acc_ypow_(double m);
// The anchored accumulation's bound after N − 1 roundings of lo (n terms and m rebases: N = n + m
// + 1), with W ≥ Σ|xh·y| and A = 1.5·2^k the element's (largest) anchor:
// |(H − A) + lo − Σ x·y| ≤ acc_coef(N)·W + acc_anchor_coef(N)·2^k + n·2^−1074.
double pp_attn_acc_coef_(int64_t N);
double pp_attn_acc_anchor_coef_(int64_t N);

// Runs task on the fast path. Returns 0; nonzero when a precondition of its proof fails for the
// task (a non-finite input, |S| ≥ 2^40, a score bound above 2^−40, σ out of range): the caller
// then reruns the task with pp_attn_plain_task_, which overwrites everything the task owns; -1
// when out of memory.
int pp_attn_fast_task_(pp_attn_job_ *J, int64_t task, int worker);

#endif
