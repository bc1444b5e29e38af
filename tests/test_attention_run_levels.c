// test_attention_run_levels.c — the CPU device's copies of the attention thread code
// (kernels/cpu/attention_run_level.h: attention_threads.h compiled again at x86-64-v3 and v4)
// give the bits of the baseline copy. Every case of tests/attention_cases.h (every knob of both
// kernels, CP worlds and accumulations, GQA, ragged shapes, NaN and ±Inf inputs, order seeds, FA3's
// FP8 forward under each scaling and Hopper's accumulation) runs through pp_attention_cpu at the
// widest level this CPU has (its copy and its lane hooks) and again, as the backend under test,
// through the baseline copy with the portable fmaf loops, through the baseline copy with the
// baseline hooks, and through the AVX2 copy; every output compared bit for bit. Explain's exact
// sites and the range notes run through the same copies: one flash and one unfused variant with
// every site exact, with ranges on, at each level, against the portable run.
// A level this CPU lacks runs the widest below it (pp_isa_resolve), so the test means most on an
// AVX-512 machine (the development machine and CI's) and still passes on any other.
#include "attention_cases.h"

#include "exact_sites.h"
#include <stddef.h>

#include "ranges.h"
#include "ranges_compare.h"
#include "sites.h"

typedef struct level_opts {
    const char *name;
    pp_attn_cpu_opts o;
} level_opts;

static const level_opts levels[] = {
    {"portable", {.portable = 1}},
    {"baseline", {.isa = PP_ISA_BASELINE}},
    {"avx2", {.isa = PP_ISA_AVX2}},
    {"avx512", {.isa = PP_ISA_AVX512}},
};

static int level_run(int li, const pp_attn_variant *v, const pp_attn_dims *dm, int backward, const double *q,
                     const double *k, const double *vv, const double *dout, double *out, double *lse, double *dq,
                     double *dk, double *dv, char *err, size_t n)
{
    pp_error e = {0};
    int rc = pp_attention_cpu_opts(v, dm, backward, q, k, vv, dout, out, lse, dq, dk, dv, 2, &levels[li].o, &e);
    if (rc)
        snprintf(err, n, "%s", e.msg);
    return rc;
}

#define LEVEL_RUN(i)                                                                                              \
    static int level_run_##i(const pp_attn_variant *v, const pp_attn_dims *dm, int backward, const double *q,     \
                             const double *k, const double *vv, const double *dout, double *out, double *lse,     \
                             double *dq, double *dk, double *dv, char *err, size_t n)                             \
    {                                                                                                             \
        return level_run(i, v, dm, backward, q, k, vv, dout, out, lse, dq, dk, dv, err, n);                       \
    }
LEVEL_RUN(0)
LEVEL_RUN(1)
LEVEL_RUN(2)
#undef LEVEL_RUN

// sample = 1: under PRECPROBE_TEST_MULTIPLIER < 1 (the sanitizer build) every 7th combination
static const attn_case_backend backends[] = {
    {"portable (baseline copy, fmaf loops)", level_run_0, 1},
    {"baseline copy, baseline hooks", level_run_1, 1},
    {"avx2 copy", level_run_2, 1},
};

static void levels_every_case(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++) {
        const attn_case_backend *be = &backends[i];
        int fails = attn_case_flash_every_knob(be);
        fails += attn_case_unfused_every_knob(be);
        fails += attn_case_sigma_and_longer(be);
        fails += attn_case_special_inputs(be);
        fails += attn_case_order_seeds(be);
        fails += attn_case_fp8_fa3(be);
        fails += attn_case_fp8_sm90(be);
        if (fails)
            fail_msg("%s: %d outputs differ from the widest level's", be->name, fails);
    }
}

