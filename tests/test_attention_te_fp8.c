// test_attention_te_fp8.c — fp8 = "te", TransformerEngine's FP8 DPA forward (kernels/attention.h
// "FP8 (fp8 = te)"; kernels/attention_te_fp8.h, attention_te_run.c): hand-computed rows for each
// scale point (descale_q·descale_k·attn_scale, scale_s, descale_s·descale_v, the division by l),
// P's saturation and subnormals, each unknown's alternative (two-pass, exp2, chain, tiles, the
// lazy-rescale threshold), empty and NaN rows; the scalars from a variant; the whole run (any
// thread count, a loop device running rows backwards one at a time as the GPU's decomposition,
// O's amax, scale and e4m3 store, lse against the exact attention of the quantised inputs); refusals.
// Run: make test (build/rel/tests/test_attention_te_fp8).
#include "test_util.h"

#include "attn_te_variant.h"

#include <math.h>

#include "attention_check.h"
#include "attention_fp8.h"
#include "attention_te_fp8.h"
#include "attention_te_run.h"
#include "cpu/attention.h"
#include "cpu/attention_te_fp8.h"
#include "ops/attention_ref_quantised.h"

// A row configuration with P's scale 256 (descale 2^−8, exact), σ = 1, X_v = 1: the reference's
// choices (online, e, per-tile blocks), one tile.
static pp_attn_te_cfg cfg_base(void)
{
    pp_attn_te_cfg c = {.softmax = PP_ATTN_TE_ONLINE, .base = PP_ATTN_TE_EXP, .pv = PP_ATTN_TE_PV_BLOCK,
                        .block_n = 128, .thr = 0.0, .sigma = 1.0f, .scale_s = 256.0f, .xs = 0x1p-8f, .xv = 1.0f,
                        .xsv = 0x1p-8f};
    return c;
}

// One row of d = 1 over n keys (k8, v8 key-major, stride 1).
static void row(const pp_attn_te_cfg *c, float q8, const float *k8, const float *v8, int64_t n, float *o, float *lse,
                float *amax_s)
{
    float x[16];
    pp_attn_te_row(c, 0, &q8, k8, v8, 1, n, 1, x, o, lse, amax_s);
}

// ---------------------------------------------------------------------------------------------
// Hand-computed rows

// q8 = 2, k8 = (1, 1), σ = 0.5: x = (1, 1), m = 1, p = (1, 1), l = 2; P8 = e4m3(1·256) = 256 each;
// v8 = (2, 6), X_v = 0.25: t = 256·2 + 256·6 = 2048, o = (2048·0.25)·2^−8 = 2, out = 2/2 = 1;
// lse = 1 + ln 2; amax_s = 1. The chain form: o = 2048·RN(0.25·2^−8) = 2, the same.
static void scale_points_by_hand(void **state)
{
    (void)state;
    pp_attn_te_cfg c = cfg_base();
    c.sigma = 0.5f, c.xv = 0.25f, c.xsv = 0x1p-10f;
    const float k8[] = {1, 1}, v8[] = {2, 6};
    float o, lse, am;
    row(&c, 2.0f, k8, v8, 2, &o, &lse, &am);
    assert_true(o == 1.0f);
    assert_true(lse == 1.0f + 0.693147182f);
    assert_true(am == 1.0f);
    c.pv = PP_ATTN_TE_PV_CHAIN;
    row(&c, 2.0f, k8, v8, 2, &o, &lse, &am);
    assert_true(o == 1.0f);
}

// scale_s = 512 (a stale amax_s of 0.875): P8 = e4m3,sat(512) = 448, t = 448·8 = 3584,
// o = 3584·0.25·2^−9 = 1.75, out = 0.875: the saturation loses 12.5%.
static void p_saturates(void **state)
{
    (void)state;
    pp_attn_te_cfg c = cfg_base();
    c.sigma = 0.5f, c.xv = 0.25f, c.scale_s = 512.0f, c.xs = 0x1p-9f;
    const float k8[] = {1, 1}, v8[] = {2, 6};
    float o, lse, am;
    row(&c, 2.0f, k8, v8, 2, &o, &lse, &am);
    assert_true(o == 0.875f);
}

