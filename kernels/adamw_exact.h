// adamw_exact.h — AdamW's element step with the exact STATE sites of `precprobe explain` (θ, m,
// v, comp; kernels/sites.h) carried in binary64: the explain-only shadow of kernels/adamw.h's
// step, run by the CPU emulation (kernels/cpu/adamw.c) whenever such a site is exact. C11 and
// nvcc (PP_HD), though only the CPU runs it (the CUDA launchers refuse exact sites).
#ifndef PP_ADAMW_EXACT_H
#define PP_ADAMW_EXACT_H

#include <math.h>
#include <stdint.h>

#include "adamw.h"
#include "adamw_problem.h"
#include "adamw_thread.h"
#include "exact_sites.h"
#include "pp_hd.h"
#include "sites.h"

// ---------------------------------------------------------------------------------------------
// What "exact" means for a state site
//
// θ, m, v and c are state: each step reads what the last one stored. A store made exact keeps
// its value in binary64 (issue 18: "kept in binary64"), and every later read — the next step's
// ops, the gradient, the loss, the snapshots, the outputs (binary64 tensors) — reads that binary64
// value. The binary32 element state of kernels/adamw.h cannot hold it, so these steps carry
// pp_adamw_elem64; the nominal path, its lanes and the GPU are untouched.
//
// The ops that write an exact state compute in binary64 from the binary64 state, with the other
// operands as the kernel has them (β1, 1 − β1, β2, 1 − β2, −step_size, decay: the binary32
// scalars; g, d: the binary32 values of their own sites):
//   theta  decay θ·decay; the addcdiv's sum θ + inc (inc = the kernel's binary32 increment:
//          [cuda] −step·RN32(m/d) inside the FMA, [cpu] RN32(RN32(−step·m)/d)); Kahan's θ + c
//          and the clone θ_old − θ
//   m      m·β1 and fma(g, α, m) (anyprecision); g − m and the lerp's FMA (torch)
//   v      v·β2 and the addcmul w·g·g + v (g·g and w·g are exact in binary64 for binary32 w, g,
//          so both flavours compute the same RN64(w·g·g + v))
//   comp   the addcdiv's sum c + inc; Kahan's c + (θ_old − θ)
// An op that reads a binary64 state but writes a state (or value) that still rounds computes in
// binary64 and rounds its result as the kernel does (RN32, then the store): a double rounding,
// off the one-rounding result by at most one ulp_32 where the binary64 value lies next to a
// binary32 midpoint — the kernel has no such op (its state is binary32), so no single rounding
// is "the" kernel's. These are: the denominator's √v of a binary64 v, the addcdiv's m/d of a
// binary64 m, the quadratic gradient h·(θ − θ*) and the linear regression's fp32 chains of a
// binary64 θ (they read RN32(θ), the model's binary32 forward), Kahan's θ + c with one of the
// two binary64.
// The intermediate sites (g, denom, update) keep their meaning (kernels/adamw.h "Exact sites").
// With no state site exact this step is kernels/adamw.h's pp_adamw_elem_step bit for bit (each
// op in binary64 then RN32 equals the binary32 op for binary32 operands, 53 ≥ 2·24 + 2; the FMAs
// call fmaf): tests/test_explain_adamw.c checks it on the whole variant cross product.
// Range diagnostics are not noted on this path (explain does not record ranges).

#define PP_ADAMW_STATE_SITES                                                                        \
    (PP_SITE_BIT(PP_SITE_ADAMW_THETA) | PP_SITE_BIT(PP_SITE_ADAMW_M) | PP_SITE_BIT(PP_SITE_ADAMW_V) | \
     PP_SITE_BIT(PP_SITE_ADAMW_COMP))

// Whether va's run needs the binary64 state (a state site exact).
PP_HD static inline int pp_adamw_exact64(const pp_adamw_variant *va)
{
    return (va->exact_sites & PP_ADAMW_STATE_SITES) != 0;
}

typedef struct pp_adamw_elem64 {
    double theta, m, v, c;  // binary64 where the site is exact; else values of P, M, V, C
} pp_adamw_elem64;

// ---------------------------------------------------------------------------------------------
// The ops

// RN32(x) as binary64.
PP_HD static inline double pp_adamw_r32(double x)
{
    return (double)(float)x;
}

