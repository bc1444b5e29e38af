// test_attention_order.c — the order band's perturbations (kernels/attention.h "Order band"):
// seed 0 is the nominal arithmetic bit for bit, the exp step moves a result by at most 2 ulps,
// the row-sum permutation is a sum of the same 4 partials, the dQ block order a permutation, and a seeded flash run changes some
// bits but stays close. Run: build/rel/tests/test_attention_order
#include <math.h>

#include "test_util.h"

#include "cpu/attention.h"

static void order_exp_within_two_ulps(void **state)
{
    (void)state;
    int moved = 0;
    for (int64_t i = 0; i < 20000; i++) {
        float r = pp_attn_exp2f(-30.0f + (float)i * 0.0017f);
        assert_true(pp_f32_bits(pp_attn_order_exp(0, PP_ATTN_ORDER_FWD_P, i, 3 * i, r)) == pp_f32_bits(r));
        float p = pp_attn_order_exp(7, PP_ATTN_ORDER_FWD_P, i, 3 * i, r);
        int64_t du = (int64_t)pp_f32_bits(p) - (int64_t)pp_f32_bits(r);
        assert_true(du >= -2 && du <= 2);
        moved += du != 0;
        // a pure function of its arguments
        assert_true(pp_f32_bits(pp_attn_order_exp(7, PP_ATTN_ORDER_FWD_P, i, 3 * i, r)) == pp_f32_bits(p));
    }
    assert_true(moved > 10000);  // 4 of 5 draws move it
    float special[] = {0.0f, INFINITY, NAN, 0x1p-140f, 0x1p-126f};
    for (int i = 0; i < 5; i++)
        assert_true(pp_f32_bits(pp_attn_order_exp(9, PP_ATTN_ORDER_BWD_P, i, i, special[i])) ==
                    pp_f32_bits(special[i]));
}

// __logf's admissible error (CUDA guide: 2^-21.41 absolute on [0.5, 2], 3 ulps elsewhere): the
// moved log stays inside it, seed 0 is the correctly rounded log, specials and l ≤ 0 are kept.
static void order_log_within_logf_bound(void **state)
{
    (void)state;
    int moved = 0;
    for (int64_t i = 0; i < 20000; i++) {
        float l = 0.25f + (float)i * 0.0037f;
        float r = pp_logf(l), p = pp_attn_order_log(13, i, l, r);
        assert_true(pp_f32_bits(pp_attn_order_log(0, i, l, r)) == pp_f32_bits(r));
        if (l >= 0.5f && l <= 2.0f) {
            assert_true(fabs((double)p - (double)r) <= 0x1p-22 + 0x1p-25);
        } else {
            int64_t du = (int64_t)pp_f32_bits(p) - (int64_t)pp_f32_bits(r);
            assert_true(du >= -2 && du <= 2);
        }
        moved += p != r;
        assert_true(pp_f32_bits(pp_attn_order_log(13, i, l, r)) == pp_f32_bits(p));  // a pure function
    }
    assert_true(moved > 10000);
    float ls[] = {0.0f, -1.0f, INFINITY, NAN, 0x1p-140f};
    for (int i = 0; i < 5; i++) {
        float r = pp_logf(ls[i]);
        float p = pp_attn_order_log(5, i, ls[i], r);
        assert_true(pp_f32_bits(p) == pp_f32_bits(r));
    }
}

static void order_row_sum_permutes_partials(void **state)
{
    (void)state;
    float l4[4] = {1.0f, 0x1p-30f, -1.0f, 0x1p-30f};
    assert_true(pp_attn_order_row_sum(0, 5, l4) == (l4[0] + l4[2]) + (l4[1] + l4[3]));
    int seen_lo = 0, seen_hi = 0;
    for (int64_t row = 0; row < 200; row++) {
        float l = pp_attn_order_row_sum(3, row, l4);
        // the tree pairs 1 with −1 (exact 2^-29) or with a small one (which it absorbs: 0)
        assert_true(l == 0.0f || l == 0x1p-29f);
        seen_lo |= l == 0.0f, seen_hi |= l == 0x1p-29f;
    }
    assert_true(seen_lo && seen_hi);
}

// The dQ block order: a permutation of the blocks for every count and seed; increasing at seed 0.
static void order_blocks_permute(void **state)
{
    (void)state;
    int seen[64], moved = 0;
    for (int64_t nb = 1; nb <= 64; nb++)
        for (uint64_t seed = 0; seed < 20; seed++) {
            int64_t a, c;
            pp_attn_order_blocks(seed, (int64_t)(seed * 977 + (uint64_t)nb), nb, &a, &c);
            memset(seen, 0, sizeof seen);
            for (int64_t i = 0; i < nb; i++) {
                int64_t blk = (a * i + c) % nb;
                assert_true(blk >= 0 && blk < nb && !seen[blk]);
                seen[blk] = 1;
                if (seed == 0)
                    assert_true(blk == i);
                moved += blk != i;
            }
        }
    assert_true(moved > 0);
}

static void fill(uint64_t *s, double *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        *s = *s * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = pp_round(PP_FMT_BF16, (double)(*s >> 11) * 0x1p-52 - 1.0, PP_RND_NE, 0);
    }
}

// A bf16 flash run forward and backward: seed 0 twice the same bits; seed 5 other bits somewhere,
// every output within a few bf16 ulps of the nominal one.
static void order_flash_run(void **state)
{
    (void)state;
    pp_attn_dims dm = {1, 64, 64, 2, 2, 16, 1};
    int64_t n = dm.b * dm.s_q * dm.h * dm.d, nl = dm.b * dm.h * dm.s_q;
    double *in = calloc((size_t)(4 * n), 8), *o[2][5];
    uint64_t s = 11;
    fill(&s, in, 4 * n);
    for (int r = 0; r < 2; r++)
        for (int t = 0; t < 5; t++)
            o[r][t] = calloc((size_t)n, 8);
    pp_attn_variant v;
    memset(&v, 0, sizeof v);
    v.format = PP_FMT_BF16, v.kernel = PP_ATTN_FLASH, v.qk_layer_scaling = 1, v.cp_world = 1;
    v.cp_accum = v.cp_grad_accum = PP_FMT_BF16;
    pp_error e = {0};
    for (int r = 0; r < 2; r++) {
        v.order_seed = r ? 5 : 0;
        assert_int_equal(pp_attention_cpu(&v, &dm, 1, in, in + n, in + 2 * n, in + 3 * n, o[r][0], o[r][1], o[r][2],
                                          o[r][3], o[r][4], 2, &e),
                         PP_OK);
    }
    int differ = 0;
    for (int t = 0; t < 5; t++)
        for (int64_t i = 0; i < (t == 1 ? nl : n); i++) {
            differ += o[0][t][i] != o[1][t][i];
            assert_true(fabs(o[0][t][i] - o[1][t][i]) <= 0x1p-5 * (fabs(o[0][t][i]) + 0x1p-6));
        }
    assert_true(differ > 0);
    for (int r = 0; r < 2; r++)
        for (int t = 0; t < 5; t++)
            free(o[r][t]);
    free(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(order_exp_within_two_ulps),
        cmocka_unit_test(order_log_within_logf_bound),
        cmocka_unit_test(order_row_sum_permutes_partials),
        cmocka_unit_test(order_blocks_permute),
        cmocka_unit_test(order_flash_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
