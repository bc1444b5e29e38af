// test_adamw_cpu.c — the AdamW element update and CPU loop: torch parity (golden values from
// torch 2.15), anyprecision vs torch within the derived bound, Kahan, stochastic rounding.
// Run: make build/rel/tests/test_adamw_cpu && build/rel/tests/test_adamw_cpu
#include <math.h>

#include "test_util.h"

#include "adamw_ref.h"
#include "cpu/adamw.h"

static const pp_adamw_hyper torch_default = {1e-3, 0.9, 0.999, 1e-8, 0.01};

// torch's CPU kernel flavour: the golden values and the bound below are torch on the CPU.
static pp_adamw_variant all_fp32(pp_adamw_update u)
{
    pp_adamw_variant v = {.param = PP_FMT_FP32, .momentum = PP_FMT_FP32, .variance = PP_FMT_FP32,
                          .compensation = PP_FMT_FP32, .update = u, .kernels = PP_ADAMW_KERNELS_CPU};
    return v;
}

// ---------------------------------------------------------------------------------------------
// Operations: torch parity

// Three steps of torch.optim.AdamW(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)
// on 5 fp32 elements, torch 2.15.0 CPU (tools/adamw_torch_parity.py prints the same values):
// 5 elements take torch's scalar (non-vectorised) loop, whose sqrt is correctly rounded.
static void elem_step_torch_matches_torch_golden(void **state)
{
    (void)state;
    const float th0[5] = {0.5f, -1.25f, 3.0f, 1e-3f, -7.5f};
    const float g[3][5] = {{0x1.99999ap-4f, -0x1.99999ap-3f, 0x1.333334p-2f, -0x1.99999ap-2f, 0x1.99999ap-5f},
                           {-0x1.333334p-2f, 0x1p-2f, 0x1.47ae14p-7f, 0x1p-1f, -0x1p+1f},
                           {0x1.666666p-1f, -0x1p-3f, -0x1.333334p-1f, 0x1.47ae14p-6f, 0x1.8p+0f}};
    const float want_th[5] = {0x1.ff080ep-2f, -0x1.3fbf1cp+0f, 0x1.7fd062p+1f, 0x1.bb6cb8p-10f, -0x1.dfffaep+2f};
    const float want_m[5] = {0x1.a29c7ap-5f, -0x1.9652bcp-8f, -0x1.1d14e4p-5f, 0x1.de69aep-7f, -0x1.a92a3ep-6f};
    const float want_v[5] = {0x1.3545b4p-11f, 0x1.eedaccp-14f, 0x1.d7c67ep-12f, 0x1.adbcf4p-12f, 0x1.99805ap-8f};
    pp_adamw_variant va = all_fp32(PP_ADAMW_TORCH);
    int bad = 0;
    for (int i = 0; i < 5; i++) {
        pp_adamw_elem e = {th0[i], 0, 0, 0};
        uint32_t rb[2] = {0, 0};
        for (int t = 1; t <= 3; t++) {
            pp_adamw_scalars s = pp_adamw_scalars_make(PP_ADAMW_TORCH, &torch_default, torch_default.lr, t);
            pp_adamw_elem_step(&va, &s, &e, g[t - 1][i], rb);
        }
        if (e.theta != want_th[i] || e.m != want_m[i] || e.v != want_v[i]) {
            fprintf(stderr, "elem_step_torch_matches_torch_golden: element %d\n", i);
            pp_test_print_double("theta", e.theta), pp_test_print_double("want", want_th[i]);
            pp_test_print_double("m", e.m), pp_test_print_double("want", want_m[i]);
            pp_test_print_double("v", e.v), pp_test_print_double("want", want_v[i]);
            bad++;
        }
    }
    assert_int_equal(bad, 0);
}

