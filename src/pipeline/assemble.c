// assemble.c — the assemble stage (assemble.h).
#include "pipeline/assemble.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/build_info.h"
#include "pipeline/compare.h"
#include "pipeline/ref_cache.h"

static int metadata(const pp_run_plan *plan, pp_run_result *r)
{
    const pp_case *c = plan->c;
    snprintf(r->precprobe_version, sizeof r->precprobe_version, "%s", PP_VERSION);
    snprintf(r->case_name, sizeof r->case_name, "%s", c->name);
    snprintf(r->op, sizeof r->op, "%s", c->op->name);
    snprintf(r->device, sizeof r->device, "%s", plan->device);
    snprintf(r->created_utc, sizeof r->created_utc, "%s", plan->created_utc);
    r->reference_epoch = PP_REF_EPOCH;
    r->seed = c->seed;
    r->case_text = strdup(c->text ? c->text : "");
    r->shapes = malloc(512);
    if (!r->case_text || !r->shapes)
        return -1;
    c->op->describe(&c->params, r->shapes, 512);
    return 0;
}

// Whether knob decides the storage format of a variant with knobs k (another of its values gives
// another op->format): the one thing an external variant's knobs say, the format its files'
// values are read and compared in. Integer knobs never do.
static int knob_sets_format(const pp_op *op, const pp_op_knobs *k, int knob)
{
    if (!op->knobs[knob].values)
        return 0;
    pp_format_id f = op->format(k);
    pp_op_knobs other = *k;
    for (int v = 0; op->knobs[knob].values[v]; v++) {
        other.v[knob] = v;
        if (op->format(&other) != f)
            return 1;
    }
    return 0;
}

// Every variant: its name, every knob as text (defaults filled in), its series (moved). An
// external variant lists only its format knobs: the emulation's knobs (kernel, engine, ...) say
// nothing about a kernel that is not ours.
static int variants(const pp_run_plan *plan, pp_run_products *p, pp_run_result *r)
{
    const pp_case *c = plan->c;
    const pp_op *op = c->op;
    r->variants = calloc((size_t)c->n_variants, sizeof *r->variants);
    if (!r->variants)
        return -1;
    r->n_variants = c->n_variants;
    for (int v = 0; v < c->n_variants; v++) {
        const pp_variant_spec *vs = &c->variants[v];
        pp_variant_result *vr = &r->variants[v];
        snprintf(vr->name, sizeof vr->name, "%s", vs->name);
        vr->external = vs->external;
        vr->n_knobs = 0;
        for (int k = 0; k < op->n_knobs; k++) {
            if (vs->external && !knob_sets_format(op, &vs->knobs, k))
                continue;
            pp_knob_setting *ks = &vr->knobs[vr->n_knobs++];
            snprintf(ks->name, sizeof ks->name, "%s", op->knobs[k].name);
            pp_knob_setting_text(&op->knobs[k], &vs->knobs, k, ks->value, sizeof ks->value);
        }
        vr->series = p->variants[v].series;
        vr->n_series = p->variants[v].n_series;
        p->variants[v].series = NULL;
        p->variants[v].n_series = 0;
        vr->ranges = p->variants[v].ranges;
        memset(&p->variants[v].ranges, 0, sizeof p->variants[v].ranges);
    }
    return 0;
}

// The case's comparisons, then the cross-check's (moved from p).
static int comparisons(pp_run_products *p, pp_comparison *cmps, int n, pp_run_result *r)
{
    pp_comparison *all = realloc(cmps, (size_t)(n + p->n_cross > 0 ? n + p->n_cross : 1) * sizeof *all);
    if (!all) {
        pp_comparisons_free(cmps, n);
        return -1;
    }
    if (p->n_cross)
        memcpy(all + n, p->cross, (size_t)p->n_cross * sizeof *all);
    r->comparisons = all;
    r->n_comparisons = n + p->n_cross;
    p->n_cross = 0;  // moved (their axes are r's now)
    return 0;
}

