// test_gemm_cpu.c — the CPU GEMM emulation (kernels/gemm.h, kernels/cpu/gemm.c): hand-computed
// cases for every knob, an independent MPFR emulation bit for bit, scalars correctly rounded,
// single rounding of the accumulate step, thread-count invariance. Run: build/rel/tests/test_gemm_cpu
#include <math.h>
#include <string.h>
#include <stdio.h>  // before mpfr.h: declares mpfr_fprintf
#include <mpfr.h>

#include "test_util.h"

#include "cpu/gemm.h"
#include "gemm_thread.h"

// ---------------------------------------------------------------------------------------------
// Helpers: random values, failure printing (bit comparison and the generator: test_util.h)

static const pp_format_id FORMATS[3] = {PP_FMT_FP16, PP_FMT_BF16, PP_FMT_FP32};

// A random value of f. Profiles: 0 moderate (|x| in [2^−4, 2^4]), 1 any finite bit pattern,
// 2 near max_finite, 3 subnormal, 4 mostly moderate with ±0, ±Inf, NaN sprinkled in.
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
    case 4: {
        uint64_t u = pp_test_rng_next(r) % 16;
        if (u == 0)
            return sign * 0.0;
        if (u == 1 && pp_test_rng_next(r) % 8 == 0)
            return sign * INFINITY;
        if (u == 2 && pp_test_rng_next(r) % 8 == 0)
            return NAN;
    } /* fall through */
    default:
        return sign * pp_round(f, ldexp(1.0 + pp_test_rng_unit(r), (int)(pp_test_rng_next(r) % 9) - 4), PP_RND_NE, 0);
    }
}

static const char *vname(const pp_gemm_variant *v, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s/%s/alpha=%s%.17g", pp_format_get(v->format).name,
             pp_gemm_accum_name(v->accum), pp_gemm_scale_name(v->scale),
             v->alpha_given ? "" : "1/sqrt(k)", v->alpha_given ? v->alpha : 0.0);
    return buf;
}

// ---------------------------------------------------------------------------------------------
// An independent emulation with MPFR: each step computed at the target precision with
// correct rounding, then mpfr_check_range + mpfr_subnormalize in the target's exponent range
// (the documented MPFR way to emulate IEEE formats with subnormals and overflow).

// Rounds r (precision p, ternary t, computed in MPFR's default range) into f's range.
static double emu_finish(mpfr_t r, int t, pp_format_id f)
{
    pp_format F = pp_format_get(f);
    mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
    mpfr_set_emin(F.emin - F.p + 2);  // MPFR's exponents: x = m·2^e with m in [½, 1)
    mpfr_set_emax(F.emax + 1);
    t = mpfr_check_range(r, t, MPFR_RNDN);
    mpfr_subnormalize(r, t, MPFR_RNDN);
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
    return mpfr_get_d(r, MPFR_RNDN);
}

// RN_f(x·y + z), RN_f(x·y), RN_f(x): one correct rounding each.
static double emu_fma(pp_format_id f, double x, double y, double z)
{
    mpfr_t r, X, Y, Z;
    mpfr_init2(r, pp_format_get(f).p);
    mpfr_inits2(64, X, Y, Z, (mpfr_ptr)0);
    mpfr_set_d(X, x, MPFR_RNDN);
    mpfr_set_d(Y, y, MPFR_RNDN);
    mpfr_set_d(Z, z, MPFR_RNDN);
    double v = emu_finish(r, mpfr_fma(r, X, Y, Z, MPFR_RNDN), f);
    mpfr_clears(r, X, Y, Z, (mpfr_ptr)0);
    return v;
}

static double emu_mul(pp_format_id f, double x, double y)
{
    mpfr_t r, X;
    mpfr_init2(r, pp_format_get(f).p);
    mpfr_init2(X, 64);
    mpfr_set_d(X, x, MPFR_RNDN);
    double v = emu_finish(r, mpfr_mul_d(r, X, y, MPFR_RNDN), f);
    mpfr_clears(r, X, (mpfr_ptr)0);
    return v;
}

static double emu_cvt(pp_format_id f, double x)
{
    mpfr_t r;
    mpfr_init2(r, pp_format_get(f).p);
    double v = emu_finish(r, mpfr_set_d(r, x, MPFR_RNDN), f);
    mpfr_clear(r);
    return v;
}

// RN_f(√α), α ≥ 0 binary64: mpfr_sqrt is correctly rounded.
static double emu_sqrt(pp_format_id f, double alpha)
{
    mpfr_t r, X;
    mpfr_init2(r, pp_format_get(f).p);
    mpfr_init2(X, 64);
    mpfr_set_d(X, alpha, MPFR_RNDN);
    double v = emu_finish(r, mpfr_sqrt(r, X, MPFR_RNDN), f);
    mpfr_clears(r, X, (mpfr_ptr)0);
    return v;
}

