// test_attention_ref_fd.c — the attention reference's backward pass (dq, dk, dv, both methods)
// against a central finite difference of F = Σ dout·out, the forward pass recomputed here in MPFR
// at 1000 bits, on tiny shapes. Run: build/rel/tests/test_attention_ref_fd
#include <math.h>
#include <stdio.h>  // before mpfr.h: declares mpfr_fprintf
#include <mpfr.h>

#include "test_util.h"

#include "attention_ref.h"
#include "format.h"

#define FD_PREC 1000
#define FD_LOG2_H (-150)  // the step h = 2^−150

static double rng_sym(pp_test_rng *r)  // uniform in [−1, 1)
{
    return 2.0 * ((double)(pp_test_rng_next(r) >> 11) * 0x1p-53) - 1.0;
}

// ---------------------------------------------------------------------------------------------
// F(q, k, v) = Σ dout·out at FD_PREC bits, the inputs x + t·δ (t = ±h) formed exactly (x has 24
// bits, δ 53 bits, t a power of two: ≤ 230 bits). Straight from the definition, independent of
// reference/: S = σ·q·kᵀ, masked, out = Σ_j exp(S_j)·v_j / Σ_j exp(S_j). An empty row adds 0.

typedef struct fd_case {
    pp_attn_ref_opts o;
    double *q, *k, *v, *dout;
    double *dq_dir, *dk_dir, *dv_dir;  // δ per tensor (zero where not perturbed)
} fd_case;

static void in_val(mpfr_t r, const double *x, const double *dir, int64_t i, long t_exp, int sign)
{
    mpfr_set_d(r, dir[i], MPFR_RNDN);
    mpfr_mul_2si(r, r, t_exp, MPFR_RNDN);
    if (sign < 0)
        mpfr_neg(r, r, MPFR_RNDN);
    mpfr_add_d(r, r, x[i], MPFR_RNDN);  // exact at FD_PREC bits
}

static void eval_F(mpfr_t F, const fd_case *c, int sign)
{
    const pp_attn_ref_opts *o = &c->o;
    int64_t g = o->h / o->h_kv, d = o->d;
    mpfr_t sig, s, a, b, l, acc, e;
    mpfr_inits2(FD_PREC, sig, s, a, b, l, acc, e, (mpfr_ptr)0);
    mpfr_t *out = malloc(sizeof(mpfr_t) * (size_t)d);
    for (int64_t m = 0; m < d; m++)
        mpfr_init2(out[m], FD_PREC);
    mpfr_set_si(sig, (long)d, MPFR_RNDN);
    mpfr_rec_sqrt(sig, sig, MPFR_RNDN);
    mpfr_set_zero(F, 1);
    for (int64_t bi = 0; bi < o->b; bi++)
        for (int64_t hh = 0; hh < o->h; hh++)
            for (int64_t i = 0; i < o->s_q; i++) {
                int64_t nv = o->causal ? i + o->s_kv - o->s_q + 1 : o->s_kv;
                nv = nv < 0 ? 0 : nv > o->s_kv ? o->s_kv : nv;
                if (nv == 0)
                    continue;
                int64_t qo = ((bi * o->s_q + i) * o->h + hh) * d;
                mpfr_set_zero(l, 1);
                for (int64_t m = 0; m < d; m++)
                    mpfr_set_zero(out[m], 1);
                for (int64_t j = 0; j < nv; j++) {
                    int64_t ko = ((bi * o->s_kv + j) * o->h_kv + hh / g) * d;
                    mpfr_set_zero(s, 1);
                    for (int64_t m = 0; m < d; m++) {
                        in_val(a, c->q, c->dq_dir, qo + m, FD_LOG2_H, sign);
                        in_val(b, c->k, c->dk_dir, ko + m, FD_LOG2_H, sign);
                        mpfr_fma(s, a, b, s, MPFR_RNDN);
                    }
                    mpfr_mul(s, s, sig, MPFR_RNDN);
                    mpfr_exp(e, s, MPFR_RNDN);
                    mpfr_add(l, l, e, MPFR_RNDN);
                    for (int64_t m = 0; m < d; m++) {
                        in_val(b, c->v, c->dv_dir, ko + m, FD_LOG2_H, sign);
                        mpfr_fma(out[m], e, b, out[m], MPFR_RNDN);
                    }
                }
                mpfr_set_zero(acc, 1);
                for (int64_t m = 0; m < d; m++) {
                    mpfr_div(a, out[m], l, MPFR_RNDN);
                    mpfr_mul_d(a, a, c->dout[qo + m], MPFR_RNDN);
                    mpfr_add(acc, acc, a, MPFR_RNDN);
                }
                mpfr_add(F, F, acc, MPFR_RNDN);
            }
    for (int64_t m = 0; m < d; m++)
        mpfr_clear(out[m]);
    free(out);
    mpfr_clears(sig, s, a, b, l, acc, e, (mpfr_ptr)0);
}

