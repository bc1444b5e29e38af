// attention_te_exact.c — fp8 = "te" with explain's exact sites (attention_te_exact.h): the host
// steps of attention_te_run.c with each site's rounding or its binary64 value, the rows on the
// thread pool through pp_attn_te_row_x.
#include "attention_te_exact.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "attention_check.h"
#include "attention_fp8.h"
#include "attention_te_fp8_x.h"
#include "parallel.h"

enum { ROWS_PER_TASK = 16, RANGE_TASKS = 16 };

static int fail(char *eb, size_t el, int rc, const char *msg)
{
    if (eb && el)
        snprintf(eb, el, "%s", msg);
    return rc;
}

// Tensor `which` (0 q, 1 k, 2 v; n elements) as the kernel reads it, into elem, and its descale X:
// quant exact: the input itself, X = 1 (fp8 = fa3's rule); block_scale exact (tensor-current,
// -delayed): s without its RN_32 (max_finite/amax in binary64; delayed: the recipe's s) and X = 1/s
// in binary64 instead of RN_32(1/s), the elements cast as RN_e4m3,sat(RN_32(x·s)) with that s (the
// cast's roundings stay the quant site's); else pp_attn_fp8_quantise_tensor, as the run.
static double te_quantise(const pp_attn_variant *v, const pp_attn_dims *dm, int which, const double *x, int64_t n,
                          double *elem, double *bs)
{
    pp_site_mask m = v->exact_sites;
    pp_scaling sch = pp_attn_fp8_scheme(v);
    int qx = pp_site_exact(m, PP_SITE_ATTN_QUANT_Q + which), sx = pp_site_exact(m, PP_SITE_ATTN_BLOCK_SCALE_Q + which);
    if (qx || !sx || (sch != PP_SCALING_TENSOR && sch != PP_SCALING_DELAYED))
        return pp_attn_fp8_quantise_tensor(v, dm, which, x, qx, elem, bs);
    double amax = 0, s;
    for (int64_t i = 0; i < n; i++)
        amax = pp_amax_step(amax, x[i]);
    if (sch == PP_SCALING_DELAYED)
        s = v->fp8_delayed_s[which];
    else
        s = amax == 0 ? 1.0 : isnan(amax) ? amax : pp_format_get(PP_FMT_E4M3).max_finite / amax;
    for (int64_t i = 0; i < n; i++)
        elem[i] = pp_tensor_quantise(PP_FMT_E4M3, x[i], s);
    return 1.0 / s;
}

typedef struct te_x_ctx {
    const pp_attn_te_cfg_x *t;
    const pp_attn_dims *dm;
    const double *q8, *k8, *v8;
    double *o, *lse, *amax_s;
    int64_t rows, per_task;  // rows, and rows per task
    pp_ranges *Rw;           // range notes: one accumulator per task (NULL: none)
    char *oom;               // per task: 1 when its scratch could not be allocated
} te_x_ctx;

static void te_x_task(void *vctx, int64_t task)
{
    te_x_ctx *c = vctx;
    const pp_attn_dims *dm = c->dm;
    double *x = malloc(sizeof(double) * (size_t)dm->s_kv);  // the row's scores, then its P codes
    if (!x) {
        c->oom[task] = 1;
        return;
    }
    int64_t r1 = (task + 1) * c->per_task < c->rows ? (task + 1) * c->per_task : c->rows;
    for (int64_t r = task * c->per_task; r < r1; r++) {
        int64_t row, kv, n = pp_attn_te_row_span(dm, r, &row, &kv);
        pp_attn_te_row_xr(c->t, r, c->q8 + row * dm->d, c->k8 + kv, c->v8 + kv, dm->h_kv * dm->d, n, dm->d, x,
                          c->o + row * dm->d, &c->lse[r], &c->amax_s[r], c->Rw ? &c->Rw[task] : NULL,
                          (r / dm->s_q) % dm->h);
    }
    free(x);
}

