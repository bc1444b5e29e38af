// gemm_scaled_kernels.cu — the scaled-storage GEMM on the GPU: amax, quantise and element kernels,
// each thread one body of kernels/gemm_scaled_thread.h (the CPU emulation's, so bit-identical).
// Host launcher in cuda/gemm_scaled_cuda.h. Run on an H200 and an H100 (tests/test_gemm_scaled_cuda.c).
// Build (the Makefile does): nvcc -O2 -std=c++17 --fmad=false -Isrc -Ikernels -c gemm_scaled_kernels.cu
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#include "cuda/cuda_check.h"
#include "cuda/gemm_scaled_cuda.h"
#include "cuda/ranges_cuda.h"
#include "gemm.h"
#include "gemm_scaled_thread.h"

// ---------------------------------------------------------------------------------------------
// GPU kernels

// Step 1: thread i folds element i's amax key into *key (any order gives the same maximum).
__global__ void pp_gemm_scaled_amax_kernel1(const double *x, int64_t count, unsigned long long *key)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count)
        atomicMax(key, (unsigned long long)pp_amax_key(x[i]));
}

// Step 3: thread u quantises block u % nblk of line u / nblk; R (device accumulator, or NULL):
// the block's range notes after it (the CPU's calls).
__global__ void pp_gemm_scaled_quantise_kernel1(pp_gemm_variant v, pp_gemm_scaled_operand o, const double *x,
                                                double *q, double *xs, double g, double s, int64_t count,
                                                pp_ranges *R)
{
    int64_t u = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (u >= count)
        return;
    pp_gemm_scaled_quantise_block(&v, &o, x, q, xs, g, s, u / o.nblk, u % o.nblk);
    pp_gemm_scaled_block_notes(&v, &o, x, q, xs, g, s, u / o.nblk, u % o.nblk, R);  // R NULL: nothing
}

// Step 4: thread t computes C[bi, i, j], t = (bi·m + i)·n + j; with R, through the body that
// notes (the same statements).
__global__ void pp_gemm_scaled_kernel1(pp_gemm_variant v, double alpha_c, double d, double dg, pp_gemm_scaled_operand A,
                                       const double *qa, const double *xsa, pp_gemm_scaled_operand B,
                                       const double *qb, const double *xsb, double *c, int64_t total, pp_ranges *R)
{
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total)
        return;
    int64_t m = A.lines, n = B.lines;
    int64_t j = t % n, i = (t / n) % m, bi = t / (m * n);
    c[t] = R ? pp_gemm_scaled_element_notes(&v, alpha_c, d, dg, &A, qa, xsa, &B, qb, xsb, bi, i, j, R)
             : pp_gemm_scaled_element(&v, alpha_c, d, &A, qa, xsa, &B, qb, xsb, bi, i, j);
}

// ---------------------------------------------------------------------------------------------
// Launcher

static const int PP_SCALED_BLOCK = 256;

static unsigned scaled_blocks(int64_t count)
{
    return (unsigned)((count + PP_SCALED_BLOCK - 1) / PP_SCALED_BLOCK);
}

extern "C" int pp_gemm_scaled_cuda(const pp_gemm_variant *v, const pp_delayed_recipe *r, double alpha_c,
                                   int64_t batch, int64_t m, int64_t n, int64_t k, const double *a, const double *b,
                                   double *c, char *errbuf, size_t errlen)
{
    return pp_gemm_scaled_cuda_ranges(v, r, alpha_c, batch, m, n, k, a, b, c, NULL, errbuf, errlen);
}

