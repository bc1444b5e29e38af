// range_table.h — a variant's range diagnostics as a run result keeps them: per rounding site
// (kernels/sites.h) that recorded anything, its format and one cell per head (attention), kv head,
// tensor (gemm) or parameter block (adamw) with the counters of kernels/ranges.h. Reports write
// and read this form (report.txt, report.h5 /variants/V/ranges/<site>, HTML).
#ifndef PP_RANGE_TABLE_H
#define PP_RANGE_TABLE_H

#include <stdint.h>

#include "ranges.h"

#define PP_RANGE_NAME_MAX 64

typedef struct pp_range_row {
    char site[PP_RANGE_NAME_MAX];    // the site's name in kernels/sites.h
    char format[PP_RANGE_NAME_MAX];  // the format its values were noted in ("fp16")
    char axis[PP_RANGE_NAME_MAX];    // what a cell is: "head", "kv_head", "tensor", "block"
    int64_t heads;
    pp_range_cell *cells;            // owned, [heads]
} pp_range_row;

typedef struct pp_variant_ranges {
    int recorded;    // 1: the rows below were recorded on this run; 0: none (note says why, or empty)
    char note[256];  // e.g. why a variant has none (an external variant, a device that does not record)
    int n_rows;
    pp_range_row *rows;  // owned, in site order
} pp_variant_ranges;

// The rows of op's sites that noted anything (count or clamped > 0) in R, into out (recorded 1).
// Returns 0, or -1 out of memory (out then empty).
int pp_range_table_from(const char *op, const pp_ranges *R, pp_variant_ranges *out);

// Frees the rows and zeroes r.
void pp_variant_ranges_free(pp_variant_ranges *r);

// The axis word of a pp_site_axis ("head", "kv_head", "tensor", "block").
const char *pp_range_axis_name(int axis);

// Sums of a row's cells (counts added, amax max, min_nz min): the site over every head.
pp_range_cell pp_range_row_total(const pp_range_row *row);

#endif
