// test_format_cuda.c — the GPU rounding kernels (kernels/cuda/format_kernels.cu) against the CPU,
// bit for bit (memcmp): every fp16 and bf16 pattern and 1M biased random binary64 in every format
// and mode, the named binary32 and binary64 → fp32 functions. Skips when there is no GPU.
#include "test_util_cuda.h"

#include <math.h>

#include "format.h"
#include "cuda/format_cuda.h"

#define MAX_FAILS 10

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDull;
    x ^= x >> 33;
    x *= 0xC4CEB9FE1A85EC53ull;
    return x ^ (x >> 33);
}

// A biased binary64: any bits, the 16-bit formats' ranges, subnormals, ties, near max.
static double biased(uint64_t i)
{
    uint64_t r = mix(i ^ pp_test_seed()), b;
    switch (r >> 61) {
    case 0: b = r; break;
    case 1: b = (uint64_t)(1023 - 30 + (r >> 20) % 50) << 52 | (r & 0xFFFFFFFFFFFFFull); break;
    case 2: b = (uint64_t)(1023 - 140 + (r >> 20) % 30) << 52 | (r & 0xFFFFFFFFFFFFFull); break;
    case 3: b = (uint64_t)(1023 - 20 + (r >> 20) % 40) << 52 | (r & 0xFFFFC0000000000ull) | 0x20000000000ull; break;
    case 4: b = (uint64_t)(1023 - 130 + (r >> 20) % 260) << 52 | (r & 0xFFFFFE0000000ull) | 0x10000000ull; break;
    case 5: b = 0x47EFFFFFE0000000ull + (r >> 40) - 0x800000ull; break;
    case 6: b = 0x40EFFC0000000000ull + (r >> 24) - 0x8000000000ull; break;
    default: b = r & 0x800FFFFFFFFFFFFFull; break;
    }
    return pp_f64_from_bits(b | (r << 60 & 0x8000000000000000ull));
}

static void compare(const void *got, const void *want, size_t n, size_t elem, const char *what,
                    pp_format_id f, pp_rounding m, const void *x, size_t xelem)
{
    if (memcmp(got, want, n * elem) == 0)
        return;
    int fails = 0;
    for (size_t i = 0; i < n && fails < MAX_FAILS; i++) {
        if (memcmp((const char *)got + i * elem, (const char *)want + i * elem, elem) == 0)
            continue;
        fails++;
        double xv, gv, wv;
        if (xelem == 8) memcpy(&xv, (const char *)x + i * 8, 8); else { float t; memcpy(&t, (const char *)x + i * 4, 4); xv = t; }
        if (elem == 8) { memcpy(&gv, (const char *)got + i * 8, 8); memcpy(&wv, (const char *)want + i * 8, 8); }
        else { float a, b; memcpy(&a, (const char *)got + i * 4, 4); memcpy(&b, (const char *)want + i * 4, 4); gv = a; wv = b; }
        fprintf(stderr, "FAIL %s: format %s, mode %d, index %zu\n", what, pp_format_get(f).name, (int)m, i);
        pp_test_print_double("x", xv);
        pp_test_print_double("gpu", gv);
        pp_test_print_double("cpu", wv);
    }
    fail_msg("%s: GPU and CPU bits differ", what);
}

// Runs every format and mode over x[0..n) (with rbits), GPU against CPU.
static void all_formats_modes(const double *x, const uint32_t *rb, size_t n, const char *what)
{
    double *gpu = malloc(n * sizeof *gpu), *cpu = malloc(n * sizeof *cpu);
    assert_non_null(gpu);
    assert_non_null(cpu);
    char err[256] = "";
    for (int f = 0; f < PP_FMT_COUNT; f++)
        for (int m = 0; m <= PP_RND_SR; m++) {
            for (size_t i = 0; i < n; i++)
                cpu[i] = pp_round((pp_format_id)f, x[i], (pp_rounding)m, rb[i]);
            int rc = pp_cuda_round_array((pp_format_id)f, (pp_rounding)m, x, rb, gpu, n, err, sizeof err);
            if (rc)
                fail_msg("pp_cuda_round_array: %d: %s", rc, err);
            compare(gpu, cpu, n, sizeof *gpu, what, (pp_format_id)f, (pp_rounding)m, x, 8);
        }
    free(gpu);
    free(cpu);
}

// ---------------------------------------------------------------------------------------------
// Exact inputs and deterministic/stochastic rounding on the GPU

// Every fp16 and bf16 pattern's value (and its midpoints to the next), in every format and mode.
static void cuda_round_all_fp16_bf16_patterns(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    size_t n = 4u << 16;
    double *x = malloc(n * sizeof *x);
    uint32_t *rb = malloc(n * sizeof *rb);
    assert_non_null(x);
    assert_non_null(rb);
    for (uint64_t b = 0; b < (1u << 16); b++) {
        double h = pp_decode(PP_FMT_FP16, b), h1 = pp_decode(PP_FMT_FP16, b + 1);
        double g = pp_decode(PP_FMT_BF16, b), g1 = pp_decode(PP_FMT_BF16, b + 1);
        x[4 * b] = h;
        x[4 * b + 1] = g;
        x[4 * b + 2] = (h + h1) / 2;  // a midpoint (NaN or Inf at the ends: also valid inputs)
        x[4 * b + 3] = (g + g1) / 2;
        for (int k = 0; k < 4; k++)
            rb[4 * b + (uint64_t)k] = (uint32_t)mix(4 * b + (uint64_t)k);
    }
    all_formats_modes(x, rb, n, "cuda_round_all_fp16_bf16_patterns");
    free(x);
    free(rb);
}

