// attention_te_kernels.cu — fp8 = "te" on the GPU (cuda/attention_te_cuda.h): thread r runs query
// row r through pp_attn_te_row_at, the CPU device's body. Run on an H100 on 2026-11-26: tests/test_attention_te_cuda.c
// (16 configurations of the te_* knobs, causal, GQA) and fp8-attention's fp8-te, fp8-te-stale-s with
// --cross-check were bit-identical to the CPU emulation.
// Build (the Makefile does): nvcc -O2 -std=c++17 --fmad=false -Isrc -Ikernels -c attention_te_kernels.cu
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#include "attention_te_fp8.h"
#include "cuda/attention_te_cuda.h"
#include "cuda/cuda_check.h"

// ---------------------------------------------------------------------------------------------
// GPU kernel

// Thread r: query row r (x: its own s_kv scores in global memory).
__global__ void pp_attn_te_rows_kernel1(pp_attn_te_cfg c, pp_attn_dims dm, const float *q8, const float *k8,
                                        const float *v8, float *x, float *o, float *lse, float *amax_s, int64_t rows)
{
    int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows)
        pp_attn_te_row_at(&c, &dm, q8, k8, v8, r, x + r * dm.s_kv, o, lse, amax_s);
}

// ---------------------------------------------------------------------------------------------
// Launcher: the device of kernels/attention_te_run.h

static int cuda_rows(void *ctx, const pp_attn_te_cfg *c, const pp_attn_dims *dm, const float *q8, const float *k8,
                     const float *v8, float *o, float *lse, float *amax_s, char *errbuf, size_t errlen)
{
    (void)ctx;
    int rc = PP_CUDA_OK;
    int64_t nq = dm->b * dm->s_q * dm->h * dm->d, nkv = dm->b * dm->s_kv * dm->h_kv * dm->d,
            rows = dm->b * dm->h * dm->s_q;
    float *dq = NULL, *dk = NULL, *dv = NULL, *dx = NULL, *dout = NULL, *dl = NULL;
    const int block = 128;
    PP_CUDA_CHECK(cudaMalloc((void **)&dq, (size_t)nq * sizeof(float)));
    PP_CUDA_CHECK(cudaMalloc((void **)&dk, (size_t)nkv * sizeof(float)));
    PP_CUDA_CHECK(cudaMalloc((void **)&dv, (size_t)nkv * sizeof(float)));
    PP_CUDA_CHECK(cudaMalloc((void **)&dx, (size_t)(rows * dm->s_kv) * sizeof(float)));
    PP_CUDA_CHECK(cudaMalloc((void **)&dout, (size_t)nq * sizeof(float)));
    PP_CUDA_CHECK(cudaMalloc((void **)&dl, (size_t)(2 * rows) * sizeof(float)));
    PP_CUDA_CHECK(cudaMemcpy(dq, q8, (size_t)nq * sizeof(float), cudaMemcpyHostToDevice));
    PP_CUDA_CHECK(cudaMemcpy(dk, k8, (size_t)nkv * sizeof(float), cudaMemcpyHostToDevice));
    PP_CUDA_CHECK(cudaMemcpy(dv, v8, (size_t)nkv * sizeof(float), cudaMemcpyHostToDevice));
    pp_attn_te_rows_kernel1<<<(unsigned)((rows + block - 1) / block), block>>>(*c, *dm, dq, dk, dv, dx, dout, dl,
                                                                               dl + rows, rows);
    PP_CUDA_CHECK(cudaGetLastError());
    PP_CUDA_CHECK(cudaDeviceSynchronize());
    PP_CUDA_CHECK(cudaMemcpy(o, dout, (size_t)nq * sizeof(float), cudaMemcpyDeviceToHost));
    PP_CUDA_CHECK(cudaMemcpy(lse, dl, (size_t)rows * sizeof(float), cudaMemcpyDeviceToHost));
    PP_CUDA_CHECK(cudaMemcpy(amax_s, dl + rows, (size_t)rows * sizeof(float), cudaMemcpyDeviceToHost));
done:
    cudaFree(dq), cudaFree(dk), cudaFree(dv), cudaFree(dx), cudaFree(dout), cudaFree(dl);
    return rc;
}

extern "C" int pp_attn_te_fp8_cuda(const pp_attn_variant *v, const pp_attn_dims *dm, const double *q, const double *k,
                                   const double *vv, double *out, double *lse, pp_attn_te_amax *amax, char *errbuf,
                                   size_t errlen)
{
    pp_attn_te_device dev = {cuda_rows, NULL};
    return pp_attn_te_run(&dev, v, dm, q, k, vv, out, lse, amax, errbuf, errlen);
}

extern "C" pp_attn_te_device pp_attn_te_cuda_device(void)
{
    pp_attn_te_device dev = {.rows = cuda_rows, .ctx = NULL};
    return dev;
}
