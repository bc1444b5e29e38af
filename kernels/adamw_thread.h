// adamw_thread.h — the per-thread bodies of an AdamW run: what one CPU loop iteration and one
// CUDA thread do, written once (PP_HD) so the emulation (kernels/cpu/adamw.c) and the GPU
// (kernels/cuda/adamw_kernels.cu) run the same statements; plus the reductions' fixed order.
// C11 and nvcc. tests/test_adamw_threads.c drives these bodies in the GPU's launch decomposition.
#ifndef PP_ADAMW_THREAD_H
#define PP_ADAMW_THREAD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "adamw.h"
#include "adamw_problem.h"
#include "format.h"
#include "pp_hd.h"
#include "ranges.h"

// ---------------------------------------------------------------------------------------------
// The order of every sum (the contract both backends keep, so they agree bit for bit)
//
// θ-independent sources (synthetic, quadratic). Element i is one thread for all its steps; its
// gradient depends only on (seed, t, i) and its own θ. The quadratic loss of loss index t
// (0: before step 1; t: after step t), in binary64:
//   term(t, i)  = 0.5·h_i·d·d,  d = θ_i(t) − θ*_i             (pp_adamw_quad_loss_term)
//   part(t, b)  = ((0 + term(t, bB)) + term(t, bB + 1)) + … + term(t, min(n, bB + B) − 1),
//                 B = PP_ADAMW_LOSS_BLOCK, elements in increasing order (pp_adamw_loss_block_sum)
//   loss(t)     = ((0 + part(t, 0)) + part(t, 1)) + … + part(t, nb − 1)   (pp_adamw_loss_total)
// The CPU adds term(t, i) into part(t, b) as element i finishes step t (one block per task);
// the GPU stores term(t, i) for a chunk of loss indices, then one thread per (t, b) forms part,
// and one thread per t forms loss. Same operands, same order: same bits.
//
// Linear regression. Step t needs every θ_k of step t − 1, so each step is three phases:
//   1. one thread per row q: the fp32 FMA chain e_q over k = 0..n−1 and the binary64 residual
//      dr_q (pp_adamw_linreg_row), storing dr_q² (binary64);
//   2. one thread for the loss: ((0 + dr_0²) + dr_1²) + … + dr_{r−1}², divided by 2r
//      (pp_adamw_linreg_loss);
//   3. one thread per parameter k: the fp32 FMA chain Σ_q X_qk·e_q over q = 0..r−1 in order, the
//      gradient rounding and the element step (pp_adamw_linreg_update).

// Elements per partial loss sum (the CPU's work block): part of the documented order above.
#define PP_ADAMW_LOSS_BLOCK 1024

// ---------------------------------------------------------------------------------------------
// θ-independent sources

// What element i's gradient needs besides θ: the quadratic curvature and optimum, or the
// synthetic signal (constant over steps, so computed once per thread).
typedef struct pp_adamw_elem_data {
    float h, opt;  // quadratic (0 for synthetic)
    double sig;    // synthetic (0 for quadratic)
} pp_adamw_elem_data;

PP_HD static inline pp_adamw_elem_data pp_adamw_elem_data_make(const pp_adamw_problem *pr, int64_t i)
{
    pp_adamw_elem_data d = {0.0f, 0.0f, 0.0};
    if (pr->kind == PP_ADAMW_GRAD_QUADRATIC)
        pp_adamw_quad_data(pr, i, &d.h, &d.opt);
    else if (pr->kind == PP_ADAMW_GRAD_SYNTHETIC)
        d.sig = pp_adamw_synth_signal(pr, i);
    return d;
}

// term(t, i) = ½·h·(θ − θ*)² in binary64 (each operation rounded once: no FMA, by the build).
// θ is binary64 so the binary64-state body (adamw_exact.h) shares it; a binary32 θ converts exactly.
PP_HD static inline double pp_adamw_quad_loss_term(const pp_adamw_elem_data *d, double theta)
{
    double x = theta - d->opt;
    return 0.5 * d->h * x * x;
}

