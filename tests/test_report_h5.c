// test_report_h5.c — report.h5 round trip: a populated pp_run_result (escaped names, NaN/Inf,
// comparisons against the reference and against other variants, every torch message form, gate
// verdicts) written and read back field for field and bit for bit; malformed reports refused;
// failed writes (missing directory, a file-size limit hit mid-write, a bad model) leave no file.
#include "test_util.h"

#include <dirent.h>
#include <hdf5.h>
#include <math.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/close.h"
#include "io/h5io.h"
#include "report/report_h5.h"
#include "core/results.h"
#include "core/statistic.h"

// ---------------------------------------------------------------------------------------------
// Helpers: a scratch directory, random values, the fixture

typedef struct scratch {
    char dir[64];
    char path[160];  // dir/report.h5
} scratch;

static void scratch_make(scratch *s)
{
    assert_int_equal(pp_test_mkdtemp(s->dir, sizeof s->dir, "report_h5"), 0);
    snprintf(s->path, sizeof s->path, "%s/report.h5", s->dir);
}

static void scratch_remove(scratch *s)
{
    pp_test_rm_tree(s->dir);
}

// Entries of the scratch directory other than . and .. (the report and any temporary file).
static int scratch_entries(const scratch *s)
{
    return pp_test_dir_entries(s->dir);
}

// A value of format f: random magnitude in [2^-8, 2^8), rounded; every 7th element special
// (NaN, +-Inf where the format has them, -0.0, the smallest subnormal).
static double sample(pp_format_id f, pp_test_rng *x, int64_t i)
{
    pp_format F = pp_format_get(f);
    double u = (double)(pp_test_rng_next(x) >> 11) * 0x1p-53;
    double v = ldexp(1.0 + u, (int)(pp_test_rng_next(x) % 16) - 8) * ((pp_test_rng_next(x) & 1) ? -1 : 1);
    switch (i % 7 == 3 ? (i / 7) % 5 : -1) {
    case 0: return NAN;
    case 1: return F.has_inf ? INFINITY : F.max_finite;
    case 2: return F.has_inf ? -INFINITY : -F.max_finite;
    case 3: return -0.0;
    case 4: return ldexp(1.0, F.emin - F.p + 1);
    default: return pp_round(f, v, PP_RND_NE, 0);
    }
}

static void make_tensor(pp_tensor *t, int ndim, const int64_t *shape, pp_format_id f, pp_test_rng *x)
{
    assert_int_equal(pp_tensor_alloc(t, ndim, shape, f, NULL), PP_OK);
    for (int64_t i = 0; i < t->numel; i++)
        t->data[i] = sample(f, x, i);
}

// actual = expected rounded to fa, perturbed at some elements (and NaN at some), so that
// comparisons mismatch, match, and meet NaN/Inf on either side.
static void perturbed(pp_tensor *a, const pp_tensor *e, pp_format_id fa, pp_test_rng *x)
{
    assert_int_equal(pp_tensor_alloc(a, e->ndim, e->shape, fa, NULL), PP_OK);
    for (int64_t i = 0; i < e->numel; i++) {
        double v = pp_round(fa, e->data[i], PP_RND_NE, 0);
        if (i % 5 == 1 && isfinite(v))
            v = pp_round(fa, v * (1.0 + 0x1p-6 * (double)(pp_test_rng_next(x) % 8)), PP_RND_NE, 0);
        if (i % 11 == 10)
            v = NAN;
        a->data[i] = v;
    }
}

static void set_name(char *dst, const char *src)
{
    snprintf(dst, PP_NAME_MAX, "%s", src);
}

static pp_variant_result *add_variant(pp_run_result *r, const char *name, int external)
{
    pp_variant_result *v = &r->variants[r->n_variants++];
    set_name(v->name, name);
    v->external = external;
    return v;
}

static void add_knob(pp_variant_result *v, const char *name, const char *value)
{
    set_name(v->knobs[v->n_knobs].name, name);
    set_name(v->knobs[v->n_knobs].value, value);
    v->n_knobs++;
}

// Comparison of actual with expected, the statistics gathered in two updates and a merge so
// that the exact sums hold pending carries.
static void add_cmp(pp_run_result *r, const char *variant, const char *tensor, const char *against,
                    const pp_tensor *a, const pp_tensor *e, double rtol, double atol, int equal_nan,
                    int major, int minor)
{
    pp_comparison *c = &r->comparisons[r->n_comparisons++];
    set_name(c->variant, variant);
    set_name(c->tensor, tensor);
    set_name(c->against, against);
    c->ndim = e->ndim;
    for (int d = 0; d < e->ndim; d++)
        c->shape[d] = e->shape[d];
    c->opts.rtol = rtol;
    c->opts.atol = atol;
    c->opts.equal_nan = equal_nan;
    c->opts.torch_major = major;
    c->opts.torch_minor = minor;
    c->opts.actual_format = a->format;
    c->opts.expected_format = e->format;
    pp_close_stats s1, s2;
    pp_close_stats_init(&s1);
    pp_close_stats_init(&s2);
    int64_t h = e->numel / 2;
    pp_close_stats_update(&s1, &c->opts, a->data, e->data, h, 0);
    pp_close_stats_update(&s2, &c->opts, a->data + h, e->data + h, e->numel - h, h);
    pp_close_stats_merge(&s1, &s2);
    c->stats = s1;
}

static void copy_tensor(pp_tensor *dst, const pp_tensor *src)
{
    assert_int_equal(pp_tensor_alloc(dst, src->ndim, src->shape, src->format, NULL), PP_OK);
    memcpy(dst->data, src->data, sizeof(double) * (size_t)src->numel);
}

static char *dup_str(const char *s)
{
    char *d = strdup(s);
    assert_non_null(d);
    return d;
}

