// ref_cache.h — a content-addressed cache of certified references: the key is the SHA-256 of the
// op, its parameters, method, precision and the exact input bits; one HDF5 file per key, verified
// (key, shapes, payload checksum) on every load, so a corrupt or truncated entry is a miss.
#ifndef PP_REF_CACHE_H
#define PP_REF_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "results.h"
#include "tensor.h"

// ---------------------------------------------------------------------------------------------
// SHA-256 (FIPS 180-4)

typedef struct pp_sha256 {
    uint32_t h[8];
    uint64_t len;  // bytes hashed so far
    uint8_t buf[64];
    size_t nbuf;
} pp_sha256;

void pp_sha256_init(pp_sha256 *s);
void pp_sha256_update(pp_sha256 *s, const void *data, size_t n);
void pp_sha256_final(pp_sha256 *s, uint8_t out[32]);

// ---------------------------------------------------------------------------------------------
// Key builder: every field is hashed as (tag, length-prefixed name, length-prefixed value), with
// integers and the bits of doubles little-endian, so no two different field lists share a byte
// stream. Call in a fixed order: the key depends on it.

typedef struct pp_ref_key {
    pp_sha256 sha;
} pp_ref_key;

void pp_ref_key_init(pp_ref_key *k, const char *op);  // also hashes a format version
void pp_ref_key_str(pp_ref_key *k, const char *name, const char *value);
void pp_ref_key_i64(pp_ref_key *k, const char *name, int64_t value);
void pp_ref_key_f64(pp_ref_key *k, const char *name, double value);  // the bits: −0 ≠ +0
// A tensor: its format's name, shape and every value's bits.
void pp_ref_key_tensor(pp_ref_key *k, const char *name, const pp_tensor *t);
// n raw binary64 values (bits), for inputs that are not pp_tensors; the caller hashes their shape.
void pp_ref_key_values(pp_ref_key *k, const char *name, const double *x, int64_t n);
void pp_ref_key_final(pp_ref_key *k, uint8_t key[32]);
void pp_ref_key_hex(const uint8_t key[32], char hex[65]);

// ---------------------------------------------------------------------------------------------
// The cache: <dir>/<hex of key>.h5

// Looks up n reference tensors under key.
// @param [out] out   n tensors (allocated on a hit; zeroed on a miss)
// @param [out] info  n tensor names, methods and error bounds (on a hit)
// @param [out] err   on a miss, why (absent, unreadable, truncated, key or count mismatch, checksum
//                    mismatch), with code PP_OK: a miss is not a failure (may be NULL)
// Returns 1 on a verified hit, 0 on a miss. An entry that fails any check is never trusted.
int pp_ref_cache_lookup(const char *dir, const uint8_t key[32], int n, pp_tensor *out,
                        pp_reference_info *info, pp_error *err);

// Stores n tensors with their info under key, atomically (a temporary file renamed into place,
// replacing a corrupt entry). Creates dir if missing (one level).
// Returns PP_OK, PP_ERR_INPUT (n < 1 or > 64) or PP_ERR_RUNTIME (cannot write).
int pp_ref_cache_store(const char *dir, const uint8_t key[32], int n, const pp_tensor *t,
                       const pp_reference_info *info, pp_error *err);

#endif
