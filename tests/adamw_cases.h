// adamw_cases.h — the knob combinations and problems on which an AdamW backend with
// pp_adamw_cuda's signature must equal the CPU emulation bit for bit (outputs, θ snapshots,
// loss per step). Shared by tests/test_adamw_threads.c (the per-thread bodies in the GPU's
// decomposition, on the CPU) and tests/test_adamw_cuda.c (the GPU itself); with range
// diagnostics, the counters of a backend with pp_adamw_cuda_ranges's signature (adamw_case_ranges).
#ifndef PP_TEST_ADAMW_CASES_H
#define PP_TEST_ADAMW_CASES_H

#include "test_util.h"

#include "cpu/adamw.h"
#include "ranges_compare.h"

#define ADAMW_MAX_FAILS 10

typedef int (*adamw_backend_fn)(const pp_adamw_variant *va, const pp_adamw_problem *pr, const double *theta0,
                                double *theta, double *m, double *v, double *c, pp_adamw_trace *trace,
                                int chunk_steps, char *errbuf, size_t errlen);

// Variant number vi of the full cross product: param × momentum × variance formats (27) ×
// {no Kahan, Kahan into fp32, bf16, fp16} (4) × {nearest, stochastic} (2) × {anyprecision,
// torch} (2) = 432; each with one of the two torch_kernels flavours (alternating every two
// variants, so every format, Kahan, rounding and update meets both); one torch variant without
// Kahan in four (14 in all) runs through the fused kernel (cuda-fused) instead of cuda.
#define ADAMW_N_VARIANTS 432
static inline pp_adamw_variant adamw_case_variant(int vi)
{
    static const pp_format_id f[3] = {PP_FMT_FP32, PP_FMT_BF16, PP_FMT_FP16};
    pp_adamw_variant va;
    memset(&va, 0, sizeof va);  // exact_sites 0: the emulation as is
    va.param = f[vi % 3];
    va.momentum = f[vi / 3 % 3];
    va.variance = f[vi / 9 % 3];
    int k = vi / 27 % 4;
    va.kahan = k > 0;
    va.compensation = k > 0 ? f[k - 1] : PP_FMT_BF16;
    va.stochastic = vi / 108 % 2;
    va.update = vi / 216 % 2 ? PP_ADAMW_TORCH : PP_ADAMW_ANYPRECISION;
    va.kernels = vi / 2 % 2 ? PP_ADAMW_KERNELS_CPU : PP_ADAMW_KERNELS_CUDA;
    if (va.update == PP_ADAMW_TORCH && !va.kahan && va.kernels == PP_ADAMW_KERNELS_CUDA && vi / 4 % 2)
        va.kernels = PP_ADAMW_KERNELS_CUDA_FUSED;
    return va;
}

// A problem of source kind with n parameters and T steps whose hyper-parameters vary with vi:
// weight decay on and off, the three schedules, β1 = 0.4 for some torch variants (lerp's other
// branch, |1 − β1| ≥ ½), a large gradient scale that overflows fp16 for some (Inf and NaN
// propagate through every state).
static inline pp_adamw_problem adamw_case_problem(pp_adamw_grad_kind kind, int64_t n, int T, int64_t rows, int vi)
{
    pp_adamw_problem pr;
    memset(&pr, 0, sizeof pr);
    pr.kind = kind;
    pr.n = n;
    pr.steps = T;
    pr.seed = pp_test_seed() + (uint64_t)vi;
    pr.hyper.lr = vi % 5 == 4 ? 0.5 : 1e-2;
    pr.hyper.beta1 = vi % 7 == 3 ? 0.4 : 0.9;
    pr.hyper.beta2 = 0.999;
    pr.hyper.eps = 1e-8;
    pr.hyper.weight_decay = vi % 2 ? 0.01 : 0.0;
    pr.schedule = (pp_adamw_schedule)(vi % 3);
    pr.warmup = 3;
    pr.grad_scale = vi % 11 == 5 ? 3e4 : 1e-2;
    pr.snr = 1.0;
    pr.rows = rows;
    pr.label_noise = 0.1;
    return pr;
}

