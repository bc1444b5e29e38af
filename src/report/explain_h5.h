// explain_h5.h — report.h5's /variants/<v>/explain: `precprobe explain`'s tables
// (core/explain_result.h) as report_schema tables, one row of the variant table points here.
#ifndef PP_EXPLAIN_H5_H
#define PP_EXPLAIN_H5_H

#include "report/report_schema.h"

// One compared tensor: /variants/<v>/explain/<tensor> (layout in reports/README.md).
extern const pp_rs_table pp_report_explain_table;

#endif
