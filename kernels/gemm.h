// gemm.h — the element-wise arithmetic of precprobe's batched GEMM C = α·A·B: the variant's
// knobs, its scalars (α and the prescale factor, correctly rounded), the accumulate step, the
// epilogue and the prescale. C11 and nvcc (PP_HD); the loop order is kernels/gemm_thread.h, run by
// kernels/cpu/gemm.c and kernels/cuda/gemm_kernels.cu.
#ifndef PP_GEMM_H
#define PP_GEMM_H

#include <math.h>
#include <stdint.h>

#include "exact_sites.h"
#include "format.h"
#include "philox.h"
#include "pp_hd.h"
#include "scaling.h"
#include "sites.h"
#include "sm90_fp8_mma.h"

// ---------------------------------------------------------------------------------------------
// The variant
//
// Per batch b, C[b] = α·A[b]·B[b], A [batch, m, k], B [batch, k, n], C [batch, m, n], row-major,
// every value a value of the storage format F (fp16, bf16 or fp32). α is a real number: 1/√k
// by default, or a given binary64. Exact steps of one output element c_ij, per knob:
//
//   prescale (scale = pre):   s  = RN_32(√α)              (PyTorch: Python float → fp32 scalar)
//                             a' = RN_F(RN_32(s·a_il)),  b' = RN_F(RN_32(s·b_lj))
//            (scale = pre-a): s  = RN_32(α);  a' = RN_F(RN_32(s·a_il)),  b' = b_lj
//            (scale = post):  a' = a_il, b' = b_lj
//   accumulate, l = 0, 1, …, k−1 in order, acc_0 = +0:
//            (accum = fp32):    acc = fmaf(a', b', acc)  = RN_32(a'·b' + acc)   one rounding
//            (accum = storage): acc = RN_F(a'·b' + acc)                          one rounding
//   epilogue (scale = post): α_c = RN_c(α), c the compute type (fp32, or F when accum = storage:
//                            cuBLAS takes alpha in the compute type);
//                            c_ij = RN_F(RN_c(α_c·acc))
//            (pre, pre-a):   α_c = 1, the same formula: c_ij = RN_F(acc)
//
// RN is round to nearest, ties to even, with F's subnormals and overflow to ±Inf (pp_round's
// rule): an overflowing output is ±Inf, never hidden. α and s are rounded from the real α
// (not from a binary64 approximation of it): see pp_gemm_scalars_make. (A framework that first
// computes the scalar in binary64, e.g. Python's 1/math.sqrt(math.sqrt(d)), gets the same binary32
// unless that binary64 falls on the other side of a binary32 midpoint.)
//
// Scaled storage (scaling ≠ none; kernels/scaling.h defines every scale and quantisation):
// A, B and C are binary32 values; F (format) is the quantised storage: e4m3 or e5m2
// (tensor-current, mx), e2m1 (mx, nvfp4). accum = fp32 and scale = post only. A is quantised as
// one tensor (all batches) with blocks along k (its rows), B likewise with blocks along k (its
// columns): qa_il, qb_lj values of F. Then, per output element, acc_0 = +0:
//   tensor-current: qa = RN_F,sat(RN_32(a·s_a)), s_a = RN_32(max_finite/amax_A) (TE's scale);
//                   acc = fmaf(qa_il, qb_lj, acc), l = 0 … k−1 in order (the fp32 chain);
//                   d = RN_32(X_a·X_b), X = RN_32(1/s) (TE's scale_inv; X_a·X_b exact in binary64)
//   tensor-delayed: as tensor-current, with s from the recipe's amax histories (pp_delayed_recipe,
//                   given to pp_gemm_delayed_cpu beside the variant; the op row reads it from the
//                   knobs amax_history_a/_b, amax_compute_algo, margin) (e4m3, e5m2)
//   mx, nvfp4:      per block β of k (32 or 16 consecutive l, the last one possibly shorter),
//                   in order: p = +0; p = fmaf(qa_il, qb_lj, p) over l in β in order;
//                   acc = RN_32(acc + RN_32(p·x_aβ·x_bβ))   (the block scales' product times p is
//                   exact in binary64: powers of two, or two E4M3 values and a binary32)
//                   d = 1 (mx), d = RN_32(g_a·g_b) (nvfp4: the two global scales)
//   epilogue:       c_ij = RN_32(α_c·RN_32(d·acc)), α_c = RN_32(α)
// mma (per-tensor scalings only) replaces the fp32 chain above by a tensor core's accumulation:
//   fp32-chain:     the chain above (the default: every earlier result keeps its bits)
//   sm90-fp8:       Hopper's FP8 wgmma accumulation with cuBLASLt's promotion every 128 elements
//                   of k (kernels/sm90_fp8_mma.h, pp_sm90_fp8_dot; see "Hopper FP8 accumulation")
//   sm90-fp8-fast:  the same without promotion (cuBLASLt's FAST_ACCUM, torch's use_fast_accum=True)
// mx and nvfp4 are Blackwell's block-scaled MMAs (scales applied inside the instruction), another
// hardware not measured here: the sm90 values are refused with them (pp_gemm_variant_formats_ok).
// (A NaN or ±Inf in an operand makes its scale NaN — per tensor, or per block for mx — so the
// outputs it reaches are NaN. Tensor-delayed takes its scales from the recipe's histories; a value
// above the history's amax saturates to ±max_finite·(1/s).) The per-thread bodies of these loops
// are kernels/gemm_scaled_thread.h, run by the CPU emulation and the GPU alike.

