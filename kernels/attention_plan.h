// attention_plan.h — the launch sequence of the attention, written once in C and parameterised
// by a device (allocate, copy, launch, and optionally GEMM): kernels/cuda/attention_kernels.cu
// passes the CUDA runtime, kernels/cpu/attention_device.c host memory and the thread pool (the
// CPU emulation), tests/test_attention_threads.c plain memory and an adversarial loop over the
// threads. Every device runs the very sequence of launches, so all agree bit for bit.
#ifndef PP_ATTENTION_PLAN_H
#define PP_ATTENTION_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "attention.h"
#include "attention_threads.h"

#ifdef __cplusplus
extern "C" {
#endif

// Engine cublas: one batched GEMM the device performs. For p = 0 .. batch−1 (row-major):
//   C_p = RN_F(α·op(A_p)·op(B_p)),  op(X) = Xᵀ when tX,  A_p = a + p·sa (ld lda), B_p, C_p alike;
// op(A_p) m×k, op(B_p) k×n, C_p m×n with ldc = n and sc = m·n (C contiguous). A stride may be 0
// (GQA: the group's kv head under every q head of the batch). Operands are values of F held in
// binary32 device buffers; C receives values of F as binary32. The accumulation is the device's
// (the CUDA device: cublasGemmStridedBatchedEx with compute type 32F for accum fp32, 16F for fp16
// with accum storage; kernels/attention.h "Engine cublas"); alpha is exact in that compute type.
typedef struct pp_attn_gemm {
    pp_format_id f;
    pp_attn_accum accum;
    int ta, tb;
    int64_t m, n, k, batch;
    double alpha;
    const float *a;
    int64_t lda, sa;
    const float *b;
    int64_t ldb, sb;
    float *c;
    int64_t ldc, sc;
} pp_attn_gemm;

// Each callback returns 0, or 3 after writing a one-line message to the device's own buffer.
// Launches run in issue order; copies see every earlier launch's writes.
typedef struct pp_attn_device {
    void *ctx;
    int (*alloc)(void *ctx, void **p, size_t bytes);  // *p NULL on failure
    void (*release)(void *ctx, void *p);              // p may be NULL
    int (*upload)(void *ctx, void *dst, const void *src, size_t bytes);
    int (*download)(void *ctx, void *dst, const void *src, size_t bytes);
    int (*launch)(void *ctx, const pp_attn_launch *L);
    // Engine cublas's GEMMs, in issue order with the launches; NULL: the device has none, and a
    // variant with engine cublas is rejected (2).
    int (*gemm)(void *ctx, const pp_attn_gemm *G);
    // The most device memory (floats) the device wants the plan to hold at once; 0: no limit.
    // The plan runs slices of (batch, kv head) units that fit (at least one unit a slice), each
    // uploaded, computed and downloaded alone; slices hold disjoint heads, so the bits never
    // depend on it.
    int64_t scratch_floats;
    // Threads for the plan's host loops (the input checks, the conversions into and out of the
    // device's layout); ≤ 1: the calling thread alone. Each thread converts whole rows of its
    // own, so the bits never depend on it.
    int host_threads;
} pp_attn_device;

// Runs variant v on dev with the contract of pp_attention_cpu (kernels/cpu/attention.h: host
// arrays of binary64 values, the same layouts, the same checks), and the same results bit for
// bit. Returns 0; 2 for a bad variant, shape or input value (message in errbuf); 3 when a device
// call fails (the device's message is in its own buffer; errbuf says which stage).
int pp_attn_plan_run(const pp_attn_device *dev, const pp_attn_variant *v, const pp_attn_dims *dims, int backward,
                     const double *q, const double *k, const double *vv, const double *dout, double *out,
                     double *lse, double *dq, double *dk, double *dv, char *errbuf, size_t errlen);

// The same with force_cp: the context-parallel ring even for cp_world 1 (one rank; it must equal
// the plain plan bit for bit: the CPU emulation's test option).
int pp_attn_plan_run_opts(const pp_attn_device *dev, const pp_attn_variant *v, const pp_attn_dims *dims,
                          int backward, int force_cp, const double *q, const double *k, const double *vv,
                          const double *dout, double *out, double *lse, double *dq, double *dk, double *dv,
                          char *errbuf, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
