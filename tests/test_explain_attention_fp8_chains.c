// test_explain_attention_fp8_chains.c — explain's GEMM-chain sites of FA3's FP8 forward (fp8 =
// fa3; kernels/attention.h "Exact sites", chains): S = q8·k8 (scores) and the running o of P8·v8
// (pv_acc) kept in binary64 under every scaling and either mma. Chains with nothing to round give
// the kernel's bits; hand-computed rows where the binary32 chain or Hopper's truncation drops a
// bit; every site exact against the exact attention of the quantised and of the given inputs.
// Run: build/rel/tests/test_explain_attention_fp8_chains
#include "test_util.h"

#include "attn_run.h"

#include <math.h>

#include "attention_fp8.h"
#include "attention_ref.h"
#include "cpu/attention.h"
#include "exact_sites.h"
#include "ops/attention_ref_quantised.h"
#include "sites.h"

// ---------------------------------------------------------------------------------------------
// Helpers

#define BIT(s) PP_SITE_BIT(PP_SITE_ATTN_##s)

// fp8 = fa3 under scaling sch and mma; σ given when sigma > 0 (else 1/√d). Delayed: every scale
// s_delayed (the recipe's s, pp_attn_fp8_quantise_tensor).
static pp_attn_variant fa3(pp_attn_fp8_scaling sch, pp_attn_fp8_mma mma, double sigma, double s_delayed)
{
    pp_attn_variant v = {
        .format = PP_FMT_BF16,
        .kernel = PP_ATTN_FLASH,
        .cp_accum = PP_FMT_BF16,
        .cp_grad_accum = PP_FMT_BF16,
        .sigma_given = sigma > 0,
        .sigma = sigma,
        .fp8 = PP_ATTN_FP8_FA3,
        .fp8_scaling = sch,
        .fp8_delayed_s = {s_delayed, s_delayed, s_delayed},
        .mma = mma,
    };
    return v;
}

static const char *sch_name(pp_attn_fp8_scaling s)
{
    static const char *n[] = {"auto", "none", "tensor-current", "tensor-delayed", "mx", "nvfp4"};
    return n[s];
}

static int64_t n_differing(const double *a, const double *b, int64_t n)
{
    int64_t c = 0;
    for (int64_t i = 0; i < n; i++)
        c += memcmp(&a[i], &b[i], sizeof a[i]) != 0;
    return c;
}

// The settings a test walks: every scaling under the fp32 chain, the per-tensor ones under sm90
// too (mma sm90-fp8 refuses the block scalings: attention_fp8.h pp_attn_fp8_mma_error).
typedef struct {
    pp_attn_fp8_scaling sch;
    pp_attn_fp8_mma mma;
} setting;

static const setting SETTINGS[] = {
    {.sch = PP_ATTN_FP8_SCALING_NONE, .mma = PP_ATTN_FP8_MMA_CHAIN},
    {.sch = PP_ATTN_FP8_SCALING_TENSOR, .mma = PP_ATTN_FP8_MMA_CHAIN},
    {.sch = PP_ATTN_FP8_SCALING_DELAYED, .mma = PP_ATTN_FP8_MMA_CHAIN},
    {.sch = PP_ATTN_FP8_SCALING_MX, .mma = PP_ATTN_FP8_MMA_CHAIN},
    {.sch = PP_ATTN_FP8_SCALING_NVFP4, .mma = PP_ATTN_FP8_MMA_CHAIN},
    {.sch = PP_ATTN_FP8_SCALING_NONE, .mma = PP_ATTN_FP8_MMA_SM90},
    {.sch = PP_ATTN_FP8_SCALING_TENSOR, .mma = PP_ATTN_FP8_MMA_SM90},
    {.sch = PP_ATTN_FP8_SCALING_DELAYED, .mma = PP_ATTN_FP8_MMA_SM90},
};
#define N_SETTINGS ((int)(sizeof SETTINGS / sizeof SETTINGS[0]))

