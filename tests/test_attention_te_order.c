// test_attention_te_order.c — the order band on fp8 = "te" (kernels/attention.h "FP8 (fp8 = te)",
// order band; kernels/attention_te_fp8.h): S's dot over d and P8·V8's chains over a tile walk the
// MMA k-chunks of 16 in the seeded order (the plain chain at seed 0), within the reordering bound
// of an fp32 sum; the whole run at seed 0 is the nominal one, a nonzero seed moves bits, the same
// on every device, and stays within the bounds the nominal run is tested against; the backward's
// dP, D, dQ and dK/dV chains walk them too.
// Run: make test (build/rel/tests/test_attention_te_order).
#include "test_util.h"

#include <math.h>

#include "attention_te_fp8.h"
#include "attention_te_fp8_bwd.h"
#include "attention_te_run.h"
#include "cpu/attention_te_fp8.h"
#include "cpu/attention_te_fp8_bwd.h"
#include "ops/attention_ref_quantised.h"

// γ_n = n·u/(1 − n·u), u = 2^−24: any order of an fp32 chain of n + 1 terms (n additions) is
// within γ_n·Σ|terms| of the exact sum (Higham, Accuracy and Stability, (3.4)); products of e4m3
// values are exact in binary32, so the fmaf chain adds exact terms.
static double gamma_n(int64_t n)
{
    double u = 0x1p-24;
    return (double)n * u / (1.0 - (double)n * u);
}

// The chain of terms t[0..n) in the walk order of GEMM `gemm` (chunks of 16 from index 0, chunk u
// as 16·u + (a·r + c) mod 16, pp_attn_mma_chunk's draw), written out here from the specification.
static float chain_in_walk(uint64_t seed, int gemm, const float *x, const float *y, int64_t n, float acc)
{
    for (int64_t cb = 0; cb < n; cb += 16) {
        int64_t a, c;
        pp_attn_mma_chunk(seed, gemm, cb / 16, &a, &c);
        for (int64_t r = 0; r < 16; r++) {
            int64_t i = cb + (a * r + c) % 16;
            if (i < n)
                acc = fmaf(x[i], y[i], acc);
        }
    }
    return acc;
}

// ---------------------------------------------------------------------------------------------
// Operations: S's dot and P·V's tile chain

// Products 256·256 = 2^16 (index 0), then 15 of 2^−4·2^−4 = 2^−8 (all e4m3 values). The plain
// chain: 2^16 + 2^−8 is a tie (half an ulp of 2^16 = 2^−7) to even, 2^16, each time: S = 2^16
// exactly, 15·2^−8 below the exact sum. An order that adds some small products first keeps them.
static void fill_cancel(float *q, float *k, int64_t d)
{
    for (int64_t e = 0; e < d; e++)
        q[e] = k[e] = e == 0 ? 256.0f : 0.0625f;
}

static void dot_walks_mma_chunks(void **state)
{
    (void)state;
    float q[16], k[16];
    fill_cancel(q, k, 16);
    pp_attn_te_cfg c = {.order_seed = 0};
    assert_true(pp_attn_te_dot(&c, q, k, 16) == 0x1p16f);  // by hand, above
    double exact = 65536.0 + 15 * 0x1p-8, bound = gamma_n(15) * exact;
    int moved = 0;
    for (uint64_t s = 1; s <= 16; s++) {
        c.order_seed = s;
        float v = pp_attn_te_dot(&c, q, k, 16);
        assert_true(pp_f32_bits(v) == pp_f32_bits(chain_in_walk(s, PP_ATTN_MMA_S, q, k, 16, 0.0f)));
        if (fabs((double)v - exact) > bound)
            fail_msg("seed %llu: S = %a, exact %a, bound %a", (unsigned long long)s, (double)v, exact, bound);
        moved += v != 0x1p16f;
    }
    assert_true(moved > 0);  // an order with two small products before the 2^16 keeps them
}

