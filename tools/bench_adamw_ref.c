// bench_adamw_ref.c — the AdamW lines of issue 17's table, each against its anchor measured in
// the same run, at n = 65,536, T = 1,000 (the anyprecision-adamw case's size):
//   - the reference's fast path (double-double in 8 lanes, running bound) against mpfr-plain
//     (128 bits, on the first n/16 elements, scaled), and the lanes against the scalar
//     double-double element (the oracle) on the same n/16 elements;
//   - the CPU emulation's variants (quadratic source: a two-operation gradient, like for like;
//     input: a recorded [T, n] gradient tensor read; synthetic: plus a normal draw per
//     element-step) against torch.optim.AdamW on the CPU
//     (foreach and fused fp32, bf16, one gradient reused), run by tools/bench_adamw_torch.py
//     through PRECPROBE_PYTHON; without torch the line says so. The synthetic lines also against
//     fused fp32 on a gradient drawn by torch.randn every step (fp32-fused-randn: a normal per
//     element-step and the update, like for like).
// Times are CPU seconds of the process (the machine may be shared: wall times are printed too);
// ns per element-step are CPU time / (n·T).
// The emulation lines and torch's are each the median of reps runs (default 5).
// Run: make bench (or build/rel/tools/bench_adamw_ref [threads] [n] [T] [reps]). Prints numbers only.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adamw_ref.h"
#include "adamw_ref_dd.h"
#include "adamw_ref_dd_lanes.h"
#include "bench_adamw_variants.h"
#include "bench_args.h"
#include "cpu/adamw.h"
#include "cpu/reject_lanes.h"

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// torch's CPU seconds per configuration (fp32, fp32-fused, fp32-fused-randn, bf16); < 0 where
// absent. fused_randn draws the gradient by torch.randn every step: the synthetic lines' like for like.
typedef struct torch_times {
    double fp32, fused, fused_randn, bf16;
    char why[200];
} torch_times;

static void run_torch1(int64_t n, int T, int threads, torch_times *tt)
{
    tt->fp32 = tt->fused = tt->fused_randn = tt->bf16 = -1.0;
    snprintf(tt->why, sizeof tt->why, "PRECPROBE_PYTHON not set");
    const char *py = getenv("PRECPROBE_PYTHON");
    if (!py || !*py)
        return;
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' tools/bench_adamw_torch.py %lld %d %d 2>&1", py, (long long)n, T, threads);
    FILE *f = popen(cmd, "r");
    if (!f) {
        snprintf(tt->why, sizeof tt->why, "could not run %s", py);
        return;
    }
    char line[512], name[64];
    double wall, cpu;
    snprintf(tt->why, sizeof tt->why, "no timing from %s", py);
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%63s %lf %lf", name, &wall, &cpu) == 3) {
            if (!strcmp(name, "fp32"))
                tt->fp32 = cpu;
            else if (!strcmp(name, "fp32-fused"))
                tt->fused = cpu;
            else if (!strcmp(name, "fp32-fused-randn"))
                tt->fused_randn = cpu;
            else if (!strcmp(name, "bf16"))
                tt->bf16 = cpu;
        } else if (!strncmp(line, "absent", 6)) {
            line[strcspn(line, "\n")] = 0;
            snprintf(tt->why, sizeof tt->why, "%s", line + 7);
        }
    }
    pclose(f);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// The median of x[0 .. r − 1] (sorts x).
static double median(double *x, int r)
{
    qsort(x, (size_t)r, sizeof *x, cmp_double);
    return r % 2 ? x[r / 2] : 0.5 * (x[r / 2 - 1] + x[r / 2]);
}

#define MAX_REPS 31

// torch's times, each the median of reps runs of the script (a load spike on a shared machine
// moves one run, not the median).
static void run_torch(int64_t n, int T, int threads, int reps, torch_times *tt)
{
    double f32[MAX_REPS], fu[MAX_REPS], fr[MAX_REPS], b16[MAX_REPS];
    for (int r = 0; r < reps; r++) {
        run_torch1(n, T, threads, tt);
        f32[r] = tt->fp32, fu[r] = tt->fused, fr[r] = tt->fused_randn, b16[r] = tt->bf16;
    }
    tt->fp32 = median(f32, reps), tt->fused = median(fu, reps), tt->fused_randn = median(fr, reps);
    tt->bf16 = median(b16, reps);
}

