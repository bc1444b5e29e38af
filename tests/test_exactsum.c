// test_exactsum.c — the exact accumulator against MPFR (exact sums at 4400 bits, one rounding by
// mpfr_get_d): random terms of every magnitude, cancellation, huge/tiny mixes, subnormals,
// exact products, rounding ties, overflow, non-finite terms, merges under random splits.
#include "test_util.h"

#include <math.h>
#include <mpfr.h>

#include "core/exactsum.h"

// ---------------------------------------------------------------------------------------------
// Terms, the reference and the comparison

typedef struct term {
    int product;  // 0: add a; 1: add a·b exactly
    double a, b;
} term;

static double bits_to_double(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

// A finite double with a uniformly drawn exponent field (subnormals and zeros included).
static double any_magnitude(pp_test_rng *r)
{
    uint64_t b = pp_test_rng_next(r);
    uint64_t e = (b >> 52) & 0x7FF;
    e = e % 0x7FF;  // never the Inf/NaN field
    if ((b & 0xF) == 0)
        e = 0;  // extra subnormals
    return bits_to_double((b & 0x800FFFFFFFFFFFFFull) | (e << 52));
}

// Exact sum in MPFR (4400 bits hold every bit from 2^-2148 to 2^2200), rounded once.
static double reference(const term *t, size_t n)
{
    mpfr_t acc, p;
    mpfr_init2(acc, 4400);
    mpfr_init2(p, 110);  // a 106-bit product is exact here
    mpfr_set_zero(acc, 1);
    for (size_t i = 0; i < n; i++) {
        if (t[i].product) {
            mpfr_set_d(p, t[i].a, MPFR_RNDN);
            mpfr_mul_d(p, p, t[i].b, MPFR_RNDN);
        } else {
            mpfr_set_d(p, t[i].a, MPFR_RNDN);
        }
        mpfr_add(acc, acc, p, MPFR_RNDN);
    }
    double v = mpfr_get_d(acc, MPFR_RNDN);
    mpfr_clear(acc);
    mpfr_clear(p);
    return v;
}

static void feed(pp_exactsum *s, const term *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (t[i].product)
            pp_exactsum_add_product(s, t[i].a, t[i].b);
        else
            pp_exactsum_add(s, t[i].a);
    }
}

// Same value: identical bits, or both NaN, or both zero (an exact zero reads as +0.0 by
// contract, where MPFR may give -0.0).
static int same(double x, double y)
{
    if (isnan(x) || isnan(y))
        return isnan(x) && isnan(y);
    if (x == 0 && y == 0)
        return 1;
    return memcmp(&x, &y, sizeof x) == 0;
}

static int failures;

static void report(const char *property, const term *t, size_t n, double want, double got)
{
    if (failures++ >= 10)
        return;
    fprintf(stderr, "FAIL %s (%zu terms)\n", property, n);
    for (size_t i = 0; i < n && i < 8; i++) {
        fprintf(stderr, "  term %zu (%s):\n", i, t[i].product ? "product" : "add");
        pp_test_print_double("a", t[i].a);
        if (t[i].product)
            pp_test_print_double("b", t[i].b);
    }
    pp_test_print_double("mpfr", want);
    pp_test_print_double("exactsum", got);
    pp_test_report_seed();
}

// Checks the one-pass value, and the exactness of what is kept: after subtracting the rounded
// value v, the accumulator must read the correctly rounded residual (sum - v).
static void check(const char *property, term *t, size_t n)
{
    pp_exactsum s;
    pp_exactsum_init(&s);
    feed(&s, t, n);
    double want = reference(t, n), got = pp_exactsum_value(&s);
    if (!same(want, got)) {
        report(property, t, n, want, got);
        return;
    }
    if (isfinite(got)) {
        t[n] = (term){0, -got, 0};
        pp_exactsum_add(&s, -got);
        double rw = reference(t, n + 1), rg = pp_exactsum_value(&s);
        if (!same(rw, rg))
            report("residual after subtracting the rounded sum", t, n + 1, rw, rg);
    }
}