// Random e4m3 rows, d = 1..40 (partial chunks): seed 0 is the ascending chain, bit for bit; a seed
// is the walk's chain and within the reordering bound of the exact dot.
static void dot_seed0_is_the_plain_chain(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed()};
    float q[40], k[40];
    for (int64_t d = 1; d <= 40; d++) {
        double ex = 0, abs_ = 0;
        for (int64_t e = 0; e < d; e++) {
            q[e] = (float)pp_round(PP_FMT_E4M3, 8.0 * pp_test_rng_unit(&r) - 4.0, PP_RND_NE, 0);
            k[e] = (float)pp_round(PP_FMT_E4M3, 8.0 * pp_test_rng_unit(&r) - 4.0, PP_RND_NE, 0);
            ex += (double)q[e] * k[e], abs_ += fabs((double)q[e] * k[e]);  // exact: ≤ 40 terms of 9 bits
        }
        float plain = 0.0f;
        for (int64_t e = 0; e < d; e++)
            plain = fmaf(q[e], k[e], plain);
        pp_attn_te_cfg c = {.order_seed = 0};
        assert_true(pp_f32_bits(pp_attn_te_dot(&c, q, k, d)) == pp_f32_bits(plain));
        c.order_seed = (uint64_t)d * 7919;
        float v = pp_attn_te_dot(&c, q, k, d);
        assert_true(pp_f32_bits(v) == pp_f32_bits(chain_in_walk(c.order_seed, PP_ATTN_MMA_S, q, k, d, 0.0f)));
        assert_true(fabs((double)v - ex) <= gamma_n(d - 1) * abs_);
    }
}

// P·V over one tile of 16 keys (per-tile form, X_v = X_s = 1 so o = t): P8 = (256, 2^−4 × 15),
// v8 the same in both columns: at seed 0 o = 2^16 (the ties above); a seed is the walk's chain of
// GEMM PV (one draw for both columns: both get the same bits), within the bound.
static void pv_tile_walks_mma_chunks(void **state)
{
    (void)state;
    float p8[16], v1[16], v[32];
    fill_cancel(p8, v1, 16);
    for (int j = 0; j < 16; j++)
        v[2 * j] = v[2 * j + 1] = v1[j];
    pp_attn_te_cfg c = {.pv = PP_ATTN_TE_PV_BLOCK, .xv = 1.0f, .xs = 1.0f, .order_seed = 0};
    float o[2] = {0, 0};
    pp_attn_te_pv_tile(&c, p8, v, 2, 0, 16, 2, o);
    assert_true(o[0] == 0x1p16f && o[1] == 0x1p16f);
    double exact = 65536.0 + 15 * 0x1p-8, bound = gamma_n(15) * exact;
    int moved = 0;
    for (uint64_t s = 1; s <= 16; s++) {
        c.order_seed = s;
        o[0] = o[1] = 0;
        pp_attn_te_pv_tile(&c, p8, v, 2, 0, 16, 2, o);
        assert_true(pp_f32_bits(o[0]) == pp_f32_bits(chain_in_walk(s, PP_ATTN_MMA_PV, p8, v1, 16, 0.0f)));
        assert_true(pp_f32_bits(o[0]) == pp_f32_bits(o[1]));
        assert_true(fabs((double)o[0] - exact) <= bound);
        moved += o[0] != 0x1p16f;
    }
    assert_true(moved > 0);
    // the chain form carries o through the tile: the walk starts from o's value
    c.pv = PP_ATTN_TE_PV_CHAIN, c.order_seed = 3;
    o[0] = o[1] = 1.0f;
    pp_attn_te_pv_tile(&c, p8, v, 2, 0, 16, 2, o);
    assert_true(pp_f32_bits(o[0]) == pp_f32_bits(chain_in_walk(3, PP_ATTN_MMA_PV, p8, v1, 16, 1.0f)));
}

// ---------------------------------------------------------------------------------------------
// The whole run

enum { B = 1, S = 37, SKV = 45, H = 4, HKV = 2, D = 40 };

static double bf16(double x)
{
    return pp_round(PP_FMT_BF16, x, PP_RND_NE, 0);
}

static void inputs(double *q, double *k, double *v)
{
    pp_test_rng r = {pp_test_seed() ^ 0x7465u};
    for (int i = 0; i < B * S * H * D; i++)
        q[i] = bf16(4.0 * pp_test_rng_unit(&r) - 2.0);
    for (int i = 0; i < B * SKV * HKV * D; i++)
        k[i] = bf16(4.0 * pp_test_rng_unit(&r) - 2.0), v[i] = bf16(2.0 * pp_test_rng_unit(&r) - 1.0);
}

