// test_gemm_scaled_cuda.c — the scaled GEMM on the GPU (kernels/cuda/gemm_scaled_kernels.cu)
// against the CPU emulation, bit for bit, for every scaling and format it stores, ragged k, NaN
// and ±Inf inputs (two NaNs are equal whatever their sign and payload: x86 and CUDA make different
// default NaNs, as test_gemm_cuda.c says); a bad recipe is refused with 2. Skips with a message when there is no
// GPU (tests/test_gemm_scaled_threads.c runs the same launch plan through a CPU loop device).
// Range diagnostics (pp_gemm_scaled_cuda_ranges) equal the CPU emulation's counter for counter.
#include "test_util_cuda.h"

#include <math.h>

#include "cpu/gemm.h"
#include "cuda/gemm_scaled_cuda.h"
#include "ranges_compare.h"

static void fill(double *x, int64_t n, pp_test_rng *rng, int specials)
{
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = pp_test_rng_next(rng);
        double u = (pp_test_rng_unit(rng) * 2 - 1) * (r % 37 == 0 ? 4096.0 : 1.0);
        x[i] = (double)(float)u;
        if (specials && r % 101 < 5)
            x[i] = (double[]){0.0, -0.0, NAN, INFINITY, -INFINITY}[r % 101];
    }
}

// Every scaling and format it stores, on ragged shapes, with and without NaN/±Inf/±0: C from the
// GPU against the CPU emulation (2 workers), bit for bit but for NaN payloads. With ranges, both
// record range diagnostics (the GPU: block notes from the quantise threads, element notes from the
// product threads, the per-tensor scales from the host) and every gemm site's format and counters
// must be equal, C the same bits as without notes. Returns the quantised elements flushed to zero
// (so a caller can tell the comparison met some).
static int64_t scaled_cuda_sweep(int ranges)
{
    const struct { pp_scaling s; pp_format_id f; pp_gemm_mma mma; pp_mx_rule mx; } cfg[] = {
        {PP_SCALING_TENSOR, PP_FMT_E4M3, 0, 0}, {PP_SCALING_TENSOR, PP_FMT_E5M2, 0, 0}, {PP_SCALING_TENSOR, PP_FMT_E2M1, 0, 0},
        {PP_SCALING_MX, PP_FMT_E4M3, 0, 0},     {PP_SCALING_MX, PP_FMT_E5M2, 0, 0},     {PP_SCALING_MX, PP_FMT_E2M1, 0, 0},
        {PP_SCALING_NVFP4, PP_FMT_E2M1, 0, 0},  {PP_SCALING_DELAYED, PP_FMT_E4M3, 0, 0}, {PP_SCALING_DELAYED, PP_FMT_E5M2, 0, 0},
        // Hopper's FP8 accumulation (kernels/sm90_fp8_mma.h): truncations and promotions on the GPU
        {PP_SCALING_TENSOR, PP_FMT_E4M3, PP_GEMM_MMA_SM90_FP8, 0}, {PP_SCALING_TENSOR, PP_FMT_E5M2, PP_GEMM_MMA_SM90_FP8, 0},
        {PP_SCALING_TENSOR, PP_FMT_E4M3, PP_GEMM_MMA_SM90_FP8_FAST, 0},
        {PP_SCALING_DELAYED, PP_FMT_E4M3, PP_GEMM_MMA_SM90_FP8, 0},
        // TE's MXFP8 exponent rule (kernels/scaling.h, knob mx_scale = "te")
        {PP_SCALING_MX, PP_FMT_E4M3, 0, PP_MX_RULE_TE}, {PP_SCALING_MX, PP_FMT_E5M2, 0, PP_MX_RULE_TE},
        {PP_SCALING_MX, PP_FMT_E2M1, 0, PP_MX_RULE_TE},
    };
    const int64_t shapes[][4] = {{2, 33, 17, 45}, {1, 64, 64, 256}, {3, 5, 7, 1}};
    const double ha[2] = {3.0, 500.0}, hb[1] = {2.0};
    pp_test_rng rng = {pp_test_seed() ^ 0xC0DA};
    int64_t underflows = 0;
    for (int specials = 0; specials < 2; specials++)
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
            int64_t batch = shapes[si][0], m = shapes[si][1], n = shapes[si][2], k = shapes[si][3];
            double *a = malloc(sizeof(double) * (size_t)(batch * m * k)), *b = malloc(sizeof(double) * (size_t)(batch * k * n));
            double *c = malloc(sizeof(double) * (size_t)(batch * m * n)), *e = malloc(sizeof(double) * (size_t)(batch * m * n));
            double *c0 = malloc(sizeof(double) * (size_t)(batch * m * n));
            assert_true(a && b && c && e && c0);
            fill(a, batch * m * k, &rng, specials);
            fill(b, batch * k * n, &rng, specials);
            for (size_t ci = 0; ci < sizeof cfg / sizeof cfg[0]; ci++) {
                pp_gemm_variant v = {.format = cfg[ci].f, .scaling = cfg[ci].s, .mma = cfg[ci].mma,
                                     .mx_rule = cfg[ci].mx};
                pp_gemm_scalars sc = {0, 0, 0};
                assert_int_equal(pp_gemm_scalars_make(&v, k, &sc), 0);
                pp_delayed_recipe r = {.history = {ha, hb}, .len = {2, 1}, .algo = PP_AMAX_MAX};
                const pp_delayed_recipe *rp = v.scaling == PP_SCALING_DELAYED ? &r : NULL;
                pp_range_cell xc[PP_SITE_COUNT], xg[PP_SITE_COUNT];
                pp_ranges Rc, Rg;
                pp_ranges_init(&Rc, xc, 1), pp_ranges_init(&Rg, xg, 1);
                pp_ranges *rc_ = ranges ? &Rc : NULL, *rg_ = ranges ? &Rg : NULL;
                pp_error err = {0};
                char msg[400] = "";
                assert_int_equal(rp ? pp_gemm_delayed_cpu_ranges(&v, rp, sc.alpha_c, batch, m, n, k, a, b, e, 2, rc_,
                                                                 &err)
                                    : pp_gemm_scaled_cpu(&v, sc.alpha_c, batch, m, n, k, a, b, e, 2, rc_, &err), PP_OK);
                int rc = pp_gemm_scaled_cuda_ranges(&v, rp, sc.alpha_c, batch, m, n, k, a, b, c, rg_, msg, sizeof msg);
                if (rc)
                    fail_msg("%s", msg);
                int fails = 0;
                for (int64_t i = 0; i < batch * m * n && fails < 10; i++)
                    if (!pp_test_same_or_nan(c[i], e[i])) {
                        fprintf(stderr, "  %s %s %s: c[%lld] cuda %a, emulation %a\n", pp_scaling_name(v.scaling),
                                pp_format_get(v.format).name, pp_gemm_mma_name(v.mma), (long long)i, c[i], e[i]);
                        fails++;
                    }
                assert_int_equal(fails, 0);
                if (!ranges)
                    continue;
                assert_int_equal(pp_gemm_scaled_cuda(&v, rp, sc.alpha_c, batch, m, n, k, a, b, c0, msg, sizeof msg), 0);
                assert_memory_equal(c, c0, sizeof(double) * (size_t)(batch * m * n));  // notes change no bit
                char what[96];
                snprintf(what, sizeof what, "ranges %s %s shape %zu%s", pp_scaling_name(v.scaling),
                         pp_format_get(v.format).name, si, specials ? " with specials" : "");
                int diff = pp_test_ranges_differ(&Rg, &Rc, PP_SITE_GEMM_FIRST, PP_SITE_GEMM_END, what);
                if (diff)
                    pp_test_report_seed();
                assert_int_equal(diff, 0);
                assert_int_equal(xg[PP_SITE_GEMM_QUANT_A].count, batch * m * k);  // not vacuous
                assert_int_equal(xg[PP_SITE_GEMM_C].count, batch * m * n);
                assert_true(xg[PP_SITE_GEMM_BLOCK_SCALE_B].count > 0);
                underflows += xg[PP_SITE_GEMM_QUANT_A].underflow + xg[PP_SITE_GEMM_QUANT_B].underflow;
            }
            free(a), free(b), free(c), free(e), free(c0);
        }
    return underflows;
}

