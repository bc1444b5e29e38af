// test_ranges.c — the range-diagnostics counters of kernels/ranges.h against hand-computed
// cases: zeros of both signs, NaN, ±Inf (overflow here vs passed on), subnormals, the overflow
// boundary's tie (fp16 65520 rounds to Inf, 65519.99 to 65504), the headroom boundary max/2, the
// chain form, clamps, heads out of range, a NULL accumulator, and the merge's order independence.
// Run: build/rel/tests/test_ranges.
#include "test_util.h"

#include "ranges.h"

#define HEADS 3

typedef struct acc {
    pp_range_cell cells[PP_SITE_COUNT * HEADS];
    pp_ranges R;
} acc;

static void acc_init(acc *a)
{
    pp_ranges_init(&a->R, a->cells, HEADS);
}

static const pp_range_cell *cell(const acc *a, int site, int head)
{
    return &a->cells[site * HEADS + head];
}

static void note16(acc *a, int head, double e)  // e stored to fp16, as a site's rounding would
{
    pp_range_note(&a->R, PP_SITE_ATTN_SCORES, head, PP_FMT_FP16, e, pp_round(PP_FMT_FP16, e, PP_RND_NE, 0));
}

static void ranges_empty_cell(void **state)
{
    (void)state;
    acc a;
    acc_init(&a);
    const pp_range_cell *c = cell(&a, PP_SITE_ATTN_P, 0);
    assert_int_equal(c->count, 0);
    assert_true(c->amax == 0.0 && isinf(c->min_nz) && c->min_nz > 0);
    assert_int_equal(a.R.fmt[PP_SITE_ATTN_P], -1);
}

static void ranges_zeros_and_underflow(void **state)
{
    (void)state;
    acc a;
    acc_init(&a);
    note16(&a, 0, 0.0);              // an exact zero: no underflow
    note16(&a, 0, -0.0);             // −0 likewise
    note16(&a, 0, 0x1p-26);          // below half the smallest subnormal 2^−24: flushed to +0
    note16(&a, 0, -0x1p-26);         // to −0
    note16(&a, 0, 0x1p-25);          // exactly half of 2^−24: the tie goes to even, 0
    note16(&a, 0, 0x1.000001p-25);   // just above the tie: 2^−24, a subnormal, not flushed
    const pp_range_cell *c = cell(&a, PP_SITE_ATTN_SCORES, 0);
    assert_int_equal(c->count, 6);
    assert_int_equal(c->underflow, 3);
    assert_int_equal(c->subnormal, 1);
    assert_true(c->min_nz == 0x1p-24 && c->amax == 0x1p-24);
    assert_int_equal(c->nan + c->inf + c->overflow + c->near_max, 0);
    assert_int_equal(a.R.fmt[PP_SITE_ATTN_SCORES], PP_FMT_FP16);
}

static void ranges_subnormal_boundary(void **state)
{
    (void)state;
    acc a;
    acc_init(&a);
    note16(&a, 1, 0x1p-14);           // fp16's smallest normal: not subnormal
    note16(&a, 1, 0x1.ff8p-15);       // its largest subnormal
    note16(&a, 1, -0x1p-24);          // the smallest, negative
    pp_range_note1(&a.R, PP_SITE_ATTN_LSE, 1, PP_FMT_FP32, 0x1p-149);  // binary32's smallest
    pp_range_note1(&a.R, PP_SITE_ATTN_LSE, 1, PP_FMT_FP32, 0x1p-126);
    assert_int_equal(cell(&a, PP_SITE_ATTN_SCORES, 1)->subnormal, 2);
    assert_true(cell(&a, PP_SITE_ATTN_SCORES, 1)->min_nz == 0x1p-24);
    assert_true(cell(&a, PP_SITE_ATTN_SCORES, 1)->amax == 0x1p-14);
    assert_int_equal(cell(&a, PP_SITE_ATTN_LSE, 1)->subnormal, 1);
    assert_true(cell(&a, PP_SITE_ATTN_LSE, 1)->min_nz == 0x1p-149);
}

static void ranges_overflow_tie_and_headroom(void **state)
{
    (void)state;
    acc a;
    acc_init(&a);
    note16(&a, 2, 65520.0);       // the tie between 65504 and 2^16: rounds to Inf (overflow)
    note16(&a, 2, -65520.0);      // −Inf
    note16(&a, 2, 65519.99);      // below the tie: 65504, the largest finite
    note16(&a, 2, 32752.0);       // exactly max/2: within a factor 2 of the max
    note16(&a, 2, 32736.0);       // the fp16 value just below max/2: not
    note16(&a, 2, 1.0);
    const pp_range_cell *c = cell(&a, PP_SITE_ATTN_SCORES, 2);
    assert_int_equal(c->count, 6);
    assert_int_equal(c->overflow, 2);
    assert_int_equal(c->inf, 2);
    assert_int_equal(c->near_max, 2);  // 65504 and 32752; never the Infs
    assert_true(isinf(c->amax) && c->min_nz == 1.0);
    assert_int_equal(c->underflow + c->subnormal + c->nan, 0);
}

