// cpu/gemm.h — the CPU emulation of precprobe's batched GEMM variants: the loops around the
// element-wise steps of kernels/gemm.h, multi-threaded and bit-identical for any thread count.
#ifndef PP_CPU_GEMM_H
#define PP_CPU_GEMM_H

#include <stdint.h>

#include "../gemm.h"
#include "../ranges.h"
#include "../gemm_scaled_thread.h"
#include "error.h"

// C[b] = α·A[b]·B[b] for b < batch, emulating variant v bit for bit (kernels/gemm.h gives the
// exact steps; the reduction over k runs left to right for every output element).
// @param [in]  v        the variant: format, accumulation, scale placement, α.
// @param [in]  batch, m, n, k  extents ≥ 0; A is [batch, m, k], B [batch, k, n], C [batch, m, n],
//                      row-major, each at most 2^40 elements.
// @param [in]  a, b     values of v->format (binary32 with scaling), NaN and ±Inf allowed.
// @param [out] c        values of v->format (binary32 with scaling); overflow gives ±Inf.
// @param [in]  threads  worker threads (< 1 means 1); the result does not depend on it.
// @param [out] err      set on failure (may be NULL).
// Preconditions: c does not overlap a or b; pointers may be NULL only for empty tensors.
// Returns PP_OK; PP_ERR_INPUT for a bad variant (format not fp16/bf16/fp32, α not finite, α < 0
// with pre-scaling, default α with k = 0), bad extents, or an input not representable in the
// format (the message names the tensor, flat index and value); PP_ERR_RUNTIME when memory runs
// out.
int pp_gemm_cpu(const pp_gemm_variant *v, int64_t batch, int64_t m, int64_t n, int64_t k,
                const double *a, const double *b, double *c, int threads, pp_error *err);

// pp_gemm_cpu with range diagnostics (kernels/ranges.h, sites gemm.*, one cell: the tensor)
// noted into R when R is set; the same outputs bit for bit.
int pp_gemm_cpu_ranges(const pp_gemm_variant *v, int64_t batch, int64_t m, int64_t n, int64_t k,
                       const double *a, const double *b, double *c, int threads, pp_ranges *R, pp_error *err);

// The scaled-storage part of pp_gemm_cpu (v->scaling ≠ none; kernels/gemm.h "Scaled storage";
// cpu/gemm_scaled.c): a and b binary32 values already checked, alpha_c = RN_32(α), c binary32
// values. Called by pp_gemm_cpu after its checks. Returns PP_OK or PP_ERR_RUNTIME (memory).
int pp_gemm_scaled_cpu(const pp_gemm_variant *v, double alpha_c, int64_t batch, int64_t m, int64_t n,
                       int64_t k, const double *a, const double *b, double *c, int threads, pp_ranges *R,
                       pp_error *err);

// The same under per-tensor delayed scaling (v->scaling = PP_SCALING_DELAYED, e4m3 or e5m2): the
// scales come from r's amax histories (kernels/scaling.h, TE's DelayedScaling), not from a and b.
// Same preconditions (a, b binary32 values; alpha_c = RN_32(α)); r->len[t] ≥ 1.
// Returns PP_OK, PP_ERR_INPUT (another scaling or format, r NULL, an empty history) or
// PP_ERR_RUNTIME (memory). (pp_gemm_scaled_cpu refuses PP_SCALING_DELAYED: it has no history.)
int pp_gemm_delayed_cpu(const pp_gemm_variant *v, const pp_delayed_recipe *r, double alpha_c, int64_t batch,
                        int64_t m, int64_t n, int64_t k, const double *a, const double *b, double *c, int threads,
                        pp_error *err);

// pp_gemm_delayed_cpu with range diagnostics noted into R when R is set (sites quant_a/b, block_scale_a/b
// with the delayed scale's inverse, accum, scale, c); the same outputs bit for bit.
int pp_gemm_delayed_cpu_ranges(const pp_gemm_variant *v, const pp_delayed_recipe *r, double alpha_c, int64_t batch,
                               int64_t m, int64_t n, int64_t k, const double *a, const double *b, double *c,
                               int threads, pp_ranges *R, pp_error *err);
// The quantised operands of a scaled variant (steps 1 and 2 of kernels/gemm_scaled_thread.h):
// qa, qb the quantised elements (values of v->format, A's and B's layouts), xsa, xsb the block
// scales per line and block, ga, gb the per-tensor scales; dequantised, A ≈ ga·xsa·qa.
typedef struct pp_gemm_scaled_q {
    pp_gemm_scaled_operand A, B;
    double *qa, *qb, *xsa, *xsb;
    double ga, gb;
} pp_gemm_scaled_q;

// Quantises a and b (binary32 values) as variant v (scaling ≠ none; r: the delayed recipe, or NULL
// for the other scalings) does. Returns PP_OK or PP_ERR_RUNTIME (memory; out is then empty).
// Free with pp_gemm_scaled_q_free.
int pp_gemm_scaled_quantise(const pp_gemm_variant *v, const pp_delayed_recipe *r, int64_t batch, int64_t m,
                            int64_t n, int64_t k, const double *a, const double *b, pp_gemm_scaled_q *out,
                            pp_error *err);
void pp_gemm_scaled_q_free(pp_gemm_scaled_q *q);

#endif
