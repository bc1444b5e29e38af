// test_attention_fp8_scaling.c — FP8 attention's scalings (the attention knob scaling with
// fp8 = "fa3"; kernels/attention.h "FP8 scaling schemes", kernels/attention_fp8.h): the host
// quantisation of q, k (blocks along d) and v (blocks along the keys) by hand for mx and nvfp4
// (ties, saturation at the OCP scale, partial blocks), a hand case of the MX kernel step by step
// (block-scaled dots, P's block scale, P·V's block adds), exact 2^k scalings of v, delayed against
// current scaling, every scheme against the exact attention of its quantised inputs with P kept
// (explain's site p), the block-scale range counters, and the refusals.
// Run: make test (build/rel/tests/test_attention_fp8_scaling).
#include "test_util.h"

#include <math.h>

#include "attention_check.h"
#include "attention_fp8.h"
#include "cpu/attention.h"
#include "ops/attention_fp8_ranges.h"
#include "ops/attention_ref_quantised.h"
#include "ops/op.h"
#include "pipeline/execute.h"

static void fa3(pp_attn_variant *v, pp_attn_fp8_scaling s)
{
    memset(v, 0, sizeof *v);
    v->format = v->cp_accum = v->cp_grad_accum = PP_FMT_BF16;
    v->kernel = PP_ATTN_FLASH;
    v->fp8 = PP_ATTN_FP8_FA3;
    v->fp8_scaling = s;
}

// ---------------------------------------------------------------------------------------------
// Quantisation

// q rows of d = 40: a block of 32 then a partial block of 8. Row 0, block 0: amax 3 → e = 1 − 8,
// X = 2^−7: 3 → 384, 0.1 → 12.8 → 13 (step 1 in [8, 16)); block 1: amax 2^−7 → X = 2^−15:
// 2^−7 → 256, 0.005 → 163.84 → 160 (step 16). Row 1: amax 3.75 → X = 2^−7, 3.75 → 480 saturates
// to 448: the OCP scale (floor of log2 amax) clamps a block's largest element when its
// significand exceeds 1.75 (dequantised 3.5, 6.7% low).
static void mx_q_blocks_along_d(void **state)
{
    (void)state;
    pp_attn_dims dm = {1, 2, 1, 1, 1, 40, 0};
    double q[80] = {0}, e[80], bs[80];
    q[0] = 3.0, q[1] = 0.1, q[32] = 0x1p-7, q[33] = 0.005, q[40] = 3.75, q[41] = -1.0;
    pp_attn_variant v;
    fa3(&v, PP_ATTN_FP8_SCALING_MX);
    assert_true(pp_attn_fp8_quantise_tensor(&v, &dm, 0, q, 0, e, bs) == 1.0);
    assert_true(e[0] == 384.0 && e[1] == 13.0 && bs[0] == 0x1p-7 && bs[31] == 0x1p-7);
    assert_true(e[32] == 256.0 && e[33] == 160.0 && bs[32] == 0x1p-15 && bs[39] == 0x1p-15);
    assert_true(e[40] == 448.0 && e[41] == -128.0 && bs[40] == 0x1p-7);
    assert_true(e[2] == 0.0 && e[34] == 0.0);
    // the exact-site form: the elements themselves, scale 1
    assert_true(pp_attn_fp8_quantise_tensor(&v, &dm, 0, q, 1, e, bs) == 1.0);
    assert_true(e[1] == 0.1 && bs[1] == 1.0);
}

