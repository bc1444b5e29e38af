// adamw_problem.h — the problems an AdamW run trains on (gradient sources, their data drawn from
// the case's seed), the learning-rate schedule and the per-step scalars: what the emulation, the
// CUDA backend and the MPFR reference must all see identically. C11 and nvcc (PP_HD) where marked.
#ifndef PP_ADAMW_PROBLEM_H
#define PP_ADAMW_PROBLEM_H

#include <math.h>
#include <stdint.h>

#include "adamw.h"
#include "cuda_powf.h"
#include "format.h"
#include "random_dist.h"

// ---------------------------------------------------------------------------------------------
// Problems
//
// synthetic: g_{t,i} = RN_P(scale·(s_i + z_{t,i}/snr)), s_i and z_{t,i} standard normals: s_i =
//   pp_rand_normal(seed, PP_ADAMW_TID_SIGNAL, i); the noise drawn in pairs, z_{t,2j} and
//   z_{t,2j+1} the two values of pp_rand_normal_pair(seed, PP_ADAMW_TID_NOISE + t, j) (both
//   halves of one polar attempt: a normal per element-step is most of the source's cost, and the
//   pair halves it; pp_adamw_synth_noise). The sum in binary64 then one rounding to P.
//   Independent of θ: the reference sees the same g_{t,i}.
//   No loss is defined. (So that rounding is input quantisation, not a rounding site of the
//   optimizer: explain does not offer g here; adamw.h "Exact sites".)
// quadratic: L(θ) = ½ Σ_i h_i (θ_i − θ*_i)², h_i = RN32(0.1 + 0.9·U_i), θ*_i = RN32(N_i), both
//   stored in fp32. Emulated gradient: g_i = R_P(RN32(h_i·RN32(θ_i − θ*_i))); exact gradient
//   h_i(θ_i − θ*_i).
// linear-regression: rows r, features n; X_jk = RN32(N), w*_k = RN32(N), y_j = RN32(x_j·w* +
//   noise·N) (binary64 dot, left to right), stored in fp32. L(θ) = (1/2r) Σ_j (x_j·θ − y_j)².
//   Emulated gradient (an fp32 GEMV pair, FMA chains left to right): e_j = RN32(fmaf-chain(x_j·θ)
//   − y_j); g_k = R_P(RN32(fmaf-chain(Σ_j x_jk e_j)·RN32(1/r))). Exact gradient (1/r)Xᵀ(Xθ − y).
// input: g_{t,i} = grads[(t − 1)·n + i], the op's input tensor grads [T, n] (a user's recorded
//   gradients read from a file, or generated like any input), values of P (checked by
//   pp_adamw_check). Independent of θ, so the emulation and the reference see the same g_{t,i},
//   as a torch optimizer stepping on the same recorded .grad tensors does. No loss is defined.

typedef enum pp_adamw_grad_kind {
    PP_ADAMW_GRAD_SYNTHETIC = 0,
    PP_ADAMW_GRAD_QUADRATIC,
    PP_ADAMW_GRAD_LINREG,
    PP_ADAMW_GRAD_INPUT
} pp_adamw_grad_kind;

typedef enum pp_adamw_schedule {
    PP_ADAMW_LR_CONSTANT = 0,
    PP_ADAMW_LR_WARMUP_LINEAR,  // lr·min(1, t/W), then constant
    PP_ADAMW_LR_COSINE          // the warm-up, then lr·½(1 + cos(π(t − W)/(T − W)))
} pp_adamw_schedule;

#define PP_ADAMW_TID_SIGNAL 0x47530000u  // synthetic: per-element signal
#define PP_ADAMW_TID_NOISE 0x4E000000u   // synthetic: + step t (t < 2^24)
#define PP_ADAMW_TID_H 0x51480000u       // quadratic: curvature
#define PP_ADAMW_TID_OPT 0x514F0000u     // quadratic θ*, linear regression w*
#define PP_ADAMW_TID_X 0x4C580000u       // linear regression X (flat index j·n + k)
#define PP_ADAMW_TID_Y 0x4C590000u       // linear regression label noise
#define PP_ADAMW_MAX_SNAPS 64

typedef struct pp_adamw_problem {
    pp_adamw_grad_kind kind;
    int64_t n;              // parameters
    int steps;              // T ≥ 1
    uint64_t seed;
    pp_adamw_hyper hyper;
    pp_adamw_schedule schedule;
    int warmup;             // W ≥ 0 steps
    double grad_scale, snr; // synthetic
    int64_t rows;           // linear regression
    double label_noise;     // linear regression
    const double *grads;    // input: [steps][n] host memory, values of the param format (not owned)
} pp_adamw_problem;

