// test_attention_te_fp8_bwd.c — fp8 = "te"'s backward, TransformerEngine's FP8 DPA backward
// (kernels/attention.h "FP8 (fp8 = te)", "Backward:"; kernels/attention_te_fp8_bwd.h,
// attention_te_bwd_run.c): a hand-computed row and column (every scale point: D, dP, dS and its
// e4m3 code, P8, dQ, dK, dV and their descales), dQ per tile against the chain, a saturating dS8,
// zeros, NaN; the whole run (any thread count, a loop device running the GPU's decomposition,
// causal and GQA, determinism, the FP8 stores and amaxes); the exact-quantised gradients' widening
// against the plain reference; refusals.
// Run: make test (build/rel/tests/test_attention_te_fp8_bwd).
#include "test_util.h"

#include "attn_te_variant.h"

#include <math.h>

#include "attention_check.h"
#include "attention_fp8.h"
#include "attention_ref.h"
#include "attention_te_bwd_run.h"
#include "attention_te_fp8_bwd.h"
#include "cpu/attention.h"
#include "cpu/attention_te_fp8.h"
#include "cpu/attention_te_fp8_bwd.h"
#include "ops/attention_ref_quantised.h"

// σ = 1, base e, P's scale 256 (descale 2^−8), every other descale 1, α = 0.5, scale_dP 4.
static pp_attn_te_bwd_cfg cfg_base(void)
{
    pp_attn_te_bwd_cfg c = {.f = {.softmax = PP_ATTN_TE_ONLINE, .base = PP_ATTN_TE_EXP, .pv = PP_ATTN_TE_PV_BLOCK,
                                  .block_n = 128, .sigma = 1.0f, .scale_s = 256.0f, .xs = 0x1p-8f, .xv = 1.0f,
                                  .xsv = 0x1p-8f},
                            .alpha = 0.5f, .scale_s = 256.0f, .xs = 0x1p-8f, .xq = 1.0f, .xk = 1.0f, .xv = 1.0f,
                            .xo = 1.0f, .xdo = 1.0f, .scale_dp = 4.0f, .xdp = 0.25f, .block_n = 128,
                            .dq = PP_ATTN_TE_DQ_BLOCK};
    return c;
}

// The hand row, d = 2, two keys, lse 0: q8 = (1, 2), k8 = ((2, −1), (0, 0)) give S = (0, 0) and
// p = (1, 1); dO8 = (1, 2), v8 = ((1, 1), (2, −1)) give dP = (3, 0); O8 = (0.5, 0.25) gives D = 1.
static const float Q8[2] = {1, 2}, DO8[2] = {1, 2}, O8[2] = {0.5f, 0.25f};
static const float K8[4] = {2, -1, 0, 0}, V8[4] = {1, 1, 2, -1};

