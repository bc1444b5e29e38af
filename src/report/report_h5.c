// report_h5.c — report.h5 as tables (report_schema.h): one table per group of the layout in
// reports/README.md, walked to check a pp_run_result, write it and read it back. What the kinds
// do not describe is a hook in its place in a table (report_schema_hooks.h: kept tensors, knobs,
// the torch version, derived statistics, exact sums, per-axis error); the comparisons, which
// live inside the variants' groups but form one list of the run, are the hook at the end of
// this file's first part.
#include "report/report_h5.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/h5image.h"
#include "io/h5obj.h"
#include "io/h5quiet.h"
#include "io/tensor_io.h"
#include "report/ranges_h5.h"
#include "report/explain_h5.h"
#include "report/report_schema.h"
#include "report/report_schema_hooks.h"

// ---------------------------------------------------------------------------------------------
// The tables

static const pp_rs_table no_fields = {NULL, 0, NULL, NULL};

// pp_close_max as <prefix>, <prefix>_flat_index, <prefix>_index, <prefix>_actual, <prefix>_expected.
#define M(member) offsetof(pp_close_max, member)
static const pp_rs_field max_fields[] = {
    {.name = "", .kind = PP_RS_F64, .off = M(value)},
    {.name = "_flat_index", .kind = PP_RS_I64, .off = M(index)},
    {.name = "_index", .kind = PP_RS_HOOK, .hook = &pp_report_multi_index_hook},
    {.name = "_actual", .kind = PP_RS_F64, .off = M(actual)},
    {.name = "_expected", .kind = PP_RS_F64, .off = M(expected)},
};
#undef M
static const pp_rs_table max_table = PP_RS_TABLE(max_fields, NULL, NULL);

// Before a read: the statistics empty (max_abs_error stays "none" in reports older than it) and
// no per-axis data.
static void comparison_init(void *obj)
{
    pp_comparison *c = &((cmp_rec *)obj)->c;
    pp_close_stats_init(&c->stats);
    memset(&c->axes, 0, sizeof c->axes);
    c->axes.pos_dim = c->axes.head_dim = -1;
}

// What the text needs to be safe with: counts within the tensor, indices inside the shape.
static int comparison_consistent(const pp_rs_io *io, const char *where, const pp_rs_frame *fr)
{
    const pp_comparison *c = &((const cmp_rec *)fr->obj)->c;
    const pp_close_stats *s = &c->stats;
    int64_t prod;
    pp_error e2;
    if (pp_shape_numel(c->ndim, c->shape, &prod, &e2))
        return pp_rs_invalid(io, where, "bad shape: %s", e2.msg);
    if (s->numel < 0 || s->mismatched < 0 || s->mismatched > s->numel || s->n_finite < 0 || s->n_finite > s->numel)
        return pp_rs_invalid(io, where, "inconsistent counts (total %lld, mismatched %lld, n_finite %lld)",
                             (long long)s->numel, (long long)s->mismatched, (long long)s->n_finite);
    const pp_close_max *m[5] = {&s->abs_diff, &s->rel_diff, &s->tol_ratio, &s->ulp_err, &s->abs_err};
    for (int k = 0; k < 5; k++)
        if (m[k]->index < -1 || m[k]->index >= prod)
            return pp_rs_invalid(io, where, "flat index %lld outside the shape", (long long)m[k]->index);
    return PP_OK;
}

