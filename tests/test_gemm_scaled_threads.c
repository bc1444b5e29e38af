// test_gemm_scaled_threads.c — the scaled GEMM's per-thread bodies (kernels/gemm_scaled_thread.h)
// run the way the GPU runs them (kernels/cuda/gemm_scaled_kernels.cu's launch plan: amax keys by
// atomic maximum, the scales on the host, one thread per (line, block), one per output element)
// through a deliberately adversarial CPU "loop device", against the CPU emulation
// (pp_gemm_scaled_cpu, pp_gemm_delayed_cpu: the same bodies in loops, several threads) bit for
// bit, for every scaling and format it stores, ragged k, NaN and ±Inf inputs.
// The loop device runs each launch's threads in reverse order and fills every buffer a launch
// writes with NaN garbage first, so a body reading another body's output of the same launch, or
// an element nobody wrote, shows up as a difference. tests/test_gemm_scaled_cuda.c checks a GPU.
// Range diagnostics: the loop device notes as the GPU does (the per-tensor scales on the host,
// each quantise and element thread its own notes, one accumulator), every counter equal to the
// CPU emulation's (per-worker accumulators, merged).
#include "test_util.h"

#include <math.h>

#include "cpu/gemm.h"
#include "gemm_scaled_thread.h"
#include "ranges_compare.h"

// ---------------------------------------------------------------------------------------------
// The loop device: kernels/cuda/gemm_scaled_kernels.cu's four steps, threads in reverse order

static double *garbage(int64_t n)
{
    double *p = malloc((size_t)(n ? n : 1) * sizeof *p);
    assert_non_null(p);
    memset(p, 0xFF, (size_t)(n ? n : 1) * sizeof *p);  // NaN: a read of an unwritten element shows
    return p;
}

static void loop_device(const pp_gemm_variant *v, const pp_delayed_recipe *r, double alpha_c, int64_t batch,
                        int64_t m, int64_t n, int64_t k, const double *a, const double *b, double *c, pp_ranges *R)
{
    pp_gemm_scaled_operand op[2] = {pp_gemm_scaled_operand_of(v->scaling, 0, batch, m, n, k),
                                    pp_gemm_scaled_operand_of(v->scaling, 1, batch, m, n, k)};
    const double *x[2] = {a, b};
    int64_t count[2] = {batch * m * k, batch * k * n};
    double *q[2], *xs[2], s[2], g[2];
    for (int o = 0; o < 2; o++) {
        // (1) amax: one thread per element, the keys meeting in reverse order
        uint64_t key = 0;
        for (int64_t i = count[o] - 1; i >= 0; i--) {
            uint64_t kk = pp_amax_key(x[o][i]);
            key = kk > key ? kk : key;
        }
        // (2) the host's scales
        double amax = pp_amax_of_key(key);
        double sd = v->scaling == PP_SCALING_DELAYED
                  ? pp_delayed_scale(v->format, pp_delayed_amax(r->history[o], r->len[o], r->algo), r->margin)
                  : 1.0;
        s[o] = pp_gemm_scaled_tensor_s(v, amax, sd);
        g[o] = pp_gemm_scaled_tensor_g(v, amax, s[o]);
        if (R && (v->scaling == PP_SCALING_TENSOR || v->scaling == PP_SCALING_DELAYED))
            pp_gemm_scaled_scale_notes(v, R, op[o].site + 2, amax, g[o], 1.0);
        // (3) quantise: one thread per (line, block), in reverse order
        int64_t units = op[o].batch * op[o].lines * op[o].nblk;
        q[o] = garbage(count[o]);
        xs[o] = garbage(units);
        for (int64_t u = units - 1; u >= 0; u--) {
            pp_gemm_scaled_quantise_block(v, &op[o], x[o], q[o], xs[o], g[o], s[o], u / op[o].nblk, u % op[o].nblk);
            pp_gemm_scaled_block_notes(v, &op[o], x[o], q[o], xs[o], g[o], s[o], u / op[o].nblk, u % op[o].nblk, R);
        }
    }
    double d = pp_gemm_scaled_d(v, g[0] * g[1]);
    // (4) one thread per output element, in reverse order
    for (int64_t t = batch * m * n - 1; t >= 0; t--)
        c[t] = R ? pp_gemm_scaled_element_notes(v, alpha_c, d, g[0] * g[1], &op[0], q[0], xs[0], &op[1], q[1], xs[1],
                                                t / (m * n), (t / n) % m, t % n, R)
                 : pp_gemm_scaled_element(v, alpha_c, d, &op[0], q[0], xs[0], &op[1], q[1], xs[1], t / (m * n),
                                          (t / n) % m, t % n);
    for (int o = 0; o < 2; o++)
        free(q[o]), free(xs[o]);
}

