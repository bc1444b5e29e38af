// fuzz_case.c — libFuzzer target for case files: TOML parsing plus the schema checks of
// src/pipeline/case.c (ops, knobs, variants, matrix, pairs, gate), and the [sweep] expansion
// (src/pipeline/sweep.c). Any input must give PP_OK or a one-line "FILE:LINE: message" error,
// never a crash, leak or undefined behaviour.
// build: make fuzz; run: tools/fuzz.sh case SECONDS
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/case.h"
#include "pipeline/sweep.h"

// The same input as a sweep (src/pipeline/sweep.c): a one-line error, or points each of which
// reads as a case and keeps the file's line count (messages name the sweep file's lines).
static void sweep_one(const uint8_t *data, size_t size)
{
    pp_sweep s;
    pp_error err;
    memset(&err, 0, sizeof err);
    int rc = pp_sweep_parse((const char *)data, size, "fuzz.toml", &s, &err);
    if (rc && (strchr(err.msg, '\n') || strncmp(err.msg, "fuzz.toml", 9) != 0))
        abort();
    size_t lines = 0;
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    for (int i = 0; !rc && i < s.n_points; i++) {
        size_t point_lines = 0;
        for (size_t j = 0; j < s.points[i].len; j++)
            point_lines += s.points[i].text[j] == '\n';
        if (s.n_keys && point_lines != lines)
            abort();  // a point's text moved a line
        pp_case c;
        if (pp_sweep_point_case(&s, i, &c, &err) != PP_OK)
            abort();  // the expansion kept a point that does not read
        pp_case_free(&c);
    }
    pp_sweep_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pp_case c;
    pp_error err;
    memset(&err, 0, sizeof err);
    int rc = pp_case_parse((const char *)data, size, "fuzz.toml", &c, &err);
    if (rc && (strchr(err.msg, '\n') || strncmp(err.msg, "fuzz.toml", 9) != 0))
        abort();  // every error is one line naming the file
    pp_case_free(&c);
    sweep_one(data, size);
    return 0;
}