// Rounding sites (kernels/sites.h): quant_a, quant_b (A, B as the GEMM reads them: prescaled
// or quantised), block_scale_a, block_scale_b (the scales of scaled storage), accum (each chain's
// final accumulator), scale (RN_32(α_c·acc), fp32 accumulation; scaled storage: the descale
// d = RN_32(g_a·g_b) and RN_32(d·acc), noted against g_a·g_b·acc, so a d that overflowed — X_a·X_b
// above FLT_MAX, amaxes whose product passes about 6.8e43 in e4m3 — counts there, once per output
// element it reaches), c (the C store).

typedef enum pp_gemm_accum {
    PP_GEMM_ACC_FP32 = 0,  // binary32 accumulator, one rounding per step (an FMA pipeline)
    PP_GEMM_ACC_STORAGE    // accumulator in the storage format F, one rounding per step
} pp_gemm_accum;

typedef enum pp_gemm_scale {
    PP_GEMM_SCALE_POST = 0,  // α applied to the accumulator (a BLAS epilogue)
    PP_GEMM_SCALE_PRE,       // √α onto A and B before the GEMM, α = 1 in it (BLOOM-104B)
    PP_GEMM_SCALE_PRE_A      // α onto A only, α = 1 in the GEMM
} pp_gemm_scale;

// Hopper FP8 accumulation (mma = sm90-fp8, sm90-fp8-fast). Measured on 2026-11-26 on an NVIDIA
// H200 (torch 2.11.0+cu130, CUDA 13.0, cuBLASLt 13.1.0 = 130100) with tools/probe_fp8_accum.py:
// torch._scaled_mm e4m3 × e4m3 → fp32, scales 1, use_fast_accum False and True, 16×16 and 256×256
// GEMMs of constructed dot products (2^12 + 2^(12−k), ±1.125…1.875·2^(12−k), L − L + 2^−k·L at
// chosen positions, 2^12 swamped by K − 1 small terms, a scan of one small term over k = 0…1023,
// subnormals, NaN, ±448²·32) and two random 256×256×4096 GEMMs (normal with outlier rows; log-
// uniform magnitudes). kernels/sm90_fp8_mma.h's model reproduces every output of both modes bit
// for bit: 4,819 constructed dot products and 2 × 65,536 random ones per mode (the fp32 chain
// matches 53,742 and 2,730 of the random ones; RN_32 of the exact sum 20 and 10 (slow), 1 and 0
// (fast)); tests/test_sm90_fp8_mma.c checks a fixture of them (tests/data/sm90_fp8/). Parameters
// the data decided: groups of 32 (16 and 8 fail the swamping and random sets), 13 fraction bits
// below the group's largest exponent (14 fails 1 + 2^−14), the exponent of a product taken as
// e(a) + e(b) from the inputs' exponent fields (the leading bit of the product fails 2,467 of
// 4,096 sampled random outputs), C inside the maximum (the swamping rows), truncation toward zero
// both at the alignment and at the normalisation to 14 significant bits (normalising to binary32
// instead fails 93 of 2,048 sampled fast random outputs, by one grain, and most slow ones), promotion every 128 with one RN_32
// addition (the scan with the large term at 300: blocks aligned to multiples of 128).
// Sources: the DeepSeek-V3 technical report (arXiv 2412.19437, §3.3.2 "Increasing Accumulation
// Precision": about 14 bits on H800, promotion every N_C = 128 elements); CUTLASS's FP8 mainloop
// promotes every mma_promotion_interval MMAs (include/cutlass/gemm/collective/fp8_accumulation.hpp,
// GmmaFP8Accumulation::promote_if_needed) unless the FastAccum schedule is chosen; cuBLASLt's
// CUBLASLT_MATMUL_DESC_FAST_ACCUM ("intermediate results will not periodically be promoted");
// Khattak & Mikaitis, "Accurate Models of NVIDIA Tensor Cores" (arXiv 2512.07004) model H100's
// FP8 inner products bit for bit (only their abstract was read here: their parameters are not
// compared), and Fasi, Higham, Mikaitis & Pranesh (PeerJ CS 7:e330, 2021) designed this kind of
// test vector; the parameters above are the H200's as measured (tools/fit_fp8_accum.py).
// Measured again on 2026-11-26 on an NVIDIA H100 80GB HBM3 (the same torch and cuBLASLt): every
// output of tools/probe_fp8_accum.py was the H200's, bit for bit. e5m2 on the same H100 with
// tools/probe_fp8_accum_e5m2.py: e4m3 × e5m2 and e5m2 × e4m3 (cuBLASLt on sm_90 runs no
// e5m2 × e5m2, and torch refuses it), 1,873 constructed dot products per pair (2^L + 2^(L−k) at
// L = 12, 20, −8 and K = 32, 128, 1024; ±2^12 ± m·2^(12−k); e5m2 subnormals alone and beside
// 2^q; a subnormal product setting the group's exponent beside ±m·2^r; ±Inf, Inf − Inf, Inf·0,
// NaN, 57344·448·32) and two random 128×128×4096 GEMMs each: the model, with e5m2's subnormals
// counted at emin = −14 as e4m3's at −6, reproduces every one of both modes bit for bit (emin −15
// fails the subnormal-exponent rows), and ±Inf products follow IEEE (Inf − Inf and Inf·0 give
// NaN); fixtures tests/data/sm90_fp8/probe_e4m3xe5m2.bin, probe_e5m2xe4m3.bin. Not known:
// whether other cuBLASLt kernels (other shapes, split-K, other versions) keep the same promotion
// interval — the 16×16 and 256×256 GEMMs agreed. The instruction itself, without cuBLASLt
// (tools/probe_wgmma_fp8.cu on the H100: wgmma.mma_async m64n8k32 chained in its register
// accumulator; "slow" adds it into a binary32 total every 128 as CUTLASS's GmmaFP8Accumulation):
// every output of the three fixtures above equals cuBLASLt's, both modes, so cuBLASLt's fast mode is
// the bare wgmma chain and its slow mode CUTLASS's promotion. format = "e5m2" (both operands e5m2,
// which wgmma runs and cuBLASLt does not) was measured that way: 1,013 constructed dot products
// and two random 8×16×4096 blocks (tests/data/sm90_fp8/probe_e5m2xe5m2.bin), every one reproduced.
typedef enum pp_gemm_mma {
    PP_GEMM_MMA_FP32_CHAIN = 0,  // binary32 fmaf chain (CUDA cores; the historical model)
    PP_GEMM_MMA_SM90_FP8,        // Hopper FP8 wgmma, promoted to fp32 every 128 elements of k
    PP_GEMM_MMA_SM90_FP8_FAST    // Hopper FP8 wgmma, never promoted (fast accumulation)
} pp_gemm_mma;

