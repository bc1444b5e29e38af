// report_schema_stats_hooks.c — a comparison's items of report.h5 that are not one field each:
// the torch version, statistics derived for other readers, the ulp histogram, the exact sums and
// the per-axis error. Each hook's frame holds a cmp_rec (report_schema_hooks.h).
#include "report/report_schema_hooks.h"

#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/statistic.h"
#include "io/h5attr.h"
#include "io/h5obj.h"
#include "io/tensor_io.h"

// The exact sums' counters stored beside the limbs, one row per sum.
enum { SUM_COUNTERS = 4 };

static const char *const SUM_ROWS[2] = {"sum_abs", "sum_sq"};
static const char *const SUM_COUNTER_NAMES[SUM_COUNTERS] = {"pending", "n_pinf", "n_ninf", "n_nan"};

// ---------------------------------------------------------------------------------------------
// Comparison hooks

// The multi-index of flat index i in a row-major shape; all -1 when i < 0.
static void unravel(int ndim, const int64_t *shape, int64_t i, int64_t *idx)
{
    for (int d = ndim - 1; d >= 0; d--) {
        if (i < 0 || shape[d] <= 0) {
            idx[d] = -1;
        } else {
            idx[d] = i % shape[d];
            i /= shape[d];
        }
    }
}

// <statistic>_index: a maximum's flat index as a multi-index, for other readers (derived).
static int write_multi_index(const pp_rs_io *io, hid_t loc, const char *where, const char *name,
                             const pp_rs_frame *fr)
{
    (void)io, (void)where;
    const pp_close_max *m = fr->obj;
    const pp_comparison *c = &((const cmp_rec *)fr->up->obj)->c;
    int64_t idx[PP_MAX_DIMS];
    unravel(c->ndim, c->shape, m->index, idx);
    return pp_h5attr_put_i64v(loc, name, idx, (size_t)c->ndim);
}

const pp_rs_hook pp_report_multi_index_hook = {NULL, write_multi_index, NULL};

// torch_version: "MAJOR.MINOR", a version whose semantics precprobe knows (>= 1.10).
static int check_torch_version(const pp_rs_io *io, const char *where, const char *name, const pp_rs_frame *fr)
{
    const pp_close_opts *o = &((const cmp_rec *)fr->obj)->c.opts;
    char tv[32];
    int major, minor;
    snprintf(tv, sizeof tv, "%d.%d", o->torch_major, o->torch_minor);
    return pp_parse_torch_version(tv, &major, &minor) ? pp_rs_invalid(io, where, "%s %s is not a torch version "
                                                                      "precprobe knows", name, tv)
                                                      : PP_OK;
}

static int write_torch_version(const pp_rs_io *io, hid_t loc, const char *where, const char *name,
                               const pp_rs_frame *fr)
{
    (void)io, (void)where;
    const pp_close_opts *o = &((const cmp_rec *)fr->obj)->c.opts;
    char tv[32];
    snprintf(tv, sizeof tv, "%d.%d", o->torch_major, o->torch_minor);
    return pp_h5attr_put_vstr(loc, name, tv);
}

static int read_torch_version(const pp_rs_io *io, hid_t loc, const char *where, const char *name,
                              const pp_rs_frame *fr)
{
    pp_close_opts *o = &((cmp_rec *)fr->obj)->c.opts;
    char *tv, shown[40];
    if (pp_h5attr_get_str_dup(loc, name, &tv))
        return pp_rs_invalid(io, where, "attribute %s missing or not a string", name);
    int bad = pp_parse_torch_version(tv, &o->torch_major, &o->torch_minor);
    if (bad)
        pp_rs_invalid(io, where, "bad %s '%s'", name, pp_printable(tv, shown, sizeof shown));
    free(tv);
    return bad ? PP_ERR_INPUT : PP_OK;
}

const pp_rs_hook pp_report_torch_version_hook = {check_torch_version, write_torch_version, read_torch_version};

// Derived statistics, stored for other readers only: the read rebuilds them from the counts and
// the exact sums.
static int write_mismatch_fraction(const pp_rs_io *io, hid_t loc, const char *where, const char *name,
                                   const pp_rs_frame *fr)
{
    (void)io, (void)where;
    const pp_close_stats *s = &((const cmp_rec *)fr->obj)->c.stats;
    return pp_h5attr_put_f64(loc, name, s->numel > 0 ? (double)s->mismatched / (double)s->numel : NAN);
}