// RN_f(k^(−1/q)), q = 2 or 4: 300-bit enclosures lo ≤ y ≤ hi from directed roundings, each rounded
// to f; RN_f is monotonic, so equal results are RN_f(y). Unequal ones fail the test (never seen).
static double emu_kroot(pp_format_id f, uint64_t k, int q)
{
    mpfr_t K, lo, hi, r;
    mpfr_inits2(300, K, lo, hi, (mpfr_ptr)0);
    mpfr_init2(r, pp_format_get(f).p);
    mpfr_set_d(K, (double)k, MPFR_RNDN);
    if (q == 2) {
        mpfr_rec_sqrt(lo, K, MPFR_RNDD);
        mpfr_rec_sqrt(hi, K, MPFR_RNDU);
    } else {
        mpfr_sqrt(lo, K, MPFR_RNDU);
        mpfr_rec_sqrt(lo, lo, MPFR_RNDD);  // ≤ 1/√(√k)
        mpfr_sqrt(hi, K, MPFR_RNDD);
        mpfr_rec_sqrt(hi, hi, MPFR_RNDU);  // ≥ 1/√(√k)
    }
    double vlo = emu_finish(r, mpfr_set(r, lo, MPFR_RNDN), f);
    double vhi = emu_finish(r, mpfr_set(r, hi, MPFR_RNDN), f);
    mpfr_clears(K, lo, hi, r, (mpfr_ptr)0);
    if (vlo != vhi) {
        fprintf(stderr, "emu_kroot: k = %llu, q = %d undecided at 300 bits\n", (unsigned long long)k, q);
        fail();
    }
    return vlo;
}

// The whole variant, step by step (kernels/gemm.h's definition, written independently).
static void emu_gemm(const pp_gemm_variant *v, int64_t batch, int64_t m, int64_t n, int64_t k,
                     const double *a, const double *b, double *c)
{
    pp_format_id F = v->format, cf = v->accum == PP_GEMM_ACC_FP32 ? PP_FMT_FP32 : F;
    double alpha_c = 1.0, sa = 1.0, sb = 1.0;
    if (v->scale == PP_GEMM_SCALE_POST)
        alpha_c = v->alpha_given ? emu_cvt(cf, v->alpha) : emu_kroot(cf, (uint64_t)k, 2);
    else if (v->scale == PP_GEMM_SCALE_PRE)
        sa = sb = v->alpha_given ? emu_sqrt(PP_FMT_FP32, v->alpha) : emu_kroot(PP_FMT_FP32, (uint64_t)k, 4);
    else
        sa = v->alpha_given ? emu_cvt(PP_FMT_FP32, v->alpha) : emu_kroot(PP_FMT_FP32, (uint64_t)k, 2);
    for (int64_t bi = 0; bi < batch; bi++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double acc = 0.0;
                for (int64_t l = 0; l < k; l++) {
                    double x = a[(bi * m + i) * k + l], y = b[(bi * k + l) * n + j];
                    if (v->scale != PP_GEMM_SCALE_POST)
                        x = emu_cvt(F, emu_mul(PP_FMT_FP32, sa, x));
                    if (v->scale == PP_GEMM_SCALE_PRE)
                        y = emu_cvt(F, emu_mul(PP_FMT_FP32, sb, y));
                    acc = emu_fma(cf, x, y, acc);
                }
                c[(bi * m + i) * n + j] = v->accum == PP_GEMM_ACC_FP32
                                              ? emu_cvt(F, emu_mul(PP_FMT_FP32, alpha_c, acc))
                                              : emu_mul(F, alpha_c, acc);
            }
}

// Runs v with pp_gemm_cpu and checks every output against want, bit for bit.
static int check_gemm(const char *prop, const pp_gemm_variant *v, int64_t batch, int64_t m, int64_t n,
                      int64_t k, const double *a, const double *b, const double *want, int threads)
{
    int64_t nc = batch * m * n;
    double *got = malloc((size_t)(nc ? nc : 1) * sizeof *got);
    assert_non_null(got);
    pp_error err = {0};
    int rc = pp_gemm_cpu(v, batch, m, n, k, a, b, got, threads, &err);
    if (rc != PP_OK) {
        fprintf(stderr, "%s: pp_gemm_cpu failed: %s\n", prop, err.msg);
        free(got);
        return 1;
    }
    int bad = 0;
    char buf[160];
    for (int64_t o = 0; o < nc && bad < 10; o++) {
        if (pp_test_same_or_nan(got[o], want[o]))
            continue;
        if (!bad)
            pp_test_report_seed();
        fprintf(stderr, "FAIL %s: %s, shape [%lld, %lld, %lld, k=%lld], output %lld\n", prop,
                vname(v, buf, sizeof buf), (long long)batch, (long long)m, (long long)n,
                (long long)k, (long long)o);
        int64_t bi = o / (m * n), i = (o / n) % m, j = o % n;
        for (int64_t l = 0; l < k && l < 4; l++) {
            pp_test_print_double("a[i,l]", a[(bi * m + i) * k + l]);
            pp_test_print_double("b[l,j]", b[(bi * k + l) * n + j]);
        }
        pp_test_print_double("got ", got[o]);
        pp_test_print_double("want", want[o]);
        bad++;
    }
    free(got);
    return bad;
}

// ---------------------------------------------------------------------------------------------
// Scalars

static void gemm_scalars_kroot_correctly_rounded(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() ^ 1};
    int bad = 0;
    uint64_t n = pp_test_iters(3000);
    for (uint64_t it = 0; it < n + 200 && bad < 10; it++) {
        uint64_t k;
        if (it < n)
            k = it + 1;  // every small k
        else if (it < n + 53)
            k = UINT64_C(1) << (it - n);  // powers of two: exact roots, fp16 subnormal ties (2^50)
        else
            k = 1 + (pp_test_rng_next(&r) >> (11 + pp_test_rng_next(&r) % 40));  // up to 2^53
        for (int fi = 0; fi < 3; fi++)
            for (int q = 2; q <= 4; q += 2) {
                double got = pp_gemm_round_kroot(FORMATS[fi], k, q);
                double want = emu_kroot(FORMATS[fi], k, q);
                if (!pp_test_same_or_nan(got, want) && bad++ < 10) {
                    fprintf(stderr, "FAIL scalars_kroot: %s, k = %llu, q = %d\n",
                            pp_format_get(FORMATS[fi]).name, (unsigned long long)k, q);
                    pp_test_print_double("got ", got);
                    pp_test_print_double("want", want);
                }
            }
    }
    assert_int_equal(bad, 0);
}

