// test_adamw_grads_input.c — gradients = "input": AdamW stepping on a given grads tensor [T, n]
// (a user's recorded gradients). Fed the synthetic source's own gradients, the emulation (both CPU
// paths, every variant flavour) and the reference give the synthetic run's bits exactly; a
// gradient that is not a value of the parameter format, or a missing tensor, is refused.
// Run from the repository root (tools/run-tests.sh does).
#include "test_util.h"

#include "adamw_ref.h"
#include "cpu/adamw.h"

// n not a multiple of the lanes: the vector path's tail runs too; T = 2·16 + 5: its gradient rows
// are read 16 steps at a time, two batches and a part
enum { N = 37, T = 37 };

static pp_adamw_problem synthetic(void)
{
    pp_adamw_problem pr;
    memset(&pr, 0, sizeof pr);
    pr.kind = PP_ADAMW_GRAD_SYNTHETIC;
    pr.n = N;
    pr.steps = T;
    pr.seed = pp_test_seed();
    pr.hyper = (pp_adamw_hyper){1e-2, 0.9, 0.999, 1e-8, 0.01};
    pr.schedule = PP_ADAMW_LR_COSINE;
    pr.warmup = 2;
    pr.grad_scale = 1e-3;
    pr.snr = 0.5;
    return pr;
}

// The synthetic problem's gradients as a grads tensor: row t − 1 is step t's.
static void synthetic_grads(const pp_adamw_problem *pr, pp_format_id P, double *g)
{
    for (int t = 1; t <= T; t++)
        for (int64_t i = 0; i < N; i++)
            g[(t - 1) * N + i] = pp_adamw_synth_grad(pr, P, t, i);
}

static void theta0_of(pp_format_id P, double *th)
{
    for (int64_t i = 0; i < N; i++)
        th[i] = pp_round(P, pp_rand_normal(7, 0, (uint64_t)i), PP_RND_NE, 0);
}

static void assert_same_bits(const double *a, const double *b, int64_t n, const char *what)
{
    for (int64_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof a[i])) {
            fprintf(stderr, "  %s[%lld]: %a vs %a (seed %llu)\n", what, (long long)i, a[i], b[i],
                    (unsigned long long)pp_test_seed());
            fail();
        }
}

static void emulation_equals_synthetic(void **state)
{
    (void)state;
    const pp_adamw_variant variants[] = {
        {.param = PP_FMT_FP32, .momentum = PP_FMT_FP32, .variance = PP_FMT_FP32, .compensation = PP_FMT_FP32,
         .update = PP_ADAMW_TORCH, .kernels = PP_ADAMW_KERNELS_CPU},
        {.param = PP_FMT_FP32, .momentum = PP_FMT_FP32, .variance = PP_FMT_FP32, .compensation = PP_FMT_FP32,
         .update = PP_ADAMW_TORCH, .kernels = PP_ADAMW_KERNELS_CUDA},
        {.param = PP_FMT_BF16, .momentum = PP_FMT_BF16, .variance = PP_FMT_BF16, .compensation = PP_FMT_BF16,
         .kahan = 1, .update = PP_ADAMW_ANYPRECISION, .kernels = PP_ADAMW_KERNELS_CUDA},
        {.param = PP_FMT_BF16, .momentum = PP_FMT_FP32, .variance = PP_FMT_FP32, .compensation = PP_FMT_BF16,
         .stochastic = 1, .update = PP_ADAMW_ANYPRECISION, .kernels = PP_ADAMW_KERNELS_CPU},
        {.param = PP_FMT_FP16, .momentum = PP_FMT_FP16, .variance = PP_FMT_FP32, .compensation = PP_FMT_BF16,
         .update = PP_ADAMW_TORCH, .kernels = PP_ADAMW_KERNELS_CPU},
    };
    for (size_t k = 0; k < sizeof variants / sizeof variants[0]; k++) {
        const pp_adamw_variant *va = &variants[k];
        pp_adamw_problem syn = synthetic(), in = syn;
        double g[T * N], th0[N], out[2][4][N];
        synthetic_grads(&syn, va->param, g);
        theta0_of(va->param, th0);
        in.kind = PP_ADAMW_GRAD_INPUT;
        in.grads = g;
        for (int path = 0; path < 2; path++) {
            const pp_adamw_problem *prs[2] = {&syn, &in};
            pp_adamw_trace tr[2];
            for (int s = 0; s < 2; s++) {
                pp_error err = {0};
                assert_int_equal(pp_adamw_cpu_path(va, prs[s], th0, out[s][0], out[s][1], out[s][2], out[s][3],
                                                   &tr[s], 2, path ? PP_ADAMW_PATH_SCALAR : PP_ADAMW_PATH_VECTOR,
                                                   &err), PP_OK);
            }
            for (int o = 0; o < 4; o++)
                assert_same_bits(out[0][o], out[1][o], N, o == 0 ? "theta" : o == 1 ? "m" : o == 2 ? "v" : "c");
            // the snapshots too; neither source defines a loss
            assert_int_equal(tr[0].n_snaps, tr[1].n_snaps);
            assert_same_bits(tr[0].snap, tr[1].snap, (int64_t)tr[0].n_snaps * N, "snapshot");
            assert_null(tr[1].loss);
            pp_adamw_trace_free(&tr[0]);
            pp_adamw_trace_free(&tr[1]);
        }
    }
}

