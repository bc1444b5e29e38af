// attention_ref.c — the attention reference's entry point: checks, σ, the task split over threads
// (dynamic, results independent of the schedule), progress, per-tensor bounds. The two paths are
// attention_ref_fast.c and attention_ref_plain.c, what they share attention_ref_job.{h,c}; the
// proof is reference/PROOFS.md#attention.
#include "attention_ref.h"
#include "interrupt.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "attention_ref_fast.h"
#include "attention_ref_job.h"
#include "attention_ref_plain.h"
#include "format.h"

#define ATTN_MAX_THREADS 256
#define ATTN_ROWS_PER_TASK 16
#define ATTN_MAX_NUMEL ((int64_t)1 << 40)

// ---------------------------------------------------------------------------------------------
// Threads: workers take tasks from a shared counter; a task's results depend only on the task.

typedef struct attn_worker {
    pp_attn_job_ *J;
    atomic_llong *next;
    int index;
} attn_worker;

static void *attn_worker_main(void *arg)
{
    attn_worker *w = arg;
    pp_attn_job_ *J = w->J;
    for (;;) {
        long long t = atomic_fetch_add(w->next, 1);
        if (t >= J->ntasks || pp_interrupted())  // Ctrl-C: the caller discards the job
            break;
        int rc = J->o->method == PP_ATTN_REF_MPFR_PLAIN ? 1 : pp_attn_fast_task_(J, t, w->index);
        if (rc > 0) {  // the fast path's preconditions fail here: the plain path redoes the task
            if (J->o->method == PP_ATTN_REF_FAST)
                atomic_fetch_add(&J->fallbacks, 1);
            rc = pp_attn_plain_task_(J, t, w->index);
        }
        if (rc < 0)
            atomic_store(&J->oom, 1);
    }
    mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);  // this thread's MPFR caches (leak-checker clean)
    return NULL;
}

static void attn_run(pp_attn_job_ *J, int nthreads)
{
    if (nthreads > ATTN_MAX_THREADS)
        nthreads = ATTN_MAX_THREADS;
    if (nthreads > J->ntasks)
        nthreads = (int)J->ntasks;
    if (nthreads < 1)
        nthreads = 1;
    atomic_llong next;
    atomic_init(&next, 0);
    attn_worker w[ATTN_MAX_THREADS];
    pthread_t tid[ATTN_MAX_THREADS];
    int started[ATTN_MAX_THREADS] = {0};
    for (int i = 0; i < nthreads; i++) {
        w[i] = (attn_worker){J, &next, i};
        if (i > 0)
            started[i] = pthread_create(&tid[i], NULL, attn_worker_main, &w[i]) == 0;
    }
    attn_worker_main(&w[0]);  // a worker that could not start leaves its share to the others
    for (int i = 1; i < nthreads; i++)
        if (started[i])
            pthread_join(tid[i], NULL);
}

// ---------------------------------------------------------------------------------------------
// σ

// Fast: σ as a double-double from RN_256(1/√d) (correctly rounded, mpfr_rec_sqrt): hi = RN(σ₂₅₆),
// lo = RN(σ₂₅₆ − hi) (the subtraction exact at 256 bits): |hi + lo − σ| ≤ 2^−105·σ, as in
// PROOFS.md#gemm "α as a double-double". Plain: RN_P(1/√d), ±2^−P relative. Given σ: exact.
static void attn_sigma_init(pp_attn_job_ *J)
{
    const pp_attn_ref_opts *o = J->o;
    mpfr_init2(J->sig_p, J->prec);
    if (o->sigma_given) {
        J->sig_h = o->sigma;
        J->sig_l = 0.0;
        mpfr_set_d(J->sig_p, o->sigma, MPFR_RNDN);  // exact: 53 ≤ P bits
    } else {
        mpfr_t x, r;
        mpfr_inits2(256, x, r, (mpfr_ptr)0);
        mpfr_set_si(x, (long)J->d, MPFR_RNDN);  // exact: d ≤ 2^20
        mpfr_rec_sqrt(J->sig_p, x, MPFR_RNDN);  // ±½ulp_P
        mpfr_rec_sqrt(r, x, MPFR_RNDN);         // ±½ulp_256
        J->sig_h = mpfr_get_d(r, MPFR_RNDN);     // ±2^−53|hi|
        mpfr_sub_d(r, r, J->sig_h, MPFR_RNDN);   // exact
        J->sig_l = mpfr_get_d(r, MPFR_RNDN);     // ±2^−53|lo|
        mpfr_clears(x, r, (mpfr_ptr)0);
    }
    J->sig_b = fabs(J->sig_h) * (1.0 + 0x1p-50);  // ≥ |σ|, and ≥ |RN_P(σ)|
}

// ---------------------------------------------------------------------------------------------
// Entry point

static int attn_mul(int64_t x, int64_t y, int64_t *out)
{
    if (x < 0 || y < 0 || (y != 0 && x > ATTN_MAX_NUMEL / y))
        return -1;
    *out = x * y;
    return *out > ATTN_MAX_NUMEL ? -1 : 0;
}

static int attn_numel(int64_t a, int64_t b, int64_t c, int64_t d, int64_t *n)
{
    int64_t t;
    return attn_mul(a, b, &t) || attn_mul(t, c, &t) || attn_mul(t, d, n);
}

static int attn_check_values(const char *what, const double *x, int64_t count, pp_error *err)
{
    for (int64_t i = 0; i < count; i++)
        if (isfinite(x[i]) && !pp_is_representable(PP_FMT_FP32, x[i]))
            return pp_fail(err, PP_ERR_INPUT,
                           "attention reference: %s[%lld] = %.17g is not a binary32 value", what,
                           (long long)i, x[i]);
    return PP_OK;
}

