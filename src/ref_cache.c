// ref_cache.c — the reference cache: SHA-256, the key builder, and one verified HDF5 file per key
// (datasets /t0…, attributes key, n, checksum; per dataset ndim, shape, format, tensor, method,
// error_bound). See ref_cache.h.
#include "ref_cache.h"

#include <errno.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "atomic_file.h"

#define CACHE_VERSION 1
#define CACHE_MAX_N 64

// ---------------------------------------------------------------------------------------------
// SHA-256 (FIPS 180-4, section 6.2)

static const uint32_t SHA_K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t rotr(uint32_t x, int n)
{
    return (x >> n) | (x << (32 - n));
}

static void sha_block(uint32_t h[8], const uint8_t *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
               (uint32_t)p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t S1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
        uint32_t ch = (e & f) ^ (~e & g);
        uint32_t t1 = k + S1 + ch + SHA_K[i] + w[i];
        uint32_t S0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
        uint32_t mj = (a & b) ^ (a & c) ^ (b & c);
        uint32_t t2 = S0 + mj;
        k = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += k;
}

void pp_sha256_init(pp_sha256 *s)
{
    static const uint32_t H0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, H0, sizeof H0);
    s->len = 0;
    s->nbuf = 0;
}

void pp_sha256_update(pp_sha256 *s, const void *data, size_t n)
{
    const uint8_t *p = data;
    s->len += n;
    while (n > 0) {
        size_t take = 64 - s->nbuf < n ? 64 - s->nbuf : n;
        memcpy(s->buf + s->nbuf, p, take);
        s->nbuf += take;
        p += take;
        n -= take;
        if (s->nbuf == 64) {
            sha_block(s->h, s->buf);
            s->nbuf = 0;
        }
    }
}

void pp_sha256_final(pp_sha256 *s, uint8_t out[32])
{
    uint64_t bits = s->len * 8;
    uint8_t pad = 0x80, zero = 0;
    pp_sha256_update(s, &pad, 1);
    while (s->nbuf != 56)
        pp_sha256_update(s, &zero, 1);
    uint8_t L[8];
    for (int i = 0; i < 8; i++)
        L[i] = (uint8_t)(bits >> (56 - 8 * i));
    pp_sha256_update(s, L, 8);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++)
            out[4 * i + j] = (uint8_t)(s->h[i] >> (24 - 8 * j));
}

// ---------------------------------------------------------------------------------------------
// Key builder

static void put_u64(pp_sha256 *s, uint64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    pp_sha256_update(s, b, 8);
}

static void put_field(pp_sha256 *s, char tag, const char *name)
{
    pp_sha256_update(s, &tag, 1);
    size_t n = strlen(name);
    put_u64(s, n);
    pp_sha256_update(s, name, n);
}

void pp_ref_key_init(pp_ref_key *k, const char *op)
{
    pp_sha256_init(&k->sha);
    put_field(&k->sha, 'V', "precprobe-ref-cache");
    put_u64(&k->sha, CACHE_VERSION);
    pp_ref_key_str(k, "op", op);
}

void pp_ref_key_str(pp_ref_key *k, const char *name, const char *value)
{
    put_field(&k->sha, 'S', name);
    size_t n = strlen(value);
    put_u64(&k->sha, n);
    pp_sha256_update(&k->sha, value, n);
}

void pp_ref_key_i64(pp_ref_key *k, const char *name, int64_t value)
{
    put_field(&k->sha, 'I', name);
    put_u64(&k->sha, (uint64_t)value);
}

void pp_ref_key_f64(pp_ref_key *k, const char *name, double value)
{
    uint64_t b;
    memcpy(&b, &value, sizeof b);
    put_field(&k->sha, 'F', name);
    put_u64(&k->sha, b);
}

