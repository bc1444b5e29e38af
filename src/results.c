// results.c — ownership and lookup for pp_run_result.
#include "results.h"

#include <stdlib.h>
#include <string.h>

void pp_run_result_free(pp_run_result *r)
{
    for (int v = 0; v < r->n_variants; v++) {
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
