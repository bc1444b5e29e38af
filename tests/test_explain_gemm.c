// test_explain_gemm.c — `precprobe explain` on the GEMM (kernels/gemm.h "Exact sites",
// src/pipeline/explain.c): with no site exact the explain path is the emulation bit for bit, for
// every accumulation × scale placement × format; each site made exact changes exactly its own
// rounding (hand-computed cases); the BLOOM story's known answer: post-scaling with fp16
// accumulation overflows, and the accumulation site carries the Inf.
#include "test_util.h"

#include <math.h>

#include "cpu/gemm.h"
#include "gemm_scaled_thread.h"
#include "pipeline/explain.h"
#include "pipeline/run.h"
#include "sites.h"

// ---------------------------------------------------------------------------------------------
// The kernel's sites, by hand

static double gemm1(pp_format_id f, pp_gemm_accum acc, pp_gemm_scale sc, double alpha, pp_site_mask x,
                    const double *a, const double *b, int64_t k)
{
    pp_gemm_variant v = {.format = f, .accum = acc, .scale = sc, .alpha_given = 1, .alpha = alpha,
                         .exact_sites = x};
    double c = NAN;
    assert_int_equal(pp_gemm_cpu(&v, 1, 1, 1, k, a, b, &c, 1, NULL), PP_OK);
    return c;
}

#define BIT(s) PP_SITE_BIT(PP_SITE_GEMM_##s)

// fp32 storage, fp32 accumulation, α = 1: 1 + 2^-24 is a binary32 tie, so the fmaf chain gives 1.
// Exact accumulation keeps 1 + 2^-24 in binary64, but the epilogue's RN_32 (site scale) and the
// C store (site c) each round it back to 1: only all three exact give 1 + 2^-24.
static void gemm_exact_sites_each_their_own_rounding(void **state)
{
    (void)state;
    const double a[2] = {1.0, 0x1p-24}, b[2] = {1.0, 1.0};
    double one = 1.0, tie = 1.0 + 0x1p-24;
    assert_true(pp_test_same_bits(gemm1(PP_FMT_FP32, PP_GEMM_ACC_FP32, PP_GEMM_SCALE_POST, 1.0, 0, a, b, 2), one));
    assert_true(pp_test_same_bits(gemm1(PP_FMT_FP32, PP_GEMM_ACC_FP32, PP_GEMM_SCALE_POST, 1.0, BIT(ACCUM), a, b, 2),
                                  one));
    assert_true(pp_test_same_bits(
        gemm1(PP_FMT_FP32, PP_GEMM_ACC_FP32, PP_GEMM_SCALE_POST, 1.0, BIT(ACCUM) | BIT(SCALE), a, b, 2), one));
    assert_true(pp_test_same_bits(
        gemm1(PP_FMT_FP32, PP_GEMM_ACC_FP32, PP_GEMM_SCALE_POST, 1.0, BIT(ACCUM) | BIT(C), a, b, 2), one));
    assert_true(pp_test_same_bits(gemm1(PP_FMT_FP32, PP_GEMM_ACC_FP32, PP_GEMM_SCALE_POST, 1.0,
                                        BIT(ACCUM) | BIT(SCALE) | BIT(C), a, b, 2),
                                  tie));
    // fp16 storage accumulation: 60000 + 60000 overflows fp16 (max 65504) at the second step; α = 1/4
    // brings the exact sum back to 30000, an fp16 value: the accumulation site carries the Inf.
    const double big[2] = {60000.0, 60000.0}, ones[2] = {1.0, 1.0};
    assert_true(isinf(gemm1(PP_FMT_FP16, PP_GEMM_ACC_STORAGE, PP_GEMM_SCALE_POST, 0.25, 0, big, ones, 2)));
    assert_true(isinf(gemm1(PP_FMT_FP16, PP_GEMM_ACC_STORAGE, PP_GEMM_SCALE_POST, 0.25, BIT(C), big, ones, 2)));
    assert_true(pp_test_same_bits(
        gemm1(PP_FMT_FP16, PP_GEMM_ACC_STORAGE, PP_GEMM_SCALE_POST, 0.25, BIT(ACCUM), big, ones, 2), 30000.0));
    // a negative zero survives an exact accumulator as it does the rounded one (+0 start: +0)
    const double nz[1] = {-0.0}, p1[1] = {1.0};
    assert_true(pp_test_same_bits(gemm1(PP_FMT_BF16, PP_GEMM_ACC_FP32, PP_GEMM_SCALE_POST, 1.0, BIT(ACCUM), nz, p1, 1),
                                  0.0));
    // NaN and Inf propagate through the exact paths as through the rounded ones
    const double inf[1] = {INFINITY}, zero[1] = {0.0};
    assert_true(isnan(gemm1(PP_FMT_FP16, PP_GEMM_ACC_FP32, PP_GEMM_SCALE_POST, 1.0, BIT(ACCUM), inf, zero, 1)));
    assert_true(isinf(gemm1(PP_FMT_FP16, PP_GEMM_ACC_FP32, PP_GEMM_SCALE_POST, 1.0, BIT(ACCUM), inf, p1, 1)));
}

