// file_bytes.h — a whole file's bytes in memory, for the readers of the tensor formats (npy,
// safetensors, HDF5 images).
#ifndef PP_FILE_BYTES_H
#define PP_FILE_BYTES_H

#include <stddef.h>

#include "error.h"

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

#endif
