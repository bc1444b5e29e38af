// test_attention_te_sm90.c — mma = "sm90-fp8" with fp8 = "te" (kernels/attention_te_fp8.h
// pp_attn_te_sm90, Hopper's FP8 accumulation in cuDNN's GEMMs as a bound): hand dots where the
// truncating accumulator and its promotion every 128 differ from the exact fp32 chain; every GEMM
// of the forward (S, P8·V8 per tile and chained) and the backward (dP, dq's dS8·K8, dk's dS8ᵀ·Q8,
// dv's P8ᵀ·dO8, across heads and promotions) against kernels/sm90_fp8_mma.h's own functions on the
// same operands; the whole run on any thread count and a loop device; refusals.
// Run: make test (build/rel/tests/test_attention_te_sm90).
#include "test_util.h"

#include "attn_te_variant.h"

#include <math.h>

#include "attention_check.h"
#include "attention_te_bwd_run.h"
#include "attention_te_fp8_bwd.h"
#include "cpu/attention_te_fp8.h"
#include "cpu/attention_te_fp8_bwd.h"
#include "sm90_fp8_mma.h"

#define E4 (pp_format_get(PP_FMT_E4M3).emin)
#define E5 (pp_format_get(PP_FMT_E5M2).emin)

static pp_attn_te_cfg cfg(int sm90)
{
    pp_attn_te_cfg c = {.softmax = PP_ATTN_TE_ONLINE, .base = PP_ATTN_TE_EXP, .pv = PP_ATTN_TE_PV_BLOCK,
                        .block_n = 128, .sigma = 1.0f, .scale_s = 448.0f, .xs = 1.0f, .xv = 1.0f, .xsv = 1.0f,
                        .sm90 = sm90};
    return c;
}

// The sm90 dot of n products with promotion every 128, as sm90_fp8_mma.h computes it (binary64 copies).
static float model_dot(const float *a, int64_t sa, const float *b, int64_t sb, int64_t n, int ea, int eb)
{
    double x[600], y[600];
    for (int64_t i = 0; i < n; i++)
        x[i] = a[i * sa], y[i] = b[i * sb];
    return pp_sm90_fp8_dot(x, 1, y, 1, n, ea, eb, PP_SM90_FP8_PROMOTE);
}

// S = q8·k8 with q8 = (256, 2^−6), k8 = (1, 1): the chain gives 256 + 2^−6 exactly (15 bits); the
// sm90 group aligns to 2^(8−13) = 2^−5 and truncates 2^−6 away: 256. Signs mirrored: −256.
static void dot_truncates_by_hand(void **state)
{
    (void)state;
    const float q8[2] = {256.0f, 0x1p-6f}, k8[2] = {1.0f, 1.0f}, qn[2] = {-256.0f, -0x1p-6f};
    pp_attn_te_cfg ch = cfg(0), hw = cfg(1);
    assert_true(pp_attn_te_dot(&ch, q8, k8, 2) == 256.0f + 0x1p-6f);
    assert_true(pp_attn_te_dot(&hw, q8, k8, 2) == 256.0f);
    assert_true(pp_attn_te_dot(&hw, qn, k8, 2) == -256.0f);  // toward zero: sign-magnitude
    assert_true(pp_attn_te_dot(&hw, q8, k8, 2) == model_dot(q8, 1, k8, 1, 2, E4, E4));
    // zeros: +0 from an all-zero group; a lone subnormal product kept (2^−9, exponent counted as −6)
    const float z[2] = {0.0f, -0.0f}, sub[2] = {0x1p-9f, 0.0f};
    float r0 = pp_attn_te_dot(&hw, z, k8, 2);
    assert_true(r0 == 0.0f && !signbit(r0));
    assert_true(pp_attn_te_dot(&hw, sub, k8, 2) == 0x1p-9f);
}

// Promotion every 128 (4 groups): 128 products 1·1 then one 2^−9·1. Promoted: C = 128 goes into
// the binary32 total, the fifth group starts from +0 and keeps 2^−9: RN_32(128 + 2^−9) = 128 + 2^−9.
// Never promoted (pp_sm90_fp8_dot with promote 0) the fifth group aligns to 2^(7−13) and drops it.
static void promotion_every_128_by_hand(void **state)
{
    (void)state;
    static float a[129], b[129];
    for (int i = 0; i < 129; i++)
        a[i] = 1.0f, b[i] = 1.0f;
    a[128] = 0x1p-9f;
    assert_true(pp_attn_te_sm90(0.0f, a, 1, b, 1, 129, E4, E4) == 128.0f + 0x1p-9f);
    double x[129], y[129];
    for (int i = 0; i < 129; i++)
        x[i] = a[i], y[i] = b[i];
    assert_true(pp_sm90_fp8_dot(x, 1, y, 1, 129, E4, E4, 0) == 128.0f);
    // a running total (the chain forms): total ⊕ each promotion; +0 total is the plain dot
    assert_true(pp_attn_te_sm90(1024.0f, a, 1, b, 1, 129, E4, E4) == (1024.0f + 128.0f) + 0x1p-9f);
    assert_true(pp_attn_te_sm90(0.0f, a, 1, b, 1, 0, E4, E4) == 0.0f);
}