// v [b 1][s_kv 40][h_kv 1][d 2], blocks of 32 along the keys per column: column 0 keys 0..31 amax
// 1 (X = 2^−8), keys 32..39 amax 100 (ilogb 6: X = 2^−2; 400 is a tie of 384 and 416: to even,
// 384); column 1 all 0.5 (X = 2^−9, then a
// partial block of 8 with the same scale).
static void mx_v_blocks_along_keys(void **state)
{
    (void)state;
    pp_attn_dims dm = {1, 1, 40, 1, 1, 2, 0};
    double v[80], e[80], bs[80];
    for (int j = 0; j < 40; j++)
        v[2 * j] = j < 32 ? (j == 5 ? 1.0 : 0.25) : (j == 35 ? 100.0 : 3.0), v[2 * j + 1] = 0.5;
    pp_attn_variant fv;
    fa3(&fv, PP_ATTN_FP8_SCALING_MX);
    pp_attn_fp8_quantise_tensor(&fv, &dm, 2, v, 0, e, bs);
    assert_true(bs[0] == 0x1p-8 && bs[2 * 31] == 0x1p-8 && bs[2 * 32] == 0x1p-2 && bs[2 * 39] == 0x1p-2);
    assert_true(e[2 * 5] == 256.0 && e[0] == 64.0 && e[2 * 35] == 384.0 && e[2 * 33] == 12.0);
    assert_true(bs[1] == 0x1p-9 && bs[2 * 39 + 1] == 0x1p-9 && e[1] == 256.0);
}

// NVFP4, q rows of 16, tensor amax 2688 = 6·448: g = 1. Row 0: block amax 2688 → s = 448,
// 2688 → 6. Row 1: block amax 12 → s = RN_e4m3(2) = 2: 12 → 6, 5 → 2.5, a tie between e2m1's 2
// and 3: to even, 2; −0.7 → −0.35 → −0.5. With tensor amax 1: g = RN_32(1/2688), s = RN_e4m3(1/(6g)).
static void nvfp4_q_blocks(void **state)
{
    (void)state;
    pp_attn_dims dm = {1, 2, 1, 1, 1, 16, 0};
    double q[32] = {0}, e[32], bs[32];
    q[0] = 2688.0, q[16] = 12.0, q[17] = 5.0, q[18] = -0.7;
    pp_attn_variant v;
    fa3(&v, PP_ATTN_FP8_SCALING_NVFP4);
    assert_true(pp_attn_fp8_quantise_tensor(&v, &dm, 0, q, 0, e, bs) == 1.0);
    assert_true(bs[0] == 448.0 && e[0] == 6.0);
    assert_true(bs[16] == 2.0 && e[16] == 6.0 && e[17] == 2.0 && e[18] == -0.5);
    double r[32] = {1.0, 0.25};
    double g = pp_attn_fp8_quantise_tensor(&v, &dm, 0, r, 0, e, bs);
    assert_true(g == (double)(float)(1.0 / 2688.0));
    assert_true(bs[0] == pp_round(PP_FMT_E4M3, 1.0 / (6.0 * g), PP_RND_NE, 0) && e[0] == 6.0);
    assert_true(bs[16] == 0.0 && e[16] == 0.0);  // an all-zero block: scale 0, elements 0
}

