// safetensors.c — reading (header validated in full before any byte of data is trusted) and
// writing safetensors files. JSON is parsed by Debian's libcjson; numbers in the header are
// binary64 there, so every size is checked to be an integer below 2^53 before it is used.
#include "io/safetensors.h"

#include <cJSON.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/utf8.h"
#include "io/atomic_file.h"
#include "io/file_bytes.h"
#include "io/printable.h"
#include "io/tensor_writable.h"

// ---------------------------------------------------------------------------------------------
// dtypes

// The reference implementation's dtypes, in its enum order, which is increasing alignment: the
// writer sorts by it (descending). fmt < 0: precprobe does not load it.
typedef struct st_dtype {
    const char *name;
    int bytes;
    int fmt;
} st_dtype;

static const st_dtype st_dtypes[] = {
    {"BOOL", 1, -1}, {"U8", 1, -1},  {"I8", 1, -1},  {"F8_E5M2", 1, PP_FMT_E5M2},
    {"F8_E4M3", 1, PP_FMT_E4M3},     {"I16", 2, -1}, {"U16", 2, -1},
    {"F16", 2, PP_FMT_FP16},         {"BF16", 2, PP_FMT_BF16},        {"I32", 4, -1},
    {"U32", 4, -1},                  {"F32", 4, PP_FMT_FP32},         {"F64", 8, PP_FMT_FP64},
    {"I64", 8, -1},                  {"U64", 8, -1},
};
#define ST_NDTYPES ((int)(sizeof st_dtypes / sizeof st_dtypes[0]))
#define ST_READABLE "F64, F32, F16, BF16, F8_E4M3 and F8_E5M2"

// Index into st_dtypes, or -1 for a dtype the reference implementation may know but we do not.
static int dtype_rank(const char *name)
{
    for (int i = 0; i < ST_NDTYPES; i++)
        if (!strcmp(name, st_dtypes[i].name))
            return i;
    return -1;
}

static int format_rank(pp_format_id f)
{
    switch (f) {
    case PP_FMT_FP64: return dtype_rank("F64");
    case PP_FMT_FP32:
    case PP_FMT_TF32: return dtype_rank("F32");
    case PP_FMT_FP16: return dtype_rank("F16");
    case PP_FMT_BF16: return dtype_rank("BF16");
    case PP_FMT_E4M3: return dtype_rank("F8_E4M3");
    case PP_FMT_E5M2: return dtype_rank("F8_E5M2");
    default: return -1;
    }
}

// ---------------------------------------------------------------------------------------------
// The header

typedef struct st_entry {
    const char *name;   // points into the cJSON tree
    const char *dtype;  // idem
    int rank;           // index into st_dtypes, or -1
    int ndim;
    int64_t shape[PP_MAX_DIMS];
    int64_t numel;
    uint64_t begin, end;  // relative to the byte buffer
} st_entry;

typedef struct st_header {
    cJSON *root;
    const cJSON *metadata;  // the "__metadata__" object or NULL
    st_entry *e;            // sorted by offset
    int count;
    const unsigned char *data;  // the byte buffer
    size_t data_len;
} st_header;

static void header_free(st_header *h)
{
    cJSON_Delete(h->root);
    free(h->e);
    memset(h, 0, sizeof *h);
}

// A JSON number that is an integer in [0, 2^53] (every larger size exceeds any file anyway, and
// 2^53 is where binary64 stops holding every integer). Returns 0 and sets *v, or -1.
static int json_uint(const cJSON *x, uint64_t *v)
{
    if (!cJSON_IsNumber(x))
        return -1;
    double d = x->valuedouble;
    if (!(d >= 0 && d <= 9007199254740992.0) || d != (double)(uint64_t)d)
        return -1;
    *v = (uint64_t)d;
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(((const st_entry *)a)->name, ((const st_entry *)b)->name);
}

static int cmp_offset(const void *a, const void *b)
{
    const st_entry *x = a, *y = b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return 0;
}

