// test_adamw_ref.c — the MPFR AdamW reference: a hand-derived 3-step example (closed form), and
// its bound against a run at twice the precision, for every gradient source.
// Run: make build/rel/tests/test_adamw_ref && build/rel/tests/test_adamw_ref
#include <math.h>
#include <mpfr.h>
#include <string.h>

#include "test_util.h"

#include "adamw_ref.h"
#include "adamw_ref_dd.h"

// ---------------------------------------------------------------------------------------------
// Exact inputs: a constant gradient
//
// With g_t = g for every t: m_t = (1 − β1^t)·g, v_t = (1 − β2^t)·g², so m̂ = g, v̂ = g² and every
// update is lr·g/(|g| + ε). With d = 1 − lr·wd:
//   θ_3 = θ_0·d³ − q·(d² + d + 1),  q = lr·g/(|g| + ε),
//   m_3 = (1 − β1³)·g,  v_3 = (1 − β2³)·g².
// The synthetic source with snr = 1e300 gives g_{t,i} = RN_P(scale·(s_i + z/1e300)): the binary64
// sum is scale·s_i except in the (measure-zero) case of a binary64 tie, so g is the same at every
// step; the test checks that it is before using the closed form.
static void adamw_ref_constant_gradient_three_steps(void **state)
{
    (void)state;
    pp_adamw_problem pr = {PP_ADAMW_GRAD_SYNTHETIC, 8, 3, pp_test_seed(), {1e-2, 0.9, 0.999, 1e-3, 0.1},
                           PP_ADAMW_LR_CONSTANT, 0, 0.5, 1e300, 0, 0, NULL};
    double th0[8], th[8], m[8], v[8], bnd[3];
    for (int i = 0; i < 8; i++)
        th0[i] = pp_round(PP_FMT_FP32, pp_rand_normal(pr.seed, 7, (uint64_t)i), PP_RND_NE, 0);
    assert_int_equal(pp_adamw_ref(&pr, PP_FMT_FP32, 0, th0, th, m, v, bnd, NULL, 1, NULL), PP_OK);
    // the bounds are the binary64 output rounding (½ulp, |θ| < 8) plus a running bound ~2^−110
    assert_true(bnd[0] > 0 && bnd[0] < 0x1p-50 && bnd[1] < 0x1p-52 && bnd[2] < 0x1p-52);
    mpfr_t d, q, x, y, e;
    mpfr_inits2(256, d, q, x, y, e, (mpfr_ptr)0);
    int bad = 0;
    for (int i = 0; i < 8; i++) {
        double g = pp_adamw_synth_grad(&pr, PP_FMT_FP32, 1, i);
        for (int t = 2; t <= 3; t++)
            assert_true(pp_adamw_synth_grad(&pr, PP_FMT_FP32, t, i) == g);
        mpfr_set_d(d, pr.hyper.lr, MPFR_RNDN);
        mpfr_mul_d(d, d, pr.hyper.weight_decay, MPFR_RNDN);
        mpfr_ui_sub(d, 1, d, MPFR_RNDN);                          // d
        mpfr_set_d(q, fabs(g), MPFR_RNDN);
        mpfr_add_d(q, q, pr.hyper.eps, MPFR_RNDN);
        mpfr_d_div(q, g, q, MPFR_RNDN);
        mpfr_mul_d(q, q, pr.hyper.lr, MPFR_RNDN);                 // q
        mpfr_sqr(x, d, MPFR_RNDN);
        mpfr_add(y, x, d, MPFR_RNDN);
        mpfr_add_ui(y, y, 1, MPFR_RNDN);
        mpfr_mul(y, y, q, MPFR_RNDN);                             // q(d² + d + 1)
        mpfr_mul(x, x, d, MPFR_RNDN);
        mpfr_mul_d(x, x, th0[i], MPFR_RNDN);                      // θ0·d³
        mpfr_sub(x, x, y, MPFR_RNDN);
        mpfr_sub_d(e, x, th[i], MPFR_RNDN);
        double err_th = fabs(mpfr_get_d(e, MPFR_RNDA));
        double want_m = (1 - 0.9 * 0.9 * 0.9) * g;                // not exact in binary64: compare in MPFR
        mpfr_set_d(x, pr.hyper.beta1, MPFR_RNDN);
        mpfr_pow_ui(x, x, 3, MPFR_RNDN);
        mpfr_ui_sub(x, 1, x, MPFR_RNDN);
        mpfr_mul_d(x, x, g, MPFR_RNDN);
        mpfr_sub_d(e, x, m[i], MPFR_RNDN);
        double err_m = fabs(mpfr_get_d(e, MPFR_RNDA));
        mpfr_set_d(x, pr.hyper.beta2, MPFR_RNDN);
        mpfr_pow_ui(x, x, 3, MPFR_RNDN);
        mpfr_ui_sub(x, 1, x, MPFR_RNDN);
        mpfr_mul_d(x, x, g * g, MPFR_RNDN);                       // g² exact: g has ≤ 24 bits
        mpfr_sub_d(e, x, v[i], MPFR_RNDN);
        double err_v = fabs(mpfr_get_d(e, MPFR_RNDA));
        // the 256-bit closed form's own error is < 2^−240 relative: negligible against the bounds
        if (err_th > bnd[0] || err_m > bnd[1] || err_v > bnd[2]) {
            fprintf(stderr, "adamw_ref_constant_gradient_three_steps: element %d\n", i);
            pp_test_print_double("theta", th[i]), pp_test_print_double("error", err_th);
            pp_test_print_double("bound", bnd[0]), pp_test_print_double("m error", err_m);
            pp_test_print_double("m (binary64 estimate)", want_m), pp_test_print_double("v error", err_v);
            bad++;
        }
    }
    mpfr_clears(d, q, x, y, e, (mpfr_ptr)0);
    assert_int_equal(bad, 0);
}