// ---------------------------------------------------------------------------------------------
// Operations: anyprecision (all fp32, no Kahan) against torch, one step from the same state
//
// The two differ in (a) the bias corrections: binary32 powf of RN32(β), 1 − x, the reciprocal
// and sqrt in binary32 (anyprecision) against binary64 (torch); (b) the momentum: RN(m·β1f) then
// fmaf(g, w, ·) against lerp's fmaf(w, RN(g − m), m), i.e. β1f against 1 − w. With u = 2^−24
// (binary32's unit roundoff) and β^t's relative error ≤ t·u/β (from |RN32(β) − β| ≤ u·β) plus
// powf's 1 ulp (2u):
//   ρ_bc(β) = β^t (t·u/β + 2u)·(1 + 2^−10)/bc + u          relative error of RN32(1 − powf)
//   ρ_s = ρ_bc(β1) + 4u   (reciprocal, RN32(lr), product; torch's RN32 of its binary64 quotient)
//   ρ_dc = ρ_bc(β2)/2 + 2u  (the sqrts)
//   |Δm| ≤ |m|·|β1f − (1 − w)| + u(|m·β1f| + w|g − m| + 2|m'|)
//   ρ_u = ρ_s + ρ_dc + 4u + 4u + |Δm|/|m'|  (d's two roundings each side; u's mul and div)
//   |θ_ap − θ_torch| ≤ ρ_u·|u| + ulp32(max |θ|)   (two roundings of θ + u_i into fp32)
// The (1 + 2^−10) and the 1.01 below cover second-order terms (t·u ≤ 2^−14 for t ≤ 1000).
static void elem_step_anyprecision_within_bias_correction_bound(void **state)
{
    (void)state;
    uint64_t seed = pp_test_seed(), iters = pp_test_iters(20000);
    const double u = 0x1p-24;
    pp_adamw_variant ap = all_fp32(PP_ADAMW_ANYPRECISION), to = all_fp32(PP_ADAMW_TORCH);
    pp_adamw_hyper h = torch_default;
    int bad = 0;
    for (uint64_t it = 0; it < iters && bad < 10; it++) {
        int t = 1 + (int)(pp_rand_uniform01(seed, 1, it) * 1000);
        float th = (float)pp_rand_normal(seed, 2, it), g = (float)pp_rand_normal(seed, 3, it);
        float m = (float)(0.3 * pp_rand_normal(seed, 4, it));
        float v = (float)(0.1 * pp_rand_uniform01(seed, 5, it));
        pp_adamw_elem ea = {th, m, v, 0}, et = {th, m, v, 0};
        uint32_t rb[2] = {0, 0};
        pp_adamw_scalars sa = pp_adamw_scalars_make(PP_ADAMW_ANYPRECISION, &h, h.lr, t);
        pp_adamw_scalars st = pp_adamw_scalars_make(PP_ADAMW_TORCH, &h, h.lr, t);
        pp_adamw_elem_step(&ap, &sa, &ea, g, rb);
        pp_adamw_elem_step(&to, &st, &et, g, rb);
        double b1 = pow(h.beta1, t), b2 = pow(h.beta2, t);
        double rbc1 = b1 * (t * u / h.beta1 + 2 * u) * (1 + 0x1p-10) / (1 - b1) + u;
        double rbc2 = b2 * (t * u / h.beta2 + 2 * u) * (1 + 0x1p-10) / (1 - b2) + u;
        double rs = rbc1 + 4 * u, rdc = rbc2 / 2 + 2 * u;
        double w = (float)(1 - h.beta1), b1f = (float)h.beta1, mp = fabs((double)et.m);
        double dm = fabs(m) * fabs(b1f - (1 - w)) + u * (fabs(m * b1f) + w * fabs((double)g - m) + 2 * mp);
        double upd = fabs((double)et.theta - th * (double)st.decay) + 2 * pp_ulp(PP_FMT_FP32, et.theta);
        double ru = rs + rdc + 8 * u + (mp > 0 ? dm / mp : 1);
        double bound_th = 1.01 * ru * upd + pp_ulp(PP_FMT_FP32, fmax(fabs(ea.theta), fabs(et.theta)));
        if (fabs((double)ea.m - et.m) > 1.01 * dm || fabs((double)ea.theta - et.theta) > bound_th) {
            fprintf(stderr, "elem_step_anyprecision_within_bias_correction_bound: iteration %llu, t = %d\n",
                    (unsigned long long)it, t);
            pp_test_print_double("theta anyprecision", ea.theta), pp_test_print_double("theta torch", et.theta);
            pp_test_print_double("bound", bound_th);
            pp_test_print_double("m anyprecision", ea.m), pp_test_print_double("m torch", et.m);
            bad++;
        }
    }
    if (bad)
        pp_test_report_seed();
    assert_int_equal(bad, 0);
}