// e4m3 codes (and e5m2 for dO): random codes over the whole range, including subnormals and zeros
static float code(pp_test_rng *r, pp_format_id f)
{
    double u = pp_test_rng_unit(r), m = pp_format_get(f).max_finite;
    double x = (pp_test_rng_unit(r) < 0.5 ? -1 : 1) * ldexp(u, (int)(24 * pp_test_rng_unit(r)) - 14);
    if (pp_test_rng_unit(r) < 0.05)
        x = 0.0;
    return (float)pp_round(f, fmin(fmax(x, -m), m), PP_RND_NE, 0);
}

// pp_attn_te_sm90 is pp_sm90_fp8_dot(…, 128) for every length 1 … 300 and strides, e4m3 × e4m3 and
// e5m2 × e4m3; and differs from the fp32 chain somewhere (else the knob would measure nothing).
static void equals_the_model_everywhere(void **state)
{
    (void)state;
    static float a[600], b[600];
    pp_test_rng r = {pp_test_seed() ^ 0x590};
    int differ = 0;
    for (int n = 1; n <= 300; n++) {
        int e5 = n % 2;
        for (int i = 0; i < 2 * n; i++)
            a[i] = code(&r, e5 ? PP_FMT_E5M2 : PP_FMT_E4M3), b[i] = code(&r, PP_FMT_E4M3);
        float got = pp_attn_te_sm90(0.0f, a, 2, b, 1, n, e5 ? E5 : E4, E4);
        float want = model_dot(a, 2, b, 1, n, e5 ? E5 : E4, E4);
        if (memcmp(&got, &want, sizeof got))
            fail_msg("n %d: %a vs %a", n, (double)got, (double)want);
        float ch = 0.0f;
        for (int i = 0; i < n; i++)
            ch = fmaf(a[2 * i], b[i], ch);
        differ += ch != got;
    }
    assert_true(differ > 100);
}

// P8·V8 over a tile of 40 keys (two groups), per-tile: t = the model's dot, o += (t ⊗ X_v) ⊗ X_s;
// chain: o = the model's dot onto the running o (total), its descales later.
static void pv_tile_against_model(void **state)
{
    (void)state;
    enum { N = 40, DD = 3 };
    float p8[N], v[N * DD], o[DD], oc[DD];
    pp_test_rng r = {pp_test_seed() ^ 0x9F};
    for (int j = 0; j < N; j++) {
        p8[j] = code(&r, PP_FMT_E4M3);
        for (int e = 0; e < DD; e++)
            v[j * DD + e] = code(&r, PP_FMT_E4M3);
    }
    pp_attn_te_cfg c = cfg(1);
    c.xv = 0.375f, c.xs = 0x1p-8f;
    for (int e = 0; e < DD; e++)
        o[e] = 1.5f, oc[e] = 1.5f;
    pp_attn_te_pv_tile(&c, p8, v, DD, 0, N, DD, o);
    c.pv = PP_ATTN_TE_PV_CHAIN;
    pp_attn_te_pv_tile(&c, p8, v, DD, 0, N, DD, oc);
    for (int e = 0; e < DD; e++) {
        float t = model_dot(p8, 1, v + e, DD, N, E4, E4);
        assert_true(o[e] == 1.5f + (t * 0.375f) * 0x1p-8f);
        assert_true(oc[e] == pp_attn_te_sm90(1.5f, p8, 1, v + e, DD, N, E4, E4));
    }
}