// The promotion interval of an mma (0: never; the fp32 chain has no groups).
PP_HD static inline int64_t pp_gemm_mma_promote(pp_gemm_mma m)
{
    return m == PP_GEMM_MMA_SM90_FP8 ? PP_SM90_FP8_PROMOTE : 0;
}

PP_HD static inline const char *pp_gemm_mma_name(pp_gemm_mma m)
{
    return m == PP_GEMM_MMA_FP32_CHAIN ? "fp32-chain"
         : m == PP_GEMM_MMA_SM90_FP8 ? "sm90-fp8"
         : m == PP_GEMM_MMA_SM90_FP8_FAST ? "sm90-fp8-fast" : "?";
}

// A zero-initialised variant (format aside) is: fp32 accumulation, post-scaling, α = 1/√k.
typedef struct pp_gemm_variant {
    pp_format_id format;  // PP_FMT_FP16, PP_FMT_BF16 or PP_FMT_FP32: inputs, rescaled inputs, C
    pp_gemm_accum accum;
    pp_gemm_scale scale;
    int alpha_given;      // 0: α = 1/√k (the real number; needs k ≥ 1); 1: α = alpha
    double alpha;         // finite; ≥ 0 for PP_GEMM_SCALE_PRE (it takes √α)
    pp_scaling scaling;   // PP_SCALING_NONE: the above; else the scaled storage above
    uint64_t order_seed;  // 0: the documented order; else an admissible one (pp_gemm_order_chunk)
    pp_site_mask exact_sites;  // 0: every rounding as above; else these sites exact ("Exact sites")
    pp_gemm_mma mma;      // scaled storage, per-tensor scalings: the accumulation (fp32 chain default)
    pp_mx_rule mx_rule;   // scaling mx: the E8M0 exponent rule, OCP's floor (0) or TE's round-up (scaling.h)
} pp_gemm_variant;

