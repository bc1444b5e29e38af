// test_gemm_ref.c — the GEMM reference (reference/gemm_ref.c): hand-computed cases, both paths
// against an exact 700-bit MPFR truth within their own reported bounds, fast against mpfr-plain,
// adversarial inputs (mirrored cancellation, huge/tiny mixes, fp16 near 65504, subnormals),
// thread-count invariance. Run: build/rel/tests/test_gemm_ref
#include <math.h>
#include <stdio.h>  // before mpfr.h: declares mpfr_fprintf
#include <mpfr.h>

#include "test_util.h"

#include "gemm_ref.h"

// ---------------------------------------------------------------------------------------------
// Helpers

static const pp_format_id FORMATS[3] = {PP_FMT_FP16, PP_FMT_BF16, PP_FMT_FP32};

// Finite random values of f. Profiles: 0 moderate, 1 any finite bit pattern (huge/tiny mixes),
// 2 near max_finite, 3 subnormal, 4 powers of two over the whole range.
static double rnd_value(pp_test_rng *r, pp_format_id f, int profile)
{
    pp_format F = pp_format_get(f);
    double sign = (pp_test_rng_next(r) & 1) ? -1.0 : 1.0;
    switch (profile) {
    case 1:
        for (;;) {
            double x;
            if (f == PP_FMT_FP32) {
                uint32_t u = (uint32_t)pp_test_rng_next(r);
                float fx;
                memcpy(&fx, &u, sizeof fx);
                x = fx;
            } else {
                x = pp_decode(f, pp_test_rng_next(r) & 0xFFFF);
            }
            if (isfinite(x))
                return x;
        }
    case 2:
        return sign * pp_round(f, F.max_finite * (1.0 - 0.25 * pp_test_rng_unit(r)), PP_RND_TZ, 0);
    case 3:
        return sign * pp_round(f, ldexp(pp_test_rng_unit(r), F.emin), PP_RND_NE, 0);
    case 4:
        return sign * ldexp(1.0, F.emin - F.p + 1 + (int)(pp_test_rng_next(r) % (unsigned)(F.emax - F.emin + F.p)));
    default:
        return sign * pp_round(f, ldexp(1.0 + pp_test_rng_unit(r), (int)(pp_test_rng_next(r) % 9) - 4), PP_RND_NE, 0);
    }
}

// The truth, independently: the exact sum at 700 bits (products of binary32 values are
// multiples of 2^−298 below 2^256, so ≤ 700 bits hold any sum of < 2^100 of them exactly), α at
// 700 bits, their product rounded once: |T − exact| ≤ 2^−698·|T|.
static void truth(mpfr_t T, const double *arow, const double *bcol, int64_t k, int64_t bstride,
                  int alpha_given, double alpha)
{
    mpfr_t s, t, al;
    mpfr_inits2(700, s, t, al, (mpfr_ptr)0);
    mpfr_set_zero(s, 1);
    for (int64_t l = 0; l < k; l++) {
        mpfr_set_d(t, arow[l], MPFR_RNDN);
        mpfr_mul_d(t, t, bcol[l * bstride], MPFR_RNDN);
        mpfr_add(s, s, t, MPFR_RNDN);
    }
    if (alpha_given) {
        mpfr_set_d(al, alpha, MPFR_RNDN);
    } else {
        mpfr_set_d(al, (double)k, MPFR_RNDN);
        mpfr_rec_sqrt(al, al, MPFR_RNDN);
    }
    mpfr_mul(T, s, al, MPFR_RNDN);
    mpfr_clears(s, t, al, (mpfr_ptr)0);
}

// 1 when |v − T| ≤ e + 2^−690·|T| (the slack covers T's own error), all in exact/upward MPFR.
static int within(double v, double e, mpfr_t T)
{
    if (mpfr_nan_p(T))
        return v != v;
    if (mpfr_inf_p(T))
        return isinf(v) && (v > 0) == (mpfr_sgn(T) > 0);
    if (!isfinite(v) || !(e >= 0.0))
        return isinf(e) && e > 0;  // an overflowing value must carry an infinite bound
    mpfr_t d, lim;
    mpfr_inits2(2200, d, lim, (mpfr_ptr)0);
    mpfr_sub_d(d, T, v, MPFR_RNDA);  // 2200 bits: exact for these exponent ranges
    mpfr_abs(d, d, MPFR_RNDN);
    mpfr_abs(lim, T, MPFR_RNDN);
    mpfr_mul_2si(lim, lim, -690, MPFR_RNDN);
    mpfr_add_d(lim, lim, e, MPFR_RNDD);
    int ok = mpfr_lessequal_p(d, lim);
    mpfr_clears(d, lim, (mpfr_ptr)0);
    return ok;
}

