// report_h5.c — report.h5 as tables (report_schema.h): one table per group of the layout in
// reports/README.md, walked to check a pp_run_result, write it and read it back. What the kinds
// do not describe is a hook, kept in its place in the table: kept tensors, knobs (attributes named
// by the data), the torch version, derived values for other readers (multi-indices, mean, RMS),
// the exact sums as 2-row datasets, per-axis errors, and the comparisons, which live inside the
// variants' groups but in one list of the run.
#include "report/report_h5.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/atomic_file.h"
#include "io/h5attr.h"
#include "io/h5io.h"
#include "io/h5obj.h"
#include "io/h5quiet.h"
#include "io/tensor_io.h"
#include "report/report_schema.h"

// The exact sums' counters stored beside the limbs, one row per sum.
enum { SUM_COUNTERS = 4 };

static const char *const SUM_ROWS[2] = {"sum_abs", "sum_sq"};
static const char *const SUM_COUNTER_NAMES[SUM_COUNTERS] = {"pending", "n_pinf", "n_ninf", "n_nan"};

// A comparison as its group holds it: its place in the run's list beside it.
typedef struct cmp_rec {
    int64_t order;
    pp_comparison c;
} cmp_rec;

// The run a frame is inside: the root frame's struct.
static pp_run_result *run_of(const pp_rs_frame *fr)
{
    while (fr->up)
        fr = fr->up;
    return fr->obj;
}

// ---------------------------------------------------------------------------------------------
// Kept tensors: binary64 datasets with their format in the attribute precprobe_format, the
// attribute pp_h5_read honours, so "report.h5:/inputs/q" is a valid input spec for precprobe.

static int put_tensor(hid_t parent, const char *name, const pp_tensor *t)
{
    hsize_t dims[PP_MAX_DIMS];
    for (int d = 0; d < t->ndim; d++)
        dims[d] = (hsize_t)t->shape[d];
    hid_t ds = pp_h5obj_dataset(parent, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, t->ndim, dims, t->data);
    if (ds < 0)
        return -1;
    int rc = pp_h5attr_put_vstr(ds, PP_H5_FORMAT_ATTR, pp_format_get(t->format).name);
    if (H5Dclose(ds) < 0)
        rc = -1;
    return rc;
}

static int get_tensor(const pp_rs_io *io, hid_t loc, const char *name, const char *where, pp_tensor *t)
{
    int rc = PP_OK;
    memset(t, 0, sizeof *t);
    hid_t ds = H5Dopen2(loc, name, H5P_DEFAULT);
    hid_t ty = ds >= 0 ? H5Dget_type(ds) : H5I_INVALID_HID;
    hid_t sp = ds >= 0 ? H5Dget_space(ds) : H5I_INVALID_HID;
    char *fname = NULL;
    pp_format_id f;
    if (ds < 0 || ty < 0 || sp < 0) {
        rc = pp_rs_invalid(io, where, "missing tensor dataset");
        goto done;
    }
    if (H5Tget_class(ty) != H5T_FLOAT || pp_h5attr_get_str_dup(ds, PP_H5_FORMAT_ATTR, &fname) ||
        pp_format_from_name(fname, &f)) {
        rc = pp_rs_invalid(io, where, "not floating-point data with a " PP_H5_FORMAT_ATTR " attribute");
        goto done;
    }
    H5S_class_t sc = H5Sget_simple_extent_type(sp);
    int ndim = sc == H5S_SCALAR ? 0 : H5Sget_simple_extent_ndims(sp);
    hsize_t dims[PP_MAX_DIMS];
    int64_t shape[PP_MAX_DIMS];
    if ((sc != H5S_SCALAR && sc != H5S_SIMPLE) || ndim < 0 || ndim > PP_MAX_DIMS ||
        (ndim > 0 && H5Sget_simple_extent_dims(sp, dims, NULL) < 0)) {
        rc = pp_rs_invalid(io, where, "not a tensor of at most %d dimensions", PP_MAX_DIMS);
        goto done;
    }
    for (int d = 0; d < ndim; d++)
        shape[d] = dims[d] > (hsize_t)PP_MAX_NUMEL ? PP_MAX_NUMEL + 1 : (int64_t)dims[d];
    pp_error e2 = {0};
    if ((rc = pp_tensor_alloc(t, ndim, shape, f, &e2))) {
        rc = rc == PP_ERR_RUNTIME ? pp_rs_oom(io) : pp_rs_invalid(io, where, "%s", e2.msg);
        goto done;
    }
    if (t->numel > 0 && H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t->data) < 0) {
        rc = pp_rs_invalid(io, where, "the values cannot be read");
        goto done;
    }
    char what[PP_RS_WHERE_MAX + 64];
    snprintf(what, sizeof what, "%s: malformed report: %s", io->path, where);
    rc = pp_tensor_check_format(t, f, what, io->err);
