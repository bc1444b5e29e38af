// test_explain_attention_chains.c — explain's GEMM-chain sites of attention (kernels/attention.h
// "Exact sites", chains): flash's S dot (scores), its running P·V accumulator (pv_acc), the
// backward's dP and D dots, the dq and dk/dv chains (dq_acc, dkv_acc), and the unfused fp32 row sum
// (row_sum), each in binary64, on hand-computed rows; then every site exact against the reference;
// the unfused kernel's S, P·V and dP GEMM chains likewise (fp32 and storage accumulation).
// Run: build/rel/tests/test_explain_attention_chains
#include "test_util.h"

#include "attn_run.h"

#include <math.h>

#include "attention_ref.h"
#include "cpu/attention.h"
#include "exact_sites.h"
#include "sites.h"

// ---------------------------------------------------------------------------------------------
// Helpers

// fp32 storage, σ = 1 (α_32 = 1: the scores are the raw dots, dq' = dQ), kernel k.
static pp_attn_variant variant(pp_attn_kernel k, pp_format_id f)
{
    pp_attn_variant v;
    memset(&v, 0, sizeof v);
    v.format = f;
    v.kernel = k;
    v.cp_accum = v.cp_grad_accum = f;
    v.sigma_given = 1;
    v.sigma = 1.0;
    return v;
}

static int64_t n_differing(const double *a, const double *b, int64_t n)
{
    int64_t c = 0;
    for (int64_t i = 0; i < n; i++)
        c += memcmp(&a[i], &b[i], sizeof a[i]) != 0;
    return c;
}

// ---------------------------------------------------------------------------------------------
// Flash forward: S and P·V

// One query q = (1, 1), keys k0 = (64, 2^−19), k1 = (64, 0), v0 = (1, 0), v1 = (0, 1). The fp32 S
// chain rounds s0 = 64 + 2^−19 to 64 (a quarter ulp_32(64) = 2^−17), so nominally s0 = s1 = 64:
// p = (1, 1), l = 2, out = (0.5, 0.5). With scores exact s0 keeps 2^−19, m = RN_32(s0) = 64 and
// the argument (s0 − 64)·sl2 = 2^−19·sl2 is exact, so p0 = RN_32(2^(2^−19·sl2)) ≈ 1 + 2^−19 (sl2·ln2
// ≈ 1), l = RN_32(1 + p0), out = (RN_32(p0·RN_32(1/l)), RN_32(RN_32(1/l))) ≈ (0.5 + 2^−21,
// 0.5 − 2^−21): the truth p0/(1 + p0) = 1/(1 + e^−2^−19) = 0.5 + 2^−21 + O(2^−59) to within 2 ulp_32.
static void chains_flash_scores_by_hand(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 1, .s_q = 1, .s_kv = 2, .h = 1, .h_kv = 1, .d = 2, .causal = 0};
    attn_run R;
    attn_run_init(&R, dm);
    R.q[0] = R.q[1] = 1.0;
    R.k[0] = 64.0, R.k[1] = 0x1p-19, R.k[2] = 64.0, R.k[3] = 0.0;
    R.v[0] = 1.0, R.v[1] = 0.0, R.v[2] = 0.0, R.v[3] = 1.0;
    pp_attn_variant v = variant(PP_ATTN_FLASH, PP_FMT_FP32);
    attn_run_go(&R, v, 0, 0);
    assert_true(R.out[0] == 0.5 && R.out[1] == 0.5);
    attn_run_go(&R, v, PP_SITE_BIT(PP_SITE_ATTN_SCORES), 0);
    float sl2 = (float)1.4426950408889634;
    float p0 = (float)exp2(0x1p-19 * (double)sl2), l = 1.0f + p0, inv = 1.0f / l;
    assert_true(p0 > 1.0f);
    assert_true(R.out[0] == (double)(p0 * inv));
    assert_true(R.out[1] == (double)inv);
    assert_true(fabs(R.out[0] - (0.5 + 0x1p-21)) <= 0x1p-23);  // 2 ulp_32(0.5)
    assert_true(fabs(R.out[1] - (0.5 - 0x1p-21)) <= 0x1p-23);
    attn_run_free(&R);
}

