// ranges_h5.c — the range diagnostics' items of report.h5 (see ranges_h5.h).
#include "report/ranges_h5.h"

#include <hdf5.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/h5attr.h"
#include "io/h5obj.h"

// The int64 counters of a cell, by dataset name.
static const struct {
    const char *name;
    size_t off;
} I64[] = {
    {"count", offsetof(pp_range_cell, count)},         {"nan", offsetof(pp_range_cell, nan)},
    {"inf", offsetof(pp_range_cell, inf)},             {"overflow", offsetof(pp_range_cell, overflow)},
    {"underflow", offsetof(pp_range_cell, underflow)}, {"subnormal", offsetof(pp_range_cell, subnormal)},
    {"near_max", offsetof(pp_range_cell, near_max)},   {"clamped", offsetof(pp_range_cell, clamped)},
};
#define N_I64 (int)(sizeof I64 / sizeof I64[0])
static const struct {
    const char *name;
    size_t off;
} F64[] = {{"amax", offsetof(pp_range_cell, amax)}, {"min_nonzero", offsetof(pp_range_cell, min_nz)}};
#define N_F64 (int)(sizeof F64 / sizeof F64[0])

#define CELL_I64(c, k) (*(int64_t *)(void *)((char *)(c) + I64[k].off))
#define CELL_F64(c, k) (*(double *)(void *)((char *)(c) + F64[k].off))

static int check_ranges(const pp_rs_io *io, const char *where, const char *name, const pp_rs_frame *fr)
{
    const pp_variant_ranges *vg = &((const pp_variant_result *)fr->obj)->ranges;
    char w[PP_RS_WHERE_MAX];
    pp_rs_join(w, where, name);
    for (int i = 0; i < vg->n_rows; i++) {
        const pp_range_row *row = &vg->rows[i];
        if (!row->site[0] || row->heads < 1 || !row->cells)
            return pp_rs_invalid(io, w, "site %d: empty name or no cells", i);
        for (int j = 0; j < i; j++)
            if (!strcmp(vg->rows[j].site, row->site))
                return pp_rs_invalid(io, w, "site %s twice", row->site);
    }
    return PP_OK;
}

static int write_row(hid_t g, const pp_range_row *row)
{
    hsize_t n = (hsize_t)row->heads;
    int64_t *iv = malloc((size_t)n * sizeof *iv);
    double *fv = malloc((size_t)n * sizeof *fv);
    int rc = !iv || !fv || pp_h5attr_put_vstr(g, "format", row->format) || pp_h5attr_put_vstr(g, "axis", row->axis) ||
             pp_h5attr_put_i64(g, "heads", row->heads);
    for (int k = 0; !rc && k < N_I64; k++) {
        for (hsize_t h = 0; h < n; h++)
            iv[h] = CELL_I64(&row->cells[h], k);
        rc = pp_h5obj_put_dataset(g, I64[k].name, H5T_STD_I64LE, H5T_NATIVE_INT64, 1, &n, iv);
    }
    for (int k = 0; !rc && k < N_F64; k++) {
        for (hsize_t h = 0; h < n; h++)
            fv[h] = CELL_F64(&row->cells[h], k);
        rc = pp_h5obj_put_dataset(g, F64[k].name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, &n, fv);
    }
    for (hsize_t h = 0; !rc && h < n; h++)
        fv[h] = row->cells[h].count ? (double)row->cells[h].near_max / (double)row->cells[h].count : 0.0;
    if (!rc)
        rc = pp_h5obj_put_dataset(g, "headroom", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, &n, fv);
    free(iv);
    free(fv);
    return rc ? -1 : 0;
}

static int write_ranges(const pp_rs_io *io, hid_t loc, const char *where, const char *name, const pp_rs_frame *fr)
{
    const pp_variant_ranges *vg = &((const pp_variant_result *)fr->obj)->ranges;
    if (!vg->recorded && !vg->note[0])
        return PP_OK;
    char w[PP_RS_WHERE_MAX];
    pp_rs_join(w, where, name);
    hid_t g = pp_h5obj_group(loc, name);
    if (g < 0)
        return -1;
    int rc = pp_h5attr_put_i32(g, "recorded", vg->recorded ? 1 : 0) ? -1 : PP_OK;
    if (!rc && vg->note[0] && pp_h5attr_put_vstr(g, "note", vg->note))
        rc = -1;
    for (int i = 0; !rc && i < vg->n_rows; i++) {
        char s[PP_RS_ESC_MAX];
        pp_rs_name_escape(vg->rows[i].site, s);
        hid_t sg = pp_h5obj_group(g, s);
        if (sg < 0 || write_row(sg, &vg->rows[i]))
            rc = pp_rs_write_failed(io, w, s);
        if (sg >= 0 && H5Gclose(sg) < 0 && !rc)
            rc = -1;
    }
    if (H5Gclose(g) < 0 && !rc)
        rc = -1;
    return rc;
}

