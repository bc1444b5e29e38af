// zip_stored.c — a ZIP directory reader for uncompressed ("stored") entries. The central
// directory is authoritative (as in every ZIP reader); each local header is checked against it,
// since its extra field (PyTorch pads with one to align tensor data to 64 bytes) moves the data.
#include "io/zip_stored.h"

#include <stdlib.h>
#include <string.h>

static uint32_t rd16(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t rd32(const unsigned char *p)
{
    return rd16(p) | rd16(p + 2) << 16;
}

static uint64_t rd64(const unsigned char *p)
{
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

#define EOCD_SIG 0x06054b50u
#define EOCD64_SIG 0x06064b50u
#define EOCD64_LOC_SIG 0x07064b50u
#define CDIR_SIG 0x02014b50u
#define LOCAL_SIG 0x04034b50u

static int bad(const char *file, pp_error *err, const char *what)
{
    return pp_fail(err, PP_ERR_INPUT, "%s: not a readable torch.save archive: %s", file, what);
}

// The ZIP64 fields of an extra block that replace the 0xFFFFFFFF values, in the order the
// format fixes: uncompressed size, compressed size, local header offset.
static int zip64_extra(const unsigned char *x, size_t n, uint64_t *usize, uint64_t *csize, uint64_t *off)
{
    while (n >= 4) {
        uint32_t id = rd16(x), len = rd16(x + 2);
        if (len > n - 4)
            return -1;
        if (id == 0x0001) {
            const unsigned char *p = x + 4, *end = x + 4 + len;
            uint64_t *want[3] = {usize, csize, off};
            for (int i = 0; i < 3; i++) {
                if (*want[i] != 0xffffffffu)
                    continue;
                if (end - p < 8)
                    return -1;
                *want[i] = rd64(p);
                p += 8;
            }
            return 0;
        }
        x += 4 + len;
        n -= 4 + len;
    }
    return 0;
}

int pp_zip_open(const unsigned char *buf, size_t n, const char *file, pp_zip *z, pp_error *err)
{
    memset(z, 0, sizeof *z);
    // The end record: the last signature within the final 22 + 65535 bytes (its comment).
    if (n < 22)
        return bad(file, err, "too short for a ZIP archive");
    size_t eocd = (size_t)-1;
    size_t lowest = n - 22 > 65535 ? n - 22 - 65535 : 0;
    for (size_t at = n - 22 + 1; at-- > lowest;) {
        if (rd32(buf + at) == EOCD_SIG && rd16(buf + at + 20) == n - at - 22) {
            eocd = at;
            break;
        }
    }
    if (eocd == (size_t)-1)
        return bad(file, err, "no ZIP end-of-central-directory record (is it a .pt written by torch.save?)");
    const unsigned char *e = buf + eocd;
    if (rd16(e + 4) != 0 || rd16(e + 6) != 0 || rd16(e + 8) != rd16(e + 10))
        return bad(file, err, "multi-disk ZIP archive");
    uint64_t count = rd16(e + 10), cd_size = rd32(e + 12), cd_off = rd32(e + 16);
    if (count == 0xffff || cd_size == 0xffffffffu || cd_off == 0xffffffffu) {
        // ZIP64: the locator sits just before the end record and points at the ZIP64 end record
        if (eocd < 20 || rd32(buf + eocd - 20) != EOCD64_LOC_SIG)
            return bad(file, err, "ZIP64 values without a ZIP64 locator");
        uint64_t r = rd64(buf + eocd - 20 + 8);
        if (r > eocd - 20 || eocd - 20 - r < 56 || rd32(buf + r) != EOCD64_SIG)
            return bad(file, err, "ZIP64 end record outside the file");
        if (rd32(buf + r + 16) != 0 || rd32(buf + r + 20) != 0 || rd64(buf + r + 24) != rd64(buf + r + 32))
            return bad(file, err, "multi-disk ZIP archive");
        count = rd64(buf + r + 32);
        cd_size = rd64(buf + r + 40);
        cd_off = rd64(buf + r + 48);
    }
    if (cd_off > n || cd_size > n - cd_off)
        return bad(file, err, "central directory outside the file");
    if (count > PP_ZIP_MAX_ENTRIES || count > cd_size / 46)
        return bad(file, err, "more entries than the central directory can hold");
    z->entries = calloc(count ? (size_t)count : 1, sizeof *z->entries);
    if (!z->entries)
        return pp_fail(err, PP_ERR_RUNTIME, "%s: out of memory", file);
    const unsigned char *p = buf + cd_off, *end = buf + cd_off + cd_size;
    for (uint64_t i = 0; i < count; i++) {
        if (end - p < 46 || rd32(p) != CDIR_SIG) {
            pp_zip_close(z);
            return bad(file, err, "damaged central directory");
        }
        uint32_t flags = rd16(p + 8), method = rd16(p + 10), crc = rd32(p + 16);
        uint64_t csize = rd32(p + 20), usize = rd32(p + 24), off = rd32(p + 42);
        size_t nlen = rd16(p + 28), xlen = rd16(p + 30), clen = rd16(p + 32);
        if ((size_t)(end - p) - 46 < nlen + xlen + clen) {
            pp_zip_close(z);
            return bad(file, err, "damaged central directory");
        }
        const unsigned char *name = p + 46;
        if (zip64_extra(name + nlen, xlen, &usize, &csize, &off)) {
            pp_zip_close(z);
            return bad(file, err, "damaged ZIP64 extra field");
        }
        if (flags & 0x41) {
            pp_zip_close(z);
            return bad(file, err, "encrypted entry");
        }
        if (method != 0 || csize != usize) {
            pp_zip_close(z);
            return bad(file, err, "compressed entry (torch.save writes them stored; was the file re-zipped?)");
        }
        // the local header: its name must be the directory's, its extra field moves the data
        if (off > n || n - off < 30 || rd32(buf + off) != LOCAL_SIG) {
            pp_zip_close(z);
            return bad(file, err, "entry's local header outside the file");
        }
        size_t lnlen = rd16(buf + off + 26), lxlen = rd16(buf + off + 28);
        uint64_t data = off + 30 + lnlen + lxlen;
        if (lnlen != nlen || data > n || memcmp(buf + off + 30, name, nlen) != 0) {
            pp_zip_close(z);
            return bad(file, err, "local header does not match the central directory");
        }
        if (usize > n - data) {
            pp_zip_close(z);
            return bad(file, err, "entry's data runs past the end of the file");
        }
        pp_zip_entry *en = &z->entries[z->count++];
        en->name = (const char *)name;
        en->name_len = nlen;
        en->data = buf + data;
        en->size = (size_t)usize;
        en->crc32 = crc;
        p += 46 + nlen + xlen + clen;
    }
    return PP_OK;
}

const pp_zip_entry *pp_zip_find(const pp_zip *z, const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < z->count; i++)
        if (z->entries[i].name_len == len && memcmp(z->entries[i].name, name, len) == 0)
            return &z->entries[i];
    return NULL;
}

uint32_t pp_zip_crc32(const unsigned char *data, size_t n)
{
    // the table of every byte's remainder, built per call: 256 steps, no global state
    uint32_t table[256];
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t c = b;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
        table[b] = c;
    }
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++)
        c = table[(c ^ data[i]) & 0xff] ^ (c >> 8);
    return c ^ 0xffffffffu;
}

void pp_zip_close(pp_zip *z)
{
    free(z->entries);
    memset(z, 0, sizeof *z);
}
