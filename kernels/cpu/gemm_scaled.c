// cpu/gemm_scaled.c — the CPU emulation of the scaled-storage GEMM (kernels/gemm.h, "Scaled
// storage"): quantise A and B with their scales (kernels/scaling.h), then per output element the
// fp32 chain over k with the block scales applied per block, in the order gemm.h documents; the
// bodies are kernels/gemm_scaled_thread.h's, which the GPU runs too.
#include "gemm.h"
#include "gemm_scaled_thread.h"
#include "parallel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SCALED_ROWS_PER_TASK 8

// Steps 1 and 2 of kernels/gemm_scaled_thread.h for one operand x: its amax, its per-tensor scale
// *g, then every (line, block) body in order into q and xs (r: the delayed recipe's history for
// this operand, hist/hist_len); range notes into R when set (site quant_a or quant_b).
static void scaled_quantise(const pp_gemm_variant *v, const pp_delayed_recipe *r, const double *hist, int hist_len,
                            const pp_gemm_scaled_operand *o, const double *x, double *q, double *xs, double *g,
                            pp_ranges *R, int site)
{
    int64_t nlines = o->batch * o->lines;
    double amax = 0;
    for (int64_t t = 0; t < nlines; t++)
        for (int64_t l = 0; l < o->k; l++)
            amax = pp_amax_step(amax, x[pp_gemm_scaled_line_base(o, t) + l * o->stride]);
    // tensor-delayed ignores this tensor's amax: its scale s comes from the history
    double amax_delayed = v->scaling == PP_SCALING_DELAYED ? pp_delayed_amax(hist, hist_len, r->algo) : 0.0;
    double s_delayed = v->scaling == PP_SCALING_DELAYED ? pp_delayed_scale(v->format, amax_delayed, r->margin) : 1.0;
    double s = pp_gemm_scaled_tensor_s(v, amax, s_delayed);
    *g = pp_gemm_scaled_tensor_g(v, amax, s);
    int per_tensor = v->scaling == PP_SCALING_TENSOR || v->scaling == PP_SCALING_DELAYED;
    if (per_tensor && pp_site_exact(v->exact_sites, o->scale_site)) {  // exact s and X (gemm.h "Exact sites")
        s = pp_gemm_scaled_tensor_s64(v, v->scaling == PP_SCALING_DELAYED ? amax_delayed : amax,
                                      v->scaling == PP_SCALING_DELAYED ? r->margin : 0);
        *g = pp_gemm_scaled_tensor_g64(s);
    }
    if (pp_site_exact(v->exact_sites, o->site))  // exact quant site: q = x, so no dequantisation
        *g = 1.0;
    if (R && per_tensor)  // one block: the tensor
        pp_gemm_scaled_scale_notes(v, R, site + 2, amax, *g, 1.0);
    for (int64_t t = 0; t < nlines; t++)
        for (int64_t blk = 0; blk < o->nblk; blk++) {
            pp_gemm_scaled_quantise_block(v, o, x, q, xs, *g, s, t, blk);
            pp_gemm_scaled_block_notes(v, o, x, q, xs, *g, s, t, blk, R);  // R NULL: nothing
        }
}

typedef struct scaled_job {
    const pp_gemm_variant *v;
    double alpha_c, d, dg;  // dg = g_a·g_b, d = pp_gemm_scaled_d(dg)
    int64_t m, n, tasks_per_batch;
    pp_gemm_scaled_operand A, B;
    const double *qa, *xsa, *qb, *xsb;
    double *c;
    pp_ranges *wr;  // range diagnostics: task t notes into wr[t mod workers], or NULL
    int workers;
} scaled_job;

// Step 3 over rows [i0, i1) of one batch, each element the one body of gemm_scaled_thread.h (with
// range notes: pp_gemm_scaled_element_notes, the same statements).
static void scaled_task(void *ctx, int64_t t)
{
    const scaled_job *g = ctx;
    int64_t bi = t / g->tasks_per_batch, i0 = (t % g->tasks_per_batch) * SCALED_ROWS_PER_TASK;
    int64_t i1 = i0 + SCALED_ROWS_PER_TASK < g->m ? i0 + SCALED_ROWS_PER_TASK : g->m;
    for (int64_t i = i0; i < i1; i++)
        for (int64_t j = 0; j < g->n; j++) {
            double *c = &g->c[(bi * g->m + i) * g->n + j];
            if (!g->wr) {
                *c = pp_gemm_scaled_element(g->v, g->alpha_c, g->d, &g->A, g->qa, g->xsa, &g->B, g->qb, g->xsb, bi,
                                            i, j);
                continue;
            }
            pp_ranges *R = &g->wr[t % g->workers];  // task t runs on worker t mod workers (parallel.h)
            *c = pp_gemm_scaled_element_notes(g->v, g->alpha_c, g->d, g->dg, &g->A, g->qa, g->xsa, &g->B, g->qb, g->xsb,
                                              bi, i, j, R);
        }
}

