// attention_ref_job.h — what the attention reference's files share (not a public interface): the
// job, its task split, the bound constants of each path, the final rounding's bookkeeping and
// progress. Below both paths (attention_ref_fast.h, attention_ref_plain.h) and the entry point
// (attention_ref.c) that runs them.
#ifndef PP_ATTENTION_REF_JOB_H
#define PP_ATTENTION_REF_JOB_H

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>  // before mpfr.h: declares mpfr_fprintf
#include <mpfr.h>

#include "attention_ref_types.h"

// Every bound is evaluated in binary64, round to nearest, on nonnegative values with + and ×
// only, at most 2^32 operations deep: the computed value is at least (1 − 2^−20) times the real
// one, so multiplying the result by this covers it (PROOFS.md#attention, "Evaluating bounds").
#define ATTN_INFL (1.0 + 0x1p-16)
#define ATTN_U 0x1p-53
#define ATTN_U2 0x1p-106

typedef struct pp_attn_task_res_ {
    double max[5];  // out, lse, dq, dk, dv: the largest element bound (finite values only)
} pp_attn_task_res_;

typedef struct pp_attn_job_ {
    const pp_attn_ref_opts *o;
    int64_t b, s_q, s_kv, h, h_kv, d, g;  // g = h / h_kv
    int prec;                             // plain precision
    int backward;
    const double *q, *k, *v, *dout;
    double *out, *lse, *dq, *dk, *dv;
    pp_attn_ref_elem_bounds elem;   // NULL members: not wanted
    double sig_h, sig_l;            // σ as a double-double, |σh + σl − σ| ≤ 2^−105|σ| (exact if given)
    double sig_b;                   // ≥ |σ|
    double exp_tab[256][2];         // fast exp: 2^(j/256) as double-doubles, ±2^−105 relative
    double exp_L[3];                // ln2/256 = L1 + L2 + L3 (35, 35, 53 bits), ±2^−130 relative
    mpfr_t sig_p;                   // RN_prec(σ) for mpfr-plain (exact if given)
    int64_t rows_per_task, tasks_per_head;  // forward-only split of a head's rows
    int64_t ntasks;
    pp_attn_task_res_ *res;
    atomic_llong done;              // work finished, in pp_attn_row_work_ units (progress only)
    int64_t total;
    double last_report;             // touched by worker 0 only
    atomic_int oom;
    atomic_llong fallbacks;         // fast tasks redone by plain
} pp_attn_job_;

// The rows and heads of one task. Backward: a task is (batch, kv head) with all its g heads and
// all rows (dk and dv of that kv head are then owned by the task). Forward only: (batch, head,
// block of rows_per_task rows).
typedef struct pp_attn_span_ {
    int64_t bi, hk, h0, h1, i0, i1;
} pp_attn_span_;

static inline pp_attn_span_ pp_attn_span_of_(const pp_attn_job_ *J, int64_t task)
{
    pp_attn_span_ s;
    if (J->backward) {
        s.bi = task / J->h_kv;
        s.hk = task % J->h_kv;
        s.h0 = s.hk * J->g;
        s.h1 = s.h0 + J->g;
        s.i0 = 0;
        s.i1 = J->s_q;
    } else {
        int64_t per_b = J->h * J->tasks_per_head;
        s.bi = task / per_b;
        int64_t r = task % per_b;
        s.h0 = r / J->tasks_per_head;
        s.h1 = s.h0 + 1;
        s.hk = s.h0 / J->g;
        s.i0 = (r % J->tasks_per_head) * J->rows_per_task;
        s.i1 = s.i0 + J->rows_per_task < J->s_q ? s.i0 + J->rows_per_task : J->s_q;
    }
    return s;
}

// Keys row i sees: j < n.
static inline int64_t pp_attn_visible_(const pp_attn_job_ *J, int64_t i)
{
    if (!J->o->causal)
        return J->s_kv;
    int64_t n = i + J->s_kv - J->s_q + 1;
    return n < 0 ? 0 : (n > J->s_kv ? J->s_kv : n);
}

// The work of row i, for progress: the keys it sees, plus one for the row itself.
static inline int64_t pp_attn_row_work_(const pp_attn_job_ *J, int64_t i)
{
    return pp_attn_visible_(J, i) + 1;
}

// Index helpers: q, dout, out, dq [b, s_q, h, d]; k, v, dk, dv [b, s_kv, h_kv, d]; lse [b, h, s_q].
static inline int64_t pp_attn_qi_(const pp_attn_job_ *J, int64_t bi, int64_t i, int64_t hh)
{
    return ((bi * J->s_q + i) * J->h + hh) * J->d;
}
static inline int64_t pp_attn_ki_(const pp_attn_job_ *J, int64_t bi, int64_t j, int64_t hk)
{
    return ((bi * J->s_kv + j) * J->h_kv + hk) * J->d;
}

// The delivered value's bound: pre (the proven bound before the final rounding, as computed) times
// ATTN_INFL, plus ½ulp(value) (2^−1074 when subnormal), rounded up. NaN for a non-finite value.
static inline double pp_attn_bound_(double value, double pre)
{
    if (!isfinite(value) || pre != pre)
        return NAN;
    double hu = 0.0;
    if (value != 0.0) {
        int e;
        frexp(value, &e);
        hu = fabs(value) < 0x1p-1022 ? 0x1p-1074 : ldexp(1.0, e - 54);
    }
    double s = pre * ATTN_INFL + hu;
    return s == 0.0 ? 0.0 : nextafter(s, INFINITY);
}

// Stores value and its bound; keeps the task's maximum.
static inline void pp_attn_put_(double *val, double *elem, int64_t idx, double value, double pre,
                                double *tmax)
{
    double bnd = pp_attn_bound_(value, pre);
    val[idx] = value;
    if (elem)
        elem[idx] = bnd;
    if (bnd == bnd && bnd > *tmax)
        *tmax = bnd;
}

// A row that sees no key (every key masked): out and dq are 0 and lse −∞ by convention, exact
// (bound 0). Both references write it through this one function.
static inline void pp_attn_row_empty_(pp_attn_job_ *J, int64_t qo, int64_t lo_idx, pp_attn_task_res_ *R)
{
    for (int64_t l = 0; l < J->d; l++) {
        pp_attn_put_(J->out, J->elem.out, qo + l, 0.0, 0.0, &R->max[0]);
        if (J->backward)
            pp_attn_put_(J->dq, J->elem.dq, qo + l, 0.0, 0.0, &R->max[2]);
    }
    J->lse[lo_idx] = -INFINITY;
    if (J->elem.lse)
        J->elem.lse[lo_idx] = 0.0;
}

// Starts the progress clock: the first report comes 0.1 s after this.
void pp_attn_progress_start_(pp_attn_job_ *J);

// Row i done: counts its work, and reports progress from worker 0 at most every 0.1 s. Progress
// is in units of work, pp_attn_row_work_ per row, so that a causal reference, whose later rows
// see more keys, shows an ETA that does not grow. Returns the units counted.
int64_t pp_attn_row_done_(pp_attn_job_ *J, int worker, int64_t i);

#endif