// D = 0.5·1 + 0.25·2 = 1; dP's amax 3. dS = p·(dP − D)·α = (1·2·0.5, 1·(−1)·0.5) = (1, −0.5);
// dS8 = e4m3(dS·4) = (4, −2); dq = (4·(2, −1) + (−2)·(0, 0))·X_k·X_dP = (8, −4)·0.25 = (2, −1);
// with X_k = 0.5: (1, −0.5).
static void row_by_hand(void **state)
{
    (void)state;
    pp_attn_te_bwd_cfg c = cfg_base();
    float D, am, t[2], dq[2];
    pp_attn_te_bwd_pre_row(&c, Q8, O8, DO8, K8, V8, 2, 2, 2, 2, 0.0f, 0, NULL, &D, &am);
    assert_true(D == 1.0f && am == 3.0f);
    c.ds_amax = 1;  // max |dS| = max(|1·(3 − 1)·0.5|, |1·(0 − 1)·0.5|) = 1; one visible key: 1
    pp_attn_te_bwd_pre_row(&c, Q8, O8, DO8, K8, V8, 2, 2, 2, 2, 0.0f, 0, NULL, &D, &am);
    assert_true(D == 1.0f && am == 1.0f);
    pp_attn_te_bwd_pre_row(&c, Q8, O8, DO8, K8 + 2, V8 + 2, 2, 2, 1, 2, 0.0f, 0, NULL, &D, &am);
    assert_true(am == 0.5f);
    c.ds_amax = 0;  // max |dP| counts every key, masked or not: 3 even when one key is visible
    pp_attn_te_bwd_pre_row(&c, Q8, O8, DO8, K8, V8, 2, 2, 1, 2, 0.0f, 0, NULL, &D, &am);
    assert_true(am == 3.0f);
    float pre;
    assert_true(pp_attn_te_bwd_dp(&c, DO8, V8, 2) == 3.0f && pp_attn_te_bwd_dp(&c, DO8, V8 + 2, 2) == 0.0f);
    assert_true(pp_attn_te_bwd_p(&c, Q8, K8, 2, 0.0f) == 1.0f && pp_attn_te_bwd_p(&c, Q8, K8 + 2, 2, 0.0f) == 1.0f);
    assert_true(pp_attn_te_bwd_ds8(&c, 1.0f, 3.0f, D, &pre) == 4.0f && pre == 4.0f);
    assert_true(pp_attn_te_bwd_ds8(&c, 1.0f, 0.0f, D, &pre) == -2.0f);
    pp_attn_te_bwd_dq_row(&c, Q8, DO8, K8, V8, 2, 2, 2, 0.0f, D, 0, NULL, t, dq);
    assert_true(dq[0] == 2.0f && dq[1] == -1.0f);
    c.xk = 0.5f;
    pp_attn_te_bwd_dq_row(&c, Q8, DO8, K8, V8, 2, 2, 2, 0.0f, D, 0, NULL, t, dq);
    assert_true(dq[0] == 1.0f && dq[1] == -0.5f);
    c.dq = PP_ATTN_TE_DQ_CHAIN;  // one tile: the chain is the same
    pp_attn_te_bwd_dq_row(&c, Q8, DO8, K8, V8, 2, 2, 2, 0.0f, D, 0, NULL, t, dq);
    assert_true(dq[0] == 1.0f && dq[1] == -0.5f);
}

// The column of each key over the one row: P8 = e4m3(1·256) = 256, dv_j = 256·dO8·2^−8·X_dO =
// (1, 2) for both keys; dk_0 = 4·q8·X_q·X_dP = (1, 2), dk_1 = −2·q8·0.25 = (−0.5, −1).
// X_q = 2, X_dO = 0.5: dk_0 = (2, 4), dv_0 = (0.5, 1).
static void column_by_hand(void **state)
{
    (void)state;
    pp_attn_te_bwd_cfg c = cfg_base();
    const float lse[1] = {0}, D[1] = {1};
    float dk[2], dv[2];
    pp_attn_te_bwd_dkv_col(&c, Q8, DO8, 2, lse, D, 1, 0, 1, K8, V8, 2, dk, dv);
    assert_true(dk[0] == 1.0f && dk[1] == 2.0f && dv[0] == 1.0f && dv[1] == 2.0f);
    pp_attn_te_bwd_dkv_col(&c, Q8, DO8, 2, lse, D, 1, 0, 1, K8 + 2, V8 + 2, 2, dk, dv);
    assert_true(dk[0] == -0.5f && dk[1] == -1.0f && dv[0] == 1.0f && dv[1] == 2.0f);
    c.xq = 2.0f;
    c.xdo = 0.5f;  // dP halves too: (1.5, 0) and D (0.5): dS = (0.5, −0.25), dS8 = (2, −1)
    const float D2[1] = {0.5f};
    pp_attn_te_bwd_dkv_col(&c, Q8, DO8, 2, lse, D2, 1, 0, 1, K8, V8, 2, dk, dv);
    assert_true(dk[0] == 1.0f && dk[1] == 2.0f && dv[0] == 0.5f && dv[1] == 1.0f);
    // a row that does not see the key (i0 past the last row): zeros
    pp_attn_te_bwd_dkv_col(&c, Q8, DO8, 2, lse, D, 1, 1, 1, K8, V8, 2, dk, dv);
    assert_true(dk[0] == 0.0f && dk[1] == 0.0f && dv[0] == 0.0f && dv[1] == 0.0f);
}