done:
    free(fname);
    if (rc)
        pp_tensor_free(t);
    if (sp >= 0)
        H5Sclose(sp);
    if (ty >= 0)
        H5Tclose(ty);
    if (ds >= 0)
        H5Dclose(ds);
    return rc;
}

// ---------------------------------------------------------------------------------------------
// Root hooks

static int write_schema_version(const pp_rs_io *io, hid_t loc, const char *where, const char *name,
                                const pp_rs_frame *fr)
{
    (void)io, (void)where, (void)fr;
    return pp_h5attr_put_i64(loc, name, PP_REPORT_H5_SCHEMA);
}

static int read_schema_version(const pp_rs_io *io, hid_t loc, const char *where, const char *name,
                               const pp_rs_frame *fr)
{
    (void)fr;
    int64_t schema;
    if (pp_h5attr_get_num(loc, name, H5T_INTEGER, H5T_NATIVE_INT64, &schema, 1, NULL))
        return pp_rs_invalid(io, where, "no attribute schema_version (not a precprobe report?)");
    if (schema != PP_REPORT_H5_SCHEMA)
        return pp_fail(io->err, PP_ERR_INPUT, "%s: report schema version %lld; this precprobe reads version %d",
                       io->path, (long long)schema, PP_REPORT_H5_SCHEMA);
    return PP_OK;
}

static const pp_rs_hook schema_version_hook = {NULL, write_schema_version, read_schema_version};

// /inputs attribute names: every input's name, in order, whether or not the tensors are kept.
static int check_input_names(const pp_rs_io *io, const char *where, const char *name, const pp_rs_frame *fr)
{
    (void)name;
    const pp_run_result *r = fr->obj;
    if (r->n_inputs < 0 || (r->n_inputs && !r->input_names))
        return pp_rs_invalid(io, where, "%d inputs without their names", r->n_inputs);
    for (int i = 0; i < r->n_inputs; i++)
        if (!memchr(r->input_names[i], '\0', PP_NAME_MAX) || !r->input_names[i][0])
            return pp_rs_invalid(io, where, "input %d has no name", i);
    return PP_OK;
}

static int write_input_names(const pp_rs_io *io, hid_t loc, const char *where, const char *name,
                             const pp_rs_frame *fr)
{
    const pp_run_result *r = fr->obj;
    const char **names = malloc(sizeof *names * (size_t)(r->n_inputs ? r->n_inputs : 1));
    if (!names)
        return pp_rs_oom(io);
    for (int i = 0; i < r->n_inputs; i++)
        names[i] = r->input_names[i];
    int rc = pp_h5attr_put_vstrs(loc, name, names, (size_t)r->n_inputs) ? pp_rs_write_failed(io, where, name) : PP_OK;
    free(names);
    return rc;
}