// Whether the problem defines a loss (quadratic, linear regression): the others only give gradients.
static inline int pp_adamw_has_loss(const pp_adamw_problem *pr)
{
    return pr->kind == PP_ADAMW_GRAD_QUADRATIC || pr->kind == PP_ADAMW_GRAD_LINREG;
}

// Per-step records of one trajectory (emulated or exact), memory O(T + snaps·n).
typedef struct pp_adamw_trace {
    int n_snaps;
    int snap_step[PP_ADAMW_MAX_SNAPS];  // increasing, the last is T
    double *snap;                       // [n_snaps][n] θ after those steps
    double *loss;                       // [T + 1] loss before step 1 and after each step (NULL: none)
    const double *theta0;               // [n] the start (not owned: the caller's θ₀)
} pp_adamw_trace;

// The snapshot steps for T: {1, 2, 3, 5, 7}·10^k ≤ T, and T. Returns their count (≤ 64).
static inline int pp_adamw_snap_steps(int T, int *out)
{
    static const int mant[] = {1, 2, 3, 5, 7};
    int n = 0;
    for (long p = 1; p <= T && n < PP_ADAMW_MAX_SNAPS - 1; p *= 10)
        for (int j = 0; j < 5 && n < PP_ADAMW_MAX_SNAPS - 1; j++)
            if (mant[j] * p < T)
                out[n++] = (int)(mant[j] * p);
    out[n++] = T;
    return n;
}

// lr_t (binary64, as a Python LambdaLR computes it); the emulation and the reference both take
// this binary64 as the step's exact learning rate.
static inline double pp_adamw_lr(const pp_adamw_problem *pr, int t)
{
    double lr = pr->hyper.lr;
    int W = pr->warmup;
    if (pr->schedule == PP_ADAMW_LR_CONSTANT)
        return lr;
    if (W > 0 && t < W)
        return lr * ((double)t / (double)W);
    if (pr->schedule == PP_ADAMW_LR_WARMUP_LINEAR || pr->steps <= W)
        return lr;
    const double pi = 3.14159265358979323846;
    return lr * 0.5 * (1.0 + cos(pi * (double)(t - W) / (double)(pr->steps - W)));
}

// The binary32 scalars of step t for update flavour u (adamw.h's top comment). Host code: powf
// and pow are glibc's, as torch's CPU pow and CPython's ** are.
static inline pp_adamw_scalars pp_adamw_scalars_make(pp_adamw_update u, const pp_adamw_hyper *h, double lr_t,
                                                     int t)
{
    pp_adamw_scalars s;
    s.use_decay = h->weight_decay != 0.0;
    s.decay = (float)(1.0 - lr_t * h->weight_decay);
    s.beta1 = (float)h->beta1;
    s.one_minus_beta1 = (float)(1.0 - h->beta1);
    s.beta2 = (float)h->beta2;
    s.one_minus_beta2 = (float)(1.0 - h->beta2);
    s.eps = (float)h->eps;
    if (u == PP_ADAMW_ANYPRECISION) {
        float s1 = powf(s.beta1, (float)t), s2 = powf(s.beta2, (float)t);
        float bc1 = 1.0f - s1, bc2 = 1.0f - s2;
        float step = (1.0f / bc1) * (float)lr_t;
        s.dc = sqrtf(bc2);
        s.neg_step = -step;
    } else {
        double bc1 = 1.0 - pow(h->beta1, (double)t), bc2 = 1.0 - pow(h->beta2, (double)t);
        s.dc = (float)sqrt(bc2);
        s.neg_step = (float)(-(lr_t / bc1));
    }
    s.inv_dc = 1.0f / s.dc;
    // cuda-fused: the kernel's own binary32 scalars, with CUDA's powf (kernels/cuda_powf.h) of the
    // binary32 step count (exact: t ≤ 2^24); computed for every flavour (two powf per step)
    float lr_f = (float)lr_t, tf = (float)t;
    s.fused_lr_wd = lr_f * (float)h->weight_decay;
    s.fused_dc = sqrtf(1.0f - pp_cuda_powf(s.beta2, tf));
    s.fused_neg_step = -(lr_f / (1.0f - pp_cuda_powf(s.beta1, tf)));
    return s;
}

// ---------------------------------------------------------------------------------------------
// Problem data (pure functions of the seed; PP_HD)

// The synthetic source's per-element signal s_i (constant over steps: loops compute it once).
PP_HD static inline double pp_adamw_synth_signal(const pp_adamw_problem *pr, int64_t i)
{
    return pp_rand_normal(pr->seed, PP_ADAMW_TID_SIGNAL, (uint64_t)i);
}

