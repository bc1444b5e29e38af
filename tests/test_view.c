// test_view.c — pp_view_parse and pp_view_gather: TE's rank layout checked element by element
// against the chunk arithmetic written out by hand, concatenation, and every rejection.
#include "test_util.h"

#include "core/view.h"

// A [b, S, H, d] tensor whose value encodes its own index: b·1e6 + s·1e3 + h·1e2 + j.
static void make_indexed(pp_tensor *t, int64_t b, int64_t S, int64_t H, int64_t D, double offset)
{
    int64_t shape[4] = {b, S, H, D};
    pp_error err = {0};
    assert_int_equal(pp_tensor_alloc(t, 4, shape, PP_FMT_FP32, &err), PP_OK);
    for (int64_t i0 = 0; i0 < b; i0++)
        for (int64_t s = 0; s < S; s++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t j = 0; j < D; j++)
                    t->data[((i0 * S + s) * H + h) * D + j] = offset + (double)(i0 * 1000000 + s * 1000 + h * 100 + j);
}

static void view_parse_accepts_and_rejects(void **state)
{
    (void)state;
    pp_view v;
    char msg[200];
    assert_int_equal(pp_view_parse("", &v, msg, sizeof msg), 0);
    assert_int_equal(v.kind, PP_VIEW_WHOLE);
    assert_int_equal(pp_view_parse("te-cp-rank:7", &v, msg, sizeof msg), 0);
    assert_int_equal(v.kind, PP_VIEW_TE_CP_RANK);
    assert_int_equal(v.rank, 7);
    assert_int_equal(v.world, 0);
    assert_int_equal(pp_view_parse("te-cp-rank:3/8", &v, msg, sizeof msg), 0);
    assert_int_equal(v.rank, 3);
    assert_int_equal(v.world, 8);
    const char *bad[] = {"te-cp-rank:", "te-cp-rank:x", "te-cp-rank:-1", "te-cp-rank:8/8", "te-cp-rank:1/",
                         "te-cp-rank:1/0", "te-cp-rank:2x", "rank:1", "te-cp-rank: 1", "te-cp-rank:1/+2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        msg[0] = '\0';
        assert_int_equal(pp_view_parse(bad[i], &v, msg, sizeof msg), -1);
        assert_true(msg[0] != '\0');
    }
}

// Rank R of world W holds chunks R and 2W−1−R: out flattens heads, groups keep them.
static void view_te_cp_rank_layout(void **state)
{
    (void)state;
    const int64_t B = 2, S = 16, H = 3, D = 2, W = 2, C = S / (2 * W);
    pp_tensor q, k;
    make_indexed(&q, B, S, H, D, 0);
    make_indexed(&k, B, S, H, D, 0.5);
    pp_error err = {0};
    for (int R = 0; R < W; R++) {
        pp_view v = {PP_VIEW_TE_CP_RANK, R, (int)W};
        const pp_tensor *one[1] = {&q};
        pp_tensor g;
        assert_int_equal(pp_view_gather(&v, one, 1, &g, "t", &err), PP_OK);
        assert_int_equal(g.ndim, 4);
        assert_int_equal(g.shape[0], B);
        assert_int_equal(g.shape[1], 2);
        assert_int_equal(g.shape[2], C);
        assert_int_equal(g.shape[3], H * D);
        for (int64_t b = 0; b < B; b++)
            for (int half = 0; half < 2; half++)
                for (int64_t t = 0; t < C; t++)
                    for (int64_t hd = 0; hd < H * D; hd++) {
                        int64_t chunk = half ? 2 * W - 1 - R : R, s = chunk * C + t;
                        double want = (double)(b * 1000000 + s * 1000 + (hd / D) * 100 + hd % D);
                        assert_true(g.data[((b * 2 + half) * C + t) * H * D + hd] == want);
                    }
        pp_tensor_free(&g);

        const pp_tensor *two[2] = {&q, &k};
        assert_int_equal(pp_view_gather(&v, two, 2, &g, "t", &err), PP_OK);
        assert_int_equal(g.ndim, 5);
        assert_int_equal(g.shape[0], 2 * B);
        assert_int_equal(g.shape[3], H);
        assert_int_equal(g.shape[4], D);
        for (int64_t bb = 0; bb < 2 * B; bb++)
            for (int half = 0; half < 2; half++)
                for (int64_t t = 0; t < C; t++)
                    for (int64_t h = 0; h < H; h++)
                        for (int64_t j = 0; j < D; j++) {
                            int64_t b = bb % B, chunk = half ? 2 * W - 1 - R : R, s = chunk * C + t;
                            double want = (bb >= B ? 0.5 : 0) + (double)(b * 1000000 + s * 1000 + h * 100 + j);
                            assert_true(g.data[(((bb * 2 + half) * C + t) * H + h) * D + j] == want);
                        }
        pp_tensor_free(&g);
    }
    pp_tensor_free(&q);
    pp_tensor_free(&k);
}

