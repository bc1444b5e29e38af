// adamw_kernels.cu — the AdamW run on the GPU: kernels that call kernels/adamw_thread.h's
// per-thread bodies (the CPU emulation's own statements) in the launch decomposition documented
// in cuda/adamw_cuda.h, so the result equals pp_adamw_cpu bit for bit. Host launcher there.
// Build (the Makefile does): nvcc -O2 -std=c++17 --fmad=false -Isrc -Ikernels -c adamw_kernels.cu
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adamw_thread.h"
#include "cuda/adamw_cuda.h"
#include "cuda/cuda_check.h"
#include "cuda/ranges_cuda.h"

// ---------------------------------------------------------------------------------------------
// GPU kernels (each thread runs one body of adamw_thread.h; names as cuda/adamw_cuda.h lists)

// State of element i before step 1: θ₀ and zero moments and compensation (as the CPU's loops).
__global__ void pp_adamw_init_kernel1(const float *theta0, pp_adamw_elem *state, int64_t n)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        state[i] = pp_adamw_elem{theta0[i], 0.0f, 0.0f, 0.0f};
}

// θ-independent sources: element i over loss indices t0..t1; term(t, i) stored at
// term[(t − t0)·n + i] when term is not NULL; snapshots into snap[j·n + i]. R (the device
// accumulator, or NULL): every step's range notes into cell i / rblock, as the CPU's.
__global__ void pp_adamw_elem_kernel1(pp_adamw_variant va, pp_adamw_problem pr, const pp_adamw_scalars *sc, int t0,
                                      int t1, pp_adamw_elem *state, double *term, const int *snap_step,
                                      int n_snaps, double *snap, pp_ranges *R, int64_t rblock)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= pr.n)
        return;
    pp_adamw_elem e = state[i];
    pp_adamw_loss_out lo = {term ? term + i : NULL, pr.n, 0};
    pp_adamw_snap_out so = {snap, snap_step, n_snaps, pr.n};
    pp_adamw_elem_thread_r(&va, &pr, sc, i, t0, t1, &e, lo, so, R, R ? i / rblock : 0);
    state[i] = e;
}

// part[tc·nb + b] = part(t0 + tc, b): thread u = tc·nb + b sums block b of loss index t0 + tc.
__global__ void pp_adamw_loss_block_kernel1(const double *term, int64_t n, int64_t nb, int64_t count, double *part)
{
    int64_t u = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (u >= count)
        return;
    int64_t tc = u / nb, b = u % nb;
    part[u] = pp_adamw_loss_block_sum(term + tc * n, n, b);
}

// loss[tc] = loss(t0 + tc): thread tc sums its blocks in order.
__global__ void pp_adamw_loss_total_kernel1(const double *part, int64_t nb, int64_t count, double *loss)
{
    int64_t tc = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (tc < count)
        loss[tc] = pp_adamw_loss_total(part + tc * nb, nb, 1);
}

// Linear regression, phase 1: thread q computes row q's residuals.
__global__ void pp_adamw_linreg_row_kernel1(const float *X, const float *y, const pp_adamw_elem *state, int64_t n,
                                            int64_t r, float *res, double *dr2)
{
    int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (q < r)
        pp_adamw_linreg_row(X, y, state, n, q, res, dr2);
}

// Phase 2: one thread, the rows in order (a sequential sum is the documented order).
__global__ void pp_adamw_linreg_loss_kernel1(const double *dr2, int64_t r, double *loss)
{
    if (blockIdx.x == 0 && threadIdx.x == 0)
        *loss = pp_adamw_linreg_loss(dr2, r);
}

// Phase 3: thread k runs step t of parameter k; snap (a row of n, or NULL) receives θ after it.
// R (or NULL): the step's range notes into cell k / rblock, as the CPU's.
__global__ void pp_adamw_linreg_update_kernel1(pp_adamw_variant va, pp_adamw_problem pr, const pp_adamw_scalars *sc,
                                               int t, const float *X, const float *res, float inv_r,
                                               pp_adamw_elem *state, double *snap, pp_ranges *R, int64_t rblock)
{
    int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= pr.n)
        return;
    pp_adamw_elem e = state[k];
    pp_adamw_linreg_update_r(&va, &pr, &sc[t], t, X, res, inv_r, k, &e, R, R ? k / rblock : 0);
    state[k] = e;
    if (snap)
        snap[k] = e.theta;
}

