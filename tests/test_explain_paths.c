// test_explain_paths.c — the one-definition contract of `precprobe explain` on every op and
// several variants each: through the op row's run_cpu, a mask holding every site a variant is not
// offered (kernels/sites.h minus the row's explain_sites) gives the run's outputs bit for bit, so
// the explain path with none of the variant's sites exact is the emulation; explain itself checks
// the same with mask 0 on every call (it succeeds here), and its nominal statistics equal the
// run's comparisons. Also report.h5's /variants/V/explain: written and read back field for field.
#include "test_util.h"

#include <math.h>
#include <unistd.h>

#include "pipeline/execute.h"
#include "pipeline/explain.h"
#include "pipeline/run.h"
#include "report/report_h5.h"
#include "report/report_txt.h"
#include "exact_sites.h"
#include "sites.h"

static const char gemm_text[] = "[case]\nname = \"p-gemm\"\nop = \"gemm\"\nseed = 2\n"
                                "[op]\nbatch = 2\nm = 4\nn = 6\nk = 48\n"
                                "[matrix]\nformat = [\"fp16\", \"bf16\"]\naccumulate = [\"fp32\", \"storage\"]\n"
                                "scale = [\"post\", \"pre\", \"pre-a\"]\n";

static const char adamw_text[] =
    "[case]\nname = \"p-adamw\"\nop = \"adamw\"\nseed = 4\n"
    "[op]\nn = 64\nsteps = 20\nlr = 1e-3\ngradients = \"quadratic\"\nweight_decay = 0.01\n"
    "[knobs]\nparam_format = \"bf16\"\nmomentum_format = \"bf16\"\nvariance_format = \"fp16\"\n"
    "[variants.plain]\n[variants.kahan]\nkahan = \"on\"\ncompensation_format = \"fp16\"\n"
    "[variants.sr]\nrounding = \"stochastic\"\n[variants.torch-cpu]\nupdate = \"torch\"\ntorch_kernels = \"cpu\"\n"
    "[variants.fp32]\nparam_format = \"fp32\"\nmomentum_format = \"fp32\"\nvariance_format = \"fp32\"\n";

static const char attn_text[] =
    "[case]\nname = \"p-attn\"\nop = \"attention\"\nseed = 6\n"
    "[op]\nb = 1\ns = 64\nh = 2\nd = 16\nmask = \"causal\"\npasses = \"fwd+bwd\"\n"
    "[knobs]\nformat = \"bf16\"\n"
    "[variants.flash]\nkernel = \"flash\"\n"
    "[variants.unfused]\nkernel = \"unfused\"\n"
    "[variants.unfused-storage]\nkernel = \"unfused\"\naccumulate = \"storage\"\nformat = \"fp16\"\n"
    "[variants.unfused-naive]\nkernel = \"unfused\"\nsoftmax = \"naive\"\nmax_subtract = \"pb-relax\"\n"
    "qk_layer_scaling = 2\n"
    "[variants.cp-te]\nkernel = \"flash\"\ncp_world = 2\ncp_flavour = \"te-2024\"\n"
    "[variants.cp-pr]\nkernel = \"flash\"\ncp_world = 4\ncp_flavour = \"pr-821\"\n";

// FA3 fp8 (forward only): per-tensor scaling (softmax_scale offered) and mx (X = 1: not offered,
// so making it exact must change nothing)
static const char attn_fp8_text[] =
    "[case]\nname = \"p-attn-fp8\"\nop = \"attention\"\nseed = 7\n"
    "[op]\nb = 1\ns = 64\nh = 2\nd = 32\nmask = \"causal\"\npasses = \"fwd\"\n"
    "[knobs]\nformat = \"bf16\"\nkernel = \"flash\"\nfp8 = \"fa3\"\n"
    "[variants.fp8]\n"
    "[variants.fp8-mx]\nscaling = \"mx\"\nblock_n = 64\n";

