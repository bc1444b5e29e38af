// attention.h — the element-wise arithmetic of precprobe's attention variants (unfused and flash,
// forward and backward, the context-parallel merges), the variant's knobs and its scalars.
// C11 and nvcc (PP_HD). The loops are written once: the per-thread bodies of
// kernels/attention_threads.h in the launch sequence of kernels/attention_plan.c, which the GPU
// (kernels/cuda) and the CPU emulation (kernels/cpu/attention_device.c) both run.
#ifndef PP_ATTENTION_H
#define PP_ATTENTION_H

#include <math.h>
#include <stdint.h>

#include "format.h"
#include "gemm.h"
#include "pp_hd.h"
#include "pp_math.h"

// ---------------------------------------------------------------------------------------------
// The operation and every rounding of every knob
//
// Notation. F = the storage format (fp16, bf16, fp32). RN_32 = binary32 round to nearest even,
// RN_F = round to F (pp_round's rule: subnormals, overflow to ±Inf). exp/log are pp_expf/pp_logf
// (pp_math.h: correctly rounded binary32 on every tested input). A binary32 op "a ⊕ b" below is
// one IEEE binary32 operation (RN_32 of the exact result); "fma" is fmaf (one rounding).
// α = 1/√d (the real number) unless sigma is given; L = qk_layer_scaling; A = pb_alpha (32).
// Per (batch, head) the q head h reads kv head h/(h/h_kv) (GQA). Row i (query) sees key j iff
// not causal or j ≤ i + off (off = s_kv − s_q; 0 for a CP diagonal step); a row that sees no key
// has out 0, lse −Inf, and contributes nothing to any gradient.
//
// GEMM reduction order (every GEMM, both kernels): one sequential chain per output element,
// left to right over the reduction index, starting from +0:
//   accum fp32:    acc = fma(a, b, acc)                       (pp_gemm_step_fp32)
//   accum storage: acc = RN_F(a·b + acc), one rounding         (pp_gemm_step_storage)
// Masked terms are skipped: the chain runs over visible j (or visible i) only, in order.
//
// ---- Unfused (Megatron core attention: baddbmm → FusedScaleMaskSoftmax → bmm), per row i ----
// scale knob (scalars from the real numbers, correctly rounded, pp_attn_scalars_make):
//   post:  S_ij = RN_F(RN_c(α_c·acc_ij)), α_c = RN_c(α/(L·A'))  (cuBLAS alpha in compute type c:
//          fp32, or F for accum storage); A' = A with pb-relax, else 1
//   pre:   q' = RN_F(RN_32(s·q)), k' = RN_F(RN_32(s·k)), s = RN_32((α/(L·A'))^½) (BLOOM, seed 003);
//          S_ij = RN_F(acc_ij) over q'·k'
//   pre-q: q' = RN_F(RN_32(s·q)), s = RN_32(α/(L·A')); S_ij = RN_F(acc_ij)
// pb-relax (CogView, arXiv 2105.13290 §2.4: softmax(x) = softmax((x/A − max|x/A|)·A), A = 32):
//   M = max over the head's visible S_ij of |S_ij| (exact), then
//   fp32 flavour:  t = RN_32(RN_32(S − M)·A);  storage/naive: t = RN_F(RN_32(RN_F(RN_32(S − M))·A))
//   (without pb-relax t = S)
// softmax knob (the step before the softmax, then the softmax):
//   fp32    (Megatron fused kernel, softmax_in_fp32, torch.softmax(x, dtype=float)):
//           x = L > 1 ? RN_32(t·L) : t   (Megatron scaled_masked_softmax.h: (float)in · scale)
//   storage (torch.softmax on an F tensor after an F-tensor multiply by L):
//           x = L > 1 ? RN_F(RN_32(t·L)) : t   (the multiply rounds to F: fp16 overflows here)
//   naive   (illustration only; no framework does this): x as storage
//   masked entries are excluded (p = 0), as Megatron's upper-triangular kernel does; its padding
//   kernel fills −10000 instead, which differs only for rows whose max is below −9900.
//   max (max_subtract): row: m = max_j x_ij (fp32 compare); pb-relax: m = row max too (torch's
//           softmax still subtracts it); none: m = 0 (no framework: shows overflow)
//   fp32/storage: e_j = exp(x_j ⊖ m); sum = ((0 ⊕ e_0) ⊕ e_1) ⊕ … (left to right);
//                 P_ij = RN_F(e_j ⊘ sum)
//   naive:        e_j = RN_F(exp(RN_F(x_j ⊖ m))); sum = RN_F(sum ⊕ e_j) per step; P = RN_F(e ⊘ sum)
//   lse_i = (m ⊕ log(sum)) ⊕ shift, shift = RN_32(RN_32(M·A)·L) for pb-relax, else none (+0)
//   (Megatron's kernel reduces max and sum with a warp butterfly: not reproduced, the order here
//   is left to right.)
// out_ic = RN_F(acc) of P_i·V_c (the bmm; α = 1, so the fp32 epilogue is RN_F(RN_32(acc)) = RN_F(acc)).
//
// ---- Flash (FlashAttention-2 style; knobs: scale, max row/none, block_n; fp32 accum, fp32
// softmax, L = 1, no pb-relax), per row i, key tiles [t·bn, (t+1)·bn) in increasing t ----
//   s_ij = RN_32(α32·acc_ij) (post, α32 = RN_32(α)) or acc_ij over q', k' (pre, pre-q: α32 = 1)
//   m_new = max(m, max_{j in tile, visible} s_ij) (row) or 0 (none); m starts −Inf, l = 0, o = 0
//   corr = m == −Inf ? 0 : exp(m ⊖ m_new);  p_j = exp(s_j ⊖ m_new)
//   l = RN_32(l·corr), then l = l ⊕ p_j for j in tile order (fp32 p, not rounded)
//   o_c = RN_32(o_c·corr), then o_c = fma(RN_F(p_j), v_jc, o_c) for j in tile order (P rounded to
//   F before P·V, as the tensor-core MMA takes it)
//   end: out_ic = RN_F(o_c ⊗ (1 ⊘ l)); lse_i = m ⊕ log(l)
//   (A tile with no visible key for row i is an exact no-op, so block_m never changes a result;
//   FA2's exp2-with-folded-scale and its quad-level partial row sums are not reproduced.)
//
// ---- Backward (given out, lse of the forward, dout) ----
// Flash: D_i = fma chain over c of dO_ic·O_ic (from +0, c increasing);
//   P_ij = exp(s_ij ⊖ lse_i) (s recomputed exactly as forward); dP_ij = fma chain dO_i·v_j;
//   dS_ij = P_ij ⊗ (dP_ij ⊖ D_i);
//   dV_jc = fma chain over visible i increasing of RN_F(P_ij)·dO_ic;  dv = RN_F(dV)
//   dK_jc = fma chain over i of RN_F(dS_ij)·q'_ic;  dk' = RN_F(α32 ⊗ dK)
//   dQ_ic = fma chain over j of RN_F(dS_ij)·k'_jc;  dq' = RN_F(α32 ⊗ dQ)
// Unfused (autograd of the forward's ops): dP_ij = RN_F(acc) of dO_i·V_j (accum knob);
//   fp32 flavour (Megatron scaled_masked_softmax_warp_backward): g·y products y = P_ij:
//     gy_j = dP_j ⊗ P_j; D = ((0 ⊕ gy_0) ⊕ gy_1) ⊕ …; dx32 = L ⊗ (gy_j ⊖ (P_j ⊗ D)) (no ⊗ when
//     L = 1); pb-relax: dx32 = A ⊗ dx32; dS = RN_F(dx32)
//   storage (PyTorch softmax backward gI = y·(g − Σ g·y), fp32 accumulate, then the multiply's
//     backward): D as above; dx = RN_F(P ⊗ (dP ⊖ D)); L > 1: dx = RN_F(L ⊗ dx); pb: RN_F(A ⊗ dx)
//   naive: D = RN_F(D ⊕ RN_F(dP ⊗ P)) per step; dx = RN_F(P ⊗ RN_F(dP ⊖ D)); L, A as storage
//   dV = RN_F(acc) of P^T·dO (chain over visible i); dQ'' = RN_F(acc) of dS·K' (over j);
//   dK'' = RN_F(acc) of dS^T·Q' (over i); post: dq = RN_F(α32 ⊗ dQ''), dk likewise (baddbmm's
//   backward multiplies the bmm result by alpha: α32 = RN_32(α/(L·A'))); pre/pre-q: dq' = dQ''.
// Both: the prescale's backward (mul by s): dq = RN_F(s ⊗ dq'), dk = RN_F(s ⊗ dk') (pre).
// GQA: each q head's dk, dv (values of F) are summed over the group in fp32, head order, from +0,
//   then RN_F (as FlashAttention's dk_expanded.sum and repeat_interleave's backward do).
//
// ---- Context parallel (TE's ring: NVIDIA/TransformerEngine transformer_engine/pytorch/attention.py
// @ 9709147e, class AttnFuncWithCP: load-balanced split and step types 620-770, backward ring
// 1133-1227, output and lse merges 492-499, 782-822) ----
// lse merge (PR 716 formula, fp32, step order): lse = lse_0; then for each later step i (rows it
//   touches): mx = max(lse, lse_i), mn = min(…); lse = mx ⊕ log(1 ⊕ exp(mn ⊖ mx))
//   (mx = −Inf: lse stays −Inf)
// out merge (after the ring, step order, accumulator of cp_accum format C, from +0):
//   t = out_i ⊗ exp(lse_i ⊖ lse); acc = RN_C(acc ⊕ t); out = RN_F(acc)
// grads: dq_acc = RN_C(dq_acc ⊕ dq_i) in backward-step order; dk/dv of KV block o accumulate
//   along the ring path (ranks o−1, o−2, …, o), each hop RN_C(acc ⊕ dkv_i); final RN_F.
//   (The baseline's copy on first touch equals adding to +0, but for the sign of a zero.)
//
// ---- Engine cublas (the unfused kernel's GEMMs through cuBLAS; GPU only) ----
// The five GEMMs are cublasGemmStridedBatchedEx calls with A, B, C of the storage type
// (CUDA_R_16F, CUDA_R_16BF, CUDA_R_32F), beta = 0, and the compute type from the accumulate knob:
//   accumulate fp32 → CUBLAS_COMPUTE_32F, alpha a binary32;
//   accumulate storage → CUBLAS_COMPUTE_16F for fp16 (alpha a binary16), CUBLAS_COMPUTE_32F for
//   fp32; bf16 has no cuBLAS compute type: rejected (pp_attn_engine_error).
// Forward:  S = α_c·Q'·Kᵀ' (baddbmm, beta 0; α_c as post above, 1 for pre/pre-q), out = P·V (bmm).
// Backward (autograd of those): dP = dO·Vᵀ, dV = Pᵀ·dO, dQ'' = dS·K', dK'' = dSᵀ·Q' (bmm, α 1);
//   then post: dq' = RN_F(α32 ⊗ dQ''), dk' likewise — our element-wise kernel, as baddbmm's
//   backward multiplies the bmm's result by alpha in a separate op.
// Each GEMM runs over the whole block, masked entries included (as torch does): the masked and
// dead-row entries of P and dS are +0 before a GEMM reads them (Megatron's masked softmax writes 0
// there). With GQA each q head multiplies its group's kv head (one call per (batch, kv head), the
// group's q heads batched with the kv operand's batch stride 0), and dk, dv are per q head before
// our group sum. Math mode: cuBLAS's default (CUBLAS_DEFAULT_MATH), which PyTorch leaves set:
// tensor cores allowed, and with 32F compute on fp16/bf16 inputs cuBLAS may reduce split-K partial
// sums in the output type (torch's allow_fp16/bf16_reduced_precision_reduction, default True,
// leaves this on); fp32 inputs stay fp32 (no TF32: torch's allow_tf32 for matmul defaults False).
// cuBLAS's summation order is its own: results are measured against the reference, not expected
// to equal the emulation. Everything else (mask, scaling, softmax, the softmax backward, final
// roundings, GQA sums) is the element steps above, in our kernels.

