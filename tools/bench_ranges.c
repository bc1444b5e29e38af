// bench_ranges.c — the cost of range diagnostics (run --ranges): each op's CPU emulation with
// the notes on against the same run with them off, measured in the same process, printed as
// ratios (on/off). Off is one pointer test per site, so its cost is what the main benchmarks
// (bench_attention_cpu, bench_adamw_emu) measure; on is the price of --ranges.
// Run: make bench (or build/rel/tools/bench_ranges [threads]). Prints numbers; asserts nothing.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_args.h"
#include "cpu/adamw.h"
#include "cpu/attention.h"
#include "cpu/gemm.h"
#include "ranges.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double *values(int64_t n, pp_format_id f, uint64_t seed)
{
    double *x = malloc(sizeof(double) * (size_t)(n ? n : 1));
    if (!x) {
        fprintf(stderr, "bench_ranges: out of memory\n");
        exit(3);
    }
    for (int64_t i = 0; i < n; i++) {
        seed = seed * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
        x[i] = pp_round(f, ((double)(seed >> 11) * 0x1p-53 - 0.5) * 4.0, PP_RND_NE, 0);
    }
    return x;
}

// ---- attention

static double attn(const pp_attn_variant *v, const pp_attn_dims *dm, double **io, int threads, pp_ranges *R)
{
    pp_attn_cpu_opts o = {.ranges = R};
    pp_error e = {0};
    double t = now();
    if (pp_attention_cpu_opts(v, dm, 1, io[0], io[1], io[2], io[3], io[4], io[5], io[6], io[7], io[8], threads, &o,
                              &e)) {
        fprintf(stderr, "bench_ranges: %s\n", e.msg);
        exit(3);
    }
    return now() - t;
}

static void bench_attention(int threads, pp_range_cell *cells)
{
    pp_attn_dims dm = {1, 1024, 1024, 4, 4, 64, 1};
    int64_t nq = dm.b * dm.s_q * dm.h * dm.d;
    double *io[9] = {values(nq, PP_FMT_BF16, 1), values(nq, PP_FMT_BF16, 2), values(nq, PP_FMT_BF16, 3),
                     values(nq, PP_FMT_BF16, 4), values(nq, PP_FMT_BF16, 0), values(dm.h * dm.s_q, PP_FMT_BF16, 0),
                     values(nq, PP_FMT_BF16, 0), values(nq, PP_FMT_BF16, 0), values(nq, PP_FMT_BF16, 0)};
    for (int kern = 0; kern < 2; kern++) {
        pp_attn_variant v;
        memset(&v, 0, sizeof v);
        v.format = PP_FMT_BF16, v.kernel = kern ? PP_ATTN_FLASH : PP_ATTN_UNFUSED, v.qk_layer_scaling = 1;
        v.cp_world = 1, v.cp_accum = v.cp_grad_accum = PP_FMT_BF16;
        pp_ranges R;
        pp_ranges_init(&R, cells, dm.h);
        double off = attn(&v, &dm, io, threads, NULL), on = attn(&v, &dm, io, threads, &R);
        off = (off + attn(&v, &dm, io, threads, NULL)) / 2;
        printf("attention %-8s b1 h4 s1024 d64 causal bf16 fwd+bwd: off %.3f s, on %.3f s, on/off %.2f\n",
               kern ? "flash" : "unfused", off, on, on / off);
    }
    for (int i = 0; i < 9; i++)
        free(io[i]);
}

// ---- gemm

static double gemm(const pp_gemm_variant *v, int64_t n, const double *a, const double *b, double *c, int threads,
                   pp_ranges *R)
{
    pp_error e = {0};
    double t = now();
    if (pp_gemm_cpu_ranges(v, 1, n, n, n, a, b, c, threads, R, &e)) {
        fprintf(stderr, "bench_ranges: %s\n", e.msg);
        exit(3);
    }
    return now() - t;
}

static void bench_gemm(int threads, pp_range_cell *cells)
{
    const int64_t n = 384;
    double *a = values(n * n, PP_FMT_FP16, 5), *b = values(n * n, PP_FMT_FP16, 6), *c = values(n * n, PP_FMT_FP16, 0);
    for (int acc = 0; acc < 2; acc++) {
        pp_gemm_variant v;
        memset(&v, 0, sizeof v);
        v.format = PP_FMT_FP16, v.accum = acc ? PP_GEMM_ACC_STORAGE : PP_GEMM_ACC_FP32;
        pp_ranges R;
        pp_ranges_init(&R, cells, 1);
        double off = gemm(&v, n, a, b, c, threads, NULL), on = gemm(&v, n, a, b, c, threads, &R);
        printf("gemm %d^3 fp16 accumulate %-7s: off %.3f s, on %.3f s, on/off %.2f\n", (int)n, acc ? "storage" : "fp32",
               off, on, on / off);
    }
    free(a), free(b), free(c);
}

// ---- adamw

static void bench_adamw(int threads, pp_range_cell *cells)
{
    pp_adamw_problem pr;
    memset(&pr, 0, sizeof pr);
    pr.kind = PP_ADAMW_GRAD_SYNTHETIC, pr.n = 1 << 16, pr.steps = 50, pr.seed = 7;
    pr.hyper = (pp_adamw_hyper){1e-3, 0.9, 0.999, 1e-8, 0.0};
    pr.grad_scale = 1e-2, pr.snr = 1.0;
    pp_adamw_variant va;
    memset(&va, 0, sizeof va);
    va.param = va.momentum = va.variance = va.compensation = PP_FMT_BF16;
    double *th0 = values(pr.n, PP_FMT_BF16, 8), *out = values(4 * pr.n, PP_FMT_BF16, 0);
    double t[2];
    for (int on = 0; on < 2; on++) {
        pp_ranges R;
        pp_ranges_init(&R, cells, 64);
        pp_error e = {0};
        double t0 = now();
        if (pp_adamw_cpu_ranges(&va, &pr, th0, out, out + pr.n, out + 2 * pr.n, NULL, NULL, threads,
                                PP_ADAMW_PATH_VECTOR, on ? &R : NULL, &e)) {
            fprintf(stderr, "bench_ranges: %s\n", e.msg);
            exit(3);
        }
        t[on] = now() - t0;
    }
    printf("adamw n 65536 T 50 bf16 (on: the scalar loop with notes): off %.3f s, on %.3f s, on/off %.2f\n", t[0], t[1],
           t[1] / t[0]);
    free(th0), free(out);
}

int main(int argc, char **argv)
{
    pp_bench_args_at_most(argc, argv, 1, "bench_ranges [threads]");
    int threads = (int)pp_bench_arg(argc, argv, 1, 2, 1, 1024, "bench_ranges [threads]");
    pp_range_cell *cells = malloc(sizeof *cells * PP_SITE_COUNT * 64);
    if (!cells)
        return 3;
    printf("range diagnostics: cost of --ranges, on/off in the same run (%d threads)\n", threads);
    bench_attention(threads, cells);
    bench_gemm(threads, cells);
    bench_adamw(threads, cells);
    free(cells);
    return 0;
}