// θ₀: normal values of the variant's parameter format.
static inline void adamw_case_theta0(const pp_adamw_problem *pr, pp_format_id P, double *th0)
{
    for (int64_t i = 0; i < pr->n; i++)
        th0[i] = pp_round(P, pp_rand_normal(pr->seed, 0x7430u, (uint64_t)i), PP_RND_NE, 0);
}

// Bits equal; with nan_any, two NaNs of any sign or payload count as equal (IEEE leaves a
// computed NaN's bits to the hardware: x86 makes the negative default NaN, CUDA 0x7fffffff).
static inline int adamw_case_same(double a, double b, int nan_any)
{
    return memcmp(&a, &b, sizeof a) == 0 || (nan_any && a != a && b != b);
}

// Counts and prints (up to ADAMW_MAX_FAILS in all, through *fails) the elements where got and
// want differ.
static inline void adamw_case_compare(const double *got, const double *want, int64_t n, int nan_any,
                                      const char *what, const char *tensor, int *fails)
{
    if (memcmp(got, want, (size_t)n * sizeof *got) == 0)
        return;
    for (int64_t i = 0; i < n; i++) {
        if (adamw_case_same(got[i], want[i], nan_any))
            continue;
        if (++*fails <= ADAMW_MAX_FAILS) {
            fprintf(stderr, "FAIL backend == cpu (%s): %s[%lld]\n", what, tensor, (long long)i);
            pp_test_print_double("backend", got[i]);
            pp_test_print_double("cpu", want[i]);
        }
    }
}

// Runs variant vi on problem pr through fn (with chunk_steps) and through pp_adamw_cpu, with
// traces, and compares θ, m, v, c, the snapshots and the losses. Returns the number of
// differing values (0: equal).
static inline int adamw_case_run(adamw_backend_fn fn, const char *name, int vi, const pp_adamw_problem *pr,
                                 int chunk_steps, int nan_any)
{
    pp_adamw_variant va = adamw_case_variant(vi);
    int64_t n = pr->n;
    double *th0 = calloc((size_t)n, sizeof *th0), *a = calloc((size_t)(4 * n), sizeof *a),
           *b = calloc((size_t)(4 * n), sizeof *b);
    assert_non_null(th0), assert_non_null(a), assert_non_null(b);
    adamw_case_theta0(pr, va.param, th0);
    pp_adamw_trace ta, tb;
    pp_error perr = {0};
    char err[400] = "";
    assert_int_equal(pp_adamw_cpu(&va, pr, th0, b, b + n, b + 2 * n, b + 3 * n, &tb, 1, &perr), PP_OK);
    int rc = fn(&va, pr, th0, a, a + n, a + 2 * n, a + 3 * n, &ta, chunk_steps, err, sizeof err);
    if (rc)
        fprintf(stderr, "%s: %s\n", name, err);
    assert_int_equal(rc, 0);
    char what[200];
    snprintf(what, sizeof what, "%s, variant %d: P %s M %s V %s kahan %d C %s sr %d %s %s; source %d n %lld T %d "
             "rows %lld chunk %d", name, vi, pp_format_get(va.param).name, pp_format_get(va.momentum).name,
             pp_format_get(va.variance).name, va.kahan, pp_format_get(va.compensation).name, va.stochastic,
             va.update == PP_ADAMW_TORCH ? "torch" : "anyprecision",
             va.kernels == PP_ADAMW_KERNELS_CPU ? "cpu-kernels" : "cuda-kernels", (int)pr->kind, (long long)n, pr->steps,
             (long long)pr->rows, chunk_steps);
    int fails = 0;
    static const char *const names[4] = {"theta", "m", "v", "c"};
    for (int k = 0; k < 4; k++)
        adamw_case_compare(a + k * n, b + k * n, n, nan_any, what, names[k], &fails);
    assert_int_equal(ta.n_snaps, tb.n_snaps);
    assert_memory_equal(ta.snap_step, tb.snap_step, (size_t)ta.n_snaps * sizeof(int));
    adamw_case_compare(ta.snap, tb.snap, ta.n_snaps * n, nan_any, what, "snapshots", &fails);
    assert_int_equal(ta.loss != NULL, tb.loss != NULL);
    if (tb.loss)
        adamw_case_compare(ta.loss, tb.loss, pr->steps + 1, nan_any, what, "loss", &fails);
    pp_adamw_trace_free(&ta), pp_adamw_trace_free(&tb);
    free(th0), free(a), free(b);
    return fails;
}

