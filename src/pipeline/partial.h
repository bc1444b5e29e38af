// partial.h — what one shard of a run (`precprobe run CASE --shard I/N`, pipeline/shard.h)
// produced, in memory: the manifest that says which run and which slice it is, and the results
// of the tasks it owns. report/partial_h5.c writes it to DIR/partial.h5 and reads it back;
// pipeline/merge.h assembles N of them into the run's pp_run_result.
//
// Every statistic is kept whole: a comparison is one task, computed in one shard, and stored
// with its exact sums (report.h5's own comparison records), so a merge copies it bit for bit
// instead of recombining rounded values.
#ifndef PP_PARTIAL_H
#define PP_PARTIAL_H

#include "core/results.h"
#include "pipeline/case.h"
#include "pipeline/run_opts.h"

#define PP_PARTIAL_FORMAT "precprobe partial 1"
#define PP_IDENTITY_HEX 65

typedef struct pp_partial {
    // ---- the manifest
    char version[32];                      // the precprobe version that ran the shard
    char identity[PP_IDENTITY_HEX];        // pp_partial_identity: the case text and run options
    int shard, n_shards;                   // I of N, 1 <= I <= N
    char case_path[PP_PATH_MAX];           // the case as the shard named it (relative files resolve from it)
    char device[64];                       // where the shard ran, as reports name it
    char created_utc[32];                  // when the shard planned its run
    char reference_method[PP_NAME_MAX];    // run --reference, or "" for the case's
    int orders, cross_check;               // run --orders, --cross-check
    int save_tensors;                      // run --save-tensors: the owned tasks' tensors are kept below
    char *plan_signature;                  // pp_shard_plan_signature of the shard's plan; owned
    int n_tasks;                           // the plan's task count
    unsigned char *owned;                  // [n_tasks]: the tasks whose results this partial holds; owned
    // ---- the results of the owned tasks
    pp_run_result r;                       // metadata and case text, every variant (series of those
                                           // run), the comparisons of owned COMPARE, COMPARE_PAIR and
                                           // CROSS_CHECK tasks in task order; no references (below)
    int *cmp_task;                         // [r.n_comparisons]: the task that made each comparison; owned
    int n_groups;
    pp_reference_info ref_info[PP_FMT_COUNT][PP_MAX_OP_TENSORS];  // group g's reference, when its
                                                                  // REFERENCE task is owned
    // ---- with save_tensors (data NULL where not owned or not computed)
    pp_tensor inputs[PP_MAX_OP_TENSORS];                // group 0's inputs, when its INPUTS task is owned
    pp_tensor refs[PP_FMT_COUNT][PP_MAX_OP_TENSORS];    // group g's reference values, when owned
    int n_outs;                                         // variants in outs (the case's, or 0)
    pp_tensor (*outs)[PP_MAX_OP_TENSORS];               // [n_outs]: each owned variant's outputs; owned
} pp_partial;

// The identity of a sharded run: SHA-256 of the case text and the options that change what a
// task computes or what the reports hold (--reference, --orders, --cross-check,
// --save-tensors), as 64 hex digits. Two partials merge
// only when their identities are equal. Not the device: a shard may run on any machine.
void pp_partial_identity(const pp_case *c, const pp_run_opts *o, char hex[PP_IDENTITY_HEX]);

// Frees what p owns and zeroes it.
void pp_partial_free(pp_partial *p);

#endif
