// bench_round.c — throughput of rounding into the number formats: the generic pp_round, the named
// functions (pp_round_<fmt>_<mode>) and, as the baseline measured in the same run, MPFR
// (mpfr_set_d + mpfr_subnormalize + mpfr_get_d). Prints values/s and the ratio to MPFR; no
// assertions on time. Run: make bench (or build/rel/tools/bench_round).
#include <math.h>
#include <mpfr.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "format.h"

#define N (1u << 20)      // values per pass (8 MiB of binary64: beyond L2, as in a real tensor)
#define MIN_SECONDS 0.15  // each measurement repeats passes until it has run this long

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

// Typical tensor values: random sign, binade in [2^-12, 2^12), random 52-bit fraction.
static void fill(double *x, float *xf, uint32_t *rb)
{
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < N; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t frac = s >> 12;
        int e = (int)((s >> 3) % 24) - 12;
        double v = ldexp(1.0 + ldexp((double)frac, -52), e);
        x[i] = s & 1 ? -v : v;
        xf[i] = (float)x[i];
        rb[i] = (uint32_t)(s >> 32);
    }
}

typedef struct result {
    double per_second;
    uint64_t sink;  // keeps the work observable
} result;

// ---------------------------------------------------------------------------------------------
// The measured loops

static result bench_generic(pp_format_id f, pp_rounding m, const double *x, const uint32_t *rb)
{
    result r = {0, 0};
    double t0 = now(), t;
    uint64_t passes = 0;
    do {
        for (size_t i = 0; i < N; i++)
            r.sink ^= pp_f64_bits(pp_round(f, x[i], m, rb[i]));
        passes++;
    } while ((t = now() - t0) < MIN_SECONDS);
    r.per_second = (double)passes * N / t;
    return r;
}


// One instantiation per function so the call inlines (a pointer call would dominate the cost).
#define BENCH_NAMED(NAME, CALL)                                         \
    static result NAME(const float *xf, const uint32_t *rb)             \
    {                                                                   \
        result r = {0, 0};                                              \
        double t0 = now(), t;                                           \
        uint64_t passes = 0;                                            \
        do {                                                            \
            for (size_t i = 0; i < N; i++) {                            \
                float x = xf[i];                                        \
                uint32_t bits = rb[i];                                  \
                (void)bits;                                             \
                r.sink ^= pp_f32_bits(CALL);                            \
            }                                                           \
            passes++;                                                   \
        } while ((t = now() - t0) < MIN_SECONDS);                       \
        r.per_second = (double)passes * N / t;                          \
        return r;                                                       \
    }

BENCH_NAMED(bench_fp16_ne, pp_round_fp16_ne(x))
BENCH_NAMED(bench_fp16_tz, pp_round_fp16_tz(x))
BENCH_NAMED(bench_fp16_sr, pp_round_fp16_sr(x, bits))
BENCH_NAMED(bench_bf16_ne, pp_round_bf16_ne(x))
BENCH_NAMED(bench_bf16_sr, pp_round_bf16_sr(x, bits))
BENCH_NAMED(bench_tf32_ne, pp_round_tf32_ne(x))
BENCH_NAMED(bench_e4m3_ne, pp_round_e4m3_ne(x))
BENCH_NAMED(bench_e5m2_ne, pp_round_e5m2_ne(x))

static result bench_fp32_ne(const double *x)
{
    result r = {0, 0};
    double t0 = now(), t;
    uint64_t passes = 0;
    do {
        for (size_t i = 0; i < N; i++)
            r.sink ^= pp_f32_bits(pp_round_fp32_ne(x[i]));
        passes++;
    } while ((t = now() - t0) < MIN_SECONDS);
    r.per_second = (double)passes * N / t;
    return r;
}

// The baseline: MPFR at the format's precision and exponent range, subnormals emulated.
static result bench_mpfr(pp_format_id f, mpfr_rnd_t rnd, const double *x)
{
    pp_format F = pp_format_get(f);
    mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
    mpfr_set_emin(F.emin - F.p + 2);
    mpfr_set_emax(F.emax + 1);
    mpfr_t v;
    mpfr_init2(v, F.p);
    result r = {0, 0};
    double t0 = now(), t;
    uint64_t done = 0;
    do {
        for (size_t i = 0; i < N / 8; i++) {  // MPFR is slow: an eighth of a pass per check
            int tern = mpfr_set_d(v, x[i], rnd);
            mpfr_subnormalize(v, tern, rnd);
            r.sink ^= pp_f64_bits(mpfr_get_d(v, MPFR_RNDN));
        }
        done += N / 8;
    } while ((t = now() - t0) < MIN_SECONDS);
    r.per_second = (double)done / t;
    mpfr_clear(v);
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
    return r;
}

// ---------------------------------------------------------------------------------------------
// main

static uint64_t sink;

static void row(const char *name, result r, double baseline)
{
    sink ^= r.sink;
    printf("  %-34s %10.1f Mvalues/s %9.1fx\n", name, r.per_second / 1e6, r.per_second / baseline);
}

int main(void)
{
    double *x = malloc(N * sizeof *x);
    float *xf = malloc(N * sizeof *xf);
    uint32_t *rb = malloc(N * sizeof *rb);
    if (!x || !xf || !rb) {
        fprintf(stderr, "bench_round: out of memory\n");
        return 3;
    }
    fill(x, xf, rb);
    printf("bench_round: rounding %u typical values (|x| in [2^-12, 2^12)) per pass, one core\n", N);
    printf("  %-34s %10s %19s\n", "function", "throughput", "vs MPFR (same fmt)");

    const char *mname[3] = {"ne", "tz", "sr"};
    double base[PP_FMT_COUNT];
    for (int f = 0; f < PP_FMT_COUNT; f++) {
        char name[64];
        result b = bench_mpfr((pp_format_id)f, MPFR_RNDN, x);
        base[f] = b.per_second;
        snprintf(name, sizeof name, "mpfr baseline %s ne", pp_format_get((pp_format_id)f).name);
        row(name, b, base[f]);
        for (int m = 0; m < 3; m++) {
            snprintf(name, sizeof name, "pp_round(%s, %s)", pp_format_get((pp_format_id)f).name, mname[m]);
            row(name, bench_generic((pp_format_id)f, (pp_rounding)m, x, rb), base[f]);
        }
    }
    row("pp_round_fp32_ne (binary64)", bench_fp32_ne(x), base[PP_FMT_FP32]);
    row("pp_round_tf32_ne", bench_tf32_ne(xf, rb), base[PP_FMT_TF32]);
    row("pp_round_fp16_ne", bench_fp16_ne(xf, rb), base[PP_FMT_FP16]);
    row("pp_round_fp16_tz", bench_fp16_tz(xf, rb), base[PP_FMT_FP16]);
    row("pp_round_fp16_sr", bench_fp16_sr(xf, rb), base[PP_FMT_FP16]);
    row("pp_round_bf16_ne", bench_bf16_ne(xf, rb), base[PP_FMT_BF16]);
    row("pp_round_bf16_sr", bench_bf16_sr(xf, rb), base[PP_FMT_BF16]);
    row("pp_round_e4m3_ne", bench_e4m3_ne(xf, rb), base[PP_FMT_E4M3]);
    row("pp_round_e5m2_ne", bench_e5m2_ne(xf, rb), base[PP_FMT_E5M2]);
    printf("  (checksum %016llx)\n", (unsigned long long)sink);
    free(x);
    free(xf);
    free(rb);
    return 0;
}