// ---------------------------------------------------------------------------------------------
// Chains with nothing to round: the kernel's bits

// Values drawn from {0, ±1, ±2} (r: the draw), as binary64.
static double small_int(pp_test_rng *r)
{
    static const double vals[5] = {0.0, 1.0, -1.0, 2.0, -2.0};
    int i = (int)(pp_test_rng_unit(r) * 5.0);
    return vals[i < 5 ? i : 4];
}

// When the chain has nothing to round the binary64 chain is the binary32 one, so an exact site
// must give mask 0's bits: what the kernel does after the chain (the max, p from the binary64 S,
// P8, the block adds, the epilogue reading the binary64 o) is then checked against the kernel on
// every scaling × mma × causal × GQA, 333 keys (FA3's fp8 tile at d 16 is 160: three tiles, the
// last partial), 7 queries. Why nothing rounds (amax 2: per tensor s = 224, elements 0, ±224,
// ±448; none 0, ±1, ±2; mx 2^−7 (q, k) with elements 0, ±128, ±256; nvfp4 E4M3 block scales 448
// or 224 with e2m1 elements 0, ±3, ±6):
//   scores, q, k from {0, ±1, ±2}, d = 16: S = (element unit)²·N, |N| ≤ 64, at most 12 bits
//     (Hopper's group of 16 products truncates to 2^(E−13) with E ≤ 17: multiples of 2^10 kept;
//     14 significant bits hold the sum); nvfp4's one block ⊕ RN_32(chain·s_q·s_k): 16 bits.
//   pv_acc (with scores), q = 0: every S = 0, p = 2^8 (the max offset), P8 = 2^8, corr = 1
//     between tiles; v from {0, ±1, ±2}: o = Σ 2^8·v8 over ≤ 333 keys, 7·2^13·N (tensor) with
//     |N| ≤ 666: 13 bits; Hopper's groups keep multiples of 2^13 (E ≤ 27) and 14 bits; mx, nvfp4
//     blocks likewise (P's scale 1 or 448 with elements 2^8 or 6).
static void fp8_chains_with_nothing_to_round_are_the_kernel(void **state)
{
    (void)state;
    for (int si = 0; si < N_SETTINGS; si++)
        for (int causal = 0; causal < 2; causal++)
            for (int gqa = 0; gqa < 2; gqa++) {
                pp_attn_dims dm = {.b = 1, .s_q = 7, .s_kv = 333, .h = 2, .h_kv = gqa ? 1 : 2, .d = 16,
                                   .causal = causal};
                int64_t nq = dm.b * dm.s_q * dm.h * dm.d, nk = dm.b * dm.s_kv * dm.h_kv * dm.d;
                int64_t nl = dm.b * dm.h * dm.s_q;
                attn_run R;
                attn_run_init(&R, dm);
                pp_test_rng r = {.s = 31 + (uint64_t)(si * 4 + causal * 2 + gqa)};
                for (int64_t i = 0; i < nq; i++)
                    R.q[i] = small_int(&r);
                for (int64_t i = 0; i < nk; i++)
                    R.k[i] = small_int(&r), R.v[i] = small_int(&r);
                pp_attn_variant v = fa3(SETTINGS[si].sch, SETTINGS[si].mma, 0.0, 224.0);
                // pass 0: scores alone; pass 1 (q = 0: every score 0, P·V's chain the one with
                // nothing to round): pv_acc alone, then both
                static const pp_site_mask masks[2][2] = {{BIT(SCORES), 0}, {BIT(PV_ACC), BIT(SCORES) | BIT(PV_ACC)}};
                // each against mask 0, and with FA3's softmax scalars and out exact (the binary64
                // epilogue pp_attn_fp8_finish_x) against those alone
                static const pp_site_mask bases[2] = {0, BIT(SOFTMAX_SCALE) | BIT(ROW_MAX) | BIT(ROW_SUM) | BIT(OUT)};
                for (int pass = 0; pass < 2; pass++) {
                    for (int64_t i = 0; pass && i < nq; i++)
                        R.q[i] = 0.0;
                    for (int bi = 0; bi < 2; bi++) {
                        attn_run_go(&R, v, bases[bi], 0);
                        double *out0 = dupd(R.out, nq), *lse0 = dupd(R.lse, nl);
                        for (int mi = 0; mi < 2 && masks[pass][mi]; mi++) {
                            pp_site_mask x = bases[bi] | masks[pass][mi];
                            attn_run_go(&R, v, x, 0);
                            int64_t dout = n_differing(R.out, out0, nq), dlse = n_differing(R.lse, lse0, nl);
                            if (dout || dlse)
                                fail_msg("%s %s causal %d gqa %d: mask %#llx moves %lld out, %lld lse values",
                                         sch_name(SETTINGS[si].sch), SETTINGS[si].mma ? "sm90" : "chain", causal, gqa,
                                         (unsigned long long)x, (long long)dout, (long long)dlse);
                        }
                        free(out0), free(lse0);
                    }
                }
                attn_run_free(&R);
            }
}

