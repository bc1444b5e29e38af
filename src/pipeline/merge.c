// merge.c — partial results assembled into one run (merge.h).
#include "pipeline/merge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/build_info.h"
#include "core/textbuf.h"
#include "pipeline/assemble.h"
#include "pipeline/compare.h"
#include "pipeline/merge_same.h"
#include "pipeline/shard.h"

// The partials are one run's: one version (this binary's), one identity, one shard count.
static int check_same_run(const pp_partial *parts, const char *const *names, int n, pp_error *err)
{
    const pp_partial *a = &parts[0];
    for (int k = 0; k < n; k++) {
        const pp_partial *b = &parts[k];
        if (strcmp(b->version, PP_VERSION))
            return pp_fail(err, PP_ERR_INPUT,
                           "%s was written by precprobe %s, this is precprobe %s: rerun the shard with this "
                           "version (results of different versions are never merged)",
                           names[k], b->version, PP_VERSION);
        if (strcmp(b->identity, a->identity))
            return pp_fail(err, PP_ERR_INPUT,
                           "%s (case '%s', identity %.12s) and %s (case '%s', identity %.12s) are shards of "
                           "different runs: the case text or --reference/--orders/--cross-check differ",
                           names[0], a->r.case_name, a->identity, names[k], b->r.case_name, b->identity);
        if (b->n_shards != a->n_shards)
            return pp_fail(err, PP_ERR_INPUT, "%s is shard %d/%d, %s shard %d/%d: one run is cut one way", names[0],
                           a->shard, a->n_shards, names[k], b->shard, b->n_shards);
        if (b->n_tasks != a->n_tasks || strcmp(b->plan_signature, a->plan_signature))
            return pp_fail(err, PP_ERR_INPUT,
                           "%s and %s planned different tasks (%d and %d): shards on a GPU with --cross-check "
                           "and shards without one cannot be merged",
                           names[0], names[k], a->n_tasks, b->n_tasks);
    }
    return PP_OK;
}

// first[i - 1] = the index of shard i's partial; a shard given twice must say the same thing.
// Names every missing shard.
static int pick_shards(const pp_partial *parts, const char *const *names, int n, int *first, pp_error *err)
{
    int n_shards = parts[0].n_shards;
    for (int i = 0; i < n_shards; i++)
        first[i] = -1;
    for (int k = 0; k < n; k++) {
        int i = parts[k].shard - 1;
        if (first[i] < 0) {
            first[i] = k;
            continue;
        }
        char why[256];
        if (!pp_partial_same_results(&parts[first[i]], &parts[k], why, sizeof why))
            return pp_fail(err, PP_ERR_INPUT, "shard %d/%d is given twice with different results: %s and %s (%s)",
                           i + 1, n_shards, names[first[i]], names[k], why);
    }
    pp_textbuf b = {0};
    int missing = 0;
    for (int i = 0; i < n_shards; i++)
        if (first[i] < 0) {
            pp_tb_printf(&b, "%s%d/%d", missing ? ", " : "", i + 1, n_shards);
            missing++;
        }
    char *list = pp_tb_take(&b);
    if (!list)
        return pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    int rc = PP_OK;
    if (missing)
        rc = pp_fail(err, PP_ERR_INPUT, "%d of %d shards missing: %s (case '%s')", missing, n_shards, list,
                     parts[0].r.case_name);
    free(list);
    return rc;
}

// The devices the shards ran on: one, or each distinct one in shard order joined by " + ".
static void devices(const pp_partial *parts, const int *first, int n_shards, char *buf, size_t n)
{
    buf[0] = '\0';
    for (int i = 0; i < n_shards; i++) {
        const char *d = parts[first[i]].device;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = !strcmp(parts[first[j]].device, d);
        if (!seen) {
            size_t used = strlen(buf);
            snprintf(buf + used, n - used, "%s%s", used ? " + " : "", d);
        }
    }
}