// Exact sites (precprobe explain; kernels/exact_sites.h; names in kernels/sites.h). A site made
// exact keeps its value in binary64 instead of rounding it (scaled storage: see the second list):
//   quant_a, quant_b  the prescale of A (of B): the scalar s = √α (pre) or α (pre-a) computed in
//          binary64 (1/√k as 1/sqrt(k): two binary64 roundings, not the real number), never
//          rounded to binary32; a' = s·a in binary64, neither RN_32 nor RN_F; the accumulation
//          then takes binary64 operands (pp_gemm_step_x).
//   accum  every accumulation step: acc = RN_64(a'·b' + acc), a binary64 accumulator (a'·b' is
//          exact in binary64), instead of the fmaf chain or RN_F per step.
//   scale  the epilogue's factor and product: α_c in binary64 (as s above), not RN_c(α); and with
//          fp32 accumulation α_c·acc is not rounded to binary32.
//   c      the C store: no RN_F (C then holds the binary64 value).
//   block_scale_a, block_scale_b  scaled storage only, see below.
// Scaled storage (kernels/gemm_scaled_thread.h; CPU only, the CUDA launchers refuse a mask):
//   quant_a, quant_b  no quantisation of A (of B): q = a, the binary32 input itself, with block
//          scales x = 1 and per-tensor scale g = 1, so the dequantised value the GEMM sums is a
//          exactly (d = g_a·g_b then holds only the other operand's g).
//   accum  the fp32 chains and the block adds in binary64 (pp_gemm_scaled_accum64): products of
//          binary32 values are exact there, so only binary64 additions round — a relative error
//          about k·2^-53, 2^-29 of the fp32 chain's, far below what explain resolves; binary64,
//          not an exact sum (reference/'s exactsum), because that suffices and stays one pass.
//   scale  d = g_a·g_b and RN_32(d·acc) kept in binary64 (and α_c in binary64, as above).
//   c      c = α_c·d·acc not rounded to binary32.
//   block_scale_a, block_scale_b  nvfp4 only: the block scale s = block_amax/(6·g) kept in binary64
//          (no RN_e4m3,sat), the block's elements quantised with it (P = RN_e2m1,sat(V/(s·g)), s·g
//          now a binary64 product) and the GEMM's block factor x_a·x_b = s_a·s_b in binary64. The
//          block's largest |V| then lands on 6, E2M1's largest, instead of above it (clipped) or
//          below (range left unused); g's own RN_32 cancels out of s·g. With the operand's quant
//          site exact too, that site wins (q = a, scale 1): so a block scale's "alone" row (every
//          other site exact) shows no error, by construction. Not offered elsewhere:
//          mx's E8M0 scale 2^(floor(log2 amax) − emax) is a power of two chosen from amax, nothing
//          rounds there (the elements its choice saturates are quant_a/quant_b's rounding; the
//          clamp to [2^−127, 2^127] is a range limit); pp_gemm_cpu refuses the bits there.
//          tensor-current and tensor-delayed: the operand's scale s without its RN_32
//          (max_finite/amax, delayed (max_finite·2^−margin)/amax with the recipe's amax, one
//          binary64 quotient; pp_gemm_scaled_tensor_s64) and X = 1/s in binary64 instead of
//          RN_32(1/s): the elements are cast as RN_F,sat(RN_32(V·s)) with that s (the cast's own
//          roundings stay quant_a's), and d = RN_32(X_a·X_b) unless scale is exact too. X·s is then
//          1 to within 2^−52 (binary64's rounding of 1/s), not RN_32's 2^−24: the error X·s ≠ 1
//          puts on every product is what this row measures. The clamp of s to FLT_MAX stays (a
//          range limit of TE's binary32 scale).
// With exact_sites = 0 every function below performs exactly the operations written above: the
// site functions call pp_round as before (tests/test_explain_gemm.c checks it bit for bit).

// Order band (issue 15; see kernels/attention.h "Order band" for the attention's): a tensor-core
// MMA sums the products of each k-chunk of 16 in an order the hardware does not document. With
// order_seed ≠ 0, every full chunk c of 16 reduction steps l0 = 16c … l0 + 15 is walked as
// l0 + (a·q + b) mod 16, q = 0 … 15, with a odd (so a permutation) and a, b drawn from Philox
// keyed by (seed, c) — the same order for every output element, as one MMA instruction shape
// would. A last partial chunk keeps its order. Seed 0: a = 1, b = 0, the documented order.
// The scaled-storage loops (kernels/cpu/gemm_scaled.c) are not perturbed.
#define PP_GEMM_MMA_CHUNK 16
PP_HD static inline void pp_gemm_order_chunk(uint64_t seed, int64_t chunk, int64_t *a, int64_t *b)
{
    *a = 1, *b = 0;
    if (seed == 0)
        return;
    pp_philox4x32_ctr c = {{(uint32_t)chunk, (uint32_t)((uint64_t)chunk >> 32), 0x6d6d61u /* "mma" */, 0}};
    pp_philox4x32_key k = {{(uint32_t)seed, (uint32_t)(seed >> 32)}};
    pp_philox4x32_ctr u = pp_philox4x32_10(c, k);
    *a = 2 * (int64_t)(u.v[0] % (PP_GEMM_MMA_CHUNK / 2)) + 1;
    *b = (int64_t)(u.v[1] % PP_GEMM_MMA_CHUNK);
}

// The scalars a variant uses, as binary64 carrying exact values.
typedef struct pp_gemm_scalars {
    double alpha_c;  // α in the compute type for the epilogue; 1 for pre and pre-a
    double scale_a;  // s applied to A (1 for post: RN_F(RN_32(1·a)) = a)
    double scale_b;  // s applied to B (1 for post and pre-a)
} pp_gemm_scalars;