// One query q = 0 (every score 0: p = 1, l = 3), three keys with v = (1, 2^−24, 2^−24), d = 1. The
// fp32 P·V chain o = fma(1, 2^−24, 1) ties to even twice: o = 1, out = RN_32(1/3). With pv_acc
// exact o = 1 + 2^−23 in binary64 and out = RN_32((1 + 2^−23)·RN_32(1/3)) = (1 + 2^−23)/3, the
// truth itself (0x800001 = 3·0x2aaaab: a binary32 value), where the nominal out is 2^−25 below it.
static void chains_flash_pv_acc_by_hand(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 1, .s_q = 1, .s_kv = 3, .h = 1, .h_kv = 1, .d = 1, .causal = 0};
    attn_run R;
    attn_run_init(&R, dm);
    R.v[0] = 1.0, R.v[1] = R.v[2] = 0x1p-24;
    pp_attn_variant v = variant(PP_ATTN_FLASH, PP_FMT_FP32);
    double truth = (1.0 + 0x1p-23) / 3.0;
    assert_true((double)(float)truth == truth);
    attn_run_go(&R, v, 0, 0);
    assert_true(R.out[0] == (double)(1.0f / 3.0f));
    assert_true(R.out[0] == truth - 0x1p-25);
    attn_run_go(&R, v, PP_SITE_BIT(PP_SITE_ATTN_PV_ACC), 0);
    assert_true(R.out[0] == truth);
    // bf16 storage: P·V's accumulator is fp32 either way, the store RN_bf16 hides the 2^−25
    v = variant(PP_ATTN_FLASH, PP_FMT_BF16);
    attn_run_go(&R, v, PP_SITE_BIT(PP_SITE_ATTN_PV_ACC), 0);
    assert_true(R.out[0] == pp_round(PP_FMT_BF16, 1.0 / 3.0, PP_RND_NE, 0));
    attn_run_free(&R);
}

// ---------------------------------------------------------------------------------------------
// Flash backward: dP, D, dq and dv chains

// One query q = 0, two keys (scores 0: forward p = 1, l = 2, lse = RN_32(ln 2); the backward's P =
// 2^−RN_32(RN_32(ln 2)·RN_32(log2 e)) = 2^−1 exactly), d = 3, σ = 1, dO = (1, 1, 1),
// v0 = (1, 2^−24, 2^−24), v1 = (1, 0, 0), k0 = (1, 0, 0), k1 = (0, 1, 0). out = (v0 + v1)/2 =
// (1, 2^−25, 2^−25) exactly. The fp32 dots tie to even: dP0 = 1 (exact 1 + 2^−23), D = 1 (exact
// 1 + 2^−24), dP1 = 1 (exact). dS_j = P_j·(dP_j − D), and dq = (dS0, dS1, 0) (k picks them out):
//   nominal (0, 0, 0);  D exact (−2^−25, −2^−25, 0);  dP exact (2^−24, 0, 0);
//   both (2^−25, −2^−25, 0), the truth (Σ dS = 0, as the softmax's gradient must).
static void chains_flash_dp_and_d_by_hand(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 1, .s_q = 1, .s_kv = 2, .h = 1, .h_kv = 1, .d = 3, .causal = 0};
    attn_run R;
    attn_run_init(&R, dm);
    R.dout[0] = R.dout[1] = R.dout[2] = 1.0;
    R.v[0] = 1.0, R.v[1] = R.v[2] = 0x1p-24, R.v[3] = 1.0;
    R.k[0] = 1.0, R.k[4] = 1.0;
    pp_attn_variant v = variant(PP_ATTN_FLASH, PP_FMT_FP32);
    static const struct {
        pp_site_mask x;
        double dq0, dq1;
    } want[] = {
        {.x = 0, .dq0 = 0.0, .dq1 = 0.0},
        {.x = PP_SITE_BIT(PP_SITE_ATTN_D), .dq0 = -0x1p-25, .dq1 = -0x1p-25},
        {.x = PP_SITE_BIT(PP_SITE_ATTN_DP), .dq0 = 0x1p-24, .dq1 = 0.0},
        {.x = PP_SITE_BIT(PP_SITE_ATTN_DP) | PP_SITE_BIT(PP_SITE_ATTN_D), .dq0 = 0x1p-25, .dq1 = -0x1p-25},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        attn_run_go(&R, v, want[i].x, 1);
        assert_true(R.out[0] == 1.0 && R.out[1] == 0x1p-25 && R.out[2] == 0x1p-25);
        if (R.dq[0] != want[i].dq0 || R.dq[1] != want[i].dq1 || R.dq[2] != 0.0)
            fail_msg("case %zu: dq (%a, %a, %a), want (%a, %a, 0)", i, R.dq[0], R.dq[1], R.dq[2], want[i].dq0,
                     want[i].dq1);
    }
    attn_run_free(&R);
}