// The fixture: four inputs (one a scalar, one empty), two references with values, five
// variants (names with '-', '=', '/', '%', ".", UTF-8, and one of 95 slashes), nine
// comparisons in an order that interleaves the variants, three verdicts.
static void build_run(pp_run_result *r, int keep_tensors)
{
    pp_test_rng x = {pp_test_seed()};
    memset(r, 0, sizeof *r);
    snprintf(r->precprobe_version, sizeof r->precprobe_version, "0.1.0-test");
    set_name(r->case_name, "cp-attention \"quoted\" <case>");
    set_name(r->op, "attention_fwd");
    snprintf(r->device, sizeof r->device, "cpu (auto: no GPU)");
    snprintf(r->created_utc, sizeof r->created_utc, "2026-11-22T22:30:00Z");
    r->reference_epoch = 5;
    r->seed = 0xFFFFFFFFFFFFFFF1u;  // top bit set: must stay unsigned
    r->case_text = dup_str("# case\nop = \"attention_fwd\"\nname = \"caf\xC3\xA9\" # UTF-8\n[[variant]]\n");
    r->shapes = dup_str("b=1 h=2 s=3 d=4");

    static const int64_t s234[3] = {2, 3, 4}, s5[1] = {5}, s03[2] = {0, 3}, s23[2] = {2, 3},
                         s6[1] = {6};
    r->n_inputs = 4;
    r->input_names = calloc(4, sizeof *r->input_names);
    r->inputs = calloc(4, sizeof *r->inputs);
    assert_non_null(r->input_names);
    assert_non_null(r->inputs);
    set_name(r->input_names[0], "q");
    set_name(r->input_names[1], "k/v");
    set_name(r->input_names[2], "softmax_scale");
    set_name(r->input_names[3], "empty");
    make_tensor(&r->inputs[0], 3, s234, PP_FMT_FP16, &x);
    make_tensor(&r->inputs[1], 1, s5, PP_FMT_BF16, &x);
    make_tensor(&r->inputs[2], 0, NULL, PP_FMT_FP32, &x);
    make_tensor(&r->inputs[3], 2, s03, PP_FMT_FP16, &x);

    r->n_references = 2;
    r->references = calloc(2, sizeof *r->references);
    r->reference_outputs = calloc(2, sizeof *r->reference_outputs);
    assert_non_null(r->references);
    assert_non_null(r->reference_outputs);
    set_name(r->references[0].tensor, "out");
    set_name(r->references[0].method, "dot2-binary64");
    r->references[0].error_bound = 0x1.8p-60;
    set_name(r->references[1].tensor, "lse/log");
    set_name(r->references[1].method, "mpfr-plain-128");
    r->references[1].error_bound = 4.9406564584124654e-324;
    make_tensor(&r->reference_outputs[0], 3, s234, PP_FMT_FP64, &x);
    make_tensor(&r->reference_outputs[1], 2, s23, PP_FMT_FP64, &x);
    const pp_tensor *ref_out = &r->reference_outputs[0], *ref_lse = &r->reference_outputs[1];

    r->variants = calloc(5, sizeof *r->variants);
    assert_non_null(r->variants);
    pp_variant_result *v0 = add_variant(r, "fp16-softmax=fp32", 0);
    add_knob(v0, "format", "fp16");
    add_knob(v0, "softmax", "fp32");
    add_knob(v0, "scale", "post-gemm alpha");
    pp_variant_result *v1 = add_variant(r, "a/b%c", 1);
    add_knob(v1, "format", "bf16");
    pp_variant_result *v2 = add_variant(r, ".", 0);
    pp_variant_result *v3 = add_variant(r, "e4m3 \xE2\x98\x83", 0);
    add_knob(v3, "format", "e4m3");
    add_knob(v3, "z-last=knob", "x/y");
    char slashes[PP_NAME_MAX];
    memset(slashes, '/', PP_NAME_MAX - 1);
    slashes[PP_NAME_MAX - 1] = '\0';
    add_variant(r, slashes, 0);

    pp_tensor o0, l0, o1, o3, l2, e6, a6, e0, a0, s1d_e, s1d_a;
    perturbed(&o0, ref_out, PP_FMT_FP16, &x);
    perturbed(&l0, ref_lse, PP_FMT_FP32, &x);
    perturbed(&o1, ref_out, PP_FMT_BF16, &x);
    perturbed(&o3, ref_out, PP_FMT_E4M3, &x);
    perturbed(&l2, ref_lse, PP_FMT_FP32, &x);
    make_tensor(&e6, 0, NULL, PP_FMT_FP64, &x);
    e6.data[0] = 3.0;
    perturbed(&a6, &e6, PP_FMT_FP16, &x);
    a6.data[0] = 3.001953125;  // one fp16 ulp above 3
    make_tensor(&e0, 2, s03, PP_FMT_FP64, &x);
    perturbed(&a0, &e0, PP_FMT_FP32, &x);
    make_tensor(&s1d_e, 1, s6, PP_FMT_FP64, &x);
    perturbed(&s1d_a, &s1d_e, PP_FMT_FP32, &x);

    r->comparisons = calloc(9, sizeof *r->comparisons);
    assert_non_null(r->comparisons);
    add_cmp(r, "a/b%c", "out", "reference", &o1, ref_out, 1.6e-2, 1e-5, 0, 2, 1);
    add_cmp(r, "fp16-softmax=fp32", "out", "reference", &o0, ref_out, 1e-3, 1e-5, 0, 2, 1);
    add_cmp(r, "fp16-softmax=fp32", "out", "a/b%c", &o0, &o1, 1.6e-2, 1e-5, 1, 2, 5);
    add_cmp(r, "fp16-softmax=fp32", "lse/log", "reference", &l0, ref_lse, 1.3e-6, 1e-5, 0, 2, 1);
    add_cmp(r, ".", "s1d", "reference", &s1d_a, &s1d_e, 1.3e-6, 1e-5, 0, 1, 12);
    add_cmp(r, "e4m3 \xE2\x98\x83", "out", "reference", &o3, ref_out, 0.0, 0.0, 1, 2, 1);
    add_cmp(r, ".", "scalar", "reference", &a6, &e6, 1e-3, 1e-5, 0, 2, 1);
    add_cmp(r, ".", "none", "reference", &a0, &e0, 1.3e-6, 1e-5, 0, 2, 0);
    add_cmp(r, "a/b%c", "out", ".", &o1, &o0, 1.6e-2, 1e-5, 0, 1, 13);

    if (keep_tensors) {
        v0->outputs = calloc(2, sizeof *v0->outputs);
        v2->outputs = calloc(2, sizeof *v2->outputs);
        assert_non_null(v0->outputs);
        assert_non_null(v2->outputs);
        copy_tensor(&v0->outputs[0], &o0);
        copy_tensor(&v0->outputs[1], &l0);
        copy_tensor(&v2->outputs[0], &o1);
        copy_tensor(&v2->outputs[1], &l2);
    } else {
        for (int i = 0; i < r->n_inputs; i++)
            pp_tensor_free(&r->inputs[i]);
        for (int i = 0; i < r->n_references; i++)
            pp_tensor_free(&r->reference_outputs[i]);
        free(r->inputs);
        free(r->reference_outputs);
        r->inputs = NULL;
        r->reference_outputs = NULL;
    }
    pp_tensor *tmp[] = {&o0, &l0, &o1, &o3, &l2, &e6, &a6, &e0, &a0, &s1d_e, &s1d_a};
    for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++)
        pp_tensor_free(tmp[i]);

    // Per-step series on one variant (one of them empty), per-axis error on one comparison.
    v0->series = calloc(2, sizeof *v0->series);
    assert_non_null(v0->series);
    v0->n_series = 2;
    assert_int_equal(pp_series_alloc(&v0->series[0], "theta_max_abs/error", 4), 0);
    assert_int_equal(pp_series_alloc(&v0->series[1], "empty", 0), 0);
    static const double steps[4] = {0, 1, 2, 10}, values[4] = {0.25, -0.0, NAN, INFINITY};
    memcpy(v0->series[0].step, steps, sizeof steps);
    memcpy(v0->series[0].value, values, sizeof values);
    pp_axis_stats *ax = &r->comparisons[1].axes;
    assert_int_equal(pp_axis_stats_alloc(ax, 3, 2, 64, 1), 0);
    ax->pos_dim = 1;
    ax->head_dim = 0;
    for (int p = 0; p < 3; p++)
        ax->pos_max[p] = 0.5 * p, ax->pos_mean[p] = p == 2 ? NAN : 0.125 * p;
    ax->head_block_max[0] = 1.5, ax->head_block_max[1] = INFINITY;

    r->verdicts = calloc(3, sizeof *r->verdicts);
    assert_non_null(r->verdicts);
    r->n_verdicts = 3;
    snprintf(r->verdicts[0].rule, sizeof r->verdicts[0].rule, "*.out.mismatch_fraction <= 0.01");
    r->verdicts[0].passed = 0;
    snprintf(r->verdicts[0].detail, sizeof r->verdicts[0].detail,
             "fp16-softmax=fp32.out: mismatch_fraction 0.2 > 0.01 <&\"'>");
    snprintf(r->verdicts[1].rule, sizeof r->verdicts[1].rule, "baseline: a/b%%c.out.max_ulp");
    r->verdicts[1].passed = 1;
    snprintf(r->verdicts[1].detail, sizeof r->verdicts[1].detail, "2.0 -> 2.0");
    r->verdicts[2].passed = 1;  // empty rule and detail
}