// ---------------------------------------------------------------------------------------------
// Deterministic cases

static void exactsum_rounding_ties(void **state)
{
    (void)state;
    failures = 0;
    const double u = ldexp(1.0, -53), tiny = ldexp(1.0, -1074), big = 1.7976931348623157e308;
    term c[][4] = {
        {{0, 1.0, 0}, {0, u, 0}},                                 // tie: stays at even 1.0
        {{0, 1.0, 0}, {0, u, 0}, {0, ldexp(1.0, -2000), 0}},      // just above the tie: up
        {{0, 1.0, 0}, {0, 2 * u, 0}, {0, u, 0}},                  // tie from odd: up to even
        {{0, 1.0, 0}, {0, u, 0}, {0, -ldexp(1.0, -1074), 0}},     // just below the tie: down
        {{0, big, 0}, {0, ldexp(1.0, 970), 0}},                   // tie at the top: to Inf
        {{0, big, 0}, {0, ldexp(1.0, 970), 0}, {0, -tiny, 0}},    // just below: max finite
        {{0, -big, 0}, {0, -big, 0}, {0, big, 0}},                // overflow and back: exact
        {{1, ldexp(1.0, -538), ldexp(1.0, -538)}},                // 2^-1076 rounds to 0
        {{1, 3.0, ldexp(1.0, -1075)}},                            // 1.5 quanta: to 2 quanta
        {{1, 5.0, ldexp(1.0, -1075)}},                            // 2.5 quanta: to 2 quanta
        {{0, tiny, 0}, {1, 1.0, ldexp(1.0, -1075)}},              // 1.5 quanta (product part)
        {{1, big, big}, {1, -big, big}, {0, 1.0, 0}},             // products beyond binary64
        {{1, big, big}},                                          // 2^2048-ish: +Inf
        {{1, -big, big}, {0, big, 0}},                            // -Inf
        {{0, 0.0, 0}, {0, -0.0, 0}},
        {{0, ldexp(1.0, -1022), 0}, {0, -tiny, 0}},               // normal minus quantum
        {{1, 0.1, 0.1}, {1, -0.1, 0.1}},                          // exact cancellation
        {{1, 1.0 + 2 * u, 1.0 - u}},                              // 1 + u - 2u^2: one product
        // subnormal result just below a tie: one rounding at the quantum, not two
        {{0, ldexp(1.0, -1023), 0}, {0, tiny, 0}, {1, ldexp(1.0, -1000), ldexp(1.0, -75)},
         {1, -ldexp(1.0, -1000), ldexp(1.0, -80)}},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        size_t n = 0;
        while (n < 4 && (c[i][n].a != 0 || c[i][n].product || n == 0 || signbit(c[i][n].a)))
            n++;
        term t[5];
        memcpy(t, c[i], sizeof c[i]);
        check("rounding edge", t, n);
    }
    assert_int_equal(failures, 0);
}

static void exactsum_special_values(void **state)
{
    (void)state;
    struct {
        term t[3];
        size_t n;
    } c[] = {
        {{{0, NAN, 0}, {0, 1.0, 0}}, 2},
        {{{0, INFINITY, 0}, {0, 1.0, 0}}, 2},
        {{{0, -INFINITY, 0}, {0, 1e308, 0}}, 2},
        {{{0, INFINITY, 0}, {0, -INFINITY, 0}}, 2},
        {{{1, INFINITY, 0.0}}, 1},
        {{{1, INFINITY, -2.0}}, 1},
        {{{1, NAN, 0.0}}, 1},
        {{{1, -INFINITY, -INFINITY}, {0, 5.0, 0}}, 2},
        {{{0, INFINITY, 0}, {1, INFINITY, 1.0}, {0, -1e300, 0}}, 3},
    };
    failures = 0;
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        pp_exactsum s;
        pp_exactsum_init(&s);
        feed(&s, c[i].t, c[i].n);
        double want = reference(c[i].t, c[i].n), got = pp_exactsum_value(&s);
        if (!same(want, got))
            report("special values", c[i].t, c[i].n, want, got);
    }
    assert_int_equal(failures, 0);
}

