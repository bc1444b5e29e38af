// report_h5.c — report.h5 written from and read into a pp_run_result with libhdf5 (serial).
// The layout (reports/README.md) puts every statistic where h5py users look for it, and also
// stores what makes the read exact: flat indices, the operands, the exact sums' limbs.
#include "report/report_h5.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/atomic_file.h"
#include "io/h5io.h"
#include "io/h5quiet.h"
#include "io/tensor_io.h"

// A link name after escaping: every byte may triple ("%2F").
#define ESC_MAX (3 * PP_NAME_MAX + 1)
// An object's path inside the file, for messages.
#define WHERE_MAX (4 * ESC_MAX + 64)

// The exact sums' counters stored beside the limbs, one row per sum.
enum { SUM_COUNTERS = 4 };

static const char *const SUM_ROWS[2] = {"sum_abs", "sum_sq"};
static const char *const SUM_COUNTER_NAMES[SUM_COUNTERS] = {"pending", "n_pinf", "n_ninf", "n_nan"};

// ---------------------------------------------------------------------------------------------
// Plumbing

// A C string held in a fixed array of n bytes: NUL-terminated inside it.
static int fits(const char *s, size_t n)
{
    return memchr(s, '\0', n) != NULL;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

// A name as an HDF5 link name: HDF5 splits paths at '/' and reads "." as the group itself, so
// '/' becomes "%2F", the name "." becomes "%2E", and '%' becomes "%25" to keep the map
// one-to-one. Returns 0, or -1 for an empty name.
static int name_escape(const char *in, char out[ESC_MAX])
{
    size_t k = 0;
    if (!*in)
        return -1;
    if (!strcmp(in, ".")) {
        strcpy(out, "%2E");
        return 0;
    }
    for (; *in && k + 4 <= ESC_MAX; in++) {
        if (*in == '/' || *in == '%') {
            snprintf(out + k, 4, "%%%02X", (unsigned)(unsigned char)*in);
            k += 3;
        } else {
            out[k++] = *in;
        }
    }
    out[k] = '\0';
    return 0;
}

// The inverse of name_escape, into out[n]. Returns 0, or -1 for a malformed escape, a NUL
// byte, an empty result or one longer than n - 1 bytes.
static int name_unescape(const char *in, char *out, size_t n)
{
    size_t k = 0;
    for (; *in; in++) {
        int c = (unsigned char)*in;
        if (c == '%') {
            int hi = hexval(in[1]), lo = hi < 0 ? -1 : hexval(in[2]);
            if (hi < 0 || lo < 0 || hi * 16 + lo == 0)
                return -1;
            c = hi * 16 + lo;
            in += 2;
        }
        if (k + 1 >= n)
            return -1;
        out[k++] = (char)c;
    }
    out[k] = '\0';
    return k ? 0 : -1;
}

// The UTF-8 variable-length string type h5py writes for a Python str (and reads back as str).
static hid_t vstr_type(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t >= 0 && (H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0)) {
        H5Tclose(t);
        return H5I_INVALID_HID;
    }
    return t;
}

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

// ---------------------------------------------------------------------------------------------
// Writing: small helpers, each 0 on success and -1 when HDF5 failed

static int put_attr(hid_t obj, const char *name, hid_t ftype, hid_t mtype, int rank, hsize_t n,
                    const void *buf)
{
    hid_t sp = rank == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, NULL);
    hid_t a = sp >= 0 ? H5Acreate2(obj, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT) : H5I_INVALID_HID;
    int ok = a >= 0 && H5Awrite(a, mtype, buf) >= 0;
    if (a >= 0 && H5Aclose(a) < 0)
        ok = 0;
    if (sp >= 0)
        H5Sclose(sp);
    return ok ? 0 : -1;
}

static int put_i64(hid_t obj, const char *name, int64_t v)
{
    return put_attr(obj, name, H5T_STD_I64LE, H5T_NATIVE_INT64, 0, 1, &v);
}

static int put_i32(hid_t obj, const char *name, int v)
{
    return put_attr(obj, name, H5T_STD_I32LE, H5T_NATIVE_INT, 0, 1, &v);
}

static int put_u64(hid_t obj, const char *name, uint64_t v)
{
    return put_attr(obj, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, 0, 1, &v);
}

static int put_f64(hid_t obj, const char *name, double v)
{
    return put_attr(obj, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 0, 1, &v);
}

static int put_i64v(hid_t obj, const char *name, const int64_t *v, int n)
{
    return put_attr(obj, name, H5T_STD_I64LE, H5T_NATIVE_INT64, 1, (hsize_t)n, v);
}

static int put_f64v(hid_t obj, const char *name, const double *v, int n)
{
    return put_attr(obj, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, (hsize_t)n, v);
}

// A string attribute (rank 0) or an array of n strings (rank 1).
static int put_strs(hid_t obj, const char *name, const char *const *v, int rank, int n)
{
    hid_t t = vstr_type();
    int rc = t >= 0 ? put_attr(obj, name, t, t, rank, (hsize_t)n, v) : -1;
    if (t >= 0)
        H5Tclose(t);
    return rc;
}

static int put_str(hid_t obj, const char *name, const char *s)
{
    return put_strs(obj, name, &s, 0, 1);
}

// A group whose links and attributes remember their creation order: the read restores the
// order of variants, references, inputs and knobs from it. Link names are marked UTF-8 so h5py
// shows them as str.
static hid_t make_group(hid_t parent, const char *name)
{
    hid_t g = H5I_INVALID_HID;
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE), lcpl = H5Pcreate(H5P_LINK_CREATE);
    unsigned crt = H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED;
    if (gcpl >= 0 && lcpl >= 0 && H5Pset_link_creation_order(gcpl, crt) >= 0 &&
        H5Pset_attr_creation_order(gcpl, crt) >= 0 && H5Pset_char_encoding(lcpl, H5T_CSET_UTF8) >= 0)
        g = H5Gcreate2(parent, name, lcpl, gcpl, H5P_DEFAULT);
    if (lcpl >= 0)
        H5Pclose(lcpl);
    if (gcpl >= 0)
        H5Pclose(gcpl);
    return g;
}

