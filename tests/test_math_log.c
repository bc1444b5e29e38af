// test_math_log.c — pp_logf (kernels/pp_math.h) against a correctly rounded oracle: special
// values, every binary32 near 1 and in the subnormal range's bottom, and all positive binary32
// on a stride scaled by PRECPROBE_TEST_MULTIPLIER. Run: build/rel/tests/test_math_log
#include "test_util.h"
#include "test_math_oracle.h"

// ---------------------------------------------------------------------------------------------
// Input generators

typedef struct range_gen {
    uint32_t lo_bits, step;
} range_gen;

static float gen_bits(uint64_t i, void *ctx)
{
    const range_gen *g = ctx;
    return pp_f32_from_bits(g->lo_bits + (uint32_t)(i * g->step));
}

static void check_range(float a, float b, uint32_t step, uint64_t *mis_total)
{
    uint32_t lo = pp_f32_bits(a), hi = pp_f32_bits(b);
    range_gen g = {lo, step};
    uint64_t slow = 0;
    int bad = 0;
    *mis_total += orc_check(ORC_LOG, (hi - lo) / step + 1, gen_bits, &g, &slow, &bad);
    if (bad) {
        fprintf(stderr, "  %d bad in [%a, %a] step %u\n", bad, a, b, step);
        fail();
    }
}

// ---------------------------------------------------------------------------------------------
// Tests

static void logf_special_values(void **state)
{
    (void)state;
    assert_true(pp_logf(NAN) != pp_logf(NAN));
    assert_true(pp_logf(-1.0f) != pp_logf(-1.0f));
    assert_true(pp_logf(-INFINITY) != pp_logf(-INFINITY));
    assert_true(isinf(pp_logf(0.0f)) && pp_logf(0.0f) < 0.0f);
    assert_true(isinf(pp_logf(-0.0f)) && pp_logf(-0.0f) < 0.0f);
    assert_true(isinf(pp_logf(INFINITY)) && pp_logf(INFINITY) > 0.0f);
    assert_true(pp_logf(1.0f) == 0.0f && !signbit(pp_logf(1.0f)));
    assert_true(pp_logf(0x1p-149f) == -103.278931f);
    assert_true(pp_logf(2.0f) == 0.693147182f);
}

static void logf_critical_ranges_exhaustive(void **state)
{
    (void)state;
    uint64_t mis = 0;
    check_range(0x1.fcp-1f, 0x1.04p0f, 1, &mis);    // around 1: ln x ≈ x − 1, relative accuracy
    check_range(0x1.6a0p0f, 0x1.6a1p0f, 1, &mis);   // √2, where the reduction switches binade
    check_range(0x1p-149f, 0x1p-140f, 1, &mis);     // subnormal inputs
    fprintf(stderr, "  logf critical ranges: %llu misrounded (each within 2^-25 ulp of a midpoint)\n",
            (unsigned long long)mis);
}

static void logf_full_range_strided(void **state)
{
    (void)state;
    // PRECPROBE_TEST_MULTIPLIER=1024 makes it exhaustive over every positive finite binary32
    uint64_t m = pp_test_iters(1024);
    uint32_t step = (uint32_t)(m >= 1024 * 1024 ? 1 : 1024 * 1024 / m);
    if (step > 1)
        step |= 1;
    uint64_t mis = 0;
    check_range(0x1p-149f, pp_f32_from_bits(0x7F7FFFFFu), step, &mis);
    fprintf(stderr, "  logf strided (step %u): %llu misrounded\n", step, (unsigned long long)mis);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(logf_special_values),
        cmocka_unit_test(logf_critical_ranges_exhaustive),
        cmocka_unit_test(logf_full_range_strided),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
