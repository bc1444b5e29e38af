// toml.h — a strict reader for the part of TOML 1.0 that precprobe's case files use; every
// document it accepts is valid TOML, and every error is one line "FILE:LINE: message".
#ifndef PP_TOML_H
#define PP_TOML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

// What is read: comments; bare, quoted ("..." and '...') and dotted keys; [table] and
// [[array.of.tables]] headers; basic and literal strings, single- and multi-line, with TOML's
// escapes; integers (decimal, 0x, 0o, 0b, with underscores; int64 range); floats (fraction,
// exponent, inf, nan, with sign); booleans; arrays (multi-line, mixed types, trailing comma);
// inline tables. Newlines are LF or CRLF; CRLF inside a multi-line string reads as "\n".
//
// What is refused although TOML 1.0 allows it (each with its own message):
//   - offset date-times, local date-times, dates and times: "dates and times are not supported";
//   - U+0000 in a string or key (written as \u0000): values are C strings;
//   - nesting deeper than PP_TOML_MAX_DEPTH levels (tables, arrays and inline tables counted
//     together; the root is level 0), so no document can exhaust the stack;
//   - a float literal whose magnitude rounds to infinity (1e400): write inf if infinity is meant;
//   - a document larger than PP_TOML_MAX_BYTES, or one that starts with a byte order mark.
// Everything TOML 1.0 calls invalid is refused: duplicate keys, tables defined twice (by
// headers, dotted keys or inline tables), adding to an inline table or an array value,
// integers outside int64, leading zeros, invalid escapes, control characters, unterminated
// strings and arrays, a missing '=' or value, anything after a value but a comment, a bare CR,
// invalid UTF-8.
#define PP_TOML_MAX_DEPTH 64
#define PP_TOML_MAX_BYTES ((size_t)64 << 20)

typedef enum pp_toml_type {
    PP_TOML_STRING,
    PP_TOML_INT,
    PP_TOML_FLOAT,
    PP_TOML_BOOL,
    PP_TOML_ARRAY,  // arrays of values and arrays of tables ([[x]]) alike
    PP_TOML_TABLE   // the root, [headers], dotted-key tables and inline tables alike
} pp_toml_type;

// A node of the parsed tree. Opaque: read it with the functions below. The whole tree is owned
// by its root and freed with pp_toml_free; pointers into it stay valid until then.
typedef struct pp_toml_value pp_toml_value;

// ---- parsing ----------------------------------------------------------------------------------

// Parses text[0..len) (UTF-8; need not be NUL-terminated) into a tree.
// @param [in]  text      the document
// @param [in]  len       its length in bytes
// @param [in]  filename  used as FILE in messages ("<input>" when NULL)
// @param [out] root      the root table on success, NULL on failure
// @param [out] err       the message on failure (may be NULL)
// Returns PP_OK; PP_ERR_INPUT with "FILE:LINE: message" (the message names the key where there
// is one) for every document that is invalid or outside the subset; PP_ERR_RUNTIME when out of
// memory. Time and memory are linear in len (tables are hashed, arrays grow geometrically).
int pp_toml_parse(const char *text, size_t len, const char *filename, pp_toml_value **root,
                  pp_error *err);

// Reads the file at path and parses it as pp_toml_parse does, with path as FILE.
// Returns PP_OK, PP_ERR_INPUT ("FILE: cannot read: reason" for an unreadable file, or a parse
// error), PP_ERR_RUNTIME when out of memory.
int pp_toml_parse_file(const char *path, pp_toml_value **root, pp_error *err);

// Frees a tree returned by pp_toml_parse; NULL is allowed.
void pp_toml_free(pp_toml_value *root);

// ---- reading the tree --------------------------------------------------------------------------
// The table and array functions accept NULL or a value of another type and then answer 0 or
// NULL, so lookups chain: pp_toml_get(pp_toml_get(root, "variants"), "fp32").

// The type of v. Precondition: v != NULL.
pp_toml_type pp_toml_type_of(const pp_toml_value *v);

// "string", "integer", "float", "boolean", "array", "table": for "expected X, found Y".
const char *pp_toml_type_name(pp_toml_type t);

// The 1-based line where v was defined: for a key's value, the line of the key; for a table, the
// line of its [header] (of its [[header]] for an element of an array of tables) or of the dotted
// key that defined it, else of the first header that named it on the way to a sub-table; 1 for
// the root. 0 when v is NULL.
int pp_toml_line(const pp_toml_value *v);

// The number of keys of table t (0 when t is not a table).
int pp_toml_table_size(const pp_toml_value *t);

// The i-th key and value of table t, 0 <= i < pp_toml_table_size(t), in the order the keys were
// first defined (a table created on the way to a sub-table counts as defined there). NULL when
// t is not a table or i is out of range.
const char *pp_toml_table_key(const pp_toml_value *t, int i);
const pp_toml_value *pp_toml_table_value(const pp_toml_value *t, int i);

// The value of key in table t (one key, not a dotted path); NULL when absent or t is not a
// table. Expected O(1).
const pp_toml_value *pp_toml_get(const pp_toml_value *t, const char *key);

// The number of elements of array a, and its i-th element (0 when a is not an array; NULL when
// i is out of range).
int pp_toml_array_size(const pp_toml_value *a);
const pp_toml_value *pp_toml_array_at(const pp_toml_value *a, int i);

// The string value of v (UTF-8, NUL-terminated, no interior NUL), or NULL when v is NULL or
// not a string.
const char *pp_toml_as_string(const pp_toml_value *v);

// Sets *out to the value of v. Returns 0, or -1 (and leaves *out alone) when v is NULL or of
// another type.
int pp_toml_as_int(const pp_toml_value *v, int64_t *out);
int pp_toml_as_bool(const pp_toml_value *v, bool *out);

// Sets *out to the value of v, a float or an integer (lr = 1 means 1.0). Returns 0; -1 when v
// is NULL or neither a float nor an integer; -2 when v is an integer that binary64 cannot hold
// exactly (|v| > 2^53 and not a multiple of the spacing there): nothing is rounded silently.
int pp_toml_as_double(const pp_toml_value *v, double *out);

// ---- checking keys against a schema -------------------------------------------------------------

// Checks that every key of table t is one of names[0..n). The first key that is not fails with
// "FILE:LINE: unknown key 'K' in WHERE (did you mean 'N'?)", the suggestion from
// pp_nearest_name and left out when no name is close.
// @param where  how to name the table, e.g. "[variants.fp16]" ("the top level" when NULL)
// Returns PP_OK, or PP_ERR_INPUT. A t that is not a table passes.
int pp_toml_check_keys(const pp_toml_value *t, const char *filename, const char *where,
                       const char *const *names, int n, pp_error *err);

#endif
