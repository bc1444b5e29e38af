// gemm_ref_quantised.c — the exact product of a scaled variant's dequantised inputs
// (gemm_ref_quantised.h): quantise as the variant does, dequantise by the block scales, the
// certified reference, then the per-tensor scales.
#include "ops/gemm_ref_quantised.h"

#include <math.h>
#include <stdlib.h>

#include "cpu/gemm.h"

// x'[i] = xs[line, block]·q[i] for every element of one operand (exact: gemm_ref_quantised.h).
static void dequantise(const pp_gemm_scaled_operand *o, const double *q, const double *xs, double *x)
{
    for (int64_t t = 0; t < o->batch * o->lines; t++) {
        int64_t base = pp_gemm_scaled_line_base(o, t);
        for (int64_t l = 0; l < o->k; l++)
            x[base + l * o->stride] = xs[t * o->nblk + l / o->bs] * q[base + l * o->stride];
    }
}

int pp_gemm_ref_quantised(const pp_gemm_variant *v, const pp_delayed_recipe *r, const pp_gemm_ref_opts *o,
                          int64_t batch, int64_t m, int64_t n, int64_t k, const double *a, const double *b, double *c,
                          double *c_err, int threads, pp_error *err)
{
    if (v->scaling == PP_SCALING_NONE)
        return pp_fail(err, PP_ERR_INPUT, "gemm: the quantised reference needs a scaling");
    pp_gemm_scaled_q q;
    int rc = pp_gemm_scaled_quantise(v, r, batch, m, n, k, a, b, &q, err);
    if (rc)
        return rc;
    int64_t nc = batch * m * n;
    double *da = malloc((size_t)(batch * m * k + 1) * sizeof *da), *db = malloc((size_t)(batch * k * n + 1) * sizeof *db);
    double *e = malloc((size_t)(nc + 1) * sizeof *e);
    if (!da || !db || !e) {
        rc = pp_fail(err, PP_ERR_RUNTIME, "gemm: out of memory for the quantised reference");
    } else {
        dequantise(&q.A, q.qa, q.xsa, da);
        dequantise(&q.B, q.qb, q.xsb, db);
        pp_gemm_ref_opts o32 = *o;
        o32.format = PP_FMT_FP32;
        rc = pp_gemm_ref(&o32, batch, m, n, k, da, db, c, e, threads, err);
    }
    double G = q.ga * q.gb;  // exact: two binary32 values, their product inside binary64's range
    for (int64_t i = 0; !rc && i < nc; i++) {
        double ci = c[i], cg = ci * G;
        // ½ulp(cg) + G·e, each rounding covered by one step up (the ulp above |cg| is ≥ ulp(cg))
        double half = 0.5 * (nextafter(fabs(cg), INFINITY) - fabs(cg));
        double bound = nextafter(nextafter(G * e[i], INFINITY) + half, INFINITY);
        c[i] = cg;
        if (c_err)  // NaN for NaN; an infinite c̃ is exact; a finite one that overflows is not
            c_err[i] = isnan(cg) ? NAN : isinf(cg) ? (isinf(ci) ? 0.0 : INFINITY) : bound;
    }
    free(da);
    free(db);
    free(e);
    pp_gemm_scaled_q_free(&q);
    return rc;
}
