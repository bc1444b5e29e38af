// test_attention_ref_steps.c — the attention reference's per-key vector steps (exp, scores, P, dP,
// dS) and its multi-term anchored accumulation (reference/attention_ref_lanes_body.h), at every
// vector path this CPU runs (AVX-512, AVX2), against the scalar steps key by key, bit for bit:
// random and special inputs, every run length 0…2·16+1 (each vector width's tails).
// Run: build/rel/tests/test_attention_ref_steps
#include <math.h>
#include <string.h>

#include "test_util.h"

#include "attention_ref_fast.h"
#include "attention_ref_lanes.h"

// ---------------------------------------------------------------------------------------------
// Inputs and comparison

enum { N_MAX = 2 * 16 + 2, D_MAX = 77 };

static double unit(pp_test_rng *g)
{
    return pp_test_rng_unit(g);
}

static double sgn(pp_test_rng *g)
{
    return pp_test_rng_next(g) & 1 ? -1.0 : 1.0;
}

// A binary64 magnitude class: zeros, tiny, huge, ordinary; the caller picks the sign.
static double any_mag(pp_test_rng *g)
{
    switch (pp_test_rng_next(g) % 6) {
    case 0: return 0.0;
    case 1: return ldexp(1.0 + unit(g), -1000 + (int)(pp_test_rng_next(g) % 200));  // tiny
    case 2: return ldexp(1.0 + unit(g), 30 + (int)(pp_test_rng_next(g) % 20));      // near 2^40
    default: return ldexp(1.0 + unit(g), (int)(pp_test_rng_next(g) % 40) - 20);
    }
}

// A binary32 value: ±0, subnormals, powers of two, ordinary.
static double f32(pp_test_rng *g)
{
    double s = sgn(g);
    switch (pp_test_rng_next(g) % 6) {
    case 0: return s * 0.0;
    case 1: return s * 0x1p-149 * (double)(1 + pp_test_rng_next(g) % 4096);
    case 2: return s * ldexp(1.0, (int)(pp_test_rng_next(g) % 120) - 60);
    default: return s * (double)(float)(0.5 + unit(g));
    }
}

