// run.c — the run pipeline: case → inputs → variants → backend → reference → comparisons.
#include "pipeline/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/build_info.h"
#include "core/progress.h"
#include "pipeline/ref_cache.h"
#include "io/tensor_io.h"
#include "core/view.h"

// Inputs, reference outputs and bounds for one storage format: variants of different formats
// see their inputs rounded from the same binary64 draws, and each group gets its own reference.
typedef struct format_group {
    pp_format_id format;
    pp_tensor inputs[PP_MAX_OP_TENSORS];
    pp_tensor refs[PP_MAX_OP_TENSORS];
    pp_reference_info info[PP_MAX_OP_TENSORS];
    int want[PP_MAX_OP_TENSORS];  // output t is computed: some variant of the group has it
    void *trace;  // the reference's per-step trace (ops with series hooks), or NULL
} format_group;

static void free_group(format_group *g, const pp_op *op)
{
    for (int i = 0; i < op->n_inputs; i++)
        pp_tensor_free(&g->inputs[i]);
    for (int i = 0; i < op->n_outputs; i++)
        pp_tensor_free(&g->refs[i]);
    if (g->trace && op->traced)
        op->traced->trace_free(g->trace);
    g->trace = NULL;
}

// A variant on the GPU through the op's traced CUDA form, as run_cpu_traced below; without one,
// its plain run_cuda (and no series).
static int run_cuda_traced(const pp_op *op, const pp_case *c, const pp_variant_spec *vs, format_group *g,
                           pp_tensor *out, pp_variant_result *vr, pp_error *err)
{
    if (!op->traced || !op->traced->run_cuda)
        return op->run_cuda(&c->params, &vs->knobs, g->inputs, out, err);
    void *trace = NULL;
    int rc = op->traced->run_cuda(&c->params, &vs->knobs, g->inputs, out, &trace, err);
    if (!rc)
        rc = op->traced->series(&c->params, &vs->knobs, trace, g->trace, &vr->series, &vr->n_series, err);
    if (trace)
        op->traced->trace_free(trace);
    return rc;
}

// A variant on the CPU through the op's traced form: its series against the reference's trace
// are computed at once and its own trace freed, so memory stays one trajectory per variant.
static int run_cpu_traced(const pp_op *op, const pp_case *c, const pp_variant_spec *vs, format_group *g,
                          pp_tensor *out, int threads, pp_variant_result *vr, pp_error *err)
{
    void *trace = NULL;
    int rc = op->traced->run_cpu(&c->params, &vs->knobs, g->inputs, out, threads, &trace, err);
    if (!rc)
        rc = op->traced->series(&c->params, &vs->knobs, trace, g->trace, &vr->series, &vr->n_series, err);
    if (trace)
        op->traced->trace_free(trace);
    return rc;
}

static int shape_error(const char *what, const pp_tensor *t, int ndim, const int64_t *shape, pp_error *err)
{
    char have[200], want[200];
    pp_shape_str(t->ndim, t->shape, have, sizeof have);
    pp_shape_str(ndim, shape, want, sizeof want);
    return pp_fail(err, PP_ERR_INPUT, "%s has shape %s, but the case's [op] needs %s", what, have, want);
}

static void progress(const pp_run_opts *o, const char *fmt, const char *a, const char *b)
{
    if (!o->progress)
        return;
    fprintf(stderr, "\r\033[K");
    fprintf(stderr, fmt, a, b);
    fflush(stderr);
}

