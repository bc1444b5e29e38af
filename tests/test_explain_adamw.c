// test_explain_adamw.c — `precprobe explain` on AdamW (kernels/adamw.h "Exact sites"): with no
// site exact the element step is the emulation bit for bit on every variant of the cross product
// (vector and scalar paths alike); a state site (θ, m, v, comp) made exact keeps its state in
// binary64 (kernels/adamw_exact.h, hand-computed), an intermediate one its binary32 value;
// the known answer: bf16 plain AdamW's θ store carries the stall, and making it exact matches
// Kahan's recovery to within Kahan's own error. A given gradient (synthetic) is the reference's
// own input: the g bit leaves it the value of P (hand-computed m), and explain offers no g site.
#include "test_util.h"

#include <math.h>

#include "adamw_cases.h"
#include "adamw_exact.h"
#include "cpu/adamw.h"
#include "pipeline/explain.h"
#include "pipeline/run.h"
#include "sites.h"

// ---------------------------------------------------------------------------------------------
// The element step, by hand

// Step scalars of the hand-computed cases: β1 = β2 = 0 (m = g, v = g·g), dc = 1, ε = 0, so d = |g|
// and the increment is −step·g/|g|.
static pp_adamw_scalars hand_scalars(float neg_step)
{
    pp_adamw_scalars s;
    memset(&s, 0, sizeof s);
    s.beta1 = 0.0f, s.one_minus_beta1 = 1.0f, s.beta2 = 0.0f, s.one_minus_beta2 = 1.0f;
    s.dc = 1.0f, s.inv_dc = 1.0f, s.eps = 0.0f, s.neg_step = neg_step;
    return s;
}