void pp_ref_key_tensor(pp_ref_key *k, const char *name, const pp_tensor *t)
{
    put_field(&k->sha, 'T', name);
    const char *f = pp_format_get(t->format).name;
    put_u64(&k->sha, strlen(f));
    pp_sha256_update(&k->sha, f, strlen(f));
    put_u64(&k->sha, (uint64_t)t->ndim);
    for (int i = 0; i < t->ndim; i++)
        put_u64(&k->sha, (uint64_t)t->shape[i]);
    for (int64_t i = 0; i < t->numel; i++) {
        uint64_t b;
        memcpy(&b, &t->data[i], sizeof b);
        put_u64(&k->sha, b);
    }
}

void pp_ref_key_values(pp_ref_key *k, const char *name, const double *x, int64_t n)
{
    put_field(&k->sha, 'R', name);
    put_u64(&k->sha, (uint64_t)n);
    for (int64_t i = 0; i < n; i++) {
        uint64_t b;
        memcpy(&b, &x[i], sizeof b);
        put_u64(&k->sha, b);
    }
}

void pp_ref_key_final(pp_ref_key *k, uint8_t key[32])
{
    pp_sha256_final(&k->sha, key);
}

void pp_ref_key_hex(const uint8_t key[32], char hex[65])
{
    static const char D[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        hex[2 * i] = D[key[i] >> 4];
        hex[2 * i + 1] = D[key[i] & 15];
    }
    hex[64] = 0;
}

// ---------------------------------------------------------------------------------------------
// The payload checksum: SHA-256 of the key, n and, per tensor, its info, format, shape and bits —
// computed from what is stored, and again from what is read.

static void checksum(const uint8_t key[32], int n, const pp_tensor *t, const pp_reference_info *info,
                     uint8_t out[32])
{
    pp_ref_key k;
    pp_ref_key_init(&k, "checksum");
    pp_sha256_update(&k.sha, key, 32);
    pp_ref_key_i64(&k, "n", n);
    for (int i = 0; i < n; i++) {
        pp_ref_key_str(&k, "tensor", info[i].tensor);
        pp_ref_key_str(&k, "method", info[i].method);
        pp_ref_key_f64(&k, "error_bound", info[i].error_bound);
        pp_ref_key_tensor(&k, "data", &t[i]);
    }
    pp_ref_key_final(&k, out);
}

// ---------------------------------------------------------------------------------------------
// HDF5 attributes: fixed-size arrays of a native type

static int attr_write(hid_t loc, const char *name, hid_t type, hsize_t n, const void *data)
{
    hid_t sp = H5Screate_simple(1, &n, NULL);
    if (sp < 0)
        return -1;
    hid_t a = H5Acreate2(loc, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
    int rc = a < 0 || H5Awrite(a, type, data) < 0 ? -1 : 0;
    if (a >= 0)
        H5Aclose(a);
    H5Sclose(sp);
    return rc;
}

// Reads exactly n elements; anything else (missing, other size) fails.
static int attr_read(hid_t loc, const char *name, hid_t type, hsize_t n, void *data)
{
    if (H5Aexists(loc, name) <= 0)
        return -1;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0)
        return -1;
    hid_t sp = H5Aget_space(a);
    hssize_t cnt = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
    int rc = cnt == (hssize_t)n && H5Aread(a, type, data) >= 0 ? 0 : -1;
    if (sp >= 0)
        H5Sclose(sp);
    H5Aclose(a);
    return rc;
}

typedef struct quiet {
    H5E_auto2_t func;
    void *data;
} quiet;