// One emulation run's CPU seconds, the trace recorded (as a run's report needs it: the loss of
// the sources that define one, the θ snapshots) or not; < 0 on failure.
static double emu_cpu(const pp_adamw_variant *va, const pp_adamw_problem *pe, const double *th0, double **o,
                      int threads, int with_trace, double *wall)
{
    pp_adamw_trace tr;
    double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    if (pp_adamw_cpu(va, pe, th0, o[0], o[1], o[2], o[3], with_trace ? &tr : NULL, threads, NULL))
        return -1.0;
    double c = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    *wall = clock_s(CLOCK_MONOTONIC) - w0;
    if (with_trace)
        pp_adamw_trace_free(&tr);
    return c;
}

// The double-double reference's scalar element and lanes on elements [0, m), one thread: CPU s.
static void dd_scalar_vs_lanes(const pp_adamw_problem *pr, const double *th0, int64_t m, double *ts, double *tl)
{
    int T = pr->steps;
    pp_adamw_dd_scal_ *sc = calloc((size_t)T + 1, sizeof *sc);
    for (int t = 1; t <= T; t++) {  // the scalars' values do not change the work
        sc[t].a[0] = sc[t].a_d = pp_adamw_lr(pr, t) / (1.0 - pow(pr->hyper.beta1, t));
        sc[t].b[0] = sc[t].b_d = 1.0 / sqrt(1.0 - pow(pr->hyper.beta2, t));
        sc[t].dec[0] = sc[t].dec_d = 1.0;
        sc[t].ra = sc[t].rb = 0x1p-100;
    }
    pp_adamw_dd_elem_ o[PP_ADAMW_DD_LANES];
    int ok[PP_ADAMW_DD_LANES];
    double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    for (int64_t i = 0; i < m; i++)
        pp_adamw_ref_dd_elem_(pr, PP_FMT_BF16, sc, i, th0[i], PP_ADAMW_REF_MAX_REL, NULL, &o[0]);
    *ts = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    for (int64_t i = 0; i + PP_ADAMW_DD_LANES <= m; i += PP_ADAMW_DD_LANES)
        pp_adamw_ref_dd_lanes_(pr, PP_FMT_BF16, sc, i, th0 + i, PP_ADAMW_REF_MAX_REL, NULL, o, ok);
    *tl = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    free(sc);
}

// The synthetic source's gradients of every step, grads[(t − 1)·n + i] = pp_adamw_synth_grad(pr, P, t,
// i): each element's signal drawn once (not once per step) and the steps' normals 512 at a time
// (pp_rand_normal_range at this CPU's level, the same bits), so the input lines' setup is not the
// bench's longest part. Returns nonzero when out of memory.
static int synth_grads(const pp_adamw_problem *pr, pp_format_id P, double *grads)
{
    int64_t n = pr->n;
    double *sig = malloc((size_t)n * sizeof *sig);
    if (!sig)
        return 1;
    for (int64_t i = 0; i < n; i++)
        sig[i] = pp_adamw_synth_signal(pr, i);
    const pp_rand_lanes_fns fns = pp_rand_lanes_fns_for(PP_ISA_AUTO);
    double z[PP_RAND_BATCH_MAX];
    for (int t = 1; t <= pr->steps; t++)
        for (int64_t i0 = 0; i0 < n; i0 += PP_RAND_BATCH_MAX) {
            int m = n - i0 < PP_RAND_BATCH_MAX ? (int)(n - i0) : PP_RAND_BATCH_MAX;
            pp_rand_normal_range(pr->seed, PP_ADAMW_TID_NOISE + (uint32_t)t, i0, m, fns, z);
            for (int k = 0; k < m; k++)
                grads[(int64_t)(t - 1) * n + i0 + k] = pp_adamw_synth_grad_z(pr, P, sig[i0 + k], z[k]);
        }
    free(sig);
    return 0;
}

