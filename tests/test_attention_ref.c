// test_attention_ref.c — the attention reference (reference/attention_ref*.c): fast against
// mpfr-plain (128 bits) and both against mpfr-plain at 256 bits, element by element within the sum
// of their own reported bounds, on random shapes and adversarial inputs. Run: build/rel/tests/test_attention_ref
#include <math.h>

#include "test_util.h"

#include "attention_ref.h"
#include "attention_ref_fast.h"  // the fast exp, tested alone
#include "attention_ref_lanes.h"  // PP_ATTN_ACC_TERMS
#include "format.h"

// ---------------------------------------------------------------------------------------------
// Helpers

// A value of f near ±scale·[0, 2) (random sign), rounded with pp_round.
static double rnd_val(pp_test_rng *r, pp_format_id f, double scale)
{
    double x = scale * 2.0 * (pp_test_rng_unit(r) - 0.5) * 2.0;
    return pp_round(f, x, PP_RND_NE, 0);
}

typedef struct attn_case {
    pp_attn_ref_opts o;
    double *q, *k, *v, *dout;
} attn_case;

typedef struct attn_result {
    double *t[5];  // out, lse, dq, dk, dv
    double *e[5];  // their element bounds
    pp_attn_ref_bounds b;
} attn_result;

static const char *const NAMES[5] = {"out", "lse", "dq", "dk", "dv"};

static int64_t nq_of(const pp_attn_ref_opts *o) { return o->b * o->s_q * o->h * o->d; }
static int64_t nk_of(const pp_attn_ref_opts *o) { return o->b * o->s_kv * o->h_kv * o->d; }
static int64_t nl_of(const pp_attn_ref_opts *o) { return o->b * o->h * o->s_q; }

static int64_t count_of(const pp_attn_ref_opts *o, int t)
{
    return t == 0 || t == 2 ? nq_of(o) : t == 1 ? nl_of(o) : nk_of(o);
}

static void case_alloc(attn_case *c)
{
    size_t nq = (size_t)nq_of(&c->o) + 1, nk = (size_t)nk_of(&c->o) + 1;
    c->q = calloc(nq, sizeof(double));
    c->dout = calloc(nq, sizeof(double));
    c->k = calloc(nk, sizeof(double));
    c->v = calloc(nk, sizeof(double));
    assert_non_null(c->q);
    assert_non_null(c->dout);
    assert_non_null(c->k);
    assert_non_null(c->v);
}

static void case_free(attn_case *c)
{
    free(c->q);
    free(c->k);
    free(c->v);
    free(c->dout);
}

static void case_fill(attn_case *c, pp_test_rng *r, pp_format_id f, double scale)
{
    for (int64_t i = 0; i < nq_of(&c->o); i++) {
        c->q[i] = rnd_val(r, f, scale);
        c->dout[i] = rnd_val(r, f, 1.0);
    }
    for (int64_t i = 0; i < nk_of(&c->o); i++) {
        c->k[i] = rnd_val(r, f, scale);
        c->v[i] = rnd_val(r, f, 1.0);
    }
}

static void run_ref(const attn_case *c, pp_attn_ref_method m, int prec, int threads,
                    attn_result *res)
{
    pp_attn_ref_opts o = c->o;
    o.method = m;
    o.prec_bits = prec;
    o.threads = threads;
    for (int t = 0; t < 5; t++) {
        res->t[t] = calloc((size_t)count_of(&o, t) + 1, sizeof(double));
        res->e[t] = calloc((size_t)count_of(&o, t) + 1, sizeof(double));
        assert_non_null(res->t[t]);
        assert_non_null(res->e[t]);
    }
    pp_attn_ref_elem_bounds eb = {res->e[0], res->e[1], res->e[2], res->e[3], res->e[4]};
    pp_error err = {0};
    int rc = pp_attention_ref_ex(&o, c->q, c->k, c->v, c->dout, res->t[0], res->t[1], res->t[2],
                                 res->t[3], res->t[4], &res->b, &eb, &err);
    if (rc != PP_OK)
        fprintf(stderr, "pp_attention_ref: %s\n", err.msg);
    assert_int_equal(rc, PP_OK);
}

static void result_free(attn_result *r)
{
    for (int t = 0; t < 5; t++) {
        free(r->t[t]);
        free(r->e[t]);
    }
}

static void print_case(const attn_case *c)
{
    const pp_attn_ref_opts *o = &c->o;
    fprintf(stderr, "  case b %lld s_q %lld s_kv %lld h %lld h_kv %lld d %lld causal %d backward %d\n",
            (long long)o->b, (long long)o->s_q, (long long)o->s_kv, (long long)o->h,
            (long long)o->h_kv, (long long)o->d, o->causal, o->backward);
    pp_test_report_seed();
}

