// test_toml.c — the case-file TOML reader (src/io/toml.c) and "did you mean" (src/core/nearest.c).
// Run from the repository root. `test_toml --dump FILE...` prints each file's tree as JSON (or
// its error) one line per file: the driver of tools/toml_differential.py.
#include "test_util.h"

#include <dirent.h>
#include <math.h>
#include <stdbool.h>

#include "core/nearest.h"
#include "io/toml.h"

#define DATA_DIR "tests/data/toml"
#define MAX_FAILS 10

// ---------------------------------------------------------------------------------------------
// Growing strings and the JSON dump

typedef struct sbuf {
    char *s;
    size_t n, cap;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n + 1)
            cap *= 2;
        b->s = realloc(b->s, cap);
        if (!b->s) {
            fprintf(stderr, "out of memory\n");
            exit(3);
        }
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

static void sb_str(sbuf *b, const char *s)
{
    sb_put(b, s, strlen(s));
}

// A JSON string exactly as Python's json.dumps(..., ensure_ascii=False) writes it.
static void sb_json_string(sbuf *b, const char *s)
{
    sb_str(b, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char tmp[8];
        switch (c) {
        case '"': sb_str(b, "\\\""); break;
        case '\\': sb_str(b, "\\\\"); break;
        case '\n': sb_str(b, "\\n"); break;
        case '\r': sb_str(b, "\\r"); break;
        case '\t': sb_str(b, "\\t"); break;
        case '\b': sb_str(b, "\\b"); break;
        case '\f': sb_str(b, "\\f"); break;
        default:
            if (c < 0x20) {
                snprintf(tmp, sizeof tmp, "\\u%04x", c);
                sb_str(b, tmp);
            } else {
                sb_put(b, (const char *)&c, 1);
            }
        }
    }
    sb_str(b, "\"");
}

// The tree as tagged JSON: tables are objects (keys in order), arrays are lists, and a scalar
// is {"type": T, "value": V} with V a string: integers in decimal, floats as the hex of their
// bits ("nan" for every NaN), so equal JSON means bit-equal values.
static void dump_json(sbuf *b, const pp_toml_value *v)
{
    char tmp[64];
    switch (pp_toml_type_of(v)) {
    case PP_TOML_TABLE:
        sb_str(b, "{");
        for (int i = 0; i < pp_toml_table_size(v); i++) {
            if (i)
                sb_str(b, ",");
            sb_json_string(b, pp_toml_table_key(v, i));
            sb_str(b, ":");
            dump_json(b, pp_toml_table_value(v, i));
        }
        sb_str(b, "}");
        return;
    case PP_TOML_ARRAY:
        sb_str(b, "[");
        for (int i = 0; i < pp_toml_array_size(v); i++) {
            if (i)
                sb_str(b, ",");
            dump_json(b, pp_toml_array_at(v, i));
        }
        sb_str(b, "]");
        return;
    case PP_TOML_STRING:
        sb_str(b, "{\"type\":\"string\",\"value\":");
        sb_json_string(b, pp_toml_as_string(v));
        sb_str(b, "}");
        return;
    case PP_TOML_INT: {
        int64_t i = 0;
        pp_toml_as_int(v, &i);
        snprintf(tmp, sizeof tmp, "{\"type\":\"integer\",\"value\":\"%lld\"}", (long long)i);
        sb_str(b, tmp);
        return;
    }
    case PP_TOML_FLOAT: {
        double d = 0;
        uint64_t bits;
        pp_toml_as_double(v, &d);
        memcpy(&bits, &d, sizeof bits);
        if (isnan(d))
            snprintf(tmp, sizeof tmp, "{\"type\":\"float\",\"value\":\"nan\"}");
        else
            snprintf(tmp, sizeof tmp, "{\"type\":\"float\",\"value\":\"0x%016llx\"}",
                     (unsigned long long)bits);
        sb_str(b, tmp);
        return;
    }
    case PP_TOML_BOOL: {
        bool x = false;
        pp_toml_as_bool(v, &x);
        sb_str(b, x ? "{\"type\":\"bool\",\"value\":\"true\"}"
                    : "{\"type\":\"bool\",\"value\":\"false\"}");
        return;
    }
    }
}

// ---------------------------------------------------------------------------------------------
// Files

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    sbuf b = {0};
    char chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
        sb_put(&b, chunk, got);
    fclose(f);
    if (!b.s)
        sb_put(&b, "", 0);
    *len = b.n;
    return b.s;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

