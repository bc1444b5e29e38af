// h5io.h — a tensor as an HDF5 dataset (serial libhdf5): floating datasets read into binary64,
// tensors written one dataset each, with a "precprobe_format" attribute for the formats HDF5
// has no type for.
#ifndef PP_H5IO_H
#define PP_H5IO_H

#include "error.h"
#include "core/tensor.h"

// The dataset attribute naming a tensor's format ("bf16", "e4m3", ...) when the stored type
// does not say it.
#define PP_H5_FORMAT_ATTR "precprobe_format"

// Reads dataset (e.g. "/run/out"; a missing leading '/' is implied) of the HDF5 file at path.
// @param [out] t  values exact, converted by HDF5 to binary64; zeroed on failure.
// Format: from the stored type (IEEE binary64 fp64, binary32 fp32, a 16-bit IEEE type such as
// h5py's float16 fp16, a 16-bit type with 8 exponent bits bf16; either byte order), unless the
// string attribute "precprobe_format" names one, which every value must then be representable in.
// Rejected (PP_ERR_INPUT, naming file and dataset): a missing file, not HDF5, a missing dataset
// (the names beside it are listed), a group, integer, compound and other non-float types, float
// types other than those above, more than PP_MAX_DIMS dimensions or more than PP_MAX_NUMEL
// elements, an empty (null) dataspace, a bad attribute.
// Returns PP_OK, PP_ERR_INPUT or PP_ERR_RUNTIME (out of memory, a failed read).
int pp_h5_read(const char *path, const char *dataset, pp_tensor *t, pp_error *err);

// Writes t as dataset (intermediate groups created; an existing dataset of that name replaced)
// into the HDF5 file at path: a new file (truncate_file, or no file yet), or the existing file
// with the dataset added. Atomic: HDF5 builds the file in memory (an existing one is read in
// whole) and precprobe writes the image to a temporary file renamed into place.
// Types: fp64 IEEE F64LE, fp32 F32LE, fp16 the 16-bit little-endian IEEE type h5py reads as
// float16; tf32, bf16, e4m3, e5m2 F32LE (exact) with the attribute "precprobe_format". A 0-d
// tensor is a scalar dataspace.
// Returns PP_OK, PP_ERR_INPUT (bad dataset name, a group in the way, unrepresentable values, an
// existing file that is not HDF5) or PP_ERR_RUNTIME (the write failed; the old file is intact).
int pp_h5_write(const char *path, const char *dataset, const pp_tensor *t, int truncate_file,
                pp_error *err);

#endif
