// test_run_reference.c — pp_run_reference (src/pipeline/run.h), what `precprobe reference` runs:
// for a traced op (AdamW: the reference keeps its exact trajectory, snapshots and loss, for the
// variants' series) the trace is the function's own and must be freed on success as on error,
// the caller getting only the tensors. The leak is caught by the sanitizer build of this test
// (make test runs it with ASAN_OPTIONS=detect_leaks=1).
#include "test_util.h"

#include "pipeline/run.h"

// quadratic gradients: the trace holds snapshots of θ and the loss at every step
static const char case_text[] = "[case]\nname = \"ref-trace\"\nop = \"adamw\"\nseed = 5\n"
                                "[op]\nn = 40\nsteps = 12\nlr = 1e-3\ngradients = \"quadratic\"\n"
                                "[variants.fp32]\nparam_format = \"fp32\"\nmomentum_format = \"fp32\"\n"
                                "variance_format = \"fp32\"\n"
                                "[variants.bf16]\nparam_format = \"bf16\"\nmomentum_format = \"bf16\"\n"
                                "variance_format = \"bf16\"\n";

static void load(pp_case *c)
{
    pp_error err = {0};
    int rc = pp_case_parse(case_text, strlen(case_text), "ref-trace.toml", c, &err);
    if (rc)
        fprintf(stderr, "  %s\n", err.msg);
    assert_int_equal(rc, PP_OK);
}

// What pp_run_reference gives the caller, zeroed before each call.
typedef struct ref_out {
    pp_tensor in[PP_MAX_OP_TENSORS], refs[PP_MAX_OP_TENSORS];
    pp_reference_info info[PP_MAX_OP_TENSORS];
} ref_out;

static int run_ref(const pp_case *c, const char *method, pp_format_id f, ref_out *r, pp_error *err)
{
    const pp_run_opts o = {.device = "cpu", .threads = 1, .reference_method = method};
    memset(r, 0, sizeof *r);
    return pp_run_reference(c, &o, f, r->in, r->refs, r->info, err);
}

static void ref_out_free(ref_out *r)
{
    for (int i = 0; i < PP_MAX_OP_TENSORS; i++) {
        pp_tensor_free(&r->in[i]);
        pp_tensor_free(&r->refs[i]);
    }
}

// Success, in each input format: θ, m and v with finite bounds; the trace freed inside.
static void run_reference_traced_op_frees_its_trace(void **state)
{
    (void)state;
    pp_case c;
    load(&c);
    const pp_format_id formats[] = {PP_FMT_FP32, PP_FMT_BF16};
    for (int f = 0; f < 2; f++) {
        ref_out r;
        pp_error err = {0};
        int rc = run_ref(&c, NULL, formats[f], &r, &err);
        if (rc)
            fprintf(stderr, "  %s\n", err.msg);
        assert_int_equal(rc, PP_OK);
        for (int t = 0; t < c.op->n_outputs; t++) {
            assert_non_null(r.refs[t].data);
            assert_true(isfinite(r.info[t].error_bound));
        }
        ref_out_free(&r);
    }
    pp_case_free(&c);
}

// An error (an unknown reference method, found after the inputs are made) leaves the caller's
// tensors empty and frees the inputs already made.
static void run_reference_error_leaves_nothing(void **state)
{
    (void)state;
    pp_case c;
    load(&c);
    ref_out r;
    pp_error err = {0};
    assert_int_equal(run_ref(&c, "no-such-method", PP_FMT_FP32, &r, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "no reference method 'no-such-method'"));
    for (int t = 0; t < PP_MAX_OP_TENSORS; t++) {
        assert_null(r.in[t].data);
        assert_null(r.refs[t].data);
    }
    pp_case_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(run_reference_traced_op_frees_its_trace),
        cmocka_unit_test(run_reference_error_leaves_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
