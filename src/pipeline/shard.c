// shard.c — the shard rule (shard.h).
#include "pipeline/shard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/textbuf.h"

static int parse_count(const char *s, size_t len, long *v)
{
    if (len == 0 || len > 6)
        return -1;
    long x = 0;
    for (size_t k = 0; k < len; k++) {
        if (s[k] < '0' || s[k] > '9')
            return -1;
        x = 10 * x + (s[k] - '0');
    }
    *v = x;
    return 0;
}

int pp_shard_parse(const char *s, int *i, int *n, char *why, size_t why_n)
{
    const char *slash = s ? strchr(s, '/') : NULL;
    long a, b;
    if (!slash || parse_count(s, (size_t)(slash - s), &a) || parse_count(slash + 1, strlen(slash + 1), &b)) {
        snprintf(why, why_n, "'%s' is not I/N (shard I of N, e.g. 2/4)", s ? s : "");
        return -1;
    }
    if (b < 1 || b > PP_SHARD_MAX || a < 1 || a > b) {
        snprintf(why, why_n, "'%s': need 1 <= I <= N <= %d", s, PP_SHARD_MAX);
        return -1;
    }
    *i = (int)a;
    *n = (int)b;
    return 0;
}

int pp_shard_task_weight(const pp_task *t)
{
    switch (t->kind) {
    case PP_TASK_REFERENCE:
    case PP_TASK_REFERENCE_QUANTISED:
        return 8;  // exact or MPFR arithmetic: several times a variant's emulation
    case PP_TASK_VARIANT:
    case PP_TASK_CROSS_CHECK:
        return 2;
    case PP_TASK_INPUTS:
    case PP_TASK_COMPARE:
    case PP_TASK_COMPARE_PAIR:
        return 1;
    }
    return 1;
}

// unit_of[t]: the variant whose unit task t belongs to (rule 1 of shard.h).
static void units(const pp_run_plan *plan, int *unit_of)
{
    const pp_case *c = plan->c;
    int first_of_group[PP_FMT_COUNT];
    for (int g = 0; g < PP_FMT_COUNT; g++)
        first_of_group[g] = -1;
    for (int v = 0; v < c->n_variants; v++)
        if (first_of_group[plan->group_of[v]] < 0)
            first_of_group[plan->group_of[v]] = v;
    for (int i = 0; i < plan->n_tasks; i++) {
        const pp_task *t = &plan->tasks[i];
        switch (t->kind) {
        case PP_TASK_INPUTS:
        case PP_TASK_REFERENCE:
            unit_of[i] = first_of_group[t->group] >= 0 ? first_of_group[t->group] : 0;
            break;
        case PP_TASK_COMPARE_PAIR:
            unit_of[i] = c->pairs[t->pair].actual;
            break;
        default:
            unit_of[i] = t->variant;
            break;
        }
    }
}

// A size proxy of one plan's work, from shapes alone: (elements of every input and output) ×
// (the largest extent of any of their dimensions). It grows as the work of the shipped ops does
// (a GEMM's batch·m·n·k, attention's b·h·s²·d: the longest axis is the one reduced over), so the
// points of a sweep over s weigh what they cost, not the same; within one plan every task shares
// it. AdamW's steps are not in its shapes: its points weigh alike.
static double plan_size(const pp_run_plan *plan)
{
    const pp_case *c = plan->c;
    const pp_op *op = c->op;
    double elements = 0, longest = 1;
    for (int io = 0; io < 2; io++)
        for (int i = 0; i < (io ? op->n_outputs : op->n_inputs); i++) {
            int ndim = 0;
            int64_t shape[PP_MAX_DIMS];
            op->shape(&c->params, io, i, &ndim, shape);
            double numel = 1;
            for (int d = 0; d < ndim; d++) {
                numel *= (double)shape[d];
                longest = (double)shape[d] > longest ? (double)shape[d] : longest;
            }
            elements += numel;
        }
    return elements * longest > 1 ? elements * longest : 1;
}

// The unit weights of one plan, each task's weight times scale: weight[v] for each variant's
// unit; returns the plan's total.
static long unit_weights(const pp_run_plan *plan, const int *unit_of, long scale, long *weight)
{
    long total = 0;
    for (int i = 0; i < plan->n_tasks; i++) {
        weight[unit_of[i]] += pp_shard_task_weight(&plan->tasks[i]) * scale;
        total += pp_shard_task_weight(&plan->tasks[i]) * scale;
    }
    return total;
}

