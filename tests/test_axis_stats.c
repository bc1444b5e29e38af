// test_axis_stats.c — per-position and per-(head, block) error against hand-computed cases,
// NaN/Inf rules (a NaN operand or unequal infinities: +Inf in the maxima, out of the means;
// equal infinities: 0), missing axes, block widening for long sequences, copy.
#include "test_util.h"

#include <math.h>

#include "core/axis_stats.h"

// A [2, 3, 2] tensor: heads on dim 0, positions on dim 1, pairs of values on dim 2.
static void axis_stats_hand_computed(void **state)
{
    (void)state;
    int64_t shape[3] = {2, 3, 2};
    // errors |a - e| laid out [h][p][k]:
    //   h0: p0 {1, 3}  p1 {0, 0}  p2 {0.5, 0.25}
    //   h1: p0 {2, 0}  p1 {4, 0}  p2 {0, 1}
    double e[12] = {0}, a[12] = {1, 3, 0, 0, 0.5, 0.25, 2, 0, 4, 0, 0, 1};
    for (int i = 0; i < 12; i++)
        a[i] = -a[i] + 10, e[i] = 10;  // |a - e| is the error above, exactly
    pp_axis_stats s;
    assert_int_equal(pp_axis_stats_compute(&s, 3, shape, 1, 0, a, e), 0);
    assert_int_equal(s.n_pos, 3);
    assert_int_equal(s.n_heads, 2);
    assert_int_equal(s.n_blocks, 1);
    assert_int_equal(s.block, PP_AXIS_BLOCK);
    double want_max[3] = {3, 4, 1}, want_mean[3] = {6.0 / 4, 4.0 / 4, 1.75 / 4};
    for (int p = 0; p < 3; p++) {
        assert_true(s.pos_max[p] == want_max[p]);
        assert_true(s.pos_mean[p] == want_mean[p]);
    }
    assert_true(s.head_block_max[0] == 3);  // head 0
    assert_true(s.head_block_max[1] == 4);  // head 1
    pp_axis_stats d;
    assert_int_equal(pp_axis_stats_copy(&d, &s), 0);
    assert_true(d.pos_max[1] == 4 && d.head_block_max[1] == 4 && d.pos_dim == 1 && d.head_dim == 0);
    pp_axis_stats_free(&d);
    pp_axis_stats_free(&s);
}

static void axis_stats_nan_and_inf(void **state)
{
    (void)state;
    int64_t shape[2] = {4, 2};  // positions on dim 0, no head axis
    double e[8] = {1, 1, INFINITY, 2, INFINITY, 1, 0, 0};
    double a[8] = {NAN, 2, INFINITY, 2, -INFINITY, 1, 0.5, 0};
    pp_axis_stats s;
    assert_int_equal(pp_axis_stats_compute(&s, 2, shape, 0, -1, a, e), 0);
    assert_int_equal(s.n_heads, 1);
    // p0: NaN operand -> +Inf in the max, left out of the mean (mean over {1})
    assert_true(isinf(s.pos_max[0]) && s.pos_mean[0] == 1.0);
    // p1: equal infinities -> 0, not finite so not in the mean (mean over {0})
    assert_true(s.pos_max[1] == 0.0 && s.pos_mean[1] == 0.0);
    // p2: unequal infinities -> +Inf
    assert_true(isinf(s.pos_max[2]) && s.pos_mean[2] == 0.0);
    assert_true(s.pos_max[3] == 0.5 && s.pos_mean[3] == 0.25);
    assert_true(isinf(s.head_block_max[0]));
    pp_axis_stats_free(&s);
    // every pair non-finite at a position: the mean is NaN
    double e2[2] = {NAN, NAN}, a2[2] = {1, 1};
    int64_t sh2[1] = {2};
    assert_int_equal(pp_axis_stats_compute(&s, 1, sh2, -1, -1, a2, e2), 0);
    assert_int_equal(s.n_pos, 1);
    assert_true(isinf(s.pos_max[0]) && isnan(s.pos_mean[0]));
    pp_axis_stats_free(&s);
}

// 64 * 256 + 1 positions need wider blocks: at most PP_AXIS_MAX_BLOCKS of them.
static void axis_stats_blocks_widen(void **state)
{
    (void)state;
    int64_t P = PP_AXIS_BLOCK * PP_AXIS_MAX_BLOCKS + 1;
    assert_int_equal(pp_axis_block_size(100), PP_AXIS_BLOCK);
    assert_int_equal(pp_axis_block_size(P), PP_AXIS_BLOCK + 1);
    double *a = calloc((size_t)P, sizeof *a), *e = calloc((size_t)P, sizeof *e);
    assert_non_null(a);
    assert_non_null(e);
    a[P - 1] = 7;  // the last position alone in the last block
    int64_t shape[1] = {P};
    pp_axis_stats s;
    assert_int_equal(pp_axis_stats_compute(&s, 1, shape, 0, -1, a, e), 0);
    assert_true(s.n_blocks <= PP_AXIS_MAX_BLOCKS);
    assert_int_equal(s.n_blocks, (P + s.block - 1) / s.block);
    assert_true(s.head_block_max[s.n_blocks - 1] == 7 && s.head_block_max[0] == 0);
    pp_axis_stats_free(&s);
    free(a);
    free(e);
}

static void axis_stats_bad_dims_refused(void **state)
{
    (void)state;
    int64_t shape[2] = {2, 2};
    double v[4] = {0};
    pp_axis_stats s;
    assert_int_equal(pp_axis_stats_compute(&s, 2, shape, 2, -1, v, v), -1);
    assert_int_equal(pp_axis_stats_compute(&s, 2, shape, 1, 1, v, v), -1);
    assert_int_equal(pp_axis_stats_compute(&s, 2, shape, -2, 0, v, v), -1);
    assert_int_equal(s.n_pos, 0);
    assert_int_equal(pp_axis_stats_alloc(&s, 10, 1, 64, 2), -1);  // blocks inconsistent with P
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(axis_stats_hand_computed),
        cmocka_unit_test(axis_stats_nan_and_inf),
        cmocka_unit_test(axis_stats_blocks_widen),
        cmocka_unit_test(axis_stats_bad_dims_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