// /variants/<v>/stats/<tensor>/<against>
#define C(member) offsetof(cmp_rec, c.member)
static const pp_rs_field comparison_fields[] = {
    {.name = "order", .kind = PP_RS_I64, .off = offsetof(cmp_rec, order)},
    {.name = "shape", .kind = PP_RS_I64_VEC, .off = C(shape), .size = PP_MAX_DIMS, .count = C(ndim)},
    {.name = "actual_format", .kind = PP_RS_FORMAT, .off = C(opts.actual_format)},
    {.name = "expected_format", .kind = PP_RS_FORMAT, .off = C(opts.expected_format)},
    {.name = "rtol", .kind = PP_RS_F64, .flags = PP_RS_NONNEG, .off = C(opts.rtol)},
    {.name = "atol", .kind = PP_RS_F64, .flags = PP_RS_NONNEG, .off = C(opts.atol)},
    {.name = "equal_nan", .kind = PP_RS_BOOL, .off = C(opts.equal_nan)},
    {.name = "torch_version", .kind = PP_RS_HOOK, .hook = &pp_report_torch_version_hook},
    {.name = "total", .kind = PP_RS_I64, .off = C(stats.numel)},
    {.name = "mismatched", .kind = PP_RS_I64, .off = C(stats.mismatched)},
    {.name = "mismatch_fraction", .kind = PP_RS_HOOK, .hook = &pp_report_mismatch_fraction_hook},
    {.name = "max_abs_diff", .kind = PP_RS_SUB, .off = C(stats.abs_diff), .sub = &max_table},
    {.name = "max_rel_diff", .kind = PP_RS_SUB, .off = C(stats.rel_diff), .sub = &max_table},
    {.name = "worst_tolerance_ratio", .kind = PP_RS_SUB, .off = C(stats.tol_ratio), .sub = &max_table},
    {.name = "max_ulp", .kind = PP_RS_SUB, .off = C(stats.ulp_err), .sub = &max_table},
    // absent in reports written before it existed (older baselines)
    {.name = "max_abs_error", .kind = PP_RS_SUB, .flags = PP_RS_OPTIONAL, .off = C(stats.abs_err),
     .sub = &max_table},
    // absent in reports written before it existed: max_ulp_at_scale is then unknown (NaN)
    {.name = "ulp_scale", .kind = PP_RS_F64, .flags = PP_RS_OPTIONAL, .off = C(stats.ulp_scale)},
    {.name = "n_finite", .kind = PP_RS_I64, .off = C(stats.n_finite)},
    {.name = "mean_abs", .kind = PP_RS_HOOK, .hook = &pp_report_mean_abs_hook},
    {.name = "rms", .kind = PP_RS_HOOK, .hook = &pp_report_rms_hook},
    {.name = "nan_count", .kind = PP_RS_I64, .off = C(stats.nan_actual)},
    {.name = "inf_count", .kind = PP_RS_I64, .off = C(stats.inf_actual)},
    {.name = "nan_count_expected", .kind = PP_RS_I64, .off = C(stats.nan_expected)},
    {.name = "inf_count_expected", .kind = PP_RS_I64, .off = C(stats.inf_expected)},
    {.name = "ulp_histogram", .kind = PP_RS_HOOK, .hook = &pp_report_histogram_hook},
    {.name = "exact_sums", .kind = PP_RS_HOOK, .hook = &pp_report_exact_sums_hook},
    {.name = "exact_sum_counters", .kind = PP_RS_HOOK, .hook = &pp_report_sum_counters_hook},
    {.name = "by_position, by_head_block", .kind = PP_RS_HOOK, .flags = PP_RS_OPTIONAL,
     .hook = &pp_report_axes_hook},
    // --orders only: absent in other reports
    {.name = "order_band_runs, <statistic>_band", .kind = PP_RS_HOOK, .flags = PP_RS_OPTIONAL,
     .hook = &pp_report_bands_hook},
    // read only: the statistics an older report did not record (pp_comparison.unrecorded)
    {.name = "<statistic>", .kind = PP_RS_HOOK, .flags = PP_RS_OPTIONAL, .hook = &pp_report_recorded_hook},
    {.name = "order_verdict_partners, <statistic>_order_verdict", .kind = PP_RS_HOOK, .flags = PP_RS_OPTIONAL,
     .hook = &pp_report_order_verdict_hook},
};
#undef C
static const pp_rs_table comparison_table = PP_RS_TABLE(comparison_fields, comparison_init, comparison_consistent);

// ---------------------------------------------------------------------------------------------
// The comparisons: one list in the run, stored as /variants/<v>/stats/<tensor>/<against> with
// their order, so they are checked, written and read from the run's level.