// Every element of x and y (two references of the same case) within ex + ey of each other — the
// tolerance is the sum of the two proven bounds, nothing else — and each per-tensor bound at least
// its largest element bound. Same NaN pattern. Returns the number of failures printed (≤ 10).
static int agree(const attn_case *c, const char *what, const attn_result *x, const attn_result *y)
{
    int fails = 0;
    int ntens = c->o.backward ? 5 : 2;
    for (int t = 0; t < ntens; t++) {
        double bx = ((const double *)&x->b)[t], by = ((const double *)&y->b)[t];
        for (int64_t i = 0; i < count_of(&c->o, t) && fails < 10; i++) {
            double a = x->t[t][i], b = y->t[t][i], ea = x->e[t][i], eb = y->e[t][i];
            int ok;
            if (a != a || b != b)
                ok = (a != a) == (b != b);
            else if (isinf(a) || isinf(b))
                ok = a == b;
            else
                ok = fabs(a - b) <= ea + eb && ea <= bx && eb <= by;  // bounds from the proofs
            if (!ok) {
                fprintf(stderr, "FAIL: %s: %s[%lld] outside the bounds\n", what, NAMES[t],
                        (long long)i);
                pp_test_print_double("x", a);
                pp_test_print_double("y", b);
                pp_test_print_double("bound x", ea);
                pp_test_print_double("bound y", eb);
                pp_test_print_double("|x - y|", fabs(a - b));
                print_case(c);
                fails++;
            }
        }
    }
    return fails;
}

// The fast bounds are not vacuous: before the final rounding, an out element's bound is at most
// 2^−60·max|v| (its scale Σ_j P_j|v_j| is at most max|v|, PROOFS.md#attention "What this
// proves"), a dv element's at most 2^−60·g·s_q·max|dout|.
static int not_vacuous(const attn_case *c, const attn_result *f)
{
    double vmax = 0.0, omax = 0.0;
    for (int64_t i = 0; i < nk_of(&c->o); i++)
        vmax = fmax(vmax, fabs(c->v[i]));
    for (int64_t i = 0; i < nq_of(&c->o); i++)
        omax = fmax(omax, fabs(c->dout[i]));
    double lim[5] = {0x1p-60 * vmax, 0, 0, 0, 0x1p-60 * (double)(c->o.h / c->o.h_kv * c->o.s_q) * omax};
    int fails = 0;
    for (int t = 0; t < 5; t += 4) {
        if (t == 4 && !c->o.backward)
            break;
        for (int64_t i = 0; i < count_of(&c->o, t) && fails < 10; i++) {
            double x = f->t[t][i], hu = 0.0;
            if (x != 0.0) {
                int e;
                frexp(x, &e);
                hu = ldexp(1.0, e - 54);
            }
            if (!(f->e[t][i] - hu <= lim[t] + 0x1p-1000)) {
                fprintf(stderr, "FAIL: bound too large: %s[%lld]\n", NAMES[t], (long long)i);
                pp_test_print_double("bound", f->e[t][i]);
                pp_test_print_double("limit", lim[t]);
                print_case(c);
                fails++;
            }
        }
    }
    return fails;
}

// fast, plain-128 and plain-256 on one case: pairwise agreement within the bounds, and the fast
// result independent of the thread count (bit for bit, values and bounds).
static void check_case(const attn_case *c, int with_truth)
{
    attn_result f, p, t, f3;
    run_ref(c, PP_ATTN_REF_FAST, 0, 1, &f);
    run_ref(c, PP_ATTN_REF_MPFR_PLAIN, 0, 2, &p);
    int fails = agree(c, "fast vs plain", &f, &p) + not_vacuous(c, &f);
    if (f.b.plain_tasks != 0) {  // finite inputs of moderate size: the fast path must do it all
        fprintf(stderr, "FAIL: the fast path handed %lld tasks to mpfr-plain\n",
                (long long)f.b.plain_tasks);
        print_case(c);
        fails++;
    }
    if (with_truth) {
        run_ref(c, PP_ATTN_REF_MPFR_PLAIN, 256, 2, &t);
        fails += agree(c, "fast vs plain-256", &f, &t);
        fails += agree(c, "plain vs plain-256", &p, &t);
        result_free(&t);
    }
    run_ref(c, PP_ATTN_REF_FAST, 0, 3, &f3);
    for (int tt = 0; tt < 5 && !fails; tt++)
        if (memcmp(f.t[tt], f3.t[tt], sizeof(double) * (size_t)count_of(&c->o, tt)) ||
            memcmp(f.e[tt], f3.e[tt], sizeof(double) * (size_t)count_of(&c->o, tt))) {
            fprintf(stderr, "FAIL: thread invariance: %s differs between 1 and 3 threads\n",
                    NAMES[tt]);
            print_case(c);
            fails++;
        }
    result_free(&f);
    result_free(&p);
    result_free(&f3);
    assert_int_equal(fails, 0);
}