// ---------------------------------------------------------------------------------------------
// The variant

typedef enum { PP_ATTN_UNFUSED = 0, PP_ATTN_FLASH } pp_attn_kernel;
typedef enum { PP_ATTN_ACC_FP32 = 0, PP_ATTN_ACC_STORAGE } pp_attn_accum;
typedef enum { PP_ATTN_SCALE_POST = 0, PP_ATTN_SCALE_PRE, PP_ATTN_SCALE_PRE_Q } pp_attn_scale;
typedef enum { PP_ATTN_SOFTMAX_FP32 = 0, PP_ATTN_SOFTMAX_STORAGE, PP_ATTN_SOFTMAX_NAIVE } pp_attn_softmax;
typedef enum { PP_ATTN_MAX_ROW = 0, PP_ATTN_MAX_PB_RELAX, PP_ATTN_MAX_NONE } pp_attn_max;
// Who computes the unfused kernel's GEMMs: ours (the chains above, the CPU emulation's order) or
// cuBLAS (cublasGemmStridedBatchedEx, as Megatron's baddbmm/bmm and their autograd call it; see
// "Engine cublas" below). Everything between the GEMMs is ours in both.
typedef enum { PP_ATTN_ENGINE_OURS = 0, PP_ATTN_ENGINE_CUBLAS } pp_attn_engine;