// The exact trajectory (double-double with MPFR fallback, and MPFR throughout) on the given
// gradients is the synthetic one's, bounds included.
static void reference_equals_synthetic(void **state)
{
    (void)state;
    pp_adamw_problem syn = synthetic(), in = syn;
    double g[T * N], th0[N], out[2][3][N], bound[2][3];
    synthetic_grads(&syn, PP_FMT_BF16, g);
    theta0_of(PP_FMT_BF16, th0);
    in.kind = PP_ADAMW_GRAD_INPUT;
    in.grads = g;
    for (int prec = 0; prec <= 128; prec += 128) {
        const pp_adamw_problem *prs[2] = {&syn, &in};
        for (int s = 0; s < 2; s++) {
            pp_error err = {0};
            assert_int_equal(pp_adamw_ref(prs[s], PP_FMT_BF16, prec, th0, out[s][0], out[s][1], out[s][2], bound[s],
                                          NULL, 2, &err), PP_OK);
        }
        for (int o = 0; o < 3; o++)
            assert_same_bits(out[0][o], out[1][o], N, "reference");
        assert_same_bits(bound[0], bound[1], 3, "bound");
    }
}

// Every path reads the given tensor, not the synthetic draws of the problem's own seed: grads
// drawn from seed + 1 under seed give seed + 1's synthetic run. Through the emulation (both CPU
// paths) and every reference path: the double-double lanes (elements 0..31, PP_ADAMW_DD_LANES at
// a time), the scalar double-double element (the tail, 32..36), MPFR throughout (128 bits).
// (The sign-keeping set around the feedback loop, adamw_ref_lohner.c and adamw_ref_coupled.c,
// runs only for the θ-dependent sources, quadratic and linear regression.)
static void every_path_reads_the_given_grads(void **state)
{
    (void)state;
    pp_adamw_problem other = synthetic(), in = synthetic();
    other.seed = in.seed + 1;
    double g[T * N], th0[N], out[2][4][N], bound[2][3];
    synthetic_grads(&other, PP_FMT_BF16, g);
    theta0_of(PP_FMT_BF16, th0);
    in.kind = PP_ADAMW_GRAD_INPUT;
    in.grads = g;
    const pp_adamw_problem *prs[2] = {&other, &in};
    for (int prec = 0; prec <= 128; prec += 128) {
        for (int s = 0; s < 2; s++) {
            pp_error err = {0};
            assert_int_equal(pp_adamw_ref(prs[s], PP_FMT_BF16, prec, th0, out[s][0], out[s][1], out[s][2], bound[s],
                                          NULL, 2, &err), PP_OK);
        }
        for (int o = 0; o < 3; o++)
            assert_same_bits(out[0][o], out[1][o], N, "reference");
        assert_same_bits(bound[0], bound[1], 3, "bound");
    }
    pp_adamw_variant va = {.param = PP_FMT_BF16, .momentum = PP_FMT_BF16, .variance = PP_FMT_BF16,
                           .compensation = PP_FMT_BF16, .kahan = 1, .update = PP_ADAMW_TORCH,
                           .kernels = PP_ADAMW_KERNELS_CPU};
    for (int path = 0; path < 2; path++) {
        for (int s = 0; s < 2; s++) {
            pp_error err = {0};
            assert_int_equal(pp_adamw_cpu_path(&va, prs[s], th0, out[s][0], out[s][1], out[s][2], out[s][3], NULL, 2,
                                               path ? PP_ADAMW_PATH_SCALAR : PP_ADAMW_PATH_VECTOR, &err),
                             PP_OK);
        }
        for (int o = 0; o < 4; o++)
            assert_same_bits(out[0][o], out[1][o], N, "emulation");
    }
}

// A gradient that is not a value of the parameter format (a float32 value fed to a bf16 variant),
// a non-finite one, or no grads tensor at all: refused with the element named.
static void bad_grads_are_refused(void **state)
{
    (void)state;
    pp_adamw_problem pr = synthetic();
    pp_adamw_variant va = {.param = PP_FMT_BF16, .momentum = PP_FMT_FP32, .variance = PP_FMT_FP32,
                           .compensation = PP_FMT_BF16, .update = PP_ADAMW_TORCH, .kernels = PP_ADAMW_KERNELS_CPU};
    double g[T * N], th0[N], th[N], m[N], v[N], c[N];
    synthetic_grads(&pr, PP_FMT_BF16, g);
    theta0_of(PP_FMT_BF16, th0);
    pr.kind = PP_ADAMW_GRAD_INPUT;
    pp_error err = {0};
    assert_int_equal(pp_adamw_cpu(&va, &pr, th0, th, m, v, c, NULL, 1, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "without the grads tensor"));
    pr.grads = g;
    g[2 * N + 5] = 1.0 + 0x1p-20;  // a float32 value, not a bf16 one
    memset(&err, 0, sizeof err);
    assert_int_equal(pp_adamw_cpu(&va, &pr, th0, th, m, v, c, NULL, 1, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "grads[2, 5] = 1.0000009536743164 is not a finite bf16 value"));
    g[2 * N + 5] = INFINITY;
    memset(&err, 0, sizeof err);
    assert_int_equal(pp_adamw_cpu(&va, &pr, th0, th, m, v, c, NULL, 1, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "grads[2, 5] = inf"));
    g[2 * N + 5] = -0.0;  // a signed zero is a value: it runs
    assert_int_equal(pp_adamw_cpu(&va, &pr, th0, th, m, v, c, NULL, 1, &err), PP_OK);
    pr.grads = NULL;
    double bound[3];
    assert_int_equal(pp_adamw_ref(&pr, PP_FMT_BF16, 0, th0, th, m, v, bound, NULL, 1, &err), PP_ERR_INPUT);
}

int main(void)
{
    pp_test_report_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(emulation_equals_synthetic),
        cmocka_unit_test(reference_equals_synthetic),
        cmocka_unit_test(every_path_reads_the_given_grads),
        cmocka_unit_test(bad_grads_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