static int write_mean_abs(const pp_rs_io *io, hid_t loc, const char *where, const char *name, const pp_rs_frame *fr)
{
    (void)io, (void)where;
    return pp_h5attr_put_f64(loc, name, pp_close_stats_mean_abs(&((const cmp_rec *)fr->obj)->c.stats));
}

static int write_rms(const pp_rs_io *io, hid_t loc, const char *where, const char *name, const pp_rs_frame *fr)
{
    (void)io, (void)where;
    return pp_h5attr_put_f64(loc, name, pp_close_stats_rms(&((const cmp_rec *)fr->obj)->c.stats));
}

const pp_rs_hook pp_report_mismatch_fraction_hook = {NULL, write_mismatch_fraction, NULL};
const pp_rs_hook pp_report_mean_abs_hook = {NULL, write_mean_abs, NULL};
const pp_rs_hook pp_report_rms_hook = {NULL, write_rms, NULL};

// The ulp histogram with its bins described two ways: labels as the text report prints them,
// and each bin's upper edge in ulps (bin 0 holds exactly 0; the last two are "above 2^20" and
// "a NaN or unequal infinite operand").
static int write_histogram(const pp_rs_io *io, hid_t loc, const char *where, const char *name,
                           const pp_rs_frame *fr)
{
    (void)io, (void)where;
    const pp_close_stats *s = &((const cmp_rec *)fr->obj)->c.stats;
    hsize_t n = PP_CLOSE_ULP_BINS;
    hid_t ds = pp_h5obj_dataset(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, 1, &n, s->ulp_hist);
    if (ds < 0)
        return -1;
    char labels[PP_CLOSE_ULP_BINS][24];
    const char *lp[PP_CLOSE_ULP_BINS];
    double edges[PP_CLOSE_ULP_BINS];
    for (int k = 0; k < PP_CLOSE_ULP_BINS; k++) {
        if (k == PP_CLOSE_BIN_EQUAL)
            snprintf(labels[k], sizeof labels[k], "0"), edges[k] = 0.0;
        else if (k == PP_CLOSE_BIN_HUGE)
            snprintf(labels[k], sizeof labels[k], ">%ld", 1L << 20), edges[k] = INFINITY;
        else if (k == PP_CLOSE_BIN_NONFINITE)
            snprintf(labels[k], sizeof labels[k], "nan/inf"), edges[k] = NAN;
        else if (k == 1)
            snprintf(labels[k], sizeof labels[k], "<=0.5"), edges[k] = 0.5;
        else
            snprintf(labels[k], sizeof labels[k], "<=%ld", 1L << (k - 2)), edges[k] = ldexp(1.0, k - 2);
        lp[k] = labels[k];
    }
    int bad = pp_h5attr_put_vstrs(ds, "bin_labels", lp, PP_CLOSE_ULP_BINS) ||
              pp_h5attr_put_f64v(ds, "bin_upper_edges", edges, PP_CLOSE_ULP_BINS) ||
              pp_h5attr_put_vstr(ds, "unit", "|actual - expected| / ulp(expected) in actual_format");
    if (H5Dclose(ds) < 0)
        bad = 1;
    return bad ? -1 : 0;
}

// An integer dataset of exactly rows x cols values (rows 0: 1-D, cols values) into out.
static int get_int_table(hid_t loc, const char *name, hid_t mtype, hsize_t rows, hsize_t cols, void *out)
{
    hsize_t dims[2];
    int rank = rows ? 2 : 1;
    return pp_h5obj_dataset_dims(loc, name, H5T_INTEGER, rank, dims) ||
                   (rows ? dims[0] != rows || dims[1] != cols : dims[0] != cols) ||
                   pp_h5obj_dataset_read(loc, name, mtype, out)
               ? -1
               : 0;
}

static int read_histogram(const pp_rs_io *io, hid_t loc, const char *where, const char *name, const pp_rs_frame *fr)
{
    pp_close_stats *s = &((cmp_rec *)fr->obj)->c.stats;
    return get_int_table(loc, name, H5T_NATIVE_INT64, 0, PP_CLOSE_ULP_BINS, s->ulp_hist)
               ? pp_rs_invalid(io, where, "%s missing or not %d integers", name, PP_CLOSE_ULP_BINS)
               : PP_OK;
}