// ---------------------------------------------------------------------------------------------
// Field-by-field equality (bit patterns for doubles: NaN payloads and -0.0 must survive)

static void eq_bits(double a, double b, const char *what, int i)
{
    if (pp_f64_bits(a) != pp_f64_bits(b)) {
        fprintf(stderr, "FAIL round trip: %s (comparison/item %d) differs\n", what, i);
        pp_test_print_double("written", a);
        pp_test_print_double("read", b);
        fail();
    }
}

static void eq_i64(int64_t a, int64_t b, const char *what, int i)
{
    if (a != b) {
        fprintf(stderr, "FAIL round trip: %s (item %d): written %lld, read %lld\n", what, i,
                (long long)a, (long long)b);
        fail();
    }
}

static void eq_str(const char *a, const char *b, const char *what, int i)
{
    if ((a == NULL) != (b == NULL) || (a && strcmp(a, b))) {
        fprintf(stderr, "FAIL round trip: %s (item %d): written '%s', read '%s'\n", what, i,
                a ? a : "(null)", b ? b : "(null)");
        fail();
    }
}

static void eq_tensor(const pp_tensor *a, const pp_tensor *b, const char *what, int i)
{
    eq_i64(a->ndim, b->ndim, what, i);
    eq_i64(a->numel, b->numel, what, i);
    eq_i64(a->format, b->format, what, i);
    for (int d = 0; d < a->ndim; d++)
        eq_i64(a->shape[d], b->shape[d], what, i);
    for (int64_t k = 0; k < a->numel; k++)
        eq_bits(a->data[k], b->data[k], what, (int)k);
}

static void eq_max(const pp_close_max *a, const pp_close_max *b, const char *what, int i)
{
    eq_bits(a->value, b->value, what, i);
    eq_i64(a->index, b->index, what, i);
    eq_bits(a->actual, b->actual, what, i);
    eq_bits(a->expected, b->expected, what, i);
}

static void eq_sum(const pp_exactsum *a, const pp_exactsum *b, int i)
{
    for (int k = 0; k < PP_EXACTSUM_LIMBS; k++)
        eq_i64(a->limb[k], b->limb[k], "exact sum limb", i);
    eq_i64(a->pending, b->pending, "exact sum pending", i);
    eq_i64((int64_t)a->n_pinf, (int64_t)b->n_pinf, "exact sum n_pinf", i);
    eq_i64((int64_t)a->n_ninf, (int64_t)b->n_ninf, "exact sum n_ninf", i);
    eq_i64((int64_t)a->n_nan, (int64_t)b->n_nan, "exact sum n_nan", i);
}

// torch's message and the statistics text of comparison c.
static void texts(const pp_comparison *c, char *msg, size_t nm, char *stats, size_t ns, int *rc)
{
    *rc = pp_close_message(&c->stats, &c->opts, c->ndim, c->shape, msg, nm);
    assert_int_equal(pp_close_stats_text(&c->stats, &c->opts, c->ndim, c->shape, stats, ns), 0);
}

static void eq_comparison(const pp_comparison *a, const pp_comparison *b, int i)
{
    eq_str(a->variant, b->variant, "variant", i);
    eq_str(a->tensor, b->tensor, "tensor", i);
    eq_str(a->against, b->against, "against", i);
    // every statistic the gate and the reports name (core/statistic.h) reads back the same
    for (int k = 0; k < pp_statistic_count(); k++) {
        const pp_statistic *st = pp_statistic_at(k);
        eq_bits(st->value(&a->stats), st->value(&b->stats), st->name, i);
    }
    eq_i64(a->ndim, b->ndim, "ndim", i);
    for (int d = 0; d < a->ndim; d++)
        eq_i64(a->shape[d], b->shape[d], "shape", i);
    eq_bits(a->opts.rtol, b->opts.rtol, "rtol", i);
    eq_bits(a->opts.atol, b->opts.atol, "atol", i);
    eq_i64(a->opts.equal_nan, b->opts.equal_nan, "equal_nan", i);
    eq_i64(a->opts.torch_major, b->opts.torch_major, "torch_major", i);
    eq_i64(a->opts.torch_minor, b->opts.torch_minor, "torch_minor", i);
    eq_i64(a->opts.actual_format, b->opts.actual_format, "actual_format", i);
    eq_i64(a->opts.expected_format, b->opts.expected_format, "expected_format", i);
    const pp_close_stats *s = &a->stats, *t = &b->stats;
    eq_i64(s->numel, t->numel, "numel", i);
    eq_i64(s->mismatched, t->mismatched, "mismatched", i);
    eq_max(&s->abs_diff, &t->abs_diff, "abs_diff", i);
    eq_max(&s->rel_diff, &t->rel_diff, "rel_diff", i);
    eq_max(&s->tol_ratio, &t->tol_ratio, "tol_ratio", i);
    eq_max(&s->ulp_err, &t->ulp_err, "ulp_err", i);
    eq_max(&s->abs_err, &t->abs_err, "abs_err", i);
    eq_i64(s->n_finite, t->n_finite, "n_finite", i);
    eq_sum(&s->sum_abs, &t->sum_abs, i);
    eq_sum(&s->sum_sq, &t->sum_sq, i);
    eq_i64(s->nan_actual, t->nan_actual, "nan_actual", i);
    eq_i64(s->inf_actual, t->inf_actual, "inf_actual", i);
    eq_i64(s->nan_expected, t->nan_expected, "nan_expected", i);
    eq_i64(s->inf_expected, t->inf_expected, "inf_expected", i);
    for (int k = 0; k < PP_CLOSE_ULP_BINS; k++)
        eq_i64(s->ulp_hist[k], t->ulp_hist[k], "ulp_hist", i);
    eq_bits(pp_close_stats_mean_abs(s), pp_close_stats_mean_abs(t), "mean_abs", i);
    eq_bits(pp_close_stats_rms(s), pp_close_stats_rms(t), "rms", i);
    const pp_axis_stats *xa = &a->axes, *xb = &b->axes;
    eq_i64(xa->n_pos, xb->n_pos, "axes n_pos", i);
    if (xa->n_pos > 0) {
        eq_i64(xa->n_heads, xb->n_heads, "axes n_heads", i);
        eq_i64(xa->block, xb->block, "axes block", i);
        eq_i64(xa->n_blocks, xb->n_blocks, "axes n_blocks", i);
        eq_i64(xa->pos_dim, xb->pos_dim, "axes pos_dim", i);
        eq_i64(xa->head_dim, xb->head_dim, "axes head_dim", i);
        for (int64_t p = 0; p < xa->n_pos; p++) {
            eq_bits(xa->pos_max[p], xb->pos_max[p], "axes pos_max", i);
            eq_bits(xa->pos_mean[p], xb->pos_mean[p], "axes pos_mean", i);
        }
        for (int64_t k = 0; k < xa->n_heads * xa->n_blocks; k++)
            eq_bits(xa->head_block_max[k], xb->head_block_max[k], "axes head_block_max", i);
    }
    char m1[4096], m2[4096], x1[8192], x2[8192];
    int r1, r2;
    texts(a, m1, sizeof m1, x1, sizeof x1, &r1);
    texts(b, m2, sizeof m2, x2, sizeof x2, &r2);
    eq_i64(r1, r2, "pp_close_message rc", i);
    eq_str(m1, m2, "pp_close_message", i);
    eq_str(x1, x2, "pp_close_stats_text", i);
}

