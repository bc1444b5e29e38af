// test_layout.c — a tensor held in another order of its axes (core/layout.h): which orders are
// accepted, the shape a file holds, and the transpose into the operation's order, element by
// element against the index arithmetic written out.
#include "test_util.h"

#include "core/layout.h"

static void layout_check_accepts_orders_only(void **state)
{
    (void)state;
    assert_int_equal(pp_layout_check("bshd", "bshd"), 0);
    assert_int_equal(pp_layout_check("bshd", "bhsd"), 0);
    assert_int_equal(pp_layout_check("bshd", "dhsb"), 0);
    assert_int_equal(pp_layout_check("bhs", "bsh"), 0);
    assert_int_equal(pp_layout_check("", ""), 0);
    assert_int_equal(pp_layout_check("bshd", "bhs"), -1);    // a letter short
    assert_int_equal(pp_layout_check("bshd", "bhsdd"), -1);  // one too many
    assert_int_equal(pp_layout_check("bshd", "bhsx"), -1);   // a foreign letter
    assert_int_equal(pp_layout_check("bshd", "bhss"), -1);   // a letter twice
    assert_int_equal(pp_layout_check("bshd", "BSHD"), -1);   // letters are case-sensitive
}

static void layout_transposes_bhsd_to_bshd(void **state)
{
    (void)state;
    const int64_t shape[4] = {2, 3, 4, 5};  // [b, s, h, d]
    int64_t held[4];
    pp_layout_shape("bshd", "bhsd", shape, held);
    assert_true(held[0] == 2 && held[1] == 4 && held[2] == 3 && held[3] == 5);
    pp_tensor t;
    pp_error err = {0};
    assert_int_equal(pp_tensor_alloc(&t, 4, held, PP_FMT_BF16, &err), PP_OK);
    for (int64_t i = 0; i < t.numel; i++)
        t.data[i] = (double)i;  // the flat index in [b, h, s, d]
    assert_int_equal(pp_layout_to_axes("bshd", "bhsd", &t, &err), PP_OK);
    assert_true(pp_tensor_has_shape(&t, 4, shape) && t.format == PP_FMT_BF16);
    for (int b = 0; b < 2; b++)
        for (int s = 0; s < 3; s++)
            for (int h = 0; h < 4; h++)
                for (int d = 0; d < 5; d++)
                    assert_true(t.data[((b * 3 + s) * 4 + h) * 5 + d] == (double)(((b * 4 + h) * 3 + s) * 5 + d));
    pp_tensor_free(&t);
    // the lse order [b, h, s] held as [s, b, h]; the same order is the identity
    const int64_t lse[3] = {2, 3, 4};
    pp_layout_shape("bhs", "sbh", lse, held);
    assert_true(held[0] == 4 && held[1] == 2 && held[2] == 3);
    assert_int_equal(pp_tensor_alloc(&t, 3, held, PP_FMT_FP32, &err), PP_OK);
    for (int64_t i = 0; i < t.numel; i++)
        t.data[i] = (double)i;
    assert_int_equal(pp_layout_to_axes("bhs", "sbh", &t, &err), PP_OK);
    for (int b = 0; b < 2; b++)
        for (int h = 0; h < 3; h++)
            for (int s = 0; s < 4; s++)
                assert_true(t.data[(b * 3 + h) * 4 + s] == (double)((s * 2 + b) * 3 + h));
    assert_int_equal(pp_layout_to_axes("bhs", "bhs", &t, &err), PP_OK);
    assert_true(t.data[1] == (double)((1 * 2 + 0) * 3 + 0));
    // a rank the layout does not have: an error, the tensor untouched
    assert_int_equal(pp_layout_to_axes("bshd", "bhsd", &t, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "tensor of 3 dimensions cannot be read as layout 'bhsd'"));
    assert_true(t.ndim == 3 && t.data != NULL);
    pp_tensor_free(&t);
    // empty extents
    const int64_t empty[2] = {0, 3};
    assert_int_equal(pp_tensor_alloc(&t, 2, empty, PP_FMT_FP32, &err), PP_OK);
    assert_int_equal(pp_layout_to_axes("mn", "nm", &t, &err), PP_OK);
    assert_true(t.ndim == 2 && t.shape[0] == 3 && t.shape[1] == 0 && t.numel == 0);
    pp_tensor_free(&t);
}

// Every op row's axis letters fit the shapes the row gives its tensors, distinct per tensor.
#include "ops/op.h"

static void layout_rows_name_their_axes(void **state)
{
    (void)state;
    for (int k = 0; k < pp_op_count(); k++) {
        const pp_op *op = pp_op_at(k);
        pp_op_params p;
        memset(&p, 0, sizeof p);
        for (int i = 0; i < op->n_params; i++)
            p.v[i] = op->params[i].required ? 4 : op->params[i].def;
        for (int io = 0; io < 2; io++) {
            const char *const *lay = io ? op->output_layouts : op->input_layouts;
            assert_non_null(lay);  // the shipped rows all name them
            for (int i = 0; i < (io ? op->n_outputs : op->n_inputs); i++) {
                int ndim;
                int64_t shape[PP_MAX_DIMS];
                op->shape(&p, io, i, &ndim, shape);
                assert_int_equal((int)strlen(lay[i]), ndim);
                assert_int_equal(pp_layout_check(lay[i], lay[i]), 0);
                for (int a = 0; a < ndim; a++)
                    assert_null(strchr(lay[i] + a + 1, lay[i][a]));
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(layout_check_accepts_orders_only),
        cmocka_unit_test(layout_transposes_bhsd_to_bshd),
        cmocka_unit_test(layout_rows_name_their_axes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