// Three queries q = 0 and one key (non-causal): P = 1 for every row, so dv = Σ_i dO_i over the
// rows; dO = (1, 2^−24, 2^−24) (d = 1). The fp32 chain ties to even twice: dv = 1; with dkv_acc
// exact the chain is binary64, dv = RN_32(1 + 2^−23) = 1 + 2^−23 (fp32 storage stores it).
// dS = 0 (one key), so dq and dk are 0 either way.
static void chains_flash_dkv_acc_by_hand(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 1, .s_q = 3, .s_kv = 1, .h = 1, .h_kv = 1, .d = 1, .causal = 0};
    attn_run R;
    attn_run_init(&R, dm);
    R.dout[0] = 1.0, R.dout[1] = R.dout[2] = 0x1p-24;
    R.v[0] = 1.0, R.k[0] = 1.0;
    pp_attn_variant v = variant(PP_ATTN_FLASH, PP_FMT_FP32);
    attn_run_go(&R, v, 0, 1);
    assert_true(R.dv[0] == 1.0);
    attn_run_go(&R, v, PP_SITE_BIT(PP_SITE_ATTN_DKV_ACC), 1);
    assert_true(R.dv[0] == 1.0 + 0x1p-23);
    assert_true(R.dk[0] == 0.0 && R.dq[0] == 0.0);
    // the unfused kernel's dv chain (accumulate fp32) is the same chain over the rows
    v = variant(PP_ATTN_UNFUSED, PP_FMT_FP32);
    attn_run_go(&R, v, 0, 1);
    assert_true(R.dv[0] == 1.0);
    attn_run_go(&R, v, PP_SITE_BIT(PP_SITE_ATTN_DKV_ACC), 1);
    assert_true(R.dv[0] == 1.0 + 0x1p-23);
    attn_run_free(&R);
}

// ---------------------------------------------------------------------------------------------
// Unfused: the fp32 row sum