// ---------------------------------------------------------------------------------------------
// The bound against a run at 256 bits: |x_128 − x_256| ≤ b_128 + b_256 (both contain the exact
// value), every source, with weight decay and a cosine schedule.
static void adamw_ref_bound_contains_256_bit_run(void **state)
{
    (void)state;
    for (int kind = 0; kind < 3; kind++) {
        pp_adamw_problem pr = {(pp_adamw_grad_kind)kind, kind == 2 ? 8 : 512, 60, pp_test_seed(),
                               {1e-2, 0.9, 0.999, 1e-8, 0.05}, PP_ADAMW_LR_COSINE, 10, 1.0, 0.5, 24, 0.1, NULL};
        int64_t n = pr.n;
        double *th0 = calloc((size_t)n, sizeof *th0), *a[3], *b[3], ba[3], bb[3];
        for (int k = 0; k < 3; k++)
            a[k] = calloc((size_t)n, sizeof(double)), b[k] = calloc((size_t)n, sizeof(double));
        for (int64_t i = 0; i < n; i++)
            th0[i] = pp_round(PP_FMT_BF16, pp_rand_normal(pr.seed, 9, (uint64_t)i), PP_RND_NE, 0);
        assert_int_equal(pp_adamw_ref(&pr, PP_FMT_BF16, 128, th0, a[0], a[1], a[2], ba, NULL, 2, NULL), PP_OK);
        assert_int_equal(pp_adamw_ref(&pr, PP_FMT_BF16, 256, th0, b[0], b[1], b[2], bb, NULL, 2, NULL), PP_OK);
        int bad = 0;
        for (int k = 0; k < 3; k++)
            for (int64_t i = 0; i < n && bad < 10; i++)
                if (fabs(a[k][i] - b[k][i]) > ba[k] + bb[k]) {
                    fprintf(stderr, "adamw_ref_bound_contains_256_bit_run: source %d, output %d, element %lld\n",
                            kind, k, (long long)i);
                    pp_test_print_double("128-bit", a[k][i]), pp_test_print_double("256-bit", b[k][i]);
                    pp_test_print_double("bound 128", ba[k]);
                    bad++;
                }
        // the bound is useful: ½ulp of binary64 plus far less, for |θ| < 8
        assert_true(ba[0] < 0x1p-49 && ba[1] < 0x1p-49 && ba[2] < 0x1p-49);
        if (bad)
            pp_test_report_seed();
        assert_int_equal(bad, 0);
        free(th0);
        for (int k = 0; k < 3; k++)
            free(a[k]), free(b[k]);
    }
}