// pre-a with α = 1/3 and a = 5: s = RN_32(1/3) = 0x1.555556p-2 and RN_32(5·s) = 0x1.aaaaacp+0 (5·s =
// 1.66666671633…, nearer the upper neighbour). With quant_a exact, s = 1/3 in binary64 and
// a' = RN_64(5·s) = 1.6666666666666665: the fp32 accumulator then rounds it to 0x1.aaaaaap+0 (the
// nearer binary32), and with every site exact C is a' itself.
static void gemm_quant_site_keeps_the_prescaled_operand(void **state)
{
    (void)state;
    const double a[1] = {5.0}, b[1] = {1.0};
    double nominal = gemm1(PP_FMT_FP32, PP_GEMM_ACC_FP32, PP_GEMM_SCALE_PRE_A, 1.0 / 3.0, 0, a, b, 1);
    assert_true(pp_test_same_bits(nominal, 0x1.aaaaacp+0));
    double s64 = 1.0 / 3.0, want = 5.0 * s64;
    // operand binary64, fp32 accumulator: RN_32(fma_64(a', 1, 0)) = RN_32(a'), so the sum is nominal's
    double qa = gemm1(PP_FMT_FP32, PP_GEMM_ACC_FP32, PP_GEMM_SCALE_PRE_A, 1.0 / 3.0, BIT(QUANT_A), a, b, 1);
    assert_true(pp_test_same_bits(qa, (double)(float)want));
    double all = gemm1(PP_FMT_FP32, PP_GEMM_ACC_FP32, PP_GEMM_SCALE_PRE_A, 1.0 / 3.0,
                       BIT(QUANT_A) | BIT(ACCUM) | BIT(SCALE) | BIT(C), a, b, 1);
    assert_true(pp_test_same_bits(all, want));
}

// Bits of sites that are not the GEMM's (attention's, AdamW's) change nothing; a mask with no
// GEMM site is the emulation, bit for bit, on random inputs of every configuration.
static void gemm_foreign_sites_change_nothing(void **state)
{
    (void)state;
    enum { M = 3, N = 5, K = 40 };
    static const pp_format_id formats[] = {PP_FMT_FP16, PP_FMT_BF16, PP_FMT_FP32};
    pp_test_rng r = {pp_test_seed()};
    pp_site_mask foreign = 0;
    for (int s = 0; s < PP_SITE_COUNT; s++)
        if (s < PP_SITE_GEMM_FIRST || s >= PP_SITE_GEMM_END)
            foreign |= PP_SITE_BIT(s);
    for (int fi = 0; fi < 3; fi++)
        for (int acc = 0; acc < 2; acc++)
            for (int sc = 0; sc < 3; sc++) {
                double a[M * K], b[K * N], c0[M * N], c1[M * N];
                for (int i = 0; i < M * K; i++)
                    a[i] = pp_round(formats[fi], 8.0 * (pp_test_rng_unit(&r) - 0.5), PP_RND_NE, 0);
                for (int i = 0; i < K * N; i++)
                    b[i] = pp_round(formats[fi], 8.0 * (pp_test_rng_unit(&r) - 0.5), PP_RND_NE, 0);
                pp_gemm_variant v = {.format = formats[fi], .accum = (pp_gemm_accum)acc, .scale = (pp_gemm_scale)sc};
                assert_int_equal(pp_gemm_cpu(&v, 1, M, N, K, a, b, c0, 2, NULL), PP_OK);
                v.exact_sites = foreign;
                assert_int_equal(pp_gemm_cpu(&v, 1, M, N, K, a, b, c1, 2, NULL), PP_OK);
                assert_memory_equal(c0, c1, sizeof c0);
            }
}

