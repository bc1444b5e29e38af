// cpu/adamw.c — the loops of the CPU AdamW emulation. θ-independent sources (synthetic,
// quadratic) run element blocks through all T steps on worker threads; linear regression runs
// step by step (its gradient couples every element). Each iteration's body, and every sum's
// order, is kernels/adamw_thread.h's, which the CUDA kernels run too (cuda/adamw_kernels.cu).
#include "adamw.h"
#include "adamw_lanes.h"
#include "../adamw_exact.h"
#include "parallel.h"

#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// Threads: pp_parallel_for (base/parallel.h); results never depend on the thread count

#define ADAMW_BLOCK PP_ADAMW_LOSS_BLOCK  // the loss partial sums' block (adamw_thread.h)
#define ADAMW_CHUNK 32                     // steps per pass over a block's groups (input source)

// ---------------------------------------------------------------------------------------------
// Element-parallel sources: synthetic and quadratic

typedef struct adamw_job {
    const pp_adamw_variant *va;
    const pp_adamw_problem *pr;
    const pp_adamw_scalars *sc;  // [T + 1], index t
    const double *theta0;
    double *theta, *m, *v, *c;
    pp_adamw_trace *trace;
    double *lossp;               // [nblocks][T + 1] partial losses, or NULL
    pp_adamw_path path;
    pp_isa isa;                  // the vector loop's level, resolved (base/isa.h)
    pp_ranges *wr;               // range diagnostics: task b notes into wr[b mod workers], or NULL
    int workers;
    int64_t rblock;              // elements per range cell (parameter block)
} adamw_job;

// Block b: its elements through all T steps (adamw_thread.h's body, the GPU thread's too),
// their loss terms added in element order into the block's partial sums.
static void adamw_block(void *ctx, int64_t b)
{
    const adamw_job *j = ctx;
    const pp_adamw_problem *pr = j->pr;
    int T = pr->steps;
    int64_t lo = b * ADAMW_BLOCK, hi = lo + ADAMW_BLOCK;
    if (hi > pr->n)
        hi = pr->n;
    pp_adamw_loss_out lout = {j->lossp ? j->lossp + b * (T + 1) : NULL, 1, 1};
    pp_adamw_snap_out sout = {NULL, NULL, 0, pr->n};
    if (j->trace)
        sout = (pp_adamw_snap_out){j->trace->snap, j->trace->snap_step, j->trace->n_snaps, pr->n};
    pp_ranges *R = j->wr ? &j->wr[b % j->workers] : NULL;  // task b runs on worker b mod workers
    if (pp_adamw_exact64(j->va)) {  // explain's exact state sites: binary64 state (adamw_exact.h), no notes
        for (int64_t i = lo; i < hi; i++) {
            pp_adamw_elem64 e = {j->theta0[i], 0.0, 0.0, 0.0};
            pp_adamw_elem_thread64(j->va, pr, j->sc, i, 0, T, &e, lout, sout);
            j->theta[i] = e.theta, j->m[i] = e.m, j->v[i] = e.v;
            if (j->c)
                j->c[i] = e.c;
        }
        return;
    }
    // groups of lanes (adamw_lanes.h), the tail below; range notes take the scalar loop (the same bits)
    if (j->path != PP_ADAMW_PATH_SCALAR && !R) {
        enum { L = PP_ADAMW_LANES, NG = ADAMW_BLOCK / PP_ADAMW_LANES };
        float th[NG][L], m[NG][L], v[NG][L], c[NG][L];
        int64_t ng = (hi - lo) / L;
        for (int64_t g = 0; g < ng; g++)
            for (int l = 0; l < L; l++)
                th[g][l] = (float)j->theta0[lo + g * L + l], m[g][l] = v[g][l] = c[g][l] = 0.0f;
        // The input source steps the block's groups ADAMW_CHUNK steps at a time (its rows, n
        // apart, read a page at a time across the groups rather than a line per row and
        // group); the others run each group through all T steps. Each step's loss terms are
        // still added group by group in increasing i: the same sums.
        int ch = pr->kind == PP_ADAMW_GRAD_INPUT ? ADAMW_CHUNK : T;
        for (int t0 = 1; t0 <= T; t0 += ch)
            for (int64_t g = 0; g < ng; g++)
                pp_adamw_lanes_run(j->isa, j->va, pr, j->sc, lo + g * L, t0, T - t0 < ch ? T : t0 + ch - 1, th[g], m[g],
                                   v[g], c[g], lout, sout);
        for (int64_t g = 0; g < ng; g++)
            for (int l = 0; l < L; l++) {
                j->theta[lo + g * L + l] = th[g][l];
                j->m[lo + g * L + l] = m[g][l];
                j->v[lo + g * L + l] = v[g][l];
                if (j->c)
                    j->c[lo + g * L + l] = c[g][l];
            }
        lo += ng * L;
    }
    for (int64_t i = lo; i < hi; i++) {
        pp_adamw_elem e = {(float)j->theta0[i], 0.0f, 0.0f, 0.0f};
        pp_adamw_elem_thread_r(j->va, pr, j->sc, i, 0, T, &e, lout, sout, R, R ? i / j->rblock : 0);
        j->theta[i] = e.theta;
        j->m[i] = e.m;
        j->v[i] = e.v;
        if (j->c)
            j->c[i] = e.c;
    }
}