typedef struct result {
    double *c, *e;
} result;

static result run_ref(pp_format_id f, pp_gemm_ref_method method, int alpha_given, double alpha,
                      int64_t batch, int64_t m, int64_t n, int64_t k, const double *a,
                      const double *b, int threads)
{
    int64_t nc = batch * m * n;
    result r = {malloc((size_t)(nc ? nc : 1) * sizeof(double)), malloc((size_t)(nc ? nc : 1) * sizeof(double))};
    assert_true(r.c && r.e);
    pp_gemm_ref_opts o = {f, alpha_given, alpha, method};
    pp_error err = {0};
    int rc = pp_gemm_ref(&o, batch, m, n, k, a, b, r.c, r.e, threads, &err);
    if (rc != PP_OK)
        fprintf(stderr, "pp_gemm_ref failed: %s\n", err.msg);
    assert_int_equal(rc, PP_OK);
    return r;
}

static void result_free(result *r)
{
    free(r->c);
    free(r->e);
}

static void print_case(const char *prop, pp_format_id f, int64_t o, const double *arow,
                       const double *bcol, int64_t k, int64_t bstride)
{
    fprintf(stderr, "FAIL %s: format %s, output %lld, k = %lld\n", prop, pp_format_get(f).name,
            (long long)o, (long long)k);
    for (int64_t l = 0; l < k && l < 4; l++) {
        pp_test_print_double("a[i,l]", arow[l]);
        pp_test_print_double("b[l,j]", bcol[l * bstride]);
    }
}

// ---------------------------------------------------------------------------------------------
// Hand-computed cases, both methods

typedef struct hand_case {
    const char *name;
    pp_format_id f;
    int alpha_given;
    double alpha;
    int k;
    double a[4], b[4];  // one row of A, one column of B
    double want;        // the exact value
    int exact;          // 1: both methods report it exactly (error 0); 2: fast exactly, plain
                        // within its bound (128 bits cannot hold the whole sum)
} hand_case;

