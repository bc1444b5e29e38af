// cpu/gemm.c — the CPU GEMM emulation: prescale, then per output row the one loop order of
// kernels/gemm_thread.h over column tiles (the tile's columns its lanes), threads over (batch,
// row block). Every output element's arithmetic is the same sequence of kernels/gemm.h steps.
#include "gemm.h"
#include "gemm_thread.h"
#include "parallel.h"

#include <math.h>
#include <stdlib.h>

// ---------------------------------------------------------------------------------------------
// Threads: task t of ntasks runs on thread t mod nthreads. Which thread runs a task never
// changes what the task computes, so the partition only affects speed.

#define GEMM_ROWS_PER_TASK 8
#define GEMM_TILE 256  // output columns whose accumulators stay in L1 while l runs over k
#define GEMM_MAX_NUMEL ((int64_t)1 << 40)  // as PP_MAX_NUMEL in src/core/tensor.h

// ---------------------------------------------------------------------------------------------
// Prescale: x' = RN_F(RN_32(s·x)) element-wise, in blocks of 2^16 elements

#define GEMM_PRESCALE_BLOCK ((int64_t)1 << 16)

typedef struct gemm_prescale_job {
    pp_format_id f;
    double s;
    const double *x;
    double *y;
    int64_t count;
    int site, workers;  // the site (quant_a, quant_b); range diagnostics: notes into wr[t mod workers]
    pp_ranges *wr;
    pp_site_mask exact;  // kernels/gemm.h "Exact sites"
} gemm_prescale_job;

static void gemm_prescale_task(void *ctx, int64_t t)
{
    const gemm_prescale_job *j = ctx;
    int64_t lo = t * GEMM_PRESCALE_BLOCK, hi = lo + GEMM_PRESCALE_BLOCK;
    if (hi > j->count)
        hi = j->count;
    for (int64_t i = lo; i < hi; i++)
        j->y[i] = pp_gemm_prescale_x(j->exact, j->site, j->f, j->s, j->x[i]);
    for (int64_t i = lo; j->wr && i < hi; i++)  // task t runs on worker t mod workers (parallel.h)
        pp_range_note(&j->wr[t % j->workers], j->site, 0, j->f, j->s * j->x[i], j->y[i]);
}

// The workers pp_parallel_for runs ntasks on (parallel.h: min(threads, ntasks, PP_MAX_THREADS), ≥ 1).
static int gemm_workers(int64_t ntasks, int threads)
{
    int64_t w = threads < ntasks ? threads : ntasks;
    w = w < PP_MAX_THREADS ? w : PP_MAX_THREADS;
    return w < 1 ? 1 : (int)w;
}

static int gemm_prescale(pp_format_id f, double s, const double *x, double *y, int64_t count,
                         int threads, pp_site_mask exact, int site, pp_ranges *R)
{
    int64_t ntasks = (count + GEMM_PRESCALE_BLOCK - 1) / GEMM_PRESCALE_BLOCK;
    gemm_prescale_job j = {f, s, x, y, count, site, gemm_workers(ntasks, threads), NULL, exact};
    if (R && !(j.wr = pp_ranges_workers(R, j.workers)))
        return -1;
    pp_parallel_for(gemm_prescale_task, &j, ntasks, threads, NULL);
    pp_ranges_workers_done(R, j.wr, j.workers);
    return 0;
}

// ---------------------------------------------------------------------------------------------
// The GEMM loops

typedef struct gemm_job {
    pp_format_id f;
    pp_gemm_accum accum;
    double alpha_c;
    int64_t m, n, k, tasks_per_batch;
    const double *a, *b;  // the operands after any prescale
    double *c;
    uint64_t order_seed;  // kernels/gemm.h "Order band"
    pp_ranges *wr;        // range diagnostics: worker w's accumulator wr[w], or NULL
    int workers, finite;  // finite: every operand finite
    pp_site_mask exact;   // kernels/gemm.h "Exact sites"
} gemm_job;