// Step t of element i: its gradient (synthetic, or quadratic from the current θ), its
// stochastic-rounding bits, and the element update of kernels/adamw.h with step t's scalars sc.
// The gradient of element i at step t given its current θ (synthetic, input or quadratic).
// A given gradient (synthetic, input) is the value of P the reference steps on too, so the g site
// does not apply to it: its rounding to P is the input's quantisation, not the optimizer's
// arithmetic (adamw.h "Exact sites"); the vector lanes (cpu/adamw_lanes.c) read the same values.
PP_HD static inline float pp_adamw_src_grad(const pp_adamw_variant *va, const pp_adamw_problem *pr, int t, int64_t i,
                                            const pp_adamw_elem_data *d, float theta)
{
    if (pr->kind == PP_ADAMW_GRAD_SYNTHETIC || pr->kind == PP_ADAMW_GRAD_INPUT)
        return (float)pp_adamw_given_grad(pr, va->param, t, i, d->sig);
    return pp_adamw_store_at(va, PP_SITE_ADAMW_G, va->param, d->h * (theta - d->opt));
}

PP_HD static inline void pp_adamw_src_step(const pp_adamw_variant *va, const pp_adamw_problem *pr,
                                           const pp_adamw_scalars *sc, int t, int64_t i,
                                           const pp_adamw_elem_data *d, pp_adamw_elem *e)
{
    uint32_t rb[2] = {0, 0};
    if (va->stochastic)
        pp_adamw_sr_bits(pr->seed, (uint64_t)i, (uint32_t)t, rb);
    float g = pp_adamw_src_grad(va, pr, t, i, d, e->theta);
    pp_adamw_elem_step(va, sc, e, g, rb);
}

// Range diagnostics (kernels/ranges.h, sites adamw.*) of one element's step, from its state
// before (b) and after (a), its gradient g and random bits: the values the step stored, and the
// two it did not keep (the denominator, recomputed by pp_adamw_denom from the new v; the
// increment x' − x of the addcdiv, recomputed from the decayed θ or the old c). update notes the
// increment against θ's realised change, so its underflow counts the steps whose increment the
// θ store lost (a stall; with Kahan the increment is then carried in c). Reads only.
PP_HD static inline void pp_adamw_step_notes(pp_ranges *R, int64_t cell, const pp_adamw_variant *va,
                                             const pp_adamw_scalars *s, const pp_adamw_elem *b, const pp_adamw_elem *a,
                                             float g, const uint32_t rbits[2])
{
    if (!R)
        return;
    pp_format_id P = va->param;
    pp_range_note1(R, PP_SITE_ADAMW_G, cell, P, g);
    pp_range_note1(R, PP_SITE_ADAMW_M, cell, va->momentum, a->m);
    pp_range_note1(R, PP_SITE_ADAMW_V, cell, va->variance, a->v);
    if (va->kernels == PP_ADAMW_KERNELS_CUDA_FUSED) {  // binary32 throughout, one store each
        float th = s->use_decay ? fmaf(-s->fused_lr_wd, b->theta, b->theta) : b->theta;
        float fd = pp_adamw_fused_denom(s, pp_adamw_fused_variance(s, b->v, g));
        float fx = th + (s->fused_neg_step * pp_adamw_fused_momentum(s, b->m, g)) / fd;
        pp_range_note1(R, PP_SITE_ADAMW_DENOM, cell, PP_FMT_FP32, fd);
        pp_range_note(R, PP_SITE_ADAMW_UPDATE, cell, PP_FMT_FP32, (double)fx - th, (double)a->theta - th);
        pp_range_note(R, PP_SITE_ADAMW_THETA, cell, P, fx, a->theta);
        return;
    }
    float d = pp_adamw_denom(va, s, a->v);
    pp_range_note1(R, PP_SITE_ADAMW_DENOM, cell, va->variance, d);
    float th = s->use_decay ? pp_adamw_store_param(P, b->theta * s->decay, va->stochastic, rbits[0]) : b->theta;
    float x = va->kahan ? b->c : th, xp = pp_adamw_addcdiv(va, s, x, a->m, d);
    pp_range_note(R, PP_SITE_ADAMW_UPDATE, cell, PP_FMT_FP32, (double)xp - x, (double)a->theta - th);
    if (va->kahan) {
        float c1 = pp_adamw_store(va->compensation, xp);
        pp_range_note(R, PP_SITE_ADAMW_THETA, cell, P, th + c1, a->theta);
        pp_range_note1(R, PP_SITE_ADAMW_COMP, cell, va->compensation, a->c);
    } else {
        pp_range_note(R, PP_SITE_ADAMW_THETA, cell, P, xp, a->theta);
    }
}