// bf16 θ = 1 and an increment of −2^-12: below half an ulp of bf16 at 1 (2^-9 below 1), so the θ
// store stalls at 1; with theta exact θ is 1 − 2^-12, held in binary64 (kernels/adamw_exact.h).
static void adamw_theta_site_keeps_binary64(void **state)
{
    (void)state;
    pp_adamw_variant va = {.param = PP_FMT_BF16, .momentum = PP_FMT_FP32, .variance = PP_FMT_FP32,
                           .compensation = PP_FMT_BF16, .kernels = PP_ADAMW_KERNELS_CUDA};
    pp_adamw_scalars s = hand_scalars(-0x1p-12f);
    uint32_t rb[2] = {0, 0};
    pp_adamw_elem64 e = {1.0, 0.0, 0.0, 0.0};
    pp_adamw_elem_step64(&va, &s, &e, 1.0f, rb);
    assert_true(e.theta == 1.0);
    va.exact_sites = PP_SITE_BIT(PP_SITE_ADAMW_THETA);
    e = (pp_adamw_elem64){1.0, 0.0, 0.0, 0.0};
    pp_adamw_elem_step64(&va, &s, &e, 1.0f, rb);
    assert_true(e.theta == 1.0 - 0x1p-12);
    // fp32 θ and an increment of −2^-30: the binary32 sum 1 − 2^-30 rounds to 1 (ulp_32 below 1 is
    // 2^-24), the fp32 "store" is the identity — binary32 kept would stall too; binary64 moves
    va.param = PP_FMT_FP32;
    s = hand_scalars(-0x1p-30f);
    va.exact_sites = 0;
    e = (pp_adamw_elem64){1.0, 0.0, 0.0, 0.0};
    pp_adamw_elem_step64(&va, &s, &e, 1.0f, rb);
    assert_true(e.theta == 1.0);
    va.exact_sites = PP_SITE_BIT(PP_SITE_ADAMW_THETA);
    for (int t = 1; t <= 3; t++) {  // and it keeps moving: each step reads the binary64 θ
        pp_adamw_elem_step64(&va, &s, &e, 1.0f, rb);
        assert_true(e.theta == 1.0 - t * 0x1p-30);
    }
    // the CPU flavour (unfused addcdiv) alike
    va.kernels = PP_ADAMW_KERNELS_CPU;
    e = (pp_adamw_elem64){1.0, 0.0, 0.0, 0.0};
    pp_adamw_elem_step64(&va, &s, &e, 1.0f, rb);
    assert_true(e.theta == 1.0 - 0x1p-30);
    // the fused flavour (torch_kernels = cuda-fused: its own scalars, d = √v/dc + ε = |g|) alike
    va.kernels = PP_ADAMW_KERNELS_CUDA_FUSED;
    s.fused_dc = 1.0f, s.fused_neg_step = -0x1p-30f;
    va.exact_sites = 0;
    e = (pp_adamw_elem64){1.0, 0.0, 0.0, 0.0};
    pp_adamw_elem_step64(&va, &s, &e, 1.0f, rb);
    assert_true(e.theta == 1.0 && e.m == 1.0 && e.v == 1.0);
    va.exact_sites = PP_SITE_BIT(PP_SITE_ADAMW_THETA);
    for (int t = 1; t <= 3; t++) {
        pp_adamw_elem_step64(&va, &s, &e, 1.0f, rb);
        assert_true(e.theta == 1.0 - t * 0x1p-30);
    }
    // v exact keeps g·g in binary64
    va.exact_sites = PP_SITE_BIT(PP_SITE_ADAMW_V);
    e = (pp_adamw_elem64){1.0, 0.0, 0.0, 0.0};
    pp_adamw_elem_step64(&va, &s, &e, 1.0f + 0x1p-23f, rb);
    assert_true(e.v == (1.0 + 0x1p-23) * (1.0 + 0x1p-23));  // 1 + 2^-22 + 2^-46: not a binary32 value
    // Kahan, bf16 θ and c, θ exact: c = −2^-12, θ = 1 − 2^-12 exactly, the clone 2^-12, c = 0
    va = (pp_adamw_variant){.param = PP_FMT_BF16, .momentum = PP_FMT_FP32, .variance = PP_FMT_FP32,
                            .compensation = PP_FMT_BF16, .kahan = 1,
                            .exact_sites = PP_SITE_BIT(PP_SITE_ADAMW_THETA)};
    s = hand_scalars(-0x1p-12f);
    e = (pp_adamw_elem64){1.0, 0.0, 0.0, 0.0};
    pp_adamw_elem_step64(&va, &s, &e, 1.0f, rb);
    assert_true(e.theta == 1.0 - 0x1p-12 && e.c == 0.0);
    // comp exact alone: c = −2^-12 (binary64), θ = R_P(1 − 2^-12) = 1, the clone 0: c stays −2^-12
    va.exact_sites = PP_SITE_BIT(PP_SITE_ADAMW_COMP);
    e = (pp_adamw_elem64){1.0, 0.0, 0.0, -0x1p-40};  // a binary64 c from an earlier step
    pp_adamw_elem_step64(&va, &s, &e, 1.0f, rb);
    assert_true(e.theta == 1.0 && e.c == -0x1p-40 - 0x1p-12);
}

// m and v exact: their binary64 value where the binary32 op rounds. fp32 m, v; g = 1 + 2^-23:
// anyprecision's m = fma(g, 1 − β1, 0) needs 48 bits (g·0.1f exactly), v = w·g·g more than 53.
static void adamw_m_v_sites_keep_binary64(void **state)
{
    (void)state;
    pp_adamw_variant va = {.param = PP_FMT_FP32, .momentum = PP_FMT_FP32, .variance = PP_FMT_FP32,
                           .compensation = PP_FMT_FP32, .kernels = PP_ADAMW_KERNELS_CUDA};
    pp_adamw_scalars s = hand_scalars(-0x1p-12f);
    s.beta1 = 0.9f, s.one_minus_beta1 = 0.1f, s.beta2 = 0.999f, s.one_minus_beta2 = 0.001f;
    uint32_t rb[2] = {0, 0};
    float g = 1.0f + 0x1p-23f;
    double m64 = (double)g * 0.1f, v64 = fma((double)0.001f, (double)g * g, 0.0);
    assert_true(m64 != (double)(float)m64 && v64 != (double)(float)v64);  // neither is binary32
    pp_adamw_elem64 e = {1.0, 0.0, 0.0, 0.0};
    pp_adamw_elem_step64(&va, &s, &e, g, rb);
    assert_true(e.m == (double)fmaf(g, 0.1f, 0.0f) && e.v == (double)fmaf(0.001f, g * g, 0.0f));
    va.exact_sites = PP_SITE_BIT(PP_SITE_ADAMW_M) | PP_SITE_BIT(PP_SITE_ADAMW_V);
    e = (pp_adamw_elem64){1.0, 0.0, 0.0, 0.0};
    pp_adamw_elem_step64(&va, &s, &e, g, rb);
    assert_true(e.m == m64 && e.v == v64);
    // the next step reads them: m·β1 in binary64 (m64·0.9f, then + g·0.1f)
    double m2 = fma((double)g, 0.1f, m64 * 0.9f);
    pp_adamw_elem_step64(&va, &s, &e, g, rb);
    assert_true(e.m == m2);
    // NaN propagates through exact stores as through rounded ones
    e = (pp_adamw_elem64){1.0, 0.0, 0.0, 0.0};
    pp_adamw_elem_step64(&va, &s, &e, NAN, rb);
    assert_true(isnan(e.m) && isnan(e.v) && isnan(e.theta));
}

