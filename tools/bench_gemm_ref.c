// bench_gemm_ref.c — throughput of the GEMM reference (fast path, and its ratio to mpfr-plain
// measured in the same run, per product term) and of the CPU emulation's variants.
// Run: make bench (or build/rel/tools/bench_gemm_ref [threads]). Prints numbers; asserts nothing.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "bench_args.h"
#include "cpu/gemm.h"
#include "gemm_ref.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// Values of f, moderate magnitudes with random signs (an LCG: reproducible, no dependencies).
static void fill(pp_format_id f, double *x, int64_t count, uint64_t *state)
{
    for (int64_t i = 0; i < count; i++) {
        *state = *state * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
        double u = (double)(*state >> 11) * 0x1p-53;
        x[i] = pp_round(f, (*state >> 10 & 1 ? -1.0 : 1.0) * (0.25 + 2.0 * u), PP_RND_NE, 0);
    }
}

// Seconds per call of the reference, best of reps.
static double time_ref(pp_gemm_ref_method method, pp_format_id f, int64_t batch, int64_t m, int64_t n,
                       int64_t k, const double *a, const double *b, double *c, double *e, int threads,
                       int reps)
{
    pp_gemm_ref_opts o = {f, 0, 0.0, method};
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        pp_error err = {0};
        double t0 = now();
        if (pp_gemm_ref(&o, batch, m, n, k, a, b, c, e, threads, &err) != PP_OK) {
            fprintf(stderr, "bench_gemm_ref: %s\n", err.msg);
            exit(3);
        }
        double t = now() - t0;
        best = t < best ? t : best;
    }
    return best;
}

int main(int argc, char **argv)
{
    long nproc = sysconf(_SC_NPROCESSORS_ONLN);
    pp_bench_args_at_most(argc, argv, 1, "bench_gemm_ref [threads]");
    int threads = (int)pp_bench_arg(argc, argv, 1, nproc > 0 ? nproc : 1, 1, 1024, "bench_gemm_ref [threads]");
    const int64_t batch = 4, m = 128, n = 128, k = 128;  // the measured shape
    const int64_t pm = 16, pn = 16;                       // mpfr-plain baseline: 16×16 outputs, same k
    int64_t na = batch * m * k, nb = batch * k * n, nc = batch * m * n;
    double *a = malloc(sizeof(double) * (size_t)na), *b = malloc(sizeof(double) * (size_t)nb);
    double *c = malloc(sizeof(double) * (size_t)nc), *e = malloc(sizeof(double) * (size_t)nc);
    if (!a || !b || !c || !e) {
        fprintf(stderr, "bench_gemm_ref: out of memory\n");
        return 3;
    }
    printf("bench_gemm_ref: %d threads; shape batch %lld, m %lld, n %lld, k %lld; "
           "mpfr-plain baseline %lldx%lld outputs, same k, scaled per product term\n",
           threads, (long long)batch, (long long)m, (long long)n, (long long)k, (long long)pm,
           (long long)pn);
    const pp_format_id fmts[3] = {PP_FMT_FP16, PP_FMT_BF16, PP_FMT_FP32};
    for (int fi = 0; fi < 3; fi++) {
        uint64_t st = 42 + (uint64_t)fi;
        fill(fmts[fi], a, na, &st);
        fill(fmts[fi], b, nb, &st);
        double tf = time_ref(PP_GEMM_REF_FAST, fmts[fi], batch, m, n, k, a, b, c, e, threads, 3);
        double tp = time_ref(PP_GEMM_REF_MPFR_PLAIN, fmts[fi], 1, pm, pn, k, a, b, c, e, threads, 3);
        double terms_f = (double)(batch * m * n * k), terms_p = (double)(pm * pn * k);
        double rate_f = terms_f / tf, rate_p = terms_p / tp;
        printf("  reference %-4s  fast %8.1f Mterm/s (%7.2f ms)   mpfr-plain %6.2f Mterm/s   "
               "fast/plain %6.1fx\n",
               pp_format_get(fmts[fi]).name, rate_f * 1e-6, tf * 1e3, rate_p * 1e-6, rate_f / rate_p);
    }
    static const struct {
        pp_format_id f;
        pp_gemm_accum acc;
        pp_gemm_scale sc;
    } vs[] = {
        {PP_FMT_FP16, PP_GEMM_ACC_FP32, PP_GEMM_SCALE_POST},
        {PP_FMT_FP16, PP_GEMM_ACC_STORAGE, PP_GEMM_SCALE_POST},
        {PP_FMT_FP16, PP_GEMM_ACC_STORAGE, PP_GEMM_SCALE_PRE},
        {PP_FMT_BF16, PP_GEMM_ACC_FP32, PP_GEMM_SCALE_PRE},
        {PP_FMT_BF16, PP_GEMM_ACC_STORAGE, PP_GEMM_SCALE_POST},
        {PP_FMT_FP32, PP_GEMM_ACC_FP32, PP_GEMM_SCALE_POST},
    };
    for (size_t i = 0; i < sizeof vs / sizeof *vs; i++) {
        uint64_t st = 7;
        fill(vs[i].f, a, na, &st);
        fill(vs[i].f, b, nb, &st);
        pp_gemm_variant v = {.format = vs[i].f, .accum = vs[i].acc, .scale = vs[i].sc};
        double best = 1e30;
        for (int r = 0; r < 3; r++) {
            pp_error err = {0};
            double t0 = now();
            if (pp_gemm_cpu(&v, batch, m, n, k, a, b, c, threads, &err) != PP_OK) {
                fprintf(stderr, "bench_gemm_ref: %s\n", err.msg);
                return 3;
            }
            double t = now() - t0;
            best = t < best ? t : best;
        }
        printf("  emulation %-4s acc %-7s scale %-5s  %8.1f Mstep/s (%7.2f ms)\n",
               pp_format_get(v.format).name, pp_gemm_accum_name(v.accum), pp_gemm_scale_name(v.scale),
               (double)(batch * m * n * k) / best * 1e-6, best * 1e3);
    }
    free(a);
    free(b);
    free(c);
    free(e);
    return 0;
}
