// report_schema_run_hooks.c — the run's items of report.h5 that are not one field each: the
// schema version, input names, kept tensors (inputs, references, outputs) and knobs (attributes
// named by the data). See report_schema_hooks.h.
#include "report/report_schema_hooks.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/h5attr.h"
#include "io/h5io.h"
#include "io/h5obj.h"
#include "io/tensor_io.h"
#include "report/report_h5.h"

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

const pp_rs_hook pp_report_schema_version_hook = {NULL, write_schema_version, read_schema_version};

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

const pp_rs_hook pp_report_input_names_hook = {check_input_names, write_input_names, read_input_names};

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
        char what[PP_RS_WHERE_MAX + PP_NAME_MAX + 64];  // the file and the dataset
        snprintf(what, sizeof what, "%s: %s/%s", io->path, where, r->input_names[i]);
        int rc = pp_tensor_check_writable(what, &r->inputs[i], io->err);
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

const pp_rs_hook pp_report_input_tensors_hook = {check_input_tensors, write_input_tensors, read_input_tensors};

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

const pp_rs_hook pp_report_reference_values_hook = {check_reference_values, write_reference_values,
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

const pp_rs_hook pp_report_knobs_hook = {check_knobs, write_knobs, read_knobs};

// outputs/<tensor>: a variant's outputs when kept, one per reference tensor (an external variant
// may lack some).
static int check_outputs(const pp_rs_io *io, const char *where, const char *name, const pp_rs_frame *fr)
{
    const pp_variant_result *vr = fr->obj;
    const pp_run_result *r = run_of(fr);
    for (int i = 0; vr->outputs && i < r->n_references; i++) {
        char what[PP_RS_WHERE_MAX + 2 * PP_NAME_MAX + 64];  // the file and the dataset
        snprintf(what, sizeof what, "%s: %s/%s/%s", io->path, where, name, r->references[i].tensor);
        int rc = vr->outputs[i].data ? pp_tensor_check_writable(what, &vr->outputs[i], io->err) : PP_OK;
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

const pp_rs_hook pp_report_outputs_hook = {check_outputs, write_outputs, read_outputs};