// ---------------------------------------------------------------------------------------------
// Hand-computed rows

// scores alone exact (with p, pv_acc and out exact too, so that S's effect reaches out: P's e4m3,
// the binary32 P·V chain and the bf16 store would hide it). d = 4, σ = 1 (σ' = sl2 = RN_32(log2 e):
// the descales are 1, each tensor's amax being 448 or mx's exponent 0), one query
// q = (2^−9, 448, 448, 8), keys k0 = (2^−9, 448, −448, 8), k1 = (0, 0, 0, 8), v0 = (448, 0, 0, 0),
// v1 = (0, 448, 0, 0). S0's binary32 chain: 2^−18, then 448² + 2^−18 rounds to 448² (ulp 2^−6),
// then 0, then 64: S0 = 64 = S1; Hopper's group truncates 2^−18 (E = 16: multiples of 2^3) to the
// same 64. Exact, S0 = 64 + 2^−18 in binary64 (not a binary32 value: a quarter ulp_32(64)), m =
// RN_32(S0) = 64, ms = fmaf(64, σ', −8), p0 = 2^RN_32(S0·σ' − ms) (binary64 argument, rounded once),
// p1 = 2^fmaf(64, σ', −ms); l = p0 ⊕ p1 (both keys in the partial l_0); out_0 = 448·p0·s with
// s = RN_32(1 ⊘ l), exactly (448·p0·s has at most 51 bits). The truth is 448·σ(2^−18) ≈
// 224·(1 + 2^−19): the exact run is nearer it than the nominal one (448·0.5 up to s's rounding).
static void fp8_scores_by_hand(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 1, .s_q = 1, .s_kv = 2, .h = 1, .h_kv = 1, .d = 4, .causal = 0};
    attn_run R;
    attn_run_init(&R, dm);
    const double q[4] = {0x1p-9, 448, 448, 8}, k[8] = {0x1p-9, 448, -448, 8, 0, 0, 0, 8};
    const double vv[8] = {448, 0, 0, 0, 0, 448, 0, 0};
    memcpy(R.q, q, sizeof q), memcpy(R.k, k, sizeof k), memcpy(R.v, vv, sizeof vv);
    pp_attn_scalars sc;
    for (int si = 0; si < N_SETTINGS; si++) {
        if (SETTINGS[si].sch == PP_ATTN_FP8_SCALING_NVFP4)
            continue;  // e2m1 holds none of these values
        pp_attn_variant v = fa3(SETTINGS[si].sch, SETTINGS[si].mma, 1.0, 1.0);
        pp_attn_scalars_make(&v, dm.d, &sc);
        float sig = sc.sl2, ms = fmaf(64.0f, sig, -8.0f);
        double s0 = 64.0 + 0x1p-18;
        assert_true((double)(float)s0 != s0);
        float p0 = pp_attn_exp2f((float)fma(s0, (double)sig, -(double)ms));
        float p1 = pp_attn_exp2f(fmaf(64.0f, sig, -ms)), l = p0 + p1, s = 1.0f / l;
        pp_site_mask base = BIT(P) | BIT(PV_ACC) | BIT(OUT);
        attn_run_go(&R, v, base, 0);
        double nominal = R.out[0];
        assert_true(nominal == 448.0 * (double)p1 * (double)(1.0f / (p1 + p1)));  // S0 = S1 = 64
        attn_run_go(&R, v, base | BIT(SCORES), 0);
        double want = 448.0 * (double)p0 * (double)s, truth = 448.0 / (1.0 + exp(-0x1p-18));
        if (R.out[0] != want || R.out[1] != 448.0 * (double)p1 * (double)s)
            fail_msg("%s %s: out (%a, %a), want (%a, %a)", sch_name(SETTINGS[si].sch),
                     SETTINGS[si].mma ? "sm90" : "chain", R.out[0], R.out[1], want, 448.0 * (double)p1 * (double)s);
        assert_true(p0 > p1);
        assert_true(fabs(R.out[0] - truth) < 0.25 * fabs(nominal - truth));
    }
    attn_run_free(&R);
}