static void quiet_begin(quiet *q)
{
    H5Eget_auto2(H5E_DEFAULT, &q->func, &q->data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static void quiet_end(const quiet *q)
{
    H5Eset_auto2(H5E_DEFAULT, q->func, q->data);
}

static char *entry_path(const char *dir, const uint8_t key[32])
{
    char hex[65];
    pp_ref_key_hex(key, hex);
    size_t n = strlen(dir) + 64 + 5;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s.h5", dir, hex);
    return p;
}

// ---------------------------------------------------------------------------------------------
// Store

static int write_entry(hid_t f, const uint8_t key[32], int n, const pp_tensor *t,
                       const pp_reference_info *info)
{
    uint8_t sum[32];
    checksum(key, n, t, info, sum);
    int64_t nn = n, ver = CACHE_VERSION;
    if (attr_write(f, "version", H5T_NATIVE_INT64, 1, &ver) || attr_write(f, "key", H5T_NATIVE_UINT8, 32, key) ||
        attr_write(f, "n", H5T_NATIVE_INT64, 1, &nn) || attr_write(f, "checksum", H5T_NATIVE_UINT8, 32, sum))
        return -1;
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "t%d", i);
        hsize_t cnt = (hsize_t)t[i].numel;
        hid_t sp = H5Screate_simple(1, &cnt, NULL);
        hid_t ds = sp < 0 ? -1 : H5Dcreate2(f, name, H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        int rc = ds < 0 || (cnt > 0 && H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t[i].data) < 0);
        int64_t ndim = t[i].ndim, shape[PP_MAX_DIMS] = {0};
        for (int d = 0; d < t[i].ndim; d++)
            shape[d] = t[i].shape[d];
        char fmt[PP_NAME_MAX] = {0}, tn[PP_NAME_MAX] = {0}, me[PP_NAME_MAX] = {0};
        snprintf(fmt, sizeof fmt, "%s", pp_format_get(t[i].format).name);
        snprintf(tn, sizeof tn, "%s", info[i].tensor);
        snprintf(me, sizeof me, "%s", info[i].method);
        rc = rc || attr_write(ds, "ndim", H5T_NATIVE_INT64, 1, &ndim) ||
             attr_write(ds, "shape", H5T_NATIVE_INT64, PP_MAX_DIMS, shape) ||
             attr_write(ds, "format", H5T_NATIVE_UCHAR, PP_NAME_MAX, fmt) ||
             attr_write(ds, "tensor", H5T_NATIVE_UCHAR, PP_NAME_MAX, tn) ||
             attr_write(ds, "method", H5T_NATIVE_UCHAR, PP_NAME_MAX, me) ||
             attr_write(ds, "error_bound", H5T_NATIVE_DOUBLE, 1, &info[i].error_bound);
        if (ds >= 0)
            H5Dclose(ds);
        if (sp >= 0)
            H5Sclose(sp);
        if (rc)
            return -1;
    }
    return 0;
}

int pp_ref_cache_store(const char *dir, const uint8_t key[32], int n, const pp_tensor *t,
                       const pp_reference_info *info, pp_error *err)
{
    if (n < 1 || n > CACHE_MAX_N)
        return pp_fail(err, PP_ERR_INPUT, "reference cache: %d tensors (1 to %d)", n, CACHE_MAX_N);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return pp_fail(err, PP_ERR_RUNTIME, "%s: cannot create the cache directory: %s", dir,
                       strerror(errno));
    char *path = entry_path(dir, key), *tmp = NULL;
    if (!path)
        return pp_fail(err, PP_ERR_RUNTIME, "reference cache: out of memory");
    int rc = pp_atomic_reserve(path, &tmp, err);
    if (rc) {
        free(path);
        return rc;
    }
    quiet q;
    quiet_begin(&q);
    hid_t f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    int bad = f < 0 || write_entry(f, key, n, t, info) != 0;
    if (f >= 0 && H5Fclose(f) < 0)
        bad = 1;
    quiet_end(&q);
    if (bad) {
        pp_atomic_discard(&tmp);
        rc = pp_fail(err, PP_ERR_RUNTIME, "%s: cannot write the cache entry", path);
    } else {
        rc = pp_atomic_finish(path, &tmp, err);
    }
    free(path);
    return rc;
}

// ---------------------------------------------------------------------------------------------
// Lookup

static int miss(pp_error *err, const char *path, const char *why)
{
    if (err) {
        pp_fail(err, PP_ERR_INPUT, "%s: cache miss: %s", path, why);
        err->code = PP_OK;  // a miss is not a failure
    }
    return 0;
}