// Scaled storage, e4m3 tensor-current, one output of k = 2: a = (0.3f, 1), b = (0.7f, 1), α = 1.
// Both amaxes are 1, so s = 448 and g = RN_32(1/448) for each; quantised a = (RN_e4m3(134.4) = 128,
// 448), b = (RN_e4m3(313.6) = 320, 448); the fp32 chain 128·320 + 448·448 = 241664 is exact, so
// C = RN_32(d·241664), d = RN_32(g·g), about 1.2041 against the exact 0.3f·0.7f + 1 ≈ 1.21: all
// of the error is the quantisation. quant_a and quant_b exact (q = x, g = 1, d = 1) leave only the
// fp32 chain's rounding (< 2 ulp of binary32); with every site exact C is the exact dot product;
// accum alone changes nothing (the chain was already exact).
static double scaled1(pp_site_mask x, const double *a, const double *b)
{
    pp_gemm_variant v = {.format = PP_FMT_E4M3, .accum = PP_GEMM_ACC_FP32, .scale = PP_GEMM_SCALE_POST,
                         .alpha_given = 1, .alpha = 1.0, .scaling = PP_SCALING_TENSOR, .exact_sites = x};
    double c = NAN;
    assert_int_equal(pp_gemm_cpu(&v, 1, 1, 1, 2, a, b, &c, 1, NULL), PP_OK);
    return c;
}

static void gemm_scaled_quant_sites_carry_the_quantisation(void **state)
{
    (void)state;
    const double a[2] = {(double)0.3f, 1.0}, b[2] = {(double)0.7f, 1.0};
    double g = (double)(float)(1.0 / 448.0), d = (double)(float)(g * g);
    double exact = (double)0.3f * (double)0.7f + 1.0;  // exact in binary64 (48 + 2 bits)
    double nominal = scaled1(0, a, b);
    assert_true(pp_test_same_bits(nominal, (double)(float)(d * 241664.0)));
    assert_true(fabs(nominal - exact) > 5e-3);
    double q = scaled1(BIT(QUANT_A) | BIT(QUANT_B), a, b);
    assert_true(fabs(q - exact) <= 2.0 * 0x1p-23);
    assert_true(pp_test_same_bits(q, (double)(float)((double)(float)((double)0.3f * (double)0.7f) + 1.0)));
    assert_true(pp_test_same_bits(scaled1(BIT(QUANT_A) | BIT(QUANT_B) | BIT(ACCUM) | BIT(SCALE) | BIT(C), a, b),
                                  exact));
    assert_true(pp_test_same_bits(scaled1(BIT(ACCUM), a, b), nominal));
    // one operand exact: only the other's quantisation is left (0.3f·320/448 + 1 ≈ 1.2143)
    double qa = scaled1(BIT(QUANT_A), a, b);
    assert_true(fabs(qa - exact) > 1e-3 && fabs(qa - exact) < fabs(nominal - exact));
}

// The per-tensor scales s and X (sites block_scale_a, block_scale_b), e4m3, k = 2, one output:
// a = (11, 5.5), b = (1, 0.5), the truth 11 + 2.75 = 13.75. s_a = RN_32(448/11) and s_b = 448;
// both operands quantise to (448, 224) with either s (11·s_a lands within 2^-18 of 448), so the
// fp32 chain gives 448² + 224² = 250880 exactly, and only X_a = RN_32(1/s_a) and X_b = RN_32(1/448)
// carry error: neither times its s is 1. C = RN_32(RN_32(X_a·X_b)·250880) = 13.75 + 2^-19. With
// A's X = 1/(448/11) in binary64, d = RN_32(X_a·X_b) moves and C = 13.75 + 2^-20; B's alone
// likewise; both: d's RN_32 lands on the binary32 nearest 11/448², and C = 13.75, the truth.
// tensor-delayed with histories (11) and (1), margin 0, has the same scales and the same answers.
static double tensor1(pp_scaling sc, pp_site_mask x)
{
    const double a[2] = {11.0, 5.5}, b[2] = {1.0, 0.5};
    pp_gemm_variant v = {.format = PP_FMT_E4M3, .accum = PP_GEMM_ACC_FP32, .scale = PP_GEMM_SCALE_POST,
                         .alpha_given = 1, .alpha = 1.0, .scaling = sc, .exact_sites = x};
    double c = NAN;
    if (sc == PP_SCALING_TENSOR) {
        assert_int_equal(pp_gemm_cpu(&v, 1, 1, 1, 2, a, b, &c, 1, NULL), PP_OK);
        return c;
    }
    const double ha[1] = {11.0}, hb[1] = {1.0};
    pp_delayed_recipe r = {.history = {ha, hb}, .len = {1, 1}, .algo = PP_AMAX_MAX, .margin = 0};
    assert_int_equal(pp_gemm_delayed_cpu(&v, &r, 1.0, 1, 1, 1, 2, a, b, &c, 1, NULL), PP_OK);
    return c;
}