static void gemm_scalars_sqrt_correctly_rounded(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() ^ 2};
    // exact midpoints squared (ties) and the fp32 overflow threshold squared
    // fp32 midpoints squared are exact binary64 ties: 1 + 2^−24 (→ 1), 1 + 3·2^−24 (→ 1 + 2^−22),
    // 2^−150 (→ 0), 3·2^−150 (→ 2^−148), the overflow threshold 2^128 − 2^103 (→ Inf)
    const double fixed[] = {0.0, 1.0, 0.25, 0x1p-300, 0x1p-298, 0x1.000001p+0 * 0x1.000001p+0,
                            0x1.000003p+0 * 0x1.000003p+0, 0x1p-150 * 0x1p-150,
                            0x1.8p-149 * 0x1.8p-149, 0x1.ffffffp+127 * 0x1.ffffffp+127,
                            0x1.fffffep+127 * 0x1.fffffep+127, 1e300, 1e-300, 0x1p-1074,
                            1.7976931348623157e308};
    int bad = 0;
    uint64_t n = pp_test_iters(20000);
    for (uint64_t it = 0; it < n + sizeof fixed / sizeof *fixed && bad < 10; it++) {
        double alpha = it < sizeof fixed / sizeof *fixed
                           ? fixed[it]
                           : ldexp(1.0 + pp_test_rng_unit(&r), (int)(pp_test_rng_next(&r) % 2000) - 1000);
        if (it % 3 != 2 && it >= sizeof fixed / sizeof *fixed) {  // at or next to a squared midpoint
            double m = ldexp(1.0 + (double)(pp_test_rng_next(&r) >> 41) * 0x1p-23 + 0x1p-24,
                             (int)(pp_test_rng_next(&r) % 200) - 100);
            alpha = it % 3 == 0 ? m * m : nextafter(m * m, (pp_test_rng_next(&r) & 1) ? INFINITY : 0.0);
        }
        for (int fi = 0; fi < 3; fi++) {
            double got = pp_gemm_round_sqrt(FORMATS[fi], alpha);
            double want = emu_sqrt(FORMATS[fi], alpha);
            if (!pp_test_same_or_nan(got, want) && bad++ < 10) {
                fprintf(stderr, "FAIL scalars_sqrt: %s\n", pp_format_get(FORMATS[fi]).name);
                pp_test_print_double("alpha", alpha);
                pp_test_print_double("got  ", got);
                pp_test_print_double("want ", want);
            }
        }
    }
    assert_int_equal(bad, 0);
}

// ---------------------------------------------------------------------------------------------
// The accumulate step

// The counterexample in kernels/gemm.h: bf16, 1.5·(1 + 3·2^−7) + 2^−60. The product is the bf16
// midpoint 1 + 68.5·2^−7; the 2^−60 puts the exact sum above it, so RN_bf16 is 1 + 69·2^−7.
// Rounding the binary64 sum (which drops the 2^−60) would tie to even: 1 + 68·2^−7.
static void gemm_step_storage_single_rounding_bf16(void **state)
{
    (void)state;
    double a = 1.5, b = 1.0 + 3.0 * 0x1p-7, acc = 0x1p-60;
    assert_true(pp_test_same_or_nan(pp_gemm_step_storage(PP_FMT_BF16, a, b, acc), 1.0 + 69.0 * 0x1p-7));
    assert_true(pp_test_same_or_nan(pp_round(PP_FMT_BF16, a * b + acc, PP_RND_NE, 0), 1.0 + 68.0 * 0x1p-7));
    assert_true(pp_test_same_or_nan(pp_gemm_step_storage(PP_FMT_BF16, -a, b, -acc), -(1.0 + 69.0 * 0x1p-7)));
    assert_true(pp_test_same_or_nan(pp_gemm_step_storage(PP_FMT_BF16, a, b, -acc), 1.0 + 68.0 * 0x1p-7));
    assert_true(pp_test_same_or_nan(emu_fma(PP_FMT_BF16, a, b, acc), 1.0 + 69.0 * 0x1p-7));
}

