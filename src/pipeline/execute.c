// execute.c — the execute stage (execute.h): inputs, references, variants, cross-checks.
#include "pipeline/execute.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/progress.h"
#include "interrupt.h"
#include "io/tensor_io.h"
#include "pipeline/comparison.h"
#include "pipeline/file_tensor.h"
#include "pipeline/ref_cache.h"

void pp_run_group_free(const pp_op *op, pp_format_group *g)
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
static int run_cuda_traced(const pp_op *op, const pp_case *c, const pp_variant_spec *vs, pp_format_group *g,
                           pp_tensor *out, pp_variant_products *vp, pp_error *err)
{
    if (!op->traced || !op->traced->run_cuda)
        return op->run_cuda(&c->params, &vs->knobs, g->inputs, out, err);
    void *trace = NULL;
    int rc = op->traced->run_cuda(&c->params, &vs->knobs, g->inputs, out, &trace, err);
    if (!rc)
        rc = op->traced->series(&c->params, &vs->knobs, trace, g->trace, &vp->series, &vp->n_series, err);
    if (trace)
        op->traced->trace_free(trace);
    return rc;
}

// A variant on the CPU through the op's traced form: its series against the reference's trace
// are computed at once and its own trace freed, so memory stays one trajectory per variant.
static int run_cpu_traced(const pp_op *op, const pp_case *c, const pp_variant_spec *vs, pp_format_group *g,
                          pp_tensor *out, int threads, pp_variant_products *vp, pp_error *err)
{
    void *trace = NULL;
    int rc = op->traced->run_cpu(&c->params, &vs->knobs, g->inputs, out, threads, &trace, err);
    if (!rc)
        rc = op->traced->series(&c->params, &vs->knobs, trace, g->trace, &vp->series, &vp->n_series, err);
    if (trace)
        op->traced->trace_free(trace);
    return rc;
}

static void progress(const pp_run_opts *o, const char *fmt, const char *a, const char *b)
{
    if (o->progress != PP_PROGRESS_BAR)  // a stage name in place, on a terminal only
        return;
    fprintf(stderr, "\r\033[K");
    fprintf(stderr, fmt, a, b);
    fflush(stderr);
}

int pp_run_group_inputs(const pp_case *c, pp_format_group *g, pp_error *err)
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
            snprintf(what, sizeof what, "%s:%d: input '%s' (%s)", c->path, in->line, op->inputs[i], in->file);
            pp_file_tensor f = {in->file, in->has_format ? (int)in->format : -1,
                                op->input_layouts ? op->input_layouts[i] : NULL, in->layout, what};
            if ((rc = pp_file_tensor_load(&f, ndim, shape, t, err)) ||
                (rc = pp_file_tensor_to_format(t, g->format, in->round_nearest, what, err)))
                return rc;
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
        snprintf(what, sizeof what, "%s:%d: external variant '%s' output '%s' (%s)", c->path, v->external_lines[o],
                 v->name, op->outputs[o], v->external_files[o]);
        pp_file_tensor f = {v->external_files[o], v->external_has_format[o] ? (int)v->external_format[o] : -1,
                            op->output_layouts ? op->output_layouts[o] : NULL, v->external_layouts[o], what};
        int rc = pp_file_tensor_load(&f, ndim, shape, &out[o], err);
        if (rc)
            return rc;
    }
    return PP_OK;
}

// Group g's reference from the cache entry key: 1 on a hit (g->refs and g->info replaced), 0 on
// a miss (why, when given, says why an entry that exists was not used).
static int cache_hit(const pp_case *c, const pp_run_opts *o, pp_format_group *g, const char *key, char *why,
                     size_t why_n)
{
    const pp_op *op = c->op;
    pp_tensor hit[PP_MAX_OP_TENSORS];
    pp_reference_info hit_info[PP_MAX_OP_TENSORS];
    memset(hit, 0, sizeof hit);
    memset(hit_info, 0, sizeof hit_info);
    if (!pp_ref_cache_load(o->cache_dir, key, op, &c->params, g->want, hit, hit_info, why, why_n))
        return 0;
    for (int t = 0; t < op->n_outputs; t++)
        if (g->want[t]) {
            pp_tensor_free(&g->refs[t]);
            g->refs[t] = hit[t];
            g->info[t] = hit_info[t];
        }
    return 1;
}

