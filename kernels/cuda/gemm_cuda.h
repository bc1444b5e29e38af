// gemm_cuda.h — host launchers of the batched GEMM on the GPU: our kernel (the element-wise
// steps of kernels/gemm.h in the CPU emulation's order, so bit-identical to it) and cuBLAS (the
// vendor path users' PyTorch runs see). C linkage; defined in gemm_kernels.cu.
#ifndef PP_GEMM_CUDA_H
#define PP_GEMM_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "gemm.h"
#include "ranges.h"

#ifdef __cplusplus
extern "C" {
#endif

// C[b] = α·A[b]·B[b] on the GPU with our kernel: each output element accumulated by one thread,
// l = 0..k−1 in order, with exactly the steps of kernels/gemm.h (the CPU emulation's, so the
// result equals pp_gemm_cpu bit for bit).
// @param [in]  v, batch, m, n, k, a, b  as pp_gemm_cpu (host memory, binary64 values of v->format)
// @param [out] c       host memory, batch·m·n values
// @param [out] errbuf  errlen bytes for a one-line message on failure (may be NULL)
// Returns 0; 2 for a bad variant or extents; 3 when a CUDA call fails (the message names the
// call, file and line).
int pp_gemm_cuda(const pp_gemm_variant *v, int64_t batch, int64_t m, int64_t n, int64_t k, const double *a,
                 const double *b, double *c, char *errbuf, size_t errlen);
// pp_gemm_cuda with range diagnostics (kernels/ranges.h; R NULL: none, as pp_gemm_cuda): the
// sites quant_a, quant_b (prescale), accum, scale and c noted by every thread into one device
// accumulator (atomics), then merged into R (host memory, its heads as the CPU's: 1). Every
// counter equals pp_gemm_cpu_ranges's; c is the same bits as without R.
int pp_gemm_cuda_ranges(const pp_gemm_variant *v, int64_t batch, int64_t m, int64_t n, int64_t k, const double *a,
                        const double *b, double *c, pp_ranges *R, char *errbuf, size_t errlen);

// The same product through cublasGemmStridedBatchedEx, as torch.baddbmm(beta=0, alpha=α) calls
// it: A and B stored in v->format (CUDA_R_16F, CUDA_R_16BF, CUDA_R_32F), C in v->format;
// compute type CUBLAS_COMPUTE_32F for accumulate = fp32 and CUBLAS_COMPUTE_16F for accumulate =
// storage with fp16 (cuBLAS has no bf16 compute type: bf16 storage accumulation returns 2);
// alpha in the compute type (RN of the variant's α, as kernels/gemm.h computes it), beta = 0.
// Pre-scaling runs our prescale kernel first, then the GEMM with α = 1. Math mode: cuBLAS's
// default, which PyTorch uses too: tensor cores allowed, and for CUBLAS_COMPUTE_32F with fp16/bf16
// inputs reduced-precision reductions allowed (torch's allow_fp16/bf16_reduced_precision_reduction
// default True). The order of the reduction is cuBLAS's, which nobody outside NVIDIA controls:
// results are measured, not expected to match the CPU emulation.
// Same parameters and return codes as pp_gemm_cuda.
int pp_gemm_cublas(const pp_gemm_variant *v, int64_t batch, int64_t m, int64_t n, int64_t k, const double *a,
                   const double *b, double *c, char *errbuf, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