// The intermediate sites (g, denom, update) keep the binary32 value in kernels/adamw.h's step:
// bf16 m of g = 1 + 2^-10 rounds to 1 (bf16 steps by 2^-7 there); the denominator likewise.
static void adamw_intermediate_sites_keep_binary32(void **state)
{
    (void)state;
    pp_adamw_variant va = {.param = PP_FMT_BF16, .momentum = PP_FMT_BF16, .variance = PP_FMT_BF16,
                           .compensation = PP_FMT_BF16, .kernels = PP_ADAMW_KERNELS_CUDA};
    pp_adamw_scalars s = hand_scalars(-0x1p-12f);
    uint32_t rb[2] = {0, 0};
    // v = 1 (bf16 of (1 + 2^-10)²), d = √v = 1 either way; with update exact, θ = R_P(1 − 2^-12·m/d)
    pp_adamw_elem e = {1.0f, 0.0f, 0.0f, 0.0f};
    pp_adamw_elem_step(&va, &s, &e, 1.0f + 0x1p-10f, rb);
    assert_true(e.m == 1.0f && e.theta == 1.0f);
    va.exact_sites = PP_SITE_BIT(PP_SITE_ADAMW_UPDATE) | PP_SITE_BIT(PP_SITE_ADAMW_DENOM);
    e = (pp_adamw_elem){1.0f, 0.0f, 0.0f, 0.0f};
    pp_adamw_elem_step(&va, &s, &e, 1.0f + 0x1p-10f, rb);
    assert_true(e.m == 1.0f && e.theta == 1.0f);
}