PP_HD static inline const char *pp_gemm_accum_name(pp_gemm_accum a)
{
    return a == PP_GEMM_ACC_FP32 ? "fp32" : a == PP_GEMM_ACC_STORAGE ? "storage" : "?";
}

PP_HD static inline const char *pp_gemm_scale_name(pp_gemm_scale s)
{
    return s == PP_GEMM_SCALE_POST ? "post"
         : s == PP_GEMM_SCALE_PRE ? "pre"
         : s == PP_GEMM_SCALE_PRE_A ? "pre-a" : "?";
}

// ---------------------------------------------------------------------------------------------
// The accumulate step

// acc' = RN_32(a·b + acc), one rounding: fmaf (a hardware FMA under nvcc, IEEE-exact in libm).
// @param [in] a, b  values of F (so of binary32); acc the running binary32 accumulator.
// For fp16/bf16 inputs a·b is exact in binary32 (≤ 22 bits), so this is also RN_32(RN_32(a·b)+acc).
PP_HD static inline float pp_gemm_step_fp32(float a, float b, float acc)
{
    return fmaf(a, b, acc);
}

// True when finite x is exactly halfway between two consecutive values of f, or is f's
// overflow threshold max_finite + ½ulp (the midpoint between max_finite and the next binade).
PP_HD static inline int pp_gemm_is_midpoint_(pp_format_id f, double x)
{
    double ax = fabs(x);
    double d = pp_round(f, ax, PP_RND_TZ, 0);  // the value of f at or below ax (max_finite above)
    // ax − d is exact: either d = 0, or d ≤ ax < d + ulp_f(d) ≤ 2d (Sterbenz), or ax is beyond
    // max_finite, where any rounding error keeps the difference far from ½ulp.
    return ax - d == 0.5 * pp_ulp(f, d);
}

// acc' = RN_f(a·b + acc) with a single rounding of the exact a·b + acc.
// @param [in] f    the accumulation format: PP_FMT_FP16, PP_FMT_BF16 or PP_FMT_FP32.
// @param [in] a, b values of a format no wider than binary32 (so a·b is exact in binary64:
//                  ≤ 48 significant bits, magnitude in [2^−298, 2^256] or 0).
// @param [in] acc  the running accumulator, a value of f.
// NaN and ±Inf propagate as in IEEE arithmetic (Inf − Inf is NaN).
//
// Why this is one rounding. Let x = p + acc, p = a·b (exact). hi = RN_64(x) and lo = x − hi
// exactly (Knuth's TwoSum, exact for finite binary64 without overflow). Every value of f and
// every midpoint between neighbours of f (and the overflow threshold) is a binary64 number, and
// RN_64 is monotonic, so hi lies in the same closed interval between consecutive f-midpoints as
// x. (1) hi is not an f-midpoint: x ≠ any midpoint too (a midpoint x would be binary64, so
// hi = x), so x and hi are inside the same open interval, on which RN_f is constant:
// RN_f(hi) = RN_f(x). (2) hi is a midpoint, lo = 0: x = hi. (3) hi is a midpoint, lo ≠ 0: x lies
// on lo's side of hi by at most ½ulp_64(hi), so RN_f(x) is hi's f-neighbour on that side;
// nextafter(hi, toward lo) is strictly between hi and that neighbour (they are ≥ 2^(52−p)
// binary64 ulps apart), so its RN_f is that neighbour too.
// Why not simply RN_f(RN_64(x)): case (3) then breaks the tie by parity, not by lo. It happens:
// bf16, a = 1.5, b = 1 + 3·2^−7, acc = 2^−60: p = 1 + 68.5·2^−7 is a bf16 midpoint,
// RN_64(p + 2^−60) = p, ties-to-even gives 1 + 68·2^−7, the true RN_bf16 is 1 + 69·2^−7.
// (Figueroa's 2p+2 rule covers sums of two p-bit numbers; p has 2p bits and an arbitrary
// exponent gap to acc. For fp16 the narrow exponent range happens to exclude case (3).)
PP_HD static inline double pp_gemm_step_storage(pp_format_id f, double a, double b, double acc)
{
    double p = a * b;
    double hi = p + acc;
    if (!isfinite(hi))
        return pp_round(f, hi, PP_RND_NE, 0);  // ±Inf or NaN from ±Inf/NaN operands
    double z = hi - p;  // TwoSum: lo = (p − (hi − z)) + (acc − z), exact
    double lo = (p - (hi - z)) + (acc - z);
    if (lo != 0.0 && pp_gemm_is_midpoint_(f, hi))
        hi = nextafter(hi, lo > 0.0 ? (double)INFINITY : -(double)INFINITY);  // (double): nvcc picks the device overload
    return pp_round(f, hi, PP_RND_NE, 0);
}

// ---------------------------------------------------------------------------------------------
// Epilogue and prescale

