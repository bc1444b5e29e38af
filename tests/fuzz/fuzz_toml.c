// fuzz_toml.c — libFuzzer target for the TOML reader (src/io/toml.c). Build with `make fuzz`
// (the clang line there), run with tools/fuzz.sh toml SECONDS, or by hand:
//   build/fuzz/fuzz_toml -max_len=4096 -timeout=5 CORPUS_DIR tests/fuzz/toml
// Beyond "no crash, no leak, no undefined behaviour" it checks two properties: a rejection is
// one line "fuzz.toml:LINE: ..." with LINE a line of the input; an accepted document, written
// back as TOML (inline tables only) and read again, gives the same tree.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/nearest.h"
#include "io/toml.h"

#define CHECK(cond)                                                                 \
    do {                                                                            \
        if (!(cond)) {                                                              \
            fprintf(stderr, "fuzz_toml: property failed: %s (line %d)\n", #cond, __LINE__); \
            abort();                                                                \
        }                                                                           \
    } while (0)

typedef struct sbuf {
    char *s;
    size_t n, cap;
} sbuf;

static void put(sbuf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n + 1)
            cap *= 2;
        b->s = realloc(b->s, cap);
        CHECK(b->s != NULL);
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

static void puts_(sbuf *b, const char *s)
{
    put(b, s, strlen(s));
}

// A basic string: quotes, backslashes and control characters escaped; UTF-8 kept as is.
static void put_string(sbuf *b, const char *s)
{
    puts_(b, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char tmp[8];
        if (c == '"' || c == '\\' || c < 0x20 || c == 0x7f) {
            snprintf(tmp, sizeof tmp, "\\u%04X", c);
            puts_(b, tmp);
        } else {
            put(b, (const char *)&c, 1);
        }
    }
    puts_(b, "\"");
}

// The value as TOML source; every table inline, every key quoted.
static void write_value(sbuf *b, const pp_toml_value *v)
{
    char tmp[64];
    switch (pp_toml_type_of(v)) {
    case PP_TOML_STRING:
        put_string(b, pp_toml_as_string(v));
        return;
    case PP_TOML_INT: {
        int64_t i;
        CHECK(pp_toml_as_int(v, &i) == 0);
        snprintf(tmp, sizeof tmp, "%lld", (long long)i);
        puts_(b, tmp);
        return;
    }
    case PP_TOML_FLOAT: {
        double d;
        CHECK(pp_toml_as_double(v, &d) == 0);
        if (isnan(d))
            snprintf(tmp, sizeof tmp, "%snan", signbit(d) ? "-" : "");
        else if (isinf(d))
            snprintf(tmp, sizeof tmp, "%sinf", d < 0 ? "-" : "");
        else
            snprintf(tmp, sizeof tmp, "%.17g", d);  // 17 digits round-trip every binary64
        puts_(b, tmp);
        if (!strpbrk(tmp, ".eni"))
            puts_(b, ".0");  // "-0" or "100" would read as an integer
        return;
    }
    case PP_TOML_BOOL: {
        bool x;
        CHECK(pp_toml_as_bool(v, &x) == 0);
        puts_(b, x ? "true" : "false");
        return;
    }
    case PP_TOML_ARRAY:
        puts_(b, "[");
        for (int i = 0; i < pp_toml_array_size(v); i++) {
            if (i)
                puts_(b, ", ");
            write_value(b, pp_toml_array_at(v, i));
        }
        puts_(b, "]");
        return;
    case PP_TOML_TABLE:
        puts_(b, "{");
        for (int i = 0; i < pp_toml_table_size(v); i++) {
            puts_(b, i ? ", " : " ");
            put_string(b, pp_toml_table_key(v, i));
            puts_(b, " = ");
            write_value(b, pp_toml_table_value(v, i));
        }
        puts_(b, " }");
        return;
    }
}

// Same tree: types, keys in order, values (floats by bits, any NaN equal to any NaN).
static void check_same(const pp_toml_value *a, const pp_toml_value *b)
{
    CHECK(pp_toml_type_of(a) == pp_toml_type_of(b));
    switch (pp_toml_type_of(a)) {
    case PP_TOML_STRING:
        CHECK(strcmp(pp_toml_as_string(a), pp_toml_as_string(b)) == 0);
        return;
    case PP_TOML_INT: {
        int64_t x, y;
        pp_toml_as_int(a, &x);
        pp_toml_as_int(b, &y);
        CHECK(x == y);
        return;
    }
    case PP_TOML_FLOAT: {
        double x, y;
        pp_toml_as_double(a, &x);
        pp_toml_as_double(b, &y);
        CHECK((isnan(x) && isnan(y)) || memcmp(&x, &y, sizeof x) == 0);
        return;
    }
    case PP_TOML_BOOL: {
        bool x, y;
        pp_toml_as_bool(a, &x);
        pp_toml_as_bool(b, &y);
        CHECK(x == y);
        return;
    }
    case PP_TOML_ARRAY:
        CHECK(pp_toml_array_size(a) == pp_toml_array_size(b));
        for (int i = 0; i < pp_toml_array_size(a); i++)
            check_same(pp_toml_array_at(a, i), pp_toml_array_at(b, i));
        return;
    case PP_TOML_TABLE:
        CHECK(pp_toml_table_size(a) == pp_toml_table_size(b));
        for (int i = 0; i < pp_toml_table_size(a); i++) {
            const char *k = pp_toml_table_key(a, i);
            CHECK(strcmp(k, pp_toml_table_key(b, i)) == 0);
            CHECK(pp_toml_get(a, k) == pp_toml_table_value(a, i));  // keys are unique
            check_same(pp_toml_table_value(a, i), pp_toml_table_value(b, i));
        }
        return;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pp_toml_value *root = NULL;
    pp_error err = {0};
    int rc = pp_toml_parse((const char *)data, size, "fuzz.toml", &root, &err);
    if (rc != PP_OK) {
        int lines = 1;
        for (size_t i = 0; i < size; i++)
            lines += data[i] == '\n';
        int line = 0;
        CHECK(rc == PP_ERR_INPUT && err.code == PP_ERR_INPUT && root == NULL);
        CHECK(sscanf(err.msg, "fuzz.toml:%d: ", &line) == 1 && line >= 1 && line <= lines);
        CHECK(strchr(err.msg, '\n') == NULL);
        return 0;
    }
    // The schema helper on every key, with the keys themselves as the known names minus one.
    static const char *const names[] = {"operation", "variants", "storage", "accumulate"};
    pp_toml_check_keys(root, "fuzz.toml", NULL, names, 4, &err);
    for (int i = 0; i < pp_toml_table_size(root) && i < 8; i++)
        (void)pp_nearest_name(pp_toml_table_key(root, i), names, 4);

    sbuf b = {0};
    for (int i = 0; i < pp_toml_table_size(root); i++) {
        put_string(&b, pp_toml_table_key(root, i));
        puts_(&b, " = ");
        write_value(&b, pp_toml_table_value(root, i));
        puts_(&b, "\n");
    }
    pp_toml_value *again = NULL;
    rc = pp_toml_parse(b.s ? b.s : "", b.n, "again.toml", &again, &err);
    if (rc != PP_OK)
        fprintf(stderr, "fuzz_toml: rereading failed: %s\n", err.msg);
    CHECK(rc == PP_OK);
    check_same(root, again);
    pp_toml_free(again);
    pp_toml_free(root);
    free(b.s);
    return 0;
}