// The reference of one format group, with a progress bar on stderr when asked for.
int pp_run_group_reference(const pp_case *c, const pp_run_opts *o, pp_format_group *g, int threads, pp_error *err)
{
    int rc = alloc_outputs(c->op, &c->params, NULL, PP_FMT_FP64, g->want, g->refs, err);
    if (rc)
        return rc;
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
    int cache = o->cache_dir && o->cache_dir[0] && !op->traced, lock = -1;
    char key[PP_REF_KEY_HEX], why[600] = "";
    if (cache) {
        pp_ref_cache_key(op, &c->params, g->format, method ? method : op->ref_methods[0], g->want, g->inputs, key);
        if (cache_hit(c, o, g, key, why, sizeof why))
            return PP_OK;
        // one computation for every process sharing the cache: another may be computing it now
        if (pp_ref_cache_lock(o->cache_dir, key, &lock, NULL))
            return pp_fail(err, PP_ERR_INTERRUPTED, "interrupted");
        if (cache_hit(c, o, g, key, NULL, 0)) {  // stored while this one waited or looked
            pp_ref_cache_unlock(lock);
            return PP_OK;
        }
        if (why[0])
            fprintf(stderr, "precprobe: reference cache entry ignored (%s); recomputing\n", why);
    }
    if (pp_interrupted()) {
        pp_ref_cache_unlock(lock);
        return pp_fail(err, PP_ERR_INTERRUPTED, "interrupted");
    }
    char label[PP_NAME_MAX + 64];
    snprintf(label, sizeof label, "%s: reference (%s)", c->name, pp_format_get(g->format).name);
    pp_progress bar;
    pp_progress_start(&bar, label, o->progress);
    pp_ref_ctx ctx = {method, threads, pp_progress_update, &bar};
    rc = op->traced ? op->traced->reference(&c->params, g->format, g->inputs, g->refs, g->info, &ctx, &g->trace,
                                            err)
                    : op->reference(&c->params, g->format, g->inputs, g->refs, g->info, &ctx, err);
    pp_progress_end(&bar);
    // a stop request cut the work short: the values are incomplete and must not be cached
    if (!rc && pp_interrupted())
        rc = pp_fail(err, PP_ERR_INTERRUPTED, "interrupted");
    if (!rc && cache) {
        pp_error store_err = {0};
        if (pp_ref_cache_store(o->cache_dir, key, op, g->want, g->refs, g->info, &store_err))
            fprintf(stderr, "precprobe: reference cache not written: %s\n", store_err.msg);
    }
    pp_ref_cache_unlock(lock);
    return rc;
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
    if (!pp_op_emulated(op, &vs->knobs))
        return PP_OK;  // a vendor engine has no emulation to cross-check against
    int rc = alloc_outputs(op, &c->params, &vs->knobs, -1, has, cpu, err);
    if (!rc)
        rc = op->run_cpu(&c->params, &vs->knobs, inputs, cpu, threads, err);
    for (int t = 0; !rc && t < op->n_outputs; t++)
            if (has[t])
                pp_compare_tensors(&cross[(*n_cross)++], c, vs->name, op->outputs[t], "cpu-emulation", &cuda_out[t],
                                   &cpu[t], 1);
    for (int t = 0; t < op->n_outputs; t++)
        pp_tensor_free(&cpu[t]);
    return rc;
}