// ---------------------------------------------------------------------------------------------
// Inputs and the comparison

// binary32 values, N(0,1)-like times an outlier factor on a few, NaN/±Inf/±0 when specials.
static void fill(double *x, int64_t n, pp_test_rng *rng, int specials)
{
    for (int64_t i = 0; i < n; i++) {
        double u = (pp_test_rng_unit(rng) * 2 - 1) * 3.0;
        uint64_t r = pp_test_rng_next(rng);
        if (r % 37 == 0)
            u *= 4096.0;  // outliers: per-tensor scales flush the rest, block scales do not
        if (r % 53 == 0)
            u *= 0x1p-30;
        x[i] = (double)(float)u;
        if (specials && r % 101 < 5)
            x[i] = (double[]){0.0, -0.0, NAN, INFINITY, -INFINITY}[r % 101];
    }
}

static void same_bits(const char *what, const double *got, const double *want, int64_t n)
{
    int fails = 0;
    for (int64_t i = 0; i < n && fails < 10; i++)
        if (!pp_test_same_bits(got[i], want[i])) {
            fprintf(stderr, "  %s: c[%lld] loop device %a, CPU emulation %a\n", what, (long long)i, got[i], want[i]);
            fails++;
        }
    if (fails)
        pp_test_report_seed();
    assert_int_equal(fails, 0);
}

typedef struct scaled_case {
    pp_scaling scaling;
    pp_format_id format;
} scaled_case;

static const scaled_case cases[] = {
    {PP_SCALING_TENSOR, PP_FMT_E4M3}, {PP_SCALING_TENSOR, PP_FMT_E5M2}, {PP_SCALING_TENSOR, PP_FMT_E2M1},
    {PP_SCALING_MX, PP_FMT_E4M3},     {PP_SCALING_MX, PP_FMT_E5M2},     {PP_SCALING_MX, PP_FMT_E2M1},
    {PP_SCALING_NVFP4, PP_FMT_E2M1},  {PP_SCALING_DELAYED, PP_FMT_E4M3}, {PP_SCALING_DELAYED, PP_FMT_E5M2},
};

