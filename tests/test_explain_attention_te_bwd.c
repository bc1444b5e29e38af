// test_explain_attention_te_bwd.c — explain's exact sites and the range notes of fp8 = "te"'s
// BACKWARD (TransformerEngine's FP8 DPA backward; kernels/attention.h "Exact sites", fp8 = te,
// backward; kernels/attention_te_fp8_bwd_x.h, attention_te_bwd_exact.c): with no site exact the
// binary64 run gives the kernel's bits on every knob (grad format, dq per tile or chain, dS's amax,
// a given scale_dP, the forward's softmax and base, causal GQA over an odd key count past one dq
// tile, the order band); its range notes of D, dP, dS and the stores are the kernel path's own;
// hand-computed notes of dS8's flush and saturation; every site exact gives the exact gradients
// of the unquantised inputs within the bound stated above every_site_exact_is_exact_backward.
// Run: make test (build/rel/tests/test_explain_attention_te_bwd).
#include "test_util.h"

#include "attn_te_variant.h"

#include <math.h>

#include "attention_te_bwd_exact.h"
#include "cpu/attention_te_fp8_bwd.h"
#include "exact_sites.h"
#include "sites.h"

#define BIT(s) PP_SITE_BIT(PP_SITE_ATTN_##s)

// Every site explain offers fp8 = te with passes fwd+bwd (src/ops/op_attention.c explain_sites,
// online, per-tensor scaling): the forward's 19 and the backward's 11.
static const pp_site_mask ALL = BIT(QUANT_Q) | BIT(QUANT_K) | BIT(QUANT_V) | BIT(BLOCK_SCALE_Q) | BIT(BLOCK_SCALE_K) |
                                BIT(BLOCK_SCALE_V) | BIT(SOFTMAX_SCALE) | BIT(SCORES) | BIT(SOFTMAX_IN) |
                                BIT(ROW_MAX) | BIT(EXP) | BIT(ROW_SUM) | BIT(P) | BIT(BLOCK_SCALE_P) |
                                BIT(OUT_PARTIAL) | BIT(ROW_INV) | BIT(LSE) | BIT(OUT_SCALE) | BIT(OUT) |
                                BIT(QUANT_DO) | BIT(BLOCK_SCALE_DO) | BIT(D) | BIT(DP) | BIT(DS) |
                                BIT(BLOCK_SCALE_DS) | BIT(DQ_ACC) | BIT(DKV_ACC) | BIT(DQ) | BIT(DK) | BIT(DV);


static double bf16(double x)
{
    return pp_round(PP_FMT_BF16, x, PP_RND_NE, 0);
}

// bf16 inputs (q's last head four times larger, so S and dS span more of e4m3)
static void inputs(const pp_attn_dims *dm, double *q, double *k, double *v, double *dout)
{
    pp_test_rng r = {pp_test_seed() ^ 0xE27};
    int64_t nq = dm->b * dm->s_q * dm->h * dm->d, nkv = dm->b * dm->s_kv * dm->h_kv * dm->d;
    for (int64_t i = 0; i < nq; i++)
        q[i] = bf16((4.0 * pp_test_rng_unit(&r) - 2.0) * ((i / dm->d) % dm->h == dm->h - 1 ? 4.0 : 1.0)),
        dout[i] = bf16(pp_test_rng_unit(&r) - 0.5);
    for (int64_t i = 0; i < nkv; i++)
        k[i] = bf16(4.0 * pp_test_rng_unit(&r) - 2.0), v[i] = bf16(2.0 * pp_test_rng_unit(&r) - 1.0);
}

static int same_bits(const double *a, const double *b, int64_t n)
{
    return memcmp(a, b, sizeof(double) * (size_t)n) == 0;
}

// ---------------------------------------------------------------------------------------------
// Mask 0 is the kernel

enum { MB = 1, MS = 7, MSKV = 133, MH = 4, MHKV = 2, MD = 4 };
enum { MNQ = MB * MS * MH * MD, MNKV = MB * MSKV * MHKV * MD, MROWS = MB * MH * MS };
enum { MS2 = 19, MQMAX = MB * MS2 * MH * MD };  // the 19 × 19 settings' queries (more than MS)

