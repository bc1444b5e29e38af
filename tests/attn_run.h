// attn_run.h — the attention explain tests' run: q, k, v, dout and every output of one case
// (binary64 arrays of its dims), random values of a format, and one CPU run under an exact-site
// mask (tests/test_explain_attention_x64.c, tests/test_explain_attention_chains.c).
#ifndef PP_TEST_ATTN_RUN_H
#define PP_TEST_ATTN_RUN_H

#include "test_util.h"

#include "cpu/attention.h"
#include "exact_sites.h"

typedef struct attn_run {
    pp_attn_dims dm;
    double *q, *k, *v, *dout, *out, *lse, *dq, *dk, *dv;
} attn_run;

static inline void attn_run_init(attn_run *R, pp_attn_dims dm)
{
    R->dm = dm;
    int64_t nq = dm.b * dm.s_q * dm.h * dm.d, nk = dm.b * dm.s_kv * dm.h_kv * dm.d;
    R->q = calloc((size_t)nq, 8), R->dout = calloc((size_t)nq, 8), R->out = calloc((size_t)nq, 8);
    R->dq = calloc((size_t)nq, 8);
    R->k = calloc((size_t)nk, 8), R->v = calloc((size_t)nk, 8), R->dk = calloc((size_t)nk, 8);
    R->dv = calloc((size_t)nk, 8);
    R->lse = calloc((size_t)(dm.b * dm.h * dm.s_q), 8);
}

static inline void attn_run_free(attn_run *R)
{
    double *p[] = {R->q, R->k, R->v, R->dout, R->out, R->lse, R->dq, R->dk, R->dv};
    for (int i = 0; i < 9; i++)
        free(p[i]);
}

// Random values of f (fixed seed: a hand-built test, not a sweep).
static inline void attn_run_fill(attn_run *R, pp_format_id f, uint64_t seed)
{
    pp_test_rng r = {seed};
    int64_t nq = R->dm.b * R->dm.s_q * R->dm.h * R->dm.d, nk = R->dm.b * R->dm.s_kv * R->dm.h_kv * R->dm.d;
    for (int64_t i = 0; i < nq; i++) {
        R->q[i] = pp_round(f, pp_test_rng_unit(&r) * 4.0 - 2.0, PP_RND_NE, 0);
        R->dout[i] = pp_round(f, pp_test_rng_unit(&r) * 2.0 - 1.0, PP_RND_NE, 0);
    }
    for (int64_t i = 0; i < nk; i++) {
        R->k[i] = pp_round(f, pp_test_rng_unit(&r) * 4.0 - 2.0, PP_RND_NE, 0);
        R->v[i] = pp_round(f, pp_test_rng_unit(&r) * 2.0 - 1.0, PP_RND_NE, 0);
    }
}

// Runs v under exact-site mask x (backward when bwd), outputs into R.
static inline void attn_run_go(attn_run *R, pp_attn_variant v, pp_site_mask x, int bwd)
{
    v.exact_sites = x;
    pp_error err = {0};
    int rc = pp_attention_cpu(&v, &R->dm, bwd, R->q, R->k, R->v, bwd ? R->dout : NULL, R->out, R->lse,
                              bwd ? R->dq : NULL, bwd ? R->dk : NULL, bwd ? R->dv : NULL, 2, &err);
    if (rc)
        fail_msg("attention: %s", err.msg);
}

// A copy of the n values at x (the caller frees it).
static inline double *dupd(const double *x, int64_t n)
{
    double *y = malloc((size_t)n * 8);
    memcpy(y, x, (size_t)n * 8);
    return y;
}

#endif
