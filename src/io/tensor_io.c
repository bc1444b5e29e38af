// tensor_io.c — the spec dispatch (X.npy, X.safetensors[:NAME], X.h5:/DATASET), whole-file
// reading (mmap, or read() for what cannot be mapped), atomic writing through a callback, and
// printable names.
#include "io/tensor_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/atomic_file.h"
#include "io/h5io.h"
#include "io/npy.h"
#include "io/safetensors.h"

// ---------------------------------------------------------------------------------------------
// Specs

typedef enum { SPEC_NPY, SPEC_SAFETENSORS, SPEC_H5 } spec_kind;

// Splits spec into a file name (malloc'd into *file) and the part after ':' (*inner, pointing
// into spec, or NULL). The leftmost extension followed by the right character wins, so a
// tensor or dataset name may itself contain ".npy" or ':'.
static int spec_split(const char *spec, spec_kind *kind, char **file, const char **inner,
                      pp_error *err)
{
    static const struct {
        const char *ext;
        spec_kind kind;
    } exts[] = {{".safetensors", SPEC_SAFETENSORS}, {".hdf5", SPEC_H5}, {".h5", SPEC_H5},
                {".npy", SPEC_NPY}};
    *file = NULL;
    *inner = NULL;
    for (const char *p = spec; *p; p++) {
        if (*p != '.')
            continue;
        for (size_t k = 0; k < sizeof exts / sizeof exts[0]; k++) {
            size_t len = strlen(exts[k].ext);
            if (strncmp(p, exts[k].ext, len) != 0)
                continue;
            char next = p[len];
            if (next != '\0' && next != ':')
                continue;
            size_t flen = (size_t)(p - spec) + len;
            *file = malloc(flen + 1);
            if (!*file)
                return pp_fail(err, PP_ERR_RUNTIME, "%s: out of memory", spec);
            memcpy(*file, spec, flen);
            (*file)[flen] = '\0';
            *kind = exts[k].kind;
            *inner = next == ':' ? p + len + 1 : NULL;
            if (*kind == SPEC_NPY && *inner)
                goto bad;  // a .npy holds one array: nothing to name
            if (*kind == SPEC_H5 && (!*inner || !**inner || !strcmp(*inner, "/"))) {
                pp_fail(err, PP_ERR_INPUT, "%s: name the dataset, as %s:/GROUP/DATASET", *file,
                        *file);
                free(*file);
                *file = NULL;
                return PP_ERR_INPUT;
            }
            if (*kind == SPEC_SAFETENSORS && *inner && !**inner)
                *inner = NULL;  // "X.safetensors:" is "X.safetensors"
            return PP_OK;
        }
    }
bad:
    free(*file);
    *file = NULL;
    return pp_fail(err, PP_ERR_INPUT, "%s: unknown kind of tensor file; give " PP_TENSOR_SPEC_FORMS,
                   spec);
}

int pp_tensor_load(const char *spec, pp_tensor *t, pp_error *err)
{
    memset(t, 0, sizeof *t);
    spec_kind kind;
    char *file;
    const char *inner;
    int rc = spec_split(spec, &kind, &file, &inner, err);
    if (rc)
        return rc;
    switch (kind) {
    case SPEC_NPY: rc = pp_npy_read(file, t, err); break;
    case SPEC_SAFETENSORS: rc = pp_safetensors_read(file, inner, t, err); break;
    case SPEC_H5: rc = pp_h5_read(file, inner, t, err); break;
    }
    free(file);
    return rc;
}

int pp_tensor_save(const char *spec, const pp_tensor *t, pp_error *err)
{
    spec_kind kind;
    char *file;
    const char *inner;
    int rc = spec_split(spec, &kind, &file, &inner, err);
    if (rc)
        return rc;
    switch (kind) {
    case SPEC_NPY: rc = pp_npy_write(file, t, err); break;
    case SPEC_SAFETENSORS:
        if (!inner)
            rc = pp_fail(err, PP_ERR_INPUT, "%s: name the tensor to save, as %s:NAME", file, file);
        else
            rc = pp_safetensors_update(file, inner, t, err);
        break;
    case SPEC_H5: rc = pp_h5_write(file, inner, t, 0, err); break;
    }
    free(file);
    return rc;
}