static void gemm_tensor_scale_sites_keep_binary64(void **state)
{
    (void)state;
    double sa = (double)(float)(448.0 / 11.0), xa = (double)(float)(1.0 / sa), xb = (double)(float)(1.0 / 448.0);
    assert_true(xa * sa != 1.0 && xb * 448.0 != 1.0);  // the roundings this site is about
    assert_true(pp_test_same_bits((double)(float)((double)(float)(xa * xb) * 250880.0), 13.75 + 0x1p-19));
    static const pp_scaling scs[2] = {PP_SCALING_TENSOR, PP_SCALING_DELAYED};
    for (int i = 0; i < 2; i++) {
        assert_true(pp_test_same_bits(tensor1(scs[i], 0), 13.75 + 0x1p-19));
        assert_true(pp_test_same_bits(tensor1(scs[i], BIT(BLOCK_SCALE_A)), 13.75 + 0x1p-20));
        assert_true(pp_test_same_bits(tensor1(scs[i], BIT(BLOCK_SCALE_B)), 13.75 + 0x1p-20));
        assert_true(pp_test_same_bits(tensor1(scs[i], BIT(BLOCK_SCALE_A) | BIT(BLOCK_SCALE_B)), 13.75));
        // the quantisation site wins over the scale's (q = a, X = 1): exact here, both ways
        assert_true(pp_test_same_bits(tensor1(scs[i], BIT(QUANT_A) | BIT(BLOCK_SCALE_A)), 13.75 + 0x1p-20));
    }
}

// s's special values under the exact site: amax 0 → 1, a non-finite tensor → NaN (current; the
// delayed recipe's non-finite or zero amax → 1), the clamp at FLT_MAX kept; margin scales 2^−m.
static void gemm_tensor_scale64_special_values(void **state)
{
    (void)state;
    pp_gemm_variant cur = {.format = PP_FMT_E4M3, .scaling = PP_SCALING_TENSOR};
    pp_gemm_variant del = {.format = PP_FMT_E5M2, .scaling = PP_SCALING_DELAYED};
    assert_true(pp_gemm_scaled_tensor_s64(&cur, 0.0, 0) == 1.0);
    assert_true(isnan(pp_gemm_scaled_tensor_s64(&cur, NAN, 0)));
    assert_true(pp_gemm_scaled_tensor_s64(&cur, 0x1p-149, 0) == 3.4028234663852886e38);
    assert_true(pp_test_same_bits(pp_gemm_scaled_tensor_s64(&cur, 3.0, 0), 448.0 / 3.0));
    assert_true(pp_gemm_scaled_tensor_s64(&del, 0.0, 0) == 1.0);
    assert_true(pp_gemm_scaled_tensor_s64(&del, INFINITY, 0) == 1.0);
    assert_true(pp_gemm_scaled_tensor_s64(&del, NAN, 0) == 1.0);
    assert_true(pp_test_same_bits(pp_gemm_scaled_tensor_s64(&del, 3.0, 2), 14336.0 / 3.0));  // 57344/4/3
    assert_true(pp_test_same_bits(pp_gemm_scaled_tensor_g64(448.0 / 3.0), 1.0 / (448.0 / 3.0)));
}

// nvfp4, k = 32 (two blocks of 16), one output. A = [0, 2688, 0…| 56.25, 0…], B = [2688, 0…| 1, 0…]:
// both amax 2688, so g_a = g_b = RN_32(2688/2688) = 1, and block 0 contributes 2688·0 + 0·2688 = 0.
// Block 1 of A: s = RN_e4m3(56.25/6 = 9.375) = 9 (E4M3 steps by 1 in [8, 16)), P = RN_e2m1,sat(56.25/9
// = 6.25) = 6 (clipped to E2M1's largest): A dequantises to 54. Block 1 of B: s = RN_e4m3(1/6) =
// 11/64 (steps of 1/64 in [1/8, 1/4)), P = RN_e2m1,sat(64/11 = 5.82) = 6: B dequantises to 66/64.
// c = 36·9·11/64 = 55.6875; with A's block scale exact, s = 9.375, P = 6, c = 56.25·66/64 = 58.0078125;
// with B's, s = 1/6 in binary64, P = 6, c = RN_32(54·(1 − 2^-54)) = 54; both: 56.25, the truth.
static double nvfp4_1(pp_site_mask x, const double *a, const double *b)
{
    pp_gemm_variant v = {.format = PP_FMT_E2M1, .accum = PP_GEMM_ACC_FP32, .scale = PP_GEMM_SCALE_POST,
                         .alpha_given = 1, .alpha = 1.0, .scaling = PP_SCALING_NVFP4, .exact_sites = x};
    double c = NAN;
    assert_int_equal(pp_gemm_cpu(&v, 1, 1, 1, 32, a, b, &c, 1, NULL), PP_OK);
    return c;
}

