// attention_ref.h — the certified reference of attention, forward (out, lse) and backward (dq, dk,
// dv): each element as a binary64 and a proven bound on its error (reference/PROOFS.md#attention).
#ifndef PP_ATTENTION_REF_H
#define PP_ATTENTION_REF_H

#include <stdint.h>

#include "attention_ref_types.h"
#include "error.h"

// Attention in exact real arithmetic on the given values, delivered as binary64:
//   S = σ·Q·Kᵀ (+ causal mask), P = softmax(S) row-wise, out = P·V, lse = log Σ_j exp(S_ij);
//   dV = Pᵀ·dout, dP = dout·Vᵀ, D_i = Σ_j P_ij·dP_ij (= Σ_l dout_il·out_il, the exact out),
//   dS = P∘(dP − D), dQ = σ·dS·K, dK = σ·dSᵀ·Q; dK, dV summed over the heads sharing a kv head.
// @param [in]  o     shapes, mask, σ, method, threads, progress.
// @param [in]  q, dout  [b, s_q, h, d];  k, v  [b, s_kv, h_kv, d], row-major, values of fp32
//                    (so of fp16 and bf16 too) as binary64; NaN and ±Inf allowed. dout may be NULL
//                    when !o->backward.
// @param [out] out   [b, s_q, h, d];  lse [b, h, s_q];  dq [b, s_q, h, d];  dk, dv [b, s_kv, h_kv, d]
//                    (dq, dk, dv may be NULL when !o->backward). An exact zero is +0.
// @param [out] bounds  per-tensor bounds (may be NULL).
// @param [out] err   set on failure (may be NULL).
// A query row that sees no key (causal, s_q > s_kv): out row 0, lse −Inf, dq row 0, and no
// contribution to dk, dv; all exact. Non-finite inputs follow MPFR's IEEE-like arithmetic on the
// extended reals through the whole computation (so a NaN or Inf in k_j, or Inf − Inf among the
// scores, makes the rows that see key j NaN); their elements' bound is NaN.
// Preconditions: outputs do not overlap inputs or each other; s_kv ≤ 2^30, d ≤ 2^20, every tensor
// ≤ 2^40 elements. Values and bounds do not depend on o->threads.
// Returns PP_OK; PP_ERR_INPUT for bad shapes, σ not finite, a finite input not a binary32 value,
// NULL data for a non-empty tensor; PP_ERR_RUNTIME when memory runs out.
// Bound (PROOFS.md#attention): each element's error before its final rounding is at most
// 2^−60·max(|value|, the scale of its terms) (scale: σΣ|q||k| for scores, Σ_j P_ij|v_jl| for out,
// σΣ_j P_ij(|dP_ij| + |D_i|)|k_jl| for dq, …) when s_kv, g·s_q ≤ 2^18 and the scores' error
// σ·Σ|q·k|·(12 + d²)·2^−106 ≤ 2^−62 (fast; for d = 128: scores below 2^30 in scale) — about 2^−68
// for the usual sizes, and (n + d + 10)·2^−127 for mpfr-plain at 128 bits — plus absolute floors
// below 2^−700 times the magnitudes involved (probabilities below e^−500 cut, dS below 2^−800
// dropped, binary64 underflow).
int pp_attention_ref(const pp_attn_ref_opts *o, const double *q, const double *k, const double *v,
                     const double *dout, double *out, double *lse, double *dq, double *dk,
                     double *dv, pp_attn_ref_bounds *bounds, pp_error *err);

// pp_attention_ref with per-element bounds as well (elem may be NULL).
int pp_attention_ref_ex(const pp_attn_ref_opts *o, const double *q, const double *k,
                        const double *v, const double *dout, double *out, double *lse, double *dq,
                        double *dk, double *dv, pp_attn_ref_bounds *bounds,
                        const pp_attn_ref_elem_bounds *elem, pp_error *err);

#endif
