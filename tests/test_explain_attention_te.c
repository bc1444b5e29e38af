// test_explain_attention_te.c — explain's exact sites of fp8 = "te" (TransformerEngine's FP8
// attention forward; kernels/attention.h "Exact sites", fp8 = te; kernels/attention_te_fp8_x.h,
// attention_te_exact.c): with no site exact the binary64 row and run give the kernel's bits on every
// knob; hand-computed rows where one site exact (or every site but one) moves out and lse by a
// known amount (P8's store, the exp, the row sums, the division, the correction, P's saturation,
// O's scale and e4m3 store); every site exact gives the exact attention of the inputs (every site
// but the quantisation: of the quantised inputs) within the binary64 bound stated below.
// Run: make test (build/rel/tests/test_explain_attention_te).
#include "test_util.h"

#include "attn_te_variant.h"

#include <math.h>

#include "attention_fp8.h"
#include "attention_te_exact.h"
#include "attention_te_fp8_x.h"
#include "cpu/attention_te_fp8.h"
#include "exact_sites.h"
#include "sites.h"

#define BIT(s) PP_SITE_BIT(PP_SITE_ATTN_##s)

// Every site explain offers fp8 = te (src/ops/op_attention.c explain_sites, online, per tensor).
static const pp_site_mask ALL = BIT(QUANT_Q) | BIT(QUANT_K) | BIT(QUANT_V) | BIT(BLOCK_SCALE_Q) | BIT(BLOCK_SCALE_K) |
                                BIT(BLOCK_SCALE_V) | BIT(SOFTMAX_SCALE) | BIT(SCORES) | BIT(SOFTMAX_IN) |
                                BIT(ROW_MAX) | BIT(EXP) | BIT(ROW_SUM) | BIT(P) | BIT(BLOCK_SCALE_P) |
                                BIT(OUT_PARTIAL) | BIT(ROW_INV) | BIT(LSE) | BIT(OUT_SCALE) | BIT(OUT);
// The host's quantisation sites: every site but these gives the exact attention of the quantised inputs.
static const pp_site_mask QUANT =
    BIT(QUANT_Q) | BIT(QUANT_K) | BIT(QUANT_V) | BIT(BLOCK_SCALE_Q) | BIT(BLOCK_SCALE_K) | BIT(BLOCK_SCALE_V);

// ---------------------------------------------------------------------------------------------
// Rows

// The reference's choices (online, e, per-tile), one tile, σ = 1, P's scale 256 (descale 2^−8
// exact), X_v = 1: test_attention_te_fp8.c's base row.
static pp_attn_te_cfg cfg_base(void)
{
    pp_attn_te_cfg c = {.softmax = PP_ATTN_TE_ONLINE, .base = PP_ATTN_TE_EXP, .pv = PP_ATTN_TE_PV_BLOCK,
                        .block_n = 128, .thr = 0.0, .sigma = 1.0f, .scale_s = 256.0f, .xs = 0x1p-8f, .xv = 1.0f,
                        .xsv = 0x1p-8f};
    return c;
}

// c's scalars as the exact-site row reads them under mask x (σ, X_s, X_v binary32 values here:
// their own sites change nothing but the lse's ln 2)
static pp_attn_te_cfg_x cfg_x(pp_attn_te_cfg c, pp_site_mask x)
{
    pp_attn_te_cfg_x t = {.c = c, .x = x, .sigma = c.sigma, .scale_s = c.scale_s, .xs = c.xs, .xv = c.xv,
                          .xsv = c.xsv,
                          .ln2 = pp_site_exact(x, PP_SITE_ATTN_LSE) ? 0.6931471805599453 : (double)0.693147182f};
    return t;
}

// One row of d = 1 over n ≤ 8 keys (k8, v8 key-major, stride 1).
static void row_x(const pp_attn_te_cfg_x *t, double q8, const double *k8, const double *v8, int64_t n, double *o,
                  double *lse)
{
    double x[8], am;
    pp_attn_te_row_x(t, 0, &q8, k8, v8, 1, n, 1, x, o, lse, &am);
}

// Whether the binary64 a is the binary32 b, bit for bit (NaN: both NaN).
static int same32(double a, float b)
{
    return (a != a && b != b) || (pp_te_is32(a) && memcmp(&(float){(float)a}, &b, sizeof b) == 0);
}

