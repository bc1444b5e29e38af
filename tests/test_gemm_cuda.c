// test_gemm_cuda.c — the GPU GEMM (kernels/cuda/gemm_kernels.cu) against the CPU emulation, bit
// for bit (memcmp), for every format × accumulation × scale placement, on shapes with ragged
// edges and inputs with ±0, NaN, ±Inf and overflowing products; the cuBLAS path runs and returns
// values of the format (its difference from the emulation is measured by --cross-check, not
// asserted). Range diagnostics (pp_gemm_cuda_ranges: atomic notes into one device accumulator)
// equal the CPU emulation's counter for counter, and a hand-made fp16 overflow is counted where it
// happens. Skips with a message when there is no GPU.
#include "test_util_cuda.h"

#include <math.h>

#include "cpu/gemm.h"
#include "cuda/format_cuda.h"
#include "cuda/gemm_cuda.h"
#include "ranges_compare.h"

#define MAX_FAILS 10

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDull;
    x ^= x >> 33;
    x *= 0xC4CEB9FE1A85EC53ull;
    return x ^ (x >> 33);
}

// Values of f: mostly N(0, scale²)-like, with specials and huge values sprinkled in.
static void fill(double *x, int64_t n, pp_format_id f, double scale, uint64_t seed, int specials)
{
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = mix(seed ^ (uint64_t)i * 0x9E3779B97F4A7C15ull);
        double u = ((double)(r >> 11) * 0x1p-53 - 0.5) * 4.0 * scale;
        if (specials)
            switch (r % 97) {
            case 0: u = 0.0; break;
            case 1: u = -0.0; break;
            case 2: u = NAN; break;
            case 3: u = INFINITY; break;
            case 4: u = -INFINITY; break;
            case 5: u = pp_format_get(f).max_finite; break;
            default: break;
            }
        x[i] = pp_round(f, u, PP_RND_NE, 0);
    }
}

// Bit for bit, except that two NaNs are equal whatever their sign and payload: a NaN computed
// from Inf − Inf or 0·Inf carries the hardware's default NaN, which x86 and CUDA choose differently.
static void compare(const double *got, const double *want, int64_t n, const char *what)
{
    if (memcmp(got, want, (size_t)n * sizeof *got) == 0)
        return;
    int fails = 0;
    for (int64_t i = 0; i < n && fails < MAX_FAILS; i++) {
        if (memcmp(&got[i], &want[i], sizeof *got) == 0 || (isnan(got[i]) && isnan(want[i])))
            continue;
        fails++;
        fprintf(stderr, "FAIL cuda == cpu (%s): element %lld\n", what, (long long)i);
        pp_test_print_double("cuda", got[i]);
        pp_test_print_double("cpu", want[i]);
    }
    if (fails == 0)
        return;  // the bytes differed in NaNs alone
    pp_test_report_seed();
    fail();
}

static void gemm_cuda_equals_cpu_every_knob(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    const pp_format_id formats[] = {PP_FMT_FP16, PP_FMT_BF16, PP_FMT_FP32};
    const int64_t shapes[][4] = {{1, 1, 1, 1}, {2, 7, 5, 33}, {3, 17, 65, 128}, {1, 64, 64, 1000}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        int64_t B = shapes[si][0], M = shapes[si][1], N = shapes[si][2], K = shapes[si][3];
        double *a = malloc((size_t)(B * M * K) * sizeof *a), *b = malloc((size_t)(B * K * N) * sizeof *b);
        double *cg = malloc((size_t)(B * M * N) * sizeof *cg), *cc = malloc((size_t)(B * M * N) * sizeof *cc);
        for (int fi = 0; fi < 3; fi++)
            for (int acc = 0; acc < 2; acc++)
                for (int sc = 0; sc < 3; sc++)
                    for (int specials = 0; specials < 2; specials++) {
                        pp_gemm_variant v = {.format = formats[fi], .accum = (pp_gemm_accum)acc,
                                             .scale = (pp_gemm_scale)sc};
                        double scale = formats[fi] == PP_FMT_FP16 ? 30.0 : 3.0;  // fp16: sums overflow
                        fill(a, B * M * K, v.format, scale, pp_test_seed() + 11 * si + 1, specials);
                        fill(b, B * K * N, v.format, scale, pp_test_seed() + 11 * si + 2, specials);
                        char err[400] = "";
                        pp_error perr = {0};
                        assert_int_equal(pp_gemm_cpu(&v, B, M, N, K, a, b, cc, 2, &perr), PP_OK);
                        int rc = pp_gemm_cuda(&v, B, M, N, K, a, b, cg, err, sizeof err);
                        if (rc)
                            fprintf(stderr, "pp_gemm_cuda: %s\n", err);
                        assert_int_equal(rc, 0);
                        char what[128];
                        snprintf(what, sizeof what, "%s acc=%s scale=%s [%lld,%lld,%lld,%lld]%s",
                                 pp_format_get(v.format).name, pp_gemm_accum_name(v.accum),
                                 pp_gemm_scale_name(v.scale), (long long)B, (long long)M, (long long)N, (long long)K,
                                 specials ? " with specials" : "");
                        compare(cg, cc, B * M * N, what);
                    }
        free(a);
        free(b);
        free(cg);
        free(cc);
    }
}