extern "C" int pp_gemm_scaled_cuda_ranges(const pp_gemm_variant *v, const pp_delayed_recipe *r, double alpha_c,
                                          int64_t batch, int64_t m, int64_t n, int64_t k, const double *a,
                                          const double *b, double *c, pp_ranges *R, char *errbuf, size_t errlen)
{
    const int64_t max = (int64_t)1 << 40;
    int bad = v->scaling == PP_SCALING_NONE || !pp_gemm_variant_formats_ok(v) || batch < 0 || m < 0 || n < 0 ||
              k < 0 || (batch && m && k && m * k > max / batch) || (batch && k && n && k * n > max / batch) ||
              (batch && m && n && m * n > max / batch) ||
              (v->scaling == PP_SCALING_DELAYED && (!r || r->len[0] < 1 || r->len[1] < 1 || !r->history[0] ||
                                                    !r->history[1]));
    if (bad) {
        if (errbuf && errlen)
            snprintf(errbuf, errlen, "scaled gemm: bad variant, extents or amax history");
        return PP_CUDA_ERR_INPUT;
    }
    int rc = PP_CUDA_OK;
    pp_gemm_scaled_operand A = pp_gemm_scaled_operand_of(v->scaling, 0, batch, m, n, k);
    pp_gemm_scaled_operand B = pp_gemm_scaled_operand_of(v->scaling, 1, batch, m, n, k);
    int64_t na = batch * m * k, nb = batch * k * n, nc = batch * m * n;
    int64_t ua = batch * m * A.nblk, ub = batch * n * B.nblk;
    double *da = NULL, *db = NULL, *qa = NULL, *qb = NULL, *xsa = NULL, *xsb = NULL, *dc = NULL;
    unsigned long long *keys = NULL, hkeys[2] = {0, 0};
    double amax[2], s[2], g[2], d;
    pp_ranges *dR = NULL;
    if (nc == 0)  // nothing to compute and nothing noted (the CPU returns before it quantises too)
        return PP_CUDA_OK;
    if ((rc = pp_ranges_cuda_alloc(R, &dR, errbuf, errlen)))
        goto done;
    PP_CUDA_CHECK(cudaMalloc((void **)&da, (size_t)(na ? na : 1) * sizeof(double)));
    PP_CUDA_CHECK(cudaMalloc((void **)&db, (size_t)(nb ? nb : 1) * sizeof(double)));
    PP_CUDA_CHECK(cudaMalloc((void **)&qa, (size_t)(na ? na : 1) * sizeof(double)));
    PP_CUDA_CHECK(cudaMalloc((void **)&qb, (size_t)(nb ? nb : 1) * sizeof(double)));
    PP_CUDA_CHECK(cudaMalloc((void **)&xsa, (size_t)(ua ? ua : 1) * sizeof(double)));
    PP_CUDA_CHECK(cudaMalloc((void **)&xsb, (size_t)(ub ? ub : 1) * sizeof(double)));
    PP_CUDA_CHECK(cudaMalloc((void **)&dc, (size_t)(nc ? nc : 1) * sizeof(double)));
    PP_CUDA_CHECK(cudaMalloc((void **)&keys, 2 * sizeof *keys));
    PP_CUDA_CHECK(cudaMemset(keys, 0, 2 * sizeof *keys));  // key(+0) = 0: the fold's start
    if (na)
        PP_CUDA_CHECK(cudaMemcpy(da, a, (size_t)na * sizeof(double), cudaMemcpyHostToDevice));
    if (nb)
        PP_CUDA_CHECK(cudaMemcpy(db, b, (size_t)nb * sizeof(double), cudaMemcpyHostToDevice));
    // (1) amax of each operand
    if (na)
        pp_gemm_scaled_amax_kernel1<<<scaled_blocks(na), PP_SCALED_BLOCK>>>(da, na, keys);
    if (nb)
        pp_gemm_scaled_amax_kernel1<<<scaled_blocks(nb), PP_SCALED_BLOCK>>>(db, nb, keys + 1);
    PP_CUDA_CHECK(cudaGetLastError());
    PP_CUDA_CHECK(cudaMemcpy(hkeys, keys, sizeof hkeys, cudaMemcpyDeviceToHost));
    // (2) the per-tensor scales on the host, with the CPU emulation's functions
    for (int o = 0; o < 2; o++) {
        amax[o] = pp_amax_of_key(hkeys[o]);
        double s_delayed = v->scaling == PP_SCALING_DELAYED
                         ? pp_delayed_scale(v->format, pp_delayed_amax(r->history[o], r->len[o], r->algo), r->margin)
                         : 1.0;
        s[o] = pp_gemm_scaled_tensor_s(v, amax[o], s_delayed);
        g[o] = pp_gemm_scaled_tensor_g(v, amax[o], s[o]);
        if (R && (v->scaling == PP_SCALING_TENSOR || v->scaling == PP_SCALING_DELAYED))  // one block: the tensor
            pp_gemm_scaled_scale_notes(v, R, (o ? B.site : A.site) + 2, amax[o], g[o], 1.0);  // on the host, into R
    }
    d = pp_gemm_scaled_d(v, g[0] * g[1]);  // the CPU emulation's d (exact sites: the op row runs them on the CPU)
    // (3) quantise, (4) the product
    if (ua)
        pp_gemm_scaled_quantise_kernel1<<<scaled_blocks(ua), PP_SCALED_BLOCK>>>(*v, A, da, qa, xsa, g[0], s[0], ua,
                                                                                   dR);
    if (ub)
        pp_gemm_scaled_quantise_kernel1<<<scaled_blocks(ub), PP_SCALED_BLOCK>>>(*v, B, db, qb, xsb, g[1], s[1], ub,
                                                                                   dR);
    PP_CUDA_CHECK(cudaGetLastError());
    if (nc) {
        pp_gemm_scaled_kernel1<<<scaled_blocks(nc), PP_SCALED_BLOCK>>>(*v, alpha_c, d, g[0] * g[1], A, qa, xsa, B, qb,
                                                                        xsb, dc, nc, dR);
        PP_CUDA_CHECK(cudaGetLastError());
        PP_CUDA_CHECK(cudaMemcpy(c, dc, (size_t)nc * sizeof(double), cudaMemcpyDeviceToHost));
    }
    rc = pp_ranges_cuda_collect(dR, R, errbuf, errlen);
    dR = NULL;  // collected (and freed)
done:
    cudaFree(dR);
    cudaFree(da);
    cudaFree(db);
    cudaFree(qa);
    cudaFree(qb);
    cudaFree(xsa);
    cudaFree(xsb);
    cudaFree(dc);
    cudaFree(keys);
    return rc;
}
