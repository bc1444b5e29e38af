// shard_run.c — one shard of a run (shard_run.h): plan → the slice's execute → compare →
// order band → assemble, then the manifest and which task made each comparison.
#include "pipeline/shard_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/build_info.h"
#include "pipeline/assemble.h"
#include "pipeline/compare.h"
#include "pipeline/order_band.h"
#include "pipeline/shard.h"

// The comparisons a CROSS_CHECK task makes: one per output the variant has, none for a variant
// the emulation cannot run (execute.c's cross_check).
static int cross_check_count(const pp_run_plan *plan, const pp_task *t)
{
    const pp_case *c = plan->c;
    if (!pp_op_emulated(c->op, &c->variants[t->variant].knobs))
        return 0;
    int k = 0;
    for (int s = 0; s < c->op->n_outputs; s++)
        k += plan->has[t->variant][s] != 0;
    return k;
}

// cmp_task: the task of each comparison, in the order assemble lists them (the compare stage's
// in task order, then the cross-checks' in task order). Returns 0, or -1 when the count differs
// from what the stages produced (a bug, reported rather than mislabelled).
static int label_comparisons(const pp_run_plan *plan, const unsigned char *owned, int n_cmp, int *cmp_task)
{
    int k = 0;
    for (int i = 0; i < plan->n_tasks; i++) {
        pp_task_kind kind = plan->tasks[i].kind;
        if (owned[i] && (kind == PP_TASK_COMPARE || kind == PP_TASK_COMPARE_PAIR)) {
            if (k >= n_cmp)
                return -1;
            cmp_task[k++] = i;
        }
    }
    for (int i = 0; i < plan->n_tasks; i++)
        if (owned[i] && plan->tasks[i].kind == PP_TASK_CROSS_CHECK)
            for (int m = cross_check_count(plan, &plan->tasks[i]); m > 0; m--) {
                if (k >= n_cmp)
                    return -1;
                cmp_task[k++] = i;
            }
    return k == n_cmp ? 0 : -1;
}

// With --save-tensors: the tensors of the owned INPUTS (group 0's: the ones reports keep),
// REFERENCE and VARIANT tasks, moved from the products into the partial.
static int keep_tensors(const pp_run_plan *plan, pp_run_products *p, pp_partial *out)
{
    const pp_case *c = plan->c;
    out->outs = calloc((size_t)c->n_variants, sizeof *out->outs);
    if (!out->outs)
        return -1;
    out->n_outs = c->n_variants;
    for (int i = 0; i < plan->n_tasks; i++) {
        const pp_task *t = &plan->tasks[i];
        if (!out->owned[i])
            continue;
        pp_tensor *from = t->kind == PP_TASK_INPUTS && t->group == 0 ? p->groups[0].inputs
                        : t->kind == PP_TASK_REFERENCE                ? p->groups[t->group].refs
                        : t->kind == PP_TASK_VARIANT                  ? p->variants[t->variant].outs
                                                                      : NULL;
        pp_tensor *to = t->kind == PP_TASK_INPUTS ? out->inputs
                      : t->kind == PP_TASK_REFERENCE ? out->refs[t->group]
                                                     : t->kind == PP_TASK_VARIANT ? out->outs[t->variant] : NULL;
        for (int k = 0; from && k < PP_MAX_OP_TENSORS; k++) {
            to[k] = from[k];
            if (t->kind == PP_TASK_VARIANT && to[k].data && k < c->op->n_outputs)  // as assemble.c tags them
                to[k].format = pp_op_saved_format(c->op, &c->params, &c->variants[t->variant].knobs, k);
            memset(&from[k], 0, sizeof from[k]);
        }
    }
    return 0;
}