static int check_comparisons(const pp_rs_io *io, const char *where, const char *name, const pp_rs_frame *fr)
{
    (void)where;
    const pp_run_result *r = fr->obj;
    char sh[PP_NAME_MAX + 8], ev[PP_RS_ESC_MAX], et[PP_RS_ESC_MAX], ea[PP_RS_ESC_MAX], wc[PP_RS_WHERE_MAX];
    if (r->n_comparisons < 0 || (r->n_comparisons && !r->comparisons))
        return pp_rs_invalid(io, "/variants", "%d %s without their array", r->n_comparisons, name);
    for (int i = 0; i < r->n_comparisons; i++) {
        const pp_comparison *c = &r->comparisons[i];
        if (!memchr(c->variant, '\0', PP_NAME_MAX) || !memchr(c->tensor, '\0', PP_NAME_MAX) ||
            !memchr(c->against, '\0', PP_NAME_MAX) || pp_rs_name_escape(c->variant, ev) ||
            pp_rs_name_escape(c->tensor, et) || pp_rs_name_escape(c->against, ea))
            return pp_rs_invalid(io, "/variants", "comparison %d has an empty name", i);
        int found = 0;
        for (int v = 0; v < r->n_variants && !found; v++)
            found = !strcmp(r->variants[v].name, c->variant);
        if (!found)
            return pp_rs_invalid(io, "/variants", "comparison %d names variant '%s', which the run does not have", i,
                                 pp_printable(c->variant, sh, sizeof sh));
        snprintf(wc, sizeof wc, "/variants/%s/stats/%s/%s", ev, et, ea);
        cmp_rec rec = {i, *c};
        pp_rs_frame cf = {&rec, i, fr};
        int rc = pp_rs_check(io, wc, &comparison_table, &cf);
        if (rc)
            return rc;
    }
    return PP_OK;
}

static int write_comparison(const pp_rs_io *io, hid_t vars, const pp_comparison *c, int i, const pp_rs_frame *fr)
{
    char ev[PP_RS_ESC_MAX], et[PP_RS_ESC_MAX], ea[PP_RS_ESC_MAX], wc[PP_RS_WHERE_MAX];
    pp_rs_name_escape(c->variant, ev);
    pp_rs_name_escape(c->tensor, et);
    pp_rs_name_escape(c->against, ea);
    snprintf(wc, sizeof wc, "/variants/%s/stats/%s/%s", ev, et, ea);
    int rc = PP_OK;
    hid_t v = H5I_INVALID_HID, st = H5I_INVALID_HID, t = H5I_INVALID_HID, a = H5I_INVALID_HID;
    if ((v = H5Gopen2(vars, ev, H5P_DEFAULT)) < 0 || (st = H5Gopen2(v, "stats", H5P_DEFAULT)) < 0 ||
        (t = H5Lexists(st, et, H5P_DEFAULT) > 0 ? H5Gopen2(st, et, H5P_DEFAULT) : pp_h5obj_group(st, et)) < 0) {
        rc = pp_rs_write_failed(io, wc, "its group");
    } else if (H5Lexists(t, ea, H5P_DEFAULT) > 0) {
        rc = pp_fail(io->err, PP_ERR_INPUT, "%s: two comparisons %s", io->path, wc);
    } else if ((a = pp_h5obj_group(t, ea)) < 0) {
        rc = pp_rs_write_failed(io, wc, "its group");
    } else {
        cmp_rec rec = {i, *c};
        pp_rs_frame cf = {&rec, i, fr};
        rc = pp_rs_write(io, a, wc, &comparison_table, &cf);
    }
    if (a >= 0 && H5Gclose(a) < 0 && !rc)
        rc = pp_rs_write_failed(io, wc, "its group");
    if (t >= 0)
        H5Gclose(t);
    if (st >= 0)
        H5Gclose(st);
    if (v >= 0)
        H5Gclose(v);
    return rc;
}

static int write_comparisons(const pp_rs_io *io, hid_t loc, const char *where, const char *name,
                             const pp_rs_frame *fr)
{
    (void)where, (void)name;
    const pp_run_result *r = fr->obj;
    hid_t vars = H5Gopen2(loc, "variants", H5P_DEFAULT);
    if (vars < 0)
        return pp_rs_write_failed(io, "/", "variants");
    int rc = PP_OK;
    for (int i = 0; !rc && i < r->n_comparisons; i++)
        rc = write_comparison(io, vars, &r->comparisons[i], i, fr);
    H5Gclose(vars);
    return rc;
}

