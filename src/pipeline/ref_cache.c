// ref_cache.c — the content-addressed reference cache (see ref_cache.h). SHA-256 from Nettle.
// An entry: DIR/<key>.h5 with one binary64 dataset per output (attributes error_bound, method)
// and root attributes key (the file's own key) and checksum (SHA-256 of the stored values),
// followed by a trailer of 40 bytes, "PPREFSUM" and the SHA-256 of every byte before it. The
// trailer is checked before HDF5 opens the file: HDF5 on a damaged file can fail to close it
// and complain at exit, and a byte it never reads would otherwise go unnoticed. HDF5 ignores
// bytes past the end of its image.
#include "pipeline/ref_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "io/atomic_file.h"
#include "core/build_info.h"
#include "io/h5attr.h"
#include "io/h5io.h"
#include "io/h5quiet.h"
#include "interrupt.h"

// ---- keys and checksums ------------------------------------------------------------------------

static void put_bytes(struct sha256_ctx *h, const void *p, size_t n)
{
    sha256_update(h, n, (const uint8_t *)p);
}

// Strings with their terminating NUL, so ("ab", "c") and ("a", "bc") hash differently.
static void put_str(struct sha256_ctx *h, const char *s)
{
    put_bytes(h, s, strlen(s) + 1);
}

static void put_i64(struct sha256_ctx *h, int64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)((uint64_t)v >> (8 * i));  // little-endian whatever the host
    put_bytes(h, b, 8);
}

// A tensor: shape, format and every value's binary64 bits (little-endian), so equal keys mean
// bit-identical values.
static void put_tensor(struct sha256_ctx *h, const pp_tensor *t)
{
    put_i64(h, t->ndim);
    for (int d = 0; d < t->ndim; d++)
        put_i64(h, t->shape[d]);
    put_i64(h, t->format);
    for (int64_t i = 0; i < t->numel; i++)
        put_i64(h, (int64_t)pp_f64_bits(t->data[i]));
}

