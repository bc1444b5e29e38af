// attention_te_bwd_run.c — fp8 = "te"'s backward host steps around the device's passes
// (attention_te_bwd_run.h).
#include "attention_te_bwd_run.h"

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

pp_format_id pp_attn_te_grad_format(const pp_attn_variant *v)
{
    return v->te_grad_e4m3 ? PP_FMT_E4M3 : PP_FMT_E5M2;
}

double pp_attn_te_quantise_dout(const pp_attn_variant *v, int64_t n, const double *dout, double *codes, double *scale,
                                double *amax)
{
    pp_format_id f = pp_attn_te_grad_format(v);
    double a = 0;
    for (int64_t i = 0; i < n; i++)
        a = pp_amax_step(a, dout[i]);
    // TE quantises dO per tensor with its own scale (the graph's descale_dO): from amax_history_do
    // when given (TE's delayed recipe), else current; scaling none (no history): a cast
    double s = v->te_scale_do > 0                             ? v->te_scale_do
               : pp_attn_fp8_scheme(v) == PP_SCALING_NONE ? 1.0
                                                          : pp_tensor_scale(f, a);
    for (int64_t i = 0; i < n; i++)
        codes[i] = pp_tensor_quantise(f, dout[i], s);
    if (scale)
        *scale = s;
    if (amax)
        *amax = a;
    return pp_tensor_scale_inv(s);
}

// A gradient's FP8 store: amax over n binary32 values g, scale given (> 0: TE's delayed recipe
// from the tensor's amax history) or current (given 0), out = X·code; notes at site (head of
// element i: (i / d) % heads). The amax is this run's either way (what TE folds into the history).
static void store(pp_format_id f, double given, const float *g, int64_t n, int64_t d, int64_t heads, int site,
                  pp_ranges *R, double *out, double *amax, double *scale)
{
    double a = 0;
    for (int64_t i = 0; i < n; i++)
        a = pp_amax_step(a, (double)g[i]);
    double s = given > 0 ? given : pp_tensor_scale(f, a), x = pp_tensor_scale_inv(s);
    for (int64_t i = 0; i < n; i++) {
        double code = pp_tensor_quantise(f, (double)g[i], s);
        pp_range_note(R, site, (i / d) % heads, f, pp_round(PP_FMT_FP32, (double)g[i] * s, PP_RND_NE, 0), code);
        out[i] = x * code;
    }
    *amax = a, *scale = s;
}

