// test_attention_fp8.c — FlashAttention-3's FP8 forward (fp8 = "fa3", kernels/attention_fp8.h):
// the per-tensor quantisation of q, k, v (hand values, a tie to even, rounding), P's conversion to
// e4m3 with the max offset, the descales' places (a hand case s = 2, d = 2 computed step by step;
// exact 2^k scalings of q, k, v), the kernel against the exact reference of the quantised inputs
// within P's quantisation bound, and the refusals. Run: make test (build/rel/tests/test_attention_fp8).
#include "test_util.h"

#include <math.h>

#include "attention_check.h"
#include "attention_fp8.h"
#include "attention_ref.h"
#include "cpu/attention.h"

// ---------------------------------------------------------------------------------------------
// Quantisation

// amax 3.5 = 448·2^−7: X = 2^−7 exactly, every element ×128 lands on e4m3.
static void quantise_q_exact(void **state)
{
    (void)state;
    double q[4] = {3.5, 0.5, -0.75, 1.25}, d[4];
    assert_true(pp_attn_fp8_dequantised(q, 4, d) == 0x1p-7);
    for (int i = 0; i < 4; i++)
        assert_true(d[i] == q[i]);
    assert_true(pp_attn_fp8_quantise(-0.75, 128.0) == -96.0f);  // s = 448/3.5 = 128
}

// k: 0.2265625·256 = 58, halfway between e4m3's 56 and 60 (step 4 in [32, 64)): to even, 56.
// v: 0.3515625·64 = 22.5 in [16, 32) (step 2): 22.
static void quantise_ties_and_rounding(void **state)
{
    (void)state;
    double k[4] = {1.75, -0.4375, 0.8125, 0.2265625}, v[4] = {7.0, -1.5, 2.5, 0.3515625}, d[4];
    assert_true(pp_attn_fp8_dequantised(k, 4, d) == 0x1p-8);
    assert_true(d[3] == 0.21875 && d[2] == 0.8125 && d[0] == 1.75);
    assert_true(pp_attn_fp8_quantise(k[3], 256.0) == 56.0f);
    assert_true(pp_attn_fp8_dequantised(v, 4, d) == 0x1p-6);
    assert_true(d[3] == 0.34375);
    assert_true(pp_attn_fp8_quantise(v[3], 64.0) == 22.0f);
}

// The scale of amax 2: s = 448/2 = 224, the descale X = RN_32(1/224); amax 3: s = RN_32(448/3),
// X = RN_32(1/s) (TE's scale and scale_inv); zeros: s = 1; NaN: s NaN.
static void quantise_scale_rules(void **state)
{
    (void)state;
    double x[3] = {1.0, -2.0, 0.5}, y[2] = {3.0, 1.0}, z[2] = {0.0, -0.0}, n[2] = {1.0, NAN};
    assert_true(pp_attn_fp8_tensor_scale(x, 3) == 224.0);
    assert_true(pp_attn_fp8_descale(224.0) == (double)(float)(1.0 / 224.0));
    assert_true(pp_attn_fp8_tensor_scale(y, 2) == (double)(float)(448.0 / 3.0));
    assert_true(pp_attn_fp8_descale(pp_attn_fp8_tensor_scale(y, 2)) == (double)(1.0f / (float)(448.0 / 3.0)));
    assert_true(pp_attn_fp8_tensor_scale(z, 2) == 1.0);
    assert_true(isnan(pp_attn_fp8_tensor_scale(n, 2)));
    // the largest element lands on 448 (or within e4m3's rounding of it), never NaN: saturating
    assert_true(fabsf(pp_attn_fp8_quantise(-2.0, pp_attn_fp8_tensor_scale(x, 3))) == 448.0f);
}

// P to e4m3: 31.73 → 32 (step 2 in [16, 32) rounds up to the binade's end), 87.2 → 88, 256 stays,
// a tiny p becomes an e4m3 subnormal (multiples of 2^−9) or 0; fp8 0 is RN_F.
static void p_conversion(void **state)
{
    (void)state;
    assert_true(pp_attn_fp8_p(1, PP_FMT_BF16, 31.73f) == 32.0f);
    assert_true(pp_attn_fp8_p(1, PP_FMT_BF16, 87.2f) == 88.0f);
    assert_true(pp_attn_fp8_p(1, PP_FMT_BF16, 256.0f) == 256.0f);
    assert_true(pp_attn_fp8_p(1, PP_FMT_BF16, 0x1.3p-9f) == 0x1p-9f);
    assert_true(pp_attn_fp8_p(1, PP_FMT_BF16, 0x1p-11f) == 0.0f);  // half the smallest subnormal: to even, 0
    assert_true(pp_attn_fp8_p(1, PP_FMT_BF16, 1000.0f) == 448.0f);  // saturates (never reached: p ≤ 256)
    assert_true(pp_attn_fp8_p(0, PP_FMT_BF16, 1.0f + 0x1p-10f) == 1.0f);
}