static int make_inputs(const pp_case *c, format_group *g, pp_error *err)
{
    const pp_op *op = c->op;
    for (int i = 0; i < op->n_inputs; i++) {
        int ndim;
        int64_t shape[PP_MAX_DIMS];
        op->shape(&c->params, 0, i, &ndim, shape);
        const pp_input_spec *in = &c->inputs[i];
        pp_tensor *t = &g->inputs[i];
        int rc;
        if (in->file[0]) {
            char what[PP_PATH_MAX + 64];
            snprintf(what, sizeof what, "%s: input '%s' (%s)", c->path, op->inputs[i], in->file);
            if ((rc = pp_tensor_load(in->file, t, err)))
                return rc;
            if (!pp_tensor_has_shape(t, ndim, shape))
                return shape_error(what, t, ndim, shape, err);
            if (in->has_format && (rc = pp_tensor_check_format(t, in->format, what, err)))
                return rc;
            // The variant computes in its storage format: the file's values must be values of it.
            if ((rc = pp_tensor_check_format(t, g->format, what, err)))
                return rc;
            t->format = g->format;
        } else {
            if ((rc = pp_tensor_alloc(t, ndim, shape, g->format, err)) ||
                (rc = pp_inputs_fill(t, &in->dist, c->seed, (uint32_t)i, err)))
                return rc;
        }
    }
    return PP_OK;
}

// Allocates output o for every o with want[o]; f < 0: each in its format under knobs k, else f.
static int alloc_outputs(const pp_op *op, const pp_op_params *p, const pp_op_knobs *k, int f, const int *want,
                         pp_tensor *out, pp_error *err)
{
    for (int o = 0; o < op->n_outputs; o++) {
        if (!want[o])
            continue;
        int ndim;
        int64_t shape[PP_MAX_DIMS];
        op->shape(p, 1, o, &ndim, shape);
        pp_format_id fo = f >= 0 ? (pp_format_id)f : pp_op_output_format(op, k, o);
        int rc = pp_tensor_alloc(&out[o], ndim, shape, fo, err);
        if (rc)
            return rc;
    }
    return PP_OK;
}

static int load_external(const pp_case *c, const pp_variant_spec *v, pp_tensor *out, pp_error *err)
{
    const pp_op *op = c->op;
    for (int o = 0; o < op->n_outputs; o++) {
        if (!v->external_files[o][0])
            continue;  // not given: not compared
        int ndim;
        int64_t shape[PP_MAX_DIMS];
        op->shape(&c->params, 1, o, &ndim, shape);
        char what[PP_PATH_MAX + 128];
        snprintf(what, sizeof what, "%s: external variant '%s' output '%s' (%s)", c->path, v->name, op->outputs[o],
                 v->external_files[o]);
        int rc = pp_tensor_load(v->external_files[o], &out[o], err);
        if (rc)
            return rc;
        if (!pp_tensor_has_shape(&out[o], ndim, shape))
            return shape_error(what, &out[o], ndim, shape, err);
    }
    return PP_OK;
}

static void fill_opts(const pp_case *c, pp_format_id actual, pp_format_id expected, pp_close_opts *o)
{
    memset(o, 0, sizeof *o);
    o->equal_nan = c->equal_nan;
    o->torch_major = c->torch_major;
    o->torch_minor = c->torch_minor;
    o->actual_format = actual;
    o->expected_format = expected;
    if (c->has_tolerances) {
        o->rtol = c->rtol;
        o->atol = c->atol;
    } else {
        pp_default_tolerances(actual, expected, &o->rtol, &o->atol);
    }
}

// identical = 1 asks "identical?" rather than "close?" (--cross-check): zero tolerances, and NaN
// equal to NaN (their sign and payload are the hardware's choice, x86's and CUDA's differ).
static void compare_into(pp_comparison *cmp, const pp_case *c, const char *variant, const char *tensor,
                         const char *against, const pp_tensor *a, const pp_tensor *e, int identical)
{
    memset(cmp, 0, sizeof *cmp);
    snprintf(cmp->variant, sizeof cmp->variant, "%s", variant);
    snprintf(cmp->tensor, sizeof cmp->tensor, "%s", tensor);
    snprintf(cmp->against, sizeof cmp->against, "%s", against);
    cmp->ndim = a->ndim;
    memcpy(cmp->shape, a->shape, sizeof cmp->shape);
    fill_opts(c, a->format, e->format, &cmp->opts);
    if (identical) {
        cmp->opts.rtol = cmp->opts.atol = 0.0;
        cmp->opts.equal_nan = 1;
    }
    pp_close_stats_init(&cmp->stats);
    pp_close_stats_update(&cmp->stats, &cmp->opts, a->data, e->data, a->numel, 0);
    // error per position and head for the HTML charts: against the reference only, and optional
    // (out of memory leaves them out, n_pos 0)
    int o = 0, pos_dim, head_dim;
    while (o < c->op->n_outputs && strcmp(c->op->outputs[o], tensor))
        o++;
    if (!strcmp(against, "reference") && o < c->op->n_outputs && c->op->axes &&
        c->op->axes(&c->params, o, &pos_dim, &head_dim))
        pp_axis_stats_compute(&cmp->axes, a->ndim, a->shape, pos_dim, head_dim, a->data, e->data);
}