static void to_hex(struct sha256_ctx *h, char hex[PP_REF_KEY_HEX])
{
    uint8_t d[SHA256_DIGEST_SIZE];
    sha256_digest(h, SHA256_DIGEST_SIZE, d);
    for (int i = 0; i < SHA256_DIGEST_SIZE; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

void pp_ref_cache_key(const pp_op *op, const pp_op_params *p, pp_format_id f, const char *method, const int *want,
                      const pp_tensor *in, char hex[PP_REF_KEY_HEX])
{
    struct sha256_ctx h;
    sha256_init(&h);
    // v2: entries end in a whole-file checksum trailer; v1 entries (without it) are never looked up
    put_str(&h, "precprobe reference cache v2");
    // The code that computed an entry matters as much as its inputs: a new precprobe version or a
    // new reference epoch (bump PP_REF_EPOCH whenever a reference's arithmetic changes) starts
    // a fresh cache instead of serving values an older reference computed.
    put_str(&h, PP_VERSION);
    put_i64(&h, PP_REF_EPOCH);
    put_str(&h, op->name);
    for (int i = 0; i < op->n_params; i++) {  // the effective value of every parameter
        put_str(&h, op->params[i].name);
        put_i64(&h, (int64_t)pp_f64_bits(p->given[i] ? p->v[i] : op->params[i].def));
        put_i64(&h, p->given[i]);
    }
    put_str(&h, pp_format_get(f).name);
    put_str(&h, method ? method : "");
    for (int t = 0; t < op->n_outputs; t++)
        put_i64(&h, want[t] != 0);
    for (int i = 0; i < op->n_inputs; i++)
        put_tensor(&h, &in[i]);
    to_hex(&h, hex);
}

static void checksum(const pp_op *op, const int *want, const pp_tensor *refs, const pp_reference_info *info,
                     char hex[PP_REF_KEY_HEX])
{
    struct sha256_ctx h;
    sha256_init(&h);
    for (int t = 0; t < op->n_outputs; t++) {
        if (!want[t])
            continue;
        put_str(&h, op->outputs[t]);
        put_tensor(&h, &refs[t]);
        put_i64(&h, (int64_t)pp_f64_bits(info[t].error_bound));
        put_str(&h, info[t].method);
    }
    to_hex(&h, hex);
}

// ---- files -------------------------------------------------------------------------------------

void pp_ref_cache_default_dir(char *buf, size_t n)
{
    const char *env = getenv("PRECPROBE_CACHE"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (env && *env)
        snprintf(buf, n, "%s", env);
    else if (xdg && *xdg)
        snprintf(buf, n, "%s/precprobe", xdg);
    else if (home && *home)
        snprintf(buf, n, "%s/.cache/precprobe", home);
    else
        buf[0] = '\0';
}

static void entry_path(const char *dir, const char hex[PP_REF_KEY_HEX], char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s.h5", dir, hex);
}

#define TRAILER_MAGIC "PPREFSUM"
#define TRAILER_SIZE (8 + SHA256_DIGEST_SIZE)

// The SHA-256 of the first n bytes of the open file fd (read from offset 0). Returns 0, or -1
// when they cannot all be read.
static int digest_prefix(int fd, off_t n, uint8_t d[SHA256_DIGEST_SIZE])
{
    struct sha256_ctx h;
    sha256_init(&h);
    static const size_t chunk = 1 << 20;
    unsigned char *buf = malloc(chunk);
    if (!buf || lseek(fd, 0, SEEK_SET) != 0) {
        free(buf);
        return -1;
    }
    while (n > 0) {
        ssize_t got = read(fd, buf, (size_t)n < chunk ? (size_t)n : chunk);
        if (got <= 0) {
            free(buf);
            return -1;
        }
        sha256_update(&h, (size_t)got, buf);
        n -= got;
    }
    free(buf);
    sha256_digest(&h, SHA256_DIGEST_SIZE, d);
    return 0;
}

// NULL when path ends in the trailer of its own bytes; else what is wrong.
static const char *check_trailer(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return "cannot be opened";
    struct stat st;
    const char *bad = NULL;
    unsigned char trailer[TRAILER_SIZE];
    uint8_t d[SHA256_DIGEST_SIZE];
    if (fstat(fd, &st) || st.st_size < TRAILER_SIZE + 8)
        bad = "truncated (shorter than its trailer)";
    else if (pread(fd, trailer, TRAILER_SIZE, st.st_size - TRAILER_SIZE) != TRAILER_SIZE ||
             memcmp(trailer, TRAILER_MAGIC, 8))
        bad = "no file checksum at its end (truncated, or not a cache entry)";
    else if (digest_prefix(fd, st.st_size - TRAILER_SIZE, d) || memcmp(d, trailer + 8, SHA256_DIGEST_SIZE))
        bad = "its bytes do not match their file checksum (damaged)";
    close(fd);
    return bad;
}

// Appends the trailer to the finished HDF5 file at path. Returns 0 or -1.
static int append_trailer(const char *path)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    struct stat st;
    unsigned char trailer[TRAILER_SIZE];
    memcpy(trailer, TRAILER_MAGIC, 8);
    int bad = fd < 0 || fstat(fd, &st) || digest_prefix(fd, st.st_size, trailer + 8) ||
              pwrite(fd, trailer, TRAILER_SIZE, st.st_size) != TRAILER_SIZE;
    if (fd >= 0 && close(fd))
        bad = 1;
    return bad ? -1 : 0;
}

int pp_ref_cache_load(const char *dir, const char hex[PP_REF_KEY_HEX], const pp_op *op, const pp_op_params *p,
                      const int *want, pp_tensor *refs, pp_reference_info *info, char *why, size_t why_n)
{
    char path[4200];
    entry_path(dir, hex, path, sizeof path);
    if (why && why_n)
        why[0] = '\0';
    if (access(path, F_OK))
        return 0;
    const char *bad = check_trailer(path);
    if (bad) {
        if (why && why_n)
            snprintf(why, why_n, "%s: %s", path, bad);
        return 0;
    }
    pp_h5_quiet q;
    pp_h5_quiet_begin(&q);  // a corrupt entry is a miss, not an HDF5 error stack
    char stored_key[PP_REF_KEY_HEX + 1], stored_sum[PP_REF_KEY_HEX + 1], sum[PP_REF_KEY_HEX];
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        bad = "not a readable HDF5 file";
    else if (pp_h5attr_get_str(f, "key", stored_key, sizeof stored_key) || strcmp(stored_key, hex))
        bad = "written for another key";
    else if (pp_h5attr_get_str(f, "checksum", stored_sum, sizeof stored_sum))
        bad = "no checksum";
    for (int t = 0; !bad && t < op->n_outputs; t++) {
        if (!want[t])
            continue;
        char ds[PP_NAME_MAX + 2];
        snprintf(ds, sizeof ds, "/%s", op->outputs[t]);
        hid_t d = H5Dopen2(f, ds, H5P_DEFAULT);
        if (d < 0 || pp_h5attr_get_f64(d, "error_bound", &info[t].error_bound) ||
            pp_h5attr_get_str(d, "method", info[t].method, sizeof info[t].method))
            bad = "a tensor or its attributes are missing";
        if (d >= 0)
            H5Dclose(d);
        snprintf(info[t].tensor, sizeof info[t].tensor, "%s", op->outputs[t]);
    }
    if (f >= 0)
        H5Fclose(f);
    for (int t = 0; !bad && t < op->n_outputs; t++) {
        if (!want[t])
            continue;
        char ds[PP_NAME_MAX + 2];
        snprintf(ds, sizeof ds, "/%s", op->outputs[t]);
        int ndim;
        int64_t shape[PP_MAX_DIMS];
        op->shape(p, 1, t, &ndim, shape);
        pp_error e = {0};
        if (pp_h5_read(path, ds, &refs[t], &e))
            bad = "a tensor cannot be read";
        else if (!pp_tensor_has_shape(&refs[t], ndim, shape))
            bad = "a tensor has the wrong shape";
        refs[t].format = PP_FMT_FP64;
    }
    if (!bad) {
        checksum(op, want, refs, info, sum);
        if (strcmp(sum, stored_sum))
            bad = "its values do not match their checksum";
    }
    pp_h5_quiet_end(&q);
    if (!bad)
        return 1;
    for (int t = 0; t < op->n_outputs; t++)
        pp_tensor_free(&refs[t]);
    if (why && why_n)
        snprintf(why, why_n, "%s: %s", path, bad);
    return 0;
}

int pp_ref_cache_store(const char *dir, const char hex[PP_REF_KEY_HEX], const pp_op *op, const int *want,
                       const pp_tensor *refs, const pp_reference_info *info, pp_error *err)
{
    char path[4200];
    if (pp_mkdir_p(dir))
        return pp_fail(err, PP_ERR_RUNTIME, "%s: cannot create the cache folder: %s", dir, strerror(errno));
    entry_path(dir, hex, path, sizeof path);
    char *tmp = NULL;
    int rc = pp_atomic_reserve(path, &tmp, err), first = 1;
    for (int t = 0; !rc && t < op->n_outputs; t++) {
        if (!want[t])
            continue;
        char ds[PP_NAME_MAX + 2];
        snprintf(ds, sizeof ds, "/%s", op->outputs[t]);
        pp_tensor as64 = refs[t];
        as64.format = PP_FMT_FP64;
        rc = pp_h5_write(tmp, ds, &as64, first, err);
        first = 0;
    }
    if (!rc) {
        char sum[PP_REF_KEY_HEX];
        checksum(op, want, refs, info, sum);
        hid_t f = H5Fopen(tmp, H5F_ACC_RDWR, H5P_DEFAULT);
        int bad = f < 0 || pp_h5attr_put_str(f, "key", hex) || pp_h5attr_put_str(f, "checksum", sum) ||
                  pp_h5attr_put_str(f, "op", op->name);
        for (int t = 0; !bad && t < op->n_outputs; t++) {
            if (!want[t])
                continue;
            char ds[PP_NAME_MAX + 2];
            snprintf(ds, sizeof ds, "/%s", op->outputs[t]);
            hid_t d = H5Dopen2(f, ds, H5P_DEFAULT);
            bad = d < 0 || pp_h5attr_put_f64(d, "error_bound", info[t].error_bound) ||
                  pp_h5attr_put_str(d, "method", info[t].method);
            if (d >= 0)
                H5Dclose(d);
        }
        if (f >= 0 && H5Fclose(f) < 0)
            bad = 1;
        if (!bad && append_trailer(tmp))
            bad = 1;
        if (bad)
            rc = pp_fail(err, PP_ERR_RUNTIME, "%s: cannot write the cache entry", path);
    }
    if (rc) {
        pp_atomic_discard(&tmp);
        return rc;
    }
    return pp_atomic_finish(path, &tmp, err);
}

// ---- one computation per entry ----------------------------------------------------------------

int pp_ref_cache_lock(const char *dir, const char hex[PP_REF_KEY_HEX], int *fd, int *waited)
{
    *fd = -1;
    if (waited)
        *waited = 0;
    char path[4200];
    if (pp_mkdir_p(dir))
        return PP_OK;  // no folder: the store will say so; compute unlocked
    snprintf(path, sizeof path, "%s/%s.lock", dir, hex);
    int f = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (f < 0)
        return PP_OK;
    for (;;) {
        if (!flock(f, LOCK_EX | LOCK_NB)) {
            *fd = f;
            return PP_OK;
        }
        if (errno != EWOULDBLOCK && errno != EINTR) {  // no locks on this file system
            close(f);
            return PP_OK;
        }
        if (waited)
            *waited = 1;
        if (pp_interrupted()) {
            close(f);
            return PP_ERR_INTERRUPTED;
        }
        struct timespec pause = {0, 50 * 1000 * 1000};  // 50 ms: small beside any reference worth caching
        nanosleep(&pause, NULL);
    }
}

void pp_ref_cache_unlock(int fd)
{
    if (fd < 0)
        return;
    flock(fd, LOCK_UN);
    close(fd);
}