static void gemm_nvfp4_block_scale_sites_keep_binary64(void **state)
{
    (void)state;
    double a[32] = {0}, b[32] = {0};
    a[1] = 2688.0, a[16] = 56.25, b[0] = 2688.0, b[16] = 1.0;
    assert_true(pp_test_same_bits(nvfp4_1(0, a, b), 55.6875));
    assert_true(pp_test_same_bits(nvfp4_1(BIT(BLOCK_SCALE_A), a, b), 58.0078125));
    assert_true(pp_test_same_bits(nvfp4_1(BIT(BLOCK_SCALE_B), a, b), 54.0));
    assert_true(pp_test_same_bits(nvfp4_1(BIT(BLOCK_SCALE_A) | BIT(BLOCK_SCALE_B), a, b), 56.25));
    // the quantisation site wins over the scale's: q = a, block scale 1
    assert_true(pp_test_same_bits(nvfp4_1(BIT(QUANT_A) | BIT(BLOCK_SCALE_A), a, b), 56.25 * 66.0 / 64.0));
    // an all-zero block keeps P = 0 under an exact (zero) scale; a NaN block stays NaN
    double z[32] = {0};
    assert_true(pp_test_same_bits(nvfp4_1(BIT(BLOCK_SCALE_A) | BIT(BLOCK_SCALE_B), z, b), 0.0));
    a[17] = NAN;
    assert_true(isnan(nvfp4_1(BIT(BLOCK_SCALE_A), a, b)));
    // mx rounds nothing in its scale: refused there
    pp_gemm_variant v = {.format = PP_FMT_E4M3, .scaling = PP_SCALING_MX, .alpha_given = 1, .alpha = 1.0,
                         .exact_sites = BIT(BLOCK_SCALE_B)};
    double c;
    assert_int_equal(pp_gemm_cpu(&v, 1, 1, 1, 32, a, b, &c, 1, NULL), PP_ERR_INPUT);
}

// Mask 0 against a mask of foreign sites on every scaling: bit for bit (the default path is the
// emulation's own statements; tests/test_gemm_scaled*.c hold those to their hand-computed values).
static void gemm_scaled_foreign_sites_change_nothing(void **state)
{
    (void)state;
    enum { M = 3, N = 4, K = 64 };
    static const pp_scaling scalings[] = {PP_SCALING_TENSOR, PP_SCALING_MX, PP_SCALING_NVFP4};
    static const pp_format_id fmts[] = {PP_FMT_E4M3, PP_FMT_E4M3, PP_FMT_E2M1};
    pp_test_rng r = {pp_test_seed()};
    pp_site_mask foreign = 0;
    for (int s = 0; s < PP_SITE_COUNT; s++)
        if (s < PP_SITE_GEMM_FIRST || s >= PP_SITE_GEMM_END)
            foreign |= PP_SITE_BIT(s);
    for (int si = 0; si < 3; si++) {
        double a[M * K], b[K * N], c0[M * N], c1[M * N];
        for (int i = 0; i < M * K; i++)
            a[i] = (double)(float)(8.0 * (pp_test_rng_unit(&r) - 0.5));
        for (int i = 0; i < K * N; i++)
            b[i] = (double)(float)(8.0 * (pp_test_rng_unit(&r) - 0.5));
        pp_gemm_variant v = {.format = fmts[si], .scaling = scalings[si]};
        assert_int_equal(pp_gemm_cpu(&v, 1, M, N, K, a, b, c0, 2, NULL), PP_OK);
        v.exact_sites = foreign;
        assert_int_equal(pp_gemm_cpu(&v, 1, M, N, K, a, b, c1, 2, NULL), PP_OK);
        assert_memory_equal(c0, c1, sizeof c0);
    }
}

// ---------------------------------------------------------------------------------------------
// The pipeline

static const pp_run_opts cpu_opts = {.device = "cpu", .threads = 2};

static void load(const char *text, pp_case *c)
{
    pp_error err = {0};
    int rc = pp_case_parse(text, strlen(text), "explain.toml", c, &err);
    if (rc)
        fprintf(stderr, "  %s\n", err.msg);
    assert_int_equal(rc, PP_OK);
}