// The comparisons of one pair with a view or tensor groups: each group gathered on both sides
// (src/core/view.h) and compared under the name GROUP@VIEW.
static int compare_pair_view(const pp_case *c, const pp_pair_spec *ps, int (*has)[PP_MAX_OP_TENSORS],
                             pp_tensor (*outs)[PP_MAX_OP_TENSORS], pp_run_result *r, pp_error *err)
{
    const pp_op *op = c->op;
    int a = ps->actual, e = ps->expected;
    char msg[200], what[PP_PATH_MAX + 2 * PP_NAME_MAX];
    snprintf(what, sizeof what, "%s: pair (%s, %s)", c->path, c->variants[a].name, c->variants[e].name);
    pp_view view;
    if (pp_view_parse(ps->view, &view, msg, sizeof msg))
        return pp_fail(err, PP_ERR_INPUT, "%s: %s", what, msg);
    view.world = ps->view_world;  // resolved and checked when the case was read
    int n_groups = ps->n_groups;
    for (int g = 0; g < (n_groups ? n_groups : op->n_outputs); g++) {
        int len = n_groups ? ps->group_len[g] : 1, ok = 1;
        const pp_tensor *ta[PP_MAX_OP_TENSORS], *te[PP_MAX_OP_TENSORS];
        for (int i = 0; i < len; i++) {
            int t = n_groups ? ps->group[g][i] : g;
            ok &= has[a][t] && has[e][t];
            ta[i] = &outs[a][t];
            te[i] = &outs[e][t];
        }
        if (!ok) {
            if (!n_groups)
                continue;  // every output: only those both variants have
            return pp_fail(err, PP_ERR_INPUT, "%s: a tensor of '%s' is missing from one of the variants", what,
                           ps->group_name[g]);
        }
        char name[PP_NAME_MAX];
        snprintf(name, sizeof name, "%s%s%s", n_groups ? ps->group_name[g] : op->outputs[g], ps->view[0] ? "@" : "",
                 ps->view);
        pp_tensor ga, ge;
        int rc = pp_view_gather(&view, ta, len, &ga, what, err);
        if (!rc && (rc = pp_view_gather(&view, te, len, &ge, what, err)))
            pp_tensor_free(&ga);
        if (rc)
            return rc;
        compare_into(&r->comparisons[r->n_comparisons++], c, c->variants[a].name, name, c->variants[e].name, &ga,
                     &ge, 0);
        pp_tensor_free(&ga);
        pp_tensor_free(&ge);
    }
    return PP_OK;
}

