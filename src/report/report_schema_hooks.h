// report_schema_hooks.h — the items of report.h5 that the schema's kinds do not describe
// (report_schema.h), as hooks for the tables in report_h5.c: kept tensors, knobs, the schema
// version, and the comparison's torch version, derived statistics, ulp histogram, exact sums and
// per-axis error.
#ifndef PP_REPORT_SCHEMA_HOOKS_H
#define PP_REPORT_SCHEMA_HOOKS_H

#include <stdint.h>

#include "core/results.h"
#include "report/report_schema.h"

// A comparison as its group holds it: its place in the run's list beside it.
typedef struct cmp_rec {
    int64_t order;
    pp_comparison c;
} cmp_rec;


// The run's items (report_schema_run_hooks.c).
extern const pp_rs_hook pp_report_schema_version_hook;    // root attribute, PP_REPORT_H5_SCHEMA
extern const pp_rs_hook pp_report_input_names_hook;       // /inputs attribute names
extern const pp_rs_hook pp_report_input_tensors_hook;     // /inputs/<name>, when kept
extern const pp_rs_hook pp_report_reference_values_hook;  // /reference/<tensor>/values, when kept
extern const pp_rs_hook pp_report_knobs_hook;             // /variants/<v> attributes, one per knob
extern const pp_rs_hook pp_report_outputs_hook;           // /variants/<v>/outputs, when kept

// A comparison's items (report_schema_stats_hooks.c); their frames hold a cmp_rec.
extern const pp_rs_hook pp_report_multi_index_hook;       // <statistic>_index (frame: pp_close_max)
extern const pp_rs_hook pp_report_torch_version_hook;
extern const pp_rs_hook pp_report_mismatch_fraction_hook;
extern const pp_rs_hook pp_report_mean_abs_hook;
extern const pp_rs_hook pp_report_rms_hook;
extern const pp_rs_hook pp_report_histogram_hook;         // ulp_histogram
extern const pp_rs_hook pp_report_exact_sums_hook;
extern const pp_rs_hook pp_report_sum_counters_hook;      // exact_sum_counters
extern const pp_rs_hook pp_report_axes_hook;              // by_position, by_head_block
extern const pp_rs_hook pp_report_bands_hook;             // order_band_runs, <statistic>_band (--orders)
extern const pp_rs_hook pp_report_recorded_hook;          // read only: which statistics the group records
extern const pp_rs_hook pp_report_order_verdict_hook;     // order_verdict_partners, <statistic>_order_verdict
                                                          // (--orders; report_schema_verdict_hook.c)

#endif
