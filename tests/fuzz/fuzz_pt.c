// fuzz_pt.c — libFuzzer target for the torch.save reader (ZIP directory, restricted pickle
// interpreter, storage gathering): any bytes must give PP_OK with a consistent tensor or
// PP_ERR_INPUT with a one-line message, never a crash, leak or out-of-bounds read. The same bytes
// also go to the pickle interpreter alone: inside an archive, a mutated data.pkl mostly fails
// its CRC-32, so the interpreter is fuzzed directly too (the corpus holds bare data.pkl files).
// Build: make fuzz; run: tools/fuzz.sh pt SECONDS.
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "io/pt.h"
#include "io/pt_pickle.h"

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
    // the corpus' files hold tensors named x, q, weight, nested ones layer.weight, a.b.c...: ask for
    // one by name and for the only one
    static const char *const names[] = {NULL, "x", "weight", "q", "f32", "layer.weight", "a.b.c"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        pp_tensor t;
        pp_error err = {0};
        int rc = pp_pt_parse(data, size, "fuzz.pt", names[k], &t, &err);
        if (rc == PP_OK) {
            int64_t n = 1;
            for (int d = 0; d < t.ndim; d++)
                n *= t.shape[d];
            if (t.ndim < 0 || t.ndim > PP_MAX_DIMS || n != t.numel ||
                pp_tensor_check_format(&t, t.format, "fuzz", &err) != PP_OK)
                __builtin_trap();
            pp_tensor_free(&t);
        } else if (rc != PP_ERR_INPUT || t.data || strncmp(err.msg, "fuzz.pt: ", 9) || has_control(err.msg)) {
            __builtin_trap();
        }
    }
    pp_pt_contents c;
    pp_error err = {0};
    int rc = pp_pt_unpickle(data, size, "fuzz.pt", &c, &err);
    if (rc == PP_OK) {
        for (size_t i = 0; i < c.count; i++) {
            const pp_pt_record *r = &c.recs[i];
            // a name lies within the bytes given (a top-level key) or is a joined name the contents
            // own (a nested one, "layer.weight": at most PP_PT_MAX_NAME bytes, every one of them
            // read here so that ASan checks the buffer holds them); shapes are as promised
            int in_data = r->name >= (const char *)data && r->name + r->name_len <= (const char *)data + size;
            if (r->name && !in_data) {
                if (!c.names || r->name < c.names || r->name_len > PP_PT_MAX_NAME)
                    __builtin_trap();
                volatile unsigned char sink = 0;
                for (size_t j = 0; j < r->name_len; j++)
                    sink ^= (unsigned char)r->name[j];
                (void)sink;
            }
            if ((!r->what && (r->ndim < 0 || r->ndim > PP_MAX_DIMS || r->offset < 0 || r->storage_bytes < 0)))
                __builtin_trap();
        }
        pp_pt_contents_free(&c);
    } else if (rc != PP_ERR_INPUT || c.recs || strncmp(err.msg, "fuzz.pt: ", 9) || has_control(err.msg)) {
        __builtin_trap();
    }
    return 0;
}