// scale_dP 1024 (a stale history): dS·1024 = (1024, −512) saturate to ±448 (cvt.rn.satfinite;
// the reference's torch cast would give NaN): dq = 448·(2, −1)·RN_32(1/1024).
static void ds8_saturates(void **state)
{
    (void)state;
    pp_attn_te_bwd_cfg c = cfg_base();
    c.scale_dp = 1024.0f, c.xdp = 0x1p-10f;
    float pre, t[2], dq[2];
    assert_true(pp_attn_te_bwd_ds8(&c, 1.0f, 3.0f, 1.0f, &pre) == 448.0f && pre == 1024.0f);
    assert_true(pp_attn_te_bwd_ds8(&c, 1.0f, 0.0f, 1.0f, &pre) == -448.0f);
    pp_attn_te_bwd_dq_row(&c, Q8, DO8, K8, V8, 2, 2, 2, 0.0f, 1.0f, 0, NULL, t, dq);
    assert_true(dq[0] == 896.0f * 0x1p-10f && dq[1] == -448.0f * 0x1p-10f);
    // subnormal dS8: dS = 2^−10 ·... with scale 1: e4m3's smallest subnormal is 2^−9
    c.scale_dp = 1.0f;
    assert_true(pp_attn_te_bwd_ds8(&c, 1.0f, 1.0f + 0x1p-8f, 1.0f, &pre) == 0x1p-9f);  // 2^−9 exactly
    assert_true(pp_attn_te_bwd_ds8(&c, 1.0f, 1.0f + 0x1p-11f, 1.0f, &pre) == 0.0f);     // flushed: 2^−12 < 2^−10
}

// dQ per key tile (block 1: each key its own tile) against one chain: per-tile rounds each
// tile's RN_32(RN_32(t·X_k)·X_dP) and adds; the chain descales the sum once. X_k = 0.3 (binary32)
// makes the two differ for t = (4, −2): by hand in binary32 below.
static void dq_per_tile_against_chain(void **state)
{
    (void)state;
    pp_attn_te_bwd_cfg c = cfg_base();
    c.xk = 0.3f, c.block_n = 1;
    float t[2], dq[2], dc[2];
    pp_attn_te_bwd_dq_row(&c, Q8, DO8, K8, V8, 2, 2, 2, 0.0f, 1.0f, 0, NULL, t, dq);
    // tile 0: t = 4·(2, −1) = (8, −4); tile 1: t = −2·(0, 0) = (0, 0) (k8_1 zero)
    float e0 = 0.0f + (8.0f * 0.3f) * 0.25f, e1 = 0.0f + (-4.0f * 0.3f) * 0.25f;
    assert_true(dq[0] == e0 + (0.0f * 0.3f) * 0.25f && dq[1] == e1 + (-0.0f * 0.3f) * 0.25f);
    c.dq = PP_ATTN_TE_DQ_CHAIN;
    pp_attn_te_bwd_dq_row(&c, Q8, DO8, K8, V8, 2, 2, 2, 0.0f, 1.0f, 0, NULL, t, dc);
    assert_true(dc[0] == (8.0f * 0.3f) * 0.25f && dc[1] == (-4.0f * 0.3f) * 0.25f);
    // keys (2, −1) and (3, −1.5) (S = 0, p = 1; dP = 3 for both, so dS8 = (4, 4)), X_k = X_dP =
    // 0.1: per tile RN(RN(8·X_k)·X_dP) ⊕ RN(RN(12·X_k)·X_dP) vs the chain's RN(RN(20·X_k)·X_dP)
    const float k2[4] = {2, -1, 3, -1.5f}, v2[4] = {1, 1, 1, 1};
    c.xk = 0.1f, c.xdp = 0.1f;
    c.dq = PP_ATTN_TE_DQ_BLOCK;
    pp_attn_te_bwd_dq_row(&c, Q8, DO8, k2, v2, 2, 2, 2, 0.0f, 1.0f, 0, NULL, t, dq);
    float a = (8.0f * 0.1f) * 0.1f, b = (12.0f * 0.1f) * 0.1f;
    assert_true(dq[0] == a + b);
    c.dq = PP_ATTN_TE_DQ_CHAIN;
    pp_attn_te_bwd_dq_row(&c, Q8, DO8, k2, v2, 2, 2, 2, 0.0f, 1.0f, 0, NULL, t, dc);
    assert_true(dc[0] == (20.0f * 0.1f) * 0.1f);
    assert_true(dq[0] != dc[0]);  // the knob moves dq here (by one ulp)
}