// ---------------------------------------------------------------------------------------------
// The hand case: b 1, s 2, s_kv 2, h 1, d 2, no mask, σ = 1/√2 (α32 = 0x1.6a09e6p−1).
// q8 = [448 64; −96 160], k8 = [448 −112; 208 56], v8 = [448 −96; 160 22] (the cases above);
// X_q·X_k = 2^−15, X_v = 2^−6. Raw scores (exact integers): row 0: 193536, 96768; row 1: −60928,
// −11008. σ' = sl2·2^−15. Row 0: m = 193536, p = 2^(8 + (s − m)σ') ≈ 256, 31.73 → P8 256, 32;
// row 1: m = −11008, p ≈ 87.2, 256 → P8 88, 256. o = P8·v8 in key order (fma from +0), one tile.
static void fa3(pp_attn_variant *v)
{
    memset(v, 0, sizeof *v);
    v->format = v->cp_accum = v->cp_grad_accum = PP_FMT_BF16;
    v->kernel = PP_ATTN_FLASH;
    v->fp8 = PP_ATTN_FP8_FA3;
}

static void hand_case_s2_d2(void **state)
{
    (void)state;
    double q[4] = {3.5, 0.5, -0.75, 1.25}, k[4] = {1.75, -0.4375, 0.8125, 0.2265625};
    double vv[4] = {7.0, -1.5, 2.5, 0.3515625}, out[4], lse[2];
    pp_attn_dims dm = {1, 2, 2, 1, 1, 2, 0};
    pp_attn_variant v;
    fa3(&v);
    pp_error e = {0};
    assert_int_equal(pp_attention_cpu(&v, &dm, 0, q, k, vv, NULL, out, lse, NULL, NULL, NULL, 1, &e), 0);

    float sl2 = (float)((double)0x1.6a09e6p-1f * 1.4426950408889634) * 0x1p-15f;  // σ' (exact ×2^−15)
    const float s[2][2] = {{193536.0f, 96768.0f}, {-60928.0f, -11008.0f}};
    const float P8[2][2] = {{256.0f, 32.0f}, {88.0f, 256.0f}};
    const float v8[2][2] = {{448.0f, -96.0f}, {160.0f, 22.0f}};
    for (int i = 0; i < 2; i++) {
        float m = s[i][0] > s[i][1] ? s[i][0] : s[i][1];
        float ms = fmaf(m, sl2, -8.0f);
        float p[2], l = 0.0f;
        for (int j = 0; j < 2; j++) {
            p[j] = pp_attn_exp2f(fmaf(s[i][j], sl2, -ms));
            assert_true(pp_attn_fp8_p(1, PP_FMT_BF16, p[j]) == P8[i][j]);  // the hand values above
            l = l + p[j];  // keys 0 and 1 share partial 0
        }
        float sc = (1.0f / l) * 0x1p-6f;
        for (int c = 0; c < 2; c++) {
            float o = fmaf(P8[i][1], v8[1][c], fmaf(P8[i][0], v8[0][c], 0.0f));
            double want = pp_round(PP_FMT_BF16, (double)(o * sc), PP_RND_NE, 0);
            if (!pp_test_same_bits(out[i * 2 + c], want)) {
                pp_test_print_double("got", out[i * 2 + c]);
                pp_test_print_double("want", want);
                fail_msg("out[%d][%d]", i, c);
            }
        }
        double lw = fmaf(m, sl2 * 0.693147182f, pp_logf(l * 0x1p-8f));
        assert_true(pp_test_same_bits(lse[i], lw));
    }
    // the numbers themselves: row 0 is mostly key 0's v (7, −1.5), row 1 mostly key 1's
    assert_true(fabs(out[0] - 6.51) < 0.01 && fabs(out[3] + 0.128) < 0.01);
}

// ---------------------------------------------------------------------------------------------
// Descale placement: exact 2^k scalings