typedef struct pp_attn_variant {
    pp_format_id format;  // PP_FMT_FP16, PP_FMT_BF16, PP_FMT_FP32: storage of every stored tensor
    pp_attn_kernel kernel;
    int block_m, block_n;  // flash tiles (64, 64); 0 means 64
    pp_attn_accum accum;
    pp_attn_scale scale;
    int qk_layer_scaling;  // L ≥ 1 (0 means 1); unfused only
    pp_attn_softmax softmax;
    pp_attn_max max_subtract;
    int cp_world;                          // 1 (or 0) = no context parallelism
    pp_format_id cp_accum, cp_grad_accum;  // v->format (pre TE PR 821) or PP_FMT_FP32
    int sigma_given;
    double sigma;  // default: 1/√d as the exact real, rounded where the variant rounds it
    int pb_alpha;  // PB-Relax's A (0 means 32, CogView's value)
    pp_attn_engine engine;  // ours (0, the default) or cublas (GPU only; unfused, no CP)
} pp_attn_variant;

// query i sees keys j ≤ i + s_kv − s_q when causal
typedef struct pp_attn_dims {
    int64_t b, s_q, s_kv, h, h_kv, d;
    int causal;
} pp_attn_dims;

// The scalars a variant uses (exact values).
typedef struct pp_attn_scalars {
    double alpha_c;  // post: the score GEMM's alpha in its compute type; 1 otherwise
    float alpha32;   // post: RN_32 of the same real (flash scale; unfused backward); 1 otherwise
    float s_q, s_k;  // prescale factors of q and k (1 when not prescaled)
    float L, A;      // layer scaling; PB-Relax's A (1 without pb-relax)
} pp_attn_scalars;

