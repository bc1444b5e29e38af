// attention_te_bwd_exact.c — fp8 = "te"'s backward with explain's exact sites and its range notes
// (attention_te_bwd_exact.h): attention_te_bwd_run.c's host steps, each with its site's rounding or
// its binary64 value, the rows and key columns on the thread pool through attention_te_fp8_bwd_x.h.
#include "attention_te_bwd_exact.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "attention_check.h"
#include "attention_fp8.h"
#include "attention_te_exact.h"
#include "attention_te_fp8_bwd_x.h"
#include "parallel.h"

enum { PER_TASK = 16, RANGE_TASKS = 16 };

static int fail(char *eb, size_t el, int rc, const char *msg)
{
    if (eb && el)
        snprintf(eb, el, "%s", msg);
    return rc;
}

// A per-tensor scale from amax into format f: the kernel's RN_32(max_finite/amax) (scaling.h), or
// (exact) that quotient in binary64; 1 for amax 0, NaN for a NaN amax, as pp_tensor_scale.
static double scale_of(pp_format_id f, double amax, int exact)
{
    if (!exact)
        return pp_tensor_scale(f, amax);
    return amax == 0 ? 1.0 : isnan(amax) ? amax : pp_format_get(f).max_finite / amax;
}

// dO as the backward reads it (pp_attn_te_quantise_dout): quant_do exact: dO itself, X = 1;
// block_scale_do exact: s unrounded and X = 1/s (the elements' cast stays quant_do's). Notes:
// quant_do per q head (each code against RN_32(dO·s)), block_scale_do (X once).
static double dout_x(const pp_attn_variant *v, const pp_attn_dims *dm, int64_t n, const double *dout, double *codes,
                     double *scale, double *amax, pp_ranges *R)
{
    pp_format_id f = pp_attn_te_grad_format(v);
    int qx = pp_site_exact(v->exact_sites, PP_SITE_ATTN_QUANT_DO),
        sx = pp_site_exact(v->exact_sites, PP_SITE_ATTN_BLOCK_SCALE_DO), none = pp_attn_fp8_scheme(v) == PP_SCALING_NONE;
    double a = 0;
    for (int64_t i = 0; i < n; i++)
        a = pp_amax_step(a, dout[i]);
    // the kernel's order (pp_attn_te_quantise_dout): amax_history_do's scale when given, else none's
    // cast, else current (block_scale_do exact: unrounded); a given scale is used as it is
    double s = v->te_scale_do > 0 ? v->te_scale_do : none ? 1.0 : scale_of(f, a, sx);
    double x = sx && !none ? 1.0 / s : pp_tensor_scale_inv(s);
    for (int64_t i = 0; i < n; i++) {
        double code = pp_tensor_quantise(f, dout[i], s);
        codes[i] = qx ? dout[i] : code;
        if (!qx)
            pp_range_note(R, PP_SITE_ATTN_QUANT_DO, (i / dm->d) % dm->h, f, pp_te_r32(dout[i] * s), code);
    }
    if (!qx && !none)
        pp_attn_fp8_scale_note(R, PP_SITE_ATTN_BLOCK_SCALE_DO, 0, PP_SCALING_TENSOR, v->mx_rule, 0, 1.0, x);
    *scale = qx ? 1.0 : s, *amax = a;
    return qx ? 1.0 : x;
}

// A gradient's FP8 store (attention_te_bwd_run.c's store): amax of g, the scale given (> 0:
// amax_history_dq/dk/dv, TE's delayed recipe) or current, out = X·code; site exact: out = g
// (neither the scale nor the cast). Notes at site (head (i / d) % heads).
static void store_x(const pp_attn_variant *v, int site, double given, pp_format_id f, const double *g, int64_t n,
                    int64_t d, int64_t heads, pp_ranges *R, double *out, double *amax, double *scale)
{
    int ex = pp_site_exact(v->exact_sites, site);
    double a = 0;
    for (int64_t i = 0; i < n; i++)
        a = pp_amax_step(a, g[i]);
    double s = given > 0 ? given : pp_tensor_scale(f, a), x = pp_tensor_scale_inv(s);
    for (int64_t i = 0; i < n; i++) {
        double code = pp_tensor_quantise(f, g[i], s);
        pp_range_note(R, site, (i / d) % heads, f, pp_te_r32(g[i] * s), code);
        out[i] = ex ? g[i] : x * code;
    }
    *amax = a, *scale = s;
}

