// cpu/gemm_scaled.c — the CPU emulation of the scaled-storage GEMM (kernels/gemm.h, "Scaled
// storage"): quantise A and B with their scales (kernels/scaling.h), then per output element the
// fp32 chain over k with the block scales applied per block, in the order gemm.h documents.
#include "gemm.h"
#include "parallel.h"

#include <math.h>
#include <stdlib.h>

#define SCALED_ROWS_PER_TASK 8

// One operand seen as lines along k: line t = (batch b, row or column r) holds elements
// base(t) + l·stride for l < k. A: lines (b, i), stride 1; B: lines (b, j), stride n.
typedef struct scaled_operand {
    const double *x;   // the binary32 values
    double *q;         // out: the quantised elements, same layout as x
    double *xs;        // out: per line and block, the block scale (mx: 2^e; nvfp4: the E4M3 s)
    double g;          // out: the per-tensor scale (tensor-current X, delayed 1/s, nvfp4 global g; mx: 1)
    const double *hist;  // tensor-delayed: this operand's amax history (pp_delayed_recipe)
    int hist_len;
    int64_t batch, lines, k, stride, line_step, batch_step, nblk, bs;
} scaled_operand;

static int64_t line_base(const scaled_operand *o, int64_t t)
{
    return (t / o->lines) * o->batch_step + (t % o->lines) * o->line_step;
}

// Range notes of one block's scale s (sites block_scale_a, block_scale_b): its value in the
// scale's own format, and whether it hit that format's limits — mx: the shared exponent clamped
// to E8M0's [−127, 127] (or a NaN block); nvfp4: the E4M3 scale saturated at 448 or 0 for a
// non-zero block; tensor-current: X not a positive normal binary32.
static void scaled_scale_notes(const pp_gemm_variant *v, pp_ranges *R, int site, double bamax, double s, double g)
{
    if (!R)
        return;
    int clamped = 0;
    if (v->scaling == PP_SCALING_MX) {
        int e = pp_mx_shared_exp(bamax, pp_format_get(v->format).emax);
        int raw = bamax > 0 && isfinite(bamax) ? ilogb(bamax) - pp_format_get(v->format).emax : 0;
        clamped = e == PP_MX_NAN_EXP || (bamax > 0 && raw != e);
        pp_range_note1(R, site, 0, PP_FMT_E8M0, s);
    } else if (v->scaling == PP_SCALING_NVFP4) {
        double want = bamax / (6.0 * g);  // the scale before its E4M3 rounding
        clamped = want > 448.0 || (bamax > 0 && s == 0);
        pp_range_note(R, site, 0, PP_FMT_E4M3, want, s);
    } else {
        clamped = !(s > 0 && isfinite(s) && s >= 0x1p-126);
        pp_range_note1(R, site, 0, PP_FMT_FP32, s);
    }
    if (clamped)
        pp_range_note_clamp(R, site, 0);
}

