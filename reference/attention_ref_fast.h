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
// (±9.1u²|xh·yh|), dd_add (±3.02u²(|xh| + |yh|)), the split accumulation and its coefficient acc(n).
void pp_attn_dd_mul_(double xh, double xl, double yh, double yl, double *zh, double *zl);
void pp_attn_dd_add_(double xh, double xl, double yh, double yl, double *zh, double *zl);
void pp_attn_acc_split_(double *h, double *lo, const double *y, int64_t d, double xh, double xl);
// The portable Dot2 of x with four keys y[0..3] (attention_ref_lanes.h runs the same per lane).
void pp_attn_dot2x4_(const double *x, const double *const y[4], int64_t d, double h[4], double c[4],
                     double T[4]);
double pp_attn_acc_split_coef_(int64_t n);
// (h, lo)[l] += (xh[t] + xl[t])·y[t][l] for t = 0…n−1 in order, l < d: n ≤ PP_ATTN_ACC_TERMS
// (attention_ref_lanes.h) split accumulations into one accumulator, the same values as n calls
// of acc_split in order (each element takes its terms in that order); the portable loop, and the
// vector paths' oracle (their acc_multi keeps the accumulator in registers across the terms).
void pp_attn_acc_multi_(double *restrict h, double *restrict lo, int64_t d, int64_t n,
                        const double *const *y, const double *xh, const double *xl);

// Runs task on the fast path. Returns 0; nonzero when a precondition of its proof fails for the
// task (a non-finite input, |S| ≥ 2^40, a score bound above 2^−40, σ out of range): the caller
// then reruns the task with pp_attn_plain_task_, which overwrites everything the task owns; -1
// when out of memory.
int pp_attn_fast_task_(pp_attn_job_ *J, int64_t task, int worker);

#endif
