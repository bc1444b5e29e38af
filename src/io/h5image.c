// h5image.c — an HDF5 file built in memory, written atomically (h5image.h).
#include "io/h5image.h"

#include <stdlib.h>

#include "io/atomic_file.h"
#include "io/h5quiet.h"

// The file creation properties: HDF5's defaults, or the root's creation order tracked.
static hid_t creation_props(int track_order)
{
    if (!track_order)
        return H5P_DEFAULT;
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    if (fcpl >= 0 && (H5Pset_attr_creation_order(fcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) < 0 ||
                      H5Pset_link_creation_order(fcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) < 0)) {
        H5Pclose(fcpl);
        return H5I_INVALID_HID;
    }
    return fcpl;
}

int pp_h5_image_write(const char *path, int track_order, pp_h5_image_fill_fn *fill, void *ctx, pp_error *err)
{
    pp_h5_quiet q;
    pp_h5_quiet_begin(&q);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), fcpl = creation_props(track_order);
    hid_t f = H5I_INVALID_HID;
    if (fapl >= 0 && fcpl >= 0 && H5Pset_fapl_core(fapl, 1 << 20, 0) >= 0)
        f = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl);
    if (fapl >= 0)
        H5Pclose(fapl);
    if (fcpl >= 0 && fcpl != H5P_DEFAULT)
        H5Pclose(fcpl);
    unsigned char *image = NULL;
    ssize_t size = 0;
    int rc;
    if (f < 0) {
        rc = pp_fail(err, PP_ERR_RUNTIME, "%s: HDF5 failed to set up an in-memory file", path);
    } else {
        rc = fill(f, ctx, err);
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