// ---------------------------------------------------------------------------------------------
// Random shapes

static void attention_ref_random_shapes(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed()};
    static const pp_format_id F[3] = {PP_FMT_FP16, PP_FMT_BF16, PP_FMT_FP32};
    static const int64_t D[3] = {16, 64, 128};
    uint64_t n = pp_test_iters(50);
    for (uint64_t it = 0; it < n; it++) {
        attn_case c;
        memset(&c, 0, sizeof c);
        c.o.d = D[pp_test_rng_next(&r) % 3];
        c.o.b = 1 + (int64_t)(pp_test_rng_next(&r) % 2);
        c.o.h_kv = 1 + (int64_t)(pp_test_rng_next(&r) % 2);
        c.o.h = c.o.h_kv * (1 + (int64_t)(pp_test_rng_next(&r) % 2));  // GQA when h > h_kv
        // s up to 64, the work kept small enough for < 1 s: b·h·s_q·s_kv·d ≤ 2^15
        do {
            c.o.s_q = 1 + (int64_t)(pp_test_rng_next(&r) % 64);
            c.o.s_kv = 1 + (int64_t)(pp_test_rng_next(&r) % 64);
        } while (c.o.b * c.o.h * c.o.s_q * c.o.s_kv * c.o.d > (1 << 15));
        c.o.causal = (int)(pp_test_rng_next(&r) % 2);
        c.o.backward = it % 4 != 3;
        if (it % 5 == 4) {
            c.o.sigma_given = 1;
            c.o.sigma = -0.3;
        }
        case_alloc(&c);
        case_fill(&c, &r, F[it % 3], it % 2 ? 1.0 : 3.0);
        check_case(&c, it % 10 == 0);
        case_free(&c);
    }
}

// ---------------------------------------------------------------------------------------------
// Adversarial inputs

static attn_case make_case(int64_t b, int64_t s_q, int64_t s_kv, int64_t h, int64_t h_kv,
                           int64_t d, int causal)
{
    attn_case c;
    memset(&c, 0, sizeof c);
    c.o.b = b;
    c.o.s_q = s_q;
    c.o.s_kv = s_kv;
    c.o.h = h;
    c.o.h_kv = h_kv;
    c.o.d = d;
    c.o.causal = causal;
    c.o.backward = 1;
    case_alloc(&c);
    return c;
}

// |S| ~ 1e4: fp16 q, k near ±60 (fp16 would overflow exp long before; 60·60·16/4 ≈ 1.4e4).
static void attention_ref_huge_scores(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() + 1};
    attn_case c = make_case(1, 12, 12, 2, 1, 16, 0);
    case_fill(&c, &r, PP_FMT_FP16, 30.0);
    check_case(&c, 1);
    case_free(&c);
}

// Rows where every probability but one underflows (binary64 too): one key 1000 above the rest.
static void attention_ref_one_survivor(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() + 2};
    attn_case c = make_case(1, 8, 8, 1, 1, 16, 0);
    case_fill(&c, &r, PP_FMT_BF16, 0.1);
    for (int64_t l = 0; l < 16; l++) {
        c.q[l] = 16.0;                           // row 0
        c.k[3 * 16 + l] = l % 2 ? 16.0 : 15.75;  // key 3: S ≈ 1000 above the others
    }
    check_case(&c, 1);
    case_free(&c);
}

// Heavy cancellation in P·V: equal scores (k rows equal) and v alternating ±(1 + tiny), so out is
// tiny against Σ P|v|; dout alternating too, so dP − D cancels.
static void attention_ref_alternating_v(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() + 3};
    attn_case c = make_case(1, 6, 32, 1, 1, 16, 1);
    case_fill(&c, &r, PP_FMT_FP32, 1.0);
    for (int64_t j = 0; j < 32; j++)
        for (int64_t l = 0; l < 16; l++) {
            c.k[j * 16 + l] = c.k[l];
            c.v[j * 16 + l] = (j % 2 ? -1.0 : 1.0) * (1.0 + ldexp((double)(j + l), -23));
        }
    for (int64_t i = 0; i < 6 * 16; i++)
        c.dout[i] = i % 2 ? -1.0 : 1.0;
    check_case(&c, 1);
    case_free(&c);
}

