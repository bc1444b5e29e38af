// attention_cuda.h — the host launcher of the attention on the GPU: our own kernels, every knob
// of the CPU emulation (unfused and flash, forward and backward, GQA, causal, the CP ring), with
// the element-wise steps of kernels/attention.h in the CPU emulation's reduction orders, so the
// result equals pp_attention_cpu bit for bit. C linkage; defined in attention_kernels.cu.
//
// How: kernels/attention_plan.c issues the launches (the same sequence the CPU emulation runs on
// its thread pool, kernels/cpu/attention_device.c); each launch runs the per-thread bodies of
// kernels/attention_threads.h (launch decomposition and reduction orders documented there), one
// GPU thread per CPU chain: per score element (unfused scores, dP), per row (softmax, flash
// forward with its key tiles, flash backward rows, D), per output element (P·V, dq, dk, dv, the
// GQA sums, the CP merges). A CP ring step is a launch per stage covering every rank.
// Engine cublas (v->engine; unfused, cp_world 1): the five GEMMs of the unfused forward and
// backward are cublasGemmStridedBatchedEx calls instead (storage-type A, B, C; CUBLAS_COMPUTE_32F
// for accumulate fp32, CUBLAS_COMPUTE_16F for fp16 with accumulate storage; bf16 storage
// accumulation returns 2; cuBLAS's default math mode), everything between them ours: results
// are cuBLAS's, measured, not equal to the emulation (kernels/attention.h, "Engine cublas").
#ifndef PP_ATTENTION_CUDA_H
#define PP_ATTENTION_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "attention.h"
#include "ranges.h"

#ifdef __cplusplus
extern "C" {
#endif

// The contract of pp_attention_cpu (host arrays of binary64 values, same layouts and checks),
// on the GPU, with the same results bit for bit for engine ours (NaN payloads aside: IEEE leaves the NaN an
// invalid operation returns to the hardware, and x86 and CUDA differ).
// @param [out] errbuf  errlen bytes for a one-line message on failure (may be NULL)
// Returns 0; 2 for a bad variant, shape or input value; 3 when a CUDA call fails (the message
// names the call, file and line).
int pp_attention_cuda(const pp_attn_variant *v, const pp_attn_dims *dims, int backward, const double *q,
                      const double *k, const double *vv, const double *dout, double *out, double *lse, double *dq,
                      double *dk, double *dv, char *errbuf, size_t errlen);

// pp_attention_cuda with range diagnostics (kernels/ranges.h; sites kernels/sites.h) added into R
// when R is set: one device accumulator every thread notes into atomically, merged into R after
// the run, so the counters equal the CPU emulation's (pp_attention_cpu_opts with .ranges) bit for
// bit. The same outputs. tests/test_attention_cuda.c (cuda_ranges_equal_cpu) checks it on a GPU: it
// passed on an H200 (2026-11-26).
int pp_attention_cuda_ranges(const pp_attn_variant *v, const pp_attn_dims *dims, int backward, const double *q,
                             const double *k, const double *vv, const double *dout, double *out, double *lse,
                             double *dq, double *dk, double *dv, pp_ranges *R, char *errbuf, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
