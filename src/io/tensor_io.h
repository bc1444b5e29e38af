// tensor_io.h — loading and saving a tensor named by a spec (X.npy, X.safetensors:NAME,
// X.h5:/dataset), and the plumbing the three formats share: reading a whole file into memory,
// writing through a temporary file renamed into place, printable names for messages.
#ifndef PP_TENSOR_IO_H
#define PP_TENSOR_IO_H

#include <stddef.h>
#include <stdio.h>

#include "error.h"
#include "core/tensor.h"

// ---------------------------------------------------------------------------------------------
// Specs

// The accepted spec forms, for usage texts and error messages.
#define PP_TENSOR_SPEC_FORMS "FILE.npy, FILE.safetensors[:NAME], FILE.h5:/DATASET or FILE.hdf5:/DATASET"

// Loads the tensor spec names into *t (values as binary64, format from the file).
// @param [in]  spec  "X.npy"; "X.safetensors:NAME" or "X.safetensors" (the file must then hold
//                    exactly one tensor); "X.h5:/group/dataset" or "X.hdf5:/group/dataset".
//                    The file name ends at the leftmost ".npy" ending the spec, ".safetensors"
//                    followed by ':' or the end, or ".h5"/".hdf5" followed by ':'; what follows
//                    the ':' names the tensor or dataset (and may hold ':' and dots itself).
// @param [out] t     on success a tensor the caller frees with pp_tensor_free; zeroed on failure.
// Returns PP_OK, or PP_ERR_INPUT (unknown form, unreadable or malformed file, missing tensor)
// or PP_ERR_RUNTIME (out of memory), with a one-line message starting with the file name.
int pp_tensor_load(const char *spec, pp_tensor *t, pp_error *err);

// Saves t as the spec names, atomically (temporary file, then rename).
// @param [in] spec  as for pp_tensor_load. "X.npy" replaces the file. "X.safetensors:NAME" adds
//                   or replaces the tensor NAME, keeping the file's other tensors and metadata
//                   (the name is required). "X.h5:/dataset" adds or replaces that dataset,
//                   keeping the rest of the file.
// Returns PP_OK, PP_ERR_INPUT (bad spec, a value not representable in t->format, an existing
// file that cannot be updated) or PP_ERR_RUNTIME (the write failed; the old file is intact).
int pp_tensor_save(const char *spec, const pp_tensor *t, pp_error *err);

// Checks what every writer needs before it creates a file: ndim in 0..PP_MAX_DIMS, a shape whose
// product is t->numel, data present, a valid format, and every value representable in it.
// Returns PP_OK or PP_ERR_INPUT with a message starting with path.
int pp_tensor_check_writable(const char *path, const pp_tensor *t, pp_error *err);

// Copies s into buf (size n >= 8) fit for a one-line message: control characters and DEL as
// \xHH, and, past n - 1 bytes, cut with "...". Names from files (and users) may hold anything.
// Returns buf.
const char *pp_printable(const char *s, char *buf, size_t n);

// ---------------------------------------------------------------------------------------------
// Whole-file reading

// A file's bytes in memory: mapped read-only when it is a regular file (so a safetensors
// checkpoint costs only the pages of the tensor read), read otherwise. Like any mapping, a file
// truncated by another process while mapped raises SIGBUS: inputs must not be written meanwhile.
typedef struct pp_file_buf {
    const unsigned char *data;  // size bytes (not NUL-terminated); NULL when size is 0
    size_t size;
    void *map;                  // private: the mapping (or NULL)
    unsigned char *heap;        // private: the heap copy (or NULL)
} pp_file_buf;

// Makes the bytes of path available in *b.
// Returns PP_OK, PP_ERR_INPUT ("PATH: cannot open: ...", a directory) or PP_ERR_RUNTIME.
int pp_file_load(const char *path, pp_file_buf *b, pp_error *err);

// Releases what pp_file_load made; safe on a zeroed struct.
void pp_file_release(pp_file_buf *b);

// ---------------------------------------------------------------------------------------------
// Atomic writing (atomic_file.h underneath: a temporary file beside path, renamed over it)

// Writes path through emit(fp, ctx), which returns 0 when it wrote everything: into a
// temporary file in path's directory, synced and renamed onto path only when emit and the close
// succeed, so a failure never leaves a half-written file under path's name (the old file, if
// any, stays as it was). A replaced file keeps its mode.
// Returns PP_OK or PP_ERR_RUNTIME ("PATH: cannot write: ...").
int pp_write_atomic(const char *path, int (*emit)(FILE *fp, void *ctx), void *ctx, pp_error *err);

#endif
