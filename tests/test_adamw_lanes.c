// test_adamw_lanes.c — the CPU emulation's vector path (cpu/adamw_lanes.c, pp_adamw_cpu's default)
// against its scalar path (PP_ADAMW_PATH_SCALAR, kernels/adamw_thread.h's body one element at a
// time: the oracle) bit for bit (memcmp, NaN bits included): θ, m, v, c, the snapshots and the
// losses, for every knob combination of adamw_cases.h on both element-parallel sources with two
// lane groups and an odd tail (n = 2·16 + 5), a group alone (n = 16), and adamw_cases.h's sweep
// (n = 2100: three loss blocks, the last ragged; linear regression runs the scalar loop on both);
// the synthetic source over 37 steps (gradients drawn 16 steps at a time: two batches and a part).
// Run: make build/rel/tests/test_adamw_lanes
#include "adamw_cases.h"
#include "cpu/adamw_lanes.h"

static int scalar_backend(const pp_adamw_variant *va, const pp_adamw_problem *pr, const double *theta0, double *theta,
                          double *m, double *v, double *c, pp_adamw_trace *trace, int chunk_steps, char *errbuf,
                          size_t errlen)
{
    (void)chunk_steps;
    pp_error err = {0};
    int rc = pp_adamw_cpu_path(va, pr, theta0, theta, m, v, c, trace, 2, PP_ADAMW_PATH_SCALAR, &err);
    if (rc)
        snprintf(errbuf, errlen, "%s", err.msg);
    return rc;
}

static void adamw_lanes_equal_scalar_every_knob(void **state)
{
    (void)state;
    int fails = 0;
    for (int vi = 0; vi < ADAMW_N_VARIANTS; vi++) {
        static const int64_t ns[] = {2 * PP_ADAMW_LANES + 5, PP_ADAMW_LANES};
        for (int k = 0; k < 2; k++) {
            pp_adamw_problem s = adamw_case_problem(PP_ADAMW_GRAD_SYNTHETIC, ns[k], 9, 0, vi);
            pp_adamw_problem q = adamw_case_problem(PP_ADAMW_GRAD_QUADRATIC, ns[k], 9, 0, vi);
            fails += adamw_case_run(scalar_backend, "scalar path", vi, &s, 0, 0);
            fails += adamw_case_run(scalar_backend, "scalar path", vi, &q, 0, 0);
        }
    }
    // T = 2·16 + 5: the θ-independent sources' gradient batches (16 steps) whole and ragged
    for (int vi = 0; vi < ADAMW_N_VARIANTS; vi++) {
        pp_adamw_problem s = adamw_case_problem(PP_ADAMW_GRAD_SYNTHETIC, PP_ADAMW_LANES + 3, 37, 0, vi);
        fails += adamw_case_run(scalar_backend, "scalar path", vi, &s, 0, 0);
    }
    fails += adamw_case_all(scalar_backend, "scalar path", 0);
    assert_int_equal(fails, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(adamw_lanes_equal_scalar_every_knob),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