// The step against MPFR (one correct rounding in the format) on random and adversarial triples:
// products that are midpoints with a tiny accumulator, huge and tiny mixes, subnormals, specials.
static void gemm_step_storage_vs_mpfr(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() ^ 3};
    int bad = 0;
    uint64_t n = pp_test_iters(30000);
    for (uint64_t it = 0; it < n && bad < 10; it++) {
        pp_format_id f = FORMATS[it % 3];
        pp_format F = pp_format_get(f);
        double a = rnd_value(&r, f, (int)(pp_test_rng_next(&r) % 5));
        double b = rnd_value(&r, f, (int)(pp_test_rng_next(&r) % 5));
        double acc = rnd_value(&r, f, (int)(pp_test_rng_next(&r) % 5));
        if (it % 4 == 1) {  // a·b an f-midpoint (or close), acc tiny of either sign
            a = pp_round(f, 1.5 * ldexp(1.0, (int)(pp_test_rng_next(&r) % 20) - 10), PP_RND_NE, 0);
            b = pp_round(f, 1.0 + (double)(2 * (pp_test_rng_next(&r) % 64) + 1) * ldexp(1.0, 1 - F.p), PP_RND_NE, 0);
            acc = ((pp_test_rng_next(&r) & 1) ? 1 : -1) * ldexp(1.0, F.emin - F.p + 1 + (int)(pp_test_rng_next(&r) % 40));
            acc = pp_round(f, acc, PP_RND_NE, 0);
        }
        double got = pp_gemm_step_storage(f, a, b, acc);
        double want = emu_fma(f, a, b, acc);
        if (!pp_test_same_or_nan(got, want) && bad++ < 10) {
            if (bad == 1)
                pp_test_report_seed();
            fprintf(stderr, "FAIL step_storage: %s, trial %llu\n", F.name, (unsigned long long)it);
            pp_test_print_double("a   ", a);
            pp_test_print_double("b   ", b);
            pp_test_print_double("acc ", acc);
            pp_test_print_double("got ", got);
            pp_test_print_double("want", want);
        }
        if (f == PP_FMT_FP32) {  // storage accumulation in fp32 is fmaf, bit for bit
            double g2 = pp_gemm_step_fp32((float)a, (float)b, (float)acc);
            if (!pp_test_same_or_nan(got, g2) && bad++ < 10) {
                fprintf(stderr, "FAIL step_storage(fp32) != fmaf, trial %llu\n", (unsigned long long)it);
                pp_test_print_double("a", a);
                pp_test_print_double("b", b);
                pp_test_print_double("acc", acc);
            }
        }
    }
    assert_int_equal(bad, 0);
}

// fmaf (the fp32 step) against MPFR at 24 bits with subnormals.
static void gemm_step_fp32_vs_mpfr(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() ^ 4};
    int bad = 0;
    uint64_t n = pp_test_iters(30000);
    for (uint64_t it = 0; it < n && bad < 10; it++) {
        pp_format_id f = FORMATS[it % 3];
        double a = rnd_value(&r, f, (int)(pp_test_rng_next(&r) % 5));
        double b = rnd_value(&r, f, (int)(pp_test_rng_next(&r) % 5));
        double acc = rnd_value(&r, PP_FMT_FP32, (int)(pp_test_rng_next(&r) % 5));
        double got = pp_gemm_step_fp32((float)a, (float)b, (float)acc);
        double want = emu_fma(PP_FMT_FP32, a, b, acc);
        if (!pp_test_same_or_nan(got, want) && bad++ < 10) {
            fprintf(stderr, "FAIL step_fp32: inputs %s, trial %llu\n", pp_format_get(f).name,
                    (unsigned long long)it);
            pp_test_print_double("a   ", a);
            pp_test_print_double("b   ", b);
            pp_test_print_double("acc ", acc);
            pp_test_print_double("got ", got);
            pp_test_print_double("want", want);
        }
    }
    assert_int_equal(bad, 0);
}

// ---------------------------------------------------------------------------------------------
// Hand-computed cases

