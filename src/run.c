// run.c — the run pipeline: case → inputs → variants → backend → reference → comparisons.
#include "run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "tensor_io.h"

// Inputs, reference outputs and bounds for one storage format: variants of different formats
// see their inputs rounded from the same binary64 draws, and each group gets its own reference.
typedef struct format_group {
    pp_format_id format;
    pp_tensor inputs[PP_MAX_OP_TENSORS];
    pp_tensor refs[PP_MAX_OP_TENSORS];
    pp_reference_info info[PP_MAX_OP_TENSORS];
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

static int same_shape(const pp_tensor *t, int ndim, const int64_t *shape)
{
    if (t->ndim != ndim)
        return 0;
    for (int d = 0; d < ndim; d++)
        if (t->shape[d] != shape[d])
            return 0;
    return 1;
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
            if (!same_shape(t, ndim, shape))
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

static int alloc_outputs(const pp_op *op, const pp_op_params *p, pp_format_id f, pp_tensor *out, pp_error *err)
{
    for (int o = 0; o < op->n_outputs; o++) {
        int ndim;
        int64_t shape[PP_MAX_DIMS];
        op->shape(p, 1, o, &ndim, shape);
        int rc = pp_tensor_alloc(&out[o], ndim, shape, f, err);
        if (rc)
            return rc;
    }
    return PP_OK;
}

static int load_external(const pp_case *c, const pp_variant_spec *v, pp_tensor *out, pp_error *err)
{
    const pp_op *op = c->op;
    for (int o = 0; o < op->n_outputs; o++) {
        int ndim;
        int64_t shape[PP_MAX_DIMS];
        op->shape(&c->params, 1, o, &ndim, shape);
        char what[PP_PATH_MAX + 128];
        snprintf(what, sizeof what, "%s: external variant '%s' output '%s' (%s)", c->path, v->name, op->outputs[o],
                 v->external_files[o]);
        int rc = pp_tensor_load(v->external_files[o], &out[o], err);
        if (rc)
            return rc;
        if (!same_shape(&out[o], ndim, shape))
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

static void compare_into(pp_comparison *cmp, const pp_case *c, const char *variant, const char *tensor,
                         const char *against, const pp_tensor *a, const pp_tensor *e)
{
    memset(cmp, 0, sizeof *cmp);
    snprintf(cmp->variant, sizeof cmp->variant, "%s", variant);
    snprintf(cmp->tensor, sizeof cmp->tensor, "%s", tensor);
    snprintf(cmp->against, sizeof cmp->against, "%s", against);
    cmp->ndim = a->ndim;
    memcpy(cmp->shape, a->shape, sizeof cmp->shape);
    fill_opts(c, a->format, e->format, &cmp->opts);
    pp_close_stats_init(&cmp->stats);
    pp_close_stats_update(&cmp->stats, &cmp->opts, a->data, e->data, a->numel, 0);
}

static int choose_device(const pp_run_opts *o, const pp_op *op, char *device, size_t n, pp_error *err)
{
    const char *want = o->device ? o->device : "auto";
    if (!strcmp(want, "cpu")) {
        snprintf(device, n, "cpu");
        return PP_OK;
    }
    if (!strcmp(want, "cuda") || !strcmp(want, "auto")) {
        const char *why = !pp_cuda_compiled() ? "CUDA support is not compiled in"
                        : !op->run_cuda      ? "the operation has no CUDA implementation yet"
                                             : NULL;
        if (!why) {
            snprintf(device, n, "cuda");
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
    // comparisons: every variant × output against its reference, plus every pair × output
    int max_cmp = (c->n_variants + c->n_pairs) * op->n_outputs;
    r->comparisons = calloc((size_t)max_cmp, sizeof *r->comparisons);
    format_group *groups = calloc(PP_FMT_COUNT, sizeof *groups);
    pp_tensor(*outs)[PP_MAX_OP_TENSORS] = calloc((size_t)c->n_variants, sizeof *outs);
    int *group_of = calloc((size_t)c->n_variants, sizeof *group_of);
    if (!r->case_text || !r->shapes || !r->variants || !r->comparisons || !groups || !outs || !group_of) {
        rc = pp_fail(err, PP_ERR_RUNTIME, "out of memory");
        goto done;
    }
    op->describe(&c->params, r->shapes, 512);
    r->n_variants = c->n_variants;

    // 1. inputs and reference for every storage format a variant uses
    int n_groups = 0;
    for (int v = 0; v < c->n_variants && !rc; v++) {
        pp_format_id f = op->format(&c->variants[v].knobs);
        int g = 0;
        while (g < n_groups && groups[g].format != f)
            g++;
        group_of[v] = g;
        if (g < n_groups)
            continue;
        groups[n_groups].format = f;
        n_groups++;
        progress(o, "precprobe: %s: inputs and reference (%s)", c->name, pp_format_get(f).name);
        if ((rc = make_inputs(c, &groups[g], err)) ||
            (rc = alloc_outputs(op, &c->params, PP_FMT_FP64, groups[g].refs, err)))
            break;
        if (op->traced)
            rc = op->traced->reference(&c->params, f, groups[g].inputs, groups[g].refs, groups[g].info,
                                       c->reference_method, threads, &groups[g].trace, err);
        else
            rc = op->reference(&c->params, f, groups[g].inputs, groups[g].refs, groups[g].info,
                               c->reference_method, threads, err);
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
            snprintf(vr->knobs[k].value, sizeof vr->knobs[k].value, "%s", op->knobs[k].values[vs->knobs.v[k]]);
        }
        progress(o, "precprobe: %s: variant %s", c->name, vs->name);
        format_group *g = &groups[group_of[v]];
        if (vs->external)
            rc = load_external(c, vs, outs[v], err);
        else if ((rc = alloc_outputs(op, &c->params, g->format, outs[v], err)) == PP_OK)
            rc = !strncmp(r->device, "cuda", 4) ? op->run_cuda(&c->params, &vs->knobs, g->inputs, outs[v], err)
               : op->traced ? run_cpu_traced(op, c, vs, g, outs[v], threads, vr, err)
                            : op->run_cpu(&c->params, &vs->knobs, g->inputs, outs[v], threads, err);
    }
    if (rc)
        goto done;

    // 3. comparisons: every variant against its reference, then the pairs
    for (int v = 0; v < c->n_variants; v++)
        for (int t = 0; t < op->n_outputs; t++)
            compare_into(&r->comparisons[r->n_comparisons++], c, c->variants[v].name, op->outputs[t], "reference",
                         &outs[v][t], &groups[group_of[v]].refs[t]);
    for (int p = 0; p < c->n_pairs; p++) {
        int a = c->pairs[p][0], e = c->pairs[p][1];
        for (int t = 0; t < op->n_outputs; t++)
            compare_into(&r->comparisons[r->n_comparisons++], c, c->variants[a].name, op->outputs[t],
                         c->variants[e].name, &outs[a][t], &outs[e][t]);
    }

    // 4. reference descriptions (the first group's; every group uses the same method), tensors
    r->n_references = op->n_outputs;
    r->references = calloc((size_t)op->n_outputs, sizeof *r->references);
    if (!r->references) {
        rc = pp_fail(err, PP_ERR_RUNTIME, "out of memory");
        goto done;
    }
    for (int t = 0; t < op->n_outputs; t++) {
        r->references[t] = groups[0].info[t];
        for (int g = 1; g < n_groups; g++)
            if (groups[g].info[t].error_bound > r->references[t].error_bound)
                r->references[t].error_bound = groups[g].info[t].error_bound;
    }
    if (o->save_tensors) {
        // kept: the first group's inputs and reference, every variant's outputs (moved, not copied)
        r->n_inputs = op->n_inputs;
        r->inputs = calloc((size_t)op->n_inputs, sizeof *r->inputs);
        r->input_names = calloc((size_t)op->n_inputs, sizeof *r->input_names);
        r->reference_outputs = calloc((size_t)op->n_outputs, sizeof *r->reference_outputs);
        if (!r->inputs || !r->input_names || !r->reference_outputs) {
            rc = pp_fail(err, PP_ERR_RUNTIME, "out of memory");
            goto done;
        }
        for (int i = 0; i < op->n_inputs; i++) {
            r->inputs[i] = groups[0].inputs[i];
            memset(&groups[0].inputs[i], 0, sizeof groups[0].inputs[i]);
            snprintf(r->input_names[i], PP_NAME_MAX, "%s", op->inputs[i]);
        }
        for (int t = 0; t < op->n_outputs; t++) {
            r->reference_outputs[t] = groups[0].refs[t];
            memset(&groups[0].refs[t], 0, sizeof groups[0].refs[t]);
        }
        for (int v = 0; v < c->n_variants; v++) {
            r->variants[v].outputs = calloc((size_t)op->n_outputs, sizeof(pp_tensor));
            if (!r->variants[v].outputs) {
                rc = pp_fail(err, PP_ERR_RUNTIME, "out of memory");
                goto done;
            }
            for (int t = 0; t < op->n_outputs; t++) {
                r->variants[v].outputs[t] = outs[v][t];
                memset(&outs[v][t], 0, sizeof outs[v][t]);
            }
        }
    }
    if (pp_gate_evaluate(c, r) < 0)
        rc = pp_fail(err, PP_ERR_RUNTIME, "out of memory");

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
    if (rc)
        pp_run_result_free(r);
    return rc;
}