// A random e4m3 value: zeros, subnormals (down to 2^−9), up to ±448, signs mixed.
static double rand_e4m3(pp_test_rng *r)
{
    double u = pp_test_rng_unit(r);
    if (u < 0.05)
        return u < 0.025 ? 0.0 : -0.0;
    double mag = ldexp(1.0 + pp_test_rng_unit(r), (int)(pp_test_rng_unit(r) * 20.0) - 11);
    return pp_round(PP_FMT_E4M3, u < 0.5 ? -mag : mag, (pp_rounding)(PP_RND_NE | PP_RND_SAT), 0);
}

// With mask 0 the binary64 row is the kernel's row bit for bit: the default and 6 other settings
// (two-pass, base-2, chain, tiles of 3 with a threshold, a stale scale_s, the order band) on random
// e4m3 rows of d = 5 over up to 20 keys (zeros, subnormals, 448), and a NaN row.
static void row_mask0_is_the_kernel(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed()};
    enum { N = 20, DD = 5 };
    for (int cfgi = 0; cfgi < 7; cfgi++) {
        pp_attn_te_cfg c = cfg_base();
        c.sigma = 0.0441941738f, c.scale_s = 448.0f, c.xs = (float)(1.0 / 448.0), c.xv = 0.75f;
        c.xsv = c.xv * c.xs;
        if (cfgi == 1)
            c.softmax = PP_ATTN_TE_TWO_PASS;
        if (cfgi == 2)
            c.base = PP_ATTN_TE_EXP2, c.sigma *= 1.44269502f;
        if (cfgi == 3)
            c.pv = PP_ATTN_TE_PV_CHAIN, c.block_n = 3;
        if (cfgi == 4)
            c.block_n = 3, c.thr = 2 * 0.6931471805599453, c.scale_s = 112.0f, c.xs = 4.0f * (float)(1.0 / 448.0);
        if (cfgi == 5)
            c.scale_s = 896.0f, c.xs = (float)(1.0 / 896.0);
        if (cfgi == 6)
            c.order_seed = 0x5eed, c.block_n = 7;
        pp_attn_te_cfg_x t = cfg_x(c, 0);
        for (int rep = 0; rep < 40; rep++) {
            float q8[DD], k8[N * DD], v8[N * DD], x[N], o[DD], lse, am;
            double qd[DD], kd[N * DD], vd[N * DD], xd[N], od[DD], lsed, amd;
            for (int i = 0; i < DD; i++)
                qd[i] = rand_e4m3(&r), q8[i] = (float)qd[i];
            for (int i = 0; i < N * DD; i++)
                kd[i] = rand_e4m3(&r), k8[i] = (float)kd[i], vd[i] = rand_e4m3(&r), v8[i] = (float)vd[i];
            if (rep == 39)
                qd[2] = NAN, q8[2] = NAN;
            int64_t n = 1 + rep % N;
            pp_attn_te_row(&c, rep, q8, k8, v8, DD, n, DD, x, o, &lse, &am);
            pp_attn_te_row_x(&t, rep, qd, kd, vd, DD, n, DD, xd, od, &lsed, &amd);
            for (int e = 0; e < DD; e++)
                if (!same32(od[e], o[e]))
                    fail_msg("config %d row %d o[%d]: %a, the kernel %a", cfgi, rep, e, od[e], (double)o[e]);
            if (!same32(lsed, lse) || !same32(amd, am))
                fail_msg("config %d row %d: lse %a amax %a, the kernel %a %a", cfgi, rep, lsed, amd, (double)lse,
                         (double)am);
        }
    }
}

