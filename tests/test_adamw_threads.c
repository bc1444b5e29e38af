// test_adamw_threads.c — the CUDA AdamW's decomposition, run on the CPU: kernels/adamw_thread.h's
// per-thread bodies driven exactly as kernels/cuda/adamw_kernels.cu launches them (chunks of
// loss indices, a term buffer, one thread per (t, block) then per t; linear regression's three
// phases), threads visited in reverse order, must equal pp_adamw_cpu bit for bit (memcmp) for
// every knob combination and source; with range diagnostics, one accumulator noted by every
// thread (the GPU's atomics) equals pp_adamw_cpu_ranges's per-worker ones merged, counter for
// counter. Needs no GPU. Run: make build/rel/tests/test_adamw_threads
#include "adamw_cases.h"

// ---------------------------------------------------------------------------------------------
// The launcher of adamw_kernels.cu with each <<<grid, block>>> launch replaced by a loop over
// its threads, last thread first (a thread must not depend on another of its launch).

// R (the device accumulator, or NULL): each thread notes its steps into cell i / rblock.
static void gpu_elementwise(const pp_adamw_variant *va, const pp_adamw_problem *pr, const pp_adamw_scalars *sc,
                            pp_adamw_elem *state, pp_adamw_trace *trace, double *loss, int chunk_steps, pp_ranges *R,
                            int64_t rblock)
{
    int64_t n = pr->n, nb = (n + PP_ADAMW_LOSS_BLOCK - 1) / PP_ADAMW_LOSS_BLOCK;
    int T = pr->steps, want_loss = loss != NULL;
    int chunk = want_loss ? pp_adamw_loss_chunk(n, T, PP_ADAMW_TERM_BYTES, chunk_steps) : T + 1;
    double *term = want_loss ? calloc((size_t)chunk * (size_t)n, sizeof *term) : NULL;
    double *part = want_loss ? calloc((size_t)chunk * (size_t)nb, sizeof *part) : NULL;
    assert_true(!want_loss || (term && part));
    for (int t0 = 0; t0 <= T; t0 += chunk) {
        int t1 = T - t0 < chunk - 1 ? T : t0 + chunk - 1;
        int64_t cnt = (int64_t)(t1 - t0 + 1);
        for (int64_t i = n - 1; i >= 0; i--) {  // pp_adamw_elem_kernel1
            pp_adamw_elem e = state[i];
            pp_adamw_loss_out lo = {term ? term + i : NULL, n, 0};
            pp_adamw_snap_out so = {trace ? trace->snap : NULL, trace ? trace->snap_step : NULL,
                                    trace ? trace->n_snaps : 0, n};
            pp_adamw_elem_thread_r(va, pr, sc, i, t0, t1, &e, lo, so, R, R ? i / rblock : 0);
            state[i] = e;
        }
        if (!want_loss)
            continue;
        for (int64_t u = cnt * nb - 1; u >= 0; u--)  // pp_adamw_loss_block_kernel1
            part[u] = pp_adamw_loss_block_sum(term + (u / nb) * n, n, u % nb);
        for (int64_t tc = cnt - 1; tc >= 0; tc--)  // pp_adamw_loss_total_kernel1
            loss[t0 + tc] = pp_adamw_loss_total(part + tc * nb, nb, 1);
    }
    free(term);
    free(part);
}

