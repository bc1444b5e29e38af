// attention.h — the element-wise arithmetic of precprobe's attention variants (unfused and flash,
// forward and backward, the context-parallel merges), the variant's knobs and its scalars.
// C11 and nvcc (PP_HD). The loops are written once: the per-thread bodies of
// kernels/attention_threads.h in the launch sequence of kernels/attention_plan.c, which the GPU
// (kernels/cuda) and the CPU emulation (kernels/cpu/attention_device.c) both run.
#ifndef PP_ATTENTION_H
#define PP_ATTENTION_H

#include <math.h>
#include <stdint.h>

#include "exact_sites.h"
#include "format.h"
#include "philox.h"
#include "gemm.h"
#include "pp_hd.h"
#include "sites.h"
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
// ---- Flash (FlashAttention-2 v2.x, Dao-AILab/flash-attention csrc/flash_attn/src at 0251105 as
// cited in issue 15; the loop confirmed in the stored copy c1f0be2; knobs: scale, max row/none,
// block_m, block_n, arch; fp32 accum, fp32 softmax, L = 1, no pb-relax), per row i ----
// Tiles (pp_attn_flash_tiles): bm × bn from FA2's launch templates by d, mask and arch (sm90 and
//   sm80 at d = 128: 128×64; sm86/sm89 128×32 non-causal, 64×64 causal; d ≤ 64: 128×128);
//   block_m, block_n override. Key tiles [t·bn, (t+1)·bn) of the block's keys, t from the tile
//   holding row i's last visible key DOWN to 0 (flash_fwd_kernel.h ~138, 274, 309, 385: n_block
//   from n_block_max − 1 down). A tile row i cannot see is an exact no-op (all scores −Inf: m, l, o
//   unchanged), so block_m never changes a result; block_n does.
//   s_ij = acc_ij, the raw fp32 dot (q', k' for pre/pre-q); σ32 = alpha32 (post; 1 for pre/pre-q),
//   sl2 = RN_32(σ32 ×_64 log2 e) (FA2's host: softmax_scale · M_LOG2E, flash_api.cpp:138)
//   m_new = max(m, max_{j in tile, visible} s_ij) (row) or 0 (none); m starts −Inf, l_q = 0, o = 0
//   ms = m_new == −Inf ? 0 : m_new ⊗ sl2;  p_j = exp2(fma(s_j, sl2, −ms))  (one FFMA, softmax.h:76-88)
//   corr = m == −Inf ? 0 : exp2((m ⊖ m_new) ⊗ sl2)  (none: 1);  l_q = l_q ⊗ corr, o_c = o_c ⊗ corr
//   (softmax.h:150-160, before P·V), then for j in tile order: l_{q(j)} = l_{q(j)} ⊕ p_j with
//   q(j) = (j mod 8)/2, the 4 per-thread partials of the m16n8 accumulator layout (softmax.h:59-63);
//   o_c = fma(RN_F(p_j), v_jc, o_c) (P converted to F before P·V: flash_fwd_kernel.h:354, 416)
//   end (softmax.h:172-183): l = (l_0 ⊕ l_2) ⊕ (l_1 ⊕ l_3) (quad all-reduce: shfl_xor 2, then 1);
//   out_ic = RN_F(o_c ⊗ (1 ⊘ l)); lse_i = fma(m, σ32, log l) (row_max·scale + __logf(sum), contracted)
// Not emulated (no GPU bit for bit): exp2f is ex2.approx.ftz.f32 under --use_fast_math (setup.py:321)
//   and __logf lg2.approx: here correctly rounded exp2 (pp_attn_exp2f) and pp_logf, so only their
//   values differ, never their arguments; the MMA's internal reduction (here one fma chain per
//   output element, in order within each k-chunk of 16; `run --orders` walks each chunk in seeded
//   orders, "Order band"); an empty row's lse is +Inf in FA2, −Inf here
//   (what the CP merges and the backward test for; its out is 0 in both).
// Measured on te-cp-small (d = 64; each change run with and without it, everything else as
//   shipped; "out" = non-cp out vs the exact reference, mismatch and max ulp; "rank 3" = the
//   cp-bf16acc / cp-fp32acc out@te-cp-rank:3 vs non-cp mismatch):
//   key tiles from the last down (vs upward): out 95.9%, max 4971 → 2255 ulp; dk max 7521 → 6818
//     ulp; fp16 out 69.4% → 69.3%; rank 3 55.3% / 49.0% → 55.2% / 48.5%
//   exp2 of one FFMA, lse = fma(m, σ, log l) (vs exp(RN(σs) − RN(σm)), lse = RN(σm) + log l):
//     fp16 out 69.2% → 69.3%, dv 53.0% → 52.9%; fp16 rank 3 (fp32acc) 45.8% → 45.7%; rest equal
//   4 partial row sums (vs one): lse max 2.345 → 1.5 ulp (bf16 non-cp); everything else equal
//   arch tiles (sm90, d = 64: 128×128) vs block_n 64: fp16 out 69.0% → 69.3%, dq max 17710 → 18730
//     ulp, fp16 dk max 1133 → 901 ulp
//   All of it against the old emulation (upward, exp(s − m), one sum, 64-key tiles): out 5461 →
//   2255 ulp, lse 2.77 → 1.5 ulp, fp16 out 68.9% → 69.3%, rank 3 54.3% / 47.4% → 55.2% / 48.5%.
//
// ---- Backward (given out, lse of the forward, dout) ----
// Flash (FA2 flash_bwd_kernel.h; blocks bbm × bbn from pp_attn_flash_tiles: 64×128 at d = 128 on
//   sm80/sm90, flash_bwd_launch_template.h:247-248; 64×64 on sm86; 128×128 at d = 64):
//   D_i = fma chain over c of dO_ic·O_ic (from +0, c increasing; FA2's preprocess sums per-thread
//   chunks then all-reduces: flash_bwd_preprocess_kernel.h:40-46, not reproduced);
//   P_ij = exp2(fma(s_ij, sl2, −RN_32(lse_i ⊗ log2e_32))) on the raw score (flash_bwd_kernel.h:536;
//   exp2 as the forward's); dP_ij = fma chain dO_i·v_j; dS_ij = P_ij ⊗ (dP_ij ⊖ D_i) (fp32,
//   converted to F before its GEMMs: 584-593, 624);
//   dV_jc = fma(RN_F(P_ij), dO_ic, ·) over the query blocks of bbm rows FROM THE LAST DOWN, rows
//   increasing within a block (457, 635, 689: m_block from m_block_max − 1 down); dv = RN_F(dV)
//   dK_jc the same chain of RN_F(dS_ij)·q'_ic;  dk' = RN_F(α32 ⊗ dK) (scaled and converted once, 733-737)
//   dQ_ic: per key block of bbn keys a chain from +0 of RN_F(dS_ij)·k'_jc, the blocks' partials
//   added in fp32 (FA2 atomicAdds each into dq_accum, 678); dq' = RN_F(α32 ⊗ dQ) (preprocess
//   243-252). The real order of the atomicAdds is the GPU's scheduling, unknown: precprobe adds the
//   blocks in increasing key order (FA2's documented n_block loop), a choice, not a fact.
//   Measured on te-cp-small (block order and dq blocks vs one upward chain each): only fp16 dk's
//   max moves (900.2 → 901.2 ulp): at d = 64 the blocks are 128×128, the CP blocks (128 rows)
//   are one block, and fp32 reorderings rarely move a bf16/fp16 result.
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
// cp_flavour picks the TransformerEngine whose merges run (PR 821 was never merged: TE then and
// now accumulates out, dq, dk/dv in the input dtype for bf16/fp16; fp32 buffers are what PR 821
// proposed, head 7e1dcc3: attention.py 497, 785, 853, 895):
// lse merge (step order): lse = lse_0; then for each later step i (rows it touches):
//   mx = max(lse, lse_i), mn = min(…) (mx = −Inf: lse stays −Inf), and
//   pr-821:  lse = mx ⊕ log(1 ⊕ exp(mn ⊖ mx)) in fp32 (PR 716's formula)
//   te-main: lse = mx ⊕ log1p(exp(mn ⊖ mx)) in fp32 (context_parallel.py @ d0067d0:192, 205;
//            log1p correctly rounded here, torch's log1pf within an ulp of it)
//   te-2024: the same formula as pr-821 in binary64 (the running lse is .to(torch.double), 783;
//            libm exp/log), rounded to fp32 once after the ring (801)
// out merge (after the ring, step order, accumulator of cp_accum format C, from +0; today's TE
//   starts from RN_C(t_0) (.to(dtype), context_parallel.py:149), the same value but for a zero's sign):
//   t = out_i ⊗ exp(lse_i ⊖ lse); acc = RN_C(acc ⊕ t); out = RN_F(acc)
//   te-2024, second-half steps (i > rank, causal): the correction reads softmax_lse_, a view of the
//   binary64 lse taken before softmax_lse was reassigned to its fp32 rounding (786, 818-822):
//   t = RN_64(out_i · exp_64(lse_i − lse_64)), acc = RN_C(RN_64(acc + t))
// Measured on te-cp-small (te-cp-small's variants before → after cp_flavour; FA2 order already in):
//   bf16 te-main (log1p) vs the old fp32 log(1 + x): no summary figure moves; te-2024 vs pr-821
//   merge with bf16 buffers: none in bf16; fp16: out max ulp 1384 → 1385, dv 60.0% → 60.1%.
// grads: dq_acc = RN_C(dq_acc ⊕ dq_i) in backward-step order; dk/dv of KV block o accumulate
//   along the ring path (ranks o−1, o−2, …, o), each hop RN_C(acc ⊕ dkv_i); final RN_F.
//   (The baseline's copy on first touch equals adding to +0, but for the sign of a zero.)
// Order in the merges (issue 15's order band): none of it is unknown, in any flavour. Every merge
//   is a torch element-wise op on whole tensors: the lse merge and out correction are @jit_fuser
//   functions of torch.max/min/exp/log1p, a multiply and add_ (context_parallel.py @ 015d225:
//   flash_attn_fwd_out_correction, flash_attn_fwd_second_half_out_correction,
//   flash_attn_fwd_softmax_lse_correction; attention.py @ 9709147e:492-499 and 782-822 the same
//   ops), dq is dq.add_(dq_) per backward step and dk/dv are received over the ring (P2P, no
//   reduction) and added with add_ (attention.py @ 9709147e:1133-1227). An element-wise kernel
//   computes each output element in one thread from inputs the host's step loop fixes: no atomics,
//   no cross-element reduction, no cuBLAS. So the step order, hence every bit of the merges, is
//   determined once the partials are, and `run --orders` perturbs only the FA2 kernels that make
//   the partials. What is unknown there is not order: whether the fuser (torch.jit.script or
//   torch.compile, by torch version) contracts out_i·e + acc into one FMA. precprobe rounds the
//   product to fp32 first (two roundings, as eager torch does); the FMA would differ by at most one
//   fp32 rounding of t before RN_C (an ulp of fp32, far below bf16's), not measured on a GPU.
//
// ---- FP8 (fp8 = fa3): FlashAttention-3's FP8 forward (Dao-AILab/flash-attention hopper/; element
// steps kernels/attention_fp8.h, called from the flash loop above; knobs: flash, bf16, post, row,
// cp_world 1, forward only) ----
// Quantisation (the caller's, before FA3: FA3 takes e4m3 q, k, v and a binary32 descale each,
//   flash_api.cpp mha_fwd's q_descale/k_descale/v_descale, per (batch, kv head); precprobe passes
//   one per tensor, as per-tensor current scaling does, TransformerEngine's Float8CurrentScaling
//   modelled as kernels/scaling.h's tensor-current): per tensor T of q, k, v, over all its elements,
//   s_T = RN_32(448/amax_T) (1 for amax 0; NaN with a NaN or ±Inf), T8 = RN_e4m3,sat(RN_32(T·s_T)),
//   the descale FA3 gets X_T = RN_32(1/s_T) (TE's scale and scale_inv, kernels/scaling.h).
//   The plan computes amax and X on the host over the whole tensor and quantises each element as
//   it uploads (pp_attn_fp8_quantise): every device sees the same e4m3 values.
// Scale (flash_fwd_kernel_sm90.h @c082294, consumer loop): sl2 = RN_32(σ32·log2 e) as FA2's host
//   (FA3's flash_api.cpp set_params_fprop: softmax_scale * M_LOG2E), then
//   σ' = RN_32(sl2 · RN_32(X_q·X_k)) (softmax_scale_log2 multiplied by q_descale·k_descale).
// Per row, the FA2 loop above with (mainloop_fwd_sm90_tma_gmma_ws.hpp @0473b46, mma: key tiles
//   from n_block_max − 1 down, the same order of max, correction, row sums, P·V as FA2's):
//   s_ij = the fp32 chain of q8·k8 (the e4m3 values; their products are exact in binary32);
//   ms = m_new == −Inf ? 0 : fma(m_new, σ', −8) (the max offset: softmax.h @7a80279:67-69, 77-79;
//     Max_offset = 8 for FP8, flash_fwd_kernel_sm90.h @c082294; "max·scale − offset" contracted);
//   p_j = exp2(fma(s_j, σ', −ms)) in [0, 256] (softmax.h:85); corr = exp2((m ⊖ m_new) ⊗ σ')
//   (softmax.h:119-120, no offset: it cancels); l_q = l_q ⊕ p_j (4 partials, softmax.h:134);
//   o_c = fma(RN_e4m3,sat(p_j), v8_jc, o_c) (P converted to e4m3 before P·V: the mainloop's
//   convert_type_out to Element = e4m3, cvt.rn.satfinite; P carries the 2^8 of the offset and no
//   other scale). (s_ij and o_c under mma = "sm90-fp8": "Hopper's FP8 accumulation" below.)
// Epilogue (softmax.h:137-153, finalize(v_descale); rescale_o): l = (l_0 ⊕ l_2) ⊕ (l_1 ⊕ l_3);
//   s = (1 ⊘ l) ⊗ X_v; out_ic = RN_bf16(o_c ⊗ s) (FA3 writes an FP8 run's out in bf16: flash_api.cpp
//   mha_fwd, out_type); lse_i = fma(m, RN_32(σ' ⊗ RN_32(ln 2)), log(l ⊗ 2^−8)).
// Tiles (pp_attn_fp8_block_n): FA3's FP8 tile_size_fwd_sm90 (tile_size.h @07602ad:53-72), 160 keys
//   at d ≤ 64, 224 at d ≤ 128; block_n overrides.
// Backward: refused when the case is read (fp8 = "fa3" with passes fwd+bwd): FlashAttention-3 has
//   no FP8 backward (hopper/flash_api.cpp, mha_bwd: q must be fp16 or bf16; the check read in
//   stored copies of that file, its line not pinned here), so any FP8 training backward is another
//   kernel's (TransformerEngine's cuDNN FP8 attention), not FA3's; a bf16 backward run from the FP8
//   forward's out and lse would be a mix no framework ships.
// The reference: the pipeline's reference per input format group is the exact attention of the
//   unquantised bf16 inputs (the group the bf16 variants share), so an fp8 variant's error is
//   quantisation and arithmetic together, as the fp8 gemm's (README). The exact values the kernel
//   reads, X·T8, come from pp_attn_fp8_dequantised: tests/test_attention_fp8.c checks the kernel
//   against the reference of those (the hook for a comparison against the quantised inputs).
// Hopper's FP8 accumulation (the knob mma = "sm90-fp8"; default "fp32-chain", the chains above):
//   both GEMMs accumulate in wgmma fragments with no separate fp32 accumulator: in the consumer's
//   mma() (mainloop_fwd_sm90_tma_gmma_ws.hpp @0473b46, the fwd_step lambda and the first and last
//   tiles around it) S is flash::gemm</*zero_init=*/true>(tiled_mma_qk, tSrQ, tSrK, tSrS) and O is
//   flash::gemm</*zero_init=*/false>(tiled_mma_pv, tOrP, tOrV, tOrO) straight into tOrO, which
//   softmax.rescale_o multiplies between tiles; nothing promotes a partial sum (unlike CUTLASS's
//   GEMM mainloops, fp8_accumulation.hpp), read in that file for Is_FP8 too. So under sm90-fp8:
//   s_ij = the sm90 dot product of q8_i·k8_j over d (kernels/sm90_fp8_mma.h: groups of 32 along d
//     from c = 0, starting from +0), pp_attn_fp8_sm90_dots;
//   o_c = per group of 32 keys of the tile (from its first key; block_n must be a multiple of 32,
//     FA3's 160, 128, 224 are), the sm90 group of the running o_c (after the tile's rescale) and
//     the products RN_e4m3,sat(p_j)·v8_jc, pp_attn_fp8_sm90_pv; no promotion.
//   The model is the H200's, measured through cuBLASLt's GEMM (kernels/gemm.h "Hopper FP8
//   accumulation"), and the instruction FA3 issues measured on its own on an H100
//   (tools/probe_wgmma_fp8.cu: wgmma.mma_async m64n8k32 chained in its register accumulator from
//   +0, no promotion, as FA3's mainloop) returned cuBLASLt's use_fast_accum outputs bit for bit on
//   every fixture (e4m3 × e4m3, e4m3 × e5m2, e5m2 × e4m3). FA3's own kernel was not run (it is not
//   installed on the lent machine): its tiling feeds the same instruction. Exact within a group, it has no order: the order band does not perturb it. On
//   fp8-attention (d 64) it moves out little against the exact attention of the quantised inputs
//   (mean |error| 0.00311 either way, 44.4% vs 44.5% mismatched) and lse visibly (max |error|
//   0.0096 vs 4.0e-6; 80.7% of rows outside bf16's lse tolerance vs none): S loses bits, P's e4m3
//   rounding hides most of it from out.
// Not emulated: exp2f and __logf as for FA2 (correctly rounded here); under the default fp32 chain
//   the MMAs' internal order (FP8 wgmma has k-chunks of 32; the order band walks chunks of 16) and
//   Hopper's truncating accumulation (mma = "sm90-fp8" models it); e5m2 P or V (FA3 takes e4m3).
// TransformerEngine's FP8 DPA: see "FP8 (fp8 = te)" below.
//
// ---- FP8 (fp8 = te): TransformerEngine's FP8 dot-product attention forward (cuDNN's sdpa_fp8
// graph as TE builds it; element steps kernels/attention_te_fp8.h, the CPU loop
// kernels/cpu/attention_te_fp8.c; knobs: flash, bf16, post, row, cp_world 1; backward below) ----
// What is open, and followed here:
//   TE (NVIDIA/TransformerEngine @fecb10b, common/fused_attn/fused_attn_fp8.cu,
//   fused_attn_fp8_fwd_impl_v1): Q, K, V enter in FP8 (e4m3) with binary32 descale_q, descale_k,
//   descale_v; the graph also takes descale_s, scale_s (P's) and scale_o, writes O in FP8 and
//   returns amax_s and amax_o (what TE's recipe folds into the next step's amax histories).
//   cudnn-frontend's reference (NVIDIA/cudnn-frontend @07b111f, test/python/sdpa/fp8_ref.py,
//   compute_ref, about lines 154-218 of the stored copy, counted by hand: the score scale ≈154,
//   the online max ≈155-162, the correction ≈164-170, P ≈172-175, P's scale and cast ≈177-179,
//   P·V ≈185, the division ≈210, stats ≈211, O's amax and FP8 store ≈214-218) says where each
//   scalar is applied:
//     S = (Q8·K8ᵀ) · (descale_q·descale_k·attn_scale)  (one Python-float scalar times the fp32 dot)
//     online softmax over key blocks: m_new = max(m, block max) (past a rescale threshold, 0 by
//     default, in log2 units), O and l times exp(m − m_new), p = exp(S − m_new), l += Σ_block p;
//     P8 = e4m3(p · scale_s · 2^−threshold)  (p unnormalised: ≤ 1, ≤ 2^threshold lazily)
//     O += (P8·V8) · descale_v · descale_s · 2^threshold  (per block, after the correction)
//     O = O / max(l, 1);  stats (lse) = m + log l;  amax_o = max |O|;  O8 = e4m3(O · scale_o).
//   The same project's forward test of sdpa_fp8 (test_sdpa_fwd_fp8, a test file whose path the
//   search index did not give) makes scale_s = 448/amax_s and descale_s = amax_s/448 from the
//   amax of the exact softmax's P, and scale_o from amax_o: per-tensor scaling of P and O.
//   TE's recipe: every FP8 tensor's scale from its amax history (DelayedScaling, kernels/scaling.h
//   cites it), S's and O's included: scale_s from amax_history_s, scale_o from amax_history_o.
// The model (pp_attn_te_row, per query row; every op binary32 as written, ⊗ one rounding):
//   q, k, v quantised on the host as fp8 = fa3's (knob scaling: auto = tensor-current, none,
//     tensor-delayed with amax_history_q/_k/_v; mx and nvfp4 refused: TE's per-tensor graph);
//     X_q, X_k, X_v their descales.
//   σ = RN_32(X_q·X_k·α) (the binary64 product of the three binary32 values, rounded once: the
//     reference's Python float), α = RN_32(1/√d) (cuDNN's attn_scale is a float); x_j = acc_j ⊗ σ,
//     acc_j the fp32 fma chain of q8·k8_j over d from +0 (exact products).
//   scale_s = RN_32(RN_32(448·2^−margin)/amax_s) from amax_history_s (TE's recipe: max or most
//     recent, margin), else 448 (the bound P ≤ 1: amax 1); X_s = RN_32(1/scale_s).
//   P8_j = RN_e4m3,sat(p_j ⊗ scale_s'), scale_s' = scale_s·2^−τ (τ = te_rescale_threshold,
//     exact); saturating as cvt.rn.satfinite (the reference's torch cast would give NaN above
//     448: only a stale amax_history_s gets there).
//   Online (te_softmax = "online", default; key tiles of block_n, default 128): per tile
//     m_b = max x_j; m_new = m_b if m = −Inf or m_b ⊖ m > τ·ln 2 (binary64 compare), else m;
//     if m ⊖ m_new < −τ·ln 2: corr = exp(m ⊖ m_new), o_c = o_c ⊗ corr, l = l ⊗ corr;
//     p_j = exp(x_j ⊖ m_new); ts = Σ_tile p_j (left to right from +0); P·V (te_pv below);
//     l = l ⊕ ts; after the last tile o_c = o_c ⊘ max(l, 1).
//   Two-pass (te_softmax = "two-pass"): m = max_j x_j; l = Σ_j exp(x_j ⊖ m) (left to right);
//     p_j = exp(x_j ⊖ m) ⊘ l (P normalised before its scale; amax_s ≤ 1 is then max P of the
//     softmax, as the forward test's s_amax); no final division; τ ignored.
//   te_pv = "per-tile" (default, the reference): per tile and column t = the fp32 chain of
//     P8_j·v8_jc from +0, o_c = o_c ⊕ RN_32(RN_32(t ⊗ X_v) ⊗ X_s'), X_s' = X_s·2^τ;
//     "chain": o_c = fma(P8_j, v8_jc, o_c) through every tile (an MMA accumulator, rescaled by
//     corr), then o_c ⊗ RN_32(X_v ⊗ X_s') once before the division.
//   te_exp = "base-e" (default, the reference's torch.exp): exp = pp_expf; "base-2": σ ⊗ RN_32(log2 e)
//     folded into the scores and exp2 (pp_attn_exp2f) throughout, τ in log2 units, lse =
//     m ⊗ RN_32(ln 2) ⊕ log l. lse = m ⊕ log l (base-e); −Inf for a row that sees no key (out 0).
//   amax_s = max over the run of p (before scale_s, as the softmax made it); amax_o = max |o| over
//     the run (binary32, before the store); scale_o = RN_32(448/amax_o) (current, as the reference;
//     from amax_history_o when given: TE's delayed recipe); out = X_o·RN_e4m3,sat(o ⊗
//     scale_o), X_o = RN_32(1/scale_o): the value O8 stands for (exact in binary64), so out is
//     compared as the FP8 tensor TE hands on. amax_s and amax_o are returned by
//     pp_attn_te_fp8_cpu (tested), not op outputs.
// Unknown (cuDNN's kernel is closed), each a knob with the reference's choice as default,
//   measured on fp8-attention (out against the exact attention of the bf16 inputs; mismatch =
//   outside bf16's assert_close tolerance; the default fp8-te: see the case's baseline):
//   (fp8-te: 80.6% mismatched, max |error| 1.33; against the exact attention of its quantised
//   inputs 62.9%, max 0.148 (e4m3's O store dominates: FA3's bf16 out 44.5%, 0.047); lse 0.0%.)
//   te_softmax two-pass (P normalised before its scale): out 81.1%, max 1.33; against the
//     quantised inputs 65.0%, max 0.236; 38.5% of out elements differ from online, by ≤ 0.305.
//   te_exp base-2: out bit-identical (the ulp_32 changes of p and l vanish in P's and O's e4m3
//     roundings), lse differs by ≤ 7.6e-6 (against the quantised inputs' lse 5.3e-6 vs 3.7e-6).
//   te_pv chain: out bit-identical, with one key tile (s = 128) and with block_n 32 (4 tiles); it
//     moves O by ulps of binary32 (tests/test_attention_te_fp8.c) that O's e4m3 store hides.
//   te_rescale_threshold 8: P scaled by 448/2^8 so small p fall into e4m3's subnormals: 0.8% of out
//     elements differ (one tile), 14.2% at block_n 32 (max 0.297; against the quantised inputs
//     63.4%, max 0.211).
//   block_n (cuDNN's tile is not known; 128 here): 64: 4.1% of out differ from 128 (max 0.148),
//     32: 11.2% (P quantised against a running max, then rescaled in binary32).
//   Scales, not unknowns, for comparison: a stale amax_history_s = [0.5] (scale_s 896: every
//     p ≥ 0.5 saturates at 448) 98.4% mismatched, max 2.11; amax_history_o = [4.0] (scale_o 112
//     instead of the current 448/amax_o) 82.0%, max 1.28, against the quantised inputs 76.5%.
// Hopper's FP8 accumulation as a bound (mma = "sm90-fp8"; kernels/attention_te_fp8.h
//   pp_attn_te_sm90, where the reason is written out): cuDNN's accumulation order and precision are
//   not public, so te's default stays the exact fp32 chain (the reference's); sm90-fp8 puts the
//   measured wgmma accumulator (kernels/sm90_fp8_mma.h: groups of 32, 13 fraction bits below the
//   group's largest exponent, truncation) into S = Q8·K8ᵀ over d and P8·V8 over each tile's keys,
//   promoted into binary32 every 128 elements as cuBLASLt does (per-tile: from +0; chain: onto the
//   running o), and in the backward's dP, dV, dq's dS8·K8 and dk's dS8ᵀ·Q8 (below). It measures how
//   far results could move, not what cuDNN does. Measured on fp8-attention: out 1.1% outside bf16's
//   tolerance against te (368 of 32,768, max 0.148, RMS 0.0019), against the exact attention 80.6%
//   either way (RMS 0.05819 → 0.05814); lse against the quantised inputs max 3.7e-6 → 9.6e-3.
//   The order band does not walk sm90's chains (their groups are the model's). block_n (te's tile)
//   must be a multiple of 32.
// Not modelled: the GPU's ex2.approx/__logf (correctly rounded here; the order band moves them by ulps), e5m2
//   outputs, padding masks, dropout, bias; the MMAs' internal order nominally (a chain: the order
//   band below samples others).
// Order band (`run --orders`; see "Order band" below for the mechanism, the same seeds and streams):
//   cuDNN's accumulation orders are not known, so the band walks them as FA2's: S's fp32 chain over
//   d (GEMM PP_ATTN_MMA_S) and each P8·V8 chain over a tile's keys (PP_ATTN_MMA_PV; per-tile t or
//   the chain form's running o) go through the chunks of 16 in increasing order, each chunk in its
//   seeded order; the row sums (two-pass: l over all keys; online: each tile's ts, then l ⊕ ts as
//   before) walk the same chunks under their own draw, PP_ATTN_MMA_TE_L; each p = exp(…) (stream
//   FWD_P, keyed by the run's row r and key j, so two-pass's l and P see the same p) moves ±2 ulps
//   and log l as FA2's __logf (pp_attn_order_log). The online correction exp(m ⊖ m_new) is not
//   moved (as FA2's). Seed 0: the plain chains above, bit for bit (the baselines hold).
//   Bounds: each chain is a reordering of the same exact terms (e4m3 products are exact in
//   binary32), within γ_{n−1}·Σ|terms| of the exact sum (tests/test_attention_te_order.c, with a
//   hand row where the order moves S from 2^16 to above it).
//   Measured (fp8-attention, `run --orders 8`, all sources together; 9 runs): fp8-te's lse against
//   the quantised inputs rms 6.73e-7 – 7.39e-7, max_ulp 1.6 – 128, max |error| 3.748e-6 in every
//   run; its out figures (mismatch 62.90%, max |error| 0.1476, rms 0.01055) the same in all 9 to
//   the digits printed: S is mostly exact (e4m3 products, 64 terms), and p moved by ulps rarely
//   crosses a rounding boundary of P's or O's e4m3. fp8-te-stale-s: out's max |error| 2.07812 –
//   2.07813. So te's out conclusions on this case are robust to order; its lse ones are not
//   where two variants' lse are within 1e-6.
// Devices: the host steps (quantisation, scalars, O's amax, scale and store) are written once,
//   kernels/attention_te_run.c; the rows run on the CPU's thread pool (kernels/cpu/
//   attention_te_fp8.c) or one GPU thread per row (kernels/cuda/attention_te_kernels.cu; the
//   decomposition checked by a CPU loop device in tests/test_attention_te_fp8.c, and on an H100
//   on 2026-11-26: tests/test_attention_te_cuda.c and tests/e2e/cuda.sh bit-identical), both
//   through pp_attn_te_row_at. The backward's kernel likewise (tests/test_attention_te_bwd_cuda.c
//   and fp8-attention-bwd's 30 cross-check comparisons, identical on the same H100).
// Range notes (run --ranges): q, k, v's quantisation as fa3's (src/ops/attention_fp8_ranges.c);
//   the row's scores (S's fp32 chain), softmax_in (x), exp (p), p (P8: p·scale_s into e4m3,
//   saturation noted against the unsaturated value), row_max, row_sum, lse, and out (O8's e4m3
//   codes) from a second pass of the forward through explain's binary64 row with no site exact
//   (pp_attn_te_ranges_x, kernels/attention_te_exact.c: the kernel's own values, so the same notes
//   whichever device ran the variant; taken only with --ranges; tests/test_explain_attention_te.c
//   range_notes_by_hand). fp8-attention: P8 flushes 7,668 of 33,024 p in head 3 to zero; a stale
//   amax_history_s puts 14.3% of P8 within a factor 2 of 448 (5.5% without).
// Backward (passes = "fwd+bwd"; element steps kernels/attention_te_fp8_bwd.h, host steps
//   kernels/attention_te_bwd_run.c, the CPU loop kernels/cpu/attention_te_fp8_bwd.c, the GPU
//   kernels/cuda/attention_te_bwd_kernels.cu; knobs te_grad_format, amax_history_dp, te_dq,
//   te_ds_amax, amax_history_do, _dq, _dk, _dv, mma).
//   What is open, and followed here:
//   TE (@fecb10b, common/fused_attn/fused_attn_fp8.cu, fused_attn_fp8_bwd_impl_v1, the "FE 1.0+"
//   definition): the graph takes q, k, v, O (fwd_tensor_type: e4m3), the forward's stats, dO, and
//   binary32 descale_q/k/v/o/dO/s/dP, scale_s, scale_dP, scale_dQ/dK/dV; it writes dQ, dK, dV and
//   takes dO in bwd_tensor_type (the dO/dQ/dK/dV set_data_type calls after sdpa_fp8_backward), and
//   returns amax_dP, amax_dQ/dK/dV (FLOAT). TE's recipe (@799cf76 recipe/__init__.py,
//   DelayedScaling: fp8_format defaults to Format.HYBRID, e4m3 forward and e5m2 backward): the
//   gradients' format is e5m2 by default (te_grad_format = "e4m3": Format.E4M3).
//   TE's pytorch caller (NVIDIA/TransformerEngine @001b736, transformer_engine/pytorch/attention.py,
//   cited by statement: the module constants and FusedAttnFunc's FP8 backward, its fused_attn_bwd
//   call, whose arguments are commented d_scale_do, d_scale_dp, q_scale_dp, q_scale_dqkv; line
//   numbers not counted) casts dO with the backward meta's slot META_DO (GRAD_INPUT2), passes
//   scale_inv[META_DO] as descale_dO, scale[META_DP] (GRAD_INPUT3) and scale_inv[META_DP] as
//   scale_dP and descale_dP, and ONE scale[META_DQKV] (GRAD_OUTPUT1) for dQ, dK and dV, with
//   amax_history[0][META_DP] and [META_DQKV] as the amax outputs. Every such scale is the
//   DelayedScaling recipe's, from that slot's amax history; so TE's own default is delayed, from a
//   history a single run does not have. precprobe's default stays current scaling (the limit of a
//   history whose amax is this step's: tests/test_attention_te_delayed_bwd.c shows that history
//   gives the same bits), and amax_history_dp, _do, _dq, _dk, _dv give the recipe's scales (TE's
//   one META_DQKV slot: the same history for the three).
//   cudnn-frontend's reference (@07b111f, test/python/sdpa/fp8_ref.py, compute_ref_backward, the
//   function after compute_ref; cited by statement, its line numbers not counted) applies, in order:
//     P = exp(S − lse), S recomputed as the forward's (qk_scale = descale_q·descale_k·attn_scale);
//     P8 = e4m3(P·scale_s) (scale_s without the forward's rescale threshold: P ≤ 1 here);
//     dV = (P8ᵀ·dO8)·descale_s·descale_dO, one reduction over (q head of the group, query);
//     D = rowsum(O8·dO8)·descale_o·descale_dO;  dP = (dO8·V8ᵀ)·descale_dO·descale_v;
//     amax_dP = max |dP| over all blocks of 128 keys, a pass of its own before any dS (its dP
//       blocks are not masked: masked keys count); scale_dP from it into e4m3 (its
//       get_fp8_scale_factor is the test's power-of-two rule; TE feeds its recipe's scale instead);
//     dS = P·(dP − D)·attn_scale; dS8 = e4m3(dS·scale_dP) (quantize_ds, the cuDNN backend's recipe);
//     dQ += (dS8·K8)·descale_k·descale_dP per block of 128 keys; dK = (dS8ᵀ·Q8)·descale_q·descale_dP;
//     dQ, dK, dV's amaxes, then each stored in the gradients' format at its scale.
// The model (every op binary32 as written, ⊗ one rounding, chains fma from +0; e4m3 and e5m2
//   products are exact in binary32):
//   q8, k8, v8, σ, lse, O8 = out/X_o and X_o exactly the forward's; dO8 = RN_G,sat(RN_32(dO ⊗ s_dO)),
//     G = te_grad_format, s_dO = RN_32(max_G/amax_dO) (current; scaling none: 1), or from
//     amax_history_do: RN_32(RN_32(max_G·2^−margin)/amax_h), amax_h the history's max (or most
//     recent: amax_compute_algo); X_dO = RN_32(1/s_dO).
//   p = exp(S ⊖ lse) (base 2: exp2(S₂ ⊖ lse ⊗ RN_32(log2 e))); P8 = RN_e4m3,sat(p ⊗ scale_s).
//   D = (chain_e O8·dO8 ⊗ X_o) ⊗ X_dO;  dP = (chain_e dO8·v8 ⊗ X_dO) ⊗ X_v.
//   amax_dP over every (row, key), masked keys included (the reference; te_ds_amax = "max-ds": max |dS|
//     over the visible keys, dS as below before its scale; "max-dp" the default); scale_dP = RN_32(448/amax_dP)
//     (current, as the forward's O), or TE's delayed recipe from amax_history_dp; X_dP = RN_32(1/·).
//   dS = (p ⊗ (dP ⊖ D)) ⊗ α32;  dS8 = RN_e4m3,sat(dS ⊗ scale_dP) (saturating: the reference's torch
//     cast would give NaN, reached only by a stale amax_history_dp or α ≥ ½).
//   dq (te_dq = "per-tile", default, the reference): per tile of 128 keys t_e = chain_j dS8·k8_je,
//     dq_e = dq_e ⊕ ((t_e ⊗ X_k) ⊗ X_dP); "chain": one chain through all keys, descaled once.
//   dk_j = (chain dS8_ij·q8_ie ⊗ X_q) ⊗ X_dP, dv_j = (chain P8_ij·dO8_ie ⊗ X_s) ⊗ X_dO, each one chain
//     over the group's q heads ascending, each head's rows ascending (a choice: _kv_reduce's order
//     is torch's).
//   dq, dk, dv: amax over the run, scale RN_32(max_G/amax) (current, as the reference) or from
//     amax_history_dq/_dk/_dv (the recipe as dO's; the amax reported stays this run's, what TE
//     folds into the history), stored as RN_G,sat(RN_32(g ⊗ s)) and reported as X·code (the value
//     the FP8 tensor stands for).
//   mma = "sm90-fp8": dP's dO8·V8ᵀ over d (dO8's subnormals at G's emin), dq's dS8·K8 over each
//     tile's keys, dk's dS8ᵀ·Q8 and dv's P8ᵀ·dO8 over the column's (head, query) sequence (groups of
//     32 running across heads) through pp_attn_te_sm90, promoted every 128; D = rowsum(O8·dO8) stays
//     an fp32 chain (an element-wise product and row sum, not a GEMM). Measured on
//     fp8-attention-bwd against te (outside bf16's tolerance, max, RMS): out 1.4% (0.054, 0.0010),
//     dq 1.4% (0.063, 0.0015), dk 3.5% (0.197, 0.0040), dv 0.4% (0.324, 0.0033); against the exact
//     gradients dq 90.29% → 90.26% (RMS 0.01809 → 0.01808), dk 90.07% → 90.06% (0.02601 →
//     0.02600), dv 88.74% → 88.73% (0.02771 → 0.02777): the FP8 stores, not the MMAs, set the error.
//   Stale histories, for comparison: amax_history_do = [0.05, 0.04] (dO's largest saturate): dq,
//     dk, dv 99.9%, 99.9%, 100% (max 1.75, 2.49, 4.28), against the exact gradients of the dO it
//     quantised 82.9%, 80.2%, 81.3%; amax_history_dq = _dk = _dv = [0.01]: 99.9%, 99.6%, 99.6%.
//   Masked keys are skipped (dS = 0 there: fma(0, ·) leaves a finite chain unchanged).
// Unknown, measured on fp8-attention-bwd (s 192, causal, GQA 4/2, d 32; gradients against the exact
//   gradients of the bf16 inputs, mismatch outside bf16's tolerance; see its baseline):
//   fp8-te: dq 90.3% mismatched, max |error| 0.189; dk 90.1%, 0.328; dv 88.7%, 0.408 (bf16 flash:
//     6.1%, 7.1%, 6.7%; max 0.0056, 0.0115, 0.0179); against the exact gradients of its quantised
//     q, k, v, dO: dq 85.4% (0.129), dk 84.6% (0.238), dv 84.1% (0.298).
//   te_grad_format e4m3: dq 86.4% (0.116), dk 86.1% (0.215), dv 83.6% (0.286); against the
//     quantised inputs 76.5%, 76.2%, 75.3%: e5m2's 2-bit significand costs more than e4m3's range.
//   te_dq chain: dq bit-identical after the store (e5m2 and e4m3; two tiles of 128 + 64 keys): it
//     moves dq by binary32 ulps (tests/test_attention_te_fp8_bwd.c) that the FP8 store hides.
//   te_softmax two-pass (the forward's knob) moves O8, so D: dq, dk differ from online on 20.5%,
//     20.7% (dv identical); te_exp base-2: every gradient bit-identical.
//   A stale amax_history_dp = [0.01] (dS saturates): dq 99.4%, max 1.77; dk 98.7%, 2.35; dv unmoved.
//   scale_dP's amax (te_ds_amax; the reference takes dP's, but its docstring calls max |ds_scaled|
//     a kernel's amax_dP contract): with dP's (default) dS8 uses little of e4m3 (run --ranges: amax
//     8 of 448, 2.0% of dS codes flushed to zero, 22.3% subnormal: |dS| ≪ |dP| since P ≤ 1 and
//     α = 1/√d); with dS's ("max-ds") 0.04% flushed, 0.5% subnormal, amax 448; yet dq max |error| only
//     0.189 → 0.158, dk 0.328 → 0.317, mismatch within 0.3% (dv unmoved): the e5m2 stores dominate.
// Order band (backward): cuDNN's orders are not known here either, so the band walks dP's and D's
//   dots over d (PP_ATTN_MMA_DP, PP_ATTN_MMA_TE_D), dQ's chain over each tile's keys
//   (PP_ATTN_MMA_DQ) and dK/dV's over the group's (head, row) steps (PP_ATTN_MMA_DKV) in chunks of
//   16 as the forward's (mma sm90-fp8: not walked, its groups are the model's); the recomputed p is
//   not moved. Seed 0: the plain chains (the baselines hold; tests/test_attention_te_order.c writes
//   the walks out by hand). Measured (fp8-attention-bwd, run --orders 8, 9 runs): fp8-te's dq, dk,
//   dv mismatch against the exact gradients 90.29%, 90.07–90.08%, 88.74%, max |error| the same in
//   all 9 to the digits printed: short chains of FP8 products are mostly exact in binary32 (a
//   coarse grid), and the e5m2 stores hide the rest, so its gradient conclusions are robust to
//   order. (On inputs spread over 2^−12 … 2^1 the chains do round and 15 of 16 seeds move them.)
// Not modelled: the backward's recomputed p's exp and log by ulps under the band; TE's amax
//   histories themselves (a run is one step: the
//   histories are the case's); padding, dropout, bias, the sink token; cuDNN's own FP8 accumulation
//   (mma sm90-fp8 bounds it).
// Range diagnostics (kernels/sites.h): d, dp (fp32), ds (dS8: e4m3, before and after), dq, dk, dv
//   (the FP8 stores; dk, dv per kv head), noted by a host pass over the rows (the same bodies) on
//   either device.
//   The per-tensor scale sites note the descale, as the forward's do: block_scale_do X_dO and
//   block_scale_ds X_dP (kernels/attention_te_bwd_exact.c, pp_attn_fp8_scale_note: fp32, `clamped`
//   where X is not a positive normal binary32), like the forward's block_scale_q/k/v (X per tensor,
//   src/ops/attention_fp8_ranges.c) and te's block_scale_p (X_s): the factor the kernel multiplies
//   by, one note per tensor (scale_dP itself is 448/amax rounded once, in range whenever X_dP is).
//   Exact (explain), each keeps both s and X = 1/s unrounded, the forward's rule too.
//
// ---- FP8 scaling schemes (the knob scaling with fp8 = fa3; kernels/attention_fp8.h) ----
// What follows a source and what is precprobe's own model, scheme by scheme. Every scheme keeps
// FA3's loop above (tiles, key order, max offset 8, exp2 argument, row sums of the binary32 p,
// epilogue); what changes is how q, k, v and P are quantised and where their scales are applied.
// The quantisation of q, k, v is on the host as for tensor-current (pp_attn_fp8_quantise_tensor,
// kernels/attention_plan.c plan_fp8_make), so every device reads the same elements and scales.
//   auto, tensor-current: as "FP8 (fp8 = fa3)" above (TE's Float8CurrentScaling, kernels/scaling.h).
//   none: T8 = RN_e4m3,sat(T), descales 1 (a cast with no scale, as torch's .to(float8_e4m3fn)
//     but saturating: FA3 reads what the caller gives it; precprobe saturates as TE's cast does).
//   tensor-delayed: TE's DelayedScaling recipe per tensor q, k, v (kernels/scaling.h cites
//     NVIDIA/TransformerEngine @799cf76 recipe/__init__.py DelayedScaling and @6b71a0a
//     delayed_scaling.cu): s_T = RN_32(RN_32(448·2^−margin)/amax) with amax from the case's
//     amax_history_q/_k/_v (max over the window, or most_recent), T8 = RN_e4m3,sat(RN_32(T·s_T)),
//     X_T = RN_32(1/s_T) as for current scaling: an outlier newer than the history saturates.
//   mx: OCP MX v1.0 §6.3 (kernels/scaling.h, the same rule as the scaled gemm's mx; knob mx_scale =
//     "te" takes TransformerEngine's round-up exponent rule instead, v->mx_rule): e4m3 elements,
//     an E8M0 scale 2^e per block of 32 along each GEMM's reduction: q and k along d (S = Q·Kᵀ),
//     v along the keys (P·V); P likewise along the keys, from the binary32 p of the block's keys
//     (pp_attn_fp8_p_block), after FA3's max offset (so p ≤ 2^8). The tensor descales are 1.
//   nvfp4: e2m1 elements, an E4M3 scale s per block of 16 (the same directions), and per tensor
//     q, k, v the fp32 global scale g = RN_32(amax/2688) (kernels/scaling.h's nvfp4, with its
//     caveat about TE's encode form); P's global scale is g_P = RN_32(256/2688) from the bound
//     p ≤ 2^8 (the max offset maps every row's max to 2^8): precprobe's own choice, as no kernel
//     knows P's amax before the row ends (SageAttention3, arXiv 2505.11594 §3, scales P per row
//     into e4m3·e2m1's range before its FP4 blocks for the same reason; read in the paper, not
//     its code).
// The block-scaled MMA (precprobe's own model; the shape of Blackwell's block-scaled MMAs, whose
//   scale factor covers one k-step of 32 (mxf8f6f4, m16n8k32, f32 accumulate) or 16 elements for
//   nvf4: llvm/llvm-project PR 170566, mlir NVVMOps.td's block-scale MMA ops; their internal
//   accumulation is not documented): per output element, the blocks along the reduction in
//   order, each block's products summed as FA3's chain from +0 (the elements' products are exact
//   in binary32), then scaled by the product of the two block scales and added once:
//     s_ij = Σ_blocks b (in order, from +0):  s ← s ⊕ RN_32(chain_b(q8·k8) · x_q,b · x_k,b)
//     o_c  = (the running o after FA3's rescale) ⊕ RN_32(chain_b(P8·v8_c) · x_P,b · x_v,b,c)
//   per block of 32 (mx) or 16 (nvfp4) keys (pp_gemm_block_add, the scaled gemm's block step).
//   The per-tensor factors stay where FA3 puts its descales: X_q·X_k (nvfp4: g_q·g_k) in the
//   exp2 scale σ', and X_v (nvfp4: RN_32(g_P·g_v)) in the epilogue's (1 ⊘ l) ⊗ X_v; mx has none.
//   Sources for the rest: none. No open attention kernel with MX or NVFP4 operands was found:
//   FlashAttention-3's hopper/ FP8 path is per-tensor (flash_api.cpp's q/k/v_descale);
//   TransformerEngine's FP8 attention goes through cuDNN (per-tensor: "FP8 (fp8 = te)" above) and its
//   MXFP8BlockScaling recipe quantises GEMM operands; SageAttention3 (thu-ml/SageAttention,
//   sageattention3_blackwell) is the nearest, an inference kernel for sm120 whose code was not read.
//   Key tiles: block_n must be a multiple of the block (checked), so blocks never straddle tiles.
// Arbitrary choices that move results, measured on fp8-attention (each run both ways):
//   MX's E8M0 exponent: OCP's floor(log2 amax) − 8 (here, as kernels/scaling.h) clamps a block's
//     largest element to 448 when its significand exceeds 1.75 (−12.5% at worst), P's row max
//     included when p lands just under 2^8; TE's MXFP8 recipe rounds the scale up instead
//     (float_to_e8m0(amax / max_norm), TransformerEngine docs/features/low_precision_training/
//     mxfp8/mxfp8.rst, "Scaling factors", read in a fork's copy; the exact rule in kernels/scaling.h,
//     now the knob mx_scale = "te"): with the round-up on q, k, v and P the mx variant's out
//     mismatch goes 82.2% → 78.0%, max |error| 1.40 → 1.16, and against its quantised inputs
//     0.50 → 0.052 (the floor's cost is nearly all P's clamped maxima; remeasured with the knob).
//   nvfp4's g_P from the bound 256 (vs g_P = 1, P's E4M3 block scales alone): out mismatch 94.1%
//     vs 94.4%, against the quantised inputs 70.0% vs 90.0% (max 0.188 vs 0.161).
//   Not measured: the block-scaled MMA's order (one chain over the dequantised products instead
//     of per-block chains and block adds); a GPU's block-scaled tensor cores may keep fewer bits.
// Range diagnostics (kernels/sites.h): quant_q, quant_k, quant_v (each element over its scale
//   before and after its rounding) and block_scale_q/k/v (X per tensor; per block 2^e or s, with
//   `clamped` for a scale at its format's limit) are noted on the host (src/ops/
//   attention_fp8_ranges.c), block_scale_p and P's elements (site p) in the kernel.
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