// c = RN_F(RN_32(α_c·acc)): the fp32-accumulation epilogue. α_c·acc is exact in binary64
// (two binary32 values: ≤ 48 bits), so RN_32 of it is one rounding, as in the fp32 epilogue of
// a BLAS; the store to F is a second rounding, as the BLAS's conversion on output is.
// @param [in] f        the output format F.
// @param [in] alpha_c  a binary32 value (1 for pre and pre-a: then c = RN_F(acc)).
// Sites scale and c under x; acc may be a binary64 accumulator (site accum exact).
PP_HD static inline double pp_gemm_epilogue_fp32_x(pp_site_mask x, pp_format_id f, double alpha_c, double acc)
{
    double t = pp_site_round(x, PP_SITE_GEMM_SCALE, PP_FMT_FP32, alpha_c * acc);
    return pp_site_round(x, PP_SITE_GEMM_C, f, t);
}
PP_HD static inline double pp_gemm_epilogue_fp32(pp_format_id f, double alpha_c, float acc)
{
    return pp_gemm_epilogue_fp32_x(0, f, alpha_c, (double)acc);
}

// c = RN_F(α_c·acc): the storage-accumulation epilogue, α_c and acc values of F, the product
// exact in binary64, one rounding (the compute type is F itself).
PP_HD static inline double pp_gemm_epilogue_storage_x(pp_site_mask x, pp_format_id f, double alpha_c, double acc)
{
    return pp_site_round(x, PP_SITE_GEMM_C, f, alpha_c * acc);
}
PP_HD static inline double pp_gemm_epilogue_storage(pp_format_id f, double alpha_c, double acc)
{
    return pp_gemm_epilogue_storage_x(0, f, alpha_c, acc);
}

// x' = RN_F(RN_32(s·x)): a tensor multiplied by a scalar as PyTorch does for fp16/bf16/fp32
// (the product in fp32, the result stored in F). s and x are binary32 values, so s·x is exact in
// binary64 and RN_32 of it is one rounding; RN_F is the store.
// site: quant_a or quant_b; with it exact under m, s·x in binary64.
PP_HD static inline double pp_gemm_prescale_x(pp_site_mask m, int site, pp_format_id f, double s, double x)
{
    return pp_site_round(m, site, f, pp_site_round(m, site, PP_FMT_FP32, s * x));
}
PP_HD static inline double pp_gemm_prescale(pp_format_id f, double s, double x)
{
    return pp_gemm_prescale_x(0, PP_SITE_GEMM_QUANT_A, f, s, x);
}

// One accumulation step when site accum or an operand's site is exact (gemm_thread.h's wide
// loop, binary64 accumulators holding the running value):
//   accum exact:  RN_64(a·b + acc), the binary64 accumulator (a·b exact for binary32 operands;
//                 with a binary64 operand (quant exact) a·b is rounded to binary64 first)
//   else, an operand binary64 (quant_a or quant_b exact) into the variant's accumulator:
//     fp32:    RN_32(fma_64(a, b, acc)) — a binary64 FMA, then binary32: two roundings where the
//              hardware's fmaf has one (its operands would be binary32); documented, not hidden
//     storage: pp_gemm_step_storage (its single-rounding proof needs binary32 operands; with a
//              binary64 operand a·b is rounded to binary64 first)
PP_HD static inline double pp_gemm_step_x(pp_site_mask x, pp_format_id f, pp_gemm_accum accum, double a, double b,
                                          double acc)
{
    if (pp_site_exact(x, PP_SITE_GEMM_ACCUM))
        return a * b + acc;
    if (accum == PP_GEMM_ACC_FP32)
        return pp_round(PP_FMT_FP32, fma(a, b, acc), PP_RND_NE, 0);
    return pp_gemm_step_storage(f, a, b, acc);
}

// ---------------------------------------------------------------------------------------------
// Correctly rounded scalars
//
// RN_f(y) for y = k^(−1/2), k^(−1/4) (the default α and its square root) or √α (α binary64),
// f no wider than binary32. A binary64 approximation of y is at most one step of f away from
// RN_f(y) (its relative error is ≤ 2^−51 while f's steps are ≥ 2^−24 relative); the step is
// then decided exactly, by comparing y with the f-midpoints around the candidate in exact
// integer or exact binary64 arithmetic; when y is exactly a midpoint, pp_round of that midpoint
// breaks the tie (to even, or to Inf at the overflow threshold).

// How y is known: y = k^(−1/q) (q = 2 or 4), or y = √alpha.
typedef struct pp_gemm_root_ {
    int q;         // 2 or 4: y = k^(−1/q); 0: y = √alpha
    uint64_t k;    // 1 ≤ k < 2^53
    double alpha;  // ≥ 0
} pp_gemm_root_;