// One tensor's description: {"dtype": str, "shape": [uint...], "data_offsets": [uint, uint]}.
// Other keys are ignored, as the reference implementation's deserializer ignores them.
static int parse_entry(const char *file, const cJSON *item, st_entry *e, pp_error *err)
{
    char nm[64];
    pp_printable(item->string, nm, sizeof nm);
    if (!cJSON_IsObject(item))
        return pp_fail(err, PP_ERR_INPUT, "%s: header entry '%s' is not an object", file, nm);
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(item, "dtype");
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(item, "shape");
    const cJSON *of = cJSON_GetObjectItemCaseSensitive(item, "data_offsets");
    if (!cJSON_IsString(dt))
        return pp_fail(err, PP_ERR_INPUT, "%s: tensor '%s': 'dtype' is missing or not a string",
                       file, nm);
    if (!cJSON_IsArray(sh))
        return pp_fail(err, PP_ERR_INPUT, "%s: tensor '%s': 'shape' is missing or not an array",
                       file, nm);
    if (!cJSON_IsArray(of) || cJSON_GetArraySize(of) != 2)
        return pp_fail(err, PP_ERR_INPUT,
                       "%s: tensor '%s': 'data_offsets' is missing or not an array [begin, end]",
                       file, nm);
    e->name = item->string;
    e->dtype = dt->valuestring;
    e->rank = dtype_rank(e->dtype);
    e->ndim = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, sh)
    {
        if (e->ndim >= PP_MAX_DIMS)
            return pp_fail(err, PP_ERR_INPUT, "%s: tensor '%s' has more than %d dimensions", file,
                           nm, PP_MAX_DIMS);
        if (cJSON_IsNumber(x) && x->valuedouble < 0)
            return pp_fail(err, PP_ERR_INPUT, "%s: tensor '%s' has a negative extent (%g)", file,
                           nm, x->valuedouble);
        uint64_t v;
        if (json_uint(x, &v))
            return pp_fail(err, PP_ERR_INPUT,
                           "%s: tensor '%s': 'shape' holds something other than integers below 2^53",
                           file, nm);
        e->shape[e->ndim++] = (int64_t)v;
    }
    pp_error e2 = {0};
    if (pp_shape_numel(e->ndim, e->shape, &e->numel, &e2))
        return pp_fail(err, PP_ERR_INPUT, "%s: tensor '%s': %s", file, nm, e2.msg);
    if (json_uint(cJSON_GetArrayItem(of, 0), &e->begin) || json_uint(cJSON_GetArrayItem(of, 1), &e->end))
        return pp_fail(err, PP_ERR_INPUT,
                       "%s: tensor '%s': 'data_offsets' are not integers in [0, 2^53]", file, nm);
    if (e->end < e->begin)
        return pp_fail(err, PP_ERR_INPUT,
                       "%s: tensor '%s': data_offsets [%llu, %llu] end before they begin", file,
                       nm, (unsigned long long)e->begin, (unsigned long long)e->end);
    if (e->rank >= 0) {
        uint64_t want = (uint64_t)e->numel * (uint64_t)st_dtypes[e->rank].bytes;  // < 2^43
        if (e->end - e->begin != want)
            return pp_fail(err, PP_ERR_INPUT,
                           "%s: tensor '%s': data_offsets [%llu, %llu] span %llu bytes, but %lld "
                           "elements of %s need %llu", file, nm, (unsigned long long)e->begin,
                           (unsigned long long)e->end, (unsigned long long)(e->end - e->begin),
                           (long long)e->numel, st_dtypes[e->rank].name, (unsigned long long)want);
    }
    return PP_OK;
}