// The binary64 run with mask 0 (and with a site te does not have: cp_out_merge) against the kernel
// (pp_attn_te_fp8_bwd_cpu's binary32 bodies), every output and amax bit for bit, on 15 settings:
// default, e4m3 gradients, dq chain, max-ds amax, a given scale_dP (a stale amax_history_dp),
// two-pass, base-2, the chain P·V, lazy rescale, the order band, scaling none, mma sm90-fp8 (twice),
// given dO and dq/dk/dv scales (amax_history_do/dq/dk/dv); causal GQA with 7
// queries over 133 keys (two dq tiles, the last one odd), and 19 × 19 not causal on every other.
static void run_mask0_is_the_kernel(void **state)
{
    (void)state;
    static double q[MQMAX], k[MNKV], vv[MNKV], dout[MQMAX], a[5][MQMAX + MNKV], b[5][MQMAX + MNKV];
    for (int cfgi = 0; cfgi < 15; cfgi++) {
        pp_attn_dims dm = {.b = MB, .s_q = MS, .s_kv = MSKV, .h = MH, .h_kv = MHKV, .d = MD, .causal = 1};
        if (cfgi % 2)
            dm.s_q = dm.s_kv = MS2, dm.causal = 0;
        inputs(&dm, q, k, vv, dout);
        pp_attn_variant v = attn_te_variant();
        switch (cfgi) {
        case 1: v.te_grad_e4m3 = 1; break;
        case 2: v.te_dq = PP_ATTN_TE_DQ_CHAIN; break;
        case 3: v.te_ds_amax = 1; break;
        case 4: v.te_scale_dp = 448.0 / 0.01; break;
        case 5: v.te_softmax = PP_ATTN_TE_TWO_PASS; break;
        case 6: v.te_exp = PP_ATTN_TE_EXP2, v.te_dq = PP_ATTN_TE_DQ_CHAIN; break;
        case 7: v.te_pv = PP_ATTN_TE_PV_CHAIN, v.block_n = 16; break;
        case 8: v.block_n = 16, v.te_rescale = 2, v.te_ds_amax = 1; break;
        case 9: v.order_seed = 0xabc, v.block_n = 16; break;
        case 10: v.fp8_scaling = PP_ATTN_FP8_SCALING_NONE; break;
        // mma sm90-fp8 (every FP8 GEMM through Hopper's model), with e4m3 gradients and dq's chain
        case 11: v.mma = PP_ATTN_FP8_MMA_SM90; break;
        case 12: v.mma = PP_ATTN_FP8_MMA_SM90, v.te_grad_e4m3 = 1, v.te_dq = PP_ATTN_TE_DQ_CHAIN; break;
        // TE's delayed recipe for dO and the three stores (amax_history_do/dq/dk/dv's scales)
        case 13: v.te_scale_do = 57344.0 / 0.05; break;
        case 14: v.te_scale_dq = 57344.0 / 0.01, v.te_scale_dk = 57344.0 / 3.0, v.te_scale_dv = 2.0; break;
        default: break;
        }
        pp_error err;
        pp_attn_te_bwd_amax a1, a2;
        memset(&a1, 0, sizeof a1), memset(&a2, 0, sizeof a2);
        int64_t nq = dm.b * dm.s_q * dm.h * dm.d, nkv = dm.b * dm.s_kv * dm.h_kv * dm.d, rows = dm.b * dm.h * dm.s_q;
        assert_int_equal(pp_attn_te_fp8_bwd_cpu(&v, &dm, q, k, vv, dout, a[0], a[1], a[2], a[3], a[4], 2, &a1, NULL,
                                                &err),
                         PP_OK);
        char msg[200];
        for (int pass = 0; pass < 2; pass++) {
            v.exact_sites = pass ? BIT(CP_OUT_MERGE) : 0;
            assert_int_equal(pp_attn_te_bwd_run_x(&v, &dm, q, k, vv, dout, b[0], b[1], b[2], b[3], b[4], 3, &a2, NULL,
                                                  msg, sizeof msg),
                             0);
            const int64_t n[5] = {nq, rows, nq, nkv, nkv};
            for (int t = 0; t < 5; t++)
                if (!same_bits(a[t], b[t], n[t]))
                    fail_msg("config %d pass %d: output %d of the binary64 run differs from the kernel's", cfgi, pass,
                             t);
            assert_memory_equal(&a1, &a2, sizeof a1);
        }
        // the op's CPU entry takes the binary64 run for a non-zero mask: the same bits there too
        assert_int_equal(pp_attn_te_fp8_bwd_cpu(&v, &dm, q, k, vv, dout, b[0], b[1], b[2], b[3], b[4], 1, NULL, NULL,
                                                &err),
                         PP_OK);
        assert_true(same_bits(a[2], b[2], nq) && same_bits(a[3], b[3], nkv) && same_bits(a[4], b[4], nkv));
    }
}

