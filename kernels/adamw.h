// adamw.h — the element-wise arithmetic of precprobe's AdamW step, written once for the CPU
// emulation (kernels/cpu/adamw.c) and the CUDA backend: two optimizers (update), each through
// PyTorch's CUDA or CPU kernels (torch_kernels), Kahan-compensated stores, stochastic rounding of
// the parameter from Philox bits. C11 and nvcc (PP_HD).
#ifndef PP_ADAMW_H
#define PP_ADAMW_H

#include <math.h>
#include <stdint.h>

#include "exact_sites.h"
#include "format.h"
#include "philox.h"
#include "pp_hd.h"
#include "sites.h"

// ---------------------------------------------------------------------------------------------
// The variant
//
// One element i at step t (t = 1, 2, ...), state θ (param_format P), m (momentum_format M),
// v (variance_format V), c (compensation_format C, Kahan only), gradient g (a value of P, as a
// framework's grad has its parameter's dtype). RN32 is binary32 round-to-nearest-even, R_X the
// store into format X (round to nearest even; R_P is stochastic when rounding = stochastic,
// below). Every tensor op computes in binary32 ("opmath") and rounds once into its output's
// dtype, as PyTorch's CPU and CUDA kernels both do for fp32, bf16 and fp16 tensors. The per-step
// scalars (pp_adamw_scalars) are binary32 values computed on the host, once per step.
//
// Kernel flavours (knob torch_kernels): the same optimizer runs through different arithmetic
// in PyTorch's CPU and CUDA kernels (and torch.optim.AdamW through its fused CUDA kernel,
// cuda-fused: "The fused kernel" below). Below, [cpu] and [cuda] mark the lines that differ; the rest
// is the same on both. cuda is the default: the optimizers run on GPUs.
//
// update = anyprecision (torchdistx AnyPrecisionAdamW, notes §2; state["step"] = torch.tensor(0.0)
// is a float32 0-d tensor on the CPU even when the parameters are on a GPU, so the bias
// corrections are float32 0-d CPU tensors computed by the CPU kernels on both devices):
//   s1  = powf(RN32(β1), t), s2 = powf(RN32(β2), t)        glibc powf, as torch's CPU pow (probed)
//   bc1 = RN32(1 − s1);   step_size = RN32(RN32(1/bc1)·RN32(lr_t))   (lr / tensor = reciprocal·lr)
//   dc  = RN32(sqrt(RN32(1 − s2)))                          (tensor ** 0.5)
//   1. weight decay, if wd ≠ 0:  θ = R_P(RN32(θ·RN32(1 − lr_t·wd)))   (1 − lr·wd in binary64)
//   2. m = R_M(RN32(m·RN32(β1)));  m = R_M(fmaf(g, α, m))   (add_ with alpha is an FMA), with
//      [cpu]  α = R_M(RN32(1 − β1)) when M = P (alpha becomes a scalar of the common dtype: bf16
//             0.1 → 0.10009765625, +0.1% in every momentum update), else RN32(1 − β1)
//      [cuda] α = RN32(1 − β1) always (the opmath type)
//   3. v = R_V(RN32(v·RN32(β2)));  then addcmul_(g, g, value = w), w = RN32(1 − β2):
//      [cpu]  v = R_V(fmaf(RN32(w·g), g, v))
//      [cuda] v = R_V(fmaf(w, RN32(g·g), v))                 (value·(t1·t2), one FMA)
//   4. d = R_V(sqrt(v));  then √v / dc, dc the 0-d CPU tensor:
//      [cpu]  d = R_V(RN32(d / dc))
//      [cuda] d = R_V(RN32(d·RN32(1/dc)))                    (a CPU scalar divisor: reciprocal)
//      d = R_V(RN32(d + RN32(ε)))                            (all in V's dtype)
//   5. addcdiv_(m, d, value = −step_size) into x = θ (no Kahan) or x = c (Kahan):
//      [cpu]  x' = RN32(x + RN32(RN32(−step_size·m) / d))   (value·t1 / t2, then +)
//      [cuda] x' = fmaf(−step_size, RN32(m / d), x)          (value·(t1 / t2), one FMA)
//      no Kahan:  θ = R_P(x')
//      Kahan:     c = R_C(x');  θ_old = θ;  θ = R_P(RN32(θ + c));
//                 c = R_C(RN32(c + R_P(RN32(θ_old − θ))))     (c is the residual still owed to θ:
//                 classic Kahan with the carry's sign flipped; θ_old − θ is a clone of p in P;
//                 add_ with alpha 1 is the plain sum on both devices)
//
// update = torch (torch.optim.AdamW ≥ 2.0 with decoupled weight decay: [cpu] _single_tensor_adam,
// [cuda] _multi_tensor_adam, the default foreach=True for CUDA parameters; both take step.item(),
// a Python float, so the bias corrections are binary64 Python scalars):
//   bc1 = 1 − β1^t, bc2 = 1 − β2^t in binary64 (pow), step_size = lr_t / bc1 (binary64),
//   dc = RN32(√bc2) (bc2 ** 0.5 in binary64, then the scalar enters a float32 op)
//   1. weight decay as anyprecision (torch multiplies even when wd = 0: by 1, exact; skipped here)
//   2. m = R_M(fmaf(w, RN32(g − m), m)), w = RN32(1 − β1)        (lerp_, |w| < ½: an FMA)
//      (|w| ≥ ½: m = R_M(fmaf(RN32(w − 1), RN32(g − m), g)), lerp's other branch); both devices
//   3. as anyprecision, [cpu] and [cuda] alike (_foreach_addcmul_ is value·(t1·t2), one FMA)
//   4. d = R_V(sqrt(v)); d = R_V(RN32(d / dc)) on both devices (_foreach_div_ by a list of Python
//      floats divides); d = R_V(RN32(d + RN32(ε)))
//   5. as anyprecision with −step_size = RN32(−lr_t / bc1): [cpu] unfused, [cuda] one FMA.
//
// The fused kernel (torch_kernels = cuda-fused: torch.optim.AdamW(fused=True) on CUDA, torch ≥ 2.11;
// update = torch only, no Kahan: both refused). One kernel per step, every value binary32
// ("opmath") from load to store, θ, m, v each rounded once into its format at the end:
//   scalars, in the kernel from binary32 casts: lr = RN32(lr_t), β1, β2, ε, wd = RN32 of each;
//     bc1 = RN32(1 − powf(β1, t)), dc = sqrtf(RN32(1 − powf(β2, t))), step_size = RN32(lr / bc1),
//     t the float32 step tensor (exact), powf CUDA's own (kernels/cuda_powf.h; glibc's differs)
//   1. θ = fmaf(−RN32(lr·wd), θ, θ)         (param −= lr·wd·param, contracted; not stored: θ stays
//      binary32 into step 5 even when P is bf16)
//   2. m = fmaf(β1, m, fmaf(−β1, g, g))       (lerp written as two FMAs)
//   3. v = fmaf(β2, v, fmaf(−β2, g², g²)), g² = RN32(g·g)
//   4. d = RN32(RN32(sqrtf(v) / dc) + ε)      (m, v unrounded: before their stores)
//   5. θ = R_P(RN32(θ − RN32(RN32(step_size·m) / d))); m = R_M(m); v = R_V(v)
// Sources: aten/src/ATen/native/cuda/fused_adam_utils.cuh after pytorch PR 173227 ("Use opmath_t
// and not double compute in fused SGD and Adam", Jan 2026; read in a line-numbered copy of a later
// main: adam_math lines 123-141, FusedAdamMathFunctor's binary32 scalars and bias corrections
// 190-213), with the two-FMA lerps of PR 153097; torch/optim/adam.py of torch 2.11.0
// (git 70d99e998b49), _fused_adam lines 803-899: lr a float or a tensor (842-876), the step
// tensor incremented on the device (877), torch._fused_adamw_ (878). Checked on an NVIDIA H200,
// torch 2.11.0+cu130, 2026-11-26: per step from torch's own state (n 4099, 25 steps, fp32 and bf16,
// betas (0.9, 0.999) and (0.8, 0.95)) this model gave 0 differing θ, m, v, where the binary64
// model of the earlier kernels (below) gave 7944 θ and 81 472 m of the 102 475 element-steps
// (fp32, betas (0.9, 0.999));
// then over whole runs (300 steps, the same four configurations) θ, m, v bit-identical
// (tools/adamw_torch_parity.py judges it from torch 2.11). With glibc's powf in place of CUDA's,
// 8 θ of the 102 475 differed (betas (0.8, 0.95)).
// Not modelled, each said where it matters:
//   - earlier torch (2.0 to 2.10): the same kernel computed lr, β, wd, ε and the bias corrections in
//     binary64 (the pre-PR-173227 adam_math: `lr * weight_decay * param` and `beta1 * exp_avg +
//     (1 - beta1) * grad` in double, rounded to float at each assignment); precprobe models 2.11's.
//   - GradScaler (grad_scale, found_inf: g /= scale in the kernel, the step skipped on found_inf),
//     amsgrad, maximize, capturable/differentiable, complex parameters: none is a precprobe knob
//     (op_adamw's grad_scale is the synthetic source's scale, not GradScaler's).
//   - formats: torch 2.11's fused kernel takes θ, g, m, v of one dtype; precprobe lets M, V differ
//     from P and stores each once from binary32 (what the kernel's load/compute/store would do;
//     not checked against torch).
//   - CUDA's powf uses an approximate reciprocal (MUFU.RCP); the emulation uses the correctly
//     rounded one. Equal on the H200 for every t ≤ 16 000 of β ∈ {0.1, 0.5, 0.8, 0.85, 0.875, 0.9,
//     0.95, 0.98, 0.99, 0.995, 0.999, 0.9995, 0.9999, 0.99999} (and t ≤ 10^6 of 0.9, 0.999); for 5
//     of 184 random β in (0, 1), 70 of their 2 944 000 powf differ by an ulp
//     (tests/test_cuda_powf_cuda.c).
//   - torch's CPU fused kernel (torch ≥ 2.4) is another kernel, not modelled.
//
// Sources. The CPU flavour was established against torch 2.15 on x86-64
// (tools/adamw_torch_parity.py: bit-identical θ, m, v with a correctly rounded sqrt). The CUDA
// flavour is read from PyTorch's CUDA sources, and was then run against torch 2.11.0+cu130 on an
// NVIDIA H200 (tools/gpu-check.sh, 2026-11-26): θ, m, v bit-identical for torch.optim.AdamW
// (foreach) and AnyPrecisionAdamW, fp32 and bf16 states, Kahan on and off, n 4099, 25 steps:
//   - add_(g, alpha): the ufunc functor computes self + alpha·other with alpha and both operands
//     in opmath_t = float (aten/src/ATen/native/ufunc/add.h:14 at 66b5b0b; the CUDA functor that
//     calls it with opmath_t arguments is generated by torchgen/dest/ufunc.py,
//     compute_ufunc_cuda_functors). PyTorch builds its CUDA code without --fmad=false, and nvcc's
//     default --fmad=true contracts it: nvcc 13.0 compiles `a + al * b` on floats to one
//     fma.rn.f32 (PTX checked for this note), i.e. fma(alpha, g, m), the same FMA as the CPU's
//     vec::fmadd. (Older PyTorch, before add became a ufunc — BinaryAddSubKernel.cu at 0522296 —
//     ran AddFunctor<scalar_t> with alpha.to<scalar_t>(): alpha in bf16 for a bf16 momentum, like
//     the CPU; which release switched was not checked.)
//   - addcmul_/addcdiv_: aten/src/ATen/native/cuda/PointwiseOpsKernel.cu at 058498d, lines 19 and
//     31: a + alpha·(b·c) and a + alpha·(b / c) in accscalar_t (float for bf16/fp16/fp32; nvcc
//     emits mul.f32 or div.rn.f32, then fma.rn.f32); current PyTorch writes the FMA out:
//     pointwise_op_impl, std::fma(alpha, op(tensor1, tensor2), input) (DeviceAddCmulCdiv.cuh:26
//     at 6768579), dispatched on iter.common_dtype(), so mixed dtypes (a bf16 θ with an fp32 m)
//     load into float and round once at the store. The foreach kernels (_foreach_addcmul_,
//     _foreach_addcdiv_) call the same pointwise_op_impl.
//   - division by a CPU scalar: aten/src/ATen/native/cuda/BinaryDivTrueKernel.cu:36-49 at
//     0f57f05: if iter.is_cpu_scalar(2), inv_b = opmath_t(1.0) / scalar (on the host, binary32),
//     then a · inv_b ("may lose one bit of precision compared to computing the division").
//     AnyPrecisionAdamW's `exp_avg_sq.sqrt() / denom_correction` divides a CUDA tensor by the
//     0-d CPU step tensor: this path. torch.optim.AdamW's foreach path instead calls
//     _foreach_div_(list, [floats]): ForeachBinaryOpScalarList.cu at 035290b, std::divides<opmath_t>
//     on RN32 of each scalar, a true division.
//   - torch/optim/adam.py of torch 2.15.0, _multi_tensor_adam: _foreach_lerp_ (line 705),
//     _foreach_mul_ then _foreach_addcmul_(…, 1 − β2) (709, 722), bias corrections from
//     _get_value(step) (779-781), _foreach_sqrt, _foreach_div_, _foreach_add_(eps),
//     _foreach_addcdiv_(params, exp_avgs, denom, step_size) (791-799); optimizer.py
//     _default_to_fused_or_foreach (line 170) picks foreach for CUDA parameters.
//   - AnyPrecisionAdamW.step, pytorch/torchdistx src/python/torchdistx/optimizers/
//     anyprecision_optimizer.py at 0552f1b: state["step"] = torch.tensor(0.0), then per tensor
//     mul_/add_(grad, alpha), mul_/addcmul_, `(1 - beta2**step) ** 0.5`, sqrt() / that, add_(eps),
//     addcdiv_(value=-step_size), the Kahan add_/sub_.
//
// Deviations from torch still left, each with its measured effect (θ, m, v elements whose bits
// differ, of 4096 vectorised + 3 tail elements, 25 steps of tools/adamw_torch_parity.py, run with
// the deviation and with torch patched to remove it, unless noted):
//   - [cpu] torch's fp32 CPU sqrt (and a 0-d tensor's ** 0.5) is not correctly rounded on
//     vectorised chunks; precprobe's is IEEE's (and CUDA's default sqrtf). torch 2.15.0+cu132
//     (AVX512): 1 θ of 4096 differs with torch's sqrt, 0 with a correctly rounded one
//     (torch.optim.AdamW fp32; the AnyPrecisionAdamW configurations: 0 either way).
//   - [cpu] torch's bf16 add_(other, alpha) rounds alpha to bf16 in the vectorised loop but not in
//     the scalar tail (the last n mod 64 elements); precprobe follows the vectorised loop: 3 of 3
//     tail momenta differ (bf16 θ, m, Kahan), 0 of the 4096 bulk.
//   - [cpu] torch < 2.0 (Debian's 1.13): torch.optim.AdamW's momentum is mul_ then add_ (not
//     lerp_), and bf16 mul_/add_ round their scalars (β1 too) to bf16: 159 θ and 3427 m of 4096
//     differ for fp32 torch.optim.AdamW, 143 θ and 3435 m for bf16 AnyPrecisionAdamW (0 and 0
//     with torch 2.15); the fp32-momentum configurations are bit-identical. Not modelled
//     (precprobe models torch ≥ 2.0).
//   - [cuda] torch.optim.AdamW with foreach=False on CUDA (and torch 1.13's default there) divides
//     √v by the Python float √bc2 through the CPU-scalar path above (a reciprocal multiply), where
//     the foreach default divides: not modelled (fused=True is, "The fused kernel" above). Its
//     effect, emulated (precprobe's arithmetic both ways) on adamw-small's
//     fp32-torch variant (4096 elements, 300 steps): 70 θ differ, mean |Δθ| 3.2e-10 (the
//     variant's own mean |θ error| against exact AdamW: 2.8e-7).
//
// Stochastic rounding (rounding = stochastic) replaces every R_P store by pp_round's PP_RND_SR
// with 32 Philox bits per store: away from zero with probability floor(frac·2^32)/2^32 where
// frac is the dropped fraction of an ulp. For binary32 → bf16 (16 dropped bits) that is exactly
// the OneTrainer / torchao trick (add 16 random bits to the binary32 pattern, truncate): the
// carry happens with probability low16/2^16. The bits of element i at step t come from
// pp_philox_element(seed, PP_ADAMW_TID_SR, i, t): word 0 for the decay store, word 1 for the
// update store.