const pp_rs_hook pp_report_histogram_hook = {NULL, write_histogram, read_histogram};

// The two exact accumulators as they are in memory, limbs (exact_sums) and counters
// (exact_sum_counters), so the read gives back the same structs and so the same mean and RMS.
static int write_exact_sums(const pp_rs_io *io, hid_t loc, const char *where, const char *name,
                            const pp_rs_frame *fr)
{
    (void)io, (void)where;
    const pp_close_stats *s = &((const cmp_rec *)fr->obj)->c.stats;
    int64_t limbs[2][PP_EXACTSUM_LIMBS];
    memcpy(limbs[0], s->sum_abs.limb, sizeof limbs[0]);
    memcpy(limbs[1], s->sum_sq.limb, sizeof limbs[1]);
    hsize_t dims[2] = {2, PP_EXACTSUM_LIMBS};
    hid_t ds = pp_h5obj_dataset(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, 2, dims, limbs);
    if (ds < 0)
        return -1;
    int bad = pp_h5attr_put_vstrs(ds, "rows", SUM_ROWS, 2) || pp_h5attr_put_i64(ds, "lsb_exponent", PP_EXACTSUM_LSB) ||
              pp_h5attr_put_i64(ds, "digit_bits", 32);
    if (H5Dclose(ds) < 0)
        bad = 1;
    return bad ? -1 : 0;
}

static int read_exact_sums(const pp_rs_io *io, hid_t loc, const char *where, const char *name, const pp_rs_frame *fr)
{
    pp_close_stats *s = &((cmp_rec *)fr->obj)->c.stats;
    int64_t limbs[2][PP_EXACTSUM_LIMBS];
    if (get_int_table(loc, name, H5T_NATIVE_INT64, 2, PP_EXACTSUM_LIMBS, limbs))
        return pp_rs_invalid(io, where, "%s missing or not 2 x %d integers", name, PP_EXACTSUM_LIMBS);
    memcpy(s->sum_abs.limb, limbs[0], sizeof limbs[0]);
    memcpy(s->sum_sq.limb, limbs[1], sizeof limbs[1]);
    return PP_OK;
}

static int write_sum_counters(const pp_rs_io *io, hid_t loc, const char *where, const char *name,
                              const pp_rs_frame *fr)
{
    (void)io, (void)where;
    const pp_close_stats *s = &((const cmp_rec *)fr->obj)->c.stats;
    const pp_exactsum *sum[2] = {&s->sum_abs, &s->sum_sq};
    uint64_t counts[2][SUM_COUNTERS];
    for (int k = 0; k < 2; k++) {
        counts[k][0] = sum[k]->pending;
        counts[k][1] = sum[k]->n_pinf;
        counts[k][2] = sum[k]->n_ninf;
        counts[k][3] = sum[k]->n_nan;
    }
    hsize_t dims[2] = {2, SUM_COUNTERS};
    hid_t ds = pp_h5obj_dataset(loc, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, 2, dims, counts);
    if (ds < 0)
        return -1;
    int bad = pp_h5attr_put_vstrs(ds, "rows", SUM_ROWS, 2) ||
              pp_h5attr_put_vstrs(ds, "columns", SUM_COUNTER_NAMES, SUM_COUNTERS);
    if (H5Dclose(ds) < 0)
        bad = 1;
    return bad ? -1 : 0;
}

static int read_sum_counters(const pp_rs_io *io, hid_t loc, const char *where, const char *name,
                             const pp_rs_frame *fr)
{
    pp_close_stats *s = &((cmp_rec *)fr->obj)->c.stats;
    pp_exactsum *sum[2] = {&s->sum_abs, &s->sum_sq};
    uint64_t counts[2][SUM_COUNTERS];
    if (get_int_table(loc, name, H5T_NATIVE_UINT64, 2, SUM_COUNTERS, counts))
        return pp_rs_invalid(io, where, "%s missing or not 2 x %d integers", name, SUM_COUNTERS);
    for (int k = 0; k < 2; k++) {
        // pending counts additions since a carry pass, which comes before 2^30 of them.
        if (counts[k][0] >= (1u << 30))
            return pp_rs_invalid(io, where, "%s: pending %llu out of range", name, (unsigned long long)counts[k][0]);
        sum[k]->pending = (uint32_t)counts[k][0];
        sum[k]->n_pinf = counts[k][1];
        sum[k]->n_ninf = counts[k][2];
        sum[k]->n_nan = counts[k][3];
    }
    return PP_OK;
}