// x = (0, −1) (q8 = 1, k8 = (0, −1), σ = 1), v8 = (1, 2); p1 = RN_32(e^−1) = 0.36787945.
// As is: P8 = (256, RN_e4m3(94.177) = 96), o = (256 + 192)·2^−8 = 1.75, l = RN_32(1 + p1),
// out = RN_32(1.75/l) = 1.27935. p exact: P8 = (256, 256·p1), o = RN_32(1 + 2·p1),
// out = RN_32(o/l) = 1.26894: P8's e4m3 store moved out by +0.0104. The exact attention is
// (1 + 2e^−1)/(1 + e^−1) = 1.2689414.
static void p_exact_by_hand(void **state)
{
    (void)state;
    const double k8[] = {0, -1}, v8[] = {1, 2};
    double p1 = (double)pp_expf(-1.0f), l = (double)(float)(1.0 + p1), o, lse;
    pp_attn_te_cfg_x t = cfg_x(cfg_base(), 0);
    row_x(&t, 1.0, k8, v8, 2, &o, &lse);
    assert_true(o == (double)(float)(1.75 / l));
    assert_true(lse == (double)pp_logf((float)l));
    t = cfg_x(cfg_base(), BIT(P));
    row_x(&t, 1.0, k8, v8, 2, &o, &lse);
    assert_true(o == (double)(float)((double)(float)(1.0 + 2.0 * p1) / l));
    assert_true(fabs((double)(float)(1.75 / l) - o - 0.0104) < 1e-4);
}

// The same row, every site exact but one: but exp: out = (1 + 2·p1)/(1 + p1), lse = log(1 + p1)
// (binary64: every other step exact or one binary64 rounding); but row_sum: l = RN_32(1 + e^−1),
// out = (1 + 2e^−1)/l; every site: (1 + 2e^−1)/(1 + e^−1), lse = log(1 + e^−1).
static void every_site_but_one_by_hand(void **state)
{
    (void)state;
    const double k8[] = {0, -1}, v8[] = {1, 2};
    double p1 = (double)pp_expf(-1.0f), e = exp(-1.0), o, lse;
    pp_attn_te_cfg_x t = cfg_x(cfg_base(), ALL & ~BIT(EXP));
    row_x(&t, 1.0, k8, v8, 2, &o, &lse);
    assert_true(o == (1.0 + 2.0 * p1) / (1.0 + p1));
    assert_true(lse == log(1.0 + p1));
    t = cfg_x(cfg_base(), ALL & ~BIT(ROW_SUM));
    row_x(&t, 1.0, k8, v8, 2, &o, &lse);
    assert_true(o == (1.0 + 2.0 * e) / (double)(float)(1.0 + e));
    t = cfg_x(cfg_base(), ALL);
    row_x(&t, 1.0, k8, v8, 2, &o, &lse);
    assert_true(o == (1.0 + 2.0 * e) / (1.0 + e));
    assert_true(lse == log(1.0 + e));
    assert_true(o != (1.0 + 2.0 * p1) / (1.0 + p1));  // the exp's rounding shows in binary64
}

// Two-pass (P normalised before its scale): every site but row_inv: p = (RN_32(1/l), RN_32(e^−1/l))
// with l = 1 + e^−1, out = p0 + 2·p1 (no final division; the P·V sums exact).
static void two_pass_row_inv_by_hand(void **state)
{
    (void)state;
    const double k8[] = {0, -1}, v8[] = {1, 2};
    double e = exp(-1.0), l = 1.0 + e, o, lse;
    pp_attn_te_cfg c = cfg_base();
    c.softmax = PP_ATTN_TE_TWO_PASS;
    pp_attn_te_cfg_x t = cfg_x(c, ALL & ~BIT(ROW_INV) & ~BIT(ROW_MAX));
    row_x(&t, 1.0, k8, v8, 2, &o, &lse);
    assert_true(o == (double)(float)(1.0 / l) + 2.0 * (double)(float)(e / l));
    t = cfg_x(c, ALL & ~BIT(ROW_MAX));
    row_x(&t, 1.0, k8, v8, 2, &o, &lse);
    assert_true(fabs(o - (1.0 + 2.0 * e) / l) <= 4 * 0x1p-53 * o);
}

// Two tiles of one key (online), x = (0, 1), v8 = (1, 2): the second tile's max corrects the first
// by corr = exp(0 − 1). Every site but row_max: corr = p1 = RN_32(e^−1), the rest binary64:
// o = p1 + 2, l = p1 + 1, out = (2 + p1)/(1 + p1), lse = 1 + log(1 + p1); every site: e^−1 there.
static void correction_row_max_by_hand(void **state)
{
    (void)state;
    const double k8[] = {0, 1}, v8[] = {1, 2};
    double p1 = (double)pp_expf(-1.0f), e = exp(-1.0), o, lse;
    pp_attn_te_cfg c = cfg_base();
    c.block_n = 1;
    pp_attn_te_cfg_x t = cfg_x(c, ALL & ~BIT(ROW_MAX));
    row_x(&t, 1.0, k8, v8, 2, &o, &lse);
    assert_true(o == (2.0 + p1) / (1.0 + p1));
    assert_true(lse == 1.0 + log(1.0 + p1));
    t = cfg_x(c, ALL);
    row_x(&t, 1.0, k8, v8, 2, &o, &lse);
    assert_true(o == (2.0 + e) / (1.0 + e));
    // as is: o = RN_32(2 + p1) (P8 = 256 both tiles), l = RN_32(1 + p1)
    t = cfg_x(c, 0);
    row_x(&t, 1.0, k8, v8, 2, &o, &lse);
    assert_true(o == (double)(float)((double)(float)(2.0 + p1) / (double)(float)(1.0 + p1)));
}