// ---------------------------------------------------------------------------------------------
// The MX kernel by hand: b 1, s 1, s_kv 2, h 1, d 2 (one partial block along d; P and v one
// partial block of 2 keys). q = [3.5, 0.5]: X = 2^−7, q8 = [448, 64]. k0 = [1.75, −0.4375]: X =
// 2^−8, [448, −112]; k1 = [0.8125, 0.2265625]: X = 2^−9, [416, 116 → 112 (tie to even)].
// Scores: s_j = 0 ⊕ RN_32(chain_j·X_q·X_kj): 193536·2^−15 = 5.90625, 193536·2^−16 = 2.953125.
// v = [7, −1.5; 2.5, 0.3515625], blocks along the keys: column 0 X = 2^−6, [448, 160]; column 1
// X = 2^−8, [−384, 90 → 88]. P: p_j as FA3's (max offset 8), one block: amax p_0 ≈ 256; P's
// scale 2^e from it (e = 0 when p_0 ≥ 256, −1 below: then p_0·2 > 448 saturates), then
// o_c = 0 ⊕ RN_32((P8_0·v8_0c + P8_1·v8_1c)·2^e·X_vc), out = RN_bf16(o·((1 ⊘ l)·1)).
static void mx_hand_case(void **state)
{
    (void)state;
    double q[2] = {3.5, 0.5}, k[4] = {1.75, -0.4375, 0.8125, 0.2265625}, vv[4] = {7.0, -1.5, 2.5, 0.3515625};
    double out[2], lse[1];
    pp_attn_dims dm = {1, 1, 2, 1, 1, 2, 0};
    pp_attn_variant v;
    fa3(&v, PP_ATTN_FP8_SCALING_MX);
    pp_error e = {0};
    assert_int_equal(pp_attention_cpu(&v, &dm, 0, q, k, vv, NULL, out, lse, NULL, NULL, NULL, 1, &e), 0);
    float sl2 = (float)((double)0x1.6a09e6p-1f * 1.4426950408889634);  // σ·log2 e; X = 1 for mx
    float s[2] = {5.90625f, 2.953125f}, m = s[0], ms = fmaf(m, sl2, -8.0f), p[2], l = 0.0f;
    for (int j = 0; j < 2; j++) {
        p[j] = pp_attn_exp2f(fmaf(s[j], sl2, -ms));
        l = l + p[j];
    }
    int ex = p[0] >= 256.0f ? 0 : -1;
    float P8[2];
    for (int j = 0; j < 2; j++)
        P8[j] = (float)pp_round(PP_FMT_E4M3, ldexp((double)p[j], -ex), (pp_rounding)(PP_RND_NE | PP_RND_SAT), 0);
    print_message("mx hand case: p = %.9g, %.9g; P's scale 2^%d, P8 = %g, %g\n", p[0], p[1], ex, P8[0], P8[1]);
    const float v8[2][2] = {{448.0f, -384.0f}, {160.0f, 88.0f}}, xv[2] = {0x1p-6f, 0x1p-8f};
    for (int c = 0; c < 2; c++) {
        float part = fmaf(P8[1], v8[1][c], fmaf(P8[0], v8[0][c], 0.0f));
        float o = 0.0f + (float)((double)part * ldexp((double)xv[c], ex));
        double want = pp_round(PP_FMT_BF16, (double)(o * ((1.0f / l) * 1.0f)), PP_RND_NE, 0);
        if (!pp_test_same_bits(out[c], want)) {
            pp_test_print_double("got", out[c]);
            pp_test_print_double("want", want);
            fail_msg("out[%d]", c);
        }
    }
    assert_true(pp_test_same_bits(lse[0], fmaf(m, sl2 * 0.693147182f, pp_logf(l * 0x1p-8f))));
}

// ---------------------------------------------------------------------------------------------
// Properties

static void random_bf16(double *x, int64_t n, double scale, pp_test_rng *r)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = pp_round(PP_FMT_BF16, scale * (2.0 * pp_test_rng_unit(r) - 1.0), PP_RND_NE, 0);
}