// A string attribute of any kind into buf[n]; −1 when missing, not a string or too long.
static int get_str(hid_t obj, const char *name, char *buf, size_t n)
{
    char *s = NULL;
    int rc = pp_h5attr_get_str_dup(obj, name, &s) || strlen(s) >= n ? -1 : 0;
    if (!rc)
        memcpy(buf, s, strlen(s) + 1);
    free(s);
    return rc;
}

static int read_row(const pp_rs_io *io, hid_t g, const char *where, pp_range_row *row)
{
    int64_t heads = 0;
    hsize_t n = 0;
    if (get_str(g, "format", row->format, sizeof row->format) || get_str(g, "axis", row->axis, sizeof row->axis) ||
        pp_h5attr_get_num(g, "heads", H5T_INTEGER, H5T_NATIVE_INT64, &heads, 1, NULL) || heads < 1 ||
        heads > ((int64_t)1 << 24))
        return pp_rs_invalid(io, where, "format, axis or heads missing or out of range");
    row->heads = heads;
    if (!(row->cells = calloc((size_t)heads, sizeof *row->cells)))
        return pp_rs_oom(io);
    int64_t *iv = malloc((size_t)heads * sizeof *iv);
    double *fv = malloc((size_t)heads * sizeof *fv);
    int rc = !iv || !fv ? pp_rs_oom(io) : PP_OK;
    for (int k = 0; !rc && k < N_I64; k++) {
        if (pp_h5obj_dataset_dims(g, I64[k].name, H5T_INTEGER, 1, &n) || n != (hsize_t)heads ||
            pp_h5obj_dataset_read(g, I64[k].name, H5T_NATIVE_INT64, iv)) {
            rc = pp_rs_invalid(io, where, "%s: not int64[%lld]", I64[k].name, (long long)heads);
            break;
        }
        for (int64_t h = 0; h < heads; h++) {
            if (iv[h] < 0) {
                rc = pp_rs_invalid(io, where, "%s[%lld] negative", I64[k].name, (long long)h);
                break;
            }
            CELL_I64(&row->cells[h], k) = iv[h];
        }
    }
    for (int k = 0; !rc && k < N_F64; k++) {
        if (pp_h5obj_dataset_dims(g, F64[k].name, H5T_FLOAT, 1, &n) || n != (hsize_t)heads ||
            pp_h5obj_dataset_read(g, F64[k].name, H5T_NATIVE_DOUBLE, fv)) {
            rc = pp_rs_invalid(io, where, "%s: not float64[%lld]", F64[k].name, (long long)heads);
            break;
        }
        for (int64_t h = 0; h < heads; h++)
            CELL_F64(&row->cells[h], k) = fv[h];
    }
    free(iv);
    free(fv);
    return rc;
}

static int read_ranges(const pp_rs_io *io, hid_t loc, const char *where, const char *name, const pp_rs_frame *fr)
{
    pp_variant_ranges *vg = &((pp_variant_result *)fr->obj)->ranges;
    memset(vg, 0, sizeof *vg);
    if (H5Lexists(loc, name, H5P_DEFAULT) <= 0)
        return PP_OK;  // written without --ranges
    char w[PP_RS_WHERE_MAX];
    pp_rs_join(w, where, name);
    hid_t g = H5Gopen2(loc, name, H5P_DEFAULT);
    if (g < 0)
        return pp_rs_invalid(io, w, "not a group");
    int recorded = 0, rc = PP_OK;
    char **names = NULL;
    int n = 0;
    if (pp_h5attr_get_num(g, "recorded", H5T_INTEGER, H5T_NATIVE_INT, &recorded, 1, NULL) ||
        (recorded != 0 && recorded != 1))
        rc = pp_rs_invalid(io, w, "recorded: not 0 or 1");
    if (!rc && H5Aexists(g, "note") > 0 && get_str(g, "note", vg->note, sizeof vg->note))
        rc = pp_rs_invalid(io, w, "note: not a string");
    if (!rc && pp_h5obj_children(g, &names, &n))
        rc = pp_rs_invalid(io, w, "cannot list its sites");
    if (!rc && !(vg->rows = calloc((size_t)(n ? n : 1), sizeof *vg->rows)))
        rc = pp_rs_oom(io);
    for (int i = 0; !rc && i < n; i++) {
        pp_range_row *row = &vg->rows[vg->n_rows++];
        char ws[PP_RS_WHERE_MAX];
        pp_rs_join(ws, w, names[i]);
        if (pp_rs_name_unescape(names[i], row->site, sizeof row->site)) {
            rc = pp_rs_invalid(io, ws, "bad site name");
            break;
        }
        hid_t sg = H5Gopen2(g, names[i], H5P_DEFAULT);
        rc = sg < 0 ? pp_rs_invalid(io, ws, "not a group") : read_row(io, sg, ws, row);
        if (sg >= 0)
            H5Gclose(sg);
    }
    vg->recorded = recorded;
    pp_h5obj_free_names(names, n);
    H5Gclose(g);
    return rc;
}

const pp_rs_hook pp_report_ranges_hook = {check_ranges, write_ranges, read_ranges};