static void gemm_ref_hand_cases(void **state)
{
    (void)state;
    const double m65504 = 65504.0;
    static const hand_case cases[] = {
        {"1·3 + 2·4 = 11", PP_FMT_FP16, 1, 1.0, 2, {1, 2}, {3, 4}, 11.0, 1},
        {"α = 1/√4: ½·(1+1+1+1) = 2", PP_FMT_BF16, 0, 0.0, 4, {1, 1, 1, 1}, {1, 1, 1, 1}, 2.0, 1},
        {"α = −2: −2·3 = −6", PP_FMT_FP32, 1, -2.0, 1, {1}, {3}, -6.0, 1},
        // bf16: 2^100 + 1 − 2^100 = 1 exactly (a binary64 running sum would lose the 1)
        {"cancellation around 1", PP_FMT_BF16, 1, 1.0, 3, {0x1p100, 1, -0x1p100}, {1, 1, 1}, 1.0, 1},
        // fp32: 1.5·2^127 + 3·2^−149 − 1.5·2^127 = 3·2^−149, a subnormal survivor
        {"tiny survivor of huge cancellation", PP_FMT_FP32, 1, 1.0, 3,
         {0x1.8p127, 0x1.8p-148, -0x1.8p127}, {1, 1, 1}, 0x1.8p-148, 2},
        // fp16 near 65504: 65504²·(1 − 1 − 1 + 1) = 0 exactly: +0
        {"fp16 65504 mirrored", PP_FMT_FP16, 1, 1.0, 4, {m65504, m65504, -m65504, m65504},
         {m65504, -m65504, m65504, m65504}, 0.0, 1},
        {"fp16 2·65504²", PP_FMT_FP16, 1, 1.0, 2, {m65504, m65504}, {m65504, m65504},
         2.0 * 65504.0 * 65504.0, 1},
        {"zero sum, negative α: +0", PP_FMT_FP16, 1, -3.0, 2, {1, -1}, {1, 1}, 0.0, 1},
        {"Inf", PP_FMT_FP16, 0, 0.0, 2, {INFINITY, 1}, {1, 1}, INFINITY, 1},
        {"Inf − Inf", PP_FMT_BF16, 1, 1.0, 2, {INFINITY, -INFINITY}, {1, 1}, NAN, 0},
        {"Inf·0", PP_FMT_FP32, 1, 1.0, 2, {INFINITY, 1}, {0, 1}, NAN, 0},
        {"−Inf·(−2)", PP_FMT_FP32, 1, -2.0, 1, {-INFINITY}, {1}, INFINITY, 1},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (int meth = 0; meth < 2; meth++) {
            const hand_case *h = &cases[i];
            result r = run_ref(h->f, (pp_gemm_ref_method)meth, h->alpha_given, h->alpha, 1, 1, 1,
                               h->k, h->a, h->b, 1);
            int ok = pp_test_same_or_nan(r.c[0], h->want) && (h->want != h->want ? r.e[0] != r.e[0] : 1);
            if (h->exact == 1 || (h->exact == 2 && meth == PP_GEMM_REF_FAST))
                ok = ok && r.e[0] == 0.0;
            if (h->exact == 2 && meth == PP_GEMM_REF_MPFR_PLAIN)  // |c − want| exact in binary64 here
                ok = fabs(r.c[0] - h->want) <= r.e[0];
            if (!ok && bad++ < 10) {
                fprintf(stderr, "FAIL hand case \"%s\" (%s)\n", h->name, meth ? "mpfr-plain" : "fast");
                pp_test_print_double("got  ", r.c[0]);
                pp_test_print_double("err  ", r.e[0]);
                pp_test_print_double("want ", h->want);
            }
            result_free(&r);
        }
    assert_int_equal(bad, 0);
}

// Inexact hand cases, each with the correctly rounded binary64 value (far enough from a
// binary64 midpoint for both methods to find it) and a lower bound on its true error:
//   α = 1/√2 on 1 + 1: √2;  α = 1/√3 on 1 + 1 + 1: √3;  fp32 1 + 2^−149·2^−149 = 1 + 2^−298: 1;
//   fp32 1 + 2^−27·2^−26 + 2^−50·2^−50 = 1 + 2^−53 + 2^−100, just above the binary64 midpoint
//   1 + 2^−53: 1 + 2^−52 (the fast path's third pair of chunks decides the rounding).
// The bound lies between the true error and ulp·(½ + 2^−44) (fast: exactly that).
static void gemm_ref_hand_inexact(void **state)
{
    (void)state;
    static const struct {
        pp_format_id f;
        int alpha_given, k;
        double a[3], b[3], want, gap;
    } cases[] = {
        {PP_FMT_FP16, 0, 2, {1, 1}, {1, 1}, 0x1.6a09e667f3bcdp+0, 0},  // RN(√2)
        {PP_FMT_BF16, 0, 3, {1, 1, 1}, {1, 1, 1}, 0x1.bb67ae8584caap+0, 0},  // RN(√3)
        {PP_FMT_FP32, 1, 2, {1, 0x1p-149}, {1, 0x1p-149}, 1.0, 0x1p-298},
        {PP_FMT_FP32, 1, 3, {1, 0x1p-27, 0x1p-50}, {1, 0x1p-26, 0x1p-50}, 1.0 + 0x1p-52,
         0x1p-53 - 0x1p-100},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (int meth = 0; meth < 2; meth++) {
            result r = run_ref(cases[i].f, (pp_gemm_ref_method)meth, cases[i].alpha_given, 1.0, 1, 1,
                               1, cases[i].k, cases[i].a, cases[i].b, 1);
            int ev;
            frexp(cases[i].want, &ev);
            double cap = ldexp(0.5 + 0x1p-44, ev - 53);  // fast: exactly this; plain: ≤ 2·cap
            int ok = r.c[0] == cases[i].want && r.e[0] >= cases[i].gap && r.e[0] > 0.0 &&
                     (meth ? r.e[0] <= 2.0 * cap : r.e[0] == cap);
            if (!ok && bad++ < 10) {
                fprintf(stderr, "FAIL hand inexact case %zu (%s)\n", i, meth ? "mpfr-plain" : "fast");
                pp_test_print_double("got ", r.c[0]);
                pp_test_print_double("err ", r.e[0]);
                pp_test_print_double("want", cases[i].want);
            }
            result_free(&r);
        }
    assert_int_equal(bad, 0);
}

// ---------------------------------------------------------------------------------------------
// Random and adversarial: both methods against the truth within their bounds, and each other

// Fills one batch-row-major A and B. kind: 0..4 rnd_value profiles for both; 5 mirrored
// cancellation (the second half of each dot product negates the first: exact 0); 6 mirrored with
// one extra tiny term (an exact sum that is tiny next to the terms); 7 fp16/bf16/fp32 values near
// max in A against moderate B.
static void fill_case(pp_test_rng *r, pp_format_id f, int kind, int64_t batch, int64_t m, int64_t n,
                      int64_t k, double *a, double *b)
{
    int pa = kind <= 4 ? kind : kind == 7 ? 2 : 1, pb = kind == 7 ? 0 : pa;
    for (int64_t i = 0; i < batch * m * k; i++)
        a[i] = rnd_value(r, f, pa);
    for (int64_t i = 0; i < batch * k * n; i++)
        b[i] = rnd_value(r, f, pb);
    if (kind != 5 && kind != 6)
        return;
    int64_t h = k / 2;  // mirror l and l + h: a' = −a, b' = b
    for (int64_t bi = 0; bi < batch; bi++) {
        for (int64_t i = 0; i < m; i++)
            for (int64_t l = 0; l < h; l++)
                a[(bi * m + i) * k + l + h] = -a[(bi * m + i) * k + l];
        for (int64_t l = 0; l < h; l++)
            for (int64_t j = 0; j < n; j++)
                b[(bi * k + l + h) * n + j] = b[(bi * k + l) * n + j];
        for (int64_t i = 0; i < m; i++)  // k odd: the last term is the survivor
            if (k % 2)
                a[(bi * m + i) * k + k - 1] = kind == 6 ? rnd_value(r, f, 3) : 0.0;
    }
}

static void gemm_ref_random_vs_truth(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() ^ 11};
    int bad = 0;
    uint64_t trials = pp_test_iters(12);
    const int64_t batch = 2, m = 3, n = 4;
    double a[2 * 3 * 80], b[2 * 80 * 4];
    mpfr_t T;
    mpfr_init2(T, 700);
    for (uint64_t t = 0; t < trials; t++)
        for (int fi = 0; fi < 3; fi++)
            for (int kind = 0; kind < 8; kind++) {
                pp_format_id f = FORMATS[fi];
                int64_t k = 1 + (int64_t)(pp_test_rng_next(&r) % 80);
                if (kind == 6 && k % 2 == 0)
                    k--;
                fill_case(&r, f, kind, batch, m, n, k, a, b);
                int given = (int)(t % 2);
                double alpha = given ? ((pp_test_rng_next(&r) & 1) ? -1.0 : 1.0) * ldexp(1.0 + pp_test_rng_unit(&r), (int)(pp_test_rng_next(&r) % 21) - 10) : 0.0;
                result fast = run_ref(f, PP_GEMM_REF_FAST, given, alpha, batch, m, n, k, a, b, 2);
                result plain = run_ref(f, PP_GEMM_REF_MPFR_PLAIN, given, alpha, batch, m, n, k, a, b, 2);
                for (int64_t o = 0; o < batch * m * n; o++) {
                    int64_t bi = o / (m * n), i = (o / n) % m, j = o % n;
                    const double *arow = a + (bi * m + i) * k, *bcol = b + bi * k * n + j;
                    truth(T, arow, bcol, k, n, given, alpha);
                    int ok_fast = within(fast.c[o], fast.e[o], T);
                    int ok_plain = within(plain.c[o], plain.e[o], T);
                    // the fast bound's documented form: 0, or ulp(c)·(½ + 2^−44) for normal c
                    int form = 1;
                    if (fast.e[o] != 0.0 && isfinite(fast.c[o]) && fabs(fast.c[o]) >= 0x1p-968) {
                        int ev;
                        frexp(fast.c[o], &ev);
                        form = fast.e[o] == ldexp(0.5 + 0x1p-44, ev - 53);
                    }
                    // fast against plain: |c_fast − c_plain| ≤ e_fast + e_plain
                    mpfr_t P;
                    mpfr_init2(P, 64);
                    mpfr_set_d(P, plain.c[o], MPFR_RNDN);
                    int ok_pair = isfinite(plain.c[o]) ? within(fast.c[o], (fast.e[o] + plain.e[o]) * (1 + 0x1p-50), P)
                                                       : pp_test_same_or_nan(fast.c[o], plain.c[o]);
                    mpfr_clear(P);
                    if ((!ok_fast || !ok_plain || !form || !ok_pair) && bad++ < 10) {
                        if (bad == 1)
                            pp_test_report_seed();
                        print_case(!ok_fast ? "fast within its bound of the truth"
                                   : !ok_plain ? "mpfr-plain within its bound of the truth"
                                   : !form ? "fast bound has its documented form"
                                           : "fast and mpfr-plain within the sum of their bounds",
                                   f, o, arow, bcol, k, n);
                        fprintf(stderr, "  kind %d, alpha %s%a\n", kind, given ? "" : "1/sqrt(k) ", alpha);
                        pp_test_print_double("fast ", fast.c[o]);
                        pp_test_print_double("  err", fast.e[o]);
                        pp_test_print_double("plain", plain.c[o]);
                        pp_test_print_double("  err", plain.e[o]);
                        mpfr_fprintf(stderr, "  truth = %.40Rg\n", T);
                    }
                }
                result_free(&fast);
                result_free(&plain);
            }
    mpfr_clear(T);
    assert_int_equal(bad, 0);
}

// Mirrored cancellation exactly: the fast path returns +0 with error 0; the plain path is within
// its bound of 0.
static void gemm_ref_mirrored_is_exact_zero(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() ^ 12};
    int bad = 0;
    double a[2 * 3 * 64], b[2 * 64 * 4];
    for (int fi = 0; fi < 3; fi++) {
        fill_case(&r, FORMATS[fi], 5, 2, 3, 4, 64, a, b);
        result fast = run_ref(FORMATS[fi], PP_GEMM_REF_FAST, 0, 0.0, 2, 3, 4, 64, a, b, 1);
        for (int o = 0; o < 24; o++)
            if (!(pp_test_same_or_nan(fast.c[o], 0.0) && fast.e[o] == 0.0) && bad++ < 10) {
                print_case("mirrored sum is exactly +0", FORMATS[fi], o, a, b, 64, 4);
                pp_test_print_double("got", fast.c[o]);
                pp_test_print_double("err", fast.e[o]);
            }
        result_free(&fast);
    }
    assert_int_equal(bad, 0);
}