static void eq_run(const pp_run_result *a, const pp_run_result *b)
{
    eq_str(a->precprobe_version, b->precprobe_version, "precprobe_version", 0);
    eq_str(a->case_name, b->case_name, "case_name", 0);
    eq_str(a->op, b->op, "op", 0);
    eq_str(a->device, b->device, "device", 0);
    eq_str(a->created_utc, b->created_utc, "created_utc", 0);
    eq_i64(a->reference_epoch, b->reference_epoch, "reference_epoch", 0);
    eq_i64((int64_t)a->seed, (int64_t)b->seed, "seed", 0);
    eq_str(a->case_text, b->case_text, "case_text", 0);
    eq_str(a->shapes, b->shapes, "shapes", 0);
    eq_i64(a->n_inputs, b->n_inputs, "n_inputs", 0);
    eq_i64(a->inputs != NULL, b->inputs != NULL, "inputs kept", 0);
    for (int i = 0; i < a->n_inputs; i++) {
        eq_str(a->input_names[i], b->input_names[i], "input name", i);
        if (a->inputs)
            eq_tensor(&a->inputs[i], &b->inputs[i], "input tensor", i);
    }
    eq_i64(a->n_references, b->n_references, "n_references", 0);
    eq_i64(a->reference_outputs != NULL, b->reference_outputs != NULL, "reference kept", 0);
    for (int i = 0; i < a->n_references; i++) {
        eq_str(a->references[i].tensor, b->references[i].tensor, "reference tensor", i);
        eq_str(a->references[i].method, b->references[i].method, "reference method", i);
        eq_bits(a->references[i].error_bound, b->references[i].error_bound, "error_bound", i);
        if (a->reference_outputs)
            eq_tensor(&a->reference_outputs[i], &b->reference_outputs[i], "reference values", i);
    }
    eq_i64(a->n_variants, b->n_variants, "n_variants", 0);
    for (int v = 0; v < a->n_variants; v++) {
        const pp_variant_result *x = &a->variants[v], *y = &b->variants[v];
        eq_str(x->name, y->name, "variant name", v);
        eq_i64(x->external, y->external, "external", v);
        eq_i64(x->n_knobs, y->n_knobs, "n_knobs", v);
        for (int k = 0; k < x->n_knobs; k++) {
            eq_str(x->knobs[k].name, y->knobs[k].name, "knob name", v);
            eq_str(x->knobs[k].value, y->knobs[k].value, "knob value", v);
        }
        eq_i64(x->outputs != NULL, y->outputs != NULL, "outputs kept", v);
        for (int i = 0; x->outputs && i < a->n_references; i++)
            eq_tensor(&x->outputs[i], &y->outputs[i], "variant output", v);
        eq_i64(x->n_series, y->n_series, "n_series", v);
        for (int i = 0; i < x->n_series; i++) {
            eq_str(x->series[i].name, y->series[i].name, "series name", v);
            eq_i64(x->series[i].length, y->series[i].length, "series length", v);
            for (int64_t k = 0; k < x->series[i].length; k++) {
                eq_bits(x->series[i].step[k], y->series[i].step[k], "series step", v);
                eq_bits(x->series[i].value[k], y->series[i].value[k], "series value", v);
            }
        }
    }
    eq_i64(a->n_comparisons, b->n_comparisons, "n_comparisons", 0);
    for (int i = 0; i < a->n_comparisons; i++)
        eq_comparison(&a->comparisons[i], &b->comparisons[i], i);
    eq_i64(a->n_verdicts, b->n_verdicts, "n_verdicts", 0);
    for (int i = 0; i < a->n_verdicts; i++) {
        eq_str(a->verdicts[i].rule, b->verdicts[i].rule, "verdict rule", i);
        eq_i64(a->verdicts[i].passed, b->verdicts[i].passed, "verdict passed", i);
        eq_str(a->verdicts[i].detail, b->verdicts[i].detail, "verdict detail", i);
    }
}

static void expect_code(int rc, int want, const pp_error *e, const char *what)
{
    if (rc != want) {
        fprintf(stderr, "FAIL %s: rc %d (want %d): %s\n", what, rc, want, e->msg);
        fail();
    }
}

// ---------------------------------------------------------------------------------------------
// Round trips

static void roundtrip(int keep)
{
    scratch s;
    scratch_make(&s);
    pp_run_result r, back;
    build_run(&r, keep);
    pp_error e = {0};
    expect_code(pp_report_h5_write(s.path, &r, &e), PP_OK, &e, "write");
    assert_int_equal(scratch_entries(&s), 1);  // the report, no temporary left
    expect_code(pp_report_h5_read(s.path, &back, &e), PP_OK, &e, "read");
    eq_run(&r, &back);
    // The fixture reaches every message form: some comparisons close, some not, the scalar one.
    int closes = 0, nots = 0;
    for (int i = 0; i < r.n_comparisons; i++) {
        char m[4096];
        int k = pp_close_message(&r.comparisons[i].stats, &r.comparisons[i].opts,
                                 r.comparisons[i].ndim, r.comparisons[i].shape, m, sizeof m);
        closes += k == 0;
        nots += k == 1;
    }
    assert_true(closes >= 1 && nots >= 5);
    pp_run_result_free(&back);
    pp_run_result_free(&r);
    scratch_remove(&s);
}

static void report_h5_roundtrip_with_tensors(void **state)
{
    (void)state;
    roundtrip(1);
}

static void report_h5_roundtrip_without_tensors(void **state)
{
    (void)state;
    roundtrip(0);
}