const pp_rs_hook pp_report_exact_sums_hook = {NULL, write_exact_sums, read_exact_sums};
const pp_rs_hook pp_report_sum_counters_hook = {NULL, write_sum_counters, read_sum_counters};

// The per-axis error (src/core/axis_stats.h), when the op declares axes: by_position (2 x P: max,
// mean) and by_head_block (H x B), the axes and the block width as attributes of by_head_block.
static int write_axes(const pp_rs_io *io, hid_t loc, const char *where, const char *name, const pp_rs_frame *fr)
{
    (void)io, (void)where, (void)name;
    const pp_axis_stats *x = &((const cmp_rec *)fr->obj)->c.axes;
    if (x->n_pos <= 0)
        return 0;
    double *pos = malloc(sizeof(double) * 2 * (size_t)x->n_pos);
    if (!pos)
        return -1;
    memcpy(pos, x->pos_max, sizeof(double) * (size_t)x->n_pos);
    memcpy(pos + x->n_pos, x->pos_mean, sizeof(double) * (size_t)x->n_pos);
    hsize_t d1[2] = {2, (hsize_t)x->n_pos}, d2[2] = {(hsize_t)x->n_heads, (hsize_t)x->n_blocks};
    static const char *const rows[2] = {"max_abs_error", "mean_abs_error"};
    hid_t ds = pp_h5obj_dataset(loc, "by_position", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2, d1, pos);
    free(pos);
    if (ds < 0)
        return -1;
    int bad = pp_h5attr_put_vstrs(ds, "rows", rows, 2) || pp_h5attr_put_i64(ds, "pos_dim", x->pos_dim);
    if (H5Dclose(ds) < 0)
        bad = 1;
    ds = bad ? H5I_INVALID_HID
             : pp_h5obj_dataset(loc, "by_head_block", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2, d2, x->head_block_max);
    if (ds < 0)
        return -1;
    bad = pp_h5attr_put_i64(ds, "block", x->block) || pp_h5attr_put_i64(ds, "head_dim", x->head_dim) ||
          pp_h5attr_put_i64(ds, "pos_dim", x->pos_dim);
    if (H5Dclose(ds) < 0)
        bad = 1;
    return bad ? -1 : 0;
}

// Absent (an older report, or an op without axes): the comparison has no per-axis data.
static int read_axes(const pp_rs_io *io, hid_t g, const char *where, const char *name, const pp_rs_frame *fr)
{
    (void)name;
    pp_axis_stats *x = &((cmp_rec *)fr->obj)->c.axes;
    if (H5Lexists(g, "by_position", H5P_DEFAULT) <= 0)
        return PP_OK;
    hsize_t dp[2], dh[2];
    int64_t block, pos_dim, head_dim;
    hid_t hb = H5Lexists(g, "by_head_block", H5P_DEFAULT) > 0 ? H5Dopen2(g, "by_head_block", H5P_DEFAULT)
                                                              : H5I_INVALID_HID;
    int ok = hb >= 0 && !pp_h5attr_get_num(hb, "block", H5T_INTEGER, H5T_NATIVE_INT64, &block, 1, NULL) &&
             !pp_h5attr_get_num(hb, "pos_dim", H5T_INTEGER, H5T_NATIVE_INT64, &pos_dim, 1, NULL) &&
             !pp_h5attr_get_num(hb, "head_dim", H5T_INTEGER, H5T_NATIVE_INT64, &head_dim, 1, NULL);
    if (hb >= 0)
        H5Dclose(hb);
    if (!ok || pp_h5obj_dataset_dims(g, "by_position", H5T_FLOAT, 2, dp) ||
        pp_h5obj_dataset_dims(g, "by_head_block", H5T_FLOAT, 2, dh) || dp[0] != 2 || pos_dim < -1 ||
        pos_dim >= PP_MAX_DIMS || head_dim < -1 || head_dim >= PP_MAX_DIMS || dp[1] > ((hsize_t)1 << 40) ||
        dh[0] > ((hsize_t)1 << 24) || dh[1] > PP_AXIS_MAX_BLOCKS ||
        pp_axis_stats_alloc(x, (int64_t)dp[1], (int64_t)dh[0], block, (int64_t)dh[1]))
        return pp_rs_invalid(io, where, "by_position (2 x P) and by_head_block (H x B, attributes block, pos_dim, "
                             "head_dim) missing, mis-shaped or inconsistent");
    x->pos_dim = (int)pos_dim;
    x->head_dim = (int)head_dim;
    double *pos = malloc(sizeof(double) * 2 * dp[1]);
    if (!pos || pp_h5obj_dataset_read(g, "by_position", H5T_NATIVE_DOUBLE, pos) ||
        pp_h5obj_dataset_read(g, "by_head_block", H5T_NATIVE_DOUBLE, x->head_block_max)) {
        free(pos);
        pp_axis_stats_free(x);
        return pos ? pp_rs_invalid(io, where, "by_position or by_head_block unreadable") : pp_rs_oom(io);
    }
    memcpy(x->pos_max, pos, sizeof(double) * dp[1]);
    memcpy(x->pos_mean, pos + dp[1], sizeof(double) * dp[1]);
    free(pos);
    return PP_OK;
}