static void ranges_inf_passed_on_and_nan(void **state)
{
    (void)state;
    acc a;
    acc_init(&a);
    pp_range_note(&a.R, PP_SITE_ATTN_P, 0, PP_FMT_FP16, INFINITY, INFINITY);   // came in as Inf
    pp_range_note(&a.R, PP_SITE_ATTN_P, 0, PP_FMT_FP16, -INFINITY, -INFINITY);
    pp_range_note(&a.R, PP_SITE_ATTN_P, 0, PP_FMT_FP16, NAN, NAN);             // NaN: nothing else
    pp_range_note(&a.R, PP_SITE_ATTN_P, 0, PP_FMT_FP16, 1.0, NAN);
    pp_range_note(&a.R, PP_SITE_ATTN_P, 0, PP_FMT_FP16, NAN, 0.0);             // NaN before, 0 stored: not an underflow
    const pp_range_cell *c = cell(&a, PP_SITE_ATTN_P, 0);
    assert_int_equal(c->count, 5);
    assert_int_equal(c->inf, 2);
    assert_int_equal(c->overflow, 0);
    assert_int_equal(c->nan, 2);
    assert_int_equal(c->underflow, 0);
    assert_true(isinf(c->amax) && isinf(c->min_nz));  // Inf is the only non-zero magnitude seen
}

static void ranges_chain(void **state)
{
    (void)state;
    acc a;
    acc_init(&a);
    pp_range_note_chain(&a.R, PP_SITE_GEMM_ACCUM, 0, PP_FMT_FP16, INFINITY, 1);   // overflowed inside
    pp_range_note_chain(&a.R, PP_SITE_GEMM_ACCUM, 0, PP_FMT_FP16, -INFINITY, 0);  // an Inf operand
    pp_range_note_chain(&a.R, PP_SITE_GEMM_ACCUM, 0, PP_FMT_FP16, 3.0, 1);
    pp_range_note_chain(&a.R, PP_SITE_GEMM_ACCUM, 0, PP_FMT_FP16, 0.0, 1);        // a chain ending at 0
    const pp_range_cell *c = cell(&a, PP_SITE_GEMM_ACCUM, 0);
    assert_int_equal(c->count, 4);
    assert_int_equal(c->inf, 2);
    assert_int_equal(c->overflow, 1);
    assert_int_equal(c->underflow, 0);
}

static void ranges_clamp_heads_and_null(void **state)
{
    (void)state;
    acc a;
    acc_init(&a);
    pp_range_note_clamp(&a.R, PP_SITE_GEMM_BLOCK_SCALE_A, 0);
    pp_range_note_clamp(&a.R, PP_SITE_GEMM_BLOCK_SCALE_A, 0);
    pp_range_note_clamp(&a.R, PP_SITE_GEMM_BLOCK_SCALE_A, HEADS);  // out of range: nowhere
    note16(&a, -1, 1.0);
    note16(&a, HEADS, 1.0);
    assert_int_equal(cell(&a, PP_SITE_GEMM_BLOCK_SCALE_A, 0)->clamped, 2);
    for (int h = 0; h < HEADS; h++)
        assert_int_equal(cell(&a, PP_SITE_ATTN_SCORES, h)->count, 0);
    pp_range_note(NULL, PP_SITE_ATTN_SCORES, 0, PP_FMT_FP16, 1.0, 1.0);  // off: a pointer test
    pp_range_note_clamp(NULL, PP_SITE_GEMM_BLOCK_SCALE_A, 0);
}

// The notes of a fixed list split between two accumulators, merged either way round, equal the
// notes taken in one (every counter a count, max or min).
static void ranges_merge_order_independent(void **state)
{
    (void)state;
    const double es[] = {0.0, -0.0, 0x1p-26, 0x1p-24, 1.5, -3.0, 65520.0, 70000.0, 40000.0, NAN, INFINITY, 1e-3};
    int n = (int)(sizeof es / sizeof es[0]);
    acc one, x, y, m1, m2;
    acc_init(&one), acc_init(&x), acc_init(&y), acc_init(&m1), acc_init(&m2);
    for (int i = 0; i < n; i++) {
        note16(&one, i % HEADS, es[i]);
        note16(i % 2 ? &x : &y, i % HEADS, es[i]);
    }
    pp_ranges_merge(&m1.R, &x.R), pp_ranges_merge(&m1.R, &y.R);
    pp_ranges_merge(&m2.R, &y.R), pp_ranges_merge(&m2.R, &x.R);
    assert_memory_equal(m1.cells, one.cells, sizeof one.cells);
    assert_memory_equal(m2.cells, one.cells, sizeof one.cells);
    assert_memory_equal(m1.R.fmt, one.R.fmt, sizeof one.R.fmt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ranges_empty_cell),
        cmocka_unit_test(ranges_zeros_and_underflow),
        cmocka_unit_test(ranges_subnormal_boundary),
        cmocka_unit_test(ranges_overflow_tie_and_headroom),
        cmocka_unit_test(ranges_inf_passed_on_and_nan),
        cmocka_unit_test(ranges_chain),
        cmocka_unit_test(ranges_clamp_heads_and_null),
        cmocka_unit_test(ranges_merge_order_independent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
