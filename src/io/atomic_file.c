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

// The temporary name is TARGET + ".tmp-" + 8 hex digits: pp_atomic_finish finds the target by
// dropping the suffix, so a symlink given as the path is resolved once, in pp_atomic_reserve.
#define PP_ATOMIC_SUFFIX_LEN 13

// What kind of thing a non-regular file is, for the message that refuses to replace it.
static const char *file_kind(mode_t m)
{
    return S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device" : S_ISFIFO(m) ? "a FIFO"
         : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

// The file a path names after following symlinks, the last link's target included even when it
// does not exist yet (malloc'd; NULL with errno set). A relative link target is relative to the
// link's own folder. A replaced report then stays where the link points and the link is kept.
static char *follow_links(const char *path)
{
    char *cur = strdup(path);
    for (int hops = 0; cur && hops < 40; hops++) {
        struct stat st;
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
            return cur;
        char target[4096];
        ssize_t k = readlink(cur, target, sizeof target - 1);
        if (k < 0) {
            free(cur);
            return NULL;
        }
        target[k] = '\0';
        const char *slash = strrchr(cur, '/');
        size_t dir_len = target[0] == '/' || !slash ? 0 : (size_t)(slash - cur) + 1;
        char *next = malloc(dir_len + (size_t)k + 1);
        if (next) {
            memcpy(next, cur, dir_len);
            memcpy(next + dir_len, target, (size_t)k + 1);
        }
        free(cur);
        cur = next;
    }
    if (cur) {
        free(cur);
        errno = ELOOP;
    }
    return NULL;
}

// Refuses a destination that exists and is not a regular file: a directory, or a device, FIFO
// or socket, which a rename would replace by a regular file (a report "written" to /dev/full).
static int check_replaceable(const char *path, const char *target, pp_error *err)
{
    struct stat st;
    if (lstat(target, &st) != 0 || S_ISREG(st.st_mode))
        return PP_OK;
    if (S_ISDIR(st.st_mode))
        return pp_fail(err, PP_ERR_RUNTIME, "%s: cannot write: is a directory", path);
    return pp_fail(err, PP_ERR_RUNTIME, "%s: cannot write: %s, not a regular file; left untouched", path,
                   file_kind(st.st_mode));
}

int pp_atomic_reserve(const char *path, char **tmp, pp_error *err)
{
    *tmp = NULL;
    char *target = follow_links(path);
    if (!target)
        return pp_fail(err, PP_ERR_RUNTIME, "%s: cannot write: %s", path, strerror(errno));
    int rc = check_replaceable(path, target, err);
    if (rc) {
        free(target);
        return rc;
    }
    struct stat st;
    int exists = stat(target, &st) == 0;
    size_t n = strlen(target) + 32;
    char *name = malloc(n);
    if (!name) {
        free(target);
        return pp_fail(err, PP_ERR_RUNTIME, "%s: out of memory", path);
    }
    // A name no other writer picks: pid, clock and a stack address mixed, retried on collision;
    // O_EXCL makes the reservation race-free.
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)getpid() * 0x9E3779B97F4A7C15u ^ (uint64_t)ts.tv_nsec ^
                 ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)(uintptr_t)&ts;
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
        x = x * 6364136223846793005u + 1442695040888963407u;
        snprintf(name, n, "%s.tmp-%08x", target, (unsigned)(x >> 32));
        fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    free(target);
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
    size_t len = strlen(*tmp);
    char *target = len > PP_ATOMIC_SUFFIX_LEN ? strndup(*tmp, len - PP_ATOMIC_SUFFIX_LEN) : NULL;
    if (!e && !target)
        e = ENOMEM;
    // what was a regular file at reserve time may have become a device or FIFO since
    if (!e && check_replaceable(path, target, err)) {
        pp_atomic_discard(tmp);
        free(target);
        return PP_ERR_RUNTIME;
    }
    if (!e && rename(*tmp, target) != 0)
        e = errno;
    free(target);
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

int pp_atomic_set_add(pp_atomic_set *s, const char *path, const char **staging, pp_error *err)
{
    if (s->n == PP_ATOMIC_SET_MAX)
        return pp_fail(err, PP_ERR_RUNTIME, "%s: cannot write: more than %d files in one set", path,
                       PP_ATOMIC_SET_MAX);
    int rc = pp_atomic_reserve(path, &s->tmp[s->n], err);
    if (rc)
        return rc;
    s->path[s->n] = path;
    *staging = s->tmp[s->n++];
    return PP_OK;
}

int pp_atomic_set_commit(pp_atomic_set *s, pp_error *err)
{
    int rc = PP_OK;
    for (int i = 0; i < s->n; i++)
        if (rc)
            pp_atomic_discard(&s->tmp[i]);
        else
            rc = pp_atomic_finish(s->path[i], &s->tmp[i], err);
    s->n = 0;
    return rc;
}

void pp_atomic_set_discard(pp_atomic_set *s)
{
    for (int i = 0; i < s->n; i++)
        pp_atomic_discard(&s->tmp[i]);
    s->n = 0;
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
