// gemm_scaled_cuda.h — host launcher of the scaled-storage GEMM on the GPU (tensor-current,
// tensor-delayed, mx, nvfp4): the per-thread bodies of kernels/gemm_scaled_thread.h, one thread
// each, so bit-identical to the CPU emulation (kernels/cpu/gemm_scaled.c). C linkage; defined in
// gemm_scaled_kernels.cu. Hardware-untested: tests/test_gemm_scaled_threads.c runs the same launch
// plan through a CPU loop device, tests/test_gemm_scaled_cuda.c checks a GPU when one exists.
#ifndef PP_GEMM_SCALED_CUDA_H
#define PP_GEMM_SCALED_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "gemm.h"
#include "ranges.h"

#ifdef __cplusplus
extern "C" {
#endif

// C[b] = α·A[b]·B[b] under v's scaling (≠ none), as pp_gemm_scaled_cpu / pp_gemm_delayed_cpu:
// a, b binary32 values (host memory), alpha_c = RN_32(α), r the delayed recipe (tensor-delayed
// only; NULL otherwise). Launch plan: (1) one thread per element of A, then of B, folds the amax
// key (pp_amax_key) with atomicMax; (2) the host reads both amaxes back and computes each
// operand's per-tensor scales s and g (pp_gemm_scaled_tensor_s, _g; from r's history for
// tensor-delayed); (3) one thread per (line, block) of each operand quantises it
// (pp_gemm_scaled_quantise_block); (4) one thread per output element (pp_gemm_scaled_element).
// Returns 0; 2 for a bad variant, extents or recipe; 3 when a CUDA call fails (the message names
// the call, file and line).
int pp_gemm_scaled_cuda(const pp_gemm_variant *v, const pp_delayed_recipe *r, double alpha_c, int64_t batch,
                        int64_t m, int64_t n, int64_t k, const double *a, const double *b, double *c, char *errbuf,
                        size_t errlen);
// pp_gemm_scaled_cuda with range diagnostics (kernels/ranges.h; R NULL: none): step 3's threads
// note quant_a/quant_b and the block scales (pp_gemm_scaled_block_notes), step 4's accum, scale
// and c (pp_gemm_scaled_element_notes), into one device accumulator (atomics) merged into R at the
// end; the per-tensor scales are noted on the host in step 2. Every counter equals the CPU
// emulation's (pp_gemm_cpu_ranges, pp_gemm_delayed_cpu_ranges); c is the same bits as without R.
// An empty C (batch·m·n = 0) runs and notes nothing.
int pp_gemm_scaled_cuda_ranges(const pp_gemm_variant *v, const pp_delayed_recipe *r, double alpha_c, int64_t batch,
                               int64_t m, int64_t n, int64_t k, const double *a, const double *b, double *c,
                               pp_ranges *R, char *errbuf, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
