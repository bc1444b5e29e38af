// explain_h5.c — the schema tables of /variants/<v>/explain (explain_h5.h).
#include "report/explain_h5.h"

#include <stddef.h>

// <prefix>mismatch_fraction, <prefix>max_abs_error, <prefix>rms, <prefix>max_ulp (NaN where a
// comparison has no finite pair), <prefix>nonfinite
#define S(member) offsetof(pp_explain_stats, member)
static const pp_rs_field stats_fields[] = {
    {.name = "mismatch_fraction", .kind = PP_RS_F64, .off = S(mismatch_fraction)},
    {.name = "max_abs_error", .kind = PP_RS_F64, .off = S(max_abs_error)},
    {.name = "rms", .kind = PP_RS_F64, .off = S(rms)},
    {.name = "max_ulp", .kind = PP_RS_F64, .off = S(max_ulp)},
    {.name = "nonfinite", .kind = PP_RS_I64, .off = S(nonfinite)},
};
#undef S
static const pp_rs_table stats_table = PP_RS_TABLE(stats_fields, NULL, NULL);

// /variants/<v>/explain/<tensor>/sites/<site>, in the table's order (most of the error first)
#define X(member) offsetof(pp_explain_site, member)
static const pp_rs_field site_fields[] = {
    {.name = "exact_", .kind = PP_RS_SUB, .off = X(exact), .sub = &stats_table},
    {.name = "alone_", .kind = PP_RS_SUB, .off = X(alone), .sub = &stats_table},
    {.name = "share", .kind = PP_RS_F64, .off = X(share)},
    {.name = "share_band_min", .kind = PP_RS_F64, .off = X(share_band[0])},
    {.name = "share_band_max", .kind = PP_RS_F64, .off = X(share_band[1])},
};
#undef X
static const pp_rs_table site_table = PP_RS_TABLE(site_fields, NULL, NULL);

#define T(member) offsetof(pp_explain_table, member)
static const pp_rs_field table_fields[] = {
    {.name = "against", .kind = PP_RS_STR, .off = T(against), .size = PP_EXPLAIN_NAME_MAX},
    {.name = "nominal_", .kind = PP_RS_SUB, .off = T(nominal), .sub = &stats_table},
    {.name = "all_exact_", .kind = PP_RS_SUB, .off = T(all_exact), .sub = &stats_table},
    {.name = "interaction", .kind = PP_RS_F64, .off = T(interaction)},
    {.name = "band_runs", .kind = PP_RS_I64, .off = T(band_runs)},
    {.name = "sites", .kind = PP_RS_LIST, .off = T(sites), .size = sizeof(pp_explain_site), .count = T(n_sites),
     .key = offsetof(pp_explain_site, name), .sub = &site_table},
};
#undef T
const pp_rs_table pp_report_explain_table = PP_RS_TABLE(table_fields, NULL, NULL);