// Rounding sites (kernels/sites.h): g (the gradient store), m, v (their stores), denom (the
// √v/dc + ε store), update (the addcdiv's increment x' − x), theta (the θ store), comp (the Kahan
// compensation store).

typedef enum pp_adamw_update {
    PP_ADAMW_ANYPRECISION = 0,  // torchdistx AnyPrecisionAdamW: fp32 0-d step tensor
    PP_ADAMW_TORCH              // torch.optim.AdamW (≥ 2.0): binary64 bias corrections
} pp_adamw_update;

// Whose tensor kernels the update runs through (see "Two kernel flavours" above).
typedef enum pp_adamw_kernels {
    PP_ADAMW_KERNELS_CUDA = 0,  // PyTorch's CUDA kernels: where people train (the default)
    PP_ADAMW_KERNELS_CPU,       // PyTorch's x86-64 CPU kernels (tools/adamw_torch_parity.py)
    PP_ADAMW_KERNELS_CUDA_FUSED // torch.optim.AdamW(fused=True) on CUDA: one kernel (update = torch)
} pp_adamw_kernels;

#define PP_ADAMW_TID_SR 0x53520000u    // Philox tensor id of the stochastic-rounding bits

typedef struct pp_adamw_variant {
    pp_format_id param, momentum, variance, compensation;  // fp32, bf16 or fp16 each
    int kahan;                                             // 1: compensated θ store
    int stochastic;                                        // 1: θ stores use PP_RND_SR
    pp_adamw_update update;
    pp_adamw_kernels kernels;                              // zero (the default): CUDA's
    pp_site_mask exact_sites;                              // 0: every store; else "Exact sites"
} pp_adamw_variant;