// Outlier columns ("massive activations"): a few elements of v and dout 2^20 times the rest, of
// k 2^6 times, so that the anchored sums' scale (a column's largest |y| times Σ|x|) is far above
// most elements' own terms: the bounds still hold (against mpfr-plain at 128 and 256 bits), GQA.
static void attention_ref_outlier_columns(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() + 13};
    attn_case c = make_case(1, 48, 48, 2, 1, 24, 1);
    case_fill(&c, &r, PP_FMT_FP32, 1.0);
    int64_t nq = 48 * 2 * 24, nk = 48 * 24;
    for (int64_t i = 0; i < nk; i++) {
        if (pp_test_rng_next(&r) % 32 == 0)
            c.v[i] = ldexp(c.v[i], 20);
        if (pp_test_rng_next(&r) % 32 == 0)
            c.k[i] = ldexp(c.k[i], 6);
    }
    for (int64_t i = 0; i < nq; i++)
        if (pp_test_rng_next(&r) % 32 == 0)
            c.dout[i] = ldexp(c.dout[i], 20);
    check_case(&c, 1);
    case_free(&c);
}

// d = 1, s = 1, and s_q ≠ s_kv under the causal mask (rows that see no key: s_q > s_kv).
static void attention_ref_small_shapes(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() + 4};
    static const int64_t S[][3] = {{1, 1, 1}, {1, 1, 16}, {5, 3, 1}, {3, 7, 16}, {9, 4, 16},
                                   {2, 2, 1}, {1, 6, 64}};
    for (size_t i = 0; i < sizeof S / sizeof *S; i++) {
        attn_case c = make_case(1, S[i][0], S[i][1], 2, 2, S[i][2], 1);
        case_fill(&c, &r, PP_FMT_BF16, 1.0);
        check_case(&c, 1);
        case_free(&c);
    }
}

// A row that sees no key: out 0, lse −Inf, dq 0, all with bound 0; s_q > s_kv causal.
static void attention_ref_no_key_rows(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() + 5};
    attn_case c = make_case(1, 5, 2, 1, 1, 4, 1);
    case_fill(&c, &r, PP_FMT_FP16, 1.0);
    for (int m = 0; m < 2; m++) {
        attn_result res;
        run_ref(&c, m ? PP_ATTN_REF_MPFR_PLAIN : PP_ATTN_REF_FAST, 0, 1, &res);
        for (int64_t i = 0; i < 3; i++) {  // rows 0..2 see keys j ≤ i − 3: none
            assert_true(isinf(res.t[1][i]) && res.t[1][i] < 0);
            for (int64_t l = 0; l < 4; l++) {
                assert_true(res.t[0][i * 4 + l] == 0.0 && res.e[0][i * 4 + l] == 0.0);
                assert_true(res.t[2][i * 4 + l] == 0.0 && res.e[2][i * 4 + l] == 0.0);
            }
        }
        assert_true(isfinite(res.t[1][3]) && isfinite(res.t[1][4]));
        result_free(&res);
    }
    case_free(&c);
}

// One key with the exact value: out = v, lse = S, dq = dk = 0 exactly (P = 1, dS = 0), dv = dout.
static void attention_ref_single_key_exact(void **state)
{
    (void)state;
    attn_case c = make_case(1, 1, 1, 1, 1, 4, 0);
    for (int l = 0; l < 4; l++) {
        c.q[l] = 1.0;
        c.k[l] = 1.0;
        c.v[l] = l + 0.5;
        c.dout[l] = 2.0 - l;
    }
    for (int m = 0; m < 2; m++) {
        attn_result res;
        run_ref(&c, m ? PP_ATTN_REF_MPFR_PLAIN : PP_ATTN_REF_FAST, 0, 1, &res);
        assert_true(fabs(res.t[1][0] - 2.0) <= res.e[1][0]);  // lse = σ·4 = 2
        for (int l = 0; l < 4; l++) {
            assert_true(fabs(res.t[0][l] - (l + 0.5)) <= res.e[0][l]);
            assert_true(fabs(res.t[2][l]) <= res.e[2][l]);
            assert_true(fabs(res.t[3][l]) <= res.e[3][l]);
            assert_true(fabs(res.t[4][l] - (2.0 - l)) <= res.e[4][l]);
        }
        result_free(&res);
    }
    case_free(&c);
}

