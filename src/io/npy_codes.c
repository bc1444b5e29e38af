// npy_codes.c — uint8 .npy files, written as numpy.save writes them.
#include "io/npy_codes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tensor.h"
#include "io/atomic_file.h"

int pp_npy_write_codes(const char *path, int ndim, const int64_t *shape, int64_t numel,
                       const uint8_t *codes, pp_error *err)
{
    int64_t n = 1;
    if (ndim < 0 || ndim > PP_MAX_DIMS)
        return pp_fail(err, PP_ERR_INPUT, "%s: %d dimensions (at most %d)", path, ndim, PP_MAX_DIMS);
    for (int d = 0; d < ndim; d++)
        n *= shape[d];
    if (n != numel)
        return pp_fail(err, PP_ERR_INPUT, "%s: %lld codes for a shape of %lld elements", path,
                       (long long)numel, (long long)n);
    // the header dict as numpy writes it: "(n,)" for one dimension, "()" for none
    char dict[64 + 24 * PP_MAX_DIMS];
    int len = snprintf(dict, sizeof dict, "{'descr': '|u1', 'fortran_order': False, 'shape': (");
    for (int d = 0; d < ndim; d++)
        len += snprintf(dict + len, sizeof dict - (size_t)len, d ? ", %lld" : "%lld", (long long)shape[d]);
    len += snprintf(dict + len, sizeof dict - (size_t)len, ndim == 1 ? ",), }" : "), }");
    // magic (6) + version (2) + header length (2) + dict + spaces + '\n': a multiple of 64
    size_t hlen = (size_t)len + 1, total = 10 + hlen;
    hlen += (64 - total % 64) % 64;
    size_t size = 10 + hlen + (size_t)numel;
    unsigned char *buf = malloc(size ? size : 1);
    if (!buf)
        return pp_fail(err, PP_ERR_RUNTIME, "%s: out of memory", path);
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)(hlen & 0xFF);
    buf[9] = (unsigned char)(hlen >> 8);
    memset(buf + 10, ' ', hlen);
    memcpy(buf + 10, dict, (size_t)len);
    buf[10 + hlen - 1] = '\n';
    if (numel)
        memcpy(buf + 10 + hlen, codes, (size_t)numel);
    int rc = pp_atomic_write_bytes(path, buf, size, err);
    free(buf);
    return rc;
}