// ---------------------------------------------------------------------------------------------
// Operations: Kahan never worse than no Kahan (synthetic, bf16 θ, compensation bf16 or fp32)

static double max_abs_err(const double *a, const double *b, int64_t n)
{
    double e = 0;
    for (int64_t i = 0; i < n; i++)
        e = fmax(e, fabs(a[i] - b[i]));
    return e;
}

static double mean_abs_err(const double *a, const double *b, int64_t n)
{
    double e = 0;
    for (int64_t i = 0; i < n; i++)
        e += fabs(a[i] - b[i]);
    return e / (double)n;
}

static void adamw_cpu_kahan_not_worse_than_plain(void **state)
{
    (void)state;
    pp_adamw_problem pr = {PP_ADAMW_GRAD_SYNTHETIC, 1024, 200, pp_test_seed(), {1e-4, 0.9, 0.999, 1e-8, 0.0},
                           PP_ADAMW_LR_CONSTANT, 0, 1.0, 1.0, 0, 0, NULL};
    int64_t n = pr.n;
    double *th0 = calloc((size_t)n, sizeof *th0), *ref[3], *out[4];
    for (int k = 0; k < 3; k++)
        ref[k] = calloc((size_t)n, sizeof(double));
    for (int k = 0; k < 4; k++)
        out[k] = calloc((size_t)n, sizeof(double));
    for (int64_t i = 0; i < n; i++)
        th0[i] = pp_round(PP_FMT_BF16, pp_rand_normal(pr.seed, 9, (uint64_t)i), PP_RND_NE, 0);
    double bnd[3];
    assert_int_equal(pp_adamw_ref(&pr, PP_FMT_BF16, 0, th0, ref[0], ref[1], ref[2], bnd, NULL, 2, NULL), PP_OK);
    double err_max[3], err_mean[3];
    pp_format_id comp[3] = {PP_FMT_BF16, PP_FMT_BF16, PP_FMT_FP32};
    for (int k = 0; k < 3; k++) {
        pp_adamw_variant va = {.param = PP_FMT_BF16, .momentum = PP_FMT_FP32, .variance = PP_FMT_BF16,
                               .compensation = comp[k], .kahan = k > 0, .update = PP_ADAMW_ANYPRECISION,
                               .kernels = PP_ADAMW_KERNELS_CUDA};
        assert_int_equal(pp_adamw_cpu(&va, &pr, th0, out[0], out[1], out[2], out[3], NULL, 2, NULL), PP_OK);
        err_max[k] = max_abs_err(out[0], ref[0], n);
        err_mean[k] = mean_abs_err(out[0], ref[0], n);
    }
    fprintf(stderr, "  theta error (max, mean): plain %.3g %.3g, kahan bf16 %.3g %.3g, kahan fp32 %.3g %.3g\n",
            err_max[0], err_mean[0], err_max[1], err_mean[1], err_max[2], err_mean[2]);
    assert_true(err_max[1] <= err_max[0] && err_mean[1] <= err_mean[0]);
    assert_true(err_max[2] <= err_max[0] && err_mean[2] <= err_mean[0]);
    free(th0);
    for (int k = 0; k < 3; k++)
        free(ref[k]);
    for (int k = 0; k < 4; k++)
        free(out[k]);
}

// ---------------------------------------------------------------------------------------------
// Stochastic rounding: always RD or RU, and unbiased
//
// For x with dropped fraction p (of a bf16 ulp), N draws give K rounds up ~ Binomial(N, p') with
// p' = floor(p·2^32)/2^32 = p here (16 dropped bits). The test demands |K − Np| ≤ 6σ + 1,
// σ = √(Np(1 − p)): a false failure has probability < 2·10^−9 per x (normal tail; the +1
// covers the discreteness), so < 10^−6 over the 256 values of x below.