// Every variant on small ragged problems of each source; then, for a sample of variants (every
// stride-th, scaled by PRECPROBE_TEST_MULTIPLIER), problems past the loss block (n = 2100: three
// blocks, the last ragged) with the loss split into chunks of 1, 4 and the default, and a
// linear regression with more rows than one warp. Returns the number of differing values.
static inline int adamw_case_all(adamw_backend_fn fn, const char *name, int nan_any)
{
    int fails = 0;
    for (int vi = 0; vi < ADAMW_N_VARIANTS; vi++) {
        pp_adamw_problem s = adamw_case_problem(PP_ADAMW_GRAD_SYNTHETIC, 5, 6, 0, vi);
        pp_adamw_problem q = adamw_case_problem(PP_ADAMW_GRAD_QUADRATIC, 7, 6, 0, vi);
        pp_adamw_problem l = adamw_case_problem(PP_ADAMW_GRAD_LINREG, 5, 6, 7, vi);
        fails += adamw_case_run(fn, name, vi, &s, 0, nan_any);
        fails += adamw_case_run(fn, name, vi, &q, vi % 3, nan_any);
        fails += adamw_case_run(fn, name, vi, &l, 0, nan_any);
    }
    int64_t stride = (int64_t)(ADAMW_N_VARIANTS / pp_test_iters(24));
    if (stride < 1)
        stride = 1;
    for (int vi = 5; vi < ADAMW_N_VARIANTS; vi += (int)stride) {
        pp_adamw_problem s = adamw_case_problem(PP_ADAMW_GRAD_SYNTHETIC, 2100, 12, 0, vi);
        pp_adamw_problem q = adamw_case_problem(PP_ADAMW_GRAD_QUADRATIC, 2100, 12, 0, vi);
        pp_adamw_problem l = adamw_case_problem(PP_ADAMW_GRAD_LINREG, 37, 12, 70, vi);
        fails += adamw_case_run(fn, name, vi, &s, 0, nan_any);
        for (int ci = 0; ci < 3; ci++)
            fails += adamw_case_run(fn, name, vi, &q, (int[]){1, 4, 0}[ci], nan_any);
        fails += adamw_case_run(fn, name, vi, &l, 0, nan_any);
    }
    return fails;
}

// A backend with range diagnostics (pp_adamw_cuda_ranges's signature).
typedef int (*adamw_ranges_fn)(const pp_adamw_variant *va, const pp_adamw_problem *pr, const double *theta0,
                               double *theta, double *m, double *v, double *c, pp_adamw_trace *trace,
                               int chunk_steps, pp_ranges *R, char *errbuf, size_t errlen);