// x = (0, −1), v8 = (1, 1). Online: p = (1, e^−1), P8 = (256, e4m3(94.17) = 96), o = 352·2^−8 =
// 1.375, out = 1.375 / (1 + e^−1) ≈ 1.00521 (exact: 1). Two-pass: p = (0.7311, 0.2689) → P8 =
// (192, 72) (steps 16 and 8), o = 264·2^−8 = 1.03125 exactly, no division; amax_s 0.7311 vs 1.
static void online_against_two_pass(void **state)
{
    (void)state;
    pp_attn_te_cfg c = cfg_base();
    const float k8[] = {0, -1}, v8[] = {1, 1};
    float o, lse, am;
    row(&c, 1.0f, k8, v8, 2, &o, &lse, &am);
    float l = 1.0f + 0.36787945f;
    assert_true(o == 1.375f / l);
    assert_true(o > 1.0052f && o < 1.0053f);
    assert_true(am == 1.0f);
    float lse_online = lse;
    c.softmax = PP_ATTN_TE_TWO_PASS;
    row(&c, 1.0f, k8, v8, 2, &o, &lse, &am);
    assert_true(o == 1.03125f);
    assert_true(am == 1.0f / l);
    assert_true(lse == lse_online);  // both m + log l with the same m and l
}

// Tiles of one key, x = (0, 1), v8 = (1, 3): tile 0 quantises p = 1 (256, exact), then the new
// max rescales o and l by e^−1 in binary32: out = (e^−1 + 3)/(e^−1 + 1). One tile quantises
// e^−1·256 = 94.17 to 96 instead: out = (96/256 + 3)/(e^−1 + 1) = 3.375/(1 + e^−1).
static void tiles_quantise_against_the_running_max(void **state)
{
    (void)state;
    pp_attn_te_cfg c = cfg_base();
    const float k8[] = {0, 1}, v8[] = {1, 3};
    float o1, o2, lse, am;
    row(&c, 1.0f, k8, v8, 2, &o1, &lse, &am);
    assert_true(o1 == 3.375f / (1.0f + 0.36787945f));
    c.block_n = 1;
    row(&c, 1.0f, k8, v8, 2, &o2, &lse, &am);
    assert_true(o2 == (0.36787945f + 3.0f) / (0.36787945f + 1.0f));
    assert_true(o1 != o2);
}

// te_pv: descales per tile (block) or once (chain) round differently when they are not powers of
// two. Tiles of one key, x = (0, 0), P8 = 448 each (scale_s 448), v8 = (1, 4), X_v = 0.3,
// X_s = RN_32(1/448): block o = RN(RN(448·X_v)·X_s) ⊕ RN(RN(1792·X_v)·X_s) = 0x1.800004p+0,
// chain o = 2240 ⊗ RN(X_v·X_s) = 0x1.800002p+0: one ulp_32 apart; out = o/2.
static void pv_block_against_chain(void **state)
{
    (void)state;
    pp_attn_te_cfg c = cfg_base();
    c.block_n = 1, c.scale_s = 448.0f, c.xs = (float)(1.0 / 448.0), c.xv = 0.3f, c.xsv = c.xv * c.xs;
    const float k8[] = {0, 0}, v8[] = {1, 4};
    float ob, oc, lse, am;
    row(&c, 1.0f, k8, v8, 2, &ob, &lse, &am);
    c.pv = PP_ATTN_TE_PV_CHAIN;
    row(&c, 1.0f, k8, v8, 2, &oc, &lse, &am);
    assert_true(ob == 0x1.800004p+0f / 2 && oc == 0x1.800002p+0f / 2);
}

