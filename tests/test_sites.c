// test_sites.c — the rounding-site registry (kernels/sites.h): every id has its own row, names
// are unique within an op and found by pp_site_find, every row says what, format and where.
// Run: build/rel/tests/test_sites.
#include "test_util.h"

#include "sites.h"

static void sites_rows_match_ids(void **state)
{
    (void)state;
    for (int i = 0; i < PP_SITE_COUNT; i++) {
        const pp_site_info *s = pp_site_get(i);
        assert_non_null(s);
        assert_int_equal(s->id, i);
        assert_true(s->op && *s->op && s->name && *s->name && s->what && *s->what);
        assert_true(s->format && *s->format && s->where && *s->where);
        for (const char *c = s->name; *c; c++)  // an HDF5 group name and an identifier
            assert_true((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_');
    }
    assert_null(pp_site_get(-1));
    assert_null(pp_site_get(PP_SITE_COUNT));
}

static void sites_ops_are_contiguous(void **state)
{
    (void)state;
    for (int i = 0; i < PP_SITE_COUNT; i++) {
        // per op in order, then groups appended later (never renumbered): attention's fp8 sites
        // and its GEMM chains
        const char *want = i < PP_SITE_ATTN_END ? "attention" : i < PP_SITE_GEMM_END ? "gemm"
                         : i < PP_SITE_ADAMW_END ? "adamw" : "attention";
        assert_string_equal(pp_site_get(i)->op, want);
    }
    assert_int_equal(PP_SITE_GEMM_FIRST, PP_SITE_ATTN_END);
    assert_int_equal(PP_SITE_ADAMW_FIRST, PP_SITE_GEMM_END);
    assert_int_equal(PP_SITE_ATTN_FP8_FIRST, PP_SITE_ADAMW_END);
    assert_int_equal(PP_SITE_ATTN_CHAIN_FIRST, PP_SITE_ATTN_FP8_END);
    assert_int_equal(PP_SITE_ATTN_TE_BWD_FIRST, PP_SITE_ATTN_CHAIN_END);
    assert_int_equal(PP_SITE_ATTN_TE_BWD_END, PP_SITE_COUNT);
}

static void sites_find_by_name(void **state)
{
    (void)state;
    for (int i = 0; i < PP_SITE_COUNT; i++)
        assert_int_equal(pp_site_find(pp_site_get(i)->op, pp_site_get(i)->name), i);
    assert_int_equal(pp_site_find("attention", "scaled_scores"), PP_SITE_ATTN_SCALED_SCORES);
    assert_int_equal(pp_site_find("gemm", "accum"), PP_SITE_GEMM_ACCUM);
    assert_int_equal(pp_site_find("adamw", "theta"), PP_SITE_ADAMW_THETA);
    assert_int_equal(pp_site_find("gemm", "theta"), -1);
    assert_int_equal(pp_site_find("attention", "score"), -1);
    assert_int_equal(pp_site_find("attention", "scoresx"), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sites_rows_match_ids),
        cmocka_unit_test(sites_ops_are_contiguous),
        cmocka_unit_test(sites_find_by_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