// Parses and validates the whole header of buf[0..n) (see pp_safetensors_parse).
static int header_parse(const unsigned char *buf, size_t n, const char *file, st_header *h,
                        pp_error *err)
{
    memset(h, 0, sizeof *h);
    if (n < 8)
        return pp_fail(err, PP_ERR_INPUT,
                       "%s: not a safetensors file: %zu bytes, shorter than the 8-byte header "
                       "length", file, n);
    uint64_t hlen = 0;
    for (int i = 0; i < 8; i++)
        hlen |= (uint64_t)buf[i] << (8 * i);
    if (hlen > PP_SAFETENSORS_MAX_HEADER)
        return pp_fail(err, PP_ERR_INPUT,
                       "%s: not a safetensors file: header length %llu exceeds the 100 MB limit",
                       file, (unsigned long long)hlen);
    if (hlen > n - 8)
        return pp_fail(err, PP_ERR_INPUT,
                       "%s: header length %llu is larger than the %zu bytes after it "
                       "(truncated, or not a safetensors file)", file, (unsigned long long)hlen,
                       n - 8);
    const unsigned char *js = buf + 8;
    if (hlen < 2 || js[0] != '{')
        return pp_fail(err, PP_ERR_INPUT,
                       "%s: not a safetensors file: the header does not start with '{'", file);
    if (memchr(js, 0, hlen) || !pp_utf8_valid(js, hlen))  // as serde_json requires
        return pp_fail(err, PP_ERR_INPUT, "%s: the header is not valid UTF-8 text", file);
    const char *end = NULL;
    h->root = cJSON_ParseWithLengthOpts((const char *)js, hlen, &end, 0);
    if (!h->root)
        return pp_fail(err, PP_ERR_INPUT, "%s: the header is not valid JSON", file);
    for (const char *p = end; p && p < (const char *)js + hlen; p++) {
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
            header_free(h);
            return pp_fail(err, PP_ERR_INPUT, "%s: text after the JSON header", file);
        }
    }
    int rc = PP_OK;
    if (!cJSON_IsObject(h->root)) {
        rc = pp_fail(err, PP_ERR_INPUT, "%s: the header is not a JSON object", file);
        goto fail;
    }
    int total = cJSON_GetArraySize(h->root);
    h->e = calloc(total ? (size_t)total : 1, sizeof *h->e);
    if (!h->e) {
        rc = pp_fail(err, PP_ERR_RUNTIME, "%s: out of memory reading the header", file);
        goto fail;
    }
    const cJSON *item;
    cJSON_ArrayForEach(item, h->root)
    {
        if (!strcmp(item->string, "__metadata__")) {
            if (h->metadata || !cJSON_IsObject(item)) {
                rc = pp_fail(err, PP_ERR_INPUT, "%s: '__metadata__' is %s", file,
                             h->metadata ? "given twice" : "not an object");
                goto fail;
            }
            const cJSON *m;
            cJSON_ArrayForEach(m, item)
            {
                if (!cJSON_IsString(m)) {
                    char key[64];
                    rc = pp_fail(err, PP_ERR_INPUT, "%s: '__metadata__' value '%s' is not a string",
                                 file, pp_printable(m->string, key, sizeof key));
                    goto fail;
                }
            }
            h->metadata = item;
            continue;
        }
        if ((rc = parse_entry(file, item, &h->e[h->count], err)))
            goto fail;
        h->count++;
    }
    qsort(h->e, (size_t)h->count, sizeof *h->e, cmp_name);
    for (int i = 1; i < h->count; i++) {
        if (!strcmp(h->e[i - 1].name, h->e[i].name)) {
            char nm[64];
            rc = pp_fail(err, PP_ERR_INPUT, "%s: tensor '%s' appears twice in the header", file,
                         pp_printable(h->e[i].name, nm, sizeof nm));
            goto fail;
        }
    }
    h->data = js + hlen;
    h->data_len = n - 8 - (size_t)hlen;
    qsort(h->e, (size_t)h->count, sizeof *h->e, cmp_offset);
    uint64_t at = 0;
    for (int i = 0; i < h->count; i++) {
        const st_entry *e = &h->e[i];
        char nm[64], nm0[64];
        pp_printable(e->name, nm, sizeof nm);
        if (e->end > h->data_len) {
            rc = pp_fail(err, PP_ERR_INPUT,
                         "%s: tensor '%s': data_offsets [%llu, %llu] reach past the %zu-byte "
                         "data buffer (truncated file?)", file, nm,
                         (unsigned long long)e->begin, (unsigned long long)e->end, h->data_len);
            goto fail;
        }
        if (e->begin < at) {
            rc = pp_fail(err, PP_ERR_INPUT,
                         "%s: tensors '%s' and '%s' overlap (data_offsets [%llu, %llu] and "
                         "[%llu, %llu])", file, pp_printable(h->e[i - 1].name, nm0, sizeof nm0), nm,
                         (unsigned long long)h->e[i - 1].begin, (unsigned long long)h->e[i - 1].end,
                         (unsigned long long)e->begin, (unsigned long long)e->end);
            goto fail;
        }
        if (e->begin > at) {
            rc = pp_fail(err, PP_ERR_INPUT,
                         "%s: bytes [%llu, %llu) of the data buffer belong to no tensor (a hole; "
                         "the safetensors format requires the buffer to be fully indexed)", file,
                         (unsigned long long)at, (unsigned long long)e->begin);
            goto fail;
        }
        at = e->end;
    }
    if (at != h->data_len) {
        rc = pp_fail(err, PP_ERR_INPUT,
                     "%s: %llu bytes after the last tensor's data (the safetensors format "
                     "requires the buffer to be fully indexed)", file,
                     (unsigned long long)(h->data_len - at));
        goto fail;
    }
    return PP_OK;