// The lazy rescale (te_rescale_threshold 1, in e's units ln 2): tiles of one key, x = (0, 0.5):
// 0.5 ≤ ln 2, so the max stays 0 and p_1 = e^0.5 = 1.6487 > 1; P's scale is 256/2 = 128:
// P8 = (128, e4m3(211.03) = 208), o = (128 + 208)·2^−7 = 2.625, out = 2.625/(1 + e^0.5).
static void lazy_rescale_threshold(void **state)
{
    (void)state;
    pp_attn_te_cfg c = cfg_base();
    c.block_n = 1, c.thr = 0.6931471805599453, c.scale_s = 128.0f, c.xs = 0x1p-7f;
    const float k8[] = {0, 0.5f}, v8[] = {1, 1};
    float o, lse, am;
    row(&c, 1.0f, k8, v8, 2, &o, &lse, &am);
    assert_true(am == 1.64872122f);
    assert_true(o == 2.625f / (1.0f + 1.64872122f));
    assert_true(lse == 0.0f + pp_logf(1.0f + 1.64872122f));
}

// Base 2 (te_exp exp2) with x already in log2 units: x = (0, −1), p = (1, 0.5) exactly, P8 =
// (256, 128), o = 1.5, l = 1.5, out = 1 exactly; lse = 0·ln 2 + ln 1.5.
static void exp2_by_hand(void **state)
{
    (void)state;
    pp_attn_te_cfg c = cfg_base();
    c.base = PP_ATTN_TE_EXP2;
    const float k8[] = {0, -1}, v8[] = {1, 1};
    float o, lse, am;
    row(&c, 1.0f, k8, v8, 2, &o, &lse, &am);
    assert_true(o == 1.0f);
    assert_true(lse == 0.405465096f);
}

// A small p lands in e4m3's subnormals: x = (0, −12), p_1·256 = 0.001573 → 2^−9 (e4m3's
// smallest subnormal), o = (256 + 2^−9)·2^−8 = 1 + 2^−17 (exact), out = that / (1 + e^−12).
static void p_subnormal(void **state)
{
    (void)state;
    pp_attn_te_cfg c = cfg_base();
    const float k8[] = {0, -12}, v8[] = {1, 1};
    float o, lse, am;
    row(&c, 1.0f, k8, v8, 2, &o, &lse, &am);
    assert_true(o == (1.0f + 0x1p-17f) / (1.0f + pp_expf(-12.0f)));
}

// A row with no key: out 0, lse −Inf, amax_s 0. A NaN v8 makes its column NaN only; a NaN score
// makes the row NaN (lse too).
static void empty_and_nan_rows(void **state)
{
    (void)state;
    pp_attn_te_cfg c = cfg_base();
    const float k8[] = {0, -1}, v8[] = {NAN, 1};
    float o[2] = {5, 5}, lse, am;
    row(&c, 1.0f, k8, v8, 0, o, &lse, &am);
    assert_true(o[0] == 0.0f && isinf(lse) && lse < 0 && am == 0.0f);
    row(&c, 1.0f, k8, v8, 2, o, &lse, &am);
    assert_true(isnan(o[0]) && !isnan(lse));
    float q2[2] = {1, 0}, k2[4] = {0, 0, -1, 0}, v2[4] = {NAN, 1, 1, 1}, x[2], o2[2];
    pp_attn_te_row(&c, 0, q2, k2, v2, 2, 2, 2, x, o2, &lse, &am);
    assert_true(isnan(o2[0]) && o2[1] == 1.375f / (1.0f + 0.36787945f));
    const float kn[] = {NAN, 0}, vn[] = {1, 1};
    row(&c, 1.0f, kn, vn, 2, o, &lse, &am);
    assert_true(isnan(o[0]) && isnan(lse));
}

// ---------------------------------------------------------------------------------------------
// The scalars from a variant