typedef struct bwd_x_ctx {
    const pp_attn_te_bwd_cfg_x *t;
    const pp_attn_dims *dm;
    const double *q8, *k8, *v8, *o8, *do8, *lse;
    double *D, *amax_dp, *dq, *dk, *dv;
    int64_t rows, cols, per;  // rows, key columns, and rows (columns) per task
    pp_ranges *Rw;            // one accumulator per task (NULL: no notes)
    char *oom;                // per task: 1 when its scratch could not be allocated
} bwd_x_ctx;

static pp_ranges *task_R(const bwd_x_ctx *c, int64_t task)
{
    return c->Rw ? &c->Rw[task] : NULL;
}

// Row r's place (pp_attn_te_bwd_pre_at's maps): its q row's element offset, its kv head's, its head.
static void row_place(const pp_attn_dims *dm, int64_t r, int64_t *row, int64_t *kv, int64_t *hh)
{
    int64_t i = r % dm->s_q, bh = r / dm->s_q, bi = bh / dm->h, g;
    *hh = bh % dm->h, g = *hh / (dm->h / dm->h_kv);
    *row = ((bi * dm->s_q + i) * dm->h + *hh) * dm->d, *kv = (bi * dm->s_kv * dm->h_kv + g) * dm->d;
}

static void pre_task(void *vctx, int64_t task)
{
    bwd_x_ctx *c = vctx;
    const pp_attn_dims *dm = c->dm;
    int64_t r1 = (task + 1) * c->per < c->rows ? (task + 1) * c->per : c->rows;
    for (int64_t r = task * c->per; r < r1; r++) {
        int64_t row, kv, hh;
        row_place(dm, r, &row, &kv, &hh);
        pp_attn_te_bwd_pre_row_x(c->t, c->q8 + row, c->o8 + row, c->do8 + row, c->k8 + kv, c->v8 + kv,
                                 dm->h_kv * dm->d, dm->s_kv, pp_attn_te_bwd_visible(dm, r % dm->s_q), dm->d, c->lse[r],
                                 hh, task_R(c, task), &c->D[r], &c->amax_dp[r]);
    }
}

// Tasks [0, row tasks): dq rows; the rest: dk, dv key columns.
static void grad_task(void *vctx, int64_t task)
{
    bwd_x_ctx *c = vctx;
    const pp_attn_dims *dm = c->dm;
    int64_t rt = (c->rows + c->per - 1) / c->per;
    if (task < rt) {
        double *s = malloc(sizeof(double) * (size_t)dm->d);
        if (!s) {
            c->oom[task] = 1;
            return;
        }
        int64_t r1 = (task + 1) * c->per < c->rows ? (task + 1) * c->per : c->rows;
        for (int64_t r = task * c->per; r < r1; r++) {
            int64_t row, kv, hh;
            row_place(dm, r, &row, &kv, &hh);
            pp_attn_te_bwd_dq_row_x(c->t, c->q8 + row, c->do8 + row, c->k8 + kv, c->v8 + kv, dm->h_kv * dm->d,
                                    pp_attn_te_bwd_visible(dm, r % dm->s_q), dm->d, c->lse[r], c->D[r], hh,
                                    task_R(c, task), s, c->dq + row);
        }
        free(s);
        return;
    }
    int64_t u = task - rt, j1 = (u + 1) * c->per < c->cols ? (u + 1) * c->per : c->cols;
    for (int64_t cidx = u * c->per; cidx < j1; cidx++) {  // pp_attn_te_bwd_dkv_at's maps
        int64_t j = cidx % dm->s_kv, bg = cidx / dm->s_kv, bi = bg / dm->h_kv, g = bg % dm->h_kv;
        int64_t group = dm->h / dm->h_kv, h0 = g * group;
        int64_t i0 = dm->causal ? j - (dm->s_kv - dm->s_q) : 0;
        i0 = i0 < 0 ? 0 : i0;
        int64_t kv = ((bi * dm->s_kv + j) * dm->h_kv + g) * dm->d, q0 = (bi * dm->s_q * dm->h + h0) * dm->d;
        int64_t r0 = (bi * dm->h + h0) * dm->s_q;
        pp_attn_te_bwd_dkv_col_x(c->t, c->q8 + q0, c->do8 + q0, dm->h * dm->d, c->lse + r0, c->D + r0, dm->s_q, i0,
                                 group, c->k8 + kv, c->v8 + kv, dm->d, h0, g, task_R(c, task), c->dk + kv,
                                 c->dv + kv);
    }
}