// Every site exact and the range notes on, one flash (CP world 2, bf16) and one unfused (fp16)
// variant: each level's outputs and ranges equal the portable run's.
static void levels_exact_sites_and_ranges(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 1, .s_q = 24, .s_kv = 24, .h = 2, .h_kv = 1, .d = 20, .causal = 1};
    pp_attn_variant flash = {.format = PP_FMT_BF16, .kernel = PP_ATTN_FLASH, .block_n = 8, .cp_world = 2,
                             .cp_accum = PP_FMT_BF16, .cp_grad_accum = PP_FMT_BF16};
    pp_attn_variant unf = {.format = PP_FMT_FP16, .kernel = PP_ATTN_UNFUSED, .cp_world = 1};
    const pp_attn_variant *vs[] = {&flash, &unf};
    pp_site_mask all = 0;
    for (int s = PP_SITE_ATTN_FIRST; s < PP_SITE_ATTN_END; s++)
        all |= PP_SITE_BIT(s);
    pp_site_mask masks[] = {0, all};
    for (size_t vi = 0; vi < 2; vi++)
        for (size_t mi = 0; mi < 2; mi++) {
            pp_attn_variant v = *vs[vi];
            v.exact_sites = masks[mi];
            bufs B[2];
            pp_ranges R[2];
            pp_range_cell *cells[2];
            for (int s = 0; s < 2; s++) {
                bufs_init(&B[s], &dm, v.format, 1.0, 0x5eed + vi);
                cells[s] = malloc((size_t)PP_SITE_COUNT * (size_t)dm.h * sizeof(pp_range_cell));
                assert_non_null(cells[s]);
            }
            for (size_t li = 0; li < sizeof levels / sizeof levels[0]; li++) {
                for (int s = 0; s < 2; s++) {
                    if (s == 1 && li > 0)
                        continue;  // the portable run, once
                    pp_attn_cpu_opts o = levels[s == 1 ? 0 : li].o;
                    pp_ranges_init(&R[s], cells[s], dm.h);
                    o.ranges = &R[s];
                    pp_error e = {0};
                    int rc = pp_attention_cpu_opts(&v, &dm, 1, B[s].q, B[s].k, B[s].v, B[s].dout, B[s].o[0],
                                                   B[s].l[0], B[s].dq[0], B[s].dk[0], B[s].dv[0], 2, &o, &e);
                    if (rc)
                        fail_msg("%s: %s", levels[li].name, e.msg);
                }
                char what[96];
                snprintf(what, sizeof what, "%s, sites %s", vi ? "unfused" : "flash cp", mi ? "all exact" : "none");
                int fails = compare(levels[li].name, what, "out", B[0].o[0], B[1].o[0], B[0].nq) +
                            compare(levels[li].name, what, "lse", B[0].l[0], B[1].l[0], B[0].nl) +
                            compare(levels[li].name, what, "dq", B[0].dq[0], B[1].dq[0], B[0].nq) +
                            compare(levels[li].name, what, "dk", B[0].dk[0], B[1].dk[0], B[0].nkv) +
                            compare(levels[li].name, what, "dv", B[0].dv[0], B[1].dv[0], B[0].nkv);
                if (fails)
                    fail_msg("%s: %s: %d outputs differ from the portable run's", levels[li].name, what, fails);
                // not vacuous: every score was noted
                assert_true(pp_test_ranges_total(&R[0], PP_SITE_ATTN_FIRST, PP_SITE_ATTN_END,
                                                 offsetof(pp_range_cell, count)) > 0);
                if (pp_test_ranges_differ(&R[0], &R[1], PP_SITE_ATTN_FIRST, PP_SITE_ATTN_END, what))
                    fail_msg("%s: %s: the range notes differ from the portable run's", levels[li].name, what);
            }
            for (int s = 0; s < 2; s++) {
                bufs_free(&B[s]);
                free(cells[s]);
            }
        }
}