// One 1×4 by 4×2 product under all 18 knob settings, α = 1/√4 = ½ (default):
//   A = [1, 1, 1, 1], B = [[1, 2048], [1, 1], [1, 1], [1, 1]]; exact C = ½·[4, 2051] = [2, 1025.5].
// post:  α_c = ½ in every compute type.
//   column 1, fp32 acc: 2051 exact, ½·2051 = 1025.5 → fp16 (ulp 1 at 1024): tie → 1026 (even);
//     bf16 (ulp 8): 1024; fp32: 1025.5.
//   column 1, storage acc: fp16: 2048 + 1 = 2049 is a tie (ulp 2) → 2048, three times → 2048,
//     ·½ → 1024; bf16 (ulp 16) likewise 1024; fp32: 2051 → 1025.5.
// pre-a: s = RN_32(½) = ½, A' = ½: products [½, 1024, ½, ½]·… column 1 = 1024 + ½ + ½ + ½:
//   fp32 acc 1025.5 → fp16 1026, bf16 1024, fp32 1025.5; storage fp16: 1024.5 ties to 1024 each
//   step → 1024; bf16 1024; fp32 1025.5. Column 0: 4·½ = 2 everywhere.
// pre:   s = RN_32(2^−½) = 0x1.6a09e6p−1. fp16 and bf16: a' = RN_F(s) = 0x1.6ap−1 = 0.70703125
//   (both formats agree), b'_0 of column 1 = RN_F(2048·s) = 1448 (fp16 ulp 1, bf16 ulp 8:
//   2048s = 1448.15…). a'·a' = 0x1.ffe4p−2 (0.4998931884765625), a'·1448 = 1023.78125.
//   fp32 acc, column 0: 4 exact sums of 0x1.ffe4p−2 → 0x1.ffe4p+0 → fp16: 2 (ulp 2^−9 at [1,2):
//     1.99957… rounds up), bf16: 2; column 1: 1023.78125 → 0x1.0011fep+10 → 0x1.0031fcp+10 →
//     0x1.0051fap+10 = 1025.2808837890625 → fp16 1025, bf16 1024.
//   storage acc fp16/bf16: a'·a' rounds to ½ (fp16 ulp 2^−12 at [¼, ½): 2047.56 → 2048·2^−12),
//     so column 0 = ½ + ½ + ½ + ½ = 2; column 1: 1023.78125 → 1024, + 0.49989… → 1024 each step.
//   fp32: a' = s, a'·a' = RN_32(s²) = 0x1.fffffep−2 at step 1, then 0x1.fffffep−1,
//     0x1.7ffffep+0, 0x1.fffffep+0; column 1: 2048s·s rounds to 0x1.fffffep+9 = 1023.99993896…,
//     then + 0x1.fffffep−2 each step: 0x1.001ffep+10, 0x1.003ffep+10, 0x1.005ffep+10.
static void gemm_hand_knob_table(void **state)
{
    (void)state;
    const double A[4] = {1, 1, 1, 1};
    const double B[8] = {1, 2048, 1, 1, 1, 1, 1, 1};
    static const struct {
        pp_format_id f;
        pp_gemm_accum acc;
        pp_gemm_scale sc;
        double c0, c1;
    } cases[] = {
        {PP_FMT_FP16, PP_GEMM_ACC_FP32, PP_GEMM_SCALE_POST, 2.0, 1026.0},
        {PP_FMT_FP16, PP_GEMM_ACC_FP32, PP_GEMM_SCALE_PRE, 2.0, 1025.0},
        {PP_FMT_FP16, PP_GEMM_ACC_FP32, PP_GEMM_SCALE_PRE_A, 2.0, 1026.0},
        {PP_FMT_FP16, PP_GEMM_ACC_STORAGE, PP_GEMM_SCALE_POST, 2.0, 1024.0},
        {PP_FMT_FP16, PP_GEMM_ACC_STORAGE, PP_GEMM_SCALE_PRE, 2.0, 1024.0},
        {PP_FMT_FP16, PP_GEMM_ACC_STORAGE, PP_GEMM_SCALE_PRE_A, 2.0, 1024.0},
        {PP_FMT_BF16, PP_GEMM_ACC_FP32, PP_GEMM_SCALE_POST, 2.0, 1024.0},
        {PP_FMT_BF16, PP_GEMM_ACC_FP32, PP_GEMM_SCALE_PRE, 2.0, 1024.0},
        {PP_FMT_BF16, PP_GEMM_ACC_FP32, PP_GEMM_SCALE_PRE_A, 2.0, 1024.0},
        {PP_FMT_BF16, PP_GEMM_ACC_STORAGE, PP_GEMM_SCALE_POST, 2.0, 1024.0},
        {PP_FMT_BF16, PP_GEMM_ACC_STORAGE, PP_GEMM_SCALE_PRE, 2.0, 1024.0},
        {PP_FMT_BF16, PP_GEMM_ACC_STORAGE, PP_GEMM_SCALE_PRE_A, 2.0, 1024.0},
        {PP_FMT_FP32, PP_GEMM_ACC_FP32, PP_GEMM_SCALE_POST, 2.0, 1025.5},
        {PP_FMT_FP32, PP_GEMM_ACC_FP32, PP_GEMM_SCALE_PRE, 0x1.fffffep+0, 0x1.005ffep+10},
        {PP_FMT_FP32, PP_GEMM_ACC_FP32, PP_GEMM_SCALE_PRE_A, 2.0, 1025.5},
        {PP_FMT_FP32, PP_GEMM_ACC_STORAGE, PP_GEMM_SCALE_POST, 2.0, 1025.5},
        {PP_FMT_FP32, PP_GEMM_ACC_STORAGE, PP_GEMM_SCALE_PRE, 0x1.fffffep+0, 0x1.005ffep+10},
        {PP_FMT_FP32, PP_GEMM_ACC_STORAGE, PP_GEMM_SCALE_PRE_A, 2.0, 1025.5},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pp_gemm_variant v = {.format = cases[i].f, .accum = cases[i].acc, .scale = cases[i].sc};
        double want[2] = {cases[i].c0, cases[i].c1};
        bad += check_gemm("hand_knob_table", &v, 1, 1, 2, 4, A, B, want, 1);
        double emu[2];
        emu_gemm(&v, 1, 1, 2, 4, A, B, emu);  // the MPFR emulation agrees with the hand values
        bad += !pp_test_same_or_nan(emu[0], want[0]) || !pp_test_same_or_nan(emu[1], want[1]);
    }
    assert_int_equal(bad, 0);
}

// BLOOM-104B in miniature: fp16, k = 16, every a = b = 64, α = 1/√16 = ¼. The exact C = 16384.
// post with fp16 accumulation: the partial sums 4096·l reach 61440, then 65536 ≥ 65520 (the
// fp16 overflow threshold) → Inf, and ¼·Inf = Inf: the output overflows although C is finite.
// post with fp32 accumulation: 65536·¼ = 16384. pre: s = RN_32(16^−¼) = ½, a' = b' = 32,
// products 1024, sums ≤ 16384 → 16384. pre-a: s = ¼, a' = 16, products 1024 → 16384.
static void gemm_hand_bloom_overflow(void **state)
{
    (void)state;
    double A[16], B[16];
    for (int i = 0; i < 16; i++)
        A[i] = B[i] = 64.0;
    const double inf = INFINITY, fin = 16384.0;
    pp_gemm_variant v = {.format = PP_FMT_FP16, .accum = PP_GEMM_ACC_STORAGE, .scale = PP_GEMM_SCALE_POST};
    int bad = check_gemm("bloom: fp16 accumulation, post-scaling overflows", &v, 1, 1, 1, 16, A, B, &inf, 1);
    v.scale = PP_GEMM_SCALE_PRE;
    bad += check_gemm("bloom: fp16 accumulation, pre-scaling stays finite", &v, 1, 1, 1, 16, A, B, &fin, 1);
    v.scale = PP_GEMM_SCALE_PRE_A;
    bad += check_gemm("bloom: fp16 accumulation, pre-a stays finite", &v, 1, 1, 1, 16, A, B, &fin, 1);
    v.accum = PP_GEMM_ACC_FP32;
    v.scale = PP_GEMM_SCALE_POST;
    bad += check_gemm("bloom: fp32 accumulation, post-scaling is finite", &v, 1, 1, 1, 16, A, B, &fin, 1);
    assert_int_equal(bad, 0);
}

