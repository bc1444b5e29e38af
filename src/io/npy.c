// npy.c — NumPy .npy reading and writing. The header is a Python dict literal; a small
// recursive-descent reader accepts exactly the literal subset numpy.save writes (strings, True,
// False, tuples of integers), since np.load's own literal_eval would reject anything else anyway.
#include "io/npy.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/atomic_file.h"
#include "io/file_bytes.h"
#include "io/printable.h"
#include "io/tensor_writable.h"

// ---------------------------------------------------------------------------------------------
// Header parsing

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6

typedef struct npy_header {
    char descr[48];  // the dtype string, cut at 47 characters (long ones are never floats)
    int fortran;
    int ndim;
    int64_t shape[PP_MAX_DIMS];
    int seen;  // bit 0 descr, bit 1 fortran_order, bit 2 shape
} npy_header;

typedef struct cursor {
    const unsigned char *p, *end;
    const char *name;  // file name, for messages
    pp_error *err;
} cursor;

static int malformed(cursor *c, const char *what)
{
    return pp_fail(c->err, PP_ERR_INPUT, "%s: malformed .npy header: %s", c->name, what);
}

static void skip_ws(cursor *c)
{
    // Python's whitespace between tokens
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r' ||
                             *c->p == '\f' || *c->p == '\v'))
        c->p++;
}

static int expect(cursor *c, char ch, const char *what)
{
    skip_ws(c);
    if (c->p >= c->end || *c->p != (unsigned char)ch)
        return malformed(c, what);
    c->p++;
    return PP_OK;
}

// A quoted string without escapes into out (cut to outsz-1 characters).
static int parse_string(cursor *c, char *out, size_t outsz)
{
    skip_ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
        return malformed(c, "expected a quoted string");
    unsigned char q = *c->p++;
    size_t k = 0;
    while (c->p < c->end && *c->p != q) {
        if (*c->p == '\\' || *c->p == '\n')
            return malformed(c, "escape or newline inside a string");
        if (k + 1 < outsz)
            out[k++] = (char)*c->p;
        c->p++;
    }
    if (c->p >= c->end)
        return malformed(c, "unterminated string");
    c->p++;
    out[k] = '\0';
    return PP_OK;
}

static int parse_bool(cursor *c, int *v)
{
    skip_ws(c);
    size_t left = (size_t)(c->end - c->p);
    if (left >= 4 && !memcmp(c->p, "True", 4)) {
        c->p += 4;
        *v = 1;
    } else if (left >= 5 && !memcmp(c->p, "False", 5)) {
        c->p += 5;
        *v = 0;
    } else {
        return malformed(c, "'fortran_order' is not True or False");
    }
    return PP_OK;
}

// An integer literal, saturated far beyond PP_MAX_NUMEL so that any overflow reads as absurd.
static int parse_int(cursor *c, int64_t *v)
{
    skip_ws(c);
    int neg = 0;
    if (c->p < c->end && *c->p == '-') {
        neg = 1;
        c->p++;
    }
    if (c->p >= c->end || *c->p < '0' || *c->p > '9')
        return malformed(c, "'shape' holds something other than integers");
    int64_t x = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        if (x < ((int64_t)1 << 58))
            x = x * 10 + (*c->p - '0');
        c->p++;
    }
    if (c->p < c->end && (*c->p == '.' || *c->p == '_' || ((*c->p | 0x20) >= 'a' && (*c->p | 0x20) <= 'z')))
        return malformed(c, "'shape' holds something other than integers");  // 1.5, 1e3, 3L
    *v = neg ? -x : x;
    return PP_OK;
}

// A tuple of integers: "()", "(3,)", "(2, 3)", "(2, 3,)". "(3)" is an int in Python, not a tuple.
static int parse_shape(cursor *c, npy_header *h)
{
    if (expect(c, '(', "'shape' is not a tuple"))
        return PP_ERR_INPUT;
    h->ndim = 0;
    int commas = 0;
    for (;;) {
        skip_ws(c);
        if (c->p < c->end && *c->p == ')') {
            c->p++;
            break;
        }
        if (h->ndim >= PP_MAX_DIMS)
            return pp_fail(c->err, PP_ERR_INPUT, "%s: array has more than %d dimensions", c->name,
                           PP_MAX_DIMS);
        if (parse_int(c, &h->shape[h->ndim]))
            return PP_ERR_INPUT;
        h->ndim++;
        skip_ws(c);
        if (c->p < c->end && *c->p == ',') {
            c->p++;
            commas++;
        } else if (c->p < c->end && *c->p == ')') {
            c->p++;
            break;
        } else {
            return malformed(c, "'shape' tuple is not closed");
        }
    }
    if (h->ndim == 1 && commas == 0)
        return malformed(c, "'shape' (n) is an integer, not a tuple (n,)");
    return PP_OK;
}