// ---- Rounding sites (kernels/sites.h names them; range diagnostics and `explain` use them) ----
//   scores        S after the Q·Kᵀ GEMM: unfused RN_F(RN_c(α_c·acc)); flash the raw fp32 dot
//   scaled_scores x = layer_scale(pb_relax(S)) (unfused: F or fp32 by the softmax knob)
//   softmax_in    the exponent's argument x − m (flash: the FFMA argument, base 2)
//   p             P as stored (RN_F), forward and backward
//   row_max, row_sum   m and the sum of exp per row (flash: after the last tile / quad reduce)
//   out_partial   a CP step's partial out;   lse   each block's (each CP step's) lse
//   cp_lse_merge, cp_out_merge   the CP merges' running lse and out accumulator (cp_accum)
//   out           the final store;   d, dp, ds   the backward's D, dP, dS
//   dq, dk, dv    the block partials dq', dk', dv (per q head);   cp_dq_acc, cp_dkv_acc  (cp_grad_accum)
//   softmax_scale, row_inv, out_scale   FA3 fp8's σ', the epilogue's 1/l and its scale (1/l)·X_v
//   pv_acc, dq_acc, dkv_acc   the GEMM chains of P·V (flash's running o), dq and dk/dv (explain only)
//   quant_do, block_scale_do, block_scale_ds   fp8 te's backward: dO8, X_dO, scale_dP and X_dP
//   (What `explain` keeps for each, in binary64 where the binary32 value is not exact: "Exact sites".)
//
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
// Whose FlashAttention-2 launch templates pick the flash tiles (pp_attn_flash_tiles): sm90 (H100,
// the default) and sm80 (A100) run the same kernels; sm86 stands for sm86/sm89 (99 KB of shared
// memory per block: smaller tiles at some head dimensions).
typedef enum { PP_ATTN_ARCH_SM90 = 0, PP_ATTN_ARCH_SM80, PP_ATTN_ARCH_SM86 } pp_attn_arch;
// Which TransformerEngine's context-parallel merges (see "Context parallel" above): today's
// (the default), the one before PR 821 (summer 2024), or PR 821's proposal (never merged).
typedef enum { PP_ATTN_CP_TE_MAIN = 0, PP_ATTN_CP_TE_2024, PP_ATTN_CP_PR_821 } pp_attn_cp_flavour;
// FP8 attention (see "FP8 (fp8 = fa3)" above; kernels/attention_fp8.h): none (the default, today's
// arithmetic), or FlashAttention-3's FP8 forward.
// or TransformerEngine's FP8 DPA forward (see "FP8 (fp8 = te)"; kernels/attention_te_fp8.h).
typedef enum { PP_ATTN_FP8_NONE = 0, PP_ATTN_FP8_FA3, PP_ATTN_FP8_TE } pp_attn_fp8;
// fp8 = te's unknowns inside cuDNN's closed kernel (see "FP8 (fp8 = te)"), each a knob:
// the softmax: online (running max, unnormalised P, O divided by the row sum at the end: the
// default, cudnn-frontend's reference) or two-pass (max and sum first, P normalised before its scale);
typedef enum { PP_ATTN_TE_ONLINE = 0, PP_ATTN_TE_TWO_PASS } pp_attn_te_softmax;
// the exponential's base: e (the reference's torch.exp, default) or 2 (scores pre-multiplied by log2 e);
typedef enum { PP_ATTN_TE_EXP = 0, PP_ATTN_TE_EXP2 } pp_attn_te_exp;
// P8·V8: per key tile from +0, descaled and added to the running O (the reference, default), or
// one fp32 chain through the running O (an MMA accumulator), descaled once after the last key.
typedef enum { PP_ATTN_TE_PV_BLOCK = 0, PP_ATTN_TE_PV_CHAIN } pp_attn_te_pv;
// fp8 = te's backward: dQ per key tile of 128, descaled and added (cudnn-frontend's reference, the
// default), or one fp32 chain through every key, descaled once (kernels/attention_te_fp8_bwd.h).
typedef enum { PP_ATTN_TE_DQ_BLOCK = 0, PP_ATTN_TE_DQ_CHAIN } pp_attn_te_dq;
// fp8 = te's key tile when block_n is 0: cuDNN's tile is not known; 128 keys (precprobe's choice).
#define PP_ATTN_TE_BLOCK_N 128
// How fp8 = fa3 scales q, k, v (and P) before its e4m3 (nvfp4: e2m1) MMAs (see "FP8 scaling
// schemes" above; kernels/attention_fp8.h). auto (0, the default): tensor-current, FA3's per-tensor
// descales as before the knob existed; none: cast as they are (descales 1).
typedef enum {
    PP_ATTN_FP8_SCALING_AUTO = 0,
    PP_ATTN_FP8_SCALING_NONE,
    PP_ATTN_FP8_SCALING_TENSOR,
    PP_ATTN_FP8_SCALING_DELAYED,
    PP_ATTN_FP8_SCALING_MX,
    PP_ATTN_FP8_SCALING_NVFP4
} pp_attn_fp8_scaling;
// The accumulation of FA3's two FP8 GEMMs (the mma knob; see "FP8 (fp8 = fa3)"): the binary32 fma
// chain (the default), or Hopper's FP8 wgmma accumulation as measured (kernels/sm90_fp8_mma.h).
typedef enum { PP_ATTN_FP8_MMA_CHAIN = 0, PP_ATTN_FP8_MMA_SM90 } pp_attn_fp8_mma;