// Zeros: dO8 = 0 gives D = 0, dP = 0, dS8 = +0 and dq = dk = dv = +0. NaN: a NaN in dO8 makes D,
// dP's amax, dS8 and the row's dq NaN.
static void zeros_and_nan(void **state)
{
    (void)state;
    pp_attn_te_bwd_cfg c = cfg_base();
    const float z[2] = {0, 0}, lse[1] = {0}, Dz[1] = {0};
    float D, am, t[2], dq[2], dk[2], dv[2], pre;
    pp_attn_te_bwd_pre_row(&c, Q8, O8, z, K8, V8, 2, 2, 2, 2, 0.0f, 0, NULL, &D, &am);
    assert_true(D == 0.0f && am == 0.0f);
    pp_attn_te_bwd_dq_row(&c, Q8, z, K8, V8, 2, 2, 2, 0.0f, D, 0, NULL, t, dq);
    assert_true(dq[0] == 0.0f && !signbit(dq[0]) && dq[1] == 0.0f);
    pp_attn_te_bwd_dkv_col(&c, Q8, z, 2, lse, Dz, 1, 0, 1, K8, V8, 2, dk, dv);
    assert_true(dk[0] == 0.0f && dv[0] == 0.0f && dv[1] == 0.0f);
    const float dn[2] = {NAN, 1};
    pp_attn_te_bwd_pre_row(&c, Q8, O8, dn, K8, V8, 2, 2, 2, 2, 0.0f, 0, NULL, &D, &am);
    assert_true(isnan(D) && isnan(am));
    assert_true(isnan(pp_attn_te_bwd_ds8(&c, 1.0f, NAN, 0.0f, &pre)));
    pp_attn_te_bwd_dq_row(&c, Q8, dn, K8, V8, 2, 2, 2, 0.0f, 1.0f, 0, NULL, t, dq);
    assert_true(isnan(dq[0]) && isnan(dq[1]));
}

// ---------------------------------------------------------------------------------------------
// The whole run

enum { B = 2, S = 19, SKV = 23, H = 4, HKV = 2, D = 8 };

static double bf16(double x)
{
    return pp_round(PP_FMT_BF16, x, PP_RND_NE, 0);
}


static void inputs(double *q, double *k, double *v, double *dout)
{
    pp_test_rng r = {pp_test_seed() ^ 0xB3D};
    for (int i = 0; i < B * S * H * D; i++)
        q[i] = bf16(4.0 * pp_test_rng_unit(&r) - 2.0), dout[i] = bf16(pp_test_rng_unit(&r) - 0.5);
    for (int i = 0; i < B * SKV * HKV * D; i++)
        k[i] = bf16(4.0 * pp_test_rng_unit(&r) - 2.0), v[i] = bf16(2.0 * pp_test_rng_unit(&r) - 1.0);
}

// A loop device: every row, then every column, alone, last to first (the GPU's one thread per row
// and per column, in another order).
static int loop_pre(void *ctx, const pp_attn_te_bwd_cfg *c, const pp_attn_dims *dm, const float *q8, const float *k8,
                    const float *v8, const float *o8, const float *do8, const float *lse, float *Dr, float *amax_dp,
                    char *errbuf, size_t errlen)
{
    (void)ctx, (void)errbuf, (void)errlen;
    for (int64_t r = dm->b * dm->h * dm->s_q - 1; r >= 0; r--)
        pp_attn_te_bwd_pre_at(c, dm, q8, k8, v8, o8, do8, lse, r, NULL, Dr, amax_dp);
    return 0;
}

static int loop_grads(void *ctx, const pp_attn_te_bwd_cfg *c, const pp_attn_dims *dm, const float *q8,
                      const float *k8, const float *v8, const float *do8, const float *lse, const float *Dr, float *dq,
                      float *dk, float *dv, char *errbuf, size_t errlen)
{
    (void)ctx, (void)errbuf, (void)errlen;
    float t[D];
    for (int64_t j = dm->b * dm->h_kv * dm->s_kv - 1; j >= 0; j--)
        pp_attn_te_bwd_dkv_at(c, dm, q8, k8, v8, do8, lse, Dr, j, dk, dv);
    for (int64_t r = dm->b * dm->h * dm->s_q - 1; r >= 0; r--)
        pp_attn_te_bwd_dq_at(c, dm, q8, k8, v8, do8, lse, Dr, r, NULL, t, dq);
    return 0;
}

static int same_bits(const double *a, const double *b, int64_t n)
{
    return memcmp(a, b, sizeof(double) * (size_t)n) == 0;
}

enum { NQ = B * S * H * D, NKV = B * SKV * HKV * D, ROWS = B * H * S };