// q·2^3, k·2^−2, v·2^5 leave q8, k8, v8 (each X scales by the same power of two) and the raw
// scores; σ' becomes 2·σ' exactly and every exp2 argument doubles… unless the descales are where
// FA3 puts them. With the real inputs scaled so, the scores σ·q·k scale by 2 — so this test uses
// the compensated pair: q·2^3 with k·2^−3 (σ' unchanged, lse bit for bit the same) and v·2^5
// (out·2^5 bit for bit). A descale applied in the wrong place (X_v on the scores, X_q on out, or
// none) breaks one of the two.
static void descales_scale_exactly(void **state)
{
    (void)state;
    pp_attn_dims dm = {2, 9, 13, 4, 2, 16, 1};
    int64_t nq = dm.b * dm.s_q * dm.h * dm.d, nkv = dm.b * dm.s_kv * dm.h_kv * dm.d, nl = dm.b * dm.h * dm.s_q;
    double *q = malloc((size_t)(nq + 2 * nkv) * 2 * sizeof *q), *o = malloc((size_t)(nq + nl) * 2 * sizeof *o);
    double *k = q + nq, *vv = k + nkv, *q2 = vv + nkv, *k2 = q2 + nq, *v2 = k2 + nkv;
    double *o2 = o + nq, *l = o2 + nq, *l2 = l + nl;
    pp_test_rng r = {pp_test_seed() + 20};
    for (int64_t i = 0; i < nq; i++) {
        q[i] = pp_round(PP_FMT_BF16, 4.0 * pp_test_rng_unit(&r) - 2.0, PP_RND_NE, 0);
        q2[i] = q[i] * 8.0;
    }
    for (int64_t i = 0; i < nkv; i++) {
        k[i] = pp_round(PP_FMT_BF16, 4.0 * pp_test_rng_unit(&r) - 2.0, PP_RND_NE, 0);
        vv[i] = pp_round(PP_FMT_BF16, 2.0 * pp_test_rng_unit(&r) - 1.0, PP_RND_NE, 0);
        k2[i] = k[i] * 0.125, v2[i] = vv[i] * 32.0;
    }
    pp_attn_variant v;
    fa3(&v);
    pp_error e = {0};
    assert_int_equal(pp_attention_cpu(&v, &dm, 0, q, k, vv, NULL, o, l, NULL, NULL, NULL, 2, &e), 0);
    assert_int_equal(pp_attention_cpu(&v, &dm, 0, q2, k2, v2, NULL, o2, l2, NULL, NULL, NULL, 2, &e), 0);
    int bad = 0;
    for (int64_t i = 0; i < nq; i++)
        bad += !pp_test_same_bits(o2[i], o[i] * 32.0);
    for (int64_t i = 0; i < nl; i++)
        bad += !pp_test_same_bits(l2[i], l[i]);
    if (bad)
        pp_test_report_seed();
    assert_int_equal(bad, 0);
    free(q), free(o);
}

// ---------------------------------------------------------------------------------------------
// Against the exact attention of the quantised inputs (the reference hook: X·T8 exactly; the
// amaxes are 448·2^k so X·T8 are binary32 values the reference takes). What is left is P's
// conversion to e4m3 (relative ≤ 2^−4 each, absolute ≤ 2^−10 below 2^−6), binary32 arithmetic and
// the bf16 store: |out − ref| ≤ (2^−4 + 2^−8)·max|v| + 2^−10·s_kv/256·max|v| (P ≥ 2^−6·… is
// relative; l ≥ 256·(1 − 2^−20) since the max key's p is ≈ 256). With P kept in binary32 the same
// rows would be within a few bf16 ulps: the test also checks the bound is not vacuous (some
// element's error exceeds 2^−7·max|v|, which only P's quantisation explains).
static void against_reference_of_quantised_inputs(void **state)
{
    (void)state;
    pp_attn_dims dm = {1, 24, 24, 2, 1, 8, 1};
    int64_t nq = dm.s_q * dm.h * dm.d, nkv = dm.s_kv * dm.h_kv * dm.d, nl = dm.h * dm.s_q;
    double q[384], k[192], vv[192], qd[384], kd[192], vd[192], out[384], lse[48], ro[384], rl[48];
    pp_test_rng r = {pp_test_seed() + 21};
    for (int64_t i = 0; i < nq; i++)
        q[i] = pp_round(PP_FMT_BF16, 3.0 * pp_test_rng_unit(&r) - 1.5, PP_RND_NE, 0);
    for (int64_t i = 0; i < nkv; i++) {
        k[i] = pp_round(PP_FMT_BF16, 3.0 * pp_test_rng_unit(&r) - 1.5, PP_RND_NE, 0);
        vv[i] = pp_round(PP_FMT_BF16, 1.6 * pp_test_rng_unit(&r) - 0.8, PP_RND_NE, 0);
    }
    q[5] = 3.5, k[7] = -1.75, vv[3] = 0.875;  // amaxes 448·2^−7, 2^−8, 2^−9: X powers of two
    assert_true(pp_attn_fp8_dequantised(q, nq, qd) == 0x1p-7);
    assert_true(pp_attn_fp8_dequantised(k, nkv, kd) == 0x1p-8);
    assert_true(pp_attn_fp8_dequantised(vv, nkv, vd) == 0x1p-9);
    pp_attn_variant v;
    fa3(&v);
    pp_error e = {0};
    assert_int_equal(pp_attention_cpu(&v, &dm, 0, q, k, vv, NULL, out, lse, NULL, NULL, NULL, 1, &e), 0);
    pp_attn_ref_opts o;
    memset(&o, 0, sizeof o);
    o.method = PP_ATTN_REF_FAST;
    o.b = dm.b, o.s_q = dm.s_q, o.s_kv = dm.s_kv, o.h = dm.h, o.h_kv = dm.h_kv, o.d = dm.d, o.causal = dm.causal;
    o.threads = 1;
    assert_int_equal(pp_attention_ref(&o, qd, kd, vd, NULL, ro, rl, NULL, NULL, NULL, NULL, &e), 0);
    double bound = (0x1p-4 + 0x1p-8 + 0x1p-10 * 24.0 / 255.0) * 0.875, worst = 0.0, lworst = 0.0;
    for (int64_t i = 0; i < nq; i++)
        worst = fmax(worst, fabs(out[i] - ro[i]));
    for (int64_t i = 0; i < nl; i++)
        lworst = fmax(lworst, fabs(lse[i] - rl[i]));
    print_message("fa3 vs the exact attention of the quantised inputs: max |out error| %.4g (bound %.4g), "
                  "max |lse error| %.3g\n", worst, bound, lworst);
    assert_true(worst <= bound);
    assert_true(worst > 0x1p-7 * 0.875);
    assert_true(lworst < 1e-5);  // lse sees no P quantisation: binary32 arithmetic only
}