fail:
    header_free(h);
    return rc;
}

// Appends "'a', 'b', ... (N in all)" to msg: the first few names, each cut to 40 characters.
static void list_names(const st_header *h, char *msg, size_t size)
{
    size_t at = strlen(msg);
    int shown = h->count < 6 ? h->count : 6;
    for (int i = 0; i < shown && at < size; i++) {
        char nm[44];
        at += (size_t)snprintf(msg + at, size - at, "%s'%s'", i ? ", " : "",
                               pp_printable(h->e[i].name, nm, sizeof nm));
    }
    if (shown < h->count && at < size)
        snprintf(msg + at, size - at, ", ... (%d in all)", h->count);
}

// ---------------------------------------------------------------------------------------------
// Reading

static int load_entry(const st_header *h, const st_entry *e, const char *file, pp_tensor *t,
                      pp_error *err)
{
    char nm[64], dt[32];
    pp_printable(e->name, nm, sizeof nm);
    if (e->rank < 0 || st_dtypes[e->rank].fmt < 0)
        return pp_fail(err, PP_ERR_INPUT,
                       "%s: tensor '%s' has dtype %s; precprobe reads " ST_READABLE, file, nm,
                       pp_printable(e->dtype, dt, sizeof dt));
    pp_format_id f = (pp_format_id)st_dtypes[e->rank].fmt;
    int size = st_dtypes[e->rank].bytes;
    pp_error e2 = {0};
    int rc = pp_tensor_alloc(t, e->ndim, e->shape, f, &e2);
    if (rc)
        return pp_fail(err, rc, "%s: tensor '%s': %s", file, nm, e2.msg);
    const unsigned char *q = h->data + e->begin;
    for (int64_t i = 0; i < e->numel; i++, q += size) {
        uint64_t bits = 0;
        for (int b = 0; b < size; b++)
            bits |= (uint64_t)q[b] << (8 * b);  // little-endian, always
        if (f == PP_FMT_FP64) {
            memcpy(&t->data[i], &bits, 8);
        } else if (f == PP_FMT_FP32) {
            uint32_t b32 = (uint32_t)bits;
            float x;
            memcpy(&x, &b32, 4);
            t->data[i] = x;
        } else {
            t->data[i] = pp_decode(f, bits);
        }
    }
    return PP_OK;
}

int pp_safetensors_parse(const unsigned char *buf, size_t n, const char *file,
                         const char *tensor_name, pp_tensor *t, pp_error *err)
{
    memset(t, 0, sizeof *t);
    st_header h;
    int rc = header_parse(buf, n, file, &h, err);
    if (rc)
        return rc;
    const st_entry *e = NULL;
    char want[64];
    if (tensor_name)
        pp_printable(tensor_name, want, sizeof want);
    if (!tensor_name) {
        if (h.count == 1) {
            e = &h.e[0];
        } else if (h.count == 0) {
            rc = pp_fail(err, PP_ERR_INPUT, "%s: the file holds no tensors", file);
        } else {
            pp_fail(err, PP_ERR_INPUT, "%s: the file holds %d tensors; name one as %s:NAME: ",
                    file, h.count, file);
            if (err)
                list_names(&h, err->msg, sizeof err->msg);
            rc = PP_ERR_INPUT;
        }
    } else {
        for (int i = 0; i < h.count && !e; i++)
            if (!strcmp(h.e[i].name, tensor_name))
                e = &h.e[i];
        if (!e) {
            if (h.count == 0) {
                rc = pp_fail(err, PP_ERR_INPUT, "%s: no tensor '%s': the file holds no tensors",
                             file, want);
            } else {
                pp_fail(err, PP_ERR_INPUT, "%s: no tensor '%s'; the file holds ", file, want);
                if (err)
                    list_names(&h, err->msg, sizeof err->msg);
                rc = PP_ERR_INPUT;
            }
        }
    }
    if (e)
        rc = load_entry(&h, e, file, t, err);
    header_free(&h);
    return rc;
}

