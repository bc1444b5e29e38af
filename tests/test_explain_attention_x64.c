// test_explain_attention_x64.c — explain's exact attention sites kept in binary64
// (kernels/attention.h "Exact sites"): the store sites' binary64 shadows (out, lse, dq/dk/dv, the
// CP partials and accumulators) reach the outputs and the readers downstream (the backward, the
// CP merge), and FA3 fp8's softmax scalars computed in binary64, on hand-computed rows; the
// nominal path is untouched (mask 0 gives the kernel's bits, checked by every other test).
// Run: build/rel/tests/test_explain_attention_x64
#include "test_util.h"

#include "attn_run.h"

#include <math.h>

#include "cpu/attention.h"
#include "exact_sites.h"
#include "sites.h"

// ---------------------------------------------------------------------------------------------
// Helpers

static pp_attn_variant flash_variant(pp_format_id f)
{
    pp_attn_variant v;
    memset(&v, 0, sizeof v);
    v.format = f;
    v.kernel = PP_ATTN_FLASH;
    v.cp_accum = v.cp_grad_accum = f;
    return v;
}

static int64_t n_differing(const double *a, const double *b, int64_t n)
{
    int64_t c = 0;
    for (int64_t i = 0; i < n; i++)
        c += memcmp(&a[i], &b[i], sizeof a[i]) != 0;
    return c;
}

// How many of the n values are not binary32 values (a binary64 shadow reached the output).
static int64_t n_not_binary32(const double *a, int64_t n)
{
    int64_t c = 0;
    for (int64_t i = 0; i < n; i++)
        c += (double)(float)a[i] != a[i];
    return c;
}

// ---------------------------------------------------------------------------------------------
// Store sites in binary64

// One query, three keys, q = 0: every score is 0, p = 1, l = 3 (partials 2 and 1), o = 1 + 2 + 2
// = 5 exactly (fp32 P·V chain), inv = RN_32(1/3) = 1/3 + 2^−26·(2/3). Nominal fp32 out =
// RN_32(5·inv) = 0x1.aaaaacp0; out exact keeps 5·inv = 1.666666716337204 (exact in binary64),
// nearer the true 5/3 (4.97e-8 vs 7.95e-8 off). lse = 0·α + log 3: nominal RN_32(log 3), exact
// the binary64 log 3.
static void x64_flash_out_and_lse_by_hand(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 1, .s_q = 1, .s_kv = 3, .h = 1, .h_kv = 1, .d = 1, .causal = 0};
    attn_run R;
    attn_run_init(&R, dm);
    R.v[0] = 1, R.v[1] = 2, R.v[2] = 2;
    pp_attn_variant v = flash_variant(PP_FMT_FP32);
    double inv = (double)(1.0f / 3.0f), truth = 5.0 / 3.0;
    attn_run_go(&R, v, 0, 0);
    double nom_out = R.out[0], nom_lse = R.lse[0];
    assert_true(nom_out == (double)(float)(5.0 * inv));
    assert_true(nom_out == 0x1.aaaaacp0);
    assert_true(nom_lse == (double)(float)log(3.0));
    attn_run_go(&R, v, PP_SITE_BIT(PP_SITE_ATTN_OUT) | PP_SITE_BIT(PP_SITE_ATTN_LSE), 0);
    assert_true(R.out[0] == 5.0 * inv);  // 5·inv: exact in binary64
    assert_true(R.out[0] != nom_out);
    assert_true(fabs(R.out[0] - truth) < fabs(nom_out - truth));
    assert_true(R.lse[0] == log(3.0));
    assert_true(fabs(R.lse[0] - log(3.0)) < fabs(nom_lse - log(3.0)));
    attn_run_free(&R);
}