// Without a state site exact, the binary64-state step is kernels/adamw.h's step bit for bit, on
// every variant of the cross product, from random states (values of their formats, some special).
static void adamw_step64_is_the_step_without_state_sites(void **state)
{
    (void)state;
    static const pp_site_mask masks[] = {
        0, PP_SITE_BIT(PP_SITE_ADAMW_G), PP_SITE_BIT(PP_SITE_ADAMW_DENOM), PP_SITE_BIT(PP_SITE_ADAMW_UPDATE),
        PP_SITE_BIT(PP_SITE_ADAMW_G) | PP_SITE_BIT(PP_SITE_ADAMW_DENOM) | PP_SITE_BIT(PP_SITE_ADAMW_UPDATE)};
    static const float special[] = {0.0f, -0.0f, 0x1p-140f, 1e30f, INFINITY, NAN};
    pp_test_rng rng = {pp_test_seed()};
    pp_adamw_hyper h = {1e-3, 0.9, 0.999, 1e-8, 0.01};
    int fails = 0;
    for (int vi = 0; vi < ADAMW_N_VARIANTS; vi++) {
        pp_adamw_variant va = adamw_case_variant(vi);
        for (int t = 1; t <= 40; t++) {
            pp_adamw_scalars s = pp_adamw_scalars_make(va.update, &h, 1e-3 * (t % 7 + 1), t);
            float g = (float)((pp_test_rng_unit(&rng) - 0.5) * 4.0);
            if (t % 10 == 0)
                g = special[t / 10 % 6];
            pp_adamw_elem e = {pp_adamw_store(va.param, (float)(pp_test_rng_unit(&rng) * 2.0 - 1.0)),
                               pp_adamw_store(va.momentum, (float)(pp_test_rng_unit(&rng) - 0.5)),
                               pp_adamw_store(va.variance, (float)pp_test_rng_unit(&rng)),
                               pp_adamw_store(va.compensation, (float)((pp_test_rng_unit(&rng) - 0.5) * 1e-3))};
            uint32_t rb[2] = {(uint32_t)pp_test_rng_next(&rng), (uint32_t)pp_test_rng_next(&rng)};
            va.exact_sites = masks[t % 5];
            pp_adamw_elem64 e64 = {e.theta, e.m, e.v, e.c};
            pp_adamw_elem_step(&va, &s, &e, g, rb);
            pp_adamw_elem_step64(&va, &s, &e64, g, rb);
            float got[4] = {(float)e64.theta, (float)e64.m, (float)e64.v, (float)e64.c};
            float want[4] = {e.theta, e.m, e.v, e.c};
            double held[4] = {e64.theta, e64.m, e64.v, e64.c};
            int same = 1;
            for (int k = 0; k < 4; k++)  // binary32 values (or NaN), the same bits (NaN: any NaN)
                same &= (isnan(held[k]) || (double)got[k] == held[k]) &&
                        (pp_f32_bits(got[k]) == pp_f32_bits(want[k]) || (isnan(got[k]) && isnan(want[k])));
            if (!same && fails++ < 10)
                fprintf(stderr, "  step64 differs: variant %d step %d mask %#llx g %a: theta %a vs %a, m %a vs %a, "
                                "v %a vs %a, c %a vs %a\n", vi, t, (unsigned long long)va.exact_sites, g, got[0],
                        want[0], got[1], want[1], got[2], want[2], got[3], want[3]);
        }
    }
    assert_int_equal(fails, 0);
}

// fp32 AdamW: the θ store is the identity, so binary32 kept changes nothing; binary64 kept does —
// the run's θ moves off the binary32 grid, and every state site exact brings θ no further from the
// exact AdamW than the variant as is (compared through the runs' own outputs).
static void adamw_fp32_theta_exact_differs_from_binary32(void **state)
{
    (void)state;
    enum { N = 64, T = 50 };
    pp_adamw_variant va = {.param = PP_FMT_FP32, .momentum = PP_FMT_FP32, .variance = PP_FMT_FP32,
                           .compensation = PP_FMT_FP32};
    pp_adamw_problem pr = adamw_case_problem(PP_ADAMW_GRAD_QUADRATIC, N, T, 0, 3);
    double th0[N], a[4][N], b[4][N];
    for (int i = 0; i < N; i++)
        th0[i] = (float)(0.5 + 0.01 * i);
    for (int path = 0; path < 2; path++) {
        va.exact_sites = 0;
        assert_int_equal(pp_adamw_cpu_path(&va, &pr, th0, a[0], a[1], a[2], a[3], NULL, 1, path, NULL), PP_OK);
        va.exact_sites = PP_SITE_BIT(PP_SITE_ADAMW_THETA);
        assert_int_equal(pp_adamw_cpu_path(&va, &pr, th0, b[0], b[1], b[2], b[3], NULL, 1, path, NULL), PP_OK);
        int off_grid = 0, differ = 0;
        for (int i = 0; i < N; i++) {
            off_grid += b[0][i] != (double)(float)b[0][i];
            differ += b[0][i] != a[0][i];
        }
        assert_true(off_grid > N / 2 && differ > N / 2);
    }
}

