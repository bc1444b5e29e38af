// ranges_h5.h — the range diagnostics in report.h5 (run --ranges; core/range_table.h), as a
// hook of the /variants/<v> table in report_h5.c:
//   /variants/<v>/ranges               attributes recorded (int32 0/1), note (str, when set)
//   /variants/<v>/ranges/<site>        one group per site that noted anything, in site order
//                                      (kernels/sites.h); attributes format, axis (str), heads
//                                      (int64); datasets, one value per head (or kv head, block;
//                                      one for a tensor): count, nan, inf, overflow, underflow,
//                                      subnormal, near_max, clamped (int64), amax, min_nonzero
//                                      (float64; min_nonzero +Inf when none), headroom (float64,
//                                      near_max/count: derived, written only)
// Absent in reports written without --ranges (the variant then reads as not recorded).
#ifndef PP_RANGES_H5_H
#define PP_RANGES_H5_H

#include "report/report_schema.h"

extern const pp_rs_hook pp_report_ranges_hook;  // frame: a pp_variant_result

#endif