// The names of the files in dir ending in suffix, sorted; *n set. Fails the test when the
// directory cannot be read (the data is part of the test).
static char **list_dir(const char *dir, const char *suffix, int *n)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "cannot open %s (run from the repository root)\n", dir);
        fail();
    }
    char **names = NULL;
    int cnt = 0;
    struct dirent *e;
    size_t ls = strlen(suffix);
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l <= ls || strcmp(e->d_name + l - ls, suffix) != 0)
            continue;
        names = realloc(names, (size_t)(cnt + 1) * sizeof *names);
        assert_non_null(names);
        names[cnt++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)cnt, sizeof *names, cmp_names);
    *n = cnt;
    return names;
}

static void free_names(char **names, int n)
{
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

// ---------------------------------------------------------------------------------------------
// Valid documents: tests/data/toml/valid/NAME.toml must read as NAME.json, which
// tools/toml_differential.py --write-expected wrote from Python's tomllib.

static void toml_valid_documents_match_expected_trees(void **state)
{
    (void)state;
    int n, fails = 0;
    char **names = list_dir(DATA_DIR "/valid", ".toml", &n);
    assert_true(n >= 15);
    for (int i = 0; i < n && fails < MAX_FAILS; i++) {
        char path[512], jpath[512];
        snprintf(path, sizeof path, DATA_DIR "/valid/%s", names[i]);
        snprintf(jpath, sizeof jpath, "%.*s.json", (int)strlen(path) - 5, path);
        size_t jlen;
        char *want = read_all(jpath, &jlen);
        pp_toml_value *root;
        pp_error err = {0};
        int rc = pp_toml_parse_file(path, &root, &err);
        if (rc != PP_OK || !want) {
            fprintf(stderr, "valid document rejected or no %s: %s\n", jpath, err.msg);
            fails++;
        } else {
            while (jlen && (want[jlen - 1] == '\n' || want[jlen - 1] == '\r'))
                want[--jlen] = '\0';
            sbuf got = {0};
            dump_json(&got, root);
            if (strcmp(got.s, want) != 0) {
                fprintf(stderr, "property: tree of %s equals %s\n  got:  %s\n  want: %s\n",
                        path, jpath, got.s, want);
                fails++;
            }
            free(got.s);
        }
        pp_toml_free(root);
        free(want);
    }
    free_names(names, n);
    assert_int_equal(fails, 0);
}

// ---------------------------------------------------------------------------------------------
// Invalid and unsupported documents: each file's first line is the expectation,
//     # error: LINE: FRAGMENT
// (after a byte order mark, for the file about byte order marks): parsing must fail with
// PP_ERR_INPUT and the one-line message "PATH:LINE: ..." containing FRAGMENT.
// invalid/ holds what TOML 1.0 forbids; unsupported/ holds valid TOML that precprobe refuses.

static int check_error_documents(const char *dir, int *count)
{
    int n, fails = 0;
    char **names = list_dir(dir, ".toml", &n);
    *count = n;
    for (int i = 0; i < n && fails < MAX_FAILS; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        size_t len;
        char *text = read_all(path, &len);
        assert_non_null(text);
        const char *h = text;
        if (len >= 3 && memcmp(h, "\xEF\xBB\xBF", 3) == 0)
            h += 3;
        int line = 0;
        char frag[256] = "";
        if (sscanf(h, "# error: %d: %255[^\r\n]", &line, frag) != 2) {
            fprintf(stderr, "%s: first line is not '# error: LINE: FRAGMENT'\n", path);
            fails++;
            free(text);
            continue;
        }
        pp_toml_value *root = NULL;
        pp_error err = {0};
        int rc = pp_toml_parse(text, len, path, &root, &err);
        char prefix[600];
        snprintf(prefix, sizeof prefix, "%s:%d: ", path, line);
        if (rc != PP_ERR_INPUT || root || strncmp(err.msg, prefix, strlen(prefix)) != 0
            || !strstr(err.msg, frag) || strchr(err.msg, '\n') || err.code != PP_ERR_INPUT) {
            fprintf(stderr, "property: %s is rejected at line %d with '%s'\n  rc %d, got: %s\n",
                    path, line, frag, rc, rc ? err.msg : "(accepted)");
            fails++;
        }
        pp_toml_free(root);
        free(text);
    }
    free_names(names, n);
    return fails;
}

static void toml_invalid_documents_fail_at_line(void **state)
{
    (void)state;
    int count;
    assert_int_equal(check_error_documents(DATA_DIR "/invalid", &count), 0);
    assert_true(count >= 40);
}

static void toml_unsupported_documents_fail_at_line(void **state)
{
    (void)state;
    int count;
    assert_int_equal(check_error_documents(DATA_DIR "/unsupported", &count), 0);
    assert_true(count >= 5);
}

// ---------------------------------------------------------------------------------------------
// Inline error cases that need no file: the message format itself, NULL filename, a buffer
// that is not NUL-terminated, errors past the first line.

typedef struct err_case {
    const char *doc;
    int line;
    const char *fragment;
} err_case;

static const err_case inline_errors[] = {
    {"a = 1\nb = 2\na = 3\n", 3, "duplicate key 'a' (first defined on line 1)"},
    {"[x]\ny.z = 1\n[x.y]\n", 3, "table [x.y] was already defined by dotted keys on line 2"},
    {"[s]\n\"a b\" = 1\n\"a b\" = 2", 3, "duplicate key 's.\"a b\"'"},
    {"k = \"\\u0007\"\n\"\\n\" = 1\n\"\\n\" = 2", 3, "duplicate key '\"\\u000A\"'"},
    {"a = [\n1,\n2\n3]\n", 4, "expected ',' or ']' after element 1 of array 'a'"},
    {"a = [\n[1,\n{x = 1, x = 2}]]\n", 3, "duplicate key 'a[0][1].x'"},
    {"a = [1,\n2,\n", 1, "unterminated array 'a'"},
    {"a = \"\"\"\n\n\nx", 1, "unterminated multi-line string"},
    {"\n\na = tru", 3, "invalid value 'tru'"},
};

static void toml_inline_errors_are_one_line_with_file_and_line(void **state)
{
    (void)state;
    int fails = 0;
    for (size_t i = 0; i < sizeof inline_errors / sizeof *inline_errors && fails < MAX_FAILS;
         i++) {
        const err_case *c = &inline_errors[i];
        pp_toml_value *root = NULL;
        pp_error err = {0};
        int rc = pp_toml_parse(c->doc, strlen(c->doc), "case.toml", &root, &err);
        char prefix[64];
        snprintf(prefix, sizeof prefix, "case.toml:%d: ", c->line);
        if (rc != PP_ERR_INPUT || strncmp(err.msg, prefix, strlen(prefix)) != 0
            || !strstr(err.msg, c->fragment) || strchr(err.msg, '\n')) {
            fprintf(stderr, "property: case %zu rejected at line %d with \"%s\"\n  got: %s\n", i,
                    c->line, c->fragment, err.msg);
            fails++;
        }
        pp_toml_free(root);
    }
    assert_int_equal(fails, 0);

    // No filename: "<input>". No error struct: still the code.
    pp_toml_value *root;
    pp_error err = {0};
    assert_int_equal(pp_toml_parse("a = ", 4, NULL, &root, &err), PP_ERR_INPUT);
    assert_null(root);
    assert_string_equal(err.msg, "<input>:1: missing value for key 'a'");
    assert_int_equal(pp_toml_parse("a = ", 4, "f", &root, NULL), PP_ERR_INPUT);

    // Only len bytes are read: "a = 12" cut to "a = 1" reads 1, cut to "a =" has no value.
    const char buf[] = {'a', ' ', '=', ' ', '1', '2'};
    int64_t i64 = 0;
    assert_int_equal(pp_toml_parse(buf, 5, "f", &root, &err), PP_OK);
    assert_int_equal(pp_toml_as_int(pp_toml_get(root, "a"), &i64), 0);
    assert_int_equal(i64, 1);
    pp_toml_free(root);
    assert_int_equal(pp_toml_parse(buf, 3, "f", &root, &err), PP_ERR_INPUT);
    assert_null(root);

    // An empty document (even NULL with length 0) is an empty table.
    assert_int_equal(pp_toml_parse(NULL, 0, "f", &root, &err), PP_OK);
    assert_int_equal(pp_toml_table_size(root), 0);
    pp_toml_free(root);
}

// ---------------------------------------------------------------------------------------------
// The tree: lines, order, accessors

static const char lines_doc[] =
    "# a case\n"                                  // 1
    "title = \"attention\"\n"                     // 2
    "shape.b = 2\n"                               // 3
    "shape.h = 4\n"                               // 4
    "\n"                                          // 5
    "[variants.\"post-alpha\".gemm]\n"            // 6
    "acc = \"fp32\"\n"                            // 7
    "[variants]\n"                                // 8
    "names = [\n"                                 // 9
    "  \"a\",\n"                                  // 10
    "]\n"                                         // 11
    "text = '''\n"                                // 12
    "two\n"                                       // 13
    "lines'''\n"                                  // 14
    "[[steps]]\r\n"                               // 15
    "lr = 1\r\n"                                  // 16
    "[[steps]]\n"                                 // 17
    "lr = 2.5e-3\n"                               // 18
    "inline = { x = 1, y.z = true }\n";           // 19

static void toml_tree_lines_and_order(void **state)
{
    (void)state;
    pp_toml_value *root;
    pp_error err = {0};
    assert_int_equal(pp_toml_parse(lines_doc, strlen(lines_doc), "l.toml", &root, &err), PP_OK);
    assert_int_equal(pp_toml_line(root), 1);
    assert_int_equal(pp_toml_table_size(root), 4);
    const char *order[] = {"title", "shape", "variants", "steps"};
    for (int i = 0; i < 4; i++)
        assert_string_equal(pp_toml_table_key(root, i), order[i]);
    assert_null(pp_toml_table_key(root, 4));
    assert_null(pp_toml_table_value(root, -1));

    assert_int_equal(pp_toml_line(pp_toml_get(root, "title")), 2);
    const pp_toml_value *shape = pp_toml_get(root, "shape");
    assert_int_equal(pp_toml_line(shape), 3);  // created by the dotted key on line 3
    assert_int_equal(pp_toml_line(pp_toml_get(shape, "h")), 4);

    const pp_toml_value *variants = pp_toml_get(root, "variants");
    assert_int_equal(pp_toml_line(variants), 8);  // named on line 6, defined by [variants] on 8
    const pp_toml_value *pa = pp_toml_get(variants, "post-alpha");
    assert_int_equal(pp_toml_line(pa), 6);        // only ever named on the way to .gemm
    assert_int_equal(pp_toml_line(pp_toml_get(pa, "gemm")), 6);
    assert_int_equal(pp_toml_line(pp_toml_get(pp_toml_get(pa, "gemm"), "acc")), 7);
    assert_string_equal(pp_toml_table_key(variants, 0), "post-alpha");
    assert_string_equal(pp_toml_table_key(variants, 1), "names");
    const pp_toml_value *names = pp_toml_get(variants, "names");
    assert_int_equal(pp_toml_line(names), 9);
    assert_int_equal(pp_toml_line(pp_toml_array_at(names, 0)), 10);
    assert_int_equal(pp_toml_line(pp_toml_get(variants, "text")), 12);
    assert_string_equal(pp_toml_as_string(pp_toml_get(variants, "text")), "two\nlines");

    const pp_toml_value *steps = pp_toml_get(root, "steps");
    assert_int_equal(pp_toml_type_of(steps), PP_TOML_ARRAY);
    assert_int_equal(pp_toml_array_size(steps), 2);
    assert_int_equal(pp_toml_line(steps), 15);
    assert_int_equal(pp_toml_line(pp_toml_array_at(steps, 0)), 15);
    assert_int_equal(pp_toml_line(pp_toml_array_at(steps, 1)), 17);
    const pp_toml_value *inl = pp_toml_get(pp_toml_array_at(steps, 1), "inline");
    assert_int_equal(pp_toml_line(pp_toml_get(pp_toml_get(inl, "y"), "z")), 19);

    double d = 0;
    assert_int_equal(pp_toml_as_double(pp_toml_get(pp_toml_array_at(steps, 0), "lr"), &d), 0);
    assert_true(d == 1.0);
    assert_int_equal(pp_toml_as_double(pp_toml_get(pp_toml_array_at(steps, 1), "lr"), &d), 0);
    assert_true(d == 2.5e-3);
    pp_toml_free(root);
}

static void toml_accessors_check_types(void **state)
{
    (void)state;
    static const char doc[] = "s = \"x\"\ni = -9223372036854775808\nf = -0.0\nb = true\n"
                              "a = [1, \"two\", [3.0]]\nt = {}\n"
                              "big = 9007199254740993\nexact = 9007199254740992\n"
                              "max = 9223372036854775807\nneg53 = -9007199254740993\n";
    pp_toml_value *root;
    pp_error err = {0};
    assert_int_equal(pp_toml_parse(doc, strlen(doc), "a.toml", &root, &err), PP_OK);
    const pp_toml_value *s = pp_toml_get(root, "s"), *i = pp_toml_get(root, "i"),
                        *f = pp_toml_get(root, "f"), *b = pp_toml_get(root, "b"),
                        *a = pp_toml_get(root, "a"), *t = pp_toml_get(root, "t");
    int64_t iv = 0;
    double dv = 0;
    bool bv = false;
    assert_string_equal(pp_toml_as_string(s), "x");
    assert_null(pp_toml_as_string(i));
    assert_null(pp_toml_as_string(NULL));
    assert_int_equal(pp_toml_as_int(i, &iv), 0);
    assert_true(iv == INT64_MIN);
    assert_int_equal(pp_toml_as_int(f, &iv), -1);
    assert_int_equal(pp_toml_as_int(NULL, &iv), -1);
    assert_int_equal(pp_toml_as_bool(b, &bv), 0);
    assert_true(bv);
    assert_int_equal(pp_toml_as_bool(s, &bv), -1);
    assert_int_equal(pp_toml_as_double(f, &dv), 0);
    assert_true(dv == 0.0 && signbit(dv));
    assert_int_equal(pp_toml_as_double(i, &dv), 0);  // -2^63 is a double
    assert_true(dv == -0x1p63);
    assert_int_equal(pp_toml_as_double(s, &dv), -1);
    assert_int_equal(pp_toml_as_double(NULL, &dv), -1);
    dv = 7;
    assert_int_equal(pp_toml_as_double(pp_toml_get(root, "big"), &dv), -2);  // 2^53 + 1
    assert_true(dv == 7);
    assert_int_equal(pp_toml_as_double(pp_toml_get(root, "neg53"), &dv), -2);
    assert_int_equal(pp_toml_as_double(pp_toml_get(root, "max"), &dv), -2);  // rounds to 2^63
    assert_int_equal(pp_toml_as_double(pp_toml_get(root, "exact"), &dv), 0);
    assert_true(dv == 0x1p53);

    assert_int_equal(pp_toml_array_size(a), 3);
    assert_int_equal(pp_toml_type_of(pp_toml_array_at(a, 1)), PP_TOML_STRING);
    assert_int_equal(pp_toml_type_of(pp_toml_array_at(a, 2)), PP_TOML_ARRAY);
    assert_null(pp_toml_array_at(a, 3));
    assert_null(pp_toml_array_at(a, -1));
    assert_int_equal(pp_toml_array_size(t), 0);
    assert_int_equal(pp_toml_array_size(NULL), 0);
    assert_int_equal(pp_toml_type_of(t), PP_TOML_TABLE);
    assert_int_equal(pp_toml_table_size(t), 0);
    assert_int_equal(pp_toml_table_size(a), 0);
    assert_null(pp_toml_get(a, "x"));
    assert_null(pp_toml_get(NULL, "x"));
    assert_null(pp_toml_get(root, "missing"));
    assert_null(pp_toml_get(pp_toml_get(root, "missing"), "deeper"));
    assert_int_equal(pp_toml_line(NULL), 0);
    assert_string_equal(pp_toml_type_name(PP_TOML_INT), "integer");
    assert_string_equal(pp_toml_type_name(PP_TOML_BOOL), "boolean");
    pp_toml_free(root);
    pp_toml_free(NULL);
}

static void toml_parse_file_reports_unreadable_files(void **state)
{
    (void)state;
    pp_toml_value *root;
    pp_error err = {0};
    assert_int_equal(pp_toml_parse_file(DATA_DIR "/no-such-file.toml", &root, &err),
                     PP_ERR_INPUT);
    assert_null(root);
    assert_non_null(strstr(err.msg, DATA_DIR "/no-such-file.toml: cannot read: "));
    assert_int_equal(pp_toml_parse_file(DATA_DIR, &root, &err), PP_ERR_INPUT);  // a directory
    assert_null(root);
}

// ---------------------------------------------------------------------------------------------
// Limits: nesting is bounded (never a stack overflow), big inputs take linear time.

static char *repeat_doc(const char *head, const char *unit, long n, const char *mid,
                        const char *unit2, long n2, const char *tail)
{
    sbuf b = {0};
    sb_str(&b, head);
    for (long i = 0; i < n; i++)
        sb_str(&b, unit);
    sb_str(&b, mid);
    for (long i = 0; i < n2; i++)
        sb_str(&b, unit2);
    sb_str(&b, tail);
    return b.s;
}

static int parse_rc(const char *doc, const char *fragment)
{
    pp_toml_value *root;
    pp_error err = {0};
    int rc = pp_toml_parse(doc, strlen(doc), "deep.toml", &root, &err);
    if (rc && fragment && !strstr(err.msg, fragment)) {
        fprintf(stderr, "  expected '%s' in: %s\n", fragment, err.msg);
        rc = -1;
    }
    pp_toml_free(root);
    return rc;
}

static void toml_nesting_is_bounded(void **state)
{
    (void)state;
    const int M = PP_TOML_MAX_DEPTH;
    // a (level 1) holds M - 1 nested arrays: the innermost element sits at level M + 1 - 1.
    char *ok = repeat_doc("a = ", "[", M - 1, "1", "]", M - 1, "\n");
    char *deep = repeat_doc("a = ", "[", M, "1", "]", M, "\n");
    char *bomb = repeat_doc("a = ", "[", 200000, "", "", 0, "");
    char *ibomb = repeat_doc("a = ", "{b = ", 200000, "", "", 0, "");
    assert_int_equal(parse_rc(ok, NULL), PP_OK);
    assert_int_equal(parse_rc(deep, "nests deeper than 64 levels"), PP_ERR_INPUT);
    assert_int_equal(parse_rc(bomb, "nests deeper"), PP_ERR_INPUT);
    assert_int_equal(parse_rc(ibomb, "nests deeper"), PP_ERR_INPUT);
    free(ok);
    free(deep);
    free(bomb);
    free(ibomb);
    // A header of M parts names a table at level M: allowed, but no key may go in it.
    ok = repeat_doc("[t", ".t", M - 1, "]\n", "", 0, "");
    deep = repeat_doc("[t", ".t", M - 1, "]\n", "", 0, "x = 1\n");
    assert_int_equal(parse_rc(ok, NULL), PP_OK);
    assert_int_equal(parse_rc(deep, "nests deeper"), PP_ERR_INPUT);
    free(deep);
    deep = repeat_doc("[t", ".t", M, "]\n", "", 0, "");
    assert_int_equal(parse_rc(deep, "nests deeper"), PP_ERR_INPUT);
    free(ok);
    free(deep);
    ok = repeat_doc("t", ".t", M - 1, " = 1\n", "", 0, "");
    deep = repeat_doc("t", ".t", M, " = 1\n", "", 0, "");
    assert_int_equal(parse_rc(ok, NULL), PP_OK);
    assert_int_equal(parse_rc(deep, "nests deeper"), PP_ERR_INPUT);
    free(ok);
    free(deep);
    // [[a]] puts its tables one level below the array.
    ok = repeat_doc("[[t", ".t", M - 2, "]]\n", "", 0, "");
    deep = repeat_doc("[[t", ".t", M - 1, "]]\n", "", 0, "");
    assert_int_equal(parse_rc(ok, NULL), PP_OK);
    assert_int_equal(parse_rc(deep, "nests deeper"), PP_ERR_INPUT);
    free(ok);
    free(deep);
}

// Sizes scale with PRECPROBE_TEST_MULTIPLIER; a quadratic step would take minutes at ×1.
static void toml_big_inputs_parse_in_linear_time(void **state)
{
    (void)state;
    long n = (long)pp_test_iters(400000);
    pp_toml_value *root;
    pp_error err = {0};

    char *arr = repeat_doc("a = [", "1,\n", n, "]\n", "", 0, "");
    assert_int_equal(pp_toml_parse(arr, strlen(arr), "big", &root, &err), PP_OK);
    assert_int_equal(pp_toml_array_size(pp_toml_get(root, "a")), n);
    pp_toml_free(root);
    free(arr);

    sbuf b = {0};
    for (long i = 0; i < n; i++) {
        char line[64];
        snprintf(line, sizeof line, "k%ld = %ld\n", i, i);
        sb_str(&b, line);
    }
    assert_int_equal(pp_toml_parse(b.s, b.n, "big", &root, &err), PP_OK);
    assert_int_equal(pp_toml_table_size(root), n);
    int64_t v = -1;
    char key[32];
    snprintf(key, sizeof key, "k%ld", n / 2);
    assert_int_equal(pp_toml_as_int(pp_toml_get(root, key), &v), 0);
    assert_int_equal(v, n / 2);
    snprintf(key, sizeof key, "k%ld", n - 1);
    assert_string_equal(pp_toml_table_key(root, (int)n - 1), key);
    pp_toml_free(root);
    free(b.s);

    char *aot = repeat_doc("", "[[s]]\nx = 1\n[s.t]\n", n / 4, "", "", 0, "");
    assert_int_equal(pp_toml_parse(aot, strlen(aot), "big", &root, &err), PP_OK);
    assert_int_equal(pp_toml_array_size(pp_toml_get(root, "s")), n / 4);
    pp_toml_free(root);
    free(aot);

    char *str = repeat_doc("s = \"", "ab\\u00e9\\t", n, "\"\n", "", 0, "");
    assert_int_equal(pp_toml_parse(str, strlen(str), "big", &root, &err), PP_OK);
    assert_int_equal(strlen(pp_toml_as_string(pp_toml_get(root, "s"))), (size_t)n * 5);
    pp_toml_free(root);
    free(str);

    char *mls = repeat_doc("s = \"\"\"", "a\"\"b\\\n  \r\n", n, "\"\"\"\n", "", 0, "");
    assert_int_equal(pp_toml_parse(mls, strlen(mls), "big", &root, &err), PP_OK);
    assert_int_equal(strlen(pp_toml_as_string(pp_toml_get(root, "s"))), (size_t)n * 4);
    pp_toml_free(root);
    free(mls);

    // A float with many digits still reads correctly rounded: 0.1 followed by zeros and a 1.
    char *flt = repeat_doc("f = 0.1", "0", n, "1\n", "", 0, "");
    assert_int_equal(pp_toml_parse(flt, strlen(flt), "big", &root, &err), PP_OK);
    double d = 0;
    assert_int_equal(pp_toml_as_double(pp_toml_get(root, "f"), &d), 0);
    assert_true(d == 0.1);
    pp_toml_free(root);
    free(flt);

    // A long run of comments and blank lines, and an error at its end: the line is right.
    char *com = repeat_doc("", "# comment\n\n", n, "x = \n", "", 0, "");
    assert_int_equal(pp_toml_parse(com, strlen(com), "big", &root, &err), PP_ERR_INPUT);
    char want[64];
    snprintf(want, sizeof want, "big:%ld: missing value", 2 * n + 1);
    assert_non_null(strstr(err.msg, want));
    free(com);
}

// ---------------------------------------------------------------------------------------------
// Robustness: seeded random mutations of the valid documents. Whatever comes out, a rejection
// is one line "FILE:LINE: ..." with LINE inside the document; nothing crashes or leaks (the
// sanitizer build checks that part).

static void toml_random_mutations_fail_cleanly(void **state)
{
    (void)state;
    static const char alphabet[] = "[]{}=.,\"'#\\\n\r\t _-+0123456789abefinotuxAE:";
    int n, fails = 0;
    char **names = list_dir(DATA_DIR "/valid", ".toml", &n);
    uint64_t seed = pp_test_seed();
    pp_test_rng s = {seed};
    uint64_t iters = pp_test_iters(20000);
    for (uint64_t it = 0; it < iters && fails < MAX_FAILS; it++) {
        char path[512];
        snprintf(path, sizeof path, DATA_DIR "/valid/%s", names[it % (uint64_t)n]);
        size_t len;
        char *text = read_all(path, &len);
        int edits = 1 + (int)(pp_test_rng_next(&s) % 4);
        for (int e = 0; e < edits && len > 0; e++) {
            size_t at = pp_test_rng_next(&s) % len;
            uint64_t r = pp_test_rng_next(&s);
            if (r % 3 == 0)
                text[at] = alphabet[(r >> 8) % (sizeof alphabet - 1)];
            else if (r % 3 == 1)
                memmove(text + at, text + at + 1, --len - at);
            else
                text[at] = (char)(r >> 16);
        }
        int lines = 1;
        for (size_t k = 0; k < len; k++)
            lines += text[k] == '\n';
        pp_toml_value *root = NULL;
        pp_error err = {0};
        int rc = pp_toml_parse(text, len, "m.toml", &root, &err);
        int line = 0;
        if (rc != PP_OK
            && (rc != PP_ERR_INPUT || sscanf(err.msg, "m.toml:%d: ", &line) != 1 || line < 1
                || line > lines || strchr(err.msg, '\n'))) {
            fprintf(stderr, "property: a rejection names a line of the document\n"
                            "  iteration %llu of %s (%d lines): rc %d, %s\n",
                    (unsigned long long)it, path, lines, rc, err.msg);
            pp_test_report_seed();
            fails++;
        }
        pp_toml_free(root);
        free(text);
    }
    free_names(names, n);
    assert_int_equal(fails, 0);
}

// ---------------------------------------------------------------------------------------------
// Did you mean

typedef struct near_case {
    const char *word;
    const char *want;  // NULL: nothing close
} near_case;

static void nearest_name_suggests_close_names_only(void **state)
{
    (void)state;
    static const char *const names[] = {"accumulate", "softmax", "scale", "rtol", "atol", "lr",
                                        "post-alpha", "storage_format", "b", "eps"};
    static const near_case cases[] = {
        {"acumulate", "accumulate"},   // one deletion
        {"accumluate", "accumulate"},  // one swap
        {"ACCUMULATE", "accumulate"},  // case only
        {"sofmtax", "softmax"},        // one swap
        {"softmx", "softmax"},
        {"rtl", "rtol"},
        {"atoll", "atol"},
        {"scael", "scale"},
        {"post_alpha", "post-alpha"},
        {"storage-fromat", "storage_format"},  // two edits on 14 characters
        {"rtol", "rtol"},                      // exact
        {"lrr", "lr"},
        {"x", NULL},        // one letter suggests nothing
        {"c", NULL},        // 'b' is one edit away but a one-letter name is never close
        {"ep", "eps"},      // one edit on 3 characters, fewer than the word's 2
        {"momentum", NULL},
        {"", NULL},
        {"accumulator_format_for_the_partial_outputs", NULL},
        {"sxxtmax", "softmax"},  // 2 edits on 7 characters: the limit
        {"sxxxmax", NULL},       // 3 edits on 7 characters: more than one per three
    };
    int fails = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases && fails < MAX_FAILS; i++) {
        const char *got = pp_nearest_name(cases[i].word, names, 10);
        bool ok = cases[i].want ? got && strcmp(got, cases[i].want) == 0 : got == NULL;
        if (!ok) {
            fprintf(stderr, "property: nearest('%s') = %s, got %s\n", cases[i].word,
                    cases[i].want ? cases[i].want : "NULL", got ? got : "NULL");
            fails++;
        }
    }
    assert_int_equal(fails, 0);
    // Ties go to the first name; no names, no suggestion.
    static const char *const tie[] = {"abcd", "abce"};
    assert_string_equal(pp_nearest_name("abcf", tie, 2), "abcd");
    assert_null(pp_nearest_name("abcf", tie, 0));
}