// Non-finite inputs: no crash; a NaN in key 2 makes the rows that see it NaN, the others finite.
static void attention_ref_nan_input(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() + 6};
    attn_case c = make_case(1, 4, 4, 1, 1, 4, 1);
    case_fill(&c, &r, PP_FMT_FP16, 1.0);
    c.k[2 * 4 + 1] = NAN;
    for (int m = 0; m < 2; m++) {
        attn_result res;
        run_ref(&c, m ? PP_ATTN_REF_MPFR_PLAIN : PP_ATTN_REF_FAST, 0, 1, &res);
        for (int64_t i = 0; i < 4; i++) {
            int sees = i >= 2;
            assert_int_equal(isnan(res.t[1][i]) != 0, sees);
            assert_int_equal(isnan(res.t[0][i * 4]) != 0, sees);
            assert_int_equal(isnan(res.e[0][i * 4]) != 0, sees);
        }
        result_free(&res);
    }
    case_free(&c);
}

// The fast path's exp (PROOFS.md#attention, "exp"): |Ê − exp(x)| ≤ 2^−81·exp(x) for
// x = (Sh − M) + Sl ∈ [−500, 0], against MPFR at 300 bits (x formed exactly: |Sh|, |M| < 2^40).
static void attention_ref_fast_exp_accuracy(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() + 7};
    pp_attn_job_ *J = calloc(1, sizeof *J);
    assert_non_null(J);
    pp_attn_exp_init_(J);
    mpfr_t x, e, t;
    mpfr_inits2(300, x, e, t, (mpfr_ptr)0);
    uint64_t n = pp_test_iters(20000);
    int fails = 0;
    double worst = 0.0;
    for (uint64_t it = 0; it < n && fails < 10; it++) {
        double M = ldexp(pp_test_rng_unit(&r) - 0.5, (int)(pp_test_rng_next(&r) % 40));
        double xs = it % 7 == 0 ? 0.0 : it % 7 == 1 ? -500.0 * pp_test_rng_unit(&r) * 1e-3 : -500.0 * pp_test_rng_unit(&r);
        if (it % 11 == 0)  // next to a multiple of ln2/256
            xs = -(double)(pp_test_rng_next(&r) % 184000) * 0.0027076061740622863 - ldexp(pp_test_rng_unit(&r), -40);
        double Sh = M + xs;  // rounded: Sh − M is whatever it is, in [−500, 0] after the check
        if (Sh - M > 0.0 || Sh - M < -500.0)
            continue;
        double Sl = ldexp(pp_test_rng_unit(&r) - 0.5, -53) * fabs(Sh);  // |Sl| ≤ u|Sh|
        double eh, el;
        pp_attn_fast_exp_(J, Sh, M, Sl, &eh, &el);
        mpfr_set_d(x, Sh, MPFR_RNDN);
        mpfr_sub_d(x, x, M, MPFR_RNDN);  // exact at 300 bits
        mpfr_add_d(x, x, Sl, MPFR_RNDN);  // exact
        mpfr_exp(e, x, MPFR_RNDN);        // ±2^−300
        mpfr_set_d(t, eh, MPFR_RNDN);
        mpfr_add_d(t, t, el, MPFR_RNDN);  // exact
        mpfr_sub(t, t, e, MPFR_RNDN);
        mpfr_div(t, t, e, MPFR_RNDN);
        double rel = fabs(mpfr_get_d(t, MPFR_RNDA));
        worst = rel > worst ? rel : worst;
        if (!(rel <= 0x1p-81) || !(fabs(el) <= 0x1p-53 * fabs(eh))) {
            fprintf(stderr, "FAIL: fast exp: relative error %g > 2^-81 (or unnormalised)\n", rel);
            pp_test_print_double("Sh", Sh);
            pp_test_print_double("M", M);
            pp_test_print_double("Sl", Sl);
            pp_test_print_double("eh", eh);
            pp_test_print_double("el", el);
            pp_test_report_seed();
            fails++;
        }
    }
    mpfr_clears(x, e, t, (mpfr_ptr)0);
    mpfr_free_cache();
    free(J);
    assert_int_equal(fails, 0);
    assert_true(worst > 0.0);  // the comparison saw real errors
}

// A double-double (hi, lo) with |lo| ≤ u|hi|, hi of magnitude ~2^e.
static void rnd_dd(pp_test_rng *r, int e, double *hi, double *lo)
{
    *hi = ldexp(1.0 + pp_test_rng_unit(r), e) * (pp_test_rng_next(r) & 1 ? -1.0 : 1.0);
    double l = ldexp(pp_test_rng_unit(r) - 0.5, e - 53);
    *lo = pp_test_rng_next(r) % 4 == 0 ? 0.0 : l;
    double s = *hi + *lo;  // renormalise (exact: TwoSum)
    double z = s - *hi;
    *lo = (*hi - (s - z)) + (*lo - z);
    *hi = s;
}

