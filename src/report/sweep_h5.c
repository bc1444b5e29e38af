// sweep_h5.c — sweep.h5 (sweep_h5.h): the root's attributes name the sweep, its keys, the
// statistics and the points; /keys/KEY holds a key's values; /points/NAME a point's comparisons
// (string attributes per comparison, a values matrix and, with --orders, the bands).
#include "report/sweep_h5.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/h5attr.h"
#include "io/h5image.h"
#include "io/h5obj.h"
#include "io/h5quiet.h"

#define SWEEP_FORMAT "precprobe-sweep-1"

// ---- writing ---------------------------------------------------------------------------------

static int put_cells(hid_t g, const pp_sweep_result *res, const pp_sweep_row *row)
{
    int n = row->n_cells, ok = 1, banded = 0;
    const char **names[3];
    for (int f = 0; f < 3; f++)
        names[f] = calloc((size_t)(n ? n : 1), sizeof *names[f]);
    double *values = calloc((size_t)(n ? n : 1) * (size_t)res->n_stats, sizeof *values);
    double *band = calloc((size_t)(n ? n : 1) * (size_t)res->n_stats * 3, sizeof *band);
    int *runs = calloc((size_t)(n ? n : 1), sizeof *runs);
    if (!names[0] || !names[1] || !names[2] || !values || !band || !runs)
        ok = 0;
    for (int c = 0; ok && c < n; c++) {
        const pp_sweep_cell *cell = &row->cells[c];
        names[0][c] = cell->variant;
        names[1][c] = cell->tensor;
        names[2][c] = cell->against;
        runs[c] = cell->band_runs;
        banded |= cell->band_runs > 0;
        for (int k = 0; k < res->n_stats; k++) {
            values[(size_t)c * (size_t)res->n_stats + (size_t)k] = cell->value[k];
            memcpy(&band[((size_t)c * (size_t)res->n_stats + (size_t)k) * 3], cell->band[k], 3 * sizeof(double));
        }
    }
    hsize_t dims[3] = {(hsize_t)n, (hsize_t)res->n_stats, 3};
    ok = ok && !pp_h5attr_put_vstrs(g, "variant", names[0], (size_t)n) &&
         !pp_h5attr_put_vstrs(g, "tensor", names[1], (size_t)n) &&
         !pp_h5attr_put_vstrs(g, "against", names[2], (size_t)n) &&
         !pp_h5attr_put(g, "band_runs", H5T_STD_I32LE, H5T_NATIVE_INT, 1, (size_t)n, runs) &&
         !pp_h5obj_put_dataset(g, "values", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2, dims, values) &&
         (!banded || !pp_h5obj_put_dataset(g, "band", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 3, dims, band));
    for (int f = 0; f < 3; f++)
        free(names[f]);
    free(values);
    free(band);
    free(runs);
    return ok ? 0 : -1;
}