// Exact sites (precprobe explain; kernels/exact_sites.h, names in kernels/sites.h). Two kinds:
// (1) State sites — theta, m, v, comp: made exact, the state that store writes is kept in
//     binary64 and every later step reads the binary64 value. The binary32 element state below
//     cannot hold it, so the CPU emulation then runs kernels/adamw_exact.h's step on a binary64
//     state (pp_adamw_elem64; its top comment says which ops compute in binary64); this step's
//     own handling of those bits (keep the binary32 value) is what that step reduces to when no
//     state site is exact — tested bit for bit.
//   theta  every R_P of θ (decay, update, Kahan's θ + c and the clone θ_old − θ)
//   m      the momentum's stores R_M (and, [cpu] with M = P, alpha's rounding to M)
//   v      the variance's stores R_V
//   comp   the compensation's stores R_C
// (2) Intermediate sites — g, denom, update: values used within the step, never state:
//   g      the gradient's store R_P where the emulation computes the gradient (quadratic, linreg:
//          the binary32 value — g enters binary32 ops — while the reference takes the exact
//          gradient of its own θ). Not a site of a given gradient (synthetic, input): the reference
//          steps on the same values of P (adamw_problem.h; reference/adamw_ref.c reads
//          pp_adamw_given_grad with P), so their rounding to P is the input's quantisation, as an
//          fp8 GEMM's inputs are, not the optimizer's arithmetic. op_adamw's explain_sites does not
//          offer g there, and the bit changes nothing (adamw_thread.h pp_adamw_src_grad): made
//          "exact" as the binary32 draw it moved m away from the reference, which never saw that
//          value (every site exact then left the gradient's quantisation as error).
//   denom  the three stores of step 4 (binary32 kept: d enters binary32 ops)
//   update the addcdiv: x' = x + (−step_size)·(m/d) in binary64 (both flavours; no RN_32 of m/d
//          nor of the sum), then the store it feeds rounds once from binary64 (or, with that
//          store's state site exact too, keeps it)
// With exact_sites = 0 the functions below run exactly the statements they ran before the sites
// existed (the site tests are uniform branches; tests/test_explain_adamw.c checks bit for bit).

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
    float inv_dc;       // RN32(1/dc): CUDA's division by a CPU scalar multiplies by it
    float eps;
    float neg_step;     // −step_size as the binary32 the addcdiv uses
    // cuda-fused (torch's fused kernel computes its own scalars in binary32; "The fused kernel")
    float fused_lr_wd;     // RN32(RN32(lr_t)·RN32(wd))
    float fused_dc;        // bias_correction2_sqrt = sqrtf(RN32(1 − powf(RN32(β2), t)))
    float fused_neg_step;  // −step_size = −RN32(RN32(lr_t) / RN32(1 − powf(RN32(β1), t)))
} pp_adamw_scalars;

