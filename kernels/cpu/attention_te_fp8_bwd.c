// cpu/attention_te_fp8_bwd.c — the CPU device of fp8 = "te"'s backward (cpu/attention_te_fp8_bwd.h):
// one task per 16 rows or key columns, each computed alone by the bodies of attention_te_fp8_bwd.h,
// so any thread count gives the same bits.
#include "attention_te_fp8_bwd.h"

#include <stdio.h>
#include <stdlib.h>

#include "attention_te_bwd_exact.h"
#include "cpu/attention_te_fp8.h"
#include "parallel.h"

enum { PER_TASK = 16 };

typedef struct bwd_ctx {
    const pp_attn_te_bwd_cfg *c;
    const pp_attn_dims *dm;
    const float *q8, *k8, *v8, *o8, *do8, *lse;
    const float *Dr;  // the grads pass reads D
    float *D, *amax_dp, *dq, *dk, *dv;
    int64_t rows, cols;
    char *oom;  // per task: 1 when its scratch could not be allocated
} bwd_ctx;

static void pre_task(void *vctx, int64_t t)
{
    bwd_ctx *c = vctx;
    int64_t r1 = (t + 1) * PER_TASK < c->rows ? (t + 1) * PER_TASK : c->rows;
    for (int64_t r = t * PER_TASK; r < r1; r++)
        pp_attn_te_bwd_pre_at(c->c, c->dm, c->q8, c->k8, c->v8, c->o8, c->do8, c->lse, r, NULL, c->D, c->amax_dp);
}

// Tasks [0, row tasks): dq rows; the rest: dk, dv columns.
static void grad_task(void *vctx, int64_t t)
{
    bwd_ctx *c = vctx;
    int64_t rt = (c->rows + PER_TASK - 1) / PER_TASK;
    if (t < rt) {
        float *s = malloc(sizeof(float) * (size_t)c->dm->d);
        if (!s) {
            c->oom[t] = 1;
            return;
        }
        int64_t r1 = (t + 1) * PER_TASK < c->rows ? (t + 1) * PER_TASK : c->rows;
        for (int64_t r = t * PER_TASK; r < r1; r++)
            pp_attn_te_bwd_dq_at(c->c, c->dm, c->q8, c->k8, c->v8, c->do8, c->lse, c->Dr, r, NULL, s, c->dq);
        free(s);
        return;
    }
    int64_t u = t - rt, j1 = (u + 1) * PER_TASK < c->cols ? (u + 1) * PER_TASK : c->cols;
    for (int64_t j = u * PER_TASK; j < j1; j++)
        pp_attn_te_bwd_dkv_at(c->c, c->dm, c->q8, c->k8, c->v8, c->do8, c->lse, c->Dr, j, c->dk, c->dv);
}

static int cpu_pre(void *ctx, const pp_attn_te_bwd_cfg *c, const pp_attn_dims *dm, const float *q8, const float *k8,
                   const float *v8, const float *o8, const float *do8, const float *lse, float *D, float *amax_dp,
                   char *errbuf, size_t errlen)
{
    (void)errbuf, (void)errlen;
    int64_t rows = dm->b * dm->h * dm->s_q;
    bwd_ctx t = {.c = c, .dm = dm, .q8 = q8, .k8 = k8, .v8 = v8, .o8 = o8, .do8 = do8, .lse = lse, .D = D,
                 .amax_dp = amax_dp, .rows = rows};
    pp_parallel_for(pre_task, &t, (rows + PER_TASK - 1) / PER_TASK, *(int *)ctx, NULL);
    return 0;
}

static int cpu_grads(void *ctx, const pp_attn_te_bwd_cfg *c, const pp_attn_dims *dm, const float *q8, const float *k8,
                     const float *v8, const float *do8, const float *lse, const float *D, float *dq, float *dk,
                     float *dv, char *errbuf, size_t errlen)
{
    int64_t rows = dm->b * dm->h * dm->s_q, cols = dm->b * dm->h_kv * dm->s_kv;
    int64_t ntasks = (rows + PER_TASK - 1) / PER_TASK + (cols + PER_TASK - 1) / PER_TASK;
    char *oom = calloc((size_t)(ntasks ? ntasks : 1), 1);
    bwd_ctx t = {.c = c, .dm = dm, .q8 = q8, .k8 = k8, .v8 = v8, .do8 = do8, .lse = lse, .Dr = D,
                 .dq = dq, .dk = dk, .dv = dv, .rows = rows, .cols = cols, .oom = oom};
    int failed = !oom;
    if (oom)
        pp_parallel_for(grad_task, &t, ntasks, *(int *)ctx, NULL);
    for (int64_t i = 0; oom && i < ntasks; i++)
        failed |= oom[i];
    free(oom);
    if (failed && errbuf && errlen)
        snprintf(errbuf, errlen, "attention: out of memory for fp8 = \"te\"'s backward");
    return failed ? 3 : 0;
}

pp_attn_te_bwd_device pp_attn_te_bwd_cpu_device(int *threads)
{
    pp_attn_te_bwd_device d = {.pre = cpu_pre, .grads = cpu_grads, .ctx = threads};
    return d;
}

int pp_attn_te_fp8_bwd_cpu(const pp_attn_variant *v, const pp_attn_dims *dm, const double *q, const double *k,
                           const double *vv, const double *dout, double *out, double *lse, double *dq, double *dk,
                           double *dv, int threads, pp_attn_te_bwd_amax *amax, pp_ranges *R, pp_error *err)
{
    char msg[sizeof err->msg] = "";
    pp_attn_te_device fdev = pp_attn_te_cpu_device(&threads);
    pp_attn_te_bwd_device bdev = pp_attn_te_bwd_cpu_device(&threads);
    int rc = v->exact_sites  // explain's exact sites: the binary64 bodies (kernels/attention_te_fp8_bwd_x.h)
                 ? pp_attn_te_bwd_run_x(v, dm, q, k, vv, dout, out, lse, dq, dk, dv, threads, amax, R, msg, sizeof msg)
                 : pp_attn_te_bwd_run(&fdev, &bdev, v, dm, q, k, vv, dout, out, lse, dq, dk, dv, amax, R, msg,
                                      sizeof msg);
    if (rc)
        return pp_fail(err, rc == 2 ? PP_ERR_INPUT : PP_ERR_RUNTIME, "%s", msg);
    return PP_OK;
}
