// h5attr.c — HDF5 attributes: fixed-length and typed scalars, arrays, strings (see h5attr.h).
#include "io/h5attr.h"

#include <stdlib.h>
#include <string.h>

int pp_h5attr_put_str(hid_t obj, const char *name, const char *value)
{
    hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR);
    int bad = t < 0 || sp < 0 || H5Tset_size(t, strlen(value) + 1) < 0;
    hid_t a = bad ? -1 : H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    bad = bad || a < 0 || H5Awrite(a, t, value) < 0;
    if (a >= 0)
        H5Aclose(a);
    if (sp >= 0)
        H5Sclose(sp);
    if (t >= 0)
        H5Tclose(t);
    return bad ? -1 : 0;
}

int pp_h5attr_put_f64(hid_t obj, const char *name, double value)
{
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = sp < 0 ? -1 : H5Acreate2(obj, name, H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    int bad = a < 0 || H5Awrite(a, H5T_NATIVE_DOUBLE, &value) < 0;
    if (a >= 0)
        H5Aclose(a);
    if (sp >= 0)
        H5Sclose(sp);
    return bad ? -1 : 0;
}

int pp_h5attr_get_str(hid_t obj, const char *name, char *buf, size_t n)
{
    if (H5Aexists(obj, name) <= 0)
        return -1;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    hid_t ft = a < 0 ? -1 : H5Aget_type(a);
    int ok = ft >= 0 && H5Tget_class(ft) == H5T_STRING && H5Tis_variable_str(ft) == 0;
    size_t size = ok ? H5Tget_size(ft) : 0;
    ok = ok && size > 0 && size < n;
    if (ok) {
        hid_t mt = H5Tcopy(H5T_C_S1);
        ok = mt >= 0 && H5Tset_size(mt, size) >= 0 && H5Aread(a, mt, buf) >= 0;
        if (mt >= 0)
            H5Tclose(mt);
        if (ok)
            buf[size] = '\0';
    }
    if (ft >= 0)
        H5Tclose(ft);
    if (a >= 0)
        H5Aclose(a);
    return ok ? 0 : -1;
}

int pp_h5attr_get_f64(hid_t obj, const char *name, double *value)
{
    if (H5Aexists(obj, name) <= 0)
        return -1;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    hid_t ft = a < 0 ? -1 : H5Aget_type(a);
    hid_t sp = a < 0 ? -1 : H5Aget_space(a);
    int ok = ft >= 0 && sp >= 0 && H5Tget_class(ft) == H5T_FLOAT && H5Sget_simple_extent_npoints(sp) == 1 &&
             H5Aread(a, H5T_NATIVE_DOUBLE, value) >= 0;
    if (sp >= 0)
        H5Sclose(sp);
    if (ft >= 0)
        H5Tclose(ft);
    if (a >= 0)
        H5Aclose(a);
    return ok ? 0 : -1;
}

hid_t pp_h5attr_vstr_type(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t >= 0 && (H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0)) {
        H5Tclose(t);
        return H5I_INVALID_HID;
    }
    return t;
}

int pp_h5attr_put(hid_t obj, const char *name, hid_t ftype, hid_t mtype, int rank, size_t n,
                  const void *buf)
{
    hsize_t dim = (hsize_t)n;
    hid_t sp = rank == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &dim, NULL);
    hid_t a = sp >= 0 ? H5Acreate2(obj, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT) : H5I_INVALID_HID;
    int ok = a >= 0 && H5Awrite(a, mtype, buf) >= 0;
    if (a >= 0 && H5Aclose(a) < 0)
        ok = 0;
    if (sp >= 0)
        H5Sclose(sp);
    return ok ? 0 : -1;
}

int pp_h5attr_put_i64(hid_t obj, const char *name, int64_t v)
{
    return pp_h5attr_put(obj, name, H5T_STD_I64LE, H5T_NATIVE_INT64, 0, 1, &v);
}

int pp_h5attr_put_i32(hid_t obj, const char *name, int v)
{
    return pp_h5attr_put(obj, name, H5T_STD_I32LE, H5T_NATIVE_INT, 0, 1, &v);
}

int pp_h5attr_put_u64(hid_t obj, const char *name, uint64_t v)
{
    return pp_h5attr_put(obj, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, 0, 1, &v);
}

int pp_h5attr_put_i64v(hid_t obj, const char *name, const int64_t *v, size_t n)
{
    return pp_h5attr_put(obj, name, H5T_STD_I64LE, H5T_NATIVE_INT64, 1, n, v);
}

int pp_h5attr_put_f64v(hid_t obj, const char *name, const double *v, size_t n)
{
    return pp_h5attr_put(obj, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, n, v);
}

// A string attribute (rank 0) or an array of n strings (rank 1), variable-length UTF-8.
static int put_vstrs(hid_t obj, const char *name, const char *const *v, int rank, size_t n)
{
    hid_t t = pp_h5attr_vstr_type();
    int rc = t >= 0 ? pp_h5attr_put(obj, name, t, t, rank, n, v) : -1;
    if (t >= 0)
        H5Tclose(t);
    return rc;
}

int pp_h5attr_put_vstr(hid_t obj, const char *name, const char *value)
{
    return put_vstrs(obj, name, &value, 0, 1);
}

int pp_h5attr_put_vstrs(hid_t obj, const char *name, const char *const *v, size_t n)
{
    return put_vstrs(obj, name, v, 1, n);
}

int pp_h5attr_get_str_dup(hid_t obj, const char *name, char **out)
{
    *out = NULL;
    int rc = -1;
    if (H5Aexists(obj, name) <= 0)
        return -1;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    hid_t t = a >= 0 ? H5Aget_type(a) : H5I_INVALID_HID;
    hid_t sp = a >= 0 ? H5Aget_space(a) : H5I_INVALID_HID;
    hid_t mt = H5I_INVALID_HID;
    // The memory type takes the stored character set: HDF5 will not convert UTF-8 to ASCII.
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

int pp_h5attr_get_num(hid_t obj, const char *name, H5T_class_t cls, hid_t mtype, void *out,
                      size_t n, int *count)
{
    int rc = -1;
    if (H5Aexists(obj, name) <= 0)
        return -1;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    hid_t t = a >= 0 ? H5Aget_type(a) : H5I_INVALID_HID;
    hid_t sp = a >= 0 ? H5Aget_space(a) : H5I_INVALID_HID;
    hssize_t np = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
    if (t >= 0 && H5Tget_class(t) == cls && np >= 0 && (count ? (size_t)np <= n : (size_t)np == n) &&
        (np == 0 || H5Aread(a, mtype, out) >= 0)) {
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
