// format_kernels.cu — rounding of whole arrays on the GPU with kernels/format.h: one thread per
// element calling the same pp_round / pp_round_<fmt>_<mode> the CPU calls (integer operations
// only, so the bits match the CPU's). Host launchers in cuda/format_cuda.h.
// Build (the Makefile does): nvcc -O2 -std=c++17 --fmad=false -Isrc -Ikernels
//   -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -c format_kernels.cu
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#include "format.h"
#include "cuda/cuda_check.h"
#include "cuda/format_cuda.h"

// ---------------------------------------------------------------------------------------------
// GPU kernels: kernel1 = one thread per element of the CPU loop

__global__ void pp_round_kernel1(pp_format_id f, pp_rounding mode, const double *x,
                                 const uint32_t *rbits, double *y, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = pp_round(f, x[i], mode, rbits ? rbits[i] : 0u);
}

__device__ static float pp_round_named_f32(pp_format_id f, pp_rounding m, float x, uint32_t r)
{
#define PP_NAMED(fmt) m == PP_RND_NE ? pp_round_##fmt##_ne(x) : m == PP_RND_TZ ? pp_round_##fmt##_tz(x) : pp_round_##fmt##_sr(x, r)
    switch (f) {
    case PP_FMT_TF32: return PP_NAMED(tf32);
    case PP_FMT_FP16: return PP_NAMED(fp16);
    case PP_FMT_BF16: return PP_NAMED(bf16);
    case PP_FMT_E4M3: return PP_NAMED(e4m3);
    case PP_FMT_E5M2: return PP_NAMED(e5m2);
    default: return pp_round_from_f32(f, x, m, r);
    }
#undef PP_NAMED
}

__global__ void pp_round_f32_kernel1(pp_format_id f, pp_rounding mode, const float *x,
                                     const uint32_t *rbits, float *y, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = pp_round_named_f32(f, mode, x[i], rbits ? rbits[i] : 0u);
}

__global__ void pp_round_fp32_kernel1(pp_rounding mode, const double *x, const uint32_t *rbits,
                                      float *y, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        uint32_t r = rbits ? rbits[i] : 0u;
        y[i] = mode == PP_RND_NE ? pp_round_fp32_ne(x[i])
             : mode == PP_RND_TZ ? pp_round_fp32_tz(x[i]) : pp_round_fp32_sr(x[i], r);
    }
}

// ---------------------------------------------------------------------------------------------
// Kernel launcher: copy in, one launch, copy out (the copy back synchronizes and reports errors
// raised while the kernel ran)

template <typename Tin, typename Tout, typename Launch>
static int pp_cuda_run(const Tin *x, const uint32_t *rbits, Tout *y, size_t n, char *errbuf,
                       size_t errlen, Launch launch)
{
    const unsigned threads = 256;
    int rc = PP_CUDA_OK;
    Tin *dx = NULL;
    Tout *dy = NULL;
    uint32_t *dr = NULL;
    size_t blocks = (n + threads - 1) / threads;
    if (n == 0)
        return PP_CUDA_OK;
    if (!x || !y || blocks > 0x7FFFFFFFu || n > SIZE_MAX / sizeof(double)) {
        pp_cuda_message(errbuf, errlen, __FILE__, __LINE__, "pp_cuda_round",
                        !x || !y ? "NULL array" : "too many elements for one launch");
        return PP_CUDA_ERR_INPUT;
    }
    PP_CUDA_CHECK(cudaMalloc((void **)&dx, n * sizeof *dx));
    PP_CUDA_CHECK(cudaMalloc((void **)&dy, n * sizeof *dy));
    PP_CUDA_CHECK(cudaMemcpy(dx, x, n * sizeof *dx, cudaMemcpyHostToDevice));
    if (rbits) {
        PP_CUDA_CHECK(cudaMalloc((void **)&dr, n * sizeof *dr));
        PP_CUDA_CHECK(cudaMemcpy(dr, rbits, n * sizeof *dr, cudaMemcpyHostToDevice));
    }
    launch((unsigned)blocks, threads, dx, dr, dy, n);
    PP_CUDA_CHECK(cudaGetLastError());
    PP_CUDA_CHECK(cudaMemcpy(y, dy, n * sizeof *dy, cudaMemcpyDeviceToHost));
done:
    cudaFree(dx);
    cudaFree(dy);
    cudaFree(dr);
    return rc;
}

static int pp_cuda_bad_args(pp_format_id f, pp_rounding mode, char *errbuf, size_t errlen)
{
    if ((unsigned)f >= (unsigned)PP_FMT_COUNT || (unsigned)mode > (unsigned)PP_RND_SR) {
        pp_cuda_message(errbuf, errlen, __FILE__, __LINE__, "pp_cuda_round",
                        (unsigned)f >= (unsigned)PP_FMT_COUNT ? "unknown format id" : "unknown rounding mode");
        return PP_CUDA_ERR_INPUT;
    }
    return PP_CUDA_OK;
}

extern "C" int pp_cuda_device_count(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError();  // clear the sticky error of a missing driver or device
        return 0;
    }
    return count;
}

extern "C" void pp_cuda_device_name(int i, char *buf, size_t n)
{
    cudaDeviceProp prop;
    if (!buf || !n)
        return;
    buf[0] = '\0';
    if (cudaGetDeviceProperties(&prop, i) == cudaSuccess)
        snprintf(buf, n, "%s", prop.name);
    else
        cudaGetLastError();
}

extern "C" int pp_cuda_round_array(pp_format_id f, pp_rounding mode, const double *x,
                                   const uint32_t *rbits, double *y, size_t n, char *errbuf,
                                   size_t errlen)
{
    int rc = pp_cuda_bad_args(f, mode, errbuf, errlen);
    if (rc)
        return rc;
    return pp_cuda_run(x, rbits, y, n, errbuf, errlen,
                       [=](unsigned b, unsigned t, const double *dx, const uint32_t *dr, double *dy, size_t m) {
                           pp_round_kernel1<<<b, t>>>(f, mode, dx, dr, dy, m);
                       });
}

extern "C" int pp_cuda_round_f32_array(pp_format_id f, pp_rounding mode, const float *x,
                                       const uint32_t *rbits, float *y, size_t n, char *errbuf,
                                       size_t errlen)
{
    int rc = pp_cuda_bad_args(f, mode, errbuf, errlen);
    if (rc)
        return rc;
    return pp_cuda_run(x, rbits, y, n, errbuf, errlen,
                       [=](unsigned b, unsigned t, const float *dx, const uint32_t *dr, float *dy, size_t m) {
                           pp_round_f32_kernel1<<<b, t>>>(f, mode, dx, dr, dy, m);
                       });
}

extern "C" int pp_cuda_round_fp32_array(pp_rounding mode, const double *x, const uint32_t *rbits,
                                        float *y, size_t n, char *errbuf, size_t errlen)
{
    int rc = pp_cuda_bad_args(PP_FMT_FP32, mode, errbuf, errlen);
    if (rc)
        return rc;
    return pp_cuda_run(x, rbits, y, n, errbuf, errlen,
                       [=](unsigned b, unsigned t, const double *dx, const uint32_t *dr, float *dy, size_t m) {
                           pp_round_fp32_kernel1<<<b, t>>>(mode, dx, dr, dy, m);
                       });
}