// ---------------------------------------------------------------------------------------------
// Stores

// R_X(x) for a binary32 x, nearest-even: pp_round_from_f32, through format.h's named binary32
// roundings for bf16 and fp16 (equal to it bit for bit, NaN and −0 included: tested exhaustively
// by tests/test_round_exhaustive.c). They are integer operations on the binary32 pattern, so the
// CPU's lane loops (cpu/adamw_lanes.c) vectorise them; identity for fp32.
PP_HD static inline float pp_adamw_store(pp_format_id f, float x)
{
    if (f == PP_FMT_FP32)
        return x;
    if (f == PP_FMT_BF16)
        return pp_round_bf16_ne(x);
    if (f == PP_FMT_FP16)
        return pp_round_fp16_ne(x);
    return pp_round_from_f32(f, x, PP_RND_NE, 0);
}

// R_P(x): nearest-even, or stochastic from rbits (the named roundings as above; a binary32 x is
// an fp32 value, so the fp32 store is exact in every mode).
PP_HD static inline float pp_adamw_store_param(pp_format_id f, float x, int stochastic, uint32_t rbits)
{
    if (!stochastic || f == PP_FMT_FP32)
        return pp_adamw_store(f, x);
    if (f == PP_FMT_BF16)
        return pp_round_bf16_sr(x, rbits);
    if (f == PP_FMT_FP16)
        return pp_round_fp16_sr(x, rbits);
    return pp_round_from_f32(f, x, PP_RND_SR, rbits);
}

