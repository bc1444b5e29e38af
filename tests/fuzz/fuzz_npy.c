// fuzz_npy.c — libFuzzer target for the .npy reader: any bytes must give PP_OK with a consistent
// tensor or PP_ERR_INPUT with a one-line message, never a crash, leak or out-of-bounds read.
// Build: make fuzz; run: tools/fuzz.sh npy SECONDS.
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "io/npy.h"

// True when msg holds a control character: messages must be one printable line.
static int has_control(const char *msg)
{
    for (const unsigned char *p = (const unsigned char *)msg; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pp_tensor t;
    pp_error err = {0};
    // the declared format of raw items ('<V2', '<V1'): drawn from the length, so that every
    // format and none (-1) meet every input
    int raw = (int)(size % (PP_FMT_COUNT + 1)) - 1;
    int rc = pp_npy_parse_as(data, size, "fuzz.npy", raw, &t, &err);
    if (rc == PP_OK) {
        int64_t n = 1;
        for (int d = 0; d < t.ndim; d++)
            n *= t.shape[d];
        int itemsize = (int)pp_format_get(t.format).storage_bits / 8;
        // The shape, the data read and the values must agree with the bytes given.
        if (t.ndim < 0 || t.ndim > PP_MAX_DIMS || n != t.numel || (size_t)n * (size_t)itemsize > size ||
            pp_tensor_check_format(&t, t.format, "fuzz", &err) != PP_OK)
            __builtin_trap();
        pp_tensor_free(&t);
    } else if (rc != PP_ERR_INPUT || t.data || strncmp(err.msg, "fuzz.npy: ", 10) || has_control(err.msg)) {
        __builtin_trap();
    }
    return 0;
}