// The reference of one format group: with the case's method unless the run overrides it, with a
// progress bar on stderr when asked for.
static int reference_of(const pp_case *c, const pp_run_opts *o, format_group *g, int threads, pp_error *err)
{
    const char *method = c->reference_method;
    if (o->reference_method) {
        method = NULL;
        for (int m = 0; c->op->ref_methods[m]; m++)
            if (!strcmp(c->op->ref_methods[m], o->reference_method))
                method = c->op->ref_methods[m];
        if (!method) {
            char list[256];
            pp_choices_str(c->op->ref_methods, list, sizeof list);
            return pp_fail(err, PP_ERR_INPUT, "--reference: op '%s' has no reference method '%s' (known: %s)",
                           c->op->name, o->reference_method, list);
        }
    }
    // the cache: a hit replaces the computation; a corrupt entry is recomputed and overwritten
    const pp_op *op = c->op;
    // ops with per-step series need the reference's trajectory, which the cache does not keep
    int cache = o->cache_dir && o->cache_dir[0] && !op->traced;
    char key[PP_REF_KEY_HEX];
    if (cache) {
        pp_ref_cache_key(op, &c->params, g->format, method ? method : op->ref_methods[0], g->want, g->inputs, key);
        pp_tensor hit[PP_MAX_OP_TENSORS];
        pp_reference_info hit_info[PP_MAX_OP_TENSORS];
        char why[600];
        memset(hit, 0, sizeof hit);
        memset(hit_info, 0, sizeof hit_info);
        if (pp_ref_cache_load(o->cache_dir, key, op, &c->params, g->want, hit, hit_info, why, sizeof why)) {
            for (int t = 0; t < op->n_outputs; t++)
                if (g->want[t]) {
                    pp_tensor_free(&g->refs[t]);
                    g->refs[t] = hit[t];
                    g->info[t] = hit_info[t];
                }
            return PP_OK;
        }
        if (why[0])
            fprintf(stderr, "precprobe: reference cache entry ignored (%s); recomputing\n", why);
    }
    char label[PP_NAME_MAX + 64];
    snprintf(label, sizeof label, "%s: reference (%s)", c->name, pp_format_get(g->format).name);
    pp_progress bar;
    pp_progress_start(&bar, label, o->progress);
    pp_ref_ctx ctx = {method, threads, pp_progress_update, &bar};
    int rc = op->traced ? op->traced->reference(&c->params, g->format, g->inputs, g->refs, g->info, &ctx,
                                                &g->trace, err)
                        : op->reference(&c->params, g->format, g->inputs, g->refs, g->info, &ctx, err);
    pp_progress_end(&bar);
    if (!rc && cache) {
        pp_error store_err = {0};
        if (pp_ref_cache_store(o->cache_dir, key, op, g->want, g->refs, g->info, &store_err))
            fprintf(stderr, "precprobe: reference cache not written: %s\n", store_err.msg);
    }
    return rc;
}

int pp_run_reference(const pp_case *c, const pp_run_opts *o, pp_format_id format, pp_tensor *inputs,
                     pp_tensor *refs, pp_reference_info *info, pp_error *err)
{
    const pp_op *op = c->op;
    int threads = o->threads > 0 ? o->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    format_group g;
    memset(&g, 0, sizeof g);
    g.format = format;
    int any = 0;
    for (int v = 0; v < c->n_variants; v++)
        if (op->format(&c->variants[v].knobs) == format) {
            any = 1;
            for (int t = 0; t < op->n_outputs; t++)
                g.want[t] |= pp_op_output_active(op, &c->params, &c->variants[v].knobs, t);
        }
    if (!any)
        for (int t = 0; t < op->n_outputs; t++)
            g.want[t] = pp_op_output_active(op, &c->params, &c->variants[0].knobs, t);
    int rc = make_inputs(c, &g, err);
    if (!rc)
        rc = alloc_outputs(op, &c->params, NULL, PP_FMT_FP64, g.want, g.refs, err);
    if (!rc)
        rc = reference_of(c, o, &g, threads < 1 ? 1 : threads, err);
    if (rc) {
        free_group(&g, op);
        return rc;
    }
    memcpy(inputs, g.inputs, sizeof g.inputs[0] * (size_t)op->n_inputs);
    memcpy(refs, g.refs, sizeof g.refs[0] * (size_t)op->n_outputs);
    memcpy(info, g.info, sizeof g.info[0] * (size_t)op->n_outputs);
    return PP_OK;
}