static void adamw_store_param_sr_directed_and_unbiased(void **state)
{
    (void)state;
    uint64_t seed = pp_test_seed(), N = pp_test_iters(4000);
    int bad = 0;
    for (uint64_t k = 0; k < 256 && bad < 10; k++) {
        float x = (float)(pp_rand_normal(seed, 20, k) * 1e-3);
        double rd = pp_round(PP_FMT_BF16, x, PP_RND_TZ, 0), ulp = pp_ulp(PP_FMT_BF16, rd);
        double ru = rd + (x < 0 ? -ulp : ulp), p = fabs((double)x - rd) / ulp;
        uint64_t up = 0;
        for (uint64_t d = 0; d < N; d++) {
            uint32_t rb[2];
            pp_adamw_sr_bits(seed, k, (uint32_t)d, rb);
            double r = pp_adamw_store_param(PP_FMT_BF16, x, 1, rb[1]);
            if (r != rd && r != ru) {
                fprintf(stderr, "adamw_store_param_sr_directed_and_unbiased: not RD/RU\n");
                pp_test_print_double("x", x), pp_test_print_double("r", r);
                bad++;
                break;
            }
            up += r == ru && ru != rd;
        }
        double mu = (double)N * p, sd = sqrt((double)N * p * (1 - p));
        if (fabs((double)up - mu) > 6 * sd + 1) {
            fprintf(stderr, "adamw_store_param_sr_directed_and_unbiased: %llu ups of %llu, expected %.1f\n",
                    (unsigned long long)up, (unsigned long long)N, mu);
            pp_test_print_double("x", x);
            bad++;
        }
    }
    if (bad)
        pp_test_report_seed();
    assert_int_equal(bad, 0);
}

// ---------------------------------------------------------------------------------------------
// Loops: thread count invariance, every source

static void adamw_cpu_threads_invariant(void **state)
{
    (void)state;
    for (int kind = 0; kind < 3; kind++) {
        pp_adamw_problem pr = {(pp_adamw_grad_kind)kind, kind == 2 ? 16 : 3000, 30, pp_test_seed(),
                               {1e-3, 0.9, 0.999, 1e-8, 0.01}, PP_ADAMW_LR_COSINE, 5, 1.0, 2.0, 32, 0.1, NULL};
        int64_t n = pr.n;
        double *th0 = calloc((size_t)n, sizeof *th0), *a[4], *b[4];
        for (int k = 0; k < 4; k++)
            a[k] = calloc((size_t)n, sizeof(double)), b[k] = calloc((size_t)n, sizeof(double));
        for (int64_t i = 0; i < n; i++)
            th0[i] = pp_round(PP_FMT_BF16, pp_rand_normal(pr.seed, 9, (uint64_t)i), PP_RND_NE, 0);
        pp_adamw_variant va = {.param = PP_FMT_BF16, .momentum = PP_FMT_BF16, .variance = PP_FMT_BF16,
                               .compensation = PP_FMT_BF16, .kahan = 1, .stochastic = 1,
                               .update = PP_ADAMW_ANYPRECISION,
                               .kernels = PP_ADAMW_KERNELS_CUDA};
        pp_adamw_trace ta, tb;
        assert_int_equal(pp_adamw_cpu(&va, &pr, th0, a[0], a[1], a[2], a[3], &ta, 1, NULL), PP_OK);
        assert_int_equal(pp_adamw_cpu(&va, &pr, th0, b[0], b[1], b[2], b[3], &tb, 3, NULL), PP_OK);
        for (int k = 0; k < 4; k++)
            assert_memory_equal(a[k], b[k], (size_t)n * sizeof(double));
        assert_memory_equal(ta.snap, tb.snap, (size_t)(ta.n_snaps * n) * sizeof(double));
        if (kind)
            assert_memory_equal(ta.loss, tb.loss, (size_t)(pr.steps + 1) * sizeof(double));
        pp_adamw_trace_free(&ta), pp_adamw_trace_free(&tb);
        free(th0);
        for (int k = 0; k < 4; k++)
            free(a[k]), free(b[k]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(elem_step_torch_matches_torch_golden),
        cmocka_unit_test(elem_step_anyprecision_within_bias_correction_bound),
        cmocka_unit_test(adamw_cpu_kahan_not_worse_than_plain),
        cmocka_unit_test(adamw_store_param_sr_directed_and_unbiased),
        cmocka_unit_test(adamw_cpu_threads_invariant),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