// ---------------------------------------------------------------------------------------------
// Around the feedback loop (PROOFS.md#adamw-lohner): linear regression (coupled elements, the
// shape of cases/bf16-training.toml) for 400 steps with weight decay, where the componentwise
// bound alone stopped at step ~190: the 128-bit run and a 300-bit run differ by at most the sum
// of their bounds, and the bounds stay at ½ulp of binary64 plus far less. (The quadratic
// configuration of issue 17 and the long runs: tests/test_adamw_ref_lohner.c.)
static void adamw_ref_linreg_feedback_against_300_bits(void **state)
{
    (void)state;
    pp_adamw_problem pr = {PP_ADAMW_GRAD_LINREG, 16, 400, 3, {1e-3, 0.9, 0.999, 1e-8, 0.01}, PP_ADAMW_LR_COSINE,
                           20, 1.0, 1.0, 64, 0.1, NULL};
    enum { N = 16 };
    double th0[N], a[3][N], b[3][N], ba[3], bb[3];
    for (int i = 0; i < N; i++)
        th0[i] = pp_round(PP_FMT_BF16, 0.1 * pp_rand_normal(pr.seed, 9, (uint64_t)i), PP_RND_NE, 0);
    pp_error err = {0, ""};
    int ra = pp_adamw_ref(&pr, PP_FMT_BF16, 0, th0, a[0], a[1], a[2], ba, NULL, 1, &err);
    if (ra)
        fprintf(stderr, "128 bits: %s\n", err.msg);
    int rb = pp_adamw_ref(&pr, PP_FMT_BF16, 300, th0, b[0], b[1], b[2], bb, NULL, 1, &err);
    if (rb)
        fprintf(stderr, "300 bits: %s\n", err.msg);
    assert_int_equal(ra, PP_OK);
    assert_int_equal(rb, PP_OK);
    int bad = 0;
    for (int k = 0; k < 3; k++) {
        double scale = 0.0;
        for (int i = 0; i < N; i++) {
            scale = fabs(a[k][i]) > scale ? fabs(a[k][i]) : scale;
            if (!(fabs(a[k][i] - b[k][i]) <= ba[k] + bb[k]) && bad++ < 10) {
                fprintf(stderr, "adamw_ref_linreg_feedback_against_300_bits: output %d, element %d\n", k, i);
                pp_test_print_double("128-bit", a[k][i]), pp_test_print_double("300-bit", b[k][i]);
            }
        }
        assert_true(ba[k] <= 0.5 * pp_ulp(PP_FMT_FP64, scale) + 0x1p-70 * scale);
    }
    assert_int_equal(bad, 0);
}

// ---------------------------------------------------------------------------------------------
// The fast path (double-double, prec 0) against mpfr-plain (128 bits): element by element within
// the sum of their bounds, every bound within 2^−50 of the value's scale; adversarial settings.

typedef struct dd_case {
    const char *name;
    pp_adamw_grad_kind kind;
    int64_t n;
    int steps;
    double lr, wd, eps, grad_scale;
    pp_format_id P;
} dd_case;