// ---------------------------------------------------------------------------------------------
// Launcher

static const int PP_BLOCK = 256;

static unsigned blocks_for(int64_t count)
{
    return (unsigned)((count + PP_BLOCK - 1) / PP_BLOCK);
}

static void trace_release(pp_adamw_trace *t)
{
    free(t->snap);
    free(t->loss);
    memset(t, 0, sizeof *t);
}

// Device buffers of one run (all freed by the launcher's done:).
typedef struct adamw_dev {
    pp_adamw_scalars *sc;
    pp_adamw_elem *state;
    float *theta0;
    int *snap_step;
    double *snap, *loss, *term, *part;
    float *X, *y, *res;
    double *dr2;
    pp_ranges *R;    // range diagnostics: the device accumulator, or NULL
    int64_t rblock;  // elements per range cell (the CPU's parameter blocks)
} adamw_dev;

// θ-independent sources: chunks of loss indices, each an element launch and, with a loss, the
// two reduction launches.
static int run_elementwise(const pp_adamw_variant *va, const pp_adamw_problem *pr, adamw_dev *d, int n_snaps,
                           int want_loss, int chunk_steps, char *errbuf, size_t errlen)
{
    int rc = PP_CUDA_OK;
    int64_t n = pr->n, nb = (n + PP_ADAMW_LOSS_BLOCK - 1) / PP_ADAMW_LOSS_BLOCK;
    int T = pr->steps;
    int chunk = want_loss ? pp_adamw_loss_chunk(n, T, PP_ADAMW_TERM_BYTES, chunk_steps) : T + 1;
    if (want_loss) {
        PP_CUDA_CHECK(cudaMalloc((void **)&d->term, (size_t)chunk * (size_t)n * sizeof(double)));
        PP_CUDA_CHECK(cudaMalloc((void **)&d->part, (size_t)chunk * (size_t)nb * sizeof(double)));
    }
    for (int t0 = 0; t0 <= T; t0 += chunk) {
        int t1 = T - t0 < chunk - 1 ? T : t0 + chunk - 1;
        int64_t cnt = (int64_t)(t1 - t0 + 1);
        pp_adamw_elem_kernel1<<<blocks_for(n), PP_BLOCK>>>(*va, *pr, d->sc, t0, t1, d->state, d->term, d->snap_step,
                                                           n_snaps, d->snap, d->R, d->rblock);
        PP_CUDA_CHECK(cudaGetLastError());
        if (!want_loss)
            continue;
        pp_adamw_loss_block_kernel1<<<blocks_for(cnt * nb), PP_BLOCK>>>(d->term, n, nb, cnt * nb, d->part);
        PP_CUDA_CHECK(cudaGetLastError());
        pp_adamw_loss_total_kernel1<<<blocks_for(cnt), PP_BLOCK>>>(d->part, nb, cnt, d->loss + t0);
        PP_CUDA_CHECK(cudaGetLastError());
    }
done:
    return rc;
}