static void run_shapes(int specials, int ranges)
{
    pp_test_rng rng = {pp_test_seed() ^ (specials ? 0x5EC1A1u : 0x7EAD5u)};
    const int64_t shapes[][4] = {{2, 3, 5, 45}, {1, 4, 3, 70}, {3, 2, 2, 1}, {1, 5, 7, 32}, {2, 1, 9, 16}};
    const double hist_a[3] = {2.0, 9.0, 0.5}, hist_b[2] = {3.0, 1.0};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int64_t batch = shapes[s][0], m = shapes[s][1], n = shapes[s][2], k = shapes[s][3];
        double *a = garbage(batch * m * k), *b = garbage(batch * k * n), *c = garbage(batch * m * n),
               *want = garbage(batch * m * n);
        fill(a, batch * m * k, &rng, specials);
        fill(b, batch * k * n, &rng, specials);
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            pp_gemm_variant v = {.format = cases[i].format, .scaling = cases[i].scaling};
            pp_gemm_scalars sc = {0, 0, 0};
            assert_int_equal(pp_gemm_scalars_make(&v, k, &sc), 0);
            pp_error err = {0};
            for (int algo = 0; algo < 2; algo++) {
                pp_delayed_recipe r = {.history = {hist_a, hist_b}, .len = {3, 2},
                                       .algo = algo ? PP_AMAX_MOST_RECENT : PP_AMAX_MAX, .margin = algo};
                pp_range_cell cw[PP_SITE_COUNT], cg[PP_SITE_COUNT];
                pp_ranges Rw, Rg;
                pp_ranges_init(&Rw, cw, 1), pp_ranges_init(&Rg, cg, 1);
                if (v.scaling == PP_SCALING_DELAYED)
                    assert_int_equal(pp_gemm_delayed_cpu_ranges(&v, &r, sc.alpha_c, batch, m, n, k, a, b, want, 3,
                                                                ranges ? &Rw : NULL, &err), PP_OK);
                else if (algo)
                    continue;  // the recipe is tensor-delayed's alone
                else
                    assert_int_equal(pp_gemm_scaled_cpu(&v, sc.alpha_c, batch, m, n, k, a, b, want, 3,
                                                        ranges ? &Rw : NULL, &err), PP_OK);
                memset(c, 0xFF, (size_t)(batch * m * n) * sizeof *c);
                loop_device(&v, &r, sc.alpha_c, batch, m, n, k, a, b, c, ranges ? &Rg : NULL);
                char what[96];
                snprintf(what, sizeof what, "%s %s shape %zu algo %d", pp_scaling_name(v.scaling),
                         pp_format_get(v.format).name, s, algo);
                same_bits(what, c, want, batch * m * n);
                if (!ranges)
                    continue;
                int diff = pp_test_ranges_differ(&Rg, &Rw, PP_SITE_GEMM_FIRST, PP_SITE_GEMM_END, what);
                if (diff)
                    pp_test_report_seed();
                assert_int_equal(diff, 0);
                assert_int_equal(cw[PP_SITE_GEMM_C].count, batch * m * n);  // not vacuous
                assert_int_equal(cw[PP_SITE_GEMM_QUANT_A].count, batch * m * k);
                assert_true(cw[PP_SITE_GEMM_BLOCK_SCALE_A].count > 0);
            }
        }
        free(a), free(b), free(c), free(want);
    }
}

static void scaled_threads_equal_emulation(void **state)
{
    (void)state;
    run_shapes(0, 0);
}

static void scaled_threads_equal_emulation_with_specials(void **state)
{
    (void)state;
    run_shapes(1, 0);
}

// Range diagnostics in the GPU's decomposition (one accumulator, threads in reverse order) equal
// the CPU emulation's, counter for counter, with and without NaN/±Inf/±0 inputs; the outputs stay
// the same bits with notes on.
static void scaled_threads_ranges_equal_emulation(void **state)
{
    (void)state;
    run_shapes(0, 1);
    run_shapes(1, 1);
}

// The amax key's maximum is pp_amax_step's fold, whatever the order: finite values, a NaN, ±Inf.
static void amax_key_is_the_fold(void **state)
{
    (void)state;
    const double v[] = {1.5, -7.25, 0x1p-149, -0.0, 3.0};
    uint64_t key = 0;
    double fold = 0;
    for (int i = 0; i < 5; i++) {
        uint64_t kk = pp_amax_key(v[4 - i]);
        key = kk > key ? kk : key;
        fold = pp_amax_step(fold, v[i]);
    }
    assert_true(pp_amax_of_key(key) == fold && fold == 7.25);
    // a non-finite value's key is the NaN's, above every finite value's: the maximum reads NaN
    assert_true(pp_amax_key(-INFINITY) == pp_amax_key(NAN) && pp_amax_key(NAN) > pp_amax_key(0x1.fffffffffffffp+1023));
    assert_true(isnan(pp_amax_of_key(pp_amax_key(-INFINITY) > key ? pp_amax_key(-INFINITY) : key)));
    assert_true(pp_amax_of_key(0) == 0.0);
}