static void view_whole_concatenates(void **state)
{
    (void)state;
    pp_tensor a, b;
    make_indexed(&a, 1, 4, 2, 2, 0);
    make_indexed(&b, 2, 4, 2, 2, 0.25);
    pp_view v = {PP_VIEW_WHOLE, 0, 0};
    const pp_tensor *ts[2] = {&a, &b};
    pp_tensor g;
    pp_error err = {0};
    assert_int_equal(pp_view_gather(&v, ts, 2, &g, "t", &err), PP_OK);
    assert_int_equal(g.shape[0], 3);
    assert_int_equal(g.numel, a.numel + b.numel);
    assert_memory_equal(g.data, a.data, (size_t)a.numel * sizeof(double));
    assert_memory_equal(g.data + a.numel, b.data, (size_t)b.numel * sizeof(double));
    pp_tensor_free(&g);
    pp_tensor_free(&a);
    pp_tensor_free(&b);
}

static void view_gather_rejects_bad_shapes(void **state)
{
    (void)state;
    pp_tensor a, odd, other;
    make_indexed(&a, 1, 8, 2, 2, 0);
    make_indexed(&odd, 1, 6, 2, 2, 0);     // 6 tokens: not divisible by 2·2
    make_indexed(&other, 1, 8, 1, 2, 0);   // different head count
    pp_view cp = {PP_VIEW_TE_CP_RANK, 1, 2}, whole = {PP_VIEW_WHOLE, 0, 0};
    pp_tensor g;
    pp_error err = {0};
    const pp_tensor *t1[1] = {&odd};
    assert_int_equal(pp_view_gather(&cp, t1, 1, &g, "t", &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "not divisible"));
    const pp_tensor *t2[2] = {&a, &other};
    assert_int_equal(pp_view_gather(&cp, t2, 2, &g, "t", &err), PP_ERR_INPUT);
    assert_int_equal(pp_view_gather(&whole, t2, 2, &g, "t", &err), PP_ERR_INPUT);
    other.format = PP_FMT_BF16;
    const pp_tensor *t3[2] = {&a, &other};
    assert_int_equal(pp_view_gather(&whole, t3, 2, &g, "t", &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "one format"));
    pp_tensor flat;
    int64_t shape[2] = {4, 8};
    assert_int_equal(pp_tensor_alloc(&flat, 2, shape, PP_FMT_FP32, &err), PP_OK);
    const pp_tensor *t4[1] = {&flat};
    assert_int_equal(pp_view_gather(&cp, t4, 1, &g, "t", &err), PP_ERR_INPUT);
    pp_tensor_free(&flat);
    pp_tensor_free(&a);
    pp_tensor_free(&odd);
    pp_tensor_free(&other);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(view_parse_accepts_and_rejects),
        cmocka_unit_test(view_te_cp_rank_layout),
        cmocka_unit_test(view_whole_concatenates),
        cmocka_unit_test(view_gather_rejects_bad_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