// pv_acc exact (with out exact, so the bf16 store does not hide it). d = 2, σ = RN_32(ln 2)-ish so
// that σ' = RN_32(σ32·log2 e) ≈ 1 (whatever its last bit, p1 = 2^(8 − 16σ') lies within 2^−10 of
// 2^−8 and P8 = 2^−8). Two queries q0 = (1, 0), q1 = (0, 448) (amax 448: descale 1), keys
// k0 = (0, 448), k1 = k2 = (−16, 0): row 0's S = (0, −16, −16), P8 = (2^8, 2^−8, 2^−8); v0 =
// (448, 0), v1 = v2 = (2^−9, 0). P·V's binary32 chain: 2^8·448 = 114688, then + 2^−17 twice,
// each below half an ulp_32(114688) = 2^−8: o_0 = 114688; Hopper's group (E = 16) truncates the
// two 2^−17 products the same way; mx's block chain too (scales 1). Exact: o_0 = 114688 + 2^−16,
// out_0 = o_0·s, s = RN_32(1 ⊘ l), l = (2^8 ⊕ p1) ⊕ p1 (keys 0, 1 in l_0, key 2 in l_1).
static void fp8_pv_acc_by_hand(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 1, .s_q = 2, .s_kv = 3, .h = 1, .h_kv = 1, .d = 2, .causal = 0};
    attn_run R;
    attn_run_init(&R, dm);
    const double q[4] = {1, 0, 0, 448}, k[6] = {0, 448, -16, 0, -16, 0}, vv[6] = {448, 0, 0x1p-9, 0, 0x1p-9, 0};
    memcpy(R.q, q, sizeof q), memcpy(R.k, k, sizeof k), memcpy(R.v, vv, sizeof vv);
    pp_attn_scalars sc;
    for (int si = 0; si < N_SETTINGS; si++) {
        if (SETTINGS[si].sch == PP_ATTN_FP8_SCALING_NVFP4)
            continue;
        pp_attn_variant v = fa3(SETTINGS[si].sch, SETTINGS[si].mma, 0.6931471805599453, 1.0);
        pp_attn_scalars_make(&v, dm.d, &sc);
        float p1 = pp_attn_exp2f(fmaf(-16.0f, sc.sl2, 8.0f));
        assert_true(pp_round(PP_FMT_E4M3, (double)p1, PP_RND_NE, 0) == 0x1p-8);
        float l = (256.0f + p1) + p1, s = 1.0f / l;
        attn_run_go(&R, v, BIT(OUT), 0);
        assert_true(R.out[0] == 114688.0 * (double)s);
        attn_run_go(&R, v, BIT(OUT) | BIT(PV_ACC), 0);
        if (R.out[0] != (114688.0 + 0x1p-16) * (double)s || R.out[1] != 0.0)
            fail_msg("%s %s: out (%a, %a), want (%a, 0)", sch_name(SETTINGS[si].sch),
                     SETTINGS[si].mma ? "sm90" : "chain", R.out[0], R.out[1], (114688.0 + 0x1p-16) * (double)s);
    }
    attn_run_free(&R);
}