// Each plan's scale: its size over the smallest plan's, as an integer from 1 to 2^20 (rounded
// down, so every machine computes the same table from the same plans: a quotient of two exact
// integer-valued doubles below 2^53, then a floor).
static void plan_scales(const pp_run_plan *const *plans, int n_plans, long *scale)
{
    double smallest = 0;
    for (int k = 0; k < n_plans; k++) {
        double z = plan_size(plans[k]);
        smallest = k == 0 || z < smallest ? z : smallest;
    }
    for (int k = 0; k < n_plans; k++) {
        double r = plan_size(plans[k]) / smallest;
        scale[k] = r >= (double)(1L << 20) ? 1L << 20 : (long)r < 1 ? 1 : (long)r;
    }
}

int pp_shard_owners_multi(const pp_run_plan *const *plans, int n_plans, int n, int *const *owner)
{
    int **unit_of = calloc((size_t)(n_plans ? n_plans : 1), sizeof *unit_of);
    long **weight = calloc((size_t)(n_plans ? n_plans : 1), sizeof *weight);
    long *scale = calloc((size_t)(n_plans ? n_plans : 1), sizeof *scale);
    int rc = unit_of && weight && scale ? 0 : -1;
    long total = 0;
    if (!rc)
        plan_scales(plans, n_plans, scale);
    for (int k = 0; !rc && k < n_plans; k++) {
        const pp_run_plan *plan = plans[k];
        int nv = plan->c->n_variants;
        unit_of[k] = malloc(sizeof **unit_of * (size_t)(plan->n_tasks ? plan->n_tasks : 1));
        weight[k] = calloc((size_t)(nv ? nv : 1), sizeof **weight);
        if (!unit_of[k] || !weight[k]) {
            rc = -1;
            break;
        }
        units(plan, unit_of[k]);
        total += unit_weights(plan, unit_of[k], scale[k], weight[k]);
    }
    long prefix = 0;
    for (int k = 0; !rc && k < n_plans; k++) {  // units in (plan, group, variant) order
        const pp_run_plan *plan = plans[k];
        int nv = plan->c->n_variants;
        int shard_of[PP_MAX_VARIANTS];
        for (int g = 0; g < plan->n_groups; g++)
            for (int v = 0; v < nv; v++) {
                if (plan->group_of[v] != g)
                    continue;
                long s = total ? ((2 * prefix + weight[k][v]) * (long)n) / (2 * total) : 0;
                shard_of[v] = (int)(s < n ? s : n - 1) + 1;
                prefix += weight[k][v];
            }
        for (int i = 0; i < plan->n_tasks; i++)
            owner[k][i] = shard_of[unit_of[k][i]];
    }
    for (int k = 0; k < n_plans && unit_of && weight; k++)
        free(unit_of[k]), free(weight[k]);
    free(unit_of), free(weight), free(scale);
    return rc;
}

int pp_shard_owners(const pp_run_plan *plan, int n, int *owner)
{
    return pp_shard_owners_multi(&plan, 1, n, &owner);
}

long pp_shard_select_of(const pp_run_plan *plan, const int *owner, int i, unsigned char *owned, unsigned char *selected)
{
    long w = 0;
    for (int t = 0; t < plan->n_tasks; t++) {
        owned[t] = selected[t] = owner[t] == i;
        w += owned[t] ? pp_shard_task_weight(&plan->tasks[t]) : 0;
    }
    pp_run_plan_close(plan, selected);
    return w;
}

long pp_shard_select(const pp_run_plan *plan, int i, int n, unsigned char *owned, unsigned char *selected)
{
    int *owner = malloc(sizeof *owner * (size_t)(plan->n_tasks ? plan->n_tasks : 1));
    long w = !owner || pp_shard_owners(plan, n, owner) ? -1 : pp_shard_select_of(plan, owner, i, owned, selected);
    free(owner);
    return w;
}

char *pp_shard_plan_signature(const pp_run_plan *plan)
{
    pp_textbuf b = {0};
    pp_tb_printf(&b, "groups %d;", plan->n_groups);
    for (int g = 0; g < plan->n_groups; g++) {
        pp_tb_printf(&b, " %s:", pp_format_get(plan->group_format[g]).name);
        for (int t = 0; t < plan->c->op->n_outputs; t++)
            pp_tb_printf(&b, "%d", plan->group_want[g][t] != 0);
    }
    pp_tb_printf(&b, "; tasks %d;", plan->n_tasks);
    for (int i = 0; i < plan->n_tasks; i++) {
        const pp_task *t = &plan->tasks[i];
        pp_tb_printf(&b, " %d:%d,%d,%d,%d", (int)t->kind, t->group, t->variant, t->pair, t->slot);
        for (int d = 0; d < t->n_deps; d++)
            pp_tb_printf(&b, "<%d", t->deps[d]);
    }
    return pp_tb_take(&b);
}