static const char *read_entry(hid_t f, const uint8_t key[32], int n, pp_tensor *out,
                              pp_reference_info *info)
{
    uint8_t k2[32], sum[32], sum2[32];
    int64_t nn, ver;
    if (attr_read(f, "version", H5T_NATIVE_INT64, 1, &ver) || ver != CACHE_VERSION)
        return "not a version-1 entry";
    if (attr_read(f, "key", H5T_NATIVE_UINT8, 32, k2) || memcmp(k2, key, 32) != 0)
        return "the stored key differs";
    if (attr_read(f, "n", H5T_NATIVE_INT64, 1, &nn) || nn != n)
        return "the stored tensor count differs";
    if (attr_read(f, "checksum", H5T_NATIVE_UINT8, 32, sum))
        return "no checksum";
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "t%d", i);
        if (H5Lexists(f, name, H5P_DEFAULT) <= 0)
            return "a tensor is missing";
        hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
        if (ds < 0)
            return "a tensor is unreadable";
        int64_t ndim, shape[PP_MAX_DIMS];
        char fmt[PP_NAME_MAX], tn[PP_NAME_MAX], me[PP_NAME_MAX];
        const char *why = NULL;
        if (attr_read(ds, "ndim", H5T_NATIVE_INT64, 1, &ndim) || ndim < 0 || ndim > PP_MAX_DIMS ||
            attr_read(ds, "shape", H5T_NATIVE_INT64, PP_MAX_DIMS, shape) ||
            attr_read(ds, "format", H5T_NATIVE_UCHAR, PP_NAME_MAX, fmt) ||
            attr_read(ds, "tensor", H5T_NATIVE_UCHAR, PP_NAME_MAX, tn) ||
            attr_read(ds, "method", H5T_NATIVE_UCHAR, PP_NAME_MAX, me) ||
            attr_read(ds, "error_bound", H5T_NATIVE_DOUBLE, 1, &info[i].error_bound))
            why = "a tensor's attributes are bad";
        pp_format_id fid = PP_FMT_FP64;
        fmt[PP_NAME_MAX - 1] = tn[PP_NAME_MAX - 1] = me[PP_NAME_MAX - 1] = 0;
        if (!why && pp_format_from_name(fmt, &fid) != 0)
            why = "a tensor's format is unknown";
        if (!why && pp_tensor_alloc(&out[i], (int)ndim, shape, fid, NULL) != PP_OK)
            why = "a tensor's shape is bad";
        hid_t sp = why ? -1 : H5Dget_space(ds);
        if (!why && (sp < 0 || H5Sget_simple_extent_npoints(sp) != (hssize_t)out[i].numel))
            why = "a tensor's size does not match its shape";
        if (!why && out[i].numel > 0 &&
            H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out[i].data) < 0)
            why = "a tensor's data is unreadable (truncated?)";
        if (sp >= 0)
            H5Sclose(sp);
        H5Dclose(ds);
        if (why)
            return why;
        snprintf(info[i].tensor, sizeof info[i].tensor, "%s", tn);
        snprintf(info[i].method, sizeof info[i].method, "%s", me);
    }
    checksum(key, n, out, info, sum2);
    return memcmp(sum, sum2, 32) ? "the checksum does not match the payload" : NULL;
}

int pp_ref_cache_lookup(const char *dir, const uint8_t key[32], int n, pp_tensor *out,
                        pp_reference_info *info, pp_error *err)
{
    for (int i = 0; i < n; i++)
        memset(&out[i], 0, sizeof out[i]);
    char *path = entry_path(dir, key);
    if (!path)
        return miss(err, dir, "out of memory");
    if (n < 1 || n > CACHE_MAX_N) {
        int r = miss(err, path, "bad tensor count");
        free(path);
        return r;
    }
    struct stat st;
    if (stat(path, &st) != 0) {
        int r = miss(err, path, "no entry");
        free(path);
        return r;
    }
    quiet q;
    quiet_begin(&q);
    const char *why = NULL;
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        why = "not a readable HDF5 file (truncated or corrupt)";
    else
        why = read_entry(f, key, n, out, info);
    if (f >= 0)
        H5Fclose(f);
    quiet_end(&q);
    if (why) {
        for (int i = 0; i < n; i++)
            pp_tensor_free(&out[i]);
        int r = miss(err, path, why);
        free(path);
        return r;
    }
    free(path);
    if (err)
        err->code = PP_OK;
    return 1;
}
