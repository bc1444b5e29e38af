// fuzz_case.c — libFuzzer target for case files: TOML parsing plus the schema checks of
// src/pipeline/case.c (ops, knobs, variants, matrix, pairs, gate). Any input must give PP_OK or a
// one-line "FILE:LINE: message" error, never a crash, leak or undefined behaviour.
// build: make fuzz; run: tools/fuzz.sh case SECONDS
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/case.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pp_case c;
    pp_error err;
    memset(&err, 0, sizeof err);
    int rc = pp_case_parse((const char *)data, size, "fuzz.toml", &c, &err);
    if (rc && (strchr(err.msg, '\n') || strncmp(err.msg, "fuzz.toml", 9) != 0))
        abort();  // every error is one line naming the file
    pp_case_free(&c);
    return 0;
}