static void gpu_linreg(const pp_adamw_variant *va, const pp_adamw_problem *pr, const pp_adamw_scalars *sc,
                       pp_adamw_elem *state, pp_adamw_trace *trace, double *loss, pp_ranges *R, int64_t rblock)
{
    int64_t n = pr->n, r = pr->rows;
    int T = pr->steps, snap = 0;
    float inv_r = 1.0f / (float)r;
    float *X = malloc((size_t)(r * n) * sizeof *X), *y = malloc((size_t)r * sizeof *y);
    float *res = malloc((size_t)r * sizeof *res);
    double *dr2 = malloc((size_t)r * sizeof *dr2);
    assert_true(X && y && res && dr2);
    pp_adamw_linreg_data(pr, X, y);
    for (int t = 0; t <= T; t++) {
        for (int64_t q = r - 1; q >= 0; q--)  // pp_adamw_linreg_row_kernel1
            pp_adamw_linreg_row(X, y, state, n, q, res, dr2);
        if (loss)  // pp_adamw_linreg_loss_kernel1
            loss[t] = pp_adamw_linreg_loss(dr2, r);
        if (t == T)
            break;
        double *srow = NULL;
        if (trace && snap < trace->n_snaps && trace->snap_step[snap] == t + 1)
            srow = trace->snap + (int64_t)snap++ * n;
        for (int64_t k = n - 1; k >= 0; k--) {  // pp_adamw_linreg_update_kernel1
            pp_adamw_elem e = state[k];
            pp_adamw_linreg_update_r(va, pr, &sc[t + 1], t + 1, X, res, inv_r, k, &e, R, R ? k / rblock : 0);
            state[k] = e;
            if (srow)
                srow[k] = e.theta;
        }
    }
    free(X), free(y), free(res), free(dr2);
}

// pp_adamw_cuda_ranges's host code, with the device buffers as host arrays (R: the device
// accumulator, one for every thread; NULL: none).
static int gpu_emulated_r(const pp_adamw_variant *va, const pp_adamw_problem *pr, const double *theta0, double *theta,
                          double *m, double *v, double *c, pp_adamw_trace *trace, int chunk_steps, pp_ranges *R,
                          char *errbuf, size_t errlen)
{
    if (trace)
        memset(trace, 0, sizeof *trace);
    if (pp_adamw_check(va, pr, theta0, errbuf, errlen))
        return 2;
    int64_t n = pr->n;
    int T = pr->steps, has_loss = pr->kind != PP_ADAMW_GRAD_SYNTHETIC;
    pp_adamw_scalars *sc = calloc((size_t)T + 1, sizeof *sc);
    pp_adamw_elem *state = malloc((size_t)n * sizeof *state);
    assert_true(sc && state);
    for (int t = 1; t <= T; t++)
        sc[t] = pp_adamw_scalars_make(va->update, &pr->hyper, pp_adamw_lr(pr, t), t);
    for (int64_t i = n - 1; i >= 0; i--)  // pp_adamw_init_kernel1
        state[i] = (pp_adamw_elem){(float)theta0[i], 0.0f, 0.0f, 0.0f};
    if (trace) {
        trace->n_snaps = pp_adamw_snap_steps(T, trace->snap_step);
        trace->theta0 = theta0;
        trace->snap = malloc((size_t)(trace->n_snaps * n) * sizeof *trace->snap);
        trace->loss = has_loss ? calloc((size_t)T + 1, sizeof *trace->loss) : NULL;
        assert_true(trace->snap && (!has_loss || trace->loss));
    }
    double *loss = trace ? trace->loss : NULL;
    int64_t rblock = R ? (n + R->heads - 1) / R->heads : 1;
    if (pr->kind == PP_ADAMW_GRAD_LINREG)
        gpu_linreg(va, pr, sc, state, trace, loss, R, rblock);
    else
        gpu_elementwise(va, pr, sc, state, trace, loss, chunk_steps, R, rblock);
    for (int64_t i = 0; i < n; i++) {
        theta[i] = state[i].theta;
        m[i] = state[i].m;
        v[i] = state[i].v;
        if (c)
            c[i] = va->kahan ? state[i].c : 0.0;
    }
    free(sc), free(state);
    return 0;
}

static int gpu_emulated(const pp_adamw_variant *va, const pp_adamw_problem *pr, const double *theta0, double *theta,
                        double *m, double *v, double *c, pp_adamw_trace *trace, int chunk_steps, char *errbuf,
                        size_t errlen)
{
    return gpu_emulated_r(va, pr, theta0, theta, m, v, c, trace, chunk_steps, NULL, errbuf, errlen);
}