// The backward's GEMMs: dP's entry (dO8 e5m2 · V8 e4m3), dq's per-tile dS8·K8 (150 keys: tiles of
// 128 and 22; chain: onto the running value), dk's dS8ᵀ·Q8 and dv's P8ᵀ·dO8 over (head, query) with
// 2 heads × 100 queries (200 steps: across the head boundary and a promotion), each against the
// model on the operands the bodies compute themselves (p, P8, dP, dS8 by their own functions).
static void backward_gemms_against_model(void **state)
{
    (void)state;
    enum { NK = 150, SQ = 100, G = 2, DD = 4 };
    static float q8[SQ * G * DD], do8[SQ * G * DD], k8[NK * DD], v8[NK * DD], lse[G * SQ], Dr[G * SQ];
    pp_test_rng r = {pp_test_seed() ^ 0xB90};
    for (int i = 0; i < SQ * G * DD; i++)
        q8[i] = code(&r, PP_FMT_E4M3) * 0x1p-6f, do8[i] = code(&r, PP_FMT_E5M2);
    for (int i = 0; i < NK * DD; i++)
        k8[i] = code(&r, PP_FMT_E4M3) * 0x1p-6f, v8[i] = code(&r, PP_FMT_E4M3);
    for (int i = 0; i < G * SQ; i++)
        lse[i] = 2.0f, Dr[i] = 0.25f;
    for (int i = 0; i < SQ * G * DD; i++)  // keep q8·k8 small: p ≤ 1 well inside exp's range
        q8[i] = (float)pp_round(PP_FMT_E4M3, fmin(fmax(q8[i], -2.0), 2.0), PP_RND_NE, 0);
    for (int i = 0; i < NK * DD; i++)
        k8[i] = (float)pp_round(PP_FMT_E4M3, fmin(fmax(k8[i], -2.0), 2.0), PP_RND_NE, 0);
    pp_attn_te_bwd_cfg c = {.f = cfg(1), .alpha = 0.5f, .scale_s = 448.0f, .xs = 0x1p-8f, .xq = 1.0f, .xk = 0.5f,
                            .xv = 1.0f, .xo = 1.0f, .xdo = 0x1p-10f, .scale_dp = 64.0f, .xdp = 0x1p-6f,
                            .block_n = 128, .dq = PP_ATTN_TE_DQ_BLOCK, .emin_g = E5};
    // dP's entry
    assert_true(pp_attn_te_bwd_dpa(&c, do8, v8, DD) == model_dot(do8, 1, v8, 1, DD, E5, E4));
    // dq of query row 0 (head 0) over the 150 keys, per tile and chained
    static float ds[NK], t[DD], dq[DD], dqc[DD];
    for (int j = 0; j < NK; j++) {
        float p = pp_attn_te_bwd_p(&c, q8, k8 + j * DD, DD, lse[0]), pre;
        ds[j] = pp_attn_te_bwd_ds8(&c, p, pp_attn_te_bwd_dp(&c, do8, v8 + j * DD, DD), Dr[0], &pre);
    }
    pp_attn_te_bwd_dq_row(&c, q8, do8, k8, v8, DD, NK, DD, lse[0], Dr[0], 0, NULL, t, dq);
    c.dq = PP_ATTN_TE_DQ_CHAIN;
    pp_attn_te_bwd_dq_row(&c, q8, do8, k8, v8, DD, NK, DD, lse[0], Dr[0], 0, NULL, t, dqc);
    c.dq = PP_ATTN_TE_DQ_BLOCK;
    int nonzero = 0;
    for (int e = 0; e < DD; e++) {
        float t0 = model_dot(ds, 1, k8 + e, DD, 128, E4, E4), t1 = model_dot(ds + 128, 1, k8 + 128 * DD + e, DD, 22,
                                                                             E4, E4);
        assert_true(dq[e] == ((t0 * 0.5f) * 0x1p-6f) + ((t1 * 0.5f) * 0x1p-6f));
        float tc = pp_attn_te_sm90(t0, ds + 128, 1, k8 + 128 * DD + e, DD, 22, E4, E4);
        assert_true(dqc[e] == (tc * 0.5f) * 0x1p-6f);
        nonzero += dq[e] != 0.0f;
    }
    assert_true(nonzero > 0);
    // dk, dv of key 0 over (head, query): the reduction sequence gathered by hand
    static float p8s[G * SQ], dss[G * SQ], qc[G * SQ], dc[G * SQ];
    float dk[DD], dv[DD];
    pp_attn_te_bwd_dkv_col(&c, q8, do8, G * DD, lse, Dr, SQ, 0, G, k8, v8, DD, dk, dv);
    for (int e = 0; e < DD; e++) {
        int l = 0;
        for (int hg = 0; hg < G; hg++)
            for (int i = 0; i < SQ; i++, l++) {
                const float *qi = q8 + i * G * DD + hg * DD, *doi = do8 + i * G * DD + hg * DD;
                float p = pp_attn_te_bwd_p(&c, qi, k8, DD, lse[hg * SQ + i]), pre;
                p8s[l] = pp_attn_te_bwd_e4m3(p, c.scale_s);
                dss[l] = pp_attn_te_bwd_ds8(&c, p, pp_attn_te_bwd_dp(&c, doi, v8, DD), Dr[hg * SQ + i], &pre);
                qc[l] = qi[e], dc[l] = doi[e];
            }
        assert_true(dv[e] == (model_dot(p8s, 1, dc, 1, G * SQ, E4, E5) * c.xs) * c.xdo);
        assert_true(dk[e] == (model_dot(dss, 1, qc, 1, G * SQ, E4, E4) * c.xq) * c.xdp);
    }
}

