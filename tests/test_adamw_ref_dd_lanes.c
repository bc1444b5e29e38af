// test_adamw_ref_dd_lanes.c — the double-double AdamW reference's lanes (adamw_ref_dd_lanes.c)
// against the scalar element (pp_adamw_ref_dd_elem_, the oracle): every output bit for bit
// (memcmp of the element records: values, pairs, bounds, failure step/quantity/bound/scale, and
// the per-step binary64 θ), over weight decay, schedules, formats, near-zero v, huge gradients
// (the range hand-over) and a certification limit that lanes cross at different steps; at every
// x86-64 level's code (AVX-512, AVX2, baseline), named.
// Run: make build/rel/tests/test_adamw_ref_dd_lanes && build/rel/tests/test_adamw_ref_dd_lanes
#include <math.h>
#include <mpfr.h>
#include <string.h>

#include "test_util.h"

#include "adamw_ref.h"
#include "adamw_ref_dd.h"
#include "adamw_ref_dd_lanes.h"

typedef struct lanes_case {
    const char *name;
    int64_t n;
    int steps;
    double lr, wd, eps, grad_scale, max_rel;
    pp_adamw_schedule sched;
    pp_format_id P;
} lanes_case;

// The per-step scalars as double-doubles (any values serve: both paths read the same ones).
static void make_scalars(const pp_adamw_problem *pr, pp_adamw_dd_scal_ *sc)
{
    mpfr_t x, y;
    mpfr_inits2(200, x, y, (mpfr_ptr)0);
    for (int t = 1; t <= pr->steps; t++) {
        double lr = pp_adamw_lr(pr, t);
        mpfr_set_d(x, pr->hyper.beta1, MPFR_RNDN);
        mpfr_pow_ui(x, x, (unsigned long)t, MPFR_RNDN);
        mpfr_ui_sub(x, 1, x, MPFR_RNDN);
        mpfr_d_div(y, lr, x, MPFR_RNDN);
        sc[t].a[0] = mpfr_get_d(y, MPFR_RNDN), mpfr_sub_d(y, y, sc[t].a[0], MPFR_RNDN), sc[t].a[1] = mpfr_get_d(y, MPFR_RNDN);
        mpfr_set_d(x, pr->hyper.beta2, MPFR_RNDN);
        mpfr_pow_ui(x, x, (unsigned long)t, MPFR_RNDN);
        mpfr_ui_sub(x, 1, x, MPFR_RNDN);
        mpfr_rec_sqrt(y, x, MPFR_RNDN);
        sc[t].b[0] = mpfr_get_d(y, MPFR_RNDN), mpfr_sub_d(y, y, sc[t].b[0], MPFR_RNDN), sc[t].b[1] = mpfr_get_d(y, MPFR_RNDN);
        sc[t].dec[0] = 1.0 - lr * pr->hyper.weight_decay, sc[t].dec[1] = 0.0;
        sc[t].a_d = fabs(sc[t].a[0]) * (1 + 0x1p-52), sc[t].b_d = fabs(sc[t].b[0]) * (1 + 0x1p-52);
        sc[t].dec_d = fabs(sc[t].dec[0]) * (1 + 0x1p-52);
        sc[t].ra = sc[t].rb = sc[t].rdec = 0x1p-100;
    }
    mpfr_clears(x, y, (mpfr_ptr)0);
}

