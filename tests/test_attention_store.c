// test_attention_store.c — the attention's store rounding pp_attn_store (kernels/attention.h: fp16's
// normal range written out inline, the rest through pp_round_fp16_ne) bit for bit against the named
// rounding functions: hand-computed cases (±0, ties to even, the largest finite and the overflow
// tie, the edges of the normal range, subnormals, ±Inf, NaN), every pattern near those edges, and
// every high half with the low halves that decide rounding; and the unfused score's fp32 epilogue
// pp_attn_score_fp32 against the generic one.
// Run: build/rel/tests/test_attention_store
#include "test_util.h"

#include "attention.h"
#include "format.h"

#include <math.h>
#include <string.h>

#define MAX_FAILS 10

static float want_of(pp_format_id f, float x)
{
    return f == PP_FMT_FP16 ? pp_round_fp16_ne(x) : f == PP_FMT_BF16 ? pp_round_bf16_ne(x) : x;
}

// 1 when pp_attn_store(f, u's value) has want's bits, else prints and counts.
static int check_bits(pp_format_id f, uint32_t u, int *fails)
{
    float x = pp_f32_from_bits(u), got = pp_attn_store(f, x), want = want_of(f, x);
    if (pp_f32_bits(got) == pp_f32_bits(want))
        return 1;
    if (++*fails <= MAX_FAILS) {
        fprintf(stderr, "FAIL attn_store_%s_matches_named: input 0x%08x\n", pp_format_get(f).name, u);
        pp_test_print_double("x", x);
        pp_test_print_double("got", got);
        pp_test_print_double("want", want);
    }
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Exact inputs: hand-computed results

static void attn_store_fp16_hand_computed(void **state)
{
    (void)state;
    const struct {
        uint32_t in, out;
    } cases[] = {
        {0x00000000u, 0x00000000u},  // +0
        {0x80000000u, 0x80000000u},  // −0 keeps its sign
        {0x3F800000u, 0x3F800000u},  // 1
        {0x3F801000u, 0x3F800000u},  // 1 + 2^−11: a tie, to even 1
        {0x3F803000u, 0x3F804000u},  // 1 + 3·2^−11: a tie, to even 1 + 2^−9
        {0x3F801001u, 0x3F802000u},  // just above the tie: up
        {0xBF800FFFu, 0xBF800000u},  // −(just below the tie): down in magnitude
        {0x477FE000u, 0x477FE000u},  // 65504, the largest finite
        {0x477FEFFFu, 0x477FE000u},  // just below 65520: 65504
        {0x477FF000u, 0x7F800000u},  // 65520: the tie rounds to even, past 65504: Inf
        {0xC77FF000u, 0xFF800000u},  // −65520: −Inf
        {0x38800000u, 0x38800000u},  // 2^−14, the smallest normal
        {0x38801000u, 0x38800000u},  // 2^−14 (1 + 2^−11): a tie, to even
        {0x387FFFFFu, 0x38800000u},  // just below 2^−14: up to it (subnormal quantum 2^−24)
        {0x33800000u, 0x33800000u},  // 2^−24, the smallest subnormal
        {0x33000000u, 0x00000000u},  // 2^−25: a tie between 0 and 2^−24, to even 0
        {0xB3000001u, 0xB3800000u},  // −(just above 2^−25): −2^−24
        {0x33C00000u, 0x34000000u},  // 1.5·2^−24: a tie, to even 2·2^−24
        {0x7F800000u, 0x7F800000u},  // +Inf
        {0xFF800000u, 0xFF800000u},  // −Inf
        {0x7FC00001u, 0x7FC00001u},  // NaN: the same bits
        {0xFFA00000u, 0xFFA00000u},  // a signalling NaN: the same bits
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        float got = pp_attn_store(PP_FMT_FP16, pp_f32_from_bits(cases[i].in));
        if (pp_f32_bits(got) != cases[i].out)
            fprintf(stderr, "FAIL attn_store_fp16_hand_computed: input 0x%08x: got 0x%08x, want 0x%08x\n",
                    cases[i].in, pp_f32_bits(got), cases[i].out);
        assert_int_equal(pp_f32_bits(got), cases[i].out);
    }
    assert_int_equal(pp_f32_bits(pp_attn_store(PP_FMT_BF16, pp_f32_from_bits(0x3F808000u))), 0x3F800000u);
    assert_int_equal(pp_f32_bits(pp_attn_store(PP_FMT_BF16, pp_f32_from_bits(0x3F818000u))), 0x3F820000u);
    assert_int_equal(pp_f32_bits(pp_attn_store(PP_FMT_FP32, pp_f32_from_bits(0x3F801234u))), 0x3F801234u);
}

// ---------------------------------------------------------------------------------------------
// Deterministic rounding: every pattern near the fast path's edges, and a structured sweep

static void attn_store_fp16_edges_exhaustive(void **state)
{
    (void)state;
    // the edges of the inline range (2^−14, 65504) and of the overflow tie (65520), both signs
    const uint32_t edge[] = {0x38800000u, 0x477FE000u, 0x477FF000u, 0x7F800000u, 0x00000000u};
    int fails = 0;
    uint64_t checked = 0;
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
        for (int64_t d = -(1 << 15); d <= (1 << 15); d++)
            for (uint32_t sign = 0; sign < 2; sign++) {
                int64_t v = (int64_t)edge[i] + d;
                if (v < 0 || v > 0x7FFFFFFF)
                    continue;
                check_bits(PP_FMT_FP16, (uint32_t)v | sign << 31, &fails);
                checked++;
            }
    assert_int_equal(fails, 0);
    assert_true(checked > 550000);  // 5 edges × 2^16 + 1 × 2 signs, less the negative ones of 0
}

// Every one of the 65536 high halves with the low halves that decide fp16 and bf16 rounding:
// midpoints of every number of dropped bits and their neighbours, carries, 0..3.
static void sweep(pp_format_id f)
{
    uint32_t low[120];
    int nl = 0;
    for (int j = 1; j <= 16; j++) {
        for (int d = -2; d <= 2; d++)
            low[nl++] = (uint32_t)((1 << (j - 1)) + d) & 0xFFFF;
        for (int d = 0; d < 2; d++)
            low[nl++] = (uint32_t)((1 << j) - 1 - d) & 0xFFFF;
    }
    for (uint32_t d = 0; d < 4; d++)
        low[nl++] = d;
    int fails = 0;
    for (uint32_t hi = 0; hi < 0x10000 && fails < MAX_FAILS; hi++)
        for (int k = 0; k < nl; k++)
            check_bits(f, hi << 16 | low[k], &fails);
    // and a sample of all 2^32 (an odd stride, so every low residue recurs)
    uint64_t stride = ((1ull << 32) / pp_test_iters(1u << 20)) | 1;
    for (uint64_t u = 0; u < (1ull << 32) && fails < MAX_FAILS; u += stride)
        check_bits(f, (uint32_t)u, &fails);
    assert_int_equal(fails, 0);
}

static void attn_store_fp16_matches_named(void **state) { (void)state; sweep(PP_FMT_FP16); }
static void attn_store_bf16_matches_named(void **state) { (void)state; sweep(PP_FMT_BF16); }
static void attn_store_fp32_is_identity(void **state) { (void)state; sweep(PP_FMT_FP32); }

// ---------------------------------------------------------------------------------------------
// The unfused score's fp32 epilogue pp_attn_score_fp32 (the binary32 product, then pp_attn_store)
// against the generic RN_F(RN_32(α_c·acc)) of pp_gemm_epilogue_fp32, for α_c the default scales
// 1/√d of the fp32 compute type, 1, a subnormal, one near the largest finite, and every acc near
// the edges (±0, subnormals, normal range, overflow, ±Inf, NaN payloads) plus a sample of all 2^32.

static int check_score(pp_format_id f, double alpha_c, uint32_t u, int *fails)
{
    pp_attn_scalars sc;
    memset(&sc, 0, sizeof sc);
    sc.alpha_c = alpha_c;
    float acc = pp_f32_from_bits(u), got = pp_attn_score_fp32(f, &sc, acc);
    float want = (float)pp_gemm_epilogue_fp32(f, alpha_c, acc);
    if (pp_f32_bits(got) == pp_f32_bits(want))
        return 1;
    if (++*fails <= MAX_FAILS)
        fprintf(stderr, "FAIL attn_score_fp32_matches_epilogue: %s alpha %a acc 0x%08x: got 0x%08x, want 0x%08x\n",
                pp_format_get(f).name, alpha_c, u, pp_f32_bits(got), pp_f32_bits(want));
    return 0;
}

static void attn_score_fp32_matches_epilogue(void **state)
{
    (void)state;
    const double alphas[] = {(double)(1.0f / sqrtf(128.0f)), pp_gemm_round_kroot(PP_FMT_FP32, 64, 2),
                             pp_gemm_round_kroot(PP_FMT_FP32, 80, 2), 1.0, 0x1.8p-140, 0x1.fffffep+127, 0.75};
    const pp_format_id fs[] = {PP_FMT_BF16, PP_FMT_FP16, PP_FMT_FP32};
    const uint32_t edge[] = {0x00000000u, 0x00800000u, 0x3F800000u, 0x7F7FFFFFu, 0x7F800000u, 0x7FC00000u,
                             0x7F800001u, 0x38800000u, 0x477FF000u};
    int fails = 0;
    uint64_t checked = 0;
    uint64_t stride = ((1ull << 32) / pp_test_iters(1u << 18)) | 1;
    for (size_t a = 0; a < sizeof alphas / sizeof alphas[0]; a++)
        for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++) {
            for (size_t e = 0; e < sizeof edge / sizeof edge[0]; e++)
                for (int64_t d = -300; d <= 300; d++)
                    for (uint32_t sign = 0; sign < 2; sign++) {
                        int64_t v = (int64_t)edge[e] + d;
                        if (v < 0 || v > 0x7FFFFFFF)
                            continue;
                        check_score(fs[i], alphas[a], (uint32_t)v | sign << 31, &fails);
                        checked++;
                    }
            for (uint64_t u = 0; u < (1ull << 32); u += stride, checked++)
                check_score(fs[i], alphas[a], (uint32_t)u, &fails);
        }
    assert_int_equal(fails, 0);
    assert_true(checked > 200000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(attn_store_fp16_hand_computed),
        cmocka_unit_test(attn_store_fp16_edges_exhaustive),
        cmocka_unit_test(attn_store_fp16_matches_named),
        cmocka_unit_test(attn_store_bf16_matches_named),
        cmocka_unit_test(attn_store_fp32_is_identity),
        cmocka_unit_test(attn_score_fp32_matches_epilogue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
