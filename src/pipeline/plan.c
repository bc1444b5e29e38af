// plan.c — a run's plan: the backend, the format groups, the tasks and their dependencies.
#include "pipeline/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/build_info.h"

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

// Appends a task; the caller sized plan->tasks for every task the case can have.
static int add2(pp_run_plan *plan, pp_task_kind kind, int group, int variant, int pair, int slot, int second, int dep0,
                int dep1, int dep2)
{
    pp_task *t = &plan->tasks[plan->n_tasks];
    memset(t, 0, sizeof *t);
    t->id = plan->n_tasks++;
    t->kind = kind;
    t->group = group;
    t->variant = variant;
    t->pair = pair;
    t->slot = slot;
    t->second = second;
    const int deps[] = {dep0, dep1, dep2};
    for (int i = 0; i < PP_TASK_MAX_DEPS; i++)
        if (deps[i] >= 0)
            t->deps[t->n_deps++] = deps[i];
    return t->id;
}

static int add(pp_run_plan *plan, pp_task_kind kind, int group, int variant, int pair, int slot, int dep0, int dep1,
               int dep2)
{
    return add2(plan, kind, group, variant, pair, slot, 0, dep0, dep1, dep2);
}

// The tasks: per group its inputs then its reference; per variant its run (and cross-check);
// per variant and output its comparison with the reference; per pair its outputs or groups.
static void list_tasks(pp_run_plan *plan, int cross_check)
{
    const pp_case *c = plan->c;
    const pp_op *op = c->op;
    int inputs_of[PP_FMT_COUNT], reference_of[PP_FMT_COUNT], variant_task[PP_MAX_VARIANTS], quantised_of[PP_MAX_VARIANTS];
    for (int g = 0; g < plan->n_groups; g++) {
        inputs_of[g] = add(plan, PP_TASK_INPUTS, g, -1, -1, -1, -1, -1, -1);
        reference_of[g] = add(plan, PP_TASK_REFERENCE, g, -1, -1, -1, inputs_of[g], -1, -1);
    }
    for (int v = 0; v < c->n_variants; v++) {
        int g = plan->group_of[v], ext = c->variants[v].external;
        // a traced op's variant reads its reference's trace for its series
        variant_task[v] = add(plan, PP_TASK_VARIANT, g, v, -1, -1, ext ? -1 : inputs_of[g],
                              !ext && op->traced ? reference_of[g] : -1, -1);
        if (cross_check && plan->on_cuda && !ext)
            add(plan, PP_TASK_CROSS_CHECK, g, v, -1, -1, variant_task[v], inputs_of[g], -1);
        quantised_of[v] = plan->ref2[v] == PP_REF2_QUANTISED
                        ? add(plan, PP_TASK_REFERENCE_QUANTISED, g, v, -1, -1, inputs_of[g], -1, -1) : -1;
    }
    // per variant and output: against the group's reference, then against its second reference
    for (int v = 0; v < c->n_variants; v++)
        for (int t = 0; t < op->n_outputs; t++) {
            int g = plan->group_of[v];
            if (!plan->has[v][t])
                continue;
            add(plan, PP_TASK_COMPARE, g, v, -1, t, variant_task[v], reference_of[g], -1);
            int second = plan->ref2[v] == PP_REF2_QUANTISED ? quantised_of[v]
                       : plan->ref2[v] == PP_REF2_ORIGINAL ? reference_of[plan->group_original[g]] : -1;
            if (second >= 0)
                add2(plan, PP_TASK_COMPARE, g, v, -1, t, 1, variant_task[v], second, -1);
        }
    for (int p = 0; p < c->n_pairs; p++) {
        const pp_pair_spec *ps = &c->pairs[p];
        int a = ps->actual, e = ps->expected;
        if (ps->n_groups) {  // every group; one missing a tensor is an error when compared
            for (int g = 0; g < ps->n_groups; g++)
                add(plan, PP_TASK_COMPARE_PAIR, -1, -1, p, g, variant_task[a], variant_task[e], -1);
            continue;
        }
        for (int t = 0; t < op->n_outputs; t++)  // every output both variants have
            if (plan->has[a][t] && plan->has[e][t])
                add(plan, PP_TASK_COMPARE_PAIR, -1, -1, p, t, variant_task[a], variant_task[e], -1);
    }
}