static int run_case(const lanes_case *c, pp_isa isa)
{
    enum { W = PP_ADAMW_DD_LANES };
    pp_adamw_problem pr = {PP_ADAMW_GRAD_SYNTHETIC, c->n, c->steps, pp_test_seed(), {c->lr, 0.9, 0.999, c->eps, c->wd},
                           c->sched, c->steps / 10, c->grad_scale, 0.5, 0, 0, NULL};
    int T = pr.steps, bad = 0, failed_lanes = 0;
    pp_adamw_dd_scal_ *sc = calloc((size_t)T + 1, sizeof *sc);
    double *row_l = calloc((size_t)W * (T + 1), sizeof *row_l), *row_s = calloc((size_t)T + 1, sizeof *row_s);
    make_scalars(&pr, sc);
    for (int64_t i0 = 0; i0 < pr.n; i0 += W) {
        double th0[W];
        pp_adamw_dd_elem_ lo[W], so;
        int ok[W];
        for (int l = 0; l < W; l++)
            th0[l] = pp_round(c->P, pp_rand_normal(pr.seed, 9, (uint64_t)(i0 + l)), PP_RND_NE, 0);
        memset(lo, 0xA5, sizeof lo);
        memset(row_l, 0, (size_t)W * (T + 1) * sizeof *row_l);
        pp_adamw_ref_dd_lanes_isa_(isa, &pr, c->P, sc, i0, th0, c->max_rel, row_l, lo, ok);
        for (int l = 0; l < W; l++) {
            memset(&so, 0x5A, sizeof so);
            memset(row_s, 0, (size_t)(T + 1) * sizeof *row_s);
            int oks = pp_adamw_ref_dd_elem_(&pr, c->P, sc, i0 + l, th0[l], c->max_rel, row_s, &so);
            failed_lanes += !oks;
            if ((ok[l] != oks || memcmp(&lo[l], &so, sizeof so) != 0 ||
                 memcmp(row_l + (int64_t)l * (T + 1), row_s, (size_t)(T + 1) * sizeof *row_s) != 0) &&
                bad++ < 10) {
                fprintf(stderr, "%s (%s): element %lld: lanes differ from the scalar path (ok %d vs %d, fail step %d vs %d)\n",
                        c->name, pp_isa_name(isa), (long long)(i0 + l), ok[l], oks, lo[l].fail_step, so.fail_step);
                pp_test_print_double("theta lanes", lo[l].theta), pp_test_print_double("theta scalar", so.theta);
            }
        }
    }
    free(sc), free(row_l), free(row_s);
    if (c->max_rel < 0x1p-60)
        assert_true(failed_lanes > 0);  // the limit case must exercise the failure bookkeeping
    return bad;
}

static const lanes_case cases[] = {
    {"weight decay, cosine", 64, 300, 1e-3, 0.05, 1e-8, 1.0, 0x1p-50, PP_ADAMW_LR_COSINE, PP_FMT_BF16},
    {"constant, no decay", 32, 200, 1e-4, 0.0, 1e-8, 1e-3, 0x1p-50, PP_ADAMW_LR_CONSTANT, PP_FMT_FP32},
    {"near-zero v", 16, 150, 1e-3, 0.0, 1e-8, 1e-30, 0x1p-50, PP_ADAMW_LR_WARMUP_LINEAR, PP_FMT_FP32},
    {"v near eps", 16, 150, 1e-3, 0.0, 1e-8, 1e-8, 0x1p-50, PP_ADAMW_LR_COSINE, PP_FMT_FP32},
    {"fp16, large eps", 16, 150, 1e-1, 0.0, 0.5, 1e-2, 0x1p-50, PP_ADAMW_LR_COSINE, PP_FMT_FP16},
    {"huge gradients: range hand-over", 16, 50, 1e-3, 0.1, 1e-8, 1e200, 0x1p-50, PP_ADAMW_LR_CONSTANT, PP_FMT_FP32},
    {"certification limit crossed", 24, 200, 1e-3, 0.05, 1e-8, 1.0, 0x1p-100, PP_ADAMW_LR_COSINE, PP_FMT_BF16},
};

static void dd_lanes_bit_identical_to_scalar(void **state)
{
    (void)state;
    int bad = 0;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        bad += run_case(&cases[k], PP_ISA_AUTO);
    if (bad)
        pp_test_report_seed();
    assert_int_equal(bad, 0);
}

// The lanes' code at each x86-64 level named (AVX-512, AVX2, baseline), not dispatched, so the
// narrower builds run on a machine that has AVX-512: each against the scalar oracle. A level
// this CPU lacks runs the widest below it (said on stdout).
static void dd_lanes_every_isa_level_bit_identical(void **state)
{
    (void)state;
    static const pp_isa lv[] = {PP_ISA_AVX512, PP_ISA_AVX2, PP_ISA_BASELINE};
    int bad = 0;
    for (size_t j = 0; j < sizeof lv / sizeof lv[0]; j++) {
        if (pp_isa_resolve(lv[j]) != lv[j])
            printf("this CPU lacks %s: runs %s\n", pp_isa_name(lv[j]), pp_isa_name(pp_isa_resolve(lv[j])));
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
            bad += run_case(&cases[k], lv[j]);
    }
    if (bad)
        pp_test_report_seed();
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dd_lanes_bit_identical_to_scalar),
        cmocka_unit_test(dd_lanes_every_isa_level_bit_identical),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
