// bench_attention_cpu.c — the CPU emulation of attention at TE PR 821's configuration (b 1, h 12,
// s 4096, d 128, causal, bf16, fwd+bwd): four variants (flash non-CP, CP world 8 with bf16 and
// with fp32 accumulation, unfused with fp32 softmax), their total against issue 6's target of
// 2 minutes on 2 cores, peak resident memory against 4 GiB, and the AVX2+FMA lane step against
// the portable scalar loops (the same bits) in CPU time, measured in the same run on the first 1/8
// of the sequence.
// Run: make bench (or build/rel/tools/bench_attention_cpu [threads]). Prints numbers; asserts nothing.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench_args.h"
#include "cpu/attention.h"
#include "format.h"

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double now(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

static double peak_rss_gib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / (1024.0 * 1024.0);  // ru_maxrss is in KiB on Linux
}

// Normal-ish bf16 values (sum of 4 uniforms, an LCG: reproducible, no dependencies).
static void fill(double *x, int64_t count, uint64_t *state)
{
    for (int64_t i = 0; i < count; i++) {
        double s = 0;
        for (int r = 0; r < 4; r++) {
            *state = *state * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
            s += (double)(*state >> 11) * 0x1p-53 - 0.5;
        }
        x[i] = pp_round(PP_FMT_BF16, s * 1.7320508075688772, PP_RND_NE, 0);
    }
}

typedef struct bench_io {
    double *q, *k, *v, *dout, *out, *lse, *dq, *dk, *dv;
} bench_io;

static double *alloc(int64_t n)
{
    double *p = malloc(sizeof(double) * (size_t)n);
    if (!p) {
        fprintf(stderr, "bench_attention_cpu: out of memory\n");
        exit(3);
    }
    return p;
}

// Wall seconds; *cpu (when not NULL): CPU seconds of all threads (a loaded machine stretches the
// first, not the second).
static double run_cpu(const char *name, const pp_attn_variant *v, const pp_attn_dims *dm, const bench_io *io,
                      int threads, int portable, double *cpu)
{
    pp_attn_cpu_opts o = {.force_cp = 0, .portable = portable};
    pp_error err = {0};
    double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID), t0 = now();
    int rc = pp_attention_cpu_opts(v, dm, 1, io->q, io->k, io->v, io->dout, io->out, io->lse, io->dq, io->dk,
                                   io->dv, threads, &o, &err);
    double t = now() - t0;
    if (cpu)
        *cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    if (rc != PP_OK) {
        fprintf(stderr, "bench_attention_cpu: %s: %s\n", name, err.msg);
        exit(3);
    }
    return t;
}

int main(int argc, char **argv)
{
    long nproc = sysconf(_SC_NPROCESSORS_ONLN);
    pp_bench_args_at_most(argc, argv, 1, "bench_attention_cpu [threads]");
    int threads = (int)pp_bench_arg(argc, argv, 1, nproc > 0 ? nproc : 1, 1, 1024, "bench_attention_cpu [threads]");
    pp_attn_dims dm = {.b = 1, .s_q = 4096, .s_kv = 4096, .h = 12, .h_kv = 12, .d = 128, .causal = 1};
    int64_t nq = dm.b * dm.s_q * dm.h * dm.d, nk = dm.b * dm.s_kv * dm.h_kv * dm.d;
    bench_io io = {alloc(nq), alloc(nk), alloc(nk), alloc(nq), alloc(nq), alloc(dm.b * dm.h * dm.s_q),
                   alloc(nq), alloc(nk), alloc(nk)};
    uint64_t st = 821;
    fill(io.q, nq, &st);
    fill(io.k, nk, &st);
    fill(io.v, nk, &st);
    fill(io.dout, nq, &st);

    pp_attn_variant base = {.format = PP_FMT_BF16, .kernel = PP_ATTN_FLASH, .block_m = 64, .block_n = 64,
                            .cp_world = 1, .cp_accum = PP_FMT_BF16, .cp_grad_accum = PP_FMT_BF16};
    pp_attn_variant cp_bf16 = base, cp_fp32 = base, unfused = base;
    cp_bf16.cp_world = cp_fp32.cp_world = 8;
    cp_fp32.cp_accum = cp_fp32.cp_grad_accum = PP_FMT_FP32;
    unfused.kernel = PP_ATTN_UNFUSED;
    struct {
        const char *name;
        const pp_attn_variant *v;
    } vs[] = {{"flash non-cp", &base}, {"flash cp-bf16acc", &cp_bf16}, {"flash cp-fp32acc", &cp_fp32},
              {"unfused fp32-softmax", &unfused}};

    printf("bench_attention_cpu: %d threads; b 1, h 12, s 4096, d 128, causal, bf16, fwd+bwd "
           "(TE PR 821's configuration)\n", threads);
    // Baseline in the same run: the lane steps on the first 512 positions (flash non-CP), CPU time.
    pp_attn_dims sub = dm;
    sub.s_q = sub.s_kv = 512;
    double cv, cp;
    run_cpu("vector (512)", &base, &sub, &io, threads, 0, &cv);
    run_cpu("portable (512)", &base, &sub, &io, threads, 1, &cp);
    printf("  s 512 flash non-cp, CPU time: vector lane step %.3f s, portable scalar %.3f s (%.2fx)\n",
           cv, cp, cp / cv);
    fflush(stdout);
    double total = 0, total_cpu = 0;
    for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) {
        double c, t = run_cpu(vs[i].name, vs[i].v, &dm, &io, threads, 0, &c);
        total += t;
        total_cpu += c;
        printf("  %-22s %8.2f s  (%.2f s CPU)\n", vs[i].name, t, c);
        fflush(stdout);
    }
    printf("  total CPU %.2f s: %.1f s on %d idle cores\n", total_cpu, total_cpu / threads, threads);
    printf("  total                  %8.2f s   (target <= 120 s on 2 cores: %s)\n", total,
           total <= 120.0 ? "met" : "NOT met");
    double rss = peak_rss_gib();
    printf("  peak resident memory   %8.2f GiB (target <= 4 GiB: %s; inputs and outputs are %.2f GiB of it)\n",
           rss, rss <= 4.0 ? "met" : "NOT met", (double)(4 * nq + 4 * nk + dm.h * dm.s_q) * 8.0 / 1073741824.0);

    free(io.q); free(io.k); free(io.v); free(io.dout); free(io.out); free(io.lse);
    free(io.dq); free(io.dk); free(io.dv);
    return 0;
}