// Each output some group computed: the first such group's method, the largest bound over them;
// ref_of[i] is the output of reference i (saved tensors follow the same order).
static int references(const pp_run_plan *plan, const pp_run_products *p, pp_run_result *r, int *ref_of)
{
    const pp_op *op = plan->c->op;
    r->references = calloc((size_t)op->n_outputs, sizeof *r->references);
    if (!r->references)
        return -1;
    for (int t = 0; t < op->n_outputs; t++) {
        int first = -1;
        for (int g = 0; g < plan->n_groups; g++) {
            if (!plan->group_want[g][t])
                continue;
            if (first < 0)
                r->references[r->n_references] = p->groups[first = g].info[t];
            else if (p->groups[g].info[t].error_bound > r->references[r->n_references].error_bound)
                r->references[r->n_references].error_bound = p->groups[g].info[t].error_bound;
        }
        if (first >= 0)
            ref_of[r->n_references++] = t;
    }
    return 0;
}

// Kept for report.h5: the first group's inputs, the reference of the first group that computed
// each output, every variant's outputs (all moved, not copied, each tagged with the format of its
// values); a variant's missing outputs stay zeroed (data NULL) and are not written.
static int save_tensors(const pp_run_plan *plan, pp_run_products *p, const int *ref_of, pp_run_result *r)
{
    const pp_case *c = plan->c;
    const pp_op *op = c->op;
    r->n_inputs = op->n_inputs;
    r->inputs = calloc((size_t)op->n_inputs, sizeof *r->inputs);
    r->input_names = calloc((size_t)op->n_inputs, sizeof *r->input_names);
    r->reference_outputs = calloc((size_t)(r->n_references ? r->n_references : 1), sizeof *r->reference_outputs);
    if (!r->inputs || !r->input_names || !r->reference_outputs)
        return -1;
    for (int i = 0; i < op->n_inputs; i++) {
        r->inputs[i] = p->groups[0].inputs[i];
        memset(&p->groups[0].inputs[i], 0, sizeof p->groups[0].inputs[i]);
        snprintf(r->input_names[i], PP_NAME_MAX, "%s", op->inputs[i]);
    }
    for (int i = 0; i < r->n_references; i++) {
        int t = ref_of[i], g = 0;
        while (!plan->group_want[g][t])
            g++;
        r->reference_outputs[i] = p->groups[g].refs[t];
        memset(&p->groups[g].refs[t], 0, sizeof p->groups[g].refs[t]);
    }
    for (int v = 0; v < c->n_variants; v++) {
        r->variants[v].outputs = calloc((size_t)op->n_outputs, sizeof(pp_tensor));
        if (!r->variants[v].outputs)
            return -1;
        for (int i = 0; i < r->n_references; i++) {
            pp_tensor *out = &p->variants[v].outs[ref_of[i]];
            r->variants[v].outputs[i] = *out;
            // tagged with the format its values are of (op.h saved_format: fp8 = te's scaled codes)
            if (out->data)
                r->variants[v].outputs[i].format = pp_op_saved_format(op, &c->params, &c->variants[v].knobs, ref_of[i]);
            memset(out, 0, sizeof *out);
        }
    }
    return 0;
}

int pp_run_assemble(const pp_run_plan *plan, const pp_run_opts *o, pp_run_products *p, pp_comparison *cmps, int n,
                    pp_run_result *r, pp_error *err)
{
    memset(r, 0, sizeof *r);
    int ref_of[PP_MAX_OP_TENSORS];
    if (comparisons(p, cmps, n, r) || metadata(plan, r) || variants(plan, p, r) || references(plan, p, r, ref_of) ||
        (o->save_tensors && save_tensors(plan, p, ref_of, r))) {
        pp_run_result_free(r);
        return pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    }
    return PP_OK;
}