static pp_attn_variant te_variant(uint64_t seed, pp_attn_te_softmax sm)
{
    pp_attn_variant v;
    memset(&v, 0, sizeof v);
    v.format = v.cp_accum = v.cp_grad_accum = PP_FMT_BF16;
    v.kernel = PP_ATTN_FLASH;
    v.fp8 = PP_ATTN_FP8_TE;
    v.block_n = 16;  // three tiles of the 45 keys: the online corrections and per-tile sums
    v.te_softmax = sm;
    v.order_seed = seed;
    return v;
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

static int same(const double *a, const double *b, int64_t n)
{
    return memcmp(a, b, sizeof(double) * (size_t)n) == 0;
}

// Seed 0 is the nominal run: the variant's order_seed 0 and the configuration's are the same bits
// as a configuration made without it (the nominal row is what every other test of fp8 = te
// checks by hand). Seeds 1..4: lse bits move (out's too, online); each seed gives the same bits on 1
// and 3 threads and on the loop device; lse within 1e-5 relative of the exact attention of the
// quantised inputs and out within 0.25 (the bounds test_attention_te_fp8.c's
// run_against_its_quantised_inputs gives the nominal run: binary32 steps only separate lse from
// it, e4m3's P and O roundings out), both softmax forms.
static void run_seeds(void **state)
{
    (void)state;
    static double q[B * S * H * D], k[B * SKV * HKV * D], vv[B * SKV * HKV * D];
    static double o0[B * S * H * D], o1[B * S * H * D], o3[B * S * H * D], ol[B * S * H * D], ro[B * S * H * D];
    static double l0[B * H * S], l1[B * H * S], l3[B * H * S], ll[B * H * S], rl[B * H * S];
    inputs(q, k, vv);
    pp_attn_dims dm = {.b = B, .s_q = S, .s_kv = SKV, .h = H, .h_kv = HKV, .d = D, .causal = 1};
    pp_error err;
    pp_attn_te_device loop = {.rows = loop_rows, .ctx = NULL};
    char msg[200];
    for (int sm = 0; sm < 2; sm++) {
        pp_attn_variant v = te_variant(0, (pp_attn_te_softmax)sm);
        assert_int_equal(pp_attn_te_fp8_cpu(&v, &dm, q, k, vv, o0, l0, 2, NULL, &err), PP_OK);
        pp_attn_ref_opts ro_ = {.method = PP_ATTN_REF_FAST, .b = B, .s_q = S, .s_kv = SKV, .h = H, .h_kv = HKV,
                                .d = D, .causal = 1, .threads = 1};
        double bo, bl;
        assert_int_equal(pp_attention_ref_quantised(&ro_, &v, q, k, vv, ro, rl, &bo, &bl, &err), PP_OK);
        int moved_o = 0, moved_l = 0;
        for (uint64_t s = 1; s <= 4; s++) {
            v.order_seed = s;
            assert_int_equal(pp_attn_te_fp8_cpu(&v, &dm, q, k, vv, o1, l1, 1, NULL, &err), PP_OK);
            assert_int_equal(pp_attn_te_fp8_cpu(&v, &dm, q, k, vv, o3, l3, 3, NULL, &err), PP_OK);
            assert_int_equal(pp_attn_te_run(&loop, &v, &dm, q, k, vv, ol, ll, NULL, msg, sizeof msg), 0);
            assert_true(same(o1, o3, B * S * H * D) && same(l1, l3, B * H * S));
            assert_true(same(o1, ol, B * S * H * D) && same(l1, ll, B * H * S));
            moved_o += !same(o0, o1, B * S * H * D), moved_l += !same(l0, l1, B * H * S);
            for (int i = 0; i < B * H * S; i++)
                if (!(fabs(l1[i] - rl[i]) <= 1e-5 * (1 + fabs(rl[i]))))
                    fail_msg("softmax %d seed %llu lse[%d] = %a, exact-quantised %a", sm, (unsigned long long)s, i,
                             l1[i], rl[i]);
            for (int i = 0; i < B * S * H * D; i++)
                if (!(fabs(o1[i] - ro[i]) < 0.25))
                    fail_msg("softmax %d seed %llu out[%d] = %a, exact-quantised %a", sm, (unsigned long long)s, i,
                             o1[i], ro[i]);
        }
        // lse moves under every seed's log and row sums; out (online: P quantised against each
        // tile's running max, then rescaled) moves too; two-pass's out did not under these 4
        // seeds (p moved by ulps rarely crosses an e4m3 rounding boundary of P or O)
        assert_true(moved_l == 4);
        if (sm == PP_ATTN_TE_ONLINE)
            assert_true(moved_o > 0);
        v.order_seed = 0;  // and back: seed 0 again, the nominal bits
        assert_int_equal(pp_attn_te_fp8_cpu(&v, &dm, q, k, vv, o1, l1, 3, NULL, &err), PP_OK);
        assert_true(same(o0, o1, B * S * H * D) && same(l0, l1, B * H * S));
    }
    // the configuration takes the variant's seed
    pp_attn_variant v = te_variant(9, PP_ATTN_TE_ONLINE);
    assert_true(pp_attn_te_cfg_make(&v, 0.125f, 1, 1, 1).order_seed == 9);
}

// ---------------------------------------------------------------------------------------------
// The backward (attention_te_fp8_bwd.h): dP's and D's dots over d, dQ's keys per tile, dK/dV's
// (head, row) steps walk the MMA k-chunks of 16 too (the plain chain at seed 0)

// dP's and D's dot: the walk's chain, bit for bit, under 16 seeds; seed 0 the ascending chain; an
// order that adds small products first keeps them (fill_cancel's by-hand case, 2^16 at seed 0).
static void bwd_dots_walk_mma_chunks(void **state)
{
    (void)state;
    float q[16], k[16];
    fill_cancel(q, k, 16);
    static const int gemms[] = {PP_ATTN_MMA_DP, PP_ATTN_MMA_TE_D};
    for (int g = 0; g < 2; g++) {
        assert_true(pp_attn_te_bwd_dot(0, gemms[g], q, k, 16) == 0x1p16f);
        int moved = 0;
        for (uint64_t s = 1; s <= 16; s++) {
            float v = pp_attn_te_bwd_dot(s, gemms[g], q, k, 16);
            assert_true(pp_f32_bits(v) == pp_f32_bits(chain_in_walk(s, gemms[g], q, k, 16, 0.0f)));
            moved += v != 0x1p16f;
        }
        assert_true(moved > 0);
    }
}

// dQ's chain over a tile's keys and dK/dV's over the (head, row) steps, against the same steps
// written out here in the walk's order (chain_in_walk's chunks over the keys, or over k = hg·span
// + r): bit for bit under 16 seeds, e4m3 codes spread over 2^−9 … 2^8 so that the order matters,
// and some seed moves each.
static void bwd_chains_walk_mma_chunks(void **state)
{
    (void)state;
    enum { NK = 45, DD = 8, G = 2 };
    static float q8[G * NK * DD], do8[G * NK * DD], k8[NK * DD], v8[NK * DD], t[DD], dq[DD], dq0[DD], dk[DD], dv[DD],
        dk0[DD], dv0[DD];
    float lse[G * NK], Dr[G * NK];
    pp_test_rng r = {pp_test_seed() ^ 0x6471u};
    float *all[] = {q8, do8, k8, v8};
    const int n_all[] = {G * NK * DD, G * NK * DD, NK * DD, NK * DD};
    for (int a = 0; a < 4; a++)
        for (int i = 0; i < n_all[a]; i++) {
            double m = ldexp(1.0, -9 + (int)(17.0 * pp_test_rng_unit(&r))) * (1.0 + pp_test_rng_unit(&r));
            all[a][i] = (float)pp_round(PP_FMT_E4M3, pp_test_rng_unit(&r) < 0.5 ? -m : m, PP_RND_NE, 0);
        }
    for (int i = 0; i < G * NK; i++)
        lse[i] = (float)(2.0 + pp_test_rng_unit(&r)), Dr[i] = (float)(pp_test_rng_unit(&r) - 0.5);
    pp_attn_te_bwd_cfg c = {.f = {.sigma = 0x1p-6f, .base = PP_ATTN_TE_EXP, .order_seed = 0},
                            .alpha = 0.125f, .scale_s = 448.0f, .xs = 1.0f / 448.0f, .xq = 1.0f, .xk = 1.0f, .xv = 1.0f,
                            .xo = 1.0f, .xdo = 1.0f, .scale_dp = 64.0f, .xdp = 1.0f / 64.0f, .block_n = 128,
                            .dq = PP_ATTN_TE_DQ_BLOCK};
    int moved_q = 0, moved_kv = 0;
    for (uint64_t s = 0; s <= 16; s++) {
        c.f.order_seed = s;
        // dq of query row 0 over its NK keys (one tile): the kernel, then by hand
        pp_attn_te_bwd_dq_row(&c, q8, do8, k8, v8, DD, NK, DD, lse[0], Dr[0], 0, NULL, t, dq);
        float want[DD] = {0};
        for (int64_t cb = 0; cb < NK; cb += 16) {
            int64_t a, cc;
            pp_attn_mma_chunk(s, PP_ATTN_MMA_DQ, cb / 16, &a, &cc);
            for (int64_t rr = 0; rr < 16; rr++) {
                int64_t j = cb + (a * rr + cc) % 16;
                if (j >= NK)
                    continue;
                float pre, p = pp_attn_te_bwd_p(&c, q8, k8 + j * DD, DD, lse[0]);
                float ds8 = pp_attn_te_bwd_ds8(&c, p, pp_attn_te_bwd_dp(&c, do8, v8 + j * DD, DD), Dr[0], &pre);
                for (int e = 0; e < DD; e++)
                    want[e] = fmaf(ds8, k8[j * DD + e], want[e]);
            }
        }
        for (int e = 0; e < DD; e++)
            assert_true(pp_f32_bits(dq[e]) == pp_f32_bits((want[e] * c.xk) * c.xdp));
        // dk, dv of key 0 over the G heads' NK rows each (i0 = 0): the kernel, then by hand
        pp_attn_te_bwd_dkv_col(&c, q8, do8, G * DD, lse, Dr, NK, 0, G, k8, v8, DD, dk, dv);
        float wk[DD] = {0}, wv[DD] = {0};
        for (int64_t cb = 0; cb < G * NK; cb += 16) {
            int64_t a, cc;
            pp_attn_mma_chunk(s, PP_ATTN_MMA_DKV, cb / 16, &a, &cc);
            for (int64_t rr = 0; rr < 16; rr++) {
                int64_t k = cb + (a * rr + cc) % 16, hg = k / NK, i = k % NK;
                if (k >= G * NK)
                    continue;
                const float *qi = q8 + i * G * DD + hg * DD, *doi = do8 + i * G * DD + hg * DD;
                float pre, p = pp_attn_te_bwd_p(&c, qi, k8, DD, lse[hg * NK + i]);
                float p8 = pp_attn_te_bwd_e4m3(p, c.scale_s);
                float ds8 = pp_attn_te_bwd_ds8(&c, p, pp_attn_te_bwd_dp(&c, doi, v8, DD), Dr[hg * NK + i], &pre);
                for (int e = 0; e < DD; e++)
                    wv[e] = fmaf(p8, doi[e], wv[e]), wk[e] = fmaf(ds8, qi[e], wk[e]);
            }
        }
        for (int e = 0; e < DD; e++) {
            assert_true(pp_f32_bits(dv[e]) == pp_f32_bits((wv[e] * c.xs) * c.xdo));
            assert_true(pp_f32_bits(dk[e]) == pp_f32_bits((wk[e] * c.xq) * c.xdp));
        }
        if (s == 0) {
            memcpy(dq0, dq, sizeof dq), memcpy(dk0, dk, sizeof dk), memcpy(dv0, dv, sizeof dv);
            continue;
        }
        moved_q += memcmp(dq, dq0, sizeof dq) != 0;
        moved_kv += memcmp(dk, dk0, sizeof dk) != 0 || memcmp(dv, dv0, sizeof dv) != 0;
    }
    assert_true(moved_q > 0 && moved_kv > 0);
}

// Values of both signs over 2^−12 … 2^1 (bf16): their e4m3 codes (per-tensor scale from the amax)
// reach e4m3's subnormals, so the fp32 chains of FP8 products span more than 24 bits and their
// order matters (with values of one magnitude the products sit on a coarse grid and every order
// of a short chain gives the exact sum: nothing would move).
static void wide_inputs(double *x, int64_t n, pp_test_rng *r)
{
    for (int64_t i = 0; i < n; i++) {
        double m = ldexp(1.0, -12 + (int)(14.0 * pp_test_rng_unit(r))) * (1.0 + pp_test_rng_unit(r));
        x[i] = bf16(pp_test_rng_unit(r) < 0.5 ? -m : m);
    }
}

// The whole backward under seeds 1..16 on wide inputs: the same bits on 1 and 3 threads; the
// gradients (or their binary32 amaxes before the FP8 stores) move under some seed; seed 0 again
// gives the nominal bits.
static void bwd_run_seeds(void **state)
{
    (void)state;
    enum { NQ = B * S * H * D, NKV = B * SKV * HKV * D, ROWS = B * H * S };
    static double q[NQ], k[NKV], vv[NKV], dout[NQ], o[2][NQ], l[2][ROWS], g0[NQ + 2 * NKV], g1[NQ + 2 * NKV],
        g3[NQ + 2 * NKV];
    pp_test_rng r = {pp_test_seed() ^ 0x64u};
    wide_inputs(q, NQ, &r), wide_inputs(k, NKV, &r), wide_inputs(vv, NKV, &r), wide_inputs(dout, NQ, &r);
    pp_attn_dims dm = {.b = B, .s_q = S, .s_kv = SKV, .h = H, .h_kv = HKV, .d = D, .causal = 1};
    pp_error err;
    pp_attn_te_bwd_amax a0, a1, a3;
    pp_attn_variant v = te_variant(0, PP_ATTN_TE_ONLINE);
    assert_int_equal(pp_attn_te_fp8_bwd_cpu(&v, &dm, q, k, vv, dout, o[0], l[0], g0, g0 + NQ, g0 + NQ + NKV, 2, &a0,
                                            NULL, &err),
                     PP_OK);
    int moved = 0;
    for (uint64_t s = 1; s <= 16; s++) {
        v.order_seed = s;
        assert_int_equal(pp_attn_te_fp8_bwd_cpu(&v, &dm, q, k, vv, dout, o[1], l[1], g1, g1 + NQ, g1 + NQ + NKV, 1,
                                                &a1, NULL, &err),
                         PP_OK);
        assert_int_equal(pp_attn_te_fp8_bwd_cpu(&v, &dm, q, k, vv, dout, o[1], l[1], g3, g3 + NQ, g3 + NQ + NKV, 3,
                                                &a3, NULL, &err),
                         PP_OK);
        assert_true(same(g1, g3, NQ + 2 * NKV));
        assert_memory_equal(&a1, &a3, sizeof a1);
        moved += !same(g0, g1, NQ + 2 * NKV) || a1.amax_dp != a0.amax_dp || a1.amax_dq != a0.amax_dq ||
                 a1.amax_dk != a0.amax_dk || a1.amax_dv != a0.amax_dv;
    }
    assert_true(moved > 0);
    v.order_seed = 0;
    assert_int_equal(pp_attn_te_fp8_bwd_cpu(&v, &dm, q, k, vv, dout, o[1], l[1], g1, g1 + NQ, g1 + NQ + NKV, 3, &a1,
                                            NULL, &err),
                     PP_OK);
    assert_true(same(g0, g1, NQ + 2 * NKV));
    assert_memory_equal(&a0, &a1, sizeof a0);
}

int main(void)
{
    pp_test_report_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dot_walks_mma_chunks),
        cmocka_unit_test(dot_seed0_is_the_plain_chain),
        cmocka_unit_test(pv_tile_walks_mma_chunks),
        cmocka_unit_test(run_seeds),
        cmocka_unit_test(bwd_dots_walk_mma_chunks),
        cmocka_unit_test(bwd_chains_walk_mma_chunks),
        cmocka_unit_test(bwd_run_seeds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