// A stale scale_s = 512 (test_attention_te_fp8.c p_saturates): x = (1, 1), P8 = e4m3,sat(512) = 448
// loses 12.5%: out 0.875. p exact: P8 = 512 (no cast, no saturation), out = 1 exactly.
static void p_saturation_exact(void **state)
{
    (void)state;
    pp_attn_te_cfg c = cfg_base();
    c.sigma = 0.5f, c.xv = 0.25f, c.scale_s = 512.0f, c.xs = 0x1p-9f;
    const double k8[] = {1, 1}, v8[] = {2, 6};
    double o, lse;
    pp_attn_te_cfg_x t = cfg_x(c, 0);
    row_x(&t, 2.0, k8, v8, 2, &o, &lse);
    assert_true(o == 0.875);
    t = cfg_x(c, BIT(P));
    row_x(&t, 2.0, k8, v8, 2, &o, &lse);
    assert_true(o == 1.0);
}

// Special rows with every site exact: no key (o = 0, lse −Inf), a zero q (uniform: out the mean
// of v, lse log n), a NaN score (out and lse NaN), subnormal products (q8 = ±k8 = 2^−9: S = ±2^−18
// exactly, out = tanh(2^−18) in binary64; as is, P8 = RN_e4m3(256·exp(±2^−18)) = 256 for both
// keys and out is 0).
static void special_rows_every_site_exact(void **state)
{
    (void)state;
    pp_attn_te_cfg_x t = cfg_x(cfg_base(), ALL);
    const double k8[] = {1, -1, 0.5}, v8[] = {1, 2, 4};
    double o, lse;
    row_x(&t, 1.0, k8, v8, 0, &o, &lse);
    assert_true(o == 0.0 && lse == -INFINITY);
    row_x(&t, 0.0, k8, v8, 3, &o, &lse);
    assert_true(fabs(o - 7.0 / 3.0) <= 4 * 0x1p-53 * o && lse == log(3.0));
    row_x(&t, NAN, k8, v8, 3, &o, &lse);
    assert_true(isnan(o) && isnan(lse));
    const double ks[] = {0x1p-9, -0x1p-9}, vs[] = {1, -1};
    row_x(&t, 0x1p-9, ks, vs, 2, &o, &lse);
    assert_true(fabs(o - tanh(0x1p-18)) <= 4 * 0x1p-53 && o > 0);  // (e^a − e^−a)/(e^a + e^−a)
    t = cfg_x(cfg_base(), 0);  // as is: exp(±2^−18) rounds to 1 ± ulp, P8 256 both: 0
    row_x(&t, 0x1p-9, ks, vs, 2, &o, &lse);
    assert_true(o == 0.0);
}

// ---------------------------------------------------------------------------------------------
// Runs

enum { B = 1, S = 29, SKV = 37, H = 4, HKV = 2, D = 8 };
enum { NQ = B * S * H * D, NK = B * SKV * HKV * D, ROWS = B * H * S };


// bf16 inputs, q's head 3 six times larger (test_attention_te_fp8.c's)
static void inputs(double *q, double *k, double *v)
{
    pp_test_rng r = {pp_test_seed()};
    for (int i = 0; i < NQ; i++)
        q[i] = pp_round(PP_FMT_BF16, (4.0 * pp_test_rng_unit(&r) - 2.0) * (i % (H * D) >= 3 * D ? 6.0 : 1.0),
                        PP_RND_NE, 0);
    for (int i = 0; i < NK; i++) {
        k[i] = pp_round(PP_FMT_BF16, 4.0 * pp_test_rng_unit(&r) - 2.0, PP_RND_NE, 0);
        v[i] = pp_round(PP_FMT_BF16, 2.0 * pp_test_rng_unit(&r) - 1.0, PP_RND_NE, 0);
    }
}