// One query q = 1 (d = 1, σ = 1: S = the keys, exact), 1000 keys in [−2, 2) with the largest, 2,
// first. e_j = RN_32(exp(RN_32(k_j − 2))) lies in [e^−4, 1], so e_j are multiples of 2^−30 below
// 2^10 and their binary64 sum is exact in any order. With row_sum and lse exact the lse is
// exactly 2 + log(Σ e_j) in binary64; the nominal fp32 sum rounds and its lse is further off.
static void chains_unfused_row_sum_by_hand(void **state)
{
    (void)state;
    enum { N = 1000 };
    pp_attn_dims dm = {.b = 1, .s_q = 1, .s_kv = N, .h = 1, .h_kv = 1, .d = 1, .causal = 0};
    attn_run R;
    attn_run_init(&R, dm);
    pp_test_rng r = {9};
    R.q[0] = 1.0;
    R.k[0] = 2.0;
    for (int j = 1; j < N; j++)
        R.k[j] = (double)(float)(pp_test_rng_unit(&r) * 4.0 - 2.0);
    for (int j = 0; j < N; j++)
        R.v[j] = 1.0;
    double l64 = 0.0;
    for (int j = 0; j < N; j++) {
        float e = pp_expf((float)R.k[j] - 2.0f);
        assert_true(e >= 0x1p-6f && e <= 1.0f);
        l64 += e;
    }
    double want = 2.0 + log(l64);
    pp_attn_variant v = variant(PP_ATTN_UNFUSED, PP_FMT_FP32);
    attn_run_go(&R, v, PP_SITE_BIT(PP_SITE_ATTN_LSE), 0);
    double lse_rounded_sum = R.lse[0];
    attn_run_go(&R, v, PP_SITE_BIT(PP_SITE_ATTN_LSE) | PP_SITE_BIT(PP_SITE_ATTN_ROW_SUM), 0);
    assert_true(R.lse[0] == want);
    assert_true(lse_rounded_sum != want);
    // the binary32 lse reads the binary64 sum too: RN_32 steps on RN_32(log l64)
    attn_run_go(&R, v, PP_SITE_BIT(PP_SITE_ATTN_ROW_SUM), 0);
    assert_true(R.lse[0] == (double)(2.0f + (float)log(l64)));
    attn_run_free(&R);
}

// The unfused fp32 softmax backward's D = Σ dP·P: one query q = 0, four keys (P = 1/4 each),
// d = 1, σ = 1, dO = 1, v = (4, 2^−22, 2^−22, 0), k = (0, 0, 0, 1). dP = v (exact), the products
// dP·P = (1, 2^−24, 2^−24, 0), and the fp32 chain D ties to even twice: D = 1; exact D = 1 + 2^−23.
// dq = dS_3 = RN_32(0·P − P·D): nominal −1/4, with d exact −(1/4)(1 + 2^−23) = −1/4 − 2^−25 (a
// binary32 value: ulp_32(1/4) = 2^−25), the truth.
static void chains_unfused_d_by_hand(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 1, .s_q = 1, .s_kv = 4, .h = 1, .h_kv = 1, .d = 1, .causal = 0};
    attn_run R;
    attn_run_init(&R, dm);
    R.dout[0] = 1.0;
    R.v[0] = 4.0, R.v[1] = R.v[2] = 0x1p-22, R.v[3] = 0.0;
    R.k[3] = 1.0;
    pp_attn_variant v = variant(PP_ATTN_UNFUSED, PP_FMT_FP32);
    attn_run_go(&R, v, 0, 1);
    assert_true(R.dq[0] == -0.25);
    attn_run_go(&R, v, PP_SITE_BIT(PP_SITE_ATTN_D), 1);
    assert_true(R.dq[0] == -0.25 - 0x1p-25);
    attn_run_free(&R);
}

// ---------------------------------------------------------------------------------------------
// Every site exact against the reference

// The sum of squares of a − ref over n values.
static double sq_err(const double *a, const double *ref, int64_t n)
{
    double s = 0.0;
    for (int64_t i = 0; i < n; i++)
        s += (a[i] - ref[i]) * (a[i] - ref[i]);
    return s;
}