static int put_all(hid_t f, const pp_sweep_result *res)
{
    int ok = !pp_h5attr_put_vstr(f, "format", SWEEP_FORMAT) && !pp_h5attr_put_vstr(f, "case_name", res->case_name) &&
             !pp_h5attr_put_vstr(f, "precprobe_version", res->precprobe_version) &&
             !pp_h5attr_put_vstr(f, "device", res->device);
    const char *names[PP_SWEEP_MAX_POINTS > PP_BAND_MAX_STATS ? PP_SWEEP_MAX_POINTS : PP_BAND_MAX_STATS];
    for (int k = 0; k < res->n_keys; k++)
        names[k] = res->keys[k].name;
    ok = ok && !pp_h5attr_put_vstrs(f, "keys", names, (size_t)res->n_keys);
    for (int k = 0; k < res->n_stats; k++)
        names[k] = res->stat[k];
    ok = ok && !pp_h5attr_put_vstrs(f, "statistics", names, (size_t)res->n_stats);
    for (int i = 0; i < res->n_rows; i++)
        names[i] = res->rows[i].name;
    ok = ok && !pp_h5attr_put_vstrs(f, "points", names, (size_t)res->n_rows);
    hid_t keys = ok ? pp_h5obj_group(f, "keys") : H5I_INVALID_HID;
    ok = ok && keys >= 0;
    for (int k = 0; ok && k < res->n_keys; k++) {
        const pp_sweep_key *key = &res->keys[k];
        hid_t g = pp_h5obj_group(keys, key->name);
        const char *texts[PP_SWEEP_MAX_VALUES];
        for (int j = 0; j < key->n_values; j++)
            texts[j] = key->text[j];
        ok = g >= 0 && !pp_h5attr_put_vstrs(g, "values", texts, (size_t)key->n_values) &&
             !pp_h5attr_put_i32(g, "numeric", key->numeric) &&
             (!key->numeric || !pp_h5attr_put_f64v(g, "numbers", key->number, (size_t)key->n_values));
        if (g >= 0)
            H5Gclose(g);
    }
    if (keys >= 0)
        H5Gclose(keys);
    int *pv = calloc((size_t)(res->n_rows ? res->n_rows : 1) * PP_SWEEP_MAX_KEYS, sizeof *pv);
    ok = ok && pv;
    for (int i = 0; ok && i < res->n_rows; i++)
        for (int k = 0; k < res->n_keys; k++)
            pv[i * res->n_keys + k] = res->rows[i].value[k];
    hsize_t dims[2] = {(hsize_t)res->n_rows, (hsize_t)res->n_keys};
    ok = ok && !pp_h5obj_put_dataset(f, "point_values", H5T_STD_I32LE, H5T_NATIVE_INT, 2, dims, pv);
    free(pv);
    hid_t points = ok ? pp_h5obj_group(f, "points") : H5I_INVALID_HID;
    ok = ok && points >= 0;
    for (int i = 0; ok && i < res->n_rows; i++) {
        hid_t g = pp_h5obj_group(points, res->rows[i].name);
        ok = g >= 0 && !put_cells(g, res, &res->rows[i]);
        if (g >= 0)
            H5Gclose(g);
    }
    if (points >= 0)
        H5Gclose(points);
    return ok ? 0 : -1;
}

// The sweep into the in-memory file f (io/h5image.h); its root keeps the creation order of its
// attributes, as report.h5's groups do.
typedef struct sweep_write {
    const char *path;
    const pp_sweep_result *res;
} sweep_write;

static int fill_sweep(hid_t f, void *ctx, pp_error *err)
{
    const sweep_write *w = ctx;
    if (put_all(f, w->res))
        return pp_fail(err, PP_ERR_RUNTIME, "%s: HDF5 failed to write the sweep", w->path);
    return PP_OK;
}

int pp_sweep_h5_write(const char *path, const pp_sweep_result *res, pp_error *err)
{
    sweep_write w = {path, res};
    return pp_h5_image_write(path, 1, fill_sweep, &w, err);
}

// ---- reading ---------------------------------------------------------------------------------

// A 1-D attribute of strings: at most max, each copied into out[i] (n bytes each); *count of them.
static int get_strs(hid_t obj, const char *name, char *out, size_t n, int max, int *count)
{
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    if (a < 0)
        return -1;
    hid_t sp = H5Aget_space(a), t = pp_h5attr_vstr_type();
    hssize_t np = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
    int ok = sp >= 0 && t >= 0 && np >= 0 && np <= max && H5Sget_simple_extent_ndims(sp) <= 1;
    char **v = ok ? calloc((size_t)(np ? np : 1), sizeof *v) : NULL;
    ok = ok && v && H5Aread(a, t, v) >= 0;
    for (hssize_t i = 0; ok && i < np; i++) {
        ok = v[i] && strlen(v[i]) < n;
        if (ok)
            memcpy(out + (size_t)i * n, v[i], strlen(v[i]) + 1);
    }
    if (v && sp >= 0 && t >= 0)
        H5Dvlen_reclaim(t, sp, H5P_DEFAULT, v);
    free(v);
    if (t >= 0)
        H5Tclose(t);
    if (sp >= 0)
        H5Sclose(sp);
    H5Aclose(a);
    *count = ok ? (int)np : 0;
    return ok ? 0 : -1;
}

static int bad(pp_error *err, const char *path, const char *what)
{
    return pp_fail(err, PP_ERR_INPUT, "%s: not a sweep.h5 of this precprobe (%s)", path, what);
}