// v·2^5 leaves every element and block scale of v but one power of two (mx: each 2^e; nvfp4: g,
// hence RN_32(g_P·g_v)); out·2^5 and lse bit for bit, for every scheme (delayed: s_v/2^5).
static void v_scales_exactly(void **state)
{
    (void)state;
    pp_attn_dims dm = {1, 37, 45, 2, 1, 48, 1};
    int64_t nq = dm.s_q * dm.h * dm.d, nkv = dm.s_kv * dm.d, nl = dm.h * dm.s_q;
    double *buf = malloc((size_t)(nq + 3 * nkv + 2 * (nq + nl)) * sizeof *buf);
    double *q = buf, *k = q + nq, *vv = k + nkv, *v2 = vv + nkv, *o = v2 + nkv, *o2 = o + nq, *l = o2 + nq, *l2 = l + nl;
    pp_test_rng r = {pp_test_seed() + 31};
    random_bf16(q, nq, 2.0, &r), random_bf16(k, nkv, 2.0, &r), random_bf16(vv, nkv, 1.0, &r);
    for (int64_t i = 0; i < nkv; i++)
        v2[i] = 32.0 * vv[i];
    const pp_attn_fp8_scaling sch[] = {PP_ATTN_FP8_SCALING_AUTO, PP_ATTN_FP8_SCALING_DELAYED, PP_ATTN_FP8_SCALING_MX,
                                       PP_ATTN_FP8_SCALING_NVFP4};
    int bad = 0;
    for (int i = 0; i < 4; i++) {
        pp_attn_variant v;
        fa3(&v, sch[i]);
        v.fp8_delayed_s[0] = 100.0, v.fp8_delayed_s[1] = 200.0, v.fp8_delayed_s[2] = 256.0;
        pp_error e = {0};
        assert_int_equal(pp_attention_cpu(&v, &dm, 0, q, k, vv, NULL, o, l, NULL, NULL, NULL, 2, &e), 0);
        v.fp8_delayed_s[2] = 8.0;
        assert_int_equal(pp_attention_cpu(&v, &dm, 0, q, k, v2, NULL, o2, l2, NULL, NULL, NULL, 2, &e), 0);
        for (int64_t t = 0; t < nq; t++)
            bad += !pp_test_same_bits(o2[t], 32.0 * o[t]);
        for (int64_t t = 0; t < nl; t++)
            bad += !pp_test_same_bits(l2[t], l[t]);
    }
    if (bad)
        pp_test_report_seed();
    assert_int_equal(bad, 0);
    free(buf);
}

// Delayed scaling whose history holds this step's amaxes is current scaling, bit for bit; a stale
// q history (amax 1, this q's 3.5) saturates q's large elements at 448.
static void delayed_against_current(void **state)
{
    (void)state;
    pp_attn_dims dm = {1, 20, 20, 1, 1, 8, 1};
    double q[160], k[160], vv[160], o1[160], o2[160], l1[20], l2[20], e[160], bs[160];
    pp_test_rng r = {pp_test_seed() + 32};
    random_bf16(q, 160, 1.5, &r), random_bf16(k, 160, 1.5, &r), random_bf16(vv, 160, 0.8, &r);
    q[3] = 3.5, k[9] = -1.75, vv[2] = 0.875;
    pp_attn_variant cur, del;
    fa3(&cur, PP_ATTN_FP8_SCALING_TENSOR);
    fa3(&del, PP_ATTN_FP8_SCALING_DELAYED);
    double hq[2] = {2.0, 3.5}, hk[1] = {1.75}, hv[1] = {0.875};  // most recent first; algo max
    del.fp8_delayed_s[0] = pp_delayed_scale(PP_FMT_E4M3, pp_delayed_amax(hq, 2, PP_AMAX_MAX), 0);
    del.fp8_delayed_s[1] = pp_delayed_scale(PP_FMT_E4M3, pp_delayed_amax(hk, 1, PP_AMAX_MAX), 0);
    del.fp8_delayed_s[2] = pp_delayed_scale(PP_FMT_E4M3, pp_delayed_amax(hv, 1, PP_AMAX_MAX), 0);
    assert_true(del.fp8_delayed_s[0] == 128.0 && del.fp8_delayed_s[1] == 256.0 && del.fp8_delayed_s[2] == 512.0);
    pp_error err = {0};
    assert_int_equal(pp_attention_cpu(&cur, &dm, 0, q, k, vv, NULL, o1, l1, NULL, NULL, NULL, 1, &err), 0);
    assert_int_equal(pp_attention_cpu(&del, &dm, 0, q, k, vv, NULL, o2, l2, NULL, NULL, NULL, 1, &err), 0);
    assert_memory_equal(o1, o2, sizeof o1);
    assert_memory_equal(l1, l2, sizeof l1);
    // most_recent takes 2.0: s = 224; a history of 1.0: s = 448, 3.5·448 saturates
    assert_true(pp_delayed_scale(PP_FMT_E4M3, pp_delayed_amax(hq, 2, PP_AMAX_MOST_RECENT), 0) == 224.0);
    del.fp8_delayed_s[0] = 448.0;
    assert_true(pp_attn_fp8_quantise_tensor(&del, &dm, 0, q, 0, e, bs) == (double)(float)(1.0 / 448.0));
    assert_true(e[3] == 448.0 && bs[3] == 1.0);
}