// Quantise o (every line, every block) under variant v's scaling (r: the delayed recipe); range
// notes into R at site (quant_a or quant_b; the scales at site + 2, block_scale_a or block_scale_b).
static void scaled_quantise(const pp_gemm_variant *v, const pp_delayed_recipe *r, scaled_operand *o, pp_ranges *R,
                            int site)
{
    int64_t nlines = o->batch * o->lines;
    double amax = 0;
    for (int64_t t = 0; t < nlines; t++)
        for (int64_t l = 0; l < o->k; l++)
            amax = pp_amax_step(amax, o->x[line_base(o, t) + l * o->stride]);
    // tensor-delayed ignores this tensor's amax: its scale s comes from the history
    double s_delayed = v->scaling == PP_SCALING_DELAYED
                     ? pp_delayed_scale(v->format, pp_delayed_amax(o->hist, o->hist_len, r->algo), r->margin)
                     : 1.0;
    o->g = v->scaling == PP_SCALING_TENSOR ? pp_tensor_scale(v->format, amax)
         : v->scaling == PP_SCALING_DELAYED ? pp_round(PP_FMT_FP32, 1.0 / s_delayed, PP_RND_NE, 0)
         : v->scaling == PP_SCALING_NVFP4 ? pp_nvfp4_global(amax) : 1.0;
    if (v->scaling == PP_SCALING_TENSOR || v->scaling == PP_SCALING_DELAYED)  // one block: the tensor
        scaled_scale_notes(v, R, site + 2, amax, o->g, 1.0);
    for (int64_t t = 0; t < nlines; t++) {
        int64_t base = line_base(o, t);
        for (int64_t blk = 0; blk < o->nblk; blk++) {
            int64_t l0 = blk * o->bs, l1 = l0 + o->bs < o->k ? l0 + o->bs : o->k;
            double bamax = 0;
            for (int64_t l = l0; l < l1; l++)
                bamax = pp_amax_step(bamax, o->x[base + l * o->stride]);
            int e = pp_mx_shared_exp(bamax, pp_format_get(v->format).emax);
            double s = v->scaling == PP_SCALING_MX ? pp_mx_scale(e)
                     : v->scaling == PP_SCALING_NVFP4 ? pp_nvfp4_block_scale(bamax, o->g) : 1.0;
            o->xs[t * o->nblk + blk] = s;
            if (v->scaling != PP_SCALING_TENSOR)
                scaled_scale_notes(v, R, site + 2, bamax, s, o->g);
            for (int64_t l = l0; l < l1; l++) {
                int64_t i = base + l * o->stride;
                double xv = o->x[i];
                o->q[i] = v->scaling == PP_SCALING_TENSOR ? pp_tensor_quantise(v->format, xv, o->g)
                        : v->scaling == PP_SCALING_DELAYED ? pp_delayed_quantise(v->format, xv, s_delayed)
                        : v->scaling == PP_SCALING_MX ? pp_mx_quantise(v->format, xv, e, PP_RND_NE, 0)
                        : pp_nvfp4_quantise(xv, s, o->g);
                if (R) {  // the element over its scale, before the (saturating) rounding
                    double X = v->scaling == PP_SCALING_TENSOR || v->scaling == PP_SCALING_DELAYED ? o->g
                             : v->scaling == PP_SCALING_MX ? pp_mx_scale(e) : s * o->g;
                    pp_range_note(R, site, 0, v->format, X != 0 ? xv / X : 0.0, o->q[i]);
                }
            }
        }
    }
}

typedef struct scaled_job {
    const pp_gemm_variant *v;
    double alpha_c, d;
    int64_t m, n, k, tasks_per_batch;
    const scaled_operand *a, *b;
    double *c;
    pp_ranges *wr;  // range diagnostics: task t notes into wr[t mod workers], or NULL
    int workers;
} scaled_job;

static void scaled_task(void *ctx, int64_t t)
{
    const scaled_job *g = ctx;
    int64_t bi = t / g->tasks_per_batch, i0 = (t % g->tasks_per_batch) * SCALED_ROWS_PER_TASK;
    int64_t i1 = i0 + SCALED_ROWS_PER_TASK < g->m ? i0 + SCALED_ROWS_PER_TASK : g->m;
    const scaled_operand *A = g->a, *B = g->b;
    int blocked = g->v->scaling != PP_SCALING_TENSOR && g->v->scaling != PP_SCALING_DELAYED;
    for (int64_t i = i0; i < i1; i++)
        for (int64_t j = 0; j < g->n; j++) {
            int64_t ta = bi * g->m + i, tb = bi * g->n + j;
            const double *qa = A->q + line_base(A, ta), *qb = B->q + line_base(B, tb);
            float acc = 0.0f;
            for (int64_t blk = 0; blk < A->nblk; blk++) {
                int64_t l0 = blk * A->bs, l1 = l0 + A->bs < g->k ? l0 + A->bs : g->k;
                float p = blocked ? 0.0f : acc;
                for (int64_t l = l0; l < l1; l++)
                    p = pp_gemm_step_fp32((float)qa[l], (float)qb[l * B->stride], p);
                acc = blocked ? pp_gemm_block_add(acc, p, A->xs[ta * A->nblk + blk] * B->xs[tb * B->nblk + blk])
                              : p;
            }
            float da = (float)pp_round(PP_FMT_FP32, g->d * (double)acc, PP_RND_NE, 0);
            g->c[(bi * g->m + i) * g->n + j] = pp_gemm_epilogue_fp32(PP_FMT_FP32, g->alpha_c, da);
            if (g->wr) {  // task t runs on worker t mod workers (parallel.h)
                pp_ranges *R = &g->wr[t % g->workers];
                pp_range_note1(R, PP_SITE_GEMM_ACCUM, 0, PP_FMT_FP32, acc);
                pp_range_note(R, PP_SITE_GEMM_SCALE, 0, PP_FMT_FP32, g->d * (double)acc, da);
                pp_range_note(R, PP_SITE_GEMM_C, 0, PP_FMT_FP32, g->alpha_c * (double)da, g->c[(bi * g->m + i) * g->n + j]);
            }
        }
}