// ---------------------------------------------------------------------------------------------
// Operations

static void adamw_threads_equal_cpu_every_knob(void **state)
{
    (void)state;
    int fails = adamw_case_all(gpu_emulated, "gpu decomposition on the cpu", 0);
    if (fails) {
        fprintf(stderr, "%d values differ\n", fails);
        pp_test_report_seed();
    }
    assert_int_equal(fails, 0);
}

// Splitting a run into chunks of loss indices carries the state: any split, same bits.
static void adamw_elem_thread_split_invariant(void **state)
{
    (void)state;
    for (int vi = 0; vi < ADAMW_N_VARIANTS; vi += 37) {
        pp_adamw_variant va = adamw_case_variant(vi);
        pp_adamw_problem pr = adamw_case_problem(PP_ADAMW_GRAD_QUADRATIC, 3, 20, 0, vi);
        pp_adamw_scalars sc[21];
        for (int t = 1; t <= 20; t++)
            sc[t] = pp_adamw_scalars_make(va.update, &pr.hyper, pp_adamw_lr(&pr, t), t);
        for (int64_t i = 0; i < pr.n; i++) {
            float th = (float)pp_round(va.param, pp_rand_normal(pr.seed, 3, (uint64_t)i), PP_RND_NE, 0);
            pp_adamw_elem whole = {th, 0, 0, 0}, split = whole;
            double lw[21] = {0}, ls[21] = {0};
            pp_adamw_snap_out none = {NULL, NULL, 0, pr.n};
            pp_adamw_elem_thread(&va, &pr, sc, i, 0, 20, &whole, (pp_adamw_loss_out){lw, 1, 0}, none);
            static const int cuts[] = {0, 1, 2, 7, 8, 19, 21};
            for (int k = 0; k + 1 < 7; k++)
                pp_adamw_elem_thread(&va, &pr, sc, i, cuts[k], cuts[k + 1] - 1, &split,
                                     (pp_adamw_loss_out){ls + cuts[k], 1, 0}, none);
            assert_memory_equal(&whole, &split, sizeof whole);
            assert_memory_equal(lw, ls, sizeof lw);
        }
    }
}

// Range diagnostics in the GPU's decomposition (one accumulator, threads in reverse order, the
// loss chunked) against the CPU emulation's, every counter (adamw_cases.h, adamw_case_ranges).
static void adamw_threads_ranges_equal_cpu(void **state)
{
    (void)state;
    int fails = adamw_case_ranges(gpu_emulated_r, gpu_emulated, "gpu decomposition on the cpu", 0);
    if (fails)
        pp_test_report_seed();
    assert_int_equal(fails, 0);
}

// The checks the launcher makes before any CUDA call: bad formats, bad problems, θ₀ not in P.
static void adamw_check_rejects_bad_input(void **state)
{
    (void)state;
    pp_adamw_variant va = adamw_case_variant(1);  // bf16 θ
    pp_adamw_problem pr = adamw_case_problem(PP_ADAMW_GRAD_SYNTHETIC, 2, 3, 0, 0);
    double th0[2] = {1.0, 1.0 + 0x1p-20};  // the second is not a bf16 value
    char msg[200];
    assert_int_equal(pp_adamw_check(&va, &pr, th0, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "theta0[1]"));
    th0[1] = 0.5;
    assert_int_equal(pp_adamw_check(&va, &pr, th0, msg, sizeof msg), 0);
    pr.snr = 0.0;
    assert_int_equal(pp_adamw_check(&va, &pr, th0, msg, sizeof msg), -1);
    pr.snr = 1.0;
    va.momentum = PP_FMT_E4M3;
    assert_int_equal(pp_adamw_check(&va, &pr, th0, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "formats"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(adamw_threads_equal_cpu_every_knob),
        cmocka_unit_test(adamw_elem_thread_split_invariant),
        cmocka_unit_test(adamw_check_rejects_bad_input),
        cmocka_unit_test(adamw_threads_ranges_equal_cpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
