// h5attr.h — HDF5 attributes on a file, group or dataset: the scalar ones precprobe annotates
// small files with outside its report schema (reference exports, the cache: fixed-length
// strings), and the typed ones report.h5 is made of (variable-length UTF-8 strings as h5py
// writes them, little-endian integers, binary64, 1-D arrays of them).
// Call inside an HDF5 error-silenced region (io/h5quiet.h) when a failure is not an error.
#ifndef PP_H5ATTR_H
#define PP_H5ATTR_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

// Writes a fixed-length string / an IEEE F64LE scalar attribute. Return 0, or -1 on failure.
int pp_h5attr_put_str(hid_t obj, const char *name, const char *value);
int pp_h5attr_put_f64(hid_t obj, const char *name, double value);

// Reads a scalar fixed-length string attribute into buf (NUL-terminated; longer values fail) / a
// scalar floating-point attribute. Return 0, or -1 when missing, of another type, or unreadable.
int pp_h5attr_get_str(hid_t obj, const char *name, char *buf, size_t n);
int pp_h5attr_get_f64(hid_t obj, const char *name, double *value);

// The variable-length UTF-8 string type h5py writes for a Python str (and reads back as str);
// the caller closes it. H5I_INVALID_HID on failure.
hid_t pp_h5attr_vstr_type(void);

// Writes buf (memory type mtype) as an attribute of file type ftype: a scalar (rank 0) or a 1-D
// array of n values (rank 1). The typed writers below are this with the report's types. Return
// 0, or -1 on failure.
int pp_h5attr_put(hid_t obj, const char *name, hid_t ftype, hid_t mtype, int rank, size_t n,
                  const void *buf);
int pp_h5attr_put_i64(hid_t obj, const char *name, int64_t v);    // STD_I64LE
int pp_h5attr_put_i32(hid_t obj, const char *name, int v);        // STD_I32LE
int pp_h5attr_put_u64(hid_t obj, const char *name, uint64_t v);   // STD_U64LE
int pp_h5attr_put_i64v(hid_t obj, const char *name, const int64_t *v, size_t n);
int pp_h5attr_put_f64v(hid_t obj, const char *name, const double *v, size_t n);
int pp_h5attr_put_vstr(hid_t obj, const char *name, const char *value);  // variable-length UTF-8
int pp_h5attr_put_vstrs(hid_t obj, const char *name, const char *const *v, size_t n);

// Reads a single string attribute of any kind (variable or fixed length, any padding and
// character set) into a malloc'd string. Returns 0, or -1 (missing, not a string, unreadable).
int pp_h5attr_get_str_dup(hid_t obj, const char *name, char **out);

// Reads a numeric attribute of class cls (H5T_INTEGER, H5T_FLOAT) as memory type mtype into out:
// exactly n values when count is NULL; else 0..n values, their number in *count. Returns 0, or
// -1 (missing, another class or count, unreadable).
int pp_h5attr_get_num(hid_t obj, const char *name, H5T_class_t cls, hid_t mtype, void *out,
                      size_t n, int *count);

#endif
