// zip_stored.h — the entries of a ZIP archive held in memory, for torch.save's files (a ZIP of
// "stored", uncompressed entries: PyTorch's writer never compresses). Read through the central
// directory, every offset and size bounds-checked; compressed, encrypted and multi-disk archives
// are refused, never guessed at.
#ifndef PP_ZIP_STORED_H
#define PP_ZIP_STORED_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

// Most entries an archive may have: a checkpoint has a few per tensor; more is hostile.
#define PP_ZIP_MAX_ENTRIES 1000000

typedef struct pp_zip_entry {
    const char *name;            // points into the archive's bytes; name_len bytes, not terminated
    size_t name_len;
    const unsigned char *data;   // the entry's bytes, within the archive; size bytes
    size_t size;
    uint32_t crc32;              // as the central directory records it
} pp_zip_entry;

typedef struct pp_zip {
    pp_zip_entry *entries;       // owned
    size_t count;
} pp_zip;

// Reads the directory of the archive in buf[0..n) (ZIP or ZIP64 end records).
// @param [in] file  the archive's name, the first word of every message
// Rejected (PP_ERR_INPUT, one line): no end-of-central-directory record, a directory or entry
// outside the file, multi-disk archives, an entry compressed (method other than 0, "stored"),
// encrypted or whose sizes disagree, a local header that does not match its directory entry,
// more than PP_ZIP_MAX_ENTRIES entries. PP_ERR_RUNTIME: out of memory.
int pp_zip_open(const unsigned char *buf, size_t n, const char *file, pp_zip *z, pp_error *err);

// The entry named name (exact bytes), or NULL.
const pp_zip_entry *pp_zip_find(const pp_zip *z, const char *name);

// The CRC-32 (ZIP's, polynomial 0xEDB88320) of data[0..n).
uint32_t pp_zip_crc32(const unsigned char *data, size_t n);

void pp_zip_close(pp_zip *z);

#endif