static int scaled_run(const pp_gemm_variant *v, const pp_delayed_recipe *r, double alpha_c, int64_t batch,
                      int64_t m, int64_t n, int64_t k, const double *a, const double *b, double *c, int threads,
                      pp_ranges *R, pp_error *err)
{
    int64_t bs = pp_gemm_scaling_block(v->scaling, k), nblk = k ? (k + bs - 1) / bs : 0;
    scaled_operand A = {a, NULL, NULL, 1.0, r ? r->history[0] : NULL, r ? r->len[0] : 0,
                        batch, m, k, 1, k, m * k, nblk, bs};
    scaled_operand B = {b, NULL, NULL, 1.0, r ? r->history[1] : NULL, r ? r->len[1] : 0,
                        batch, n, k, n, 1, k * n, nblk, bs};
    A.q = malloc((size_t)(batch * m * k + 1) * sizeof(double));
    B.q = malloc((size_t)(batch * k * n + 1) * sizeof(double));
    A.xs = malloc((size_t)(batch * m * nblk + 1) * sizeof(double));
    B.xs = malloc((size_t)(batch * n * nblk + 1) * sizeof(double));
    int rc = PP_OK;
    if (!A.q || !B.q || !A.xs || !B.xs) {
        rc = pp_fail(err, PP_ERR_RUNTIME, "gemm: out of memory for the quantised inputs");
    } else {
        scaled_quantise(v, r, &A, R, PP_SITE_GEMM_QUANT_A);
        scaled_quantise(v, r, &B, R, PP_SITE_GEMM_QUANT_B);
        // tensor-current: d = RN_32(X_a·X_b); delayed: RN_32(scale_inv_a·scale_inv_b);
        // nvfp4: RN_32(g_a·g_b); mx: 1 (A.g = B.g = 1)
        double d = pp_round(PP_FMT_FP32, A.g * B.g, PP_RND_NE, 0);
        scaled_job g = {v, alpha_c, d, m, n, k, (m + SCALED_ROWS_PER_TASK - 1) / SCALED_ROWS_PER_TASK, &A, &B, c,
                        NULL, 1};
        int64_t ntasks = batch * g.tasks_per_batch;
        int64_t w = threads < ntasks ? threads : ntasks;
        g.workers = w < 1 ? 1 : w > PP_MAX_THREADS ? PP_MAX_THREADS : (int)w;  // parallel.h's worker count
        if (R && !(g.wr = pp_ranges_workers(R, g.workers)))
            rc = pp_fail(err, PP_ERR_RUNTIME, "gemm: out of memory for the range diagnostics");
        else
            pp_parallel_for(scaled_task, &g, ntasks, threads, NULL);
        pp_ranges_workers_done(R, g.wr, g.workers);
    }
    free(A.q);
    free(B.q);
    free(A.xs);
    free(B.xs);
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
