// h5io.c — HDF5 dataset reading and writing with libhdf5 (serial). HDF5's own error printing is
// switched off around every call into it, and each failure becomes one pp_error line naming the
// file and the dataset.
#include "io/h5io.h"
#include "io/h5quiet.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/atomic_file.h"
#include "io/printable.h"
#include "io/tensor_writable.h"

// ---------------------------------------------------------------------------------------------
// Plumbing

// The dataset path with a leading '/' (malloc'd).
static char *abs_name(const char *dataset)
{
    size_t n = strlen(dataset);
    char *s = malloc(n + 2);
    if (s)
        snprintf(s, n + 2, "%s%s", dataset[0] == '/' ? "" : "/", dataset);
    return s;
}

// The 16-bit IEEE binary16 type, little-endian, built as h5py builds its float16: binary32's
// layout narrowed to sign bit 15, exponent bits 10..14 (bias 15), mantissa bits 0..9.
static hid_t make_f16le(void)
{
    hid_t t = H5Tcopy(H5T_IEEE_F32LE);
    if (t < 0)
        return t;
    if (H5Tset_fields(t, 15, 10, 5, 0, 10) < 0 || H5Tset_size(t, 2) < 0 || H5Tset_ebias(t, 15) < 0) {
        H5Tclose(t);
        return H5I_INVALID_HID;
    }
    return t;
}

// ---------------------------------------------------------------------------------------------
// Reading

// The format a floating type stores exactly, or -1. HDF5 describes a float by its fields; the
// four layouts below are IEEE binary64, binary32, binary16 and bfloat16 in either byte order.
static int classify_float(hid_t type, char *why, size_t whysz)
{
    static const struct {
        size_t bits, esize, msize, ebias;
        pp_format_id f;
    } known[] = {{64, 11, 52, 1023, PP_FMT_FP64}, {32, 8, 23, 127, PP_FMT_FP32},
                 {16, 5, 10, 15, PP_FMT_FP16},    {16, 8, 7, 127, PP_FMT_BF16}};
    size_t spos, epos, esize, mpos, msize;
    size_t size = H5Tget_size(type), prec = H5Tget_precision(type), ebias = H5Tget_ebias(type);
    int off = H5Tget_offset(type);
    H5T_order_t order = H5Tget_order(type);
    if (H5Tget_fields(type, &spos, &epos, &esize, &mpos, &msize) < 0)
        esize = msize = 0;
    snprintf(why, whysz, "a %zu-byte float with %zu exponent and %zu mantissa bits", size, esize,
             msize);
    if (off != 0 || prec != 8 * size || H5Tget_norm(type) != H5T_NORM_IMPLIED ||
        (order != H5T_ORDER_LE && order != H5T_ORDER_BE) || spos != prec - 1 || mpos != 0 ||
        epos != msize)
        return -1;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (prec == known[i].bits && esize == known[i].esize && msize == known[i].msize &&
            ebias == known[i].ebias)
            return (int)known[i].f;
    return -1;
}

static const char *class_name(H5T_class_t c)
{
    switch (c) {
    case H5T_INTEGER: return "integers";
    case H5T_STRING: return "strings";
    case H5T_COMPOUND: return "a compound type (records)";
    case H5T_BITFIELD: return "bitfields";
    case H5T_OPAQUE: return "opaque data";
    case H5T_ENUM: return "an enum type";
    case H5T_ARRAY: return "an array type";
    case H5T_VLEN: return "variable-length data";
    case H5T_REFERENCE: return "references";
    case H5T_TIME: return "time values";
    default: return "a non-float type";
    }
}

// Appends the names in the group holding ds (up to 6) to msg, or says the group is missing.
static void describe_parent(hid_t file, const char *ds, char *msg, size_t size)
{
    char parent[256];
    const char *slash = strrchr(ds, '/');
    size_t plen = slash && slash != ds ? (size_t)(slash - ds) : 1;
    if (plen >= sizeof parent)
        return;
    memcpy(parent, ds, plen);
    parent[plen] = '\0';
    size_t at = strlen(msg);
    char shown[80];
    pp_printable(parent, shown, sizeof shown);
    hid_t g = H5Gopen2(file, parent, H5P_DEFAULT);
    if (g < 0) {
        snprintf(msg + at, size - at, " (there is no group '%s')", shown);
        return;
    }
    H5G_info_t info;
    if (H5Gget_info(g, &info) >= 0) {
        if (info.nlinks == 0) {
            snprintf(msg + at, size - at, " (%s is empty)", shown);
        } else {
            at += (size_t)snprintf(msg + at, size - at, " (%s holds ", shown);
            hsize_t few = info.nlinks < 6 ? info.nlinks : 6;
            for (hsize_t i = 0; i < few && at < size; i++) {
                char name[48] = "?", nm[48];
                H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name,
                                   H5P_DEFAULT);
                at += (size_t)snprintf(msg + at, size - at, "%s'%s'", i ? ", " : "",
                                       pp_printable(name, nm, sizeof nm));
            }
            if (at < size)
                snprintf(msg + at, size - at, "%s)", few < info.nlinks ? ", ..." : "");
        }
    }
    H5Gclose(g);
}