static int read_input_names(const pp_rs_io *io, hid_t loc, const char *where, const char *name,
                            const pp_rs_frame *fr)
{
    pp_run_result *r = fr->obj;
    int rc = PP_OK;
    hid_t a = H5I_INVALID_HID, t = H5I_INVALID_HID, sp = H5I_INVALID_HID, mt = pp_h5attr_vstr_type();
    char **names = NULL;
    hssize_t n = -1;
    if (H5Aexists(loc, name) > 0 && (a = H5Aopen(loc, name, H5P_DEFAULT)) >= 0 && (t = H5Aget_type(a)) >= 0 &&
        (sp = H5Aget_space(a)) >= 0 && H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) > 0 && mt >= 0)
        n = H5Sget_simple_extent_npoints(sp);
    if (n < 0 || n > (1 << 20)) {
        rc = pp_rs_invalid(io, where, "attribute names missing or not variable-length strings");
        goto done;
    }
    names = calloc((size_t)n + 1, sizeof *names);
    r->input_names = calloc((size_t)n + 1, sizeof *r->input_names);
    if (!names || !r->input_names) {
        rc = pp_rs_oom(io);
        goto done;
    }
    if (n > 0 && H5Aread(a, mt, names) < 0) {
        rc = pp_rs_invalid(io, where, "attribute names cannot be read");
        goto done;
    }
    r->n_inputs = (int)n;
    for (int i = 0; i < r->n_inputs; i++) {
        if (!names[i] || !names[i][0] || strlen(names[i]) >= PP_NAME_MAX) {
            rc = pp_rs_invalid(io, where, "input name %d empty or longer than %d bytes", i, PP_NAME_MAX - 1);
            goto done;
        }
        strcpy(r->input_names[i], names[i]);
    }
done:
    for (hssize_t i = 0; names && i < n; i++)
        if (names[i])
            H5free_memory(names[i]);
    free(names);
    if (mt >= 0)
        H5Tclose(mt);
    if (sp >= 0)
        H5Sclose(sp);
    if (t >= 0)
        H5Tclose(t);
    if (a >= 0)
        H5Aclose(a);
    return rc;
}

static const pp_rs_hook input_names_hook = {check_input_names, write_input_names, read_input_names};

// /inputs/<name>: the input tensors, when kept (r->inputs), one dataset per name.
static int check_input_tensors(const pp_rs_io *io, const char *where, const char *name, const pp_rs_frame *fr)
{
    (void)name;
    const pp_run_result *r = fr->obj;
    char shown[PP_NAME_MAX + 8];
    for (int i = 0; r->inputs && i < r->n_inputs; i++) {
        for (int j = 0; j < i; j++)
            if (!strcmp(r->input_names[i], r->input_names[j]))
                return pp_rs_invalid(io, where, "two inputs named '%s'",
                                     pp_printable(r->input_names[i], shown, sizeof shown));
        int rc = pp_tensor_check_writable(io->path, &r->inputs[i], io->err);
        if (rc)
            return rc;
    }
    return PP_OK;
}

static int write_input_tensors(const pp_rs_io *io, hid_t loc, const char *where, const char *name,
                               const pp_rs_frame *fr)
{
    (void)name;
    const pp_run_result *r = fr->obj;
    for (int i = 0; r->inputs && i < r->n_inputs; i++) {
        char esc[PP_RS_ESC_MAX];
        pp_rs_name_escape(r->input_names[i], esc);
        if (put_tensor(loc, esc, &r->inputs[i]))
            return pp_rs_write_failed(io, where, esc);
    }
    return PP_OK;
}

static int read_input_tensors(const pp_rs_io *io, hid_t loc, const char *where, const char *name,
                              const pp_rs_frame *fr)
{
    (void)name;
    pp_run_result *r = fr->obj;
    H5G_info_t info;
    if (H5Gget_info(loc, &info) < 0)
        return pp_rs_invalid(io, where, "unreadable group");
    if (info.nlinks == 0)
        return PP_OK;  // not kept
    if (!(r->inputs = calloc((size_t)r->n_inputs + 1, sizeof *r->inputs)))
        return pp_rs_oom(io);
    int rc = PP_OK;
    for (int i = 0; !rc && i < r->n_inputs; i++) {
        char esc[PP_RS_ESC_MAX], wi[PP_RS_WHERE_MAX];
        pp_rs_name_escape(r->input_names[i], esc);
        pp_rs_join(wi, where, esc);
        rc = get_tensor(io, loc, esc, wi, &r->inputs[i]);
    }
    return rc;
}