// No case text, no shapes line, nothing at all: the minimal run comes back as it went.
static void report_h5_roundtrip_empty_run(void **state)
{
    (void)state;
    scratch s;
    scratch_make(&s);
    pp_run_result r, back;
    memset(&r, 0, sizeof r);
    pp_error e = {0};
    expect_code(pp_report_h5_write(s.path, &r, &e), PP_OK, &e, "write empty");
    expect_code(pp_report_h5_read(s.path, &back, &e), PP_OK, &e, "read empty");
    eq_run(&r, &back);
    assert_null(back.case_text);
    assert_null(back.shapes);
    pp_run_result_free(&back);
    scratch_remove(&s);
}

// A second write replaces the first whole.
static void report_h5_replaces_existing(void **state)
{
    (void)state;
    scratch s;
    scratch_make(&s);
    pp_run_result r, small, back;
    build_run(&r, 1);
    memset(&small, 0, sizeof small);
    set_name(small.case_name, "second");
    pp_error e = {0};
    expect_code(pp_report_h5_write(s.path, &r, &e), PP_OK, &e, "first write");
    chmod(s.path, 0640);
    expect_code(pp_report_h5_write(s.path, &small, &e), PP_OK, &e, "second write");
    struct stat st;
    assert_int_equal(stat(s.path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);  // a replaced report keeps its mode
    expect_code(pp_report_h5_read(s.path, &back, &e), PP_OK, &e, "read");
    eq_run(&small, &back);
    assert_int_equal(scratch_entries(&s), 1);
    pp_run_result_free(&back);
    pp_run_result_free(&r);
    scratch_remove(&s);
}

// h5dump (hdf5-tools) reads the whole file; skipped where it is not installed.
static void report_h5_h5dump_reads_it(void **state)
{
    (void)state;
    if (system("command -v h5dump > /dev/null 2>&1") != 0) {
        fprintf(stderr, "  h5dump not installed (apt-get install hdf5-tools): skipped\n");
        skip();
    }
    scratch s;
    scratch_make(&s);
    pp_run_result r;
    build_run(&r, 1);
    pp_error e = {0};
    expect_code(pp_report_h5_write(s.path, &r, &e), PP_OK, &e, "write");
    char cmd[512];
    snprintf(cmd, sizeof cmd, "h5dump '%s' > '%s/dump.txt' 2>&1", s.path, s.dir);
    int rc = system(cmd);
    if (rc != 0) {
        fprintf(stderr, "FAIL h5dump exited with %d (see %s/dump.txt)\n", rc, s.dir);
        fail();
    }
    // Spot checks that the dump shows the layout: an escaped variant name, a statistic, the
    // gate's table and the histogram's bin labels.
    snprintf(cmd, sizeof cmd,
             "grep -q 'a%%2Fb%%25c' '%1$s/dump.txt' && grep -q 'max_abs_diff' '%1$s/dump.txt' && "
             "grep -q '\"passed\"' '%1$s/dump.txt' && grep -q 'bin_labels' '%1$s/dump.txt' && "
             "grep -q 'GROUP \"%%2E\"' '%1$s/dump.txt'", s.dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "FAIL h5dump output lacks an expected item (see %s/dump.txt)\n", s.dir);
        fail();
    }
    pp_run_result_free(&r);
    scratch_remove(&s);
}

// ---------------------------------------------------------------------------------------------
// Failed writes leave nothing behind

static void report_h5_missing_directory_is_runtime_error(void **state)
{
    (void)state;
    scratch s;
    scratch_make(&s);
    pp_run_result r;
    build_run(&r, 0);
    char path[256];
    snprintf(path, sizeof path, "%s/no-such-dir/report.h5", s.dir);
    pp_error e = {0};
    expect_code(pp_report_h5_write(path, &r, &e), PP_ERR_RUNTIME, &e, "missing directory");
    assert_int_equal(scratch_entries(&s), 0);
    // A directory in the report's place.
    expect_code(pp_report_h5_write(s.dir, &r, &e), PP_ERR_RUNTIME, &e, "directory as path");
    assert_int_equal(scratch_entries(&s), 0);
    pp_run_result_free(&r);
    scratch_remove(&s);
}

static int same_bytes(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb;
    while (same) {
        int x = fgetc(fa), y = fgetc(fb);
        same = x == y;
        if (x == EOF)
            break;
    }
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return same;
}

// A write cut off in the middle, as by a full disk: a file-size limit makes the writes fail
// (EFBIG) once the temporary file reaches it, at a small limit and just below the report's
// size. In a child process, so the limit stays there; the child leaves through exit(), so the
// library's exit handlers run after the failure too. The old report must be intact and no
// temporary file left.
static void report_h5_failure_mid_write_leaves_old_file(void **state)
{
    (void)state;
    scratch s;
    scratch_make(&s);
    pp_run_result r, old;
    build_run(&r, 1);
    memset(&old, 0, sizeof old);
    set_name(old.case_name, "old");
    pp_error e = {0};
    expect_code(pp_report_h5_write(s.path, &r, &e), PP_OK, &e, "full write");
    struct stat st;
    assert_int_equal(stat(s.path, &st), 0);
    const off_t limits[3] = {1, 8192, st.st_size - 1};
    assert_true(st.st_size > 2 * limits[1]);
    expect_code(pp_report_h5_write(s.path, &old, &e), PP_OK, &e, "old write");
    char copy[256];
    snprintf(copy, sizeof copy, "%s.copy", s.dir);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", s.path, copy);
    assert_int_equal(system(cmd), 0);
    for (int k = 0; k < 3; k++) {
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            signal(SIGXFSZ, SIG_IGN);  // write() then fails with EFBIG instead of killing us
            struct rlimit rl = {(rlim_t)limits[k], (rlim_t)limits[k]};
            if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
                exit(10);
            pp_error ce = {0};
            int rc = pp_report_h5_write(s.path, &r, &ce);
            if (rc != PP_ERR_RUNTIME || !strstr(ce.msg, "cannot write"))
                fprintf(stderr, "  child: rc %d: %s\n", rc, ce.msg);
            exit(rc == PP_ERR_RUNTIME ? 0 : 20 + rc);
        }
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "FAIL mid-write failure at limit %lld: child status 0x%x (want exit 0: "
                    "PP_ERR_RUNTIME, and a clean exit)\n", (long long)limits[k], status);
            fail();
        }
        assert_int_equal(scratch_entries(&s), 1);  // no temporary file
        assert_true(same_bytes(s.path, copy));
    }
    unlink(copy);
    pp_run_result_free(&r);
    scratch_remove(&s);
}