static void cuda_round_random_binary64(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    size_t n = (size_t)pp_test_iters(1000000);
    double *x = malloc(n * sizeof *x);
    uint32_t *rb = malloc(n * sizeof *rb);
    assert_non_null(x);
    assert_non_null(rb);
    for (size_t i = 0; i < n; i++) {
        x[i] = biased(i);
        rb[i] = (uint32_t)mix(i + 77);
    }
    all_formats_modes(x, rb, n, "cuda_round_random_binary64");
    free(x);
    free(rb);
}

// The named binary32 functions over a strided sweep of binary32, and binary64 → fp32.
static void cuda_round_named_functions(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    size_t n = 1u << 22;
    float *x = malloc(n * sizeof *x), *gpu = malloc(n * sizeof *gpu), *cpu = malloc(n * sizeof *cpu);
    double *xd = malloc(n * sizeof *xd);
    uint32_t *rb = malloc(n * sizeof *rb);
    assert_true(x && gpu && cpu && xd && rb);
    for (size_t i = 0; i < n; i++) {
        x[i] = pp_f32_from_bits((uint32_t)(i * 1021u) ^ (uint32_t)(mix(i) & 0x1F));  // all exponents
        xd[i] = biased(i + 12345);
        rb[i] = (uint32_t)mix(i + 99);
    }
    char err[256] = "";
    const pp_format_id fs[5] = {PP_FMT_TF32, PP_FMT_FP16, PP_FMT_BF16, PP_FMT_E4M3, PP_FMT_E5M2};
    for (int k = 0; k < 5; k++)
        for (int m = 0; m <= PP_RND_SR; m++) {
            for (size_t i = 0; i < n; i++)  // the CPU side: the generic function (equal by test)
                cpu[i] = pp_round_from_f32(fs[k], x[i], (pp_rounding)m, rb[i]);
            int rc = pp_cuda_round_f32_array(fs[k], (pp_rounding)m, x, rb, gpu, n, err, sizeof err);
            if (rc)
                fail_msg("pp_cuda_round_f32_array: %d: %s", rc, err);
            compare(gpu, cpu, n, sizeof *gpu, "cuda_round_named_f32", fs[k], (pp_rounding)m, x, 4);
        }
    for (int m = 0; m <= PP_RND_SR; m++) {
        for (size_t i = 0; i < n; i++)
            cpu[i] = m == 0 ? pp_round_fp32_ne(xd[i]) : m == 1 ? pp_round_fp32_tz(xd[i]) : pp_round_fp32_sr(xd[i], rb[i]);
        int rc = pp_cuda_round_fp32_array((pp_rounding)m, xd, rb, gpu, n, err, sizeof err);
        if (rc)
            fail_msg("pp_cuda_round_fp32_array: %d: %s", rc, err);
        compare(gpu, cpu, n, sizeof *gpu, "cuda_round_fp32_from_binary64", PP_FMT_FP32, (pp_rounding)m, xd, 8);
    }
    free(x);
    free(gpu);
    free(cpu);
    free(xd);
    free(rb);
}

// Special values: bad arguments are input errors (2), n = 0 does nothing, NULL rbits means 0.
static void cuda_round_arguments(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    char err[256] = "";
    double x[2] = {1 + 0x1p-11, -3.0}, y[2];
    assert_int_equal(pp_cuda_round_array(PP_FMT_COUNT, PP_RND_NE, x, NULL, y, 2, err, sizeof err), 2);
    assert_true(strstr(err, "unknown format") != NULL);
    assert_int_equal(pp_cuda_round_array(PP_FMT_FP16, (pp_rounding)7, x, NULL, y, 2, err, sizeof err), 2);
    assert_int_equal(pp_cuda_round_array(PP_FMT_FP16, PP_RND_NE, NULL, NULL, y, 2, err, sizeof err), 2);
    assert_int_equal(pp_cuda_round_array(PP_FMT_FP16, PP_RND_NE, x, NULL, y, 0, err, sizeof err), 0);
    assert_int_equal(pp_cuda_round_array(PP_FMT_FP16, PP_RND_SR, x, NULL, x, 2, err, sizeof err), 0);
    assert_true(x[0] == 1 + 0x1p-10 && x[1] == -3.0);  // in place; rbits 0: away when frac ≥ 2^-32
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        // special values
        cmocka_unit_test(cuda_round_arguments),
        // exact inputs, deterministic and stochastic rounding
        cmocka_unit_test(cuda_round_all_fp16_bf16_patterns),
        cmocka_unit_test(cuda_round_random_binary64),
        cmocka_unit_test(cuda_round_named_functions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