int pp_run_products_make(const pp_run_plan *plan, pp_run_products *p, pp_error *err)
{
    const pp_case *c = plan->c;
    memset(p, 0, sizeof *p);
    for (int g = 0; g < plan->n_groups; g++) {
        p->groups[g].format = plan->group_format[g];
        memcpy(p->groups[g].want, plan->group_want[g], sizeof p->groups[g].want);
    }
    int n_cross = 0;
    for (int i = 0; i < plan->n_tasks; i++)
        n_cross += plan->tasks[i].kind == PP_TASK_CROSS_CHECK;
    p->variants = calloc((size_t)c->n_variants, sizeof *p->variants);
    p->qrefs = calloc((size_t)c->n_variants, sizeof *p->qrefs);
    p->qinfo = calloc((size_t)c->n_variants, sizeof *p->qinfo);
    p->cross = n_cross ? calloc((size_t)n_cross * (size_t)c->op->n_outputs, sizeof *p->cross) : NULL;
    if (!p->variants || !p->qrefs || !p->qinfo || (n_cross && !p->cross))
        return pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    return PP_OK;
}

void pp_run_products_free(const pp_run_plan *plan, pp_run_products *p)
{
    const pp_op *op = plan->c->op;
    for (int g = 0; g < PP_FMT_COUNT; g++)
        pp_run_group_free(op, &p->groups[g]);
    for (int v = 0; p->variants && v < plan->c->n_variants; v++) {
        pp_variant_products *vp = &p->variants[v];
        for (int t = 0; t < op->n_outputs; t++)
            pp_tensor_free(&vp->outs[t]);
        for (int i = 0; i < vp->n_series; i++)
            free(vp->series[i].step), free(vp->series[i].value);
        free(vp->series);
        pp_variant_ranges_free(&vp->ranges);
    }
    free(p->variants);
    for (int v = 0; p->qrefs && v < plan->c->n_variants; v++)
        for (int t = 0; t < op->n_outputs; t++)
            pp_tensor_free(&p->qrefs[v][t]);
    free(p->qrefs);
    free(p->qinfo);
    for (int i = 0; i < p->n_cross; i++)
        pp_axis_stats_free(&p->cross[i].axes);
    free(p->cross);
    memset(p, 0, sizeof *p);
}

static int run_variant(const pp_run_plan *plan, int v, pp_run_products *p, pp_error *err);

// A variant run with range diagnostics (run --ranges): on the CPU emulation through the op row's
// run_cpu with pp_op_params.ranges set (the same outputs), its sites into the variant's table;
// elsewhere (external files, the GPU, a vendor path) a note that says why there are none.
static int run_variant_ranges(const pp_run_plan *plan, int v, pp_run_products *p, pp_error *err)
{
    const pp_case *c = plan->c;
    const pp_op *op = c->op;
    const pp_variant_spec *vs = &c->variants[v];
    pp_variant_ranges *vr = &p->variants[v].ranges;
    const char *why = !op->range_heads ? "this operation records no range diagnostics"
                    : vs->external ? "external variant: its outputs were read from files, not emulated"
                    : plan->on_cuda ? "not recorded on --device cuda: the GPU kernels do not record range "
                                      "diagnostics yet (run with --device cpu)"
                    : !pp_op_emulated(op, &vs->knobs) ? "a vendor path the CPU does not emulate" : NULL;
    if (why) {
        snprintf(vr->note, sizeof vr->note, "%s", why);
        return run_variant(plan, v, p, err);
    }
    int64_t heads = op->range_heads(&c->params);
    pp_range_cell *cells = malloc((size_t)(PP_SITE_COUNT * (heads > 0 ? heads : 1)) * sizeof *cells);
    if (!cells)
        return pp_fail(err, PP_ERR_RUNTIME, "%s: out of memory for the range diagnostics", vs->name);
    pp_ranges R;
    pp_ranges_init(&R, cells, heads > 0 ? heads : 1);
    pp_case cr = *c;  // the case with its parameters pointing at R, for this run only
    cr.params.ranges = &R;
    pp_run_plan pr = *plan;
    pr.c = &cr;
    int rc = run_variant(&pr, v, p, err);
    if (!rc && pp_range_table_from(op->name, &R, vr))
        rc = pp_fail(err, PP_ERR_RUNTIME, "%s: out of memory for the range diagnostics", vs->name);
    free(cells);
    return rc;
}