static int scaled_quantise_both(const pp_gemm_variant *v, const pp_delayed_recipe *r, int64_t batch, int64_t m,
                                int64_t n, int64_t k, const double *a, const double *b, pp_gemm_scaled_q *out,
                                pp_ranges *R, pp_error *err)
{
    memset(out, 0, sizeof *out);
    out->A = pp_gemm_scaled_operand_of(v->scaling, 0, batch, m, n, k);
    out->B = pp_gemm_scaled_operand_of(v->scaling, 1, batch, m, n, k);
    int64_t nblk = out->A.nblk;
    out->qa = malloc((size_t)(batch * m * k + 1) * sizeof(double));
    out->qb = malloc((size_t)(batch * k * n + 1) * sizeof(double));
    out->xsa = malloc((size_t)(batch * m * nblk + 1) * sizeof(double));
    out->xsb = malloc((size_t)(batch * n * nblk + 1) * sizeof(double));
    if (!out->qa || !out->qb || !out->xsa || !out->xsb) {
        pp_gemm_scaled_q_free(out);
        return pp_fail(err, PP_ERR_RUNTIME, "gemm: out of memory for the quantised inputs");
    }
    scaled_quantise(v, r, r ? r->history[0] : NULL, r ? r->len[0] : 0, &out->A, a, out->qa, out->xsa, &out->ga, R,
                    PP_SITE_GEMM_QUANT_A);
    scaled_quantise(v, r, r ? r->history[1] : NULL, r ? r->len[1] : 0, &out->B, b, out->qb, out->xsb, &out->gb, R,
                    PP_SITE_GEMM_QUANT_B);
    return PP_OK;
}

int pp_gemm_scaled_quantise(const pp_gemm_variant *v, const pp_delayed_recipe *r, int64_t batch, int64_t m,
                            int64_t n, int64_t k, const double *a, const double *b, pp_gemm_scaled_q *out,
                            pp_error *err)
{
    return scaled_quantise_both(v, r, batch, m, n, k, a, b, out, NULL, err);
}

void pp_gemm_scaled_q_free(pp_gemm_scaled_q *q)
{
    free(q->qa);
    free(q->qb);
    free(q->xsa);
    free(q->xsb);
    q->qa = q->qb = q->xsa = q->xsb = NULL;
}

static int scaled_run(const pp_gemm_variant *v, const pp_delayed_recipe *r, double alpha_c, int64_t batch,
                      int64_t m, int64_t n, int64_t k, const double *a, const double *b, double *c, int threads,
                      pp_ranges *R, pp_error *err)
{
    pp_gemm_scaled_q q;
    int rc = scaled_quantise_both(v, r, batch, m, n, k, a, b, &q, R, err);
    if (rc)
        return rc;
    // tensor-current and delayed: d = RN_32(scale_inv_a·scale_inv_b);
    // nvfp4: RN_32(g_a·g_b); mx: 1 (g_a = g_b = 1)
    // (exact site scale: d = g_a·g_b in binary64, kernels/gemm.h "Exact sites")
    double dg = q.ga * q.gb;
    scaled_job g = {.v = v, .alpha_c = alpha_c, .d = pp_gemm_scaled_d(v, dg), .dg = dg, .m = m, .n = n,
                    .tasks_per_batch = (m + SCALED_ROWS_PER_TASK - 1) / SCALED_ROWS_PER_TASK, .A = q.A, .B = q.B,
                    .qa = q.qa, .xsa = q.xsa, .qb = q.qb, .xsb = q.xsb, .c = c, .wr = NULL, .workers = 1};
    int64_t ntasks = batch * g.tasks_per_batch;
    int64_t w = threads < ntasks ? threads : ntasks;
    g.workers = w < 1 ? 1 : w > PP_MAX_THREADS ? PP_MAX_THREADS : (int)w;  // parallel.h's worker count
    if (R && !(g.wr = pp_ranges_workers(R, g.workers)))
        rc = pp_fail(err, PP_ERR_RUNTIME, "gemm: out of memory for the range diagnostics");
    else
        pp_parallel_for(scaled_task, &g, ntasks, threads, NULL);
    pp_ranges_workers_done(R, g.wr, g.workers);
    pp_gemm_scaled_q_free(&q);
    return rc;
}

int pp_gemm_scaled_cpu(const pp_gemm_variant *v, double alpha_c, int64_t batch, int64_t m, int64_t n,
                       int64_t k, const double *a, const double *b, double *c, int threads, pp_ranges *R,
                       pp_error *err)
{
    if (v->scaling == PP_SCALING_DELAYED)
        return pp_fail(err, PP_ERR_INPUT, "gemm: tensor-delayed scaling needs the amax histories (pp_gemm_delayed_cpu)");
    return scaled_run(v, NULL, alpha_c, batch, m, n, k, a, b, c, threads, R, err);
}

int pp_gemm_delayed_cpu(const pp_gemm_variant *v, const pp_delayed_recipe *r, double alpha_c, int64_t batch,
                        int64_t m, int64_t n, int64_t k, const double *a, const double *b, double *c, int threads,
                        pp_error *err)
{
    return pp_gemm_delayed_cpu_ranges(v, r, alpha_c, batch, m, n, k, a, b, c, threads, NULL, err);
}

int pp_gemm_delayed_cpu_ranges(const pp_gemm_variant *v, const pp_delayed_recipe *r, double alpha_c, int64_t batch,
                               int64_t m, int64_t n, int64_t k, const double *a, const double *b, double *c,
                               int threads, pp_ranges *R, pp_error *err)
{
    if (v->scaling != PP_SCALING_DELAYED || !pp_gemm_variant_formats_ok(v))
        return pp_fail(err, PP_ERR_INPUT, "gemm: tensor-delayed needs scaling tensor-delayed, e4m3 or e5m2, "
                       "accumulate fp32 and scale post");
    if (!r || r->len[0] < 1 || r->len[1] < 1 || !r->history[0] || !r->history[1])
        return pp_fail(err, PP_ERR_INPUT, "gemm: tensor-delayed needs an amax history of at least one step per operand");
    return scaled_run(v, r, alpha_c, batch, m, n, k, a, b, c, threads < 1 ? 1 : threads, R, err);
}