// Why v's engine cannot run v (a one-line message naming the knob), or NULL. Host only.
static inline const char *pp_attn_engine_error(const pp_attn_variant *v)
{
    if (v->engine == PP_ATTN_ENGINE_OURS)
        return (const char *)0;
    if (v->engine != PP_ATTN_ENGINE_CUBLAS)
        return "attention: unknown engine";
    if (v->kernel != PP_ATTN_UNFUSED)
        return "attention: engine = \"cublas\" needs kernel = \"unfused\" (cuBLAS runs the unfused kernel's GEMMs; "
               "flash is one fused kernel)";
    if (v->cp_world > 1)
        return "attention: engine = \"cublas\" needs cp_world = 1 (TransformerEngine's context parallelism runs "
               "fused kernels)";
    if (v->accum == PP_ATTN_ACC_STORAGE && v->format == PP_FMT_BF16)
        return "attention: engine = \"cublas\" with accumulate = \"storage\" needs format fp16 or fp32 (cuBLAS has "
               "no bf16 compute type)";
    return (const char *)0;
}

// ---------------------------------------------------------------------------------------------
// Scalars

// The scalars of v for head dimension d; returns 0, or −1 for an impossible setting.
// y = α/(L·A') is a real: by default (L²A'²d)^(−1/2), rounded correctly (pp_gemm_round_kroot);
// with sigma given, sigma/(L·A') is computed in binary64 first (as a Python float would be).
PP_HD static inline int pp_attn_scalars_make(const pp_attn_variant *v, int64_t d, pp_attn_scalars *out)
{
    pp_attn_scalars s;
    int L = v->qk_layer_scaling > 0 ? v->qk_layer_scaling : 1;
    int A = v->max_subtract == PP_ATTN_MAX_PB_RELAX ? (v->pb_alpha > 0 ? v->pb_alpha : 32) : 1;
    if (d < 1 || d > ((int64_t)1 << 30) || (v->sigma_given && !(v->sigma > 0.0 && isfinite(v->sigma))))
        return -1;
    uint64_t k = (uint64_t)L * (uint64_t)L * (uint64_t)A * (uint64_t)A * (uint64_t)d;
    double y = v->sigma / ((double)L * (double)A);
    pp_format_id c = v->accum == PP_ATTN_ACC_STORAGE ? v->format : PP_FMT_FP32;
    s.alpha_c = 1.0;
    s.alpha32 = 1.0f;
    s.s_q = s.s_k = 1.0f;
    s.L = (float)L;
    s.A = (float)A;
    switch (v->scale) {
    case PP_ATTN_SCALE_POST:
        s.alpha_c = v->sigma_given ? pp_round(c, y, PP_RND_NE, 0) : pp_gemm_round_kroot(c, k, 2);
        s.alpha32 = (float)(v->sigma_given ? pp_round(PP_FMT_FP32, y, PP_RND_NE, 0)
                                           : pp_gemm_round_kroot(PP_FMT_FP32, k, 2));
        break;
    case PP_ATTN_SCALE_PRE:
        s.s_q = s.s_k = (float)(v->sigma_given ? pp_gemm_round_sqrt(PP_FMT_FP32, y)
                                               : pp_gemm_round_kroot(PP_FMT_FP32, k, 4));
        break;
    case PP_ATTN_SCALE_PRE_Q:
        s.s_q = (float)(v->sigma_given ? pp_round(PP_FMT_FP32, y, PP_RND_NE, 0)
                                       : pp_gemm_round_kroot(PP_FMT_FP32, k, 2));
        break;
    default:
        return -1;
    }
    *out = s;
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Element steps

// RN_F(x) for a binary32 x, F = fp16, bf16 or fp32.
PP_HD static inline float pp_attn_store(pp_format_id f, float x)
{
    return f == PP_FMT_FP16 ? pp_round_fp16_ne(x) : f == PP_FMT_BF16 ? pp_round_bf16_ne(x) : x;
}

// RN_F(RN_32(s·x)): a tensor times a scalar in PyTorch (fp32 opmath, stored in F).
PP_HD static inline float pp_attn_mul_store(pp_format_id f, float s, float x)
{
    return pp_attn_store(f, s * x);
}

// The unfused score of one element from its GEMM accumulator (fp32 or storage accumulation).
PP_HD static inline float pp_attn_score_fp32(pp_format_id f, const pp_attn_scalars *s, float acc)
{
    return (float)pp_gemm_epilogue_fp32(f, s->alpha_c, acc);
}
PP_HD static inline float pp_attn_score_storage(pp_format_id f, const pp_attn_scalars *s, double acc)
{
    return (float)pp_gemm_epilogue_storage(f, s->alpha_c, acc);
}

// PB-Relax's shift: t = ((S − M)·A), in fp32 (fp32 flavour) or rounded to F after each op.
PP_HD static inline float pp_attn_pb_relax(pp_format_id f, pp_attn_softmax sm, float S, float M, float A)
{
    if (sm == PP_ATTN_SOFTMAX_FP32)
        return (S - M) * A;
    return pp_attn_store(f, pp_attn_store(f, S - M) * A);
}

// The pre-softmax multiply by the layer-scaling factor L (none when L = 1).
PP_HD static inline float pp_attn_layer_scale(pp_format_id f, pp_attn_softmax sm, float t, float L)
{
    if (L == 1.0f)
        return t;
    return sm == PP_ATTN_SOFTMAX_FP32 ? t * L : pp_attn_store(f, t * L);
}

// e = exp(x − m) (naive: both rounded to F).
PP_HD static inline float pp_attn_softmax_exp(pp_format_id f, pp_attn_softmax sm, float x, float m)
{
    if (sm == PP_ATTN_SOFTMAX_NAIVE)
        return pp_attn_store(f, pp_expf(pp_attn_store(f, x - m)));
    return pp_expf(x - m);
}

// One step of the row sum (naive: rounded to F).
PP_HD static inline float pp_attn_softmax_sum_step(pp_format_id f, pp_attn_softmax sm, float sum, float e)
{
    return sm == PP_ATTN_SOFTMAX_NAIVE ? pp_attn_store(f, sum + e) : sum + e;
}

// P = RN_F(e / sum).
PP_HD static inline float pp_attn_softmax_prob(pp_format_id f, float e, float sum)
{
    return pp_attn_store(f, e / sum);
}

// lse = (m + log(sum)) + shift in fp32; −Inf for an empty row (sum = 0).
PP_HD static inline float pp_attn_lse(float m, float sum, float shift)
{
    if (sum == 0.0f)
        return -INFINITY;
    return (m + pp_logf(sum)) + shift;
}

// Flash: the correction factor of the running sums when the max moves from m_old to m_new.
PP_HD static inline float pp_attn_flash_corr(float m_old, float m_new)
{
    return m_old == -INFINITY ? 0.0f : pp_expf(m_old - m_new);
}

// Flash: the score s = RN_32(α·dot) from the fp32 dot product of q and k (forward and backward).
PP_HD static inline float pp_attn_flash_s(const pp_attn_scalars *sc, float dot)
{
    return sc->alpha32 * dot;
}

// Flash: p = exp(s − m) with m = −Inf (nothing visible yet) giving 0.
PP_HD static inline float pp_attn_flash_p(float s, float m)
{
    return m == -INFINITY ? 0.0f : pp_expf(s - m);
}

// Flash, at a new tile's max: the running sum and the d accumulators times corr.
PP_HD static inline void pp_attn_flash_rescale(float *o, int64_t d, float *l, float corr)
{
    *l = *l * corr;
    for (int64_t c = 0; c < d; c++)
        o[c] = o[c] * corr;
}

// Flash epilogue of a row with running max m and sum l: out = RN_F(o·(1/l)) (1/l rounded once,
// as the kernels compute it) and lse = m + log l; a row that saw no key (seen = 0) or whose sum
// is 0 gives zeros and lse = −Inf.
PP_HD static inline void pp_attn_flash_finish(pp_format_id f, int seen, float m, float l, float *o, int64_t d,
                                              float *lse)
{
    if (!seen || l == 0.0f) {
        for (int64_t c = 0; c < d; c++)
            o[c] = 0.0f;
        *lse = -INFINITY;
        return;
    }
    float inv = 1.0f / l;
    for (int64_t c = 0; c < d; c++)
        o[c] = pp_attn_store(f, o[c] * inv);
    *lse = pp_attn_lse(m, l, 0.0f);
}

// Flash backward: P = exp(s − lse), dS = P·(dP − D), all fp32.
PP_HD static inline float pp_attn_bwd_p(float s, float lse)
{
    return pp_expf(s - lse);
}
PP_HD static inline float pp_attn_bwd_ds(float p, float dp, float D)
{
    return p * (dp - D);
}

// Unfused softmax backward: one step of D = Σ dP·P (naive: in F).
PP_HD static inline float pp_attn_softmax_bwd_d_step(pp_format_id f, pp_attn_softmax sm, float D, float dp, float p)
{
    if (sm == PP_ATTN_SOFTMAX_NAIVE)
        return pp_attn_store(f, D + pp_attn_store(f, dp * p));
    return D + dp * p;
}

// Unfused softmax backward: the gradient of the score S_ij (before the layer scaling and
// PB-Relax multiplies), a value of F. L, A as in pp_attn_scalars (1 when not used).
PP_HD static inline float pp_attn_softmax_bwd_dx(pp_format_id f, pp_attn_softmax sm, float dp, float p,
                                                 float D, float L, float A)
{
    if (sm == PP_ATTN_SOFTMAX_FP32) {  // Megatron: scale·(g·y − y·sum) in fp32, one store
        float t = dp * p - p * D;
        if (L != 1.0f)
            t = L * t;
        if (A != 1.0f)
            t = A * t;
        return pp_attn_store(f, t);
    }
    float dx = sm == PP_ATTN_SOFTMAX_NAIVE ? pp_attn_store(f, p * pp_attn_store(f, dp - D))
                                           : pp_attn_store(f, p * (dp - D));
    if (L != 1.0f)
        dx = pp_attn_store(f, L * dx);
    if (A != 1.0f)
        dx = pp_attn_store(f, A * dx);
    return dx;
}

// CP: the lse merge of TE PR 716, in fp32.
PP_HD static inline float pp_attn_cp_lse_merge(float lse, float lse_i)
{
    float mx = lse > lse_i ? lse : lse_i, mn = lse > lse_i ? lse_i : lse;
    if (mx == -INFINITY)
        return mx;
    return mx + pp_logf(1.0f + pp_expf(mn - mx));
}

// CP: out accumulator step acc = RN_C(acc + out_i·exp(lse_i − lse)), C = cp_accum.
PP_HD static inline float pp_attn_cp_out_step(pp_format_id c, float acc, float out_i, float lse_i, float lse)
{
    if (lse_i == -INFINITY)  // an empty partial (out_i = 0) adds nothing
        return acc;
    float t = out_i * pp_expf(lse_i - lse);
    return pp_attn_store(c, acc + t);
}

// CP: a gradient accumulator step acc = RN_C(acc + g), C = cp_grad_accum.
PP_HD static inline float pp_attn_cp_grad_step(pp_format_id c, float acc, float g)
{
    return pp_attn_store(c, acc + g);
}

#endif
