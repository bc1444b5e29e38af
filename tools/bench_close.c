// bench_close.c — elements per second (of CPU time) of pp_close_stats_update for each arithmetic mode, and the
// ratio against a naive two-pass loop (binary64 isclose count, then the two maxima) timed in
// the same run, and against the same pass with the one-pair code alone (PP_CLOSE_ISA_NONE: no
// chunk lanes, src/core/close_lanes.h), whose statistics are the same bits. Issue 17's target
// is 60 M pairs/s. Reports numbers only; no timing assertions. Run by `make bench`.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/close.h"

// ---------------------------------------------------------------------------------------------
// Data and timing

enum { N = 1 << 20, REPEAT = 5 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);  // CPU time: a loaded machine stretches wall time, not work
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t next64(uint64_t *s)  // splitmix64
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Expected values of moderate magnitude; actual ones up to twice the tolerance away (rounded to
// the actual format), so that roughly half the pairs mismatch.
static void fill(const pp_close_opts *o, double *a, double *e)
{
    uint64_t s = 12345;
    for (int64_t i = 0; i < N; i++) {
        double u = (double)(next64(&s) >> 11) * 0x1p-53;
        double v = (double)(next64(&s) >> 11) * 0x1p-53;
        double x = pp_round(o->expected_format, (u - 0.5) * 8.0, PP_RND_NE, 0);
        e[i] = x;
        a[i] = pp_round(o->actual_format, x + (o->atol + o->rtol * fabs(x)) * (4 * v - 2), PP_RND_NE, 0);
    }
}

// The baseline: torch's three numbers the plain way, binary64, two passes.
static double naive(const pp_close_opts *o, const double *a, const double *e, int64_t *mis)
{
    int64_t m = 0;
    for (int64_t i = 0; i < N; i++) {
        double d = fabs(a[i] - e[i]);
        m += !(a[i] == e[i] || (isfinite(d) && d <= o->atol + o->rtol * fabs(e[i])));
    }
    double best_abs = 0, best_rel = 0;
    for (int64_t i = 0; i < N; i++) {
        double d = fabs(a[i] - e[i]);
        if (a[i] == e[i] || (isfinite(d) && d <= o->atol + o->rtol * fabs(e[i])))
            continue;
        if (d > best_abs)
            best_abs = d;
        double r = d / fabs(e[i]);
        if (r > best_rel)
            best_rel = r;
    }
    *mis = m;
    return best_abs + best_rel;
}

// ---------------------------------------------------------------------------------------------
// main

int main(void)
{
    double *a = malloc(N * sizeof *a), *e = malloc(N * sizeof *e);
    if (!a || !e) {
        fprintf(stderr, "bench_close: out of memory\n");
        return 3;
    }
    struct {
        const char *name;
        pp_format_id fa, fe;
        int major, minor;
    } modes[] = {
        {"fp64 (float64 arithmetic)", PP_FMT_FP64, PP_FMT_FP64, 2, 1},
        {"fp32 (torch 2.1, fp32 ops)", PP_FMT_FP32, PP_FMT_FP32, 2, 1},
        {"bf16 (torch 2.1, bf16 opmath)", PP_FMT_BF16, PP_FMT_BF16, 2, 1},
        {"fp16 (torch 2.1, fp16 opmath)", PP_FMT_FP16, PP_FMT_FP16, 2, 1},
        {"fp16+bf16 (torch 2.1, fp32 ops)", PP_FMT_FP16, PP_FMT_BF16, 2, 1},
        {"bf16 (torch 2.0, float64)", PP_FMT_BF16, PP_FMT_BF16, 2, 0},
    };
    printf("bench_close: %d pairs per run, best of %d\n", N, REPEAT);
    for (size_t k = 0; k < sizeof modes / sizeof modes[0]; k++) {
        pp_close_opts o = {.torch_major = modes[k].major,
                           .torch_minor = modes[k].minor,
                           .actual_format = modes[k].fa,
                           .expected_format = modes[k].fe};
        pp_default_tolerances(o.actual_format, o.expected_format, &o.rtol, &o.atol);
        fill(&o, a, e);
        double best = INFINITY, best_naive = INFINITY, best_one = INFINITY;
        volatile double sink = 0;  // keeps both computations alive
        int64_t mis = 0, mis_naive = 0;
        for (int r = 0; r < REPEAT; r++) {
            pp_close_stats s;
            pp_close_stats_init(&s);
            double t0 = now();
            pp_close_stats_update(&s, &o, a, e, N, 0);
            double t1 = now();
            sink += s.abs_diff.value + pp_close_stats_rms(&s);
            mis = s.mismatched;
            double t2 = now();
            sink += naive(&o, a, e, &mis_naive);
            double t3 = now();
            pp_close_stats one;  // the one-pair code alone (no chunk lanes): the same statistics
            pp_close_stats_init(&one);
            double t4 = now();
            pp_close_stats_update_isa(&one, &o, a, e, N, 0, PP_CLOSE_ISA_NONE);
            double t5 = now();
            sink += one.abs_diff.value;
            if (t5 - t4 < best_one)
                best_one = t5 - t4;
            if (t1 - t0 < best)
                best = t1 - t0;
            if (t3 - t2 < best_naive)
                best_naive = t3 - t2;
        }
        printf("  %-32s %7.2f M pairs/s   naive two-pass %7.2f M pairs/s   %5.1fx slower   one-pair code %6.2f M "
               "pairs/s (lanes %.1fx faster)   (%.1f%% mismatched; naive %.1f%%)  target 60: %s\n",
               modes[k].name, N / best / 1e6, N / best_naive / 1e6, best / best_naive, N / best_one / 1e6,
               best_one / best,
               100.0 * (double)mis / N, 100.0 * (double)mis_naive / N, N / best / 1e6 >= 60.0 ? "met" : "NOT met");
    }
    free(a);
    free(e);
    return 0;
}