// ---------------------------------------------------------------------------------------------
// Linear regression: step by step

static int adamw_linreg(const adamw_job *j, pp_error *err)
{
    const pp_adamw_problem *pr = j->pr;
    int64_t n = pr->n, r = pr->rows;
    int T = pr->steps;
    float *X = malloc((size_t)(r * n) * sizeof *X), *y = malloc((size_t)r * sizeof *y);
    float *res = malloc((size_t)r * sizeof *res);
    double *dr2 = malloc((size_t)r * sizeof *dr2);
    pp_adamw_elem *e = malloc((size_t)n * sizeof *e);
    // explain's exact state sites: the binary64 state (adamw_exact.h) in place of e
    pp_adamw_elem64 *e64 = pp_adamw_exact64(j->va) ? malloc((size_t)n * sizeof *e64) : NULL;
    if (!X || !y || !res || !dr2 || !e || (pp_adamw_exact64(j->va) && !e64)) {
        free(X), free(y), free(res), free(dr2), free(e), free(e64);
        return pp_fail(err, PP_ERR_RUNTIME, "adamw: out of memory for the linear regression");
    }
    pp_adamw_linreg_data(pr, X, y);
    float inv_r = 1.0f / (float)r;
    for (int64_t k = 0; k < n; k++)
        e[k] = (pp_adamw_elem){(float)j->theta0[k], 0.0f, 0.0f, 0.0f};
    for (int64_t k = 0; e64 && k < n; k++)
        e64[k] = (pp_adamw_elem64){j->theta0[k], 0.0, 0.0, 0.0};
    int snap = 0;
    for (int t = 0; t <= T; t++) {
        // residuals of the current θ: emulated (fp32 FMA chains) and the loss (binary64), in
        // adamw_thread.h's order (the GPU's phases 1 and 2)
        for (int64_t q = 0; q < r; q++)
            if (e64)
                pp_adamw_linreg_row64(X, y, e64, n, q, res, dr2);
            else
                pp_adamw_linreg_row(X, y, e, n, q, res, dr2);
        double loss = pp_adamw_linreg_loss(dr2, r);
        if (j->trace && j->trace->loss)
            j->trace->loss[t] = loss;
        if (t == T)
            break;
        for (int64_t k = 0; k < n; k++)
            if (e64)
                pp_adamw_linreg_update64(j->va, pr, &j->sc[t + 1], t + 1, X, res, inv_r, k, &e64[k]);
            else
                pp_adamw_linreg_update_r(j->va, pr, &j->sc[t + 1], t + 1, X, res, inv_r, k, &e[k], j->wr,
                                         j->wr ? k / j->rblock : 0);  // one thread: wr[0]
        if (j->trace && snap < j->trace->n_snaps && j->trace->snap_step[snap] == t + 1) {
            for (int64_t k = 0; k < n; k++)
                j->trace->snap[(int64_t)snap * n + k] = e64 ? e64[k].theta : e[k].theta;
            snap++;
        }
    }
    for (int64_t k = 0; k < n; k++) {
        j->theta[k] = e64 ? e64[k].theta : e[k].theta;
        j->m[k] = e64 ? e64[k].m : e[k].m;
        j->v[k] = e64 ? e64[k].v : e[k].v;
        if (j->c)
            j->c[k] = e64 ? e64[k].c : e[k].c;
    }
    free(X), free(y), free(res), free(dr2), free(e), free(e64);
    return PP_OK;
}

// ---------------------------------------------------------------------------------------------
// Entry point

void pp_adamw_trace_free(pp_adamw_trace *t)
{
    free(t->snap);
    free(t->loss);
    memset(t, 0, sizeof *t);
}

int pp_adamw_cpu(const pp_adamw_variant *va, const pp_adamw_problem *pr, const double *theta0, double *theta,
                 double *m, double *v, double *c, pp_adamw_trace *trace, int threads, pp_error *err)
{
    return pp_adamw_cpu_path(va, pr, theta0, theta, m, v, c, trace, threads, PP_ADAMW_PATH_VECTOR, err);
}

