// tensor_writable.h — the check every tensor writer (npy, safetensors, HDF5, reports) makes before
// it creates a file.
#ifndef PP_TENSOR_WRITABLE_H
#define PP_TENSOR_WRITABLE_H

#include "error.h"
#include "core/tensor.h"

// Checks what every writer needs before it creates a file: ndim in 0..PP_MAX_DIMS, a shape whose
// product is t->numel, data present, a valid format, and every value representable in it.
// Returns PP_OK or PP_ERR_INPUT with a message starting with path.
int pp_tensor_check_writable(const char *path, const pp_tensor *t, pp_error *err);

#endif