static int get_cells(hid_t g, const pp_sweep_result *res, pp_sweep_row *row, const char *path, pp_error *err)
{
    int n = 0, n2, n3;
    char (*names)[PP_NAME_MAX] = calloc(3 * (size_t)PP_SWEEP_MAX_POINTS, PP_NAME_MAX);
    if (!names)
        return pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    int rc = 0;
    if (get_strs(g, "variant", names[0], PP_NAME_MAX, PP_SWEEP_MAX_POINTS, &n) ||
        get_strs(g, "tensor", names[PP_SWEEP_MAX_POINTS], PP_NAME_MAX, PP_SWEEP_MAX_POINTS, &n2) ||
        get_strs(g, "against", names[2 * PP_SWEEP_MAX_POINTS], PP_NAME_MAX, PP_SWEEP_MAX_POINTS, &n3) || n2 != n ||
        n3 != n)
        rc = bad(err, path, "a point's comparison names");
    hsize_t dims[3];
    if (!rc && n && (pp_h5obj_dataset_dims(g, "values", H5T_FLOAT, 2, dims) || dims[0] != (hsize_t)n ||
                     dims[1] != (hsize_t)res->n_stats))
        rc = bad(err, path, "a point's values");
    row->cells = calloc((size_t)(n ? n : 1), sizeof *row->cells);
    double *values = calloc((size_t)(n ? n : 1) * (size_t)res->n_stats * 3, sizeof *values);
    int *runs = calloc((size_t)(n ? n : 1), sizeof *runs);
    if (!rc && (!row->cells || !values || !runs))
        rc = pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    if (!rc && n && pp_h5obj_dataset_read(g, "values", H5T_NATIVE_DOUBLE, values))
        rc = bad(err, path, "a point's values");
    int count = 0;
    if (!rc && n && (pp_h5attr_get_num(g, "band_runs", H5T_INTEGER, H5T_NATIVE_INT, runs, (size_t)n, NULL)))
        rc = bad(err, path, "a point's band_runs");
    for (int c = 0; !rc && c < n; c++) {
        pp_sweep_cell *cell = &row->cells[c];
        snprintf(cell->variant, PP_NAME_MAX, "%s", names[c]);
        snprintf(cell->tensor, PP_NAME_MAX, "%s", names[PP_SWEEP_MAX_POINTS + c]);
        snprintf(cell->against, PP_NAME_MAX, "%s", names[2 * PP_SWEEP_MAX_POINTS + c]);
        for (int k = 0; k < res->n_stats; k++)
            cell->value[k] = values[(size_t)c * (size_t)res->n_stats + (size_t)k];
        cell->band_runs = runs[c];
        count += runs[c] > 0;
    }
    if (!rc && count) {
        if (pp_h5obj_dataset_dims(g, "band", H5T_FLOAT, 3, dims) || dims[0] != (hsize_t)n ||
            dims[1] != (hsize_t)res->n_stats || dims[2] != 3 ||
            pp_h5obj_dataset_read(g, "band", H5T_NATIVE_DOUBLE, values))
            rc = bad(err, path, "a point's band");
        for (int c = 0; !rc && c < n; c++)
            for (int k = 0; k < res->n_stats; k++)
                memcpy(row->cells[c].band[k], &values[((size_t)c * (size_t)res->n_stats + (size_t)k) * 3],
                       3 * sizeof(double));
    }
    row->n_cells = rc ? 0 : n;
    free(names);
    free(values);
    free(runs);
    return rc;
}