typedef struct pp_attn_variant {
    pp_format_id format;  // PP_FMT_FP16, PP_FMT_BF16, PP_FMT_FP32: storage of every stored tensor
    pp_attn_kernel kernel;
    int block_m, block_n;  // flash forward tiles; 0: the arch's (pp_attn_flash_tiles)
    pp_attn_arch arch;     // picks the flash tiles, forward and backward
    pp_attn_accum accum;
    pp_attn_scale scale;
    int qk_layer_scaling;  // L ≥ 1 (0 means 1); unfused only
    pp_attn_softmax softmax;
    pp_attn_max max_subtract;
    int cp_world;                          // 1 (or 0) = no context parallelism
    pp_format_id cp_accum, cp_grad_accum;  // v->format (TE then and now) or PP_FMT_FP32 (as PR 821 proposed)
    pp_attn_cp_flavour cp_flavour;         // the lse merge (and the out merge's view of it)
    int sigma_given;
    double sigma;  // default: 1/√d as the exact real, rounded where the variant rounds it
    int pb_alpha;  // PB-Relax's A (0 means 32, CogView's value)
    pp_attn_engine engine;  // ours (0, the default) or cublas (GPU only; unfused, no CP)
    uint64_t order_seed;    // 0: the nominal arithmetic; else one admissible order (see "Order band")
    pp_site_mask exact_sites;  // 0: every rounding; else these sites exact (see "Exact sites")
    pp_attn_fp8 fp8;        // none (0, the default) or fa3 (flash forward only, bf16 out, cp_world 1)
    pp_attn_fp8_scaling fp8_scaling;  // fa3 only: auto (0: tensor-current), none, delayed, mx, nvfp4
    double fp8_delayed_s[3];  // tensor-delayed: TE's scales s of q, k, v from the recipe (pp_delayed_scale)
    pp_attn_fp8_mma mma;    // fp8 = fa3 or te: the fp32 chain (0, the default) or Hopper's FP8 accumulation
    pp_mx_rule mx_rule;     // scaling mx: the E8M0 exponent rule, OCP's floor (0) or TE's round-up
    // fp8 = te (see "FP8 (fp8 = te)"); zero is the documented default of each
    pp_attn_te_softmax te_softmax;
    pp_attn_te_exp te_exp;
    pp_attn_te_pv te_pv;
    int te_rescale;      // online: the lazy-rescale threshold, log2 units (0: rescale at every new max)
    double te_scale_s;   // P's scale (TE's recipe from amax_history_s; 448 from the bound P ≤ 1)
    double te_scale_o;   // O's scale from amax_history_o; 0: current, from this run's amax_o
    // fp8 = te's backward (see "FP8 (fp8 = te)", "Backward:"); zero is the documented default of each
    int te_grad_e4m3;    // dO, dQ, dK, dV in e4m3 (1) or e5m2 (0: TE's default recipe, HYBRID)
    double te_scale_dp;  // dS's scale from amax_history_dp; 0: current, from this run's dP amax
    pp_attn_te_dq te_dq; // dQ per key tile (0, the reference) or one chain
    int te_ds_amax;      // scale_dP from max |dP| (0: the reference's pass) or from max |dS| (1)
    // TE's delayed recipe for dO and the three gradient stores (amax_history_do/_dq/_dk/_dv, in
    // te_grad_format); 0: current, from this run's amax of that tensor (the default)
    double te_scale_do, te_scale_dq, te_scale_dk, te_scale_dv;
} pp_attn_variant;

