// attention_fp8_ranges.c — range notes of FP8 attention's host quantisation
// (attention_fp8_ranges.h).
#include "ops/attention_fp8_ranges.h"

#include <math.h>
#include <stdlib.h>

#include "attention_fp8.h"

// One tensor (t: 0 q, 1 k, 2 v): its elements, then its scales.
static void tensor_notes(const pp_attn_variant *v, const pp_attn_dims *dm, int t, const double *x, const double *e,
                         const double *bs, double X, pp_ranges *R)
{
    static const int quant[3] = {PP_SITE_ATTN_QUANT_Q, PP_SITE_ATTN_QUANT_K, PP_SITE_ATTN_QUANT_V};
    static const int scale[3] = {PP_SITE_ATTN_BLOCK_SCALE_Q, PP_SITE_ATTN_BLOCK_SCALE_K, PP_SITE_ATTN_BLOCK_SCALE_V};
    pp_scaling sch = pp_attn_fp8_scheme(v);
    pp_format_id ef = pp_attn_fp8_elem(sch);
    int blk = pp_attn_fp8_block(sch);
    int64_t H = t ? dm->h_kv : dm->h, len, stride, lines = pp_attn_fp8_lines(dm, t, &len, &stride);
    // per tensor: the element before its cast is RN_32(x·s) with TE's scale s (kernels/scaling.h)
    double amax = 0;
    for (int64_t i = 0; i < lines * len; i++)
        amax = pp_amax_step(amax, x[i]);
    double s = sch == PP_SCALING_TENSOR ? pp_tensor_scale(PP_FMT_E4M3, amax)
             : sch == PP_SCALING_DELAYED ? v->fp8_delayed_s[t] : 1.0;
    if (!blk)
        pp_attn_fp8_scale_note(R, scale[t], 0, sch, v->mx_rule, 0, 1.0, X);
    for (int64_t line = 0; line < lines; line++) {
        int64_t base = pp_attn_fp8_line_base(dm, t, line), head = (base / dm->d) % H;
        for (int64_t l0 = 0; l0 < len; l0 += blk ? blk : len) {
            int64_t l1 = blk && l0 + blk < len ? l0 + blk : len;
            double bamax = 0, xb = bs[base + l0 * stride], div = sch == PP_SCALING_NVFP4 ? xb * X : xb;
            for (int64_t l = l0; l < l1; l++) {
                int64_t i = base + l * stride;
                bamax = pp_amax_step(bamax, x[i]);
                double pre = blk ? (div != 0 ? x[i] / div : 0.0) : x[i] * s;
                pp_range_note(R, quant[t], head, ef, pre, e[i]);
            }
            if (blk)
                pp_attn_fp8_scale_note(R, scale[t], head, sch, v->mx_rule, bamax, X, xb);
        }
    }
}

int pp_attn_fp8_range_notes(const pp_attn_variant *v, const pp_attn_dims *dm, const double *q, const double *k,
                            const double *vv, pp_ranges *R)
{
    if (!R || v->fp8 == PP_ATTN_FP8_NONE)
        return 0;
    static const int quant[3] = {PP_SITE_ATTN_QUANT_Q, PP_SITE_ATTN_QUANT_K, PP_SITE_ATTN_QUANT_V};
    const double *x[3] = {q, k, vv};
    for (int t = 0; t < 3; t++) {
        if (pp_site_exact(v->exact_sites, quant[t]))
            continue;  // explain's exact quant site: nothing rounds there
        int64_t n = (t ? dm->s_kv * dm->h_kv : dm->s_q * dm->h) * dm->b * dm->d;
        double *e = malloc((size_t)(n ? n : 1) * sizeof *e), *bs = malloc((size_t)(n ? n : 1) * sizeof *bs);
        if (!e || !bs) {
            free(e);
            free(bs);
            return 3;
        }
        double X = pp_attn_fp8_quantise_tensor(v, dm, t, x[t], 0, e, bs);
        tensor_notes(v, dm, t, x[t], e, bs, X, R);
        free(e);
        free(bs);
    }
    return 0;
}
