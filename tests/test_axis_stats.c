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

// The definition, one division per index (the code follows p and h as i counts up instead):
// the same maxima, and each position's sum in the same order, so the same bits.
static void axis_stats_oracle(int ndim, const int64_t *shape, int pos_dim, int head_dim, const double *a,
                              const double *e, double *pos_max, double *pos_mean, double *hb_max, int64_t *B_out)
{
    int64_t numel = 1, stride[8];
    for (int d = ndim - 1; d >= 0; d--) {
        stride[d] = numel;
        numel *= shape[d];
    }
    int64_t P = pos_dim >= 0 ? shape[pos_dim] : 1, H = head_dim >= 0 ? shape[head_dim] : 1;
    int64_t block = pp_axis_block_size(P), B = (P + block - 1) / block, count[16390] = {0};
    *B_out = B;
    for (int64_t p = 0; p < P; p++)
        pos_max[p] = pos_mean[p] = 0.0;
    for (int64_t k = 0; k < H * B; k++)
        hb_max[k] = 0.0;
    for (int64_t i = 0; i < numel; i++) {
        int64_t p = pos_dim >= 0 ? i / stride[pos_dim] % P : 0, h = head_dim >= 0 ? i / stride[head_dim] % H : 0;
        int finite = isfinite(a[i]) && isfinite(e[i]);
        double err = finite ? fabs(a[i] - e[i]) : (!isnan(a[i]) && !isnan(e[i]) && a[i] == e[i]) ? 0.0 : INFINITY;
        pos_max[p] = err > pos_max[p] ? err : pos_max[p];
        hb_max[h * B + p / block] = err > hb_max[h * B + p / block] ? err : hb_max[h * B + p / block];
        if (finite) {
            pos_mean[p] += err;
            count[p]++;
        }
    }
    for (int64_t p = 0; p < P; p++)
        pos_mean[p] = count[p] ? pos_mean[p] / (double)count[p] : NAN;
}

static int same_bits(const double *x, const double *y, int64_t n)
{
    return !memcmp(x, y, (size_t)n * sizeof *x);
}

// Every choice of position and head axis of a 4-D tensor (either missing, either before the
// other), and a long sequence whose blocks widen (P 16390 > 64·256, over 2 heads), against the
// oracle bit for bit, on values with NaN, ±Inf, ±0, subnormals and ties among the errors.
static void axis_stats_every_axis_pair(void **state)
{
    (void)state;
    const int64_t shapes[2][4] = {{2, 5, 3, 7}, {1, 16390, 2, 1}};
    for (int si = 0; si < 2; si++) {
        const int64_t *shape = shapes[si];
        int64_t numel = shape[0] * shape[1] * shape[2] * shape[3];
        double *a = malloc((size_t)numel * sizeof *a), *e = malloc((size_t)numel * sizeof *e);
        assert_non_null(a);
        assert_non_null(e);
        uint64_t x = 12345;
        const double special[8] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 0x1p-1074, 0.5, -0.5};
        for (int64_t i = 0; i < numel; i++) {
            x = x * 6364136223846793005u + 1442695040888963407u;
            e[i] = (double)(int64_t)(x >> 40) * 0x1p-20;
            a[i] = (x >> 8 & 15) == 0 ? special[x >> 4 & 7] : e[i] + (double)((int64_t)(x >> 12 & 7) - 3) * 0x1p-8;
        }
        for (int pd = -1; pd < 4; pd++)
            for (int hd = -1; hd < 4; hd++) {
                if (pd >= 0 && pd == hd)
                    continue;
                if (si == 1 && pd != 1)  // the long sequence: positions on its long axis
                    continue;
                pp_axis_stats s;
                assert_int_equal(pp_axis_stats_compute(&s, 4, shape, pd, hd, a, e), 0);
                static double pm[16390], pmean[16390], hb[7 * 256];
                int64_t B;
                axis_stats_oracle(4, shape, pd, hd, a, e, pm, pmean, hb, &B);
                assert_int_equal(s.n_blocks, B);
                if (!same_bits(s.pos_max, pm, s.n_pos) || !same_bits(s.pos_mean, pmean, s.n_pos) ||
                    !same_bits(s.head_block_max, hb, s.n_heads * s.n_blocks)) {
                    fprintf(stderr, "FAIL: shape %d, pos_dim %d, head_dim %d differs from the oracle\n", si, pd, hd);
                    fail();
                }
                pp_axis_stats_free(&s);
            }
        free(a);
        free(e);
    }
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
        cmocka_unit_test(axis_stats_every_axis_pair),
        cmocka_unit_test(axis_stats_bad_dims_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