// The backward reads the binary64 out (D = dO·O) and lse (P's exponent): on fp32 flash, out or
// lse exact leaves the binary32 buffers the backward would otherwise read at their nominal bits
// (RN_32 of the binary64 value), so a gradient that moves shows the shadow was read. dq, dk, dv
// exact reach the outputs as binary64 values; on bf16 dk exact moves dk (the store after the GQA
// sum is the site's too, so a plain run's dk is not rounded back to bf16).
static void x64_backward_reads_and_grads(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 1, .s_q = 32, .s_kv = 32, .h = 2, .h_kv = 1, .d = 8, .causal = 1};
    int64_t nq = dm.s_q * dm.h * dm.d, nk = dm.s_kv * dm.h_kv * dm.d;
    attn_run R;
    attn_run_init(&R, dm);
    attn_run_fill(&R, PP_FMT_FP32, 18);
    pp_attn_variant v = flash_variant(PP_FMT_FP32);
    attn_run_go(&R, v, 0, 1);
    double *out0 = dupd(R.out, nq), *dq0 = dupd(R.dq, nq), *dk0 = dupd(R.dk, nk);
    attn_run_go(&R, v, PP_SITE_BIT(PP_SITE_ATTN_OUT), 1);
    assert_true(n_not_binary32(R.out, nq) > 0);
    for (int64_t i = 0; i < nq; i++)  // the binary32 buffer holds the nominal out
        assert_true((double)(float)R.out[i] == out0[i]);
    assert_true(n_differing(R.dq, dq0, nq) > 0);  // D read the binary64 out
    attn_run_go(&R, v, PP_SITE_BIT(PP_SITE_ATTN_LSE), 1);
    assert_true(n_differing(R.out, out0, nq) == 0);
    assert_true(n_differing(R.dq, dq0, nq) > 0 || n_differing(R.dk, dk0, nk) > 0);  // P read the binary64 lse
    attn_run_go(&R, v, PP_SITE_BIT(PP_SITE_ATTN_DQ) | PP_SITE_BIT(PP_SITE_ATTN_DK) | PP_SITE_BIT(PP_SITE_ATTN_DV), 1);
    assert_true(n_differing(R.out, out0, nq) == 0);
    assert_true(n_not_binary32(R.dq, nq) > 0 && n_not_binary32(R.dk, nk) > 0);
    // bf16: dk exact moves dk (was rounded back to bf16 by the plain GQA store before)
    attn_run_fill(&R, PP_FMT_BF16, 19);
    v = flash_variant(PP_FMT_BF16);
    attn_run_go(&R, v, 0, 1);
    memcpy(dk0, R.dk, (size_t)nk * 8);
    attn_run_go(&R, v, PP_SITE_BIT(PP_SITE_ATTN_DK), 1);
    assert_true(n_differing(R.dk, dk0, nk) > nk / 2);
    free(out0), free(dq0), free(dk0);
    attn_run_free(&R);
}

// CP (world 2, fp32 flash): with the step partials, the step lse, both merges and out exact, the
// merge reads and keeps binary64, so CP out lies nearer the non-CP binary64 out than with the
// binary32-kept partials (the mask without out_partial and lse), in the sum of squared errors:
// measured 0.86 of it (the rest is the fp32 chains of the two tilings); the merge reading the
// binary32 partials instead would give the same sum.
static void x64_cp_merge_reads_partials(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 1, .s_q = 64, .s_kv = 64, .h = 2, .h_kv = 2, .d = 16, .causal = 1};
    int64_t nq = dm.s_q * dm.h * dm.d;
    attn_run R;
    attn_run_init(&R, dm);
    attn_run_fill(&R, PP_FMT_FP32, 20);
    pp_attn_variant v = flash_variant(PP_FMT_FP32);
    attn_run_go(&R, v, PP_SITE_BIT(PP_SITE_ATTN_OUT) | PP_SITE_BIT(PP_SITE_ATTN_LSE), 0);
    double *ref = dupd(R.out, nq);
    v.cp_world = 2;
    pp_site_mask merges = PP_SITE_BIT(PP_SITE_ATTN_OUT) | PP_SITE_BIT(PP_SITE_ATTN_CP_OUT_MERGE) |
                          PP_SITE_BIT(PP_SITE_ATTN_CP_LSE_MERGE);
    double e[2] = {0, 0};
    for (int w = 0; w < 2; w++) {
        attn_run_go(&R, v, merges | (w ? PP_SITE_BIT(PP_SITE_ATTN_OUT_PARTIAL) | PP_SITE_BIT(PP_SITE_ATTN_LSE) : 0), 0);
        for (int64_t i = 0; i < nq; i++)
            e[w] += (R.out[i] - ref[i]) * (R.out[i] - ref[i]);
    }
    if (!(e[1] < 0.95 * e[0]))
        fail_msg("CP out vs non-CP: squared error %g with binary64 partials, %g with binary32", e[1], e[0]);
    free(ref);
    attn_run_free(&R);
}

