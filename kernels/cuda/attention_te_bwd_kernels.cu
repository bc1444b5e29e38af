// attention_te_bwd_kernels.cu — fp8 = "te"'s backward on the GPU (cuda/attention_te_bwd_cuda.h):
// thread r runs query row r (pass 1: D and dP's amax; pass 2: its dq row), thread c key column c
// (dk, dv), through the CPU device's bodies (kernels/attention_te_fp8_bwd.h). Not yet run on a GPU
// where it was written: tests/test_attention_te_bwd_cuda.c compares it with the CPU bit for bit.
// Build (the Makefile does): nvcc -O2 -std=c++17 --fmad=false -Isrc -Ikernels -c attention_te_bwd_kernels.cu
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#include "attention_te_fp8_bwd.h"
#include "cuda/attention_te_bwd_cuda.h"
#include "cuda/attention_te_cuda.h"
#include "cuda/cuda_check.h"

// ---------------------------------------------------------------------------------------------
// GPU kernels

// Thread r: pass 1 of query row r.
__global__ void pp_attn_te_bwd_pre_kernel1(pp_attn_te_bwd_cfg c, pp_attn_dims dm, const float *q8, const float *k8,
                                           const float *v8, const float *o8, const float *do8, const float *lse,
                                           float *D, float *amax_dp, int64_t rows)
{
    int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows)
        pp_attn_te_bwd_pre_at(&c, &dm, q8, k8, v8, o8, do8, lse, r, NULL, D, amax_dp);
}

// Thread t < rows: the dq row t (scratch: its own d floats); thread rows + u: key column u.
__global__ void pp_attn_te_bwd_grads_kernel1(pp_attn_te_bwd_cfg c, pp_attn_dims dm, const float *q8, const float *k8,
                                             const float *v8, const float *do8, const float *lse, const float *D,
                                             float *scratch, float *dq, float *dk, float *dv, int64_t rows,
                                             int64_t cols)
{
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < rows)
        pp_attn_te_bwd_dq_at(&c, &dm, q8, k8, v8, do8, lse, D, t, NULL, scratch + t * dm.d, dq);
    else if (t < rows + cols)
        pp_attn_te_bwd_dkv_at(&c, &dm, q8, k8, v8, do8, lse, D, t - rows, dk, dv);
}

// ---------------------------------------------------------------------------------------------
// Launchers: the backward device of kernels/attention_te_bwd_run.h

static int cuda_pre(void *ctx, const pp_attn_te_bwd_cfg *c, const pp_attn_dims *dm, const float *q8, const float *k8,
                    const float *v8, const float *o8, const float *do8, const float *lse, float *D, float *amax_dp,
                    char *errbuf, size_t errlen)
{
    (void)ctx;
    int rc = PP_CUDA_OK;
    int64_t nq = dm->b * dm->s_q * dm->h * dm->d, nkv = dm->b * dm->s_kv * dm->h_kv * dm->d,
            rows = dm->b * dm->h * dm->s_q;
    float *dv8 = NULL, *do8_ = NULL, *dO = NULL, *dl = NULL, *dq8 = NULL, *dk8 = NULL, *dlse = NULL;
    const int block = 128;
    PP_CUDA_CHECK(cudaMalloc((void **)&dv8, (size_t)nkv * sizeof(float)));
    PP_CUDA_CHECK(cudaMalloc((void **)&dO, (size_t)nq * sizeof(float)));
    PP_CUDA_CHECK(cudaMalloc((void **)&do8_, (size_t)nq * sizeof(float)));
    PP_CUDA_CHECK(cudaMalloc((void **)&dl, (size_t)(2 * rows) * sizeof(float)));
    PP_CUDA_CHECK(cudaMalloc((void **)&dq8, (size_t)nq * sizeof(float)));
    PP_CUDA_CHECK(cudaMalloc((void **)&dk8, (size_t)nkv * sizeof(float)));
    PP_CUDA_CHECK(cudaMalloc((void **)&dlse, (size_t)rows * sizeof(float)));
    PP_CUDA_CHECK(cudaMemcpy(dq8, q8, (size_t)nq * sizeof(float), cudaMemcpyHostToDevice));
    PP_CUDA_CHECK(cudaMemcpy(dk8, k8, (size_t)nkv * sizeof(float), cudaMemcpyHostToDevice));
    PP_CUDA_CHECK(cudaMemcpy(dlse, lse, (size_t)rows * sizeof(float), cudaMemcpyHostToDevice));
    PP_CUDA_CHECK(cudaMemcpy(dv8, v8, (size_t)nkv * sizeof(float), cudaMemcpyHostToDevice));
    PP_CUDA_CHECK(cudaMemcpy(dO, o8, (size_t)nq * sizeof(float), cudaMemcpyHostToDevice));
    PP_CUDA_CHECK(cudaMemcpy(do8_, do8, (size_t)nq * sizeof(float), cudaMemcpyHostToDevice));
    pp_attn_te_bwd_pre_kernel1<<<(unsigned)((rows + block - 1) / block), block>>>(*c, *dm, dq8, dk8, dv8, dO, do8_, dlse,
                                                                                  dl, dl + rows, rows);
    PP_CUDA_CHECK(cudaGetLastError());
    PP_CUDA_CHECK(cudaDeviceSynchronize());
    PP_CUDA_CHECK(cudaMemcpy(D, dl, (size_t)rows * sizeof(float), cudaMemcpyDeviceToHost));
    PP_CUDA_CHECK(cudaMemcpy(amax_dp, dl + rows, (size_t)rows * sizeof(float), cudaMemcpyDeviceToHost));
done:
    cudaFree(dv8), cudaFree(dO), cudaFree(do8_), cudaFree(dl), cudaFree(dq8), cudaFree(dk8), cudaFree(dlse);
    return rc;
}