int pp_attention_ref(const pp_attn_ref_opts *o, const double *q, const double *k, const double *v,
                     const double *dout, double *out, double *lse, double *dq, double *dk,
                     double *dv, pp_attn_ref_bounds *bounds, pp_error *err)
{
    return pp_attention_ref_ex(o, q, k, v, dout, out, lse, dq, dk, dv, bounds, NULL, err);
}

int pp_attention_ref_ex(const pp_attn_ref_opts *o, const double *q, const double *k,
                        const double *v, const double *dout, double *out, double *lse, double *dq,
                        double *dk, double *dv, pp_attn_ref_bounds *bounds,
                        const pp_attn_ref_elem_bounds *elem, pp_error *err)
{
    if (bounds)
        memset(bounds, 0, sizeof *bounds);
    if (o->method != PP_ATTN_REF_FAST && o->method != PP_ATTN_REF_MPFR_PLAIN)
        return pp_fail(err, PP_ERR_INPUT, "attention reference: unknown method %d", (int)o->method);
    int prec = o->prec_bits == 0 ? PP_ATTN_REF_PLAIN_PREC : o->prec_bits;
    if (prec < 64 || prec > 4096)
        return pp_fail(err, PP_ERR_INPUT, "attention reference: prec_bits %d not in [64, 4096]",
                       o->prec_bits);
    if (o->b < 0 || o->s_q < 0 || o->s_kv < 0 || o->h < 0 || o->h_kv < 1 || o->d < 1)
        return pp_fail(err, PP_ERR_INPUT,
                       "attention reference: extents must be >= 0 (h_kv, d >= 1)");
    if (o->h % o->h_kv != 0)
        return pp_fail(err, PP_ERR_INPUT, "attention reference: h = %lld is not a multiple of "
                       "h_kv = %lld", (long long)o->h, (long long)o->h_kv);
    if (o->s_kv > ((int64_t)1 << 30) || o->d > ((int64_t)1 << 20))
        return pp_fail(err, PP_ERR_INPUT, "attention reference: s_kv > 2^30 or d > 2^20");
    if (o->sigma_given && !isfinite(o->sigma))
        return pp_fail(err, PP_ERR_INPUT, "attention reference: sigma is not finite");
    int64_t nq, nk;
    if (attn_numel(o->b, o->s_q, o->h, o->d, &nq) || attn_numel(o->b, o->s_kv, o->h_kv, o->d, &nk))
        return pp_fail(err, PP_ERR_INPUT, "attention reference: a tensor would exceed 2^40 elements");
    int bw = o->backward != 0;
    if ((nq && (!q || !out || !lse || (bw && (!dout || !dq)))) ||
        (nk && (!k || !v || (bw && (!dk || !dv)))))
        return pp_fail(err, PP_ERR_INPUT, "attention reference: NULL data for a non-empty tensor");
    int rc = attn_check_values("q", q, nq, err);
    if (!rc)
        rc = attn_check_values("k", k, nk, err);
    if (!rc)
        rc = attn_check_values("v", v, nk, err);
    if (!rc && bw)
        rc = attn_check_values("dout", dout, nq, err);
    if (rc)
        return rc;

    pp_attn_job_ J;
    memset(&J, 0, sizeof J);
    J.o = o;
    J.b = o->b;
    J.s_q = o->s_q;
    J.s_kv = o->s_kv;
    J.h = o->h;
    J.h_kv = o->h_kv;
    J.d = o->d;
    J.g = o->h / o->h_kv;
    J.prec = prec;
    J.backward = bw;
    J.q = q;
    J.k = k;
    J.v = v;
    J.dout = dout;
    J.out = out;
    J.lse = lse;
    J.dq = dq;
    J.dk = dk;
    J.dv = dv;
    if (elem)
        J.elem = *elem;
    J.rows_per_task = ATTN_ROWS_PER_TASK;
    J.tasks_per_head = (o->s_q + ATTN_ROWS_PER_TASK - 1) / ATTN_ROWS_PER_TASK;
    J.ntasks = bw ? o->b * o->h_kv : o->b * o->h * J.tasks_per_head;
    J.total = 0;  // progress units: every row's work (pp_attn_row_work_), per batch and head
    for (int64_t i = 0; i < o->s_q; i++)
        J.total += pp_attn_row_work_(&J, i);
    J.total *= o->b * o->h;
    atomic_init(&J.done, 0);
    atomic_init(&J.oom, 0);
    atomic_init(&J.fallbacks, 0);
    pp_attn_progress_start_(&J);
    J.res = calloc((size_t)(J.ntasks > 0 ? J.ntasks : 1), sizeof *J.res);
    if (!J.res)
        return pp_fail(err, PP_ERR_RUNTIME, "attention reference: out of memory");
    attn_sigma_init(&J);
    pp_attn_exp_init_(&J);
    attn_run(&J, o->threads);
    mpfr_clear(J.sig_p);
    mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);
    if (atomic_load(&J.oom)) {
        free(J.res);
        return pp_fail(err, PP_ERR_RUNTIME, "attention reference: out of memory");
    }
    if (bounds) {
        double *m[5] = {&bounds->out, &bounds->lse, &bounds->dq, &bounds->dk, &bounds->dv};
        for (int64_t t = 0; t < J.ntasks; t++)
            for (int i = 0; i < 5; i++)
                if (J.res[t].max[i] > *m[i])
                    *m[i] = J.res[t].max[i];
        bounds->plain_tasks = atomic_load(&J.fallbacks);
    }
    free(J.res);
    if (o->progress)
        o->progress(o->progress_ctx, J.total, J.total);
    return PP_OK;
}