int pp_safetensors_read(const char *path, const char *tensor_name, pp_tensor *t, pp_error *err)
{
    memset(t, 0, sizeof *t);
    pp_file_buf b;
    int rc = pp_file_load(path, &b, err);
    if (rc)
        return rc;
    rc = pp_safetensors_parse(b.data, b.size, path, tensor_name, t, err);
    pp_file_release(&b);
    return rc;
}

void pp_safetensors_free_names(char **names)
{
    for (char **p = names; p && *p; p++)
        free(*p);
    free(names);
}

int pp_safetensors_list_parse(const unsigned char *buf, size_t n, const char *file, char ***names,
                              int *count, pp_error *err)
{
    *names = NULL;
    *count = 0;
    st_header h;
    int rc = header_parse(buf, n, file, &h, err);
    if (rc)
        return rc;
    char **v = calloc((size_t)h.count + 1, sizeof *v);
    for (int i = 0; v && i < h.count; i++) {
        if (!(v[i] = strdup(h.e[i].name))) {
            pp_safetensors_free_names(v);
            v = NULL;
        }
    }
    if (!v) {
        header_free(&h);
        return pp_fail(err, PP_ERR_RUNTIME, "%s: out of memory listing tensors", file);
    }
    *names = v;
    *count = h.count;
    header_free(&h);
    return PP_OK;
}

int pp_safetensors_list(const char *path, char ***names, int *count, pp_error *err)
{
    *names = NULL;
    *count = 0;
    pp_file_buf b;
    int rc = pp_file_load(path, &b, err);
    if (rc)
        return rc;
    rc = pp_safetensors_list_parse(b.data, b.size, path, names, count, err);
    pp_file_release(&b);
    return rc;
}

// ---------------------------------------------------------------------------------------------
// Writing

// One tensor to write: either raw little-endian bytes (kept from an existing file) or a
// pp_tensor to encode.
typedef struct st_out {
    const char *name;
    int rank;  // index into st_dtypes
    int ndim;
    const int64_t *shape;
    const unsigned char *raw;  // NULL: encode t
    const pp_tensor *t;
    uint64_t nbytes;
} st_out;

static int cmp_out(const void *a, const void *b)
{
    const st_out *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank > y->rank ? -1 : 1;  // larger alignment first
    return strcmp(x->name, y->name);
}

// A growable byte string for the header.
typedef struct sbuf {
    char *p;
    size_t len, cap;
    int oom;
} sbuf;

static void sb_add(sbuf *s, const char *src, size_t n)
{
    if (s->oom)
        return;
    if (s->len + n + 1 > s->cap) {
        size_t cap = (s->cap ? s->cap * 2 : 256) + n;
        char *p = realloc(s->p, cap);
        if (!p) {
            s->oom = 1;
            return;
        }
        s->p = p;
        s->cap = cap;
    }
    memcpy(s->p + s->len, src, n);
    s->len += n;
}

static void sb_str(sbuf *s, const char *src)
{
    sb_add(s, src, strlen(src));
}

// A JSON string as serde_json writes it: \" \\ \b \f \n \r \t, other controls as \u00xx,
// everything else (UTF-8 included) as is.
static void sb_json(sbuf *s, const char *str)
{
    sb_add(s, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)str; *p; p++) {
        char esc[8];
        switch (*p) {
        case '"': sb_str(s, "\\\""); break;
        case '\\': sb_str(s, "\\\\"); break;
        case '\b': sb_str(s, "\\b"); break;
        case '\f': sb_str(s, "\\f"); break;
        case '\n': sb_str(s, "\\n"); break;
        case '\r': sb_str(s, "\\r"); break;
        case '\t': sb_str(s, "\\t"); break;
        default:
            if (*p < 0x20) {
                snprintf(esc, sizeof esc, "\\u%04x", *p);
                sb_str(s, esc);
            } else {
                sb_add(s, (const char *)p, 1);
            }
        }
    }
    sb_add(s, "\"", 1);
}