// The store R_X of an op's binary64 result x at site s: x itself when s is exact, else
// R_X(RN32(x)) (the op's binary32 rounding, then the store).
PP_HD static inline double pp_adamw_st64(const pp_adamw_variant *va, int s, pp_format_id f, double x)
{
    return pp_site_exact(va->exact_sites, s) ? x : (double)pp_adamw_store(f, (float)x);
}

// fma(a, b, c) for an op whose result goes to site s: binary64 when s is exact; else fmaf when
// every operand is a binary32 value (the kernel's op, bit for bit), else RN32 of the binary64 fma.
PP_HD static inline double pp_adamw_fma64(const pp_adamw_variant *va, int s, double a, double b, double c)
{
    if (pp_site_exact(va->exact_sites, s))
        return fma(a, b, c);
    if (pp_adamw_r32(a) == a && pp_adamw_r32(b) == b && pp_adamw_r32(c) == c)
        return (double)fmaf((float)a, (float)b, (float)c);
    return pp_adamw_r32(fma(a, b, c));
}

// ---------------------------------------------------------------------------------------------
// The step (kernels/adamw.h's five steps, in its order)

PP_HD static inline double pp_adamw_momentum64(const pp_adamw_variant *va, const pp_adamw_scalars *s, double m,
                                               double g)
{
    pp_format_id M = va->momentum;
    int xm = pp_site_exact(va->exact_sites, PP_SITE_ADAMW_M);
    if (va->update == PP_ADAMW_TORCH) {
        float w = s->one_minus_beta1;
        double d = xm ? g - m : pp_adamw_r32(g - m);
        int near = fabsf(w) < 0.5f;
        return pp_adamw_st64(va, PP_SITE_ADAMW_M, M,
                             pp_adamw_fma64(va, PP_SITE_ADAMW_M, near ? w : w - 1.0f, d, near ? m : g));
    }
    double a1 = s->one_minus_beta1;
    if (va->kernels == PP_ADAMW_KERNELS_CPU && M == va->param)
        a1 = pp_adamw_st64(va, PP_SITE_ADAMW_M, M, a1);
    m = pp_adamw_st64(va, PP_SITE_ADAMW_M, M, m * s->beta1);
    return pp_adamw_st64(va, PP_SITE_ADAMW_M, M, pp_adamw_fma64(va, PP_SITE_ADAMW_M, g, a1, m));
}

PP_HD static inline double pp_adamw_variance64(const pp_adamw_variant *va, const pp_adamw_scalars *s, double v,
                                               double g)
{
    pp_format_id V = va->variance;
    v = pp_adamw_st64(va, PP_SITE_ADAMW_V, V, v * s->beta2);
    if (pp_site_exact(va->exact_sites, PP_SITE_ADAMW_V))
        return fma(s->one_minus_beta2, g * g, v);  // g·g exact: both flavours' value
    float w = s->one_minus_beta2, gf = (float)g, vf = (float)v;
    if (va->kernels == PP_ADAMW_KERNELS_CUDA)
        return (double)pp_adamw_store(V, fmaf(w, gf * gf, vf));
    return (double)pp_adamw_store(V, fmaf(w * gf, gf, vf));
}

// The denominator: a binary32 value always (its site keeps binary32: adamw.h); √ of a binary64 v
// rounds once to binary32 first.
PP_HD static inline float pp_adamw_denom64(const pp_adamw_variant *va, const pp_adamw_scalars *s, double v)
{
    pp_format_id V = va->variance;
    float d = pp_adamw_store_at(va, PP_SITE_ADAMW_DENOM, V, (float)sqrt(v));
    if (va->kernels == PP_ADAMW_KERNELS_CUDA && va->update == PP_ADAMW_ANYPRECISION)
        d = pp_adamw_store_at(va, PP_SITE_ADAMW_DENOM, V, d * s->inv_dc);
    else
        d = pp_adamw_store_at(va, PP_SITE_ADAMW_DENOM, V, d / s->dc);
    return pp_adamw_store_at(va, PP_SITE_ADAMW_DENOM, V, d + s->eps);
}

// The addcdiv into x (θ, or c with Kahan) whose store is site s, before that store: update exact,
// x + (−step)·(m/d) in binary64; else the kernel's binary32 increment added to x in binary64 when
// s is exact, in the kernel's binary32 arithmetic when it is not.
PP_HD static inline double pp_adamw_addcdiv64(const pp_adamw_variant *va, const pp_adamw_scalars *s, int site,
                                              double x, double m, float d)
{
    if (pp_site_exact(va->exact_sites, PP_SITE_ADAMW_UPDATE))
        return x + (double)s->neg_step * (m / (double)d);
    if (va->kernels == PP_ADAMW_KERNELS_CUDA)
        return pp_adamw_fma64(va, site, s->neg_step, pp_adamw_r32(m / d), x);
    double inc = pp_adamw_r32(pp_adamw_r32(s->neg_step * m) / d);
    return pp_site_exact(va->exact_sites, site) ? x + inc : pp_adamw_r32(x + inc);
}

