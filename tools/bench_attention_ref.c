// bench_attention_ref.c — the attention reference on h=2, s=512, d=128, causal, forward +
// backward: the fast path's vector loops against its portable loops (same run, same bits; and its
// per-key exp and anchored accumulation alone) and against mpfr-plain, their ratios in CPU time
// (user + sys of all threads: a loaded machine stretches wall time, not work), the projected time
// of b=1, h=12, s=4096 on this machine's cores, and heads of that size measured one per core side
// by side. Run: make bench (or build/rel/tools/bench_attention_ref [threads]). Asserts nothing.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "attention_ref.h"
#include "attention_ref_fast.h"
#include "attention_ref_lanes.h"
#include "bench_args.h"
#include "format.h"

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct timing {
    double cpu, wall;  // the best of the repetitions, each
} timing;

// bf16 values, moderate magnitudes with random signs (an LCG: reproducible, no dependencies).
static void fill(double *x, int64_t count, uint64_t *state)
{
    for (int64_t i = 0; i < count; i++) {
        *state = *state * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
        double u = (double)(*state >> 11) * 0x1p-53;
        x[i] = pp_round(PP_FMT_BF16, (*state >> 10 & 1 ? -1.0 : 1.0) * (0.25 + 2.0 * u), PP_RND_NE, 0);
    }
}

// Scores (query, key) pairs the mask lets through: the unit of work of both paths.
static double scores(const pp_attn_ref_opts *o)
{
    double n = 0;
    for (int64_t i = 0; i < o->s_q; i++) {
        int64_t v = o->causal ? i + o->s_kv - o->s_q + 1 : o->s_kv;
        n += (double)(v < 0 ? 0 : v > o->s_kv ? o->s_kv : v);
    }
    return n * (double)(o->b * o->h);
}

static timing run(const pp_attn_ref_opts *o, int reps)
{
    int64_t nq = o->b * o->s_q * o->h * o->d, nk = o->b * o->s_kv * o->h_kv * o->d;
    double *q = malloc(sizeof(double) * (size_t)nq), *dout = malloc(sizeof(double) * (size_t)nq);
    double *k = malloc(sizeof(double) * (size_t)nk), *v = malloc(sizeof(double) * (size_t)nk);
    double *out = malloc(sizeof(double) * (size_t)nq), *dq = malloc(sizeof(double) * (size_t)nq);
    double *dk = malloc(sizeof(double) * (size_t)nk), *dv = malloc(sizeof(double) * (size_t)nk);
    double *lse = malloc(sizeof(double) * (size_t)(o->b * o->h * o->s_q));
    if (!q || !dout || !k || !v || !out || !dq || !dk || !dv || !lse) {
        fprintf(stderr, "bench_attention_ref: out of memory\n");
        exit(3);
    }
    uint64_t st = 42;
    fill(q, nq, &st);
    fill(k, nk, &st);
    fill(v, nk, &st);
    fill(dout, nq, &st);
    timing best = {1e30, 1e30};
    for (int r = 0; r < reps; r++) {
        pp_error err = {0};
        pp_attn_ref_bounds b;
        double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID), t0 = clock_s(CLOCK_MONOTONIC);
        if (pp_attention_ref(o, q, k, v, dout, out, lse, dq, dk, dv, &b, &err) != PP_OK) {
            fprintf(stderr, "bench_attention_ref: %s\n", err.msg);
            exit(3);
        }
        double t = clock_s(CLOCK_MONOTONIC) - t0, c = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
        best.wall = t < best.wall ? t : best.wall;
        best.cpu = c < best.cpu ? c : best.cpu;
        if (r == 0 && o->method == PP_ATTN_REF_FAST && o->lanes == PP_ATTN_REF_LANES_AUTO)
            printf("  bounds (fast): out %.3g  lse %.3g  dq %.3g  dk %.3g  dv %.3g  (plain fallbacks %lld)\n",
                   b.out, b.lse, b.dq, b.dk, b.dv, (long long)b.plain_tasks);
    }
    free(q); free(dout); free(k); free(v); free(out); free(dq); free(dk); free(dv); free(lse);
    return best;
}