static void scaled_cuda_equals_emulation(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    scaled_cuda_sweep(0);
}

// The sweep above with range diagnostics on both devices: every counter equal, and some elements
// flushed to zero by the outliers' per-tensor scales (both devices counted them).
static void scaled_cuda_ranges_equal_cpu(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    assert_true(scaled_cuda_sweep(1) > 0);
}

// Refused before any CUDA call, so this runs without a GPU too: no scaling, or no history.
static void scaled_cuda_refuses_bad_requests(void **state)
{
    (void)state;
    double a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, c[4];
    char msg[200] = "";
    pp_gemm_variant none = {.format = PP_FMT_FP16};
    assert_int_equal(pp_gemm_scaled_cuda(&none, NULL, 1.0, 1, 2, 2, 2, a, b, c, msg, sizeof msg), 2);
    pp_gemm_variant delayed = {.format = PP_FMT_E4M3, .scaling = PP_SCALING_DELAYED};
    assert_int_equal(pp_gemm_scaled_cuda(&delayed, NULL, 1.0, 1, 2, 2, 2, a, b, c, msg, sizeof msg), 2);
    assert_non_null(strstr(msg, "amax history"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scaled_cuda_refuses_bad_requests),
        cmocka_unit_test(scaled_cuda_equals_emulation),
        cmocka_unit_test(scaled_cuda_ranges_equal_cpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