static const pp_rs_hook input_tensors_hook = {check_input_tensors, write_input_tensors, read_input_tensors};

// ---------------------------------------------------------------------------------------------
// /reference/<tensor>/values: kept for every reference or for none (r->reference_outputs).

static int check_reference_values(const pp_rs_io *io, const char *where, const char *name,
                                  const pp_rs_frame *fr)
{
    (void)where, (void)name;
    const pp_run_result *r = run_of(fr);
    return r->reference_outputs ? pp_tensor_check_writable(io->path, &r->reference_outputs[fr->index], io->err)
                                : PP_OK;
}

static int write_reference_values(const pp_rs_io *io, hid_t loc, const char *where, const char *name,
                                  const pp_rs_frame *fr)
{
    (void)io, (void)where;
    const pp_run_result *r = run_of(fr);
    return r->reference_outputs ? put_tensor(loc, name, &r->reference_outputs[fr->index]) : 0;
}

static int read_reference_values(const pp_rs_io *io, hid_t loc, const char *where, const char *name,
                                 const pp_rs_frame *fr)
{
    pp_run_result *r = run_of(fr);
    int has = H5Lexists(loc, name, H5P_DEFAULT) > 0;
    if (fr->index == 0 && has &&
        !(r->reference_outputs = calloc((size_t)r->n_references, sizeof *r->reference_outputs)))
        return pp_rs_oom(io);
    if (has != (r->reference_outputs != NULL))
        return pp_rs_invalid(io, where, "values kept for some references and not others");
    char wv[PP_RS_WHERE_MAX];
    pp_rs_join(wv, where, name);
    return has ? get_tensor(io, loc, name, wv, &r->reference_outputs[fr->index]) : PP_OK;
}

static const pp_rs_hook reference_values_hook = {check_reference_values, write_reference_values,
                                                 read_reference_values};

// ---------------------------------------------------------------------------------------------
// Variant hooks

// Knobs: one string attribute per knob, named by the knob, in the operation's order; every
// attribute of a variant's group but "external" is one.
static int check_knobs(const pp_rs_io *io, const char *where, const char *name, const pp_rs_frame *fr)
{
    (void)name;
    const pp_variant_result *vr = fr->obj;
    if (vr->n_knobs < 0 || vr->n_knobs > PP_MAX_KNOBS)
        return pp_rs_invalid(io, where, "%d knobs (0 to %d)", vr->n_knobs, PP_MAX_KNOBS);
    for (int k = 0; k < vr->n_knobs; k++) {
        const pp_knob_setting *kn = &vr->knobs[k];
        int dup = 0;
        for (int j = 0; j < k; j++)
            dup |= !strcmp(vr->knobs[j].name, kn->name);
        if (!memchr(kn->name, '\0', PP_NAME_MAX) || !memchr(kn->value, '\0', PP_NAME_MAX) || !kn->name[0] ||
            !strcmp(kn->name, "external") || dup)
            return pp_rs_invalid(io, where, "knob %d is unnamed, named 'external' (reserved) or repeated", k);
    }
    return PP_OK;
}

static int write_knobs(const pp_rs_io *io, hid_t loc, const char *where, const char *name, const pp_rs_frame *fr)
{
    (void)name;
    const pp_variant_result *vr = fr->obj;
    for (int k = 0; k < vr->n_knobs; k++)
        if (pp_h5attr_put_vstr(loc, vr->knobs[k].name, vr->knobs[k].value))
            return pp_rs_write_failed(io, where, vr->knobs[k].name);
    return PP_OK;
}

typedef struct knob_visit {
    pp_variant_result *v;
    int bad;  // 1: too many knobs, or one is not a string that fits
} knob_visit;

