// attention_kernels.cu — the attention on the GPU: one kernel that runs thread t of a launch
// description (kernels/attention_threads.h, the per-thread bodies the CPU emulation runs too),
// and the CUDA device behind kernels/attention_plan.c's launch sequence, with engine cublas's
// GEMMs through cublasGemmStridedBatchedEx. Host launcher in cuda/attention_cuda.h.
// Build (the Makefile does): nvcc -O2 -std=c++17 --fmad=false -Isrc -Ikernels -c attention_kernels.cu
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "attention_plan.h"
#include "attention_threads.h"
#include "cuda/attention_cuda.h"
#include "cuda/ranges_cuda.h"

// Return codes (base/error.h's values; kernels/ does not include src/).
enum { PP_CUDA_OK = 0, PP_CUDA_ERR_RUNTIME = 3 };

typedef struct attn_cuda_ctx {
    char *errbuf;
    size_t errlen;
    // engine cublas: the handle (made at the first GEMM) and grow-only scratch for the operands
    // in the storage type (ta, tb) and the result (tc)
    cublasHandle_t handle;
    void *ta, *tb, *tc;
    size_t cap_a, cap_b, cap_c;
    pp_ranges *d_ranges;  // range diagnostics: the device accumulator every launch notes into, or NULL
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

static int attn_cublas_fail(attn_cuda_ctx *c, const char *file, int line, const char *what, cublasStatus_t st)
{
    if (c->errbuf && c->errlen)
        snprintf(c->errbuf, c->errlen, "%s:%d: %s: cuBLAS status %d (%s)", file, line, what, (int)st,
                 cublasGetStatusString(st));
    return PP_CUDA_ERR_RUNTIME;
}

#define PP_CUBLAS_CHECK(ctx, call)                                                                \
    do {                                                                                          \
        cublasStatus_t pp_s_ = (call);                                                            \
        if (pp_s_ != CUBLAS_STATUS_SUCCESS)                                                       \
            return attn_cublas_fail((ctx), __FILE__, __LINE__, #call, pp_s_);                     \
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
    pp_attn_launch Ld = *L;
    Ld.ranges = ((attn_cuda_ctx *)ctx)->d_ranges;  // one accumulator: the notes are atomic (ranges.h)
    pp_attn_kernel1<<<(unsigned)blocks, PP_ATTN_BLOCK>>>(Ld);
    PP_CUDA_CHECK((attn_cuda_ctx *)ctx, cudaGetLastError());
    return PP_CUDA_OK;
}

// ---------------------------------------------------------------------------------------------
// Engine cublas: the device's GEMM (pp_attn_gemm's contract, kernels/attention_plan.h)

// Values of F between the binary32 work buffers and cuBLAS's storage types: exact both ways (a
// value of F converts to F's own type without rounding; NaN and ±Inf stay NaN and ±Inf).
__device__ static inline void pp_attn_to(float x, __half *y) { *y = __float2half_rn(x); }
__device__ static inline void pp_attn_to(float x, __nv_bfloat16 *y) { *y = __float2bfloat16_rn(x); }
__device__ static inline void pp_attn_to(float x, float *y) { *y = x; }  // fp32: never launched
__device__ static inline float pp_attn_from(float x) { return x; }
__device__ static inline float pp_attn_from(__half x) { return __half2float(x); }
__device__ static inline float pp_attn_from(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T> __global__ void pp_attn_pack(const float *x, T *y, int64_t n)
{
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        pp_attn_to(x[i], &y[i]);
}

template <typename T> __global__ void pp_attn_unpack(const T *x, float *y, int64_t n)
{
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = pp_attn_from(x[i]);
}

static unsigned attn_blocks(int64_t n)
{
    int64_t blocks = (n + PP_ATTN_BLOCK - 1) / PP_ATTN_BLOCK;
    return (unsigned)(blocks > ((int64_t)1 << 30) ? ((int64_t)1 << 30) : blocks < 1 ? 1 : blocks);
}

// Scratch buffer *p of at least bytes (grow-only; the old contents are not kept).
static int attn_scratch(attn_cuda_ctx *c, void **p, size_t *cap, size_t bytes)
{
    if (*cap >= bytes)
        return PP_CUDA_OK;
    if (*p)
        cudaFree(*p);
    *p = NULL;
    *cap = 0;
    PP_CUDA_CHECK(c, cudaMalloc(p, bytes));
    *cap = bytes;
    return PP_CUDA_OK;
}

// The elements operand X spans: batch strides plus one stored matrix (rows of ld elements).
static int64_t attn_span(int64_t batch, int64_t stride, int64_t rows, int64_t ld)
{
    return (batch - 1) * stride + rows * ld;
}

// The GEMM on storage type T (16F or 16BF), the fp32 operands packed into scratch first and the
// result unpacked after; fp32 storage passes the work buffers straight to cuBLAS.
// Row-major C = op(A)·op(B) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ: B goes first, m and n swap.
template <typename T>
static int attn_gemm_typed(attn_cuda_ctx *c, const pp_attn_gemm *G, cudaDataType_t type)
{
    const void *a = G->a, *b = G->b;
    void *cc = G->c;
    int64_t na = attn_span(G->batch, G->sa, G->ta ? G->k : G->m, G->lda);
    int64_t nb = attn_span(G->batch, G->sb, G->tb ? G->n : G->k, G->ldb);
    int64_t nc = G->batch * G->m * G->n;
    int narrow = type != CUDA_R_32F;
    if (narrow) {
        int rc = attn_scratch(c, &c->ta, &c->cap_a, (size_t)na * sizeof(T));
        if (!rc)
            rc = attn_scratch(c, &c->tb, &c->cap_b, (size_t)nb * sizeof(T));
        if (!rc)
            rc = attn_scratch(c, &c->tc, &c->cap_c, (size_t)nc * sizeof(T));
        if (rc)
            return rc;
        pp_attn_pack<T><<<attn_blocks(na), PP_ATTN_BLOCK>>>(G->a, (T *)c->ta, na);
        PP_CUDA_CHECK(c, cudaGetLastError());
        pp_attn_pack<T><<<attn_blocks(nb), PP_ATTN_BLOCK>>>(G->b, (T *)c->tb, nb);
        PP_CUDA_CHECK(c, cudaGetLastError());
        a = c->ta, b = c->tb, cc = c->tc;
    }
    // Compute type (kernels/attention.h, "Engine cublas"): 32F for accumulate fp32 and for fp32
    // storage; 16F for fp16 with accumulate storage, alpha and beta then binary16. beta = 0.
    int c16 = G->accum == PP_ATTN_ACC_STORAGE && G->f == PP_FMT_FP16;
    float alpha32 = (float)G->alpha, beta32 = 0.0f;
    __half alpha16 = __float2half_rn((float)G->alpha), beta16 = __float2half_rn(0.0f);
    PP_CUBLAS_CHECK(c, cublasGemmStridedBatchedEx(
                           c->handle, G->tb ? CUBLAS_OP_T : CUBLAS_OP_N, G->ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                           (int)G->n, (int)G->m, (int)G->k, c16 ? (const void *)&alpha16 : (const void *)&alpha32,
                           b, type, (int)G->ldb, (long long)G->sb, a, type, (int)G->lda, (long long)G->sa,
                           c16 ? (const void *)&beta16 : (const void *)&beta32, cc, type, (int)G->ldc,
                           (long long)G->sc, (int)G->batch, c16 ? CUBLAS_COMPUTE_16F : CUBLAS_COMPUTE_32F,
                           CUBLAS_GEMM_DEFAULT));
    if (narrow) {
        pp_attn_unpack<T><<<attn_blocks(nc), PP_ATTN_BLOCK>>>((const T *)c->tc, G->c, nc);
        PP_CUDA_CHECK(c, cudaGetLastError());
    }
    return PP_CUDA_OK;
}

static int attn_cuda_gemm(void *ctx, const pp_attn_gemm *G)
{
    attn_cuda_ctx *c = (attn_cuda_ctx *)ctx;
    if (G->m > INT32_MAX || G->n > INT32_MAX || G->k > INT32_MAX || G->batch > INT32_MAX || G->lda > INT32_MAX ||
        G->ldb > INT32_MAX || G->ldc != G->n || G->sc != G->m * G->n) {
        if (c->errbuf && c->errlen)
            snprintf(c->errbuf, c->errlen, "engine cublas: a GEMM's extents exceed cuBLAS's 32-bit int (m %lld, "
                     "n %lld, k %lld, batch %lld)", (long long)G->m, (long long)G->n, (long long)G->k,
                     (long long)G->batch);
        return PP_CUDA_ERR_RUNTIME;
    }
    if (G->accum == PP_ATTN_ACC_STORAGE && G->f == PP_FMT_BF16) {  // the plan rejects this first
        if (c->errbuf && c->errlen)
            snprintf(c->errbuf, c->errlen, "engine cublas: cuBLAS has no bf16 compute type");
        return PP_CUDA_ERR_RUNTIME;
    }
    if (!c->handle) {
        PP_CUBLAS_CHECK(c, cublasCreate(&c->handle));
        // cuBLAS's default math mode, as PyTorch leaves it (kernels/attention.h, "Engine cublas").
        PP_CUBLAS_CHECK(c, cublasSetMathMode(c->handle, CUBLAS_DEFAULT_MATH));
    }
    switch (G->f) {
    case PP_FMT_FP16: return attn_gemm_typed<__half>(c, G, CUDA_R_16F);
    case PP_FMT_BF16: return attn_gemm_typed<__nv_bfloat16>(c, G, CUDA_R_16BF);
    default: return attn_gemm_typed<float>(c, G, CUDA_R_32F);
    }
}

extern "C" int pp_attention_cuda(const pp_attn_variant *v, const pp_attn_dims *dims, int backward, const double *q,
                                 const double *k, const double *vv, const double *dout, double *out, double *lse,
                                 double *dq, double *dk, double *dv, char *errbuf, size_t errlen)
{
    return pp_attention_cuda_ranges(v, dims, backward, q, k, vv, dout, out, lse, dq, dk, dv, NULL, errbuf, errlen);
}

extern "C" int pp_attention_cuda_ranges(const pp_attn_variant *v, const pp_attn_dims *dims, int backward,
                                        const double *q, const double *k, const double *vv, const double *dout,
                                        double *out, double *lse, double *dq, double *dk, double *dv, pp_ranges *R,
                                        char *errbuf, size_t errlen)
{
    attn_cuda_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.errbuf = errbuf;
    ctx.errlen = errlen;
    pp_attn_device dev = {&ctx, attn_cuda_alloc, attn_cuda_release, attn_cuda_upload, attn_cuda_download,
                          attn_cuda_launch, attn_cuda_gemm, 0};  // scratch: no limit, one slice
    int rc = pp_ranges_cuda_alloc(R, &ctx.d_ranges, errbuf, errlen);  // R NULL: none
    if (!rc)
        rc = pp_attn_plan_run(&dev, v, dims, backward, q, k, vv, dout, out, lse, dq, dk, dv, errbuf, errlen);
    if (ctx.d_ranges) {  // after the plan's last copy, which waited for every launch
        int rr = pp_ranges_cuda_collect(ctx.d_ranges, R, errbuf, errlen);
        rc = rc ? rc : rr;
    }
    if (ctx.handle)
        cublasDestroy(ctx.handle);  // after the plan's last copy, which waited for every GEMM
    cudaFree(ctx.ta);
    cudaFree(ctx.tb);
    cudaFree(ctx.tc);
    return rc;
}
