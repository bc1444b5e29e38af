// gemm_kernels.cu — the batched GEMM on the GPU: gemm_kernel1 (one thread per output element,
// the one loop order of kernels/gemm_thread.h that the CPU emulation runs too, so bit-identical) and the cuBLAS
// vendor path. Host launchers in cuda/gemm_cuda.h.
// Build (the Makefile does): nvcc -O2 -std=c++17 --fmad=false -Isrc -Ikernels -c gemm_kernels.cu
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#include "cuda/cuda_check.h"
#include "cuda/gemm_cuda.h"
#include "cuda/ranges_cuda.h"
#include "gemm.h"
#include "gemm_thread.h"

// cuBLAS calls fail like CUDA calls (cuda/cuda_check.h): one line, rc = 3, `goto done`.
#define PP_CUBLAS_CHECK(call)                                                                     \
    do {                                                                                          \
        cublasStatus_t pp_s_ = (call);                                                            \
        if (pp_s_ != CUBLAS_STATUS_SUCCESS) {                                                     \
            char pp_why_[32];                                                                     \
            snprintf(pp_why_, sizeof pp_why_, "cuBLAS status %d", (int)pp_s_);                    \
            pp_cuda_message(errbuf, errlen, __FILE__, __LINE__, #call, pp_why_);                  \
            rc = PP_CUDA_ERR_RUNTIME;                                                             \
            goto done;                                                                            \
        }                                                                                         \
    } while (0)

// ---------------------------------------------------------------------------------------------
// GPU kernels

// kernel1: thread t computes C[bi, i, j] (t = (bi·m + i)·n + j): the one loop order of
// kernels/gemm_thread.h with one lane, as the CPU runs it with a tile of lanes. R (the device
// accumulator, or NULL): the element's range notes (pp_gemm_row_notes, as the CPU's), every
// operand finite or not (operands_finite, from pp_gemm_nonfinite_kernel1).
__global__ void pp_gemm_kernel1(pp_format_id f, pp_gemm_accum accum, double alpha_c, int64_t m, int64_t n,
                                int64_t k, const double *a, const double *b, double *c, int64_t total, pp_ranges *R,
                                int operands_finite)
{
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total)
        return;
    int64_t j = t % n, i = (t / n) % m, bi = t / (m * n);
    float acc32;
    double acc64;
    pp_gemm_lane_acc acc = {&acc32, &acc64};
    double *crow = c + (bi * m + i) * n;
    pp_gemm_row_run(f, accum, alpha_c, n, k, a + (bi * m + i) * k, b + bi * k * n, j, 1, crow, acc,
                    0, 0);  // the documented order, nothing exact: --orders and explain run on the CPU emulation
    pp_gemm_row_notes(R, f, accum, alpha_c, j, 1, acc, crow, operands_finite);
}

// x' = RN_F(RN_32(s·x)) element-wise (pp_gemm_prescale, as the CPU's gemm_prescale; in place
// allowed: a thread reads its x before it writes its y). R: the range note of each element at
// site (quant_a or quant_b), as the CPU's.
__global__ void pp_gemm_prescale_kernel1(pp_format_id f, double s, const double *x, double *y, int64_t count,
                                         pp_ranges *R, int site)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count)
        return;
    double xi = x[i], yi = pp_gemm_prescale(f, s, xi);
    y[i] = yi;
    pp_range_note(R, site, 0, f, s * xi, yi);
}

// *flag = 1 when some element of x is not finite (the range notes' operands_finite; any order).
__global__ void pp_gemm_nonfinite_kernel1(const double *x, int64_t count, unsigned *flag)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count && !isfinite(x[i]))
        atomicOr(flag, 1u);
}

// Values of the storage format to and from cuBLAS's types: exact both ways (a value of F is a
// binary32 value, and converting it to F's own type does not round).
template <typename T> __device__ T pp_to_storage(double x);
template <> __device__ float pp_to_storage<float>(double x) { return (float)x; }
template <> __device__ __half pp_to_storage<__half>(double x) { return __float2half_rn((float)x); }
template <> __device__ __nv_bfloat16 pp_to_storage<__nv_bfloat16>(double x) { return __float2bfloat16_rn((float)x); }
__device__ double pp_from_storage(float x) { return x; }
__device__ double pp_from_storage(__half x) { return __half2float(x); }
__device__ double pp_from_storage(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T> __global__ void pp_pack_kernel(const double *x, T *y, int64_t count)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count)
        y[i] = pp_to_storage<T>(x[i]);
}

