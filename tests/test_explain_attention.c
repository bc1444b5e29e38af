// test_explain_attention.c — `precprobe explain` on attention: every rounding site kernels/sites.h
// lists for attention is offered by some variant, and the binary32 scalar sites made exact in
// binary64 (kernels/attention.h "Exact sites", kind 2: softmax_in, row_max, lse, cp_lse_merge)
// reach the kernels: each changes the outputs it feeds, and changes nothing else; a store site
// made exact keeps its binary64 value (tests/test_explain_attention_x64.c checks those values).
#include "test_util.h"

#include <math.h>

#include "ops/op.h"
#include "pipeline/execute.h"
#include "exact_sites.h"
#include "sites.h"

// Variants that between them have every attention site: flash fwd+bwd (row_max), unfused with a
// naive softmax, PB-Relax and layer scaling (scaled_scores, row_sum, d), unfused fp32 accumulation
// (dp), and a CP ring (out_partial and the CP merges).
static const char attn_text[] =
    "[case]\nname = \"x-attn\"\nop = \"attention\"\nseed = 18\n"
    "[op]\nb = 1\ns = 64\nh = 2\nd = 16\nmask = \"causal\"\npasses = \"fwd+bwd\"\n"
    "[knobs]\nformat = \"bf16\"\n"
    "[variants.flash]\nkernel = \"flash\"\n"
    "[variants.unfused]\nkernel = \"unfused\"\n"
    "[variants.unfused-fp32]\nkernel = \"unfused\"\nformat = \"fp32\"\n"
    "[variants.unfused-naive]\nkernel = \"unfused\"\nsoftmax = \"naive\"\nmax_subtract = \"pb-relax\"\n"
    "qk_layer_scaling = 2\n"
    "[variants.cp-pr]\nkernel = \"flash\"\ncp_world = 4\ncp_flavour = \"pr-821\"\n"
    "[variants.cp-te]\nkernel = \"flash\"\ncp_world = 2\ncp_flavour = \"te-2024\"\n";

static int variant_of(const pp_case *c, const char *name)
{
    for (int v = 0; v < c->n_variants; v++)
        if (!strcmp(c->variants[v].name, name))
            return v;
    fail_msg("no variant %s", name);
    return -1;
}

static void explain_attention_every_site_offered(void **state)
{
    (void)state;
    pp_case c;
    pp_error err = {0};
    assert_int_equal(pp_case_parse(attn_text, strlen(attn_text), "x.toml", &c, &err), PP_OK);
    uint64_t any = 0;
    for (int v = 0; v < c.n_variants; v++)
        any |= c.op->explain_sites(&c.params, &c.variants[v].knobs);
    for (int s = PP_SITE_ATTN_FIRST; s < PP_SITE_ATTN_END; s++)
        if (!pp_site_exact(any, s))
            fail_msg("attention site %s is offered by no variant", pp_site_get(s)->name);
    // the binary32 scalar sites on the variants that have them
    uint64_t flash = c.op->explain_sites(&c.params, &c.variants[variant_of(&c, "flash")].knobs);
    uint64_t unf = c.op->explain_sites(&c.params, &c.variants[variant_of(&c, "unfused")].knobs);
    uint64_t cp = c.op->explain_sites(&c.params, &c.variants[variant_of(&c, "cp-pr")].knobs);
    assert_true(pp_site_exact(flash, PP_SITE_ATTN_SOFTMAX_IN) && pp_site_exact(flash, PP_SITE_ATTN_ROW_MAX) &&
                pp_site_exact(flash, PP_SITE_ATTN_LSE) && !pp_site_exact(flash, PP_SITE_ATTN_CP_LSE_MERGE));
    // the unfused row max is a max of stored values: nothing rounds, nothing to offer
    assert_true(pp_site_exact(unf, PP_SITE_ATTN_SOFTMAX_IN) && !pp_site_exact(unf, PP_SITE_ATTN_ROW_MAX) &&
                pp_site_exact(unf, PP_SITE_ATTN_LSE));
    assert_true(pp_site_exact(cp, PP_SITE_ATTN_CP_LSE_MERGE));
    pp_case_free(&c);
}