// R_X(x) at site s: the store, or x kept when s is exact (a binary32 value: kept exactly).
PP_HD static inline float pp_adamw_store_at(const pp_adamw_variant *va, int s, pp_format_id f, float x)
{
    return pp_site_exact(va->exact_sites, s) ? x : pp_adamw_store(f, x);
}

// The store at site s of the addcdiv's result x (a binary32 value unless update is exact, then a
// binary64 one): stochastic from rbits when sr (θ's stores of a stochastic variant).
PP_HD static inline float pp_adamw_store_update_(const pp_adamw_variant *va, int s, pp_format_id f, double x, int sr,
                                                 uint32_t rbits)
{
    if (pp_site_exact(va->exact_sites, s))
        return (float)x;
    if (!pp_site_exact(va->exact_sites, PP_SITE_ADAMW_UPDATE))
        return pp_adamw_store_param(f, (float)x, sr, rbits);
    return (float)pp_round(f, x, sr && f != PP_FMT_FP32 ? PP_RND_SR : PP_RND_NE, rbits);
}

// ---------------------------------------------------------------------------------------------
// The element update, one tensor op at a time (each helper is one line of the top comment)

typedef struct pp_adamw_elem {
    float theta, m, v, c;  // values of P, M, V, C
} pp_adamw_elem;