// fp8 = te (forward only; its binary64 row, kernels/attention_te_fp8_x.h, runs for every non-zero
// mask): the default, two-pass with base-2 and the chain P·V (row_max not offered), unscaled q, k, v
// (no block_scale_q/k/v), tiles of 16 with a threshold and a stale P scale, delayed q, k, v and O
static const char attn_te_text[] =
    "[case]\nname = \"p-attn-te\"\nop = \"attention\"\nseed = 8\n"
    "[op]\nb = 1\ns = 64\nh = 2\nd = 32\nmask = \"causal\"\npasses = \"fwd\"\n"
    "[knobs]\nformat = \"bf16\"\nkernel = \"flash\"\nfp8 = \"te\"\n"
    "[variants.te]\n"
    "[variants.te-two-pass]\nte_softmax = \"two-pass\"\nte_exp = \"base-2\"\nte_pv = \"chain\"\n"
    "[variants.te-none]\nscaling = \"none\"\n"
    "[variants.te-tiles]\nblock_n = 16\nte_rescale_threshold = 2\namax_history_s = [0.5]\n"
    "[variants.te-delayed]\nscaling = \"tensor-delayed\"\namax_history_q = [1.5]\namax_history_k = [2.0]\n"
    "amax_history_v = [1.0]\namax_history_o = [0.5]\n";

static const pp_run_opts cpu_keep = {.device = "cpu", .threads = 2, .save_tensors = 1};
static const pp_run_opts cpu_opts = {.device = "cpu", .threads = 2};

// Every variant of the case: its run's outputs (kept) against run_cpu with every site it is not
// offered exact; then explain of every variant succeeds (its own mask-0 check) and its nominal
// statistics are the run's.
static void check_case(const char *text)
{
    pp_case c;
    pp_error err = {0};
    assert_int_equal(pp_case_parse(text, strlen(text), "paths.toml", &c, &err), PP_OK);
    const pp_op *op = c.op;
    pp_run_result run;
    assert_int_equal(pp_run_case(&c, &cpu_keep, &run, &err), PP_OK);
    for (int v = 0; v < c.n_variants; v++) {
        const pp_variant_spec *vs = &c.variants[v];
        pp_format_group g;  // the variant's inputs, as the run draws them
        memset(&g, 0, sizeof g);
        g.format = op->format(&vs->knobs);
        assert_int_equal(pp_run_group_inputs(&c, &g, &err), PP_OK);
        const pp_tensor *inputs = g.inputs;
        uint64_t offered = op->explain_sites(&c.params, &vs->knobs);
        assert_true(offered != 0);
        pp_op_params prm = c.params;
        prm.exact_sites = ~offered & ((PP_SITE_BIT(PP_SITE_COUNT - 1) << 1) - 1);
        pp_tensor outs[PP_MAX_OP_TENSORS];
        memset(outs, 0, sizeof outs);
        for (int i = 0; i < run.n_references; i++) {
            const pp_tensor *n = &run.variants[v].outputs[i];
            int t = 0;
            while (strcmp(op->outputs[t], run.references[i].tensor))
                t++;
            assert_int_equal(pp_tensor_alloc(&outs[t], n->ndim, n->shape, n->format, &err), PP_OK);
        }
        assert_int_equal(op->run_cpu(&prm, &vs->knobs, inputs, outs, 2, &err), PP_OK);
        for (int i = 0; i < run.n_references; i++) {
            const pp_tensor *n = &run.variants[v].outputs[i];
            int t = 0;
            while (strcmp(op->outputs[t], run.references[i].tensor))
                t++;
            if (memcmp(n->data, outs[t].data, (size_t)n->numel * sizeof *n->data))
                fail_msg("%s: variant %s output %s differs with its non-offered sites exact", c.name, vs->name,
                         op->outputs[t]);
        }
        for (int t = 0; t < PP_MAX_OP_TENSORS; t++)
            pp_tensor_free(&outs[t]);
        pp_run_group_free(op, &g);
    }
    pp_run_result r;
    pp_explain_opts e = {.variant = NULL};
    int rc = pp_explain_case(&c, &cpu_opts, &e, &r, &err);
    if (rc)
        fprintf(stderr, "  %s\n", err.msg);
    assert_int_equal(rc, PP_OK);
    for (int v = 0; v < r.n_variants; v++) {
        assert_true(r.variants[v].n_explain > 0);
        for (int k = 0; k < r.variants[v].n_explain; k++) {
            const pp_explain_table *t = &r.variants[v].explain[k];
            int found = 0;
            for (int i = 0; i < run.n_comparisons; i++) {
                const pp_comparison *cm = &run.comparisons[i];
                if (strcmp(cm->variant, r.variants[v].name) || strcmp(cm->tensor, t->tensor) ||
                    strcmp(cm->against, "reference"))
                    continue;
                pp_explain_stats s = pp_explain_stats_of(&cm->stats);
                assert_memory_equal(&s, &t->nominal, sizeof s);
                found = 1;
            }
            assert_true(found);
        }
    }
    pp_run_result_free(&r);
    pp_run_result_free(&run);
    pp_case_free(&c);
}

