// plan.h — the first stage of a run: what the run will do, as a list of tasks with stable ids.
// A run is plan → execute (pipeline/execute.h: inputs, references, variants) → compare
// (pipeline/compare.h: statistics per comparison) → assemble (pipeline/assemble.h: the
// pp_run_result); pp_run_case (pipeline/run.h) chains them. A task's id is its index in the plan,
// a function of the case and the options only, so a shard can run a slice of the plan (its tasks
// and their dependencies: pp_run_plan_close) and a merge can order what the shards computed.
#ifndef PP_PLAN_H
#define PP_PLAN_H

#include "error.h"
#include "pipeline/case.h"
#include "pipeline/run_opts.h"

typedef enum pp_task_kind {
    PP_TASK_INPUTS,        // the inputs of a format group, generated or read
    PP_TASK_REFERENCE,     // the reference of a format group
    PP_TASK_VARIANT,       // a variant run on the backend (or its external files read)
    PP_TASK_CROSS_CHECK,   // --cross-check: the variant on the CPU emulation, compared with its cuda outputs
    PP_TASK_COMPARE,       // one output of a variant against its group's reference
    PP_TASK_COMPARE_PAIR,  // one output (or tensor group, through the pair's view) of a [compare] pair
    PP_TASK_REFERENCE_QUANTISED,  // a variant's exact result on the inputs it quantised (op row's reference_quantised)
} pp_task_kind;

#define PP_TASK_MAX_DEPS 3

typedef struct pp_task {
    int id;                       // its index in the plan
    pp_task_kind kind;
    int group;                    // the format group (INPUTS, REFERENCE; the variant's for the others), or -1
    int variant;                  // VARIANT, CROSS_CHECK, COMPARE: the variant; else -1
    int pair;                     // COMPARE_PAIR: the pair; else -1
    int slot;                     // COMPARE: the output; COMPARE_PAIR: the output, or the pair's tensor group
    int second;                   // COMPARE: 0 against the group's reference; 1 against the variant's second
                                  // reference (plan->ref2: the original inputs' group, or its quantised one)
    int n_deps;
    int deps[PP_TASK_MAX_DEPS];   // the tasks whose products this one reads (lower ids)
} pp_task;

typedef struct pp_run_plan {
    const pp_case *c;
    char device[64];              // the backend, as reports name it: "cpu", "cuda (NAME)", "cpu (auto: why)"
    int on_cuda;
    int threads;                  // >= 1
    char created_utc[32];         // when the run was planned, ISO 8601
    // Format groups: variants of one storage format share inputs (rounded from the same draws)
    // and a reference, which computes the outputs some variant of the group has.
    int n_groups;
    pp_format_id group_format[PP_FMT_COUNT];
    int group_want[PP_FMT_COUNT][PP_MAX_OP_TENSORS];
    int *group_of;                           // per variant: its group
    int (*has)[PP_MAX_OP_TENSORS];           // per variant: the outputs it has (active, and given when external)
    // Second comparisons (quantisation error apart from arithmetic error; op.h second_reference):
    // per variant its kind (PP_REF2_*), and per group the group holding its inputs unrounded
    // (binary32: the group of that format, added without variants when the case has none), or -1.
    int *ref2;
    int group_original[PP_FMT_COUNT];
    int n_tasks;
    pp_task *tasks;                          // in id order, which is an order to run them in
} pp_run_plan;

// Plans case c under options o: chooses the backend, groups the variants by format, lists the
// tasks. Returns PP_OK, PP_ERR_INPUT (unknown device), PP_ERR_RUNTIME (--device cuda without
// one, out of memory). Free with pp_run_plan_free (also after a failure).
int pp_run_plan_make(const pp_case *c, const pp_run_opts *o, pp_run_plan *plan, pp_error *err);
void pp_run_plan_free(pp_run_plan *plan);

// The same plan on a backend already chosen: device as reports name it ("cpu", "cuda (NAME)",
// "cpu (auto: why)"; on_cuda when it starts with "cuda"). For `precprobe merge`, which plans the
// run its shards made (on whatever machines they ran) without looking for a device itself.
int pp_run_plan_make_on(const pp_case *c, const pp_run_opts *o, const char *device, pp_run_plan *plan,
                        pp_error *err);

// Adds to selected (one flag per task) every task a selected task depends on, transitively.
void pp_run_plan_close(const pp_run_plan *plan, unsigned char *selected);

// The kind's name, e.g. "reference".
const char *pp_task_kind_name(pp_task_kind kind);

#endif