// A carry pass in the middle of a sequence (white box: pending is set just below the pass).
static void exactsum_carry_pass(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() ^ 0xC0FFEE};
    failures = 0;
    for (int it = 0; it < 50; it++) {
        term t[41];
        for (int i = 0; i < 40; i++)
            t[i] = (term){(int)(pp_test_rng_next(&r) & 1), any_magnitude(&r) * ((i & 1) ? -1 : 1), any_magnitude(&r)};
        pp_exactsum s;
        pp_exactsum_init(&s);
        s.pending = (1u << 30) - 7;
        feed(&s, t, 40);
        double want = reference(t, 40), got = pp_exactsum_value(&s);
        if (!same(want, got))
            report("carry pass mid-sequence", t, 40, want, got);
    }
    assert_int_equal(failures, 0);
}

// ---------------------------------------------------------------------------------------------
// Random cases

enum { MAXN = 160 };

static void fill(pp_test_rng *r, int family, term *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double x = any_magnitude(r), y = any_magnitude(r);
        switch (family) {
        case 0:  // every magnitude, adds only
            t[i] = (term){0, x, 0};
            break;
        case 1:  // mirrored cancellation: x and -x, plus a few small terms
            if (i % 2 == 1) {
                t[i] = (term){0, -t[i - 1].a, 0};
            } else {
                t[i] = (term){0, (pp_test_rng_next(r) % 8) ? x : ldexp(x, -1000), 0};
            }
            break;
        case 2:  // huge and tiny
            t[i] = (term){0, (pp_test_rng_next(r) & 1) ? ldexp(1.0 + (double)(pp_test_rng_next(r) >> 11) * 0x1p-53, 1000 + (int)(pp_test_rng_next(r) % 23))
                                             : bits_to_double(pp_test_rng_next(r) % 0x0010000000000000ull),
                          0};
            if (pp_test_rng_next(r) & 1)
                t[i].a = -t[i].a;
            break;
        case 3:  // subnormals and the smallest normals (the subnormal rounding boundary)
            t[i] = (term){0, bits_to_double((pp_test_rng_next(r) & 0x800FFFFFFFFFFFFFull) | ((pp_test_rng_next(r) % 48) << 52)), 0};
            if (pp_test_rng_next(r) % 4 == 0)
                t[i].a = bits_to_double(pp_test_rng_next(r) & 0x800FFFFFFFFFFFFFull);
            break;
        case 4:  // products of every magnitude (overflow and underflow of fl(a·b) included)
            t[i] = (term){1, x, y};
            break;
        default:  // products and adds mixed, with cancelling products
            if (i % 3 == 2 && t[i - 1].product)
                t[i] = (term){1, -t[i - 1].a, t[i - 1].b * 2};
            else
                t[i] = (term){(int)(pp_test_rng_next(r) & 1), x, (pp_test_rng_next(r) & 1) ? y : 1.0 + (double)(pp_test_rng_next(r) >> 11) * 0x1p-53};
            break;
        }
    }
    // shuffle so that cancelling partners are far apart
    for (size_t i = n; i > 1; i--) {
        size_t j = pp_test_rng_next(r) % i;
        term tmp = t[i - 1];
        t[i - 1] = t[j];
        t[j] = tmp;
    }
}

static void exactsum_random_against_mpfr(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed()};
    failures = 0;
    uint64_t iters = pp_test_iters(500);
    static const char *names[] = {"random adds", "mirrored cancellation", "huge/tiny mix",
                                  "subnormals and small normals", "random products", "products and adds"};
    term t[MAXN + 1];
    for (uint64_t it = 0; it < iters && failures < 10; it++) {
        for (int fam = 0; fam < 6; fam++) {
            size_t n = 2 + pp_test_rng_next(&r) % (MAXN - 2);
            fill(&r, fam, t, n);
            check(names[fam], t, n);
        }
    }
    assert_int_equal(failures, 0);
}

