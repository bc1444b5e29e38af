// atomic_file.h — replacing a file all at once: the new content goes to a temporary name in the
// destination's directory and is renamed over the destination only when complete, so a reader
// (or a crash) never sees a half-written report. For writers that need a file name rather than
// a FILE* (libhdf5), for writers that stream (the tensor formats), and for whole texts.
#ifndef PP_ATOMIC_FILE_H
#define PP_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

#include "error.h"

// Reserves a temporary name beside path, "PATH.tmp-XXXXXXXX", by creating it empty with
// O_EXCL (so no other writer picks it). A new file gets mode 0666 less the umask; when path
// exists its mode is copied, so a replaced report keeps its permissions.
// @param [in]  path  the destination (its directory must be writable)
// @param [out] tmp   the temporary name, malloc'd; NULL on failure
// Returns PP_OK, or PP_ERR_RUNTIME ("PATH: cannot write: ...", path a directory included).
int pp_atomic_reserve(const char *path, char **tmp, pp_error *err);

// Syncs the finished temporary file to disk and renames it onto path. On failure the temporary
// file is removed; either way *tmp is freed and set to NULL.
// Precondition: every handle writing to *tmp is closed (for HDF5: after H5Fclose).
// Returns PP_OK or PP_ERR_RUNTIME ("PATH: cannot write: ...").
int pp_atomic_finish(const char *path, char **tmp, pp_error *err);

// Removes the temporary file, frees *tmp and sets it to NULL; path is untouched. Safe when *tmp
// is NULL.
void pp_atomic_discard(char **tmp);

// Creates folder dir and any missing parents (mkdir -p). Returns 0, or -1 with errno set.
int pp_mkdir_p(const char *dir);

// Replaces the file at path with what emit(fp, ctx) writes (emit returns 0 when it wrote
// everything): into a reserved temporary file, renamed onto path only when emit, the flush and
// the close succeed, so a failure never leaves a half-written file under path's name (the old
// file, if any, stays as it was). A replaced file keeps its mode.
// Returns PP_OK or PP_ERR_RUNTIME ("PATH: cannot write: ...").
int pp_atomic_write_stream(const char *path, int (*emit)(FILE *fp, void *ctx), void *ctx,
                           pp_error *err);

// Replaces the file at path with the n bytes at data, atomically (reserve, write, finish).
// Returns PP_OK or PP_ERR_RUNTIME; on failure neither a temporary file nor a partial path is
// left behind, and an existing file at path is unchanged.
int pp_atomic_write_bytes(const char *path, const void *data, size_t n, pp_error *err);

// pp_atomic_write_bytes of strlen(text) bytes (no newline added): the text reports.
int pp_atomic_write_text(const char *path, const char *text, pp_error *err);

#endif