// Puts one comparison read at its order in r->comparisons (grown as needed; filled marks the
// orders seen).
static int place_comparison(const pp_rs_io *io, const char *where, pp_run_result *r, const cmp_rec *rec,
                            char **filled, int *cap)
{
    int64_t order = rec->order;
    if (order < 0 || order > (1 << 24))
        return pp_rs_invalid(io, where, "order %lld out of range", (long long)order);
    if (order >= *cap) {
        int ncap = (int)order + 16;
        pp_comparison *nc = realloc(r->comparisons, sizeof *nc * (size_t)ncap);
        char *nf = nc ? realloc(*filled, (size_t)ncap) : NULL;
        if (nc)
            r->comparisons = nc;
        if (!nf)
            return pp_rs_oom(io);
        memset(nf + *cap, 0, (size_t)(ncap - *cap));
        // zeroed: an unfilled slot must free as empty (its axes own nothing)
        memset(nc + *cap, 0, sizeof *nc * (size_t)(ncap - *cap));
        *filled = nf;
        *cap = ncap;
    }
    if ((*filled)[order])
        return pp_rs_invalid(io, where, "order %lld used twice", (long long)order);
    r->comparisons[order] = rec->c;
    (*filled)[order] = 1;
    if (order >= r->n_comparisons)
        r->n_comparisons = (int)order + 1;
    return PP_OK;
}

// Every /variants/<v>/stats/<tensor>/<against> group, each at its order in r->comparisons.
static int read_comparisons(const pp_rs_io *io, hid_t loc, const char *where, const char *name,
                            const pp_rs_frame *fr)
{
    (void)where, (void)name;
    pp_run_result *r = fr->obj;
    int rc = PP_OK, cap = 0;
    char *filled = NULL;
    hid_t vars = H5Gopen2(loc, "variants", H5P_DEFAULT);
    for (int v = 0; !rc && v < r->n_variants; v++) {
        char ev[PP_RS_ESC_MAX], ws[PP_RS_WHERE_MAX];
        pp_rs_name_escape(r->variants[v].name, ev);
        snprintf(ws, sizeof ws, "/variants/%s/stats", ev);
        hid_t vg = H5Gopen2(vars, ev, H5P_DEFAULT);
        hid_t sg = vg >= 0 ? H5Gopen2(vg, "stats", H5P_DEFAULT) : H5I_INVALID_HID;
        char **tensors = NULL;
        int nt = 0;
        if (sg < 0 || pp_h5obj_children(sg, &tensors, &nt))
            rc = pp_rs_invalid(io, ws, "missing group, or not listable in creation order");
        for (int t = 0; !rc && t < nt; t++) {
            char wt[PP_RS_WHERE_MAX];
            pp_rs_join(wt, ws, tensors[t]);
            hid_t tg = H5Gopen2(sg, tensors[t], H5P_DEFAULT);
            char **against = NULL;
            int na = 0;
            if (tg < 0 || pp_h5obj_children(tg, &against, &na))
                rc = pp_rs_invalid(io, wt, "not a group listable in creation order");
            for (int a = 0; !rc && a < na; a++) {
                char wc[PP_RS_WHERE_MAX];
                pp_rs_join(wc, wt, against[a]);
                cmp_rec rec;
                memset(&rec, 0, sizeof rec);
                hid_t ag = H5Gopen2(tg, against[a], H5P_DEFAULT);
                pp_rs_frame cf = {&rec, -1, fr};
                if (ag < 0)
                    rc = pp_rs_invalid(io, wc, "not a group");
                else
                    rc = pp_rs_read(io, ag, wc, &comparison_table, &cf);
                if (ag >= 0)
                    H5Gclose(ag);
                if (!rc && (pp_rs_name_unescape(tensors[t], rec.c.tensor, sizeof rec.c.tensor) ||
                            pp_rs_name_unescape(against[a], rec.c.against, sizeof rec.c.against)))
                    rc = pp_rs_invalid(io, wc, "bad escaped name");
                strcpy(rec.c.variant, r->variants[v].name);
                if (!rc)
                    rc = place_comparison(io, wc, r, &rec, &filled, &cap);
                if (rc)
                    pp_axis_stats_free(&rec.c.axes);
            }
            pp_h5obj_free_names(against, na);
            if (tg >= 0)
                H5Gclose(tg);
        }
        pp_h5obj_free_names(tensors, nt);
        if (sg >= 0)
            H5Gclose(sg);
        if (vg >= 0)
            H5Gclose(vg);
    }
    for (int i = 0; !rc && i < r->n_comparisons; i++)
        if (!filled[i])
            rc = pp_rs_invalid(io, "/variants", "no comparison has order %d (orders must be 0..n-1)", i);
    free(filled);
    if (vars >= 0)
        H5Gclose(vars);
    return rc;
}

