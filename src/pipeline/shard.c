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

int pp_shard_owners(const pp_run_plan *plan, int n, int *owner)
{
    const pp_case *c = plan->c;
    int nv = c->n_variants;
    int *unit_of = malloc(sizeof *unit_of * (size_t)(plan->n_tasks ? plan->n_tasks : 1));
    long *weight = calloc((size_t)(nv ? nv : 1), sizeof *weight);
    int *shard_of = calloc((size_t)(nv ? nv : 1), sizeof *shard_of);
    if (!unit_of || !weight || !shard_of) {
        free(unit_of), free(weight), free(shard_of);
        return -1;
    }
    units(plan, unit_of);
    long total = 0;
    for (int i = 0; i < plan->n_tasks; i++) {
        weight[unit_of[i]] += pp_shard_task_weight(&plan->tasks[i]);
        total += pp_shard_task_weight(&plan->tasks[i]);
    }
    long prefix = 0;
    for (int g = 0; g < plan->n_groups; g++)  // units in (group, variant) order
        for (int v = 0; v < nv; v++) {
            if (plan->group_of[v] != g)
                continue;
            long s = total ? ((2 * prefix + weight[v]) * (long)n) / (2 * total) : 0;
            shard_of[v] = (int)(s < n ? s : n - 1) + 1;
            prefix += weight[v];
        }
    for (int i = 0; i < plan->n_tasks; i++)
        owner[i] = shard_of[unit_of[i]];
    free(unit_of), free(weight), free(shard_of);
    return 0;
}

long pp_shard_select(const pp_run_plan *plan, int i, int n, unsigned char *owned, unsigned char *selected)
{
    int *owner = malloc(sizeof *owner * (size_t)(plan->n_tasks ? plan->n_tasks : 1));
    if (!owner || pp_shard_owners(plan, n, owner)) {
        free(owner);
        return -1;
    }
    long w = 0;
    for (int t = 0; t < plan->n_tasks; t++) {
        owned[t] = selected[t] = owner[t] == i;
        w += owned[t] ? pp_shard_task_weight(&plan->tasks[t]) : 0;
    }
    free(owner);
    pp_run_plan_close(plan, selected);
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