// Step 2, the momentum: m ← β1·m + (1 − β1)·g in the variant's order.
PP_HD static inline float pp_adamw_momentum(const pp_adamw_variant *va, const pp_adamw_scalars *s, float m, float g)
{
    pp_format_id M = va->momentum;
    if (va->update == PP_ADAMW_TORCH) {
        // lerp_(g, w): the same FMA on both devices (ATen's lerp, contracted by nvcc); the branch
        // picks operands, not code, so lane loops (cpu/adamw_lanes.c) if-convert it
        float w = s->one_minus_beta1, d = g - m;
        int near = fabsf(w) < 0.5f;
        return pp_adamw_store_at(va, PP_SITE_ADAMW_M, M, fmaf(near ? w : w - 1.0f, d, near ? m : g));
    }
    // mul_(β1).add_(g, alpha): alpha is an FMA operand on both devices; torch's CPU bf16/fp16
    // loop rounds alpha to the common dtype when g and m share it (probed: bf16 0.1 →
    // 0.10009765625), CUDA keeps it in the opmath type binary32
    float a1 = s->one_minus_beta1;
    if (va->kernels == PP_ADAMW_KERNELS_CPU && M == va->param)
        a1 = pp_adamw_store_at(va, PP_SITE_ADAMW_M, M, a1);
    m = pp_adamw_store_at(va, PP_SITE_ADAMW_M, M, m * s->beta1);
    return pp_adamw_store_at(va, PP_SITE_ADAMW_M, M, fmaf(g, a1, m));
}