static int manifest(const pp_run_plan *plan, const pp_run_opts *o, int i, int n, pp_partial *out)
{
    const pp_case *c = plan->c;
    snprintf(out->version, sizeof out->version, "%s", PP_VERSION);
    pp_partial_identity(c, o, out->identity);
    out->shard = i;
    out->n_shards = n;
    snprintf(out->case_path, sizeof out->case_path, "%s", c->path);
    snprintf(out->device, sizeof out->device, "%s", plan->device);
    snprintf(out->created_utc, sizeof out->created_utc, "%s", plan->created_utc);
    snprintf(out->reference_method, sizeof out->reference_method, "%s", o->reference_method ? o->reference_method : "");
    out->orders = o->orders > 0 ? o->orders : 0;
    out->save_tensors = o->save_tensors != 0;
    out->cross_check = o->cross_check != 0;
    out->n_tasks = plan->n_tasks;
    out->n_groups = plan->n_groups;
    out->plan_signature = pp_shard_plan_signature(plan);
    return out->plan_signature ? 0 : -1;
}

int pp_run_shard(const pp_case *c, const pp_run_opts *o, int i, int n, pp_partial *out, pp_error *err)
{
    return pp_run_shard_of(c, o, i, n, NULL, out, err);
}

int pp_run_shard_of(const pp_case *c, const pp_run_opts *o, int i, int n, const int *owner, pp_partial *out,
                    pp_error *err)
{
    memset(out, 0, sizeof *out);
    pp_run_opts opts = *o;
    opts.save_tensors = 0;  // the assemble below keeps no tensors: keep_tensors takes the owned ones
    pp_run_plan plan;
    pp_run_products products;
    memset(&products, 0, sizeof products);
    pp_comparison *cmps = NULL;
    unsigned char *selected = NULL;
    int n_cmp = 0;
    int rc = pp_run_plan_make(c, &opts, &plan, err);
    if (!rc) {
        out->owned = calloc((size_t)(plan.n_tasks ? plan.n_tasks : 1), 1);
        selected = calloc((size_t)(plan.n_tasks ? plan.n_tasks : 1), 1);
        long w = !out->owned || !selected ? -1
               : owner                    ? pp_shard_select_of(&plan, owner, i, out->owned, selected)
                                          : pp_shard_select(&plan, i, n, out->owned, selected);
        if (w < 0 || manifest(&plan, o, i, n, out))
            rc = pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    }
    if (!rc)
        rc = pp_run_products_make(&plan, &products, err);
    if (!rc)
        rc = pp_run_execute(&plan, &opts, selected, &products, err);
    if (!rc)
        rc = pp_run_compare(&plan, &products, selected, &cmps, &n_cmp, err);
    if (!rc && (rc = pp_run_order_bands(&plan, opts.orders, &products, selected, cmps, n_cmp, err))) {
        pp_comparisons_free(cmps, n_cmp);
        cmps = NULL;
    }
    for (int t = 0; !rc && t < plan.n_tasks; t++)  // the references this shard owns
        if (out->owned[t] && plan.tasks[t].kind == PP_TASK_REFERENCE)
            memcpy(out->ref_info[plan.tasks[t].group], products.groups[plan.tasks[t].group].info,
                   sizeof out->ref_info[0]);
    if (!rc && o->save_tensors && keep_tensors(&plan, &products, out)) {
        pp_comparisons_free(cmps, n_cmp);
        rc = pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    }
    if (!rc)
        rc = pp_run_assemble(&plan, &opts, &products, cmps, n_cmp, &out->r, err);  // takes cmps
    if (!rc) {
        // the merge rebuilds the references from every shard's ref_info, as assemble does
        free(out->r.references);
        out->r.references = NULL;
        out->r.n_references = 0;
        out->cmp_task = calloc((size_t)(out->r.n_comparisons ? out->r.n_comparisons : 1), sizeof *out->cmp_task);
        if (!out->cmp_task)
            rc = pp_fail(err, PP_ERR_RUNTIME, "out of memory");
        else if (label_comparisons(&plan, out->owned, out->r.n_comparisons, out->cmp_task))
            rc = pp_fail(err, PP_ERR_RUNTIME, "shard %d/%d: %d comparisons do not match the plan's tasks", i, n,
                         out->r.n_comparisons);
    }
    if (plan.c)
        pp_run_products_free(&plan, &products);
    pp_run_plan_free(&plan);
    free(selected);
    return rc;
}
