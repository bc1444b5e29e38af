// bench_adamw_emu.c — the CPU AdamW emulation's vector path (cpu/adamw_lanes.c) against its
// scalar path, same run, per variant and gradient source, at n = 65,536, T = 1,000 (issue 17's
// size): wall and CPU time (the machine may be shared), ns per element-step (wall × threads /
// (n·T)), and the ratio scalar / vector. The synthetic source draws a normal per element-step,
// two per polar attempt (the vector path draws a lane group's pairs side by side,
// kernels/random_lanes.h; the scalar path each element's pair alone);
// the quadratic one's gradient is two operations, so its line is close to the update alone.
// Run: make bench (or build/rel/tools/bench_adamw_emu [threads] [n] [T]). Prints numbers only.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_adamw_variants.h"
#include "bench_args.h"
#include "cpu/adamw.h"

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    const char *usage = "bench_adamw_emu [threads] [n] [T]";
    pp_bench_args_at_most(argc, argv, 3, usage);
    int threads = (int)pp_bench_arg(argc, argv, 1, 2, 1, 1024, usage);
    int64_t n = pp_bench_arg(argc, argv, 2, 65536, 1, (int64_t)1 << 32, usage);
    int T = (int)pp_bench_arg(argc, argv, 3, 1000, 1, 100000000, usage);
    double *th0 = malloc((size_t)n * sizeof *th0), *o[4];
    for (int k = 0; k < 4; k++)
        o[k] = malloc((size_t)n * sizeof(double));
    const pp_adamw_grad_kind kinds[] = {PP_ADAMW_GRAD_SYNTHETIC, PP_ADAMW_GRAD_QUADRATIC};
    for (int s = 0; s < 2; s++)
        for (int k = 0; k < 4; k++) {
            const pp_bench_adamw_variant *bv = &pp_bench_adamw_variants[k];
            pp_adamw_problem pr = {.kind = kinds[s], .n = n, .steps = T, .seed = 42,
                                   .hyper = {.lr = 1e-5, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = 0.0},
                                   .schedule = PP_ADAMW_LR_CONSTANT, .warmup = 0, .grad_scale = 1e-3, .snr = 1.0,
                                   .rows = 0, .label_noise = 0, .grads = NULL};
            pp_format_id P = bv->v.param;
            for (int64_t i = 0; i < n; i++)
                th0[i] = pp_round(P, pp_rand_normal(7, 0, (uint64_t)i), PP_RND_NE, 0);
            double wall[2], cpu[2];
            for (int p = 0; p < 2; p++) {
                pp_adamw_path path = p ? PP_ADAMW_PATH_VECTOR : PP_ADAMW_PATH_SCALAR;
                double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
                if (pp_adamw_cpu_path(&bv->v, &pr, th0, o[0], o[1], o[2], o[3], NULL, threads, path, NULL))
                    return 1;
                wall[p] = clock_s(CLOCK_MONOTONIC) - w0;
                cpu[p] = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
            }
            double es = (double)n * T / threads;
            printf("adamw cpu emulation %-16s %-9s n = %lld, T = %d, %d threads: scalar %.3f s wall %.3f s cpu "
                   "(%.1f ns/elem-step), vector %.3f s wall %.3f s cpu (%.1f ns/elem-step): vector %.1fx faster "
                   "(cpu time %.1fx)\n",
                   bv->name, s ? "quadratic" : "synthetic", (long long)n, T, threads, wall[0], cpu[0],
                   wall[0] / es * 1e9, wall[1], cpu[1], wall[1] / es * 1e9, wall[0] / wall[1], cpu[0] / cpu[1]);
        }
    free(th0);
    for (int k = 0; k < 4; k++)
        free(o[k]);
    return 0;
}