// A variant: its external files read, or its run on the plan's backend (traced for series).
static int run_variant(const pp_run_plan *plan, int v, pp_run_products *p, pp_error *err)
{
    const pp_case *c = plan->c;
    const pp_op *op = c->op;
    const pp_variant_spec *vs = &c->variants[v];
    pp_variant_products *vp = &p->variants[v];
    pp_format_group *g = &p->groups[plan->group_of[v]];
    if (vs->external)
        return load_external(c, vs, vp->outs, err);
    int rc = alloc_outputs(op, &c->params, &vs->knobs, -1, plan->has[v], vp->outs, err);
    if (rc)
        return rc;
    return plan->on_cuda  ? run_cuda_traced(op, c, vs, g, vp->outs, vp, err)
         : op->traced     ? run_cpu_traced(op, c, vs, g, vp->outs, plan->threads, vp, err)
                          : op->run_cpu(&c->params, &vs->knobs, g->inputs, vp->outs, plan->threads, err);
}

// Variant v's exact result on the values it quantises its group's inputs to (op row's
// reference_quantised, the case's reference method): the outputs it has. Not cached: it is
// computed from the quantised values, which only the variant's knobs name.
static int quantised_reference(const pp_run_plan *plan, const pp_run_opts *o, int v, pp_run_products *p,
                               pp_error *err)
{
    const pp_case *c = plan->c;
    const pp_variant_spec *vs = &c->variants[v];
    int rc = alloc_outputs(c->op, &c->params, NULL, PP_FMT_FP64, plan->has[v], p->qrefs[v], err);
    if (rc)
        return rc;
    // --reference names one of the op's methods (checked by the group's reference, which ran first)
    pp_ref_ctx ctx = {o->reference_method ? o->reference_method : c->reference_method, plan->threads, NULL, NULL};
    return c->op->reference_quantised(&c->params, &vs->knobs, p->groups[plan->group_of[v]].inputs, p->qrefs[v],
                                      p->qinfo[v], &ctx, err);
}

// The one line a stop request ends the run with: which task it cut short, and what is kept —
// every reference finished before it is in the cache, so a rerun computes only the rest.
static int interrupted(const pp_run_plan *plan, const pp_run_opts *o, const pp_task *t, int refs_done,
                       pp_error *err)
{
    const pp_case *c = plan->c;
    char what[PP_NAME_MAX + 64];
    const char *fmt = t && t->group >= 0 ? pp_format_get(plan->group_format[t->group]).name : "";
    if (!t)
        snprintf(what, sizeof what, "after the last task");
    else if (t->kind == PP_TASK_INPUTS || t->kind == PP_TASK_REFERENCE)
        snprintf(what, sizeof what, "during the %s (%s)", pp_task_kind_name(t->kind), fmt);
    else
        snprintf(what, sizeof what, "during the %s of variant %s", pp_task_kind_name(t->kind),
                 c->variants[t->variant].name);
    const char *not_kept = !o->cache_dir || !o->cache_dir[0] ? "not kept (no reference cache for this run)"
                         : c->op->traced ? "not kept (this operation's references are not cached)"
                                         : NULL;
    char kept[128];
    if (!refs_done)
        snprintf(kept, sizeof kept, "no reference had finished");
    else
        snprintf(kept, sizeof kept, "%d finished reference%s %s", refs_done, refs_done == 1 ? "" : "s",
                 not_kept ? not_kept : "kept in the reference cache: a rerun resumes from there");
    return pp_fail(err, PP_ERR_INTERRUPTED, "%s: interrupted (%s) %s; %s", c->name,
                   pp_interrupted() == SIGINT ? "SIGINT" : "SIGTERM", what, kept);
}