static int parse_header(cursor *c, npy_header *h)
{
    memset(h, 0, sizeof *h);
    if (expect(c, '{', "does not start with '{'"))
        return PP_ERR_INPUT;
    for (;;) {
        skip_ws(c);
        if (c->p < c->end && *c->p == '}') {
            c->p++;
            break;
        }
        char key[32];
        if (parse_string(c, key, sizeof key) || expect(c, ':', "expected ':' after a key"))
            return PP_ERR_INPUT;
        int bit;
        if (!strcmp(key, "descr")) {
            bit = 1;
            skip_ws(c);
            if (c->p < c->end && *c->p == '[')
                return pp_fail(c->err, PP_ERR_INPUT,
                               "%s: structured dtype (a list of fields) is not supported; "
                               "precprobe reads float16, float32 and float64 arrays", c->name);
            if (parse_string(c, h->descr, sizeof h->descr))
                return PP_ERR_INPUT;
        } else if (!strcmp(key, "fortran_order")) {
            bit = 2;
            if (parse_bool(c, &h->fortran))
                return PP_ERR_INPUT;
        } else if (!strcmp(key, "shape")) {
            bit = 4;
            if (parse_shape(c, h))
                return PP_ERR_INPUT;
        } else {
            char what[80], shown[40];
            snprintf(what, sizeof what, "unexpected key '%s'", pp_printable(key, shown, sizeof shown));
            return malformed(c, what);
        }
        if (h->seen & bit)
            return malformed(c, "a key appears twice");
        h->seen |= bit;
        skip_ws(c);
        if (c->p < c->end && *c->p == ',') {
            c->p++;
        } else if (c->p < c->end && *c->p == '}') {
            c->p++;
            break;
        } else {
            return malformed(c, "expected ',' or '}' after a value");
        }
    }
    skip_ws(c);
    if (c->p != c->end)
        return malformed(c, "text after the closing '}'");
    if (!(h->seen & 1))
        return malformed(c, "no 'descr'");
    if (!(h->seen & 2))
        return malformed(c, "no 'fortran_order'");
    if (!(h->seen & 4))
        return malformed(c, "no 'shape'");
    return PP_OK;
}

// ---------------------------------------------------------------------------------------------
// dtypes

// Maps a descr to a format and item size; on failure names the dtype the way numpy does.
static int descr_format(const char *name, const char *d, int raw, pp_format_id *f, int *size, int *big,
                        pp_error *err)
{
    char shown[64];
    pp_printable(d, shown, sizeof shown);
    size_t len = strlen(d);
    char order = len ? d[0] : 0;
    int has_order = order == '<' || order == '>' || order == '|' || order == '=';
    const char *k = d + (has_order ? 1 : 0);
    char kind = *k;
    long bytes = kind ? strtol(k + 1, NULL, 10) : 0;
    int plain_size = kind && k[1] >= '1' && k[1] <= '9' && strspn(k + 1, "0123456789") == strlen(k + 1);

    if (kind == 'f' && plain_size && (bytes == 2 || bytes == 4 || bytes == 8)) {
        if (order != '<' && order != '>')
            return pp_fail(err, PP_ERR_INPUT,
                           "%s: dtype '%s' has no byte order; a float dtype needs '<' "
                           "(little-endian) or '>' (big-endian)", name, shown);
        *f = bytes == 2 ? PP_FMT_FP16 : bytes == 4 ? PP_FMT_FP32 : PP_FMT_FP64;
        *size = (int)bytes;
        *big = order == '>';
        return PP_OK;
    }
    // ml_dtypes' bfloat16 and float8 arrays are saved as raw void items ('<V2', '<V1'): the file
    // does not say which format they hold, so the caller must (raw: a declared format, or -1).
    if (kind == 'V' && plain_size && (bytes == 1 || bytes == 2) && order != '>') {
        int fits = raw >= 0 && raw < PP_FMT_COUNT && pp_format_get((pp_format_id)raw).storage_bits == 8 * bytes;
        if (fits) {
            *f = (pp_format_id)raw;
            *size = (int)bytes;
            *big = 0;
            return PP_OK;
        }
        const char *which = bytes == 2 ? "bf16 (ml_dtypes.bfloat16) or fp16" : "e4m3 (ml_dtypes.float8_e4m3fn) or e5m2";
        if (raw >= 0)
            return pp_fail(err, PP_ERR_INPUT,
                           "%s: dtype '%s' holds raw %ld-byte values, which cannot be %s values; "
                           "declare %s", name, shown, bytes, pp_format_get((pp_format_id)raw).name, which);
        return pp_fail(err, PP_ERR_INPUT,
                       "%s: dtype '%s' holds raw %ld-byte values (how numpy saves ml_dtypes' types); "
                       "declare their format: %s (case: format = \"%s\"; compare: --actual-dtype or --expected-dtype)",
                       name, shown, bytes, which, bytes == 2 ? "bf16" : "e4m3");
    }
    if (kind == 'O')
        return pp_fail(err, PP_ERR_INPUT,
                       "%s: dtype '%s' is an object array (pickled Python objects), not numbers; "
                       "precprobe reads float16, float32 and float64 arrays", name, shown);
    const char *what = NULL;
    char buf[48];
    switch (kind) {
    case 'b': what = "bool"; break;
    case 'i': what = "int"; break;
    case 'u': what = "uint"; break;
    case 'f': what = "float"; break;
    case 'c': what = "complex"; break;
    case 'S': case 'a': what = "bytes"; break;
    case 'U': what = "str"; break;
    case 'V': what = "void"; break;
    case 'M': what = "datetime64"; break;
    case 'm': what = "timedelta64"; break;
    default: break;
    }
    if (what && plain_size && strchr("iufc", kind) && bytes < 64)
        snprintf(buf, sizeof buf, " (%s%ld)", what, bytes * 8);
    else if (what)
        snprintf(buf, sizeof buf, " (%s)", what);
    else
        buf[0] = '\0';
    return pp_fail(err, PP_ERR_INPUT,
                   "%s: dtype '%s'%s is not supported; precprobe reads float16, float32 and "
                   "float64 arrays ('<f2', '<f4', '<f8' or big-endian '>')", name, shown, buf);
}