// ---------------------------------------------------------------------------------------------
// The check

// For each tensor X of q, k, v: δ random on X only, FD = (F(x + hδ) − F(x − hδ))/(2h) against
// G = ⟨dX, δ⟩ from the reference. Tolerance: Σ_i |δ_i|·bound_i (the reference's own element
// bounds) plus the finite difference's error: truncation h²/6·max|F'''| with h = 2^−150 and, for
// these inputs (|values| ≤ 2, d ≤ 4, s ≤ 5, so every third derivative of F is below 2^40), below
// 2^−250; rounding at 1000 bits ≤ 2^−990·|F|/h < 2^−800. 2^−200 covers both.
static void fd_check(fd_case *c, pp_attn_ref_method m, pp_test_rng *r)
{
    const pp_attn_ref_opts *o = &c->o;
    int64_t nq = o->b * o->s_q * o->h * o->d, nk = o->b * o->s_kv * o->h_kv * o->d;
    double *out = calloc((size_t)nq, sizeof(double)), *lse = calloc((size_t)(o->b * o->h * o->s_q), sizeof(double));
    double *g[3] = {calloc((size_t)nq, sizeof(double)), calloc((size_t)nk, sizeof(double)),
                    calloc((size_t)nk, sizeof(double))};
    double *e[3] = {calloc((size_t)nq, sizeof(double)), calloc((size_t)nk, sizeof(double)),
                    calloc((size_t)nk, sizeof(double))};
    pp_attn_ref_opts oo = *o;
    oo.method = m;
    pp_attn_ref_elem_bounds eb = {NULL, NULL, e[0], e[1], e[2]};
    pp_error err = {0};
    assert_int_equal(pp_attention_ref_ex(&oo, c->q, c->k, c->v, c->dout, out, lse, g[0], g[1], g[2],
                                         NULL, &eb, &err), PP_OK);
    double *dirs[3] = {c->dq_dir, c->dk_dir, c->dv_dir};
    int64_t n[3] = {nq, nk, nk};
    mpfr_t Fp, Fm, G, T, t;
    mpfr_inits2(FD_PREC, Fp, Fm, G, T, t, (mpfr_ptr)0);
    for (int x = 0; x < 3; x++) {
        for (int y = 0; y < 3; y++)
            memset(dirs[y], 0, sizeof(double) * (size_t)n[y]);
        for (int64_t i = 0; i < n[x]; i++)
            dirs[x][i] = rng_sym(r);
        eval_F(Fp, c, 1);
        eval_F(Fm, c, -1);
        mpfr_sub(Fp, Fp, Fm, MPFR_RNDN);
        mpfr_mul_2si(Fp, Fp, -(FD_LOG2_H + 1), MPFR_RNDN);  // FD
        mpfr_set_zero(G, 1);
        mpfr_set_d(T, 0x1p-200, MPFR_RNDU);
        for (int64_t i = 0; i < n[x]; i++) {
            mpfr_set_d(t, g[x][i], MPFR_RNDN);
            mpfr_mul_d(t, t, dirs[x][i], MPFR_RNDN);  // exact: 106 bits
            mpfr_add(G, G, t, MPFR_RNDN);
            mpfr_set_d(t, fabs(dirs[x][i]), MPFR_RNDU);
            mpfr_mul_d(t, t, e[x][i], MPFR_RNDU);
            mpfr_add(T, T, t, MPFR_RNDU);
        }
        mpfr_sub(G, G, Fp, MPFR_RNDN);
        mpfr_abs(G, G, MPFR_RNDN);
        if (mpfr_cmp(G, T) > 0) {
            fprintf(stderr, "FAIL: finite difference: d%s (method %d): |<g, delta> - FD| = %.3e > %.3e\n",
                    x == 0 ? "q" : x == 1 ? "k" : "v", (int)m, mpfr_get_d(G, MPFR_RNDN),
                    mpfr_get_d(T, MPFR_RNDN));
            fprintf(stderr, "  case s_q %lld s_kv %lld h %lld h_kv %lld d %lld causal %d\n",
                    (long long)o->s_q, (long long)o->s_kv, (long long)o->h, (long long)o->h_kv,
                    (long long)o->d, o->causal);
            pp_test_report_seed();
        }
        assert_true(mpfr_cmp(G, T) <= 0);
    }
    mpfr_clears(Fp, Fm, G, T, t, (mpfr_ptr)0);
    for (int x = 0; x < 3; x++) {
        free(g[x]);
        free(e[x]);
    }
    free(out);
    free(lse);
}