int pp_adamw_cpu_path(const pp_adamw_variant *va, const pp_adamw_problem *pr, const double *theta0, double *theta,
                      double *m, double *v, double *c, pp_adamw_trace *trace, int threads, pp_adamw_path path,
                      pp_error *err)
{
    return pp_adamw_cpu_ranges(va, pr, theta0, theta, m, v, c, trace, threads, path, NULL, err);
}

int pp_adamw_cpu_ranges(const pp_adamw_variant *va, const pp_adamw_problem *pr, const double *theta0, double *theta,
                        double *m, double *v, double *c, pp_adamw_trace *trace, int threads, pp_adamw_path path,
                        pp_ranges *R, pp_error *err)
{
    char msg[200];
    if (pp_adamw_check(va, pr, theta0, msg, sizeof msg))
        return pp_fail(err, PP_ERR_INPUT, "adamw: %s", msg);
    int T = pr->steps;
    pp_adamw_scalars *sc = malloc((size_t)(T + 1) * sizeof *sc);
    if (!sc)
        return pp_fail(err, PP_ERR_RUNTIME, "adamw: out of memory");
    for (int t = 1; t <= T; t++)
        sc[t] = pp_adamw_scalars_make(va->update, &pr->hyper, pp_adamw_lr(pr, t), t);
    int has_loss = pp_adamw_has_loss(pr);
    if (trace) {
        memset(trace, 0, sizeof *trace);
        trace->n_snaps = pp_adamw_snap_steps(T, trace->snap_step);
        trace->theta0 = theta0;
        trace->snap = malloc((size_t)(trace->n_snaps * pr->n) * sizeof *trace->snap);
        trace->loss = has_loss ? calloc((size_t)T + 1, sizeof *trace->loss) : NULL;
        if (!trace->snap || (has_loss && !trace->loss)) {
            pp_adamw_trace_free(trace);
            free(sc);
            return pp_fail(err, PP_ERR_RUNTIME, "adamw: out of memory for the trace");
        }
    }
    pp_isa cap = path == PP_ADAMW_PATH_VECTOR_AVX512 ? PP_ISA_AVX512
                 : path == PP_ADAMW_PATH_VECTOR_AVX2   ? PP_ISA_AVX2
                 : path == PP_ADAMW_PATH_VECTOR_BASELINE ? PP_ISA_BASELINE
                                                         : PP_ISA_AUTO;
    adamw_job j = {.va = va, .pr = pr, .sc = sc, .theta0 = theta0, .theta = theta, .m = m, .v = v,
                   .c = va->kahan ? c : NULL, .trace = trace, .lossp = NULL, .path = path,
                   .isa = cap == PP_ISA_AUTO ? PP_ISA_AUTO : pp_isa_resolve(cap), .wr = NULL, .workers = 1,
                   .rblock = 1};
    if (R)  // R's cells cut θ into equal consecutive blocks, the last possibly shorter
        j.rblock = (pr->n + R->heads - 1) / R->heads;
    if (c && !va->kahan)
        memset(c, 0, (size_t)pr->n * sizeof *c);
    int rc = PP_OK;
    if (pr->kind == PP_ADAMW_GRAD_LINREG) {
        j.wr = R;  // one thread
        rc = adamw_linreg(&j, err);
    } else {
        int64_t nb = (pr->n + ADAMW_BLOCK - 1) / ADAMW_BLOCK;
        if (trace && has_loss) {
            j.lossp = calloc((size_t)(nb * (T + 1)), sizeof *j.lossp);
            if (!j.lossp) {
                pp_adamw_trace_free(trace);
                free(sc);
                return pp_fail(err, PP_ERR_RUNTIME, "adamw: out of memory for the losses");
            }
        }
        int64_t w = threads < nb ? threads : nb;
        j.workers = w < 1 ? 1 : w > PP_MAX_THREADS ? PP_MAX_THREADS : (int)w;  // parallel.h's worker count
        if (R && !(j.wr = pp_ranges_workers(R, j.workers))) {
            free(j.lossp);
            if (trace)
                pp_adamw_trace_free(trace);
            free(sc);
            return pp_fail(err, PP_ERR_RUNTIME, "adamw: out of memory for the range diagnostics");
        }
        pp_parallel_for(adamw_block, &j, nb, threads, NULL);
        pp_ranges_workers_done(R, j.wr, j.workers);
        j.wr = NULL;
        if (j.lossp)
            for (int t = 0; t <= T; t++)
                trace->loss[t] = pp_adamw_loss_total(j.lossp + t, nb, T + 1);
        free(j.lossp);
    }
    if (rc && trace)
        pp_adamw_trace_free(trace);
    free(sc);
    return rc;
}