// Order matters: fp16 accumulation, α = 1, one 2048 and eight 1s. Left to right 2048 + 1 = 2049
// is a tie (ulp 2) → 2048, eight times: C = 2048. The 1s first: 8, then 8 + 2048 = 2056.
static void gemm_hand_order_matters(void **state)
{
    (void)state;
    double fwd[9] = {2048, 1, 1, 1, 1, 1, 1, 1, 1}, rev[9] = {1, 1, 1, 1, 1, 1, 1, 1, 2048}, B[9];
    for (int i = 0; i < 9; i++)
        B[i] = 1.0;
    pp_gemm_variant v = {.format = PP_FMT_FP16, .accum = PP_GEMM_ACC_STORAGE, .scale = PP_GEMM_SCALE_POST,
                         .alpha_given = 1, .alpha = 1.0};
    const double c_fwd = 2048.0, c_rev = 2056.0;
    int bad = check_gemm("order: 2048 first", &v, 1, 1, 1, 9, fwd, B, &c_fwd, 1);
    bad += check_gemm("order: 2048 last", &v, 1, 1, 1, 9, rev, B, &c_rev, 1);
    v.accum = PP_GEMM_ACC_FP32;  // 2056 either way in fp32
    bad += check_gemm("order: fp32 accumulation", &v, 1, 1, 1, 9, fwd, B, &c_rev, 1);
    assert_int_equal(bad, 0);
}

// One rounding per fp32 step: A = [1, −(1 + 2^−23)], B = [1, 1 − 2^−23], α = 1. acc = 1, then
// fmaf(−(1 + 2^−23), 1 − 2^−23, 1) = 1 − (1 − 2^−46) = 2^−46 exactly (a separate product
// rounding would give −1 and C = 0). Storage accumulation in fp32 is the same single rounding.
static void gemm_hand_fused_fp32(void **state)
{
    (void)state;
    const double A[2] = {1.0, -(1.0 + 0x1p-23)}, B[2] = {1.0, 1.0 - 0x1p-23}, want = 0x1p-46;
    pp_gemm_variant v = {.format = PP_FMT_FP32, .accum = PP_GEMM_ACC_FP32, .scale = PP_GEMM_SCALE_POST,
                         .alpha_given = 1, .alpha = 1.0};
    int bad = check_gemm("fused fp32 step", &v, 1, 1, 1, 2, A, B, &want, 1);
    v.accum = PP_GEMM_ACC_STORAGE;
    bad += check_gemm("fused fp32 storage step", &v, 1, 1, 1, 2, A, B, &want, 1);
    assert_int_equal(bad, 0);
}

// Subnormals and ties: fp16, α = 1, A = [2^−24, 2^−24], B = [½, ½]. Each product is 2^−25, the
// midpoint between 0 and fp16's smallest subnormal 2^−24. fp16 accumulation: RN(2^−25) = 0
// (ties to even), twice: C = 0. fp32 accumulation: 2^−24 exactly, stored as fp16 2^−24.
// bf16 accumulation, the single-rounding counterexample: A = [2^−60, 1.5], B = [1, 1 + 3·2^−7]
// → C = 1 + 69·2^−7 = 1.5390625.
static void gemm_hand_subnormal_ties(void **state)
{
    (void)state;
    const double A[2] = {0x1p-24, 0x1p-24}, B[2] = {0.5, 0.5}, zero = 0.0, tiny = 0x1p-24;
    pp_gemm_variant v = {.format = PP_FMT_FP16, .accum = PP_GEMM_ACC_STORAGE, .scale = PP_GEMM_SCALE_POST,
                         .alpha_given = 1, .alpha = 1.0};
    int bad = check_gemm("fp16 subnormal ties", &v, 1, 1, 1, 2, A, B, &zero, 1);
    v.accum = PP_GEMM_ACC_FP32;
    bad += check_gemm("fp16 subnormal, fp32 acc", &v, 1, 1, 1, 2, A, B, &tiny, 1);
    const double A2[2] = {0x1p-60, 1.5}, B2[2] = {1.0, 1.0 + 3.0 * 0x1p-7}, c2 = 1.5390625;
    pp_gemm_variant w = {.format = PP_FMT_BF16, .accum = PP_GEMM_ACC_STORAGE, .scale = PP_GEMM_SCALE_POST,
                         .alpha_given = 1, .alpha = 1.0};
    bad += check_gemm("bf16 single rounding", &w, 1, 1, 1, 2, A2, B2, &c2, 1);
    assert_int_equal(bad, 0);
}

// The fp32 step before the store is a rounding of its own (double rounding, as a BLAS epilogue
// and PyTorch's scalar multiply do): fp16, α = 0x1.24b6dcp−3 (a binary32), A = [7], B = [1].
// 7α = 1 + 2^−11 + 2^−25; RN_32 drops the 2^−25, leaving the fp16 midpoint 1 + 2^−11, which ties
// to even: 1. Rounding 7α straight to fp16 would give 1 + 2^−10.
// post, fp32 accumulation: C = RN_16(RN_32(α·7)) = 1. pre-a: A' = RN_16(RN_32(α·7)) = 1, C = 1.
static void gemm_hand_double_rounding(void **state)
{
    (void)state;
    const double A[1] = {7.0}, B[1] = {1.0}, one = 1.0;
    pp_gemm_variant v = {.format = PP_FMT_FP16, .accum = PP_GEMM_ACC_FP32, .scale = PP_GEMM_SCALE_POST,
                         .alpha_given = 1, .alpha = 0x1.24b6dcp-3};
    int bad = check_gemm("epilogue rounds to fp32, then to fp16", &v, 1, 1, 1, 1, A, B, &one, 1);
    v.scale = PP_GEMM_SCALE_PRE_A;
    bad += check_gemm("prescale rounds to fp32, then to fp16", &v, 1, 1, 1, 1, A, B, &one, 1);
    assert_int_equal(bad, 0);
}