// Reads the string attribute PP_H5_FORMAT_ATTR into out; 0 or -1 (with why).
static int read_format_attr(hid_t ds, char *out, size_t outsz, const char **why)
{
    int rc = -1;
    hid_t attr = H5Aopen(ds, PP_H5_FORMAT_ATTR, H5P_DEFAULT);
    hid_t atype = attr >= 0 ? H5Aget_type(attr) : H5I_INVALID_HID;
    hid_t aspace = attr >= 0 ? H5Aget_space(attr) : H5I_INVALID_HID;
    hid_t mtype = H5I_INVALID_HID;
    *why = "cannot be read";
    if (atype < 0 || aspace < 0)
        goto done;
    if (H5Tget_class(atype) != H5T_STRING || H5Sget_simple_extent_npoints(aspace) != 1) {
        *why = "is not a single string";
        goto done;
    }
    // The memory type takes the stored character set: HDF5 will not convert UTF-8 to ASCII.
    mtype = H5Tcopy(H5T_C_S1);
    if (mtype < 0 || H5Tset_cset(mtype, H5Tget_cset(atype)) < 0)
        goto done;
    if (H5Tis_variable_str(atype) > 0) {
        char *s = NULL;
        if (H5Tset_size(mtype, H5T_VARIABLE) < 0 || H5Aread(attr, mtype, &s) < 0 || !s)
            goto done;
        snprintf(out, outsz, "%s", s);
        H5free_memory(s);
    } else {
        size_t n = H5Tget_size(atype);
        if (n + 1 > outsz) {
            *why = "is too long to name a format";
            goto done;
        }
        memset(out, 0, outsz);
        if (H5Tset_size(mtype, n + 1) < 0 || H5Tset_strpad(mtype, H5T_STR_NULLTERM) < 0 ||
            H5Aread(attr, mtype, out) < 0)
            goto done;
        out[n] = '\0';
    }
    rc = 0;
done:
    if (mtype >= 0)
        H5Tclose(mtype);
    if (aspace >= 0)
        H5Sclose(aspace);
    if (atype >= 0)
        H5Tclose(atype);
    if (attr >= 0)
        H5Aclose(attr);
    return rc;
}