// The passes on the pool: per-task accumulators when R is set (RANGE_TASKS at most per pass).
static int run_pass(void (*fn)(void *, int64_t), bwd_x_ctx *c, int64_t ntasks, int threads, pp_ranges *R)
{
    c->Rw = pp_ranges_workers(R, (int)ntasks);
    c->oom = calloc((size_t)(ntasks > 0 ? ntasks : 1), 1);
    int failed = !c->oom || (R && !c->Rw);
    if (!failed)
        pp_parallel_for(fn, c, ntasks, threads, NULL);
    for (int64_t i = 0; !failed && i < ntasks; i++)
        failed |= c->oom[i];
    pp_ranges_workers_done(failed ? NULL : R, c->Rw, (int)ntasks);
    free(c->oom);
    c->Rw = NULL, c->oom = NULL;
    return failed;
}

int pp_attn_te_bwd_run_x(const pp_attn_variant *v, const pp_attn_dims *dm, const double *q, const double *k,
                         const double *vv, const double *dout, double *out, double *lse, double *dq, double *dk,
                         double *dv, int threads, pp_attn_te_bwd_amax *amax, pp_ranges *R, char *errbuf,
                         size_t errlen)
{
    static const char oom_msg[] = "attention: out of memory for fp8 = \"te\"'s backward with exact sites";
    if (v->fp8 != PP_ATTN_FP8_TE)
        return fail(errbuf, errlen, 2, "attention: pp_attn_te_bwd_run_x runs fp8 = \"te\" only");
    if (pp_attn_check(v, dm, 1, 0, q, k, vv, dout, out, lse, dq, dk, dv, errbuf, errlen))
        return 2;
    int64_t nq = dm->b * dm->s_q * dm->h * dm->d, nkv = dm->b * dm->s_kv * dm->h_kv * dm->d,
            rows = dm->b * dm->h * dm->s_q, cols = dm->b * dm->h_kv * dm->s_kv;
    double *e = malloc(sizeof(double) * (size_t)(3 * nq + 2 * nkv + 1)), *g = malloc(sizeof(double) * (size_t)(nq + 2 * nkv + 1)),
           *fl = malloc(sizeof(double) * (size_t)(2 * rows + 1));
    if (!e || !g || !fl) {
        free(e), free(g), free(fl);
        return fail(errbuf, errlen, 3, oom_msg);
    }
    pp_attn_te_bwd_amax am = {.amax_do = 0};
    pp_attn_te_fwd_keep keep = {.e = e, .o8 = e + nq + 2 * nkv};
    int rc = pp_attn_te_fwd_x(v, dm, q, k, vv, out, lse, threads, &am.fwd, R, &keep, errbuf, errlen);
    if (rc || pp_attn_empty_result(dm, 1, out, lse, dq, dk, dv)) {
        free(e), free(g), free(fl);
        if (!rc && amax)
            *amax = am;
        return rc;
    }
    pp_site_mask m = v->exact_sites;
    double *q8 = e, *k8 = e + nq, *v8 = k8 + nkv, *o8 = keep.o8, *do8 = o8 + nq;
    double xdo = dout_x(v, dm, nq, dout, do8, &am.scale_do, &am.amax_do, R);
    int sx = pp_site_exact(m, PP_SITE_ATTN_SOFTMAX_SCALE);
    pp_attn_te_bwd_cfg_x t = {
        .c = {.f = keep.t.c, .alpha = keep.alpha32, .scale_s = (float)keep.scale_s, .block_n = 128, .dq = v->te_dq,
              .ds_amax = v->te_ds_amax, .emin_g = pp_format_get(pp_attn_te_grad_format(v)).emin},
        .f = keep.t,
        .x = m,
        .l2e = sx ? 1.4426950408889634 : (double)1.44269502f,
        .alpha = sx ? keep.alpha64 : (double)keep.alpha32,
        .scale_s = (double)(float)keep.scale_s,  // the kernel's float
        .xs = pp_site_exact(m, PP_SITE_ATTN_BLOCK_SCALE_P) ? 1.0 / keep.scale_s : pp_tensor_scale_inv(keep.scale_s),
        .xq = keep.X[0],
        .xk = keep.X[1],
        .xv = keep.X[2],
        .xo = keep.xo,
        .xdo = xdo};
    // lse as the backward reads it: the forward's binary32 lse (RN_32 of a binary64 one: the
    // kernel's float), or with site lse exact its binary64 value
    for (int64_t r = 0; r < rows; r++)
        fl[r] = pp_site_exact(m, PP_SITE_ATTN_LSE) ? lse[r] : pp_te_r32(lse[r]);
    double *D = fl + rows, *adp = g;  // pass 1's amaxes in g's space, before the gradients
    int64_t per = R ? (rows + RANGE_TASKS - 1) / RANGE_TASKS : PER_TASK;
    bwd_x_ctx c = {.t = &t, .dm = dm, .q8 = q8, .k8 = k8, .v8 = v8, .o8 = o8, .do8 = do8, .lse = fl, .D = D,
                   .amax_dp = adp, .rows = rows, .cols = cols, .per = per};
    int failed = run_pass(pre_task, &c, (rows + per - 1) / per, threads, R);
    if (!failed) {
        double a = 0;
        for (int64_t r = 0; r < rows; r++)
            a = pp_amax_step(a, adp[r]);
        int dsx = pp_site_exact(m, PP_SITE_ATTN_BLOCK_SCALE_DS);
        am.amax_dp = a;
        am.scale_dp = v->te_scale_dp > 0 ? v->te_scale_dp : scale_of(PP_FMT_E4M3, a, dsx);
        t.scale_dp = dsx ? am.scale_dp : (double)(float)am.scale_dp;
        t.xdp = dsx ? 1.0 / am.scale_dp : pp_tensor_scale_inv(am.scale_dp);
        t.c.scale_dp = (float)am.scale_dp, t.c.xdp = (float)t.xdp;
        pp_attn_fp8_scale_note(R, PP_SITE_ATTN_BLOCK_SCALE_DS, 0, PP_SCALING_TENSOR, v->mx_rule, 0, 1.0, t.xdp);
        c.dq = g, c.dk = g + nq, c.dv = g + nq + nkv;
        int64_t pc = R ? (cols + RANGE_TASKS - 1) / RANGE_TASKS : PER_TASK;
        // one task size for rows and columns (the row tasks first): with notes both at most RANGE_TASKS
        c.per = per > pc ? per : pc;
        failed = run_pass(grad_task, &c, (rows + c.per - 1) / c.per + (cols + c.per - 1) / c.per, threads, R);
    }
    if (!failed) {
        pp_format_id f = pp_attn_te_grad_format(v);
        store_x(v, PP_SITE_ATTN_DQ, v->te_scale_dq, f, g, nq, dm->d, dm->h, R, dq, &am.amax_dq, &am.scale_dq);
        store_x(v, PP_SITE_ATTN_DK, v->te_scale_dk, f, g + nq, nkv, dm->d, dm->h_kv, R, dk, &am.amax_dk,
                &am.scale_dk);
        store_x(v, PP_SITE_ATTN_DV, v->te_scale_dv, f, g + nq + nkv, nkv, dm->d, dm->h_kv, R, dv, &am.amax_dv,
                &am.scale_dv);
        if (amax)
            *amax = am;
    }
    free(e), free(g), free(fl);
    return failed ? fail(errbuf, errlen, 3, oom_msg) : 0;
}

int pp_attn_te_bwd_ranges_x(const pp_attn_variant *v, const pp_attn_dims *dm, const double *q, const double *k,
                            const double *vv, const double *dout, int threads, pp_ranges *R, char *errbuf,
                            size_t errlen)
{
    if (!R)
        return 0;
    int64_t nq = dm->b * dm->s_q * dm->h * dm->d, nkv = dm->b * dm->s_kv * dm->h_kv * dm->d,
            rows = dm->b * dm->h * dm->s_q;
    double *buf = malloc(sizeof(double) * (size_t)(2 * nq + 2 * nkv + rows + 1));
    if (!buf)
        return fail(errbuf, errlen, 3, "attention: out of memory for fp8 = \"te\"'s range notes");
    int rc = pp_attn_te_bwd_run_x(v, dm, q, k, vv, dout, buf, buf + nq, buf + nq + rows, buf + 2 * nq + rows,
                                  buf + 2 * nq + nkv + rows, threads, NULL, R, errbuf, errlen);
    free(buf);
    return rc;
}