// Bits of sites that are not AdamW's change nothing, on every variant of the cross product and
// both CPU paths (the vector lanes call the same element step): the explain path with nothing of
// its own exact is the emulation.
static void adamw_foreign_sites_change_nothing(void **state)
{
    (void)state;
    enum { N = 40, T = 6 };
    pp_site_mask foreign = 0;
    for (int s = 0; s < PP_SITE_COUNT; s++)
        if (s < PP_SITE_ADAMW_FIRST || s >= PP_SITE_ADAMW_END)
            foreign |= PP_SITE_BIT(s);
    double th0[N], a[4][N], b[4][N];
    for (int vi = 0; vi < ADAMW_N_VARIANTS; vi += 7) {
        pp_adamw_variant va = adamw_case_variant(vi);
        pp_adamw_problem pr = adamw_case_problem(vi % 2 ? PP_ADAMW_GRAD_QUADRATIC : PP_ADAMW_GRAD_SYNTHETIC, N, T, 0,
                                                 vi);
        for (int i = 0; i < N; i++)
            th0[i] = pp_round(va.param, 0.5 + 0.01 * i, PP_RND_NE, 0);
        assert_int_equal(pp_adamw_cpu_path(&va, &pr, th0, a[0], a[1], a[2], a[3], NULL, 1, PP_ADAMW_PATH_SCALAR, NULL),
                         PP_OK);
        va.exact_sites = foreign;
        assert_int_equal(pp_adamw_cpu_path(&va, &pr, th0, b[0], b[1], b[2], b[3], NULL, 1, PP_ADAMW_PATH_VECTOR, NULL),
                         PP_OK);
        for (int t = 0; t < (va.kahan ? 4 : 3); t++)
            assert_memory_equal(a[t], b[t], sizeof a[t]);
        // and an AdamW mask is honoured alike by both paths
        va.exact_sites = PP_SITE_BIT(PP_SITE_ADAMW_THETA) | PP_SITE_BIT(PP_SITE_ADAMW_UPDATE);
        assert_int_equal(pp_adamw_cpu_path(&va, &pr, th0, a[0], a[1], a[2], a[3], NULL, 1, PP_ADAMW_PATH_SCALAR, NULL),
                         PP_OK);
        assert_int_equal(pp_adamw_cpu_path(&va, &pr, th0, b[0], b[1], b[2], b[3], NULL, 1, PP_ADAMW_PATH_VECTOR, NULL),
                         PP_OK);
        for (int t = 0; t < (va.kahan ? 4 : 3); t++)
            assert_memory_equal(a[t], b[t], sizeof a[t]);
    }
}

// A given gradient (synthetic here; input alike) is the value of P the reference steps on
// (reference/adamw_ref.c: pp_adamw_given_grad with P), so the g bit must leave it so: bf16 P, one
// step, m exact: m₁ = RN32(1 − β1)·RN_bf16(draw) exactly in binary64 — not RN32(1 − β1)·RN32(draw),
// the binary32 draw the reference never sees (what g exact fed m before, moving it away from the
// reference). And g alone changes nothing on either CPU path: it is no site of this source.
static void adamw_given_gradient_g_bit_is_the_references(void **state)
{
    (void)state;
    enum { N = 40 };
    pp_adamw_variant va = {.param = PP_FMT_BF16, .momentum = PP_FMT_BF16, .variance = PP_FMT_BF16,
                           .compensation = PP_FMT_BF16};
    pp_adamw_problem pr = adamw_case_problem(PP_ADAMW_GRAD_SYNTHETIC, N, 1, 0, 0);
    assert_true(pr.hyper.beta1 == 0.9);
    double th0[N], a[4][N], b[4][N];
    for (int i = 0; i < N; i++)
        th0[i] = pp_round(PP_FMT_BF16, 0.5 + 0.01 * i, PP_RND_NE, 0);
    double w = (double)(float)(1.0 - 0.9);  // the scalars' one_minus_beta1
    for (int path = 0; path < 2; path++) {
        pp_adamw_path pa = path ? PP_ADAMW_PATH_SCALAR : PP_ADAMW_PATH_VECTOR;
        va.exact_sites = PP_SITE_BIT(PP_SITE_ADAMW_G) | PP_SITE_BIT(PP_SITE_ADAMW_M);
        assert_int_equal(pp_adamw_cpu_path(&va, &pr, th0, a[0], a[1], a[2], a[3], NULL, 1, pa, NULL), PP_OK);
        int off = 0;
        for (int i = 0; i < N; i++) {
            double g16 = pp_adamw_synth_grad(&pr, PP_FMT_BF16, 1, i), g32 = pp_adamw_synth_grad(&pr, PP_FMT_FP32, 1, i);
            assert_true(a[1][i] == w * g16);
            off += w * g32 != w * g16;  // the binary32 draw's m: the value that moved away
        }
        assert_true(off > N / 2);
        // g alone, and g with m: the runs without the g bit, bit for bit
        va.exact_sites = PP_SITE_BIT(PP_SITE_ADAMW_M);
        assert_int_equal(pp_adamw_cpu_path(&va, &pr, th0, b[0], b[1], b[2], b[3], NULL, 1, pa, NULL), PP_OK);
        for (int t = 0; t < 3; t++)
            assert_memory_equal(a[t], b[t], sizeof a[t]);
        va.exact_sites = PP_SITE_BIT(PP_SITE_ADAMW_G);
        assert_int_equal(pp_adamw_cpu_path(&va, &pr, th0, a[0], a[1], a[2], a[3], NULL, 1, pa, NULL), PP_OK);
        va.exact_sites = 0;
        assert_int_equal(pp_adamw_cpu_path(&va, &pr, th0, b[0], b[1], b[2], b[3], NULL, 1, pa, NULL), PP_OK);
        for (int t = 0; t < 3; t++)
            assert_memory_equal(a[t], b[t], sizeof a[t]);
    }
}