// v on R's random inputs, forward and backward: each of sites[0..n) alone moves out or a
// gradient; with every site of `all` exact the residual against the reference is below the one
// with every site but `chains` exact, for out and for the gradients together; and every site exact
// puts out within 2^−22·max|v| of the reference (the bound above each caller).
static void check_every_site_exact(attn_run *R, pp_attn_variant v, const int *sites, int n, pp_site_mask chains,
                                   pp_site_mask all, const char *what)
{
    pp_attn_dims dm = R->dm;
    int64_t nq = dm.b * dm.s_q * dm.h * dm.d, nk = dm.b * dm.s_kv * dm.h_kv * dm.d;
    pp_attn_ref_opts o;
    memset(&o, 0, sizeof o);
    o.method = PP_ATTN_REF_FAST;
    o.b = dm.b, o.s_q = dm.s_q, o.s_kv = dm.s_kv, o.h = dm.h, o.h_kv = dm.h_kv, o.d = dm.d, o.causal = dm.causal;
    o.backward = 1, o.threads = 1;
    double *ro = malloc((size_t)nq * 8), *rl = malloc((size_t)(dm.b * dm.s_q * dm.h) * 8), *rq = malloc((size_t)nq * 8);
    double *rk = malloc((size_t)nk * 8), *rv = malloc((size_t)nk * 8);
    pp_error e = {0};
    assert_int_equal(pp_attention_ref(&o, R->q, R->k, R->v, R->dout, ro, rl, rq, rk, rv, NULL, &e), 0);
    attn_run_go(R, v, 0, 1);
    double *out0 = dupd(R->out, nq), *dq0 = dupd(R->dq, nq), *dk0 = dupd(R->dk, nk), *dv0 = dupd(R->dv, nk);
    for (int i = 0; i < n; i++) {
        attn_run_go(R, v, PP_SITE_BIT(sites[i]), 1);
        int64_t moved = n_differing(R->out, out0, nq) + n_differing(R->dq, dq0, nq) + n_differing(R->dk, dk0, nk) +
                        n_differing(R->dv, dv0, nk);
        if (moved == 0)
            fail_msg("%s: site %s exact moves nothing", what, pp_site_get(sites[i])->name);
    }
    double eo[2], eg[2];
    for (int w = 0; w < 2; w++) {
        attn_run_go(R, v, w ? all : all & ~chains, 1);
        eo[w] = sq_err(R->out, ro, nq);
        eg[w] = sq_err(R->dq, rq, nq) + sq_err(R->dk, rk, nk) + sq_err(R->dv, rv, nk);
    }
    if (!(eo[1] < eo[0]) || !(eg[1] < eg[0]))
        fail_msg("%s, every site exact: out %g (chains rounding: %g), grads %g (%g)", what, eo[1], eo[0], eg[1], eg[0]);
    double vmax = 0.0;
    for (int64_t i = 0; i < nk; i++)
        vmax = fmax(vmax, fabs(R->v[i]));
    attn_run_go(R, v, all, 1);
    for (int64_t i = 0; i < nq; i++)
        if (!(fabs(R->out[i] - ro[i]) <= 4.0 * 0x1p-24 * vmax))
            fail_msg("%s: out[%lld] = %a, reference %a: beyond 2^-22·max|v|", what, (long long)i, R->out[i], ro[i]);
    free(out0), free(dq0), free(dk0), free(dv0);
    free(ro), free(rl), free(rq), free(rk), free(rv);
}

