// atomic_file.c — temporary name, fsync, rename: the one way reports reach the disk.
#include "io/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int pp_atomic_reserve(const char *path, char **tmp, pp_error *err)
{
    *tmp = NULL;
    struct stat st;
    int exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode))
        return pp_fail(err, PP_ERR_RUNTIME, "%s: cannot write: is a directory", path);
    size_t n = strlen(path) + 32;
    char *name = malloc(n);
    if (!name)
        return pp_fail(err, PP_ERR_RUNTIME, "%s: out of memory", path);
    // A name no other writer picks: pid, clock and a stack address mixed, retried on collision;
    // O_EXCL makes the reservation race-free.
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)getpid() * 0x9E3779B97F4A7C15u ^ (uint64_t)ts.tv_nsec ^
                 ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)(uintptr_t)&ts;
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
        x = x * 6364136223846793005u + 1442695040888963407u;
        snprintf(name, n, "%s.tmp-%08x", path, (unsigned)(x >> 32));
        fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        int e = errno;
        free(name);
        return pp_fail(err, PP_ERR_RUNTIME, "%s: cannot write: %s", path, strerror(e));
    }
    int e = 0;
    if (exists && fchmod(fd, st.st_mode & 07777) != 0)
        e = errno;
    if (close(fd) != 0 && !e)
        e = errno;
    if (e) {
        unlink(name);
        free(name);
        return pp_fail(err, PP_ERR_RUNTIME, "%s: cannot write: %s", path, strerror(e));
    }
    *tmp = name;
    return PP_OK;
}

int pp_atomic_finish(const char *path, char **tmp, pp_error *err)
{
    int e = 0;
    // The data must be on disk before the rename makes it visible, or a crash could leave an
    // empty file under the destination's name.
    int fd = open(*tmp, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fsync(fd) != 0)
        e = errno;
    if (fd >= 0 && close(fd) != 0 && !e)
        e = errno;
    if (!e && rename(*tmp, path) != 0)
        e = errno;
    if (e) {
        pp_atomic_discard(tmp);
        return pp_fail(err, PP_ERR_RUNTIME, "%s: cannot write: %s", path, strerror(e));
    }
    free(*tmp);
    *tmp = NULL;
    return PP_OK;
}

void pp_atomic_discard(char **tmp)
{
    if (!*tmp)
        return;
    unlink(*tmp);
    free(*tmp);
    *tmp = NULL;
}

int pp_atomic_write_stream(const char *path, int (*emit)(FILE *fp, void *ctx), void *ctx,
                           pp_error *err)
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

typedef struct bytes_out {
    const void *data;
    size_t n;
} bytes_out;

static int emit_bytes(FILE *fp, void *ctx)
{
    const bytes_out *b = ctx;
    return b->n > 0 && fwrite(b->data, 1, b->n, fp) != b->n ? -1 : 0;
}

int pp_atomic_write_bytes(const char *path, const void *data, size_t n, pp_error *err)
{
    bytes_out b = {data, n};
    return pp_atomic_write_stream(path, emit_bytes, &b, err);
}

int pp_atomic_write_text(const char *path, const char *text, pp_error *err)
{
    return pp_atomic_write_bytes(path, text, strlen(text), err);
}

int pp_mkdir_p(const char *dir)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0777) && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(path, 0777) && errno != EEXIST ? -1 : 0;
}
