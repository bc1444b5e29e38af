// results.c — ownership and lookup for pp_run_result.
#include "core/results.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pp_series_alloc(pp_series *s, const char *name, int64_t length)
{
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->step = calloc((size_t)(length > 0 ? length : 1), sizeof *s->step);
    s->value = calloc((size_t)(length > 0 ? length : 1), sizeof *s->value);
    if (!s->step || !s->value) {
        free(s->step), free(s->value);
        memset(s, 0, sizeof *s);
        return -1;
    }
    s->length = length;
    return 0;
}

void pp_run_result_free(pp_run_result *r)
{
    for (int v = 0; v < r->n_variants; v++) {
        for (int i = 0; i < r->variants[v].n_series; i++)
            free(r->variants[v].series[i].step), free(r->variants[v].series[i].value);
        free(r->variants[v].series);
        pp_variant_ranges_free(&r->variants[v].ranges);
        if (r->variants[v].outputs) {
            // the number of outputs is the number of distinct tensors compared against reference
            for (int i = 0; i < r->n_references; i++)
                pp_tensor_free(&r->variants[v].outputs[i]);
            free(r->variants[v].outputs);
        }
    }
    if (r->reference_outputs) {
        for (int i = 0; i < r->n_references; i++)
            pp_tensor_free(&r->reference_outputs[i]);
        free(r->reference_outputs);
    }
    if (r->inputs) {
        for (int i = 0; i < r->n_inputs; i++)
            pp_tensor_free(&r->inputs[i]);
        free(r->inputs);
    }
    free(r->input_names);
    free(r->variants);
    free(r->references);
    for (int i = 0; r->comparisons && i < r->n_comparisons; i++)
        pp_axis_stats_free(&r->comparisons[i].axes);
    free(r->comparisons);
    free(r->verdicts);
    free(r->case_text);
    free(r->shapes);
    memset(r, 0, sizeof *r);
}

const pp_comparison *pp_run_result_find(const pp_run_result *r, const char *variant, const char *tensor,
                                        const char *against)
{
    for (int i = 0; i < r->n_comparisons; i++) {
        const pp_comparison *c = &r->comparisons[i];
        if (!strcmp(c->variant, variant) && !strcmp(c->tensor, tensor) && !strcmp(c->against, against))
            return c;
    }
    return NULL;
}

const char *pp_against_label(const pp_run_result *r, const pp_comparison *c)
{
    if (!strcmp(c->against, PP_AGAINST_ORIGINAL))
        return "exact (original inputs)";
    if (!strcmp(c->against, PP_AGAINST_QUANTISED))
        return "exact (quantised inputs)";
    if (strcmp(c->against, "reference"))
        return NULL;
    // the group's reference: the other side of the variant's second comparison, if it has one
    if (pp_run_result_find(r, c->variant, c->tensor, PP_AGAINST_QUANTISED))
        return "exact (original inputs)";
    if (pp_run_result_find(r, c->variant, c->tensor, PP_AGAINST_ORIGINAL))
        return "exact (quantised inputs)";
    return NULL;
}
