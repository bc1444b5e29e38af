// tensor.h — a host tensor: shape, values carried as binary64, and the format they conform to.
// Every value of every pp_format is exactly a binary64, so no information is lost.
#ifndef PP_TENSOR_H
#define PP_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"
#include "error.h"

#define PP_MAX_DIMS 8

// Largest element count a tensor may have: 2^40 values (8 TiB as binary64) is far beyond any
// machine; anything larger is a corrupt or hostile header, not a tensor.
#define PP_MAX_NUMEL ((int64_t)1 << 40)

typedef struct pp_tensor {
    int ndim;                     // 0 (a scalar) to PP_MAX_DIMS
    int64_t shape[PP_MAX_DIMS];   // row-major (C order)
    int64_t numel;                // product of shape; 1 for ndim 0
    pp_format_id format;          // every value is representable in this format
    double *data;                 // numel values, row-major; owned
} pp_tensor;

// Allocates a tensor of the given shape (values zeroed). Checks that the product of the shape
// neither overflows nor exceeds PP_MAX_NUMEL, and that no extent is negative.
// Returns PP_OK, PP_ERR_INPUT (bad shape) or PP_ERR_RUNTIME (out of memory).
int pp_tensor_alloc(pp_tensor *t, int ndim, const int64_t *shape, pp_format_id format, pp_error *err);

// Frees the values and zeroes the struct; safe on a zeroed or already freed tensor.
void pp_tensor_free(pp_tensor *t);

// Product of shape[0..ndim) into *numel; PP_ERR_INPUT when ndim is out of range, an extent is
// negative, or the product overflows or exceeds PP_MAX_NUMEL.
int pp_shape_numel(int ndim, const int64_t *shape, int64_t *numel, pp_error *err);

// Writes "(2, 3, 4)" (Python's repr of the shape tuple; "(7,)" for 1-D, "()" for 0-D).
void pp_shape_str(int ndim, const int64_t *shape, char *buf, size_t n);

// Writes the row-major multi-index of flat index i as Python's repr of a tuple: "(0, 1, 2)",
// "(7,)" for 1-D, "()" for 0-D.
void pp_index_str(int ndim, const int64_t *shape, int64_t i, char *buf, size_t n);

// Whether t has exactly this shape.
int pp_tensor_has_shape(const pp_tensor *t, int ndim, const int64_t *shape);

// Looks a format up by name ("fp16", "bf16", ...; also torch's "float16", "bfloat16",
// "float32", "float64", "half", "float", "double", "float8_e4m3fn", "float8_e5m2", each also
// with torch's "torch." prefix: "torch.bfloat16"). Returns 0 and sets *f, or -1.
int pp_format_from_name(const char *name, pp_format_id *f);

// Checks that every value of t is representable in format f; on failure names the first
// offending flat index and value, prefixed by what (e.g. the file name).
int pp_tensor_check_format(const pp_tensor *t, pp_format_id f, const char *what, pp_error *err);

#endif
