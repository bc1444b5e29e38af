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
// O_EXCL (so no other writer picks it). A symlink is followed: the name is beside the file it
// points to, which pp_atomic_finish replaces, so the link stays a link. A destination that
// exists and is not a regular file (directory, device, FIFO, socket) is refused, untouched. A new file gets mode 0666 less the umask; when path
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

// Several files replaced as one set: each destination is reserved and checked first (a
// non-regular target refuses the whole set before anything is written), each writer writes to
// its staging name (itself atomically: the staging file is a regular file), and only when every
// writer succeeded are all renamed onto their destinations; on any failure none is, and no
// temporary file is left. A failing third report therefore never leaves the first two replaced.
#define PP_ATOMIC_SET_MAX 8
typedef struct pp_atomic_set {
    int n;
    const char *path[PP_ATOMIC_SET_MAX];  // the destinations (not copied: the caller keeps them)
    char *tmp[PP_ATOMIC_SET_MAX];         // their staging names (pp_atomic_reserve's)
} pp_atomic_set;

// Adds path to the set (zero-initialised by the caller); *staging is where its writer writes.
// Returns PP_OK or PP_ERR_RUNTIME (pp_atomic_reserve's message; more than PP_ATOMIC_SET_MAX).
int pp_atomic_set_add(pp_atomic_set *s, const char *path, const char **staging, pp_error *err);

// Renames every staged file onto its destination (pp_atomic_finish each); the set is empty
// afterwards. On a failure the files not yet renamed are discarded.
int pp_atomic_set_commit(pp_atomic_set *s, pp_error *err);

// Removes every staged file; no destination is touched. Safe on an empty set.
void pp_atomic_set_discard(pp_atomic_set *s);

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
