// compare.c — the compare stage (compare.h): a variant's outputs against its reference, and the
// case's pairs, whole or through a view (src/core/view.h).
#include "pipeline/compare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/view.h"
#include "pipeline/comparison.h"

// Output (or tensor group) slot of pair ps gathered on both sides through the pair's view and
// compared under the name GROUP@VIEW; *compared is 0 when there is nothing to compare (no groups,
// and a variant lacks the output). Returns PP_OK or the error.
static int compare_pair_slot(const pp_run_plan *plan, const pp_run_products *p, const pp_pair_spec *ps, int slot,
                             pp_comparison *cmp, int *compared, pp_error *err)
{
    *compared = 0;
    const pp_case *c = plan->c;
    const pp_op *op = c->op;
    int a = ps->actual, e = ps->expected;
    if (!ps->view[0] && !ps->n_groups) {
        pp_compare_tensors(cmp, c, c->variants[a].name, op->outputs[slot], c->variants[e].name,
                           &p->variants[a].outs[slot], &p->variants[e].outs[slot], 0);
        *compared = 1;
        return PP_OK;
    }
    char msg[200], what[PP_PATH_MAX + 2 * PP_NAME_MAX];
    snprintf(what, sizeof what, "%s: pair (%s, %s)", c->path, c->variants[a].name, c->variants[e].name);
    pp_view view;
    if (pp_view_parse(ps->view, &view, msg, sizeof msg))
        return pp_fail(err, PP_ERR_INPUT, "%s: %s", what, msg);
    view.world = ps->view_world;  // resolved and checked when the case was read
    int n_groups = ps->n_groups, len = n_groups ? ps->group_len[slot] : 1, ok = 1;
    const pp_tensor *ta[PP_MAX_OP_TENSORS], *te[PP_MAX_OP_TENSORS];
    for (int i = 0; i < len; i++) {
        int t = n_groups ? ps->group[slot][i] : slot;
        ok &= plan->has[a][t] && plan->has[e][t];
        ta[i] = &p->variants[a].outs[t];
        te[i] = &p->variants[e].outs[t];
    }
    if (!ok) {
        if (!n_groups)
            return PP_OK;  // every output: only those both variants have
        return pp_fail(err, PP_ERR_INPUT, "%s: a tensor of '%s' is missing from one of the variants", what,
                       ps->group_name[slot]);
    }
    char name[PP_NAME_MAX];
    snprintf(name, sizeof name, "%s%s%s", n_groups ? ps->group_name[slot] : op->outputs[slot], ps->view[0] ? "@" : "",
             ps->view);
    pp_tensor ga, ge;
    int rc = pp_view_gather(&view, ta, len, &ga, what, err);
    if (!rc && (rc = pp_view_gather(&view, te, len, &ge, what, err)))
        pp_tensor_free(&ga);
    if (rc)
        return rc;
    pp_compare_tensors(cmp, c, c->variants[a].name, name, c->variants[e].name, &ga, &ge, 0);
    pp_tensor_free(&ga);
    pp_tensor_free(&ge);
    *compared = 1;
    return PP_OK;
}

int pp_run_compare_task(const pp_run_plan *plan, const pp_run_products *p, const pp_task *t, pp_comparison *cmp,
                        int *compared, pp_error *err)
{
    const pp_case *c = plan->c;
    *compared = 0;
    if (t->kind == PP_TASK_COMPARE) {
        // the second reference (plan.h): the original inputs' group's, or the variant's quantised one
        int original = t->second && plan->ref2[t->variant] == PP_REF2_ORIGINAL;
        const pp_tensor *e = !t->second ? &p->groups[t->group].refs[t->slot]
                           : original   ? &p->groups[plan->group_original[t->group]].refs[t->slot]
                                        : &p->qrefs[t->variant][t->slot];
        pp_compare_tensors(cmp, c, c->variants[t->variant].name, c->op->outputs[t->slot],
                           !t->second ? "reference" : original ? PP_AGAINST_ORIGINAL : PP_AGAINST_QUANTISED,
                           &p->variants[t->variant].outs[t->slot], e, 0);
        *compared = 1;
        return PP_OK;
    }
    if (t->kind == PP_TASK_COMPARE_PAIR)
        return compare_pair_slot(plan, p, &c->pairs[t->pair], t->slot, cmp, compared, err);
    return PP_OK;
}

int pp_run_compare(const pp_run_plan *plan, const pp_run_products *p, const unsigned char *selected,
                   pp_comparison **out, int *n, pp_error *err)
{
    *out = NULL;
    *n = 0;
    int max = 0;
    for (int i = 0; i < plan->n_tasks; i++)
        max += plan->tasks[i].kind == PP_TASK_COMPARE || plan->tasks[i].kind == PP_TASK_COMPARE_PAIR;
    pp_comparison *cmps = calloc((size_t)(max ? max : 1), sizeof *cmps);
    if (!cmps)
        return pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    int count = 0, rc = PP_OK;
    for (int i = 0; i < plan->n_tasks && !rc; i++) {
        if (selected && !selected[i])
            continue;
        int compared;
        rc = pp_run_compare_task(plan, p, &plan->tasks[i], &cmps[count], &compared, err);
        count += compared;
    }
    if (rc) {
        pp_comparisons_free(cmps, count);
        return rc;
    }
    *out = cmps;
    *n = count;
    return PP_OK;
}

void pp_comparisons_free(pp_comparison *cmps, int n)
{
    for (int i = 0; cmps && i < n; i++)
        pp_axis_stats_free(&cmps[i].axes);
    free(cmps);
}