// Variant name's outputs under mask into outs (allocated here; the caller frees them).
static void run_masked(const pp_case *c, const char *name, uint64_t mask, pp_tensor *outs)
{
    pp_error err = {0};
    int v = variant_of(c, name);
    const pp_variant_spec *vs = &c->variants[v];
    pp_format_group g;
    memset(&g, 0, sizeof g);
    g.format = c->op->format(&vs->knobs);
    assert_int_equal(pp_run_group_inputs(c, &g, &err), PP_OK);
    pp_op_params prm = c->params;
    prm.exact_sites = mask;
    memset(outs, 0, sizeof(pp_tensor) * PP_MAX_OP_TENSORS);
    for (int t = 0; t < c->op->n_outputs; t++) {
        int nd;
        int64_t shape[PP_MAX_DIMS];
        c->op->shape(&c->params, 1, t, &nd, shape);
        assert_int_equal(pp_tensor_alloc(&outs[t], nd, shape, pp_op_output_format(c->op, &vs->knobs, t), &err), PP_OK);
    }
    int rc = c->op->run_cpu(&prm, &vs->knobs, g.inputs, outs, 2, &err);
    if (rc)
        fprintf(stderr, "  %s\n", err.msg);
    assert_int_equal(rc, PP_OK);
    pp_run_group_free(c->op, &g);
}

static int64_t differing(const pp_tensor *a, const pp_tensor *b)
{
    int64_t n = 0;
    for (int64_t i = 0; i < a->numel; i++)
        n += memcmp(&a->data[i], &b->data[i], sizeof a->data[i]) != 0;
    return n;
}

// Site s exact on variant name: the outputs named in `changes` (indices into out, lse, dq, dk, dv)
// differ from the nominal run somewhere; lse exact leaves out of a plain forward untouched (out
// does not read the lse), which shows the mask reaches that site and no other.
static void check_site(const pp_case *c, const char *name, int s, unsigned changes, unsigned same)
{
    pp_tensor nom[PP_MAX_OP_TENSORS], ex[PP_MAX_OP_TENSORS];
    run_masked(c, name, 0, nom);
    run_masked(c, name, PP_SITE_BIT(s), ex);
    for (int t = 0; t < c->op->n_outputs; t++) {
        int64_t n = differing(&nom[t], &ex[t]);
        if ((changes >> t & 1u) && n == 0)
            fail_msg("%s: site %s exact changes no value of %s", name, pp_site_get(s)->name, c->op->outputs[t]);
        if ((same >> t & 1u) && n != 0)
            fail_msg("%s: site %s exact changes %lld values of %s", name, pp_site_get(s)->name, (long long)n,
                     c->op->outputs[t]);
    }
    for (int t = 0; t < PP_MAX_OP_TENSORS; t++) {
        pp_tensor_free(&nom[t]);
        pp_tensor_free(&ex[t]);
    }
}

enum { OUT = 1u << 0, LSE = 1u << 1, DQ = 1u << 2, DK = 1u << 3, DV = 1u << 4 };

static void explain_attention_binary64_sites(void **state)
{
    (void)state;
    pp_case c;
    pp_error err = {0};
    assert_int_equal(pp_case_parse(attn_text, strlen(attn_text), "x.toml", &c, &err), PP_OK);
    // Each is a binary32 rounding, below a bf16 store's by 2^16: it shows in the binary32 lse (and
    // rarely in a bf16 output), so lse is the witness; what a site cannot reach stays bit for bit.
    // flash: the exponent's argument and the scaled max feed l, so the lse; lse is written after
    // out, so out keeps its bits
    check_site(&c, "flash", PP_SITE_ATTN_SOFTMAX_IN, LSE, 0);
    check_site(&c, "flash", PP_SITE_ATTN_ROW_MAX, LSE, 0);
    check_site(&c, "flash", PP_SITE_ATTN_LSE, LSE, OUT);
    // unfused: x − m feeds e, so P, out and the sum (bf16 scores subtract exactly in binary32: the
    // fp32 variant shows it); the unfused lse is an output only (the backward recomputes P)
    check_site(&c, "unfused-fp32", PP_SITE_ATTN_SOFTMAX_IN, OUT | LSE, 0);
    check_site(&c, "unfused", PP_SITE_ATTN_LSE, LSE, OUT | DQ | DK | DV);
    // the unfused out store on fp32 rounds nothing (its fp32 chain's value is binary32): the
    // binary64 it keeps is that value, so nothing moves; p's likewise (P = RN_32(e/sum) either way)
    check_site(&c, "unfused-fp32", PP_SITE_ATTN_OUT, 0, OUT | LSE | DQ | DK | DV);
    check_site(&c, "unfused-fp32", PP_SITE_ATTN_P, 0, OUT | LSE | DQ | DK | DV);
    // CP pr-821: the fp32 lse merge made binary64 moves the merged lse
    check_site(&c, "cp-pr", PP_SITE_ATTN_CP_LSE_MERGE, LSE, 0);
    // CP te-2024 merges in binary64 already; exact, the merged lse is kept in binary64 to the
    // output (no binary32 rounding after the ring) and the corrections read it
    check_site(&c, "cp-te", PP_SITE_ATTN_CP_LSE_MERGE, OUT | LSE, 0);
    pp_case_free(&c);
}

int main(void)
{
    pp_test_report_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(explain_attention_every_site_offered),
        cmocka_unit_test(explain_attention_binary64_sites),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