// The run with mask 0 (and with only sites te does not have: dq, the CP merges) is the kernel's
// run bit for bit on every knob: default, two-pass, base-2, chain, tiles of 16 with threshold 2, a
// stale scale_s, a given scale_o, tensor-delayed and unscaled q, k, v, the order band, mma sm90-fp8.
static void run_mask0_is_the_kernel(void **state)
{
    (void)state;
    static double q[NQ], k[NK], vv[NK], o1[NQ], o2[NQ], l1[ROWS], l2[ROWS];
    inputs(q, k, vv);
    pp_attn_dims dm = {B, S, SKV, H, HKV, D, 1};
    for (int cfgi = 0; cfgi < 12; cfgi++) {
        pp_attn_variant v = attn_te_variant();
        switch (cfgi) {
        case 1: v.te_softmax = PP_ATTN_TE_TWO_PASS; break;
        case 2: v.te_exp = PP_ATTN_TE_EXP2; break;
        case 3: v.te_pv = PP_ATTN_TE_PV_CHAIN, v.block_n = 16; break;
        case 4: v.block_n = 16, v.te_rescale = 2; break;
        case 5: v.te_scale_s = 896.0; break;
        case 6: v.te_scale_o = 112.0; break;
        case 7:
            v.fp8_scaling = PP_ATTN_FP8_SCALING_DELAYED;
            v.fp8_delayed_s[0] = 448.0 / 1.5, v.fp8_delayed_s[1] = 224.0, v.fp8_delayed_s[2] = 448.0;
            break;
        case 8: v.fp8_scaling = PP_ATTN_FP8_SCALING_NONE; break;
        case 9: v.order_seed = 0xabc, v.block_n = 16; break;
        case 10: v.mma = PP_ATTN_FP8_MMA_SM90; break;  // Hopper's FP8 accumulation (pp_attn_te_sm90)
        case 11: v.mma = PP_ATTN_FP8_MMA_SM90, v.te_pv = PP_ATTN_TE_PV_CHAIN, v.block_n = 32; break;
        default: break;
        }
        pp_error err;
        pp_attn_te_amax a1, a2;
        assert_int_equal(pp_attn_te_fp8_cpu(&v, &dm, q, k, vv, o1, l1, 2, &a1, &err), PP_OK);
        char msg[200];
        for (int pass = 0; pass < 2; pass++) {
            v.exact_sites = pass ? PP_SITE_BIT(PP_SITE_ATTN_DQ) | PP_SITE_BIT(PP_SITE_ATTN_CP_OUT_MERGE) : 0;
            assert_int_equal(pp_attn_te_run_x(&v, &dm, q, k, vv, o2, l2, 3, &a2, msg, sizeof msg), 0);
            if (memcmp(o1, o2, sizeof o1) || memcmp(l1, l2, sizeof l1))
                fail_msg("config %d pass %d: the binary64 run differs from the kernel's", cfgi, pass);
            assert_memory_equal(&a1, &a2, sizeof a1);
        }
        // the op's CPU entry takes the binary64 run for a non-zero mask: the same bits here too
        assert_int_equal(pp_attn_te_fp8_cpu(&v, &dm, q, k, vv, o2, l2, 1, NULL, &err), PP_OK);
        assert_memory_equal(o1, o2, sizeof o1);
    }
}