int pp_attn_te_bwd_run(const pp_attn_te_device *fdev, const pp_attn_te_bwd_device *bdev, const pp_attn_variant *v,
                       const pp_attn_dims *dm, const double *q, const double *k, const double *vv, const double *dout,
                       double *out, double *lse, double *dq, double *dk, double *dv, pp_attn_te_bwd_amax *amax,
                       pp_ranges *R, char *errbuf, size_t errlen)
{
    if (v->fp8 != PP_ATTN_FP8_TE)
        return fail(errbuf, errlen, 2, "attention: pp_attn_te_bwd_run runs fp8 = \"te\" only");
    if (pp_attn_check(v, dm, 1, 0, q, k, vv, dout, out, lse, dq, dk, dv, errbuf, errlen))
        return 2;
    pp_attn_te_bwd_amax am = {.amax_do = 0};
    int rc = pp_attn_te_run(fdev, v, dm, q, k, vv, out, lse, &am.fwd, errbuf, errlen);
    if (rc)
        return rc;
    if (amax)
        *amax = am;
    if (pp_attn_empty_result(dm, 1, out, lse, dq, dk, dv))
        return 0;
    pp_attn_scalars sc;
    if (pp_attn_scalars_make(v, dm->d, &sc))
        return fail(errbuf, errlen, 2, "attention: bad softmax_scale or head dimension");
    int64_t nq = dm->b * dm->s_q * dm->h * dm->d, nkv = dm->b * dm->s_kv * dm->h_kv * dm->d,
            rows = dm->b * dm->h * dm->s_q, big = nq > nkv ? nq : nkv;
    double *de = malloc(sizeof(double) * (size_t)(2 * big));
    float *e = malloc(sizeof(float) * (size_t)(3 * nq + 2 * nkv)), *g = malloc(sizeof(float) * (size_t)(nq + 2 * nkv)),
          *fl = malloc(sizeof(float) * (size_t)(3 * rows)), *t = malloc(sizeof(float) * (size_t)dm->d);
    if (!de || !e || !g || !fl || !t) {
        free(de), free(e), free(g), free(fl), free(t);
        return fail(errbuf, errlen, 3, "attention: out of memory for fp8 = \"te\"'s backward");
    }
    // q, k, v as the forward quantised them; O8 = out / X_o (exact: out = X_o·code); dO8
    const int64_t n[3] = {nq, nkv, nkv};
    const double *x[3] = {q, k, vv};
    double X[3];
    float *q8 = e, *k8 = e + nq, *v8 = k8 + nkv, *o8 = v8 + nkv, *do8 = o8 + nq;
    float *ep[3] = {q8, k8, v8};
    for (int s = 0; s < 3; s++) {
        X[s] = pp_attn_fp8_quantise_tensor(v, dm, s, x[s], 0, de, de + n[s]);
        for (int64_t i = 0; i < n[s]; i++)
            ep[s][i] = (float)de[i];
    }
    double xo = pp_tensor_scale_inv(am.fwd.scale_o);
    for (int64_t i = 0; i < nq; i++)
        o8[i] = (float)(out[i] / xo);
    double xdo = pp_attn_te_quantise_dout(v, nq, dout, de, &am.scale_do, &am.amax_do);
    for (int64_t i = 0; i < nq; i++)
        do8[i] = (float)de[i];
    free(de);
    pp_attn_te_bwd_cfg c = {.f = pp_attn_te_cfg_make(v, sc.alpha32, X[0], X[1], X[2]),
                            .alpha = sc.alpha32,
                            .scale_s = (float)am.fwd.scale_s,
                            .xs = (float)pp_tensor_scale_inv(am.fwd.scale_s),
                            .xq = (float)X[0],
                            .xk = (float)X[1],
                            .xv = (float)X[2],
                            .xo = (float)xo,
                            .xdo = (float)xdo,
                            .block_n = 128,
                            .dq = v->te_dq,
                            .ds_amax = v->te_ds_amax,
                            .emin_g = pp_format_get(pp_attn_te_grad_format(v)).emin};
    float *lse32 = fl, *D = fl + rows, *adp = fl + 2 * rows;
    for (int64_t r = 0; r < rows; r++)
        lse32[r] = (float)lse[r];
    rc = bdev->pre(bdev->ctx, &c, dm, q8, k8, v8, o8, do8, lse32, D, adp, errbuf, errlen);
    if (!rc) {
        // dP's (te_ds_amax: dS's) amax over the run (a pass of its own, as the reference), scale_dP
        // from it or from the history
        double a = 0;
        for (int64_t r = 0; r < rows; r++)
            a = pp_amax_step(a, (double)adp[r]);
        am.amax_dp = a;
        am.scale_dp = v->te_scale_dp > 0 ? v->te_scale_dp : pp_tensor_scale(PP_FMT_E4M3, a);
        c.scale_dp = (float)am.scale_dp;
        c.xdp = (float)pp_tensor_scale_inv(am.scale_dp);
        rc = bdev->grads(bdev->ctx, &c, dm, q8, k8, v8, do8, lse32, D, g, g + nq, g + nq + nkv, errbuf, errlen);
    }
    if (!rc && R) {
        // the range notes of D, dP and dS: the same bodies again on the host, one row at a time,
        // into scratch (D and dq are the device's already)
        float *scratch = malloc(sizeof(float) * (size_t)(nq + 2 * rows));
        if (!scratch)
            rc = fail(errbuf, errlen, 3, "attention: out of memory for fp8 = \"te\"'s range notes");
        for (int64_t r = 0; scratch && r < rows; r++)
            pp_attn_te_bwd_pre_at(&c, dm, q8, k8, v8, o8, do8, lse32, r, R, scratch + nq, scratch + nq + rows);
        for (int64_t r = 0; scratch && r < rows; r++)
            pp_attn_te_bwd_dq_at(&c, dm, q8, k8, v8, do8, lse32, D, r, R, t, scratch);
        free(scratch);
    }
    if (!rc) {
        pp_format_id f = pp_attn_te_grad_format(v);
        store(f, v->te_scale_dq, g, nq, dm->d, dm->h, PP_SITE_ATTN_DQ, R, dq, &am.amax_dq, &am.scale_dq);
        store(f, v->te_scale_dk, g + nq, nkv, dm->d, dm->h_kv, PP_SITE_ATTN_DK, R, dk, &am.amax_dk, &am.scale_dk);
        store(f, v->te_scale_dv, g + nq + nkv, nkv, dm->d, dm->h_kv, PP_SITE_ATTN_DV, R, dv, &am.amax_dv,
              &am.scale_dv);
        if (amax)
            *amax = am;
    }
    free(e), free(g), free(fl), free(t);
    return rc;
}