// ---------------------------------------------------------------------------------------------
// The known answer

// adamw-small, smaller: lr small enough that most bf16 updates fall below half an ulp of θ.
static const char adamw_text[] =
    "[case]\nname = \"adamw-explain\"\nop = \"adamw\"\nseed = 11\n"
    "[op]\nn = 1024\nsteps = 300\nlr = 1e-4\ngradients = \"synthetic\"\ngrad_scale = 1e-3\nsnr = 1.0\n"
    "[inputs]\ndistribution = \"normal\"\nstd = 1.0\n"
    "[knobs]\nparam_format = \"bf16\"\nmomentum_format = \"bf16\"\nvariance_format = \"bf16\"\n"
    "compensation_format = \"bf16\"\n"
    "[variants.bf16-plain]\n[variants.bf16-kahan]\nkahan = \"on\"\n";

static const pp_run_opts cpu_opts = {.device = "cpu", .threads = 2};

static const pp_comparison *run_cmp(const pp_run_result *r, const char *variant, const char *tensor)
{
    for (int i = 0; i < r->n_comparisons; i++)
        if (!strcmp(r->comparisons[i].variant, variant) && !strcmp(r->comparisons[i].tensor, tensor) &&
            !strcmp(r->comparisons[i].against, "reference"))
            return &r->comparisons[i];
    return NULL;
}

// explain of c's variant bf16-plain on the CPU into r (freed by the caller); its result
static const pp_variant_result *explain_bf16_plain(const pp_case *c, pp_run_result *r)
{
    pp_error err = {0};
    pp_explain_opts e = {.variant = "bf16-plain"};
    int rc = pp_explain_case(c, &cpu_opts, &e, r, &err);
    if (rc)
        fprintf(stderr, "  %s\n", err.msg);
    assert_int_equal(rc, PP_OK);
    const pp_variant_result *vr = NULL;
    for (int v = 0; v < r->n_variants; v++)
        if (!strcmp(r->variants[v].name, "bf16-plain"))
            vr = &r->variants[v];
    assert_non_null(vr);
    return vr;
}

