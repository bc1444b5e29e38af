// range_table.c — a run's range diagnostics in result form (see range_table.h).
#include "core/range_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *pp_range_axis_name(int axis)
{
    switch (axis) {
    case PP_SITE_AXIS_HEAD: return "head";
    case PP_SITE_AXIS_KV_HEAD: return "kv_head";
    case PP_SITE_AXIS_TENSOR: return "tensor";
    case PP_SITE_AXIS_BLOCK: return "block";
    default: return "?";
    }
}

static int site_noted(const pp_ranges *R, int s)
{
    for (int64_t h = 0; h < R->heads; h++) {
        const pp_range_cell *c = &R->cells[s * R->heads + h];
        if (c->count || c->clamped)
            return 1;
    }
    return 0;
}

int pp_range_table_from(const char *op, const pp_ranges *R, pp_variant_ranges *out)
{
    memset(out, 0, sizeof *out);
    int n = 0;
    for (int s = 0; s < PP_SITE_COUNT; s++)
        n += !strcmp(pp_site_get(s)->op, op) && site_noted(R, s);
    out->rows = calloc((size_t)(n ? n : 1), sizeof *out->rows);
    if (!out->rows)
        return -1;
    for (int s = 0; s < PP_SITE_COUNT; s++) {
        const pp_site_info *si = pp_site_get(s);
        if (strcmp(si->op, op) || !site_noted(R, s))
            continue;
        pp_range_row *row = &out->rows[out->n_rows];
        row->cells = malloc((size_t)R->heads * sizeof *row->cells);
        if (!row->cells) {
            pp_variant_ranges_free(out);
            return -1;
        }
        out->n_rows++;
        snprintf(row->site, sizeof row->site, "%s", si->name);
        snprintf(row->format, sizeof row->format, "%s", R->fmt[s] >= 0 ? pp_format_get(R->fmt[s]).name : "?");
        snprintf(row->axis, sizeof row->axis, "%s", pp_range_axis_name(si->axis));
        row->heads = R->heads;
        memcpy(row->cells, &R->cells[s * R->heads], (size_t)R->heads * sizeof *row->cells);
    }
    out->recorded = 1;
    return 0;
}

void pp_variant_ranges_free(pp_variant_ranges *r)
{
    for (int i = 0; i < r->n_rows; i++)
        free(r->rows[i].cells);
    free(r->rows);
    memset(r, 0, sizeof *r);
}

pp_range_cell pp_range_row_total(const pp_range_row *row)
{
    pp_range_cell t;
    pp_range_cell_clear(&t);
    for (int64_t h = 0; h < row->heads; h++)
        pp_range_cell_merge(&t, &row->cells[h]);
    return t;
}
