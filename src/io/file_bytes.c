// file_bytes.c — whole-file reading: mmap, or read() for what cannot be mapped.
#include "io/file_bytes.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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