// The store at state site s of the addcdiv's result x: x when s is exact; else as
// pp_adamw_store_update_ (from binary64 with update exact, else R(RN32(x))).
PP_HD static inline double pp_adamw_store_update64(const pp_adamw_variant *va, int s, pp_format_id f, double x,
                                                   int sr, uint32_t rbits)
{
    if (pp_site_exact(va->exact_sites, s))
        return x;
    return (double)pp_adamw_store_update_(va, s, f, x, sr, rbits);
}

// The fused kernel's step (torch_kernels = cuda-fused; kernels/adamw.h's pp_adamw_elem_step_fused)
// with the binary64 state: an exact state site computes its own FMAs and the update it stores in
// binary64 from the binary64 state (the scalars and g as the kernel has them); the denominator
// stays binary32, from v rounded to binary32 when v is exact (a double rounding). With no state
// site exact: pp_adamw_elem_step_fused bit for bit. Kahan is refused with this flavour.
PP_HD static inline void pp_adamw_elem_step_fused64(const pp_adamw_variant *va, const pp_adamw_scalars *s,
                                                    pp_adamw_elem64 *e, float g, const uint32_t rbits[2])
{
    int xt = pp_site_exact(va->exact_sites, PP_SITE_ADAMW_THETA);
    int xm = pp_site_exact(va->exact_sites, PP_SITE_ADAMW_M), xv = pp_site_exact(va->exact_sites, PP_SITE_ADAMW_V);
    double th = e->theta, b1 = s->beta1, b2 = s->beta2, gd = g, gg = gd * gd;
    if (s->use_decay)
        th = xt ? fma(-(double)s->fused_lr_wd, th, th) : (double)fmaf(-s->fused_lr_wd, (float)th, (float)th);
    double m = xm ? fma(b1, e->m, fma(-b1, gd, gd)) : (double)pp_adamw_fused_momentum(s, (float)e->m, g);
    double v = xv ? fma(b2, e->v, fma(-b2, gg, gg)) : (double)pp_adamw_fused_variance(s, (float)e->v, g);
    float d = pp_adamw_fused_denom(s, (float)v);
    double x = xt ? th + (double)s->fused_neg_step * m / (double)d
                  : pp_adamw_fused_update_at(va, s, (float)th, (float)m, d);
    e->theta = pp_adamw_store_update64(va, PP_SITE_ADAMW_THETA, va->param, x, va->stochastic, rbits[1]);
    e->m = xm ? m : (double)pp_adamw_store_at(va, PP_SITE_ADAMW_M, va->momentum, (float)m);
    e->v = xv ? v : (double)pp_adamw_store_at(va, PP_SITE_ADAMW_V, va->variance, (float)v);
}

// One step of one element with the binary64 state (see the top comment); g a binary32 value.
PP_HD static inline void pp_adamw_elem_step64(const pp_adamw_variant *va, const pp_adamw_scalars *s,
                                              pp_adamw_elem64 *e, float g, const uint32_t rbits[2])
{
    if (va->kernels == PP_ADAMW_KERNELS_CUDA_FUSED) {
        pp_adamw_elem_step_fused64(va, s, e, g, rbits);
        return;
    }
    pp_format_id P = va->param, C = va->compensation;
    int xt = pp_site_exact(va->exact_sites, PP_SITE_ADAMW_THETA), xc = pp_site_exact(va->exact_sites, PP_SITE_ADAMW_COMP);
    double th = e->theta;
    if (s->use_decay)
        th = xt ? th * s->decay : (double)pp_adamw_store_param(P, (float)(th * s->decay), va->stochastic, rbits[0]);
    double m = pp_adamw_momentum64(va, s, e->m, g);
    double v = pp_adamw_variance64(va, s, e->v, g);
    float d = pp_adamw_denom64(va, s, v);
    if (va->kahan) {
        double c = pp_adamw_store_update64(va, PP_SITE_ADAMW_COMP, C,
                                           pp_adamw_addcdiv64(va, s, PP_SITE_ADAMW_COMP, e->c, m, d), 0, 0);
        double old = th;
        th = xt ? th + c : (double)pp_adamw_store_param(P, (float)(th + c), va->stochastic, rbits[1]);
        double clone = xt ? old - th : (double)pp_adamw_store(P, (float)(old - th));
        e->c = xc ? c + clone : (double)pp_adamw_store(C, (float)(c + clone));
    } else {
        th = pp_adamw_store_update64(va, PP_SITE_ADAMW_THETA, P,
                                     pp_adamw_addcdiv64(va, s, PP_SITE_ADAMW_THETA, th, m, d), va->stochastic,
                                     rbits[1]);
    }
    e->theta = th;
    e->m = m;
    e->v = v;
}