static void attention_ref_fd_backward(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed()};
    static const int64_t S[][6] = {  // s_q, s_kv, h, h_kv, d, causal
        {3, 3, 1, 1, 2, 0}, {3, 4, 2, 1, 3, 1}, {4, 2, 2, 2, 2, 1}, {2, 5, 2, 1, 4, 0},
        {1, 1, 1, 1, 1, 0}, {4, 4, 1, 1, 1, 1}};
    uint64_t reps = pp_test_iters(2);
    for (uint64_t rep = 0; rep < reps; rep++)
        for (size_t ci = 0; ci < sizeof S / sizeof *S; ci++) {
            fd_case c;
            memset(&c, 0, sizeof c);
            c.o.b = 1;
            c.o.s_q = S[ci][0];
            c.o.s_kv = S[ci][1];
            c.o.h = S[ci][2];
            c.o.h_kv = S[ci][3];
            c.o.d = S[ci][4];
            c.o.causal = (int)S[ci][5];
            c.o.backward = 1;
            int64_t nq = c.o.s_q * c.o.h * c.o.d, nk = c.o.s_kv * c.o.h_kv * c.o.d;
            c.q = malloc(sizeof(double) * (size_t)nq);
            c.dout = malloc(sizeof(double) * (size_t)nq);
            c.k = malloc(sizeof(double) * (size_t)nk);
            c.v = malloc(sizeof(double) * (size_t)nk);
            c.dq_dir = calloc((size_t)nq, sizeof(double));
            c.dk_dir = calloc((size_t)nk, sizeof(double));
            c.dv_dir = calloc((size_t)nk, sizeof(double));
            pp_format_id f = ci % 2 ? PP_FMT_BF16 : PP_FMT_FP16;
            for (int64_t i = 0; i < nq; i++) {
                c.q[i] = pp_round(f, 2.0 * rng_sym(&r), PP_RND_NE, 0);
                c.dout[i] = pp_round(f, 2.0 * rng_sym(&r), PP_RND_NE, 0);
            }
            for (int64_t i = 0; i < nk; i++) {
                c.k[i] = pp_round(f, 2.0 * rng_sym(&r), PP_RND_NE, 0);
                c.v[i] = pp_round(f, 2.0 * rng_sym(&r), PP_RND_NE, 0);
            }
            fd_check(&c, PP_ATTN_REF_FAST, &r);
            fd_check(&c, PP_ATTN_REF_MPFR_PLAIN, &r);
            free(c.q);
            free(c.k);
            free(c.v);
            free(c.dout);
            free(c.dq_dir);
            free(c.dk_dir);
            free(c.dv_dir);
        }
    mpfr_free_cache();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(attention_ref_fd_backward),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