static int write_tensor_data(FILE *fp, const st_out *o)
{
    if (o->raw)
        return o->nbytes == 0 || fwrite(o->raw, 1, (size_t)o->nbytes, fp) == o->nbytes;
    const pp_tensor *t = o->t;
    int size = st_dtypes[o->rank].bytes;
    pp_format_id f = (pp_format_id)st_dtypes[o->rank].fmt;
    unsigned char chunk[8192];
    size_t used = 0;
    for (int64_t i = 0; i < t->numel; i++) {
        uint64_t bits;
        double v = t->data[i];
        if (f == PP_FMT_FP64) {
            memcpy(&bits, &v, 8);
        } else if (f == PP_FMT_FP32) {
            float x = (float)v;  // exact: fp32 and tf32 values are float32 values
            uint32_t b32;
            memcpy(&b32, &x, 4);
            bits = b32;
        } else {
            bits = pp_encode(f, v);
        }
        for (int b = 0; b < size; b++)
            chunk[used++] = (unsigned char)(bits >> (8 * b));
        if (used == sizeof chunk) {
            if (fwrite(chunk, 1, used, fp) != used)
                return 0;
            used = 0;
        }
    }
    return used == 0 || fwrite(chunk, 1, used, fp) == used;
}

// What write_outs hands to pp_atomic_write_stream: the header, then each tensor's bytes in order.
typedef struct st_emit_ctx {
    const sbuf *header;
    const st_out *outs;
    int count;
} st_emit_ctx;

static int st_emit(FILE *fp, void *vctx)
{
    const st_emit_ctx *c = vctx;
    unsigned char len8[8];
    for (int i = 0; i < 8; i++)
        len8[i] = (unsigned char)((uint64_t)c->header->len >> (8 * i));
    if (fwrite(len8, 1, 8, fp) != 8 || fwrite(c->header->p, 1, c->header->len, fp) != c->header->len)
        return -1;
    for (int i = 0; i < c->count; i++)
        if (!write_tensor_data(fp, &c->outs[i]))
            return -1;
    return 0;
}

// Writes outs (sorted here; names distinct) with an optional metadata object, atomically.
static int write_outs(const char *path, st_out *outs, int count, const cJSON *metadata,
                      pp_error *err)
{
    qsort(outs, (size_t)count, sizeof *outs, cmp_out);
    sbuf s = {0};
    sb_add(&s, "{", 1);
    int first = 1;
    if (metadata) {
        sb_json(&s, "__metadata__");
        sb_add(&s, ":{", 2);
        const cJSON *m;
        int mfirst = 1;
        cJSON_ArrayForEach(m, metadata)
        {
            if (!mfirst)
                sb_add(&s, ",", 1);
            mfirst = 0;
            sb_json(&s, m->string);
            sb_add(&s, ":", 1);
            sb_json(&s, m->valuestring);
        }
        sb_add(&s, "}", 1);
        first = 0;
    }
    uint64_t at = 0;
    for (int i = 0; i < count; i++) {
        char num[48];
        if (!first)
            sb_add(&s, ",", 1);
        first = 0;
        sb_json(&s, outs[i].name);
        sb_str(&s, ":{\"dtype\":\"");
        sb_str(&s, st_dtypes[outs[i].rank].name);
        sb_str(&s, "\",\"shape\":[");
        for (int d = 0; d < outs[i].ndim; d++) {
            snprintf(num, sizeof num, d ? ",%lld" : "%lld", (long long)outs[i].shape[d]);
            sb_str(&s, num);
        }
        snprintf(num, sizeof num, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)at,
                 (unsigned long long)(at + outs[i].nbytes));
        sb_str(&s, num);
        at += outs[i].nbytes;
    }
    sb_add(&s, "}", 1);
    while (!s.oom && s.len % 8)
        sb_add(&s, " ", 1);  // the reference pads so that the data starts 8-byte aligned
    if (s.oom) {
        free(s.p);
        return pp_fail(err, PP_ERR_RUNTIME, "%s: out of memory building the header", path);
    }
    st_emit_ctx ctx = {&s, outs, count};
    int rc = pp_atomic_write_stream(path, st_emit, &ctx, err);
    free(s.p);
    return rc;
}

