// adamw.h — the element-wise arithmetic of precprobe's AdamW step, written once for the CPU
// emulation (kernels/cpu/adamw.c) and the CUDA backend: two update flavours, Kahan-compensated
// stores, stochastic rounding of the parameter from Philox bits. C11 and nvcc (PP_HD).
#ifndef PP_ADAMW_H
#define PP_ADAMW_H

#include <math.h>
#include <stdint.h>

#include "format.h"
#include "philox.h"
#include "pp_hd.h"

// ---------------------------------------------------------------------------------------------
// The variant
//
// One element i at step t (t = 1, 2, ...), state θ (param_format P), m (momentum_format M),
// v (variance_format V), c (compensation_format C, Kahan only), gradient g (a value of P, as a
// framework's grad has its parameter's dtype). RN32 is binary32 round-to-nearest-even, R_X the
// store into format X (round to nearest even; R_P is stochastic when rounding = stochastic,
// below). Every tensor op computes in binary32 ("opmath") and rounds once into its output's
// dtype, as PyTorch's CPU kernels do for fp32, bf16 and fp16 tensors. The per-step scalars
// (pp_adamw_scalars) are binary32 values computed on the host, once per step.
//
// update = anyprecision (torchdistx AnyPrecisionAdamW, notes §2; the step is a float32 0-d
// tensor, so the bias corrections are float32 0-d tensors):
//   s1  = powf(RN32(β1), t), s2 = powf(RN32(β2), t)        glibc powf, as torch's CPU pow (probed)
//   bc1 = RN32(1 − s1);   step_size = RN32(RN32(1/bc1)·RN32(lr_t))   (lr / tensor = reciprocal·lr)
//   dc  = RN32(sqrt(RN32(1 − s2)))                          (tensor ** 0.5)
//   1. weight decay, if wd ≠ 0:  θ = R_P(RN32(θ·RN32(1 − lr_t·wd)))   (1 − lr·wd in binary64)
//   2. m = R_M(RN32(m·RN32(β1)));  m = R_M(fmaf(g, α, m))   (add_ with alpha is an FMA), with
//      α = R_M(RN32(1 − β1)) when M = P (alpha becomes a scalar of the common dtype), else RN32(1 − β1)
//   3. v = R_V(RN32(v·RN32(β2)));  v = R_V(fmaf(RN32(RN32(1 − β2)·g), g, v))   (addcmul_)
//   4. d = R_V(sqrt(v)); d = R_V(RN32(d / dc)); d = R_V(RN32(d + RN32(ε)))   (all in V's dtype)
//   5. u = RN32(RN32(−step_size·m) / d)                      (addcdiv_: value·t1 / t2, then +)
//      no Kahan:  θ = R_P(RN32(θ + u))
//      Kahan:     c = R_C(RN32(c + u));  θ_old = θ;  θ = R_P(RN32(θ + c));
//                 c = R_C(RN32(c + R_P(RN32(θ_old − θ))))     (c is the residual still owed to θ:
//                 classic Kahan with the carry's sign flipped; θ_old − θ is a clone of p in P)
//
// update = torch (torch.optim.AdamW, _single_tensor_adam with decoupled weight decay; step.item()
// is a Python float, so the bias corrections are binary64 Python scalars):
//   bc1 = 1 − β1^t, bc2 = 1 − β2^t in binary64 (pow), step_size = lr_t / bc1 (binary64),
//   dc = RN32(√bc2) (bc2 ** 0.5 in binary64, then the scalar enters a float32 op)
//   1. weight decay as anyprecision (torch multiplies even when wd = 0: by 1, exact; skipped here)
//   2. m = R_M(fmaf(w, RN32(g − m), m)), w = RN32(1 − β1)        (lerp_, |w| < ½: an FMA)
//      (|w| ≥ ½: m = R_M(fmaf(RN32(w − 1), RN32(g − m), g)), lerp's other branch)
//   3. as anyprecision;  4. as anyprecision (d's dtype is V's);
//   5. u = RN32(RN32(RN32(−step_size)·m) / d), θ = R_P(RN32(θ + u)); Kahan as above when on.
//
// The FMAs, the unfused addcdiv and the bf16 alpha were established against torch 2.15 on x86-64
// (tools/adamw_torch_parity.py: bit-identical θ, m, v with a correctly rounded sqrt). Known
// divergences of that torch build, which precprobe does not copy: its CPU fp32 sqrt (and a 0-d
// tensor's ** 0.5) is not correctly rounded on vectorised chunks (≈20% of elements 1 ulp off);
// precprobe's sqrt is IEEE's (and CUDA's default sqrtf). Its bf16 add_(other, alpha) rounds alpha
// to bf16 in the vectorised loop but not in the scalar tail (the last n mod 64 elements);
// precprobe follows the vectorised loop.
//
// Stochastic rounding (rounding = stochastic) replaces every R_P store by pp_round's PP_RND_SR
// with 32 Philox bits per store: away from zero with probability floor(frac·2^32)/2^32 where
// frac is the dropped fraction of an ulp. For binary32 → bf16 (16 dropped bits) that is exactly
// the OneTrainer / torchao trick (add 16 random bits to the binary32 pattern, truncate): the
// carry happens with probability low16/2^16. The bits of element i at step t come from
// pp_philox_element(seed, PP_ADAMW_TID_SR, i, t): word 0 for the decay store, word 1 for the
// update store.

