// test_math_oracle.h — a correctly rounded binary32 oracle for exp and log, for tests/test_math_*.c:
// binary64 libm, trusted only away from binary32 midpoints; MPFR decides the rest.
#ifndef PP_TEST_MATH_ORACLE_H
#define PP_TEST_MATH_ORACLE_H

#include <math.h>
#include <stdio.h>  // before mpfr.h: declares mpfr_fprintf
#include <mpfr.h>

#include "pp_math.h"

// Why the fast path is right: glibc's exp/log are accurate to < 1 ulp of binary64 (documented
// bound; we allow 8). If y = f(x) in binary64 is more than 8 ulp_64(y) from every binary32
// midpoint (and from the overflow threshold), the exact value lies in the same open interval
// between midpoints, so RN_32(exact) = RN_32(y). Otherwise MPFR at 200 bits with MPFR_RNDN
// to 24 bits (subnormals emulated with mpfr_subnormalize) gives the answer.
typedef enum { ORC_EXP, ORC_LOG } orc_fn;

static float orc_mpfr(orc_fn fn, float x)
{
    mpfr_t a, r;
    mpfr_init2(a, 24);
    mpfr_init2(r, 24);
    mpfr_set_flt(a, x, MPFR_RNDN);
    mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
    mpfr_set_emin(-148);
    mpfr_set_emax(128);
    int t = fn == ORC_EXP ? mpfr_exp(r, a, MPFR_RNDN) : mpfr_log(r, a, MPFR_RNDN);
    t = mpfr_check_range(r, t, MPFR_RNDN);
    mpfr_subnormalize(r, t, MPFR_RNDN);
    float y = mpfr_get_flt(r, MPFR_RNDN);
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
    mpfr_clear(a);
    mpfr_clear(r);
    return y;
}

// Distance of y (binary64, finite, ≥ 0 or any sign for log) to the nearest binary32 midpoint,
// in ulps of binary64 at y; large when y is far from every midpoint.
static double orc_mid_dist(double y)
{
    float c = (float)y;
    if (isinf(c))
        c = nextafterf(INFINITY, 0.0f);
    float up = nextafterf(c, INFINITY), dn = nextafterf(c, -INFINITY);
    double m1 = isinf(up) ? (double)c + 0.5 * ((double)c - (double)dn) : 0.5 * ((double)c + (double)up);
    double m2 = isinf(dn) ? -m1 : 0.5 * ((double)c + (double)dn);
    double d = fmin(fabs(y - m1), fabs(y - m2));
    double u = nextafter(fabs(y), INFINITY) - fabs(y);
    return y == 0.0 ? INFINITY : d / u;
}

// RN_32(f(x)) for finite x (log: x > 0). *slow set when MPFR was needed.
static float orc_cr(orc_fn fn, float x, int *slow)
{
    double y = fn == ORC_EXP ? exp((double)x) : log((double)x);
    *slow = 0;
    if (isinf(y) || orc_mid_dist(y) > 8.0)
        return (float)y;
    *slow = 1;
    return orc_mpfr(fn, x);
}

// How far f(x) is from the binary32 midpoint nearest it, in ulp_32, with MPFR at 200 bits: the
// misrounding criterion of pp_math.h (a misrounded input must be within 2^−25 ulp).
static double orc_mid_ulps(orc_fn fn, float x)
{
    mpfr_t a, r;
    mpfr_init2(a, 200);
    mpfr_init2(r, 200);
    mpfr_set_flt(a, x, MPFR_RNDN);
    if (fn == ORC_EXP)
        mpfr_exp(r, a, MPFR_RNDN);
    else
        mpfr_log(r, a, MPFR_RNDN);
    double y = mpfr_get_d(r, MPFR_RNDN);
    float c = (float)y;
    double ulp = (double)nextafterf(fabsf(c), INFINITY) - (double)fabsf(c);
    if (fabsf(c) < 0x1p-126f)
        ulp = 0x1p-149;
    // (y − c)/ulp with 200-bit y: its fractional distance to ±½
    mpfr_sub_d(r, r, (double)c, MPFR_RNDN);
    double d = mpfr_get_d(r, MPFR_RNDN) / ulp;
    mpfr_clear(a);
    mpfr_clear(r);
    return fabs(fabs(d) - 0.5);
}

static int orc_same(float a, float b)
{
    if (a != a && b != b)
        return 1;
    uint32_t x, y;
    memcpy(&x, &a, 4);
    memcpy(&y, &b, 4);
    return x == y;
}

static void orc_fail(const char *what, float x, float got, float want)
{
    fprintf(stderr, "%s: x = %.9g = %a, got %.9g = %a, want %.9g = %a\n", what, x, x, got, got,
            want, want);
}

// Checks fn over n inputs from gen(i); returns the number of misrounded inputs, failing (and
// printing, at most 10) those that are misrounded beyond the 2^−25-ulp band or wrong otherwise.
static uint64_t orc_check(orc_fn fn, uint64_t n, float (*gen)(uint64_t, void *), void *ctx,
                          uint64_t *slow_count, int *bad)
{
    uint64_t mis = 0;
    for (uint64_t i = 0; i < n; i++) {
        float x = gen(i, ctx);
        if (!isfinite(x) || (fn == ORC_LOG && !(x > 0.0f)))
            continue;
        int slow;
        float want = orc_cr(fn, x, &slow);
        *slow_count += (uint64_t)slow;
        float got = fn == ORC_EXP ? pp_expf(x) : pp_logf(x);
        if (orc_same(got, want))
            continue;
        mis++;
        double md = orc_mid_ulps(fn, x);
        if (md > 0x1p-25 || fabs((double)got - (double)want) > 1.5 * fabs((double)nextafterf(want, INFINITY) - want)) {
            if (*bad < 10)
                orc_fail(fn == ORC_EXP ? "pp_expf misrounded" : "pp_logf misrounded", x, got, want);
            (*bad)++;
        }
    }
    return mis;
}

#endif