static void explain_paths_gemm(void **state)
{
    (void)state;
    check_case(gemm_text);
}

static void explain_paths_adamw(void **state)
{
    (void)state;
    check_case(adamw_text);
}

static void explain_paths_attention(void **state)
{
    (void)state;
    check_case(attn_text);
}

static void explain_paths_attention_fp8(void **state)
{
    (void)state;
    check_case(attn_fp8_text);
}

// report.h5 round trip: every field of every table, NaN shares included; the text of the read
// report is the written one's.
static int same(double a, double b)
{
    return (a != a && b != b) || a == b;
}

static void explain_paths_attention_te(void **state)
{
    (void)state;
    check_case(attn_te_text);
}

static void same_stats(const pp_explain_stats *a, const pp_explain_stats *b)
{
    assert_true(same(a->mismatch_fraction, b->mismatch_fraction));
    assert_true(same(a->max_abs_error, b->max_abs_error));
    assert_true(same(a->rms, b->rms));
    assert_true(same(a->max_ulp, b->max_ulp));
    assert_int_equal(a->nonfinite, b->nonfinite);
}

static void explain_report_h5_round_trip(void **state)
{
    (void)state;
    pp_case c;
    pp_error err = {0};
    assert_int_equal(pp_case_parse(adamw_text, strlen(adamw_text), "paths.toml", &c, &err), PP_OK);
    pp_run_result r, back;
    pp_explain_opts e = {.variant = "kahan"};
    assert_int_equal(pp_explain_case(&c, &cpu_opts, &e, &r, &err), PP_OK);
    // a NaN share (nothing left to remove) must survive the trip too
    int kv = -1;
    for (int v = 0; v < r.n_variants; v++)
        if (r.variants[v].n_explain)
            kv = v;
    assert_true(kv >= 0);
    r.variants[kv].explain[0].sites[0].share = NAN;
    char dir[256], path[300];
    assert_int_equal(pp_test_mkdtemp(dir, sizeof dir, "explain"), 0);
    snprintf(path, sizeof path, "%s/report.h5", dir);
    assert_int_equal(pp_report_h5_write(path, &r, &err), PP_OK);
    int rc = pp_report_h5_read(path, &back, &err);
    if (rc)
        fprintf(stderr, "  %s\n", err.msg);
    assert_int_equal(rc, PP_OK);
    assert_int_equal(back.n_variants, r.n_variants);
    for (int v = 0; v < r.n_variants; v++) {
        assert_int_equal(back.variants[v].n_explain, r.variants[v].n_explain);
        for (int k = 0; k < r.variants[v].n_explain; k++) {
            const pp_explain_table *a = &r.variants[v].explain[k], *b = &back.variants[v].explain[k];
            assert_string_equal(a->tensor, b->tensor);
            assert_string_equal(a->against, b->against);
            same_stats(&a->nominal, &b->nominal);
            same_stats(&a->all_exact, &b->all_exact);
            assert_true(same(a->interaction, b->interaction));
            assert_int_equal(a->n_sites, b->n_sites);
            for (int s = 0; s < a->n_sites; s++) {
                assert_string_equal(a->sites[s].name, b->sites[s].name);  // the order kept
                same_stats(&a->sites[s].exact, &b->sites[s].exact);
                same_stats(&a->sites[s].alone, &b->sites[s].alone);
                assert_true(same(a->sites[s].share, b->sites[s].share));
            }
        }
    }
    char *ta = pp_report_text(&r), *tb = pp_report_text(&back);
    assert_non_null(ta);
    assert_non_null(tb);
    assert_string_equal(ta, tb);
    assert_non_null(strstr(ta, "== where the error comes from: kahan theta vs reference =="));
    free(ta), free(tb);
    pp_run_result_free(&r);
    pp_run_result_free(&back);
    pp_case_free(&c);
    pp_test_rm_tree(dir);
}