// Loads the case TEXT and explains it on the CPU (VARIANT, AGAINST as --variant, --against; NULL:
// every variant, the reference), failing the test with the error's message if it does not run.
static void explain_text(const char *text, const char *variant, const char *against, pp_case *c, pp_run_result *r)
{
    load(text, c);
    pp_error err = {0};
    pp_explain_opts e = {.variant = variant, .against = against};
    int rc = pp_explain_case(c, &cpu_opts, &e, r, &err);
    if (rc)
        fprintf(stderr, "  %s\n", err.msg);
    assert_int_equal(rc, PP_OK);
}

static const pp_explain_table *table_of(const pp_run_result *r, const char *variant)
{
    for (int v = 0; v < r->n_variants; v++)
        if (!strcmp(r->variants[v].name, variant))
            return r->variants[v].n_explain ? &r->variants[v].explain[0] : NULL;
    return NULL;
}

static const pp_explain_site *site_of(const pp_explain_table *t, const char *name)
{
    for (int s = 0; s < t->n_sites; s++)
        if (!strcmp(t->sites[s].name, name))
            return &t->sites[s];
    return NULL;
}

// bloom-prescale's story, small: post-scaling with fp16 accumulation overflows; the accumulation
// site carries the Inf (its exactness removes every one and it sorts first), and the nominal
// statistics are the run's own (the explain path is the emulation: checked inside explain too).
static const char bloom_text[] =
    "[case]\nname = \"bloom-small\"\nop = \"gemm\"\nseed = 3\n"
    "[op]\nbatch = 2\nm = 8\nn = 8\nk = 256\n"
    "[inputs]\ndistribution = \"normal\"\nmean = 30.0\nstd = 4.0\n"
    "[knobs]\nformat = \"fp16\"\n"
    "[variants.post-storage]\naccumulate = \"storage\"\nscale = \"post\"\n"
    "[variants.pre-storage]\naccumulate = \"storage\"\nscale = \"pre\"\n"
    "[variants.post-fp32]\naccumulate = \"fp32\"\nscale = \"post\"\n";

static void explain_gemm_accumulation_carries_the_inf(void **state)
{
    (void)state;
    pp_case c;
    load(bloom_text, &c);
    pp_run_result run, r;
    pp_error err = {0};
    assert_int_equal(pp_run_case(&c, &cpu_opts, &run, &err), PP_OK);
    pp_explain_opts e = {.variant = NULL};
    int rc = pp_explain_case(&c, &cpu_opts, &e, &r, &err);
    if (rc)
        fprintf(stderr, "  %s\n", err.msg);
    assert_int_equal(rc, PP_OK);
    const pp_explain_table *t = table_of(&r, "post-storage");
    assert_non_null(t);
    assert_string_equal(t->tensor, "c");
    assert_string_equal(t->against, "reference");
    assert_true(t->nominal.nonfinite > 0);
    assert_int_equal(t->all_exact.nonfinite, 0);
    assert_string_equal(t->sites[0].name, "accum");  // sorted first: it removes the Inf
    assert_int_equal(t->sites[0].exact.nonfinite, 0);
    const pp_explain_site *cs = site_of(t, "c"), *sc = site_of(t, "scale");
    assert_non_null(cs);
    assert_non_null(sc);
    assert_int_equal(cs->exact.nonfinite, t->nominal.nonfinite);
    assert_int_equal(sc->exact.nonfinite, t->nominal.nonfinite);
    assert_null(site_of(t, "quant_a"));  // post-scaling prescales nothing
    // the nominal statistics are the run's comparison, exactly
    for (int i = 0; i < run.n_comparisons; i++)
        if (!strcmp(run.comparisons[i].variant, "post-storage") && !strcmp(run.comparisons[i].against, "reference")) {
            pp_explain_stats s = pp_explain_stats_of(&run.comparisons[i].stats);
            assert_memory_equal(&s, &t->nominal, sizeof s);
        }
    // pre-scaling has the prescale sites and no Inf to remove
    const pp_explain_table *p = table_of(&r, "pre-storage");
    assert_non_null(p);
    assert_non_null(site_of(p, "quant_a"));
    assert_non_null(site_of(p, "quant_b"));
    assert_int_equal(p->nominal.nonfinite, 0);
    // fp32 accumulation: every site exact is within the reference's bound of zero error
    const pp_explain_table *f = table_of(&r, "post-fp32");
    assert_non_null(f);
    assert_true(f->all_exact.max_abs_error < 1e-9 * f->nominal.max_abs_error + 1e-6);
    pp_run_result_free(&run);
    pp_run_result_free(&r);
    pp_case_free(&c);
}