// O's scale and store by hand: scaling none and σ = 1 (the inputs are their own e4m3 values),
// one query (1, 1) over two keys of zeros (x = (0, 0), p = (1, 1), l = 2), v = ((1, 1), (2,
// 0.625)). With X_s exact (block_scale_p: 1/448 in binary64) O = (1.5, 0.8125) exactly; as is,
// amax_o = 1.5, scale_o = RN_32(448/1.5), X_o = RN_32(1/scale_o): out = X_o·(448, RN_e4m3(242.67) =
// 240) = (1.5, 0.80357): O's e4m3 store costs out[1] 0.0089. out exact: out = O.
static void out_store_by_hand(void **state)
{
    (void)state;
    pp_attn_dims dm = {1, 1, 2, 1, 1, 2, 0};
    const double q[] = {1, 1}, k[] = {0, 0, 0, 0}, vv[] = {1, 1, 2, 0.625};
    double out[2], lse[1];
    pp_attn_variant v = attn_te_variant();
    v.fp8_scaling = PP_ATTN_FP8_SCALING_NONE, v.sigma_given = 1, v.sigma = 1.0;
    char msg[200];
    v.exact_sites = BIT(BLOCK_SCALE_P);
    assert_int_equal(pp_attn_te_run_x(&v, &dm, q, k, vv, out, lse, 1, NULL, msg, sizeof msg), 0);
    double so = (double)(float)(448.0 / 1.5), xo = (double)(float)(1.0 / so);
    assert_true(out[0] == xo * 448.0 && out[1] == xo * 240.0);
    assert_true(fabs(0.8125 - out[1] - 0.0089) < 1e-4);
    assert_true(lse[0] == (double)pp_logf(2.0f));
    v.exact_sites = BIT(BLOCK_SCALE_P) | BIT(OUT);
    assert_int_equal(pp_attn_te_run_x(&v, &dm, q, k, vv, out, lse, 1, NULL, msg, sizeof msg), 0);
    assert_true(out[0] == 1.5 && out[1] == 0.8125);
    // out_scale exact: scale_o = 448/1.5 and X_o = 1.5/448 in binary64: out[0] = 1.5 within binary64,
    // out[1] still the e4m3 240 (the store's own rounding)
    v.exact_sites = BIT(BLOCK_SCALE_P) | BIT(OUT_SCALE);
    assert_int_equal(pp_attn_te_run_x(&v, &dm, q, k, vv, out, lse, 1, NULL, msg, sizeof msg), 0);
    assert_true(fabs(out[0] - 1.5) <= 4 * 0x1p-53 && fabs(out[1] - 240.0 * 1.5 / 448.0) <= 4 * 0x1p-53);
}

// `run --ranges` for te (pp_attn_te_ranges_x), the row of out_store_by_hand as is: S = (0, 0),
// x = (0, 0), p = (1, 1) (exp), P8 = 448·p = (448, 448) (e4m3, both within a factor 2 of 448), m =
// 0, l = 2, lse = log 2, O8 = (448, RN_e4m3(242.67) = 240) (both near e4m3's max).
static void range_notes_by_hand(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 1, .s_q = 1, .s_kv = 2, .h = 1, .h_kv = 1, .d = 2, .causal = 0};
    const double q[] = {1, 1}, k[] = {0, 0, 0, 0}, vv[] = {1, 1, 2, 0.625};
    pp_attn_variant v = attn_te_variant();
    v.fp8_scaling = PP_ATTN_FP8_SCALING_NONE, v.sigma_given = 1, v.sigma = 1.0;
    pp_range_cell cells[PP_SITE_COUNT];
    pp_ranges R;
    pp_ranges_init(&R, cells, 1);
    char msg[200];
    assert_int_equal(pp_attn_te_ranges_x(&v, &dm, q, k, vv, 3, &R, msg, sizeof msg), 0);
    const pp_range_cell *c = cells;
    assert_int_equal(c[PP_SITE_ATTN_SCORES].count, 2);
    assert_true(c[PP_SITE_ATTN_SCORES].amax == 0.0);
    assert_int_equal(c[PP_SITE_ATTN_SOFTMAX_IN].count, 2);
    assert_int_equal(c[PP_SITE_ATTN_EXP].count, 2);
    assert_true(c[PP_SITE_ATTN_EXP].amax == 1.0);
    assert_int_equal(c[PP_SITE_ATTN_P].count, 2);
    assert_true(c[PP_SITE_ATTN_P].amax == 448.0 && c[PP_SITE_ATTN_P].near_max == 2 && R.fmt[PP_SITE_ATTN_P] == PP_FMT_E4M3);
    assert_int_equal(c[PP_SITE_ATTN_ROW_MAX].count, 1);
    assert_true(c[PP_SITE_ATTN_ROW_SUM].amax == 2.0);
    assert_true(c[PP_SITE_ATTN_LSE].amax == (double)pp_logf(2.0f));
    assert_int_equal(c[PP_SITE_ATTN_OUT].count, 2);
    assert_true(c[PP_SITE_ATTN_OUT].amax == 448.0 && c[PP_SITE_ATTN_OUT].min_nz == 240.0 &&
                c[PP_SITE_ATTN_OUT].near_max == 2);
    assert_int_equal(c[PP_SITE_ATTN_OUT].overflow + c[PP_SITE_ATTN_OUT].underflow + c[PP_SITE_ATTN_P].underflow, 0);
    // a stale scale_s of 512: P8 = RN_e4m3,sat(512) = 448, noted against 512 (saturation, not an Inf)
    v.te_scale_s = 512.0;
    pp_ranges_init(&R, cells, 1);
    assert_int_equal(pp_attn_te_ranges_x(&v, &dm, q, k, vv, 1, &R, msg, sizeof msg), 0);
    assert_true(c[PP_SITE_ATTN_P].amax == 448.0 && c[PP_SITE_ATTN_P].overflow == 0);
    assert_int_equal(pp_attn_te_ranges_x(&v, &dm, q, k, vv, 1, NULL, msg, sizeof msg), 0);  // no R: nothing
}