// The whole run: 1 and 3 threads the same bits, forward and backward; the sm90 run differs from
// the chain run (here: out or a gradient) and stays within a loose bound of it.
enum { B = 1, S = 40, SKV = 160, H = 2, HKV = 1, D = 64 };
enum { NQ = B * S * H * D, NKV = B * SKV * HKV * D, ROWS = B * H * S };

static void run_same_bits_and_moves(void **state)
{
    (void)state;
    static double q[NQ], k[NKV], vv[NKV], dout[NQ];
    static double o[3][NQ], l[3][ROWS], dq[3][NQ], dk[3][NKV], dv[3][NKV];
    pp_test_rng r = {pp_test_seed() ^ 0x5390};
    for (int i = 0; i < NQ; i++)
        q[i] = pp_round(PP_FMT_BF16, 4 * pp_test_rng_unit(&r) - 2, PP_RND_NE, 0),
        dout[i] = pp_round(PP_FMT_BF16, pp_test_rng_unit(&r) - 0.5, PP_RND_NE, 0);
    for (int i = 0; i < NKV; i++)
        k[i] = pp_round(PP_FMT_BF16, 4 * pp_test_rng_unit(&r) - 2, PP_RND_NE, 0),
        vv[i] = pp_round(PP_FMT_BF16, 2 * pp_test_rng_unit(&r) - 1, PP_RND_NE, 0);
    pp_attn_dims dm = {.b = B, .s_q = S, .s_kv = SKV, .h = H, .h_kv = HKV, .d = D, .causal = 0};
    pp_attn_variant v = attn_te_variant();
    pp_error err;
    for (int run = 0; run < 3; run++) {
        v.mma = run ? PP_ATTN_FP8_MMA_SM90 : PP_ATTN_FP8_MMA_CHAIN;
        if (pp_attn_te_fp8_bwd_cpu(&v, &dm, q, k, vv, dout, o[run], l[run], dq[run], dk[run], dv[run], run == 2 ? 3 : 1,
                                   NULL, NULL, &err))
            fail_msg("%s", err.msg);
    }
    assert_memory_equal(o[1], o[2], sizeof o[1]);
    assert_memory_equal(dq[1], dq[2], sizeof dq[1]);
    assert_memory_equal(dk[1], dk[2], sizeof dk[1]);
    assert_memory_equal(dv[1], dv[2], sizeof dv[1]);
    assert_true(memcmp(l[0], l[1], sizeof l[0]) != 0);  // S moved: lse moved
    double mx = 0, worst = 0;
    for (int i = 0; i < NQ; i++)
        mx = fmax(mx, fabs(dq[0][i])), worst = fmax(worst, fabs(dq[0][i] - dq[1][i]));
    assert_true(worst <= 0.25 * mx);  // the accumulator moves dq by far less than its range
}

// mma sm90-fp8 with fp8 te: block_n must be a multiple of 32 (te's default 128 is); fp8 none refused.
static void refusals(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 0, .s_q = 4, .s_kv = 4, .h = 1, .h_kv = 1, .d = 4, .causal = 0};
    pp_attn_variant v = attn_te_variant();
    v.mma = PP_ATTN_FP8_MMA_SM90;
    char msg[300];
    assert_int_equal(pp_attn_check(&v, &dm, 1, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, msg, sizeof msg),
                     0);
    v.block_n = 48;
    assert_int_not_equal(pp_attn_check(&v, &dm, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, msg,
                                       sizeof msg),
                         0);
    assert_non_null(strstr(msg, "multiple of 32"));
    v.block_n = 64;
    assert_int_equal(pp_attn_check(&v, &dm, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, msg, sizeof msg),
                     0);
    v.fp8 = PP_ATTN_FP8_NONE;
    assert_int_not_equal(pp_attn_check(&v, &dm, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, msg,
                                       sizeof msg),
                         0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dot_truncates_by_hand),
        cmocka_unit_test(promotion_every_128_by_hand),
        cmocka_unit_test(equals_the_model_everywhere),
        cmocka_unit_test(pv_tile_against_model),
        cmocka_unit_test(backward_gemms_against_model),
        cmocka_unit_test(run_same_bits_and_moves),
        cmocka_unit_test(refusals),
    };
    pp_test_report_seed();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