// NaN and Inf propagate as IEEE arithmetic says; k = 0 with a given α gives zeros.
static void gemm_special_values(void **state)
{
    (void)state;
    // A is 2×2, B 2×1: row 0: Inf·1 + 1·0 = Inf; row 1: −Inf·1 + 2·0 = −Inf.
    const double A[4] = {INFINITY, 1, -INFINITY, 2}, B[2] = {1, 0};
    const double want[2] = {INFINITY, -INFINITY};
    const double B2[2] = {0, 1}, nan_want[2] = {NAN, NAN};  // Inf·0 = NaN
    int bad = 0;
    for (int fi = 0; fi < 3; fi++)
        for (int acc = 0; acc < 2; acc++)
            for (int sc = 0; sc < 3; sc++) {
                pp_gemm_variant v = {.format = FORMATS[fi], .accum = (pp_gemm_accum)acc, .scale = (pp_gemm_scale)sc};
                bad += check_gemm("inf propagates", &v, 1, 2, 1, 2, A, B, want, 1);
                bad += check_gemm("inf times zero is nan", &v, 1, 2, 1, 2, A, B2, nan_want, 1);
            }
    pp_gemm_variant v = {.format = PP_FMT_FP16, .accum = PP_GEMM_ACC_FP32, .scale = PP_GEMM_SCALE_POST,
                         .alpha_given = 1, .alpha = 3.0};
    const double zeros[2] = {0.0, 0.0};
    bad += check_gemm("k = 0", &v, 1, 2, 1, 0, NULL, NULL, zeros, 1);
    assert_int_equal(bad, 0);
}

// ---------------------------------------------------------------------------------------------
// Random: against the MPFR emulation, and thread-count invariance

static void fill(pp_test_rng *r, pp_format_id f, int profile, double *x, int64_t count)
{
    for (int64_t i = 0; i < count; i++)
        x[i] = rnd_value(r, f, profile);
}

static void gemm_matches_mpfr_emulation(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() ^ 5};
    int bad = 0;
    uint64_t trials = pp_test_iters(6);
    double a[2 * 3 * 40], b[2 * 40 * 5], want[2 * 3 * 5];
    for (uint64_t t = 0; t < trials && bad < 10; t++)
        for (int fi = 0; fi < 3; fi++)
            for (int acc = 0; acc < 2; acc++)
                for (int sc = 0; sc < 3; sc++) {
                    int64_t batch = 2, m = 3, n = 5, k = 1 + (int64_t)(pp_test_rng_next(&r) % 40);
                    int profile = (int)(pp_test_rng_next(&r) % 5);
                    if (FORMATS[fi] == PP_FMT_FP16 && t % 2)
                        profile = 2;  // near 65504: accumulation overflows
                    fill(&r, FORMATS[fi], profile, a, batch * m * k);
                    fill(&r, FORMATS[fi], profile == 2 ? 0 : profile, b, batch * k * n);
                    pp_gemm_variant v = {.format = FORMATS[fi], .accum = (pp_gemm_accum)acc, .scale = (pp_gemm_scale)sc,
                                         .alpha_given = (int)(t % 2),
                                         .alpha = ldexp(1.0 + pp_test_rng_unit(&r), -(int)(pp_test_rng_next(&r) % 8))};
                    emu_gemm(&v, batch, m, n, k, a, b, want);
                    bad += check_gemm("matches MPFR emulation", &v, batch, m, n, k, a, b, want, 2);
                }
    assert_int_equal(bad, 0);
}

static void gemm_thread_count_invariance(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() ^ 6};
    int64_t batch = 2, m = 19, n = 300, k = 33;  // n crosses the 256-column tile
    double *a = malloc(sizeof(double) * (size_t)(batch * m * k));
    double *b = malloc(sizeof(double) * (size_t)(batch * k * n));
    double *c1 = malloc(sizeof(double) * (size_t)(batch * m * n));
    assert_true(a && b && c1);
    int bad = 0;
    for (int fi = 0; fi < 3; fi++)
        for (int acc = 0; acc < 2; acc++)
            for (int sc = 0; sc < 3; sc++) {
                fill(&r, FORMATS[fi], (fi + acc + sc) % 4, a, batch * m * k);
                fill(&r, FORMATS[fi], 0, b, batch * k * n);
                pp_gemm_variant v = {.format = FORMATS[fi], .accum = (pp_gemm_accum)acc, .scale = (pp_gemm_scale)sc};
                pp_error err = {0};
                assert_int_equal(pp_gemm_cpu(&v, batch, m, n, k, a, b, c1, 1, &err), PP_OK);
                bad += check_gemm("4 threads = 1 thread", &v, batch, m, n, k, a, b, c1, 4);
                bad += check_gemm("3 threads = 1 thread", &v, batch, m, n, k, a, b, c1, 3);
            }
    free(a);
    free(b);
    free(c1);
    assert_int_equal(bad, 0);
}