// The exact attention in long double of q, k, v (values as given), α = 1/√d; per row also
// A = α·max_j Σ_e |q_e k_je| (the bound's scale) and max |v|.
static void exact_attention(const pp_attn_dims *dm, const double *q, const double *k, const double *vv, double *out,
                            double *lse, double *amax_x)
{
    long double a = 1.0L / sqrtl((long double)dm->d);
    for (int64_t r = 0; r < dm->b * dm->h * dm->s_q; r++) {
        int64_t row, kv, n = pp_attn_te_row_span(dm, r, &row, &kv), st = dm->h_kv * dm->d;
        long double s[SKV], m = -INFINITY, l = 0, ax = 0;
        for (int64_t j = 0; j < n; j++) {
            long double acc = 0, aa = 0;
            for (int64_t e = 0; e < dm->d; e++)
                acc += (long double)q[row * dm->d + e] * k[kv + j * st + e],
                    aa += fabsl((long double)q[row * dm->d + e] * k[kv + j * st + e]);
            s[j] = acc * a, m = fmaxl(m, s[j]), ax = fmaxl(ax, aa * a);
        }
        for (int64_t j = 0; j < n; j++)
            l += expl(s[j] - m);
        for (int64_t e = 0; e < dm->d; e++) {
            long double o = 0;
            for (int64_t j = 0; j < n; j++)
                o += expl(s[j] - m) * vv[kv + j * st + e];
            out[row * dm->d + e] = (double)(o / l);
        }
        lse[r] = (double)(m + logl(l)), amax_x[r] = (double)ax;
    }
}