// The per-key exp and the 16-term anchored accumulation (d 128) alone, the vector path against the
// portable loop in the same run: CPU seconds per element (exp) and per element-term (acc).
static void bench_steps(void)
{
    const pp_attn_lanes_ *L = pp_attn_lanes_pick_(PP_ATTN_REF_LANES_AUTO);
    if (!L) {
        printf("  per-key steps: no vector path on this CPU\n");
        return;
    }
    enum { N = 4096, REPS = 400, D = 128, T = 16 };
    pp_attn_job_ *J = calloc(1, sizeof *J);
    double *Sh = malloc(sizeof(double) * N), *Sl = malloc(sizeof(double) * N);
    double *eh = malloc(sizeof(double) * N), *el = malloc(sizeof(double) * N);
    double *y = malloc(sizeof(double) * D * T), *h = calloc(D, sizeof(double)), *lo = calloc(D, sizeof(double));
    unsigned char *cut = malloc(N);
    if (!J || !Sh || !Sl || !eh || !el || !y || !h || !lo || !cut) {
        fprintf(stderr, "bench_attention_ref: out of memory\n");
        exit(3);
    }
    pp_attn_exp_init_(J);
    uint64_t st = 7;
    fill(Sh, N, &st);
    fill(y, D * T, &st);
    for (int i = 0; i < N; i++) {
        Sh[i] = -30.0 * (Sh[i] < 0 ? -Sh[i] : Sh[i]);  // exp arguments in [−70, −7]
        Sl[i] = Sh[i] * 0x1p-60;
    }
    for (int l = 0; l < D; l++)
        h[l] = 1.5 * 64.0;  // an anchor (the terms below sum to less than 16 per element)
    const double *ys[T];
    double xh[T], xl[T];
    for (int t = 0; t < T; t++) {
        ys[t] = y + t * D;
        xh[t] = 0.001 * (t + 1);
        xl[t] = xh[t] * 0x1p-55;
    }
    double sec[2][2];
    for (int v = 0; v < 2; v++) {
        double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
        for (int r = 0; r < REPS; r++)
            (v ? L->exp_row : pp_attn_exp_row_)((const double(*)[2])J->exp_tab, J->exp_L, N, Sh, Sl, 0.0,
                                                 eh, el, cut);
        double c1 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
        for (int r = 0; r < REPS * 8; r++)
            (v ? L->acc_multi : pp_attn_acc_multi_)(h, lo, D, T, ys, xh, xl);
        double c2 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
        sec[v][0] = (c1 - c0) / ((double)N * REPS);
        sec[v][1] = (c2 - c1) / ((double)D * T * REPS * 8);
    }
    printf("  per-key steps, %s vs portable (CPU time, same run): exp %.2f vs %.2f ns per key (%.1fx), "
           "anchored accumulation %.3f vs %.3f ns per element-term (%.1fx)\n", L->name, sec[1][0] * 1e9,
           sec[0][0] * 1e9, sec[0][0] / sec[1][0], sec[1][1] * 1e9, sec[0][1] * 1e9, sec[0][1] / sec[1][1]);
    free(J); free(Sh); free(Sl); free(eh); free(el); free(y); free(h); free(lo); free(cut);
}