// Where a thread's loss terms go: term(t, i) lands at p[(t − t0)·stride], added to what is
// there (add = 1: the CPU's running block sum) or stored (add = 0: the GPU's term buffer).
// p NULL: no loss wanted.
typedef struct pp_adamw_loss_out {
    double *p;
    int64_t stride;
    int add;
} pp_adamw_loss_out;

// θ snapshots: snap[j·n + i] = θ_i after step step[j], for the j with step[j] in the range run.
typedef struct pp_adamw_snap_out {
    double *snap;       // [count][n], or NULL
    const int *step;    // [count], increasing
    int count;
    int64_t n;
} pp_adamw_snap_out;

// A thread's loss terms and snapshots over loss indices t0..t1: the bookkeeping the binary32-state
// body below and the binary64-state one (adamw_exact.h) share, θ passed as binary64 (a binary32
// θ converts exactly, so both store the same values).
typedef struct pp_adamw_thread_out {
    pp_adamw_loss_out lo;
    pp_adamw_snap_out so;
    int t0;
    int snap;  // the next snapshot index to take
} pp_adamw_thread_out;

// term(t, i) of θ into the loss output (nothing when no loss is wanted).
PP_HD static inline void pp_adamw_thread_loss(pp_adamw_thread_out *o, const pp_adamw_elem_data *d, int t,
                                              double theta)
{
    if (!o->lo.p)
        return;
    double *q = o->lo.p + (int64_t)(t - o->t0) * o->lo.stride;
    double x = pp_adamw_quad_loss_term(d, theta);
    *q = o->lo.add ? *q + x : x;
}

// The start of a run from loss index t0 with θ the state's: term(0, i) when t0 = 0, the first
// snapshot at or after the first step; returns the first step, max(t0, 1).
PP_HD static inline int pp_adamw_thread_begin(pp_adamw_thread_out *o, const pp_adamw_elem_data *d, int t0,
                                              double theta)
{
    int first = t0 > 1 ? t0 : 1;
    o->t0 = t0;
    o->snap = 0;
    while (o->so.snap && o->snap < o->so.count && o->so.step[o->snap] < first)
        o->snap++;
    if (t0 == 0)
        pp_adamw_thread_loss(o, d, 0, theta);
    return first;
}

// After step t left θ: term(t, i) and, when t is a snapshot step, θ's snapshot.
PP_HD static inline void pp_adamw_thread_after(pp_adamw_thread_out *o, const pp_adamw_elem_data *d, int t,
                                               int64_t i, double theta)
{
    pp_adamw_thread_loss(o, d, t, theta);
    if (o->so.snap && o->snap < o->so.count && o->so.step[o->snap] == t)
        o->so.snap[(int64_t)o->snap++ * o->so.n + i] = theta;
}