// owner[t] = the partial that owns task t; each task owned by exactly one chosen shard.
static int owners(const pp_partial *parts, const int *first, int n_shards, int n_tasks, int *owner, pp_error *err)
{
    for (int t = 0; t < n_tasks; t++) {
        owner[t] = -1;
        for (int i = 0; i < n_shards; i++) {
            const pp_partial *p = &parts[first[i]];
            if (!p->owned[t])
                continue;
            if (owner[t] >= 0)
                return pp_fail(err, PP_ERR_INPUT, "task %d is owned by shards %d and %d", t, parts[owner[t]].shard,
                               p->shard);
            owner[t] = first[i];
        }
        if (owner[t] < 0)
            return pp_fail(err, PP_ERR_INPUT, "task %d is owned by no shard", t);
    }
    return PP_OK;
}

// The comparisons of task t, from its owner, appended (deep copies) to out[*n], which has room
// for cap. Returns 0, -1 out of memory, -2 when the partial holds more than the task can make.
static int take_comparisons(const pp_partial *p, int t, pp_comparison *out, int *n, int cap)
{
    for (int j = 0; j < p->r.n_comparisons; j++) {
        if (p->cmp_task[j] != t)
            continue;
        if (*n >= cap)
            return -2;
        pp_comparison *c = &out[(*n)++];
        *c = p->r.comparisons[j];
        if (pp_axis_stats_copy(&c->axes, &p->r.comparisons[j].axes)) {
            memset(&c->axes, 0, sizeof c->axes);
            return -1;
        }
    }
    return 0;
}

// Moves the kept tensors of one task (those with data) into the products' slots.
static void move_tensors(pp_tensor *to, pp_tensor *from)
{
    for (int k = 0; k < PP_MAX_OP_TENSORS; k++)
        if (from[k].data) {
            pp_tensor_free(&to[k]);
            to[k] = from[k];
            memset(&from[k], 0, sizeof from[k]);
        }
}

// The products the assemble stage reads, from the owners: references' methods and bounds, the
// variants' series, the cross-checks; and the compare stage's comparisons in task order.
static int gather(const pp_run_plan *plan, pp_partial *parts, const int *owner, pp_run_products *p,
                  pp_comparison **cmps, int *n_cmp, pp_error *err)
{
    const pp_case *c = plan->c;
    int max = 0;
    for (int t = 0; t < plan->n_tasks; t++)
        max += plan->tasks[t].kind == PP_TASK_COMPARE || plan->tasks[t].kind == PP_TASK_COMPARE_PAIR;
    *cmps = calloc((size_t)(max ? max : 1), sizeof **cmps);
    *n_cmp = 0;
    if (!*cmps)
        return pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    int cross_cap = 0;
    for (int t = 0; t < plan->n_tasks; t++)
        cross_cap += plan->tasks[t].kind == PP_TASK_CROSS_CHECK ? c->op->n_outputs : 0;
    for (int t = 0; t < plan->n_tasks; t++) {
        const pp_task *task = &plan->tasks[t];
        pp_partial *o = &parts[owner[t]];
        int bad = 0;
        switch (task->kind) {
        case PP_TASK_INPUTS:
            if (task->group == 0)  // kept tensors (--save-tensors), moved
                move_tensors(p->groups[0].inputs, o->inputs);
            break;
        case PP_TASK_REFERENCE:
            memcpy(p->groups[task->group].info, o->ref_info[task->group], sizeof p->groups[0].info);
            move_tensors(p->groups[task->group].refs, o->refs[task->group]);
            break;
        case PP_TASK_VARIANT: {
            if (task->variant >= o->r.n_variants || strcmp(o->r.variants[task->variant].name, c->variants[task->variant].name))
                return pp_fail(err, PP_ERR_INPUT, "shard %d/%d: its variants are not the case's", o->shard,
                               o->n_shards);
            pp_variant_result *vr = &o->r.variants[task->variant];
            if (task->variant < o->n_outs)
                move_tensors(p->variants[task->variant].outs, o->outs[task->variant]);
            p->variants[task->variant].series = vr->series;  // moved
            p->variants[task->variant].n_series = vr->n_series;
            vr->series = NULL;
            vr->n_series = 0;
            break;
        }
        case PP_TASK_REFERENCE_QUANTISED:
            break;  // read by its variant's second comparisons, which its owner ran
        case PP_TASK_CROSS_CHECK:
            bad = take_comparisons(o, t, p->cross, &p->n_cross, cross_cap);
            break;
        case PP_TASK_COMPARE:
        case PP_TASK_COMPARE_PAIR:
            bad = take_comparisons(o, t, *cmps, n_cmp, *n_cmp + 1);  // one comparison per task
            break;
        }
        if (bad == -2)
            return pp_fail(err, PP_ERR_INPUT, "shard %d/%d holds more comparisons for task %d than it makes",
                           o->shard, o->n_shards, t);
        if (bad)
            return pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    }
    return PP_OK;
}