// ---------------------------------------------------------------------------------------------
// Reading

int pp_npy_parse(const unsigned char *buf, size_t n, const char *name, pp_tensor *t, pp_error *err)
{
    return pp_npy_parse_as(buf, n, name, -1, t, err);
}

int pp_npy_parse_as(const unsigned char *buf, size_t n, const char *name, int raw_format, pp_tensor *t,
                    pp_error *err)
{
    memset(t, 0, sizeof *t);
    if (n < NPY_MAGIC_LEN + 2 || memcmp(buf, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
        return pp_fail(err, PP_ERR_INPUT, "%s: not a .npy file (bad magic: no \\x93NUMPY)", name);
    int major = buf[6], minor = buf[7];
    size_t lenbytes;
    if (major == 1 && minor == 0)
        lenbytes = 2;
    else if ((major == 2 || major == 3) && minor == 0)
        lenbytes = 4;
    else
        return pp_fail(err, PP_ERR_INPUT,
                       "%s: .npy format version %d.%d is not supported (1.0, 2.0 and 3.0 are)",
                       name, major, minor);
    size_t at = NPY_MAGIC_LEN + 2;
    if (n - at < lenbytes)
        return pp_fail(err, PP_ERR_INPUT, "%s: truncated .npy header", name);
    size_t hlen = 0;
    for (size_t i = 0; i < lenbytes; i++)
        hlen |= (size_t)buf[at + i] << (8 * i);
    at += lenbytes;
    if (hlen > n - at)
        return pp_fail(err, PP_ERR_INPUT,
                       "%s: truncated .npy header (%zu bytes promised, %zu in the file)", name,
                       hlen, n - at);
    cursor c = {buf + at, buf + at + hlen, name, err};
    npy_header h;
    if (parse_header(&c, &h))
        return PP_ERR_INPUT;
    at += hlen;

    pp_format_id f = PP_FMT_FP64;
    int size = 8, big = 0;
    if (descr_format(name, h.descr, raw_format, &f, &size, &big, err))
        return PP_ERR_INPUT;
    if (h.fortran)
        return pp_fail(err, PP_ERR_INPUT,
                       "%s: array is in Fortran order (fortran_order: True); precprobe reads C "
                       "order: save np.ascontiguousarray(a)", name);
    pp_error e2 = {0};
    int64_t numel;
    if (pp_shape_numel(h.ndim, h.shape, &numel, &e2))
        return pp_fail(err, PP_ERR_INPUT, "%s: %s", name, e2.msg);
    uint64_t need = (uint64_t)numel * (uint64_t)size;  // <= 2^40 * 8: no overflow
    uint64_t have = n - at;
    if (have < need)
        return pp_fail(err, PP_ERR_INPUT,
                       "%s: truncated data: shape and dtype need %llu bytes, the file holds %llu",
                       name, (unsigned long long)need, (unsigned long long)have);
    if (have > need)
        return pp_fail(err, PP_ERR_INPUT,
                       "%s: %llu bytes after the array data (a second array in the file, or a "
                       "damaged file); precprobe reads one array per .npy", name,
                       (unsigned long long)(have - need));
    int rc = pp_tensor_alloc(t, h.ndim, h.shape, f, &e2);
    if (rc)
        return pp_fail(err, rc, "%s: %s", name, e2.msg);
    const unsigned char *q = buf + at;
    for (int64_t i = 0; i < numel; i++, q += size) {
        uint64_t bits = 0;
        for (int b = 0; b < size; b++)
            bits |= (uint64_t)q[big ? size - 1 - b : b] << (8 * b);
        if (f == PP_FMT_BF16 || f == PP_FMT_E4M3 || f == PP_FMT_E5M2 || (size == 2 && f == PP_FMT_FP16)) {
            t->data[i] = pp_decode(f, bits);  // raw items of a declared format, and '<f2'
        } else if (size == 8) {
            memcpy(&t->data[i], &bits, 8);
        } else if (size == 4) {
            uint32_t b32 = (uint32_t)bits;
            float x;
            memcpy(&x, &b32, 4);
            t->data[i] = x;
        }
    }
    return PP_OK;
}

int pp_npy_read(const char *path, pp_tensor *t, pp_error *err)
{
    return pp_npy_read_as(path, -1, t, err);
}

int pp_npy_read_as(const char *path, int raw_format, pp_tensor *t, pp_error *err)
{
    memset(t, 0, sizeof *t);
    pp_file_buf b;
    int rc = pp_file_load(path, &b, err);
    if (rc)
        return rc;
    rc = pp_npy_parse_as(b.data, b.size, path, raw_format, t, err);
    pp_file_release(&b);
    return rc;
}

// ---------------------------------------------------------------------------------------------
// Writing

// What pp_npy_write hands to pp_atomic_write_stream.
typedef struct npy_out {
    const pp_tensor *t;
    const char *hdr;  // prefix and header, hlen bytes
    size_t hlen;
    int size;         // 2, 4 or 8
} npy_out;

static int npy_emit(FILE *fp, void *ctx)
{
    const npy_out *o = ctx;
    if (fwrite(o->hdr, 1, o->hlen, fp) != o->hlen)
        return -1;
    unsigned char chunk[8192];
    size_t used = 0;
    for (int64_t i = 0; i < o->t->numel; i++) {
        uint64_t bits;
        double v = o->t->data[i];
        if (o->size == 8) {
            memcpy(&bits, &v, 8);
        } else if (o->size == 4) {
            float x = (float)v;  // exact: the value is a float32
            uint32_t b32;
            memcpy(&b32, &x, 4);
            bits = b32;
        } else {
            bits = pp_encode(PP_FMT_FP16, v);
        }
        for (int b = 0; b < o->size; b++)
            chunk[used++] = (unsigned char)(bits >> (8 * b));
        if (used == sizeof chunk) {
            if (fwrite(chunk, 1, used, fp) != used)
                return -1;
            used = 0;
        }
    }
    return used && fwrite(chunk, 1, used, fp) != used ? -1 : 0;
}

int pp_npy_write(const char *path, const pp_tensor *t, pp_error *err)
{
    int rc = pp_tensor_check_writable(path, t, err);
    if (rc)
        return rc;
    int size = t->format == PP_FMT_FP64 ? 8 : t->format == PP_FMT_FP16 ? 2 : 4;
    const char *descr = size == 8 ? "<f8" : size == 2 ? "<f2" : "<f4";

    // The header numpy.save writes (numpy 1.24): the dict repr with sorted keys, then spaces
    // that let the first axis grow to 21 digits in place, then padding so that the data starts
    // at a multiple of 64, then '\n'. Version 1.0: the header always fits its 2-byte length.
    char shape[PP_MAX_DIMS * 24 + 8];
    pp_shape_str(t->ndim, t->shape, shape, sizeof shape);
    char hdr[512];
    const int pre = NPY_MAGIC_LEN + 2 + 2;
    int len = pre + snprintf(hdr + pre, sizeof hdr - (size_t)pre,
                             "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape);
    if (t->ndim > 0) {
        char first[24];
        int digits = snprintf(first, sizeof first, "%lld", (long long)t->shape[0]);
        for (int i = digits; i < 21; i++)
            hdr[len++] = ' ';
    }
    int pad = 64 - (len + 1) % 64;
    for (int i = 0; i < pad; i++)
        hdr[len++] = ' ';
    hdr[len++] = '\n';
    int hlen = len - pre;
    memcpy(hdr, NPY_MAGIC "\x01\x00", NPY_MAGIC_LEN + 2);
    hdr[NPY_MAGIC_LEN + 2] = (char)(hlen & 0xff);
    hdr[NPY_MAGIC_LEN + 3] = (char)(hlen >> 8);
    npy_out o = {t, hdr, (size_t)len, size};
    return pp_atomic_write_stream(path, npy_emit, &o, err);
}
