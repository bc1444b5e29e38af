// test_explain_adamw.c — `precprobe explain` on AdamW (kernels/adamw.h "Exact sites"): with no
// site exact the element step is the emulation bit for bit on every variant of the cross product
// (vector and scalar paths alike); a site made exact skips exactly its own store (hand-computed);
// the known answer: bf16 plain AdamW's θ store carries the stall, and making it exact matches
// Kahan's recovery to within Kahan's own error.
#include "test_util.h"

#include <math.h>

#include "adamw_cases.h"
#include "cpu/adamw.h"
#include "pipeline/explain.h"
#include "pipeline/run.h"
#include "sites.h"

// ---------------------------------------------------------------------------------------------
// The element step, by hand

// bf16 θ = 1 and an update of −2^-12: below half an ulp of bf16 at 1 (2^-9 below 1), so the θ store
// stalls at 1; with theta exact θ keeps the binary32 1 − 2^-12.
static void adamw_theta_site_keeps_the_binary32_value(void **state)
{
    (void)state;
    pp_adamw_variant va = {.param = PP_FMT_BF16, .momentum = PP_FMT_FP32, .variance = PP_FMT_FP32,
                           .compensation = PP_FMT_BF16, .kernels = PP_ADAMW_KERNELS_CUDA};
    pp_adamw_scalars s;
    memset(&s, 0, sizeof s);
    s.beta1 = 0.0f, s.one_minus_beta1 = 1.0f, s.beta2 = 0.0f, s.one_minus_beta2 = 1.0f;
    s.dc = 1.0f, s.inv_dc = 1.0f, s.eps = 0.0f, s.neg_step = -0x1p-12f;
    uint32_t rb[2] = {0, 0};
    // g = 1: m = 1, v = 1, d = 1, the increment −step·m/d = −2^-12
    pp_adamw_elem e = {1.0f, 0.0f, 0.0f, 0.0f};
    pp_adamw_elem_step(&va, &s, &e, 1.0f, rb);
    assert_true(e.theta == 1.0f);
    va.exact_sites = PP_SITE_BIT(PP_SITE_ADAMW_THETA);
    e = (pp_adamw_elem){1.0f, 0.0f, 0.0f, 0.0f};
    pp_adamw_elem_step(&va, &s, &e, 1.0f, rb);
    assert_true(e.theta == 1.0f - 0x1p-12f);
    // update exact too: the increment in binary64, θ = RN_32(1 − 2^-12) = the same binary32 here
    va.exact_sites |= PP_SITE_BIT(PP_SITE_ADAMW_UPDATE);
    e = (pp_adamw_elem){1.0f, 0.0f, 0.0f, 0.0f};
    pp_adamw_elem_step(&va, &s, &e, 1.0f, rb);
    assert_true(e.theta == 1.0f - 0x1p-12f);
    // the momentum store: bf16 m of g = 1 + 2^-10 rounds to 1 (bf16 steps by 2^-7 there); m exact keeps it
    va.momentum = PP_FMT_BF16;
    va.exact_sites = 0;
    e = (pp_adamw_elem){1.0f, 0.0f, 0.0f, 0.0f};
    pp_adamw_elem_step(&va, &s, &e, 1.0f + 0x1p-10f, rb);
    assert_true(e.m == 1.0f);
    va.exact_sites = PP_SITE_BIT(PP_SITE_ADAMW_M);
    e = (pp_adamw_elem){1.0f, 0.0f, 0.0f, 0.0f};
    pp_adamw_elem_step(&va, &s, &e, 1.0f + 0x1p-10f, rb);
    assert_true(e.m == 1.0f + 0x1p-10f);
    // NaN propagates through an exact store as through a rounded one
    e = (pp_adamw_elem){1.0f, 0.0f, 0.0f, 0.0f};
    pp_adamw_elem_step(&va, &s, &e, NAN, rb);
    assert_true(isnan(e.m) && isnan(e.theta));
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

static void explain_adamw_theta_store_carries_the_stall(void **state)
{
    (void)state;
    pp_case c;
    pp_error err = {0};
    assert_int_equal(pp_case_parse(adamw_text, strlen(adamw_text), "adamw.toml", &c, &err), PP_OK);
    pp_run_result run, r;
    assert_int_equal(pp_run_case(&c, &cpu_opts, &run, &err), PP_OK);
    pp_explain_opts e = {"bf16-plain", NULL};
    int rc = pp_explain_case(&c, &cpu_opts, &e, &r, &err);
    if (rc)
        fprintf(stderr, "  %s\n", err.msg);
    assert_int_equal(rc, PP_OK);
    const pp_variant_result *vr = NULL;
    for (int v = 0; v < r.n_variants; v++)
        if (!strcmp(r.variants[v].name, "bf16-plain"))
            vr = &r.variants[v];
    assert_non_null(vr);
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

int main(void)
{
    pp_test_report_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(adamw_theta_site_keeps_the_binary32_value),
        cmocka_unit_test(adamw_foreign_sites_change_nothing),
        cmocka_unit_test(explain_adamw_theta_store_carries_the_stall),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