// α = 1/√k for awkward k (odd, large, non-squares) on a single long dot product.
static void gemm_ref_default_alpha_many_k(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() ^ 13};
    const int64_t ks[] = {1, 2, 3, 5, 7, 10, 127, 1000, 4097, 65537};
    int bad = 0;
    mpfr_t T;
    mpfr_init2(T, 700);
    double *a = malloc(sizeof(double) * 65537), *b = malloc(sizeof(double) * 65537);
    assert_true(a && b);
    size_t nk = pp_test_iters(10) >= 10 ? 10 : 8;
    for (size_t ki = 0; ki < nk; ki++) {
        int64_t k = ks[ki];
        for (int64_t l = 0; l < k; l++) {
            a[l] = rnd_value(&r, PP_FMT_BF16, 0);
            b[l] = rnd_value(&r, PP_FMT_BF16, 0);
        }
        truth(T, a, b, k, 1, 0, 0.0);
        for (int meth = 0; meth < 2; meth++) {
            result res = run_ref(PP_FMT_BF16, (pp_gemm_ref_method)meth, 0, 0.0, 1, 1, 1, k, a, b, 1);
            if (!within(res.c[0], res.e[0], T) && bad++ < 10) {
                fprintf(stderr, "FAIL default alpha, k = %lld (%s)\n", (long long)k, meth ? "plain" : "fast");
                pp_test_print_double("got", res.c[0]);
                pp_test_print_double("err", res.e[0]);
                mpfr_fprintf(stderr, "  truth = %.40Rg\n", T);
            }
            result_free(&res);
        }
    }
    free(a);
    free(b);
    mpfr_clear(T);
    assert_int_equal(bad, 0);
}