// Every site exact against the exact attention of the inputs; every site but q, k, v's
// quantisation and descales against the exact attention of the quantised values (elem·X, exact in
// binary64). Bound (u = 2^−53; A the row's α·max_j Σ|q·k|, n its keys, one tile): S's binary64
// sum and σ = X_q·X_k·α (α within 2u) give |Δx| ≤ (d + 3)·u·A; the argument x − m (m carries Δx
// too) ≤ (2d + 8)·u·A; exp ≤ 2u more relative: ρ_p ≤ ((2d + 8)·A + 2)·u; l adds (n + 1)·u, P8 = p·s,
// X_s, the P·V sums and O's sum (n + 6)·u; out = o/l: |Δout| ≤ (2ρ_p + (2n + 14)·u)·max|v|;
// |Δlse| ≤ ((3d + 11)·A + n + 4 + |lse|)·u. With d = 8, A ≤ 70 both stay below 1e-12: any binary32
// step left (2^−24) breaks them.
static void every_site_exact_is_exact_attention(void **state)
{
    (void)state;
    static double q[NQ], k[NK], vv[NK], o[NQ], l[ROWS], ro[NQ], rl[ROWS], ax[ROWS];
    static double qe[NQ], ke[NK], ve[NK], bs[NQ];
    inputs(q, k, vv);
    pp_attn_dims dm = {B, S, SKV, H, HKV, D, 1};
    pp_attn_variant v = attn_te_variant();
    char msg[200];
    for (int pass = 0; pass < 2; pass++) {
        v.exact_sites = pass ? ALL & ~QUANT : ALL;
        assert_int_equal(pp_attn_te_run_x(&v, &dm, q, k, vv, o, l, 2, NULL, msg, sizeof msg), 0);
        if (pass) {  // the values the kernel reads: elem·X
            double xq = pp_attn_fp8_quantise_tensor(&v, &dm, 0, q, 0, qe, bs);
            double xk = pp_attn_fp8_quantise_tensor(&v, &dm, 1, k, 0, ke, bs);
            double xv = pp_attn_fp8_quantise_tensor(&v, &dm, 2, vv, 0, ve, bs);
            for (int i = 0; i < NQ; i++)
                qe[i] *= xq;
            for (int i = 0; i < NK; i++)
                ke[i] *= xk, ve[i] *= xv;
            exact_attention(&dm, qe, ke, ve, ro, rl, ax);
        } else {
            exact_attention(&dm, q, k, vv, ro, rl, ax);
        }
        const double *vs = pass ? ve : vv;
        double vmax = 0, worst = 0;
        for (int i = 0; i < NK; i++)
            vmax = fmax(vmax, fabs(vs[i]));
        const double u = 0x1p-53;
        for (int64_t r = 0; r < ROWS; r++) {
            int64_t row, kv, n = pp_attn_te_row_span(&dm, r, &row, &kv);
            double rho = ((2 * D + 8) * ax[r] + 2) * u;
            double bo = (2 * rho + (2.0 * n + 14) * u) * vmax, bl = ((3 * D + 11) * ax[r] + n + 4 + fabs(rl[r])) * u;
            assert_true(bo < 1e-12 && bl < 1e-12);
            if (!(fabs(l[r] - rl[r]) <= bl))
                fail_msg("pass %d row %lld: lse %.17g, exact %.17g, bound %g", pass, (long long)r, l[r], rl[r], bl);
            for (int64_t e = 0; e < D; e++) {
                double d = fabs(o[row * D + e] - ro[row * D + e]);
                worst = fmax(worst, d);
                if (!(d <= bo))
                    fail_msg("pass %d row %lld out[%lld]: %.17g, exact %.17g, bound %g", pass, (long long)r,
                             (long long)e, o[row * D + e], ro[row * D + e], bo);
            }
        }
        assert_true(worst > 0 && worst < 1e-13);  // binary64's steps show, binary32's would not pass
    }
    // a NaN input with the quant sites exact stays in its rows (no per-tensor scale carries it)
    q[0] = NAN;
    v.exact_sites = ALL;
    assert_int_equal(pp_attn_te_run_x(&v, &dm, q, k, vv, o, l, 1, NULL, msg, sizeof msg), 0);
    assert_true(isnan(o[0]) && isnan(l[0]) && isfinite(o[NQ - 1]) && isfinite(l[ROWS - 1]));
}

// The CPU device refuses a mask on pp_attn_te_run (its rows are binary32: the CUDA path must not
// ignore one); pp_attn_te_run_x refuses another fp8.
static void refusals(void **state)
{
    (void)state;
    pp_attn_dims dm = {1, 2, 2, 1, 1, 2, 0};
    const double q[4] = {1, 2, 3, 4};
    double out[4], lse[2];
    pp_attn_variant v = attn_te_variant();
    v.exact_sites = BIT(OUT);
    int threads = 1;
    pp_attn_te_device dev = pp_attn_te_cpu_device(&threads);
    char msg[200] = "";
    assert_int_equal(pp_attn_te_run(&dev, &v, &dm, q, q, q, out, lse, NULL, msg, sizeof msg), 2);
    assert_non_null(strstr(msg, "exact sites"));
    v.fp8 = PP_ATTN_FP8_FA3;
    assert_int_equal(pp_attn_te_run_x(&v, &dm, q, q, q, out, lse, 1, NULL, msg, sizeof msg), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(row_mask0_is_the_kernel),
        cmocka_unit_test(p_exact_by_hand),
        cmocka_unit_test(every_site_but_one_by_hand),
        cmocka_unit_test(two_pass_row_inv_by_hand),
        cmocka_unit_test(correction_row_max_by_hand),
        cmocka_unit_test(p_saturation_exact),
        cmocka_unit_test(special_rows_every_site_exact),
        cmocka_unit_test(run_mask0_is_the_kernel),
        cmocka_unit_test(out_store_by_hand),
        cmocka_unit_test(range_notes_by_hand),
        cmocka_unit_test(every_site_exact_is_exact_attention),
        cmocka_unit_test(refusals),
    };
    pp_test_report_seed();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