// ---------------------------------------------------------------------------------------------
// The thread bodies (kernels/adamw_thread.h's, on the binary64 state)

// The gradient of element i at step t from a binary64 θ (quadratic: h·(RN32(θ − θ*)) in binary32,
// as pp_adamw_src_grad; the other sources do not read θ).
PP_HD static inline float pp_adamw_src_grad64(const pp_adamw_variant *va, const pp_adamw_problem *pr, int t,
                                              int64_t i, const pp_adamw_elem_data *d, double theta)
{
    if (pr->kind != PP_ADAMW_GRAD_QUADRATIC)
        return pp_adamw_src_grad(va, pr, t, i, d, 0.0f);
    return pp_adamw_store_at(va, PP_SITE_ADAMW_G, va->param, d->h * (float)(theta - (double)d->opt));
}

// pp_adamw_elem_thread on the binary64 state: the same loss and snapshot contract (the same
// bookkeeping, adamw_thread.h's pp_adamw_thread_out; term(t, i) of the binary64 θ).
PP_HD static inline void pp_adamw_elem_thread64(const pp_adamw_variant *va, const pp_adamw_problem *pr,
                                                const pp_adamw_scalars *sc, int64_t i, int t0, int t1,
                                                pp_adamw_elem64 *e, pp_adamw_loss_out lo, pp_adamw_snap_out so)
{
    pp_adamw_elem_data d = pp_adamw_elem_data_make(pr, i);
    pp_adamw_thread_out out = {.lo = lo, .so = so};
    for (int t = pp_adamw_thread_begin(&out, &d, t0, e->theta); t <= t1; t++) {
        uint32_t rb[2] = {0, 0};
        if (va->stochastic)
            pp_adamw_sr_bits(pr->seed, (uint64_t)i, (uint32_t)t, rb);
        pp_adamw_elem_step64(va, &sc[t], e, pp_adamw_src_grad64(va, pr, t, i, &d, e->theta), rb);
        pp_adamw_thread_after(&out, &d, t, i, e->theta);
    }
}

// pp_adamw_linreg_row of a binary64 θ: the fp32 chain reads RN32(θ), the binary64 residual θ.
PP_HD static inline void pp_adamw_linreg_row64(const float *X, const float *y, const pp_adamw_elem64 *e, int64_t n,
                                               int64_t q, float *res, double *dr2)
{
    float acc = 0.0f;
    double dacc = 0.0;
    for (int64_t k = 0; k < n; k++) {
        acc = fmaf(X[q * n + k], (float)e[k].theta, acc);
        dacc += (double)X[q * n + k] * e[k].theta;
    }
    res[q] = acc - y[q];
    double dr = dacc - (double)y[q];
    dr2[q] = dr * dr;
}

// pp_adamw_linreg_update on the binary64 state.
PP_HD static inline void pp_adamw_linreg_update64(const pp_adamw_variant *va, const pp_adamw_problem *pr,
                                                  const pp_adamw_scalars *sc, int t, const float *X,
                                                  const float *res, float inv_r, int64_t k, pp_adamw_elem64 *e)
{
    int64_t n = pr->n, r = pr->rows;
    float acc = 0.0f;
    for (int64_t q = 0; q < r; q++)
        acc = fmaf(X[q * n + k], res[q], acc);
    float g = pp_adamw_store_at(va, PP_SITE_ADAMW_G, va->param, acc * inv_r);
    uint32_t rb[2] = {0, 0};
    if (va->stochastic)
        pp_adamw_sr_bits(pr->seed, (uint64_t)k, (uint32_t)t, rb);
    pp_adamw_elem_step64(va, sc, e, g, rb);
}

#endif