// Flash fp32, causal, GQA, forward and backward on random values: each chain site alone moves its
// tensor; with every offered site exact (the store and scalar sites, and now the chains) the
// residual against the reference shrinks below the one with every site but the chains exact, for
// out and for the gradients together. The bound: with every site exact what still rounds is p =
// RN_32(2^x) (P keeps binary32, |δ| ≤ 2^−24 relative), dS = RN_32 of its binary64 value (no
// binary64 shadow), and binary64's own roundings (each chain ≤ γ_n·Σ|terms| ≈ n·2^−53·Σ|terms|);
// so |out − ref| ≤ 2·2^−24·max|v| (out is a convex combination of v whose weights p/l each move by
// ≤ 2·2^−24 relative, to first order): asserted with a factor 2 to spare.
static void chains_every_site_exact_shrinks_residual(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 1, .s_q = 48, .s_kv = 48, .h = 2, .h_kv = 1, .d = 16, .causal = 1};
    attn_run R;
    attn_run_init(&R, dm);
    attn_run_fill(&R, PP_FMT_FP32, 26);
    pp_attn_variant v = variant(PP_ATTN_FLASH, PP_FMT_FP32);
    v.sigma_given = 0;  // σ = 1/√d, as a real case
    pp_site_mask chains = PP_SITE_BIT(PP_SITE_ATTN_SCORES) | PP_SITE_BIT(PP_SITE_ATTN_PV_ACC) |
                          PP_SITE_BIT(PP_SITE_ATTN_DP) | PP_SITE_BIT(PP_SITE_ATTN_D) |
                          PP_SITE_BIT(PP_SITE_ATTN_DQ_ACC) | PP_SITE_BIT(PP_SITE_ATTN_DKV_ACC);
    pp_site_mask rest = PP_SITE_BIT(PP_SITE_ATTN_P) | PP_SITE_BIT(PP_SITE_ATTN_OUT) | PP_SITE_BIT(PP_SITE_ATTN_LSE) |
                        PP_SITE_BIT(PP_SITE_ATTN_SOFTMAX_IN) | PP_SITE_BIT(PP_SITE_ATTN_ROW_MAX) |
                        PP_SITE_BIT(PP_SITE_ATTN_ROW_SUM) | PP_SITE_BIT(PP_SITE_ATTN_ROW_INV) |
                        PP_SITE_BIT(PP_SITE_ATTN_DS) | PP_SITE_BIT(PP_SITE_ATTN_DQ) | PP_SITE_BIT(PP_SITE_ATTN_DK) |
                        PP_SITE_BIT(PP_SITE_ATTN_DV);
    static const int sites[] = {PP_SITE_ATTN_SCORES, PP_SITE_ATTN_PV_ACC, PP_SITE_ATTN_DP,
                                PP_SITE_ATTN_D,      PP_SITE_ATTN_DQ_ACC, PP_SITE_ATTN_DKV_ACC};
    check_every_site_exact(&R, v, sites, 6, chains, rest | chains, "flash");
    attn_run_free(&R);
}

// ---------------------------------------------------------------------------------------------
// The unfused kernel's GEMM chains: S, P·V (and dP, through the residual test below)

// One query q = (1, 1, 1), keys k0 = (64, 2^−18, 2^−18), k1 = (64, 0, 0), v0 = (1, 0), v1 = (0, 1),
// σ = 1, fp32. S's fp32 chain ties to even twice: 64 + 2^−18 is half an ulp_32(64) = 2^−17 above
// 64, so s0 = 64 = s1 and out = (0.5, 0.5). With scores exact the binary64 chain is 64 + 2^−17, a
// binary32 value (its one rounding is exact): s0 − s1 = 2^−17 and out = (σ(2^−17), 1 − σ(2^−17)) ≈
// (0.5 + 2^−19, 0.5 − 2^−19), within 2 ulp_32(0.5) of the truth.
static void chains_unfused_scores_by_hand(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 1, .s_q = 1, .s_kv = 2, .h = 1, .h_kv = 1, .d = 3, .causal = 0};
    attn_run R;
    attn_run_init(&R, dm);
    R.q[0] = R.q[1] = R.q[2] = 1.0;
    R.k[0] = 64.0, R.k[1] = R.k[2] = 0x1p-18, R.k[3] = 64.0, R.k[4] = R.k[5] = 0.0;
    // v [s_kv][d]: v0 = (1, 0, 0), v1 = (0, 1, 0)
    R.v[0] = 1.0, R.v[4] = 1.0;
    pp_attn_variant v = variant(PP_ATTN_UNFUSED, PP_FMT_FP32);
    attn_run_go(&R, v, 0, 0);
    assert_true(R.out[0] == 0.5 && R.out[1] == 0.5);
    attn_run_go(&R, v, PP_SITE_BIT(PP_SITE_ATTN_SCORES), 0);
    double t = 1.0 / (1.0 + exp(-0x1p-17));
    assert_true(R.out[0] > 0.5 && R.out[1] < 0.5);
    assert_true(fabs(R.out[0] - t) <= 0x1p-23);
    assert_true(fabs(R.out[1] - (1.0 - t)) <= 0x1p-23);
    attn_run_free(&R);
}