// sign(a^q·k − 2^E) for 1 ≤ a < 2^26, q ∈ {2, 4}, 1 ≤ k < 2^53, 0 ≤ E < 256: exact, in
// 32-bit limbs (a^q·k < 2^157).
PP_HD static inline int pp_gemm_cmp_pow_(uint64_t a, int q, uint64_t k, int E)
{
    uint32_t x[8] = {(uint32_t)k, (uint32_t)(k >> 32), 0, 0, 0, 0, 0, 0};
    for (int r = 0; r < q; r++) {
        uint64_t carry = 0;
        for (int i = 0; i < 8; i++) {
            uint64_t t = (uint64_t)x[i] * a + carry;
            x[i] = (uint32_t)t;
            carry = t >> 32;
        }
    }
    int top = E / 32;
    uint32_t bit = (uint32_t)1 << (E % 32);
    for (int i = 7; i > top; i--)
        if (x[i])
            return 1;
    if (x[top] != bit)
        return x[top] > bit ? 1 : -1;
    for (int i = top - 1; i >= 0; i--)
        if (x[i])
            return 1;
    return 0;
}

// sign(y − m) for a positive binary64 m with at most 26 significant bits (an f-midpoint).
PP_HD static inline int pp_gemm_root_cmp_(const pp_gemm_root_ *y, double m)
{
    if (y->q == 0) {
        // √α vs m ⟺ α vs m²; m² is exact (≤ 52 bits, in [2^−300, 2^257] for the m that occur)
        double m2 = m * m;
        return y->alpha > m2 ? 1 : y->alpha < m2 ? -1 : 0;
    }
    // m = a·2^−e with a odd: k^(−1/q) > m ⟺ 2^(qe) > a^q·k
    int ex;
    double fr = frexp(m, &ex);                // m = fr·2^ex, fr in [0.5, 1)
    uint64_t a = (uint64_t)ldexp(fr, 53);     // exact: m has ≤ 26 bits
    int e = 53 - ex;
    while (!(a & 1)) {
        a >>= 1;
        e--;
    }
    // For the m that occur (≈ k^(−1/q) ∈ [2^−27, 1]) a < 2^26 and 0 < e ≤ 80, so qe < 256.
    return -pp_gemm_cmp_pow_(a, y->q, y->k, y->q * e);
}

// RN_f(y) for y > 0 known through approx (|approx − y| ≤ 2^−51·y) and the exact oracle.
PP_HD static inline double pp_gemm_round_root_(pp_format_id f, const pp_gemm_root_ *y, double approx)
{
    pp_format F = pp_format_get(f);
    double r = pp_round(f, approx, PP_RND_NE, 0);
    if (isinf(r))
        r = F.max_finite;
    for (int it = 0; it < 4; it++) {  // one step suffices; the bound is belt and braces
        double up = 0.5 * pp_ulp(f, r);  // half the gap above r: r + up is the midpoint above
        int c = pp_gemm_root_cmp_(y, r + up);
        if (c == 0)  // y is that midpoint, exactly: pp_round breaks the tie (to even, or to Inf)
            return pp_round(f, r + up, PP_RND_NE, 0);
        if (c > 0) {
            if (r == F.max_finite)
                return INFINITY;
            r += 2.0 * up;
            continue;
        }
        if (r > 0.0) {
            double below = pp_round(f, nextafter(r, 0.0), PP_RND_TZ, 0);  // r's f-predecessor
            double mid = 0.5 * (below + r);                               // exact
            c = pp_gemm_root_cmp_(y, mid);
            if (c == 0)
                return pp_round(f, mid, PP_RND_NE, 0);
            if (c < 0) {
                r = below;
                continue;
            }
        }
        break;
    }
    return r;
}

// RN_f(k^(−1/q)), q ∈ {2, 4}, 1 ≤ k < 2^53, f no wider than binary32. (A tie needs a^q·k =
// 2^(qe) with a odd, so a = 1: only the midpoint 2^(emin−p) below f's smallest subnormal.)
PP_HD static inline double pp_gemm_round_kroot(pp_format_id f, uint64_t k, int q)
{
    pp_gemm_root_ y = {q, k, 0.0};
    double sk = sqrt((double)k);  // 3 roundings at most: relative error < 2^−51
    double approx = q == 2 ? 1.0 / sk : 1.0 / sqrt(sk);
    return pp_gemm_round_root_(f, &y, approx);
}

// RN_f(√alpha), alpha ≥ 0 binary64 (finite), f no wider than binary32. Overflow gives +Inf.
PP_HD static inline double pp_gemm_round_sqrt(pp_format_id f, double alpha)
{
    if (alpha == 0.0)
        return 0.0;
    pp_gemm_root_ y = {0, 0, alpha};
    return pp_gemm_round_root_(f, &y, sqrt(alpha));
}