static int get_all(hid_t f, pp_sweep_result *res, const char *path, pp_error *err)
{
    char *s = NULL;
    if (pp_h5attr_get_str_dup(f, "format", &s) || strcmp(s, SWEEP_FORMAT)) {
        free(s);
        return bad(err, path, "format is not " SWEEP_FORMAT);
    }
    free(s);
    char *fields[3] = {res->case_name, res->precprobe_version, res->device};
    size_t sizes[3] = {sizeof res->case_name, sizeof res->precprobe_version, sizeof res->device};
    const char *attrs[3] = {"case_name", "precprobe_version", "device"};
    for (int i = 0; i < 3; i++) {
        if (pp_h5attr_get_str_dup(f, attrs[i], &s))
            return bad(err, path, attrs[i]);
        snprintf(fields[i], sizes[i], "%s", s);
        free(s);
    }
    char keys[PP_SWEEP_MAX_KEYS][PP_NAME_MAX];
    if (get_strs(f, "keys", keys[0], PP_NAME_MAX, PP_SWEEP_MAX_KEYS, &res->n_keys))
        return bad(err, path, "keys");
    if (get_strs(f, "statistics", res->stat[0], PP_NAME_MAX, PP_BAND_MAX_STATS, &res->n_stats))
        return bad(err, path, "statistics");
    for (int k = 0; k < res->n_keys; k++) {
        pp_sweep_key *key = &res->keys[k];
        snprintf(key->name, sizeof key->name, "%s", keys[k]);
        char where[PP_NAME_MAX + 8];
        snprintf(where, sizeof where, "keys/%s", key->name);
        hid_t g = H5Gopen2(f, where, H5P_DEFAULT);
        int ok = g >= 0 && !get_strs(g, "values", key->text[0], PP_NAME_MAX, PP_SWEEP_MAX_VALUES, &key->n_values) &&
                 !pp_h5attr_get_num(g, "numeric", H5T_INTEGER, H5T_NATIVE_INT, &key->numeric, 1, NULL) &&
                 (!key->numeric || !pp_h5attr_get_num(g, "numbers", H5T_FLOAT, H5T_NATIVE_DOUBLE, key->number,
                                                      (size_t)key->n_values, NULL));
        if (g >= 0)
            H5Gclose(g);
        if (!ok)
            return bad(err, path, where);
    }
    char(*names)[PP_SWEEP_NAME_MAX] = calloc(PP_SWEEP_MAX_POINTS, PP_SWEEP_NAME_MAX);
    int n = 0;
    if (!names)
        return pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    int rc = get_strs(f, "points", names[0], PP_SWEEP_NAME_MAX, PP_SWEEP_MAX_POINTS, &n) ? bad(err, path, "points") : 0;
    hsize_t dims[2];
    int *pv = rc ? NULL : calloc((size_t)(n ? n : 1) * PP_SWEEP_MAX_KEYS, sizeof *pv);
    res->rows = rc ? NULL : calloc((size_t)(n ? n : 1), sizeof *res->rows);
    if (!rc && (!pv || !res->rows))
        rc = pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    if (!rc && n && res->n_keys &&
        (pp_h5obj_dataset_dims(f, "point_values", H5T_INTEGER, 2, dims) || dims[0] != (hsize_t)n ||
         dims[1] != (hsize_t)res->n_keys || pp_h5obj_dataset_read(f, "point_values", H5T_NATIVE_INT, pv)))
        rc = bad(err, path, "point_values");
    for (int i = 0; !rc && i < n; i++) {
        pp_sweep_row *row = &res->rows[i];
        snprintf(row->name, sizeof row->name, "%s", names[i]);
        for (int k = 0; k < res->n_keys; k++) {
            row->value[k] = pv[i * res->n_keys + k];
            if (row->value[k] < 0 || row->value[k] >= res->keys[k].n_values)
                rc = bad(err, path, "point_values out of range");
        }
        char where[PP_SWEEP_NAME_MAX + 8];
        snprintf(where, sizeof where, "points/%s", row->name);
        hid_t g = rc ? H5I_INVALID_HID : H5Gopen2(f, where, H5P_DEFAULT);
        if (!rc && g < 0)
            rc = bad(err, path, where);
        res->n_rows++;
        if (!rc)
            rc = get_cells(g, res, row, path, err);
        if (g >= 0)
            H5Gclose(g);
    }
    free(pv);
    free(names);
    return rc;
}

int pp_sweep_h5_read(const char *path, pp_sweep_result *res, pp_error *err)
{
    memset(res, 0, sizeof *res);
    pp_h5_quiet q;
    pp_h5_quiet_begin(&q);
    int rc;
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        rc = pp_fail(err, PP_ERR_INPUT, "%s: not an HDF5 file (or unreadable)", path);
    } else {
        rc = get_all(f, res, path, err);
        H5Fclose(f);
    }
    pp_h5_quiet_end(&q);
    return rc;
}
