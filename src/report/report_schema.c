// report_schema.c — the three walkers over a table of fields (see report_schema.h): check, write,
// read. Each kind's three behaviours sit side by side, so a kind cannot be written one way and
// read another.
#include "report/report_schema.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/h5attr.h"
#include "io/h5obj.h"
#include "io/tensor_io.h"

// An attribute's name after its SUB prefix.
#define ATTR_NAME_MAX 128
// The most rows a ROWS dataset is read with, and the most elements of a VEC.
#define ROWS_MAX (1 << 24)
#define VEC_MAX ((hsize_t)1 << 32)

// ---------------------------------------------------------------------------------------------
// Messages and names

static int vfail(const pp_rs_io *io, int code, const char *lead, const char *where, const char *fmt,
                 va_list ap)
{
    char what[256], shown[200];
    vsnprintf(what, sizeof what, fmt, ap);
    return pp_fail(io->err, code, "%s: %s%s: %s", io->path, lead, pp_printable(where, shown, sizeof shown),
                   what);
}

int pp_rs_invalid(const pp_rs_io *io, const char *where, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vfail(io, PP_ERR_INPUT, io->reading ? "malformed report: " : "cannot write ", where, fmt, ap);
    va_end(ap);
    return rc;
}

int pp_rs_write_failed(const pp_rs_io *io, const char *where, const char *name)
{
    char shown[200];
    return pp_fail(io->err, PP_ERR_RUNTIME, "%s: HDF5 failed to write %s: %s", io->path,
                   pp_printable(where, shown, sizeof shown), name);
}