// H5Aiterate2's visitor over a variant group's attributes in creation order.
static herr_t visit_knob(hid_t loc, const char *name, const H5A_info_t *info, void *data)
{
    (void)info;
    knob_visit *kv = data;
    if (!strcmp(name, "external"))
        return 0;
    pp_variant_result *v = kv->v;
    char *value = NULL;
    if (v->n_knobs == PP_MAX_KNOBS || strlen(name) >= PP_NAME_MAX || pp_h5attr_get_str_dup(loc, name, &value) ||
        strlen(value) >= PP_NAME_MAX) {
        free(value);
        kv->bad = 1;
        return -1;
    }
    strcpy(v->knobs[v->n_knobs].name, name);
    strcpy(v->knobs[v->n_knobs].value, value);
    v->n_knobs++;
    free(value);
    return 0;
}

static int read_knobs(const pp_rs_io *io, hid_t loc, const char *where, const char *name, const pp_rs_frame *fr)
{
    (void)name;
    knob_visit kv = {fr->obj, 0};
    hsize_t pos = 0;
    if (H5Aiterate2(loc, H5_INDEX_CRT_ORDER, H5_ITER_INC, &pos, visit_knob, &kv) < 0)
        return kv.bad ? pp_rs_invalid(io, where, "more than %d knobs, or a knob that is not a short string",
                                      PP_MAX_KNOBS)
                      : pp_rs_invalid(io, where, "its attributes cannot be listed in creation order");
    return PP_OK;
}

static const pp_rs_hook knobs_hook = {check_knobs, write_knobs, read_knobs};

// outputs/<tensor>: a variant's outputs when kept, one per reference tensor (an external variant
// may lack some).
static int check_outputs(const pp_rs_io *io, const char *where, const char *name, const pp_rs_frame *fr)
{
    (void)where, (void)name;
    const pp_variant_result *vr = fr->obj;
    const pp_run_result *r = run_of(fr);
    for (int i = 0; vr->outputs && i < r->n_references; i++) {
        int rc = vr->outputs[i].data ? pp_tensor_check_writable(io->path, &vr->outputs[i], io->err) : PP_OK;
        if (rc)
            return rc;
    }
    return PP_OK;
}

static int write_outputs(const pp_rs_io *io, hid_t loc, const char *where, const char *name, const pp_rs_frame *fr)
{
    const pp_variant_result *vr = fr->obj;
    const pp_run_result *r = run_of(fr);
    if (!vr->outputs)
        return PP_OK;
    hid_t o = pp_h5obj_group(loc, name);
    if (o < 0)
        return -1;
    char wo[PP_RS_WHERE_MAX];
    pp_rs_join(wo, where, name);
    int rc = PP_OK;
    for (int i = 0; !rc && i < r->n_references; i++) {
        char t[PP_RS_ESC_MAX];
        pp_rs_name_escape(r->references[i].tensor, t);
        if (vr->outputs[i].data && put_tensor(o, t, &vr->outputs[i]))
            rc = pp_rs_write_failed(io, wo, t);
    }
    if (H5Gclose(o) < 0 && !rc)
        rc = -1;
    return rc;
}

static int read_outputs(const pp_rs_io *io, hid_t loc, const char *where, const char *name, const pp_rs_frame *fr)
{
    pp_variant_result *v = fr->obj;
    const pp_run_result *r = run_of(fr);
    if (H5Lexists(loc, name, H5P_DEFAULT) <= 0)
        return PP_OK;
    char wo[PP_RS_WHERE_MAX];
    pp_rs_join(wo, where, name);
    hid_t o = H5Gopen2(loc, name, H5P_DEFAULT);
    int rc = PP_OK;
    if (o < 0)
        rc = pp_rs_invalid(io, wo, "not a group");
    else if (!(v->outputs = calloc((size_t)r->n_references + 1, sizeof *v->outputs)))
        rc = pp_rs_oom(io);
    for (int i = 0; !rc && i < r->n_references; i++) {
        char t[PP_RS_ESC_MAX], wt[PP_RS_WHERE_MAX];
        pp_rs_name_escape(r->references[i].tensor, t);
        pp_rs_join(wt, wo, t);
        if (H5Lexists(o, t, H5P_DEFAULT) > 0)
            rc = get_tensor(io, o, t, wt, &v->outputs[i]);
    }
    if (o >= 0)
        H5Gclose(o);
    return rc;
}