// Bit-identical, NaN equal to NaN (a NaN's payload is the hardware's choice, never the lanes').
static int same(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

static int check_arr(const char *isa, const char *what, int64_t n, const double *a, const double *b,
                     int *fails)
{
    for (int64_t i = 0; i < n; i++)
        if (!same(a[i], b[i])) {
            if (*fails < 10) {
                fprintf(stderr, "FAIL: %s: %s[%lld] of %lld differs\n", isa, what, (long long)i,
                        (long long)n);
                pp_test_print_double("scalar", a[i]);
                pp_test_print_double(isa, b[i]);
                pp_test_report_seed();
            }
            ++*fails;
            return 1;
        }
    return 0;
}

static int check_bytes(const char *isa, const char *what, int64_t n, const unsigned char *a,
                       const unsigned char *b, int *fails)
{
    for (int64_t i = 0; i < n; i++)
        if (a[i] != b[i]) {
            if (*fails < 10)
                fprintf(stderr, "FAIL: %s: %s[%lld] of %lld: scalar %d, vector %d\n", isa, what,
                        (long long)i, (long long)n, a[i], b[i]);
            ++*fails;
            return 1;
        }
    return 0;
}

// Every vector path this CPU runs: the widest, and AVX2 below it (the same one where AVX2 is the
// widest); none: the test says so and passes (nothing to compare).
static int paths(const pp_attn_lanes_ *L[2])
{
    L[0] = pp_attn_lanes_pick_(PP_ATTN_REF_LANES_AUTO);
    L[1] = pp_attn_lanes_pick_(PP_ATTN_REF_LANES_AVX2);
    if (!L[0])
        fprintf(stderr, "  no vector path on this CPU: nothing to compare\n");
    return L[0] ? (L[1] && L[1] != L[0] ? 2 : 1) : 0;
}

// ---------------------------------------------------------------------------------------------
// Tests

// exp over a row: x = Sh − M over [−500, 0] and its edges (0, −500 exactly, just inside and
// outside, tiny), far below (cut), −Inf (a masked score: cut); M from 0 to near 2^40, both signs;
// Sl up to u|Sh| of either sign. cut, eh, el must match.
static void attention_ref_steps_exp_row(void **state)
{
    (void)state;
    pp_attn_job_ *J = calloc(1, sizeof *J);
    assert_non_null(J);
    pp_attn_exp_init_(J);
    const double(*tab)[2] = (const double(*)[2])J->exp_tab;
    const pp_attn_lanes_ *L[2];
    int np = paths(L), fails = 0;
    pp_test_rng g = {pp_test_seed() ^ 1};
    for (int p = 0; p < np; p++)
        for (uint64_t rep = 0; rep < pp_test_iters(40); rep++)
            for (int64_t n = 0; n <= N_MAX; n++) {
                double Sh[N_MAX], Sl[N_MAX], e1[N_MAX], l1[N_MAX], e2[N_MAX], l2[N_MAX];
                unsigned char c1[N_MAX], c2[N_MAX];
                double M = sgn(&g) * (pp_test_rng_next(&g) % 3 ? ldexp(unit(&g), (int)(pp_test_rng_next(&g) % 40)) : 0.0);
                for (int64_t j = 0; j < n; j++) {
                    double x;
                    switch (pp_test_rng_next(&g) % 9) {
                    case 0: x = 0.0; break;
                    case 1: x = -500.0; break;
                    case 2: x = -500.0 + sgn(&g) * 0x1p-40; break;
                    case 3: x = -ldexp(unit(&g), -(int)(pp_test_rng_next(&g) % 1000)); break;
                    case 4: x = -500.0 - ldexp(1.0 + unit(&g), (int)(pp_test_rng_next(&g) % 38)); break;
                    case 5: x = -INFINITY; break;
                    default: x = -500.0 * unit(&g); break;
                    }
                    Sh[j] = M + x;
                    if (Sh[j] > M)
                        Sh[j] = M;
                    Sl[j] = isfinite(Sh[j]) ? Sh[j] * 0x1p-53 * (2.0 * unit(&g) - 1.0) : 0.0;
                }
                pp_attn_exp_row_(tab, J->exp_L, n, Sh, Sl, M, e1, l1, c1);
                L[p]->exp_row(tab, J->exp_L, n, Sh, Sl, M, e2, l2, c2);
                if (check_bytes(L[p]->name, "exp cut", n, c1, c2, &fails) ||
                    check_arr(L[p]->name, "exp eh", n, e1, e2, &fails) ||
                    check_arr(L[p]->name, "exp el", n, l1, l2, &fails))
                    pp_test_print_double("M", M);
            }
    free(J);
    assert_int_equal(fails, 0);
}

// Scores from dot results: h of any size (zeros, tiny, near and beyond 2^40), NaN, ±Inf; c up to
// u|h|; T from |h| to far above it (a bound past 2^−40 fails the precondition). The failure flag
// and every value must match.
static void attention_ref_steps_score_keys(void **state)
{
    (void)state;
    const pp_attn_lanes_ *L[2];
    int np = paths(L), fails = 0;
    pp_test_rng g = {pp_test_seed() ^ 2};
    for (int p = 0; p < np; p++)
        for (uint64_t rep = 0; rep < pp_test_iters(40); rep++)
            for (int64_t n = 0; n <= N_MAX; n++) {
                double h[N_MAX], c[N_MAX], T[N_MAX], a[3][N_MAX], b[3][N_MAX];
                int special = pp_test_rng_next(&g) % 4 == 0;
                for (int64_t j = 0; j < n; j++) {
                    h[j] = sgn(&g) * any_mag(&g);
                    c[j] = h[j] * 0x1p-53 * (2.0 * unit(&g) - 1.0);
                    T[j] = fabs(h[j]) * (1.0 + ldexp(unit(&g), (int)(pp_test_rng_next(&g) % 30)));
                    if (special && pp_test_rng_next(&g) % 5 == 0)
                        h[j] = pp_test_rng_next(&g) & 1 ? NAN : sgn(&g) * INFINITY;
                }
                double sh = 1.0 / sqrt(128.0), sl = sh * 0x1p-54, coef = (12.0 + 1.01 * 128.0 * 128.0) * 0x1p-106;
                int r1 = pp_attn_score_keys_(n, h, c, T, sh, sl, fabs(sh), coef, a[0], a[1], a[2]);
                int r2 = L[p]->score_keys(n, h, c, T, sh, sl, fabs(sh), coef, b[0], b[1], b[2]);
                if ((r1 != 0) != (r2 != 0)) {
                    fprintf(stderr, "FAIL: %s: score_keys flag %d, scalar %d (n %lld)\n",
                            L[p]->name, r2, r1, (long long)n);
                    fails++;
                }
                check_arr(L[p]->name, "Sh", n, a[0], b[0], &fails);
                check_arr(L[p]->name, "Sl", n, a[1], b[1], &fails);
                check_arr(L[p]->name, "eS", n, a[2], b[2], &fails);
            }
    assert_int_equal(fails, 0);
}

// P = E·(1/l) where not cut (and untouched where cut), E from 2^−722 to 1, 1/l from 1 down to
// 2^−12.
static void attention_ref_steps_scale_row(void **state)
{
    (void)state;
    const pp_attn_lanes_ *L[2];
    int np = paths(L), fails = 0;
    pp_test_rng g = {pp_test_seed() ^ 3};
    for (int p = 0; p < np; p++)
        for (uint64_t rep = 0; rep < pp_test_iters(40); rep++)
            for (int64_t n = 0; n <= N_MAX; n++) {
                double ah[N_MAX], al[N_MAX], bh[N_MAX], bl[N_MAX];
                unsigned char cut[N_MAX];
                for (int64_t j = 0; j < n; j++) {
                    cut[j] = pp_test_rng_next(&g) % 4 == 0;
                    // a cut key must be left as it is (the row has 0 there; any value here)
                    ah[j] = ldexp(0.5 + 0.5 * unit(&g), -(int)(pp_test_rng_next(&g) % 722));
                    al[j] = ah[j] * 0x1p-53 * (2.0 * unit(&g) - 1.0);
                    bh[j] = ah[j];
                    bl[j] = al[j];
                }
                double rh = ldexp(0.5 + 0.5 * unit(&g), -(int)(pp_test_rng_next(&g) % 12));
                double rl = rh * 0x1p-54 * (2.0 * unit(&g) - 1.0);
                pp_attn_scale_row_(n, ah, al, cut, rh, rl);
                L[p]->scale_row(n, bh, bl, cut, rh, rl);
                check_arr(L[p]->name, "P hi", n, ah, bh, &fails);
                check_arr(L[p]->name, "P lo", n, al, bl, &fails);
            }
    assert_int_equal(fails, 0);
}

// dP from dot results and P·dP: dP of any size and sign (zeros, tiny, large), P as in the row.
static void attention_ref_steps_dp_keys(void **state)
{
    (void)state;
    const pp_attn_lanes_ *L[2];
    int np = paths(L), fails = 0;
    pp_test_rng g = {pp_test_seed() ^ 4};
    for (int p = 0; p < np; p++)
        for (uint64_t rep = 0; rep < pp_test_iters(40); rep++)
            for (int64_t n = 0; n <= N_MAX; n++) {
                double h[N_MAX], c[N_MAX], V[N_MAX], Ph[N_MAX], Pl[N_MAX], a[5][N_MAX], b[5][N_MAX];
                for (int64_t j = 0; j < n; j++) {
                    h[j] = sgn(&g) * any_mag(&g);
                    c[j] = h[j] * 0x1p-53 * (2.0 * unit(&g) - 1.0);
                    V[j] = fabs(h[j]) * (1.0 + unit(&g));
                    Ph[j] = pp_test_rng_next(&g) % 5 ? ldexp(0.5 + 0.5 * unit(&g), -(int)(pp_test_rng_next(&g) % 722)) : 0.0;
                    Pl[j] = Ph[j] * 0x1p-53 * (2.0 * unit(&g) - 1.0);
                }
                double coef = 1.01 * (128.0 * 0x1p-53) * (128.0 * 0x1p-53);
                pp_attn_dp_keys_(n, h, c, V, coef, Ph, Pl, a[0], a[1], a[2], a[3], a[4]);
                L[p]->dp_keys(n, h, c, V, coef, Ph, Pl, b[0], b[1], b[2], b[3], b[4]);
                const char *what[5] = {"dP hi", "dP lo", "dP bound", "P·dP hi", "P·dP lo"};
                for (int t = 0; t < 5; t++)
                    check_arr(L[p]->name, what[t], n, a[t], b[t], &fails);
            }
    assert_int_equal(fails, 0);
}

// dS = P·(dP − D): cut keys, keys whose dŜ falls below 2^−800 (dropped: dP = D exactly, or P
// tiny), and accumulated ones; D of any size. state and e everywhere, dŜ where not cut.
static void attention_ref_steps_ds_keys(void **state)
{
    (void)state;
    const pp_attn_lanes_ *L[2];
    int np = paths(L), fails = 0;
    pp_test_rng g = {pp_test_seed() ^ 5};
    for (int p = 0; p < np; p++)
        for (uint64_t rep = 0; rep < pp_test_iters(40); rep++)
            for (int64_t n = 0; n <= N_MAX; n++) {
                double Ph[N_MAX], Pl[N_MAX], dph[N_MAX], dpl[N_MAX], edp[N_MAX];
                double a[3][N_MAX], b[3][N_MAX];
                unsigned char cut[N_MAX], s1[N_MAX], s2[N_MAX];
                double Dh = sgn(&g) * any_mag(&g);
                pp_attn_ds_row_ R = {.Dh = Dh, .Dl = Dh * 0x1p-54 * (2.0 * unit(&g) - 1.0),
                                     .eD = fabs(Dh) * 0x1p-90 + 0x1p-1000, .aD = fabs(Dh) * (1.0 + 0x1p-50),
                                     .dP = 0x1p-80 * (1.0 + unit(&g))};
                for (int64_t j = 0; j < n; j++) {
                    cut[j] = pp_test_rng_next(&g) % 5 == 0;
                    Ph[j] = cut[j] ? 0.0 : ldexp(0.5 + 0.5 * unit(&g), -(int)(pp_test_rng_next(&g) % 722));
                    Pl[j] = Ph[j] * 0x1p-53 * (2.0 * unit(&g) - 1.0);
                    int eq = pp_test_rng_next(&g) % 4 == 0;  // dP = D: dŜ = 0, dropped
                    dph[j] = eq ? R.Dh : sgn(&g) * any_mag(&g);
                    dpl[j] = eq ? R.Dl : dph[j] * 0x1p-53 * (2.0 * unit(&g) - 1.0);
                    edp[j] = fabs(dph[j]) * 0x1p-90;
                    a[0][j] = b[0][j] = a[1][j] = b[1][j] = 0.0;  // unwritten where cut
                }
                pp_attn_ds_keys_(&R, n, Ph, Pl, dph, dpl, edp, cut, a[0], a[1], a[2], s1);
                L[p]->ds_keys(&R, n, Ph, Pl, dph, dpl, edp, cut, b[0], b[1], b[2], s2);
                check_bytes(L[p]->name, "dS state", n, s1, s2, &fails);
                check_arr(L[p]->name, "dS bound", n, a[2], b[2], &fails);
                for (int64_t j = 0; j < n; j++)
                    if (s1[j] != PP_ATTN_BLK_CUT &&
                        (check_arr(L[p]->name, "dS hi", 1, a[0] + j, b[0] + j, &fails) ||
                         check_arr(L[p]->name, "dS lo", 1, a[1] + j, b[1] + j, &fails)))
                        break;
            }
    assert_int_equal(fails, 0);
}

// n ≤ 32 terms into one anchored accumulator, against n one-term calls of the portable loop in
// order: d from 0 to 77 (every tail of 4·8, 8 and 4 lanes), multipliers from 2^−800 up, binary32
// y with zeros and subnormals, mirrored terms that cancel exactly, H at anchors 1.5·2^k of every
// size (or anywhere: the same operations either way).
static void attention_ref_steps_acc_multi(void **state)
{
    (void)state;
    const pp_attn_lanes_ *L[2];
    int np = paths(L), fails = 0;
    pp_test_rng g = {pp_test_seed() ^ 6};
    double(*y)[D_MAX] = calloc(PP_ATTN_ACC_TERMS, sizeof *y);
    assert_non_null(y);
    for (int p = 0; p < np; p++)
        for (uint64_t rep = 0; rep < pp_test_iters(100); rep++) {
            int64_t d = (int64_t)(rep % (D_MAX + 1)), n = (int64_t)(pp_test_rng_next(&g) % (PP_ATTN_ACC_TERMS + 1));
            const double *yp[PP_ATTN_ACC_TERMS];
            double xh[PP_ATTN_ACC_TERMS], xl[PP_ATTN_ACC_TERMS];
            for (int64_t t = 0; t < n; t++) {
                int mirror = t > 0 && pp_test_rng_next(&g) % 4 == 0;
                for (int64_t l = 0; l < d; l++)
                    y[t][l] = mirror ? y[t - 1][l] : f32(&g);
                yp[t] = y[t];
                xh[t] = mirror ? -xh[t - 1] : sgn(&g) * ldexp(0.5 + 0.5 * unit(&g), (int)(pp_test_rng_next(&g) % 820) - 799);
                xl[t] = mirror ? -xl[t - 1] : xh[t] * 0x1p-53 * (2.0 * unit(&g) - 1.0);
            }
            double ah[D_MAX + 1], al[D_MAX + 1], bh[D_MAX + 1], bl[D_MAX + 1];
            for (int64_t l = 0; l < d; l++) {
                ah[l] = bh[l] = rep % 2 ? ldexp(1.5, (int)(pp_test_rng_next(&g) % 1800) - 900) : f32(&g);
                al[l] = bl[l] = ah[l] * 0x1p-60;
            }
            for (int64_t t = 0; t < n; t++)
                pp_attn_acc_multi_(ah, al, d, 1, yp + t, xh + t, xl + t);
            L[p]->acc_multi(bh, bl, d, n, yp, xh, xl);
            if (check_arr(L[p]->name, "acc h", d, ah, bh, &fails) ||
                check_arr(L[p]->name, "acc lo", d, al, bl, &fails))
                fprintf(stderr, "  (d %lld, %lld terms)\n", (long long)d, (long long)n);
            // the portable multi-term loop is the same as n calls too
            for (int64_t l = 0; l < d; l++) {
                bh[l] = f32(&g);
                bl[l] = bh[l] * 0x1p-60;
                ah[l] = bh[l];
                al[l] = bl[l];
            }
            for (int64_t t = 0; t < n; t++)
                pp_attn_acc_multi_(ah, al, d, 1, yp + t, xh + t, xl + t);
            pp_attn_acc_multi_(bh, bl, d, n, yp, xh, xl);
            check_arr("portable", "acc_multi h", d, ah, bh, &fails);
            check_arr("portable", "acc_multi lo", d, al, bl, &fails);
        }
    free(y);
    assert_int_equal(fails, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(attention_ref_steps_exp_row),
        cmocka_unit_test(attention_ref_steps_score_keys),
        cmocka_unit_test(attention_ref_steps_scale_row),
        cmocka_unit_test(attention_ref_steps_dp_keys),
        cmocka_unit_test(attention_ref_steps_ds_keys),
        cmocka_unit_test(attention_ref_steps_acc_multi),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