// Linear regression: the data on the host (pp_adamw_linreg_data, as the CPU), then per step the
// three phases; snapshots written by the update launch of a snapshot step.
static int run_linreg(const pp_adamw_variant *va, const pp_adamw_problem *pr, adamw_dev *d,
                      const pp_adamw_trace *trace, char *errbuf, size_t errlen)
{
    int rc = PP_CUDA_OK;
    int64_t n = pr->n, r = pr->rows;
    int T = pr->steps, snap = 0;
    float inv_r = 1.0f / (float)r;
    float *hX = (float *)malloc((size_t)(r * n) * sizeof(float)), *hy = (float *)malloc((size_t)r * sizeof(float));
    PP_HOST_CHECK(hX);
    PP_HOST_CHECK(hy);
    pp_adamw_linreg_data(pr, hX, hy);
    PP_CUDA_CHECK(cudaMalloc((void **)&d->X, (size_t)(r * n) * sizeof(float)));
    PP_CUDA_CHECK(cudaMalloc((void **)&d->y, (size_t)r * sizeof(float)));
    PP_CUDA_CHECK(cudaMalloc((void **)&d->res, (size_t)r * sizeof(float)));
    PP_CUDA_CHECK(cudaMalloc((void **)&d->dr2, (size_t)r * sizeof(double)));
    PP_CUDA_CHECK(cudaMemcpy(d->X, hX, (size_t)(r * n) * sizeof(float), cudaMemcpyHostToDevice));
    PP_CUDA_CHECK(cudaMemcpy(d->y, hy, (size_t)r * sizeof(float), cudaMemcpyHostToDevice));
    for (int t = 0; t <= T; t++) {
        pp_adamw_linreg_row_kernel1<<<blocks_for(r), PP_BLOCK>>>(d->X, d->y, d->state, n, r, d->res, d->dr2);
        PP_CUDA_CHECK(cudaGetLastError());
        if (d->loss) {
            pp_adamw_linreg_loss_kernel1<<<1, 1>>>(d->dr2, r, d->loss + t);
            PP_CUDA_CHECK(cudaGetLastError());
        }
        if (t == T)
            break;
        double *srow = NULL;
        if (trace && snap < trace->n_snaps && trace->snap_step[snap] == t + 1)
            srow = d->snap + (int64_t)snap++ * n;
        pp_adamw_linreg_update_kernel1<<<blocks_for(n), PP_BLOCK>>>(*va, *pr, d->sc, t + 1, d->X, d->res, inv_r,
                                                                    d->state, srow, d->R, d->rblock);
        PP_CUDA_CHECK(cudaGetLastError());
    }
done:
    free(hX);
    free(hy);
    return rc;
}

extern "C" int pp_adamw_cuda(const pp_adamw_variant *va, const pp_adamw_problem *pr, const double *theta0,
                             double *theta, double *m, double *v, double *c, pp_adamw_trace *trace, int chunk_steps,
                             char *errbuf, size_t errlen)
{
    return pp_adamw_cuda_ranges(va, pr, theta0, theta, m, v, c, trace, chunk_steps, NULL, errbuf, errlen);
}

