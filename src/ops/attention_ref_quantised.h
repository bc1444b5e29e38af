// attention_ref_quantised.h — FP8 attention's second reference (fp8 = "fa3"): the exact
// attention of the e4m3 values a variant quantised q, k, v to, so a report tells the
// quantisation error (the variant against the exact attention of its bf16 inputs) from the
// arithmetic error (against this).
#ifndef PP_ATTENTION_REF_QUANTISED_H
#define PP_ATTENTION_REF_QUANTISED_H

#include <stdint.h>

#include "attention_ref_types.h"
#include "error.h"

// out, lse of attention on q' = X_q·T8_q, k' = X_k·T8_k, v' = X_v·T8_v exactly, where T8 are the
// e4m3 elements and X the descales of FA3's per-tensor quantisation (kernels/attention_fp8.h's
// pp_attn_fp8_dequantised), with o's shapes, mask, σ and method (o->backward ignored: forward
// only). Why not feed X·T8 to pp_attention_ref: it takes binary32 values only (its fast path's
// products are exact because of that), and X·T8 has up to 24 + 4 significant bits; nor fold
// X_q·X_k into σ: σ may be the irrational 1/√d, and σ·X_q·X_k is not a binary64 in general.
// How, exactly: X = X_hi + X_lo with X_hi X's leading 20 significant bits and X_lo the other 4,
// so T8·X_hi (≤ 24 bits) and T8·X_lo (≤ 8 bits) are binary32 values (checked: an input whose
// parts fall below binary32's normal range is refused). Then q'·k' = Σ_l (q_hi + q_lo)(k_hi + k_lo)
// is the dot product of the head-dimension-4d rows [q_hi, q_hi, q_lo, q_lo] and [k_hi, k_lo, k_hi,
// k_lo], so pp_attention_ref at d' = 4d (σ given; else 1/√d' = ½·1/√d, made up by doubling the
// k rows, exact) gives the exact scores, lse (bound b.lse unchanged: the same real numbers) and,
// with v rows [T8_v, 0, 0, 0], out/X_v in its first d columns; then out = RN_64(X_v·õ) with bound
// X_v·b.out + ½ulp(max|out|), written rounded up. The reference's proven bound stays valid: it
// holds for any binary32 inputs and any d' ≤ 2^20 (PROOFS.md#attention).
// @param [out] out  [b, s_q, h, d], lse [b, h, s_q]; bound_out, bound_lse their absolute bounds.
// Returns PP_OK; PP_ERR_INPUT (as pp_attention_ref, or a part not binary32); PP_ERR_RUNTIME.
int pp_attention_ref_quantised(const pp_attn_ref_opts *o, const double *q, const double *k, const double *v,
                               double *out, double *lse, double *bound_out, double *bound_lse, pp_error *err);

#endif