int pp_rs_oom(const pp_rs_io *io)
{
    return pp_fail(io->err, PP_ERR_RUNTIME, "%s: out of memory", io->path);
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

int pp_rs_name_escape(const char *in, char out[PP_RS_ESC_MAX])
{
    size_t k = 0;
    if (!*in)
        return -1;
    if (!strcmp(in, ".")) {
        strcpy(out, "%2E");
        return 0;
    }
    for (; *in && k + 4 <= PP_RS_ESC_MAX; in++) {
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

int pp_rs_name_unescape(const char *in, char *out, size_t n)
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

void pp_rs_join(char *out, const char *where, const char *name)
{
    snprintf(out, PP_RS_WHERE_MAX, "%s/%s", strcmp(where, "/") ? where : "", name);
}

// ---------------------------------------------------------------------------------------------
// Access to the struct

static void *at(const pp_rs_frame *fr, size_t off)
{
    return (char *)fr->obj + off;
}

static int count_of(const pp_rs_frame *fr, const pp_rs_field *f)
{
    return *(const int *)at(fr, f->count);
}

// A C string held in a fixed array of n bytes: NUL-terminated inside it.
static int fits(const char *s, size_t n)
{
    return memchr(s, '\0', n) != NULL;
}

static int nonneg(double v)
{
    return v >= 0 && isfinite(v);
}

// A ROWS table's members as "(rule, passed, detail)", for messages.
static void member_names(const pp_rs_table *t, char *out, size_t n)
{
    size_t k = (size_t)snprintf(out, n, "(");
    for (int i = 0; i < t->n_fields && k < n; i++)
        k += (size_t)snprintf(out + k, n - k, "%s%s", i ? ", " : "", t->fields[i].name);
    if (k < n)
        snprintf(out + k, n - k, ")");
}

// ---------------------------------------------------------------------------------------------
// Check: what the write needs and the read will insist on, before anything touches the disk

static int check_table(const pp_rs_io *io, const char *where, const pp_rs_table *t, const pp_rs_frame *fr);

static int check_list(const pp_rs_io *io, const char *where, const pp_rs_field *f, const pp_rs_frame *fr)
{
    int n = count_of(fr, f);
    char *base = *(char **)at(fr, f->off);
    if (n < 0 || (n > 0 && !base))
        return pp_rs_invalid(io, where, "%s: count %d without its array", f->name, n);
    char wl[PP_RS_WHERE_MAX];
    pp_rs_join(wl, where, f->name);
    for (int i = 0; i < n; i++) {
        void *e = base + (size_t)i * f->size;
        if (f->kind == PP_RS_LIST) {
            const char *key = (const char *)e + f->key;
            char esc[PP_RS_ESC_MAX], shown[PP_NAME_MAX + 8];
            if (!fits(key, PP_NAME_MAX) || pp_rs_name_escape(key, esc))
                return pp_rs_invalid(io, wl, "element %d has no name", i);
            for (int u = 0; u < i; u++)
                if (!strcmp((const char *)(base + (size_t)u * f->size) + f->key, key))
                    return pp_rs_invalid(io, wl, "'%s' appears twice", pp_printable(key, shown, sizeof shown));
            char we[PP_RS_WHERE_MAX];
            pp_rs_join(we, wl, esc);
            pp_rs_frame ef = {e, i, fr};
            int rc = check_table(io, we, f->sub, &ef);
            if (rc)
                return rc;
        } else {
            char we[PP_RS_WHERE_MAX];
            snprintf(we, sizeof we, "%s row %d", wl, i);
            pp_rs_frame ef = {e, i, fr};
            int rc = check_table(io, we, f->sub, &ef);
            if (rc)
                return rc;
        }
    }
    return PP_OK;
}

static int check_field(const pp_rs_io *io, const char *where, const pp_rs_field *f, const pp_rs_frame *fr)
{
    void *p = at(fr, f->off);
    switch (f->kind) {
    case PP_RS_STR:
        return fits(p, f->size) ? PP_OK : pp_rs_invalid(io, where, "%s is not NUL-terminated", f->name);
    case PP_RS_F64:
        return !(f->flags & PP_RS_NONNEG) || nonneg(*(double *)p)
                   ? PP_OK
                   : pp_rs_invalid(io, where, "%s is %g; it must be finite and >= 0", f->name, *(double *)p);
    case PP_RS_I64_VEC: {
        int n = count_of(fr, f);
        return n >= 0 && (size_t)n <= f->size
                   ? PP_OK
                   : pp_rs_invalid(io, where, "%s has %d values (0 to %zu)", f->name, n, f->size);
    }
    case PP_RS_FORMAT:
        return (unsigned)*(pp_format_id *)p < PP_FMT_COUNT ? PP_OK
                                                           : pp_rs_invalid(io, where, "%s is not a format", f->name);
    case PP_RS_VEC: {
        int64_t n = *(int64_t *)at(fr, f->count);
        return n >= 0 && (n == 0 || *(double **)p)
                   ? PP_OK
                   : pp_rs_invalid(io, where, "%s: length %lld, or no array", f->name, (long long)n);
    }
    case PP_RS_SUB: {
        pp_rs_frame sf = {p, -1, fr};
        return check_table(io, where, f->sub, &sf);
    }
    case PP_RS_GROUP: {
        char wg[PP_RS_WHERE_MAX];
        pp_rs_join(wg, where, f->name);
        return check_table(io, wg, f->sub, fr);
    }
    case PP_RS_LIST:
    case PP_RS_ROWS:
        return check_list(io, where, f, fr);
    case PP_RS_HOOK:
        return f->hook->check ? f->hook->check(io, where, f->name, fr) : PP_OK;
    default:  // STR_PTR, TEXT, I64, U64, BOOL: any value can be written and read back
        return PP_OK;
    }
}

static int check_table(const pp_rs_io *io, const char *where, const pp_rs_table *t, const pp_rs_frame *fr)
{
    for (int i = 0; i < t->n_fields; i++) {
        int rc = check_field(io, where, &t->fields[i], fr);
        if (rc)
            return rc;
    }
    return t->consistent ? t->consistent(io, where, fr) : PP_OK;
}

int pp_rs_check(const pp_rs_io *io, const char *where, const pp_rs_table *t, const pp_rs_frame *fr)
{
    return check_table(io, where, t, fr);
}

// ---------------------------------------------------------------------------------------------
// Write

// The compound type of a ROWS table: in the file packed (strings, then int32 little-endian), in
// memory at the members' offsets in the element.
static hid_t rows_type(const pp_rs_table *t, size_t elem_size, int file)
{
    size_t packed = 0;
    for (int i = 0; i < t->n_fields; i++)
        packed += t->fields[i].kind == PP_RS_STR ? t->fields[i].size : 4;
    hid_t ct = H5Tcreate(H5T_COMPOUND, file ? packed : elem_size);
    size_t pos = 0;
    for (int i = 0; ct >= 0 && i < t->n_fields; i++) {
        const pp_rs_field *m = &t->fields[i];
        hid_t mt = H5I_INVALID_HID;
        int ok;
        if (m->kind == PP_RS_STR) {
            mt = H5Tcopy(H5T_C_S1);
            ok = mt >= 0 && H5Tset_size(mt, m->size) >= 0 && H5Tset_strpad(mt, H5T_STR_NULLTERM) >= 0 &&
                 H5Tset_cset(mt, H5T_CSET_UTF8) >= 0 && H5Tinsert(ct, m->name, file ? pos : m->off, mt) >= 0;
        } else {
            ok = H5Tinsert(ct, m->name, file ? pos : m->off, file ? H5T_STD_I32LE : H5T_NATIVE_INT) >= 0;
        }
        if (mt >= 0)
            H5Tclose(mt);
        if (!ok) {
            H5Tclose(ct);
            ct = H5I_INVALID_HID;
        }
        pos += m->kind == PP_RS_STR ? m->size : 4;
    }
    return ct;
}

static int write_table(const pp_rs_io *io, hid_t loc, const char *where, const pp_rs_table *t,
                       const pp_rs_frame *fr, const char *prefix);

static int write_list(const pp_rs_io *io, hid_t loc, const char *where, const pp_rs_field *f,
                      const pp_rs_frame *fr)
{
    int n = count_of(fr, f);
    if ((f->flags & PP_RS_OPTIONAL) && n == 0)
        return PP_OK;
    char wl[PP_RS_WHERE_MAX];
    pp_rs_join(wl, where, f->name);
    hid_t g = pp_h5obj_group(loc, f->name);
    if (g < 0)
        return pp_rs_write_failed(io, where, f->name);
    char *base = *(char **)at(fr, f->off);
    int rc = PP_OK;
    for (int i = 0; !rc && i < n; i++) {
        void *e = base + (size_t)i * f->size;
        char esc[PP_RS_ESC_MAX], we[PP_RS_WHERE_MAX];
        pp_rs_name_escape((const char *)e + f->key, esc);
        pp_rs_join(we, wl, esc);
        hid_t eg = pp_h5obj_group(g, esc);
        pp_rs_frame ef = {e, i, fr};
        rc = eg < 0 ? pp_rs_write_failed(io, wl, esc) : write_table(io, eg, we, f->sub, &ef, "");
        if (eg >= 0 && H5Gclose(eg) < 0 && !rc)
            rc = pp_rs_write_failed(io, wl, esc);
    }
    if (H5Gclose(g) < 0 && !rc)
        rc = pp_rs_write_failed(io, where, f->name);
    return rc;
}

static int write_rows(hid_t loc, const pp_rs_field *f, const pp_rs_frame *fr)
{
    hid_t ft = rows_type(f->sub, f->size, 1), mt = rows_type(f->sub, f->size, 0);
    hsize_t n = (hsize_t)count_of(fr, f);
    int bad = ft < 0 || mt < 0 || pp_h5obj_put_dataset(loc, f->name, ft, mt, 1, &n, *(void **)at(fr, f->off));
    if (ft >= 0)
        H5Tclose(ft);
    if (mt >= 0)
        H5Tclose(mt);
    return bad ? -1 : 0;
}

// One field; 0, -1 when HDF5 failed (the caller names the item), or a code with io->err set (>0).
static int write_field(const pp_rs_io *io, hid_t loc, const char *where, const pp_rs_field *f,
                       const pp_rs_frame *fr, const char *name)
{
    const void *p = at(fr, f->off);
    switch (f->kind) {
    case PP_RS_STR:
        return pp_h5attr_put_vstr(loc, name, p);
    case PP_RS_STR_PTR:
        return *(char *const *)p ? pp_h5attr_put_vstr(loc, name, *(char *const *)p) : 0;
    case PP_RS_TEXT: {
        if (!*(char *const *)p)
            return 0;
        hid_t t = pp_h5attr_vstr_type();
        int bad = t < 0 || pp_h5obj_put_dataset(loc, name, t, t, 0, NULL, p);
        if (t >= 0)
            H5Tclose(t);
        return bad ? -1 : 0;
    }
    case PP_RS_I64:
        return pp_h5attr_put_i64(loc, name, *(const int64_t *)p);
    case PP_RS_U64:
        return pp_h5attr_put_u64(loc, name, *(const uint64_t *)p);
    case PP_RS_F64:
        return pp_h5attr_put_f64(loc, name, *(const double *)p);
    case PP_RS_BOOL:
        return pp_h5attr_put_i32(loc, name, *(const int *)p ? 1 : 0);
    case PP_RS_I64_VEC:
        return pp_h5attr_put_i64v(loc, name, p, (size_t)count_of(fr, f));
    case PP_RS_FORMAT:
        return pp_h5attr_put_vstr(loc, name, pp_format_get(*(const pp_format_id *)p).name);
    case PP_RS_VEC: {
        hsize_t n = (hsize_t) * (const int64_t *)at(fr, f->count);
        return pp_h5obj_put_dataset(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, &n, *(double *const *)p);
    }
    case PP_RS_SUB: {
        pp_rs_frame sf = {(void *)p, -1, fr};
        return write_table(io, loc, where, f->sub, &sf, name);
    }
    case PP_RS_GROUP: {
        char wg[PP_RS_WHERE_MAX];
        pp_rs_join(wg, where, name);
        hid_t g = pp_h5obj_group(loc, name);
        if (g < 0)
            return -1;
        int rc = write_table(io, g, wg, f->sub, fr, "");
        if (H5Gclose(g) < 0 && !rc)
            rc = -1;
        return rc;
    }
    case PP_RS_LIST:
        return write_list(io, loc, where, f, fr);
    case PP_RS_ROWS:
        return write_rows(loc, f, fr);
    case PP_RS_HOOK:
        return f->hook->write ? f->hook->write(io, loc, where, name, fr) : 0;
    }
    return -1;
}

static int write_table(const pp_rs_io *io, hid_t loc, const char *where, const pp_rs_table *t,
                       const pp_rs_frame *fr, const char *prefix)
{
    for (int i = 0; i < t->n_fields; i++) {
        const pp_rs_field *f = &t->fields[i];
        char name[ATTR_NAME_MAX];
        snprintf(name, sizeof name, "%s%s", prefix, f->name ? f->name : "");
        int rc = write_field(io, loc, where, f, fr, name);
        if (rc < 0)
            return pp_rs_write_failed(io, where, name);
        if (rc)
            return rc;
    }
    return PP_OK;
}

int pp_rs_write(const pp_rs_io *io, hid_t loc, const char *where, const pp_rs_table *t,
                const pp_rs_frame *fr)
{
    return write_table(io, loc, where, t, fr, "");
}

// ---------------------------------------------------------------------------------------------
// Read

static int read_table(const pp_rs_io *io, hid_t loc, const char *where, const pp_rs_table *t,
                      const pp_rs_frame *fr, const char *prefix);

static int read_text(const pp_rs_io *io, hid_t loc, const char *where, const char *name, char **out)
{
    char wd[PP_RS_WHERE_MAX];
    pp_rs_join(wd, where, name);
    hid_t ds = H5Dopen2(loc, name, H5P_DEFAULT);
    hid_t ty = ds >= 0 ? H5Dget_type(ds) : H5I_INVALID_HID;
    hid_t mt = pp_h5attr_vstr_type();
    char *s = NULL;
    int ok = ty >= 0 && mt >= 0 && H5Tget_class(ty) == H5T_STRING && H5Tis_variable_str(ty) > 0 &&
             H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, &s) >= 0 && s;
    if (ok && !(*out = strdup(s)))
        ok = -1;
    if (s)
        H5free_memory(s);
    if (mt >= 0)
        H5Tclose(mt);
    if (ty >= 0)
        H5Tclose(ty);
    if (ds >= 0)
        H5Dclose(ds);
    return ok < 0 ? pp_rs_oom(io) : ok ? PP_OK : pp_rs_invalid(io, wd, "not a variable-length string");
}

static int read_vec(const pp_rs_io *io, hid_t loc, const char *where, const pp_rs_field *f,
                    const pp_rs_frame *fr, const char *name)
{
    int64_t *len = at(fr, f->count);
    double **out = at(fr, f->off);
    hsize_t n;
    // The element's init sets the length to -1; the second dataset of a length must match the first.
    if (pp_h5obj_dataset_dims(loc, name, H5T_FLOAT, 1, &n) || n > VEC_MAX || (*len >= 0 && (hsize_t)*len != n))
        return pp_rs_invalid(io, where, "dataset %s missing, not 1-D floating-point, or not as long as the "
                             "others", name);
    if (!(*out = calloc((size_t)n + 1, sizeof **out)))
        return pp_rs_oom(io);
    *len = (int64_t)n;
    if (n > 0 && pp_h5obj_dataset_read(loc, name, H5T_NATIVE_DOUBLE, *out))
        return pp_rs_invalid(io, where, "dataset %s cannot be read", name);
    return PP_OK;
}

static int read_list(const pp_rs_io *io, hid_t loc, const char *where, const pp_rs_field *f,
                     const pp_rs_frame *fr)
{
    char wl[PP_RS_WHERE_MAX];
    pp_rs_join(wl, where, f->name);
    if (H5Lexists(loc, f->name, H5P_DEFAULT) <= 0)
        return f->flags & PP_RS_OPTIONAL ? PP_OK : pp_rs_invalid(io, wl, "missing group");
    hid_t g = H5Gopen2(loc, f->name, H5P_DEFAULT);
    char **names = NULL;
    int n = 0, rc = PP_OK;
    if (g < 0 || pp_h5obj_children(g, &names, &n)) {
        rc = pp_rs_invalid(io, wl, "not a group whose members can be listed in creation order");
    } else {
        char *base = calloc((size_t)n + 1, f->size);
        if (!base) {
            rc = pp_rs_oom(io);
        } else {
            *(char **)at(fr, f->off) = base;
            *(int *)at(fr, f->count) = n;
        }
        for (int i = 0; !rc && i < n; i++) {
            void *e = base + (size_t)i * f->size;
            char we[PP_RS_WHERE_MAX];
            pp_rs_join(we, wl, names[i]);
            hid_t eg = H5Gopen2(g, names[i], H5P_DEFAULT);
            pp_rs_frame ef = {e, i, fr};
            if (eg < 0 || pp_rs_name_unescape(names[i], (char *)e + f->key, PP_NAME_MAX))
                rc = pp_rs_invalid(io, we, "not a group with a valid name");
            else
                rc = read_table(io, eg, we, f->sub, &ef, "");
            if (eg >= 0)
                H5Gclose(eg);
        }
    }
    pp_h5obj_free_names(names, n);
    if (g >= 0)
        H5Gclose(g);
    return rc;
}

static int read_rows(const pp_rs_io *io, hid_t loc, const char *where, const pp_rs_field *f,
                     const pp_rs_frame *fr)
{
    char wr[PP_RS_WHERE_MAX], members[160];
    pp_rs_join(wr, where, f->name);
    member_names(f->sub, members, sizeof members);
    hid_t ds = H5Lexists(loc, f->name, H5P_DEFAULT) > 0 ? H5Dopen2(loc, f->name, H5P_DEFAULT) : H5I_INVALID_HID;
    hid_t ty = ds >= 0 ? H5Dget_type(ds) : H5I_INVALID_HID;
    hid_t sp = ds >= 0 ? H5Dget_space(ds) : H5I_INVALID_HID;
    hid_t mt = rows_type(f->sub, f->size, 0);
    int rc = PP_OK;
    hssize_t n = sp >= 0 && H5Sget_simple_extent_ndims(sp) == 1 ? H5Sget_simple_extent_npoints(sp) : -1;
    char *base = NULL;
    if (ty < 0 || H5Tget_class(ty) != H5T_COMPOUND || n < 0 || n > ROWS_MAX || mt < 0) {
        rc = pp_rs_invalid(io, wr, "missing, or not a 1-D table of %s", members);
    } else if (!(base = calloc((size_t)n + 1, f->size))) {
        rc = pp_rs_oom(io);
    } else {
        *(char **)at(fr, f->off) = base;
        if (n > 0 && H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, base) < 0)
            rc = pp_rs_invalid(io, wr, "the table cannot be read as %s", members);
    }
    for (hssize_t i = 0; !rc && i < n; i++)
        for (int k = 0; k < f->sub->n_fields; k++) {
            const pp_rs_field *m = &f->sub->fields[k];
            char *p = base + (size_t)i * f->size + m->off;
            if (m->kind == PP_RS_STR)
                p[m->size - 1] = '\0';
            else
                *(int *)p = *(int *)p != 0;
        }
    if (!rc)
        *(int *)at(fr, f->count) = (int)n;
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

static int read_field(const pp_rs_io *io, hid_t loc, const char *where, const pp_rs_field *f,
                      const pp_rs_frame *fr, const char *name)
{
    void *p = at(fr, f->off);
    switch (f->kind) {
    case PP_RS_STR: {
        char *s;
        if (pp_h5attr_get_str_dup(loc, name, &s))
            s = NULL;
        int ok = s && strlen(s) < f->size;
        if (ok)
            memcpy(p, s, strlen(s) + 1);
        free(s);
        return ok ? PP_OK : pp_rs_invalid(io, where, "attribute %s missing, not a string or longer than %zu bytes",
                                          name, f->size - 1);
    }
    case PP_RS_STR_PTR:
        if (H5Aexists(loc, name) <= 0)
            return f->flags & PP_RS_OPTIONAL ? PP_OK : pp_rs_invalid(io, where, "attribute %s missing", name);
        return pp_h5attr_get_str_dup(loc, name, p) ? pp_rs_invalid(io, where, "attribute %s is not a string", name)
                                                   : PP_OK;
    case PP_RS_TEXT:
        if (H5Lexists(loc, name, H5P_DEFAULT) <= 0)
            return f->flags & PP_RS_OPTIONAL ? PP_OK : pp_rs_invalid(io, where, "dataset %s missing", name);
        return read_text(io, loc, where, name, p);
    case PP_RS_I64:
    case PP_RS_U64:
        if ((f->flags & PP_RS_OPTIONAL) && H5Aexists(loc, name) <= 0)
            return PP_OK;  // an attribute newer than the report: the value stays as initialised
        return pp_h5attr_get_num(loc, name, H5T_INTEGER, f->kind == PP_RS_I64 ? H5T_NATIVE_INT64 : H5T_NATIVE_UINT64,
                                 p, 1, NULL)
                   ? pp_rs_invalid(io, where, "attribute %s missing or not an integer", name)
                   : PP_OK;
    case PP_RS_F64:
        if ((f->flags & PP_RS_OPTIONAL) && H5Aexists(loc, name) <= 0)
            return PP_OK;  // an attribute newer than the report: the value stays as initialised
        if (pp_h5attr_get_num(loc, name, H5T_FLOAT, H5T_NATIVE_DOUBLE, p, 1, NULL))
            return pp_rs_invalid(io, where, "attribute %s missing or not floating-point", name);
        return !(f->flags & PP_RS_NONNEG) || nonneg(*(double *)p)
                   ? PP_OK
                   : pp_rs_invalid(io, where, "attribute %s is %g; it must be finite and >= 0", name, *(double *)p);
    case PP_RS_BOOL: {
        int64_t v;
        if (pp_h5attr_get_num(loc, name, H5T_INTEGER, H5T_NATIVE_INT64, &v, 1, NULL) || (v != 0 && v != 1))
            return pp_rs_invalid(io, where, "attribute %s missing or not 0/1", name);
        *(int *)p = (int)v;
        return PP_OK;
    }
    case PP_RS_I64_VEC:
        return pp_h5attr_get_num(loc, name, H5T_INTEGER, H5T_NATIVE_INT64, p, f->size, at(fr, f->count))
                   ? pp_rs_invalid(io, where, "attribute %s missing or not 0 to %zu integers", name, f->size)
                   : PP_OK;
    case PP_RS_FORMAT: {
        char *s, shown[40];
        if (pp_h5attr_get_str_dup(loc, name, &s))
            return pp_rs_invalid(io, where, "attribute %s missing or not a string", name);
        int bad = pp_format_from_name(s, p);
        if (bad)
            pp_rs_invalid(io, where, "attribute %s: unknown format '%s'", name, pp_printable(s, shown, sizeof shown));
        free(s);
        return bad ? PP_ERR_INPUT : PP_OK;
    }
    case PP_RS_VEC:
        return read_vec(io, loc, where, f, fr, name);
    case PP_RS_SUB: {
        if ((f->flags & PP_RS_OPTIONAL) && H5Aexists(loc, name) <= 0)
            return PP_OK;
        pp_rs_frame sf = {p, -1, fr};
        return read_table(io, loc, where, f->sub, &sf, name);
    }
    case PP_RS_GROUP: {
        char wg[PP_RS_WHERE_MAX];
        pp_rs_join(wg, where, name);
        if (H5Lexists(loc, name, H5P_DEFAULT) <= 0)
            return pp_rs_invalid(io, wg, "missing group");
        hid_t g = H5Gopen2(loc, name, H5P_DEFAULT);
        if (g < 0)
            return pp_rs_invalid(io, wg, "not a group");
        int rc = read_table(io, g, wg, f->sub, fr, "");
        H5Gclose(g);
        return rc;
    }
    case PP_RS_LIST:
        return read_list(io, loc, where, f, fr);
    case PP_RS_ROWS:
        return read_rows(io, loc, where, f, fr);
    case PP_RS_HOOK:
        return f->hook->read ? f->hook->read(io, loc, where, name, fr) : PP_OK;
    }
    return pp_rs_invalid(io, where, "unknown field kind");
}

static int read_table(const pp_rs_io *io, hid_t loc, const char *where, const pp_rs_table *t,
                      const pp_rs_frame *fr, const char *prefix)
{
    if (t->init)
        t->init(fr->obj);
    for (int i = 0; i < t->n_fields; i++) {
        const pp_rs_field *f = &t->fields[i];
        char name[ATTR_NAME_MAX];
        snprintf(name, sizeof name, "%s%s", prefix, f->name ? f->name : "");
        int rc = read_field(io, loc, where, f, fr, name);
        if (rc)
            return rc;
    }
    return t->consistent ? t->consistent(io, where, fr) : PP_OK;
}

int pp_rs_read(const pp_rs_io *io, hid_t loc, const char *where, const pp_rs_table *t,
               const pp_rs_frame *fr)
{
    return read_table(io, loc, where, t, fr, "");
}