// Exact sites (precprobe explain; kernels/exact_sites.h, names in kernels/sites.h). Two kinds:
// (1) Stores into a reduced format F (or cp_accum, cp_grad_accum) of a binary32 value: made exact,
// the store does not round (pp_attn_site_fmt: the site's format becomes fp32, the identity on
// the binary32 opmath value). Where the exact value is not that binary32 value, or where it is
// carried to a later step, it is kept in binary64 in a shadow of the binary32 buffer
// (attention_threads.h, the launch's *64 pointers; kernels/attention_plan.c allocates one only
// when an explain run makes its site exact, and downloads the output from it), as AdamW's state
// (kernels/adamw_exact.h). The value kept per store:
//   out          flash: o_c·inv (FA3 fp8: o_c·s), the exact binary64 product of the epilogue's two
//                binary32 factors (pp_attn_fp8_flash_out64), not RN_F(RN_32(·)); unfused: the P·V
//                chain's value (binary32 already: nothing more to keep); CP: the merged
//                accumulator (binary64 under cp_out_merge). Read as binary64 by the flash
//                backward's D = dO·O and by the comparison (the out output).
//   out_partial  CP: each ring step's o·inv as out above, read as binary64 by the out merge
//   lse          m·α_32 + log l (flash), (m + log sum) + shift (unfused), FA3 fp8's lse (kind 2
//                below): binary64, kept for the lse output and read as binary64 by the flash
//                backward's P (the argument's RN_32(lse·log2e_32), or in binary64 with softmax_in
//                exact) and, CP, by the lse merge (each step's) and the out merge's correction
//   cp_lse_merge the running merged lse, binary64 (pp_attn_cp_lse_merge64, every flavour;
//                te-2024 already is), read by the out merge's correction exp(lse_i − lse) (its
//                argument in binary64, the factor rounded once to binary32) and kept to the lse
//                output and the CP backward's P (te-2024 rounds it to fp32 after the ring: exact,
//                it does not)
//   cp_out_merge the out merge's accumulator kept in binary64 (acc + t; t = RN_32(out_i·e) stays
//                the kernel's binary32 product); out is then RN_F(acc) once, or acc (out exact)
//   dq, dk, dv   the backward chains' end values α·acc (or acc; exact binary64 products) for the
//                block partials dq', dk', dv; their GQA group sum in binary64 (one q head: the
//                partial itself), and the store RN_F(Σ) after it — a plain run's dk, dv and a CP
//                step's partial before the accumulator — is the site's store too; plain: the
//                prescale's backward (RN_F(RN_32(s·x)), or a copy for s = 1) gives the output
//   cp_dq_acc, cp_dkv_acc  the CP gradient accumulators in binary64 (acc + g), and their final
//                RN_F(acc) is the site's too: the accumulator reaches the output
//   scaled_scores, p, d, ds, row_sum (naive)  the binary32 opmath value (the store's input is
//                binary32; nothing finer exists to keep): the unfused kernel's PB-Relax /
//                layer-scaling stores, every RN_F of P, the naive softmax backward's D stores,
//                dS's stores, the naive row sum's RN_F per step (the unfused S and dP stores go
//                with their GEMM chains: kind (3))
// An op that reads a binary64 shadow but whose own result still rounds (not a site, or its site
// not exact) computes in binary64 from its operands and rounds as the kernel does: RN_32 of the
// binary64 value, then the store (pp_attn_cp_lse_merge_r, pp_attn_cp_out_step_d; for binary32
// operands that is the kernel's binary32 op bit for bit: a sum, difference, product or quotient of
// binary32 values rounded to binary64 first is still correctly rounded to binary32, 53 ≥ 2·24 + 2);
// a chain's FMA reading one (D = dO·O on the binary64 out) is RN_32 of the binary64 fma, a double
// rounding (an ulp_32 off fmaf's one rounding where the binary64 value lies next to a binary32
// midpoint; the kernel has no such op).
// (2) Scalar binary32 steps of the softmax and its lse, made exact by computing them in binary64
// (the constants σ·log2 e, α_32, log2 e, ln 2 stay the kernel's binary32 values: they are not sites):
//   softmax_in   the exponent's argument: flash fwd s·sl2 − ms, flash bwd s·sl2 − lse·log2e_32,
//                the tile correction (m_old − m_new)·sl2, unfused x − m (naive: no RN_F of it);
//                exp of the binary64 argument is the C library's binary64 exp/exp2, rounded once to
//                binary32 (the value feeds P's own site)
//   row_max      flash: ms = m·sl2 kept in binary64 (m itself, a max, is exact: the unfused
//                kernel's row max has no rounding, so explain offers row_max on flash only);
//                with softmax_in still rounding, the argument is RN_32 of the binary64 fma (a
//                double rounding: an ulp_32 off one rounding when the binary64 value lies next to
//                a binary32 midpoint)
//   lse          the block's lse, m·α_32 + log l (flash) or (m + log sum) + shift (unfused), in
//                binary64, kept in binary64 as (1) says
//   cp_lse_merge as (1) says
// FA3 fp8 (fp8 = fa3; attention_fp8.h, PP_ATTN_FP8_SOFTMAX_SITES, pp_attn_fp8_*_x): its softmax
// scalars, each in binary64 when exact (σ' binary64 flows into every step that multiplies by it):
//   softmax_scale σ' = sl2·X_q·X_k in binary64 (the kernel: RN_32(sl2·RN_32(X_q·X_k))); offered
//                where the descales round it (not with scaling none or mx: X = 1)
//   row_max      the max offset ms = m·σ' − 8 in binary64 (the kernel: fmaf(m, σ', −8))
//   softmax_in   the exp2 argument s·σ' − ms and the correction's (m_old − m_new)·σ', binary64;
//                2^x of it in binary64, rounded once to binary32 (P's own site follows)
//   row_sum      the 4 partial row sums l_q ⊕ p and their reduce, binary64 (the rescale l_q·corr too)
//   row_inv      the epilogue's 1/l in binary64 (the kernel: 1 ⊘ l)
//   out_scale    s = (1/l)·X_v in binary64 (the kernel: RN_32 of it)
//   lse          m·σ'·ln2_32 + log(l·2^−8) in binary64 (the kernel: fma(m, RN_32(σ'·ln2_32), log(l ⊗ 2^−8)))
// With binary64 inputs but its own site rounding, each step is RN_32 of the binary64 value (fmaf
// where every operand is binary32: the kernel's op).
// TransformerEngine's fp8 (fp8 = te; attention_te_fp8_x.h pp_attn_te_row_x, the host steps in
// attention_te_exact.c): its own row loop, so a second body: the same steps in binary64 variables,
// each rounded as the kernel rounds it unless its site is exact (binary32 ops on binary32 operands
// are the kernel's ops, so mask 0 gives pp_attn_te_row's bits: tests/test_explain_attention_te.c,
// test_explain_paths.c on five te variants); the CPU device takes it for any non-zero mask, the
// GPU refuses one. Exact, each kept in binary64 and read as such by every later step:
//   quant_q/k/v  the input itself, X = 1 (as FA3 fp8's)
//   block_scale_q/k/v  (tensor-current, -delayed) s = 448/amax unrounded (delayed: the recipe's s),
//                X = 1/s instead of RN_32(1/s); the elements still cast RN_e4m3,sat(RN_32(x·s))
//   softmax_scale σ = X_q·X_k·α (base-2: ·log2 e) with α the binary64 softmax scale, not α_32
//   scores       S's chain over d: exact in binary64 for e4m3 elements (each product a multiple of
//                2^−18 below 2^18, d ≤ 256 of them: 44 bits); bf16 inputs (quant exact) round by
//                2^−53 per step there
//   softmax_in   x = acc·σ and the argument x − m
//   row_max      online: the threshold test m_b − m, the correction's argument m − m_new and its exp
//                (two-pass: a plain max, no correction: not offered)
//   exp          p = exp(x − m) in binary64 (the C library's exp, within an ulp of binary64), not
//                RN_32 (nor the order band's draw on it)
//   row_sum      the tile sums ts (two-pass l), l·corr and l + ts
//   p            P8 = p·scale_s: neither the binary32 product nor the e4m3 cast and its saturation
//   block_scale_p X_s = 2^τ/scale_s instead of RN_32(1/scale_s)·2^τ
//   out_partial  P8·V8's chains (exact as S's for e4m3 P8), their descales, O's sum, O·corr, O·X_sv
//   row_inv      the division O ⊘ max(l, 1) (two-pass: p ⊘ l)
//   lse          m (·ln 2) + log l (the order band's log draw gone)
//   out_scale    scale_o = 448/amax_o unrounded (a given amax_history_o: its scale), X_o = 1/scale_o
//   out          out = O (no e4m3 store)
// An op whose operands include a binary64 value but whose site rounds is RN_32 of the binary64 op
// (fmaf, exp, log: a double rounding, an ulp_32 off one rounding next to a midpoint). Every site
// exact: binary64 throughout, the exact attention of the inputs within ((4d + 16)·A + 2n + 14)·2^−53
// of max|v| (A = α·max_j Σ|q·k|, n keys; the derivation above every_site_exact_is_exact_attention);
// every site but the quantisation's: of the quantised inputs within the same bound.
// Its backward (passes fwd+bwd; attention_te_fp8_bwd_x.h, host steps attention_te_bwd_exact.c
// after the forward's binary64 run under the same mask, whose O8 (out exact: O, X_o = 1), lse
// (binary64 with lse exact) and P's scale it reads): the forward's sites above also act on the
// backward's recomputed P (scores, softmax_scale, softmax_in, exp; p for P8 = RN_e4m3,sat(RN_32(p ⊗
// scale_s)); block_scale_p for its X_s = RN_32(1/scale_s), no 2^τ), and exact it keeps:
//   quant_do     dO itself, X_dO = 1 (as quant_q)
//   block_scale_do  s_dO = max_F/amax_dO unrounded, X_dO = 1/s_dO (scaling none: not offered, X = 1)
//   d            D's chain of O8·dO8 and its two descales, binary64
//   dp           dP's chain of dO8·V8 and its two descales, binary64
//   ds           dS = p·(dP − D)·α (α binary64 with softmax_scale exact) times scale_dP, no binary32
//                step and no e4m3 cast (nor its saturation or flush)
//   block_scale_ds  scale_dP = 448/amax unrounded (amax_history_dp: its scale), X_dP = 1/scale_dP
//   dq_acc       each key tile's chain of dS8·K8, its descales and the sum over tiles (te_dq chain:
//                the one chain and its descales), binary64
//   dkv_acc      the dk and dv chains over the group's (head, row) pairs and their descales
//   dq, dk, dv   the gradient itself: no amax scale, no e5m2 (e4m3) store
// Every site exact: binary64 throughout, the exact gradients of the inputs within K·2^−53·M per
// element (M = α Σ_j P_ij·W_ij·|k_j| for dq, likewise for dk, Σ_i P_ij·|dO_i| for dv; K from d, n
// and A as the forward's: the derivation above every_site_exact_is_exact_backward in
// tests/test_explain_attention_te_bwd.c); on fp8-attention-bwd dq, dk, dv within 5.3e-15.
// With mma = "sm90-fp8" the GEMMs whose site is not exact (dp's dO8·V8, dq_acc's dS8·K8, dkv_acc's
// P8ᵀ·dO8 and dS8ᵀ·Q8, scores' recomputed S) go through the kernel's Hopper model on the same
// operands, gathered as the kernel gathers them (pp_attn_te_sm90_xe); TE's delayed recipe's given
// scales (amax_history_do, _dq, _dk, _dv) are used as given (block_scale_do exact: X_dO = 1/s in
// binary64). Mask 0 is the kernel's bits with both (the test's 15 settings).
// (3) The GEMM accumulation chains (FA2 flash and the unfused kernel, fp8 = none; FA3 fp8 below;
// attention_threads.h), made exact by
// running the chain in binary64 — one binary64 fma per term from +0 (each product of two binary32
// values is exact in binary64; only the additions round) — and carrying the binary64 value to every
// reader, which computes in binary64 from it and rounds as the kernel does (the convention above):
//   scores       flash's S = q'·k' over d, forward and the backward's recomputation: the max reads
//                RN_32(S) (m only shifts the exponent: any m is the same softmax), the exponent's
//                argument reads S in binary64 (pp_attn_flash_p_s64, pp_attn_bwd_p_s64)
//   pv_acc       the running o_c = fma(P, v, o_c) across keys and tiles, and its rescale o_c·corr,
//                in binary64 (the plan's Oacc64, laid out as O); the epilogue's o_c·inv reads it
//                (one binary64 rounding), then out's store
//   scores, dp   (unfused) the S = q'·k' and dP = dO·v GEMMs' chains (fp32 or storage accumulation
//                alike) and their store: the binary64 chain rounded once into the binary32 buffer
//                (S: RN_32(α_c·chain), the product in binary64); no binary64 shadow of S or dP, so
//                the softmax and dS read that binary32 value (pp_attn_r_row_dots)
//   pv_acc       (unfused) the P·V GEMM's chain over the keys in binary64, RN_32 then out's store;
//                with out exact the binary64 chain itself is kept in out's shadow (pp_attn_r_unf_pv)
//   dp, d        flash backward's dP = dO·v_j and D = dO·O (on O's binary64 shadow when out is
//                exact); dS = p·(dP − D) then in binary64, RN_32 once (pp_attn_bwd_ds64): dS has no
//                binary64 shadow, so with ds exact too the dq, dk chains read that binary32 dS
//   dq_acc       every backward's dq chain over the keys (flash: the key blocks and their sum in
//                one binary64 chain), then RN_32 and the kernel's end (RN_F, α), or with dq exact
//                α·acc in binary64 (pp_attn_chain_end64)
//   dkv_acc      the dk and dv chains over the query rows likewise (flash: FA2's row-block order)
//   row_sum      (unfused, softmax fp32 or storage) the row sum Σ e_j in binary64; P = RN_32(e/sum)
//                then its store, the lse (m + log sum) + shift in binary64 (lse exact) or the
//                kernel's binary32 steps on RN_32(log sum) (pp_attn_softmax_prob_s64, pp_attn_lse_*)
// The bound: a binary64 chain of n terms is within γ_n·Σ|terms| (γ_n = n·2^−53/(1 − n·2^−53)) of the
// exact sum: for d, s ≤ 2^20 about 2^−33·Σ|terms|, where the fp32 chain's is 2^−4 (γ_n at 2^−24);
// the residual left with every site exact is P's binary32 exp2 (P keeps binary32) and dS's RN_32,
// both 2^−24 relative (tests/test_explain_attention_chains.c checks |out − ref| ≤ 2^−22·max|v|).
//   d (unfused) the softmax backward's fp32 D = Σ dP·P (softmax fp32 or storage) in binary64, read
//                by dS in binary64 (pp_attn_softmax_bwd_dx64); the naive D's stores are kind (1)
// Not instrumented: the chains' order band (binary64 chains
// run c, j increasing, whatever the order seed: the order moves them by binary64 roundings only).
// FA2 flash (attention_threads.h pp_attn_flash_finish_sum_x):
//   row_sum      the 4 partial row sums in binary64 (their rescale l_q·corr too), reduced in the
//                kernel's tree, in binary64; the epilogue's inv and lse read that l
//   row_inv      the epilogue's 1/l in binary64 (the kernel: 1 ⊘ l); out_c = RN_F(RN_32(o_c·inv)),
//                or the binary64 o_c·inv with out exact
// FA3 fp8 (fp8 = fa3; attention_threads.h pp_attn_flash_dots64, pp_attn_fp8_block_pv, the flash
// loop's od; attention_fp8.h pp_attn_fp8_p_s64, pp_attn_fp8_finish_x), its two GEMMs under either
// mma (the fp32 chain or Hopper's truncating groups: exact, neither is run):
//   scores       S = q8·k8 over d as one binary64 chain from +0, c increasing: exact for e4m3 (each
//                product a multiple of 2^−18 below 2^18, d ≤ 256 of them: 44 bits) and e2m1
//                elements; mx, nvfp4: each block's binary64 chain times x_q,b·x_k,b (exact: powers of
//                two, or E4M3 scales), the blocks summed in binary64, so the block add's RN_32 and ⊕
//                go too. The per-tensor factors stay in σ' = sl2·X_q·X_k, where the kernel folds
//                them (tensor-current, -delayed: X_q·X_k; nvfp4: g_q·g_k; none, mx: 1), so only the
//                chain's roundings go; σ' itself is site softmax_scale. The max reads RN_32(S) (as
//                FA2's: m only shifts the exponent; lse = m·σ'·ln 2 + log(l/2^8) uses the same m);
//                the exp2 argument fma(S, σ', −ms) reads S in binary64, rounded once to binary32
//                unless softmax_in is exact (an S that is a binary32 value takes the kernel's fmaf)
//   pv_acc       the running o_c in binary64 (the plan's Oacc64): the tile rescale o_c·corr, the
//                chain fma(P8_j, v8_jc, o_c) over the keys (P8 as P·V reads it: e4m3, or p itself
//                with site p exact), mx, nvfp4: each block's binary64 chain times x_P,b·x_v,b,c
//                added in binary64; X_v (nvfp4: g_P·g_v) stays in the epilogue's s = (1 ⊘ l) ⊗ X_v,
//                which reads o in binary64: out = RN_bf16(RN_32(o·s)), or o·s kept (out exact)
// Chains with nothing to round give the kernel's bits (tests/test_explain_attention_fp8_chains.c:
// every scaling × mma × causal × GQA, 333 keys across FA3's 160-key tiles). Every fa3 site exact:
// what rounds is P's binary32 2^x (|δ| ≤ u = 2^−24) and the kernel's binary32 constant sl2 =
// RN_32(σ32·log2 e) inside σ' (not a site: ≤ 2u relative, moving each argument x_j = (S_j − m)·σ'
// by ≤ 2u·|x_j|), so out is within (2 + 4·ln 2·log2 n)·u·max|v| of the exact attention of the
// inputs (n keys; Σ_j w_j·|x_j| ≤ log2 n for softmax weights), and every site but q, k, v's
// quantisation within the same of the exact attention of the quantised values X·B·E: measured
// 1.3e-8 to 1.8e-8·max|v| on every scaling and mma (the test's bound at n = 200: 1.4e-6); on
// fp8-attention out's max |error| 4.9e-8 with every site exact (all five fa3 variants). With the
// chains rounding (the rest exact) the error is 0.7e-7 to 3.1e-7·max|v| under the fp32 chain and
// 4e-4 to 1.3e-3·max|v| under sm90-fp8.
// With exact_sites = 0 every step is the one above, bit for bit.