// Rows longer than the flash kernel's key tiles and the backward's dq blocks (128 keys at d 64 and
// 128), and one unfused shape (dq's groups of one-chain rows): the forward's row groups across tiles, the backward's groups of four rows over several
// lane runs, dq's row groups over several blocks with rows that end in different blocks; causal and
// not, GQA, CP world 2, d 64 and 128, with the range notes: every level against the widest, bit
// for bit.
static void levels_long_rows(void **state)
{
    (void)state;
    static const pp_attn_dims shapes[] = {
        {.b = 1, .s_q = 300, .s_kv = 300, .h = 2, .h_kv = 1, .d = 64, .causal = 1},
        {.b = 1, .s_q = 260, .s_kv = 260, .h = 1, .h_kv = 1, .d = 128, .causal = 1},
        {.b = 1, .s_q = 133, .s_kv = 270, .h = 2, .h_kv = 2, .d = 40, .causal = 0},
    };
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int world = 1; world <= 2; world++) {
            pp_attn_dims dm = shapes[si];
            if (world > 1 && (dm.s_q != dm.s_kv || dm.s_q % 4))
                continue;
            pp_attn_variant v = {.format = PP_FMT_BF16, .kernel = PP_ATTN_FLASH, .cp_world = world,
                                 .cp_accum = PP_FMT_FP32, .cp_grad_accum = PP_FMT_FP32};
            if (world == 1 && si == 1)  // the unfused kernel's dq groups: one chain a row
                v.kernel = PP_ATTN_UNFUSED, v.format = PP_FMT_FP16;
            bufs B;
            bufs_init(&B, &dm, v.format, 1.0, 0x10ad + si);
            pp_range_cell *cells[2];
            pp_ranges R[2];
            for (int s = 0; s < 2; s++) {
                cells[s] = malloc((size_t)PP_SITE_COUNT * (size_t)dm.h * sizeof(pp_range_cell));
                assert_non_null(cells[s]);
            }
            pp_ranges_init(&R[1], cells[1], dm.h);
            pp_attn_cpu_opts wide = {.ranges = &R[1]};
            pp_error e = {0};
            assert_int_equal(pp_attention_cpu_opts(&v, &dm, 1, B.q, B.k, B.v, B.dout, B.o[1], B.l[1], B.dq[1], B.dk[1],
                                                   B.dv[1], 2, &wide, &e), 0);
            for (size_t li = 0; li < 3; li++) {
                pp_ranges_init(&R[0], cells[0], dm.h);
                pp_attn_cpu_opts o = levels[li].o;
                o.ranges = &R[0];
                assert_int_equal(pp_attention_cpu_opts(&v, &dm, 1, B.q, B.k, B.v, B.dout, B.o[0], B.l[0], B.dq[0],
                                                       B.dk[0], B.dv[0], 2, &o, &e), 0);
                char what[96];
                snprintf(what, sizeof what, "shape %zu world %d", si, world);
                int fails = compare(levels[li].name, what, "out", B.o[0], B.o[1], B.nq) +
                            compare(levels[li].name, what, "lse", B.l[0], B.l[1], B.nl) +
                            compare(levels[li].name, what, "dq", B.dq[0], B.dq[1], B.nq) +
                            compare(levels[li].name, what, "dk", B.dk[0], B.dk[1], B.nkv) +
                            compare(levels[li].name, what, "dv", B.dv[0], B.dv[1], B.nkv);
                if (fails)
                    fail_msg("%s: %s: %d outputs differ from the widest level's", levels[li].name, what, fails);
                if (pp_test_ranges_differ(&R[0], &R[1], PP_SITE_ATTN_FIRST, PP_SITE_ATTN_END, what))
                    fail_msg("%s: %s: the range notes differ from the widest level's", levels[li].name, what);
            }
            for (int s = 0; s < 2; s++)
                free(cells[s]);
            bufs_free(&B);
        }
}

int main(void)
{
    (void)attn_case_cublas_sweep, (void)worst_units;  // the cuBLAS sweep is the GPU tests'
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(levels_every_case),
        cmocka_unit_test(levels_exact_sites_and_ranges),
        cmocka_unit_test(levels_long_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