static int assemble(pp_partial *parts, const int *first, int n_shards, pp_case *c, pp_run_result *r, pp_error *err)
{
    const pp_partial *a = &parts[first[0]];
    const char *text = a->r.case_text ? a->r.case_text : "";
    // parsed as at the path the shards named, so relative input files name the same files
    int rc = pp_case_parse(text, strlen(text), a->case_path, c, err);
    if (rc)
        return rc;
    pp_run_opts o = {0};
    o.reference_method = a->reference_method[0] ? a->reference_method : NULL;
    o.orders = a->orders;
    o.cross_check = a->cross_check;
    o.save_tensors = a->save_tensors;
    char device[64];
    devices(parts, first, n_shards, device, sizeof device);
    pp_run_plan plan;
    pp_run_products products;
    memset(&products, 0, sizeof products);
    pp_comparison *cmps = NULL;
    int n_cmp = 0, *owner = NULL;
    char *sig = NULL;
    rc = pp_run_plan_make_on(c, &o, device, &plan, err);
    if (!rc && (!(sig = pp_shard_plan_signature(&plan)) || !(owner = calloc((size_t)plan.n_tasks + 1, sizeof *owner))))
        rc = pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    if (!rc && strcmp(sig, a->plan_signature))
        rc = pp_fail(err, PP_ERR_INPUT, "%s: the case text the shards hold plans other tasks with this precprobe",
                     a->case_path);
    if (!rc)
        rc = owners(parts, first, n_shards, plan.n_tasks, owner, err);
    if (!rc)
        rc = pp_run_products_make(&plan, &products, err);
    if (!rc)
        rc = gather(&plan, parts, owner, &products, &cmps, &n_cmp, err);
    if (!rc) {
        rc = pp_run_assemble(&plan, &o, &products, cmps, n_cmp, r, err);  // takes cmps
        cmps = NULL;
    }
    if (!rc) {  // the run was planned when its first shard was
        for (int i = 0; i < n_shards; i++)
            if (strcmp(parts[first[i]].created_utc, r->created_utc) < 0)
                snprintf(r->created_utc, sizeof r->created_utc, "%s", parts[first[i]].created_utc);
    }
    pp_comparisons_free(cmps, n_cmp);
    if (plan.c)
        pp_run_products_free(&plan, &products);
    pp_run_plan_free(&plan);
    free(sig);
    free(owner);
    return rc;
}

int pp_merge_partials(pp_partial *parts, const char *const *names, int n, pp_case *c, pp_run_result *r,
                      pp_error *err)
{
    memset(r, 0, sizeof *r);
    memset(c, 0, sizeof *c);
    if (n < 1)
        return pp_fail(err, PP_ERR_INPUT, "no partial results to merge");
    int rc = check_same_run(parts, names, n, err);
    int *first = rc ? NULL : calloc((size_t)parts[0].n_shards, sizeof *first);
    if (!rc && !first)
        rc = pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    if (!rc)
        rc = pick_shards(parts, names, n, first, err);
    if (!rc)
        rc = assemble(parts, first, parts[0].n_shards, c, r, err);
    free(first);
    return rc;
}