// ---------------------------------------------------------------------------------------------
// Range notes

// The notes of the binary64 pass (pp_attn_te_bwd_ranges_x, mask 0) against the kernel path's own
// (pp_attn_te_bwd_run's host pass through the binary32 bodies): d, dp, ds, dq, dk, dv cell for cell
// (the same values against the same befores); the counts of the rest: quant_do per element,
// exp and p the forward's visible (row, key) pairs plus the backward's, dq_acc per dq element and
// per element of each key tile's chain,
// dkv_acc two per dk element (dk and dv) under the kv heads, each scale once.
static void range_notes_are_the_kernels(void **state)
{
    (void)state;
    static double q[MNQ], k[MNKV], vv[MNKV], dout[MNQ], o[MNQ], l[MROWS], dq[MNQ], dk[MNKV], dv[MNKV];
    static pp_range_cell c1[PP_SITE_COUNT * MH], c2[PP_SITE_COUNT * MH];
    pp_attn_dims dm = {.b = MB, .s_q = MS, .s_kv = MSKV, .h = MH, .h_kv = MHKV, .d = MD, .causal = 1};
    inputs(&dm, q, k, vv, dout);
    pp_attn_variant v = attn_te_variant();
    pp_ranges R1, R2;
    pp_ranges_init(&R1, c1, MH);
    pp_ranges_init(&R2, c2, MH);
    pp_error err;
    char msg[200];
    assert_int_equal(pp_attn_te_fp8_bwd_cpu(&v, &dm, q, k, vv, dout, o, l, dq, dk, dv, 2, NULL, &R1, &err), PP_OK);
    assert_int_equal(pp_attn_te_bwd_ranges_x(&v, &dm, q, k, vv, dout, 3, &R2, msg, sizeof msg), 0);
    static const int same[] = {PP_SITE_ATTN_D, PP_SITE_ATTN_DP, PP_SITE_ATTN_DS, PP_SITE_ATTN_DQ, PP_SITE_ATTN_DK,
                               PP_SITE_ATTN_DV};
    for (int i = 0; i < 6; i++) {
        int s = same[i];
        if (memcmp(&c1[s * MH], &c2[s * MH], sizeof(pp_range_cell) * MH) || R1.fmt[s] != R2.fmt[s])
            fail_msg("site %s: the binary64 pass's notes differ from the kernel's", pp_site_get(s)->name);
    }
    int64_t pairs = 0, tiles = 0;  // dq's key tiles of 128 over the rows of one head
    for (int64_t i = 0; i < MS; i++)
        pairs += pp_attn_te_bwd_visible(&dm, i), tiles += (pp_attn_te_bwd_visible(&dm, i) + 127) / 128;
    assert_true(tiles > MS);  // some rows see two tiles
    int64_t cnt[PP_SITE_COUNT] = {0};
    for (int s = 0; s < PP_SITE_COUNT; s++)
        for (int h = 0; h < MH; h++)
            cnt[s] += c2[s * MH + h].count;
    assert_true(cnt[PP_SITE_ATTN_DS] == pairs * MB * MH && cnt[PP_SITE_ATTN_D] == MROWS);
    assert_true(cnt[PP_SITE_ATTN_QUANT_DO] == MNQ && R2.fmt[PP_SITE_ATTN_QUANT_DO] == PP_FMT_E5M2);
    assert_true(cnt[PP_SITE_ATTN_EXP] == 2 * pairs * MB * MH && cnt[PP_SITE_ATTN_P] == 2 * pairs * MB * MH);
    assert_true(cnt[PP_SITE_ATTN_DQ_ACC] == MNQ + tiles * MB * MH * MD && cnt[PP_SITE_ATTN_DKV_ACC] == 2 * MNKV);
    assert_int_equal(c2[PP_SITE_ATTN_DKV_ACC * MH + MHKV].count, 0);  // kv heads only
    assert_true(cnt[PP_SITE_ATTN_BLOCK_SCALE_DO] == 1 && cnt[PP_SITE_ATTN_BLOCK_SCALE_DS] == 1);
    assert_true(cnt[PP_SITE_ATTN_SCORES] == pairs * MB * MH && cnt[PP_SITE_ATTN_OUT] == MNQ);  // the forward's
    // P8 ≤ 448 and the recomputed p ≤ 1: nothing overflows, no NaN
    assert_true(c2[PP_SITE_ATTN_P * MH].amax <= 448.0 && c2[PP_SITE_ATTN_EXP * MH].amax <= 1.0);
    // the same notes for any thread count
    pp_ranges_init(&R1, c1, MH);
    assert_int_equal(pp_attn_te_bwd_ranges_x(&v, &dm, q, k, vv, dout, 1, &R1, msg, sizeof msg), 0);
    assert_memory_equal(c1, c2, sizeof c1);
    // mma sm90-fp8 with a stale dO scale: the pass's notes are still the kernel's
    v.mma = PP_ATTN_FP8_MMA_SM90, v.te_scale_do = 57344.0 / 0.05;
    pp_ranges_init(&R1, c1, MH);
    pp_ranges_init(&R2, c2, MH);
    assert_int_equal(pp_attn_te_fp8_bwd_cpu(&v, &dm, q, k, vv, dout, o, l, dq, dk, dv, 2, NULL, &R1, &err), PP_OK);
    assert_int_equal(pp_attn_te_bwd_ranges_x(&v, &dm, q, k, vv, dout, 3, &R2, msg, sizeof msg), 0);
    for (int i = 0; i < 6; i++) {
        int s = same[i];
        if (memcmp(&c1[s * MH], &c2[s * MH], sizeof(pp_range_cell) * MH) || R1.fmt[s] != R2.fmt[s])
            fail_msg("sm90, stale dO: site %s: the binary64 pass's notes differ from the kernel's",
                     pp_site_get(s)->name);
    }
}