// dd_mul, dd_add and the anchored accumulation within their stated bounds, against MPFR at 3000 bits
// (exact for these operands): cancellation (dd_add of near-opposites, y of alternating sign),
// tiny low parts, and up to 3000 accumulated terms.
static void attention_ref_building_blocks(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() + 8};
    mpfr_t a, b, t, s;
    mpfr_inits2(3000, a, b, t, s, (mpfr_ptr)0);
    int fails = 0;
    uint64_t n = pp_test_iters(3000);
    for (uint64_t it = 0; it < n && fails < 10; it++) {
        double xh, xl, yh, yl, zh, zl;
        rnd_dd(&r, (int)(pp_test_rng_next(&r) % 200) - 100, &xh, &xl);
        rnd_dd(&r, (int)(pp_test_rng_next(&r) % 200) - 100, &yh, &yl);
        if (it % 3 == 0) {  // near-cancellation for dd_add
            yh = -xh * (1.0 + ldexp(pp_test_rng_unit(&r), -30 - (int)(pp_test_rng_next(&r) % 20)));
            yl = ldexp(pp_test_rng_unit(&r) - 0.5, -53) * fabs(yh);
        }
        for (int op = 0; op < 2; op++) {
            mpfr_set_d(a, xh, MPFR_RNDN);
            mpfr_add_d(a, a, xl, MPFR_RNDN);
            mpfr_set_d(b, yh, MPFR_RNDN);
            mpfr_add_d(b, b, yl, MPFR_RNDN);
            double bound;
            if (op == 0) {
                pp_attn_dd_mul_(xh, xl, yh, yl, &zh, &zl);
                mpfr_mul(a, a, b, MPFR_RNDN);
                bound = 9.1 * 0x1p-106 * fabs(xh * yh);  // PROOFS.md#attention "dd_mul"
            } else {
                pp_attn_dd_add_(xh, xl, yh, yl, &zh, &zl);
                mpfr_add(a, a, b, MPFR_RNDN);
                bound = 3.02 * 0x1p-106 * (fabs(xh) + fabs(yh));  // "dd_add"
            }
            mpfr_set_d(t, zh, MPFR_RNDN);
            mpfr_add_d(t, t, zl, MPFR_RNDN);
            mpfr_sub(t, t, a, MPFR_RNDN);
            if (mpfr_cmpabs_ui(t, 0) != 0 && !(fabs(mpfr_get_d(t, MPFR_RNDA)) <= bound)) {
                fprintf(stderr, "FAIL: %s outside its bound\n", op ? "dd_add" : "dd_mul");
                pp_test_print_double("xh", xh);
                pp_test_print_double("xl", xl);
                pp_test_print_double("yh", yh);
                pp_test_print_double("yl", yl);
                pp_test_report_seed();
                fails++;
            }
        }
    }
    // Anchored accumulation: m terms x_k·y_k into one (H, lo) from its anchor 1.5·p·ypow, p the
    // scale of Σ|xh| — all at once, or in four stages of growing multipliers, each stage's terms
    // after the anchor moved to the scale of the terms so far (rebase) — within its bound
    // acc_coef(N)·W + acc_anchor_coef(N)·p·ypow + m·2^−1074, N = m + moves + 1. Every other run
    // cancels: each term followed by its mirror, the exact sum a few low parts.
    enum { M_MAX = 3000 };
    double *XH = malloc(M_MAX * sizeof(double)), *XL = malloc(M_MAX * sizeof(double));
    double *Y = malloc(M_MAX * sizeof(double));
    assert_true(XH && XL && Y);
    int moved = 0;
    for (int rep = 0; rep < 40 && fails < 10; rep++) {
        int m = rep % 20 < 10 ? 1 + (rep % 20) * 30 : M_MAX, stages = rep < 20 ? 1 : 4;
        int mirror = rep % 2;
        double ymax = 0.0, W = 0.0;
        mpfr_set_zero(s, 1);
        for (int kk = 0; kk < m; kk++) {
            if (mirror && kk % 2) {
                XH[kk] = -XH[kk - 1], XL[kk] = -XL[kk - 1] * (kk % 4 == 1 ? 1.0 : 0.5), Y[kk] = Y[kk - 1];
            } else {
                int grow = stages == 4 ? 6 * (4 * kk / m) : 0;  // each stage's multipliers 2^6 larger
                rnd_dd(&r, grow - (int)(pp_test_rng_next(&r) % 40), &XH[kk], &XL[kk]);
                if (rep % 3 == 1)
                    XL[kk] = ldexp(XL[kk], -(int)(pp_test_rng_next(&r) % 700));  // tiny low parts
                Y[kk] = pp_round(PP_FMT_FP32, (kk % 2 ? -1.0 : 1.0) * (1.0 + pp_test_rng_unit(&r)) *
                                                  ldexp(1.0, (int)(pp_test_rng_next(&r) % 20) - 10), PP_RND_NE, 0);
            }
            ymax = fabs(Y[kk]) > ymax ? fabs(Y[kk]) : ymax;
            W += fabs(XH[kk] * Y[kk]);
            mpfr_set_d(t, XH[kk], MPFR_RNDN);
            mpfr_add_d(t, t, XL[kk], MPFR_RNDN);
            mpfr_mul_d(t, t, Y[kk], MPFR_RNDN);
            mpfr_add(s, s, t, MPFR_RNDN);
        }
        double ypow = pp_attn_acc_ypow_(ymax), H = 0.0, lo = 0.0, p = 0.0, X = 0.0;
        int moves = 0;
        for (int st = 0; st < stages; st++) {
            int k0 = m * st / stages, k1 = m * (st + 1) / stages;
            for (int kk = k0; kk < k1; kk++)
                X += fabs(XH[kk]);
            double p1 = pp_attn_acc_scale_(X);
            if (p == 0.0) {
                H = 1.5 * p1 * ypow, lo = 0.0;
            } else if (p1 > p) {
                pp_attn_acc_rebase_elem_(&H, &lo, 1.5 * p * ypow, 1.5 * p1 * ypow);
                moves++;
            }
            p = p1 > p ? p1 : p;
            for (int kk = k0; kk < k1; kk += PP_ATTN_ACC_TERMS) {
                int nt = k1 - kk < PP_ATTN_ACC_TERMS ? k1 - kk : PP_ATTN_ACC_TERMS;
                const double *yp[PP_ATTN_ACC_TERMS];
                for (int q = 0; q < nt; q++)
                    yp[q] = &Y[kk + q];
                pp_attn_acc_multi_(&H, &lo, 1, nt, yp, XH + kk, XL + kk);
            }
        }
        moved += moves;
        int64_t N = m + moves + 1;
        double bound = pp_attn_acc_coef_(N) * W * (1.0 + 0x1p-20) + pp_attn_acc_anchor_coef_(N) * p * ypow +
                       m * 0x1p-1074;
        mpfr_set_d(t, H - 1.5 * p * ypow, MPFR_RNDN);  // exact
        mpfr_add_d(t, t, lo, MPFR_RNDN);
        mpfr_sub(t, t, s, MPFR_RNDN);
        if (!(fabs(mpfr_get_d(t, MPFR_RNDA)) <= bound)) {
            fprintf(stderr, "FAIL: anchored accumulation of %d terms (%d stages, %d moves) outside its bound\n",
                    m, stages, moves);
            pp_test_print_double("error", mpfr_get_d(t, MPFR_RNDA));
            pp_test_print_double("bound", bound);
            pp_test_report_seed();
            fails++;
        }
    }
    assert_true(moved > 0);  // the staged runs moved their anchors
    // Anchored dot: x·y_m for four keys of binary32 values (d up to 3000), from the anchor of
    // X = Σ_l |x_l|·max_m |y_ml|, within d²·p·u²(1 + 2^−19); keys 2 and 3 cancel (y3 = −y2 but
    // for a few elements), exponents over ±60.
    for (int rep = 0; rep < 40 && fails < 10; rep++) {
        int64_t d = rep < 20 ? 1 + rep * 7 : M_MAX;
        double *yk[4] = {Y, XH, XL, malloc((size_t)d * sizeof(double))};
        double *x = malloc((size_t)d * sizeof(double));
        assert_true(yk[3] && x);
        double X = 0.0;
        for (int64_t l = 0; l < d; l++) {
            int sc = (int)(pp_test_rng_next(&r) % 120) - 60;
            x[l] = pp_round(PP_FMT_FP32, (pp_test_rng_unit(&r) - 0.5) * ldexp(1.0, sc / 2), PP_RND_NE, 0);
            double km = 0.0;
            for (int m = 0; m < 4; m++) {
                yk[m][l] = m == 3 && pp_test_rng_next(&r) % 64 ? -yk[2][l]
                                                                 : pp_round(PP_FMT_FP32, (pp_test_rng_unit(&r) - 0.5) *
                                                                                             ldexp(1.0, sc / 2), PP_RND_NE, 0);
                km = fabs(yk[m][l]) > km ? fabs(yk[m][l]) : km;
            }
            X += fabs(x[l]) * km;
        }
        double p = pp_attn_acc_scale_(X), h[4], c[4];
        const double *yy[4] = {yk[0], yk[1], yk[2], yk[3]};
        pp_attn_dotx4_(x, yy, d, 1.5 * p, h, c);
        for (int m = 0; m < 4; m++) {
            mpfr_set_zero(s, 1);
            for (int64_t l = 0; l < d; l++) {
                mpfr_set_d(t, x[l], MPFR_RNDN);
                mpfr_mul_d(t, t, yk[m][l], MPFR_RNDN);  // exact
                mpfr_add(s, s, t, MPFR_RNDN);           // exact at 3000 bits
            }
            mpfr_set_d(t, h[m], MPFR_RNDN);
            mpfr_add_d(t, t, c[m], MPFR_RNDN);
            mpfr_sub(t, t, s, MPFR_RNDN);
            double bound = (double)d * (double)d * p * 0x1p-106 * (1.0 + 0x1p-19);
            if (!(fabs(mpfr_get_d(t, MPFR_RNDA)) <= bound)) {
                fprintf(stderr, "FAIL: anchored dot of %lld terms (key %d) outside its bound\n", (long long)d, m);
                pp_test_report_seed();
                fails++;
            }
        }
        free(yk[3]);
        free(x);
    }
    free(XH);
    free(XL);
    free(Y);
    mpfr_clears(a, b, t, s, (mpfr_ptr)0);
    mpfr_free_cache();
    assert_int_equal(fails, 0);
}

