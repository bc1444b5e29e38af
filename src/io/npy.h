// npy.h — NumPy .npy files (format versions 1.0, 2.0 and 3.0): float16/32/64 arrays in C order,
// read from memory or a file, and written as numpy.save writes them.
#ifndef PP_NPY_H
#define PP_NPY_H

#include <stddef.h>

#include "error.h"
#include "core/tensor.h"

// Parses a whole .npy file held in buf[0..n).
// @param [in]  name  the file's name, the first word of every error message
// @param [out] t     the array: shape from the header, format fp16/fp32/fp64 from the dtype
//                    ('<f2' '<f4' '<f8' and their '>' big-endian forms), values exact; zeroed on
//                    failure.
// Rejected (PP_ERR_INPUT, one line naming the problem): bad magic, a version other than 1.0,
// 2.0 or 3.0, a header that is not the dict {'descr', 'fortran_order', 'shape'}, Fortran order,
// object, structured and other non-float dtypes (named), more than PP_MAX_DIMS dimensions, a
// negative extent or more than PP_MAX_NUMEL elements, data shorter than the shape needs, and
// bytes after the data (np.load would ignore them; they mean a second array or a damaged file,
// so precprobe refuses to guess).
// Returns PP_OK, PP_ERR_INPUT, or PP_ERR_RUNTIME (out of memory).
int pp_npy_parse(const unsigned char *buf, size_t n, const char *name, pp_tensor *t, pp_error *err);

// pp_npy_parse, also reading raw void items as numpy saves ml_dtypes' arrays: '<V2' (or '|V2')
// as bf16 or fp16 bit patterns, '<V1' as e4m3 or e5m2, little-endian, when raw_format names such
// a format (a pp_format_id, or -1: none declared). Raw items without a declared format of their
// width are rejected with a message asking for one.
int pp_npy_parse_as(const unsigned char *buf, size_t n, const char *name, int raw_format, pp_tensor *t,
                    pp_error *err);

// Reads the .npy file at path: pp_npy_parse on its bytes. Errors also for a missing or
// unreadable file (PP_ERR_INPUT).
int pp_npy_read(const char *path, pp_tensor *t, pp_error *err);
// pp_npy_parse_as on the bytes of the file at path.
int pp_npy_read_as(const char *path, int raw_format, pp_tensor *t, pp_error *err);

// Writes t to path as numpy.save does (format 1.0, header padded to 64 bytes), atomically.
// dtype: fp64 as '<f8'; fp16 as '<f2'; fp32, tf32, bf16, e4m3, e5m2 as '<f4' (exact: each of
// their values is a float32). A NaN keeps its sign; in '<f2' it becomes the quiet NaN 0x7e00
// (or 0xfe00), in '<f4' and '<f8' its payload is kept as far as the width allows.
// Returns PP_OK, PP_ERR_INPUT (a value of t is not representable in t->format) or
// PP_ERR_RUNTIME (the write failed; nothing is left at path but what was there before).
int pp_npy_write(const char *path, const pp_tensor *t, pp_error *err);

#endif