// 2^x and e^x of a binary64 argument rounded once to binary32 (exact sites, kind 2): the C
// library's (CUDA's) binary64 exp2/exp, within an ulp of binary64, then one conversion.
PP_HD static inline float pp_attn_exp2_64(double x)
{
    return (float)exp2(x);
}
PP_HD static inline float pp_attn_exp_64(double x)
{
    return (float)exp(x);
}

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
    float sl2;       // flash: RN_32(σ32·log2 e), FA2's scale_softmax_log2 (σ32 = alpha32)
} pp_attn_scalars;

// Flash tiles as FlashAttention-2's launch templates pick them for head dimension d (FA2 rounds d
// up to 32, 64, 96, 128, 160, 192, 256), the mask and the arch, without dropout. t[0] × t[1]:
// forward query rows × keys (flash_fwd_launch_template.h @ 01afd16, run_mha_fwd_hdim*); t[2] × t[3]:
// backward (flash_bwd_launch_template.h @ 073afd5, run_mha_bwd_hdim*: max_smem_per_block ≥ 144 KB on
// sm80 and sm90, 99 KB on sm86/sm89). v's block_m, block_n (nonzero) override the forward's.
PP_HD static inline void pp_attn_flash_tiles(const pp_attn_variant *v, int64_t d, int causal, int t[4])
{
    int sm8x = v->arch == PP_ATTN_ARCH_SM86, big = !sm8x;  // big: ≥ 144 KB of shared memory per block
    int fm = 128, fn = 64, bm = 64, bn = 64;
    if (d <= 32)
        fn = 128, bm = 128, bn = 128;
    else if (d <= 64)
        fn = 128, bm = big ? 128 : 64, bn = 128;
    else if (d <= 96)
        fm = sm8x && causal ? 64 : 128, bn = 128;
    else if (d <= 128)
        fm = sm8x && causal ? 64 : 128, fn = sm8x ? (causal ? 64 : 32) : 64, bn = big ? 128 : 64;
    else if (d > 192)  // 256: forward 128×64 on A100, 64×64 on H100 and sm86; backward 64×64, sm86 64×32
        fm = v->arch == PP_ATTN_ARCH_SM80 ? 128 : 64, bn = sm8x ? 32 : 64;
    t[0] = v->block_m > 0 ? v->block_m : fm;
    t[1] = v->block_n > 0 ? v->block_n : fn;
    t[2] = bm;
    t[3] = bn;
}

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
    // FA2's host computes softmax_scale (a float) × M_LOG2E in binary64 and stores a float
    // (flash_api.cpp:138); σ32 is alpha32 (1 for the prescaled variants: FA2 sees scale 1).
    s.sl2 = (float)((double)s.alpha32 * 1.4426950408889634);
    *out = s;
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Element steps