// Whether the variant's storage format, scaling, accumulation and scale go together: unscaled
// fp16/bf16/fp32; tensor-current e4m3/e5m2/e2m1; mx e4m3/e5m2/e2m1; nvfp4 e2m1; scaled ones with fp32
// accumulation and post-scaling only.
PP_HD static inline int pp_gemm_variant_formats_ok(const pp_gemm_variant *v)
{
    pp_format_id f = v->format;
    int fp8 = f == PP_FMT_E4M3 || f == PP_FMT_E5M2;
    if (v->mma != PP_GEMM_MMA_FP32_CHAIN &&  // Hopper's FP8 MMA: per-tensor scaled e4m3/e5m2 only
        (!fp8 || (v->scaling != PP_SCALING_TENSOR && v->scaling != PP_SCALING_DELAYED)))
        return 0;
    switch (v->scaling) {
    case PP_SCALING_NONE:
        return f == PP_FMT_FP16 || f == PP_FMT_BF16 || f == PP_FMT_FP32;
    case PP_SCALING_DELAYED:  // TE's delayed recipe is FP8's
        return v->accum == PP_GEMM_ACC_FP32 && v->scale == PP_GEMM_SCALE_POST && fp8;
    case PP_SCALING_TENSOR:
    case PP_SCALING_MX:
    case PP_SCALING_NVFP4:
        if (v->accum != PP_GEMM_ACC_FP32 || v->scale != PP_GEMM_SCALE_POST)
            return 0;
        // per-tensor e2m1: the baseline NVFP4's two-level scales are measured against
        return v->scaling == PP_SCALING_NVFP4 ? f == PP_FMT_E2M1 : fp8 || f == PP_FMT_E2M1;
    }
    return 0;
}

// The block length along k of a scaling (1 for none; k for tensor-current means one block).
PP_HD static inline int64_t pp_gemm_scaling_block(pp_scaling s, int64_t k)
{
    return s == PP_SCALING_MX ? PP_MX_BLOCK : s == PP_SCALING_NVFP4 ? PP_NVFP4_BLOCK : k;
}

// acc' = RN_32(acc + RN_32(p·x)): a block's fp32 partial p, scaled by x (the block scales'
// product), added to the running accumulator (binary32 addition: one rounding).
PP_HD static inline float pp_gemm_block_add(float acc, float p, double x)
{
    float t = (float)pp_round(PP_FMT_FP32, (double)p * x, PP_RND_NE, 0);
    return acc + t;
}

// The scalars of variant v for reduction length k (pp_gemm_scalars above):
//   post:  alpha_c = RN_c(α), c = fp32 (accum fp32) or F (accum storage)
//   pre:   scale_a = scale_b = RN_32(√α)
//   pre-a: scale_a = RN_32(α)
// with α = 1/√k exactly unless v->alpha_given.
// Preconditions: format fp16/bf16/fp32; α finite; α ≥ 0 for pre; k ≥ 1 (and < 2^53) for the
// default α. Returns 0, or −1 when a precondition fails (out is then untouched).
PP_HD static inline int pp_gemm_scalars_make(const pp_gemm_variant *v, int64_t k, pp_gemm_scalars *out)
{
    if (!pp_gemm_variant_formats_ok(v))
        return -1;
    if (v->accum != PP_GEMM_ACC_FP32 && v->accum != PP_GEMM_ACC_STORAGE)
        return -1;
    int def = !v->alpha_given;
    if (def ? (k < 1 || k >= ((int64_t)1 << 53)) : !isfinite(v->alpha))
        return -1;
    pp_gemm_scalars s = {1.0, 1.0, 1.0};
    pp_format_id c = v->accum == PP_GEMM_ACC_FP32 ? PP_FMT_FP32 : v->format;
    switch (v->scale) {
    case PP_GEMM_SCALE_POST:
        s.alpha_c = def ? pp_gemm_round_kroot(c, (uint64_t)k, 2) : pp_round(c, v->alpha, PP_RND_NE, 0);
        break;
    case PP_GEMM_SCALE_PRE:
        if (!def && !(v->alpha >= 0.0))
            return -1;
        s.scale_a = def ? pp_gemm_round_kroot(PP_FMT_FP32, (uint64_t)k, 4)
                        : pp_gemm_round_sqrt(PP_FMT_FP32, v->alpha);
        s.scale_b = s.scale_a;
        break;
    case PP_GEMM_SCALE_PRE_A:
        s.scale_a = def ? pp_gemm_round_kroot(PP_FMT_FP32, (uint64_t)k, 2)
                        : pp_round(PP_FMT_FP32, v->alpha, PP_RND_NE, 0);
        break;
    default:
        return -1;
    }
    // "Exact sites": the scalars of an exact site in binary64 instead (real α: 1/sqrt(k))
    double a64 = def ? 1.0 / sqrt((double)k) : v->alpha;
    pp_site_mask x = v->exact_sites;
    if (v->scale == PP_GEMM_SCALE_POST && pp_site_exact(x, PP_SITE_GEMM_SCALE))
        s.alpha_c = a64;
    if (v->scale == PP_GEMM_SCALE_PRE && pp_site_exact(x, PP_SITE_GEMM_QUANT_A))
        s.scale_a = sqrt(a64);
    if (v->scale == PP_GEMM_SCALE_PRE && pp_site_exact(x, PP_SITE_GEMM_QUANT_B))
        s.scale_b = sqrt(a64);
    if (v->scale == PP_GEMM_SCALE_PRE_A && pp_site_exact(x, PP_SITE_GEMM_QUANT_A))
        s.scale_a = a64;
    *out = s;
    return 0;
}

#endif