// Every scheme against the exact attention of its own quantised inputs (attention_ref_quantised,
// which reads pp_attn_fp8_quantise_tensor's values) with P kept in binary32 (explain's site p):
// what is left is binary32 arithmetic and the bf16 store, |out − ref| ≤ 2^−8·|ref| + 2^−20
// (half a bf16 ulp and a margin far below it for the fp32 chains, l ≈ 256: see
// test_attention_fp8's bound without P's 2^−4). A kernel that read other scales than the
// reference's (a block off by one, a scale from the wrong column) is off by far more.
static void every_scheme_against_its_quantised_inputs(void **state)
{
    (void)state;
    pp_attn_dims dm = {1, 40, 40, 2, 2, 40, 1};
    int64_t nq = dm.s_q * dm.h * dm.d, nl = dm.h * dm.s_q;
    double *buf = malloc((size_t)(5 * nq + 2 * nl) * sizeof *buf);
    double *q = buf, *k = q + nq, *vv = k + nq, *o = vv + nq, *ro = o + nq, *l = ro + nq, *rl = l + nl;
    pp_test_rng r = {pp_test_seed() + 33};
    random_bf16(q, nq, 2.0, &r), random_bf16(k, nq, 2.0, &r), random_bf16(vv, nq, 1.0, &r);
    for (int64_t i = 0; i < nq; i += 17)  // outliers in some blocks
        vv[i] *= 32.0;
    const pp_attn_fp8_scaling sch[] = {PP_ATTN_FP8_SCALING_NONE, PP_ATTN_FP8_SCALING_TENSOR,
                                       PP_ATTN_FP8_SCALING_DELAYED, PP_ATTN_FP8_SCALING_MX,
                                       PP_ATTN_FP8_SCALING_NVFP4};
    for (int i = 0; i < 5; i++) {
        pp_attn_variant v;
        fa3(&v, sch[i]);
        v.fp8_delayed_s[0] = 150.0, v.fp8_delayed_s[1] = 160.0, v.fp8_delayed_s[2] = 10.0;
        v.exact_sites = PP_SITE_BIT(PP_SITE_ATTN_P);
        pp_error e = {0};
        if (pp_attention_cpu(&v, &dm, 0, q, k, vv, NULL, o, l, NULL, NULL, NULL, 2, &e))
            fail_msg("scheme %d: %s", (int)sch[i], e.msg);
        pp_attn_ref_opts ro_opts;
        memset(&ro_opts, 0, sizeof ro_opts);
        ro_opts.method = PP_ATTN_REF_FAST;
        ro_opts.b = dm.b, ro_opts.s_q = dm.s_q, ro_opts.s_kv = dm.s_kv, ro_opts.h = dm.h, ro_opts.h_kv = dm.h_kv;
        ro_opts.d = dm.d, ro_opts.causal = dm.causal, ro_opts.threads = 1;
        double bo, bl;
        int rc = pp_attention_ref_quantised(&ro_opts, &v, q, k, vv, ro, rl, &bo, &bl, &e);
        if (rc)
            fail_msg("scheme %d: %s", (int)sch[i], e.msg);
        double worst = 0, lworst = 0;
        int bad = 0;
        for (int64_t t = 0; t < nq; t++) {
            double err = fabs(o[t] - ro[t]);
            worst = fmax(worst, err / (fabs(ro[t]) + 0x1p-12));
            bad += err > 0x1p-8 * fabs(ro[t]) + 0x1p-20;
        }
        for (int64_t t = 0; t < nl; t++)
            lworst = fmax(lworst, fabs(l[t] - rl[t]));
        print_message("scheme %d: max relative out error %.3g, max |lse error| %.3g\n", (int)sch[i], worst, lworst);
        if (bad)
            fail_msg("scheme %d: %d elements beyond the bound", (int)sch[i], bad);
        assert_true(lworst < 1e-5);
    }
    free(buf);
}