// RN_F(x) for a binary32 x, F = fp16, bf16 or fp32. fp16's normal range, 2^−14 ≤ |x| < 65504,
// is pp_round_mag32_'s common case with 13 dropped bits, written out (up iff rem + odd > 2^12: the
// carry of u + 0xFFF + odd; a < 65504's bits, so no carry reaches the sign), and ±0 is itself;
// the rest (subnormal, overflow, Inf, NaN) goes through pp_round_fp16_ne. The same bits
// (tests/test_attention_store.c), but short enough to inline in the per-element loops, where the
// out-of-line call GCC made of the generic body cost 6% of te-cp-821's CPU time (so, on the host,
// this is forced inline and the rare path kept out of line).
#if defined(__GNUC__) && !defined(__CUDACC__)
#define PP_ATTN_STORE_INLINE inline __attribute__((always_inline))
#define PP_ATTN_STORE_RARE static __attribute__((noinline, unused))
#else
#define PP_ATTN_STORE_INLINE inline
#define PP_ATTN_STORE_RARE static inline
#endif
PP_HD PP_ATTN_STORE_RARE float pp_attn_store_fp16_rare_(float x) { return pp_round_fp16_ne(x); }
PP_HD static PP_ATTN_STORE_INLINE float pp_attn_store(pp_format_id f, float x)
{
    if (f == PP_FMT_BF16)
        return pp_round_bf16_ne(x);
    if (f != PP_FMT_FP16)
        return x;
    uint32_t u = pp_f32_bits(x), a = u & 0x7FFFFFFFu;
    if (a - 0x38800000u < PP_FP16_MAX_BITS - 0x38800000u)  // 0x38800000: 2^−14
        return pp_f32_from_bits((u + 0xFFFu + ((u >> 13) & 1u)) & 0xFFFFE000u);
    return a == 0 ? x : pp_attn_store_fp16_rare_(x);
}

// The format a store at site s rounds to: f, or fp32 (the identity on binary32 values) when s is
// exact under x ("Exact sites").
PP_HD static inline pp_format_id pp_attn_site_fmt(pp_site_mask x, int s, pp_format_id f)
{
    return pp_site_exact(x, s) ? PP_FMT_FP32 : f;
}

// RN_F(RN_32(s·x)): a tensor times a scalar in PyTorch (fp32 opmath, stored in F).
PP_HD static inline float pp_attn_mul_store(pp_format_id f, float s, float x)
{
    return pp_attn_store(f, s * x);
}

