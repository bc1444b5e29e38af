// ranges_cuda.h — the device side of range diagnostics (kernels/ranges.h) for the CUDA launchers:
// one accumulator in device memory that every thread of every launch notes into (atomic counts,
// atomicMax/atomicMin on the bit patterns: ranges.h), downloaded and merged into the host's at
// the end, so a GPU run's counters equal the CPU emulation's. Host functions; .cu files only.
#ifndef PP_RANGES_CUDA_H
#define PP_RANGES_CUDA_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ranges.h"

// Return codes: base/error.h's 0 and 3 (this header serves launchers with their own error macros,
// cuda/cuda_check.h's and attention_kernels.cu's, so it defines none).
enum { PP_RANGES_CUDA_OK = 0, PP_RANGES_CUDA_ERR = 3 };

// A failed step: "file:line: what: why" in errbuf, returns 3.
static inline int pp_ranges_cuda_fail(char *errbuf, size_t errlen, int line, const char *what, const char *why)
{
    if (errbuf && errlen)
        snprintf(errbuf, errlen, "%s:%d: %s: %s", __FILE__, line, what, why);
    return PP_RANGES_CUDA_ERR;
}

// The struct, then its cells at the next multiple of 8 bytes (the 64-bit atomics' alignment).
static inline size_t pp_ranges_cuda_head(void)
{
    return (sizeof(pp_ranges) + 7) / 8 * 8;
}

static inline size_t pp_ranges_cuda_bytes(const pp_ranges *R)
{
    return pp_ranges_cuda_head() + (size_t)PP_SITE_COUNT * (size_t)R->heads * sizeof(pp_range_cell);
}

// *d = a device accumulator shaped like R (R's heads), cleared: the pp_ranges struct and its cells
// in one allocation, its cells pointer the device's. R NULL: *d = NULL. Returns 0, or 3 with a
// one-line message in errbuf (nothing then left allocated).
static inline int pp_ranges_cuda_alloc(const pp_ranges *R, pp_ranges **d, char *errbuf, size_t errlen)
{
    *d = NULL;
    if (!R)
        return PP_RANGES_CUDA_OK;
    size_t bytes = pp_ranges_cuda_bytes(R);
    pp_ranges *h = (pp_ranges *)malloc(bytes);
    if (!h)
        return pp_ranges_cuda_fail(errbuf, errlen, __LINE__, "malloc", "out of host memory for the range diagnostics");
    void *dp = NULL;
    cudaError_t e = cudaMalloc(&dp, bytes);
    if (e == cudaSuccess) {
        pp_ranges_init(h, (pp_range_cell *)(void *)((char *)h + pp_ranges_cuda_head()), R->heads);
        h->cells = (pp_range_cell *)(void *)((char *)dp + pp_ranges_cuda_head());  // the device's cells
        e = cudaMemcpy(dp, h, bytes, cudaMemcpyHostToDevice);
        if (e != cudaSuccess)
            cudaFree(dp);
    }
    free(h);
    if (e != cudaSuccess)
        return pp_ranges_cuda_fail(errbuf, errlen, __LINE__, "the range diagnostics' device accumulator",
                                   cudaGetErrorString(e));
    *d = (pp_ranges *)dp;
    return PP_RANGES_CUDA_OK;
}

// The device accumulator d (from pp_ranges_cuda_alloc for R) downloaded and merged into R, then
// freed (also on failure; d NULL: nothing). The copy waits for every launch before it on the
// default stream, and reports their faults. Returns 0, or 3 with a one-line message in errbuf.
static inline int pp_ranges_cuda_collect(pp_ranges *d, pp_ranges *R, char *errbuf, size_t errlen)
{
    if (!d || !R) {
        cudaFree(d);
        return PP_RANGES_CUDA_OK;
    }
    size_t bytes = pp_ranges_cuda_bytes(R);
    pp_ranges *h = (pp_ranges *)malloc(bytes);
    cudaError_t e = h ? cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost) : cudaSuccess;
    if (h && e == cudaSuccess) {
        h->cells = (pp_range_cell *)(void *)((char *)h + pp_ranges_cuda_head());  // the host copy's cells
        pp_ranges_merge(R, h);
    }
    free(h);
    cudaFree(d);
    if (!h)
        return pp_ranges_cuda_fail(errbuf, errlen, __LINE__, "malloc", "out of host memory for the range diagnostics");
    return e == cudaSuccess ? PP_RANGES_CUDA_OK
                            : pp_ranges_cuda_fail(errbuf, errlen, __LINE__, "cudaMemcpy(range diagnostics)",
                                                  cudaGetErrorString(e));
}

#endif