// The body of element i over loss indices t0..t1 (0 ≤ t0 ≤ t1 ≤ T): term(t0, i) when t0 = 0,
// then steps max(t0, 1)..t1, each followed by its term and, at a snapshot step, θ's snapshot.
// @param [in]     sc    the per-step scalars, indexed by step t (sc[0] unused)
// @param [in,out] e     the element's state before loss index t0 (θ₀ and zeros when t0 = 0)
// Splitting 0..T into consecutive ranges gives the same bits as one range (the state carries).
// R, cell: range notes of every step into cell `cell` (pp_adamw_step_notes); R NULL: none.
PP_HD static inline void pp_adamw_elem_thread_r(const pp_adamw_variant *va, const pp_adamw_problem *pr,
                                                const pp_adamw_scalars *sc, int64_t i, int t0, int t1,
                                                pp_adamw_elem *e, pp_adamw_loss_out lo, pp_adamw_snap_out so,
                                                pp_ranges *R, int64_t cell)
{
    pp_adamw_elem_data d = pp_adamw_elem_data_make(pr, i);
    pp_adamw_thread_out out = {.lo = lo, .so = so};
    int first = pp_adamw_thread_begin(&out, &d, t0, e->theta);
    for (int t = first; t <= t1; t++) {
        pp_adamw_elem before = *e;
        pp_adamw_src_step(va, pr, &sc[t], t, i, &d, e);
        if (R) {  // the step's gradient and bits again (pure functions of t, i and the old θ)
            uint32_t rb[2] = {0, 0};
            if (va->stochastic)
                pp_adamw_sr_bits(pr->seed, (uint64_t)i, (uint32_t)t, rb);
            pp_adamw_step_notes(R, cell, va, &sc[t], &before, e, pp_adamw_src_grad(va, pr, t, i, &d, before.theta), rb);
        }
        pp_adamw_thread_after(&out, &d, t, i, e->theta);
    }
}

PP_HD static inline void pp_adamw_elem_thread(const pp_adamw_variant *va, const pp_adamw_problem *pr,
                                              const pp_adamw_scalars *sc, int64_t i, int t0, int t1,
                                              pp_adamw_elem *e, pp_adamw_loss_out lo, pp_adamw_snap_out so)
{
    pp_adamw_elem_thread_r(va, pr, sc, i, t0, t1, e, lo, so, (pp_ranges *)0, 0);
}

// part(t, b) from a term buffer laid out term[i] (one loss index; the caller offsets to it).
PP_HD static inline double pp_adamw_loss_block_sum(const double *term, int64_t n, int64_t b)
{
    int64_t lo = b * PP_ADAMW_LOSS_BLOCK, hi = lo + PP_ADAMW_LOSS_BLOCK;
    if (hi > n)
        hi = n;
    double s = 0.0;
    for (int64_t i = lo; i < hi; i++)
        s += term[i];
    return s;
}

// loss(t) from the parts: pp_adamw_loss_total (adamw_problem.h; the reference uses it too).

// The GPU's loss-term buffer cap (bytes): bounds device memory whatever n·T.
#define PP_ADAMW_TERM_BYTES ((size_t)256 << 20)

// Loss indices per GPU chunk: the term buffer holds chunk·n binary64 values, at most
// max_bytes; at least 1, at most T + 1. max_steps > 0 caps it further (tests use it to
// exercise the chunking on small problems; the bits do not depend on it).
static inline int pp_adamw_loss_chunk(int64_t n, int T, size_t max_bytes, int max_steps)
{
    int64_t c = (int64_t)(max_bytes / ((size_t)n * sizeof(double)));
    if (c > (int64_t)T + 1)
        c = (int64_t)T + 1;
    if (max_steps > 0 && c > max_steps)
        c = max_steps;
    return c < 1 ? 1 : (int)c;
}

// ---------------------------------------------------------------------------------------------
// Linear regression (kernels/adamw_problem.h's emulated gradient)

// Row q of the current θ (state e[0..n−1]): res[q] = RN32(fmaf-chain(x_q·θ) − y_q) and
// dr2[q] = dr·dr with dr = (binary64 dot x_q·θ, left to right) − y_q.
PP_HD static inline void pp_adamw_linreg_row(const float *X, const float *y, const pp_adamw_elem *e, int64_t n,
                                             int64_t q, float *res, double *dr2)
{
    float acc = 0.0f;
    double dacc = 0.0;
    for (int64_t k = 0; k < n; k++) {
        acc = fmaf(X[q * n + k], e[k].theta, acc);
        dacc += (double)X[q * n + k] * (double)e[k].theta;
    }
    res[q] = acc - y[q];
    double dr = dacc - (double)y[q];
    dr2[q] = dr * dr;
}