int main(int argc, char **argv)
{
    long nproc = sysconf(_SC_NPROCESSORS_ONLN);
    pp_bench_args_at_most(argc, argv, 1, "bench_attention_ref [threads]");
    int threads = (int)pp_bench_arg(argc, argv, 1, nproc > 0 ? nproc : 1, 1, 1024, "bench_attention_ref [threads]");
    pp_attn_ref_opts f = {0};
    f.method = PP_ATTN_REF_FAST;
    f.b = 1;
    f.s_q = f.s_kv = 512;
    f.h = f.h_kv = 2;
    f.d = 128;
    f.causal = 1;
    f.backward = 1;
    f.threads = threads;
    // mpfr-plain on the last 8 query rows of each head (they see 505…512 keys), scaled to the full
    // causal problem by the number of scores: both paths' work is proportional to it.
    pp_attn_ref_opts p = f;
    p.method = PP_ATTN_REF_MPFR_PLAIN;
    p.s_q = 8;
    printf("bench_attention_ref: %d threads; b 1, h 2, s 512, d 128, causal, fwd+bwd, bf16 inputs; "
           "vector path %s\n", threads, pp_attn_lanes_name_(pp_attn_lanes_pick_(PP_ATTN_REF_LANES_AUTO)));
    pp_attn_ref_opts fs = f, f2 = f;
    fs.lanes = PP_ATTN_REF_LANES_PORTABLE;
    f2.lanes = PP_ATTN_REF_LANES_AVX2;
    timing tf = run(&f, 2), t2 = run(&f2, 2), ts = run(&fs, 2), tp_sub = run(&p, 1);
    double sf = scores(&f), sp = scores(&p);
    double tp = tp_sub.cpu * sf / sp;
    printf("  fast, vector    %8.3f s CPU (%6.3f s wall)  %7.1f ns per score, %5.2f ns per multiply-add\n",
           tf.cpu, tf.wall, tf.cpu / sf * 1e9, tf.cpu / (sf * 6.0 * 128.0) * 1e9);
    printf("  fast, %-9s %8.3f s CPU (%6.3f s wall)  (at most AVX2)\n",
           pp_attn_lanes_name_(pp_attn_lanes_pick_(PP_ATTN_REF_LANES_AVX2)), t2.cpu, t2.wall);
    printf("  fast, portable  %8.3f s CPU (%6.3f s wall)  %7.1f ns per score, %5.2f ns per multiply-add\n",
           ts.cpu, ts.wall, ts.cpu / sf * 1e9, ts.cpu / (sf * 6.0 * 128.0) * 1e9);
    printf("  mpfr-plain      %8.3f s CPU  (measured %.3f s on %.0f of %.0f scores: the last 8 rows "
           "of each head, scaled)\n", tp, tp_sub.cpu, sp, sf);
    printf("  portable/vector %8.2fx   plain/vector %8.1fx   (CPU time, same run)\n", ts.cpu / tf.cpu,
           tp / tf.cpu);
    bench_steps();
    pp_attn_ref_opts big = f;
    big.h = big.h_kv = 12;
    big.s_q = big.s_kv = 4096;
    double sb = scores(&big);
    int cores = threads < nproc ? threads : (int)nproc;
    printf("  projected b 1, h 12, s 4096, d 128, causal, fwd+bwd on %d idle cores (CPU time / %d, "
           "by scores, %.3g of them): vector %.1f s, portable %.1f s, mpfr-plain %.0f s\n",
           cores, cores, sb, tf.cpu * sb / sf / cores, ts.cpu * sb / sf / cores, tp * sb / sf / cores);
    // Heads of the PR config, measured (its key and value arrays, 4 MiB each per accumulator,
    // no longer fit where s = 512's do), one per core side by side as in a run (the cores then
    // share the memory the dk, dv accumulators stream through): the PR config is 12 such heads,
    // one task each.
    pp_attn_ref_opts one = big;
    one.h = one.h_kv = cores;
    one.threads = cores;
    timing t1 = run(&one, 1);
    printf("  PR config, %d of its 12 heads measured (%d threads): vector %.2f s wall, %.2f s CPU "
           "(%.1f ns per score); projected b 1, h 12 on %d idle cores: %.1f s (target 15 s)\n",
           cores, cores, t1.wall, t1.cpu, t1.cpu / scores(&one) * 1e9, cores, t1.wall * 12.0 / cores);
    return 0;
}