// Rows [i0, i1): each row in tiles of GEMM_TILE columns, the tile's columns as the lanes of the
// one loop order (gemm_thread.h), so the compiler vectorises across them.
static void gemm_rows(const gemm_job *g, const double *a, const double *b, double *c, int64_t i0, int64_t i1,
                      pp_ranges *R)
{
    float acc32[GEMM_TILE];
    double acc64[GEMM_TILE];
    pp_gemm_lane_acc acc = {acc32, acc64};
    for (int64_t i = i0; i < i1; i++)
        for (int64_t j0 = 0; j0 < g->n; j0 += GEMM_TILE) {
            int64_t jn = g->n - j0 < GEMM_TILE ? g->n - j0 : GEMM_TILE;
            pp_gemm_row_run(g->f, g->accum, g->alpha_c, g->n, g->k, a + i * g->k, b, j0, jn, c + i * g->n, acc,
                            g->order_seed, g->exact);
            pp_gemm_row_notes(R, g->f, g->accum, g->alpha_c, j0, jn, acc, c + i * g->n, g->finite);
        }
}

static void gemm_task(void *ctx, int64_t t)
{
    const gemm_job *g = ctx;
    pp_ranges *R = g->wr ? &g->wr[t % g->workers] : NULL;  // task t runs on worker t mod workers
    int64_t bi = t / g->tasks_per_batch, rb = t % g->tasks_per_batch;
    int64_t i0 = rb * GEMM_ROWS_PER_TASK, i1 = i0 + GEMM_ROWS_PER_TASK;
    if (i1 > g->m)
        i1 = g->m;
    const double *a = g->a + bi * g->m * g->k, *b = g->b + bi * g->k * g->n;
    double *c = g->c + bi * g->m * g->n;
    gemm_rows(g, a, b, c, i0, i1, R);
}

// ---------------------------------------------------------------------------------------------
// Checks and the entry point

// *out = x·y, or −1 when it exceeds GEMM_MAX_NUMEL (x, y ≥ 0).
static int gemm_mul(int64_t x, int64_t y, int64_t *out)
{
    if (y != 0 && x > GEMM_MAX_NUMEL / y)
        return -1;
    *out = x * y;
    return *out > GEMM_MAX_NUMEL ? -1 : 0;
}

static int gemm_check_values(pp_format_id f, const char *what, const double *x, int64_t count,
                             pp_error *err)
{
    for (int64_t i = 0; i < count; i++)
        if (!pp_is_representable(f, x[i]))
            return pp_fail(err, PP_ERR_INPUT, "gemm: %s[%lld] = %.17g is not a %s value", what,
                           (long long)i, x[i], pp_format_get(f).name);
    return PP_OK;
}

// Whether the n values of x are all finite.
static int gemm_finite(const double *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return 0;
    return 1;
}

int pp_gemm_cpu(const pp_gemm_variant *v, int64_t batch, int64_t m, int64_t n, int64_t k,
                const double *a, const double *b, double *c, int threads, pp_error *err)
{
    return pp_gemm_cpu_ranges(v, batch, m, n, k, a, b, c, threads, NULL, err);
}