extern "C" int pp_adamw_cuda_ranges(const pp_adamw_variant *va, const pp_adamw_problem *pr, const double *theta0,
                                    double *theta, double *m, double *v, double *c, pp_adamw_trace *trace,
                                    int chunk_steps, pp_ranges *R, char *errbuf, size_t errlen)
{
    char msg[200];
    if (trace)
        memset(trace, 0, sizeof *trace);
    if (pp_adamw_check(va, pr, theta0, msg, sizeof msg)) {
        if (errbuf && errlen)
            snprintf(errbuf, errlen, "%s", msg);
        return PP_CUDA_ERR_INPUT;
    }
    int rc = PP_CUDA_OK;
    int64_t n = pr->n;
    int T = pr->steps;
    int has_loss = pp_adamw_has_loss(pr);
    adamw_dev d;
    memset(&d, 0, sizeof d);
    pp_adamw_scalars *hsc = (pp_adamw_scalars *)calloc((size_t)T + 1, sizeof *hsc);
    float *h0 = (float *)malloc((size_t)n * sizeof(float));
    pp_adamw_elem *hstate = (pp_adamw_elem *)malloc((size_t)n * sizeof(pp_adamw_elem));
    PP_HOST_CHECK(hsc);
    PP_HOST_CHECK(h0);
    PP_HOST_CHECK(hstate);
    // the per-step scalars, by the CPU emulation's host function (glibc powf/pow, as torch's)
    for (int t = 1; t <= T; t++)
        hsc[t] = pp_adamw_scalars_make(va->update, &pr->hyper, pp_adamw_lr(pr, t), t);
    for (int64_t i = 0; i < n; i++)
        h0[i] = (float)theta0[i];  // exact: θ₀ holds values of P (checked)
    if (trace) {
        trace->n_snaps = pp_adamw_snap_steps(T, trace->snap_step);
        trace->theta0 = theta0;
        trace->snap = (double *)malloc((size_t)(trace->n_snaps * n) * sizeof(double));
        PP_HOST_CHECK(trace->snap);
        if (has_loss) {
            trace->loss = (double *)calloc((size_t)T + 1, sizeof(double));
            PP_HOST_CHECK(trace->loss);
        }
    }
    PP_CUDA_CHECK(cudaMalloc((void **)&d.sc, ((size_t)T + 1) * sizeof(pp_adamw_scalars)));
    PP_CUDA_CHECK(cudaMalloc((void **)&d.state, (size_t)n * sizeof(pp_adamw_elem)));
    PP_CUDA_CHECK(cudaMalloc((void **)&d.theta0, (size_t)n * sizeof(float)));
    PP_CUDA_CHECK(cudaMemcpy(d.sc, hsc, ((size_t)T + 1) * sizeof(pp_adamw_scalars), cudaMemcpyHostToDevice));
    PP_CUDA_CHECK(cudaMemcpy(d.theta0, h0, (size_t)n * sizeof(float), cudaMemcpyHostToDevice));
    if (trace) {
        PP_CUDA_CHECK(cudaMalloc((void **)&d.snap_step, (size_t)trace->n_snaps * sizeof(int)));
        PP_CUDA_CHECK(cudaMalloc((void **)&d.snap, (size_t)(trace->n_snaps * n) * sizeof(double)));
        PP_CUDA_CHECK(cudaMemcpy(d.snap_step, trace->snap_step, (size_t)trace->n_snaps * sizeof(int),
                                 cudaMemcpyHostToDevice));
        if (has_loss)
            PP_CUDA_CHECK(cudaMalloc((void **)&d.loss, ((size_t)T + 1) * sizeof(double)));
    }
    if ((rc = pp_ranges_cuda_alloc(R, &d.R, errbuf, errlen)))
        goto done;
    if (R)  // R's cells cut θ into equal consecutive blocks, the last possibly shorter (as the CPU's)
        d.rblock = (n + R->heads - 1) / R->heads;
    pp_adamw_init_kernel1<<<blocks_for(n), PP_BLOCK>>>(d.theta0, d.state, n);
    PP_CUDA_CHECK(cudaGetLastError());
    if (pr->kind == PP_ADAMW_GRAD_LINREG)
        rc = run_linreg(va, pr, &d, trace, errbuf, errlen);
    else
        rc = run_elementwise(va, pr, &d, trace ? trace->n_snaps : 0, d.loss != NULL, chunk_steps, errbuf, errlen);
    if (rc)
        goto done;
    // the copies back wait for the kernels and report any error they raised
    PP_CUDA_CHECK(cudaMemcpy(hstate, d.state, (size_t)n * sizeof(pp_adamw_elem), cudaMemcpyDeviceToHost));
    if (trace) {
        PP_CUDA_CHECK(cudaMemcpy(trace->snap, d.snap, (size_t)(trace->n_snaps * n) * sizeof(double),
                                 cudaMemcpyDeviceToHost));
        if (d.loss)
            PP_CUDA_CHECK(cudaMemcpy(trace->loss, d.loss, ((size_t)T + 1) * sizeof(double), cudaMemcpyDeviceToHost));
    }
    rc = pp_ranges_cuda_collect(d.R, R, errbuf, errlen);
    d.R = NULL;  // collected (and freed)
    if (rc)
        goto done;
    for (int64_t i = 0; i < n; i++) {
        theta[i] = hstate[i].theta;
        m[i] = hstate[i].m;
        v[i] = hstate[i].v;
        if (c)
            c[i] = va->kahan ? hstate[i].c : 0.0;
    }
done:
    if (rc && trace)
        trace_release(trace);
    cudaFree(d.sc);
    cudaFree(d.state);
    cudaFree(d.theta0);
    cudaFree(d.snap_step);
    cudaFree(d.snap);
    cudaFree(d.loss);
    cudaFree(d.term);
    cudaFree(d.part);
    cudaFree(d.X);
    cudaFree(d.y);
    cudaFree(d.res);
    cudaFree(d.dr2);
    cudaFree(d.R);
    free(hsc);
    free(h0);
    free(hstate);
    return rc;
}