static void run_any_device_same_bits(void **state)
{
    (void)state;
    static double q[NQ], k[NKV], vv[NKV], dout[NQ];
    static double o[3][NQ], l[3][ROWS], dq[3][NQ], dk[3][NKV], dv[3][NKV];
    inputs(q, k, vv, dout);
    for (int cfg = 0; cfg < 4; cfg++) {
        pp_attn_dims dm = {.b = B, .s_q = S, .s_kv = SKV, .h = H, .h_kv = HKV, .d = D, .causal = cfg & 1};
        pp_attn_variant v = attn_te_variant();
        v.te_grad_e4m3 = cfg >> 1 & 1;
        v.te_dq = cfg >> 1 & 1 ? PP_ATTN_TE_DQ_CHAIN : PP_ATTN_TE_DQ_BLOCK;
        v.te_ds_amax = cfg == 3;
        pp_error err;
        pp_attn_te_bwd_amax a1, al;
        if (pp_attn_te_fp8_bwd_cpu(&v, &dm, q, k, vv, dout, o[0], l[0], dq[0], dk[0], dv[0], 1, &a1, NULL, &err))
            fail_msg("%s", err.msg);
        assert_int_equal(pp_attn_te_fp8_bwd_cpu(&v, &dm, q, k, vv, dout, o[1], l[1], dq[1], dk[1], dv[1], 3, NULL,
                                                NULL, &err),
                         PP_OK);
        int th = 1;
        pp_attn_te_device fdev = pp_attn_te_cpu_device(&th);
        pp_attn_te_bwd_device loop = {.pre = loop_pre, .grads = loop_grads, .ctx = NULL};
        char msg[200];
        assert_int_equal(pp_attn_te_bwd_run(&fdev, &loop, &v, &dm, q, k, vv, dout, o[2], l[2], dq[2], dk[2], dv[2],
                                            &al, NULL, msg, sizeof msg),
                         0);
        for (int i = 1; i < 3; i++)
            assert_true(same_bits(o[0], o[i], NQ) && same_bits(l[0], l[i], ROWS) && same_bits(dq[0], dq[i], NQ) &&
                        same_bits(dk[0], dk[i], NKV) && same_bits(dv[0], dv[i], NKV));
        assert_true(a1.amax_dp == al.amax_dp && a1.amax_dq == al.amax_dq && a1.amax_dk == al.amax_dk);
        // through pp_attention_cpu (the op's entry) the same bits
        assert_int_equal(pp_attention_cpu(&v, &dm, 1, q, k, vv, dout, o[1], l[1], dq[1], dk[1], dv[1], 2, &err),
                         PP_OK);
        assert_true(same_bits(dq[0], dq[1], NQ) && same_bits(dk[0], dk[1], NKV) && same_bits(dv[0], dv[1], NKV));
        // the stores: current scales from the amaxes, every gradient X times a code of its format
        pp_format_id f = v.te_grad_e4m3 ? PP_FMT_E4M3 : PP_FMT_E5M2;
        assert_true(a1.scale_dq == pp_tensor_scale(f, a1.amax_dq) && a1.scale_dv == pp_tensor_scale(f, a1.amax_dv));
        assert_true(a1.scale_dp == pp_tensor_scale(PP_FMT_E4M3, a1.amax_dp) && a1.amax_dp > 0);
        assert_true(a1.scale_do == pp_tensor_scale(f, a1.amax_do));
        double xq = pp_tensor_scale_inv(a1.scale_dq), xk = pp_tensor_scale_inv(a1.scale_dk);
        for (int i = 0; i < NQ; i++)
            assert_true(pp_round(f, dq[0][i] / xq, PP_RND_NE, 0) == dq[0][i] / xq);
        for (int i = 0; i < NKV; i++)
            assert_true(pp_round(f, dk[0][i] / xk, PP_RND_NE, 0) == dk[0][i] / xk);
    }
}