// --cross-check: runs variant v on the CPU emulation too and appends one comparison per output,
// the CUDA result (actual) against the emulation (expected), named "cpu-emulation". Our kernels
// are expected identical; vendor engines (cuBLAS) are measured, not expected to match.
static int cross_check(const pp_case *c, int v, const int *has, const pp_tensor *inputs, const pp_tensor *cuda_out,
                       int threads, pp_comparison *cross, int *n_cross, pp_error *err)
{
    const pp_op *op = c->op;
    const pp_variant_spec *vs = &c->variants[v];
    pp_tensor cpu[PP_MAX_OP_TENSORS];
    memset(cpu, 0, sizeof cpu);
    int rc = alloc_outputs(op, &c->params, &vs->knobs, -1, has, cpu, err);
    if (!rc)
        rc = op->run_cpu(&c->params, &vs->knobs, inputs, cpu, threads, err);
    if (rc == PP_ERR_RUNTIME && strstr(err->msg, "only on the GPU"))
        rc = PP_OK;  // a vendor engine has no emulation to cross-check against
    else
        for (int t = 0; !rc && t < op->n_outputs; t++)
            if (has[t])
                compare_into(&cross[(*n_cross)++], c, vs->name, op->outputs[t], "cpu-emulation", &cuda_out[t], &cpu[t], 1);
    for (int t = 0; t < op->n_outputs; t++)
        pp_tensor_free(&cpu[t]);
    return rc;
}

static int choose_device(const pp_run_opts *o, const pp_op *op, char *device, size_t n, pp_error *err)
{
    const char *want = o->device ? o->device : "auto";
    if (!strcmp(want, "cpu")) {
        snprintf(device, n, "cpu");
        return PP_OK;
    }
    if (!strcmp(want, "cuda") || !strcmp(want, "auto")) {
        char name[200];
        const char *why = !pp_cuda_compiled()             ? "CUDA support is not compiled in"
                        : !op->run_cuda                   ? "the operation has no CUDA implementation yet"
                        : !pp_cuda_usable(name, sizeof name) ? "no usable CUDA device or driver"
                                                           : NULL;
        if (!why) {
            snprintf(device, n, "cuda (%s)", name[0] ? name : "device 0");
            return PP_OK;
        }
        if (!strcmp(want, "cuda"))
            return pp_fail(err, PP_ERR_RUNTIME, "--device cuda: %s (op '%s')", why, op->name);
        snprintf(device, n, "cpu (auto: %s)", why);
        return PP_OK;
    }
    return pp_fail(err, PP_ERR_INPUT, "--device: unknown device '%s' (cpu, cuda, auto)", want);
}