typedef enum pp_adamw_update {
    PP_ADAMW_ANYPRECISION = 0,  // torchdistx AnyPrecisionAdamW: fp32 0-d step tensor
    PP_ADAMW_TORCH              // torch.optim.AdamW single-tensor: binary64 bias corrections
} pp_adamw_update;

#define PP_ADAMW_TID_SR 0x53520000u    // Philox tensor id of the stochastic-rounding bits

typedef struct pp_adamw_variant {
    pp_format_id param, momentum, variance, compensation;  // fp32, bf16 or fp16 each
    int kahan;                                             // 1: compensated θ store
    int stochastic;                                        // 1: θ stores use PP_RND_SR
    pp_adamw_update update;
} pp_adamw_variant;

// Hyper-parameters (binary64, as a Python script passes them).
typedef struct pp_adamw_hyper {
    double lr, beta1, beta2, eps, weight_decay;
} pp_adamw_hyper;

// The per-step scalars, binary32 values (see the top comment).
typedef struct pp_adamw_scalars {
    float decay;        // RN32(1 − lr_t·wd)
    int use_decay;      // wd ≠ 0
    float beta1, one_minus_beta1, beta2, one_minus_beta2;
    float dc;           // the bias-correction divisor of √v
    float eps;
    float neg_step;     // −step_size as the binary32 the addcdiv uses
} pp_adamw_scalars;

// ---------------------------------------------------------------------------------------------
// Stores

// R_X(x) for a binary32 x, nearest-even (pp_round_from_f32; identity for fp32).
PP_HD static inline float pp_adamw_store(pp_format_id f, float x)
{
    return f == PP_FMT_FP32 ? x : pp_round_from_f32(f, x, PP_RND_NE, 0);
}

// R_P(x): nearest-even, or stochastic from rbits.
PP_HD static inline float pp_adamw_store_param(pp_format_id f, float x, int stochastic, uint32_t rbits)
{
    if (!stochastic)
        return pp_adamw_store(f, x);
    return pp_round_from_f32(f, x, PP_RND_SR, rbits);
}

// ---------------------------------------------------------------------------------------------
// The element update

typedef struct pp_adamw_elem {
    float theta, m, v, c;  // values of P, M, V, C
} pp_adamw_elem;

// One step of one element: e ← step(e, g) for variant va with this step's scalars s.
// @param [in,out] e      the element's state; every field a value of its format.
// @param [in]     g      the gradient, a binary32 value (of P by convention).
// @param [in]     rbits  two words of random bits (used only when va->stochastic).
// NaN and ±Inf propagate as in IEEE arithmetic; overflow on a store gives ±Inf.
PP_HD static inline void pp_adamw_elem_step(const pp_adamw_variant *va, const pp_adamw_scalars *s,
                                            pp_adamw_elem *e, float g, const uint32_t rbits[2])
{
    pp_format_id P = va->param, M = va->momentum, V = va->variance, C = va->compensation;
    float th = e->theta, m = e->m, v = e->v;
    if (s->use_decay)
        th = pp_adamw_store_param(P, th * s->decay, va->stochastic, rbits[0]);
    if (va->update == PP_ADAMW_TORCH) {
        float w = s->one_minus_beta1, d = g - m;
        if (fabsf(w) < 0.5f)
            m = pp_adamw_store(M, fmaf(w, d, m));
        else
            m = pp_adamw_store(M, fmaf(w - 1.0f, d, g));
    } else {
        // add_(grad, alpha): alpha enters as a scalar of the op's common dtype, so it is rounded to
        // M when grad and exp_avg share a reduced format (probed: bf16 0.1 → 0.10009765625)
        float a1 = M == P ? pp_adamw_store(M, s->one_minus_beta1) : s->one_minus_beta1;
        m = pp_adamw_store(M, m * s->beta1);
        m = pp_adamw_store(M, fmaf(g, a1, m));
    }
    v = pp_adamw_store(V, v * s->beta2);
    v = pp_adamw_store(V, fmaf(s->one_minus_beta2 * g, g, v));
    float d = pp_adamw_store(V, sqrtf(v));
    d = pp_adamw_store(V, d / s->dc);
    d = pp_adamw_store(V, d + s->eps);
    float u = (s->neg_step * m) / d;
    if (va->kahan) {
        float c = pp_adamw_store(C, e->c + u);
        float old = th;
        th = pp_adamw_store_param(P, th + c, va->stochastic, rbits[1]);
        c = pp_adamw_store(C, c + pp_adamw_store(P, old - th));
        e->c = c;
    } else {
        th = pp_adamw_store_param(P, th + u, va->stochastic, rbits[1]);
    }
    e->theta = th;
    e->m = m;
    e->v = v;
}

// The stochastic-rounding bits of element i at step t under seed.
PP_HD static inline void pp_adamw_sr_bits(uint64_t seed, uint64_t i, uint32_t t, uint32_t rbits[2])
{
    pp_philox4x32_ctr w = pp_philox_element(seed, PP_ADAMW_TID_SR, i, t);
    rbits[0] = w.v[0];
    rbits[1] = w.v[1];
}

#endif