int pp_gemm_cpu_ranges(const pp_gemm_variant *v, int64_t batch, int64_t m, int64_t n, int64_t k,
                       const double *a, const double *b, double *c, int threads, pp_ranges *R, pp_error *err)
{
    if (batch < 0 || m < 0 || n < 0 || k < 0)
        return pp_fail(err, PP_ERR_INPUT, "gemm: negative extent (batch %lld, m %lld, n %lld, k %lld)",
                       (long long)batch, (long long)m, (long long)n, (long long)k);
    int64_t bm, na, nb, nc;
    if (gemm_mul(batch, m, &bm) || gemm_mul(bm, k, &na) || gemm_mul(batch, k, &nb) ||
        gemm_mul(nb, n, &nb) || gemm_mul(bm, n, &nc))
        return pp_fail(err, PP_ERR_INPUT, "gemm: a tensor would exceed 2^40 elements");
    pp_gemm_scalars sc;
    if (pp_gemm_scalars_make(v, k, &sc) != 0)
        return pp_fail(err, PP_ERR_INPUT,
                       "gemm: bad variant (format %s, scaling %s, accumulate %s, scale %s, alpha %s%.17g, k %lld)",
                       pp_format_get(v->format).name, pp_scaling_name(v->scaling), pp_gemm_accum_name(v->accum),
                       pp_gemm_scale_name(v->scale), v->alpha_given ? "" : "default, ",
                       v->alpha_given ? v->alpha : 0.0, (long long)k);
    if ((na && !a) || (nb && !b) || (nc && !c))
        return pp_fail(err, PP_ERR_INPUT, "gemm: NULL data for a non-empty tensor");
    pp_format_id in_f = v->scaling == PP_SCALING_NONE ? v->format : PP_FMT_FP32;  // scaled: binary32 in
    int rc = gemm_check_values(in_f, "A", a, na, err);
    if (!rc)
        rc = gemm_check_values(in_f, "B", b, nb, err);
    if (rc || nc == 0)
        return rc;
    if (threads > PP_MAX_THREADS)
        threads = PP_MAX_THREADS;
    if (v->scaling == PP_SCALING_MX  // its 2^e rounds nothing (kernels/gemm.h "Exact sites")
        && (pp_site_exact(v->exact_sites, PP_SITE_GEMM_BLOCK_SCALE_A)
            || pp_site_exact(v->exact_sites, PP_SITE_GEMM_BLOCK_SCALE_B)))
        return pp_fail(err, PP_ERR_INPUT, "gemm: exact sites block_scale_a, block_scale_b are not instrumented for "
                       "scaling '%s'", pp_scaling_name(v->scaling));
    if (v->scaling != PP_SCALING_NONE)
        return pp_gemm_scaled_cpu(v, sc.alpha_c, batch, m, n, k, a, b, c, threads, R, err);

    double *as = NULL, *bs = NULL;
    if (v->scale != PP_GEMM_SCALE_POST) {
        as = malloc((size_t)(na ? na : 1) * sizeof *as);
        bs = v->scale == PP_GEMM_SCALE_PRE ? malloc((size_t)(nb ? nb : 1) * sizeof *bs) : NULL;
        if (!as || (v->scale == PP_GEMM_SCALE_PRE && !bs)) {
            free(as);
            free(bs);
            return pp_fail(err, PP_ERR_RUNTIME, "gemm: out of memory for the prescaled inputs");
        }
        int bad = gemm_prescale(v->format, sc.scale_a, a, as, na, threads, v->exact_sites, PP_SITE_GEMM_QUANT_A, R);
        if (bs)
            bad |= gemm_prescale(v->format, sc.scale_b, b, bs, nb, threads, v->exact_sites, PP_SITE_GEMM_QUANT_B, R);
        if (bad) {
            free(as);
            free(bs);
            return pp_fail(err, PP_ERR_RUNTIME, "gemm: out of memory for the range diagnostics");
        }
    }
    gemm_job g = {v->format, v->accum, sc.alpha_c, m, n, k, (m + GEMM_ROWS_PER_TASK - 1) / GEMM_ROWS_PER_TASK,
                  as ? as : a, bs ? bs : b, c, v->order_seed, NULL, 0, 0, v->exact_sites};
    int64_t ntasks = batch * g.tasks_per_batch;
    g.workers = gemm_workers(ntasks, threads);
    g.finite = R && gemm_finite(g.a, na) && gemm_finite(g.b, nb);
    rc = R && !(g.wr = pp_ranges_workers(R, g.workers)) ? -1 : 0;
    if (!rc)
        pp_parallel_for(gemm_task, &g, ntasks, threads, NULL);
    pp_ranges_workers_done(R, g.wr, g.workers);
    free(as);
    free(bs);
    return rc ? pp_fail(err, PP_ERR_RUNTIME, "gemm: out of memory for the range diagnostics") : PP_OK;
}