// By hand, scaling none and σ = α = 1 (the inputs are their own e4m3 values, every X 1): one query
// q = (1, 1) over two keys of zeros (S = 0, p = (½, ½)), v = ((1, 1), (2, 0.625)) and dO = (1, 0):
// dP = dO·v_j = (1, 2), D = O8·dO·X_o ≈ O_0 = 1.5, dS = p·(dP − D) ≈ (−0.25, 0.25), dP's amax 2.
// scale_dP = 448/2 = 224: dS8 = (−56, 56), no flush. A stale scale_dP of 2^−20 (amax_history_dp):
// |dS|·2^−20 ≈ 2.4e−7 is below e4m3's smallest subnormal's half (2^−10): both dS8 flush to zero, the
// underflow counter says 2, and dq, dk are zero. A scale_dP of 2^20: both saturate at ±448 (near
// e4m3's max, not an overflow: the cast saturates).
static void ds8_flush_and_saturation_by_hand(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 1, .s_q = 1, .s_kv = 2, .h = 1, .h_kv = 1, .d = 2, .causal = 0};
    const double q[] = {1, 1}, k[] = {0, 0, 0, 0}, vv[] = {1, 1, 2, 0.625}, dout[] = {1, 0};
    double o[2], l[1], dq[2], dk[4], dv[4];
    pp_attn_variant v = attn_te_variant();
    v.fp8_scaling = PP_ATTN_FP8_SCALING_NONE, v.sigma_given = 1, v.sigma = 1.0;
    pp_range_cell cells[PP_SITE_COUNT];
    pp_ranges R;
    char msg[200];
    pp_attn_te_bwd_amax am;
    pp_ranges_init(&R, cells, 1);
    assert_int_equal(pp_attn_te_bwd_run_x(&v, &dm, q, k, vv, dout, o, l, dq, dk, dv, 1, &am, &R, msg, sizeof msg), 0);
    const pp_range_cell *ds = &cells[PP_SITE_ATTN_DS];
    assert_true(am.amax_dp == 2.0 && am.scale_dp == 224.0);
    assert_true(ds->count == 2 && ds->amax == 56.0 && ds->min_nz == 56.0 && ds->underflow == 0);
    assert_true(cells[PP_SITE_ATTN_DP].amax == 2.0 && cells[PP_SITE_ATTN_DP].min_nz == 1.0);
    assert_true(fabs(cells[PP_SITE_ATTN_D].amax - 1.5) < 0.01);
    v.te_scale_dp = 0x1p-20;
    pp_ranges_init(&R, cells, 1);
    assert_int_equal(pp_attn_te_bwd_run_x(&v, &dm, q, k, vv, dout, o, l, dq, dk, dv, 1, &am, &R, msg, sizeof msg), 0);
    assert_true(ds->count == 2 && ds->amax == 0.0 && ds->underflow == 2 && ds->overflow == 0);
    assert_true(dq[0] == 0 && dq[1] == 0 && dk[0] == 0 && dk[3] == 0);
    // dS exact: no cast, nothing flushes; dq then moves
    v.exact_sites = BIT(DS);
    assert_int_equal(pp_attn_te_bwd_run_x(&v, &dm, q, k, vv, dout, o, l, dq, dk, dv, 1, NULL, NULL, msg, sizeof msg),
                     0);
    assert_true(dk[0] != 0);
    v.exact_sites = 0, v.te_scale_dp = 0x1p20;
    pp_ranges_init(&R, cells, 1);
    assert_int_equal(pp_attn_te_bwd_run_x(&v, &dm, q, k, vv, dout, o, l, dq, dk, dv, 1, &am, &R, msg, sizeof msg), 0);
    assert_true(ds->count == 2 && ds->amax == 448.0 && ds->near_max == 2 && ds->overflow == 0 && ds->underflow == 0);
}