int pp_tensor_check_writable(const char *path, const pp_tensor *t, pp_error *err)
{
    pp_error e2 = {0};
    int64_t numel;
    if ((int)t->format < 0 || t->format >= PP_FMT_COUNT)
        return pp_fail(err, PP_ERR_INPUT, "%s: tensor has no valid format", path);
    if (pp_shape_numel(t->ndim, t->shape, &numel, &e2))
        return pp_fail(err, PP_ERR_INPUT, "%s: %s", path, e2.msg);
    if (numel != t->numel || (numel > 0 && !t->data))
        return pp_fail(err, PP_ERR_INPUT, "%s: tensor's element count does not match its shape",
                       path);
    return pp_tensor_check_format(t, t->format, path, err);
}

const char *pp_printable(const char *s, char *buf, size_t n)
{
    size_t at = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        int ctl = *p < 0x20 || *p == 0x7f;
        size_t need = ctl ? 4 : 1;
        if (at + need > n - 4) {  // room for "..." and the NUL
            memcpy(buf + at, "...", 4);
            return buf;
        }
        if (ctl)
            snprintf(buf + at, 5, "\\x%02x", *p);
        else
            buf[at] = (char)*p;
        at += need;
    }
    buf[at] = '\0';
    return buf;
}

// ---------------------------------------------------------------------------------------------
// Whole-file reading

int pp_file_load(const char *path, pp_file_buf *b, pp_error *err)
{
    memset(b, 0, sizeof *b);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return pp_fail(err, PP_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return pp_fail(err, PP_ERR_INPUT, "%s: cannot read: %s", path, strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return pp_fail(err, PP_ERR_INPUT, "%s: is a directory, not a file", path);
    }
    if (S_ISREG(st.st_mode)) {
        if (st.st_size == 0) {
            close(fd);
            return PP_OK;
        }
        if ((uint64_t)st.st_size > SIZE_MAX) {
            close(fd);
            return pp_fail(err, PP_ERR_INPUT, "%s: too large to map", path);
        }
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m != MAP_FAILED) {
            close(fd);
            b->map = m;
            b->data = m;
            b->size = (size_t)st.st_size;
            return PP_OK;
        }
    }
    // A pipe, a device, or a file mmap refused: read it to the end.
    size_t cap = 1 << 16, len = 0;
    unsigned char *p = malloc(cap);
    for (;;) {
        if (!p) {
            close(fd);
            return pp_fail(err, PP_ERR_RUNTIME, "%s: out of memory reading the file", path);
        }
        ssize_t r = read(fd, p + len, cap - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(p);
            close(fd);
            return pp_fail(err, PP_ERR_INPUT, "%s: cannot read: %s", path, strerror(e));
        }
        if (r == 0)
            break;
        len += (size_t)r;
        if (len == cap) {
            unsigned char *q = cap <= SIZE_MAX / 2 ? realloc(p, cap * 2) : NULL;
            if (!q)
                free(p);
            p = q;
            cap *= 2;
        }
    }
    close(fd);
    b->heap = p;
    b->data = len ? p : NULL;
    b->size = len;
    return PP_OK;
}

void pp_file_release(pp_file_buf *b)
{
    if (b->map)
        munmap(b->map, b->size);
    free(b->heap);
    memset(b, 0, sizeof *b);
}

// ---------------------------------------------------------------------------------------------
// Atomic writing

int pp_write_atomic(const char *path, int (*emit)(FILE *fp, void *ctx), void *ctx, pp_error *err)
{
    char *tmp;
    int rc = pp_atomic_reserve(path, &tmp, err);
    if (rc)
        return rc;
    int e = 0;
    FILE *fp = fopen(tmp, "wb");
    if (!fp) {
        e = errno;
    } else {
        errno = 0;
        if (emit(fp, ctx) != 0 || fflush(fp) != 0)
            e = errno ? errno : EIO;
        if (fclose(fp) != 0 && !e)
            e = errno ? errno : EIO;
    }
    if (e) {
        pp_atomic_discard(&tmp);
        return pp_fail(err, PP_ERR_RUNTIME, "%s: cannot write: %s", path, strerror(e));
    }
    return pp_atomic_finish(path, &tmp, err);
}