// ---------------------------------------------------------------------------------------------
// Every site exact

// Every site fa3's explain offers (src/ops/op_attention.c explain_sites; block scales and σ' only
// act where the scaling has them).
static const pp_site_mask ALL_FA3 = BIT(QUANT_Q) | BIT(QUANT_K) | BIT(QUANT_V) | BIT(BLOCK_SCALE_Q) | BIT(BLOCK_SCALE_K) |
                                    BIT(BLOCK_SCALE_V) | BIT(BLOCK_SCALE_P) | BIT(SOFTMAX_SCALE) | BIT(SCORES) |
                                    BIT(ROW_MAX) | BIT(SOFTMAX_IN) | BIT(ROW_SUM) | BIT(P) | BIT(PV_ACC) |
                                    BIT(ROW_INV) | BIT(OUT_SCALE) | BIT(LSE) | BIT(OUT);
// q, k, v's quantisation: the elements, and nvfp4's E4M3 block scales (made exact, a block scale
// has 24 bits, and X·B·E more than the quantised reference's split takes)
static const pp_site_mask QUANT = BIT(QUANT_Q) | BIT(QUANT_K) | BIT(QUANT_V) | BIT(BLOCK_SCALE_Q) | BIT(BLOCK_SCALE_K) |
                                  BIT(BLOCK_SCALE_V);

// max |out − ref| / max |ref's v| over the n outputs.
static double rel_err(const double *out, const double *ref, int64_t n, double vmax)
{
    double e = 0.0;
    for (int64_t i = 0; i < n; i++)
        e = fmax(e, fabs(out[i] - ref[i]));
    return e / vmax;
}