// The binary32 group that holds the inputs of each group whose variants want an original
// reference (PP_REF2_ORIGINAL), added last — after every variant's group, so the groups the
// variants made keep their indices — when no variant stores binary32; it wants every output its
// referring variants have. A variant of the binary32 group itself has no second reference.
static void original_groups(pp_run_plan *plan)
{
    const pp_case *c = plan->c;
    for (int g = 0; g < PP_FMT_COUNT; g++)
        plan->group_original[g] = -1;
    // An input read from a file without round = "nearest" holds values of every group's format
    // already (file_tensor.c refuses any other), so it is the same in the binary32 group: when
    // every input is such a file, nothing was rounded and the original reference is the group's.
    int rounded = 0;
    for (int i = 0; i < c->op->n_inputs; i++)
        rounded |= !c->inputs[i].file[0] || c->inputs[i].round_nearest;
    for (int v = 0; v < c->n_variants; v++) {
        int g = plan->group_of[v];
        if (plan->ref2[v] != PP_REF2_ORIGINAL)
            continue;
        if (plan->group_format[g] == PP_FMT_FP32 || !rounded) {
            plan->ref2[v] = PP_REF2_NONE;
            continue;
        }
        int o = 0;
        while (o < plan->n_groups && plan->group_format[o] != PP_FMT_FP32)
            o++;
        if (o == plan->n_groups)
            plan->group_format[plan->n_groups++] = PP_FMT_FP32;
        plan->group_original[g] = o;
        for (int t = 0; t < c->op->n_outputs; t++)
            plan->group_want[o][t] |= plan->has[v][t];
    }
}

int pp_run_plan_make(const pp_case *c, const pp_run_opts *o, pp_run_plan *plan, pp_error *err)
{
    char device[64];
    memset(plan, 0, sizeof *plan);
    int rc = choose_device(o, c->op, device, sizeof device, err);
    return rc ? rc : pp_run_plan_make_on(c, o, device, plan, err);
}

int pp_run_plan_make_on(const pp_case *c, const pp_run_opts *o, const char *device, pp_run_plan *plan,
                        pp_error *err)
{
    const pp_op *op = c->op;
    memset(plan, 0, sizeof *plan);
    plan->c = c;
    plan->threads = o->threads > 0 ? o->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (plan->threads < 1)
        plan->threads = 1;
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(plan->created_utc, sizeof plan->created_utc, "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(plan->device, sizeof plan->device, "%s", device);
    plan->on_cuda = !strncmp(plan->device, "cuda", 4);
    int n_outputs = op->n_outputs, n_pair_tasks = 0;
    for (int p = 0; p < c->n_pairs; p++)
        n_pair_tasks += c->pairs[p].n_groups ? c->pairs[p].n_groups : n_outputs;
    int max_tasks = 2 * PP_FMT_COUNT + c->n_variants * (3 + 2 * n_outputs) + n_pair_tasks;
    plan->group_of = calloc((size_t)c->n_variants, sizeof *plan->group_of);
    plan->has = calloc((size_t)c->n_variants, sizeof *plan->has);
    plan->ref2 = calloc((size_t)c->n_variants, sizeof *plan->ref2);
    plan->tasks = calloc((size_t)max_tasks, sizeof *plan->tasks);
    if (!plan->group_of || !plan->has || !plan->ref2 || !plan->tasks)
        return pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    for (int v = 0; v < c->n_variants; v++) {
        const pp_variant_spec *vs = &c->variants[v];
        for (int t = 0; t < n_outputs; t++)
            plan->has[v][t] = pp_op_output_active(op, &c->params, &vs->knobs, t) &&
                              (!vs->external || vs->external_files[t][0]);
        pp_format_id f = op->format(&vs->knobs);
        int g = 0;
        while (g < plan->n_groups && plan->group_format[g] != f)
            g++;
        if (g == plan->n_groups)
            plan->group_format[plan->n_groups++] = f;
        plan->group_of[v] = g;
        for (int t = 0; t < n_outputs; t++)
            plan->group_want[g][t] |= plan->has[v][t];
        plan->ref2[v] = op->second_reference ? op->second_reference(&c->params, &vs->knobs) : PP_REF2_NONE;
        if (plan->ref2[v] == PP_REF2_QUANTISED && !op->reference_quantised)
            plan->ref2[v] = PP_REF2_NONE;
    }
    original_groups(plan);
    list_tasks(plan, o->cross_check);
    return PP_OK;
}

void pp_run_plan_free(pp_run_plan *plan)
{
    free(plan->group_of);
    free(plan->has);
    free(plan->ref2);
    free(plan->tasks);
    memset(plan, 0, sizeof *plan);
}

void pp_run_plan_close(const pp_run_plan *plan, unsigned char *selected)
{
    // dependencies have lower ids: one pass from the last task down reaches them all
    for (int i = plan->n_tasks - 1; i >= 0; i--)
        if (selected[i])
            for (int d = 0; d < plan->tasks[i].n_deps; d++)
                selected[plan->tasks[i].deps[d]] = 1;
}

const char *pp_task_kind_name(pp_task_kind kind)
{
    static const char *const names[] = {
        [PP_TASK_INPUTS] = "inputs",   [PP_TASK_REFERENCE] = "reference", [PP_TASK_VARIANT] = "variant",
        [PP_TASK_CROSS_CHECK] = "cross-check", [PP_TASK_COMPARE] = "compare", [PP_TASK_COMPARE_PAIR] = "compare-pair",
        [PP_TASK_REFERENCE_QUANTISED] = "quantised reference",
    };
    return (unsigned)kind < sizeof names / sizeof names[0] ? names[kind] : "?";
}