// ---------------------------------------------------------------------------------------------
// Every site exact

enum { EB = 1, ES = 9, ESKV = 11, EH = 4, EHKV = 2, ED = 8 };
enum { ENQ = EB * ES * EH * ED, ENKV = EB * ESKV * EHKV * ED, EROWS = EB * EH * ES };

// The exact attention backward in long double (α = 1/√d): out, lse, dq, dk, dv (dk, dv summed over
// the GQA group), and per element the bound's magnitude M: dq_ie: α Σ_j P_ij·W_ij·|k_je|, dk_je:
// α Σ_i P_ij·W_ij·|q_ie|, dv_je: Σ_i P_ij·|dO_ie|, W_ij = Σ_e |dO_ie·v_je| + Σ_e |O_ie·dO_ie| +
// max|v|·Σ_e |dO_ie|; per row A_i = α·max_j Σ_e |q_ie·k_je|.
static void exact_backward(const pp_attn_dims *dm, const double *q, const double *k, const double *vv,
                           const double *dout, double *out, double *lse, double *g, double *M, double *A)
{
    long double a = 1.0L / sqrtl((long double)dm->d);
    int64_t nq = dm->b * dm->s_q * dm->h * dm->d, nkv = dm->b * dm->s_kv * dm->h_kv * dm->d, st = dm->h_kv * dm->d;
    double vmax = 0;
    for (int64_t i = 0; i < nkv; i++)
        vmax = fmax(vmax, fabs(vv[i]));
    for (int64_t i = 0; i < nq + 2 * nkv; i++)
        g[i] = M[i] = 0;
    for (int64_t r = 0; r < dm->b * dm->h * dm->s_q; r++) {
        int64_t row, kv, n = pp_attn_te_row_span(dm, r, &row, &kv);
        const double *qi = q + row * dm->d, *doi = dout + row * dm->d;
        long double s[ESKV], P[ESKV], m = -INFINITY, l = 0, ax = 0, o[ED] = {0}, D = 0, Wo = 0, dos = 0;
        for (int64_t j = 0; j < n; j++) {
            long double acc = 0, aa = 0;
            for (int64_t e = 0; e < dm->d; e++)
                acc += (long double)qi[e] * k[kv + j * st + e], aa += fabsl((long double)qi[e] * k[kv + j * st + e]);
            s[j] = acc * a, m = fmaxl(m, s[j]), ax = fmaxl(ax, aa * a);
        }
        for (int64_t j = 0; j < n; j++)
            l += expl(s[j] - m);
        for (int64_t j = 0; j < n; j++) {
            P[j] = expl(s[j] - m) / l;
            for (int64_t e = 0; e < dm->d; e++)
                o[e] += P[j] * vv[kv + j * st + e];
        }
        for (int64_t e = 0; e < dm->d; e++) {
            out[row * dm->d + e] = (double)o[e];
            D += o[e] * doi[e], Wo += fabsl(o[e] * doi[e]), dos += fabsl((long double)doi[e]);
        }
        lse[r] = (double)(m + logl(l)), A[r] = (double)ax;
        for (int64_t j = 0; j < n; j++) {
            long double dp = 0, W = Wo + vmax * dos;
            for (int64_t e = 0; e < dm->d; e++)
                dp += (long double)doi[e] * vv[kv + j * st + e], W += fabsl((long double)doi[e] * vv[kv + j * st + e]);
            long double ds = P[j] * (dp - D) * a;
            for (int64_t e = 0; e < dm->d; e++) {
                int64_t ik = kv + j * st + e;
                g[row * dm->d + e] += (double)(ds * k[ik]);
                M[row * dm->d + e] += (double)(a * P[j] * W * fabsl((long double)k[ik]));
                g[nq + ik] += (double)(ds * qi[e]);
                M[nq + ik] += (double)(a * P[j] * W * fabsl((long double)qi[e]));
                g[nq + nkv + ik] += (double)(P[j] * doi[e]);
                M[nq + nkv + ik] += (double)(P[j] * fabsl((long double)doi[e]));
            }
        }
    }
}

