// file_tensor.h — a tensor a case reads from a file (an input, or an external variant's output):
// loaded through the spec dispatch with the format the case declares, its shape checked against
// the operation's, transposed from the layout the file holds it in, and for inputs made values
// of the variant's format (checked, or rounded to nearest when the case says round = "nearest").
#ifndef PP_FILE_TENSOR_H
#define PP_FILE_TENSOR_H

#include <stdint.h>

#include "error.h"
#include "core/tensor.h"

// How a case reads one tensor from a file (cases/README.md, "Tensors from files").
typedef struct pp_file_tensor {
    const char *spec;         // X.npy, X.safetensors:NAME, X.h5:/DS, X.pt[:NAME]
    int declared;             // the format the file's values are declared to be (pp_format_id), or -1
    const char *axes;         // the operation's axis letters for this tensor ("bshd"), or NULL
    const char *layout;       // the order the file holds them in; NULL or "": the operation's
    const char *what;         // names the tensor in messages ("CASE: input 'q' (FILE)")
} pp_file_tensor;

// Loads f into *t with the operation's shape (ndim, shape[]): the file's shape must be that shape
// in f->layout's order; values and format as the file holds them, except that a declared format
// is checked (every value must be one of it) and becomes t's format.
// Returns PP_OK, PP_ERR_INPUT (one line starting with f->what or the file's name) or
// PP_ERR_RUNTIME; *t is zeroed on failure.
int pp_file_tensor_load(const pp_file_tensor *f, int ndim, const int64_t *shape, pp_tensor *t, pp_error *err);

// Makes every value of an input t a value of format: checked (round_nearest 0: a value that is
// not is an error naming it) or rounded to nearest-even (1: what torch's .to(dtype) does, so a
// float32 dump feeds a bf16 variant). t's format becomes format.
int pp_file_tensor_to_format(pp_tensor *t, pp_format_id format, int round_nearest, const char *what,
                             pp_error *err);

#endif