// The loss (1/2r)·Σ_q dr_q², summed q = 0..r−1 in order.
PP_HD static inline double pp_adamw_linreg_loss(const double *dr2, int64_t r)
{
    double s = 0.0;
    for (int64_t q = 0; q < r; q++)
        s += dr2[q];
    return s / (2.0 * (double)r);
}

// Step t of parameter k: g_k = R_P(RN32(fmaf-chain(Σ_q X_qk·res_q)·inv_r)), inv_r = RN32(1/r),
// then the element update with step t's scalars.
// R, cell: range notes of the step (pp_adamw_step_notes); R NULL: none.
PP_HD static inline void pp_adamw_linreg_update_r(const pp_adamw_variant *va, const pp_adamw_problem *pr,
                                                  const pp_adamw_scalars *sc, int t, const float *X,
                                                  const float *res, float inv_r, int64_t k, pp_adamw_elem *e,
                                                  pp_ranges *R, int64_t cell)
{
    int64_t n = pr->n, r = pr->rows;
    float acc = 0.0f;
    for (int64_t q = 0; q < r; q++)
        acc = fmaf(X[q * n + k], res[q], acc);
    float g = pp_adamw_store_at(va, PP_SITE_ADAMW_G, va->param, acc * inv_r);
    uint32_t rb[2] = {0, 0};
    if (va->stochastic)
        pp_adamw_sr_bits(pr->seed, (uint64_t)k, (uint32_t)t, rb);
    pp_adamw_elem before = *e;
    pp_adamw_elem_step(va, sc, e, g, rb);
    pp_adamw_step_notes(R, cell, va, sc, &before, e, g, rb);
}

PP_HD static inline void pp_adamw_linreg_update(const pp_adamw_variant *va, const pp_adamw_problem *pr,
                                                const pp_adamw_scalars *sc, int t, const float *X,
                                                const float *res, float inv_r, int64_t k, pp_adamw_elem *e)
{
    pp_adamw_linreg_update_r(va, pr, sc, t, X, res, inv_r, k, e, (pp_ranges *)0, 0);
}

// ---------------------------------------------------------------------------------------------
// Checks both backends make before running (host)

static inline int pp_adamw_fmt_ok(pp_format_id f)
{
    return f == PP_FMT_FP32 || f == PP_FMT_BF16 || f == PP_FMT_FP16;
}

// Whether a binary64 with pattern u is surely a finite value of P (fp32 or bf16), on the bits
// alone: zero, or a binary32 normal's exponent (2^−126 ≤ |x| < 2^128) with the mantissa bits
// binary32 (bf16) drops all zero (masks below). Binary32 subnormals are not vouched for (the
// caller then asks pp_is_representable: the verdict stays the general one). 32-bit integer
// operations only, so a loop of them vectorises on baseline x86-64 (SSE2 has no 64-bit compare)
// whatever the build's floating-point flags.
static inline int pp_adamw_grad_bits_ok(uint64_t u, uint32_t lo_mask, uint32_t hi_mask)
{
    uint32_t lo = (uint32_t)u, hi = (uint32_t)(u >> 32) & 0x7FFFFFFFu;
    int32_t e = (int32_t)(hi >> 20);
    return ((hi | lo) == 0) | ((e >= 1023 - 126) & (e <= 1023 + 127) & ((lo & lo_mask) == 0) & ((hi & hi_mask) == 0));
}