// The gradients against the exact gradients of the quantised inputs (the pipeline's
// exact-quantised reference): every gradient within the sum of its rounding steps. A loose,
// structural bound: |error| ≤ 0.25·max|exact| + 2^−4·|exact| covers the e5m2 store (2^−3
// relative), dS8's e4m3 (2^−4 relative, plus its absolute floor) and P8 — a wrong scale or a
// transposed GEMM is off by O(max).
static void grads_against_quantised_reference(void **state)
{
    (void)state;
    static double q[NQ], k[NKV], vv[NKV], dout[NQ], o[NQ], l[ROWS], dq[NQ], dk[NKV], dv[NKV];
    static double ro[NQ], rl[ROWS], rq[NQ], rk[NKV], rv[NKV];
    inputs(q, k, vv, dout);
    pp_attn_dims dm = {.b = B, .s_q = S, .s_kv = SKV, .h = H, .h_kv = HKV, .d = D, .causal = 1};
    pp_attn_variant v = attn_te_variant();
    pp_error err;
    assert_int_equal(pp_attn_te_fp8_bwd_cpu(&v, &dm, q, k, vv, dout, o, l, dq, dk, dv, 2, NULL, NULL, &err), PP_OK);
    pp_attn_ref_opts ro_ = {.method = PP_ATTN_REF_FAST, .b = B, .s_q = S, .s_kv = SKV, .h = H, .h_kv = HKV, .d = D,
                            .causal = 1, .threads = 2};
    double bound[5];
    assert_int_equal(pp_attention_ref_quantised_bwd(&ro_, &v, q, k, vv, dout, ro, rl, rq, rk, rv, bound, &err), PP_OK);
    const double *got[3] = {dq, dk, dv}, *want[3] = {rq, rk, rv};
    const int64_t n[3] = {NQ, NKV, NKV};
    for (int t = 0; t < 3; t++) {
        double mx = 0, worst = 0;
        for (int64_t i = 0; i < n[t]; i++)
            mx = fmax(mx, fabs(want[t][i]));
        assert_true(mx > 0);
        for (int64_t i = 0; i < n[t]; i++)
            worst = fmax(worst, fabs(got[t][i] - want[t][i]) / (0.25 * mx + 0x1p-4 * fabs(want[t][i])));
        if (!(worst <= 1.0))
            fail_msg("tensor %d: error %.3g of the loose bound", t, worst);
        assert_true(bound[2 + t] < 1e-9 * mx);  // the reference's own bound is tiny
    }
}

// The exact-quantised gradients' widening (q, k, v split in two binary32 halves at d' = 4d, dO
// through [E, E, 0, 0], dk's blocks 0 and 2 doubled where σ is 1/√d) on inputs the quantisation
// leaves alone (scaling none; values that are e4m3 and e5m2 codes): the plain reference's bits on
// the same values, within the two references' bounds.
static void quantised_reference_widening(void **state)
{
    (void)state;
    static double q[NQ], k[NKV], vv[NKV], dout[NQ];
    static double a[5][NQ], b[5][NQ];
    pp_test_rng r = {pp_test_seed() ^ 0x51};
    for (int i = 0; i < NQ; i++)
        q[i] = (double)(int)(8 * pp_test_rng_unit(&r)) / 4 - 1, dout[i] = (double)(int)(4 * pp_test_rng_unit(&r)) / 2 - 1;
    for (int i = 0; i < NKV; i++)
        k[i] = (double)(int)(8 * pp_test_rng_unit(&r)) / 4 - 1, vv[i] = (double)(int)(8 * pp_test_rng_unit(&r)) / 8;
    pp_attn_variant v = attn_te_variant();
    v.fp8_scaling = PP_ATTN_FP8_SCALING_NONE;
    pp_attn_ref_opts o = {.method = PP_ATTN_REF_FAST, .b = B, .s_q = S, .s_kv = SKV, .h = H, .h_kv = HKV, .d = D,
                          .causal = 1, .threads = 2, .backward = 1};
    pp_error err;
    double bq[5];
    pp_attn_ref_bounds bp;
    assert_int_equal(pp_attention_ref_quantised_bwd(&o, &v, q, k, vv, dout, a[0], a[1], a[2], a[3], a[4], bq, &err),
                     PP_OK);
    assert_int_equal(pp_attention_ref(&o, q, k, vv, dout, b[0], b[1], b[2], b[3], b[4], &bp, &err), PP_OK);
    const int64_t n[5] = {NQ, ROWS, NQ, NKV, NKV};
    const double pb[5] = {bp.out, bp.lse, bp.dq, bp.dk, bp.dv};
    for (int t = 0; t < 5; t++)
        for (int64_t i = 0; i < n[t]; i++)
            if (!(fabs(a[t][i] - b[t][i]) <= bq[t] + pb[t]))
                fail_msg("tensor %d [%lld]: %a vs %a (bounds %g, %g)", t, (long long)i, a[t][i], b[t][i], bq[t], pb[t]);
}