template <typename T> __global__ void pp_unpack_kernel(const T *x, double *y, int64_t count)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count)
        y[i] = pp_from_storage(x[i]);
}

// ---------------------------------------------------------------------------------------------
// Launchers

static const int PP_BLOCK = 256;

static unsigned blocks_for(int64_t count)
{
    return (unsigned)((count + PP_BLOCK - 1) / PP_BLOCK);
}

// Checks shared by both launchers: extents, scalars, and that the inputs are values of F (as
// pp_gemm_cpu checks). Returns 0 or PP_CUDA_ERR_INPUT with a message.
static int gemm_check(const pp_gemm_variant *v, int64_t batch, int64_t m, int64_t n, int64_t k, const double *a,
                      const double *b, pp_gemm_scalars *s, char *errbuf, size_t errlen)
{
    const int64_t max = (int64_t)1 << 40;
    if (batch < 0 || m < 0 || n < 0 || k < 0 || (batch && m && k && (m * k > max / batch)) ||
        (batch && k && n && (k * n > max / batch)) || (batch && m && n && (m * n > max / batch))) {
        if (errbuf && errlen)
            snprintf(errbuf, errlen, "extents out of range");
        return PP_CUDA_ERR_INPUT;
    }
    if (pp_gemm_scalars_make(v, k, s)) {
        if (errbuf && errlen)
            snprintf(errbuf, errlen, "bad variant (format, accumulation, or alpha)");
        return PP_CUDA_ERR_INPUT;
    }
    const double *ops[2] = {a, b};
    int64_t counts[2] = {batch * m * k, batch * k * n};
    for (int o = 0; o < 2; o++)
        for (int64_t i = 0; i < counts[o]; i++) {
            double x = ops[o][i];
            if (x == x && pp_round(v->format, x, PP_RND_NE, 0) != x) {
                if (errbuf && errlen)
                    snprintf(errbuf, errlen, "%s[%lld] = %.17g is not a value of %s", o ? "B" : "A",
                             (long long)i, x, pp_format_get(v->format).name);
                return PP_CUDA_ERR_INPUT;
            }
        }
    return PP_CUDA_OK;
}

// Copies A and B to the device and applies the variant's prescale there. On return *da, *db
// hold the operands the GEMM multiplies (device memory the caller frees). R: the device
// accumulator the prescale notes into (quant_a, quant_b), or NULL.
static int gemm_operands(const pp_gemm_variant *v, const pp_gemm_scalars *s, int64_t na, int64_t nb,
                         const double *a, const double *b, double **da, double **db, pp_ranges *R, char *errbuf,
                         size_t errlen)
{
    int rc = PP_CUDA_OK;
    PP_CUDA_CHECK(cudaMalloc((void **)da, (size_t)(na ? na : 1) * sizeof(double)));
    PP_CUDA_CHECK(cudaMalloc((void **)db, (size_t)(nb ? nb : 1) * sizeof(double)));
    if (na)
        PP_CUDA_CHECK(cudaMemcpy(*da, a, (size_t)na * sizeof(double), cudaMemcpyHostToDevice));
    if (nb)
        PP_CUDA_CHECK(cudaMemcpy(*db, b, (size_t)nb * sizeof(double), cudaMemcpyHostToDevice));
    if (v->scale != PP_GEMM_SCALE_POST && na) {
        pp_gemm_prescale_kernel1<<<blocks_for(na), PP_BLOCK>>>(v->format, s->scale_a, *da, *da, na, R,
                                                               PP_SITE_GEMM_QUANT_A);
        PP_CUDA_CHECK(cudaGetLastError());
    }
    if (v->scale == PP_GEMM_SCALE_PRE && nb) {
        pp_gemm_prescale_kernel1<<<blocks_for(nb), PP_BLOCK>>>(v->format, s->scale_b, *db, *db, nb, R,
                                                               PP_SITE_GEMM_QUANT_B);
        PP_CUDA_CHECK(cudaGetLastError());
    }
done:
    return rc;
}