// FA2's row_inv, on the row above: out and row_inv exact keep o·(1/l) = 5·(1/3) in binary64, the
// binary64 5/3 (1 ulp_64 at most off); out exact alone keeps 5·RN_32(1/3). The lse does not read
// 1/l: row_inv alone leaves it, and out (RN_32(5·(1/3)) = RN_32(5/3)) moves to the nearest
// binary32 of 5/3.
static void x64_flash_row_inv_by_hand(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 1, .s_q = 1, .s_kv = 3, .h = 1, .h_kv = 1, .d = 1, .causal = 0};
    attn_run R;
    attn_run_init(&R, dm);
    R.v[0] = 1, R.v[1] = 2, R.v[2] = 2;
    pp_attn_variant v = flash_variant(PP_FMT_FP32);
    attn_run_go(&R, v, 0, 0);
    double nom_lse = R.lse[0];
    attn_run_go(&R, v, PP_SITE_BIT(PP_SITE_ATTN_OUT) | PP_SITE_BIT(PP_SITE_ATTN_ROW_INV), 0);
    assert_true(R.out[0] == 5.0 * (1.0 / 3.0));
    assert_true(fabs(R.out[0] - 5.0 / 3.0) <= 0x1p-52);
    assert_true(R.lse[0] == nom_lse);
    attn_run_go(&R, v, PP_SITE_BIT(PP_SITE_ATTN_ROW_INV), 0);
    assert_true(R.out[0] == (double)(float)(5.0 / 3.0));
    assert_true(R.out[0] != 0x1.aaaaacp0);  // the nominal out (x64_flash_out_and_lse_by_hand)
    attn_run_free(&R);
}

// FA2's row_sum, worked out: one query row q = 1 (d = 1, σ = 1: the scores are the keys, exact),
// 1000 keys in [−2, 2) with the largest, 2, last (the first tile the kernel walks, so every later
// tile's correction is exp2(0) = 1 and the partials are never rescaled). With softmax_in exact,
// p_j = RN_32(2^((k_j − 2)·sl2)) in [2^−6, 1]: multiples of 2^−30 below 2^10, so their binary64
// sum l64 is exact in any order. With row_sum and lse exact the lse is exactly fma(2, α_32 = 1,
// log l64) = 2 + log l64 (binary64); without row_sum the binary32 quad sums round, and the lse
// is 2 + log of that rounded l, further from it.
static void x64_flash_row_sum_by_hand(void **state)
{
    (void)state;
    enum { N = 1000 };
    pp_attn_dims dm = {.b = 1, .s_q = 1, .s_kv = N, .h = 1, .h_kv = 1, .d = 1, .causal = 0};
    attn_run R;
    attn_run_init(&R, dm);
    pp_test_rng r = {7};
    R.q[0] = 1.0;
    for (int j = 0; j < N - 1; j++)
        R.k[j] = (double)(float)(pp_test_rng_unit(&r) * 4.0 - 2.0);
    R.k[N - 1] = 2.0;
    for (int j = 0; j < N; j++)
        R.v[j] = 1.0;
    pp_attn_variant v = flash_variant(PP_FMT_FP32);
    pp_attn_scalars sc = {.alpha32 = 1.0f, .sl2 = (float)1.4426950408889634};
    double msd = (double)pp_attn_flash_max_scaled(&sc, 2.0f), l64 = 0.0;
    for (int j = 0; j < N; j++) {
        float p = pp_attn_flash_p64(&sc, (float)R.k[j], msd, 1);
        assert_true(p >= 0x1p-6f && p <= 1.0f);
        l64 += p;
    }
    double want = 2.0 + log(l64);
    pp_site_mask base = PP_SITE_BIT(PP_SITE_ATTN_SOFTMAX_IN) | PP_SITE_BIT(PP_SITE_ATTN_LSE);
    attn_run_go(&R, v, base, 0);
    double lse_rounded_sum = R.lse[0];
    attn_run_go(&R, v, base | PP_SITE_BIT(PP_SITE_ATTN_ROW_SUM), 0);
    assert_true(R.lse[0] == want);
    assert_true(lse_rounded_sum != want);
    assert_true(fabs(R.lse[0] - want) < fabs(lse_rounded_sum - want));
    attn_run_free(&R);
}

// ---------------------------------------------------------------------------------------------
// FA3 fp8's softmax scalars