// Step 3, the variance: v ← β2·v + (1 − β2)·g·g; addcmul_ is fma(RN32(w·g), g, v) on the CPU and
// fma(w, RN32(g·g), v) on CUDA (value·(t1·t2), one FMA).
PP_HD static inline float pp_adamw_variance(const pp_adamw_variant *va, const pp_adamw_scalars *s, float v, float g)
{
    pp_format_id V = va->variance;
    v = pp_adamw_store_at(va, PP_SITE_ADAMW_V, V, v * s->beta2);
    if (va->kernels == PP_ADAMW_KERNELS_CUDA)
        return pp_adamw_store_at(va, PP_SITE_ADAMW_V, V, fmaf(s->one_minus_beta2, g * g, v));
    return pp_adamw_store_at(va, PP_SITE_ADAMW_V, V, fmaf(s->one_minus_beta2 * g, g, v));
}

// Step 4, the denominator: d = √v / dc + ε, each op rounded to V. AnyPrecisionAdamW on CUDA
// divides by the 0-d CPU step tensor, which CUDA does as a multiply by its binary32 reciprocal;
// torch.optim.AdamW's _foreach_div_ by a Python float divides on both devices.
PP_HD static inline float pp_adamw_denom(const pp_adamw_variant *va, const pp_adamw_scalars *s, float v)
{
    pp_format_id V = va->variance;
    float d = pp_adamw_store_at(va, PP_SITE_ADAMW_DENOM, V, sqrtf(v));
    if (va->kernels == PP_ADAMW_KERNELS_CUDA && va->update == PP_ADAMW_ANYPRECISION)
        d = pp_adamw_store_at(va, PP_SITE_ADAMW_DENOM, V, d * s->inv_dc);
    else
        d = pp_adamw_store_at(va, PP_SITE_ADAMW_DENOM, V, d / s->dc);
    return pp_adamw_store_at(va, PP_SITE_ADAMW_DENOM, V, d + s->eps);
}

// Step 5's addcdiv_(m, d, value = −step_size) into x (θ, or c with Kahan), before the store:
// the CPU computes RN32(x + RN32(RN32(value·m) / d)), CUDA fma(value, RN32(m / d), x).
PP_HD static inline float pp_adamw_addcdiv(const pp_adamw_variant *va, const pp_adamw_scalars *s, float x, float m,
                                           float d)
{
    if (va->kernels == PP_ADAMW_KERNELS_CUDA)
        return fmaf(s->neg_step, m / d, x);
    return x + (s->neg_step * m) / d;
}

// The addcdiv with the update site: as above (exactly, in binary32), or with update exact the
// real increment in binary64, x + (−step_size)·(m/d) (−step_size, m, d the binary32 values).
PP_HD static inline double pp_adamw_addcdiv_at(const pp_adamw_variant *va, const pp_adamw_scalars *s, float x,
                                               float m, float d)
{
    if (pp_site_exact(va->exact_sites, PP_SITE_ADAMW_UPDATE))
        return (double)x + (double)s->neg_step * ((double)m / (double)d);
    return (double)pp_adamw_addcdiv(va, s, x, m, d);
}

// ---------------------------------------------------------------------------------------------
// The fused kernel (torch_kernels = cuda-fused; "The fused kernel" in the top comment): every
// value binary32 from load to store, each state stored once at the end.

// m ← fma(β1, m, fma(−β1, g, g)): torch's lerp toward g written as two FMAs.
PP_HD static inline float pp_adamw_fused_momentum(const pp_adamw_scalars *s, float m, float g)
{
    return fmaf(s->beta1, m, fmaf(-s->beta1, g, g));
}

// v ← fma(β2, v, fma(−β2, g², g²)), g² = RN32(g·g) (an FMA's operand: not contracted).
PP_HD static inline float pp_adamw_fused_variance(const pp_adamw_scalars *s, float v, float g)
{
    float gg = g * g;
    return fmaf(s->beta2, v, fmaf(-s->beta2, gg, gg));
}