const pp_rs_hook pp_report_axes_hook = {NULL, write_axes, read_axes};

// --orders: order_band_runs (the runs) and <statistic>_band = [min, median, max] for each
// statistic of the table (src/core/statistic.h), only on a comparison that has a band; absent in
// other reports (read as no band).
static int write_bands(const pp_rs_io *io, hid_t loc, const char *where, const char *name, const pp_rs_frame *fr)
{
    (void)io, (void)where, (void)name;
    const pp_comparison *c = &((const cmp_rec *)fr->obj)->c;
    if (!c->band_runs)
        return 0;
    int bad = pp_h5attr_put_i64(loc, "order_band_runs", c->band_runs);
    for (int k = 0; !bad && k < c->n_band_stats && k < pp_statistic_count(); k++) {
        char an[96];
        snprintf(an, sizeof an, "%s_band", pp_statistic_at(k)->name);
        bad = pp_h5attr_put_f64v(loc, an, c->band[k], 3);
    }
    return bad ? -1 : 0;
}

static int read_bands(const pp_rs_io *io, hid_t loc, const char *where, const char *name, const pp_rs_frame *fr)
{
    (void)name;
    pp_comparison *c = &((cmp_rec *)fr->obj)->c;
    int64_t runs;
    c->band_runs = c->n_band_stats = 0;
    if (H5Aexists(loc, "order_band_runs") <= 0)
        return PP_OK;
    if (pp_h5attr_get_num(loc, "order_band_runs", H5T_INTEGER, H5T_NATIVE_INT64, &runs, 1, NULL) || runs < 1 ||
        runs > 1001)
        return pp_rs_invalid(io, where, "order_band_runs missing or not from 1 to 1001");
    int n = 0;
    for (int k = 0; k < pp_statistic_count() && k < PP_BAND_MAX_STATS; k++) {
        char an[96];
        snprintf(an, sizeof an, "%s_band", pp_statistic_at(k)->name);
        if (H5Aexists(loc, an) <= 0)
            break;  // a report from an older statistic table: the bands it has
        if (pp_h5attr_get_num(loc, an, H5T_FLOAT, H5T_NATIVE_DOUBLE, c->band[k], 3, NULL))
            return pp_rs_invalid(io, where, "%s not 3 numbers", an);
        n = k + 1;
    }
    c->band_runs = (int)runs;
    c->n_band_stats = n;
    return PP_OK;
}

const pp_rs_hook pp_report_bands_hook = {NULL, write_bands, read_bands};

// Which statistics of the table the group records (core/statistic.h, pp_statistic_stored): a
// report written before a statistic existed lacks its attributes, and reading it back as 0 would
// let a gate rule on it pass. Nothing is written: the attributes themselves are the record.
static int stored_item_present(void *ctx, const char *item)
{
    hid_t loc = *(const hid_t *)ctx;
    return H5Aexists(loc, item) > 0 || H5Lexists(loc, item, H5P_DEFAULT) > 0;
}

static int read_recorded(const pp_rs_io *io, hid_t loc, const char *where, const char *name, const pp_rs_frame *fr)
{
    (void)io, (void)where, (void)name;
    ((cmp_rec *)fr->obj)->c.unrecorded = pp_statistic_unrecorded_mask(stored_item_present, &loc);
    return PP_OK;
}

const pp_rs_hook pp_report_recorded_hook = {NULL, NULL, read_recorded};
