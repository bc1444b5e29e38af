// h5attr.c — scalar HDF5 attributes (see h5attr.h).
#include "io/h5attr.h"

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
