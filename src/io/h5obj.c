// h5obj.c — HDF5 groups and small datasets (see h5obj.h).
#include "io/h5obj.h"

#include <stdint.h>
#include <stdlib.h>

hid_t pp_h5obj_group(hid_t parent, const char *name)
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

hid_t pp_h5obj_dataset(hid_t parent, const char *name, hid_t ftype, hid_t mtype, int rank,
                       const hsize_t *dims, const void *buf)
{
    hsize_t numel = 1;
    for (int d = 0; d < rank; d++)
        numel *= dims[d];
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

int pp_h5obj_put_dataset(hid_t parent, const char *name, hid_t ftype, hid_t mtype, int rank,
                         const hsize_t *dims, const void *buf)
{
    hid_t ds = pp_h5obj_dataset(parent, name, ftype, mtype, rank, dims, buf);
    return ds >= 0 && H5Dclose(ds) >= 0 ? 0 : -1;
}

int pp_h5obj_dataset_dims(hid_t parent, const char *name, H5T_class_t cls, int rank, hsize_t *dims)
{
    hid_t ds = H5Lexists(parent, name, H5P_DEFAULT) > 0 ? H5Dopen2(parent, name, H5P_DEFAULT)
                                                         : H5I_INVALID_HID;
    hid_t ty = ds >= 0 ? H5Dget_type(ds) : H5I_INVALID_HID;
    hid_t sp = ds >= 0 ? H5Dget_space(ds) : H5I_INVALID_HID;
    int ok = ty >= 0 && sp >= 0 && H5Tget_class(ty) == cls && H5Sget_simple_extent_ndims(sp) == rank &&
             H5Sget_simple_extent_dims(sp, dims, NULL) >= 0;
    if (sp >= 0)
        H5Sclose(sp);
    if (ty >= 0)
        H5Tclose(ty);
    if (ds >= 0)
        H5Dclose(ds);
    return ok ? 0 : -1;
}

int pp_h5obj_dataset_read(hid_t parent, const char *name, hid_t mtype, void *out)
{
    hid_t ds = H5Dopen2(parent, name, H5P_DEFAULT);
    int ok = ds >= 0 && H5Dread(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0;
    if (ds >= 0)
        H5Dclose(ds);
    return ok ? 0 : -1;
}

int pp_h5obj_children(hid_t g, char ***names, int *n)
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

void pp_h5obj_free_names(char **names, int n)
{
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}