// The descale d = RN_32(X_a·X_b) overflowing (site scale), e4m3 tensor-current, m = n = 1, k = 3,
// α = 1: a = (448·2^64, 2^55, 0), b = (0, 2^55, 448·2^64). Both amaxes are 448·2^64, so s = 2^-64
// and X = 2^64 exactly, and d = RN_32(2^128) = +Inf (above FLT_MAX = 2^128 − 2^104). The operands
// quantise exactly to (448, 2^-9, 0) and (0, 2^-9, 448) (2^-9: e4m3's least subnormal), the fp32
// chain gives acc = 2^-18, and C = RN_32(Inf·2^-18) = +Inf against the truth 2^110 (a binary32
// value). Nothing before d overflowed, so the Inf is made at scale: e = (X_a·X_b)·acc = 2^110 finite,
// one overflow there; c passes it on. tensor-delayed with both histories [448·2^64] makes the same
// scales. The loop device (the GPU's decomposition) counts the same.
static void scaled_descale_overflow_counts_at_scale(void **state)
{
    (void)state;
    const double big = 448.0 * 0x1p64;
    const double a[3] = {big, 0x1p55, 0.0}, b[3] = {0.0, 0x1p55, big}, hist[1] = {big};
    const pp_scaling scalings[2] = {PP_SCALING_TENSOR, PP_SCALING_DELAYED};
    for (int i = 0; i < 2; i++) {
        pp_gemm_variant v = {.format = PP_FMT_E4M3, .scaling = scalings[i], .alpha_given = 1, .alpha = 1.0};
        pp_delayed_recipe r = {.history = {hist, hist}, .len = {1, 1}, .algo = PP_AMAX_MAX};
        pp_range_cell cw[PP_SITE_COUNT], cg[PP_SITE_COUNT];
        pp_ranges Rw, Rg;
        pp_ranges_init(&Rw, cw, 1), pp_ranges_init(&Rg, cg, 1);
        double c = 0.0, cl = 0.0;
        pp_error err = {0};
        if (i == 0)
            assert_int_equal(pp_gemm_scaled_cpu(&v, 1.0, 1, 1, 1, 3, a, b, &c, 1, &Rw, &err), PP_OK);
        else
            assert_int_equal(pp_gemm_delayed_cpu_ranges(&v, &r, 1.0, 1, 1, 1, 3, a, b, &c, 1, &Rw, &err), PP_OK);
        assert_true(isinf(c) && c > 0);
        assert_true(cw[PP_SITE_GEMM_BLOCK_SCALE_A].amax == 0x1p64 && cw[PP_SITE_GEMM_BLOCK_SCALE_B].amax == 0x1p64);
        assert_int_equal(cw[PP_SITE_GEMM_ACCUM].overflow + cw[PP_SITE_GEMM_ACCUM].inf, 0);
        assert_true(cw[PP_SITE_GEMM_ACCUM].amax == 0x1p-18);
        assert_int_equal(cw[PP_SITE_GEMM_SCALE].count, 1);
        assert_int_equal(cw[PP_SITE_GEMM_SCALE].inf, 1);
        assert_int_equal(cw[PP_SITE_GEMM_SCALE].overflow, 1);  // made here: d's rounding
        assert_int_equal(cw[PP_SITE_GEMM_C].inf, 1);
        assert_int_equal(cw[PP_SITE_GEMM_C].overflow, 0);      // passed on
        for (int s = PP_SITE_GEMM_FIRST; s < PP_SITE_GEMM_END; s++)
            if (s != PP_SITE_GEMM_SCALE)
                assert_int_equal(cw[s].overflow, 0);
        loop_device(&v, &r, 1.0, 1, 1, 1, 3, a, b, &cl, &Rg);
        assert_true(pp_test_same_bits(cl, c));
        assert_int_equal(pp_test_ranges_differ(&Rg, &Rw, PP_SITE_GEMM_FIRST, PP_SITE_GEMM_END, "descale overflow"), 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(amax_key_is_the_fold),
        cmocka_unit_test(scaled_threads_ranges_equal_emulation),
        cmocka_unit_test(scaled_descale_overflow_counts_at_scale),
        cmocka_unit_test(scaled_threads_equal_emulation),
        cmocka_unit_test(scaled_threads_equal_emulation_with_specials),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