static void gemm_cuda_given_alpha_and_bad_variants(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    double a[6], b[6], cg[4], cc[4];
    fill(a, 6, PP_FMT_BF16, 2.0, 5, 0);
    fill(b, 6, PP_FMT_BF16, 2.0, 6, 0);
    pp_gemm_variant v = {.format = PP_FMT_BF16, .accum = PP_GEMM_ACC_STORAGE, .scale = PP_GEMM_SCALE_PRE,
                         .alpha_given = 1, .alpha = 0.3};
    char err[400] = "";
    pp_error perr = {0};
    assert_int_equal(pp_gemm_cpu(&v, 1, 2, 2, 3, a, b, cc, 1, &perr), PP_OK);
    assert_int_equal(pp_gemm_cuda(&v, 1, 2, 2, 3, a, b, cg, err, sizeof err), 0);
    compare(cg, cc, 4, "bf16 storage pre alpha=0.3");
    v.alpha = -1.0;  // √α of a negative α: an input error on both backends
    assert_int_equal(pp_gemm_cuda(&v, 1, 2, 2, 3, a, b, cg, err, sizeof err), 2);
    v = (pp_gemm_variant){.format = PP_FMT_FP16, .accum = PP_GEMM_ACC_FP32, .scale = PP_GEMM_SCALE_POST};
    a[0] = 1.0 + 0x1p-20;  // not an fp16 value
    assert_int_equal(pp_gemm_cuda(&v, 1, 2, 2, 3, a, b, cg, err, sizeof err), 2);
    assert_non_null(strstr(err, "not a value of fp16"));
}

// cuBLAS: runs for every supported combination and gives values of the format; bf16 with
// storage accumulation has no cuBLAS compute type and is an input error.
static void gemm_cublas_runs(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    const int64_t B = 2, M = 33, N = 17, K = 256;
    double *a = malloc((size_t)(B * M * K) * sizeof *a), *b = malloc((size_t)(B * K * N) * sizeof *b);
    double *c = malloc((size_t)(B * M * N) * sizeof *c);
    const pp_format_id formats[] = {PP_FMT_FP16, PP_FMT_BF16, PP_FMT_FP32};
    for (int fi = 0; fi < 3; fi++)
        for (int acc = 0; acc < 2; acc++) {
            pp_gemm_variant v = {.format = formats[fi], .accum = (pp_gemm_accum)acc, .scale = PP_GEMM_SCALE_POST};
            fill(a, B * M * K, v.format, 1.0, 7, 0);
            fill(b, B * K * N, v.format, 1.0, 8, 0);
            char err[400] = "";
            int rc = pp_gemm_cublas(&v, B, M, N, K, a, b, c, err, sizeof err);
            if (v.format == PP_FMT_BF16 && v.accum == PP_GEMM_ACC_STORAGE) {
                assert_int_equal(rc, 2);
                continue;
            }
            if (rc)
                fprintf(stderr, "pp_gemm_cublas: %s\n", err);
            assert_int_equal(rc, 0);
            for (int64_t i = 0; i < B * M * N; i++)
                assert_true(pp_round(v.format, c[i], PP_RND_NE, 0) == c[i]);
        }
    free(a);
    free(b);
    free(c);
}