int pp_run_execute_task(const pp_run_plan *plan, const pp_run_opts *o, const pp_task *t, pp_run_products *p,
                        int *refs_done, pp_error *err)
{
    const pp_case *c = plan->c;
    if (pp_interrupted())
        return interrupted(plan, o, t, *refs_done, err);
    pp_format_group *g = t->group >= 0 ? &p->groups[t->group] : NULL;
    int rc = PP_OK;
    switch (t->kind) {
    case PP_TASK_INPUTS:
        progress(o, "precprobe: %s: inputs and reference (%s)", c->name, pp_format_get(g->format).name);
        rc = pp_run_group_inputs(c, g, err);
        break;
    case PP_TASK_REFERENCE:
        rc = pp_run_group_reference(c, o, g, plan->threads, err);
        *refs_done += !rc;
        break;
    case PP_TASK_VARIANT:
        progress(o, "precprobe: %s: variant %s", c->name, c->variants[t->variant].name);
        rc = o->ranges ? run_variant_ranges(plan, t->variant, p, err) : run_variant(plan, t->variant, p, err);
        break;
    case PP_TASK_REFERENCE_QUANTISED:
        progress(o, "precprobe: %s: quantised reference of %s", c->name, c->variants[t->variant].name);
        rc = quantised_reference(plan, o, t->variant, p, err);
        *refs_done += !rc;
        break;
    case PP_TASK_CROSS_CHECK:
        rc = cross_check(c, t->variant, plan->has[t->variant], g->inputs, p->variants[t->variant].outs,
                         plan->threads, p->cross, &p->n_cross, err);
        break;
    case PP_TASK_COMPARE:
    case PP_TASK_COMPARE_PAIR:
        break;  // the compare stage's
    }
    if (rc == PP_ERR_INTERRUPTED || (!rc && pp_interrupted()))
        return interrupted(plan, o, t, *refs_done, err);  // the task's results are incomplete
    return rc;
}

void pp_run_execute_done(const pp_run_opts *o)
{
    progress(o, "%s%s", "", "");
}

int pp_run_execute(const pp_run_plan *plan, const pp_run_opts *o, const unsigned char *selected,
                   pp_run_products *p, pp_error *err)
{
    int rc = PP_OK, refs_done = 0;
    for (int i = 0; i < plan->n_tasks && !rc; i++)
        if (!selected || selected[i])
            rc = pp_run_execute_task(plan, o, &plan->tasks[i], p, &refs_done, err);
    if (rc == PP_ERR_INTERRUPTED)
        return rc;
    pp_run_execute_done(o);
    return rc;
}

void pp_run_products_release(const pp_run_plan *plan, pp_run_products *p, const pp_task *t)
{
    const pp_op *op = plan->c->op;
    if (t->kind == PP_TASK_INPUTS) {
        for (int i = 0; i < op->n_inputs; i++)
            pp_tensor_free(&p->groups[t->group].inputs[i]);
    } else if (t->kind == PP_TASK_REFERENCE) {
        // the tensors and trace only: info (method, bound) is what assemble reports
        pp_format_group *g = &p->groups[t->group];
        for (int i = 0; i < op->n_outputs; i++)
            pp_tensor_free(&g->refs[i]);
        if (g->trace && op->traced)
            op->traced->trace_free(g->trace);
        g->trace = NULL;
    } else if (t->kind == PP_TASK_REFERENCE_QUANTISED) {
        for (int i = 0; i < op->n_outputs; i++)
            pp_tensor_free(&p->qrefs[t->variant][i]);
    } else if (t->kind == PP_TASK_VARIANT) {
        // the outputs only: the series are assemble's
        for (int i = 0; i < op->n_outputs; i++)
            pp_tensor_free(&p->variants[t->variant].outs[i]);
    }
}
