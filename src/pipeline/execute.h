// execute.h — the second stage of a run (pipeline/plan.h): the plan's inputs, references and
// variant runs (and cross-checks), producing the tensors the compare stage reads.
#ifndef PP_EXECUTE_H
#define PP_EXECUTE_H

#include "pipeline/plan.h"

// The inputs and reference of one storage format: variants of different formats see their inputs
// rounded from the same binary64 draws, and each group gets its own reference.
typedef struct pp_format_group {
    pp_format_id format;
    int want[PP_MAX_OP_TENSORS];  // output t is computed: some variant of the group has it
    pp_tensor inputs[PP_MAX_OP_TENSORS];
    pp_tensor refs[PP_MAX_OP_TENSORS];           // binary64
    pp_reference_info info[PP_MAX_OP_TENSORS];
    void *trace;  // the reference's per-step trace (ops with series hooks), or NULL
} pp_format_group;

// What a variant's run produced: its outputs (those it has; the others zeroed) and series.
typedef struct pp_variant_products {
    pp_tensor outs[PP_MAX_OP_TENSORS];
    int n_series;
    pp_series *series;  // owned until assembled
    pp_variant_ranges ranges;  // owned until assembled (run --ranges)
} pp_variant_products;

typedef struct pp_run_products {
    pp_format_group groups[PP_FMT_COUNT];  // the plan's groups
    pp_variant_products *variants;         // one per variant of the case
    int n_cross;
    pp_comparison *cross;                  // the cross-checks' comparisons, in plan order
    // per variant: its exact result on its quantised inputs (PP_TASK_REFERENCE_QUANTISED), binary64
    pp_tensor (*qrefs)[PP_MAX_OP_TENSORS];
    pp_reference_info (*qinfo)[PP_MAX_OP_TENSORS];
} pp_run_products;

// Empty products for plan. Returns PP_OK or PP_ERR_RUNTIME (out of memory); free with
// pp_run_products_free (also after a failure).
int pp_run_products_make(const pp_run_plan *plan, pp_run_products *p, pp_error *err);
void pp_run_products_free(const pp_run_plan *plan, pp_run_products *p);

// Runs the plan's INPUTS, REFERENCE, VARIANT and CROSS_CHECK tasks that selected flags (NULL:
// all), in id order; the selection must hold each task's dependencies (pp_run_plan_close).
// Returns PP_OK, PP_ERR_INPUT (bad input files, shapes) or PP_ERR_RUNTIME.
int pp_run_execute(const pp_run_plan *plan, const pp_run_opts *o, const unsigned char *selected,
                   pp_run_products *p, pp_error *err);

// One task of the plan (INPUTS, REFERENCE, VARIANT, CROSS_CHECK; a COMPARE or COMPARE_PAIR does
// nothing here): what pp_run_execute runs for each selected task, for a driver that interleaves
// the stages (pipeline/stream.h). *refs_done counts the references finished, for the line a stop
// request ends the run with. Returns as pp_run_execute; PP_ERR_INTERRUPTED names the task.
int pp_run_execute_task(const pp_run_plan *plan, const pp_run_opts *o, const pp_task *t, pp_run_products *p,
                        int *refs_done, pp_error *err);

// Clears the stage's progress line (when it drew one), after the last task.
void pp_run_execute_done(const pp_run_opts *o);

// Frees the tensors task t produced (INPUTS: the group's inputs; REFERENCE: its tensors and trace,
// keeping the method and bound; VARIANT: its outputs, keeping its series), once no later task
// reads them. Anything else, and a second call, does nothing.
void pp_run_products_release(const pp_run_plan *plan, pp_run_products *p, const pp_task *t);

// One group's inputs (generated or read), and its reference (outputs want[]; the case's method
// unless o overrides it; through o's reference cache). The execute stage's INPUTS and
// REFERENCE tasks, for `precprobe reference` too.
int pp_run_group_inputs(const pp_case *c, pp_format_group *g, pp_error *err);
int pp_run_group_reference(const pp_case *c, const pp_run_opts *o, pp_format_group *g, int threads, pp_error *err);
void pp_run_group_free(const pp_op *op, pp_format_group *g);

#endif