// ---------------------------------------------------------------------------------------------
// Range diagnostics of the block scales

// nvfp4: tensor amax 2688 (g = 1), a block of amax 2^−12: s = RN_e4m3(2^−12/6) underflows to 0
// (clamped: a non-zero block without a scale); mx: a block of amax 2^−140: 2^(−140−8) clamps to
// 2^−127 (clamped); a block of amax 3: not clamped.
static void block_scale_clamps_counted(void **state)
{
    (void)state;
    pp_attn_dims dm = {1, 2, 2, 1, 1, 32, 0};
    double q[64] = {0}, k[64] = {0}, vv[64] = {0};
    q[0] = 2688.0, q[32] = 0x1p-12;
    for (int i = 0; i < 64; i++)
        k[i] = 1.0, vv[i] = 1.0;
    pp_range_cell cells[PP_SITE_COUNT];
    pp_ranges R;
    pp_attn_variant v;
    fa3(&v, PP_ATTN_FP8_SCALING_NVFP4);
    pp_ranges_init(&R, cells, 1);
    assert_int_equal(pp_attn_fp8_range_notes(&v, &dm, q, k, vv, &R), 0);
    assert_int_equal(cells[PP_SITE_ATTN_BLOCK_SCALE_Q].count, 4);  // 2 rows × 2 blocks of 16
    assert_int_equal(cells[PP_SITE_ATTN_BLOCK_SCALE_Q].clamped, 1);
    assert_int_equal(cells[PP_SITE_ATTN_QUANT_Q].count, 64);
    assert_int_equal(cells[PP_SITE_ATTN_BLOCK_SCALE_K].clamped, 0);
    q[0] = 3.0, q[32] = 0x1p-140;
    fa3(&v, PP_ATTN_FP8_SCALING_MX);
    pp_ranges_init(&R, cells, 1);
    assert_int_equal(pp_attn_fp8_range_notes(&v, &dm, q, k, vv, &R), 0);
    assert_int_equal(cells[PP_SITE_ATTN_BLOCK_SCALE_Q].count, 2);
    assert_int_equal(cells[PP_SITE_ATTN_BLOCK_SCALE_Q].clamped, 1);
    assert_true(cells[PP_SITE_ATTN_BLOCK_SCALE_V].count == 32 && cells[PP_SITE_ATTN_BLOCK_SCALE_V].clamped == 0);  // a block per column
}

// ---------------------------------------------------------------------------------------------
// Exact sites (precprobe explain)

