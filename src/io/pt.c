// pt.c — one tensor out of a torch.save archive: find data.pkl, interpret it (pt_pickle.c), find
// the tensor's storage entry, check every bound, gather the elements through the strides.
#include "io/pt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/file_bytes.h"
#include "io/printable.h"
#include "io/pt_pickle.h"
#include "io/zip_stored.h"

// The archive's folder: the one P with an entry "P/data.pkl" (torch names it after the file).
static int find_prefix(const pp_zip *z, const char *file, const pp_zip_entry **pkl, size_t *plen, pp_error *err)
{
    *pkl = NULL;
    for (size_t i = 0; i < z->count; i++) {
        const pp_zip_entry *e = &z->entries[i];
        if (e->name_len < 9 || memcmp(e->name + e->name_len - 9, "/data.pkl", 9))
            continue;
        if (memchr(e->name, '/', e->name_len - 9))
            continue;  // deeper than PREFIX/data.pkl
        if (*pkl)
            return pp_fail(err, PP_ERR_INPUT, "%s: more than one data.pkl in the archive", file);
        *pkl = e;
        *plen = e->name_len - 8;  // "P/"
    }
    if (!*pkl)
        return pp_fail(err, PP_ERR_INPUT, "%s: no data.pkl in the archive: not a torch.save file", file);
    return PP_OK;
}

static const pp_zip_entry *find_in(const pp_zip *z, const char *prefix, size_t plen, const char *rest, size_t rlen)
{
    char name[512];
    if (plen + rlen >= sizeof name)
        return NULL;
    memcpy(name, prefix, plen);
    memcpy(name + plen, rest, rlen);
    name[plen + rlen] = '\0';
    return pp_zip_find(z, name);
}

static int check_crc(const pp_zip_entry *e, const char *file, pp_error *err)
{
    if (pp_zip_crc32(e->data, e->size) != e->crc32) {
        char shown[128];
        char nm[128];
        snprintf(nm, sizeof nm, "%.*s", (int)(e->name_len > 100 ? 100 : e->name_len), e->name);
        return pp_fail(err, PP_ERR_INPUT, "%s: entry %s is damaged (CRC-32 mismatch)", file,
                       pp_printable(nm, shown, sizeof shown));
    }
    return PP_OK;
}

// The names of the tensors in c, for "has no tensor X (holds: a, b)".
static void list_names(const pp_pt_contents *c, char *buf, size_t n)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < c->count && at + 1 < n; i++) {
        if (c->recs[i].what)
            continue;
        char nm[80], shown[100];
        snprintf(nm, sizeof nm, "%.*s", (int)(c->recs[i].name_len > 60 ? 60 : c->recs[i].name_len),
                 c->recs[i].name);
        at += (size_t)snprintf(buf + at, n - at, "%s%s", at ? ", " : "", pp_printable(nm, shown, sizeof shown));
    }
    if (at + 1 >= n && n > 4)
        memcpy(buf + n - 4, "...", 4);
}

// The record to load: by name, or the only tensor.
static int pick(const pp_pt_contents *c, const char *file, const char *name, const pp_pt_record **r, pp_error *err)
{
    char names[300], shown[128];
    *r = NULL;
    if (!name) {
        size_t tensors = 0;
        for (size_t i = 0; i < c->count; i++)
            if (!c->recs[i].what) {
                tensors++;
                *r = &c->recs[i];
            }
        if (tensors == 1)
            return PP_OK;
        list_names(c, names, sizeof names);
        if (!tensors)
            return pp_fail(err, PP_ERR_INPUT, "%s: holds no tensor", file);
        return pp_fail(err, PP_ERR_INPUT, "%s: holds %zu tensors; name one, as %s:NAME (%s)", file, tensors, file,
                       names);
    }
    if (!c->is_dict)
        return pp_fail(err, PP_ERR_INPUT, "%s: holds a single tensor, not a dict: write %s without ':%s'", file,
                       file, pp_printable(name, shown, sizeof shown));
    size_t len = strlen(name);
    for (size_t i = 0; i < c->count; i++) {
        const pp_pt_record *x = &c->recs[i];
        if (x->name_len != len || memcmp(x->name, name, len))
            continue;
        if (x->what)
            return pp_fail(err, PP_ERR_INPUT, "%s: '%s' is %s, not a tensor", file,
                           pp_printable(name, shown, sizeof shown), x->what);
        *r = x;  // the last of equal keys wins, as in Python's dict
    }
    if (*r)
        return PP_OK;
    list_names(c, names, sizeof names);
    return pp_fail(err, PP_ERR_INPUT, "%s: no tensor '%s' (tensors: %s)", file, pp_printable(name, shown, sizeof shown),
                   names);
}

