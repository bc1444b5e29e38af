// npy_codes.h — a .npy file of uint8 codes ('|u1', C order): the packed output of
// `precprobe cast` for formats numpy has no dtype for (one code per byte, see core/cast.h).
#ifndef PP_NPY_CODES_H
#define PP_NPY_CODES_H

#include <stdint.h>

#include "error.h"

// Writes codes[0..numel) with shape[0..ndim) to path as numpy.save writes a uint8 array (format
// 1.0, header padded to a multiple of 64 bytes), atomically.
// Returns PP_OK, PP_ERR_INPUT (ndim out of range, numel not the shape's product) or
// PP_ERR_RUNTIME (the write failed; what was at path stays).
int pp_npy_write_codes(const char *path, int ndim, const int64_t *shape, int64_t numel,
                       const uint8_t *codes, pp_error *err);

#endif