typedef struct progress_log {
    int calls;
    int64_t last_done, last_total;
    int monotone;
} progress_log;

static void progress_cb(void *ctx, int64_t done, int64_t total)
{
    progress_log *p = ctx;
    p->monotone &= done >= p->last_done && done <= total;
    p->calls++;
    p->last_done = done;
    p->last_total = total;
}

// The progress callback: work counted up to its total, called at the end with (total, total).
// Work is weighted by the keys a row sees (plus one per row), so a causal reference, whose later
// rows cost more, counts 2·2·Σ(i + 2) = 920 units over its 20 rows, not 2·2·20 rows at one each;
// without the mask every row sees all 20 keys: 2·2·20·21.
static void attention_ref_progress(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() + 9};
    for (int causal = 0; causal < 2; causal++) {
        attn_case c = make_case(2, 20, 20, 2, 1, 16, causal);
        case_fill(&c, &r, PP_FMT_FP16, 1.0);
        int64_t want = causal ? 2 * 2 * (20 * 21 / 2 + 20) : 2 * 2 * 20 * 21;
        for (int m = 0; m < 2; m++) {
            progress_log log = {0, 0, 0, 1};
            c.o.progress = progress_cb;
            c.o.progress_ctx = &log;
            attn_result res;
            run_ref(&c, m ? PP_ATTN_REF_MPFR_PLAIN : PP_ATTN_REF_FAST, 0, 2, &res);
            assert_true(log.calls >= 1);
            assert_true(log.monotone);
            assert_int_equal(log.last_done, want);
            assert_int_equal(log.last_total, want);
            result_free(&res);
        }
        case_free(&c);
    }
}

