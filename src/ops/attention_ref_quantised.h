// attention_ref_quantised.h — FP8 attention's second reference (fp8 = "fa3"): the exact
// attention of the values a variant quantised q, k, v to (every scaling), so a report tells the
// quantisation error (the variant against the exact attention of its bf16 inputs) from the
// arithmetic error (against this).
#ifndef PP_ATTENTION_REF_QUANTISED_H
#define PP_ATTENTION_REF_QUANTISED_H

#include <stdint.h>

#include "attention.h"
#include "attention_ref_types.h"
#include "error.h"

// out, lse of attention on q' = X_q·B_q·E_q, k', v' likewise exactly, where E are the elements,
// B the block scales (1 per tensor) and X the per-tensor factors of v's fp8 quantisation under
// its scaling (kernels/attention_fp8.h's pp_attn_fp8_quantise_tensor: the very values the kernel
// reads), with o's shapes, mask, σ and method (o->backward ignored: forward only). Why not feed
// y = X·B·E to pp_attention_ref: it takes binary32 values only (its fast path's products are
// exact because of that), and y has up to 24 + 4 (per tensor) or 24 + 4 + 2 (nvfp4) significant
// bits; nor fold X_q·X_k into σ: σ may be the irrational 1/√d, and σ·X_q·X_k is not a binary64 in
// general. How, exactly: y = y_hi + y_lo with y_hi y's leading 24 significant bits and y_lo the
// rest (≤ 6 bits), both binary32 values (checked: a part below binary32's range is refused).
// Then q'·k' = Σ_l (q_hi + q_lo)(k_hi + k_lo) is the dot product of the head-dimension-4d rows
// [q_hi, q_hi, q_lo, q_lo] and [k_hi, k_lo, k_hi, k_lo], so pp_attention_ref at d' = 4d (σ
// given; else 1/√d' = ½·1/√d, made up by doubling the k rows, exact) gives the exact scores, lse
// (bound b.lse unchanged: the same real numbers) and, with v rows [v_hi, v_lo, 0, 0], P·v_hi in
// its first d columns and P·v_lo in the next d; out = RN_64(sum of the two) with bound
// 2·b.out + ½ulp(max|out|), written rounded up. The reference's proven bound stays valid: it
// holds for any binary32 inputs and any d' ≤ 2^20 (PROOFS.md#attention).
// @param [out] out  [b, s_q, h, d], lse [b, h, s_q]; bound_out, bound_lse their absolute bounds.
// Returns PP_OK; PP_ERR_INPUT (as pp_attention_ref, or a part not binary32); PP_ERR_RUNTIME.
int pp_attention_ref_quantised(const pp_attn_ref_opts *o, const pp_attn_variant *v, const double *q, const double *k,
                               const double *vv, double *out, double *lse, double *bound_out, double *bound_lse,
                               pp_error *err);

// fp8 = "te" forward and backward: out, lse as pp_attention_ref_quantised, and dq, dk, dv the
// exact gradients of the quantised problem: q', k', v' as above and dO' = X_dO·E, dO's FP8 codes E
// and descale as the backward quantises it (kernels/attention_te_bwd_run.h,
// pp_attn_te_quantise_dout). The gradients are linear in dO, so pp_attention_ref runs once at
// d' = 4d with dO rows [E, E, 0, 0] (the loss Σ E·(P·v_hi + P·v_lo)): dq' = σ·dS·(k_hi + k_lo) is
// the sum of dQ's first two blocks, dk' the sum of dK's blocks 0 and 2 (times 2 where k was
// doubled), dv' dV's first block, each times X_dO (binary32). bound[5] (out, lse, dq, dk, dv):
// m·X·(terms·b + ½ulp(sum)) + ½ulp(result), rounded up.
// Returns PP_OK; PP_ERR_INPUT (as pp_attention_ref, or a part not binary32); PP_ERR_RUNTIME.
int pp_attention_ref_quantised_bwd(const pp_attn_ref_opts *o, const pp_attn_variant *v, const double *q, const double *k,
                                   const double *vv, const double *dout, double *out, double *lse, double *dq,
                                   double *dk, double *dv, double *bound, pp_error *err);

#endif