// Inconsistent models are PP_ERR_INPUT, caught before or during the write; no file either way.
static void report_h5_bad_model_is_input_error(void **state)
{
    (void)state;
    scratch s;
    scratch_make(&s);
    pp_error e = {0};
    pp_run_result r;
    char keep[PP_NAME_MAX];

    build_run(&r, 1);
    memcpy(keep, r.comparisons[3].variant, PP_NAME_MAX);
    set_name(r.comparisons[3].variant, "no-such-variant");
    expect_code(pp_report_h5_write(s.path, &r, &e), PP_ERR_INPUT, &e, "unknown variant");
    memcpy(r.comparisons[3].variant, keep, PP_NAME_MAX);

    // A duplicate comparison is found only while writing: the half-written file must go.
    pp_comparison c8 = r.comparisons[8];
    r.comparisons[8] = r.comparisons[7];
    expect_code(pp_report_h5_write(s.path, &r, &e), PP_ERR_INPUT, &e, "duplicate comparison");
    assert_int_equal(scratch_entries(&s), 0);
    r.comparisons[8] = c8;

    set_name(r.variants[0].knobs[1].name, "external");
    expect_code(pp_report_h5_write(s.path, &r, &e), PP_ERR_INPUT, &e, "knob named external");
    set_name(r.variants[0].knobs[1].name, "softmax");

    double v = r.inputs[0].data[0];
    r.inputs[0].data[0] = 0.1;  // not an fp16 value
    expect_code(pp_report_h5_write(s.path, &r, &e), PP_ERR_INPUT, &e, "unrepresentable value");
    r.inputs[0].data[0] = v;

    r.comparisons[0].opts.torch_major = 0;  // below 1.10: unreadable, so refused
    expect_code(pp_report_h5_write(s.path, &r, &e), PP_ERR_INPUT, &e, "torch version 0.1");
    r.comparisons[0].opts.torch_major = 2;
    r.comparisons[0].opts.atol = -1.0;
    expect_code(pp_report_h5_write(s.path, &r, &e), PP_ERR_INPUT, &e, "negative atol");
    r.comparisons[0].opts.atol = 1e-5;

    set_name(r.variants[2].name, "fp16-softmax=fp32");
    expect_code(pp_report_h5_write(s.path, &r, &e), PP_ERR_INPUT, &e, "duplicate variant");
    assert_int_equal(scratch_entries(&s), 0);
    pp_run_result_free(&r);
    scratch_remove(&s);
}

// The checks before a write name the item, as the read would.
static void expect_write_refused(pp_run_result *r, const char *want)
{
    scratch s;
    scratch_make(&s);
    pp_error e = {0};
    int rc = pp_report_h5_write(s.path, r, &e);
    if (rc != PP_ERR_INPUT || !strstr(e.msg, want)) {
        fprintf(stderr, "FAIL refused write: rc %d (want %d), message '%s' (want '%s' in it)\n", rc,
                PP_ERR_INPUT, e.msg, want);
        fail();
    }
    assert_int_equal(scratch_entries(&s), 0);
    scratch_remove(&s);
}

static void report_h5_refused_write_names_the_item(void **state)
{
    (void)state;
    pp_run_result r;
    build_run(&r, 1);
    memset(r.case_name, 'x', sizeof r.case_name);
    expect_write_refused(&r, "cannot write /: case_name is not NUL-terminated");
    set_name(r.case_name, "case");
    r.comparisons[2].opts.atol = -1.0;
    expect_write_refused(&r, "cannot write /variants/fp16-softmax=fp32/stats/out/a%2Fb%25c: atol is -1");
    r.comparisons[2].opts.atol = 1e-5;
    r.comparisons[4].stats.abs_diff.index = 6;  // shape (6,)
    expect_write_refused(&r, "/variants/%2E/stats/s1d/reference: flat index 6 outside the shape");
    r.comparisons[4].stats.abs_diff.index = 0;
    set_name(r.references[1].tensor, "out");
    expect_write_refused(&r, "cannot write /reference: 'out' appears twice");
    set_name(r.references[1].tensor, "lse/log");
    r.variants[0].series[0].length = -2;
    expect_write_refused(&r, "/variants/fp16-softmax=fp32/series/theta_max_abs%2Ferror: step: length -2");
    r.variants[0].series[0].length = 4;
    pp_run_result_free(&r);
}

// ---------------------------------------------------------------------------------------------
// Malformed reports are PP_ERR_INPUT with the item named