// The unfused score of one element from its GEMM accumulator (fp32 or storage accumulation).
// fp32: RN_F(RN_32(α_c·acc)) (pp_gemm_epilogue_fp32). α_c is then a binary32 value (the fp32
// compute type's), so α_c·acc, a product of two binary32 values, is exact in binary64 and its
// RN_32 is the binary32 product's one rounding (subnormals, overflow and a NaN acc alike: the
// product returns acc's NaN quieted, as the binary64 product and its conversion do); RN_F of a
// binary32 value is pp_attn_store's for F = fp16, bf16, fp32. The same bits as the generic
// epilogue (tests/test_attention_store.c), without pp_round's table lookup per score (14% of the
// unfused kernel's CPU time); any other F keeps the generic path.
PP_HD static inline float pp_attn_score_fp32(pp_format_id f, const pp_attn_scalars *s, float acc)
{
    if (f == PP_FMT_BF16 || f == PP_FMT_FP16 || f == PP_FMT_FP32)
        return pp_attn_store(f, (float)s->alpha_c * acc);
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

// 2^x rounded to binary32: FA2 calls exp2f under --use_fast_math, i.e. ex2.approx.ftz.f32, whose
// error (≈ 2 ulp, the SFU's table) cannot be reproduced without a GPU; this is the correctly
// rounded 2^x instead (binary64 arithmetic as pp_expf: n = nearest integer, r = (x − n)·ln 2,
// e^r by Taylor, one conversion), so FA2's exponent *argument* is bit-exact and its value is off
// by the SFU's error only. Same special values as pp_expf (−Inf → +0).
PP_HD static inline float pp_attn_exp2f(float x)
{
    if (x != x)
        return x;
    double xd = (double)x;
    xd = xd > 150.0 ? 150.0 : xd < -160.0 ? -160.0 : xd;
    const double SHIFT = 6755399441055744.0;  // 1.5·2^52
    double n = (xd + SHIFT) - SHIFT;          // nearest integer (|xd| ≤ 160: exact)
    double r = (xd - n) * 0.69314718055994530942;  // x − n exact, |r| ≤ ln2/2
    double p = pp_exp_taylor13(r);
    int ni = (int)n;  // 2^n: a binary64 normal for |n| ≤ 160
    double scale = pp_f64_from_bits((uint64_t)(ni + 1023) << 52);
    return (float)(p * scale);
}

// ---------------------------------------------------------------------------------------------
// Order band (issue 15): what the GPU leaves unspecified, drawn from order_seed ≠ 0 (0: nominal).
// Each perturbation is admissible, i.e. something a conforming GPU run could do, and a pure
// function of (seed, stream, row, key), so a run is reproducible and thread-count independent:
//   exp (stream FWD_P, BWD_P): each flash p = exp2(…) becomes r moved by k ulps, k ∈ {−2..2},
//     for normal finite r not next to the binade's ends of binary32 (ex2.approx's error is
//     ≤ 2 ulp; we compute the correctly rounded 2^x). Zero, subnormals, Inf and NaN are kept.
//   row sum (stream ROW_SUM): the 4 per-thread partial row sums of FA2's forward are added in a
//     seeded order ((a + b) + (c + d) over a permutation of l0..l3) instead of (l0+l2)+(l1+l3):
//     which key lands in which partial, and which lane pairs first, are layout choices.
//   log (stream LOG): the flash forward's log l, FA2's __logf (lg2.approx, 2^−21.41 absolute on
//     [0.5, 2], 3 ulps elsewhere), moved by j·2^−23 on [0.5, 2] and by j ulps elsewhere, j ∈ {−2..2}
//     (pp_attn_order_log); it reaches the lse, the CP merges and the backward's P through it.
//   dQ (stream DQ_BLOCKS): the flash backward's per-key-block partials of a dq row (FA2's
//     atomicAdd into dq_accum, whose order across blocks is the scheduler's) are added in a seeded
//     order of the blocks, i ↦ (a·i + c) mod nb with gcd(a, nb) = 1, instead of increasing.
//   MMA k-chunks (streams PP_ATTN_MMA_*, every GEMM of both kernels): FA2 multiplies with
//     mma.sync m16n8k16 (kernel_traits.h @ 0a4755e: MMA_Atom SM80_16x8x16_F32F16F16F32_TN, or
//     ..._F32BF16BF16F32_TN; TiledMMA tiles of K = 16) and its utils.h gemm / gemm_rs issue one
//     MMA per k-slice of 16 in increasing order into the fp32 accumulator (the `for i < size<2>(tCrA)`
//     loop). So across chunks the order is known, and inside a chunk the hardware sums 16
//     products and the accumulator in an order NVIDIA does not document: that is what may move.
//     Each GEMM's chain over its reduction [lo, hi) walks chunks of 16 indices, aligned to
//     multiples of 16 from the block's first index, in increasing order, and the indices inside a
//     chunk as 16·u + (a·r + c) mod 16, r = 0..15, with (a, c) the gemm op's draw
//     (kernels/gemm.h pp_gemm_order_chunk) keyed by (seed, GEMM, u): the same order for every output
//     element of that GEMM, as one instruction shape would. Indices of a chunk outside [lo, hi)
//     (masked keys, rows before a causal start, past the end) are skipped: zero products there.
//     Which sums, per GEMM (kernels/attention_threads.h):
//       S = Q·Kᵀ over d (forward scores, flash and unfused; the flash backward's recomputation has
//         its own draw, PP_ATTN_MMA_S_BWD), dP = dO·Vᵀ over d;
//       P·V over keys: flash, within each key tile, chunk by chunk (a chunk's p are computed first,
//         the row sums keep key order: they are per-thread register sums, not the MMA); unfused,
//         over the row's visible keys;
//       dQ = dS·K over keys: flash, within each key block (the blocks' order is "dQ" above);
//         unfused, the row's one chain;
//       dK = dSᵀ·Q and dV = Pᵀ·dO over query rows: flash, within each query block of bbm rows (the
//         blocks stay last-first, FA2's fixed m_block loop); unfused, one chain. dK and dV share one
//         draw (FA2's one TiledMmadKV; here one loop).
//     The unfused kernel's GEMMs are cuBLAS's in Megatron: tensor-core chunks of 16 likewise; a
//     split-K or another cuBLAS algorithm is not modelled (engine = "cublas" measures the real one).
// Not perturbed, because their order is fixed: the CP merges (below, "Context parallel": every
// step is a torch element-wise op, one thread per element over inputs in a fixed step order), the
// dk/dv blocks' order and FA2's D = rowsum(dO∘O) (its preprocess kernel's per-thread sums and fixed
// shuffle tree, not reproduced: an fp32 chain here), the softmax's max and sum in the unfused path
// (Megatron's warp butterfly: a fixed tree, modelled as a chain), the GQA and dk/dv group sums.
// Measured (te-cp-small, `run --orders 8`, each source alone in a build that switched the others off,
// then all; the widest band of a mismatch figure, in points, for the rank-3 CP comparisons against
// the non-CP run; each band a sample of 8 orders): exp2 ±2 ulp 0.20 (fp16; bf16 ≤ 0.04), log 0.11
// (bf16 ≤ 0.03; the lse's max-error band 2.0e-7 → 9.4e-7 wide with it), MMA k-chunks 0.15 (bf16
// ≤ 0.03), row-sum tree 0.03, dQ block order 0.01; all together 0.18 (0.16 against the exact
// reference). The bf16/fp16 vs fp32 accumulation gaps are 6.7–9.8 points: robust under all of it.
// Deviations left that are fixed orders or arithmetic (measured with and without, te-cp-small,
// nominal run): FA2's D = rowsum(dO∘O) as its preprocess sums it (8-element partials, then the xor
// butterfly) instead of one chain: no summary figure moves; dq rows whose exact gradient is 0 (a
// causal row 0: dP = D exactly when both sum in one order) become ±1e-7 instead of 0, so dq's
// max_ulp against those zeros explodes (1e33) while max_ulp_at_scale and every mismatch stay. The
// fuser's FMA in the CP out merge (fma(out_i, e, acc) instead of RN_32(out_i·e) + acc): no summary
// figure moves; one element of 65536 changes an ulp bin, mean |error| moves in the 7th digit. Not
// measured: Megatron's softmax butterfly (unfused kernel; no shipped CP case runs it), the empty
// row's +Inf lse (no shipped case has an empty row), cuBLAS's own algorithms (engine = "cublas" on
// a GPU; none was lent).
enum { PP_ATTN_ORDER_FWD_P = 1, PP_ATTN_ORDER_BWD_P = 2, PP_ATTN_ORDER_ROW_SUM = 3, PP_ATTN_ORDER_DQ_BLOCKS = 4,
       PP_ATTN_ORDER_LOG = 5 };

// The attention's GEMMs, each with its own draw of MMA k-chunk orders (see "Order band", MMA):
// S = Q·Kᵀ over d (forward, unfused scores), its recomputation in the flash backward, dP = dO·Vᵀ
// over d, P·V over keys, dQ = dS·K over keys, dK = dSᵀ·Q and dV = Pᵀ·dO over query rows (one
// order for both: FA2 runs them with one TiledMmadKV, and the emulation in one loop).
enum { PP_ATTN_MMA_S = 1, PP_ATTN_MMA_S_BWD = 2, PP_ATTN_MMA_DP = 3, PP_ATTN_MMA_PV = 4, PP_ATTN_MMA_DQ = 5,
       PP_ATTN_MMA_DKV = 6 };
// fp8 = te's row sums (kernels/attention_te_fp8.h; attention.h "FP8 (fp8 = te)", order band): not
// an MMA, but cuDNN's order of them is not known either, so they walk the same chunks of 16.
enum { PP_ATTN_MMA_TE_L = 7 };
// fp8 = te's backward D = Σ_e O8·dO8 (a row reduction, its order not known either); its dP, dQ and
// dK/dV GEMMs walk PP_ATTN_MMA_DP, _DQ, _DKV as FA2's do (attention_te_fp8_bwd.h).
enum { PP_ATTN_MMA_TE_D = 8 };

// The permutation of chunk `chunk` (indices 16·chunk … 16·chunk + 15 of the GEMM's reduction) of
// GEMM `gemm`: index 16·chunk + (a·r + c) mod 16 at step r; the gemm op's draw (kernels/gemm.h
// pp_gemm_order_chunk: a odd, Philox keyed by the seed), the GEMM's id in the chunk number's high
// bits so each GEMM draws its own. Seed 0: a = 1, c = 0.
PP_HD static inline void pp_attn_mma_chunk(uint64_t seed, int gemm, int64_t chunk, int64_t *a, int64_t *c)
{
    pp_gemm_order_chunk(seed, ((int64_t)gemm << 40) + chunk, a, c);
}

// The 128 random bits of (seed, stream, row, key): Philox keyed by the seed.
PP_HD static inline pp_philox4x32_ctr pp_attn_order_bits(uint64_t seed, uint32_t stream, int64_t row, int64_t key)
{
    pp_philox4x32_ctr c = {{(uint32_t)row, (uint32_t)((uint64_t)row >> 32), (uint32_t)key,
                            ((uint32_t)((uint64_t)key >> 32) & 0xffffffu) | (stream << 24)}};
    pp_philox4x32_key k = {{(uint32_t)seed, (uint32_t)(seed >> 32)}};
    return pp_philox4x32_10(c, k);
}

// exp's result r moved by k ∈ {−2..2} ulps of binary32 (seed 0: r itself; see "Order band").
PP_HD static inline float pp_attn_order_exp(uint64_t seed, uint32_t stream, int64_t row, int64_t key, float r)
{
    if (seed == 0)
        return r;
    uint32_t b = pp_f32_bits(r);
    uint32_t mag = b & 0x7fffffffu;
    if (mag < 0x00800002u || mag > 0x7f7ffffdu)  // zero, subnormal, near them, huge, Inf, NaN: kept
        return r;
    int k = (int)(pp_attn_order_bits(seed, stream, row, key).v[0] % 5u) - 2;
    return pp_f32_from_bits((uint32_t)((int64_t)b + k));
}

// The flash forward's log l (see "Order band", log): FA2's __logf is lg2.approx times ln 2, within
// 2^−21.41 absolute for l in [0.5, 2] and 3 ulps elsewhere (CUDA C++ Programming Guide, intrinsic
// functions); precprobe computes the correctly rounded log, r. Seed ≠ 0 moves r by j·2^−23 for l in
// [0.5, 2] and by j ulps elsewhere, j ∈ {−2..2} (|j·2^−23| ≤ 2^−22, inside the bound); r stays
// when not a normal finite number away from the binade's ends, or l is not a normal number.
PP_HD static inline float pp_attn_order_log(uint64_t seed, int64_t row, float l, float r)
{
    if (seed == 0 || !(l >= 0x1p-126f && l <= 0x1.fffffep127f))
        return r;
    int j = (int)(pp_attn_order_bits(seed, PP_ATTN_ORDER_LOG, row, 0).v[0] % 5u) - 2;
    if (l >= 0.5f && l <= 2.0f)
        return r + (float)j * 0x1p-23f;  // one binary32 rounding: within 2^−22 + 2^−25 < 2^−21.41 of r
    uint32_t mag = pp_f32_bits(r) & 0x7fffffffu;
    if (mag < 0x00800002u || mag > 0x7f7ffffdu)
        return r;
    return pp_f32_from_bits((uint32_t)((int64_t)pp_f32_bits(r) + j));
}

// The order of nb blocks (see "Order band", dQ): *a, *c with block(i) = (a·i + c) mod nb, a
// permutation of 0..nb−1; seed 0 gives a = 1, c = 0 (increasing).
PP_HD static inline void pp_attn_order_blocks(uint64_t seed, int64_t row, int64_t nb, int64_t *a, int64_t *c)
{
    *a = 1, *c = 0;
    if (seed == 0 || nb < 2)
        return;
    pp_philox4x32_ctr u = pp_attn_order_bits(seed, PP_ATTN_ORDER_DQ_BLOCKS, row, 0);
    *c = (int64_t)(u.v[0] % (uint64_t)nb);
    int64_t x = 1 + (int64_t)(u.v[1] % (uint64_t)(nb - 1));  // 1..nb−1, then the next coprime one
    for (;; x = x % (nb - 1) + 1) {
        int64_t g = x, h = nb;
        while (h) {
            int64_t t = g % h;
            g = h, h = t;
        }
        if (g == 1)
            break;
    }
    *a = x;
}

// The order band's permutation of the four row-sum partials of row `row` (seed ≠ 0): u picks one
// of the 24 in the factorial number system.
PP_HD static inline void pp_attn_order_row_sum_perm(uint64_t seed, int64_t row, int idx[4])
{
    uint32_t u = pp_attn_order_bits(seed, PP_ATTN_ORDER_ROW_SUM, row, 0).v[0] % 24u;
    for (int i = 0; i < 4; i++)
        idx[i] = i;
    for (int i = 0; i < 3; i++) {
        int j = i + (int)(u % (uint32_t)(4 - i));
        u /= (uint32_t)(4 - i);
        int t = idx[i];
        idx[i] = idx[j];
        idx[j] = t;
    }
}

// FA2's quad all-reduce of the 4 partial row sums: (l0 + l2) + (l1 + l3) at seed 0, else the same
// tree over a seeded permutation of the partials (see "Order band").
PP_HD static inline float pp_attn_order_row_sum(uint64_t seed, int64_t row, const float *l4)
{
    if (seed == 0)
        return (l4[0] + l4[2]) + (l4[1] + l4[3]);
    int idx[4];
    pp_attn_order_row_sum_perm(seed, row, idx);
    return (l4[idx[0]] + l4[idx[1]]) + (l4[idx[2]] + l4[idx[3]]);
}

// The same tree over binary64 partials (explain's row_sum exact: FA3 fp8's binary64 row sums).
PP_HD static inline double pp_attn_order_row_sum64(uint64_t seed, int64_t row, const double *l4)
{
    if (seed == 0)
        return (l4[0] + l4[2]) + (l4[1] + l4[3]);
    int idx[4];
    pp_attn_order_row_sum_perm(seed, row, idx);
    return (l4[idx[0]] + l4[idx[1]]) + (l4[idx[2]] + l4[idx[3]]);
}

// Flash (FA2 softmax.h:76-88): the row max m of the raw scores times σ·log2 e, one binary32
// multiply; 0 for m = −Inf (nothing visible yet), as FA2's Check_inf.
PP_HD static inline float pp_attn_flash_max_scaled(const pp_attn_scalars *sc, float m)
{
    return m == -INFINITY ? 0.0f : m * sc->sl2;
}

// Flash: p = exp2(s·σlog2e − m·σlog2e) on the raw score s, the argument one FFMA
// (fmaf(s, sl2, −ms): FA2's "tensor * scale - max_scaled", contracted by nvcc).
PP_HD static inline float pp_attn_flash_p(const pp_attn_scalars *sc, float s, float ms)
{
    return pp_attn_exp2f(fmaf(s, sc->sl2, -ms));
}

// Flash: the correction of the running sums when the raw max moves from m_old to m_new:
// exp2((m_old − m_new)·σlog2e), two binary32 ops (FA2 softmax.h:150-160); 0 when m_old = −Inf.
PP_HD static inline float pp_attn_flash_corr(const pp_attn_scalars *sc, float m_old, float m_new)
{
    return m_old == -INFINITY ? 0.0f : pp_attn_exp2f((m_old - m_new) * sc->sl2);
}

// Flash, at a new tile's max: the 4 per-thread partial row sums and the d accumulators times corr.
PP_HD static inline void pp_attn_flash_rescale(float *o, int64_t d, float *l4, float corr)
{
    for (int q = 0; q < 4; q++)
        l4[q] = l4[q] * corr;
    for (int64_t c = 0; c < d; c++)
        o[c] = o[c] * corr;
}

// Flash epilogue of a row with raw running max m and partial sums l4 (FA2 softmax.h:172-183):
// the quad all-reduce l = (l0 + l2) + (l1 + l3) (shfl_xor 2, then 1), inv = 1/l, out = RN_F(o·inv),
// lse = fma(m, σ32, log l) (FA2's row_max·scale + __logf(sum), contracted; __logf is approximate
// on the GPU, pp_logf here). A row that saw no key (seen = 0) or whose sum is 0 gives zeros and
// lse −Inf (FA2 writes +Inf; −Inf is what the CP merges and the backward test for).
// order_seed, row: see "Order band" (the partials' order).
PP_HD static inline void pp_attn_flash_finish(pp_format_id f, const pp_attn_scalars *sc, int seen, float m,
                                              const float *l4, float *o, int64_t d, float *lse,
                                              uint64_t order_seed, int64_t row)
{
    float l = pp_attn_order_row_sum(order_seed, row, l4);
    if (!seen || l == 0.0f) {
        for (int64_t c = 0; c < d; c++)
            o[c] = 0.0f;
        *lse = -INFINITY;
        return;
    }
    float inv = 1.0f / l;
    for (int64_t c = 0; c < d; c++)
        o[c] = pp_attn_store(f, o[c] * inv);
    *lse = fmaf(m, sc->alpha32, pp_attn_order_log(order_seed, row, l, pp_logf(l)));
}

// Flash backward (FA2 flash_bwd_kernel.h:536, softmax.h scale_apply_exp2<Scale_max = false>):
// P = exp2(s·σlog2e − RN_32(lse·log2e_32)) on the raw score s, one FFMA; all fp32.
PP_HD static inline float pp_attn_bwd_p(const pp_attn_scalars *sc, float s, float lse)
{
    return pp_attn_exp2f(fmaf(s, sc->sl2, -(lse * 1.44269502f)));
}
// ---- The same steps with exact sites (kind 2 above): softmax_in, row_max, lse in binary64.
// ms = m·sl2 exact in binary64 (two binary32 factors); 0 for m = −Inf as pp_attn_flash_max_scaled.
PP_HD static inline double pp_attn_flash_max_scaled64(const pp_attn_scalars *sc, float m)
{
    return m == -INFINITY ? 0.0 : (double)m * sc->sl2;
}

// p from the raw score s and a binary64 ms: the argument s·sl2 − ms in binary64 (one rounding, the
// fma's), then 2^x of it in binary64 (exact_arg: softmax_in exact) or of its RN_32 (row_max alone).
PP_HD static inline float pp_attn_flash_p64(const pp_attn_scalars *sc, float s, double ms, int exact_arg)
{
    double a = fma((double)s, (double)sc->sl2, -ms);
    return exact_arg ? pp_attn_exp2_64(a) : pp_attn_exp2f((float)a);
}

// The tile correction with its argument (m_old − m_new)·sl2 in binary64; 0 when m_old = −Inf.
PP_HD static inline float pp_attn_flash_corr64(const pp_attn_scalars *sc, float m_old, float m_new)
{
    return m_old == -INFINITY ? 0.0f : pp_attn_exp2_64(((double)m_old - (double)m_new) * sc->sl2);
}

// Flash lse = m·α_32 + log l in binary64 (l > 0): kept in binary64 when the lse's store is
// exact too (the binary64 shadows below), else rounded once for the binary32 buffer.
PP_HD static inline double pp_attn_flash_lse_d(const pp_attn_scalars *sc, float m, float l)
{
    return fma((double)m, (double)sc->alpha32, log((double)l));
}
PP_HD static inline float pp_attn_flash_lse64(const pp_attn_scalars *sc, float m, float l)
{
    return (float)pp_attn_flash_lse_d(sc, m, l);
}

// Flash backward's P with the argument s·sl2 − lse·log2e_32 in binary64 (lse: the forward's
// binary64 lse where its store was exact, else its binary32 value).
PP_HD static inline float pp_attn_bwd_p64(const pp_attn_scalars *sc, float s, double lse)
{
    return pp_attn_exp2_64((double)s * sc->sl2 - lse * (double)1.44269502f);
}

// Flash backward's P reading a binary64 lse with the argument still binary32: RN_32(lse·log2e_32)
// from the binary64 product (for a binary32 lse that is the binary32 multiply), then the FFMA as
// pp_attn_bwd_p.
PP_HD static inline float pp_attn_bwd_p_l64(const pp_attn_scalars *sc, float s, double lse)
{
    return pp_attn_exp2f(fmaf(s, sc->sl2, -(float)(lse * (double)1.44269502f)));
}

// Unfused e = exp(x − m) with x − m in binary64 (naive: e still stored in F).
PP_HD static inline float pp_attn_softmax_exp64(pp_format_id f, pp_attn_softmax sm, float x, float m)
{
    float e = pp_attn_exp_64((double)x - (double)m);
    return sm == PP_ATTN_SOFTMAX_NAIVE ? pp_attn_store(f, e) : e;
}

// Unfused lse = (m + log sum) + shift in binary64 (kept, or rounded once); −Inf for sum = 0.
PP_HD static inline double pp_attn_lse_d(float m, float sum, float shift)
{
    if (sum == 0.0f)
        return -INFINITY;
    return ((double)m + log((double)sum)) + (double)shift;
}
PP_HD static inline float pp_attn_lse64(float m, float sum, float shift)
{
    return (float)pp_attn_lse_d(m, sum, shift);
}

// The unfused softmax with its fp32 row sum exact (row_sum, softmax fp32 or storage: attention.h
// "Exact sites", chains): sum = Σ e in binary64 (each e binary32; a binary64 chain from +0, j
// increasing), read as binary64 by P and the lse. P = e/sum rounded once to binary32, then its store;
// the lse (m + log sum) + shift in binary64 (lse exact, pp_attn_lse_sd) or the kernel's binary32
// steps on RN_32(log sum) (pp_attn_lse_s64: log of the binary64 sum, rounded once).
PP_HD static inline float pp_attn_softmax_prob_s64(pp_format_id f, float e, double sum)
{
    return pp_attn_store(f, (float)((double)e / sum));
}
PP_HD static inline double pp_attn_lse_sd(float m, double sum, float shift)
{
    if (sum == 0.0)
        return -INFINITY;
    return ((double)m + log(sum)) + (double)shift;
}
PP_HD static inline float pp_attn_lse_s64(float m, double sum, float shift)
{
    if (sum == 0.0)
        return -INFINITY;
    return (m + (float)log(sum)) + shift;
}

PP_HD static inline float pp_attn_bwd_ds(float p, float dp, float D)
{
    return p * (dp - D);
}

// ---- The GEMM chains with exact sites (attention.h "Exact sites", chains): binary64 values of
// S, dP, D read where the kernel reads their binary32 ones.
// Flash forward p from a binary64 score s (site scores exact): the argument s·sl2 − ms in
// binary64 (one rounding, the fma's), 2^x of it in binary64 (softmax_in exact) or of its RN_32.
PP_HD static inline float pp_attn_flash_p_s64(const pp_attn_scalars *sc, double s, double ms, int exact_arg)
{
    double a = fma(s, (double)sc->sl2, -ms);
    return exact_arg ? pp_attn_exp2_64(a) : pp_attn_exp2f((float)a);
}

// Flash backward P from a binary64 score s: the argument s·sl2 − lse·log2e_32 in binary64 (softmax_in
// exact), else fma(s, sl2, −RN_32(lse·log2e_32)) in binary64 rounded once to binary32, as
// pp_attn_bwd_p_l64 (for a binary32 lse, RN_32(lse·log2e_32) is the kernel's multiply).
PP_HD static inline float pp_attn_bwd_p_s64(const pp_attn_scalars *sc, double s, double lse, int exact_arg)
{
    if (exact_arg)
        return pp_attn_exp2_64(s * sc->sl2 - lse * (double)1.44269502f);
    return pp_attn_exp2f((float)fma(s, (double)sc->sl2, -(double)(float)(lse * (double)1.44269502f)));
}

// dS = p·(dP − D) in binary64 from a binary64 dP or D (sites dp, d exact), rounded once to binary32
// (the dS store then rounds it to F unless ds is exact: dS has no binary64 shadow, so with ds
// exact its binary32 value is what the dq, dk chains read).
PP_HD static inline float pp_attn_bwd_ds64(float p, double dp, double D)
{
    return (float)((double)p * (dp - D));
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

// The same with a binary64 D (site d exact, softmax fp32 or storage: D = Σ dP·P in binary64, "Exact
// sites", chains): the kernel's first steps in binary64 from D, rounded once to binary32 (fp32:
// dP·P − P·D; storage: P·(dP − D)), then its L and A multiplies and stores as pp_attn_softmax_bwd_dx.
PP_HD static inline float pp_attn_softmax_bwd_dx64(pp_format_id f, pp_attn_softmax sm, float dp, float p,
                                                   double D, float L, float A)
{
    if (sm == PP_ATTN_SOFTMAX_FP32) {
        float t = (float)((double)dp * p - (double)p * D);
        if (L != 1.0f)
            t = L * t;
        if (A != 1.0f)
            t = A * t;
        return pp_attn_store(f, t);
    }
    float dx = pp_attn_store(f, (float)((double)p * ((double)dp - D)));
    if (L != 1.0f)
        dx = pp_attn_store(f, L * dx);
    if (A != 1.0f)
        dx = pp_attn_store(f, A * dx);
    return dx;
}

// log1p(x) rounded to binary32 for x in [0, 1] (the lse merge's argument exp(mn − mx)): 2·atanh(u),
// u = x/(2 + x) ≤ 1/3 in binary64, the series to u^39 (truncation < 2^−60), one conversion;
// torch's CUDA log1pf is within 1 ulp of it (not emulated bit for bit). NaN passes through.
PP_HD static inline float pp_attn_log1pf(float x)
{
    if (x != x || x == 0.0f)
        return x;
    double xd = (double)x, u = xd / (2.0 + xd), z = u * u, p = 1.0 / 39.0;
    for (int k = 37; k >= 1; k -= 2)
        p = p * z + 1.0 / (double)k;
    return (float)(2.0 * u * p);
}

// CP: the fp32 lse merge (TE's flash_attn_fwd_softmax_lse_correction): mx + log(1 + exp(mn − mx))
// as PR 821 left it (PR 716's formula), mx + log1p(exp(mn − mx)) in today's TE
// (context_parallel.py @ d0067d0:192, 205). mx = −Inf: lse stays −Inf.
PP_HD static inline float pp_attn_cp_lse_merge(pp_attn_cp_flavour fl, float lse, float lse_i)
{
    float mx = lse > lse_i ? lse : lse_i, mn = lse > lse_i ? lse_i : lse;
    if (mx == -INFINITY)
        return mx;
    float e = pp_expf(mn - mx);
    return fl == PP_ATTN_CP_TE_MAIN ? mx + pp_attn_log1pf(e) : mx + pp_logf(1.0f + e);
}

// CP before PR 821 (attention.py @ 9709147e:783): the running lse is a binary64 tensor
// (softmax_lse_per_step[0].to(torch.double)) and the same formula runs in binary64 (torch's type
// promotion of the fp32 step lse). exp/log are the C library's (the GPU's on the GPU): binary64
// within an ulp, which reaches the fp32 lse or a bf16/fp16 out only at a rounding boundary.
PP_HD static inline double pp_attn_cp_lse_merge64_d(double lse, double li)
{
    double mx = lse > li ? lse : li, mn = lse > li ? li : lse;
    if (mx == -INFINITY)
        return mx;
    return mx + log(1.0 + exp(mn - mx));
}
// (lse_i: the step's lse, binary32; _d: a binary64 one, explain's lse site exact)
PP_HD static inline double pp_attn_cp_lse_merge64(double lse, float lse_i)
{
    return pp_attn_cp_lse_merge64_d(lse, (double)lse_i);
}

// CP: out accumulator step acc = RN_C(acc + out_i·exp(lse_i − lse)), C = cp_accum. The factor
// w = exp(lse_i − lse) depends on the row only: pp_attn_cp_out_step_w takes it computed once per
// row and step (pp_attn_cp_out_w), the same value for every column.
PP_HD static inline float pp_attn_cp_out_w(float lse_i, float lse)
{
    return pp_expf(lse_i - lse);
}
PP_HD static inline float pp_attn_cp_out_step_w(pp_format_id c, float acc, float out_i, float lse_i, float w)
{
    if (lse_i == -INFINITY)  // an empty partial (out_i = 0) adds nothing
        return acc;
    float t = out_i * w;
    return pp_attn_store(c, acc + t);
}
PP_HD static inline float pp_attn_cp_out_step(pp_format_id c, float acc, float out_i, float lse_i, float lse)
{
    return pp_attn_cp_out_step_w(c, acc, out_i, lse_i, lse_i == -INFINITY ? 0.0f : pp_attn_cp_out_w(lse_i, lse));
}

// CP before PR 821, a second-half step (i > rank, causal): its correction reads softmax_lse_, the
// [..., 1, :] view taken of the binary64 lse before the fp32 rounding reassigned softmax_lse
// (attention.py @ 9709147e:786, 818-822), so t = out_i·exp(lse_i − lse64) and the add run in
// binary64 (type promotion), then RN_C.
// As pp_attn_cp_out_step, its factor e = exp(lse_i − lse64) once per row and step
// (pp_attn_cp_out_w64) for pp_attn_cp_out_step64_w.
PP_HD static inline double pp_attn_cp_out_w64(float lse_i, double lse64)
{
    return exp((double)lse_i - lse64);
}
PP_HD static inline float pp_attn_cp_out_step64_w(pp_format_id c, float acc, float out_i, float lse_i, double e)
{
    if (lse_i == -INFINITY)
        return acc;
    double t = (double)out_i * e;
    return (float)pp_round(c, (double)acc + t, PP_RND_NE, 0);
}
PP_HD static inline float pp_attn_cp_out_step64(pp_format_id c, float acc, float out_i, float lse_i, double lse64)
{
    return pp_attn_cp_out_step64_w(c, acc, out_i, lse_i, lse_i == -INFINITY ? 0.0 : pp_attn_cp_out_w64(lse_i, lse64));
}

// CP out merge step with cp_lse_merge exact: the correction exp(lse_i − lse64) of the binary64
// running lse (argument in binary64, factor rounded once to binary32), the rest as pp_attn_cp_out_step.
PP_HD static inline float pp_attn_cp_out_step_x(pp_format_id c, float acc, float out_i, float lse_i, double lse64)
{
    if (lse_i == -INFINITY)
        return acc;
    float t = out_i * pp_attn_exp_64((double)lse_i - lse64);
    return pp_attn_store(c, acc + t);
}

// ---- The CP merges reading binary64 values (explain's binary64 shadows, "Exact sites"): each
// op computes in binary64 from its operands and rounds its result as the kernel does (RN_32 of
// the binary64 value, then the store): for binary32 operands that is the kernel's binary32 op bit
// for bit (a sum, difference or product of two binary32 values is exact in binary64, or rounded
// once, so RN_32 of it is the binary32 op's result).
// The fp32 lse merge with binary64 operands (lse_i kept by the lse site); the result rounded.
PP_HD static inline float pp_attn_cp_lse_merge_r(pp_attn_cp_flavour fl, float lse, double lse_i)
{
    double mx = lse > lse_i ? (double)lse : lse_i, mn = lse > lse_i ? lse_i : (double)lse;
    if (mx == -INFINITY)
        return (float)mx;
    float e = pp_expf((float)(mn - mx));
    return (float)(mx + (double)(fl == PP_ATTN_CP_TE_MAIN ? pp_attn_log1pf(e) : pp_logf(1.0f + e)));
}

// One out merge step with binary64 operands: t = RN_32(out_i · e), e = exp(RN_32(lse_i − lse))
// (lse64_exact: the running lse kept by cp_lse_merge, e = RN_32(exp_64(lse_i − lse)) as
// pp_attn_cp_out_step_x); then acc + t kept in binary64 (acc_exact: site cp_out_merge) or
// RN_C(RN_32(acc + t)). te2nd: te-2024's second-half step (pp_attn_cp_out_step64: t and the add
// in binary64, then RN_C, or kept).
PP_HD static inline double pp_attn_cp_out_step_d(pp_format_id c, double acc, double out_i, double lse_i, double lse,
                                                 int lse64_exact, int te2nd, int acc_exact)
{
    if (lse_i == -INFINITY)
        return acc;
    double t;
    if (te2nd)
        t = out_i * exp(lse_i - lse);
    else
        t = (double)(float)(out_i * (double)(lse64_exact ? pp_attn_exp_64(lse_i - lse)
                                                         : pp_expf((float)(lse_i - lse))));
    if (acc_exact)
        return acc + t;
    return te2nd ? pp_round(c, acc + t, PP_RND_NE, 0) : (double)pp_attn_store(c, (float)(acc + t));
}

// CP: a gradient accumulator step acc = RN_C(acc + g), C = cp_grad_accum.
PP_HD static inline float pp_attn_cp_grad_step(pp_format_id c, float acc, float g)
{
    return pp_attn_store(c, acc + g);
}

#endif