// O's amax, scale and e4m3 store (attention_te_run.c's) with sites out_scale (scale_o =
// max_finite/amax_o in binary64 when current, X_o = 1/scale_o) and out (out = O: no store).
// keep (may be NULL): O8's codes (out exact: O itself) into keep->o8, X_o (out exact: 1) into keep->xo.
static void te_x_store(const pp_attn_variant *v, const double *o, int64_t nq, int64_t d, int64_t h, double *out,
                       double amax_o, double *so_out, pp_ranges *R, pp_attn_te_fwd_keep *keep)
{
    pp_site_mask m = v->exact_sites;
    int sx = pp_site_exact(m, PP_SITE_ATTN_OUT_SCALE);
    double so = v->te_scale_o > 0 ? v->te_scale_o
              : !sx ? pp_tensor_scale(PP_FMT_E4M3, amax_o)
              : amax_o == 0 ? 1.0 : isnan(amax_o) ? amax_o : pp_format_get(PP_FMT_E4M3).max_finite / amax_o;
    double xo = sx ? 1.0 / so : pp_tensor_scale_inv(so);
    for (int64_t i = 0; i < nq; i++) {
        double code = pp_tensor_quantise(PP_FMT_E4M3, o[i], so);
        out[i] = pp_site_exact(m, PP_SITE_ATTN_OUT) ? o[i] : xo * code;
        pp_range_note(R, PP_SITE_ATTN_OUT, (i / d) % h, PP_FMT_E4M3, o[i] * so, code);  // O8's code
        if (keep)
            keep->o8[i] = pp_site_exact(m, PP_SITE_ATTN_OUT) ? o[i] : code;
    }
    if (keep)
        keep->xo = pp_site_exact(m, PP_SITE_ATTN_OUT) ? 1.0 : xo;
    *so_out = so;
}

// pp_attn_te_run_x, noting ranges into R when R is set (NULL: none), keeping what the backward
// reads into keep when set (pp_attn_te_fwd_x).
static int te_run(const pp_attn_variant *v, const pp_attn_dims *dm, const double *q, const double *k,
                  const double *vv, double *out, double *lse, int threads, pp_attn_te_amax *amax, pp_ranges *R,
                  pp_attn_te_fwd_keep *keep, char *errbuf, size_t errlen)
{
    if (v->fp8 != PP_ATTN_FP8_TE)
        return fail(errbuf, errlen, 2, "attention: pp_attn_te_run_x runs fp8 = \"te\" only");
    pp_attn_scalars sc;
    int begun = pp_attn_te_begin(v, dm, q, k, vv, out, lse, &sc, amax, errbuf, errlen);
    if (begun)
        return begun == 1 ? 0 : begun;
    int64_t nq = dm->b * dm->s_q * dm->h * dm->d, nkv = dm->b * dm->s_kv * dm->h_kv * dm->d,
            rows = dm->b * dm->h * dm->s_q;
    // with range notes, at most RANGE_TASKS tasks (an accumulator each, merged exactly after)
    int64_t per = R ? (rows + RANGE_TASKS - 1) / RANGE_TASKS : ROWS_PER_TASK, ntasks = (rows + per - 1) / per;
    const int64_t n[3] = {nq, nkv, nkv};
    const double *x[3] = {q, k, vv};
    double *e = malloc(sizeof(double) * (size_t)(nq + 2 * nkv)),
           *bs = malloc(sizeof(double) * (size_t)(nq > nkv ? nq : nkv)), *o = malloc(sizeof(double) * (size_t)nq), *fl = malloc(sizeof(double) * (size_t)(2 * rows));
    char *oom = calloc((size_t)ntasks, 1);
    pp_ranges *Rw = pp_ranges_workers(R, (int)ntasks);
    if (!e || !bs || !o || !fl || !oom || (R && !Rw)) {
        free(e), free(bs), free(o), free(fl), free(oom), free(Rw);
        return fail(errbuf, errlen, 3, "attention: out of memory for fp8 = \"te\" with exact sites");
    }
    double X[3];
    const double *ep[3];
    double *w = e;
    for (int t = 0; t < 3; t++) {
        X[t] = te_quantise(v, dm, t, x[t], n[t], w, bs);
        ep[t] = w;
        w += n[t];
    }
    double alpha64 = v->sigma_given ? v->sigma : 1.0 / sqrt((double)dm->d);
    pp_attn_te_cfg_x t = pp_attn_te_cfg_x_make(v, sc.alpha32, alpha64, X[0], X[1], X[2]);
    if (keep) {
        for (int64_t i = 0; i < nq + 2 * nkv; i++)
            keep->e[i] = e[i];
        keep->X[0] = X[0], keep->X[1] = X[1], keep->X[2] = X[2];
        keep->t = t;
        keep->alpha32 = sc.alpha32, keep->alpha64 = alpha64;
        keep->scale_s = v->te_scale_s > 0 ? v->te_scale_s : pp_tensor_scale(PP_FMT_E4M3, 1.0);
    }
    te_x_ctx c = {.t = &t, .dm = dm, .q8 = ep[0], .k8 = ep[1], .v8 = ep[2], .o = o, .lse = fl, .amax_s = fl + rows,
                  .rows = rows, .per_task = per, .Rw = Rw, .oom = oom};
    pp_parallel_for(te_x_task, &c, ntasks, threads, NULL);
    pp_ranges_workers_done(R, Rw, (int)ntasks);
    int failed = 0;
    for (int64_t i = 0; i < ntasks; i++)
        failed |= oom[i];
    if (!failed) {
        double amax_o = 0, amax_s = 0, so;
        for (int64_t i = 0; i < nq; i++)
            amax_o = pp_amax_step(amax_o, o[i]);
        for (int64_t r = 0; r < rows; r++)
            amax_s = pp_amax_step(amax_s, fl[rows + r]);
        te_x_store(v, o, nq, dm->d, dm->h, out, amax_o, &so, R, keep);
        for (int64_t r = 0; r < rows; r++)
            lse[r] = fl[r];
        if (amax) {
            amax->amax_s = amax_s, amax->amax_o = amax_o, amax->scale_o = so;
            amax->scale_s = v->te_scale_s > 0 ? v->te_scale_s : pp_tensor_scale(PP_FMT_E4M3, 1.0);
        }
    }
    free(e), free(bs), free(o), free(fl), free(oom);
    return failed ? fail(errbuf, errlen, 3, "attention: out of memory for fp8 = \"te\" with exact sites") : 0;
}