// Several masked runs side by side (explain.c, explain_runs: up to four at once, the workers shared
// out) give the tables one run at a time gives, field for field: a CP variant against its plain
// kernel (w's memo read by the all-but-one runs of the CP-only sites) at 1, 3 and 4 threads.
static void explain_runs_side_by_side(void **state)
{
    (void)state;
    static const char text[] = "[case]\nname = \"p-attn-cp\"\nop = \"attention\"\nseed = 9\n"
                               "[op]\nb = 1\ns = 64\nh = 2\nd = 16\nmask = \"causal\"\npasses = \"fwd+bwd\"\n"
                               "[knobs]\nformat = \"bf16\"\nkernel = \"flash\"\n"
                               "[variants.plain]\n[variants.cp]\ncp_world = 2\ncp_flavour = \"te-2024\"\n";
    pp_case c;
    pp_error err = {0};
    assert_int_equal(pp_case_parse(text, strlen(text), "side.toml", &c, &err), PP_OK);
    pp_explain_opts e = {.variant = "cp", .against = "plain"};
    pp_run_result r[3];
    const int threads[3] = {1, 3, 4};
    for (int i = 0; i < 3; i++) {
        pp_run_opts o = {.device = "cpu", .threads = threads[i]};
        int rc = pp_explain_case(&c, &o, &e, &r[i], &err);
        if (rc)
            fprintf(stderr, "  %s\n", err.msg);
        assert_int_equal(rc, PP_OK);
    }
    int v = 0;
    while (strcmp(r[0].variants[v].name, "cp"))
        v++;
    assert_int_equal(r[0].variants[v].n_explain, 5);  // whole tensors: out, lse, dq, dk, dv
    for (int i = 1; i < 3; i++) {
        assert_int_equal(r[i].variants[v].n_explain, r[0].variants[v].n_explain);
        for (int k = 0; k < r[0].variants[v].n_explain; k++) {
            const pp_explain_table *a = &r[0].variants[v].explain[k], *b = &r[i].variants[v].explain[k];
            assert_true(a->n_sites > 10);
            assert_int_equal(a->n_sites, b->n_sites);
            assert_true(same(a->interaction, b->interaction));
            for (int s = 0; s < a->n_sites; s++) {
                assert_string_equal(a->sites[s].name, b->sites[s].name);
                same_stats(&a->sites[s].exact, &b->sites[s].exact);
                same_stats(&a->sites[s].alone, &b->sites[s].alone);
                assert_true(same(a->sites[s].share, b->sites[s].share));
            }
        }
    }
    for (int i = 0; i < 3; i++)
        pp_run_result_free(&r[i]);
    pp_case_free(&c);
}

int main(void)
{
    pp_test_report_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(explain_paths_gemm),
        cmocka_unit_test(explain_paths_adamw),
        cmocka_unit_test(explain_paths_attention),
        cmocka_unit_test(explain_paths_attention_fp8),
        cmocka_unit_test(explain_paths_attention_te),
        cmocka_unit_test(explain_report_h5_round_trip),
        cmocka_unit_test(explain_runs_side_by_side),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
