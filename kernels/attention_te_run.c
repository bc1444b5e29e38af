// attention_te_run.c — fp8 = "te"'s host steps around the device's rows (attention_te_run.h).
#include "attention_te_run.h"

#include <stdio.h>
#include <stdlib.h>

#include "attention_check.h"
#include "attention_fp8.h"

static int fail(char *eb, size_t el, int rc, const char *msg)
{
    if (eb && el)
        snprintf(eb, el, "%s", msg);
    return rc;
}

int pp_attn_te_begin(const pp_attn_variant *v, const pp_attn_dims *dm, const double *q, const double *k,
                     const double *vv, double *out, double *lse, pp_attn_scalars *sc, pp_attn_te_amax *amax,
                     char *errbuf, size_t errlen)
{
    if (pp_attn_check(v, dm, 0, 0, q, k, vv, NULL, out, lse, NULL, NULL, NULL, errbuf, errlen))
        return 2;
    if (pp_attn_scalars_make(v, dm->d, sc))  // pp_attn_check refuses these first
        return fail(errbuf, errlen, 2, "attention: bad softmax_scale or head dimension");
    if (amax)
        amax->amax_s = amax->amax_o = 0, amax->scale_s = amax->scale_o = 1;
    return pp_attn_empty_result(dm, 0, out, lse, NULL, NULL, NULL) ? 1 : 0;
}

int pp_attn_te_run(const pp_attn_te_device *dev, const pp_attn_variant *v, const pp_attn_dims *dm, const double *q,
                   const double *k, const double *vv, double *out, double *lse, pp_attn_te_amax *amax, char *errbuf,
                   size_t errlen)
{
    if (v->fp8 != PP_ATTN_FP8_TE)
        return fail(errbuf, errlen, 2, "attention: pp_attn_te_run runs fp8 = \"te\" only");
    if (v->exact_sites)  // its devices run binary32 rows: explain's exact sites are attention_te_exact.c's
        return fail(errbuf, errlen, 2, "attention: fp8 = \"te\" with exact sites runs on the CPU (pp_attn_te_run_x)");
    pp_attn_scalars sc;
    int begun = pp_attn_te_begin(v, dm, q, k, vv, out, lse, &sc, amax, errbuf, errlen);
    if (begun)
        return begun == 1 ? 0 : begun;
    int64_t nq = dm->b * dm->s_q * dm->h * dm->d, nkv = dm->b * dm->s_kv * dm->h_kv * dm->d,
            rows = dm->b * dm->h * dm->s_q;
    const int64_t n[3] = {nq, nkv, nkv};
    const double *x[3] = {q, k, vv};
    double *de = malloc(sizeof(double) * (size_t)(2 * (nq > nkv ? nq : nkv)));
    float *e = malloc(sizeof(float) * (size_t)(nq + 2 * nkv)), *o = malloc(sizeof(float) * (size_t)nq),
          *fl = malloc(sizeof(float) * (size_t)(2 * rows));
    if (!de || !e || !o || !fl) {
        free(de), free(e), free(o), free(fl);
        return fail(errbuf, errlen, 3, "attention: out of memory for fp8 = \"te\"");
    }
    // q, k, v as fp8 = fa3 quantises them (per tensor: every device reads the same elements)
    double X[3];
    const float *ep[3];
    float *w = e;
    for (int t = 0; t < 3; t++) {
        X[t] = pp_attn_fp8_quantise_tensor(v, dm, t, x[t], 0, de, de + n[t]);
        for (int64_t i = 0; i < n[t]; i++)
            w[i] = (float)de[i];
        ep[t] = w;
        w += n[t];
    }
    free(de);
    pp_attn_te_cfg c = pp_attn_te_cfg_make(v, sc.alpha32, X[0], X[1], X[2]);
    int rc = dev->rows(dev->ctx, &c, dm, ep[0], ep[1], ep[2], o, fl, fl + rows, errbuf, errlen);
    if (!rc) {
        // O's amax over the run, its scale (current, or TE's recipe), the e4m3 store
        double amax_o = 0, amax_s = 0;
        for (int64_t i = 0; i < nq; i++)
            amax_o = pp_amax_step(amax_o, (double)o[i]);
        for (int64_t r = 0; r < rows; r++)
            amax_s = pp_amax_step(amax_s, (double)fl[rows + r]);
        double so = v->te_scale_o > 0 ? v->te_scale_o : pp_tensor_scale(PP_FMT_E4M3, amax_o);
        double xo = pp_tensor_scale_inv(so);
        for (int64_t i = 0; i < nq; i++)
            out[i] = xo * pp_tensor_quantise(PP_FMT_E4M3, (double)o[i], so);
        for (int64_t r = 0; r < rows; r++)
            lse[r] = (double)fl[r];
        if (amax) {
            amax->amax_s = amax_s, amax->amax_o = amax_o, amax->scale_o = so;
            amax->scale_s = v->te_scale_s > 0 ? v->te_scale_s : pp_tensor_scale(PP_FMT_E4M3, 1.0);
        }
    }
    free(e), free(o), free(fl);
    return rc;
}