static void toml_check_keys_names_line_and_suggestion(void **state)
{
    (void)state;
    static const char doc[] = "[variants.x]\nstorage = \"bf16\"\n\nacumulate = \"fp32\"\n"
                              "[variants.y]\nzzz = 1\n";
    static const char *const known[] = {"storage", "accumulate", "softmax"};
    pp_toml_value *root;
    pp_error err = {0};
    assert_int_equal(pp_toml_parse(doc, strlen(doc), "case.toml", &root, &err), PP_OK);
    const pp_toml_value *v = pp_toml_get(root, "variants");
    assert_int_equal(pp_toml_check_keys(pp_toml_get(v, "x"), "case.toml", "[variants.x]", known,
                                        3, &err),
                     PP_ERR_INPUT);
    assert_string_equal(err.msg, "case.toml:4: unknown key 'acumulate' in [variants.x] (did you "
                                 "mean 'accumulate'?)");
    assert_int_equal(pp_toml_check_keys(pp_toml_get(v, "y"), "case.toml", NULL, known, 3, &err),
                     PP_ERR_INPUT);
    assert_string_equal(err.msg, "case.toml:6: unknown key 'zzz' in the top level");
    static const char *const vk[] = {"x", "y"};
    assert_int_equal(pp_toml_check_keys(v, "case.toml", "[variants]", vk, 2, &err), PP_OK);
    assert_int_equal(pp_toml_check_keys(NULL, "case.toml", "[variants]", vk, 2, &err), PP_OK);
    pp_toml_free(root);
}