// Writes the fixture, applies edit to the open file, and expects the read to fail with INPUT
// and a message containing want.
static void expect_read_fails(void (*edit)(hid_t), const char *want)
{
    scratch s;
    scratch_make(&s);
    pp_run_result r, back;
    build_run(&r, 1);
    pp_error e = {0};
    expect_code(pp_report_h5_write(s.path, &r, &e), PP_OK, &e, "write");
    hid_t f = H5Fopen(s.path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    edit(f);
    assert_true(H5Fclose(f) >= 0);
    int rc = pp_report_h5_read(s.path, &back, &e);
    if (rc != PP_ERR_INPUT || !strstr(e.msg, want)) {
        fprintf(stderr, "FAIL malformed report: rc %d (want %d), message '%s' (want '%s' in it)\n",
                rc, PP_ERR_INPUT, e.msg, want);
        fail();
    }
    assert_int_equal(back.n_comparisons, 0);  // zeroed on failure
    assert_null(back.variants);
    pp_run_result_free(&r);
    scratch_remove(&s);
}

static void drop_total(hid_t f)
{
    assert_true(H5Adelete_by_name(f, "/variants/a%2Fb%25c/stats/out/reference", "total", H5P_DEFAULT) >= 0);
}

static void set_schema_99(hid_t f)
{
    hid_t a = H5Aopen(f, "schema_version", H5P_DEFAULT);
    int64_t v = 99;
    assert_true(a >= 0 && H5Awrite(a, H5T_NATIVE_INT64, &v) >= 0);
    H5Aclose(a);
}

static void order_twice(hid_t f)
{
    hid_t g = H5Gopen2(f, "/variants/%2E/stats/scalar/reference", H5P_DEFAULT);
    hid_t a = H5Aopen(g, "order", H5P_DEFAULT);
    int64_t v = 0;
    assert_true(a >= 0 && H5Awrite(a, H5T_NATIVE_INT64, &v) >= 0);
    H5Aclose(a);
    H5Gclose(g);
}

static void drop_gate(hid_t f)
{
    assert_true(H5Ldelete(f, "gate", H5P_DEFAULT) >= 0);
}

static void drop_reference_values(hid_t f)
{
    assert_true(H5Ldelete(f, "/reference/out/values", H5P_DEFAULT) >= 0);
}

static void histogram_short(hid_t f)
{
    const char *g = "/variants/fp16-softmax=fp32/stats/out/reference";
    hid_t grp = H5Gopen2(f, g, H5P_DEFAULT);
    assert_true(H5Ldelete(grp, "ulp_histogram", H5P_DEFAULT) >= 0);
    hsize_t n = 3;
    int64_t h[3] = {0, 0, 0};
    hid_t sp = H5Screate_simple(1, &n, NULL);
    hid_t ds = H5Dcreate2(grp, "ulp_histogram", H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(ds >= 0 && H5Dwrite(ds, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, h) >= 0);
    H5Dclose(ds);
    H5Sclose(sp);
    H5Gclose(grp);
}

static void index_outside(hid_t f)
{
    hid_t g = H5Gopen2(f, "/variants/%2E/stats/s1d/reference", H5P_DEFAULT);
    hid_t a = H5Aopen(g, "max_abs_diff_flat_index", H5P_DEFAULT);
    int64_t v = 6;  // shape (6,)
    assert_true(a >= 0 && H5Awrite(a, H5T_NATIVE_INT64, &v) >= 0);
    H5Aclose(a);
    H5Gclose(g);
}

static void report_h5_malformed_is_input_error(void **state)
{
    (void)state;
    expect_read_fails(drop_total, "/variants/a%2Fb%25c/stats/out/reference");
    expect_read_fails(set_schema_99, "schema version 99");
    expect_read_fails(order_twice, "used twice");
    expect_read_fails(drop_gate, "/gate");
    expect_read_fails(drop_reference_values, "values kept for some");
    expect_read_fails(histogram_short, "ulp_histogram");
    expect_read_fails(index_outside, "outside the shape");
}

// Replaces attribute name of object obj (a path in f) by one of another type: a string, or an
// int64 or binary64 scalar of value v.
static void retype_attr(hid_t f, const char *obj, const char *name, hid_t type, double v)
{
    hid_t o = H5Oopen(f, obj, H5P_DEFAULT);
    assert_true(o >= 0);
    if (H5Aexists(o, name) > 0)
        assert_true(H5Adelete(o, name) >= 0);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t t = H5Tcopy(type);
    if (H5Tget_class(type) == H5T_STRING)
        assert_true(H5Tset_size(t, 8) >= 0);
    hid_t a = H5Acreate2(o, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    int64_t i = (int64_t)v;
    assert_true(a >= 0);
    if (H5Tget_class(type) == H5T_STRING)
        assert_true(H5Awrite(a, t, "fp12\0\0\0\0") >= 0);
    else if (H5Tget_class(type) == H5T_INTEGER)
        assert_true(H5Awrite(a, H5T_NATIVE_INT64, &i) >= 0);
    else
        assert_true(H5Awrite(a, H5T_NATIVE_DOUBLE, &v) >= 0);
    H5Aclose(a);
    H5Tclose(t);
    H5Sclose(sp);
    H5Oclose(o);
}

static void drop_attr(hid_t f, const char *obj, const char *name)
{
    assert_true(H5Adelete_by_name(f, obj, name, H5P_DEFAULT) >= 0);
}

#define CMP_A "/variants/a%2Fb%25c/stats/out/reference"
#define VAR_0 "/variants/fp16-softmax=fp32"

static void total_is_string(hid_t f) { retype_attr(f, CMP_A, "total", H5T_C_S1, 0); }
static void rtol_missing(hid_t f) { drop_attr(f, CMP_A, "rtol"); }
static void rtol_negative(hid_t f) { retype_attr(f, CMP_A, "rtol", H5T_IEEE_F64LE, -1.0); }
static void equal_nan_is_float(hid_t f) { retype_attr(f, CMP_A, "equal_nan", H5T_IEEE_F64LE, 1.0); }
static void format_unknown(hid_t f) { retype_attr(f, CMP_A, "actual_format", H5T_C_S1, 0); }
static void shape_is_float(hid_t f) { retype_attr(f, CMP_A, "shape", H5T_IEEE_F64LE, 2.0); }
static void max_part_missing(hid_t f) { drop_attr(f, CMP_A, "max_abs_error_actual"); }
static void external_is_2(hid_t f) { retype_attr(f, VAR_0, "external", H5T_STD_I64LE, 2); }
static void seed_is_float(hid_t f) { retype_attr(f, "/", "seed", H5T_IEEE_F64LE, 1.0); }
static void case_name_is_int(hid_t f) { retype_attr(f, "/", "case_name", H5T_STD_I64LE, 1); }
static void method_missing(hid_t f) { drop_attr(f, "/reference/lse%2Flog", "method"); }
static void stats_missing(hid_t f) { assert_true(H5Ldelete(f, VAR_0 "/stats", H5P_DEFAULT) >= 0); }

static void series_value_short(hid_t f)
{
    const char *g = VAR_0 "/series/theta_max_abs%2Ferror";
    hid_t grp = H5Gopen2(f, g, H5P_DEFAULT);
    assert_true(H5Ldelete(grp, "value", H5P_DEFAULT) >= 0);
    hsize_t n = 3;
    double v[3] = {0, 0, 0};
    hid_t sp = H5Screate_simple(1, &n, NULL);
    hid_t ds = H5Dcreate2(grp, "value", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(ds >= 0 && H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    H5Dclose(ds);
    H5Sclose(sp);
    H5Gclose(grp);
}

static void gate_is_group(hid_t f)
{
    assert_true(H5Ldelete(f, "gate", H5P_DEFAULT) >= 0);
    hid_t g = H5Gcreate2(f, "gate", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(g >= 0);
    H5Gclose(g);
}

// A wrong type or a missing required item: refused, the message naming the group and the item.
static void report_h5_wrong_or_missing_item_is_named(void **state)
{
    (void)state;
    expect_read_fails(total_is_string, CMP_A ": attribute total missing or not an integer");
    expect_read_fails(rtol_missing, CMP_A ": attribute rtol missing or not floating-point");
    expect_read_fails(rtol_negative, CMP_A ": attribute rtol is -1; it must be finite and >= 0");
    expect_read_fails(equal_nan_is_float, CMP_A ": attribute equal_nan missing or not 0/1");
    expect_read_fails(format_unknown, CMP_A ": attribute actual_format: unknown format 'fp12'");
    expect_read_fails(shape_is_float, CMP_A ": attribute shape missing or not 0 to 8 integers");
    expect_read_fails(max_part_missing, CMP_A ": attribute max_abs_error_actual missing");
    expect_read_fails(external_is_2, VAR_0 ": attribute external missing or not 0/1");
    expect_read_fails(seed_is_float, "/: attribute seed missing or not an integer");
    expect_read_fails(case_name_is_int, "/: attribute case_name missing, not a string");
    expect_read_fails(method_missing, "/reference/lse%2Flog: attribute method missing");
    expect_read_fails(stats_missing, VAR_0 "/stats: missing group");
    expect_read_fails(series_value_short, "theta_max_abs%2Ferror: dataset value");
    expect_read_fails(gate_is_group, "/gate: missing, or not a 1-D table of (rule, passed, detail)");
}

// Optional items absent — as in older reports (no max_abs_error, no per-axis data) or runs that
// kept no tensors, had no shapes, case text or series — read back as "none".
static void report_h5_optional_items_absent_read(void **state)
{
    (void)state;
    scratch s;
    scratch_make(&s);
    pp_run_result r, back;
    build_run(&r, 1);
    pp_error e = {0};
    expect_code(pp_report_h5_write(s.path, &r, &e), PP_OK, &e, "write");
    hid_t f = H5Fopen(s.path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    const char *cmp1 = VAR_0 "/stats/out/reference";  // r.comparisons[1]: has per-axis data
    static const char *const suffix[] = {"", "_flat_index", "_index", "_actual", "_expected"};
    for (int k = 0; k < 5; k++) {
        char name[64];
        snprintf(name, sizeof name, "max_abs_error%s", suffix[k]);
        drop_attr(f, cmp1, name);
    }
    char p[256];
    snprintf(p, sizeof p, "%s/by_position", cmp1);
    assert_true(H5Ldelete(f, p, H5P_DEFAULT) >= 0);
    snprintf(p, sizeof p, "%s/by_head_block", cmp1);
    assert_true(H5Ldelete(f, p, H5P_DEFAULT) >= 0);
    drop_attr(f, "/", "shapes");
    static const char *const links[] = {"/case", VAR_0 "/series", VAR_0 "/outputs", "/variants/%2E/outputs",
                                        "/reference/out/values", "/reference/lse%2Flog/values", "/inputs/q",
                                        "/inputs/k%2Fv", "/inputs/softmax_scale", "/inputs/empty"};
    for (size_t i = 0; i < sizeof links / sizeof links[0]; i++)
        assert_true(H5Ldelete(f, links[i], H5P_DEFAULT) >= 0);
    assert_true(H5Fclose(f) >= 0);
    expect_code(pp_report_h5_read(s.path, &back, &e), PP_OK, &e, "read without the optional items");
    assert_null(back.shapes);
    assert_null(back.case_text);
    assert_null(back.inputs);
    assert_null(back.reference_outputs);
    assert_null(back.variants[0].outputs);
    assert_int_equal(back.variants[0].n_series, 0);
    assert_int_equal(back.comparisons[1].stats.abs_err.index, -1);
    assert_int_equal(back.comparisons[1].axes.n_pos, 0);
    assert_int_equal(back.comparisons[1].axes.pos_dim, -1);
    // Everything else as written: put the absent items' "none" into the original and compare.
    free(r.shapes), free(r.case_text);
    r.shapes = r.case_text = NULL;
    for (int i = 0; i < r.n_inputs; i++)
        pp_tensor_free(&r.inputs[i]);
    for (int i = 0; i < r.n_references; i++) {
        pp_tensor_free(&r.reference_outputs[i]);
        pp_tensor_free(&r.variants[0].outputs[i]);
        pp_tensor_free(&r.variants[2].outputs[i]);
    }
    free(r.inputs), free(r.reference_outputs), free(r.variants[0].outputs), free(r.variants[2].outputs);
    r.inputs = r.reference_outputs = r.variants[0].outputs = r.variants[2].outputs = NULL;
    for (int i = 0; i < r.variants[0].n_series; i++)
        free(r.variants[0].series[i].step), free(r.variants[0].series[i].value);
    r.variants[0].n_series = 0;
    pp_close_stats none;
    pp_close_stats_init(&none);
    r.comparisons[1].stats.abs_err = none.abs_err;
    pp_axis_stats_free(&r.comparisons[1].axes);
    eq_run(&r, &back);
    pp_run_result_free(&back);
    pp_run_result_free(&r);
    scratch_remove(&s);
}

// The shipped baselines — reports written by earlier precprobes — read, pass the write's checks,
// and come back the same from a report written now.
static void report_h5_shipped_baselines_read(void **state)
{
    (void)state;
    const char *dir = "reports/baselines";
    DIR *d = opendir(dir);
    assert_non_null(d);
    scratch s;
    scratch_make(&s);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len < 4 || strcmp(de->d_name + len - 3, ".h5"))
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        pp_run_result a, b;
        pp_error e = {0};
        expect_code(pp_report_h5_read(path, &a, &e), PP_OK, &e, path);
        assert_true(a.n_variants > 0 && a.n_comparisons > 0);
        expect_code(pp_report_h5_write(s.path, &a, &e), PP_OK, &e, "baseline written again");
        expect_code(pp_report_h5_read(s.path, &b, &e), PP_OK, &e, "baseline read again");
        eq_run(&a, &b);
        pp_run_result_free(&a);
        pp_run_result_free(&b);
        n++;
    }
    closedir(d);
    assert_true(n >= 1);
    scratch_remove(&s);
}

static void report_h5_not_a_report_is_input_error(void **state)
{
    (void)state;
    scratch s;
    scratch_make(&s);
    pp_run_result back;
    pp_error e = {0};
    expect_code(pp_report_h5_read(s.path, &back, &e), PP_ERR_INPUT, &e, "missing file");
    FILE *fp = fopen(s.path, "w");
    assert_non_null(fp);
    fputs("not hdf5\n", fp);
    fclose(fp);
    expect_code(pp_report_h5_read(s.path, &back, &e), PP_ERR_INPUT, &e, "text file");
    // An HDF5 file that is not a report.
    pp_tensor t;
    int64_t shape[1] = {2};
    assert_int_equal(pp_tensor_alloc(&t, 1, shape, PP_FMT_FP64, NULL), PP_OK);
    expect_code(pp_h5_write(s.path, "/x", &t, 1, &e), PP_OK, &e, "plain h5");
    pp_tensor_free(&t);
    expect_code(pp_report_h5_read(s.path, &back, &e), PP_ERR_INPUT, &e, "plain h5 read");
    assert_non_null(strstr(e.msg, "schema_version"));
    scratch_remove(&s);
}

// A kept tensor read back is also a valid precprobe input spec (report.h5:/inputs/NAME).
static void report_h5_tensors_load_with_h5io(void **state)
{
    (void)state;
    scratch s;
    scratch_make(&s);
    pp_run_result r;
    build_run(&r, 1);
    pp_error e = {0};
    expect_code(pp_report_h5_write(s.path, &r, &e), PP_OK, &e, "write");
    pp_tensor t;
    expect_code(pp_h5_read(s.path, "/inputs/k%2Fv", &t, &e), PP_OK, &e, "pp_h5_read input");
    eq_tensor(&r.inputs[1], &t, "input via pp_h5_read", 1);
    pp_tensor_free(&t);
    expect_code(pp_h5_read(s.path, "/variants/fp16-softmax=fp32/outputs/lse%2Flog", &t, &e), PP_OK,
                &e, "pp_h5_read output");
    eq_tensor(&r.variants[0].outputs[1], &t, "output via pp_h5_read", 1);
    pp_tensor_free(&t);
    pp_run_result_free(&r);
    scratch_remove(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(report_h5_roundtrip_with_tensors),
        cmocka_unit_test(report_h5_roundtrip_without_tensors),
        cmocka_unit_test(report_h5_roundtrip_empty_run),
        cmocka_unit_test(report_h5_replaces_existing),
        cmocka_unit_test(report_h5_h5dump_reads_it),
        cmocka_unit_test(report_h5_missing_directory_is_runtime_error),
        cmocka_unit_test(report_h5_failure_mid_write_leaves_old_file),
        cmocka_unit_test(report_h5_bad_model_is_input_error),
        cmocka_unit_test(report_h5_refused_write_names_the_item),
        cmocka_unit_test(report_h5_malformed_is_input_error),
        cmocka_unit_test(report_h5_wrong_or_missing_item_is_named),
        cmocka_unit_test(report_h5_optional_items_absent_read),
        cmocka_unit_test(report_h5_shipped_baselines_read),
        cmocka_unit_test(report_h5_not_a_report_is_input_error),
        cmocka_unit_test(report_h5_tensors_load_with_h5io),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