// The first j ≥ j0 (j < count) whose g[j] pp_adamw_grad_bits_ok does not vouch for (every j for
// fp16), or count. Blocks are tested branch-free (an AND over the block, which the vectoriser
// takes: a test per value, one at a time, was a third of an fp32 input-gradient run), a
// failing block rescanned one by one.
static inline int64_t pp_adamw_grads_fast_scan(pp_format_id P, const double *g, int64_t j0, int64_t count)
{
    enum { B = 512 };
    if (!(P == PP_FMT_FP32 || P == PP_FMT_BF16))
        return j0 < count ? j0 : count;
    // binary64 keeps 52 mantissa bits, binary32 23 (the low 29 must be zero), bf16 7 (the low 45)
    uint32_t lo_mask = P == PP_FMT_BF16 ? 0xFFFFFFFFu : 0x1FFFFFFFu, hi_mask = P == PP_FMT_BF16 ? 0x1FFFu : 0u;
    int64_t j = j0;
    for (; j + B <= count; j += B) {
        int ok = 1;
        for (int k = 0; k < B; k++) {
            uint64_t u;
            memcpy(&u, &g[j + k], sizeof u);
            ok &= pp_adamw_grad_bits_ok(u, lo_mask, hi_mask);
        }
        if (!ok)
            break;
    }
    for (; j < count; j++) {
        uint64_t u;
        memcpy(&u, &g[j], sizeof u);
        if (!pp_adamw_grad_bits_ok(u, lo_mask, hi_mask))
            return j;
    }
    return count;
}

// 0 when the variant, the problem and θ₀ (n values that must be values of va->param) can run;
// else -1 with one line in msg.
static inline int pp_adamw_check(const pp_adamw_variant *va, const pp_adamw_problem *pr, const double *theta0,
                                 char *msg, size_t len)
{
    if (!pp_adamw_fmt_ok(va->param) || !pp_adamw_fmt_ok(va->momentum) || !pp_adamw_fmt_ok(va->variance) ||
        !pp_adamw_fmt_ok(va->compensation)) {
        snprintf(msg, len, "formats must be fp32, bf16 or fp16");
        return -1;
    }
    if (va->kernels == PP_ADAMW_KERNELS_CUDA_FUSED && (va->update != PP_ADAMW_TORCH || va->kahan)) {
        snprintf(msg, len, "torch_kernels = \"cuda-fused\" is torch.optim.AdamW(fused=True): it needs update = "
                           "\"torch\" and kahan = \"off\"");
        return -1;
    }
    if (pr->n < 1 || pr->steps < 1 || pr->steps > (1 << 24) ||
        (pr->kind == PP_ADAMW_GRAD_LINREG && pr->rows < 1) ||
        (pr->kind == PP_ADAMW_GRAD_SYNTHETIC && !(pr->snr > 0.0))) {
        snprintf(msg, len, "bad problem (n %lld, steps %d, rows %lld, snr %g)", (long long)pr->n, pr->steps,
                 (long long)pr->rows, pr->snr);
        return -1;
    }
    for (int64_t i = 0; i < pr->n; i++)
        if (!pp_is_representable(va->param, theta0[i])) {
            snprintf(msg, len, "theta0[%lld] = %.17g is not a %s value", (long long)i, theta0[i],
                     pp_format_get(va->param).name);
            return -1;
        }
    if (pr->kind == PP_ADAMW_GRAD_INPUT && !pr->grads) {
        snprintf(msg, len, "gradients = input without the grads tensor");
        return -1;
    }
    int64_t nj = pr->kind == PP_ADAMW_GRAD_INPUT ? (int64_t)pr->steps * pr->n : 0;
    for (int64_t j = pp_adamw_grads_fast_scan(va->param, pr->grads, 0, nj); j < nj;
         j = pp_adamw_grads_fast_scan(va->param, pr->grads, j + 1, nj))
        if (!pp_is_representable(va->param, pr->grads[j]) || !isfinite(pr->grads[j])) {
            snprintf(msg, len, "grads[%lld, %lld] = %.17g is not a finite %s value", (long long)(j / pr->n),
                     (long long)(j % pr->n), pr->grads[j], pp_format_get(va->param).name);
            return -1;
        }
    return 0;
}

#endif