// Range notes (kernels/ranges.h): D once per row, dP and dS once per visible (row, key), the
// stores once per element (dq per q head, dk and dv per kv head), in their formats; and the
// outputs the same bits with notes as without.
static void range_notes(void **state)
{
    (void)state;
    static double q[NQ], k[NKV], vv[NKV], dout[NQ], o[2][NQ], l[2][ROWS], dq[2][NQ], dk[2][NKV], dv[2][NKV];
    static pp_range_cell cells[PP_SITE_COUNT * H];
    inputs(q, k, vv, dout);
    pp_attn_dims dm = {.b = B, .s_q = S, .s_kv = SKV, .h = H, .h_kv = HKV, .d = D, .causal = 1};
    pp_attn_variant v = attn_te_variant();
    pp_ranges R;
    pp_ranges_init(&R, cells, H);
    pp_error err;
    assert_int_equal(pp_attn_te_fp8_bwd_cpu(&v, &dm, q, k, vv, dout, o[0], l[0], dq[0], dk[0], dv[0], 2, NULL, &R,
                                            &err),
                     PP_OK);
    assert_int_equal(pp_attn_te_fp8_bwd_cpu(&v, &dm, q, k, vv, dout, o[1], l[1], dq[1], dk[1], dv[1], 2, NULL, NULL,
                                            &err),
                     PP_OK);
    assert_true(same_bits(dq[0], dq[1], NQ) && same_bits(dk[0], dk[1], NKV) && same_bits(dv[0], dv[1], NKV));
    int64_t pairs = 0;
    for (int64_t i = 0; i < S; i++)
        pairs += pp_attn_te_bwd_visible(&dm, i);
    int64_t cd = 0, cdp = 0, cds = 0, cq = 0, ck = 0;
    for (int h = 0; h < H; h++) {
        cd += cells[PP_SITE_ATTN_D * H + h].count, cdp += cells[PP_SITE_ATTN_DP * H + h].count;
        cds += cells[PP_SITE_ATTN_DS * H + h].count, cq += cells[PP_SITE_ATTN_DQ * H + h].count;
        ck += cells[PP_SITE_ATTN_DK * H + h].count;
    }
    assert_true(cd == ROWS && cdp == pairs * B * H && cds == pairs * B * H && cq == NQ && ck == NKV);
    assert_true(R.fmt[PP_SITE_ATTN_DS] == PP_FMT_E4M3 && R.fmt[PP_SITE_ATTN_DQ] == PP_FMT_E5M2);
    assert_true(cells[PP_SITE_ATTN_DK * H + HKV].count == 0);  // dk's cells are the kv heads'
}

// passes fwd+bwd is accepted for fp8 te; the other refusals stay (cp_world > 1, mx scaling).
static void refusals(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 0, .s_q = 4, .s_kv = 4, .h = 1, .h_kv = 1, .d = 4, .causal = 0};
    pp_attn_variant v = attn_te_variant();
    char msg[300];
    assert_int_equal(pp_attn_check(&v, &dm, 1, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, msg,
                                   sizeof msg),
                     0);
    v.cp_world = 2;
    assert_int_not_equal(pp_attn_check(&v, &dm, 1, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, msg,
                                       sizeof msg),
                         0);
    v = attn_te_variant();
    v.fp8_scaling = PP_ATTN_FP8_SCALING_MX;
    assert_int_not_equal(pp_attn_check(&v, &dm, 1, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, msg,
                                       sizeof msg),
                         0);
    v = attn_te_variant();
    v.te_scale_dp = -1;
    assert_int_not_equal(pp_attn_check(&v, &dm, 1, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, msg,
                                       sizeof msg),
                         0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(row_by_hand),
        cmocka_unit_test(column_by_hand),
        cmocka_unit_test(ds8_saturates),
        cmocka_unit_test(dq_per_tile_against_chain),
        cmocka_unit_test(zeros_and_nan),
        cmocka_unit_test(run_any_device_same_bits),
        cmocka_unit_test(grads_against_quantised_reference),
        cmocka_unit_test(quantised_reference_widening),
        cmocka_unit_test(range_notes),
        cmocka_unit_test(refusals),
    };
    pp_test_report_seed();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