static const pp_rs_hook outputs_hook = {check_outputs, write_outputs, read_outputs};

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

static const pp_rs_hook multi_index_hook = {NULL, write_multi_index, NULL};

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

static const pp_rs_hook torch_version_hook = {check_torch_version, write_torch_version, read_torch_version};

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

static const pp_rs_hook mismatch_fraction_hook = {NULL, write_mismatch_fraction, NULL};
static const pp_rs_hook mean_abs_hook = {NULL, write_mean_abs, NULL};
static const pp_rs_hook rms_hook = {NULL, write_rms, NULL};

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

static const pp_rs_hook histogram_hook = {NULL, write_histogram, read_histogram};

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

static const pp_rs_hook exact_sums_hook = {NULL, write_exact_sums, read_exact_sums};
static const pp_rs_hook sum_counters_hook = {NULL, write_sum_counters, read_sum_counters};

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

static const pp_rs_hook axes_hook = {NULL, write_axes, read_axes};

// ---------------------------------------------------------------------------------------------
// The tables

static const pp_rs_table no_fields = {NULL, 0, NULL, NULL};

// pp_close_max as <prefix>, <prefix>_flat_index, <prefix>_index, <prefix>_actual, <prefix>_expected.
#define M(member) offsetof(pp_close_max, member)
static const pp_rs_field max_fields[] = {
    {.name = "", .kind = PP_RS_F64, .off = M(value)},
    {.name = "_flat_index", .kind = PP_RS_I64, .off = M(index)},
    {.name = "_index", .kind = PP_RS_HOOK, .hook = &multi_index_hook},
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
    {.name = "torch_version", .kind = PP_RS_HOOK, .hook = &torch_version_hook},
    {.name = "total", .kind = PP_RS_I64, .off = C(stats.numel)},
    {.name = "mismatched", .kind = PP_RS_I64, .off = C(stats.mismatched)},
    {.name = "mismatch_fraction", .kind = PP_RS_HOOK, .hook = &mismatch_fraction_hook},
    {.name = "max_abs_diff", .kind = PP_RS_SUB, .off = C(stats.abs_diff), .sub = &max_table},
    {.name = "max_rel_diff", .kind = PP_RS_SUB, .off = C(stats.rel_diff), .sub = &max_table},
    {.name = "worst_tolerance_ratio", .kind = PP_RS_SUB, .off = C(stats.tol_ratio), .sub = &max_table},
    {.name = "max_ulp", .kind = PP_RS_SUB, .off = C(stats.ulp_err), .sub = &max_table},
    // absent in reports written before it existed (older baselines)
    {.name = "max_abs_error", .kind = PP_RS_SUB, .flags = PP_RS_OPTIONAL, .off = C(stats.abs_err),
     .sub = &max_table},
    {.name = "n_finite", .kind = PP_RS_I64, .off = C(stats.n_finite)},
    {.name = "mean_abs", .kind = PP_RS_HOOK, .hook = &mean_abs_hook},
    {.name = "rms", .kind = PP_RS_HOOK, .hook = &rms_hook},
    {.name = "nan_count", .kind = PP_RS_I64, .off = C(stats.nan_actual)},
    {.name = "inf_count", .kind = PP_RS_I64, .off = C(stats.inf_actual)},
    {.name = "nan_count_expected", .kind = PP_RS_I64, .off = C(stats.nan_expected)},
    {.name = "inf_count_expected", .kind = PP_RS_I64, .off = C(stats.inf_expected)},
    {.name = "ulp_histogram", .kind = PP_RS_HOOK, .hook = &histogram_hook},
    {.name = "exact_sums", .kind = PP_RS_HOOK, .hook = &exact_sums_hook},
    {.name = "exact_sum_counters", .kind = PP_RS_HOOK, .hook = &sum_counters_hook},
    {.name = "by_position, by_head_block", .kind = PP_RS_HOOK, .flags = PP_RS_OPTIONAL, .hook = &axes_hook},
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
    {.name = "knobs", .kind = PP_RS_HOOK, .hook = &knobs_hook},
    {.name = "external", .kind = PP_RS_BOOL, .off = V(external)},
    {.name = "outputs", .kind = PP_RS_HOOK, .flags = PP_RS_OPTIONAL, .hook = &outputs_hook},
    {.name = "series", .kind = PP_RS_LIST, .flags = PP_RS_OPTIONAL, .off = V(series), .size = sizeof(pp_series),
     .count = V(n_series), .key = offsetof(pp_series, name), .sub = &series_table},
    {.name = "stats", .kind = PP_RS_GROUP, .sub = &no_fields},
};
#undef V
static const pp_rs_table variant_table = PP_RS_TABLE(variant_fields, NULL, NULL);