static int cuda_grads(void *ctx, const pp_attn_te_bwd_cfg *c, const pp_attn_dims *dm, const float *q8,
                      const float *k8, const float *v8, const float *do8, const float *lse, const float *D, float *dq,
                      float *dk, float *dv, char *errbuf, size_t errlen)
{
    (void)ctx;
    int rc = PP_CUDA_OK;
    int64_t nq = dm->b * dm->s_q * dm->h * dm->d, nkv = dm->b * dm->s_kv * dm->h_kv * dm->d,
            rows = dm->b * dm->h * dm->s_q, cols = dm->b * dm->h_kv * dm->s_kv;
    // one allocation for the inputs (q8, do8, k8, v8, lse, D), one for the scratch and outputs
    float *in = NULL, *outs = NULL;
    const int block = 128;
    size_t nin = (size_t)(2 * nq + 2 * nkv + 2 * rows), nout = (size_t)(rows * dm->d + nq + 2 * nkv);
    PP_CUDA_CHECK(cudaMalloc((void **)&in, nin * sizeof(float)));
    PP_CUDA_CHECK(cudaMalloc((void **)&outs, nout * sizeof(float)));
    {
        float *gq = in, *gdo = gq + nq, *gk = gdo + nq, *gv = gk + nkv, *gl = gv + nkv, *gD = gl + rows;
        float *gs = outs, *gdq = gs + rows * dm->d, *gdk = gdq + nq, *gdv = gdk + nkv;
        PP_CUDA_CHECK(cudaMemcpy(gq, q8, (size_t)nq * sizeof(float), cudaMemcpyHostToDevice));
        PP_CUDA_CHECK(cudaMemcpy(gdo, do8, (size_t)nq * sizeof(float), cudaMemcpyHostToDevice));
        PP_CUDA_CHECK(cudaMemcpy(gk, k8, (size_t)nkv * sizeof(float), cudaMemcpyHostToDevice));
        PP_CUDA_CHECK(cudaMemcpy(gv, v8, (size_t)nkv * sizeof(float), cudaMemcpyHostToDevice));
        PP_CUDA_CHECK(cudaMemcpy(gl, lse, (size_t)rows * sizeof(float), cudaMemcpyHostToDevice));
        PP_CUDA_CHECK(cudaMemcpy(gD, D, (size_t)rows * sizeof(float), cudaMemcpyHostToDevice));
        int64_t threads = rows + cols;
        pp_attn_te_bwd_grads_kernel1<<<(unsigned)((threads + block - 1) / block), block>>>(
            *c, *dm, gq, gk, gv, gdo, gl, gD, gs, gdq, gdk, gdv, rows, cols);
        PP_CUDA_CHECK(cudaGetLastError());
        PP_CUDA_CHECK(cudaDeviceSynchronize());
        PP_CUDA_CHECK(cudaMemcpy(dq, gdq, (size_t)nq * sizeof(float), cudaMemcpyDeviceToHost));
        PP_CUDA_CHECK(cudaMemcpy(dk, gdk, (size_t)nkv * sizeof(float), cudaMemcpyDeviceToHost));
        PP_CUDA_CHECK(cudaMemcpy(dv, gdv, (size_t)nkv * sizeof(float), cudaMemcpyDeviceToHost));
    }
done:
    cudaFree(in), cudaFree(outs);
    return rc;
}

extern "C" int pp_attn_te_fp8_bwd_cuda(const pp_attn_variant *v, const pp_attn_dims *dm, const double *q,
                                       const double *k, const double *vv, const double *dout, double *out,
                                       double *lse, double *dq, double *dk, double *dv, pp_attn_te_bwd_amax *amax,
                                       pp_ranges *R, char *errbuf, size_t errlen)
{
    pp_attn_te_device fdev = pp_attn_te_cuda_device();
    pp_attn_te_bwd_device bdev = {.pre = cuda_pre, .grads = cuda_grads, .ctx = NULL};
    return pp_attn_te_bwd_run(&fdev, &bdev, v, dm, q, k, vv, dout, out, lse, dq, dk, dv, amax, R, errbuf, errlen);
}
