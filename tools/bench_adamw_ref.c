// bench_adamw_ref.c — time of the AdamW reference's fast path (double-double) at n = 65,536,
// T = 1,000 (the anyprecision-adamw case's size), with mpfr-plain measured in the same run on the
// first n/16 elements as the anchor (per element-step), and the CPU emulation's variants.
// Run: make bench (or build/rel/tools/bench_adamw_ref [threads] [n] [T]). Prints numbers only.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "adamw_ref.h"
#include "cpu/adamw.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 2;
    int64_t n = argc > 2 ? atoll(argv[2]) : 65536;
    int T = argc > 3 ? atoi(argv[3]) : 1000;
    pp_adamw_problem pr = {PP_ADAMW_GRAD_SYNTHETIC, n, T, 42, {1e-5, 0.9, 0.999, 1e-8, 0.0},
                           PP_ADAMW_LR_CONSTANT, 0, 1e-3, 1.0, 0, 0, NULL};
    double *th0 = malloc((size_t)n * sizeof *th0), *o[4];
    for (int k = 0; k < 4; k++)
        o[k] = malloc((size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; i++)
        th0[i] = pp_round(PP_FMT_BF16, pp_rand_normal(7, 0, (uint64_t)i), PP_RND_NE, 0);
    double b[3], bp[3], t0 = now();
    pp_adamw_trace tr;
    if (pp_adamw_ref(&pr, PP_FMT_BF16, 0, th0, o[0], o[1], o[2], b, &tr, threads, NULL)) {
        fprintf(stderr, "bench_adamw_ref: reference failed\n");
        return 1;
    }
    double t_ref = now() - t0;
    pp_adamw_trace_free(&tr);
    pp_adamw_problem pp = pr;  // the anchor: mpfr-plain on the first n/16 elements
    pp.n = n / 16 > 0 ? n / 16 : 1;
    t0 = now();
    if (pp_adamw_ref(&pp, PP_FMT_BF16, PP_ADAMW_REF_PREC, th0, o[0], o[1], o[2], bp, NULL, threads, NULL)) {
        fprintf(stderr, "bench_adamw_ref: mpfr-plain reference failed\n");
        return 1;
    }
    double t_plain = (now() - t0) * (double)n / (double)pp.n;
    printf("adamw reference fast (double-double, running bound), n = %lld, T = %d, %d threads: %.2f s "
           "(%.0f ns per element-step per thread); bound theta %.3g\n",
           (long long)n, T, threads, t_ref, t_ref * threads / ((double)n * T) * 1e9, b[0]);
    printf("adamw reference mpfr-plain (128 bits), same run, on %lld elements, scaled to n: %.2f s "
           "(%.0f ns per element-step per thread): fast is %.1fx faster\n",
           (long long)pp.n, t_plain, t_plain * threads / ((double)n * T) * 1e9, t_plain / t_ref);
    const char *names[] = {"fp32 torch", "bf16 plain", "bf16 kahan(bf16)", "bf16 stochastic"};
    pp_adamw_variant vs[] = {
        {PP_FMT_FP32, PP_FMT_FP32, PP_FMT_FP32, PP_FMT_FP32, 0, 0, PP_ADAMW_TORCH, PP_ADAMW_KERNELS_CUDA, 0},
        {PP_FMT_BF16, PP_FMT_BF16, PP_FMT_BF16, PP_FMT_BF16, 0, 0, PP_ADAMW_ANYPRECISION, PP_ADAMW_KERNELS_CUDA, 0},
        {PP_FMT_BF16, PP_FMT_BF16, PP_FMT_BF16, PP_FMT_BF16, 1, 0, PP_ADAMW_ANYPRECISION, PP_ADAMW_KERNELS_CUDA, 0},
        {PP_FMT_BF16, PP_FMT_BF16, PP_FMT_BF16, PP_FMT_BF16, 0, 1, PP_ADAMW_ANYPRECISION, PP_ADAMW_KERNELS_CUDA, 0},
    };
    for (int k = 0; k < 4; k++) {
        t0 = now();
        if (pp_adamw_cpu(&vs[k], &pr, th0, o[0], o[1], o[2], o[3], &tr, threads, NULL))
            return 1;
        double t = now() - t0;
        pp_adamw_trace_free(&tr);
        printf("adamw cpu emulation %-17s n = %lld, T = %d, %d threads: %.3f s (%.1f ns per element-step)\n",
               names[k], (long long)n, T, threads, t, t * threads / ((double)n * T) * 1e9);
    }
    free(th0);
    for (int k = 0; k < 4; k++)
        free(o[k]);
    return 0;
}