// Reads record r's elements out of its storage entry into t.
static int gather(const pp_pt_record *r, const pp_zip_entry *e, const char *file, const char *what, pp_tensor *t,
                  pp_error *err)
{
    if (r->format < 0)
        return pp_fail(err, PP_ERR_INPUT,
                       "%s: %s has dtype torch.%s; precprobe reads float64, float32, float16, bfloat16, "
                       "float8_e4m3fn and float8_e5m2", file, what, r->dtype);
    if ((uint64_t)r->storage_bytes != e->size)
        return pp_fail(err, PP_ERR_INPUT, "%s: %s: its storage holds %zu bytes, its record says %lld", file, what,
                       e->size, (long long)r->storage_bytes);
    int size = (int)pp_format_get((pp_format_id)r->format).storage_bits / 8;
    int64_t elems = (int64_t)(e->size / (size_t)size);
    pp_error e2 = {0};
    int64_t numel;
    if (pp_shape_numel(r->ndim, r->shape, &numel, &e2))
        return pp_fail(err, PP_ERR_INPUT, "%s: %s: %s", file, what, e2.msg);
    // the last element's index: offset + sum (shape_d - 1) * stride_d, within the storage
    if (numel > 0) {
        int64_t last = r->offset;
        for (int d = 0; d < r->ndim; d++) {
            int64_t span = r->shape[d] - 1;
            if (span > 0 && r->stride[d] > 0 && (span > (elems - last) / r->stride[d]))
                return pp_fail(err, PP_ERR_INPUT, "%s: %s reaches past the end of its storage", file, what);
            last += span * r->stride[d];
        }
        if (last >= elems)
            return pp_fail(err, PP_ERR_INPUT, "%s: %s reaches past the end of its storage", file, what);
    }
    int rc = pp_tensor_alloc(t, r->ndim, r->shape, (pp_format_id)r->format, &e2);
    if (rc)
        return pp_fail(err, rc, "%s: %s", file, e2.msg);
    int64_t idx[PP_MAX_DIMS] = {0}, at = r->offset;
    for (int64_t i = 0; i < numel; i++) {
        const unsigned char *q = e->data + (size_t)at * (size_t)size;
        uint64_t bits = 0;
        for (int b = 0; b < size; b++)
            bits |= (uint64_t)q[b] << (8 * b);
        t->data[i] = pp_decode((pp_format_id)r->format, bits);
        for (int d = r->ndim - 1; d >= 0; d--) {  // the next index in row-major order
            if (++idx[d] < r->shape[d]) {
                at += r->stride[d];
                break;
            }
            at -= r->stride[d] * (r->shape[d] - 1);
            idx[d] = 0;
        }
    }
    return PP_OK;
}

int pp_pt_parse(const unsigned char *buf, size_t n, const char *file, const char *name, pp_tensor *t,
                pp_error *err)
{
    memset(t, 0, sizeof *t);
    if (n >= 2 && buf[0] == 0x80 && buf[1] <= 5)
        return pp_fail(err, PP_ERR_INPUT,
                       "%s: torch.save's legacy format (before PyTorch 1.6, not a ZIP); load and save it again "
                       "with a current torch", file);
    pp_zip z;
    int rc = pp_zip_open(buf, n, file, &z, err);
    if (rc)
        return rc;
    const pp_zip_entry *pkl, *bo;
    size_t plen = 0;
    pp_pt_contents c = {0};
    if ((rc = find_prefix(&z, file, &pkl, &plen, err)))
        goto out;
    if ((bo = find_in(&z, pkl->name, plen, "byteorder", 9)) &&
        !(bo->size == 6 && !memcmp(bo->data, "little", 6))) {
        rc = pp_fail(err, PP_ERR_INPUT, "%s: a big-endian archive (byteorder is not 'little')", file);
        goto out;
    }
    if ((rc = check_crc(pkl, file, err)) || (rc = pp_pt_unpickle(pkl->data, pkl->size, file, &c, err)))
        goto out;
    const pp_pt_record *r;
    if ((rc = pick(&c, file, name, &r, err)))
        goto out;
    char what[120], nm[80], shown[100];
    if (r->name) {
        snprintf(nm, sizeof nm, "%.*s", (int)(r->name_len > 60 ? 60 : r->name_len), r->name);
        snprintf(what, sizeof what, "tensor '%s'", pp_printable(nm, shown, sizeof shown));
    } else {
        snprintf(what, sizeof what, "the tensor");
    }
    char data[80];
    int dl = snprintf(data, sizeof data, "data/%.*s", (int)(r->key_len > 60 ? 60 : r->key_len), r->key);
    const pp_zip_entry *st = r->key_len <= 60 ? find_in(&z, pkl->name, plen, data, (size_t)dl) : NULL;
    if (!st) {
        rc = pp_fail(err, PP_ERR_INPUT, "%s: %s: its storage is not in the archive", file, what);
        goto out;
    }
    if ((rc = check_crc(st, file, err)) || (rc = gather(r, st, file, what, t, err)))
        goto out;
out:
    pp_pt_contents_free(&c);
    pp_zip_close(&z);
    if (rc)
        pp_tensor_free(t);
    return rc;
}

int pp_pt_read(const char *path, const char *name, pp_tensor *t, pp_error *err)
{
    memset(t, 0, sizeof *t);
    pp_file_buf b;
    int rc = pp_file_load(path, &b, err);
    if (rc)
        return rc;
    rc = pp_pt_parse(b.data, b.size, path, name, t, err);
    pp_file_release(&b);
    return rc;
}