static int h5_read(const char *path, const char *dsname, const char *shown, pp_tensor *t,
                   pp_error *err)
{
    int rc = PP_OK;
    hid_t file = H5I_INVALID_HID, ds = H5I_INVALID_HID, type = H5I_INVALID_HID,
          space = H5I_INVALID_HID;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return pp_fail(err, PP_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    close(fd);
    if ((file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0)
        return pp_fail(err, PP_ERR_INPUT, "%s: not an HDF5 file (or unreadable)", path);
    if ((ds = H5Dopen2(file, dsname, H5P_DEFAULT)) < 0) {
        hid_t g = H5Gopen2(file, dsname, H5P_DEFAULT);
        if (g >= 0) {
            H5Gclose(g);
            rc = pp_fail(err, PP_ERR_INPUT, "%s:%s is a group, not a dataset", path, shown);
        } else {
            pp_fail(err, PP_ERR_INPUT, "%s: no dataset '%s'", path, shown);
            if (err)
                describe_parent(file, dsname, err->msg, sizeof err->msg);
            rc = PP_ERR_INPUT;
        }
        goto done;
    }
    type = H5Dget_type(ds);
    space = H5Dget_space(ds);
    if (type < 0 || space < 0) {
        rc = pp_fail(err, PP_ERR_INPUT, "%s:%s: cannot read the dataset's type and shape", path,
                     shown);
        goto done;
    }
    H5T_class_t cls = H5Tget_class(type);
    if (cls != H5T_FLOAT) {
        rc = pp_fail(err, PP_ERR_INPUT,
                     "%s:%s holds %s, not floating-point numbers; precprobe reads float64, "
                     "float32, float16 and bfloat16 datasets", path, shown, class_name(cls));
        goto done;
    }
    char why[96];
    int f = classify_float(type, why, sizeof why);
    if (f < 0) {
        rc = pp_fail(err, PP_ERR_INPUT,
                     "%s:%s holds %s; precprobe reads IEEE float64, float32, float16 and bfloat16",
                     path, shown, why);
        goto done;
    }
    H5S_class_t sc = H5Sget_simple_extent_type(space);
    int ndim = sc == H5S_SCALAR ? 0 : H5Sget_simple_extent_ndims(space);
    if (sc != H5S_SCALAR && sc != H5S_SIMPLE) {
        rc = pp_fail(err, PP_ERR_INPUT, "%s:%s has no data (an empty, null dataspace)", path,
                     shown);
        goto done;
    }
    if (ndim < 0 || ndim > PP_MAX_DIMS) {
        rc = pp_fail(err, PP_ERR_INPUT, "%s:%s has %d dimensions; at most %d are supported", path,
                     shown, ndim, PP_MAX_DIMS);
        goto done;
    }
    hsize_t dims[PP_MAX_DIMS];
    int64_t shape[PP_MAX_DIMS];
    if (ndim > 0 && H5Sget_simple_extent_dims(space, dims, NULL) < 0) {
        rc = pp_fail(err, PP_ERR_INPUT, "%s:%s: cannot read the shape", path, shown);
        goto done;
    }
    for (int i = 0; i < ndim; i++)
        shape[i] = dims[i] > (hsize_t)INT64_MAX ? INT64_MAX : (int64_t)dims[i];
    pp_error e2 = {0};
    if ((rc = pp_tensor_alloc(t, ndim, shape, (pp_format_id)f, &e2))) {
        pp_fail(err, rc, "%s:%s: %s", path, shown, e2.msg);
        goto done;
    }
    // HDF5 converts every layout above to binary64 exactly (each value is a binary64);
    // tests/test_h5io.c checks all 65,536 binary16 and bfloat16 patterns.
    if (t->numel > 0 && H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t->data) < 0) {
        rc = pp_fail(err, PP_ERR_INPUT, "%s:%s: cannot read the data (damaged file, or a filter "
                     "this libhdf5 lacks?)", path, shown);
        goto done;
    }
    int has = H5Aexists(ds, PP_H5_FORMAT_ATTR);
    if (has > 0) {
        char name[64];
        const char *whyattr;
        pp_format_id af;
        if (read_format_attr(ds, name, sizeof name, &whyattr)) {
            rc = pp_fail(err, PP_ERR_INPUT, "%s:%s: attribute '" PP_H5_FORMAT_ATTR "' %s", path,
                         shown, whyattr);
            goto done;
        }
        if (pp_format_from_name(name, &af)) {
            char nm[40];
            rc = pp_fail(err, PP_ERR_INPUT,
                         "%s:%s: attribute '" PP_H5_FORMAT_ATTR "' names unknown format '%s'",
                         path, shown, pp_printable(name, nm, sizeof nm));
            goto done;
        }
        char what[320];
        snprintf(what, sizeof what, "%s:%s (declared " PP_H5_FORMAT_ATTR " %s)", path, shown, name);
        if ((rc = pp_tensor_check_format(t, af, what, err)))
            goto done;
        t->format = af;
    } else if (has < 0) {
        rc = pp_fail(err, PP_ERR_INPUT, "%s:%s: cannot read its attributes", path, shown);
        goto done;
    }
done:
    if (rc)
        pp_tensor_free(t);
    if (space >= 0)
        H5Sclose(space);
    if (type >= 0)
        H5Tclose(type);
    if (ds >= 0)
        H5Dclose(ds);
    if (file >= 0)
        H5Fclose(file);
    return rc;
}

int pp_h5_read(const char *path, const char *dataset, pp_tensor *t, pp_error *err)
{
    memset(t, 0, sizeof *t);
    if (!dataset || !*dataset || !strcmp(dataset, "/"))
        return pp_fail(err, PP_ERR_INPUT, "%s: name the dataset, as %s:/GROUP/DATASET", path, path);
    char *ds = abs_name(dataset);
    if (!ds)
        return pp_fail(err, PP_ERR_RUNTIME, "%s: out of memory", path);
    char shown[160];
    pp_printable(ds, shown, sizeof shown);
    pp_h5_quiet q;
    pp_h5_quiet_begin(&q);
    int rc = h5_read(path, ds, shown, t, err);
    pp_h5_quiet_end(&q);
    free(ds);
    return rc;
}

// ---------------------------------------------------------------------------------------------
// Writing

// Writes the attribute PP_H5_FORMAT_ATTR = name as a variable-length UTF-8 string (what h5py
// writes for a Python str, and reads back as str).
static int write_format_attr(hid_t ds, const char *name)
{
    int ok = 0;
    hid_t st = H5Tcopy(H5T_C_S1);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t at = H5I_INVALID_HID;
    if (st >= 0 && sp >= 0 && H5Tset_size(st, H5T_VARIABLE) >= 0 &&
        H5Tset_cset(st, H5T_CSET_UTF8) >= 0 &&
        (at = H5Acreate2(ds, PP_H5_FORMAT_ATTR, st, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0)
        ok = H5Awrite(at, st, &name) >= 0;
    if (at >= 0)
        H5Aclose(at);
    if (sp >= 0)
        H5Sclose(sp);
    if (st >= 0)
        H5Tclose(st);
    return ok;
}

// Creates dataset ds in file and writes t into it. Returns PP_OK or a code with err set.
static int h5_put(hid_t file, const char *path, const char *ds, const char *shown,
                  const pp_tensor *t, pp_error *err)
{
    int rc = PP_OK;
    hid_t lcpl = H5I_INVALID_HID, space = H5I_INVALID_HID, ftype = H5I_INVALID_HID,
          dset = H5I_INVALID_HID;
    void *buf = NULL;
    // An existing dataset of that name is replaced; anything else there is left alone.
    if (H5Lexists(file, ds, H5P_DEFAULT) > 0) {
        hid_t old = H5Dopen2(file, ds, H5P_DEFAULT);
        if (old < 0)
            return pp_fail(err, PP_ERR_INPUT, "%s:%s exists and is not a dataset; not replacing it",
                           path, shown);
        H5Dclose(old);
        if (H5Ldelete(file, ds, H5P_DEFAULT) < 0)
            return pp_fail(err, PP_ERR_RUNTIME, "%s:%s: cannot replace the dataset", path, shown);
    }
    hsize_t dims[PP_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++)
        dims[i] = (hsize_t)t->shape[i];
    space = t->ndim == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(t->ndim, dims, NULL);
    lcpl = H5Pcreate(H5P_LINK_CREATE);
    if (space < 0 || lcpl < 0 || H5Pset_create_intermediate_group(lcpl, 1) < 0) {
        rc = pp_fail(err, PP_ERR_RUNTIME, "%s:%s: HDF5 failed to set up the dataset", path, shown);
        goto done;
    }
    hid_t mtype;
    size_t n = (size_t)t->numel;
    if (t->format == PP_FMT_FP64) {
        ftype = H5Tcopy(H5T_IEEE_F64LE);
        mtype = H5T_NATIVE_DOUBLE;
    } else if (t->format == PP_FMT_FP16) {
        // Bytes assembled little-endian here and written with the file's own type: no HDF5
        // conversion is involved, so the bits are exactly pp_encode's.
        ftype = make_f16le();
        mtype = ftype;
        unsigned char *b = malloc(n ? 2 * n : 1);
        for (size_t i = 0; b && i < n; i++) {
            uint64_t bits = pp_encode(PP_FMT_FP16, t->data[i]);
            b[2 * i] = (unsigned char)bits;
            b[2 * i + 1] = (unsigned char)(bits >> 8);
        }
        buf = b;
    } else {
        ftype = H5Tcopy(H5T_IEEE_F32LE);
        mtype = H5T_NATIVE_FLOAT;
        float *b = malloc(n ? n * sizeof(float) : 1);
        for (size_t i = 0; b && i < n; i++)
            b[i] = (float)t->data[i];  // exact: each of these formats' values is a float32
        buf = b;
    }
    if (ftype < 0 || (t->format != PP_FMT_FP64 && !buf)) {
        rc = pp_fail(err, PP_ERR_RUNTIME, "%s:%s: out of memory", path, shown);
        goto done;
    }
    dset = H5Dcreate2(file, ds, ftype, space, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    if (dset < 0) {
        rc = pp_fail(err, PP_ERR_INPUT,
                     "%s:%s: cannot create the dataset (is part of its path a dataset?)", path, shown);
        goto done;
    }
    if (n > 0 && H5Dwrite(dset, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                          t->format == PP_FMT_FP64 ? (const void *)t->data : buf) < 0) {
        rc = pp_fail(err, PP_ERR_RUNTIME, "%s:%s: HDF5 failed to write the data", path, shown);
        goto done;
    }
    if (t->format != PP_FMT_FP64 && t->format != PP_FMT_FP32 && t->format != PP_FMT_FP16 &&
        !write_format_attr(dset, pp_format_get(t->format).name)) {
        rc = pp_fail(err, PP_ERR_RUNTIME, "%s:%s: HDF5 failed to write attribute " PP_H5_FORMAT_ATTR,
                     path, shown);
        goto done;
    }
done:
    free(buf);
    if (dset >= 0)
        H5Dclose(dset);
    if (ftype >= 0)
        H5Tclose(ftype);
    if (lcpl >= 0)
        H5Pclose(lcpl);
    if (space >= 0)
        H5Sclose(space);
    return rc;
}

typedef struct h5_image {
    const unsigned char *p;
    size_t n;
} h5_image;

static int emit_image(FILE *fp, void *ctx)
{
    const h5_image *img = ctx;
    return fwrite(img->p, 1, img->n, fp) == img->n ? 0 : -1;
}

// HDF5 builds the file in memory (the core driver without a backing store: an existing file is
// read in, nothing is written back), and the image is written out by precprobe's atomic writer.
// So every disk write and its failure is ours: HDF5 never holds a half-written file, and a
// failed flush cannot leave an HDF5 file handle open. The cost is memory for the file's image.
static int h5_write(const char *path, const char *ds, const char *shown, const pp_tensor *t,
                    int truncate_file, pp_error *err)
{
    struct stat st;
    int keep = !truncate_file && stat(path, &st) == 0;
    if (keep && H5Fis_hdf5(path) <= 0)
        return pp_fail(err, PP_ERR_INPUT, "%s: exists and is not an HDF5 file; not replacing it",
                       path);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0 || H5Pset_fapl_core(fapl, 1 << 20, 0) < 0) {
        if (fapl >= 0)
            H5Pclose(fapl);
        return pp_fail(err, PP_ERR_RUNTIME, "%s: HDF5 failed to set up an in-memory file", path);
    }
    hid_t file = keep ? H5Fopen(path, H5F_ACC_RDWR, fapl)
                      : H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    if (file < 0)
        return pp_fail(err, keep ? PP_ERR_INPUT : PP_ERR_RUNTIME, "%s: HDF5 cannot %s the file",
                       path, keep ? "read" : "create");
    int rc = h5_put(file, path, ds, shown, t, err);
    unsigned char *image = NULL;
    ssize_t size = 0;
    if (!rc && (H5Fflush(file, H5F_SCOPE_GLOBAL) < 0 || (size = H5Fget_file_image(file, NULL, 0)) <= 0 ||
                !(image = malloc((size_t)size)) || H5Fget_file_image(file, image, (size_t)size) != size))
        rc = pp_fail(err, PP_ERR_RUNTIME, "%s: HDF5 failed to produce the file's image", path);
    if (H5Fclose(file) < 0 && !rc)
        rc = pp_fail(err, PP_ERR_RUNTIME, "%s: HDF5 failed to finish the file", path);
    if (!rc) {
        h5_image img = {image, (size_t)size};
        rc = pp_atomic_write_stream(path, emit_image, &img, err);
    }
    free(image);
    return rc;
}

int pp_h5_write(const char *path, const char *dataset, const pp_tensor *t, int truncate_file,
                pp_error *err)
{
    if (!dataset || !*dataset || !strcmp(dataset, "/") || dataset[strlen(dataset) - 1] == '/') {
        char shown[160];
        return pp_fail(err, PP_ERR_INPUT, "%s: '%s' does not name a dataset (/GROUP/DATASET)",
                       path, pp_printable(dataset ? dataset : "", shown, sizeof shown));
    }
    int rc = pp_tensor_check_writable(path, t, err);
    if (rc)
        return rc;
    char *ds = abs_name(dataset);
    if (!ds)
        return pp_fail(err, PP_ERR_RUNTIME, "%s: out of memory", path);
    char shown[160];
    pp_printable(ds, shown, sizeof shown);
    pp_h5_quiet q;
    pp_h5_quiet_begin(&q);
    rc = h5_write(path, ds, shown, t, truncate_file, err);
    pp_h5_quiet_end(&q);
    free(ds);
    return rc;
}