int pp_run_case(const pp_case *c, const pp_run_opts *o, pp_run_result *r, pp_error *err)
{
    const pp_op *op = c->op;
    memset(r, 0, sizeof *r);
    int threads = o->threads > 0 ? o->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (threads < 1)
        threads = 1;
    snprintf(r->precprobe_version, sizeof r->precprobe_version, "%s", PP_VERSION);
    snprintf(r->case_name, sizeof r->case_name, "%s", c->name);
    snprintf(r->op, sizeof r->op, "%s", op->name);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(r->created_utc, sizeof r->created_utc, "%Y-%m-%dT%H:%M:%SZ", &tm);
    r->seed = c->seed;
    int rc = choose_device(o, op, r->device, sizeof r->device, err);
    if (rc)
        return rc;
    r->case_text = strdup(c->text ? c->text : "");
    r->shapes = malloc(512);
    r->variants = calloc((size_t)c->n_variants, sizeof *r->variants);
    // comparisons: every variant × output against its reference, every pair × output (or group),
    // and with --cross-check on cuda every variant × output against the CPU emulation
    int want_cross = o->cross_check && !strncmp(r->device, "cuda", 4);
    int max_cmp = (c->n_variants + c->n_pairs) * (op->n_outputs > PP_MAX_PAIR_GROUPS ? op->n_outputs
                                                                                    : PP_MAX_PAIR_GROUPS) +
                  (want_cross ? c->n_variants * op->n_outputs : 0);
    r->comparisons = calloc((size_t)max_cmp, sizeof *r->comparisons);
    format_group *groups = calloc(PP_FMT_COUNT, sizeof *groups);  // zeroed: want[] all 0
    pp_tensor(*outs)[PP_MAX_OP_TENSORS] = calloc((size_t)c->n_variants, sizeof *outs);
    int *group_of = calloc((size_t)c->n_variants, sizeof *group_of);
    int(*has)[PP_MAX_OP_TENSORS] = calloc((size_t)c->n_variants, sizeof *has);
    int n_cross = 0;
    pp_comparison *cross = want_cross ? calloc((size_t)c->n_variants * (size_t)op->n_outputs, sizeof *cross) : NULL;
    if (!r->case_text || !r->shapes || !r->variants || !r->comparisons || !groups || !outs || !group_of || !has ||
        (want_cross && !cross)) {
        rc = pp_fail(err, PP_ERR_RUNTIME, "out of memory");
        goto done;
    }
    op->describe(&c->params, r->shapes, 512);
    r->n_variants = c->n_variants;

    // 0. which outputs each variant has: active under its knobs and, for an external variant,
    //    given a file
    for (int v = 0; v < c->n_variants; v++)
        for (int t = 0; t < op->n_outputs; t++)
            has[v][t] = pp_op_output_active(op, &c->params, &c->variants[v].knobs, t) &&
                        (!c->variants[v].external || c->variants[v].external_files[t][0]);

    // 1. inputs and reference for every storage format a variant uses; the reference computes
    //    the outputs that some variant of its group has
    int n_groups = 0;
    for (int v = 0; v < c->n_variants; v++) {
        pp_format_id f = op->format(&c->variants[v].knobs);
        int g = 0;
        while (g < n_groups && groups[g].format != f)
            g++;
        group_of[v] = g;
        if (g == n_groups)
            groups[n_groups++].format = f;
        for (int t = 0; t < op->n_outputs; t++)
            groups[g].want[t] |= has[v][t];
    }
    for (int g = 0; g < n_groups && !rc; g++) {
        progress(o, "precprobe: %s: inputs and reference (%s)", c->name, pp_format_get(groups[g].format).name);
        if ((rc = make_inputs(c, &groups[g], err)) ||
            (rc = alloc_outputs(op, &c->params, NULL, PP_FMT_FP64, groups[g].want, groups[g].refs, err)))
            break;
        rc = reference_of(c, o, &groups[g], threads, err);
    }
    if (rc)
        goto done;

    // 2. variants
    for (int v = 0; v < c->n_variants && !rc; v++) {
        const pp_variant_spec *vs = &c->variants[v];
        pp_variant_result *vr = &r->variants[v];
        snprintf(vr->name, sizeof vr->name, "%s", vs->name);
        vr->external = vs->external;
        vr->n_knobs = op->n_knobs;
        for (int k = 0; k < op->n_knobs; k++) {
            snprintf(vr->knobs[k].name, sizeof vr->knobs[k].name, "%s", op->knobs[k].name);
            pp_knob_text(&op->knobs[k], vs->knobs.v[k], vr->knobs[k].value, sizeof vr->knobs[k].value);
        }
        progress(o, "precprobe: %s: variant %s", c->name, vs->name);
        format_group *g = &groups[group_of[v]];
        if (vs->external)
            rc = load_external(c, vs, outs[v], err);
        else if ((rc = alloc_outputs(op, &c->params, &vs->knobs, -1, has[v], outs[v], err)) == PP_OK)
            rc = !strncmp(r->device, "cuda", 4) ? run_cuda_traced(op, c, vs, g, outs[v], vr, err)
               : op->traced ? run_cpu_traced(op, c, vs, g, outs[v], threads, vr, err)
                            : op->run_cpu(&c->params, &vs->knobs, g->inputs, outs[v], threads, err);
        if (!rc && cross && !vs->external)
            rc = cross_check(c, v, has[v], g->inputs, outs[v], threads, cross, &n_cross, err);
    }
    if (rc)
        goto done;

    // 3. comparisons: every variant against its reference, then the pairs
    for (int v = 0; v < c->n_variants; v++)
        for (int t = 0; t < op->n_outputs; t++)
            if (has[v][t])
                compare_into(&r->comparisons[r->n_comparisons++], c, c->variants[v].name, op->outputs[t],
                             "reference", &outs[v][t], &groups[group_of[v]].refs[t], 0);
    for (int p = 0; p < c->n_pairs && !rc; p++) {
        const pp_pair_spec *ps = &c->pairs[p];
        int a = ps->actual, e = ps->expected;
        if (!ps->view[0] && !ps->n_groups) {
            for (int t = 0; t < op->n_outputs; t++)
                if (has[a][t] && has[e][t])
                    compare_into(&r->comparisons[r->n_comparisons++], c, c->variants[a].name, op->outputs[t],
                                 c->variants[e].name, &outs[a][t], &outs[e][t], 0);
            continue;
        }
        rc = compare_pair_view(c, ps, has, outs, r, err);
    }
    if (rc)
        goto done;
    // 3b. the cross-check's cpu-vs-cuda comparisons, after the case's own
    for (int i = 0; i < n_cross; i++)
        r->comparisons[r->n_comparisons++] = cross[i];

    // 4. reference descriptions (the first group's; every group uses the same method), tensors
    // (only the outputs some group computed; saved tensors below follow the same order)
    int ref_of[PP_MAX_OP_TENSORS];
    r->references = calloc((size_t)op->n_outputs, sizeof *r->references);
    if (!r->references) {
        rc = pp_fail(err, PP_ERR_RUNTIME, "out of memory");
        goto done;
    }
    for (int t = 0; t < op->n_outputs; t++) {
        int first = -1;
        for (int g = 0; g < n_groups; g++) {
            if (!groups[g].want[t])
                continue;
            if (first < 0)
                r->references[r->n_references] = groups[first = g].info[t];
            else if (groups[g].info[t].error_bound > r->references[r->n_references].error_bound)
                r->references[r->n_references].error_bound = groups[g].info[t].error_bound;
        }
        if (first >= 0)
            ref_of[r->n_references++] = t;
    }
    if (o->save_tensors) {
        // kept: the first group's inputs and reference, every variant's outputs (moved, not copied)
        r->n_inputs = op->n_inputs;
        r->inputs = calloc((size_t)op->n_inputs, sizeof *r->inputs);
        r->input_names = calloc((size_t)op->n_inputs, sizeof *r->input_names);
        r->reference_outputs = calloc((size_t)r->n_references, sizeof *r->reference_outputs);
        if (!r->inputs || !r->input_names || !r->reference_outputs) {
            rc = pp_fail(err, PP_ERR_RUNTIME, "out of memory");
            goto done;
        }
        for (int i = 0; i < op->n_inputs; i++) {
            r->inputs[i] = groups[0].inputs[i];
            memset(&groups[0].inputs[i], 0, sizeof groups[0].inputs[i]);
            snprintf(r->input_names[i], PP_NAME_MAX, "%s", op->inputs[i]);
        }
        // the reference of the first group that computed each output; a variant's missing
        // outputs stay zeroed (data NULL) and are not written
        for (int i = 0; i < r->n_references; i++) {
            int t = ref_of[i], g = 0;
            while (!groups[g].want[t])
                g++;
            r->reference_outputs[i] = groups[g].refs[t];
            memset(&groups[g].refs[t], 0, sizeof groups[g].refs[t]);
        }
        for (int v = 0; v < c->n_variants; v++) {
            r->variants[v].outputs = calloc((size_t)op->n_outputs, sizeof(pp_tensor));
            if (!r->variants[v].outputs) {
                rc = pp_fail(err, PP_ERR_RUNTIME, "out of memory");
                goto done;
            }
            for (int i = 0; i < r->n_references; i++) {
                r->variants[v].outputs[i] = outs[v][ref_of[i]];
                memset(&outs[v][ref_of[i]], 0, sizeof outs[v][ref_of[i]]);
            }
        }
    }
done:
    progress(o, "%s%s", "", "");
    if (groups)
        for (int g = 0; g < PP_FMT_COUNT; g++)
            free_group(&groups[g], op);
    if (outs)
        for (int v = 0; v < c->n_variants; v++)
            for (int t = 0; t < op->n_outputs; t++)
                pp_tensor_free(&outs[v][t]);
    free(groups);
    free(outs);
    free(group_of);
    free(has);
    free(cross);
    if (rc)
        pp_run_result_free(r);
    return rc;
}
