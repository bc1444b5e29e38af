// results.h — what a run of a case produces, in memory: the variants run, every comparison's
// statistics, the reference's method and bound, the gate's verdicts. Reports (text, HDF5,
// JUnit) are views of this; `precprobe check` and `show` read it back from report.h5.
#ifndef PP_RESULTS_H
#define PP_RESULTS_H

#include <stdint.h>

#include "core/axis_stats.h"
#include "core/close.h"
#include "core/range_table.h"
#include "core/explain_result.h"
#include "core/tensor.h"

#define PP_NAME_MAX 96
_Static_assert(PP_EXPLAIN_NAME_MAX == PP_NAME_MAX, "explain tables name things as results do");
#define PP_MAX_KNOBS 48  // attention has 30 (fp8 = fa3 and te, their scalings, mma and te's unknowns)

// One knob setting of a variant, as text ("accumulate" = "fp32").
typedef struct pp_knob_setting {
    char name[PP_NAME_MAX];
    char value[PP_NAME_MAX];
} pp_knob_setting;

// A per-step series of a variant (iterative operations, e.g. adamw): value[i] after step[i].
// Written to report.h5 as /variants/<v>/series/<name>/{step, value}.
typedef struct pp_series {
    char name[PP_NAME_MAX];               // e.g. "theta_max_abs_error", "loss", "loss_exact"
    int64_t length;
    double *step;                         // owned, increasing
    double *value;                        // owned
} pp_series;

// Allocates s's arrays for length points (zeroed) and names it. Returns 0, or -1 out of memory.
int pp_series_alloc(pp_series *s, const char *name, int64_t length);

typedef struct pp_variant_result {
    char name[PP_NAME_MAX];
    int external;                          // 1: outputs read from files the user's framework wrote
    int n_knobs;
    pp_knob_setting knobs[PP_MAX_KNOBS];   // every knob of the operation, defaults filled in
    pp_tensor *outputs;                    // n_outputs of the op, or NULL when not kept
    int n_series;
    pp_series *series;                     // owned; per-step series (NULL: none)
    pp_variant_ranges ranges;              // owned; range diagnostics (run --ranges; core/range_table.h)
    int n_explain;
    pp_explain_table *explain;             // owned; `precprobe explain`'s tables (NULL: none)
} pp_variant_result;

// One comparison: a variant's output tensor against the reference or another variant.
// The most statistics a comparison keeps an order band of (the statistic table has fewer).
#define PP_BAND_MAX_STATS 24

typedef struct pp_comparison {
    char variant[PP_NAME_MAX];
    char tensor[PP_NAME_MAX];
    char against[PP_NAME_MAX];             // "reference" or the other variant's name
    int ndim;
    int64_t shape[PP_MAX_DIMS];
    pp_close_opts opts;
    pp_close_stats stats;
    pp_axis_stats axes;                    // against the reference, when the op declares axes; owned
    // bit k set: statistic k of the table (core/statistic.h) was not recorded in the report.h5 this
    // comparison was read from (older than the statistic); 0 for every comparison a run computes
    uint32_t unrecorded;
    // --orders (src/pipeline/order_band.h): band_runs runs (the nominal + N orders), 0: no band;
    // band[k] = min, median, max of the statistic table's k-th statistic, k < n_band_stats.
    int band_runs, n_band_stats;
    double band[PP_BAND_MAX_STATS][3];
} pp_comparison;

// The `against` of a variant's second comparison (src/ops/op.h, pp_ref2_kind), beside its
// "reference" (the exact result on the inputs its group holds): the exact result on the inputs
// before its storage format rounded them, or on the values its scaling quantised them to.
#define PP_AGAINST_ORIGINAL "exact-original"
#define PP_AGAINST_QUANTISED "exact-quantised"

// The reference of one output tensor.
typedef struct pp_reference_info {
    char tensor[PP_NAME_MAX];
    char method[PP_NAME_MAX];              // e.g. "dot2-binary64" or "mpfr-plain-128"
    double error_bound;                    // proven bound on |delivered − exact|, absolute, max over elements
} pp_reference_info;

// One gate rule's verdict.
typedef struct pp_gate_verdict {
    char rule[256];                        // e.g. "*.out.mismatch_fraction <= 0.01" or "baseline: v.c.max_ulp"
    int passed;
    char detail[512];                      // one line: variant, tensor, statistic, baseline → now
} pp_gate_verdict;

typedef struct pp_run_result {
    char precprobe_version[32];
    char case_name[PP_NAME_MAX];
    char op[PP_NAME_MAX];
    char device[64];                       // "cpu", "cuda (NVIDIA H100 ...)", "cpu (auto: no GPU)"
    char created_utc[32];                  // ISO 8601, e.g. 2026-11-22T22:30:00Z
    int64_t reference_epoch;               // PP_REF_EPOCH of the build that made it (0: not recorded)
    uint64_t seed;
    char *case_text;                       // the case file's text, owned
    char *shapes;                          // one line describing the op's shapes, owned

    int n_variants;
    pp_variant_result *variants;           // owned
    int n_references;
    pp_reference_info *references;         // owned
    pp_tensor *reference_outputs;          // n_references tensors (binary64), or NULL when not kept
    int n_inputs;
    char (*input_names)[PP_NAME_MAX];
    pp_tensor *inputs;                     // or NULL when not kept

    int n_comparisons;
    pp_comparison *comparisons;            // owned
    int n_verdicts;
    pp_gate_verdict *verdicts;             // owned
} pp_run_result;

// Frees everything the result owns and zeroes it.
void pp_run_result_free(pp_run_result *r);

// The comparison (variant, tensor, against) or NULL.
const pp_comparison *pp_run_result_find(const pp_run_result *r, const char *variant, const char *tensor,
                                        const char *against);

// What the expected tensor of comparison c of r is, in words: "exact (original inputs)" or
// "exact (quantised inputs)" for a variant that has a second comparison (its "reference" then is
// the other one), NULL otherwise.
const char *pp_against_label(const pp_run_result *r, const pp_comparison *c);

#endif