// denom = RN32(RN32(√v / bias_correction2_sqrt) + ε): a division, not a reciprocal multiply.
PP_HD static inline float pp_adamw_fused_denom(const pp_adamw_scalars *s, float v)
{
    return sqrtf(v) / s->fused_dc + s->eps;
}

// θ ← θ − (step_size·m) / denom, rounded op by op (the subtraction's operand is a quotient: no
// FMA); with the update site exact, in binary64 from the same binary32 operands.
PP_HD static inline double pp_adamw_fused_update_at(const pp_adamw_variant *va, const pp_adamw_scalars *s, float th,
                                                    float m, float d)
{
    if (pp_site_exact(va->exact_sites, PP_SITE_ADAMW_UPDATE))
        return (double)th + (double)s->fused_neg_step * (double)m / (double)d;
    return th + (s->fused_neg_step * m) / d;
}

// One step of one element through the fused kernel. θ's decay, m and v stay binary32 into the
// update (the update uses the unrounded m and v); θ, m and v are stored once each, θ from rbits[1]
// when stochastic (torch has no stochastic store: precprobe's knob, as for the other flavours).
PP_HD static inline void pp_adamw_elem_step_fused(const pp_adamw_variant *va, const pp_adamw_scalars *s,
                                                  pp_adamw_elem *e, float g, const uint32_t rbits[2])
{
    float th = e->theta;
    if (s->use_decay)
        th = fmaf(-s->fused_lr_wd, th, th);  // param -= lr·wd·param, contracted by nvcc
    float m = pp_adamw_fused_momentum(s, e->m, g);
    float v = pp_adamw_fused_variance(s, e->v, g);
    float d = pp_adamw_fused_denom(s, v);
    double x = pp_adamw_fused_update_at(va, s, th, m, d);
    e->theta = pp_adamw_store_update_(va, PP_SITE_ADAMW_THETA, va->param, x, va->stochastic, rbits[1]);
    e->m = pp_adamw_store_at(va, PP_SITE_ADAMW_M, va->momentum, m);
    e->v = pp_adamw_store_at(va, PP_SITE_ADAMW_V, va->variance, v);
}

// One step of one element: e ← step(e, g) for variant va with this step's scalars s.
// @param [in,out] e      the element's state; every field a value of its format.
// @param [in]     g      the gradient, a binary32 value (of P by convention).
// @param [in]     rbits  two words of random bits (used only when va->stochastic).
// NaN and ±Inf propagate as in IEEE arithmetic; overflow on a store gives ±Inf.
PP_HD static inline void pp_adamw_elem_step(const pp_adamw_variant *va, const pp_adamw_scalars *s,
                                            pp_adamw_elem *e, float g, const uint32_t rbits[2])
{
    if (va->kernels == PP_ADAMW_KERNELS_CUDA_FUSED) {
        pp_adamw_elem_step_fused(va, s, e, g, rbits);
        return;
    }
    pp_format_id P = va->param, C = va->compensation;
    float th = e->theta;
    int theta_x = pp_site_exact(va->exact_sites, PP_SITE_ADAMW_THETA);  // "Exact sites"
    if (s->use_decay)
        th = theta_x ? th * s->decay : pp_adamw_store_param(P, th * s->decay, va->stochastic, rbits[0]);
    float m = pp_adamw_momentum(va, s, e->m, g);
    float v = pp_adamw_variance(va, s, e->v, g);
    float d = pp_adamw_denom(va, s, v);
    if (va->kahan) {
        // p.add_(c) and c.add_(θ_old − θ) are plain additions on both devices (alpha 1)
        float c = pp_adamw_store_update_(va, PP_SITE_ADAMW_COMP, C, pp_adamw_addcdiv_at(va, s, e->c, m, d), 0, 0);
        float old = th;
        th = theta_x ? th + c : pp_adamw_store_param(P, th + c, va->stochastic, rbits[1]);
        c = pp_adamw_store_at(va, PP_SITE_ADAMW_COMP, C, c + pp_adamw_store_at(va, PP_SITE_ADAMW_THETA, P, old - th));
        e->c = c;
    } else {
        th = pp_adamw_store_update_(va, PP_SITE_ADAMW_THETA, P, pp_adamw_addcdiv_at(va, s, th, m, d), va->stochastic,
                                    rbits[1]);
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