// The block scales are offered where they round: nvfp4's E4M3 s (its exactness removes part of
// the error, and every site exact still leaves none), not mx's power of two.
static const char fp4_text[] = "[case]\nname = \"fp4\"\nop = \"gemm\"\nseed = 21\n"
                               "[op]\nm = 8\nn = 8\nk = 64\n"
                               "[knobs]\nformat = \"e2m1\"\n"
                               "[variants.nvfp4]\nscaling = \"nvfp4\"\n[variants.mx]\nscaling = \"mx\"\n";

static void explain_gemm_nvfp4_offers_block_scales(void **state)
{
    (void)state;
    pp_case c;
    pp_run_result r;
    explain_text(fp4_text, NULL, NULL, &c, &r);
    const pp_explain_table *t = table_of(&r, "nvfp4"), *m = table_of(&r, "mx");
    assert_non_null(t);
    assert_non_null(m);
    const pp_explain_site *sa = site_of(t, "block_scale_a"), *sb = site_of(t, "block_scale_b");
    assert_non_null(sa);
    assert_non_null(sb);
    assert_true(sa->exact.rms != t->nominal.rms && sb->exact.rms != t->nominal.rms);  // they round
    assert_true(t->all_exact.max_abs_error < 1e-9 * t->nominal.max_abs_error);
    assert_null(site_of(m, "block_scale_a"));
    assert_null(site_of(m, "block_scale_b"));
    assert_non_null(site_of(m, "quant_a"));
    pp_run_result_free(&r);
    pp_case_free(&c);
}

// tensor-current and tensor-delayed offer their binary32 s and X as block_scale_a/b, and explain
// moves the error by them as the hand-computed case says. a ≡ 3, b ≡ 1 (std 0), k = 8, α = 1, the
// truth 24 everywhere: s_a = RN_32(448/3) (3·s_a within 2^-17 of 448) and s_b = 448 quantise both
// operands to 448, the fp32 chain 8·448² = 1605632 is exact, and C = RN_32(RN_32(X_a·X_b)·1605632)
// = 24 + 2^-19 with X = RN_32(1/s). B's X exact (1/448 in binary64): C = 24, the error gone; A's X
// exact (1/(448/3) in binary64, X_b still rounded): C = 24 + 2^-19 again. A site's "alone" run
// has every other site exact, its quantisation too (q = a, X = 1), so its scale's run is the
// every-site-exact one. tensor-delayed with histories [3, 2.5] (max 3) and [1] makes the same s.
static const char fp8_text[] = "[case]\nname = \"fp8\"\nop = \"gemm\"\nseed = 13\n"
                               "[op]\nm = 2\nn = 3\nk = 8\nalpha = 1.0\n"
                               "[inputs.a]\nmean = 3.0\nstd = 0.0\n[inputs.b]\nmean = 1.0\nstd = 0.0\n"
                               "[knobs]\nformat = \"e4m3\"\n"
                               "[variants.current]\nscaling = \"tensor-current\"\n"
                               "[variants.delayed]\nscaling = \"tensor-delayed\"\namax_history_a = [3.0, 2.5]\n"
                               "amax_history_b = [1.0]\n";

static void explain_gemm_tensor_scalings_offer_scales(void **state)
{
    (void)state;
    pp_case c;
    pp_run_result r;
    explain_text(fp8_text, NULL, NULL, &c, &r);
    static const char *const names[2] = {"current", "delayed"};
    static const char *const sites[7] = {"quant_a", "quant_b", "block_scale_a", "block_scale_b", "accum", "scale",
                                         "c"};
    for (int i = 0; i < 2; i++) {
        const pp_explain_table *t = table_of(&r, names[i]);
        assert_non_null(t);
        assert_int_equal(t->n_sites, 7);  // the scaled GEMM's sites, each once
        for (int s = 0; s < 7; s++)
            assert_non_null(site_of(t, sites[s]));
        const pp_explain_site *sa = site_of(t, "block_scale_a"), *sb = site_of(t, "block_scale_b");
        assert_true(t->nominal.max_abs_error == 0x1p-19 && t->nominal.rms == 0x1p-19);
        assert_true(sb->exact.max_abs_error == 0.0 && sb->exact.rms == 0.0);   // B's X: the whole error
        assert_memory_equal(&sa->exact, &t->nominal, sizeof sa->exact);        // A's: none of it
        assert_true(t->all_exact.max_abs_error == 0.0);
        assert_memory_equal(&sa->alone, &t->all_exact, sizeof sa->alone);      // the quantisation's X = 1
        assert_memory_equal(&sb->alone, &t->all_exact, sizeof sb->alone);
    }
    pp_run_result_free(&r);
    pp_case_free(&c);
}