// ---------------------------------------------------------------------------------------------
// Refusals (exit 2 on every backend; the case reader adds FILE:LINE, tests/e2e bad_attn_fp8_*)

static void refusals(void **state)
{
    (void)state;
    pp_attn_dims dm = {0, 8, 8, 2, 1, 4, 0};
    struct {
        int backward, unfused, cp, scale_pre, max_none;
        pp_format_id f;
        const char *want;
    } bad[] = {
        {1, 0, 1, 0, 0, PP_FMT_BF16, "forward only"},
        {0, 1, 1, 0, 0, PP_FMT_BF16, "needs kernel = \"flash\""},
        {0, 0, 1, 0, 0, PP_FMT_FP16, "needs format = \"bf16\""},
        {0, 0, 2, 0, 0, PP_FMT_BF16, "needs cp_world = 1"},
        {0, 0, 1, 1, 0, PP_FMT_BF16, "scale = \"post\""},
        {0, 0, 1, 0, 1, PP_FMT_BF16, "max_subtract = \"row\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pp_attn_variant v;
        fa3(&v);
        v.kernel = bad[i].unfused ? PP_ATTN_UNFUSED : PP_ATTN_FLASH;
        v.format = v.cp_accum = v.cp_grad_accum = bad[i].f;
        v.cp_world = bad[i].cp;
        v.scale = bad[i].scale_pre ? PP_ATTN_SCALE_PRE : PP_ATTN_SCALE_POST;
        v.max_subtract = bad[i].max_none ? PP_ATTN_MAX_NONE : PP_ATTN_MAX_ROW;
        char err[300] = "";
        assert_int_equal(pp_attn_check(&v, &dm, bad[i].backward, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                       NULL, err, sizeof err),
                         2);
        if (!strstr(err, bad[i].want))
            fail_msg("case %zu: '%s' lacks '%s'", i, err, bad[i].want);
    }
    pp_attn_variant v;
    fa3(&v);
    assert_null(pp_attn_fp8_error(&v, 0));
    v.fp8 = PP_ATTN_FP8_NONE;
    v.kernel = PP_ATTN_UNFUSED;
    assert_null(pp_attn_fp8_error(&v, 1));  // the default takes every other knob as before
}

// FA3's FP8 tiles: block_n from hopper/tile_size.h's FP8 row by d, or block_n given.
static void fa3_tiles(void **state)
{
    (void)state;
    pp_attn_variant v;
    fa3(&v);
    assert_int_equal(pp_attn_fp8_block_n(&v, 64), 160);
    assert_int_equal(pp_attn_fp8_block_n(&v, 96), 128);
    assert_int_equal(pp_attn_fp8_block_n(&v, 128), 224);
    assert_int_equal(pp_attn_fp8_block_n(&v, 192), 160);
    assert_int_equal(pp_attn_fp8_block_n(&v, 256), 128);
    v.block_n = 32;
    assert_int_equal(pp_attn_fp8_block_n(&v, 64), 32);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quantise_q_exact),
        cmocka_unit_test(quantise_ties_and_rounding),
        cmocka_unit_test(quantise_scale_rules),
        cmocka_unit_test(p_conversion),
        cmocka_unit_test(hand_case_s2_d2),
        cmocka_unit_test(descales_scale_exactly),
        cmocka_unit_test(against_reference_of_quantised_inputs),
        cmocka_unit_test(refusals),
        cmocka_unit_test(fa3_tiles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