// A dataset of the given file type and shape (rank 0: scalar) holding buf of memory type mtype.
static hid_t make_dataset(hid_t parent, const char *name, hid_t ftype, hid_t mtype, int rank,
                          const hsize_t *dims, const void *buf, int64_t numel)
{
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    hid_t sp = rank == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(rank, dims, NULL);
    hid_t ds = H5I_INVALID_HID;
    if (lcpl >= 0 && sp >= 0 && H5Pset_char_encoding(lcpl, H5T_CSET_UTF8) >= 0)
        ds = H5Dcreate2(parent, name, ftype, sp, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    if (ds >= 0 && numel > 0 && H5Dwrite(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        H5Dclose(ds);
        ds = H5I_INVALID_HID;
    }
    if (sp >= 0)
        H5Sclose(sp);
    if (lcpl >= 0)
        H5Pclose(lcpl);
    return ds;
}

static int put_dataset(hid_t parent, const char *name, hid_t ftype, hid_t mtype, int rank,
                       const hsize_t *dims, const void *buf, int64_t numel)
{
    hid_t ds = make_dataset(parent, name, ftype, mtype, rank, dims, buf, numel);
    return ds >= 0 && H5Dclose(ds) >= 0 ? 0 : -1;
}

// A tensor as a binary64 dataset with its format named by the attribute precprobe_format, the
// attribute pp_h5_read honours: "report.h5:/inputs/q" is a valid input spec for precprobe.
static int put_tensor(hid_t parent, const char *name, const pp_tensor *t)
{
    hsize_t dims[PP_MAX_DIMS];
    for (int d = 0; d < t->ndim; d++)
        dims[d] = (hsize_t)t->shape[d];
    hid_t ds = make_dataset(parent, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, t->ndim, dims, t->data,
                            t->numel);
    if (ds < 0)
        return -1;
    int rc = put_str(ds, PP_H5_FORMAT_ATTR, pp_format_get(t->format).name);
    if (H5Dclose(ds) < 0)
        rc = -1;
    return rc;
}

// ---------------------------------------------------------------------------------------------
// Writing: the run

typedef struct wctx {
    const char *path;
    pp_error *err;
    char where[WHERE_MAX];  // the object being written, for the message
} wctx;

// An HDF5 failure while writing w->where.
static int wfail(wctx *w)
{
    return pp_fail(w->err, PP_ERR_RUNTIME, "%s: HDF5 failed to write %s", w->path, w->where);
}

static void set_where(wctx *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void set_where(wctx *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->where, sizeof w->where, fmt, ap);
    va_end(ap);
}

// The rules of pp_report_h5_write's @param r, checked before anything touches the disk.
static int validate(const pp_run_result *r, const char *path, pp_error *err)
{
    char sh[PP_NAME_MAX + 8];
    if (!fits(r->precprobe_version, sizeof r->precprobe_version) ||
        !fits(r->case_name, sizeof r->case_name) || !fits(r->op, sizeof r->op) ||
        !fits(r->device, sizeof r->device) || !fits(r->created_utc, sizeof r->created_utc))
        return pp_fail(err, PP_ERR_INPUT, "%s: a run field is not NUL-terminated", path);
    if (r->n_variants < 0 || r->n_references < 0 || r->n_inputs < 0 || r->n_comparisons < 0 ||
        r->n_verdicts < 0)
        return pp_fail(err, PP_ERR_INPUT, "%s: negative count in the run", path);
    if ((r->n_variants && !r->variants) || (r->n_references && !r->references) ||
        (r->n_inputs && !r->input_names) || (r->n_comparisons && !r->comparisons) ||
        (r->n_verdicts && !r->verdicts))
        return pp_fail(err, PP_ERR_INPUT, "%s: a count in the run has no array", path);
    for (int i = 0; i < r->n_verdicts; i++)
        if (!fits(r->verdicts[i].rule, sizeof r->verdicts[i].rule) ||
            !fits(r->verdicts[i].detail, sizeof r->verdicts[i].detail))
            return pp_fail(err, PP_ERR_INPUT, "%s: gate verdict %d is not NUL-terminated", path, i);
    for (int i = 0; i < r->n_inputs; i++)
        if (!fits(r->input_names[i], PP_NAME_MAX) || !r->input_names[i][0])
            return pp_fail(err, PP_ERR_INPUT, "%s: input %d has no name", path, i);
    for (int i = 0; i < r->n_references; i++)
        if (!fits(r->references[i].tensor, PP_NAME_MAX) || !r->references[i].tensor[0] ||
            !fits(r->references[i].method, PP_NAME_MAX))
            return pp_fail(err, PP_ERR_INPUT, "%s: reference %d has no tensor name", path, i);
    for (int v = 0; v < r->n_variants; v++) {
        const pp_variant_result *vr = &r->variants[v];
        if (!fits(vr->name, PP_NAME_MAX) || !vr->name[0])
            return pp_fail(err, PP_ERR_INPUT, "%s: variant %d has no name", path, v);
        for (int u = 0; u < v; u++)
            if (!strcmp(r->variants[u].name, vr->name))
                return pp_fail(err, PP_ERR_INPUT, "%s: variant '%s' appears twice", path,
                               pp_printable(vr->name, sh, sizeof sh));
        if (vr->n_knobs < 0 || vr->n_knobs > PP_MAX_KNOBS)
            return pp_fail(err, PP_ERR_INPUT, "%s: variant '%s' has %d knobs", path,
                           pp_printable(vr->name, sh, sizeof sh), vr->n_knobs);
        for (int k = 0; k < vr->n_knobs; k++) {
            const pp_knob_setting *kn = &vr->knobs[k];
            int dup = 0;
            for (int j = 0; j < k; j++)
                dup |= !strcmp(vr->knobs[j].name, kn->name);
            if (!fits(kn->name, PP_NAME_MAX) || !fits(kn->value, PP_NAME_MAX) || !kn->name[0] ||
                !strcmp(kn->name, "external") || dup)
                return pp_fail(err, PP_ERR_INPUT,
                               "%s: variant '%s': knob %d is unnamed, named 'external' (reserved) "
                               "or repeated", path, pp_printable(vr->name, sh, sizeof sh), k);
        }
    }
    for (int i = 0; i < r->n_comparisons; i++) {
        const pp_comparison *c = &r->comparisons[i];
        if (!fits(c->variant, PP_NAME_MAX) || !fits(c->tensor, PP_NAME_MAX) ||
            !fits(c->against, PP_NAME_MAX) || !c->tensor[0] || !c->against[0])
            return pp_fail(err, PP_ERR_INPUT, "%s: comparison %d has an empty name", path, i);
        int found = 0;
        for (int v = 0; v < r->n_variants && !found; v++)
            found = !strcmp(r->variants[v].name, c->variant);
        if (!found)
            return pp_fail(err, PP_ERR_INPUT, "%s: comparison %d names variant '%s', which the run "
                           "does not have", path, i, pp_printable(c->variant, sh, sizeof sh));
        if (c->ndim < 0 || c->ndim > PP_MAX_DIMS ||
            (unsigned)c->opts.actual_format >= PP_FMT_COUNT ||
            (unsigned)c->opts.expected_format >= PP_FMT_COUNT)
            return pp_fail(err, PP_ERR_INPUT, "%s: comparison %d has a bad shape or format", path, i);
        // What the read checks, so that every report written can be read back.
        char tv[32];
        int major, minor;
        snprintf(tv, sizeof tv, "%d.%d", c->opts.torch_major, c->opts.torch_minor);
        if (pp_parse_torch_version(tv, &major, &minor) ||
            !(c->opts.rtol >= 0 && c->opts.atol >= 0 && isfinite(c->opts.rtol) && isfinite(c->opts.atol)))
            return pp_fail(err, PP_ERR_INPUT, "%s: comparison %d has torch version %s or tolerances "
                           "rtol %g, atol %g that no comparison can have", path, i, tv, c->opts.rtol,
                           c->opts.atol);
    }
    // Kept tensors are written with their format, so they must conform to it (the read checks).
    for (int i = 0; r->inputs && i < r->n_inputs; i++) {
        int rc = pp_tensor_check_writable(path, &r->inputs[i], err);
        if (rc)
            return rc;
    }
    for (int i = 0; r->reference_outputs && i < r->n_references; i++) {
        int rc = pp_tensor_check_writable(path, &r->reference_outputs[i], err);
        if (rc)
            return rc;
    }
    for (int v = 0; v < r->n_variants; v++)
        for (int i = 0; r->variants[v].outputs && i < r->n_references; i++) {
            if (!r->variants[v].outputs[i].data)
                continue;  // an output this variant does not have (external, partial)
            int rc = pp_tensor_check_writable(path, &r->variants[v].outputs[i], err);
            if (rc)
                return rc;
        }
    return PP_OK;
}

static int write_root(hid_t f, const pp_run_result *r, wctx *w)
{
    set_where(w, "the root attributes");
    if (put_i64(f, "schema_version", PP_REPORT_H5_SCHEMA) || put_str(f, "precprobe_version", r->precprobe_version) ||
        put_str(f, "case_name", r->case_name) || put_str(f, "op", r->op) ||
        put_str(f, "device", r->device) || put_str(f, "created_utc", r->created_utc) ||
        put_u64(f, "seed", r->seed) || (r->shapes && put_str(f, "shapes", r->shapes)))
        return wfail(w);
    if (r->case_text) {
        set_where(w, "/case");
        hid_t t = vstr_type();
        int bad = t < 0 || put_dataset(f, "case", t, t, 0, NULL, &r->case_text, 1);
        if (t >= 0)
            H5Tclose(t);
        if (bad)
            return wfail(w);
    }
    return PP_OK;
}

static int write_inputs(hid_t f, const pp_run_result *r, wctx *w)
{
    set_where(w, "/inputs");
    hid_t g = make_group(f, "inputs");
    if (g < 0)
        return wfail(w);
    int rc = PP_OK;
    const char **names = malloc(sizeof *names * (size_t)(r->n_inputs ? r->n_inputs : 1));
    if (!names) {
        H5Gclose(g);
        return pp_fail(w->err, PP_ERR_RUNTIME, "%s: out of memory", w->path);
    }
    for (int i = 0; i < r->n_inputs; i++)
        names[i] = r->input_names[i];
    if (put_strs(g, "names", names, 1, r->n_inputs))
        rc = wfail(w);
    for (int i = 0; !rc && r->inputs && i < r->n_inputs; i++) {
        char esc[ESC_MAX];
        name_escape(r->input_names[i], esc);
        set_where(w, "/inputs/%s", esc);
        if (H5Lexists(g, esc, H5P_DEFAULT) > 0)
            rc = pp_fail(w->err, PP_ERR_INPUT, "%s: two inputs named '%s'", w->path, esc);
        else if (put_tensor(g, esc, &r->inputs[i]))
            rc = wfail(w);
    }
    free(names);
    if (H5Gclose(g) < 0 && !rc)
        rc = wfail(w);
    return rc;
}

static int write_references(hid_t f, const pp_run_result *r, wctx *w)
{
    set_where(w, "/reference");
    hid_t g = make_group(f, "reference");
    if (g < 0)
        return wfail(w);
    int rc = PP_OK;
    for (int i = 0; !rc && i < r->n_references; i++) {
        const pp_reference_info *ref = &r->references[i];
        char esc[ESC_MAX];
        name_escape(ref->tensor, esc);
        set_where(w, "/reference/%s", esc);
        if (H5Lexists(g, esc, H5P_DEFAULT) > 0) {
            rc = pp_fail(w->err, PP_ERR_INPUT, "%s: two references of tensor '%s'", w->path, esc);
            break;
        }
        hid_t t = make_group(g, esc);
        if (t < 0 || put_str(t, "method", ref->method) || put_f64(t, "error_bound", ref->error_bound) ||
            (r->reference_outputs && put_tensor(t, "values", &r->reference_outputs[i])))
            rc = wfail(w);
        if (t >= 0 && H5Gclose(t) < 0 && !rc)
            rc = wfail(w);
    }
    if (H5Gclose(g) < 0 && !rc)
        rc = wfail(w);
    return rc;
}

// /variants/<v> with its knobs, external flag, outputs and an empty stats group.
static int write_variant(hid_t vars, const pp_run_result *r, const pp_variant_result *vr, wctx *w)
{
    char esc[ESC_MAX];
    name_escape(vr->name, esc);
    set_where(w, "/variants/%s", esc);
    hid_t g = make_group(vars, esc);
    if (g < 0)
        return wfail(w);
    int rc = PP_OK;
    for (int k = 0; !rc && k < vr->n_knobs; k++)
        if (put_str(g, vr->knobs[k].name, vr->knobs[k].value))
            rc = wfail(w);
    if (!rc && put_i32(g, "external", vr->external ? 1 : 0))
        rc = wfail(w);
    if (!rc && vr->outputs) {
        hid_t o = make_group(g, "outputs");
        if (o < 0)
            rc = wfail(w);
        for (int i = 0; !rc && i < r->n_references; i++) {
            char t[ESC_MAX];
            name_escape(r->references[i].tensor, t);
            set_where(w, "/variants/%s/outputs/%s", esc, t);
            if (vr->outputs[i].data && put_tensor(o, t, &vr->outputs[i]))
                rc = wfail(w);
        }
        if (o >= 0 && H5Gclose(o) < 0 && !rc)
            rc = wfail(w);
    }
    if (!rc && vr->n_series > 0) {  // /variants/<v>/series/<name>/{step, value}, 1-D binary64
        hid_t sg = make_group(g, "series");
        if (sg < 0)
            rc = wfail(w);
        for (int i = 0; !rc && i < vr->n_series; i++) {
            const pp_series *se = &vr->series[i];
            char sn[ESC_MAX];
            name_escape(se->name, sn);
            set_where(w, "/variants/%s/series/%s", esc, sn);
            hid_t one = make_group(sg, sn);
            hsize_t dims[1] = {(hsize_t)se->length};
            if (one < 0 ||
                put_dataset(one, "step", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, dims, se->step, se->length) ||
                put_dataset(one, "value", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, dims, se->value, se->length))
                rc = wfail(w);
            if (one >= 0 && H5Gclose(one) < 0 && !rc)
                rc = wfail(w);
        }
        if (sg >= 0 && H5Gclose(sg) < 0 && !rc)
            rc = wfail(w);
    }
    if (!rc) {
        set_where(w, "/variants/%s/stats", esc);
        hid_t s = make_group(g, "stats");
        if (s < 0 || H5Gclose(s) < 0)
            rc = wfail(w);
    }
    if (H5Gclose(g) < 0 && !rc)
        rc = wfail(w);
    return rc;
}

// One pp_close_max as <prefix>, <prefix>_flat_index, <prefix>_index, <prefix>_actual and
// <prefix>_expected.
static int put_max(hid_t g, const char *prefix, const pp_close_max *m, const pp_comparison *c)
{
    char name[64];
    int64_t idx[PP_MAX_DIMS];
    unravel(c->ndim, c->shape, m->index, idx);
    int bad = put_f64(g, prefix, m->value);
    snprintf(name, sizeof name, "%s_flat_index", prefix);
    bad = bad || put_i64(g, name, m->index);
    snprintf(name, sizeof name, "%s_index", prefix);
    bad = bad || put_i64v(g, name, idx, c->ndim);
    snprintf(name, sizeof name, "%s_actual", prefix);
    bad = bad || put_f64(g, name, m->actual);
    snprintf(name, sizeof name, "%s_expected", prefix);
    bad = bad || put_f64(g, name, m->expected);
    return bad ? -1 : 0;
}

// The ulp histogram with its bins described two ways: labels as the text report prints them,
// and each bin's upper edge in ulps (bin 0 holds exactly 0; the last two are "above 2^20" and
// "a NaN or unequal infinite operand").
static int put_histogram(hid_t g, const pp_close_stats *s)
{
    hsize_t n = PP_CLOSE_ULP_BINS;
    hid_t ds = make_dataset(g, "ulp_histogram", H5T_STD_I64LE, H5T_NATIVE_INT64, 1, &n, s->ulp_hist,
                            PP_CLOSE_ULP_BINS);
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
    int bad = put_strs(ds, "bin_labels", lp, 1, PP_CLOSE_ULP_BINS) ||
              put_f64v(ds, "bin_upper_edges", edges, PP_CLOSE_ULP_BINS) ||
              put_str(ds, "unit", "|actual - expected| / ulp(expected) in actual_format");
    if (H5Dclose(ds) < 0)
        bad = 1;
    return bad ? -1 : 0;
}

// The two exact accumulators as they are in memory (limbs and counters), so the read gives
// back the same struct and so the same mean and RMS, bit for bit.
static int put_exact_sums(hid_t g, const pp_close_stats *s)
{
    const pp_exactsum *sum[2] = {&s->sum_abs, &s->sum_sq};
    int64_t limbs[2][PP_EXACTSUM_LIMBS];
    uint64_t counts[2][SUM_COUNTERS];
    for (int r = 0; r < 2; r++) {
        memcpy(limbs[r], sum[r]->limb, sizeof limbs[r]);
        counts[r][0] = sum[r]->pending;
        counts[r][1] = sum[r]->n_pinf;
        counts[r][2] = sum[r]->n_ninf;
        counts[r][3] = sum[r]->n_nan;
    }
    hsize_t d1[2] = {2, PP_EXACTSUM_LIMBS}, d2[2] = {2, SUM_COUNTERS};
    hid_t ds = make_dataset(g, "exact_sums", H5T_STD_I64LE, H5T_NATIVE_INT64, 2, d1, limbs,
                            2 * PP_EXACTSUM_LIMBS);
    if (ds < 0)
        return -1;
    int bad = put_strs(ds, "rows", SUM_ROWS, 1, 2) || put_i64(ds, "lsb_exponent", PP_EXACTSUM_LSB) ||
              put_i64(ds, "digit_bits", 32);
    if (H5Dclose(ds) < 0)
        bad = 1;
    if (bad)
        return -1;
    ds = make_dataset(g, "exact_sum_counters", H5T_STD_U64LE, H5T_NATIVE_UINT64, 2, d2, counts,
                      2 * SUM_COUNTERS);
    if (ds < 0)
        return -1;
    bad = put_strs(ds, "rows", SUM_ROWS, 1, 2) || put_strs(ds, "columns", SUM_COUNTER_NAMES, 1, SUM_COUNTERS);
    if (H5Dclose(ds) < 0)
        bad = 1;
    return bad ? -1 : 0;
}

static int put_stats(hid_t g, const pp_comparison *c, int64_t order)
{
    const pp_close_stats *s = &c->stats;
    const pp_close_opts *o = &c->opts;
    char tv[32];
    snprintf(tv, sizeof tv, "%d.%d", o->torch_major, o->torch_minor);
    double frac = s->numel > 0 ? (double)s->mismatched / (double)s->numel : NAN;
    int bad = put_i64(g, "order", order) || put_i64v(g, "shape", c->shape, c->ndim) ||
              put_str(g, "actual_format", pp_format_get(o->actual_format).name) ||
              put_str(g, "expected_format", pp_format_get(o->expected_format).name) ||
              put_f64(g, "rtol", o->rtol) || put_f64(g, "atol", o->atol) ||
              put_i32(g, "equal_nan", o->equal_nan ? 1 : 0) || put_str(g, "torch_version", tv) ||
              put_i64(g, "total", s->numel) || put_i64(g, "mismatched", s->mismatched) ||
              put_f64(g, "mismatch_fraction", frac) || put_max(g, "max_abs_diff", &s->abs_diff, c) ||
              put_max(g, "max_rel_diff", &s->rel_diff, c) ||
              put_max(g, "worst_tolerance_ratio", &s->tol_ratio, c) ||
              put_max(g, "max_ulp", &s->ulp_err, c) || put_max(g, "max_abs_error", &s->abs_err, c) ||
              put_i64(g, "n_finite", s->n_finite) ||
              put_f64(g, "mean_abs", pp_close_stats_mean_abs(s)) ||
              put_f64(g, "rms", pp_close_stats_rms(s)) || put_i64(g, "nan_count", s->nan_actual) ||
              put_i64(g, "inf_count", s->inf_actual) ||
              put_i64(g, "nan_count_expected", s->nan_expected) ||
              put_i64(g, "inf_count_expected", s->inf_expected) || put_histogram(g, s) ||
              put_exact_sums(g, s);
    return bad ? -1 : 0;
}

// The per-axis error (src/core/axis_stats.h) as by_position (2 × P: max, mean) and by_head_block
// (H × B), with the axes and the block width as attributes of by_head_block.
static int put_axes(hid_t g, const pp_axis_stats *x)
{
    double *pos = malloc(sizeof(double) * 2 * (size_t)x->n_pos);
    if (!pos)
        return -1;
    memcpy(pos, x->pos_max, sizeof(double) * (size_t)x->n_pos);
    memcpy(pos + x->n_pos, x->pos_mean, sizeof(double) * (size_t)x->n_pos);
    hsize_t d1[2] = {2, (hsize_t)x->n_pos}, d2[2] = {(hsize_t)x->n_heads, (hsize_t)x->n_blocks};
    static const char *const rows[2] = {"max_abs_error", "mean_abs_error"};
    hid_t ds = make_dataset(g, "by_position", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2, d1, pos, 2 * x->n_pos);
    free(pos);
    if (ds < 0)
        return -1;
    int bad = put_strs(ds, "rows", rows, 1, 2) || put_i64(ds, "pos_dim", x->pos_dim);
    if (H5Dclose(ds) < 0)
        bad = 1;
    ds = bad ? H5I_INVALID_HID
             : make_dataset(g, "by_head_block", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2, d2, x->head_block_max,
                            x->n_heads * x->n_blocks);
    if (ds < 0)
        return -1;
    bad = put_i64(ds, "block", x->block) || put_i64(ds, "head_dim", x->head_dim) ||
          put_i64(ds, "pos_dim", x->pos_dim);
    if (H5Dclose(ds) < 0)
        bad = 1;
    return bad ? -1 : 0;
}

// /variants/<v>/stats/<tensor>/<against> for comparison i.
static int write_comparison(hid_t vars, const pp_comparison *c, int i, wctx *w)
{
    char ev[ESC_MAX], et[ESC_MAX], ea[ESC_MAX];
    name_escape(c->variant, ev);
    name_escape(c->tensor, et);
    name_escape(c->against, ea);
    set_where(w, "/variants/%s/stats/%s/%s", ev, et, ea);
    int rc = PP_OK;
    hid_t v = H5I_INVALID_HID, st = H5I_INVALID_HID, t = H5I_INVALID_HID, a = H5I_INVALID_HID;
    if ((v = H5Gopen2(vars, ev, H5P_DEFAULT)) < 0 || (st = H5Gopen2(v, "stats", H5P_DEFAULT)) < 0) {
        rc = wfail(w);
        goto done;
    }
    t = H5Lexists(st, et, H5P_DEFAULT) > 0 ? H5Gopen2(st, et, H5P_DEFAULT) : make_group(st, et);
    if (t < 0) {
        rc = wfail(w);
        goto done;
    }
    if (H5Lexists(t, ea, H5P_DEFAULT) > 0) {
        rc = pp_fail(w->err, PP_ERR_INPUT, "%s: two comparisons %s", w->path, w->where);
        goto done;
    }
    if ((a = make_group(t, ea)) < 0 || put_stats(a, c, i) || (c->axes.n_pos > 0 && put_axes(a, &c->axes)))
        rc = wfail(w);
done:
    if (a >= 0 && H5Gclose(a) < 0 && !rc)
        rc = wfail(w);
    if (t >= 0)
        H5Gclose(t);
    if (st >= 0)
        H5Gclose(st);
    if (v >= 0)
        H5Gclose(v);
    return rc;
}

// The gate's verdicts as one table (a compound dataset): rule, passed, detail per row, with
// fixed-length UTF-8 strings as long as pp_gate_verdict's fields.
static hid_t gate_type(int file)
{
    hid_t rule = H5Tcopy(H5T_C_S1), detail = H5Tcopy(H5T_C_S1);
    hid_t t = H5I_INVALID_HID;
    size_t rsz = sizeof((pp_gate_verdict *)0)->rule, dsz = sizeof((pp_gate_verdict *)0)->detail;
    if (rule >= 0 && detail >= 0 && H5Tset_size(rule, rsz) >= 0 && H5Tset_size(detail, dsz) >= 0 &&
        H5Tset_strpad(rule, H5T_STR_NULLTERM) >= 0 && H5Tset_strpad(detail, H5T_STR_NULLTERM) >= 0 &&
        H5Tset_cset(rule, H5T_CSET_UTF8) >= 0 && H5Tset_cset(detail, H5T_CSET_UTF8) >= 0) {
        if (file) {
            t = H5Tcreate(H5T_COMPOUND, rsz + 4 + dsz);
            if (t >= 0 && (H5Tinsert(t, "rule", 0, rule) < 0 ||
                           H5Tinsert(t, "passed", rsz, H5T_STD_I32LE) < 0 ||
                           H5Tinsert(t, "detail", rsz + 4, detail) < 0)) {
                H5Tclose(t);
                t = H5I_INVALID_HID;
            }
        } else {
            t = H5Tcreate(H5T_COMPOUND, sizeof(pp_gate_verdict));
            if (t >= 0 && (H5Tinsert(t, "rule", HOFFSET(pp_gate_verdict, rule), rule) < 0 ||
                           H5Tinsert(t, "passed", HOFFSET(pp_gate_verdict, passed), H5T_NATIVE_INT) < 0 ||
                           H5Tinsert(t, "detail", HOFFSET(pp_gate_verdict, detail), detail) < 0)) {
                H5Tclose(t);
                t = H5I_INVALID_HID;
            }
        }
    }
    if (rule >= 0)
        H5Tclose(rule);
    if (detail >= 0)
        H5Tclose(detail);
    return t;
}

static int write_gate(hid_t f, const pp_run_result *r, wctx *w)
{
    set_where(w, "/gate");
    hid_t ft = gate_type(1), mt = gate_type(0);
    hsize_t n = (hsize_t)r->n_verdicts;
    int bad = ft < 0 || mt < 0 || put_dataset(f, "gate", ft, mt, 1, &n, r->verdicts, r->n_verdicts);
    if (ft >= 0)
        H5Tclose(ft);
    if (mt >= 0)
        H5Tclose(mt);
    return bad ? wfail(w) : PP_OK;
}

static int write_all(hid_t f, const pp_run_result *r, wctx *w)
{
    int rc;
    if ((rc = write_root(f, r, w)) || (rc = write_inputs(f, r, w)) || (rc = write_references(f, r, w)))
        return rc;
    set_where(w, "/variants");
    hid_t vars = make_group(f, "variants");
    if (vars < 0)
        return wfail(w);
    for (int v = 0; !rc && v < r->n_variants; v++)
        rc = write_variant(vars, r, &r->variants[v], w);
    for (int i = 0; !rc && i < r->n_comparisons; i++)
        rc = write_comparison(vars, &r->comparisons[i], i, w);
    if (H5Gclose(vars) < 0 && !rc)
        rc = wfail(w);
    return rc ? rc : write_gate(f, r, w);
}

// HDF5 builds the file in memory (the core driver without a backing store) and precprobe writes
// the image through its atomic writer: libhdf5 1.10 crashes at exit after an H5Fclose that failed
// on a full disk (the file stays in its ID table half closed), so HDF5 must never see a failed
// write. The cost is memory: the image, and for a moment its copy.
int pp_report_h5_write(const char *path, const pp_run_result *r, pp_error *err)
{
    int rc = validate(r, path, err);
    if (rc)
        return rc;
    wctx w = {path, err, ""};
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
        rc = write_all(f, r, &w);
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

// ---------------------------------------------------------------------------------------------
// Reading: helpers, each 0 on success and -1 when the item is missing or mistyped

// A string attribute, malloc'd into *out (variable-length or fixed-length, any padding).
static int get_str_dup(hid_t obj, const char *name, char **out)
{
    *out = NULL;
    int rc = -1;
    if (H5Aexists(obj, name) <= 0)
        return -1;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    hid_t t = a >= 0 ? H5Aget_type(a) : H5I_INVALID_HID;
    hid_t sp = a >= 0 ? H5Aget_space(a) : H5I_INVALID_HID;
    hid_t mt = H5I_INVALID_HID;
    if (t < 0 || sp < 0 || H5Tget_class(t) != H5T_STRING || H5Sget_simple_extent_npoints(sp) != 1 ||
        (mt = H5Tcopy(H5T_C_S1)) < 0 || H5Tset_cset(mt, H5Tget_cset(t)) < 0)
        goto done;
    if (H5Tis_variable_str(t) > 0) {
        char *s = NULL;
        if (H5Tset_size(mt, H5T_VARIABLE) >= 0 && H5Aread(a, mt, &s) >= 0 && s) {
            *out = strdup(s);
            rc = *out ? 0 : -1;
        }
        if (s)
            H5free_memory(s);
    } else {
        size_t n = H5Tget_size(t);
        char *s = calloc(n + 1, 1);
        if (s && H5Tset_size(mt, n + 1) >= 0 && H5Tset_strpad(mt, H5T_STR_NULLTERM) >= 0 &&
            H5Aread(a, mt, s) >= 0) {
            s[n] = '\0';
            *out = s;
            rc = 0;
        } else {
            free(s);
        }
    }
done:
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

// A string attribute into buf[n]; -1 also when it does not fit.
static int get_str(hid_t obj, const char *name, char *buf, size_t n)
{
    char *s;
    if (get_str_dup(obj, name, &s))
        return -1;
    int ok = strlen(s) < n;
    if (ok)
        memcpy(buf, s, strlen(s) + 1);
    free(s);
    return ok ? 0 : -1;
}

// A numeric attribute of class cls with n values (min..max of them when max > min), read as
// mtype. n = -1 accepts 0..max values and returns the count in *count.
static int get_num(hid_t obj, const char *name, H5T_class_t cls, hid_t mtype, void *out,
                   hssize_t n, int *count)
{
    int rc = -1;
    if (H5Aexists(obj, name) <= 0)
        return -1;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    hid_t t = a >= 0 ? H5Aget_type(a) : H5I_INVALID_HID;
    hid_t sp = a >= 0 ? H5Aget_space(a) : H5I_INVALID_HID;
    hssize_t np = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
    if (t >= 0 && H5Tget_class(t) == cls && np >= 0 &&
        (count ? np <= PP_MAX_DIMS : np == n) && (np == 0 || H5Aread(a, mtype, out) >= 0)) {
        rc = 0;
        if (count)
            *count = (int)np;
    }
    if (sp >= 0)
        H5Sclose(sp);
    if (t >= 0)
        H5Tclose(t);
    if (a >= 0)
        H5Aclose(a);
    return rc;
}

static int get_i64(hid_t obj, const char *name, int64_t *v)
{
    return get_num(obj, name, H5T_INTEGER, H5T_NATIVE_INT64, v, 1, NULL);
}

static int get_f64(hid_t obj, const char *name, double *v)
{
    return get_num(obj, name, H5T_FLOAT, H5T_NATIVE_DOUBLE, v, 1, NULL);
}

typedef struct rctx {
    const char *path;
    pp_error *err;
} rctx;

static int bad(const rctx *c, const char *where, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

// A malformed report: "PATH: malformed report: WHERE: WHAT".
static int bad(const rctx *c, const char *where, const char *fmt, ...)
{
    char what[256], shown[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return pp_fail(c->err, PP_ERR_INPUT, "%s: malformed report: %s: %s", c->path,
                   pp_printable(where, shown, sizeof shown), what);
}

static int oom(const rctx *c)
{
    return pp_fail(c->err, PP_ERR_RUNTIME, "%s: out of memory", c->path);
}

// The names in group g in creation order (escaped, as stored), malloc'd; *n of them.
static int child_names(hid_t g, char ***names, int *n)
{
    *names = NULL;
    *n = 0;
    H5G_info_t info;
    if (H5Gget_info(g, &info) < 0 || info.nlinks > (1u << 24))
        return -1;
    char **v = calloc(info.nlinks ? info.nlinks : 1, sizeof *v);
    if (!v)
        return -1;
    for (hsize_t i = 0; i < info.nlinks; i++) {
        ssize_t len = H5Lget_name_by_idx(g, ".", H5_INDEX_CRT_ORDER, H5_ITER_INC, i, NULL, 0, H5P_DEFAULT);
        if (len < 0 || !(v[i] = malloc((size_t)len + 1)) ||
            H5Lget_name_by_idx(g, ".", H5_INDEX_CRT_ORDER, H5_ITER_INC, i, v[i], (size_t)len + 1,
                               H5P_DEFAULT) != len) {
            for (hsize_t j = 0; j <= i; j++)
                free(v[j]);
            free(v);
            return -1;
        }
    }
    *names = v;
    *n = (int)info.nlinks;
    return 0;
}

static void free_names(char **names, int n)
{
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

// A tensor dataset written by put_tensor: binary64 values, format from precprobe_format.
static int get_tensor(const rctx *c, hid_t loc, const char *name, const char *where, pp_tensor *t)
{
    int rc = PP_OK;
    memset(t, 0, sizeof *t);
    hid_t ds = H5Dopen2(loc, name, H5P_DEFAULT);
    hid_t ty = ds >= 0 ? H5Dget_type(ds) : H5I_INVALID_HID;
    hid_t sp = ds >= 0 ? H5Dget_space(ds) : H5I_INVALID_HID;
    char fname[32];
    pp_format_id f;
    if (ds < 0 || ty < 0 || sp < 0) {
        rc = bad(c, where, "missing tensor dataset");
        goto done;
    }
    if (H5Tget_class(ty) != H5T_FLOAT || get_str(ds, PP_H5_FORMAT_ATTR, fname, sizeof fname) ||
        pp_format_from_name(fname, &f)) {
        rc = bad(c, where, "not floating-point data with a " PP_H5_FORMAT_ATTR " attribute");
        goto done;
    }
    H5S_class_t sc = H5Sget_simple_extent_type(sp);
    int ndim = sc == H5S_SCALAR ? 0 : H5Sget_simple_extent_ndims(sp);
    hsize_t dims[PP_MAX_DIMS];
    int64_t shape[PP_MAX_DIMS];
    if ((sc != H5S_SCALAR && sc != H5S_SIMPLE) || ndim < 0 || ndim > PP_MAX_DIMS ||
        (ndim > 0 && H5Sget_simple_extent_dims(sp, dims, NULL) < 0)) {
        rc = bad(c, where, "not a tensor of at most %d dimensions", PP_MAX_DIMS);
        goto done;
    }
    for (int d = 0; d < ndim; d++)
        shape[d] = dims[d] > (hsize_t)PP_MAX_NUMEL ? PP_MAX_NUMEL + 1 : (int64_t)dims[d];
    pp_error e2 = {0};
    if ((rc = pp_tensor_alloc(t, ndim, shape, f, &e2))) {
        rc = rc == PP_ERR_RUNTIME ? oom(c) : bad(c, where, "%s", e2.msg);
        goto done;
    }
    if (t->numel > 0 && H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t->data) < 0) {
        rc = bad(c, where, "the values cannot be read");
        goto done;
    }
    char what[WHERE_MAX + 64];
    snprintf(what, sizeof what, "%s: malformed report: %s", c->path, where);
    rc = pp_tensor_check_format(t, f, what, c->err);
done:
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
// Reading: the run

static int read_root(const rctx *c, hid_t f, pp_run_result *r)
{
    int64_t schema;
    if (get_i64(f, "schema_version", &schema))
        return bad(c, "/", "no attribute schema_version (not a precprobe report?)");
    if (schema != PP_REPORT_H5_SCHEMA)
        return pp_fail(c->err, PP_ERR_INPUT,
                       "%s: report schema version %lld; this precprobe reads version %d", c->path,
                       (long long)schema, PP_REPORT_H5_SCHEMA);
    static const struct {
        const char *name;
        size_t off, size;
    } fields[] = {
        {"precprobe_version", offsetof(pp_run_result, precprobe_version), sizeof r->precprobe_version},
        {"case_name", offsetof(pp_run_result, case_name), sizeof r->case_name},
        {"op", offsetof(pp_run_result, op), sizeof r->op},
        {"device", offsetof(pp_run_result, device), sizeof r->device},
        {"created_utc", offsetof(pp_run_result, created_utc), sizeof r->created_utc},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (get_str(f, fields[i].name, (char *)r + fields[i].off, fields[i].size))
            return bad(c, "/", "attribute %s missing, not a string or longer than %zu bytes",
                       fields[i].name, fields[i].size - 1);
    if (get_num(f, "seed", H5T_INTEGER, H5T_NATIVE_UINT64, &r->seed, 1, NULL))
        return bad(c, "/", "attribute seed missing or not an integer");
    if (H5Aexists(f, "shapes") > 0 && get_str_dup(f, "shapes", &r->shapes))
        return bad(c, "/", "attribute shapes is not a string");
    if (H5Lexists(f, "case", H5P_DEFAULT) > 0) {
        hid_t ds = H5Dopen2(f, "case", H5P_DEFAULT);
        hid_t ty = ds >= 0 ? H5Dget_type(ds) : H5I_INVALID_HID;
        hid_t mt = vstr_type();
        char *s = NULL;
        int ok = ty >= 0 && mt >= 0 && H5Tget_class(ty) == H5T_STRING && H5Tis_variable_str(ty) > 0 &&
                 H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, &s) >= 0 && s;
        if (ok && !(r->case_text = strdup(s)))
            ok = -1;
        if (s)
            H5free_memory(s);
        if (mt >= 0)
            H5Tclose(mt);
        if (ty >= 0)
            H5Tclose(ty);
        if (ds >= 0)
            H5Dclose(ds);
        if (ok < 0)
            return oom(c);
        if (!ok)
            return bad(c, "/case", "not a variable-length string");
    }
    return PP_OK;
}

// /inputs: the names (attribute), and the tensors when kept.
static int read_inputs(const rctx *c, hid_t f, pp_run_result *r)
{
    hid_t g = H5Gopen2(f, "inputs", H5P_DEFAULT);
    if (g < 0)
        return bad(c, "/inputs", "missing group");
    int rc = PP_OK;
    hid_t a = H5I_INVALID_HID, t = H5I_INVALID_HID, sp = H5I_INVALID_HID, mt = vstr_type();
    char **names = NULL;
    hssize_t n = -1;
    if (H5Aexists(g, "names") > 0 && (a = H5Aopen(g, "names", H5P_DEFAULT)) >= 0 &&
        (t = H5Aget_type(a)) >= 0 && (sp = H5Aget_space(a)) >= 0 && H5Tget_class(t) == H5T_STRING &&
        H5Tis_variable_str(t) > 0 && mt >= 0)
        n = H5Sget_simple_extent_npoints(sp);
    if (n < 0 || n > (1 << 20)) {
        rc = bad(c, "/inputs", "attribute names missing or not variable-length strings");
        goto done;
    }
    names = calloc((size_t)n + 1, sizeof *names);
    r->input_names = calloc((size_t)n + 1, sizeof *r->input_names);
    if (!names || !r->input_names) {
        rc = oom(c);
        goto done;
    }
    if (n > 0 && H5Aread(a, mt, names) < 0) {
        rc = bad(c, "/inputs", "attribute names cannot be read");
        goto done;
    }
    r->n_inputs = (int)n;
    for (int i = 0; i < r->n_inputs; i++) {
        if (!names[i] || !names[i][0] || strlen(names[i]) >= PP_NAME_MAX) {
            rc = bad(c, "/inputs", "input name %d empty or longer than %d bytes", i, PP_NAME_MAX - 1);
            goto done;
        }
        strcpy(r->input_names[i], names[i]);
    }
    H5G_info_t info;
    if (H5Gget_info(g, &info) < 0) {
        rc = bad(c, "/inputs", "unreadable group");
        goto done;
    }
    if (info.nlinks > 0) {
        if (!(r->inputs = calloc((size_t)r->n_inputs + 1, sizeof *r->inputs))) {
            rc = oom(c);
            goto done;
        }
        for (int i = 0; !rc && i < r->n_inputs; i++) {
            char esc[ESC_MAX], where[ESC_MAX + 16];
            name_escape(r->input_names[i], esc);
            snprintf(where, sizeof where, "/inputs/%s", esc);
            rc = get_tensor(c, g, esc, where, &r->inputs[i]);
        }
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
    H5Gclose(g);
    return rc;
}

static int read_references(const rctx *c, hid_t f, pp_run_result *r)
{
    hid_t g = H5Gopen2(f, "reference", H5P_DEFAULT);
    if (g < 0)
        return bad(c, "/reference", "missing group");
    char **names;
    int n, rc = PP_OK;
    if (child_names(g, &names, &n)) {
        H5Gclose(g);
        return bad(c, "/reference", "its members cannot be listed in creation order");
    }
    if (!(r->references = calloc((size_t)n + 1, sizeof *r->references))) {
        rc = oom(c);
        goto done;
    }
    r->n_references = n;
    int kept = -1;  // whether values are kept: all or none
    for (int i = 0; !rc && i < n; i++) {
        pp_reference_info *ref = &r->references[i];
        char where[ESC_MAX + 16];
        snprintf(where, sizeof where, "/reference/%s", names[i]);
        hid_t t = H5Gopen2(g, names[i], H5P_DEFAULT);
        if (t < 0 || name_unescape(names[i], ref->tensor, sizeof ref->tensor) ||
            get_str(t, "method", ref->method, sizeof ref->method) ||
            get_f64(t, "error_bound", &ref->error_bound)) {
            rc = bad(c, where, "not a group with a valid name and attributes method, error_bound");
        } else {
            int has = H5Lexists(t, "values", H5P_DEFAULT) > 0;
            if (kept >= 0 && has != kept) {
                rc = bad(c, where, "values kept for some references and not others");
            } else if (has) {
                if (kept < 0 && !(r->reference_outputs = calloc((size_t)n, sizeof *r->reference_outputs)))
                    rc = oom(c);
                char w2[ESC_MAX + 32];
                snprintf(w2, sizeof w2, "%s/values", where);
                if (!rc)
                    rc = get_tensor(c, t, "values", w2, &r->reference_outputs[i]);
            }
            kept = has;
        }
        if (t >= 0)
            H5Gclose(t);
    }
done:
    free_names(names, n);
    H5Gclose(g);
    return rc;
}

// H5Aiterate2's visitor over a variant group's attributes in creation order: every attribute
// but "external" is a knob.
typedef struct knob_visit {
    pp_variant_result *v;
    int bad;  // 1: too many knobs, or one is not a string that fits
} knob_visit;

static herr_t visit_knob(hid_t loc, const char *name, const H5A_info_t *info, void *data)
{
    (void)info;
    knob_visit *kv = data;
    if (!strcmp(name, "external"))
        return 0;
    pp_variant_result *v = kv->v;
    if (v->n_knobs == PP_MAX_KNOBS || strlen(name) >= PP_NAME_MAX ||
        get_str(loc, name, v->knobs[v->n_knobs].value, PP_NAME_MAX)) {
        kv->bad = 1;
        return -1;
    }
    strcpy(v->knobs[v->n_knobs].name, name);
    v->n_knobs++;
    return 0;
}

// A 1-D binary64 dataset of exactly n values (n < 0: any length, returned in *n) into a new array.
static int get_vector(hid_t g, const char *name, int64_t *n, double **out)
{
    hid_t ds = H5Dopen2(g, name, H5P_DEFAULT);
    hid_t ty = ds >= 0 ? H5Dget_type(ds) : H5I_INVALID_HID;
    hid_t sp = ds >= 0 ? H5Dget_space(ds) : H5I_INVALID_HID;
    hsize_t dims[1] = {0};
    int ok = ty >= 0 && sp >= 0 && H5Tget_class(ty) == H5T_FLOAT && H5Sget_simple_extent_ndims(sp) == 1 &&
             H5Sget_simple_extent_dims(sp, dims, NULL) >= 0 && dims[0] <= ((hsize_t)1 << 32) &&
             (*n < 0 || (hsize_t)*n == dims[0]);
    *out = NULL;
    if (ok) {
        *out = calloc((size_t)dims[0] + 1, sizeof **out);
        ok = *out && (dims[0] == 0 || H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, *out) >= 0);
        *n = (int64_t)dims[0];
    }
    if (sp >= 0)
        H5Sclose(sp);
    if (ty >= 0)
        H5Tclose(ty);
    if (ds >= 0)
        H5Dclose(ds);
    if (!ok) {
        free(*out);
        *out = NULL;
    }
    return ok ? 0 : -1;
}

// /variants/<v>/series/<name>/{step, value} into v->series (creation order).
static int read_series(const rctx *c, hid_t g, const char *where, pp_variant_result *v)
{
    char **names = NULL;
    int n = 0, rc = PP_OK;
    hid_t sg = H5Gopen2(g, "series", H5P_DEFAULT);
    if (sg < 0 || child_names(sg, &names, &n)) {
        if (sg >= 0)
            H5Gclose(sg);
        return bad(c, where, "series is not a group");
    }
    if (n > 0 && !(v->series = calloc((size_t)n, sizeof *v->series)))
        rc = oom(c);
    for (int i = 0; !rc && i < n; i++) {
        pp_series *se = &v->series[i];
        hid_t one = H5Gopen2(sg, names[i], H5P_DEFAULT);
        int64_t len = -1;
        if (one < 0 || name_unescape(names[i], se->name, sizeof se->name) ||
            get_vector(one, "step", &len, &se->step) || get_vector(one, "value", &len, &se->value))
            rc = bad(c, where, "series '%s' needs 1-D binary64 datasets step and value of one length", names[i]);
        se->length = len;
        v->n_series = i + 1;
        if (one >= 0)
            H5Gclose(one);
    }
    free_names(names, n);
    H5Gclose(sg);
    return rc;
}

static int read_variant(const rctx *c, hid_t vars, const char *esc, pp_run_result *r,
                        pp_variant_result *v)
{
    char where[ESC_MAX + 32];
    snprintf(where, sizeof where, "/variants/%s", esc);
    hid_t g = H5Gopen2(vars, esc, H5P_DEFAULT);
    if (g < 0 || name_unescape(esc, v->name, sizeof v->name)) {
        if (g >= 0)
            H5Gclose(g);
        return bad(c, where, "not a group with a valid name");
    }
    int rc = PP_OK;
    int64_t ext;
    knob_visit kv = {v, 0};
    hsize_t at = 0;
    if (get_i64(g, "external", &ext) || (ext != 0 && ext != 1)) {
        rc = bad(c, where, "attribute external missing or not 0/1");
        goto done;
    }
    v->external = (int)ext;
    if (H5Aiterate2(g, H5_INDEX_CRT_ORDER, H5_ITER_INC, &at, visit_knob, &kv) < 0) {
        rc = bad(c, where, kv.bad ? "more than %d knobs, or a knob that is not a short string"
                                  : "its attributes cannot be listed in creation order (%d)",
                 PP_MAX_KNOBS);
        goto done;
    }
    if (H5Lexists(g, "outputs", H5P_DEFAULT) > 0) {
        hid_t o = H5Gopen2(g, "outputs", H5P_DEFAULT);
        if (o < 0 || !(v->outputs = calloc((size_t)r->n_references + 1, sizeof *v->outputs)))
            rc = o < 0 ? bad(c, where, "outputs is not a group") : oom(c);
        for (int i = 0; !rc && i < r->n_references; i++) {
            char t[ESC_MAX], w2[3 * ESC_MAX];
            name_escape(r->references[i].tensor, t);
            snprintf(w2, sizeof w2, "%s/outputs/%s", where, t);
            if (H5Lexists(o, t, H5P_DEFAULT) > 0)  // an external variant may lack some outputs
                rc = get_tensor(c, o, t, w2, &v->outputs[i]);
        }
        if (o >= 0)
            H5Gclose(o);
    }
    if (!rc && H5Lexists(g, "series", H5P_DEFAULT) > 0)
        rc = read_series(c, g, where, v);
done:
    H5Gclose(g);
    return rc;
}

// Restores one pp_close_max from the attributes put_max wrote.
static int get_max(hid_t g, const char *prefix, pp_close_max *m)
{
    char name[64];
    int bad_ = get_f64(g, prefix, &m->value);
    snprintf(name, sizeof name, "%s_flat_index", prefix);
    bad_ = bad_ || get_i64(g, name, &m->index);
    snprintf(name, sizeof name, "%s_actual", prefix);
    bad_ = bad_ || get_f64(g, name, &m->actual);
    snprintf(name, sizeof name, "%s_expected", prefix);
    bad_ = bad_ || get_f64(g, name, &m->expected);
    return bad_ ? -1 : 0;
}

// A 2-row integer dataset of exactly cols columns into out (memory type mtype).
static int get_rows(hid_t g, const char *name, hid_t mtype, int cols, void *out)
{
    hid_t ds = H5Dopen2(g, name, H5P_DEFAULT);
    hid_t ty = ds >= 0 ? H5Dget_type(ds) : H5I_INVALID_HID;
    hid_t sp = ds >= 0 ? H5Dget_space(ds) : H5I_INVALID_HID;
    hsize_t dims[2];
    int ok = ty >= 0 && sp >= 0 && H5Tget_class(ty) == H5T_INTEGER &&
             H5Sget_simple_extent_ndims(sp) == (cols ? 2 : 1) &&
             H5Sget_simple_extent_dims(sp, dims, NULL) >= 0 &&
             (cols ? dims[0] == 2 && dims[1] == (hsize_t)cols : dims[0] == PP_CLOSE_ULP_BINS) &&
             H5Dread(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0;
    if (sp >= 0)
        H5Sclose(sp);
    if (ty >= 0)
        H5Tclose(ty);
    if (ds >= 0)
        H5Dclose(ds);
    return ok ? 0 : -1;
}

// A 2-D binary64 dataset's extents (dims) and, when out is not NULL, its values.
static int get_2d(hid_t g, const char *name, hsize_t dims[2], double *out)
{
    hid_t ds = H5Dopen2(g, name, H5P_DEFAULT);
    hid_t ty = ds >= 0 ? H5Dget_type(ds) : H5I_INVALID_HID;
    hid_t sp = ds >= 0 ? H5Dget_space(ds) : H5I_INVALID_HID;
    int ok = ty >= 0 && sp >= 0 && H5Tget_class(ty) == H5T_FLOAT && H5Sget_simple_extent_ndims(sp) == 2 &&
             H5Sget_simple_extent_dims(sp, dims, NULL) >= 0 &&
             (!out || H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0);
    if (sp >= 0)
        H5Sclose(sp);
    if (ty >= 0)
        H5Tclose(ty);
    if (ds >= 0)
        H5Dclose(ds);
    return ok ? 0 : -1;
}

// The optional per-axis error of a comparison (put_axes); absent: x stays empty.
static int read_axes(const rctx *c, hid_t g, const char *where, pp_axis_stats *x)
{
    memset(x, 0, sizeof *x);
    x->pos_dim = x->head_dim = -1;
    if (H5Lexists(g, "by_position", H5P_DEFAULT) <= 0)
        return PP_OK;
    hsize_t dp[2], dh[2];
    int64_t block, pos_dim, head_dim;
    hid_t hb = H5Lexists(g, "by_head_block", H5P_DEFAULT) > 0 ? H5Dopen2(g, "by_head_block", H5P_DEFAULT)
                                                              : H5I_INVALID_HID;
    int ok = hb >= 0 && !get_i64(hb, "block", &block) && !get_i64(hb, "pos_dim", &pos_dim) &&
             !get_i64(hb, "head_dim", &head_dim);
    if (hb >= 0)
        H5Dclose(hb);
    if (!ok || get_2d(g, "by_position", dp, NULL) || get_2d(g, "by_head_block", dh, NULL) || dp[0] != 2 ||
        pos_dim < -1 || pos_dim >= PP_MAX_DIMS || head_dim < -1 || head_dim >= PP_MAX_DIMS ||
        dp[1] > ((hsize_t)1 << 40) || dh[0] > ((hsize_t)1 << 24) || dh[1] > PP_AXIS_MAX_BLOCKS ||
        pp_axis_stats_alloc(x, (int64_t)dp[1], (int64_t)dh[0], block, (int64_t)dh[1]))
        return bad(c, where, "by_position (2 x P) and by_head_block (H x B, attributes block, pos_dim, "
                   "head_dim) missing, mis-shaped or inconsistent");
    x->pos_dim = (int)pos_dim;
    x->head_dim = (int)head_dim;
    double *pos = malloc(sizeof(double) * 2 * dp[1]);
    if (!pos || get_2d(g, "by_position", dp, pos) || get_2d(g, "by_head_block", dh, x->head_block_max)) {
        free(pos);
        pp_axis_stats_free(x);
        return pos ? bad(c, where, "by_position or by_head_block unreadable") : oom(c);
    }
    memcpy(x->pos_max, pos, sizeof(double) * dp[1]);
    memcpy(x->pos_mean, pos + dp[1], sizeof(double) * dp[1]);
    free(pos);
    return PP_OK;
}

// One comparison group into *cmp; its position in r->comparisons into *order.
static int read_comparison(const rctx *c, hid_t g, const char *where, pp_comparison *cmp, int64_t *order)
{
    pp_close_stats *s = &cmp->stats;
    pp_close_opts *o = &cmp->opts;
    char af[32], ef[32], tv[32];
    int64_t eqn;
    pp_close_stats_init(s);
    if (get_i64(g, "order", order) ||
        get_num(g, "shape", H5T_INTEGER, H5T_NATIVE_INT64, cmp->shape, -1, &cmp->ndim) ||
        get_str(g, "actual_format", af, sizeof af) || get_str(g, "expected_format", ef, sizeof ef) ||
        get_f64(g, "rtol", &o->rtol) || get_f64(g, "atol", &o->atol) ||
        get_i64(g, "equal_nan", &eqn) || get_str(g, "torch_version", tv, sizeof tv) ||
        get_i64(g, "total", &s->numel) || get_i64(g, "mismatched", &s->mismatched) ||
        get_max(g, "max_abs_diff", &s->abs_diff) || get_max(g, "max_rel_diff", &s->rel_diff) ||
        get_max(g, "worst_tolerance_ratio", &s->tol_ratio) || get_max(g, "max_ulp", &s->ulp_err) ||
        get_i64(g, "n_finite", &s->n_finite) || get_i64(g, "nan_count", &s->nan_actual) ||
        get_i64(g, "inf_count", &s->inf_actual) || get_i64(g, "nan_count_expected", &s->nan_expected) ||
        get_i64(g, "inf_count_expected", &s->inf_expected))
        return bad(c, where, "a statistics attribute is missing or mistyped");
    // reports written before max_abs_error existed (older baselines) lack it: left as "none"
    if (H5Aexists(g, "max_abs_error") > 0 && get_max(g, "max_abs_error", &s->abs_err))
        return bad(c, where, "max_abs_error is mistyped");
    if (pp_format_from_name(af, &o->actual_format) || pp_format_from_name(ef, &o->expected_format))
        return bad(c, where, "unknown format '%s' or '%s'", af, ef);
    if (pp_parse_torch_version(tv, &o->torch_major, &o->torch_minor))
        return bad(c, where, "bad torch_version '%s'", tv);
    o->equal_nan = eqn != 0;
    int64_t limbs[2][PP_EXACTSUM_LIMBS];
    uint64_t counts[2][SUM_COUNTERS];
    if (get_rows(g, "ulp_histogram", H5T_NATIVE_INT64, 0, s->ulp_hist) ||
        get_rows(g, "exact_sums", H5T_NATIVE_INT64, PP_EXACTSUM_LIMBS, limbs) ||
        get_rows(g, "exact_sum_counters", H5T_NATIVE_UINT64, SUM_COUNTERS, counts))
        return bad(c, where, "ulp_histogram (%d bins), exact_sums (2 x %d) or exact_sum_counters "
                   "(2 x %d) missing or mis-shaped", PP_CLOSE_ULP_BINS, PP_EXACTSUM_LIMBS, SUM_COUNTERS);
    pp_exactsum *sum[2] = {&s->sum_abs, &s->sum_sq};
    for (int k = 0; k < 2; k++) {
        memcpy(sum[k]->limb, limbs[k], sizeof limbs[k]);
        // pending counts additions since a carry pass, which comes before 2^30 of them.
        if (counts[k][0] >= (1u << 30))
            return bad(c, where, "exact_sum_counters: pending %llu out of range",
                       (unsigned long long)counts[k][0]);
        sum[k]->pending = (uint32_t)counts[k][0];
        sum[k]->n_pinf = counts[k][1];
        sum[k]->n_ninf = counts[k][2];
        sum[k]->n_nan = counts[k][3];
    }
    // What the text needs to be safe with: counts within the tensor, indices inside the shape.
    int64_t prod;
    pp_error e2;
    if (pp_shape_numel(cmp->ndim, cmp->shape, &prod, &e2))
        return bad(c, where, "bad shape: %s", e2.msg);
    if (s->numel < 0 || s->mismatched < 0 || s->mismatched > s->numel || s->n_finite < 0 ||
        s->n_finite > s->numel)
        return bad(c, where, "inconsistent counts (total %lld, mismatched %lld, n_finite %lld)",
                   (long long)s->numel, (long long)s->mismatched, (long long)s->n_finite);
    const pp_close_max *m[5] = {&s->abs_diff, &s->rel_diff, &s->tol_ratio, &s->ulp_err, &s->abs_err};
    for (int k = 0; k < 5; k++)
        if (m[k]->index < -1 || m[k]->index >= prod)
            return bad(c, where, "flat index %lld outside the shape", (long long)m[k]->index);
    if (!(o->rtol >= 0 && o->atol >= 0 && isfinite(o->rtol) && isfinite(o->atol)))
        return bad(c, where, "rtol and atol must be finite and >= 0");
    return read_axes(c, g, where, &cmp->axes);
}

// Every /variants/<v>/stats/<tensor>/<against> group, placed in r->comparisons by its order.
static int read_comparisons(const rctx *c, hid_t vars, pp_run_result *r)
{
    int rc = PP_OK, cap = 0;
    char *filled = NULL;
    for (int v = 0; !rc && v < r->n_variants; v++) {
        char ev[ESC_MAX], where[WHERE_MAX];
        name_escape(r->variants[v].name, ev);
        snprintf(where, sizeof where, "/variants/%s/stats", ev);
        hid_t st = H5Gopen2(vars, ev, H5P_DEFAULT);
        hid_t sg = st >= 0 ? H5Gopen2(st, "stats", H5P_DEFAULT) : H5I_INVALID_HID;
        char **tensors = NULL;
        int nt = 0;
        if (sg < 0 || child_names(sg, &tensors, &nt))
            rc = bad(c, where, "missing group, or not listable in creation order");
        for (int t = 0; !rc && t < nt; t++) {
            snprintf(where, sizeof where, "/variants/%s/stats/%s", ev, tensors[t]);
            hid_t tg = H5Gopen2(sg, tensors[t], H5P_DEFAULT);
            char **against = NULL;
            int na = 0;
            if (tg < 0 || child_names(tg, &against, &na))
                rc = bad(c, where, "not a group listable in creation order");
            for (int a = 0; !rc && a < na; a++) {
                snprintf(where, sizeof where, "/variants/%s/stats/%s/%s", ev, tensors[t], against[a]);
                pp_comparison cmp;
                memset(&cmp, 0, sizeof cmp);
                int64_t order;
                hid_t ag = H5Gopen2(tg, against[a], H5P_DEFAULT);
                if (ag < 0)
                    rc = bad(c, where, "not a group");
                else
                    rc = read_comparison(c, ag, where, &cmp, &order);
                if (ag >= 0)
                    H5Gclose(ag);
                if (!rc && (name_unescape(tensors[t], cmp.tensor, sizeof cmp.tensor) ||
                            name_unescape(against[a], cmp.against, sizeof cmp.against)))
                    rc = bad(c, where, "bad escaped name");
                if (!rc && (order < 0 || order > (1 << 24)))
                    rc = bad(c, where, "order %lld out of range", (long long)order);
                if (!rc && order >= cap) {
                    int ncap = (int)order + 16;
                    pp_comparison *nc = realloc(r->comparisons, sizeof *nc * (size_t)ncap);
                    char *nf = nc ? realloc(filled, (size_t)ncap) : NULL;
                    if (nc)
                        r->comparisons = nc;
                    if (!nf) {
                        rc = oom(c);
                    } else {
                        memset(nf + cap, 0, (size_t)(ncap - cap));
                        // zeroed: an unfilled slot must free as empty (its axes own nothing)
                        memset(nc + cap, 0, sizeof *nc * (size_t)(ncap - cap));
                        filled = nf;
                        cap = ncap;
                    }
                }
                if (!rc && filled[order])
                    rc = bad(c, where, "order %lld used twice", (long long)order);
                if (!rc) {
                    strcpy(cmp.variant, r->variants[v].name);
                    r->comparisons[order] = cmp;
                    filled[order] = 1;
                    if (order >= r->n_comparisons)
                        r->n_comparisons = (int)order + 1;
                } else {
                    pp_axis_stats_free(&cmp.axes);
                }
            }
            free_names(against, na);
            if (tg >= 0)
                H5Gclose(tg);
        }
        free_names(tensors, nt);
        if (sg >= 0)
            H5Gclose(sg);
        if (st >= 0)
            H5Gclose(st);
    }
    for (int i = 0; !rc && i < r->n_comparisons; i++)
        if (!filled[i])
            rc = bad(c, "/variants", "no comparison has order %d (orders must be 0..n-1)", i);
    free(filled);
    return rc;
}

static int read_variants(const rctx *c, hid_t f, pp_run_result *r)
{
    hid_t g = H5Gopen2(f, "variants", H5P_DEFAULT);
    if (g < 0)
        return bad(c, "/variants", "missing group");
    char **names;
    int n, rc = PP_OK;
    if (child_names(g, &names, &n)) {
        H5Gclose(g);
        return bad(c, "/variants", "its members cannot be listed in creation order");
    }
    if (!(r->variants = calloc((size_t)n + 1, sizeof *r->variants)))
        rc = oom(c);
    else
        r->n_variants = n;
    for (int v = 0; !rc && v < n; v++)
        rc = read_variant(c, g, names[v], r, &r->variants[v]);
    if (!rc)
        rc = read_comparisons(c, g, r);
    free_names(names, n);
    H5Gclose(g);
    return rc;
}

static int read_gate(const rctx *c, hid_t f, pp_run_result *r)
{
    hid_t ds = H5Dopen2(f, "gate", H5P_DEFAULT);
    hid_t ty = ds >= 0 ? H5Dget_type(ds) : H5I_INVALID_HID;
    hid_t sp = ds >= 0 ? H5Dget_space(ds) : H5I_INVALID_HID;
    hid_t mt = gate_type(0);
    int rc = PP_OK;
    hssize_t n = sp >= 0 && H5Sget_simple_extent_ndims(sp) == 1 ? H5Sget_simple_extent_npoints(sp) : -1;
    if (ty < 0 || H5Tget_class(ty) != H5T_COMPOUND || n < 0 || n > (1 << 24) || mt < 0) {
        rc = bad(c, "/gate", "missing, or not a 1-D table of (rule, passed, detail)");
    } else if (!(r->verdicts = calloc((size_t)n + 1, sizeof *r->verdicts))) {
        rc = oom(c);
    } else if (n > 0 && H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, r->verdicts) < 0) {
        rc = bad(c, "/gate", "the table cannot be read as (rule, passed, detail)");
    } else {
        r->n_verdicts = (int)n;
        for (int i = 0; i < r->n_verdicts; i++) {
            pp_gate_verdict *v = &r->verdicts[i];
            v->rule[sizeof v->rule - 1] = v->detail[sizeof v->detail - 1] = '\0';
            v->passed = v->passed != 0;
        }
    }
    if (mt >= 0)
        H5Tclose(mt);
    if (sp >= 0)
        H5Sclose(sp);
    if (ty >= 0)
        H5Tclose(ty);
    if (ds >= 0)
        H5Dclose(ds);
    return rc;
}

int pp_report_h5_read(const char *path, pp_run_result *r, pp_error *err)
{
    memset(r, 0, sizeof *r);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return pp_fail(err, PP_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    close(fd);
    rctx c = {path, err};
    pp_h5_quiet q;
    pp_h5_quiet_begin(&q);
    int rc;
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        rc = pp_fail(err, PP_ERR_INPUT, "%s: not an HDF5 file (or unreadable)", path);
    } else {
        if (!(rc = read_root(&c, f, r)) && !(rc = read_inputs(&c, f, r)) &&
            !(rc = read_references(&c, f, r)) && !(rc = read_variants(&c, f, r)))
            rc = read_gate(&c, f, r);
        H5Fclose(f);
    }
    pp_h5_quiet_end(&q);
    if (rc)
        pp_run_result_free(r);
    return rc;
}