// Shares: with every site exact the error is (almost) gone, so the shares and the interaction sum
// to one; the accumulation of fp16 storage-accumulated products carries most of it.
static const char storage_text[] = "[case]\nname = \"shares\"\nop = \"gemm\"\nseed = 5\n"
                                   "[op]\nm = 16\nn = 16\nk = 512\n"
                                   "[knobs]\nformat = \"fp16\"\naccumulate = \"storage\"\n"
                                   "[variants.storage]\n[variants.fp32]\naccumulate = \"fp32\"\n";

static void explain_gemm_shares_add_up(void **state)
{
    (void)state;
    pp_case c;
    load(storage_text, &c);
    pp_run_result r;
    pp_error err = {0};
    pp_explain_opts e = {.variant = "storage", .against = "reference"};
    assert_int_equal(pp_explain_case(&c, &cpu_opts, &e, &r, &err), PP_OK);
    const pp_explain_table *t = table_of(&r, "storage");
    assert_non_null(t);
    assert_null(table_of(&r, "fp32"));  // only the variant named
    double sum = t->interaction;
    for (int s = 0; s < t->n_sites; s++)
        sum += t->sites[s].share;
    assert_true(fabs(sum - 1.0) < 1e-12);
    assert_string_equal(t->sites[0].name, "accum");
    assert_true(t->sites[0].share > 0.5);
    for (int s = 0; s < t->n_sites; s++)  // no --orders: no band
        assert_true(isnan(t->sites[s].share_band[0]) && isnan(t->sites[s].share_band[1]));
    assert_int_equal(t->band_runs, 0);
    pp_run_result_free(&r);
    // --orders 2: each site's share band holds its nominal share, over 3 runs
    pp_run_opts with_orders = cpu_opts;
    with_orders.orders = 2;
    assert_int_equal(pp_explain_case(&c, &with_orders, &e, &r, &err), PP_OK);
    t = table_of(&r, "storage");
    assert_non_null(t);
    assert_int_equal(t->band_runs, 3);
    for (int s = 0; s < t->n_sites; s++)
        assert_true(t->sites[s].share_band[0] <= t->sites[s].share && t->sites[s].share <= t->sites[s].share_band[1]);
    pp_run_result_free(&r);
    // against another variant: whole tensors (the case has no pair)
    e.against = "fp32";
    assert_int_equal(pp_explain_case(&c, &cpu_opts, &e, &r, &err), PP_OK);
    t = table_of(&r, "storage");
    assert_non_null(t);
    assert_string_equal(t->against, "fp32");
    pp_run_result_free(&r);
    pp_case_free(&c);
}

static void explain_gemm_bad_requests(void **state)
{
    (void)state;
    pp_case c;
    load(storage_text, &c);
    pp_run_result r;
    pp_error err = {0};
    pp_explain_opts e = {.variant = "nope"};
    assert_int_equal(pp_explain_case(&c, &cpu_opts, &e, &r, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "no variant 'nope'"));
    e = (pp_explain_opts){"storage", "nope"};
    assert_int_equal(pp_explain_case(&c, &cpu_opts, &e, &r, &err), PP_ERR_INPUT);
    e = (pp_explain_opts){"storage", "storage"};
    assert_int_equal(pp_explain_case(&c, &cpu_opts, &e, &r, &err), PP_ERR_INPUT);
    pp_case_free(&c);
}

int main(void)
{
    pp_test_report_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gemm_exact_sites_each_their_own_rounding),
        cmocka_unit_test(gemm_quant_site_keeps_the_prescaled_operand),
        cmocka_unit_test(gemm_foreign_sites_change_nothing),
        cmocka_unit_test(gemm_scaled_quant_sites_carry_the_quantisation),
        cmocka_unit_test(gemm_scaled_foreign_sites_change_nothing),
        cmocka_unit_test(gemm_nvfp4_block_scale_sites_keep_binary64),
        cmocka_unit_test(explain_gemm_accumulation_carries_the_inf),
        cmocka_unit_test(explain_gemm_shares_add_up),
        cmocka_unit_test(explain_gemm_nvfp4_offers_block_scales),
        cmocka_unit_test(gemm_tensor_scale_sites_keep_binary64),
        cmocka_unit_test(gemm_tensor_scale64_special_values),
        cmocka_unit_test(explain_gemm_tensor_scalings_offer_scales),
        cmocka_unit_test(explain_gemm_bad_requests),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