// Every site exact against the exact backward of the (unquantised) inputs. Bound (u = 2^−53; the
// forward's, test_explain_attention_te.c: p relative within ρ_p = ((2d + 8)·A + 2)·u, lse within
// ((3d + 11)·A + n + 4 + |lse|)·u, so the recomputed P relative within ρ = ((5d + 19)·A + n + 8 +
// |lse|)·u; O within (2ρ_p + (2n + 14)·u)·max|v|): dP's chain and two descales (d + 3)·u·Σ|dO·v|,
// D's (d + 3)·u·Σ|O·dO| plus O's error times Σ|dO|, dS = p·(dP − D)·α·scale·(1/scale) 6u more, the
// dq, dk chains over at most n·group terms and their descales (n·group + 4)·u: |Δdq|, |Δdk| ≤
// K·u·M and |Δdv| ≤ K·u·M with K = 2ρ/u + 2·(n·group + d) + 40 (M as exact_backward's), the
// stores and scales exact. With d = 8 and these inputs every bound stays below 1e-11: one binary32
// step left (2^−24 relative) breaks it.
static void every_site_exact_is_exact_backward(void **state)
{
    (void)state;
    static double q[ENQ], k[ENKV], vv[ENKV], dout[ENQ], o[ENQ], l[EROWS], gr[ENQ + 2 * ENKV];
    static double ro[ENQ], rl[EROWS], rg[ENQ + 2 * ENKV], M[ENQ + 2 * ENKV], A[EROWS];
    pp_attn_dims dm = {.b = EB, .s_q = ES, .s_kv = ESKV, .h = EH, .h_kv = EHKV, .d = ED, .causal = 1};
    inputs(&dm, q, k, vv, dout);
    exact_backward(&dm, q, k, vv, dout, ro, rl, rg, M, A);
    double amax_a = 0, lmax = 0;
    for (int64_t r = 0; r < EROWS; r++)
        amax_a = fmax(amax_a, A[r]), lmax = fmax(lmax, fabs(rl[r]));
    const double u = 0x1p-53;
    const int64_t group = EH / EHKV, n = ESKV;
    double rho = ((5 * ED + 19) * amax_a + n + 8 + lmax) * u, K = 2 * rho / u + 2.0 * (n * group + ED) + 40;
    pp_attn_variant v = attn_te_variant();
    char msg[200];
    for (int cfgi = 0; cfgi < 3; cfgi++) {
        v.te_dq = cfgi == 1 ? PP_ATTN_TE_DQ_CHAIN : PP_ATTN_TE_DQ_BLOCK;
        v.te_grad_e4m3 = cfgi == 2;
        v.te_ds_amax = cfgi == 2;
        v.exact_sites = ALL;
        assert_int_equal(pp_attn_te_bwd_run_x(&v, &dm, q, k, vv, dout, o, l, gr, gr + ENQ, gr + ENQ + ENKV, 2, NULL,
                                              NULL, msg, sizeof msg),
                         0);
        double worst = 0;
        for (int64_t i = 0; i < ENQ + 2 * ENKV; i++) {
            double d = fabs(gr[i] - rg[i]), b = K * u * M[i];
            assert_true(b < 1e-11);
            worst = fmax(worst, d);
            if (!(d <= b))
                fail_msg("config %d gradient element %lld: %.17g, exact %.17g, bound %g", cfgi, (long long)i, gr[i],
                         rg[i], b);
        }
        assert_true(worst > 0 && worst < 1e-13);  // binary64's steps show, binary32's would not pass
        // as is, the FP8 gradients are far from it: the test can tell
        v.exact_sites = ALL & ~BIT(DS);
        assert_int_equal(pp_attn_te_bwd_run_x(&v, &dm, q, k, vv, dout, o, l, gr, gr + ENQ, gr + ENQ + ENKV, 2, NULL,
                                              NULL, msg, sizeof msg),
                         0);
        worst = 0;
        for (int64_t i = 0; i < ENQ; i++)
            worst = fmax(worst, fabs(gr[i] - rg[i]) / fmax(M[i], 1e-300));
        assert_true(worst > 1e-4);  // dS's e4m3 cast alone: relative 2^−4 at worst
    }
}

// Refusals: another fp8; the float path still refuses a mask on its forward device.
static void refusals(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 1, .s_q = 2, .s_kv = 2, .h = 1, .h_kv = 1, .d = 2, .causal = 0};
    const double q[4] = {1, 2, 3, 4};
    double out[4], lse[2], dq[4], dk[4], dv[4];
    pp_attn_variant v = attn_te_variant();
    char msg[200] = "";
    v.fp8 = PP_ATTN_FP8_FA3;
    assert_int_equal(pp_attn_te_bwd_run_x(&v, &dm, q, q, q, q, out, lse, dq, dk, dv, 1, NULL, NULL, msg, sizeof msg),
                     2);
    assert_non_null(strstr(msg, "fp8 = \"te\" only"));
    assert_int_equal(pp_attn_te_bwd_ranges_x(&v, &dm, q, q, q, q, 1, NULL, msg, sizeof msg), 0);  // no R: nothing
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(run_mask0_is_the_kernel),
        cmocka_unit_test(range_notes_are_the_kernels),
        cmocka_unit_test(ds8_flush_and_saturation_by_hand),
        cmocka_unit_test(every_site_exact_is_exact_backward),
        cmocka_unit_test(refusals),
    };
    pp_test_report_seed();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