static void attention_ref_rejects_bad_input(void **state)
{
    (void)state;
    attn_case c = make_case(1, 2, 2, 2, 2, 4, 0);
    double out[16], lse[4];
    pp_error err = {0};
    c.q[0] = 0.1;  // not a binary32 value
    assert_int_equal(pp_attention_ref(&c.o, c.q, c.k, c.v, c.dout, out, lse, out, out, out, NULL,
                                      &err), PP_ERR_INPUT);
    c.q[0] = 0.0;
    c.o.h = 3;  // not a multiple of h_kv
    assert_int_equal(pp_attention_ref(&c.o, c.q, c.k, c.v, c.dout, out, lse, out, out, out, NULL,
                                      &err), PP_ERR_INPUT);
    case_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(attention_ref_fast_exp_accuracy),
        cmocka_unit_test(attention_ref_building_blocks),
        cmocka_unit_test(attention_ref_single_key_exact),
        cmocka_unit_test(attention_ref_no_key_rows),
        cmocka_unit_test(attention_ref_nan_input),
        cmocka_unit_test(attention_ref_rejects_bad_input),
        cmocka_unit_test(attention_ref_progress),
        cmocka_unit_test(attention_ref_small_shapes),
        cmocka_unit_test(attention_ref_huge_scores),
        cmocka_unit_test(attention_ref_one_survivor),
        cmocka_unit_test(attention_ref_alternating_v),
        cmocka_unit_test(attention_ref_outlier_columns),
        cmocka_unit_test(attention_ref_random_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
