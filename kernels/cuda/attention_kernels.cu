// attention_kernels.cu — the attention on the GPU: one kernel that runs thread t of a launch
// description (kernels/attention_threads.h, the per-thread bodies shared with the CPU-side test),
// and the CUDA device behind kernels/attention_plan.c's launch sequence. Host launcher in
// cuda/attention_cuda.h.
// Build (the Makefile does): nvcc -O2 -std=c++17 --fmad=false -Isrc -Ikernels -c attention_kernels.cu
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#include "attention_plan.h"
#include "attention_threads.h"
#include "cuda/attention_cuda.h"

// Return codes (src/error.h's values; kernels/ does not include src/).
enum { PP_CUDA_OK = 0, PP_CUDA_ERR_RUNTIME = 3 };

typedef struct attn_cuda_ctx {
    char *errbuf;
    size_t errlen;
} attn_cuda_ctx;

static int attn_cuda_fail(attn_cuda_ctx *c, const char *file, int line, const char *what, cudaError_t e)
{
    if (c->errbuf && c->errlen)
        snprintf(c->errbuf, c->errlen, "%s:%d: %s: %s", file, line, what, cudaGetErrorString(e));
    return PP_CUDA_ERR_RUNTIME;
}

// On failure: "file:line: call: reason" in the context's buffer, return 3.
#define PP_CUDA_CHECK(ctx, call)                                                                  \
    do {                                                                                          \
        cudaError_t pp_e_ = (call);                                                               \
        if (pp_e_ != cudaSuccess)                                                                 \
            return attn_cuda_fail((ctx), __FILE__, __LINE__, #call, pp_e_);                       \
    } while (0)

// Thread t of launch L; a grid-stride loop so any n fits the grid.
__global__ void pp_attn_kernel1(pp_attn_launch L)
{
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < L.n; t += stride)
        pp_attn_thread(&L, t);
}

static const int PP_ATTN_BLOCK = 128;

static int attn_cuda_alloc(void *ctx, void **p, size_t bytes)
{
    *p = NULL;
    PP_CUDA_CHECK((attn_cuda_ctx *)ctx, cudaMalloc(p, bytes));
    return PP_CUDA_OK;
}

static void attn_cuda_release(void *ctx, void *p)
{
    (void)ctx;
    if (p)
        cudaFree(p);  // a failing free leaves nothing to undo; the run's result is already decided
}

static int attn_cuda_upload(void *ctx, void *dst, const void *src, size_t bytes)
{
    PP_CUDA_CHECK((attn_cuda_ctx *)ctx, cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
    return PP_CUDA_OK;
}

// A copy after launches also reports their faults (illegal address, …): cudaMemcpy waits.
static int attn_cuda_download(void *ctx, void *dst, const void *src, size_t bytes)
{
    PP_CUDA_CHECK((attn_cuda_ctx *)ctx, cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
    return PP_CUDA_OK;
}

static int attn_cuda_launch(void *ctx, const pp_attn_launch *L)
{
    int64_t blocks = (L->n + PP_ATTN_BLOCK - 1) / PP_ATTN_BLOCK;
    if (blocks > ((int64_t)1 << 30))
        blocks = (int64_t)1 << 30;
    pp_attn_kernel1<<<(unsigned)blocks, PP_ATTN_BLOCK>>>(*L);
    PP_CUDA_CHECK((attn_cuda_ctx *)ctx, cudaGetLastError());
    return PP_CUDA_OK;
}

extern "C" int pp_attention_cuda(const pp_attn_variant *v, const pp_attn_dims *dims, int backward, const double *q,
                                 const double *k, const double *vv, const double *dout, double *out, double *lse,
                                 double *dq, double *dk, double *dv, char *errbuf, size_t errlen)
{
    attn_cuda_ctx ctx = {errbuf, errlen};
    pp_attn_device dev = {&ctx, attn_cuda_alloc, attn_cuda_release, attn_cuda_upload, attn_cuda_download,
                          attn_cuda_launch};
    return pp_attn_plan_run(&dev, v, dims, backward, q, k, vv, dout, out, lse, dq, dk, dv, errbuf, errlen);
}