// scale·(s + z/snr) in binary64, before the rounding to P (the lanes round many at once,
// kernels/round_lanes.h).
PP_HD static inline double pp_adamw_synth_grad_unrounded(const pp_adamw_problem *pr, double s, double z)
{
    return pr->grad_scale * (s + z / pr->snr);
}

// g = RN_P(scale·(s + z/snr)) from the signal s and the noise z already drawn (the lanes,
// kernels/random_lanes.h, draw z side by side).
PP_HD static inline double pp_adamw_synth_grad_z(const pp_adamw_problem *pr, pp_format_id P, double s, double z)
{
    return pp_round(P, pp_adamw_synth_grad_unrounded(pr, s, z), PP_RND_NE, 0);
}

// The synthetic source's noise z_{t,i}: value i mod 2 of the pair ⌊i/2⌋ of step t's tensor (the
// lanes, kernels/cpu/adamw_lanes.c, draw a step's pairs side by side and use both values).
PP_HD static inline double pp_adamw_synth_noise(const pp_adamw_problem *pr, int t, int64_t i)
{
    double z[2];
    pp_rand_normal_pair(pr->seed, PP_ADAMW_TID_NOISE + (uint32_t)t, (uint64_t)i >> 1, z);
    return z[i & 1];
}

// g_{t,i} = RN_P(scale·(s_i + z_{t,i}/snr)) given s_i = pp_adamw_synth_signal(pr, i).
PP_HD static inline double pp_adamw_synth_grad_s(const pp_adamw_problem *pr, pp_format_id P, int t, int64_t i,
                                                 double s)
{
    return pp_adamw_synth_grad_z(pr, P, s, pp_adamw_synth_noise(pr, t, i));
}

// g_{t,i} of a θ-independent source (synthetic, given s_i; or input), a value of P.
PP_HD static inline double pp_adamw_given_grad(const pp_adamw_problem *pr, pp_format_id P, int t, int64_t i,
                                               double s)
{
    if (pr->kind == PP_ADAMW_GRAD_INPUT)
        return pr->grads[(int64_t)(t - 1) * pr->n + i];
    return pp_adamw_synth_grad_s(pr, P, t, i, s);
}

// g_{t,i} of the synthetic source, a value of P.
PP_HD static inline double pp_adamw_synth_grad(const pp_adamw_problem *pr, pp_format_id P, int t, int64_t i)
{
    return pp_adamw_synth_grad_s(pr, P, t, i, pp_adamw_synth_signal(pr, i));
}

// Quadratic data of element i: curvature h and optimum θ*, binary32 values.
PP_HD static inline void pp_adamw_quad_data(const pp_adamw_problem *pr, int64_t i, float *h, float *opt)
{
    *h = (float)(0.1 + 0.9 * pp_rand_uniform01(pr->seed, PP_ADAMW_TID_H, (uint64_t)i));
    *opt = (float)pp_rand_normal(pr->seed, PP_ADAMW_TID_OPT, (uint64_t)i);
}

// Linear-regression data: X [rows, n] and y [rows], binary32 values (as floats).
static inline void pp_adamw_linreg_data(const pp_adamw_problem *pr, float *X, float *y)
{
    int64_t n = pr->n, r = pr->rows;
    for (int64_t j = 0; j < r; j++) {
        double dot = 0.0;
        for (int64_t k = 0; k < n; k++) {
            X[j * n + k] = (float)pp_rand_normal(pr->seed, PP_ADAMW_TID_X, (uint64_t)(j * n + k));
            dot += (double)X[j * n + k] * (double)(float)pp_rand_normal(pr->seed, PP_ADAMW_TID_OPT, (uint64_t)k);
        }
        y[j] = (float)(dot + pr->label_noise * pp_rand_normal(pr->seed, PP_ADAMW_TID_Y, (uint64_t)j));
    }
}

// ---------------------------------------------------------------------------------------------
// The loss trace's last sum (PP_HD): here, not in adamw_thread.h, because the reference sums its
// own partial losses in the same order and must not include an emulation body.

// loss(t) from part(t, b) at part[b·stride], b = 0..nb−1: ((0 + part 0) + part 1) + … in binary64
// (the order adamw_thread.h documents).
PP_HD static inline double pp_adamw_loss_total(const double *part, int64_t nb, int64_t stride)
{
    double s = 0.0;
    for (int64_t b = 0; b < nb; b++)
        s += part[b * stride];
    return s;
}

#endif