extern "C" int pp_gemm_cuda(const pp_gemm_variant *v, int64_t batch, int64_t m, int64_t n, int64_t k,
                            const double *a, const double *b, double *c, char *errbuf, size_t errlen)
{
    return pp_gemm_cuda_ranges(v, batch, m, n, k, a, b, c, NULL, errbuf, errlen);
}

extern "C" int pp_gemm_cuda_ranges(const pp_gemm_variant *v, int64_t batch, int64_t m, int64_t n, int64_t k,
                                   const double *a, const double *b, double *c, pp_ranges *R, char *errbuf,
                                   size_t errlen)
{
    pp_gemm_scalars s;
    int rc = gemm_check(v, batch, m, n, k, a, b, &s, errbuf, errlen);
    if (rc)
        return rc;
    int64_t na = batch * m * k, nb = batch * k * n, nc = batch * m * n;
    double *da = NULL, *db = NULL, *dc = NULL;
    pp_ranges *dR = NULL;
    unsigned *dflag = NULL, nonfinite = 0;
    if (nc == 0)  // nothing to compute and nothing noted (the CPU returns before its prescale too)
        return PP_CUDA_OK;
    if ((rc = pp_ranges_cuda_alloc(R, &dR, errbuf, errlen)))
        goto done;
    if ((rc = gemm_operands(v, &s, na, nb, a, b, &da, &db, dR, errbuf, errlen)))
        goto done;
    if (dR) {  // the notes' operands_finite, over the operands after their prescale (as the CPU's)
        PP_CUDA_CHECK(cudaMalloc((void **)&dflag, sizeof *dflag));
        PP_CUDA_CHECK(cudaMemset(dflag, 0, sizeof *dflag));
        if (na)
            pp_gemm_nonfinite_kernel1<<<blocks_for(na), PP_BLOCK>>>(da, na, dflag);
        if (nb)
            pp_gemm_nonfinite_kernel1<<<blocks_for(nb), PP_BLOCK>>>(db, nb, dflag);
        PP_CUDA_CHECK(cudaGetLastError());
        PP_CUDA_CHECK(cudaMemcpy(&nonfinite, dflag, sizeof nonfinite, cudaMemcpyDeviceToHost));
    }
    PP_CUDA_CHECK(cudaMalloc((void **)&dc, (size_t)nc * sizeof(double)));
    pp_gemm_kernel1<<<blocks_for(nc), PP_BLOCK>>>(v->format, v->accum, s.alpha_c, m, n, k, da, db, dc, nc, dR,
                                                  !nonfinite);
    PP_CUDA_CHECK(cudaGetLastError());
    PP_CUDA_CHECK(cudaMemcpy(c, dc, (size_t)nc * sizeof(double), cudaMemcpyDeviceToHost));
    rc = pp_ranges_cuda_collect(dR, R, errbuf, errlen);
    dR = NULL;  // collected (and freed)
done:
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    cudaFree(dR);
    cudaFree(dflag);
    return rc;
}