// σ = RN_32(X_q·X_k·α) (one rounding of the binary64 product); scale_s 448 (the bound) with
// descale RN_32(1/448); threshold 2: scale_s/4, X_s·4, τ = 2 ln 2; exp2: σ·RN_32(log2 e).
static void scalars_from_a_variant(void **state)
{
    (void)state;
    pp_attn_variant v = attn_te_variant();
    float a = 0.125f;
    pp_attn_te_cfg c = pp_attn_te_cfg_make(&v, a, 0.0234375, 1.0 / 3.0, 0.5);
    assert_true(c.sigma == (float)((double)0.0234375f * (double)(float)(1.0 / 3.0) * 0.125));
    assert_true(c.scale_s == 448.0f && c.xs == (float)(1.0 / 448.0) && c.xv == 0.5f && c.thr == 0.0);
    assert_int_equal(c.block_n, PP_ATTN_TE_BLOCK_N);
    v.te_rescale = 2;
    c = pp_attn_te_cfg_make(&v, a, 1.0, 1.0, 1.0);
    assert_true(c.scale_s == 112.0f && c.xs == 4.0f * (float)(1.0 / 448.0));
    assert_true(c.thr == 2 * 0.6931471805599453);
    v.te_rescale = 0, v.te_exp = PP_ATTN_TE_EXP2, v.te_scale_s = 512.0;
    c = pp_attn_te_cfg_make(&v, a, 1.0, 1.0, 1.0);
    assert_true(c.sigma == 0.125f * 1.44269502f && c.scale_s == 512.0f && c.xs == 0x1p-9f);
}

// ---------------------------------------------------------------------------------------------
// The whole run

enum { B = 1, S = 37, SKV = 45, H = 4, HKV = 2, D = 8 };

static double bf16(double x)
{
    return pp_round(PP_FMT_BF16, x, PP_RND_NE, 0);
}

// bf16 inputs, q's head 3 six times larger (an outlier head, as cases/fp8-attention.toml's)
static void inputs(double *q, double *k, double *v)
{
    pp_test_rng r = {pp_test_seed()};
    for (int i = 0; i < B * S * H * D; i++)
        q[i] = bf16((4.0 * pp_test_rng_unit(&r) - 2.0) * (i % (H * D) >= 3 * D ? 6.0 : 1.0));
    for (int i = 0; i < B * SKV * HKV * D; i++)
        k[i] = bf16(4.0 * pp_test_rng_unit(&r) - 2.0), v[i] = bf16(2.0 * pp_test_rng_unit(&r) - 1.0);
}

// A loop device: every row alone, last to first (the GPU's one thread per row in another order).
static int loop_rows(void *ctx, const pp_attn_te_cfg *c, const pp_attn_dims *dm, const float *q8, const float *k8,
                     const float *v8, float *o, float *lse, float *amax_s, char *errbuf, size_t errlen)
{
    (void)ctx, (void)errbuf, (void)errlen;
    float x[SKV];
    for (int64_t r = dm->b * dm->h * dm->s_q - 1; r >= 0; r--)
        pp_attn_te_row_at(c, dm, q8, k8, v8, r, x, o, lse, amax_s);
    return 0;
}

static int same_bits(const double *a, const double *b, int64_t n)
{
    return memcmp(a, b, sizeof(double) * (size_t)n) == 0;
}