static int check_name(const char *path, const char *name, pp_error *err)
{
    if (!name || !*name)
        return pp_fail(err, PP_ERR_INPUT, "%s: a tensor name is empty", path);
    if (!strcmp(name, "__metadata__"))
        return pp_fail(err, PP_ERR_INPUT, "%s: '__metadata__' cannot name a tensor", path);
    if (!pp_utf8_valid((const unsigned char *)name, strlen(name)))
        return pp_fail(err, PP_ERR_INPUT, "%s: tensor name is not valid UTF-8", path);
    return PP_OK;
}

// Fills o for tensor t named name, after checking both.
static int out_from_tensor(const char *path, const char *name, const pp_tensor *t, st_out *o,
                           pp_error *err)
{
    int rc = check_name(path, name, err);
    if (!rc)
        rc = pp_tensor_check_writable(path, t, err);
    if (rc)
        return rc;
    o->name = name;
    o->rank = format_rank(t->format);
    o->ndim = t->ndim;
    o->shape = t->shape;
    o->raw = NULL;
    o->t = t;
    o->nbytes = (uint64_t)t->numel * (uint64_t)st_dtypes[o->rank].bytes;
    return PP_OK;
}

int pp_safetensors_write(const char *path, int count, const char *const *names,
                         const pp_tensor *const *ts, pp_error *err)
{
    if (count < 0)
        return pp_fail(err, PP_ERR_INPUT, "%s: negative tensor count", path);
    st_out *outs = calloc(count ? (size_t)count : 1, sizeof *outs);
    if (!outs)
        return pp_fail(err, PP_ERR_RUNTIME, "%s: out of memory", path);
    int rc = PP_OK;
    for (int i = 0; i < count && !rc; i++)
        rc = out_from_tensor(path, names[i], ts[i], &outs[i], err);
    for (int i = 0; i < count && !rc; i++)
        for (int j = i + 1; j < count && !rc; j++)
            if (!strcmp(names[i], names[j]))
            {
                char nm[64];
                rc = pp_fail(err, PP_ERR_INPUT, "%s: tensor name '%s' given twice", path,
                             pp_printable(names[i], nm, sizeof nm));
            }
    if (!rc)
        rc = write_outs(path, outs, count, NULL, err);
    free(outs);
    return rc;
}

int pp_safetensors_update(const char *path, const char *name, const pp_tensor *t, pp_error *err)
{
    st_out fresh;
    int rc = out_from_tensor(path, name, t, &fresh, err);
    if (rc)
        return rc;
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT)
        return write_outs(path, &fresh, 1, NULL, err);

    pp_file_buf b;
    if ((rc = pp_file_load(path, &b, err)))
        return rc;
    st_header h;
    if ((rc = header_parse(b.data, b.size, path, &h, err))) {
        if (err) {
            size_t at = strlen(err->msg);
            snprintf(err->msg + at, sizeof err->msg - at, " (not replacing it)");
        }
        pp_file_release(&b);
        return rc;
    }
    st_out *outs = calloc((size_t)h.count + 1, sizeof *outs);
    int n = 0;
    if (!outs)
        rc = pp_fail(err, PP_ERR_RUNTIME, "%s: out of memory", path);
    for (int i = 0; !rc && i < h.count; i++) {
        const st_entry *e = &h.e[i];
        if (!strcmp(e->name, name))
            continue;  // replaced
        if (e->rank < 0) {
            char nm[64], dt[32], nm2[64];
            rc = pp_fail(err, PP_ERR_INPUT,
                         "%s: holds tensor '%s' of dtype %s, which precprobe cannot rewrite; "
                         "not adding '%s' to it", path, pp_printable(e->name, nm, sizeof nm),
                         pp_printable(e->dtype, dt, sizeof dt), pp_printable(name, nm2, sizeof nm2));
            break;
        }
        outs[n++] = (st_out){e->name, e->rank, e->ndim, e->shape, h.data + e->begin, NULL,
                             e->end - e->begin};
    }
    if (!rc) {
        outs[n++] = fresh;
        rc = write_outs(path, outs, n, h.metadata, err);
    }
    free(outs);
    header_free(&h);
    pp_file_release(&b);
    return rc;
}