// Range diagnostics of backend fn (plain: the same backend without them) against
// pp_adamw_cpu_ranges's (3 workers): every AdamW site of every parameter block (3 or 5 cells, the
// last ragged), over a sample of the variants (every format, Kahan, stochastic rounding, both
// updates; some with a gradient scale that overflows fp16) and the sources synthetic, quadratic
// (its loss chunked by 4 steps) and linear regression. θ, m, v, c must equal the CPU's (nan_any:
// any NaN equals any NaN) and plain's bit for bit. Returns the number of failures; fails too
// when nothing was noted or no Inf met (the comparison would be vacuous).
static inline int adamw_case_ranges(adamw_ranges_fn fn, adamw_backend_fn plain, const char *name, int nan_any)
{
    const pp_adamw_grad_kind kinds[3] = {PP_ADAMW_GRAD_SYNTHETIC, PP_ADAMW_GRAD_QUADRATIC, PP_ADAMW_GRAD_LINREG};
    int64_t inf = 0, notes = 0;
    int fails = 0;
    for (int vi = 0; vi < ADAMW_N_VARIANTS; vi += 7)
        for (int kk = 0; kk < 3; kk++) {
            int64_t n = kinds[kk] == PP_ADAMW_GRAD_LINREG ? 37 : 2500, heads = vi % 2 ? 3 : 5;
            pp_adamw_problem pr = adamw_case_problem(kinds[kk], n, 6, 11, vi);
            pp_adamw_variant va = adamw_case_variant(vi);
            double *th0 = malloc((size_t)n * 8), *want = calloc((size_t)(4 * n), 8), *got = calloc((size_t)(4 * n), 8);
            double *p = calloc((size_t)(4 * n), 8);
            pp_range_cell *cw = malloc((size_t)(PP_SITE_COUNT * heads) * sizeof *cw);
            pp_range_cell *cg = malloc((size_t)(PP_SITE_COUNT * heads) * sizeof *cg);
            assert_true(th0 && want && got && p && cw && cg);
            adamw_case_theta0(&pr, va.param, th0);
            pp_ranges Rw, Rg;
            pp_ranges_init(&Rw, cw, heads), pp_ranges_init(&Rg, cg, heads);
            pp_error e = {0};
            pp_adamw_trace tw, tg;
            assert_int_equal(pp_adamw_cpu_ranges(&va, &pr, th0, want, want + n, want + 2 * n, want + 3 * n, &tw, 3,
                                                 PP_ADAMW_PATH_VECTOR, &Rw, &e), PP_OK);
            char msg[400] = "";
            int rc = fn(&va, &pr, th0, got, got + n, got + 2 * n, got + 3 * n, &tg, 4, &Rg, msg, sizeof msg);
            if (!rc)
                rc = plain(&va, &pr, th0, p, p + n, p + 2 * n, p + 3 * n, NULL, 0, msg, sizeof msg);
            if (rc) {
                fprintf(stderr, "FAIL %s: variant %d source %d: %s\n", name, vi, kk, msg);
                fails++;
            }
            if (!rc && memcmp(got, p, (size_t)(4 * n) * 8)) {
                fprintf(stderr, "FAIL %s: variant %d source %d: outputs differ with range notes\n", name, vi, kk);
                fails++;
            }
            for (int64_t i = 0; !rc && i < 4 * n; i++)
                if (!adamw_case_same(got[i], want[i], nan_any)) {
                    fprintf(stderr, "FAIL %s: variant %d source %d: output %lld differs from the CPU's\n", name, vi,
                            kk, (long long)i);
                    fails++;
                    break;
                }
            char what[96];
            snprintf(what, sizeof what, "%s: adamw variant %d source %d", name, vi, kk);
            fails += rc ? 0 : pp_test_ranges_differ(&Rg, &Rw, PP_SITE_ADAMW_FIRST, PP_SITE_ADAMW_END, what);
            notes += pp_test_ranges_total(&Rg, PP_SITE_ADAMW_THETA, PP_SITE_ADAMW_THETA + 1,
                                          offsetof(pp_range_cell, count));
            inf += pp_test_ranges_total(&Rg, PP_SITE_ADAMW_FIRST, PP_SITE_ADAMW_END, offsetof(pp_range_cell, inf));
            pp_adamw_trace_free(&tw);
            if (!rc)
                pp_adamw_trace_free(&tg);
            free(th0), free(want), free(got), free(p), free(cw), free(cg);
            if (fails >= ADAMW_MAX_FAILS)
                return fails;
        }
    if (notes == 0 || inf == 0) {
        fprintf(stderr, "FAIL %s: the range comparison was vacuous (%lld θ notes, %lld Inf)\n", name,
                (long long)notes, (long long)inf);
        fails++;
    }
    return fails;
}

#endif