int main(int argc, char **argv)
{
    const char *usage = "bench_adamw_ref [threads] [n] [T] [reps]";
    pp_bench_args_at_most(argc, argv, 4, usage);
    int threads = (int)pp_bench_arg(argc, argv, 1, 2, 1, 1024, usage);
    int64_t n = pp_bench_arg(argc, argv, 2, 65536, 1, (int64_t)1 << 32, usage);
    int T = (int)pp_bench_arg(argc, argv, 3, 1000, 1, 100000000, usage);
    int reps = (int)pp_bench_arg(argc, argv, 4, 5, 1, 1000, usage);
    reps = reps < 1 ? 1 : reps > MAX_REPS ? MAX_REPS : reps;
    pp_adamw_problem pr = {.kind = PP_ADAMW_GRAD_SYNTHETIC, .n = n, .steps = T, .seed = 42,
                           .hyper = {.lr = 1e-5, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = 0.0},
                           .schedule = PP_ADAMW_LR_CONSTANT, .grad_scale = 1e-3, .snr = 1.0};
    double *th0 = malloc((size_t)n * sizeof *th0), *o[4], es = (double)n * T;
    for (int k = 0; k < 4; k++)
        o[k] = malloc((size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; i++)
        th0[i] = pp_round(PP_FMT_BF16, pp_rand_normal(7, 0, (uint64_t)i), PP_RND_NE, 0);

    // ---- the reference
    double b[3], bp[3], w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    pp_adamw_trace tr;
    if (pp_adamw_ref(&pr, PP_FMT_BF16, 0, th0, o[0], o[1], o[2], b, &tr, threads, NULL)) {
        fprintf(stderr, "bench_adamw_ref: reference failed\n");
        return 1;
    }
    double w_ref = clock_s(CLOCK_MONOTONIC) - w0, c_ref = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    pp_adamw_trace_free(&tr);
    pp_adamw_problem pp = pr;  // the anchor: mpfr-plain on the first n/16 elements
    pp.n = n / 16 > 0 ? n / 16 : 1;
    c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    if (pp_adamw_ref(&pp, PP_FMT_BF16, PP_ADAMW_REF_PREC, th0, o[0], o[1], o[2], bp, NULL, threads, NULL)) {
        fprintf(stderr, "bench_adamw_ref: mpfr-plain reference failed\n");
        return 1;
    }
    double c_plain = (clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0) * (double)n / (double)pp.n;
    printf("adamw reference fast (double-double lanes, running bound), n = %lld, T = %d, %d threads: %.2f s wall, "
           "%.2f s cpu (%.1f ns per element-step); mpfr-plain (128 bits, same run, %lld elements scaled to n): "
           "%.1f s cpu (%.0f ns): fast is %.1fx faster (cpu); bound theta %.3g\n",
           (long long)n, T, threads, w_ref, c_ref, c_ref / es * 1e9, (long long)pp.n, c_plain, c_plain / es * 1e9,
           c_plain / c_ref, b[0]);
    double ts, tl;
    int64_t m = (n / 16 / PP_ADAMW_DD_LANES) * PP_ADAMW_DD_LANES;
    m = m > 0 ? m : PP_ADAMW_DD_LANES;
    dd_scalar_vs_lanes(&pr, th0, m, &ts, &tl);
    printf("adamw reference double-double, %lld elements, one thread: scalar element (the oracle) %.1f ns, "
           "%d lanes %.1f ns per element-step (cpu): lanes %.1fx faster\n",
           (long long)m, ts / ((double)m * T) * 1e9, PP_ADAMW_DD_LANES, tl / ((double)m * T) * 1e9, ts / tl);

    // ---- the emulation against torch: every time the median of reps runs (CPU time)
    torch_times tt;
    run_torch(n, T, threads, reps, &tt);
    if (tt.fp32 < 0 && tt.fused < 0 && tt.fused_randn < 0 && tt.bf16 < 0)
        printf("adamw torch anchor absent (%s): emulation lines without a ratio\n", tt.why);
    else
        printf("adamw torch.optim.AdamW cpu, same run, n = %lld, T = %d, %d threads, median of %d: fp32 foreach "
               "%.3f s, fp32 fused %.3f s, fp32 fused on torch.randn gradients %.3f s, bf16 %.3f s (cpu; < 0: "
               "absent)\n",
               (long long)n, T, threads, reps, tt.fp32, tt.fused, tt.fused_randn, tt.bf16);
    // the quadratic source's gradient is two operations (torch's anchor reuses one gradient):
    // the like-for-like line; the input one reads a recorded [T, n] gradient tensor (the
    // synthetic source's own gradients, so only the source's cost differs), as a torch
    // optimizer stepping on recorded .grad tensors would; the synthetic one adds a normal draw
    // per element-step. Each line is the run as shipped (the trace a report shows: θ snapshots,
    // and the per-step binary64 loss where the source defines one, quadratic); the fp32 lines
    // also time the update alone (no trace), torch's anchor's work (it computes no loss).
    static const char *src_names[3] = {"quadratic", "input", "synthetic"};
    double *grads = NULL;
    pp_format_id grads_fmt = PP_FMT_COUNT;
    for (int kk = 0; kk < 12; kk++) {
        int k = kk % 4, src = kk / 4;
        const pp_bench_adamw_variant *bv = &pp_bench_adamw_variants[k];
        pp_adamw_problem pe = pr;
        pe.kind = src == 0 ? PP_ADAMW_GRAD_QUADRATIC : src == 1 ? PP_ADAMW_GRAD_INPUT : PP_ADAMW_GRAD_SYNTHETIC;
        if (src == 1 && grads_fmt != bv->v.param) {  // T·n values of P, made once per format
            free(grads);
            grads = malloc((size_t)n * (size_t)T * sizeof *grads);
            if (!grads) {
                fprintf(stderr, "bench_adamw_ref: out of memory for the input gradients\n");
                return 1;
            }
            if (synth_grads(&pr, bv->v.param, grads)) {
                fprintf(stderr, "bench_adamw_ref: out of memory for the input gradients\n");
                return 1;
            }
            grads_fmt = bv->v.param;
        }
        pe.grads = src == 1 ? grads : NULL;
        double cs[MAX_REPS], ws[MAX_REPS], cn[MAX_REPS], wn[MAX_REPS];
        for (int r = 0; r < reps; r++) {
            cs[r] = emu_cpu(&bv->v, &pe, th0, o, threads, 1, &ws[r]);
            cn[r] = k == 0 ? emu_cpu(&bv->v, &pe, th0, o, threads, 0, &wn[r]) : 0.0;
            if (cs[r] < 0 || cn[r] < 0)
                return 1;
        }
        double c = median(cs, reps), w = median(ws, reps), cu = k == 0 ? median(cn, reps) : 0.0;
        double anchor = k == 0 ? (tt.fused > 0 ? tt.fused : tt.fp32) : tt.bf16;
        const char *aname = k == 0 ? (tt.fused > 0 ? "fused fp32" : "fp32") : "bf16";
        printf("adamw cpu emulation %-17s %-9s n = %lld, T = %d, %d threads, median of %d: as shipped (trace) %.3f s "
               "wall, %.3f s cpu (%.1f ns per element-step)",
               bv->name, src_names[src], (long long)n, T, threads, reps, w, c, c / es * 1e9);
        if (anchor > 0)
            printf(": %.2fx torch's %s cpu time (target <= %s)", c / anchor, aname, k == 0 ? "2x fused" : "3x");
        if (src == 2 && tt.fused_randn > 0)  // like for like: a normal per element-step on both sides
            printf("; %.2fx torch's fused fp32 on torch.randn gradients", c / tt.fused_randn);
        if (k == 0) {
            printf("; update only (no trace) %.3f s cpu (%.1f ns)", cu, cu / es * 1e9);
            if (anchor > 0)
                printf(": %.2fx", cu / anchor);
            if (src == 2 && tt.fused_randn > 0)
                printf(", %.2fx on torch.randn", cu / tt.fused_randn);
        }
        printf("\n");
    }
    free(grads);
    free(th0);
    for (int k = 0; k < 4; k++)
        free(o[k]);
    return 0;
}
