// shard.h — which shard of N does which task of a run's plan (pipeline/plan.h), so that N
// processes on any machines, in any order, together do the run's work once (`precprobe run
// --shard I/N`) and `precprobe merge` assembles what they wrote.
//
// The rule (a pure function of the plan and N, so every shard computes the same table):
//  1. A unit per variant: its VARIANT task, its CROSS_CHECK, its COMPARE tasks (its outputs
//     against the reference) and the COMPARE_PAIR tasks whose actual side it is. The INPUTS and
//     REFERENCE tasks of a format group belong to the unit of the group's first variant.
//  2. A unit's weight is the sum of its tasks' weights: reference 8 (exact or MPFR arithmetic),
//     variant 2, cross-check 2, inputs 1, each comparison 1.
//  3. Units are ordered by (format group, variant index) and cut into N contiguous slices of
//     near-equal weight: the unit whose weight starts at prefix S (of W in all) with weight w goes
//     to shard floor((2S + w)·N / 2W) (its midpoint's slice), counted from 1.
// Contiguous slices in group order keep the variants of one format together, so a group's
// reference is needed by as few shards as possible; a shard that needs a reference another
// owns computes it too (pp_run_plan_close adds it), or finds it in the shared reference cache
// (pipeline/ref_cache.h, which also lets two shards wait for one computation instead of two).
// With more shards than units, some shards own nothing: they still write an (empty) partial,
// so merge can tell a shard that did nothing from one that is missing.
#ifndef PP_SHARD_H
#define PP_SHARD_H

#include "pipeline/plan.h"

// The most shards a run can be cut into.
#define PP_SHARD_MAX 100000

// Parses "I/N" (1 <= I <= N <= PP_SHARD_MAX, decimal, nothing else). Returns 0, or -1 after
// writing a one-line reason into why.
int pp_shard_parse(const char *s, int *i, int *n, char *why, size_t why_n);

// owner[t] = the shard (1..n) that owns task t of plan, by the rule above; owner holds
// plan->n_tasks ints. n >= 1. Returns 0, or -1 out of memory.
int pp_shard_owners(const pp_run_plan *plan, int n, int *owner);

// The same rule over several plans at once: the points of a sweep (pipeline/sweep.h), plans[k]
// point k's. Units are (point, variant), ordered by (point, group, variant), and the slices cut
// the sweep's total weight, so a shard holds whole points where points are many and a slice of
// one big point where they are few. A point's task weights are multiplied by its size (the
// elements of its inputs and outputs times their longest dimension) over the smallest point's,
// rounded down: a sweep over s gives its s = 8192 points 64 times the weight of s = 1024. owner[k] holds plans[k]->n_tasks ints. Returns 0, or -1 out
// of memory.
int pp_shard_owners_multi(const pp_run_plan *const *plans, int n_plans, int n, int *const *owner);

// The weight of one task in the rule above.
int pp_shard_task_weight(const pp_task *t);

// owned[t] = 1 for the tasks shard i of n owns (else 0); selected[t] = owned[t] plus every
// dependency (pp_run_plan_close): what the shard runs. Both hold plan->n_tasks flags. Returns
// the owned tasks' total weight, or -1 out of memory.
long pp_shard_select(const pp_run_plan *plan, int i, int n, unsigned char *owned, unsigned char *selected);

// The same from an owner table already made (pp_shard_owners or pp_shard_owners_multi); never fails.
long pp_shard_select_of(const pp_run_plan *plan, const int *owner, int i, unsigned char *owned, unsigned char *selected);

// A text that is equal for two plans exactly when their task tables are (kind, group, variant,
// pair, slot and dependencies of every task, and the groups' formats and outputs): shards and
// merge refuse to combine the work of different plans. Malloc'd; NULL when out of memory.
char *pp_shard_plan_signature(const pp_run_plan *plan);

#endif