static void run_any_device_same_bits(void **state)
{
    (void)state;
    static double q[B * S * H * D], k[B * SKV * HKV * D], vv[B * SKV * HKV * D];
    static double o1[B * S * H * D], o3[B * S * H * D], ol[B * S * H * D], l1[B * H * S], l3[B * H * S],
        ll[B * H * S];
    inputs(q, k, vv);
    pp_attn_dims dm = {B, S, SKV, H, HKV, D, 1};
    pp_attn_variant v = attn_te_variant();
    v.block_n = 16;
    pp_error err;
    pp_attn_te_amax a1, al;
    if (pp_attn_te_fp8_cpu(&v, &dm, q, k, vv, o1, l1, 1, &a1, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(pp_attn_te_fp8_cpu(&v, &dm, q, k, vv, o3, l3, 3, NULL, &err), PP_OK);
    pp_attn_te_device loop = {.rows = loop_rows, .ctx = NULL};
    char msg[200];
    assert_int_equal(pp_attn_te_run(&loop, &v, &dm, q, k, vv, ol, ll, &al, msg, sizeof msg), 0);
    assert_true(same_bits(o1, o3, B * S * H * D) && same_bits(l1, l3, B * H * S));
    assert_true(same_bits(o1, ol, B * S * H * D) && same_bits(l1, ll, B * H * S));
    assert_true(a1.amax_o == al.amax_o && a1.amax_s == al.amax_s);
    // through pp_attention_cpu (the op's entry) the same bits
    assert_int_equal(pp_attention_cpu(&v, &dm, 0, q, k, vv, NULL, ol, ll, NULL, NULL, NULL, 2, &err), PP_OK);
    assert_true(same_bits(o1, ol, B * S * H * D) && same_bits(l1, ll, B * H * S));
    // P's amax is 1 (every row's max key gives p = 1, unnormalised); O's scale is current:
    // RN_32(448/amax_o), and every out is X_o times an e4m3 value
    assert_true(a1.amax_s == 1.0 && a1.scale_s == 448.0);
    assert_true(a1.scale_o == pp_tensor_scale(PP_FMT_E4M3, a1.amax_o));
    double xo = pp_tensor_scale_inv(a1.scale_o), omax = 0;
    for (int i = 0; i < B * S * H * D; i++) {
        double c = o1[i] / xo;
        assert_true(pp_round(PP_FMT_E4M3, c, PP_RND_NE, 0) == c);
        omax = fmax(omax, fabs(o1[i]));
    }
    assert_true(omax <= xo * 448.0 && omax >= xo * 448.0 * 0.9);  // the largest O maps near 448
}

// lse against the exact attention of the quantised inputs (the pipeline's exact-quantised
// reference): only binary32 steps separate them (fp32 dot of exact products, the scale, exp and
// the row sum, log): within 1e-5 relative. out within its e4m3 store (2^−4 relative) plus P's.
static void run_against_its_quantised_inputs(void **state)
{
    (void)state;
    static double q[B * S * H * D], k[B * SKV * HKV * D], vv[B * SKV * HKV * D];
    static double o[B * S * H * D], l[B * H * S], ro[B * S * H * D], rl[B * H * S];
    inputs(q, k, vv);
    pp_attn_dims dm = {B, S, SKV, H, HKV, D, 1};
    pp_attn_variant v = attn_te_variant();
    pp_error err;
    assert_int_equal(pp_attn_te_fp8_cpu(&v, &dm, q, k, vv, o, l, 2, NULL, &err), PP_OK);
    pp_attn_ref_opts ro_ = {.method = PP_ATTN_REF_FAST, .b = B, .s_q = S, .s_kv = SKV, .h = H, .h_kv = HKV, .d = D,
                            .causal = 1, .threads = 1};
    double bo, bl;
    assert_int_equal(pp_attention_ref_quantised(&ro_, &v, q, k, vv, ro, rl, &bo, &bl, &err), PP_OK);
    for (int i = 0; i < B * H * S; i++)
        assert_true(fabs(l[i] - rl[i]) <= 1e-5 * (1 + fabs(rl[i])));
    double worst = 0;
    for (int i = 0; i < B * S * H * D; i++)
        worst = fmax(worst, fabs(o[i] - ro[i]));
    assert_true(worst > 0 && worst < 0.25);
}

// A stale amax_history_s (scale_s 896): P saturates wherever p ≥ 0.5: out moves, stays finite.
// A NaN input: the per-tensor scale is NaN (TE's amax NaN), so is every out.
static void run_stale_scale_s_and_nan(void **state)
{
    (void)state;
    static double q[B * S * H * D], k[B * SKV * HKV * D], vv[B * SKV * HKV * D];
    static double o[B * S * H * D], os[B * S * H * D], l[B * H * S];
    inputs(q, k, vv);
    pp_attn_dims dm = {B, S, SKV, H, HKV, D, 0};
    pp_attn_variant v = attn_te_variant();
    pp_error err;
    pp_attn_te_amax a;
    assert_int_equal(pp_attn_te_fp8_cpu(&v, &dm, q, k, vv, o, l, 1, NULL, &err), PP_OK);
    v.te_scale_s = 896.0;
    assert_int_equal(pp_attn_te_fp8_cpu(&v, &dm, q, k, vv, os, l, 1, &a, &err), PP_OK);
    assert_true(a.scale_s == 896.0);
    int moved = 0;
    for (int i = 0; i < B * S * H * D; i++) {
        assert_true(isfinite(os[i]));
        moved += os[i] != o[i];
    }
    assert_true(moved > B * S * H * D / 4);
    q[5] = NAN;
    assert_int_equal(pp_attn_te_fp8_cpu(&v, &dm, q, k, vv, os, l, 1, NULL, &err), PP_OK);
    assert_true(isnan(os[0]) && isnan(os[B * S * H * D - 1]));
}

// ---------------------------------------------------------------------------------------------
// Refusals (the case reader's FILE:LINE forms: tests/e2e bad_attn_te_*)

static void refusals(void **state)
{
    (void)state;
    pp_attn_dims dm = {0, 8, 8, 2, 1, 4, 0};
    pp_attn_variant v = attn_te_variant();
    char err[300] = "";
    assert_null(pp_attn_fp8_error(&v, 0));
    // the backward is modelled too (tests/test_attention_te_fp8_bwd.c): passes fwd+bwd is accepted
    assert_int_equal(pp_attn_check(&v, &dm, 1, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, err,
                                   sizeof err), 0);
    v.fp8_scaling = PP_ATTN_FP8_SCALING_MX;
    assert_non_null(strstr(pp_attn_fp8_error(&v, 0), "per-tensor"));
    v = attn_te_variant(), v.kernel = PP_ATTN_UNFUSED;
    assert_non_null(strstr(pp_attn_fp8_error(&v, 0), "kernel = \"flash\""));
    v = attn_te_variant(), v.mma = PP_ATTN_FP8_MMA_SM90;  // accepted: a bound (tests/test_attention_te_sm90.c)
    assert_null(pp_attn_fp8_error(&v, 0));
    v = attn_te_variant(), v.te_rescale = 3, v.te_softmax = PP_ATTN_TE_TWO_PASS;
    assert_non_null(strstr(pp_attn_fp8_error(&v, 0), "online"));
    v = attn_te_variant(), v.fp8_scaling = PP_ATTN_FP8_SCALING_DELAYED;
    assert_non_null(strstr(pp_attn_fp8_error(&v, 0), "amax_history_q"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scale_points_by_hand),
        cmocka_unit_test(p_saturates),
        cmocka_unit_test(online_against_two_pass),
        cmocka_unit_test(tiles_quantise_against_the_running_max),
        cmocka_unit_test(pv_block_against_chain),
        cmocka_unit_test(lazy_rescale_threshold),
        cmocka_unit_test(exp2_by_hand),
        cmocka_unit_test(p_subnormal),
        cmocka_unit_test(empty_and_nan_rows),
        cmocka_unit_test(scalars_from_a_variant),
        cmocka_unit_test(run_any_device_same_bits),
        cmocka_unit_test(run_against_its_quantised_inputs),
        cmocka_unit_test(run_stale_scale_s_and_nan),
        cmocka_unit_test(refusals),
    };
    pp_test_report_seed();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
