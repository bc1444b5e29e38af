// cpu/gemm.c — the CPU GEMM emulation: prescale, then per output row the one loop order of
// kernels/gemm_thread.h over column tiles (the tile's columns its lanes), threads over (batch,
// row block). Every output element's arithmetic is the same sequence of kernels/gemm.h steps.
#include "gemm.h"
#include "gemm_thread.h"
#include "parallel.h"

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
    pp_site_mask exact;  // kernels/gemm.h "Exact sites"
    int site;            // quant_a or quant_b
} gemm_prescale_job;

static void gemm_prescale_task(void *ctx, int64_t t)
{
    const gemm_prescale_job *j = ctx;
    int64_t lo = t * GEMM_PRESCALE_BLOCK, hi = lo + GEMM_PRESCALE_BLOCK;
    if (hi > j->count)
        hi = j->count;
    for (int64_t i = lo; i < hi; i++)
        j->y[i] = pp_gemm_prescale_x(j->exact, j->site, j->f, j->s, j->x[i]);
}

static void gemm_prescale(pp_format_id f, double s, const double *x, double *y, int64_t count,
                          pp_site_mask exact, int site, int threads)
{
    gemm_prescale_job j = {f, s, x, y, count, exact, site};
    pp_parallel_for(gemm_prescale_task, &j, (count + GEMM_PRESCALE_BLOCK - 1) / GEMM_PRESCALE_BLOCK, threads,
                    NULL);
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
    pp_site_mask exact;   // kernels/gemm.h "Exact sites"
} gemm_job;

// Rows [i0, i1): each row in tiles of GEMM_TILE columns, the tile's columns as the lanes of the
// one loop order (gemm_thread.h), so the compiler vectorises across them.
static void gemm_rows(const gemm_job *g, const double *a, const double *b, double *c, int64_t i0, int64_t i1)
{
    float acc32[GEMM_TILE];
    double acc64[GEMM_TILE];
    pp_gemm_lane_acc acc = {acc32, acc64};
    for (int64_t i = i0; i < i1; i++)
        for (int64_t j0 = 0; j0 < g->n; j0 += GEMM_TILE) {
            int64_t jn = g->n - j0 < GEMM_TILE ? g->n - j0 : GEMM_TILE;
            pp_gemm_row_run(g->f, g->accum, g->alpha_c, g->n, g->k, a + i * g->k, b, j0, jn, c + i * g->n, acc,
                            g->order_seed, g->exact);
        }
}

static void gemm_task(void *ctx, int64_t t)
{
    const gemm_job *g = ctx;
    int64_t bi = t / g->tasks_per_batch, rb = t % g->tasks_per_batch;
    int64_t i0 = rb * GEMM_ROWS_PER_TASK, i1 = i0 + GEMM_ROWS_PER_TASK;
    if (i1 > g->m)
        i1 = g->m;
    const double *a = g->a + bi * g->m * g->k, *b = g->b + bi * g->k * g->n;
    double *c = g->c + bi * g->m * g->n;
    gemm_rows(g, a, b, c, i0, i1);
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

int pp_gemm_cpu(const pp_gemm_variant *v, int64_t batch, int64_t m, int64_t n, int64_t k,
                const double *a, const double *b, double *c, int threads, pp_error *err)
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
    if (v->scaling != PP_SCALING_NONE && v->exact_sites)
        return pp_fail(err, PP_ERR_INPUT, "gemm: exact sites are not instrumented for scaling '%s'",
                       pp_scaling_name(v->scaling));
    if (v->scaling != PP_SCALING_NONE)
        return pp_gemm_scaled_cpu(v, sc.alpha_c, batch, m, n, k, a, b, c, threads, err);

    double *as = NULL, *bs = NULL;
    if (v->scale != PP_GEMM_SCALE_POST) {
        as = malloc((size_t)(na ? na : 1) * sizeof *as);
        bs = v->scale == PP_GEMM_SCALE_PRE ? malloc((size_t)(nb ? nb : 1) * sizeof *bs) : NULL;
        if (!as || (v->scale == PP_GEMM_SCALE_PRE && !bs)) {
            free(as);
            free(bs);
            return pp_fail(err, PP_ERR_RUNTIME, "gemm: out of memory for the prescaled inputs");
        }
        gemm_prescale(v->format, sc.scale_a, a, as, na, v->exact_sites, PP_SITE_GEMM_QUANT_A, threads);
        if (bs)
            gemm_prescale(v->format, sc.scale_b, b, bs, nb, v->exact_sites, PP_SITE_GEMM_QUANT_B, threads);
    }
    gemm_job g = {v->format, v->accum, sc.alpha_c, m, n, k, (m + GEMM_ROWS_PER_TASK - 1) / GEMM_ROWS_PER_TASK,
                  as ? as : a, bs ? bs : b, c, v->order_seed, v->exact_sites};
    pp_parallel_for(gemm_task, &g, batch * g.tasks_per_batch, threads, NULL);
    free(as);
    free(bs);
    return PP_OK;
}
