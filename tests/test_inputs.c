// test_inputs.c — random inputs: the deterministic log against MPFR, the polar normal against its
// exact transform, golden bits, element-alone = fill, statistics, ranges, rounding, rejections.
// Run: build/rel/tests/test_inputs (PRECPROBE_SEED, PRECPROBE_TEST_MULTIPLIER apply).
#include "test_util.h"

#include <float.h>
#include <math.h>
#include <mpfr.h>

#include "format.h"
#include "pipeline/inputs.h"
#include "random_dist.h"
#include "core/tensor.h"

#define U53 0x1p-53  // the unit roundoff of binary64

static uint64_t bits_of(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static double double_of(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

// A small xorshift for choosing test inputs (not the generator under test).
static uint64_t next_u64(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

// ulp(y) of a normal binary64 y: 2^(E−52) for y in [2^E, 2^(E+1)).
static double ulp64(double y)
{
    int e;
    frexp(y, &e);
    return ldexp(1.0, e - 53);
}

// ---------------------------------------------------------------------------------------------
// Special values and exact inputs

static void u01_extremes(void **state)
{
    (void)state;
    assert_true(pp_u01_co(0) == 0.0);
    assert_true(pp_u01_co(UINT64_MAX) == 1.0 - 0x1p-53);
    assert_true(pp_u01_co(UINT64_C(1) << 63) == 0.5);
    assert_true(pp_u01_oo(0) == 0x1p-53);
    assert_true(pp_u01_oo(UINT64_MAX) == 1.0 - 0x1p-53);
    assert_true(pp_u01_oo(UINT64_C(1) << 63) == 0.5 + 0x1p-53);
    assert_true(pp_u01_oo(UINT64_C(0x7fffffffffffffff)) == 0.5 - 0x1p-53);  // symmetric about 1/2
    assert_true(pp_u11_oo(0) == -1.0 + 0x1p-53);
    assert_true(pp_u11_oo(UINT64_MAX) == 1.0 - 0x1p-53);
    assert_true(pp_u11_oo(UINT64_C(1) << 63) == 0x1p-53);   // never 0: the grid is odd multiples
    assert_true(pp_u11_oo(UINT64_C(0x7fffffffffffffff)) == -0x1p-53);
}

static void det_log_special_values(void **state)
{
    (void)state;
    assert_true(pp_det_log(0.0) == -INFINITY);
    assert_true(pp_det_log(-0.0) == -INFINITY);
    assert_true(pp_det_log(INFINITY) == INFINITY);
    assert_true(isnan(pp_det_log(-INFINITY)));
    assert_true(isnan(pp_det_log(-1.0)));
    assert_true(isnan(pp_det_log(-0x1p-1074)));
    assert_true(isnan(pp_det_log(NAN)));
    double one = pp_det_log(1.0);
    assert_true(one == 0.0 && !signbit(one));  // +0, as IEEE 754 asks of log(1)
    // Exact powers of two: e·ln2 computed as e·HI + e·LO, correctly rounded here (checked below
    // against MPFR too); ln 2 itself must be RN(ln 2).
    assert_true(pp_det_log(2.0) == 0x1.62e42fefa39efp-1);
}

// ---------------------------------------------------------------------------------------------
// pp_det_log against MPFR

// The bound stated in kernels/random_dist.h.
#define DET_LOG_ULP_BOUND 0.65

typedef struct log_check {
    mpfr_t exact, diff;
    double worst;
    double worst_x;
    int bad;
} log_check;

static void log_check_one(log_check *c, const char *what, long idx, double x)
{
    double y = pp_det_log(x);
    if (y == 0.0) {  // x = 1 only: ln 1 = 0 exactly
        if (x != 1.0 && c->bad++ < 10) {
            fprintf(stderr, "FAIL: det_log %s [%ld]: zero result for x != 1\n", what, idx);
            pp_test_print_double("x", x);
        }
        return;
    }
    mpfr_set_d(c->exact, x, MPFR_RNDN);
    mpfr_log(c->exact, c->exact, MPFR_RNDN);
    mpfr_set_d(c->diff, y, MPFR_RNDN);
    mpfr_sub(c->diff, c->diff, c->exact, MPFR_RNDN);
    double err = fabs(mpfr_get_d(c->diff, MPFR_RNDN)) / ulp64(y);
    if (err > c->worst) {
        c->worst = err;
        c->worst_x = x;
    }
    if (!(err <= DET_LOG_ULP_BOUND) && c->bad++ < 10) {
        fprintf(stderr, "FAIL: det_log %s [%ld]: error %.4f ulp > bound %.2f\n", what, idx, err,
                DET_LOG_ULP_BOUND);
        pp_test_print_double("x", x);
        pp_test_print_double("got", y);
        pp_test_print_double("ln x (MPFR, RN)", mpfr_get_d(c->exact, MPFR_RNDN));
    }
}

// |pp_det_log(x) − ln x| ≤ 0.65 ulp: every binade from the smallest subnormal to DBL_MAX with
// random significands, both ends of each binade, the neighbourhood of 1 (where ln x → 0 and
// relative accuracy is hardest), and both sides of the reduction's switch at √2 (and 1/√2).
static void det_log_accuracy_mpfr(void **state)
{
    (void)state;
    log_check c;
    mpfr_init2(c.exact, 128);  // 128 bits: MPFR's own error is 2^-128 relative, far below 2^-53
    mpfr_init2(c.diff, 128);
    c.worst = 0.0;
    c.worst_x = 0.0;
    c.bad = 0;
    uint64_t s = pp_test_seed() | 1;

    // Binade ends, all 2046 normal binades and the subnormals' powers of two.
    long idx = 0;
    for (int e = -1074; e <= 1023; e++) {
        log_check_one(&c, "power of two", idx++, ldexp(1.0, e));
        if (e >= -1022)
            log_check_one(&c, "binade top", idx++, nextafter(ldexp(1.0, e + 1), 0.0));
    }
    log_check_one(&c, "DBL_MAX", idx++, DBL_MAX);
    log_check_one(&c, "largest subnormal", idx++, nextafter(DBL_MIN, 0.0));
    // Around 1: 1 ± k·2^-53 and 1 ± k·2^-52 for small k.
    for (int k = 1; k <= 256; k++) {
        log_check_one(&c, "1 - k ulp", idx++, 1.0 - k * 0x1p-53);
        log_check_one(&c, "1 + k ulp", idx++, 1.0 + k * 0x1p-52);
    }
    // Around the reduction's switch points.
    for (int k = -64; k <= 64; k++) {
        log_check_one(&c, "near sqrt2", idx++, double_of(UINT64_C(0x3FF6A09E667F3BCD) + (uint64_t)(int64_t)k));
        log_check_one(&c, "near 1/sqrt2", idx++, double_of(UINT64_C(0x3FE6A09E667F3BCD) + (uint64_t)(int64_t)k));
    }
    // Random: uniform over the bit patterns of [tiny, 1] (the range the normal uses), over all
    // positive finite doubles, and in [1 − 2^-10, 1 + 2^-10].
    uint64_t n = pp_test_iters(60000);
    const uint64_t one_bits = bits_of(1.0);
    for (uint64_t k = 0; k < n; k++) {
        uint64_t r = next_u64(&s);
        log_check_one(&c, "random in (0, 1]", idx++, double_of(1 + r % one_bits));
        r = next_u64(&s);
        log_check_one(&c, "random positive", idx++, double_of(1 + r % (bits_of(DBL_MAX) - 1)));
        r = next_u64(&s);
        log_check_one(&c, "random near 1", idx++, 1.0 + ldexp((double)(int64_t)(r >> 11) - 0x1p52, -62));
    }
    fprintf(stderr, "  det_log: %ld inputs, worst error %.4f ulp at %a (bound %.2f)\n", idx, c.worst,
            c.worst_x, DET_LOG_ULP_BOUND);
    if (c.bad)
        pp_test_report_seed();
    mpfr_clear(c.exact);
    mpfr_clear(c.diff);
    assert_int_equal(c.bad, 0);
}

// ---------------------------------------------------------------------------------------------
// The polar normal: its draw contract and its accuracy against the exact transform

// For every element: pp_rand_normal equals pp_polar_try of the first accepted draw d (draws
// before it rejected), and z is within the bound of kernels/random_dist.h of the exact
// Z = u·sqrt(−2 ln S / S), S = u² + v², computed by MPFR from the same u and v:
//   |z − Z| ≤ (u53/|ln S| + 4.2·u53)·|Z|;
// pp_rand_normal_pair of the same counter gives z as its first value and, as its second, a value
// within the same bound of V = v·sqrt(−2 ln S / S).
// The first-order analysis behind it needs u53/|ln S| small: draws with |ln S| < 2^-40
// (probability 2^-40) or S ≥ 1 (only through rounding of s, probability ~2^-52) are counted,
// not checked.
static void polar_normal_draws_and_accuracy(void **state)
{
    (void)state;
    const uint64_t seed = pp_test_seed();
    const uint64_t n = pp_test_iters(100000);
    mpfr_t u, v, S, t, Z, V, d;
    mpfr_init2(u, 64);
    mpfr_init2(v, 64);
    mpfr_init2(S, 256);  // u² and v² have at most 106 bits; their sum at most 106 + 107
    mpfr_inits2(128, t, Z, V, d, (mpfr_ptr)0);
    int bad = 0;
    uint64_t draws = 0, skipped = 0;
    double worst = 0.0;
    for (uint64_t i = 0; i < n && bad < 10; i++) {
        double z = 0.0;
        uint32_t dd = 0;
        pp_philox4x32_ctr w;
        for (;; dd++) {
            w = pp_philox_element(seed, 3, i, dd);
            if (pp_polar_try(w, &z))
                break;
        }
        draws += dd + 1;
        double zn = pp_rand_normal(seed, 3, i), zp[2];
        pp_rand_normal_pair(seed, 3, i, zp);
        if (bits_of(zn) != bits_of(z) || bits_of(zp[0]) != bits_of(z)) {
            fprintf(stderr, "FAIL: pp_rand_normal is not the first accepted draw (%u), element %llu\n",
                    dd, (unsigned long long)i);
            pp_test_print_double("pp_rand_normal", zn);
            pp_test_print_double("draw's value", z);
            pp_test_report_seed();
            bad++;
            continue;
        }
        double ud = pp_u11_oo(pp_philox_bits64(w, 0)), vd = pp_u11_oo(pp_philox_bits64(w, 1));
        mpfr_set_d(u, ud, MPFR_RNDN);
        mpfr_set_d(v, vd, MPFR_RNDN);
        mpfr_sqr(S, u, MPFR_RNDN);
        mpfr_fma(S, v, v, S, MPFR_RNDN);  // exact at 256 bits
        mpfr_log(t, S, MPFR_RNDN);
        double lnS = mpfr_get_d(t, MPFR_RNDN);
        if (mpfr_cmp_ui(S, 1) >= 0 || fabs(lnS) < 0x1p-40) {
            skipped++;
            continue;
        }
        mpfr_mul_si(t, t, -2, MPFR_RNDN);
        mpfr_div(t, t, S, MPFR_RNDN);
        mpfr_sqrt(t, t, MPFR_RNDN);
        mpfr_mul(Z, t, u, MPFR_RNDN);
        mpfr_mul(V, t, v, MPFR_RNDN);
        mpfr_set_d(d, z, MPFR_RNDN);
        mpfr_sub(d, d, Z, MPFR_RNDN);
        mpfr_div(d, d, Z, MPFR_RNDN);
        double rel = fabs(mpfr_get_d(d, MPFR_RNDN));
        mpfr_set_d(d, zp[1], MPFR_RNDN);
        mpfr_sub(d, d, V, MPFR_RNDN);
        mpfr_div(d, d, V, MPFR_RNDN);
        double rel_v = fabs(mpfr_get_d(d, MPFR_RNDN));
        rel = rel > rel_v ? rel : rel_v;
        double bound = U53 / fabs(lnS) + 4.2 * U53;
        if (rel / bound > worst)
            worst = rel / bound;
        if (!(rel <= bound)) {
            fprintf(stderr, "FAIL: polar normal accuracy, element %llu draw %u: relative error %.3g > "
                    "bound %.3g\n", (unsigned long long)i, dd, rel, bound);
            pp_test_print_double("u", ud);
            pp_test_print_double("v", vd);
            pp_test_print_double("z", z);
            pp_test_print_double("Z (MPFR, RN)", mpfr_get_d(Z, MPFR_RNDN));
            pp_test_print_double("pair's second", zp[1]);
            pp_test_print_double("V (MPFR, RN)", mpfr_get_d(V, MPFR_RNDN));
            pp_test_report_seed();
            bad++;
        }
    }
    fprintf(stderr, "  polar: %llu elements, %.4f draws each (4/pi = 1.2732), %llu unchecked, worst "
            "error %.3f of its bound\n", (unsigned long long)n, (double)draws / (double)n,
            (unsigned long long)skipped, worst);
    mpfr_clears(u, v, S, t, Z, V, d, (mpfr_ptr)0);
    assert_int_equal(bad, 0);
}

// ---------------------------------------------------------------------------------------------
// Golden values: seed 7, tensor 0, elements 0..15. These are the bits every machine and compiler
// must produce (x86-64 gcc -O0/-O2 and clang -O3 agreed when they were recorded); a change here
// means every stored input and every baseline built on it changes.

static const uint64_t GOLDEN_NORMAL[16] = {
    UINT64_C(0x3fc7dc9c9290fce4), // 0.18642003208694924
    UINT64_C(0x3ff03f0375c46e62), // 1.0153841591153641
    UINT64_C(0xbfef4ffe5e09e431), // -0.97851484648629683
    UINT64_C(0xbfda4609b792411a), // -0.41052477766881312
    UINT64_C(0x3fd06f9f7f1ad82a), // 0.25681292927345345
    UINT64_C(0xbfedb89e8f01cc97), // -0.92878654414234318
    UINT64_C(0xbfeb668e7ff05e8d), // -0.85626912105631592
    UINT64_C(0xbfd6df7fbea10b43), // -0.3573912965404597
    UINT64_C(0x3fcfefb29a1c5c4f), // 0.24950249218884088
    UINT64_C(0x3febc5479affdf53), // 0.86783199570980185
    UINT64_C(0xbfeff5bcedb51f35), // -0.99874731471297784
    UINT64_C(0x3fd00025c97a8a5e), // 0.25000900912906399
    UINT64_C(0x3fbf0619eb465277), // 0.12118684762965325
    UINT64_C(0xbfede057d22eefe3), // -0.93363562632975705
    UINT64_C(0xbfc1a70febc48441), // -0.13791083347408242
    UINT64_C(0xbff8fd4cc57a479f), // -1.5618407930346405
};

static const uint64_t GOLDEN_UNIFORM[16] = {
    UINT64_C(0x3fe8013f3b9e8c0f), // 0.75015222210311261
    UINT64_C(0x3fe972f7826d05d1), // 0.79528403734019026
    UINT64_C(0x3f814fdda00c7100), // 0.0084531130283314049
    UINT64_C(0x3fd0021adbd8f904), // 0.25012847394454263
    UINT64_C(0x3fefaabfd9c94718), // 0.98959343468070227
    UINT64_C(0x3fd584f26c55abd4), // 0.33623943881565066
    UINT64_C(0x3fddf3cea8b35f86), // 0.46800581431079313
    UINT64_C(0x3fde3a1b20d15246), // 0.47229650692796488
    UINT64_C(0x3fee2efc098067fe), // 0.94323541503695174
    UINT64_C(0x3f8dff89cc8b6780), // 0.014647556833938813
    UINT64_C(0x3fefdcac4bb84100), // 0.99568762578022074
    UINT64_C(0x3fecb2ce49595fab), // 0.89682688070296501
    UINT64_C(0x3fe0d65dbf69fd9f), // 0.52616774926712029
    UINT64_C(0x3fef6051d5e01835), // 0.98050777218373375
    UINT64_C(0x3fd20f2f2dce0ff0), // 0.28217677567613375
    UINT64_C(0x3fb345bdca05c500), // 0.075282918760212425
};

static int check_golden(const char *what, const pp_dist *d, const uint64_t *golden)
{
    int bad = 0;
    for (int i = 0; i < 16; i++) {
        double x = pp_inputs_element(d, 7, 0, i);
        if (bits_of(x) != golden[i] && bad++ < 10) {
            fprintf(stderr, "FAIL: golden %s, seed 7, tensor 0, element %d\n", what, i);
            pp_test_print_double("expected", double_of(golden[i]));
            pp_test_print_double("got", x);
        }
    }
    return bad;
}

static void inputs_element_golden_seed7(void **state)
{
    (void)state;
    pp_dist normal = {.kind = PP_DIST_NORMAL, .mean = 0.0, .std = 1.0, .low = 0.0, .high = 0.0};
    pp_dist uniform = {.kind = PP_DIST_UNIFORM, .mean = 0.0, .std = 0.0, .low = 0.0, .high = 1.0};
    int bad = check_golden("normal", &normal, GOLDEN_NORMAL) + check_golden("uniform", &uniform, GOLDEN_UNIFORM);
    // The same bits from the kernel-level functions the CUDA backend calls.
    for (int i = 0; i < 16; i++) {
        bad += bits_of(pp_rand_normal(7, 0, (uint64_t)i)) != GOLDEN_NORMAL[i];
        bad += bits_of(pp_rand_uniform01(7, 0, (uint64_t)i)) != GOLDEN_UNIFORM[i];
    }
    assert_int_equal(bad, 0);
}

// ---------------------------------------------------------------------------------------------
// Element alone = full fill; same seed = same bits; other seeds and tensors = other streams

static int check_fill_matches_elements(const pp_tensor *t, const pp_dist *d, uint64_t seed, uint32_t tid)
{
    int bad = 0;
    for (int64_t i = 0; i < t->numel; i++) {
        double want = pp_round(t->format, pp_inputs_element(d, seed, tid, i), PP_RND_NE, 0);
        if (bits_of(want) != bits_of(t->data[i]) && bad++ < 10) {
            fprintf(stderr, "FAIL: fill differs from element alone: format %s, element %lld\n",
                    pp_format_get(t->format).name, (long long)i);
            pp_test_print_double("element alone", want);
            pp_test_print_double("fill", t->data[i]);
        }
    }
    return bad;
}

// Every format, a tensor big enough for the threaded fill (2 × 70001 > 2^17 elements), both
// distributions; elements are recomputed alone, in reverse order.
static void inputs_fill_equals_element_alone(void **state)
{
    (void)state;
    const int64_t shape[2] = {2, 70001};
    const uint64_t seed = pp_test_seed();
    pp_dist dists[2] = {{.kind = PP_DIST_NORMAL, .mean = 0.5, .std = 3.0, .low = 0.0, .high = 0.0}, {.kind = PP_DIST_UNIFORM, .mean = 0.0, .std = 0.0, .low = -2.0, .high = 5.0}};
    int bad = 0;
    for (int f = 0; f < PP_TEST_FMT_IEEE; f++) {
        for (int k = 0; k < 2; k++) {
            pp_tensor t;
            pp_error err;
            assert_int_equal(pp_tensor_alloc(&t, 2, shape, (pp_format_id)f, &err), PP_OK);
            assert_int_equal(pp_inputs_fill(&t, &dists[k], seed, 9, &err), PP_OK);
            bad += check_fill_matches_elements(&t, &dists[k], seed, 9);
            // Same seed again: identical bits.
            pp_tensor t2;
            assert_int_equal(pp_tensor_alloc(&t2, 2, shape, (pp_format_id)f, &err), PP_OK);
            assert_int_equal(pp_inputs_fill(&t2, &dists[k], seed, 9, &err), PP_OK);
            if (memcmp(t.data, t2.data, (size_t)t.numel * sizeof(double)) != 0) {
                fprintf(stderr, "FAIL: two fills with the same seed differ (format %s)\n",
                        pp_format_get((pp_format_id)f).name);
                bad++;
            }
            pp_tensor_free(&t);
            pp_tensor_free(&t2);
        }
    }
    // An element far out (the last index of a 2^40-element tensor) is computable alone and
    // does not depend on anything computed before it.
    pp_dist n01 = {.kind = PP_DIST_NORMAL, .mean = 0.0, .std = 1.0, .low = 0.0, .high = 0.0};
    const int64_t far = PP_MAX_NUMEL - 1;
    double a = pp_inputs_element(&n01, seed, 0, far);
    (void)pp_inputs_element(&n01, seed, 0, 0);
    bad += bits_of(a) != bits_of(pp_inputs_element(&n01, seed, 0, far));
    bad += bits_of(a) != bits_of(pp_rand_normal(seed, 0, (uint64_t)far));
    if (bad)
        pp_test_report_seed();
    assert_int_equal(bad, 0);
}

// Streams under (seed, tensor) pairs that differ in one field share no element value among the
// first 512 (a coincidence among 2^53-point grids has probability < 2^-30 here).
static void inputs_streams_differ_by_seed_and_tensor(void **state)
{
    (void)state;
    enum { N = 512 };
    const uint64_t s = pp_test_seed();
    const struct {
        uint64_t seed;
        uint32_t tensor;
    } streams[] = {{s, 0}, {s, 1}, {s ^ 1, 0}, {s ^ (UINT64_C(1) << 32), 0}, {s, 0x80000000u}};
    enum { NS = sizeof streams / sizeof streams[0] };
    pp_dist dists[2] = {{.kind = PP_DIST_NORMAL, .mean = 0.0, .std = 1.0, .low = 0.0, .high = 0.0}, {.kind = PP_DIST_UNIFORM, .mean = 0.0, .std = 0.0, .low = 0.0, .high = 1.0}};
    static double v[NS][N];
    int bad = 0;
    for (int k = 0; k < 2; k++) {
        for (int a = 0; a < NS; a++)
            for (int i = 0; i < N; i++)
                v[a][i] = pp_inputs_element(&dists[k], streams[a].seed, streams[a].tensor, i);
        for (int a = 0; a < NS; a++)
            for (int b = a + 1; b < NS; b++)
                for (int i = 0; i < N; i++)
                    for (int j = 0; j < N; j++)
                        if (v[a][i] == v[b][j] && bad++ < 10) {
                            fprintf(stderr, "FAIL: streams %d and %d share a value (dist %d, elements "
                                    "%d, %d)\n", a, b, k, i, j);
                            pp_test_print_double("value", v[a][i]);
                        }
    }
    if (bad)
        pp_test_report_seed();
    assert_int_equal(bad, 0);
}

// ---------------------------------------------------------------------------------------------
// Statistics (each bound exceeded by chance with probability < 1e-6)

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

// The Dvoretzky–Kiefer–Wolfowitz inequality (Massart's constant): for n samples from a
// continuous F, P(sup |F_n − F| > eps) ≤ 2·exp(−2·n·eps²). eps for false-alarm probability 1e-6.
static double dkw_eps(uint64_t n)
{
    return sqrt(log(2.0 / 1e-6) / (2.0 * (double)n));
}

static double normal_cdf(double x)
{
    return 0.5 * erfc(-x / sqrt(2.0));  // libm is fine here: this is the test, not the generator
}

// sup |F_n − F| over the sorted sample x[0..n).
static double ks_distance(const double *x, uint64_t n, double (*cdf)(double))
{
    double dmax = 0.0;
    for (uint64_t k = 0; k < n; k++) {
        double F = cdf(x[k]);
        double lo = F - (double)k / (double)n, hi = (double)(k + 1) / (double)n - F;
        dmax = fmax(dmax, fmax(lo, hi));
    }
    return dmax;
}

// A sample of n standard normals (sorted in place): mean within 5 sd of 0 (sd 1/sqrt(n)); sample
// variance within 5 sd of 1 (sd sqrt(2/(n−1)) for normal data); KS distance to Φ within the DKW
// bound; the counts beyond 3 and 4 within 5 sd of their Binomial(n, 2Φ(−k)) means.
static int normal_sample_ok(const char *what, double *x, uint64_t n)
{
    double sum = 0.0;
    uint64_t beyond3 = 0, beyond4 = 0;
    for (uint64_t i = 0; i < n; i++) {
        sum += x[i];
        beyond3 += fabs(x[i]) > 3.0;
        beyond4 += fabs(x[i]) > 4.0;
    }
    double mean = sum / (double)n, ss = 0.0;
    for (uint64_t i = 0; i < n; i++)
        ss += (x[i] - mean) * (x[i] - mean);
    double var = ss / (double)(n - 1);
    qsort(x, n, sizeof *x, cmp_double);
    double D = ks_distance(x, n, normal_cdf), eps = dkw_eps(n);
    double p3 = 2.0 * normal_cdf(-3.0), p4 = 2.0 * normal_cdf(-4.0);
    double m3 = (double)n * p3, s3 = sqrt((double)n * p3 * (1 - p3));
    double m4 = (double)n * p4, s4 = sqrt((double)n * p4 * (1 - p4));
    fprintf(stderr, "  %s: n %llu, mean %.3g (5sd %.3g), var %.6f (5sd %.3g), KS %.3g (DKW %.3g), "
            "|z|>3: %llu (%.0f), |z|>4: %llu (%.1f)\n", what, (unsigned long long)n, mean, 5 / sqrt((double)n),
            var, 5 * sqrt(2.0 / (double)(n - 1)), D, eps, (unsigned long long)beyond3, m3,
            (unsigned long long)beyond4, m4);
    int ok = fabs(mean) <= 5.0 / sqrt((double)n) && fabs(var - 1.0) <= 5.0 * sqrt(2.0 / (double)(n - 1)) &&
             D <= eps && fabs((double)beyond3 - m3) <= 5 * s3 && fabs((double)beyond4 - m4) <= 5 * s4;
    if (!ok) {
        fprintf(stderr, "FAIL: %s statistics outside their bounds (line above)\n", what);
        pp_test_report_seed();
    }
    return ok;
}

// 1e6 normals of one tensor, element by element (normal_sample_ok).
static void rand_normal_statistics(void **state)
{
    (void)state;
    const uint64_t n = pp_test_iters(1000000), seed = pp_test_seed();
    double *x = malloc(n * sizeof *x);
    assert_non_null(x);
    for (uint64_t i = 0; i < n; i++)
        x[i] = pp_rand_normal(seed, 1, i);
    int ok = normal_sample_ok("normal", x, n);
    free(x);
    assert_true(ok);
}

// 1e6 normals drawn in pairs (pp_rand_normal_pair, as the AdamW synthetic source's noise: element
// 2j + h is value h of pair j): the values together pass normal_sample_ok, and the two values of
// a pair are uncorrelated: their sample correlation within 5 sd of 0 (sd 1/sqrt(pairs)). The
// second values alone pass normal_sample_ok too.
static void rand_normal_pair_statistics(void **state)
{
    (void)state;
    const uint64_t n = pp_test_iters(1000000) & ~(uint64_t)1, seed = pp_test_seed();
    double *x = malloc(n * sizeof *x), *second = malloc(n / 2 * sizeof *second);
    assert_non_null(x);
    assert_non_null(second);
    double s0 = 0, s1 = 0, s00 = 0, s11 = 0, s01 = 0;
    for (uint64_t j = 0; j < n / 2; j++) {
        double z[2];
        pp_rand_normal_pair(seed, 0x4E000001u, j, z);
        x[2 * j] = z[0], x[2 * j + 1] = z[1], second[j] = z[1];
        s0 += z[0], s1 += z[1], s00 += z[0] * z[0], s11 += z[1] * z[1], s01 += z[0] * z[1];
    }
    double m = (double)(n / 2);
    double cov = s01 / m - (s0 / m) * (s1 / m);
    double r = cov / sqrt((s00 / m - (s0 / m) * (s0 / m)) * (s11 / m - (s1 / m) * (s1 / m)));
    fprintf(stderr, "  pairs: correlation of a pair's two values %.3g (5sd %.3g)\n", r, 5 / sqrt(m));
    int ok = normal_sample_ok("normal pairs", x, n) && normal_sample_ok("pairs' second values", second, n / 2) &&
             fabs(r) <= 5 / sqrt(m);
    free(x);
    free(second);
    assert_true(ok);
}

static double uniform_cdf(double x)
{
    return x < 0 ? 0 : x > 1 ? 1 : x;
}

// 1e6 uniforms on [0, 1): all in [0, 1); mean within 5 sd of 1/2 (sd sqrt(1/(12n))); KS within
// DKW.
static void rand_uniform01_statistics(void **state)
{
    (void)state;
    const uint64_t n = pp_test_iters(1000000), seed = pp_test_seed();
    double *x = malloc(n * sizeof *x);
    assert_non_null(x);
    double sum = 0.0;
    int bad = 0;
    for (uint64_t i = 0; i < n; i++) {
        x[i] = pp_rand_uniform01(seed, 2, i);
        sum += x[i];
        if (!(x[i] >= 0.0 && x[i] < 1.0) && bad++ < 10) {
            fprintf(stderr, "FAIL: uniform01 out of [0, 1) at element %llu\n", (unsigned long long)i);
            pp_test_print_double("value", x[i]);
        }
    }
    double mean = sum / (double)n;
    qsort(x, n, sizeof *x, cmp_double);
    double D = ks_distance(x, n, uniform_cdf), eps = dkw_eps(n);
    free(x);
    fprintf(stderr, "  uniform: n %llu, mean %.6f (5sd %.3g), KS %.3g (DKW %.3g)\n", (unsigned long long)n,
            mean, 5 * sqrt(1.0 / (12.0 * (double)n)), D, eps);
    int ok = !bad && fabs(mean - 0.5) <= 5 * sqrt(1.0 / (12.0 * (double)n)) && D <= eps;
    if (!ok)
        pp_test_report_seed();
    assert_true(ok);
}

// ---------------------------------------------------------------------------------------------
// Ranges and scaling

// Uniform values lie in [low, high] for ordinary, degenerate, tiny, one-ulp, subnormal and
// overflowing-width intervals; in [0, 1) exactly when low = 0, high = 1.
static void inputs_element_uniform_in_range(void **state)
{
    (void)state;
    const double ranges[][2] = {
        {0.0, 1.0}, {-3.0, 5.0}, {2.5, 2.5}, {-0.0, 0.0}, {1.0, 0x1.0000000000001p0},
        {0x1p-1074, 0x1p-1073}, {-DBL_MIN, DBL_MIN}, {-DBL_MAX, DBL_MAX}, {-DBL_MAX, -DBL_MAX / 3},
        {1e300, DBL_MAX}, {-1e-300, 1e308},
    };
    const uint64_t seed = pp_test_seed(), n = pp_test_iters(20000);
    int bad = 0;
    for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
        pp_dist d = {.kind = PP_DIST_UNIFORM, .mean = 0.0, .std = 0.0, .low = ranges[r][0], .high = ranges[r][1]};
        assert_int_equal(pp_dist_check(&d, NULL), PP_OK);
        double lo = INFINITY, hi = -INFINITY;
        for (uint64_t i = 0; i < n; i++) {
            double x = pp_inputs_element(&d, seed, 4, (int64_t)i);
            lo = fmin(lo, x);
            hi = fmax(hi, x);
            int in = x >= d.low && x <= d.high && (r != 0 || x < 1.0);
            if (!in && bad++ < 10) {
                fprintf(stderr, "FAIL: uniform out of range [%a, %a], element %llu\n", d.low, d.high,
                        (unsigned long long)i);
                pp_test_print_double("value", x);
            }
        }
        // The sample reaches both ends' neighbourhoods: min in the lowest and max in the highest
        // 1/100 of the interval (each fails with probability 0.99^n < 1e-80 for n >= 20000).
        double w = 0.5 * d.high - 0.5 * d.low;  // half width, no overflow
        if (n >= 20000 && w > 0 && (lo - d.low > 0.02 * w || d.high - hi > 0.02 * w) && bad++ < 10)
            fprintf(stderr, "FAIL: uniform on [%a, %a] does not cover it: min %a, max %a\n", d.low, d.high,
                    lo, hi);
    }
    if (bad)
        pp_test_report_seed();
    assert_int_equal(bad, 0);
}

// mean + std·Z exactly as stated (two roundings); std = 0 gives mean.
static void inputs_element_normal_scaling(void **state)
{
    (void)state;
    const uint64_t seed = pp_test_seed();
    pp_dist d = {.kind = PP_DIST_NORMAL, .mean = 3.0, .std = 0.1, .low = 0.0, .high = 0.0};
    pp_dist d0 = {.kind = PP_DIST_NORMAL, .mean = -7.25, .std = 0.0, .low = 0.0, .high = 0.0};
    int bad = 0;
    for (int64_t i = 0; i < 1000; i++) {
        double z = pp_rand_normal(seed, 5, (uint64_t)i);
        bad += bits_of(pp_inputs_element(&d, seed, 5, i)) != bits_of(3.0 + 0.1 * z);
        bad += pp_inputs_element(&d0, seed, 5, i) != -7.25;
    }
    assert_int_equal(bad, 0);
}

// ---------------------------------------------------------------------------------------------
// Rounding into the storage formats

// Every filled value is a value of the tensor's format (fp16, bf16, and the others), including
// normals wide enough to overflow fp16 and e4m3 and to fall into their subnormals.
static void inputs_fill_values_representable(void **state)
{
    (void)state;
    const int64_t shape[1] = {50000};
    const pp_dist dists[] = {
        {.kind = PP_DIST_NORMAL, .mean = 0.0, .std = 1.0, .low = 0.0, .high = 0.0},
        {.kind = PP_DIST_NORMAL, .mean = 0.0, .std = 20000.0, .low = 0.0, .high = 0.0},   // overflows fp16 (65504), e4m3, e5m2
        {.kind = PP_DIST_NORMAL, .mean = 0.0, .std = 1e-6, .low = 0.0, .high = 0.0},      // fp16 subnormals (< 2^-14)
        {.kind = PP_DIST_UNIFORM, .mean = 0.0, .std = 0.0, .low = -1.0, .high = 1.0},
    };
    int bad = 0;
    for (int f = 0; f < PP_TEST_FMT_IEEE; f++) {
        for (size_t k = 0; k < sizeof dists / sizeof dists[0]; k++) {
            pp_tensor t;
            pp_error err;
            assert_int_equal(pp_tensor_alloc(&t, 1, shape, (pp_format_id)f, &err), PP_OK);
            assert_int_equal(pp_inputs_fill(&t, &dists[k], pp_test_seed(), 6, &err), PP_OK);
            for (int64_t i = 0; i < t.numel; i++) {
                if (!pp_is_representable((pp_format_id)f, t.data[i]) && bad++ < 10) {
                    fprintf(stderr, "FAIL: value not representable in %s, dist %zu, element %lld\n",
                            pp_format_get((pp_format_id)f).name, k, (long long)i);
                    pp_test_print_double("value", t.data[i]);
                }
            }
            bad += check_fill_matches_elements(&t, &dists[k], pp_test_seed(), 6);
            pp_tensor_free(&t);
        }
    }
    if (bad)
        pp_test_report_seed();
    assert_int_equal(bad, 0);
}

// ---------------------------------------------------------------------------------------------
// Rejections

static void inputs_fill_rejects_bad_input(void **state)
{
    (void)state;
    const pp_dist bad_dists[] = {
        {.kind = PP_DIST_NORMAL, .mean = 0.0, .std = -1.0, .low = 0.0, .high = 0.0},
        {.kind = PP_DIST_NORMAL, .mean = 0.0, .std = -0x1p-1074, .low = 0.0, .high = 0.0},
        {.kind = PP_DIST_NORMAL, .mean = NAN, .std = 1.0, .low = 0.0, .high = 0.0},
        {.kind = PP_DIST_NORMAL, .mean = 0.0, .std = INFINITY, .low = 0.0, .high = 0.0},
        {.kind = PP_DIST_NORMAL, .mean = -INFINITY, .std = 1.0, .low = 0.0, .high = 0.0},
        {.kind = PP_DIST_UNIFORM, .mean = 0.0, .std = 0.0, .low = 1.0, .high = 0.0},
        {.kind = PP_DIST_UNIFORM, .mean = 0.0, .std = 0.0, .low = NAN, .high = 1.0},
        {.kind = PP_DIST_UNIFORM, .mean = 0.0, .std = 0.0, .low = 0.0, .high = INFINITY},
        {.kind = PP_DIST_UNIFORM, .mean = 0.0, .std = 0.0, .low = -INFINITY, .high = 0.0},
        {.kind = (pp_dist_kind)7, .mean = 0.0, .std = 1.0, .low = 0.0, .high = 1.0},
    };
    const int64_t shape[1] = {4};
    pp_tensor t;
    pp_error err;
    assert_int_equal(pp_tensor_alloc(&t, 1, shape, PP_FMT_FP32, &err), PP_OK);
    for (int64_t i = 0; i < 4; i++)
        t.data[i] = 42.0;
    for (size_t k = 0; k < sizeof bad_dists / sizeof bad_dists[0]; k++) {
        err.code = PP_OK;
        err.msg[0] = '\0';
        int rc = pp_inputs_fill(&t, &bad_dists[k], 1, 0, &err);
        if (rc != PP_ERR_INPUT)
            fprintf(stderr, "FAIL: bad distribution %zu accepted (rc %d)\n", k, rc);
        assert_int_equal(rc, PP_ERR_INPUT);
        assert_int_equal(err.code, PP_ERR_INPUT);
        assert_true(err.msg[0] != '\0');
        assert_int_equal(pp_dist_check(&bad_dists[k], NULL), PP_ERR_INPUT);
    }
    for (int64_t i = 0; i < 4; i++)
        assert_true(t.data[i] == 42.0);  // untouched
    pp_dist ok = {.kind = PP_DIST_NORMAL, .mean = 0.0, .std = 1.0, .low = NAN, .high = NAN};  // the unused pair is ignored
    assert_int_equal(pp_inputs_fill(&t, &ok, 1, 0, &err), PP_OK);
    assert_int_equal(pp_inputs_fill(NULL, &ok, 1, 0, &err), PP_ERR_INPUT);
    assert_int_equal(pp_inputs_fill(&t, NULL, 1, 0, &err), PP_ERR_INPUT);
    pp_format_id f = t.format;
    t.format = PP_FMT_COUNT;
    assert_int_equal(pp_inputs_fill(&t, &ok, 1, 0, &err), PP_ERR_INPUT);
    t.format = f;
    pp_tensor_free(&t);
    // A tensor with no elements is filled trivially; a zeroed (never allocated) one too.
    const int64_t empty[2] = {3, 0};
    assert_int_equal(pp_tensor_alloc(&t, 2, empty, PP_FMT_BF16, &err), PP_OK);
    assert_int_equal(pp_inputs_fill(&t, &ok, 1, 0, &err), PP_OK);
    pp_tensor_free(&t);
    pp_tensor z;
    memset(&z, 0, sizeof z);
    assert_int_equal(pp_inputs_fill(&z, &ok, 1, 0, &err), PP_OK);
}

// The axis scale multiplies element i by axis_scale[j], j = i's index along the axis, once in
// binary64 before the rounding: checked against pp_inputs_element for every element.
static void inputs_fill_axis_scale(void **state)
{
    (void)state;
    const int64_t shape[4] = {2, 3, 4, 5};  // [b, s, h, d]: scale along the heads
    pp_dist d = {.kind = PP_DIST_NORMAL, .mean = 0.0, .std = 1.0};
    d.axis = 2;
    d.n_axis_scale = 4;
    const double scales[4] = {1.0, 0.5, 100.0, 1e5};
    memcpy(d.axis_scale, scales, sizeof scales);
    pp_tensor t;
    pp_error err;
    assert_int_equal(pp_tensor_alloc(&t, 4, shape, PP_FMT_FP16, &err), PP_OK);
    assert_int_equal(pp_inputs_fill(&t, &d, 5, 1, &err), PP_OK);
    for (int64_t i = 0; i < t.numel; i++) {
        int64_t head = (i / 5) % 4;
        double want = pp_round(PP_FMT_FP16, scales[head] * pp_inputs_element(&d, 5, 1, i), PP_RND_NE, 0);
        if (!(t.data[i] == want || (isnan(want) && isnan(t.data[i])))) {
            fprintf(stderr, "FAIL axis scale: element %lld (head %lld)\n", (long long)i, (long long)head);
            pp_test_print_double("got", t.data[i]);
            pp_test_print_double("want", want);
            fail();
        }
    }
    // the largest head overflows fp16 somewhere: the scale reaches the rounding, as intended
    int inf = 0;
    for (int64_t i = 0; i < t.numel; i++)
        inf += isinf(t.data[i]) != 0;  // glibc: -1 for -Inf
    assert_true(inf > 0);
    d.n_axis_scale = 3;  // does not fit axis 2 (4 heads)
    assert_int_equal(pp_inputs_fill(&t, &d, 5, 1, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "axis_scale has 3 values"));
    d.n_axis_scale = 4;
    d.axis = 4;  // beyond the 4-D shape
    assert_int_equal(pp_inputs_fill(&t, &d, 5, 1, &err), PP_ERR_INPUT);
    d.axis = 2;
    d.axis_scale[1] = INFINITY;
    assert_int_equal(pp_inputs_fill(&t, &d, 5, 1, &err), PP_ERR_INPUT);
    pp_tensor_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        // special values
        cmocka_unit_test(u01_extremes),
        cmocka_unit_test(det_log_special_values),
        // exact truth (MPFR)
        cmocka_unit_test(det_log_accuracy_mpfr),
        cmocka_unit_test(polar_normal_draws_and_accuracy),
        // reproducibility
        cmocka_unit_test(inputs_element_golden_seed7),
        cmocka_unit_test(inputs_fill_equals_element_alone),
        cmocka_unit_test(inputs_streams_differ_by_seed_and_tensor),
        // statistics
        cmocka_unit_test(rand_normal_statistics),
        cmocka_unit_test(rand_normal_pair_statistics),
        cmocka_unit_test(rand_uniform01_statistics),
        // ranges, scaling, rounding
        cmocka_unit_test(inputs_element_uniform_in_range),
        cmocka_unit_test(inputs_element_normal_scaling),
        cmocka_unit_test(inputs_fill_values_representable),
        // rejections
        cmocka_unit_test(inputs_fill_rejects_bad_input),
        cmocka_unit_test(inputs_fill_axis_scale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