// ---------------------------------------------------------------------------------------------
// Threads and input checks

static void gemm_ref_thread_count_invariance(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() ^ 14};
    const int64_t batch = 3, m = 9, n = 37, k = 21;  // n crosses the 32-column tile
    double a[3 * 9 * 21], b[3 * 21 * 37];
    int bad = 0;
    for (int fi = 0; fi < 3; fi++)
        for (int meth = 0; meth < 2; meth++) {
            fill_case(&r, FORMATS[fi], 1, batch, m, n, k, a, b);
            result r1 = run_ref(FORMATS[fi], (pp_gemm_ref_method)meth, 0, 0.0, batch, m, n, k, a, b, 1);
            result r3 = run_ref(FORMATS[fi], (pp_gemm_ref_method)meth, 0, 0.0, batch, m, n, k, a, b, 3);
            for (int64_t o = 0; o < batch * m * n; o++)
                if ((!pp_test_same_or_nan(r1.c[o], r3.c[o]) || !pp_test_same_or_nan(r1.e[o], r3.e[o])) && bad++ < 10) {
                    fprintf(stderr, "FAIL 3 threads = 1 thread: %s %s output %lld\n",
                            pp_format_get(FORMATS[fi]).name, meth ? "plain" : "fast", (long long)o);
                    pp_test_print_double("1 thread ", r1.c[o]);
                    pp_test_print_double("3 threads", r3.c[o]);
                }
            result_free(&r1);
            result_free(&r3);
        }
    assert_int_equal(bad, 0);
}