int pp_attn_te_run_x(const pp_attn_variant *v, const pp_attn_dims *dm, const double *q, const double *k,
                     const double *vv, double *out, double *lse, int threads, pp_attn_te_amax *amax, char *errbuf,
                     size_t errlen)
{
    return te_run(v, dm, q, k, vv, out, lse, threads, amax, NULL, NULL, errbuf, errlen);
}

int pp_attn_te_fwd_x(const pp_attn_variant *v, const pp_attn_dims *dm, const double *q, const double *k,
                     const double *vv, double *out, double *lse, int threads, pp_attn_te_amax *amax, pp_ranges *R,
                     pp_attn_te_fwd_keep *keep, char *errbuf, size_t errlen)
{
    return te_run(v, dm, q, k, vv, out, lse, threads, amax, R, keep, errbuf, errlen);
}

int pp_attn_te_ranges_x(const pp_attn_variant *v, const pp_attn_dims *dm, const double *q, const double *k,
                        const double *vv, int threads, pp_ranges *R, char *errbuf, size_t errlen)
{
    if (!R)
        return 0;
    int64_t nq = dm->b * dm->s_q * dm->h * dm->d, rows = dm->b * dm->h * dm->s_q;
    double *out = malloc(sizeof(double) * (size_t)(nq > 0 ? nq : 1)), *lse = malloc(sizeof(double) * (size_t)(rows > 0 ? rows : 1));
    if (!out || !lse) {
        free(out), free(lse);
        return fail(errbuf, errlen, 3, "attention: out of memory for fp8 = \"te\"'s range notes");
    }
    int rc = te_run(v, dm, q, k, vv, out, lse, threads, NULL, R, NULL, errbuf, errlen);
    free(out), free(lse);
    return rc;
}
