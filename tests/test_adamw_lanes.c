// test_adamw_lanes.c — the CPU emulation's vector path (cpu/adamw_lanes.c, pp_adamw_cpu's default)
// against its scalar path (PP_ADAMW_PATH_SCALAR, kernels/adamw_thread.h's body one element at a
// time: the oracle) bit for bit (memcmp, NaN bits included): θ, m, v, c, the snapshots and the
// losses, for every knob combination of adamw_cases.h on both element-parallel sources with two
// lane groups and an odd tail (n = 2·16 + 5), a group alone (n = 16), and adamw_cases.h's sweep
// (n = 2100: three loss blocks, the last ragged; linear regression runs the scalar loop on both);
// the synthetic source over 37 steps (gradients drawn 32 steps at a time: a batch and a part),
// at gradient scales that underflow and overflow the formats, and at snr 0.7 and 3 (divided) and
// 0.25 and 2^20 (multiplied by the exact reciprocal);
// and the vector path's code at every x86-64 level (AVX-512, AVX2, baseline) named, not dispatched.
// Run: make build/rel/tests/test_adamw_lanes
#include "adamw_cases.h"
#include "cpu/adamw_lanes.h"

static int path_backend(pp_adamw_path path, const pp_adamw_variant *va, const pp_adamw_problem *pr,
                        const double *theta0, double *theta, double *m, double *v, double *c, pp_adamw_trace *trace,
                        char *errbuf, size_t errlen)
{
    pp_error err = {0};
    int rc = pp_adamw_cpu_path(va, pr, theta0, theta, m, v, c, trace, 2, path, &err);
    if (rc)
        snprintf(errbuf, errlen, "%s", err.msg);
    return rc;
}

// One backend per path (adamw_cases.h's backends take no context).
#define PATH_BACKEND(NAME, PATH)                                                                                  \
    static int NAME(const pp_adamw_variant *va, const pp_adamw_problem *pr, const double *theta0, double *theta, \
                    double *m, double *v, double *c, pp_adamw_trace *trace, int chunk_steps, char *errbuf,        \
                    size_t errlen)                                                                                \
    {                                                                                                             \
        (void)chunk_steps;                                                                                        \
        return path_backend(PATH, va, pr, theta0, theta, m, v, c, trace, errbuf, errlen);                         \
    }
PATH_BACKEND(scalar_backend, PP_ADAMW_PATH_SCALAR)
PATH_BACKEND(avx512_backend, PP_ADAMW_PATH_VECTOR_AVX512)
PATH_BACKEND(avx2_backend, PP_ADAMW_PATH_VECTOR_AVX2)
PATH_BACKEND(baseline_backend, PP_ADAMW_PATH_VECTOR_BASELINE)

// Every knob, both element-parallel sources, the shapes of the header comment: fn against
// pp_adamw_cpu (the vector loop at the widest level this CPU runs).
static int every_knob(adamw_backend_fn fn, const char *name)
{
    int fails = 0;
    for (int vi = 0; vi < ADAMW_N_VARIANTS; vi++) {
        static const int64_t ns[] = {2 * PP_ADAMW_LANES + 5, PP_ADAMW_LANES};
        for (int k = 0; k < 2; k++) {
            pp_adamw_problem s = adamw_case_problem(PP_ADAMW_GRAD_SYNTHETIC, ns[k], 9, 0, vi);
            pp_adamw_problem q = adamw_case_problem(PP_ADAMW_GRAD_QUADRATIC, ns[k], 9, 0, vi);
            fails += adamw_case_run(fn, name, vi, &s, 0, 0);
            fails += adamw_case_run(fn, name, vi, &q, 0, 0);
        }
    }
    // T = 37: the θ-independent sources' gradient batches (32 steps) whole and ragged
    for (int vi = 0; vi < ADAMW_N_VARIANTS; vi++) {
        pp_adamw_problem s = adamw_case_problem(PP_ADAMW_GRAD_SYNTHETIC, PP_ADAMW_LANES + 3, 37, 0, vi);
        fails += adamw_case_run(fn, name, vi, &s, 0, 0);
    }
    // gradients at the edges of the formats (the lanes' rounding, kernels/round_lanes.h, redoes
    // those lanes one by one): scale 1e-41 gives zeros and binary32/bf16 subnormals, 1e38 gives
    // ±Inf in some lanes of a batch and finite values in others
    for (int vi = 0; vi < ADAMW_N_VARIANTS; vi++)
        for (int e = 0; e < 2; e++) {
            pp_adamw_problem s = adamw_case_problem(PP_ADAMW_GRAD_SYNTHETIC, PP_ADAMW_LANES + 3, 5, 0, vi);
            s.grad_scale = e ? 1e38 : 1e-41;
            fails += adamw_case_run(fn, name, vi, &s, 0, 0);
        }
    // snr not a power of two (the lanes divide z by it) and powers of two other than 1 (they
    // multiply by the exact reciprocal): odd n, T not a multiple of the 16-step batches
    for (int vi = 0; vi < ADAMW_N_VARIANTS; vi++) {
        static const double snrs[] = {0.7, 3.0, 0.25, 0x1p20};
        for (int k = 0; k < 2; k++) {  // one divided, one multiplied per variant, in turn
            pp_adamw_problem s = adamw_case_problem(PP_ADAMW_GRAD_SYNTHETIC, 2 * PP_ADAMW_LANES + 5, 21, 0, vi);
            s.snr = snrs[(vi % 2) + 2 * k];
            fails += adamw_case_run(fn, name, vi, &s, 0, 0);
        }
    }
    fails += adamw_case_all(fn, name, 0);
    return fails;
}

static void adamw_lanes_equal_scalar_every_knob(void **state)
{
    (void)state;
    assert_int_equal(every_knob(scalar_backend, "scalar path"), 0);
}

// The vector loop's code at each x86-64 level, named (base/isa.h), against the widest level
// (pp_adamw_cpu) — which the test above holds to the scalar oracle — so the AVX2 and baseline
// builds run on a machine whose CPU dispatch would pick AVX-512. A level the CPU lacks runs the
// widest below it (said on stdout: then it is not this level that was tested).
static void adamw_lanes_every_isa_level_equal(void **state)
{
    (void)state;
    static const struct {
        adamw_backend_fn fn;
        pp_isa isa;
        const char *name;
    } lv[] = {{avx512_backend, PP_ISA_AVX512, "vector path, x86-64-v4"},
              {avx2_backend, PP_ISA_AVX2, "vector path, x86-64-v3"},
              {baseline_backend, PP_ISA_BASELINE, "vector path, baseline"}};
    for (size_t k = 0; k < sizeof lv / sizeof lv[0]; k++) {
        if (pp_isa_resolve(lv[k].isa) != lv[k].isa)
            printf("%s: this CPU lacks %s, runs %s\n", lv[k].name, pp_isa_name(lv[k].isa),
                   pp_isa_name(pp_isa_resolve(lv[k].isa)));
        assert_int_equal(every_knob(lv[k].fn, lv[k].name), 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(adamw_lanes_equal_scalar_every_knob),
        cmocka_unit_test(adamw_lanes_every_isa_level_equal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