// quant_q, quant_k, quant_v and p exact: the kernel reads q, k, v themselves and keeps P in
// binary32, so with one key out = RN_bf16(RN_32(p·v)·(1 ⊘ p)) = v bit for bit (RN_32 moves p·v by
// 2^−24 relatively, far inside v's bf16 half-ulp), for every scheme; without them out ≠ v.
static void exact_sites_one_key(void **state)
{
    (void)state;
    pp_attn_dims dm = {1, 1, 1, 1, 1, 40, 0};
    double q[40], k[40], vv[40], out[40], lse[1];
    pp_test_rng r = {pp_test_seed() + 34};
    random_bf16(q, 40, 2.0, &r), random_bf16(k, 40, 2.0, &r), random_bf16(vv, 40, 1.0, &r);
    vv[3] = 0.3515625;  // not an e4m3·2^k value: every scheme moves it
    const pp_attn_fp8_scaling sch[] = {PP_ATTN_FP8_SCALING_NONE, PP_ATTN_FP8_SCALING_TENSOR,
                                       PP_ATTN_FP8_SCALING_MX, PP_ATTN_FP8_SCALING_NVFP4};
    for (int i = 0; i < 4; i++) {
        pp_attn_variant v;
        fa3(&v, sch[i]);
        pp_error e = {0};
        assert_int_equal(pp_attention_cpu(&v, &dm, 0, q, k, vv, NULL, out, lse, NULL, NULL, NULL, 1, &e), 0);
        assert_false(out[3] == vv[3]);
        v.exact_sites = PP_SITE_BIT(PP_SITE_ATTN_QUANT_Q) | PP_SITE_BIT(PP_SITE_ATTN_QUANT_K) |
                        PP_SITE_BIT(PP_SITE_ATTN_QUANT_V) | PP_SITE_BIT(PP_SITE_ATTN_P);
        assert_int_equal(pp_attention_cpu(&v, &dm, 0, q, k, vv, NULL, out, lse, NULL, NULL, NULL, 1, &e), 0);
        for (int c = 0; c < 40; c++)
            if (!pp_test_same_bits(out[c], vv[c]))
                fail_msg("scheme %d: out[%d] = %a, v = %a", (int)sch[i], c, out[c], vv[c]);
    }
}

// nvfp4's block scale exact: tensor amax 2688 (g = 1), a block of amax 13: rounded, s =
// RN_e4m3(13/6 = 2.1667) = 2.25 and 13 → 13/2.25 = 5.78 → 6 (dequantised 13.5); exact, s =
// RN_32(13/6) and 13 → 6 (dequantised 13 within binary32's rounding of s).
static void exact_nvfp4_block_scale(void **state)
{
    (void)state;
    pp_attn_dims dm = {1, 2, 1, 1, 1, 16, 0};
    double q[32] = {2688.0}, e[32], bs[32];
    q[16] = 13.0;
    pp_attn_variant v;
    fa3(&v, PP_ATTN_FP8_SCALING_NVFP4);
    pp_attn_fp8_quantise_tensor(&v, &dm, 0, q, 0, e, bs);
    assert_true(bs[16] == 2.25 && e[16] == 6.0);
    v.exact_sites = PP_SITE_BIT(PP_SITE_ATTN_BLOCK_SCALE_Q);
    pp_attn_fp8_quantise_tensor(&v, &dm, 0, q, 0, e, bs);
    assert_true(bs[16] == (double)(float)(13.0 / 6.0) && e[16] == 6.0);
    assert_true(fabs(e[16] * bs[16] - 13.0) < 13.0 * 0x1p-23);
}

