// gemm_ref_quantised.h — the scaled GEMM's second reference: the exact product of the values a
// scaled variant quantised its inputs to, so a report tells the quantisation error (the variant
// against the exact product of the original inputs) from the arithmetic error (against this).
#ifndef PP_GEMM_REF_QUANTISED_H
#define PP_GEMM_REF_QUANTISED_H

#include <stdint.h>

#include "error.h"
#include "gemm.h"
#include "gemm_ref.h"

// c_ij = α·Σ_l (g_a·xs_a·qa_il)·(g_b·xs_b·qb_lj): the dequantised operands of variant v
// (scaling ≠ none; r its delayed recipe or NULL; pp_gemm_scaled_quantise) multiplied exactly.
// How: xs·q is a binary32 value (mx: ≤ 4 significant bits times 2^e, e ≥ −127, so ≥ 2^−136;
// nvfp4: an e2m1 value times an e4m3 value, ≤ 6 bits in [2^−10, 2688]; per-tensor: q itself),
// so pp_gemm_ref (o's method and α; format fp32) gives c̃ with |c̃ − c/G| ≤ e̊, G = g_a·g_b exact
// in binary64 (two binary32 values); then c = RN_64(c̃·G), bound ≤ ½ulp(c) + G·e̊, written
// rounded up. NaN scales (a NaN or ±Inf input) give NaN where they reach.
// @param [out] c, c_err  [batch, m, n]; c_err may be NULL.
// Returns PP_OK, PP_ERR_INPUT (as pp_gemm_ref) or PP_ERR_RUNTIME (memory).
int pp_gemm_ref_quantised(const pp_gemm_variant *v, const pp_delayed_recipe *r, const pp_gemm_ref_opts *o,
                          int64_t batch, int64_t m, int64_t n, int64_t k, const double *a, const double *b, double *c,
                          double *c_err, int threads, pp_error *err);

#endif
