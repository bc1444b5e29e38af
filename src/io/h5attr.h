// h5attr.h — scalar HDF5 attributes (strings and binary64) on a file, group or dataset, for the
// small files precprobe annotates outside its report schema (reference exports, the cache).
#ifndef PP_H5ATTR_H
#define PP_H5ATTR_H

#include <hdf5.h>
#include <stddef.h>

// Writes a fixed-length string / an IEEE F64LE scalar attribute. Return 0, or -1 on failure.
int pp_h5attr_put_str(hid_t obj, const char *name, const char *value);
int pp_h5attr_put_f64(hid_t obj, const char *name, double value);

// Reads a scalar string attribute into buf (NUL-terminated; longer values fail) / a scalar
// floating-point attribute. Return 0, or -1 when missing, of another type, or unreadable.
// Call inside an HDF5 error-silenced region when a missing attribute is not an error.
int pp_h5attr_get_str(hid_t obj, const char *name, char *buf, size_t n);
int pp_h5attr_get_f64(hid_t obj, const char *name, double *value);

#endif