// The cuBLAS GEMM on storage type T: C = alpha·A·B row-major is Cᵀ = Bᵀ·Aᵀ column-major, so B
// is passed first and m, n swap.
template <typename T>
static int gemm_cublas_typed(const pp_gemm_variant *v, const pp_gemm_scalars *s, cudaDataType_t type, int64_t batch,
                             int64_t m, int64_t n, int64_t k, const double *da, const double *db, double *c,
                             char *errbuf, size_t errlen)
{
    int rc = PP_CUDA_OK;
    int64_t na = batch * m * k, nb = batch * k * n, nc = batch * m * n;
    T *ta = NULL, *tb = NULL, *tc = NULL;
    double *dc = NULL;
    cublasHandle_t h = NULL;
    float alpha32 = (float)s->alpha_c, beta32 = 0.0f;
    __half alpha16 = __float2half_rn((float)s->alpha_c), beta16 = __float2half_rn(0.0f);
    int storage16 = v->accum == PP_GEMM_ACC_STORAGE && v->format == PP_FMT_FP16;
    PP_CUDA_CHECK(cudaMalloc((void **)&ta, (size_t)(na ? na : 1) * sizeof(T)));
    PP_CUDA_CHECK(cudaMalloc((void **)&tb, (size_t)(nb ? nb : 1) * sizeof(T)));
    PP_CUDA_CHECK(cudaMalloc((void **)&tc, (size_t)(nc ? nc : 1) * sizeof(T)));
    PP_CUDA_CHECK(cudaMalloc((void **)&dc, (size_t)(nc ? nc : 1) * sizeof(double)));
    if (na)
        pp_pack_kernel<T><<<blocks_for(na), PP_BLOCK>>>(da, ta, na);
    if (nb)
        pp_pack_kernel<T><<<blocks_for(nb), PP_BLOCK>>>(db, tb, nb);
    PP_CUDA_CHECK(cudaGetLastError());
    PP_CUBLAS_CHECK(cublasCreate(&h));
    PP_CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
    if (nc)
        PP_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
            h, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m, (int)k, storage16 ? (const void *)&alpha16 : (const void *)&alpha32,
            tb, type, (int)n, (long long)(k * n), ta, type, (int)k, (long long)(m * k),
            storage16 ? (const void *)&beta16 : (const void *)&beta32, tc, type, (int)n, (long long)(m * n), (int)batch,
            storage16 ? CUBLAS_COMPUTE_16F : CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    if (nc) {
        pp_unpack_kernel<T><<<blocks_for(nc), PP_BLOCK>>>(tc, dc, nc);
        PP_CUDA_CHECK(cudaGetLastError());
        PP_CUDA_CHECK(cudaMemcpy(c, dc, (size_t)nc * sizeof(double), cudaMemcpyDeviceToHost));
    }
done:
    if (h)
        cublasDestroy(h);
    cudaFree(ta);
    cudaFree(tb);
    cudaFree(tc);
    cudaFree(dc);
    return rc;
}

extern "C" int pp_gemm_cublas(const pp_gemm_variant *v, int64_t batch, int64_t m, int64_t n, int64_t k,
                              const double *a, const double *b, double *c, char *errbuf, size_t errlen)
{
    pp_gemm_scalars s;
    int rc = gemm_check(v, batch, m, n, k, a, b, &s, errbuf, errlen);
    if (rc)
        return rc;
    if (v->accum == PP_GEMM_ACC_STORAGE && v->format != PP_FMT_FP16 && v->format != PP_FMT_FP32) {
        if (errbuf && errlen)
            snprintf(errbuf, errlen, "engine cublas: cuBLAS has no %s compute type (accumulate = storage needs fp16 "
                     "or fp32)", pp_format_get(v->format).name);
        return PP_CUDA_ERR_INPUT;
    }
    if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX || batch > INT32_MAX) {
        if (errbuf && errlen)
            snprintf(errbuf, errlen, "engine cublas: extents beyond cuBLAS's 32-bit int");
        return PP_CUDA_ERR_INPUT;
    }
    double *da = NULL, *db = NULL;
    if ((rc = gemm_operands(v, &s, batch * m * k, batch * k * n, a, b, &da, &db, NULL, errbuf, errlen)))
        goto done;
    switch (v->format) {
    case PP_FMT_FP16: rc = gemm_cublas_typed<__half>(v, &s, CUDA_R_16F, batch, m, n, k, da, db, c, errbuf, errlen); break;
    case PP_FMT_BF16:
        rc = gemm_cublas_typed<__nv_bfloat16>(v, &s, CUDA_R_16BF, batch, m, n, k, da, db, c, errbuf, errlen);
        break;
    default: rc = gemm_cublas_typed<float>(v, &s, CUDA_R_32F, batch, m, n, k, da, db, c, errbuf, errlen); break;
    }
done:
    cudaFree(da);
    cudaFree(db);
    return rc;
}