static void dd_against_plain(const dd_case *c)
{
    pp_adamw_problem pr = {c->kind, c->n, c->steps, pp_test_seed(), {c->lr, 0.9, 0.999, c->eps, c->wd},
                           PP_ADAMW_LR_COSINE, c->steps / 10, c->grad_scale, 0.5, 0, 0, NULL};
    int64_t n = pr.n;
    double *th0 = calloc((size_t)n, sizeof *th0), *a[3], *b[3], ba[3], bb[3];
    for (int k = 0; k < 3; k++)
        a[k] = calloc((size_t)n, sizeof(double)), b[k] = calloc((size_t)n, sizeof(double));
    for (int64_t i = 0; i < n; i++)
        th0[i] = pp_round(c->P, pp_rand_normal(pr.seed, 9, (uint64_t)i), PP_RND_NE, 0);
    pp_error err = {0, ""};
    int rf = pp_adamw_ref(&pr, c->P, 0, th0, a[0], a[1], a[2], ba, NULL, 2, &err);
    if (rf)
        fprintf(stderr, "%s: fast path: %s\n", c->name, err.msg);
    int rp = pp_adamw_ref(&pr, c->P, 128, th0, b[0], b[1], b[2], bb, NULL, 2, &err);
    if (rp)
        fprintf(stderr, "%s: mpfr-plain: %s\n", c->name, err.msg);
    assert_int_equal(rf, PP_OK);
    assert_int_equal(rp, PP_OK);
    int bad = 0;
    for (int k = 0; k < 3; k++) {
        double scale = 0.0;
        for (int64_t i = 0; i < n; i++)
            scale = fabs(a[k][i]) > scale ? fabs(a[k][i]) : scale;
        for (int64_t i = 0; i < n && bad < 10; i++)
            if (!(fabs(a[k][i] - b[k][i]) <= ba[k] + bb[k])) {
                fprintf(stderr, "%s: output %d, element %lld\n", c->name, k, (long long)i);
                pp_test_print_double("fast", a[k][i]), pp_test_print_double("mpfr-plain", b[k][i]);
                pp_test_print_double("bound fast", ba[k]), pp_test_print_double("bound plain", bb[k]);
                bad++;
            }
        // the bound beyond the final ½ulp is far inside 2^−50 of the output's scale
        if (!(ba[k] <= 0.5 * pp_ulp(PP_FMT_FP64, scale) + 0x1p-50 * scale)) {
            fprintf(stderr, "%s: output %d: bound %g for scale %g\n", c->name, k, ba[k], scale);
            bad++;
        }
    }
    if (bad)
        pp_test_report_seed();
    assert_int_equal(bad, 0);
    free(th0);
    for (int k = 0; k < 3; k++)
        free(a[k]), free(b[k]);
}