// One query, three keys, q = k = 0 (descales 1: σ' = sl2), v = (1, 2, 2): s_v = 448/2 = 224,
// v8 = (224, 448, 448), X_v = RN_32(1/224). Every score 0: ms = −8, p = 2^8 each, l = 768,
// o = 256·1120 = 286720 (exact). The epilogue: inv = RN_32(1/768), s = RN_32(inv·X_v), out =
// RN_bf16(o·s); with out exact o·s in binary64; with row_inv and out_scale exact too
// o·((1/768)·X_v), the kernel's quantised answer 1120·X_v/3 up to one binary64 rounding, nearer
// it than o·s. lse = fma(0, ·, log(768/256)): RN_32(log 3), or with lse exact the binary64 log 3.
static void x64_fp8_softmax_scalars_by_hand(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 1, .s_q = 1, .s_kv = 3, .h = 1, .h_kv = 1, .d = 1, .causal = 0};
    attn_run R;
    attn_run_init(&R, dm);
    R.v[0] = 1, R.v[1] = 2, R.v[2] = 2;
    pp_attn_variant v = flash_variant(PP_FMT_BF16);
    v.fp8 = PP_ATTN_FP8_FA3;
    double xv = (double)(float)(1.0 / 224.0), o = 286720.0, want = 1120.0 * xv / 3.0;
    double s32 = (double)(float)((double)(1.0f / 768.0f) * xv);
    attn_run_go(&R, v, 0, 0);
    assert_true(R.out[0] == pp_round(PP_FMT_BF16, (double)(float)(o * s32), PP_RND_NE, 0));
    assert_true(R.lse[0] == (double)(float)log(3.0));
    attn_run_go(&R, v, PP_SITE_BIT(PP_SITE_ATTN_OUT), 0);
    double out_only = R.out[0];
    assert_true(out_only == o * s32);
    pp_site_mask all = PP_SITE_BIT(PP_SITE_ATTN_OUT) | PP_SITE_BIT(PP_SITE_ATTN_ROW_INV) |
                       PP_SITE_BIT(PP_SITE_ATTN_OUT_SCALE) | PP_SITE_BIT(PP_SITE_ATTN_LSE) |
                       PP_SITE_BIT(PP_SITE_ATTN_ROW_SUM) | PP_SITE_BIT(PP_SITE_ATTN_ROW_MAX) |
                       PP_SITE_BIT(PP_SITE_ATTN_SOFTMAX_IN) | PP_SITE_BIT(PP_SITE_ATTN_SOFTMAX_SCALE);
    attn_run_go(&R, v, all, 0);
    assert_true(R.out[0] == o * ((1.0 / 768.0) * xv));
    assert_true(fabs(R.out[0] - want) < fabs(out_only - want));
    assert_true(R.lse[0] == log(3.0));
    attn_run_free(&R);
}

// FA3 fp8 on a random row set: each softmax scalar site alone moves the binary32 lse somewhere
// (it reaches the kernel), and with every one of them exact out and lse come nearer the same
// kernel with the sites' arithmetic in binary64 throughout than the nominal run does: the lse's
// error against the all-exact run shrinks (the expected direction).
static void x64_fp8_sites_reach_the_kernel(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 1, .s_q = 64, .s_kv = 64, .h = 2, .h_kv = 2, .d = 32, .causal = 1};
    int64_t nr = dm.s_q * dm.h;
    attn_run R;
    attn_run_init(&R, dm);
    attn_run_fill(&R, PP_FMT_BF16, 21);
    pp_attn_variant v = flash_variant(PP_FMT_BF16);
    v.fp8 = PP_ATTN_FP8_FA3;
    attn_run_go(&R, v, 0, 0);
    double *lse0 = dupd(R.lse, nr);
    static const int sites[] = {PP_SITE_ATTN_ROW_MAX, PP_SITE_ATTN_SOFTMAX_SCALE, PP_SITE_ATTN_SOFTMAX_IN,
                                PP_SITE_ATTN_ROW_SUM, PP_SITE_ATTN_LSE};
    pp_site_mask all = PP_SITE_BIT(PP_SITE_ATTN_ROW_INV) | PP_SITE_BIT(PP_SITE_ATTN_OUT_SCALE);
    for (size_t i = 0; i < sizeof sites / sizeof sites[0]; i++) {
        attn_run_go(&R, v, PP_SITE_BIT(sites[i]), 0);
        if (n_differing(R.lse, lse0, nr) == 0)
            fail_msg("fp8: site %s exact changes no lse", pp_site_get(sites[i])->name);
        all |= PP_SITE_BIT(sites[i]);
    }
    attn_run_go(&R, v, all, 0);
    double *lsex = dupd(R.lse, nr), e0 = 0, e1 = 0;
    attn_run_go(&R, v, all & ~PP_SITE_BIT(PP_SITE_ATTN_LSE), 0);  // all but the lse's own rounding
    for (int64_t i = 0; i < nr; i++) {
        e0 += fabs(lse0[i] - lsex[i]);
        e1 += fabs(R.lse[i] - lsex[i]);
    }
    if (!(e1 < e0))
        fail_msg("fp8: lse error against every scalar exact: %g with the others exact, %g nominal", e1, e0);
    free(lse0), free(lsex);
    attn_run_free(&R);
}

int main(void)
{
    pp_test_report_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(x64_flash_out_and_lse_by_hand),
        cmocka_unit_test(x64_backward_reads_and_grads),
        cmocka_unit_test(x64_cp_merge_reads_partials),
        cmocka_unit_test(x64_flash_row_inv_by_hand),
        cmocka_unit_test(x64_flash_row_sum_by_hand),
        cmocka_unit_test(x64_fp8_softmax_scalars_by_hand),
        cmocka_unit_test(x64_fp8_sites_reach_the_kernel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