// The order band's MMA chunks (kernels/gemm.h "Order band"): with order_seed s, each full chunk of
// 16 reduction steps is walked in a seeded permutation shared by every output element, so the
// result is bit for bit the nominal product of A's columns and B's rows permuted the same way;
// a last partial chunk keeps its order; seed 0 is the nominal product; some seed moves some bits
// of a storage-format accumulation.
static void gemm_order_seed_permutes_mma_chunks(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() ^ 7};
    int64_t m = 5, n = 40, k = 16 * 3 + 7;  // three full chunks and a partial one
    double *a = malloc(sizeof(double) * (size_t)(m * k)), *b = malloc(sizeof(double) * (size_t)(k * n));
    double *ap = malloc(sizeof(double) * (size_t)(m * k)), *bp = malloc(sizeof(double) * (size_t)(k * n));
    double *c0 = malloc(sizeof(double) * (size_t)(m * n)), *cs = malloc(sizeof(double) * (size_t)(m * n));
    double *cp = malloc(sizeof(double) * (size_t)(m * n));
    assert_true(a && b && ap && bp && c0 && cs && cp);
    int moved = 0;
    for (int acc = 0; acc < 2; acc++)
        for (uint64_t seed = 0; seed < 6; seed++) {
            fill(&r, PP_FMT_FP16, 1, a, m * k);
            fill(&r, PP_FMT_FP16, 0, b, k * n);
            pp_gemm_variant v = {.format = PP_FMT_FP16, .accum = (pp_gemm_accum)acc, .scale = PP_GEMM_SCALE_POST};
            pp_error err = {0};
            assert_int_equal(pp_gemm_cpu(&v, 1, m, n, k, a, b, c0, 2, &err), PP_OK);
            v.order_seed = seed;
            assert_int_equal(pp_gemm_cpu(&v, 1, m, n, k, a, b, cs, 2, &err), PP_OK);
            for (int64_t q = 0; q < k; q++) {  // step q of the seeded run reads index l
                int64_t l = pp_gemm_order_l(seed, k, q);
                assert_true(l >= 0 && l < k && (q >= 48 ? l == q : l / 16 == q / 16));
                for (int64_t i = 0; i < m; i++)
                    ap[i * k + q] = a[i * k + l];
                for (int64_t j = 0; j < n; j++)
                    bp[q * n + j] = b[l * n + j];
            }
            v.order_seed = 0;
            assert_int_equal(pp_gemm_cpu(&v, 1, m, n, k, ap, bp, cp, 1, &err), PP_OK);
            assert_memory_equal(cs, cp, sizeof(double) * (size_t)(m * n));
            if (seed == 0)
                assert_memory_equal(cs, c0, sizeof(double) * (size_t)(m * n));
            moved += memcmp(cs, c0, sizeof(double) * (size_t)(m * n)) != 0;
        }
    assert_true(moved > 0);
    free(a), free(b), free(ap), free(bp), free(c0), free(cs), free(cp);
}

static void gemm_rejects_bad_input(void **state)
{
    (void)state;
    double a[4] = {1, 2, 3, 4}, b[4] = {1, 1, 1, 1}, c[4];
    pp_error err = {0};
    pp_gemm_variant v = {.format = PP_FMT_FP64, .accum = PP_GEMM_ACC_FP32, .scale = PP_GEMM_SCALE_POST};
    assert_int_equal(pp_gemm_cpu(&v, 1, 2, 2, 2, a, b, c, 1, &err), PP_ERR_INPUT);
    v.format = PP_FMT_FP16;
    v.alpha_given = 1;
    v.alpha = NAN;
    assert_int_equal(pp_gemm_cpu(&v, 1, 2, 2, 2, a, b, c, 1, &err), PP_ERR_INPUT);
    v.alpha = -1.0;
    v.scale = PP_GEMM_SCALE_PRE;  // √α of a negative α
    assert_int_equal(pp_gemm_cpu(&v, 1, 2, 2, 2, a, b, c, 1, &err), PP_ERR_INPUT);
    v.alpha_given = 0;  // default α with k = 0
    assert_int_equal(pp_gemm_cpu(&v, 1, 2, 2, 0, a, b, c, 1, &err), PP_ERR_INPUT);
    assert_int_equal(pp_gemm_cpu(&v, -1, 2, 2, 2, a, b, c, 1, &err), PP_ERR_INPUT);
    assert_int_equal(pp_gemm_cpu(&v, (int64_t)1 << 30, (int64_t)1 << 20, 2, 2, a, b, c, 1, &err),
                     PP_ERR_INPUT);
    a[3] = 1.0 + 0x1p-20;  // not an fp16 value
    assert_int_equal(pp_gemm_cpu(&v, 1, 2, 2, 2, a, b, c, 1, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "A[3]"));
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gemm_scalars_kroot_correctly_rounded),
        cmocka_unit_test(gemm_scalars_sqrt_correctly_rounded),
        cmocka_unit_test(gemm_step_storage_single_rounding_bf16),
        cmocka_unit_test(gemm_step_storage_vs_mpfr),
        cmocka_unit_test(gemm_step_fp32_vs_mpfr),
        cmocka_unit_test(gemm_hand_knob_table),
        cmocka_unit_test(gemm_hand_bloom_overflow),
        cmocka_unit_test(gemm_hand_order_matters),
        cmocka_unit_test(gemm_hand_fused_fp32),
        cmocka_unit_test(gemm_hand_subnormal_ties),
        cmocka_unit_test(gemm_hand_double_rounding),
        cmocka_unit_test(gemm_special_values),
        cmocka_unit_test(gemm_matches_mpfr_emulation),
        cmocka_unit_test(gemm_thread_count_invariance),
        cmocka_unit_test(gemm_order_seed_permutes_mma_chunks),
        cmocka_unit_test(gemm_rejects_bad_input),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    mpfr_free_cache();
    return rc;
}
