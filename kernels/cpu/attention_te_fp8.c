// cpu/attention_te_fp8.c — the CPU device of fp8 = "te" (cpu/attention_te_fp8.h): one task per 16
// rows, each row computed alone by pp_attn_te_row_at, so any thread count gives the same bits.
#include "attention_te_fp8.h"

#include <stdio.h>
#include <stdlib.h>

#include "attention_te_exact.h"
#include "parallel.h"

enum { ROWS_PER_TASK = 16 };

typedef struct te_ctx {
    const pp_attn_te_cfg *c;
    const pp_attn_dims *dm;
    const float *q8, *k8, *v8;
    float *o, *lse, *amax_s;
    int64_t rows;
    char *oom;  // per task: 1 when its scratch could not be allocated
} te_ctx;

static void te_task(void *vctx, int64_t t)
{
    te_ctx *c = vctx;
    float *x = malloc(sizeof(float) * (size_t)c->dm->s_kv);  // the row's scores, then its P codes
    if (!x) {
        c->oom[t] = 1;
        return;
    }
    int64_t r1 = (t + 1) * ROWS_PER_TASK < c->rows ? (t + 1) * ROWS_PER_TASK : c->rows;
    for (int64_t r = t * ROWS_PER_TASK; r < r1; r++)
        pp_attn_te_row_at(c->c, c->dm, c->q8, c->k8, c->v8, r, x, c->o, c->lse, c->amax_s);
    free(x);
}

static int cpu_rows(void *ctx, const pp_attn_te_cfg *c, const pp_attn_dims *dm, const float *q8, const float *k8,
                    const float *v8, float *o, float *lse, float *amax_s, char *errbuf, size_t errlen)
{
    int64_t rows = dm->b * dm->h * dm->s_q, ntasks = (rows + ROWS_PER_TASK - 1) / ROWS_PER_TASK;
    char *oom = calloc((size_t)ntasks, 1);
    te_ctx t = {.c = c, .dm = dm, .q8 = q8, .k8 = k8, .v8 = v8, .o = o, .lse = lse, .amax_s = amax_s, .rows = rows,
                .oom = oom};
    int failed = !oom;
    if (oom)
        pp_parallel_for(te_task, &t, ntasks, *(int *)ctx, NULL);
    for (int64_t i = 0; oom && i < ntasks; i++)
        failed |= oom[i];
    free(oom);
    if (failed && errbuf && errlen)
        snprintf(errbuf, errlen, "attention: out of memory for fp8 = \"te\"");
    return failed ? 3 : 0;
}

pp_attn_te_device pp_attn_te_cpu_device(int *threads)
{
    pp_attn_te_device d = {.rows = cpu_rows, .ctx = threads};
    return d;
}

int pp_attn_te_fp8_cpu(const pp_attn_variant *v, const pp_attn_dims *dm, const double *q, const double *k,
                       const double *vv, double *out, double *lse, int threads, pp_attn_te_amax *amax, pp_error *err)
{
    char msg[sizeof err->msg] = "";
    pp_attn_te_device dev = pp_attn_te_cpu_device(&threads);
    int rc = v->exact_sites  // explain's exact sites: the binary64 row (kernels/attention_te_fp8_x.h)
                 ? pp_attn_te_run_x(v, dm, q, k, vv, out, lse, threads, amax, msg, sizeof msg)
                 : pp_attn_te_run(&dev, v, dm, q, k, vv, out, lse, amax, msg, sizeof msg);
    if (rc)
        return pp_fail(err, rc == 2 ? PP_ERR_INPUT : PP_ERR_RUNTIME, "%s", msg);
    return PP_OK;
}