static void explain_adamw_theta_store_carries_the_stall(void **state)
{
    (void)state;
    pp_case c;
    pp_error err = {0};
    assert_int_equal(pp_case_parse(adamw_text, strlen(adamw_text), "adamw.toml", &c, &err), PP_OK);
    pp_run_result run, r;
    assert_int_equal(pp_run_case(&c, &cpu_opts, &run, &err), PP_OK);
    const pp_variant_result *vr = explain_bf16_plain(&c, &r);
    assert_int_equal(vr->n_explain, 3);  // theta, m, v
    const pp_explain_table *t = &vr->explain[0];
    assert_string_equal(t->tensor, "theta");
    // the nominal statistics are the run's own comparison, exactly
    const pp_comparison *plain = run_cmp(&run, "bf16-plain", "theta"), *kahan = run_cmp(&run, "bf16-kahan", "theta");
    assert_non_null(plain);
    assert_non_null(kahan);
    pp_explain_stats ns = pp_explain_stats_of(&plain->stats);
    assert_memory_equal(&ns, &t->nominal, sizeof ns);
    // the θ store carries the stall: first, and nearly all of the error
    assert_string_equal(t->sites[0].name, "theta");
    assert_true(t->sites[0].share > 0.9);
    for (int s = 1; s < t->n_sites; s++)
        assert_true(fabs(t->sites[s].share) < 0.05);
    // θ exact matches Kahan's recovery to within Kahan's own error: its greatest error is no larger
    // than Kahan's, and its mismatch fraction is Kahan's within one element in a hundred
    pp_explain_stats ks = pp_explain_stats_of(&kahan->stats);
    const pp_explain_stats *te = &t->sites[0].exact;
    assert_true(te->max_abs_error <= ks.max_abs_error);
    assert_true(fabs(te->mismatch_fraction - ks.mismatch_fraction) <= 0.01);
    assert_true(ks.mismatch_fraction < 0.5 * t->nominal.mismatch_fraction);  // Kahan does recover
    pp_run_result_free(&run);
    pp_run_result_free(&r);
    pp_case_free(&c);
}

// Synthetic gradients, smaller: the reference steps on the same bf16 gradients, so explain
// offers no g site, and with every site exact m and v are the reference's but for the binary32
// scalars (β1, β2 as RN32): their greatest error falls by over 1000×. With g "exact" as the
// binary32 draw, every site exact left the gradient's bf16 quantisation in m (a tenth of its
// nominal greatest error).
static const char synth_text[] =
    "[case]\nname = \"adamw-synth-explain\"\nop = \"adamw\"\nseed = 11\n"
    "[op]\nn = 256\nsteps = 100\nlr = 1e-4\ngradients = \"synthetic\"\ngrad_scale = 1e-3\nsnr = 1.0\n"
    "[inputs]\ndistribution = \"normal\"\nstd = 1.0\n"
    "[knobs]\nparam_format = \"bf16\"\nmomentum_format = \"bf16\"\nvariance_format = \"bf16\"\n"
    "[variants.bf16-plain]\n";

static void explain_adamw_given_gradient_is_no_site(void **state)
{
    (void)state;
    pp_case c;
    pp_error err = {0};
    assert_int_equal(pp_case_parse(synth_text, strlen(synth_text), "synth.toml", &c, &err), PP_OK);
    pp_run_result r;
    const pp_variant_result *vr = explain_bf16_plain(&c, &r);
    assert_int_equal(vr->n_explain, 3);  // theta, m, v
    for (int x = 0; x < vr->n_explain; x++) {
        const pp_explain_table *t = &vr->explain[x];
        assert_int_equal(t->n_sites, 5);  // theta, m, v, denom, update
        for (int s = 0; s < t->n_sites; s++)
            assert_string_not_equal(t->sites[s].name, "g");
        if (!strcmp(t->tensor, "m") || !strcmp(t->tensor, "v")) {
            assert_true(t->nominal.max_abs_error > 0.0);
            assert_true(t->all_exact.max_abs_error < 1e-3 * t->nominal.max_abs_error);
        }
    }
    pp_run_result_free(&r);
    pp_case_free(&c);
}

int main(void)
{
    pp_test_report_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(adamw_theta_site_keeps_binary64),
        cmocka_unit_test(adamw_m_v_sites_keep_binary64),
        cmocka_unit_test(adamw_intermediate_sites_keep_binary32),
        cmocka_unit_test(adamw_step64_is_the_step_without_state_sites),
        cmocka_unit_test(adamw_fp32_theta_exact_differs_from_binary32),
        cmocka_unit_test(adamw_foreign_sites_change_nothing),
        cmocka_unit_test(explain_adamw_theta_store_carries_the_stall),
        cmocka_unit_test(adamw_given_gradient_g_bit_is_the_references),
        cmocka_unit_test(explain_adamw_given_gradient_is_no_site),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
