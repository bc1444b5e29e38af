// cpu/attention_device.c — the CPU device of the attention plan (see attention_device.h).
#include "attention_device.h"

#include "parallel.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define ATTN_HAVE_AVX2 1
#endif

// Device memory the plan may hold at once (floats): 64 MiB, so the plan's slices stay near one
// (batch, kv head) unit for long sequences (one unit is always allowed): the emulation's peak
// memory is the caller's arrays plus about one unit's work.
#define ATTN_CPU_SCRATCH ((int64_t)1 << 24)
// Chunks per worker in a launch: rows differ in cost (causal masks), so many small chunks even
// the load out.
#define ATTN_CHUNKS_PER_WORKER 32
// Launches with fewer threads run on the calling thread (starting workers costs more).
#define ATTN_MIN_PARALLEL 4096

// ---------------------------------------------------------------------------------------------
// The lane step y_l = fma(a, x_l, y_l): each lane one rounding, so vectors change no bit.

#ifdef ATTN_HAVE_AVX2
__attribute__((target("avx2,fma"))) static void attn_axpy_avx2(float a, const float *x, float *y, int64_t n)
{
    __m256 va = _mm256_set1_ps(a);
    int64_t c = 0;
    for (; c + 8 <= n; c += 8)
        _mm256_storeu_ps(y + c, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + c), _mm256_loadu_ps(y + c)));
    for (; c < n; c++)
        y[c] = fmaf(a, x[c], y[c]);  // vfmadd213ss here: the same single rounding
}
#endif

static pp_attn_axpy_fn attn_pick_axpy(int portable)
{
#ifdef ATTN_HAVE_AVX2
    if (!portable && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return attn_axpy_avx2;
#endif
    (void)portable;
    return NULL;  // pp_attn_axpy's plain fmaf loop
}

// ---------------------------------------------------------------------------------------------
// Memory: plain host memory

static int attn_cpu_alloc(void *ctx, void **p, size_t bytes)
{
    pp_attn_cpu_ctx *c = ctx;
    *p = malloc(bytes);
    if (*p)
        return 0;
    if (c->errbuf && c->errlen)
        snprintf(c->errbuf, c->errlen, "attention: out of memory for a work buffer of %zu bytes", bytes);
    return 3;
}

static void attn_cpu_release(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

static int attn_cpu_copy(void *ctx, void *dst, const void *src, size_t bytes)
{
    (void)ctx;
    memcpy(dst, src, bytes);
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Launches: the threads in runs (pp_attn_run_width), runs in chunks that the workers take in
// turn as they finish (a worker slowed by another process takes fewer); every run is computed
// alone, so who computes it never matters

typedef struct attn_cpu_job {
    pp_attn_launch L;
    int64_t width, runs, per_chunk, chunks;
    atomic_llong next;  // the next chunk to take
    pp_ranges *wr;      // range diagnostics: one accumulator per worker, or NULL
} attn_cpu_job;

static void attn_cpu_worker(void *ctx, int64_t worker)
{
    attn_cpu_job *J = ctx;
    pp_attn_launch L = J->L;
    L.ranges = J->wr ? &J->wr[worker] : NULL;
    for (int64_t c; (c = atomic_fetch_add(&J->next, 1)) < J->chunks;) {
        int64_t r0 = c * J->per_chunk, r1 = r0 + J->per_chunk < J->runs ? r0 + J->per_chunk : J->runs;
        pp_attn_run(&L, r0 * J->width, (r1 - r0) * J->width);
    }
}


static int attn_cpu_launch(void *ctx, const pp_attn_launch *L)
{
    const pp_attn_cpu_ctx *c = ctx;
    attn_cpu_job J;
    J.L = *L;
    J.L.lanes = PP_ATTN_MAX_LANES;
    J.L.axpy = attn_pick_axpy(c->portable);
    J.width = pp_attn_run_width(L);
    if (L->n % J.width)
        J.width = 1;  // the plan sizes lane launches in whole runs; never taken
    J.runs = L->n / J.width;
    int workers = L->n < ATTN_MIN_PARALLEL || c->threads < 1 ? 1 : c->threads;
    int64_t want = (int64_t)workers * ATTN_CHUNKS_PER_WORKER;
    J.per_chunk = (J.runs + want - 1) / want;
    J.chunks = (J.runs + J.per_chunk - 1) / J.per_chunk;
    atomic_init(&J.next, 0);
    J.wr = NULL;
    if (c->ranges && !(J.wr = pp_ranges_workers(c->ranges, workers))) {
        if (c->errbuf && c->errlen)
            snprintf(c->errbuf, c->errlen, "attention: out of memory for the range diagnostics");
        return 3;
    }
    pp_parallel_for(attn_cpu_worker, &J, workers, workers, NULL);
    pp_ranges_workers_done(c->ranges, J.wr, workers);
    return 0;
}

void pp_attn_cpu_device(pp_attn_cpu_ctx *ctx, pp_attn_device *dev)
{
    memset(dev, 0, sizeof *dev);
    dev->ctx = ctx;
    dev->alloc = attn_cpu_alloc;
    dev->release = attn_cpu_release;
    dev->upload = attn_cpu_copy;
    dev->download = attn_cpu_copy;
    dev->launch = attn_cpu_launch;
    dev->gemm = NULL;
    dev->scratch_floats = ATTN_CPU_SCRATCH;
}