static const pp_rs_hook comparisons_hook = {check_comparisons, write_comparisons, read_comparisons};

// /variants/<v>/series/<name>: step and value, 1-D binary64 of one length.
static void series_init(void *obj)
{
    ((pp_series *)obj)->length = -1;  // set by the first dataset, matched by the second
}

static const pp_rs_field series_fields[] = {
    {.name = "step", .kind = PP_RS_VEC, .off = offsetof(pp_series, step), .count = offsetof(pp_series, length)},
    {.name = "value", .kind = PP_RS_VEC, .off = offsetof(pp_series, value), .count = offsetof(pp_series, length)},
};
static const pp_rs_table series_table = PP_RS_TABLE(series_fields, series_init, NULL);

// /variants/<v>: knobs, external, outputs, series, and the group stats the comparisons go in.
#define V(member) offsetof(pp_variant_result, member)
static const pp_rs_field variant_fields[] = {
    {.name = "knobs", .kind = PP_RS_HOOK, .hook = &pp_report_knobs_hook},
    {.name = "external", .kind = PP_RS_BOOL, .off = V(external)},
    {.name = "outputs", .kind = PP_RS_HOOK, .flags = PP_RS_OPTIONAL, .hook = &pp_report_outputs_hook},
    {.name = "series", .kind = PP_RS_LIST, .flags = PP_RS_OPTIONAL, .off = V(series), .size = sizeof(pp_series),
     .count = V(n_series), .key = offsetof(pp_series, name), .sub = &series_table},
    {.name = "stats", .kind = PP_RS_GROUP, .sub = &no_fields},
    {.name = "ranges", .kind = PP_RS_HOOK, .flags = PP_RS_OPTIONAL, .hook = &pp_report_ranges_hook},
    // `precprobe explain` only (report/explain_h5.c): absent in other reports
    {.name = "explain", .kind = PP_RS_LIST, .flags = PP_RS_OPTIONAL, .off = V(explain),
     .size = sizeof(pp_explain_table), .count = V(n_explain), .key = offsetof(pp_explain_table, tensor),
     .sub = &pp_report_explain_table},
};
#undef V
static const pp_rs_table variant_table = PP_RS_TABLE(variant_fields, NULL, NULL);

// /reference/<tensor>
static const pp_rs_field reference_fields[] = {
    {.name = "method", .kind = PP_RS_STR, .off = offsetof(pp_reference_info, method), .size = PP_NAME_MAX},
    {.name = "error_bound", .kind = PP_RS_F64, .off = offsetof(pp_reference_info, error_bound)},
    {.name = "values", .kind = PP_RS_HOOK, .flags = PP_RS_OPTIONAL, .hook = &pp_report_reference_values_hook},
};
static const pp_rs_table reference_table = PP_RS_TABLE(reference_fields, NULL, NULL);

// /inputs
static const pp_rs_field input_fields[] = {
    {.name = "names", .kind = PP_RS_HOOK, .hook = &pp_report_input_names_hook},
    {.name = "tensors", .kind = PP_RS_HOOK, .flags = PP_RS_OPTIONAL, .hook = &pp_report_input_tensors_hook},
};
static const pp_rs_table input_table = PP_RS_TABLE(input_fields, NULL, NULL);