// Range diagnostics on the GPU against the CPU emulation's (2 workers, merged): every gemm site's
// format and counters bit for bit, every format × accumulation × scale placement, with and without
// NaN/±Inf/±0 and fp16 sums that overflow; C the same as without notes. Then the known answer of
// tests/test_ranges_gemm_adamw.c (fp16 storage accumulation, k = 4, products 20000: the chain
// overflows at its fourth step in row 0's three outputs, an overflow made inside the chain).
static void gemm_cuda_ranges_equal_cpu(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    const pp_format_id formats[] = {PP_FMT_FP16, PP_FMT_BF16, PP_FMT_FP32};
    const int64_t B = 2, M = 33, N = 300, K = 70;  // 19800 threads noting into one cell per site
    double *a = malloc((size_t)(B * M * K) * sizeof *a), *b = malloc((size_t)(B * K * N) * sizeof *b);
    double *cg = malloc((size_t)(B * M * N) * sizeof *cg), *cc = malloc((size_t)(B * M * N) * sizeof *cc);
    double *c0 = malloc((size_t)(B * M * N) * sizeof *c0);
    assert_true(a && b && cg && cc && c0);
    int64_t overflows = 0;
    for (int fi = 0; fi < 3; fi++)
        for (int acc = 0; acc < 2; acc++)
            for (int sc = 0; sc < 3; sc++)
                for (int specials = 0; specials < 2; specials++) {
                    pp_gemm_variant v = {.format = formats[fi], .accum = (pp_gemm_accum)acc,
                                         .scale = (pp_gemm_scale)sc, .scaling = PP_SCALING_NONE};
                    double scale = formats[fi] == PP_FMT_FP16 ? 300.0 : 3.0;  // fp16: products past 65504
                    fill(a, B * M * K, v.format, scale, pp_test_seed() + 101 + (uint64_t)fi, specials);
                    fill(b, B * K * N, v.format, scale, pp_test_seed() + 202 + (uint64_t)sc, specials);
                    pp_range_cell xc[PP_SITE_COUNT], xg[PP_SITE_COUNT];
                    pp_ranges Rc, Rg;
                    pp_ranges_init(&Rc, xc, 1), pp_ranges_init(&Rg, xg, 1);
                    char err[400] = "";
                    pp_error perr = {0};
                    assert_int_equal(pp_gemm_cpu_ranges(&v, B, M, N, K, a, b, cc, 2, &Rc, &perr), PP_OK);
                    int rc = pp_gemm_cuda_ranges(&v, B, M, N, K, a, b, cg, &Rg, err, sizeof err);
                    if (rc)
                        fprintf(stderr, "pp_gemm_cuda_ranges: %s\n", err);
                    assert_int_equal(rc, 0);
                    assert_int_equal(pp_gemm_cuda(&v, B, M, N, K, a, b, c0, err, sizeof err), 0);
                    char what[128];
                    snprintf(what, sizeof what, "ranges %s acc=%s scale=%s%s", pp_format_get(v.format).name,
                             pp_gemm_accum_name(v.accum), pp_gemm_scale_name(v.scale),
                             specials ? " with specials" : "");
                    compare(cg, cc, B * M * N, what);
                    assert_memory_equal(cg, c0, (size_t)(B * M * N) * sizeof *cg);  // notes change no bit
                    int diff = pp_test_ranges_differ(&Rg, &Rc, PP_SITE_GEMM_FIRST, PP_SITE_GEMM_END, what);
                    if (diff)
                        pp_test_report_seed();
                    assert_int_equal(diff, 0);
                    assert_int_equal(xg[PP_SITE_GEMM_C].count, B * M * N);  // not vacuous
                    overflows += xg[PP_SITE_GEMM_ACCUM].overflow;
                }
    assert_true(overflows > 0);  // some fp16 chain overflowed, and both devices counted it
    free(a), free(b), free(cg), free(cc), free(c0);

    double ha[2 * 4], hb[4 * 3], hc[2 * 3];
    for (int i = 0; i < 8; i++)
        ha[i] = i == 5 ? -200.0 : 200.0;
    for (int i = 0; i < 12; i++)
        hb[i] = 100.0;
    pp_gemm_variant st = {.format = PP_FMT_FP16, .accum = PP_GEMM_ACC_STORAGE, .scale = PP_GEMM_SCALE_POST};
    pp_range_cell x[PP_SITE_COUNT];
    pp_ranges R;
    pp_ranges_init(&R, x, 1);
    char err[400] = "";
    assert_int_equal(pp_gemm_cuda_ranges(&st, 1, 2, 3, 4, ha, hb, hc, &R, err, sizeof err), 0);
    assert_int_equal(x[PP_SITE_GEMM_ACCUM].overflow, 3);
    assert_int_equal(x[PP_SITE_GEMM_ACCUM].inf, 3);
    assert_int_equal(x[PP_SITE_GEMM_C].inf, 3);
    assert_int_equal(x[PP_SITE_GEMM_C].overflow, 0);  // passed on, not made here
    assert_true(x[PP_SITE_GEMM_C].min_nz == 20000.0);
    assert_int_equal(R.fmt[PP_SITE_GEMM_ACCUM], PP_FMT_FP16);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gemm_cuda_equals_cpu_every_knob),
        cmocka_unit_test(gemm_cuda_given_alpha_and_bad_variants),
        cmocka_unit_test(gemm_cublas_runs),
        cmocka_unit_test(gemm_cuda_ranges_equal_cpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