static void gemm_ref_rejects_bad_input(void **state)
{
    (void)state;
    double a[4] = {1, 2, 3, 4}, b[4] = {1, 1, 1, 1}, c[4], e[4];
    pp_error err = {0};
    pp_gemm_ref_opts o = {PP_FMT_FP64, 0, 0.0, PP_GEMM_REF_FAST};
    assert_int_equal(pp_gemm_ref(&o, 1, 2, 2, 2, a, b, c, e, 1, &err), PP_ERR_INPUT);
    o.format = PP_FMT_FP16;
    assert_int_equal(pp_gemm_ref(&o, 1, 2, 2, 0, a, b, c, e, 1, &err), PP_ERR_INPUT);  // 1/√0
    o.alpha_given = 1;
    o.alpha = INFINITY;
    assert_int_equal(pp_gemm_ref(&o, 1, 2, 2, 2, a, b, c, e, 1, &err), PP_ERR_INPUT);
    o.alpha = 2.0;
    assert_int_equal(pp_gemm_ref(&o, 1, -2, 2, 2, a, b, c, e, 1, &err), PP_ERR_INPUT);
    b[2] = 0x1p-30;  // below fp16's subnormals: not an fp16 value
    assert_int_equal(pp_gemm_ref(&o, 1, 2, 2, 2, a, b, c, e, 1, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "B[2]"));
    b[2] = 1.0;
    assert_int_equal(pp_gemm_ref(&o, 1, 2, 2, 0, a, b, c, NULL, 1, &err), PP_OK);  // k = 0: zeros
    assert_true(pp_test_same_or_nan(c[0], 0.0) && pp_test_same_or_nan(c[3], 0.0));
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gemm_ref_hand_cases),
        cmocka_unit_test(gemm_ref_hand_inexact),
        cmocka_unit_test(gemm_ref_random_vs_truth),
        cmocka_unit_test(gemm_ref_mirrored_is_exact_zero),
        cmocka_unit_test(gemm_ref_default_alpha_many_k),
        cmocka_unit_test(gemm_ref_thread_count_invariance),
        cmocka_unit_test(gemm_ref_rejects_bad_input),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    mpfr_free_cache();
    return rc;
}
