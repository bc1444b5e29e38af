// h5image.h — an HDF5 file built in memory and written to its path in one atomic step: HDF5 builds
// the file with the core driver and no backing store, precprobe writes the image through its
// atomic writer (io/atomic_file.h). libhdf5 1.10 crashes at exit after an H5Fclose that failed on
// a full disk (the file stays in its ID table half closed), so HDF5 must never see a failed write.
// The cost is memory: the image, and for a moment its copy. report.h5 and sweep.h5 are written so.
#ifndef PP_H5IMAGE_H
#define PP_H5IMAGE_H

#include <hdf5.h>

#include "error.h"

// Writes the whole file into the open in-memory file f. Returns PP_OK, or an error code with
// err set.
typedef int pp_h5_image_fill_fn(hid_t f, void *ctx, pp_error *err);

// Creates an in-memory HDF5 file, calls fill(f, ctx, err), and writes the file's image to path
// atomically. With track_order, the root group records the creation order of its attributes and
// links (as the report's groups do); without, the file has HDF5's default creation properties.
// HDF5's error printing is off throughout (io/h5quiet.h).
// Returns PP_OK, fill's error, or PP_ERR_RUNTIME ("PATH: HDF5 failed to ..." or the atomic
// writer's "PATH: cannot write: ...").
int pp_h5_image_write(const char *path, int track_order, pp_h5_image_fill_fn *fill, void *ctx, pp_error *err);

#endif