// What explain offers on fp8 attention: quant_q/k/v, p and out on every scheme, the block scales
// on nvfp4 only (mx's are powers of two), FA3's softmax scalars on every scheme (attention.h
// "Exact sites", FP8) but σ' on nvfp4 only (mx's descales are 1: σ' = sl2 rounds nothing).
static void explain_offers_fp8_sites(void **state)
{
    (void)state;
    static const char text[] = "[case]\nname = \"x\"\nop = \"attention\"\n[op]\ns = 8\nh = 2\nd = 16\n"
                               "passes = \"fwd\"\n[variants.mx]\nfp8 = \"fa3\"\nscaling = \"mx\"\n"
                               "[variants.nvfp4]\nfp8 = \"fa3\"\nscaling = \"nvfp4\"\n";
    pp_case c;
    pp_error err = {0};
    assert_int_equal(pp_case_parse(text, strlen(text), "x.toml", &c, &err), PP_OK);
    uint64_t mx = c.op->explain_sites(&c.params, &c.variants[0].knobs);
    uint64_t nv = c.op->explain_sites(&c.params, &c.variants[1].knobs);
    const int every[] = {PP_SITE_ATTN_QUANT_Q, PP_SITE_ATTN_QUANT_K, PP_SITE_ATTN_QUANT_V, PP_SITE_ATTN_P,
                         PP_SITE_ATTN_OUT};
    for (int i = 0; i < 5; i++)
        assert_true(pp_site_exact(mx, every[i]) && pp_site_exact(nv, every[i]));
    for (int s = PP_SITE_ATTN_BLOCK_SCALE_Q; s <= PP_SITE_ATTN_BLOCK_SCALE_P; s++)
        assert_true(!pp_site_exact(mx, s) && pp_site_exact(nv, s));
    const int scalars[] = {PP_SITE_ATTN_SOFTMAX_IN, PP_SITE_ATTN_LSE, PP_SITE_ATTN_ROW_MAX, PP_SITE_ATTN_ROW_SUM,
                           PP_SITE_ATTN_ROW_INV, PP_SITE_ATTN_OUT_SCALE};
    for (int i = 0; i < 6; i++)
        assert_true(pp_site_exact(mx, scalars[i]) && pp_site_exact(nv, scalars[i]));
    assert_true(!pp_site_exact(mx, PP_SITE_ATTN_SOFTMAX_SCALE) && pp_site_exact(nv, PP_SITE_ATTN_SOFTMAX_SCALE));
    pp_case_free(&c);
}

// ---------------------------------------------------------------------------------------------
// Refusals (exit 2 on every backend; the case reader adds FILE:LINE)

static void refusals(void **state)
{
    (void)state;
    pp_attn_dims dm = {0, 8, 8, 2, 1, 4, 0};
    pp_attn_variant v;
    char err[300] = "";
    fa3(&v, PP_ATTN_FP8_SCALING_MX);
    v.fp8 = PP_ATTN_FP8_NONE;
    assert_int_equal(pp_attn_check(&v, &dm, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, err,
                                   sizeof err), 2);
    assert_non_null(strstr(err, "needs fp8 = \"fa3\""));
    fa3(&v, PP_ATTN_FP8_SCALING_MX);
    assert_int_equal(pp_attn_check(&v, &dm, 1, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, err,
                                   sizeof err), 2);
    assert_non_null(strstr(err, "forward only"));
    v.block_n = 48;
    assert_non_null(strstr(pp_attn_fp8_error(&v, 0), "multiple of 32"));
    v.block_n = 64;
    assert_null(pp_attn_fp8_error(&v, 0));
    fa3(&v, PP_ATTN_FP8_SCALING_NVFP4);
    v.block_n = 24;
    assert_non_null(strstr(pp_attn_fp8_error(&v, 0), "multiple of 16"));
    fa3(&v, PP_ATTN_FP8_SCALING_DELAYED);
    assert_non_null(strstr(pp_attn_fp8_error(&v, 0), "amax_history_q"));
    v.fp8_delayed_s[0] = v.fp8_delayed_s[1] = v.fp8_delayed_s[2] = 1.0;
    assert_null(pp_attn_fp8_error(&v, 0));
    fa3(&v, PP_ATTN_FP8_SCALING_NONE);
    v.fp8 = PP_ATTN_FP8_NONE;
    assert_null(pp_attn_fp8_error(&v, 1));  // none without fp8: as before
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mx_q_blocks_along_d),
        cmocka_unit_test(mx_v_blocks_along_keys),
        cmocka_unit_test(nvfp4_q_blocks),
        cmocka_unit_test(mx_hand_case),
        cmocka_unit_test(v_scales_exactly),
        cmocka_unit_test(delayed_against_current),
        cmocka_unit_test(every_scheme_against_its_quantised_inputs),
        cmocka_unit_test(block_scale_clamps_counted),
        cmocka_unit_test(exact_sites_one_key),
        cmocka_unit_test(exact_nvfp4_block_scale),
        cmocka_unit_test(explain_offers_fp8_sites),
        cmocka_unit_test(refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