// /gate: one row per verdict, fixed-length UTF-8 strings as long as pp_gate_verdict's fields.
#define G(member) offsetof(pp_gate_verdict, member)
static const pp_rs_field verdict_fields[] = {
    {.name = "rule", .kind = PP_RS_STR, .off = G(rule), .size = sizeof(((pp_gate_verdict *)0)->rule)},
    {.name = "passed", .kind = PP_RS_BOOL, .off = G(passed)},
    {.name = "detail", .kind = PP_RS_STR, .off = G(detail), .size = sizeof(((pp_gate_verdict *)0)->detail)},
};
#undef G
static const pp_rs_table verdict_table = PP_RS_TABLE(verdict_fields, NULL, NULL);

// The root group: the run.
#define R(member) offsetof(pp_run_result, member)
#define R_STR(hdf5_name, member) \
    {.name = hdf5_name, .kind = PP_RS_STR, .off = R(member), .size = sizeof(((pp_run_result *)0)->member)}
static const pp_rs_field run_fields[] = {
    {.name = "schema_version", .kind = PP_RS_HOOK, .hook = &pp_report_schema_version_hook},
    R_STR("precprobe_version", precprobe_version),
    R_STR("case_name", case_name),
    R_STR("op", op),
    R_STR("device", device),
    R_STR("created_utc", created_utc),
    {.name = "reference_epoch", .kind = PP_RS_I64, .flags = PP_RS_OPTIONAL, .off = R(reference_epoch)},
    {.name = "seed", .kind = PP_RS_U64, .off = R(seed)},
    {.name = "shapes", .kind = PP_RS_STR_PTR, .flags = PP_RS_OPTIONAL, .off = R(shapes)},
    {.name = "case", .kind = PP_RS_TEXT, .flags = PP_RS_OPTIONAL, .off = R(case_text)},
    {.name = "inputs", .kind = PP_RS_GROUP, .sub = &input_table},
    {.name = "reference", .kind = PP_RS_LIST, .off = R(references), .size = sizeof(pp_reference_info),
     .count = R(n_references), .key = offsetof(pp_reference_info, tensor), .sub = &reference_table},
    {.name = "variants", .kind = PP_RS_LIST, .off = R(variants), .size = sizeof(pp_variant_result),
     .count = R(n_variants), .key = offsetof(pp_variant_result, name), .sub = &variant_table},
    {.name = "comparisons", .kind = PP_RS_HOOK, .hook = &comparisons_hook},
    {.name = "gate", .kind = PP_RS_ROWS, .off = R(verdicts), .size = sizeof(pp_gate_verdict), .count = R(n_verdicts),
     .sub = &verdict_table},
};
#undef R_STR
#undef R
static const pp_rs_table run_table = PP_RS_TABLE(run_fields, NULL, NULL);

// ---------------------------------------------------------------------------------------------
// The file

// The schema's walk: the run (frame) through io, into the in-memory file f (io/h5image.h).
typedef struct run_write {
    pp_rs_io *io;
    pp_rs_frame *root;
} run_write;

static int fill_run(hid_t f, void *ctx, pp_error *err)
{
    (void)err;  // io carries it
    run_write *w = ctx;
    return pp_rs_write(w->io, f, "/", &run_table, w->root);
}

int pp_report_h5_write(const char *path, const pp_run_result *r, pp_error *err)
{
    pp_rs_io io = {path, err, 0};
    pp_rs_frame root = {(void *)r, -1, NULL};  // the walkers only read the run while writing
    int rc = pp_rs_check(&io, "/", &run_table, &root);
    if (rc)
        return rc;
    run_write w = {&io, &root};
    return pp_h5_image_write(path, 0, fill_run, &w, err);
}

int pp_report_h5_read(const char *path, pp_run_result *r, pp_error *err)
{
    memset(r, 0, sizeof *r);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return pp_fail(err, PP_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    close(fd);
    pp_rs_io io = {path, err, 1};
    pp_rs_frame root = {r, -1, NULL};
    pp_h5_quiet q;
    pp_h5_quiet_begin(&q);
    int rc;
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        rc = pp_fail(err, PP_ERR_INPUT, "%s: not an HDF5 file (or unreadable)", path);
    } else {
        rc = pp_rs_read(&io, f, "/", &run_table, &root);
        H5Fclose(f);
    }
    pp_h5_quiet_end(&q);
    if (rc)
        pp_run_result_free(r);
    return rc;
}