// /reference/<tensor>
static const pp_rs_field reference_fields[] = {
    {.name = "method", .kind = PP_RS_STR, .off = offsetof(pp_reference_info, method), .size = PP_NAME_MAX},
    {.name = "error_bound", .kind = PP_RS_F64, .off = offsetof(pp_reference_info, error_bound)},
    {.name = "values", .kind = PP_RS_HOOK, .flags = PP_RS_OPTIONAL, .hook = &reference_values_hook},
};
static const pp_rs_table reference_table = PP_RS_TABLE(reference_fields, NULL, NULL);

// /inputs
static const pp_rs_field input_fields[] = {
    {.name = "names", .kind = PP_RS_HOOK, .hook = &input_names_hook},
    {.name = "tensors", .kind = PP_RS_HOOK, .flags = PP_RS_OPTIONAL, .hook = &input_tensors_hook},
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
    {.name = "schema_version", .kind = PP_RS_HOOK, .hook = &schema_version_hook},
    R_STR("precprobe_version", precprobe_version),
    R_STR("case_name", case_name),
    R_STR("op", op),
    R_STR("device", device),
    R_STR("created_utc", created_utc),
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

// HDF5 builds the file in memory (the core driver without a backing store) and precprobe writes
// the image through its atomic writer: libhdf5 1.10 crashes at exit after an H5Fclose that failed
// on a full disk (the file stays in its ID table half closed), so HDF5 must never see a failed
// write. The cost is memory: the image, and for a moment its copy.
int pp_report_h5_write(const char *path, const pp_run_result *r, pp_error *err)
{
    pp_rs_io io = {path, err, 0};
    pp_rs_frame root = {(void *)r, -1, NULL};  // the walkers only read the run while writing
    int rc = pp_rs_check(&io, "/", &run_table, &root);
    if (rc)
        return rc;
    pp_h5_quiet q;
    pp_h5_quiet_begin(&q);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    hid_t f = H5I_INVALID_HID;
    if (fapl >= 0 && H5Pset_fapl_core(fapl, 1 << 20, 0) >= 0)
        f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (fapl >= 0)
        H5Pclose(fapl);
    unsigned char *image = NULL;
    ssize_t size = 0;
    if (f < 0) {
        rc = pp_fail(err, PP_ERR_RUNTIME, "%s: HDF5 failed to set up an in-memory file", path);
    } else {
        rc = pp_rs_write(&io, f, "/", &run_table, &root);
        if (!rc && (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0 || (size = H5Fget_file_image(f, NULL, 0)) <= 0 ||
                    !(image = malloc((size_t)size)) || H5Fget_file_image(f, image, (size_t)size) != size))
            rc = pp_fail(err, PP_ERR_RUNTIME, "%s: HDF5 failed to produce the file's image", path);
        if (H5Fclose(f) < 0 && !rc)
            rc = pp_fail(err, PP_ERR_RUNTIME, "%s: HDF5 failed to finish the file", path);
    }
    pp_h5_quiet_end(&q);
    if (!rc)
        rc = pp_atomic_write_bytes(path, image, (size_t)size, err);
    free(image);
    return rc;
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