// With every site exact what still rounds (u = 2^−24): p = RN_32(2^x) (P keeps binary32, |δ| ≤ u
// relative), and σ' = sl2·X_q·X_k holds the kernel's binary32 constant sl2 = RN_32(σ32·log2 e)
// (constants are not sites: relative error ≤ 2u), which moves each argument x_j = (S_j − m)·σ' by
// ≤ 2u·|x_j|; binary64's own roundings are below 2^−40 here. out = Σ w_j·v_j, w_j = p_j/l, so to
// first order |Δout| ≤ Σ w_j·(2u + 2·ln 2·2u·|x_j|)·max|v| ≤ (2 + 4·ln 2·log2 n)·u·max|v| (Σ w_j·|x_j|
// ≤ log2 n for softmax weights of n keys, the max at x = 0): the bound stated in kernels/attention.h
// "Exact sites", against the exact attention of the quantised values X·B·E (every site but the
// quantisation's: the elements, block scales and descales the kernel reads,
// src/ops/attention_ref_quantised.h) and of the given inputs (every site). Every scaling × mma,
// causal GQA, 200 keys (two tiles), head 1 of q scaled 16× (an outlier head, as fp8-attention).
// And the chains are what closes the gap: with them rounding (the rest exact) the error is larger
// on every setting, by orders of magnitude under Hopper's truncation (sm90).
static void fp8_every_site_exact_is_exact_attention(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 1, .s_q = 24, .s_kv = 200, .h = 2, .h_kv = 1, .d = 32, .causal = 1};
    int64_t nq = dm.b * dm.s_q * dm.h * dm.d, nk = dm.b * dm.s_kv * dm.h_kv * dm.d;
    attn_run R;
    attn_run_init(&R, dm);
    attn_run_fill(&R, PP_FMT_BF16, 28);
    for (int64_t i = 0; i < nq; i++)  // [b][s][h][d]: head 1 scaled 16× (exact in bf16)
        if ((i / dm.d) % dm.h == 1)
            R.q[i] *= 16.0;
    double vmax = 0.0;
    for (int64_t i = 0; i < nk; i++)
        vmax = fmax(vmax, fabs(R.v[i]));
    pp_attn_ref_opts o = {.method = PP_ATTN_REF_FAST, .b = dm.b, .s_q = dm.s_q, .s_kv = dm.s_kv, .h = dm.h,
                          .h_kv = dm.h_kv, .d = dm.d, .causal = dm.causal, .threads = 1};
    double *ro = malloc((size_t)nq * 8), *rl = malloc((size_t)(dm.b * dm.h * dm.s_q) * 8), bo, bl;
    pp_error e = {0};
    assert_int_equal(pp_attention_ref(&o, R.q, R.k, R.v, NULL, ro, rl, NULL, NULL, NULL, NULL, &e), 0);
    double *qo = malloc((size_t)nq * 8), *ql = malloc((size_t)(dm.b * dm.h * dm.s_q) * 8);
    double *ve = malloc((size_t)nk * 8), *vb = malloc((size_t)nk * 8);
    for (int si = 0; si < N_SETTINGS; si++) {
        pp_attn_variant v = fa3(SETTINGS[si].sch, SETTINGS[si].mma, 0.0, 224.0);
        const char *name = sch_name(SETTINGS[si].sch), *mma = SETTINGS[si].mma ? "sm90" : "chain";
        v.exact_sites = ALL_FA3 & ~QUANT;
        if (pp_attention_ref_quantised(&o, &v, R.q, R.k, R.v, qo, ql, &bo, &bl, &e))
            fail_msg("%s %s: the quantised reference: %s", name, mma, e.msg);
        // max |v'| of the quantised v' = X·B·E (the reference's out is a convex combination of v')
        double X = pp_attn_fp8_quantise_tensor(&v, &dm, 2, R.v, 0, ve, vb), vq = 0.0;
        for (int64_t i = 0; i < nk; i++)
            vq = fmax(vq, fabs(X * vb[i] * ve[i]));
        attn_run_go(&R, v, ALL_FA3 & ~QUANT, 0);
        double eq = rel_err(R.out, qo, nq, vq);
        attn_run_go(&R, v, ALL_FA3, 0);
        double ea = rel_err(R.out, ro, nq, vmax);
        attn_run_go(&R, v, ALL_FA3 & ~QUANT & ~BIT(SCORES) & ~BIT(PV_ACC), 0);
        double ec = rel_err(R.out, qo, nq, vq);
        print_message("%-14s %-5s every site but the quantisation %.3g, every site %.3g, chains rounding %.3g "
                      "(·max|v|)\n", name, mma, eq, ea, ec);
        double bound = (2.0 + 4.0 * log(2.0) * log2((double)dm.s_kv)) * 0x1p-24;
        if (!(eq <= bound) || !(ea <= bound))
            fail_msg("%s %s: every site exact beyond %g·max|v|: %g (quantised inputs), %g (inputs)", name, mma, bound,
                     eq, ea);
        if (!(ec > eq) || (SETTINGS[si].mma == PP_ATTN_FP8_MMA_SM90 && !(ec > bound)))
            fail_msg("%s %s: with the chains rounding the error (%g) is not above every site exact's (%g)", name, mma,
                     ec, eq);
    }
    free(ro), free(rl), free(qo), free(ql), free(ve), free(vb);
    attn_run_free(&R);
}

int main(void)
{
    pp_test_report_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fp8_chains_with_nothing_to_round_are_the_kernel),
        cmocka_unit_test(fp8_scores_by_hand),
        cmocka_unit_test(fp8_pv_acc_by_hand),
        cmocka_unit_test(fp8_every_site_exact_is_exact_attention),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