// ---------------------------------------------------------------------------------------------
// main: the cmocka groups, or --dump FILE... for tools/toml_differential.py

static int dump_files(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        pp_toml_value *root;
        pp_error err = {0};
        if (pp_toml_parse_file(argv[i], &root, &err) == PP_OK) {
            sbuf b = {0};
            dump_json(&b, root);
            printf("OK %s\n", b.s);
            free(b.s);
            pp_toml_free(root);
        } else {
            printf("ERR %s\n", err.msg);
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--dump") == 0)
        return dump_files(argc - 2, argv + 2);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(toml_valid_documents_match_expected_trees),
        cmocka_unit_test(toml_invalid_documents_fail_at_line),
        cmocka_unit_test(toml_unsupported_documents_fail_at_line),
        cmocka_unit_test(toml_inline_errors_are_one_line_with_file_and_line),
        cmocka_unit_test(toml_tree_lines_and_order),
        cmocka_unit_test(toml_accessors_check_types),
        cmocka_unit_test(toml_parse_file_reports_unreadable_files),
        cmocka_unit_test(toml_nesting_is_bounded),
        cmocka_unit_test(toml_big_inputs_parse_in_linear_time),
        cmocka_unit_test(toml_random_mutations_fail_cleanly),
        cmocka_unit_test(nearest_name_suggests_close_names_only),
        cmocka_unit_test(toml_check_keys_names_line_and_suggestion),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
