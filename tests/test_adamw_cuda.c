// test_adamw_cuda.c — the GPU AdamW (kernels/cuda/adamw_kernels.cu) against the CPU emulation,
// bit for bit (memcmp; two NaNs count as equal whatever their sign and payload, which IEEE leaves
// to the hardware), θ, m, v, c, the θ snapshots and the loss per step, for every knob
// combination and gradient source, ragged sizes and chunked losses (tests/adamw_cases.h). Skips
// with a message when there is no GPU. Range diagnostics (pp_adamw_cuda_ranges: atomic notes into
// one device accumulator) equal pp_adamw_cpu_ranges's counter for counter.
// Run: make build/rel/tests/test_adamw_cuda
#include "adamw_cases.h"
#include "test_util_cuda.h"

#include "cuda/adamw_cuda.h"
#include "cuda/format_cuda.h"

static void adamw_cuda_equals_cpu_every_knob(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    int fails = adamw_case_all(pp_adamw_cuda, "cuda", 1);
    if (fails) {
        fprintf(stderr, "%d values differ\n", fails);
        pp_test_report_seed();
    }
    assert_int_equal(fails, 0);
}

// Longer runs: 150 steps over 5,000 elements (five loss blocks, the last ragged), the loss in one
// chunk and in chunks of 7; a linear regression with 257 rows and 300 parameters.
static void adamw_cuda_longer_runs(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    int fails = 0;
    for (int vi = 1; vi < ADAMW_N_VARIANTS; vi += 53) {
        pp_adamw_problem q = adamw_case_problem(PP_ADAMW_GRAD_QUADRATIC, 5000, 150, 0, vi);
        pp_adamw_problem s = adamw_case_problem(PP_ADAMW_GRAD_SYNTHETIC, 5000, 150, 0, vi);
        pp_adamw_problem l = adamw_case_problem(PP_ADAMW_GRAD_LINREG, 300, 60, 257, vi);
        fails += adamw_case_run(pp_adamw_cuda, "cuda", vi, &q, 0, 1);
        fails += adamw_case_run(pp_adamw_cuda, "cuda", vi, &q, 7, 1);
        fails += adamw_case_run(pp_adamw_cuda, "cuda", vi, &s, 0, 1);
        fails += adamw_case_run(pp_adamw_cuda, "cuda", vi, &l, 0, 1);
    }
    assert_int_equal(fails, 0);
}

// Without a trace and without c, and the input errors (return 2 with pp_adamw_check's line,
// before any CUDA call: they hold with or without a GPU).
static void adamw_cuda_untraced_and_bad_input(void **state)
{
    (void)state;
    pp_adamw_variant va = adamw_case_variant(1);  // bf16 θ
    pp_adamw_problem pr = adamw_case_problem(PP_ADAMW_GRAD_QUADRATIC, 3, 4, 0, 0);
    double th0[3] = {1.0, 0.5, 1.0 + 0x1p-20}, out[3][3];
    char err[400] = "";
    assert_int_equal(pp_adamw_cuda(&va, &pr, th0, out[0], out[1], out[2], NULL, NULL, 0, err, sizeof err), 2);
    assert_non_null(strstr(err, "theta0[2]"));
    pr.steps = 0;
    th0[2] = -2.0;
    assert_int_equal(pp_adamw_cuda(&va, &pr, th0, out[0], out[1], out[2], NULL, NULL, 0, err, sizeof err), 2);
    PP_TEST_REQUIRE_GPU();
    pr.steps = 4;
    double want[3][3];
    assert_int_equal(pp_adamw_cpu(&va, &pr, th0, want[0], want[1], want[2], NULL, NULL, 1, NULL), PP_OK);
    int rc = pp_adamw_cuda(&va, &pr, th0, out[0], out[1], out[2], NULL, NULL, 0, err, sizeof err);
    if (rc)
        fprintf(stderr, "pp_adamw_cuda: %s\n", err);
    assert_int_equal(rc, 0);
    assert_memory_equal(out, want, sizeof want);
}

// Range diagnostics on the GPU (atomic notes into one device accumulator) against the CPU
// emulation's, every counter of every AdamW site and parameter block, the outputs the same bits
// as without notes (adamw_cases.h, adamw_case_ranges).
static void adamw_cuda_ranges_equal_cpu(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    int fails = adamw_case_ranges(pp_adamw_cuda_ranges, pp_adamw_cuda, "cuda", 1);
    if (fails)
        pp_test_report_seed();
    assert_int_equal(fails, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(adamw_cuda_equals_cpu_every_knob),
        cmocka_unit_test(adamw_cuda_longer_runs),
        cmocka_unit_test(adamw_cuda_untraced_and_bad_input),
        cmocka_unit_test(adamw_cuda_ranges_equal_cpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
