// gemm_ref.h — the certified reference of the batched GEMM C = α·A·B: each element as a binary64
// and a proven bound on its error, by a fast exact path or by plain MPFR (reference/PROOFS.md#gemm).
#ifndef PP_GEMM_REF_H
#define PP_GEMM_REF_H

#include <stdint.h>

#include "error.h"
#include "format.h"

// Working precision of the mpfr-plain path, in bits.
#define PP_GEMM_REF_PLAIN_PREC 128

typedef enum pp_gemm_ref_method {
    PP_GEMM_REF_FAST = 0,   // exact integer accumulator, α as a double-double: bound ½ulp + 2^−44 ulp
    PP_GEMM_REF_MPFR_PLAIN  // every product, sum and α in MPFR at 128 bits: slow, obviously right
} pp_gemm_ref_method;

typedef struct pp_gemm_ref_opts {
    pp_format_id format;        // PP_FMT_FP16, PP_FMT_BF16 or PP_FMT_FP32: the inputs' format
    int alpha_given;            // 0: α = 1/√k, the real number (k ≥ 1); 1: α = alpha
    double alpha;               // finite, any sign
    pp_gemm_ref_method method;
} pp_gemm_ref_opts;

// c_ij = α·Σ_l a_il·b_lj per batch, exactly (in real arithmetic) up to the reported bound.
// @param [in]  o        format of the inputs, α, method.
// @param [in]  batch, m, n, k  extents ≥ 0: A [batch, m, k], B [batch, k, n], C [batch, m, n],
//                      row-major, each at most 2^40 elements.
// @param [in]  a, b     values of o->format as binary64 (NaN and ±Inf allowed).
// @param [out] c        the reference values as binary64. An exact zero is +0.
// @param [out] c_err    bounds, |c_ij − exact_ij| ≤ c_err_ij (may be NULL). 0 when c_ij is exact
//                      (also for ±Inf from infinite inputs); NaN where c_ij is NaN (a NaN input,
//                      Inf − Inf, 0·Inf); +Inf where the exact value overflows binary64.
// @param [in]  threads  worker threads (< 1 means 1); the result does not depend on it.
// @param [out] err      set on failure (may be NULL).
// Non-finite inputs follow IEEE arithmetic on the extended reals: any NaN term, or Inf terms of
// both signs, give NaN; otherwise α times the infinite terms' sign.
// Preconditions: c and c_err do not overlap a, b or each other; pointers may be NULL only for
// empty tensors.
// Returns PP_OK; PP_ERR_INPUT for a bad format, α not finite, default α with k = 0, bad extents,
// or an input not representable in the format; PP_ERR_RUNTIME when memory runs out.
// Bound (PROOFS.md#gemm), for finite normal c_ij, everything but the final rounding < 2^−96|c_ij|:
//   fast:       c_err = ulp(c)·(½ + 2^−44)                       (0 when exact)
//   mpfr-plain: c_err = ½ulp(c) + 2^−128·(|P| + |α̃|·|s_k| + |α̃|(1 + 2^−128)·Σ_l |s_l|)
// where s_l are the 128-bit partial sums, α̃ = RN_128(α), P = RN_128(α̃·s_k); subnormal c adds
// 2^−1073 (fast) or uses 2^−1074 for ½ulp (plain).
int pp_gemm_ref(const pp_gemm_ref_opts *o, int64_t batch, int64_t m, int64_t n, int64_t k,
                const double *a, const double *b, double *c, double *c_err, int threads,
                pp_error *err);

#endif
