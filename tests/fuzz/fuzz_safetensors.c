// fuzz_safetensors.c — libFuzzer target for the safetensors reader: any bytes must give PP_OK
// with tensors that fit the file, or PP_ERR_INPUT with a one-line message; never a crash, leak
// or out-of-bounds read. Lists the names, then loads the first few and the NULL-name default.
// Build: make fuzz; run: tools/fuzz.sh safetensors SECONDS.
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "io/safetensors.h"

// True when msg holds a control character: messages must be one printable line.
static int has_control(const char *msg)
{
    for (const unsigned char *p = (const unsigned char *)msg; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int rc, const pp_tensor *t, const pp_error *err, size_t size)
{
    if (rc == PP_OK) {
        int64_t n = 1;
        for (int d = 0; d < t->ndim; d++)
            n *= t->shape[d];
        pp_error e2 = {0};
        if (t->ndim < 0 || t->ndim > PP_MAX_DIMS || n != t->numel || (size_t)n > size ||
            pp_tensor_check_format(t, t->format, "fuzz", &e2) != PP_OK)
            __builtin_trap();
    } else if (rc != PP_ERR_INPUT || t->data || strncmp(err->msg, "fuzz.safetensors: ", 18) ||
               has_control(err->msg)) {
        __builtin_trap();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pp_tensor t;
    pp_error err = {0};
    int rc = pp_safetensors_parse(data, size, "fuzz.safetensors", NULL, &t, &err);
    check(rc, &t, &err, size);
    pp_tensor_free(&t);

    char **names;
    int count;
    rc = pp_safetensors_list_parse(data, size, "fuzz.safetensors", &names, &count, &err);
    if (rc == PP_OK) {
        for (int i = 0; i < count && i < 4; i++) {
            rc = pp_safetensors_parse(data, size, "fuzz.safetensors", names[i], &t, &err);
            check(rc, &t, &err, size);
            pp_tensor_free(&t);
        }
        pp_safetensors_free_names(names);
    } else if (rc != PP_ERR_INPUT || names) {
        __builtin_trap();
    }
    return 0;
}