// One query q = 0 (every score 0: P = 1/4 exactly), four keys, d = 1, v = (1, 2^−24, 2^−24, 0).
// The P·V chain in fp32: 1/4, then + 2^−26 twice, each a tie (half an ulp_32(1/4) = 2^−25) to even
// 1/4: out = 1/4. With pv_acc exact the binary64 chain is 1/4 + 2^−25, a binary32 value: out is the
// truth. In fp16 with storage accumulation every step rounds to fp16 (1/4 + 2^−26 → 1/4): pv_acc
// exact gives RN_fp16(1/4 + 2^−25) = 1/4 (ulp_fp16(1/4) = 2^−12), the store still rounding.
static void chains_unfused_pv_acc_by_hand(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 1, .s_q = 1, .s_kv = 4, .h = 1, .h_kv = 1, .d = 1, .causal = 0};
    attn_run R;
    attn_run_init(&R, dm);
    R.v[0] = 1.0, R.v[1] = R.v[2] = 0x1p-24;
    pp_attn_variant v = variant(PP_ATTN_UNFUSED, PP_FMT_FP32);
    attn_run_go(&R, v, 0, 0);
    assert_true(R.out[0] == 0.25);
    attn_run_go(&R, v, PP_SITE_BIT(PP_SITE_ATTN_PV_ACC), 0);
    assert_true(R.out[0] == 0.25 + 0x1p-25);
    // out exact too: its shadow holds the binary64 chain (here the same value)
    attn_run_go(&R, v, PP_SITE_BIT(PP_SITE_ATTN_PV_ACC) | PP_SITE_BIT(PP_SITE_ATTN_OUT), 0);
    assert_true(R.out[0] == 0.25 + 0x1p-25);
    attn_run_free(&R);
}

// Unfused, bf16 with storage accumulation (every GEMM step rounds to bf16): with every site
// exact — now the S, P·V and dP chains too — out is within 2^−22·max|v| of the reference on the
// same inputs (the flash bound above: P's binary32 exp and dS's RN_32 are what still round), and
// the gradients' residual is below the one with every site but the chains exact; each chain site
// alone moves its tensors.
static void chains_unfused_storage_every_site(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 1, .s_q = 40, .s_kv = 40, .h = 2, .h_kv = 1, .d = 16, .causal = 1};
    attn_run R;
    attn_run_init(&R, dm);
    attn_run_fill(&R, PP_FMT_BF16, 27);
    pp_attn_variant v = variant(PP_ATTN_UNFUSED, PP_FMT_BF16);
    v.sigma_given = 0;
    v.accum = PP_ATTN_ACC_STORAGE;
    pp_site_mask chains = PP_SITE_BIT(PP_SITE_ATTN_SCORES) | PP_SITE_BIT(PP_SITE_ATTN_PV_ACC) |
                          PP_SITE_BIT(PP_SITE_ATTN_DP) | PP_SITE_BIT(PP_SITE_ATTN_DQ_ACC) |
                          PP_SITE_BIT(PP_SITE_ATTN_DKV_ACC);
    static const int sites[] = {PP_SITE_ATTN_SCORES, PP_SITE_ATTN_PV_ACC, PP_SITE_ATTN_DP};
    check_every_site_exact(&R, v, sites, 3, chains, (PP_SITE_BIT(PP_SITE_COUNT - 1) << 1) - 1, "unfused storage");
    attn_run_free(&R);
}

int main(void)
{
    pp_test_report_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(chains_flash_scores_by_hand),
        cmocka_unit_test(chains_flash_pv_acc_by_hand),
        cmocka_unit_test(chains_flash_dp_and_d_by_hand),
        cmocka_unit_test(chains_flash_dkv_acc_by_hand),
        cmocka_unit_test(chains_unfused_row_sum_by_hand),
        cmocka_unit_test(chains_unfused_d_by_hand),
        cmocka_unit_test(chains_every_site_exact_shrinks_residual),
        cmocka_unit_test(chains_unfused_scores_by_hand),
        cmocka_unit_test(chains_unfused_pv_acc_by_hand),
        cmocka_unit_test(chains_unfused_storage_every_site),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