// Splitting the terms into random chunks and merging the chunk sums in a random order gives the
// one-pass accumulator's value, and keeps every bit (the residual check).
static void exactsum_merge_random_splits(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() + 1};
    failures = 0;
    uint64_t iters = pp_test_iters(300);
    term t[MAXN + 1];
    for (uint64_t it = 0; it < iters && failures < 10; it++) {
        size_t n = 2 + pp_test_rng_next(&r) % (MAXN - 2);
        fill(&r, (int)(pp_test_rng_next(&r) % 6), t, n);
        pp_exactsum one;
        pp_exactsum_init(&one);
        feed(&one, t, n);
        enum { K = 8 };
        pp_exactsum part[K];
        int alive[K];
        size_t cut[K + 1];
        cut[0] = 0;
        cut[K] = n;
        for (int k = 1; k < K; k++)
            cut[k] = pp_test_rng_next(&r) % (n + 1);
        for (int k = 1; k < K; k++)  // sort the cuts (empty chunks allowed)
            for (int j = k; j > 1 && cut[j - 1] > cut[j]; j--) {
                size_t x = cut[j];
                cut[j] = cut[j - 1];
                cut[j - 1] = x;
            }
        for (int k = 0; k < K; k++) {
            pp_exactsum_init(&part[k]);
            feed(&part[k], t + cut[k], cut[k + 1] - cut[k]);
            alive[k] = 1;
        }
        for (int left = K; left > 1; left--) {  // merge a random live pair until one is left
            int a, b;
            do {
                a = (int)(pp_test_rng_next(&r) % K);
                b = (int)(pp_test_rng_next(&r) % K);
            } while (a == b || !alive[a] || !alive[b]);
            pp_exactsum_merge(&part[a], &part[b]);
            alive[b] = 0;
        }
        int last = 0;
        while (!alive[last])
            last++;
        double v1 = pp_exactsum_value(&one), vm = pp_exactsum_value(&part[last]);
        if (!same(v1, vm)) {
            report("merge of random chunks equals one pass", t, n, v1, vm);
            continue;
        }
        if (isfinite(v1)) {
            pp_exactsum_add(&one, -v1);
            pp_exactsum_add(&part[last], -v1);
            double r1 = pp_exactsum_value(&one), rm = pp_exactsum_value(&part[last]);
            if (!same(r1, rm))
                report("merge keeps every bit (residual)", t, n, r1, rm);
        }
    }
    assert_int_equal(failures, 0);
}

// Reversal invariance over long sums: 100000 terms in order and reversed give the same value.
static void exactsum_order_independent(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() + 2};
    size_t n = (size_t)pp_test_iters(100000);
    double *x = malloc(n * sizeof *x);
    assert_non_null(x);
    for (size_t i = 0; i < n; i++)
        x[i] = any_magnitude(&r);
    pp_exactsum f, b;
    pp_exactsum_init(&f);
    pp_exactsum_init(&b);
    for (size_t i = 0; i < n; i++) {
        pp_exactsum_add(&f, x[i]);
        pp_exactsum_add_product(&f, x[i], x[n - 1 - i]);
        pp_exactsum_add_product(&b, x[n - 1 - i], x[i]);
        pp_exactsum_add(&b, x[n - 1 - i]);
    }
    double vf = pp_exactsum_value(&f), vb = pp_exactsum_value(&b);
    if (!same(vf, vb)) {
        pp_test_print_double("forward", vf);
        pp_test_print_double("backward", vb);
        pp_test_report_seed();
    }
    assert_true(same(vf, vb));
    free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exactsum_rounding_ties),
        cmocka_unit_test(exactsum_special_values),
        cmocka_unit_test(exactsum_carry_pass),
        cmocka_unit_test(exactsum_random_against_mpfr),
        cmocka_unit_test(exactsum_merge_random_splits),
        cmocka_unit_test(exactsum_order_independent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