static void adamw_ref_fast_against_plain(void **state)
{
    (void)state;
    static const dd_case cases[] = {
        {"synthetic", PP_ADAMW_GRAD_SYNTHETIC, 512, 200, 1e-3, 0.05, 1e-8, 1.0, PP_FMT_BF16},
        {"quadratic", PP_ADAMW_GRAD_QUADRATIC, 512, 100, 1e-2, 0.01, 1e-8, 1.0, PP_FMT_FP32},
        // near-zero v: gradients ~1e−30, so √v̂ ≈ 1e−30 sits far below ε
        {"tiny gradients", PP_ADAMW_GRAD_SYNTHETIC, 256, 150, 1e-3, 0.0, 1e-8, 1e-30, PP_FMT_FP32},
        // √v̂ ≈ ε: the division's denominator is half ε
        {"v near eps", PP_ADAMW_GRAD_SYNTHETIC, 256, 150, 1e-3, 0.0, 1e-8, 1e-8, PP_FMT_FP32},
        {"huge gradients", PP_ADAMW_GRAD_SYNTHETIC, 256, 150, 1e-3, 0.1, 1e-8, 1e30, PP_FMT_FP32},
        {"fp16 gradients, large eps", PP_ADAMW_GRAD_SYNTHETIC, 256, 150, 1e-1, 0.0, 0.5, 1e-2, PP_FMT_FP16},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        dd_against_plain(&cases[k]);
}

// A long run on few elements: T = 100,000 steps of synthetic gradients, the fast path against
// mpfr-plain, both certified.
static void adamw_ref_fast_long_run(void **state)
{
    (void)state;
    dd_case c = {"long run", PP_ADAMW_GRAD_SYNTHETIC, 2, 100000, 1e-3, 0.01, 1e-8, 1e-3, PP_FMT_BF16};
    dd_against_plain(&c);
}

// The fast path's double-double values before their rounding to binary64, against a plain
// 400-bit MPFR AdamW written here (its error ≪ 2^−300): within the path's own running bound, for
// each source, with weight decay, near-zero v and huge gradients. This sees errors of 2^−100
// relative, which the binary64 outputs (and their ½ulp) would hide.
static void adamw_ref_fast_pair_against_400_bits(void **state)
{
    (void)state;
    static const dd_case cases[] = {
        {"synthetic", PP_ADAMW_GRAD_SYNTHETIC, 32, 300, 1e-3, 0.05, 1e-8, 1.0, PP_FMT_BF16},
        {"quadratic", PP_ADAMW_GRAD_QUADRATIC, 32, 100, 1e-2, 0.01, 1e-8, 1.0, PP_FMT_FP32},
        {"tiny gradients", PP_ADAMW_GRAD_SYNTHETIC, 16, 200, 1e-3, 0.0, 1e-8, 1e-30, PP_FMT_FP32},
        {"v near eps", PP_ADAMW_GRAD_SYNTHETIC, 16, 200, 1e-3, 0.0, 1e-8, 1e-8, PP_FMT_FP32},
        {"huge gradients", PP_ADAMW_GRAD_SYNTHETIC, 16, 200, 1e-3, 0.1, 1e-8, 1e30, PP_FMT_FP32},
        // around the feedback loop (PROOFS.md#adamw-lohner): issue 17's configuration, a tiny ε
        // (den ≈ √v: the largest k = a/den), a huge learning rate, and θ₀ one binary32 ulp from
        // θ* (v near zero: g ≈ 1e−8 at first)
        {"quadratic feedback", PP_ADAMW_GRAD_QUADRATIC, 16, 500, 1e-3, 0.01, 1e-8, 1.0, PP_FMT_FP32},
        {"quadratic tiny eps", PP_ADAMW_GRAD_QUADRATIC, 8, 300, 1e-3, 0.01, 1e-30, 1.0, PP_FMT_FP32},
        {"quadratic huge lr", PP_ADAMW_GRAD_QUADRATIC, 8, 200, 0.5, 0.01, 1e-8, 1.0, PP_FMT_FP32},
        {"quadratic at the optimum", PP_ADAMW_GRAD_QUADRATIC, 4, 100, 1e-3, 0.0, 1e-8, 1.0, PP_FMT_FP32},
    };
    enum { W = 400 };
    int bad = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const dd_case *K = &cases[c];
        pp_adamw_problem pr = {K->kind, K->n, K->steps, pp_test_seed(), {K->lr, 0.9, 0.999, K->eps, K->wd},
                               PP_ADAMW_LR_COSINE, K->steps / 10, K->grad_scale, 0.5, 0, 0, NULL};
        int T = pr.steps;
        pp_adamw_dd_scal_ *sc = calloc((size_t)T + 1, sizeof *sc);
        mpfr_t *A = malloc((size_t)(T + 1) * sizeof *A), *B = malloc((size_t)(T + 1) * sizeof *B),
               *Dc = malloc((size_t)(T + 1) * sizeof *Dc);
        mpfr_t x, y, th, m, v, g, q;
        mpfr_inits2(W, x, y, th, m, v, g, q, (mpfr_ptr)0);
        for (int t = 1; t <= T; t++) {  // the scalars at 400 bits, and as double-doubles (±2^−105)
            double lr = pp_adamw_lr(&pr, t);
            mpfr_inits2(W, A[t], B[t], Dc[t], (mpfr_ptr)0);
            mpfr_set_d(x, pr.hyper.beta1, MPFR_RNDN);
            mpfr_pow_ui(x, x, (unsigned long)t, MPFR_RNDN);
            mpfr_ui_sub(x, 1, x, MPFR_RNDN);
            mpfr_d_div(A[t], lr, x, MPFR_RNDN);
            mpfr_set_d(x, pr.hyper.beta2, MPFR_RNDN);
            mpfr_pow_ui(x, x, (unsigned long)t, MPFR_RNDN);
            mpfr_ui_sub(x, 1, x, MPFR_RNDN);
            mpfr_rec_sqrt(B[t], x, MPFR_RNDN);
            mpfr_set_d(x, lr, MPFR_RNDN);
            mpfr_mul_d(x, x, pr.hyper.weight_decay, MPFR_RNDN);
            mpfr_ui_sub(Dc[t], 1, x, MPFR_RNDN);
            mpfr_t *src[3] = {&A[t], &B[t], &Dc[t]};
            double *dst[3] = {sc[t].a, sc[t].b, sc[t].dec}, *mag[3] = {&sc[t].a_d, &sc[t].b_d, &sc[t].dec_d};
            for (int k = 0; k < 3; k++) {
                dst[k][0] = mpfr_get_d(*src[k], MPFR_RNDN);
                mpfr_sub_d(x, *src[k], dst[k][0], MPFR_RNDN);
                dst[k][1] = mpfr_get_d(x, MPFR_RNDN);
                *mag[k] = fabs(mpfr_get_d(*src[k], MPFR_RNDA));
            }
            sc[t].ra = sc[t].rb = sc[t].rdec = 0x1p-104;
        }
        for (int64_t i = 0; i < pr.n; i++) {
            double th0 = pp_round(K->P, pp_rand_normal(pr.seed, 9, (uint64_t)i), PP_RND_NE, 0);
            if (strcmp(K->name, "quadratic at the optimum") == 0) {
                float hq0, opt0;
                pp_adamw_quad_data(&pr, i, &hq0, &opt0);
                th0 = nextafterf(opt0, INFINITY);
            }
            pp_adamw_dd_elem_ o;
            if (!pp_adamw_ref_dd_elem_(&pr, K->P, sc, i, th0, PP_ADAMW_REF_MAX_REL, NULL, &o)) {
                fprintf(stderr, "%s: element %lld not certified at step %d\n", K->name, (long long)i, o.fail_step);
                bad++;
                continue;
            }
            float hq = 0.0f, opt = 0.0f;
            double sig = 0.0;
            if (K->kind == PP_ADAMW_GRAD_QUADRATIC)
                pp_adamw_quad_data(&pr, i, &hq, &opt);
            else
                sig = pp_adamw_synth_signal(&pr, i);
            mpfr_set_d(th, th0, MPFR_RNDN);
            mpfr_set_zero(m, 1), mpfr_set_zero(v, 1);
            for (int t = 1; t <= T; t++) {
                if (K->kind == PP_ADAMW_GRAD_QUADRATIC) {
                    mpfr_sub_d(g, th, opt, MPFR_RNDN);
                    mpfr_mul_d(g, g, hq, MPFR_RNDN);
                } else {
                    mpfr_set_d(g, pp_adamw_synth_grad_s(&pr, K->P, t, i, sig), MPFR_RNDN);
                }
                mpfr_mul(th, th, Dc[t], MPFR_RNDN);
                mpfr_mul_d(m, m, pr.hyper.beta1, MPFR_RNDN);
                mpfr_set_d(x, 1.0, MPFR_RNDN);
                mpfr_sub_d(x, x, pr.hyper.beta1, MPFR_RNDN);
                mpfr_fma(m, g, x, m, MPFR_RNDN);
                mpfr_mul_d(v, v, pr.hyper.beta2, MPFR_RNDN);
                mpfr_set_d(x, 1.0, MPFR_RNDN);
                mpfr_sub_d(x, x, pr.hyper.beta2, MPFR_RNDN);
                mpfr_sqr(y, g, MPFR_RNDN);
                mpfr_fma(v, y, x, v, MPFR_RNDN);
                mpfr_sqrt(y, v, MPFR_RNDN);
                mpfr_mul(y, y, B[t], MPFR_RNDN);
                mpfr_add_d(y, y, pr.hyper.eps, MPFR_RNDN);
                mpfr_mul(q, m, A[t], MPFR_RNDN);
                mpfr_div(q, q, y, MPFR_RNDN);
                mpfr_sub(th, th, q, MPFR_RNDN);
            }
            mpfr_t *truth[3] = {&th, &m, &v};
            for (int k = 0; k < 3; k++) {
                mpfr_sub_d(x, *truth[k], o.pair[k][0], MPFR_RNDN);
                mpfr_sub_d(x, x, o.pair[k][1], MPFR_RNDN);
                double err = fabs(mpfr_get_d(x, MPFR_RNDA));
                if (!(err <= o.pair_bound[k]) && bad++ < 10) {
                    fprintf(stderr, "%s: element %lld, output %d: |pair − exact| %g > bound %g\n", K->name,
                            (long long)i, k, err, o.pair_bound[k]);
                }
            }
        }
        for (int t = 1; t <= T; t++)
            mpfr_clears(A[t], B[t], Dc[t], (mpfr_ptr)0);
        mpfr_clears(x, y, th, m, v, g, q, (mpfr_ptr)0);
        free(A), free(B), free(Dc), free(sc);
    }
    if (bad)
        pp_test_report_seed();
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(adamw_ref_constant_gradient_three_steps),
        cmocka_unit_test(adamw_ref_bound_contains_256_bit_run),
        cmocka_unit_test(adamw_ref_linreg_feedback_against_300_bits),
        cmocka_unit_test(adamw_ref_fast_against_plain),
        cmocka_unit_test(adamw_ref_fast_long_run),
        cmocka_unit_test(adamw_ref_fast_pair_against_400_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
