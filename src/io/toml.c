// toml.c — the TOML reader of toml.h: one pass over the text that builds the tree and checks
// every TOML 1.0 rule (who may define a table, escapes, number syntax) as it goes.
#include "io/toml.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/nearest.h"

// ---------------------------------------------------------------------------------------------
// The tree

// How a table or array came to be; this is what decides which later definitions are allowed.
enum {
    F_IMPLICIT = 1u << 0,  // table created on the way to a header's table ([a.b] creates a)
    F_HEADER = 1u << 1,    // table defined by [header], or an element of [[header]]
    F_DOTTED = 1u << 2,    // table defined by dotted keys (a.b = 1 defines a) in `section`
    F_INLINE = 1u << 3,    // inline table: complete once its '}' is read
    F_TABLES = 1u << 4     // array of tables, made by [[header]]; other arrays are complete values
};

typedef struct entry {
    char *key;
    pp_toml_value *val;
} entry;

struct pp_toml_value {
    pp_toml_type type;
    int line;
    unsigned flags;  // F_* for tables and arrays
    int section;     // for F_DOTTED tables: the section (header or inline table) that made them
    int depth;       // 0 for the root; bounded by PP_TOML_MAX_DEPTH
    union {
        char *s;
        int64_t i;
        double f;
        bool b;
        struct {
            pp_toml_value **item;
            int n, cap;
        } arr;
        struct {
            entry *e;
            int n, cap;
            int *slot;  // open-addressing index into e (entry index + 1; 0 = empty), or NULL
            int nslot;  // a power of two, at least twice n
        } tab;
    } u;
};

// Tables this small are searched linearly; larger ones get a hash index.
#define TABLE_INDEX_MIN 8

static void free_value(pp_toml_value *v)
{
    if (!v)
        return;
    if (v->type == PP_TOML_STRING) {
        free(v->u.s);
    } else if (v->type == PP_TOML_ARRAY) {
        for (int i = 0; i < v->u.arr.n; i++)
            free_value(v->u.arr.item[i]);  // recursion bounded by PP_TOML_MAX_DEPTH
        free(v->u.arr.item);
    } else if (v->type == PP_TOML_TABLE) {
        for (int i = 0; i < v->u.tab.n; i++) {
            free(v->u.tab.e[i].key);
            free_value(v->u.tab.e[i].val);
        }
        free(v->u.tab.e);
        free(v->u.tab.slot);
    }
    free(v);
}

void pp_toml_free(pp_toml_value *root)
{
    free_value(root);
}

static pp_toml_value *new_value(pp_toml_type type, int line, int depth)
{
    pp_toml_value *v = calloc(1, sizeof *v);
    if (v) {
        v->type = type;
        v->line = line;
        v->depth = depth;
    }
    return v;
}

// FNV-1a, seeded with the table's address and finished with a mixer, so every bit of the state
// reaches the slot index and no file can be written whose keys all collide (a quadratic parse).
static uint64_t hash_key(const pp_toml_value *t, const char *s)
{
    uint64_t h = 14695981039346656037u ^ ((uint64_t)(uintptr_t)t * 0x9e3779b97f4a7c15u);
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    h ^= h >> 32;
    h *= 0xd6e8feb86659fd93u;
    return h ^ (h >> 32);
}

static int table_find(const pp_toml_value *t, const char *key)
{
    if (!t->u.tab.slot) {
        for (int i = 0; i < t->u.tab.n; i++)
            if (strcmp(t->u.tab.e[i].key, key) == 0)
                return i;
        return -1;
    }
    size_t mask = (size_t)t->u.tab.nslot - 1;
    for (size_t h = hash_key(t, key) & mask;; h = (h + 1) & mask) {
        int s = t->u.tab.slot[h];
        if (s == 0)
            return -1;
        if (strcmp(t->u.tab.e[s - 1].key, key) == 0)
            return s - 1;
    }
}

static void index_insert(pp_toml_value *t, int i)
{
    size_t mask = (size_t)t->u.tab.nslot - 1;
    size_t h = hash_key(t, t->u.tab.e[i].key) & mask;
    while (t->u.tab.slot[h])
        h = (h + 1) & mask;
    t->u.tab.slot[h] = i + 1;
}

// Appends key (owned from now on, also on failure) and v to table t. Returns 0, or -1 when out
// of memory (then v is not freed: the caller still owns it).
static int table_add(pp_toml_value *t, char *key, pp_toml_value *v)
{
    if (t->u.tab.n == t->u.tab.cap) {
        if (t->u.tab.cap > INT_MAX / 4) {
            free(key);
            return -1;
        }
        int cap = t->u.tab.cap ? 2 * t->u.tab.cap : 4;
        entry *e = realloc(t->u.tab.e, (size_t)cap * sizeof *e);
        if (!e) {
            free(key);
            return -1;
        }
        t->u.tab.e = e;
        t->u.tab.cap = cap;
    }
    int i = t->u.tab.n++;
    t->u.tab.e[i].key = key;
    t->u.tab.e[i].val = v;
    if (t->u.tab.n >= TABLE_INDEX_MIN && 2 * t->u.tab.n > t->u.tab.nslot) {
        int nslot = t->u.tab.nslot ? 2 * t->u.tab.nslot : 4 * TABLE_INDEX_MIN;
        int *slot = calloc((size_t)nslot, sizeof *slot);
        if (!slot) {
            t->u.tab.n--;  // undo, so the caller's cleanup frees key once and v not at all
            free(key);
            return -1;
        }
        free(t->u.tab.slot);
        t->u.tab.slot = slot;
        t->u.tab.nslot = nslot;
        for (int j = 0; j < t->u.tab.n; j++)
            index_insert(t, j);
    } else if (t->u.tab.slot) {
        index_insert(t, i);
    }
    return 0;
}

static int array_push(pp_toml_value *a, pp_toml_value *v)
{
    if (a->u.arr.n == a->u.arr.cap) {
        if (a->u.arr.cap > INT_MAX / 4)
            return -1;
        int cap = a->u.arr.cap ? 2 * a->u.arr.cap : 4;
        pp_toml_value **item = realloc(a->u.arr.item, (size_t)cap * sizeof *item);
        if (!item)
            return -1;
        a->u.arr.item = item;
        a->u.arr.cap = cap;
    }
    a->u.arr.item[a->u.arr.n++] = v;
    return 0;
}

// ---------------------------------------------------------------------------------------------
// The parser's state, positions and messages

// A dotted key, decoded: parts[0..n), each NUL-terminated and owned.
typedef struct keypath {
    char **part;
    int n, cap;
} keypath;

// The path of the value being parsed, for messages only: a chain from the innermost level out.
typedef struct pathctx {
    const struct pathctx *up;
    const keypath *key;  // parts[0..nkey) of this level, or NULL for an array element
    int nkey;
    int index;           // the element's index when key is NULL
} pathctx;

typedef struct parser {
    const char *begin, *p, *end;
    const char *file;
    pp_error *err;
    const char *lc_pos;  // line cache: lc_pos is on line lc_line, so nearby lookups are cheap
    int lc_line;
    int next_section;    // sections: one per header and one per inline table
    int code;            // the pp_error code of the failure, once there is one
    char *buf;           // scratch for decoding strings
    size_t blen, bcap;
} parser;

// The line of position q: counts newlines from the last position asked about, so a pass that
// asks in text order costs O(len) in all.
static int line_at(parser *P, const char *q)
{
    const char *a = P->lc_pos;
    if (q >= a) {
        while ((a = memchr(a, '\n', (size_t)(q - a))) != NULL) {
            P->lc_line++;
            a++;
        }
    } else {
        for (const char *b = q; b < a; b++)
            P->lc_line -= *b == '\n';
    }
    P->lc_pos = q;
    return P->lc_line;
}

// Sets "FILE:LINE: message" and returns -1.
__attribute__((format(printf, 3, 4))) static int fail_line(parser *P, int line, const char *fmt,
                                                           ...)
{
    char msg[448];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    P->code = pp_fail(P->err, PP_ERR_INPUT, "%s:%d: %s", P->file, line, msg);
    return -1;
}

#define fail_at(P, q, ...) fail_line((P), line_at((P), (q)), __VA_ARGS__)

static int oom(parser *P)
{
    P->code = pp_fail(P->err, PP_ERR_RUNTIME, "%s: out of memory while reading", P->file);
    return -1;
}

static bool is_bare(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'
           || c == '-';
}

// Appends one key part to out (size cap, always NUL-terminated, silently cut): bare when it
// can be, else as a basic string with control characters escaped, so a message stays one line.
static void put_key(char *out, size_t cap, size_t *n, const char *k)
{
    bool bare = *k != '\0';
    for (const char *c = k; *c; c++)
        bare = bare && is_bare((unsigned char)*c);
    char tmp[8];
    if (!bare && *n + 1 < cap)
        out[(*n)++] = '"';
    for (const char *c = k; *c; c++) {
        unsigned char u = (unsigned char)*c;
        if (bare || (u >= 0x20 && u != 0x7f && u != '"' && u != '\\'))
            snprintf(tmp, sizeof tmp, "%c", u);
        else if (u == '"' || u == '\\')
            snprintf(tmp, sizeof tmp, "\\%c", u);
        else
            snprintf(tmp, sizeof tmp, "\\u%04X", u);
        for (const char *t = tmp; *t; t++)
            if (*n + 1 < cap)
                out[(*n)++] = *t;
    }
    if (!bare && *n + 1 < cap)
        out[(*n)++] = '"';
    out[*n] = '\0';
}

// Writes the dotted path of ctx (outermost first) into out, cut to about 160 bytes with "...".
static void put_path(char *out, size_t cap, size_t *n, const pathctx *ctx)
{
    if (!ctx)
        return;
    put_path(out, cap, n, ctx->up);  // depth bounded by PP_TOML_MAX_DEPTH (plus one per level)
    if (*n > 160) {
        if (*n + 4 < cap && strcmp(out + *n - 3, "...") != 0) {
            memcpy(out + *n, "...", 4);
            *n += 3;
        }
        return;
    }
    if (!ctx->key) {
        char tmp[24];
        snprintf(tmp, sizeof tmp, "[%d]", ctx->index);
        for (const char *t = tmp; *t; t++)
            if (*n + 1 < cap)
                out[(*n)++] = *t;
        out[*n] = '\0';
        return;
    }
    for (int i = 0; i < ctx->nkey; i++) {
        if (*n > 0 && *n + 1 < cap)
            out[(*n)++] = '.';
        put_key(out, cap, n, ctx->key->part[i]);
        if (*n > 160)
            break;
    }
    out[*n] = '\0';
}

typedef struct pathstr {
    char s[200];
} pathstr;

static const char *path_of(pathstr *ps, const pathctx *ctx)
{
    size_t n = 0;
    ps->s[0] = '\0';
    put_path(ps->s, sizeof ps->s, &n, ctx);
    return ps->s;
}

// The path of ctx followed by the first nkey parts of kp.
static const char *path_plus(pathstr *ps, const pathctx *ctx, const keypath *kp, int nkey)
{
    pathctx c = {ctx, kp, nkey, 0};
    return path_of(ps, &c);
}

// Describes the character at q for "found X" messages.
static const char *describe(const parser *P, const char *q, char *buf, size_t cap)
{
    if (q >= P->end)
        return "end of file";
    unsigned char c = (unsigned char)*q;
    if (c == '\n' || c == '\r')
        return "end of line";
    if (c == '\'')
        return "\"'\"";
    if (c >= 0x21 && c < 0x7f)
        snprintf(buf, cap, "'%c'", c);
    else if (c == ' ')
        return "' '";
    else if (c == '\t')
        return "a tab";
    else if (c < 0x80)
        snprintf(buf, cap, "control character U+%04X", c);
    else {
        // check_encoding has made sure a whole UTF-8 sequence starts here.
        int more = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : 1;
        uint32_t cp = c & (0x3Fu >> more);
        for (int k = 1; k <= more && q + k < P->end; k++)
            cp = cp << 6 | ((unsigned char)q[k] & 0x3Fu);
        snprintf(buf, cap, "U+%04X", (unsigned)cp);
    }
    return buf;
}

// ---------------------------------------------------------------------------------------------
// Encoding, whitespace, newlines, comments

// Checks the whole text is UTF-8 (no overlongs, surrogates or code points above U+10FFFF) and
// every CR starts a CRLF; both are then assumed everywhere else.
static int check_encoding(parser *P)
{
    const unsigned char *s = (const unsigned char *)P->begin, *e = (const unsigned char *)P->end;
    if (e - s >= 3 && s[0] == 0xEF && s[1] == 0xBB && s[2] == 0xBF)
        return fail_line(P, 1, "byte order mark at the start of the file is not supported");
    while (s < e) {
        unsigned c = *s;
        if (c < 0x80) {
            if (c == '\r' && (s + 1 == e || s[1] != '\n'))
                return fail_at(P, (const char *)s, "bare carriage return (CR not followed by LF)");
            s++;
            continue;
        }
        int more;
        unsigned lo = 0x80, hi = 0xBF;  // range of the first continuation byte
        if (c >= 0xC2 && c <= 0xDF) {
            more = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            more = 2;
            if (c == 0xE0)
                lo = 0xA0;  // no overlongs
            if (c == 0xED)
                hi = 0x9F;  // no surrogates
        } else if (c >= 0xF0 && c <= 0xF4) {
            more = 3;
            if (c == 0xF0)
                lo = 0x90;
            if (c == 0xF4)
                hi = 0x8F;  // nothing above U+10FFFF
        } else {
            return fail_at(P, (const char *)s, "invalid UTF-8 (byte 0x%02X)", c);
        }
        for (int k = 1; k <= more; k++) {
            unsigned b = s + k < e ? s[k] : 0;
            unsigned l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
            if (b < l || b > h)
                return fail_at(P, (const char *)s, "invalid UTF-8 (byte 0x%02X)", c);
        }
        s += more + 1;
    }
    return 0;
}

static bool at_ws(const parser *P)
{
    return P->p < P->end && (*P->p == ' ' || *P->p == '\t');
}

static void skip_ws(parser *P)
{
    while (at_ws(P))
        P->p++;
}

// CRLF counts as one newline; check_encoding guarantees every CR is followed by LF.
static bool at_newline(const parser *P)
{
    return P->p < P->end && (*P->p == '\n' || *P->p == '\r');
}

static void skip_newline(parser *P)
{
    P->p += *P->p == '\r' ? 2 : 1;
}

static bool is_control(unsigned char c)
{
    return (c < 0x20 && c != '\t') || c == 0x7f;
}

// At '#': skips the comment up to (not including) the newline.
static int skip_comment(parser *P)
{
    while (P->p < P->end && !at_newline(P)) {
        if (is_control((unsigned char)*P->p))
            return fail_at(P, P->p, "control character U+%04X in a comment",
                           (unsigned)(unsigned char)*P->p);
        P->p++;
    }
    return 0;
}

// Skips whitespace, newlines and comments (between array elements).
static int skip_blank(parser *P)
{
    for (;;) {
        skip_ws(P);
        if (at_newline(P))
            skip_newline(P);
        else if (P->p < P->end && *P->p == '#') {
            if (skip_comment(P))
                return -1;
        } else
            return 0;
    }
}

// After a key/value pair or a header: whitespace, an optional comment, then a newline or the
// end. Returns 0, -1 on error, 1 when something else follows (the caller names what it read).
static int at_eol(parser *P)
{
    skip_ws(P);
    if (P->p < P->end && *P->p == '#' && skip_comment(P))
        return -1;
    if (P->p == P->end)
        return 0;
    if (at_newline(P)) {
        skip_newline(P);
        return 0;
    }
    return 1;
}

// ---------------------------------------------------------------------------------------------
// Strings

static int buf_put(parser *P, const char *s, size_t n)
{
    if (P->blen + n + 1 > P->bcap) {
        size_t cap = P->bcap ? P->bcap : 64;
        while (cap < P->blen + n + 1)
            cap *= 2;
        char *b = realloc(P->buf, cap);
        if (!b)
            return oom(P);
        P->buf = b;
        P->bcap = cap;
    }
    memcpy(P->buf + P->blen, s, n);
    P->blen += n;
    P->buf[P->blen] = '\0';
    return 0;
}

static char *buf_take(parser *P)
{
    char *s = malloc(P->blen + 1);
    if (!s) {
        oom(P);
        return NULL;
    }
    memcpy(s, P->buf ? P->buf : "", P->blen);
    s[P->blen] = '\0';
    return s;
}

static int put_utf8(parser *P, uint32_t cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | cp >> 6);
        u[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | cp >> 12);
        u[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        u[0] = (char)(0xF0 | cp >> 18);
        u[1] = (char)(0x80 | (cp >> 12 & 0x3F));
        u[2] = (char)(0x80 | (cp >> 6 & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return buf_put(P, u, n);
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

// At the '\\' of an escape in a basic string: decodes it into the buffer.
static int parse_escape(parser *P, bool multiline, int open_line)
{
    const char *esc = P->p++;
    if (P->p == P->end)
        return fail_line(P, open_line, "unterminated string");
    char c = *P->p;
    const char *simple = NULL;
    switch (c) {
    case 'b': simple = "\b"; break;
    case 't': simple = "\t"; break;
    case 'n': simple = "\n"; break;
    case 'f': simple = "\f"; break;
    case 'r': simple = "\r"; break;
    case '"': simple = "\""; break;
    case '\\': simple = "\\"; break;
    default: break;
    }
    if (simple) {
        P->p++;
        return buf_put(P, simple, 1);
    }
    if (c == 'u' || c == 'U') {
        int n = c == 'u' ? 4 : 8;
        uint32_t cp = 0;
        P->p++;
        for (int k = 0; k < n; k++) {
            int d = P->p < P->end ? hex_digit(*P->p) : -1;
            if (d < 0)
                return fail_at(P, esc, "invalid escape: \\%c needs exactly %d hexadecimal digits",
                               c, n);
            cp = cp << 4 | (uint32_t)d;
            P->p++;
        }
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return fail_at(P, esc, "invalid escape: U+%04X is not a Unicode scalar value",
                           (unsigned)cp);
        if (cp == 0)
            return fail_at(P, esc, "U+0000 in a string is not supported");
        return put_utf8(P, cp);
    }
    if (multiline && (c == ' ' || c == '\t' || at_newline(P))) {
        // Line-ending backslash: trims the newline and all whitespace and newlines after it.
        skip_ws(P);
        if (P->p == P->end)
            return 0;  // the caller reports the missing closing delimiter
        if (!at_newline(P))
            return fail_at(P, esc, "invalid escape: '\\' followed by whitespace must end the line");
        while (at_ws(P) || at_newline(P))
            P->p += *P->p == '\r' ? 2 : 1;
        return 0;
    }
    char b[40];
    if (c >= 0x21 && c < 0x7f)
        return fail_at(P, esc, "invalid escape '\\%c' in a string", c);
    return fail_at(P, esc, "invalid escape: '\\' followed by %s", describe(P, P->p, b, sizeof b));
}

// Counts the run of quote characters q at P->p.
static int quote_run(const parser *P, char q)
{
    int n = 0;
    while (P->p + n < P->end && P->p[n] == q)
        n++;
    return n;
}

// At an opening quote: reads a basic or literal string, single- or multi-line (when allowed:
// not for keys), into a fresh allocation *out.
static int parse_string(parser *P, bool allow_multiline, char **out)
{
    const char q = *P->p;
    const bool literal = q == '\'';
    const int open_line = line_at(P, P->p);
    const bool multiline = allow_multiline && quote_run(P, q) >= 3;
    P->blen = 0;
    if (multiline) {
        P->p += 3;
        if (at_newline(P))
            skip_newline(P);  // a newline right after the opening delimiter is trimmed
    } else {
        P->p++;
    }
    for (;;) {
        if (P->p == P->end)
            return fail_line(P, open_line, "unterminated %sstring (no closing %s)",
                             multiline ? "multi-line " : "",
                             multiline ? (literal ? "'''" : "\"\"\"") : (literal ? "'" : "\""));
        const char *s = P->p;
        // Copy the longest run of ordinary characters at once.
        while (P->p < P->end && *P->p != q && !(*P->p == '\\' && !literal)
               && !is_control((unsigned char)*P->p))
            P->p++;
        if (P->p > s && buf_put(P, s, (size_t)(P->p - s)))
            return -1;
        if (P->p == P->end)
            continue;
        unsigned char c = (unsigned char)*P->p;
        if (c == (unsigned char)q) {
            if (!multiline) {
                P->p++;
                break;
            }
            int n = quote_run(P, q);
            if (n < 3) {
                if (buf_put(P, P->p, (size_t)n))
                    return -1;
                P->p += n;
                continue;
            }
            // """ closes; one or two more quotes right before it belong to the string.
            int extra = n - 3 > 2 ? 2 : n - 3;
            if (buf_put(P, P->p, (size_t)extra))
                return -1;
            P->p += 3 + extra;
            break;
        }
        if (c == '\\') {
            if (parse_escape(P, multiline, open_line))
                return -1;
            continue;
        }
        if (c == '\n' || c == '\r') {
            if (!multiline)
                return fail_at(P, P->p, "unterminated string (strings must close on the line they "
                               "open on; use %s for multi-line strings)",
                               literal ? "'''" : "\"\"\"");
            skip_newline(P);
            if (buf_put(P, "\n", 1))
                return -1;
            continue;
        }
        return fail_at(P, P->p, "control character U+%04X in a string (write it as an escape%s)",
                       (unsigned)c, literal ? ", in a basic string" : "");
    }
    *out = buf_take(P);
    return *out ? 0 : -1;
}

// ---------------------------------------------------------------------------------------------
// Keys

static void keypath_clear(keypath *kp)
{
    for (int i = 0; i < kp->n; i++)
        free(kp->part[i]);
    kp->n = 0;
}

static void keypath_free(keypath *kp)
{
    keypath_clear(kp);
    free(kp->part);
    kp->part = NULL;
    kp->cap = 0;
}

// Parses a dotted key at P->p into kp (cleared first): parts separated by '.', with whitespace
// allowed around the dots.
static int parse_key(parser *P, keypath *kp)
{
    keypath_clear(kp);
    for (;;) {
        char *part;
        const char *s = P->p;
        if (P->p < P->end && (*P->p == '"' || *P->p == '\'')) {
            if (parse_string(P, false, &part))
                return -1;
        } else {
            while (P->p < P->end && is_bare((unsigned char)*P->p))
                P->p++;
            if (P->p == s) {
                char b[40];
                return fail_at(P, P->p, "expected a key, found %s", describe(P, P->p, b, sizeof b));
            }
            part = malloc((size_t)(P->p - s) + 1);
            if (!part)
                return oom(P);
            memcpy(part, s, (size_t)(P->p - s));
            part[P->p - s] = '\0';
        }
        if (kp->n == kp->cap) {
            int cap = kp->cap ? 2 * kp->cap : 4;
            char **np = cap < INT_MAX / 2 ? realloc(kp->part, (size_t)cap * sizeof *np) : NULL;
            if (!np) {
                free(part);
                return oom(P);
            }
            kp->part = np;
            kp->cap = cap;
        }
        kp->part[kp->n++] = part;
        skip_ws(P);
        if (P->p < P->end && *P->p == '.') {
            P->p++;
            skip_ws(P);
            continue;
        }
        return 0;
    }
}

// ---------------------------------------------------------------------------------------------
// Numbers, booleans and the rest of the bare values

static bool is_digit_of(char c, int radix)
{
    int d = hex_digit(c);
    return d >= 0 && d < radix && (radix == 16 || (c >= '0' && c <= '9'));
}

// Scans digits of radix with single underscores between digits, from s; returns the end of the
// run, or NULL when there is no digit or an underscore is misplaced.
static const char *scan_digits(const char *s, const char *e, int radix)
{
    if (s == e || !is_digit_of(*s, radix))
        return NULL;
    s++;
    while (s < e) {
        if (*s == '_') {
            if (s + 1 == e || !is_digit_of(s[1], radix))
                return NULL;
            s += 2;
        } else if (is_digit_of(*s, radix)) {
            s++;
        } else {
            break;
        }
    }
    return s;
}

static bool is_date_like(const char *s, const char *e)
{
    int d = 0;
    while (s + d < e && s[d] >= '0' && s[d] <= '9')
        d++;
    return s + d < e && ((d == 4 && s[d] == '-') || (d == 2 && s[d] == ':'));
}

// Reads the bare value tok[0..n): a boolean, an integer or a float, into v.
static int parse_bare(parser *P, const char *tok, size_t n, pp_toml_value *v)
{
    const char *e = tok + n;
    int shown = n > 60 ? 60 : (int)n;
    const char *more = n > 60 ? "..." : "";
    if ((n == 4 && memcmp(tok, "true", 4) == 0) || (n == 5 && memcmp(tok, "false", 5) == 0)) {
        v->type = PP_TOML_BOOL;
        v->u.b = n == 4;
        return 0;
    }
    const char *s = tok;
    bool neg = false, sign = false;
    if (s < e && (*s == '+' || *s == '-')) {
        neg = *s == '-';
        sign = true;
        s++;
    }
    if (e - s == 3 && (memcmp(s, "inf", 3) == 0 || memcmp(s, "nan", 3) == 0)) {
        v->type = PP_TOML_FLOAT;
        v->u.f = s[0] == 'i' ? (double)INFINITY : (double)NAN;
        v->u.f = copysign(v->u.f, neg ? -1.0 : 1.0);
        return 0;
    }
    if (e - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o' || s[1] == 'b')) {
        int radix = s[1] == 'x' ? 16 : s[1] == 'o' ? 8 : 2;
        if (sign)
            return fail_at(P, tok, "invalid integer '%.*s%s': hexadecimal, octal and binary "
                           "integers take no sign", shown, tok, more);
        const char *q = scan_digits(s + 2, e, radix);
        if (!q || q != e)
            return fail_at(P, tok, "invalid %s integer '%.*s%s'",
                           radix == 16 ? "hexadecimal" : radix == 8 ? "octal" : "binary", shown,
                           tok, more);
        uint64_t x = 0;
        for (const char *c = s + 2; c < e; c++) {
            if (*c == '_')
                continue;
            if (x > (uint64_t)INT64_MAX / (uint64_t)radix
                || x * (uint64_t)radix + (uint64_t)hex_digit(*c) > (uint64_t)INT64_MAX)
                return fail_at(P, tok, "integer '%.*s%s' is out of range (int64 holds at most "
                               "9223372036854775807)", shown, tok, more);
            x = x * (uint64_t)radix + (uint64_t)hex_digit(*c);
        }
        v->type = PP_TOML_INT;
        v->u.i = (int64_t)x;
        return 0;
    }
    const char *q = scan_digits(s, e, 10);
    if (!q)
        goto invalid;
    if (s[0] == '0' && q - s > 1)
        return fail_at(P, tok, "leading zeros are not allowed in '%.*s%s'", shown, tok, more);
    if (q == e) {
        // Accumulate negatively: -2^63 has no positive counterpart.
        int64_t x = 0;
        for (const char *c = s; c < e; c++) {
            if (*c == '_')
                continue;
            int d = *c - '0';
            if (x < (INT64_MIN + d) / 10)
                return fail_at(P, tok, "integer '%.*s%s' is out of range (int64 holds "
                               "-9223372036854775808 to 9223372036854775807)", shown, tok, more);
            x = x * 10 - d;
        }
        if (!neg && x == INT64_MIN)
            return fail_at(P, tok, "integer '%.*s%s' is out of range (int64 holds "
                           "-9223372036854775808 to 9223372036854775807)", shown, tok, more);
        v->type = PP_TOML_INT;
        v->u.i = neg ? x : -x;
        return 0;
    }
    bool frac = false, exp = false;
    if (*q == '.') {
        q = scan_digits(q + 1, e, 10);
        if (!q)
            goto invalid;
        frac = true;
    }
    if (q < e && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < e && (*q == '+' || *q == '-'))
            q++;
        q = scan_digits(q, e, 10);  // the exponent may have leading zeros
        if (!q)
            goto invalid;
        exp = true;
    }
    if (q != e || !(frac || exp))
        goto invalid;
    {
        char *digits = malloc(n + 1);
        if (!digits)
            return oom(P);
        size_t m = 0;
        for (const char *c = tok; c < e; c++)
            if (*c != '_')
                digits[m++] = *c;
        digits[m] = '\0';
        char *end;
        // strtod rounds correctly (glibc) in the C locale, which precprobe never changes.
        double x = strtod(digits, &end);
        bool whole = *end == '\0';
        free(digits);
        if (!whole)
            goto invalid;
        if (isinf(x))
            return fail_at(P, tok, "float '%.*s%s' is too large for binary64 (largest finite "
                           "1.7976931348623157e308); write inf if infinity is meant",
                           shown, tok, more);
        v->type = PP_TOML_FLOAT;
        v->u.f = x;
        return 0;
    }
invalid:
    if (!sign && tok[0] != '.' && (tok[0] < '0' || tok[0] > '9'))
        return fail_at(P, tok, "invalid value '%.*s%s' (strings must be quoted; booleans are "
                       "true and false)", shown, tok, more);
    return fail_at(P, tok, "invalid number '%.*s%s'", shown, tok, more);
}

// ---------------------------------------------------------------------------------------------
// Values, arrays, inline tables, key/value pairs

static int parse_value(parser *P, int depth, const pathctx *ctx, pp_toml_value **out);

static const char *type_article(const pp_toml_value *v)
{
    switch (v->type) {
    case PP_TOML_STRING: return "a string";
    case PP_TOML_INT: return "an integer";
    case PP_TOML_FLOAT: return "a float";
    case PP_TOML_BOOL: return "a boolean";
    case PP_TOML_ARRAY: return v->flags & F_TABLES ? "an array of tables" : "an array";
    case PP_TOML_TABLE: return v->flags & F_INLINE ? "an inline table" : "a table";
    }
    return "a value";
}

// Defines the dotted key kp = <value at P->p> in table t, whose own path is ctx, as part of
// `section`: checks that dotted keys may add to every table on the way, creates the missing
// ones, checks the last part is new, then parses the value.
static int define_key(parser *P, pp_toml_value *t, int section, const keypath *kp,
                      const pathctx *ctx, const char *key_pos)
{
    pathstr a, b;
    int line = line_at(P, key_pos);
    pp_toml_value *cur = t;
    for (int i = 0; i + 1 < kp->n; i++) {
        int k = table_find(cur, kp->part[i]);
        pp_toml_value *v = k >= 0 ? cur->u.tab.e[k].val : NULL;
        if (!v) {
            if (cur->depth + 1 > PP_TOML_MAX_DEPTH)
                return fail_line(P, line, "key '%s' nests deeper than %d levels",
                                 path_plus(&a, ctx, kp, kp->n), PP_TOML_MAX_DEPTH);
            v = new_value(PP_TOML_TABLE, line, cur->depth + 1);
            char *key = strdup(kp->part[i]);
            if (!v || !key) {
                free(v);
                free(key);
                return oom(P);
            }
            v->flags = F_DOTTED;
            v->section = section;
            if (table_add(cur, key, v)) {
                free(v);
                return oom(P);
            }
        } else if (v->type != PP_TOML_TABLE) {
            return fail_line(P, line, "cannot define key '%s': '%s' is %s (line %d), not a table",
                             path_plus(&a, ctx, kp, kp->n), path_plus(&b, ctx, kp, i + 1),
                             type_article(v), v->line);
        } else if (v->flags & F_INLINE) {
            return fail_line(P, line, "cannot add key '%s' to inline table '%s' (line %d): an "
                             "inline table is complete once closed", path_plus(&a, ctx, kp, kp->n),
                             path_plus(&b, ctx, kp, i + 1), v->line);
        } else if (v->flags & F_HEADER) {
            return fail_line(P, line, "cannot add key '%s' with a dotted key: table [%s] was "
                             "defined by a header on line %d", path_plus(&a, ctx, kp, kp->n),
                             path_plus(&b, ctx, kp, i + 1), v->line);
        } else if ((v->flags & F_DOTTED) && v->section != section) {
            return fail_line(P, line, "cannot add key '%s': table '%s' was defined by dotted keys "
                             "on line %d, in another section", path_plus(&a, ctx, kp, kp->n),
                             path_plus(&b, ctx, kp, i + 1), v->line);
        } else if (v->flags & F_IMPLICIT) {
            // Dotted keys may define a table so far only named on the way to a sub-table; it
            // is then defined here, and a later [header] for it is an error.
            v->flags = F_DOTTED;
            v->section = section;
            v->line = line;
        }
        cur = v;
    }
    const char *last = kp->part[kp->n - 1];
    int k = table_find(cur, last);
    if (k >= 0)
        return fail_line(P, line, "duplicate key '%s' (first defined on line %d)",
                         path_plus(&a, ctx, kp, kp->n), cur->u.tab.e[k].val->line);
    pathctx vctx = {ctx, kp, kp->n, 0};
    pp_toml_value *v;
    if (parse_value(P, cur->depth + 1, &vctx, &v))
        return -1;
    char *key = strdup(last);
    if (!key || table_add(cur, key, v)) {
        free_value(v);
        return oom(P);
    }
    return 0;
}

static int parse_array(parser *P, int depth, const pathctx *ctx, pp_toml_value *a)
{
    int open_line = a->line;
    P->p++;  // '['
    for (int i = 0;; i++) {
        if (skip_blank(P))
            return -1;
        if (P->p == P->end)
            goto unterminated;
        if (*P->p == ']') {
            P->p++;
            return 0;
        }
        pathctx ectx = {ctx, NULL, 0, i};
        pp_toml_value *v;
        if (parse_value(P, depth + 1, &ectx, &v))
            return -1;
        if (array_push(a, v)) {
            free_value(v);
            return oom(P);
        }
        if (skip_blank(P))
            return -1;
        if (P->p == P->end)
            goto unterminated;
        if (*P->p == ',') {
            P->p++;
            continue;
        }
        if (*P->p == ']') {
            P->p++;
            return 0;
        }
        char b[40];
        pathstr ps;
        return fail_at(P, P->p, "expected ',' or ']' after element %d of array '%s', found %s", i,
                       path_of(&ps, ctx), describe(P, P->p, b, sizeof b));
    }
unterminated:;
    pathstr ps;
    return fail_line(P, open_line, "unterminated array '%s' (no closing ']')", path_of(&ps, ctx));
}

static int parse_inline_table(parser *P, const pathctx *ctx, pp_toml_value *t)
{
    int section = P->next_section++;
    keypath kp = {0};
    pathstr ps;
    char b[40];
    int rc = -1;
    P->p++;  // '{'
    skip_ws(P);
    if (P->p < P->end && *P->p == '}') {
        P->p++;
        return 0;
    }
    for (;;) {
        skip_ws(P);
        if (P->p < P->end && *P->p == '}') {
            fail_at(P, P->p, "trailing comma in inline table '%s' (not allowed in TOML 1.0)",
                    path_of(&ps, ctx));
            goto out;
        }
        if (P->p == P->end || at_newline(P)) {
            fail_at(P, P->p, "inline table '%s' must close on the line it opens on",
                    path_of(&ps, ctx));
            goto out;
        }
        const char *key_pos = P->p;
        if (parse_key(P, &kp))
            goto out;
        if (P->p == P->end || *P->p != '=') {
            fail_at(P, P->p, "expected '=' after key '%s', found %s",
                    path_plus(&ps, ctx, &kp, kp.n), describe(P, P->p, b, sizeof b));
            goto out;
        }
        P->p++;
        skip_ws(P);
        if (define_key(P, t, section, &kp, ctx, key_pos))
            goto out;
        skip_ws(P);
        if (P->p < P->end && *P->p == ',') {
            P->p++;
            continue;
        }
        if (P->p < P->end && *P->p == '}') {
            P->p++;
            rc = 0;
            goto out;
        }
        if (P->p == P->end || at_newline(P))
            fail_at(P, P->p, "inline table '%s' must close on the line it opens on",
                    path_of(&ps, ctx));
        else
            fail_at(P, P->p, "expected ',' or '}' in inline table '%s', found %s",
                    path_of(&ps, ctx), describe(P, P->p, b, sizeof b));
        goto out;
    }
out:
    keypath_free(&kp);
    return rc;
}

// Parses the value at P->p, to be stored at depth `depth`, into a fresh *out.
static int parse_value(parser *P, int depth, const pathctx *ctx, pp_toml_value **out)
{
    pathstr ps;
    char b[40];
    *out = NULL;
    int line = line_at(P, P->p);
    if (depth > PP_TOML_MAX_DEPTH)
        return fail_line(P, line, "value of '%s' nests deeper than %d levels", path_of(&ps, ctx),
                         PP_TOML_MAX_DEPTH);
    if (P->p == P->end || at_newline(P) || *P->p == '#')
        return fail_line(P, line, "missing value for key '%s'", path_of(&ps, ctx));
    char c = *P->p;
    pp_toml_value *v = new_value(PP_TOML_STRING, line, depth);
    if (!v)
        return oom(P);
    int rc;
    if (c == '"' || c == '\'') {
        rc = parse_string(P, true, &v->u.s);
    } else if (c == '[') {
        v->type = PP_TOML_ARRAY;
        rc = parse_array(P, depth, ctx, v);
    } else if (c == '{') {
        v->type = PP_TOML_TABLE;
        v->flags = F_INLINE;
        rc = parse_inline_table(P, ctx, v);
    } else if (is_bare((unsigned char)c) || c == '+' || c == '.') {
        v->type = PP_TOML_BOOL;  // a placeholder that owns nothing, until parse_bare sets it
        const char *s = P->p;
        if (is_date_like(s, P->end)) {
            rc = fail_line(P, line, "dates and times are not supported (value of key '%s')",
                           path_of(&ps, ctx));
        } else {
            while (P->p < P->end && (is_bare((unsigned char)*P->p) || *P->p == '+'
                                     || *P->p == '.'))
                P->p++;
            rc = parse_bare(P, s, (size_t)(P->p - s), v);
        }
    } else {
        rc = fail_line(P, line, "expected a value for key '%s', found %s", path_of(&ps, ctx),
                       describe(P, P->p, b, sizeof b));
    }
    if (rc) {
        free_value(v);
        return -1;
    }
    *out = v;
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Headers and the document

// At '[': reads [key] or [[key]] into hdr and makes its table the current one (*cur).
static int parse_header(parser *P, pp_toml_value *root, keypath *hdr, pp_toml_value **cur)
{
    pathstr a, b;
    char d[40];
    const bool array = P->p + 1 < P->end && P->p[1] == '[';
    const int line = line_at(P, P->p);
    P->p += array ? 2 : 1;
    skip_ws(P);
    if (parse_key(P, hdr))
        return -1;
    pathctx hctx = {NULL, hdr, hdr->n, 0};
    const char *path = path_of(&a, &hctx);
    if (P->p == P->end || *P->p != ']' || (array && (P->p + 1 == P->end || P->p[1] != ']')))
        return fail_at(P, P->p, "expected '%s' to close header %s%s%s, found %s",
                       array ? "]]" : "]", array ? "[[" : "[", path, array ? "]]" : "]",
                       describe(P, P->p, d, sizeof d));
    P->p += array ? 2 : 1;

    pp_toml_value *t = root;
    for (int i = 0; i + 1 < hdr->n; i++) {
        int k = table_find(t, hdr->part[i]);
        pp_toml_value *v = k >= 0 ? t->u.tab.e[k].val : NULL;
        if (!v) {
            if (t->depth + 1 > PP_TOML_MAX_DEPTH)
                return fail_line(P, line, "table [%s] nests deeper than %d levels", path,
                                 PP_TOML_MAX_DEPTH);
            v = new_value(PP_TOML_TABLE, line, t->depth + 1);
            char *key = strdup(hdr->part[i]);
            if (!v || !key) {
                free(v);
                free(key);
                return oom(P);
            }
            v->flags = F_IMPLICIT;
            if (table_add(t, key, v)) {
                free(v);
                return oom(P);
            }
        } else if (v->type == PP_TOML_ARRAY && (v->flags & F_TABLES)) {
            v = v->u.arr.item[v->u.arr.n - 1];  // [[a]] then [a.b]: b goes in the last a
        } else if (v->type != PP_TOML_TABLE || (v->flags & F_INLINE)) {
            return fail_line(P, line, "cannot define table [%s]: '%s' is %s (line %d)%s", path,
                             path_plus(&b, NULL, hdr, i + 1), type_article(v), v->line,
                             v->type == PP_TOML_TABLE ? ", complete once closed" : "");
        }
        t = v;
    }
    const char *last = hdr->part[hdr->n - 1];
    int k = table_find(t, last);
    pp_toml_value *v = k >= 0 ? t->u.tab.e[k].val : NULL;
    if (v && !array) {
        if (v->type == PP_TOML_TABLE && (v->flags & F_IMPLICIT)) {
            v->flags = F_HEADER;
            v->line = line;
            *cur = v;
            return 0;
        }
        if (v->type == PP_TOML_TABLE && (v->flags & F_HEADER))
            return fail_line(P, line, "table [%s] is defined twice (first on line %d)", path,
                             v->line);
        if (v->type == PP_TOML_TABLE && (v->flags & F_DOTTED))
            return fail_line(P, line, "table [%s] was already defined by dotted keys on line %d",
                             path, v->line);
        if (v->type == PP_TOML_ARRAY && (v->flags & F_TABLES))
            return fail_line(P, line, "[%s] is an array of tables (line %d); add an element with "
                             "[[%s]]", path, v->line, path);
        return fail_line(P, line, "cannot define table [%s]: key '%s' is already %s (line %d)",
                         path, path, type_article(v), v->line);
    }
    if (v && !(v->type == PP_TOML_ARRAY && (v->flags & F_TABLES)))
        return fail_line(P, line, "cannot append to [[%s]]: key '%s' is already %s (line %d)",
                         path, path, type_article(v), v->line);
    int depth = t->depth + 1 + (array ? 1 : 0);
    if (depth > PP_TOML_MAX_DEPTH)
        return fail_line(P, line, "table [%s] nests deeper than %d levels", path,
                         PP_TOML_MAX_DEPTH);
    pp_toml_value *nt = new_value(PP_TOML_TABLE, line, depth);
    if (!nt)
        return oom(P);
    nt->flags = F_HEADER;
    if (array && !v) {
        v = new_value(PP_TOML_ARRAY, line, t->depth + 1);
        char *key = strdup(last);
        if (!v || !key) {
            free(v);
            free(key);
            free(nt);
            return oom(P);
        }
        v->flags = F_TABLES;
        if (table_add(t, key, v)) {
            free(v);
            free(nt);
            return oom(P);
        }
    }
    if (array) {
        if (array_push(v, nt)) {
            free(nt);
            return oom(P);
        }
    } else {
        char *key = strdup(last);
        if (!key || table_add(t, key, nt)) {
            free(nt);
            return oom(P);
        }
    }
    *cur = nt;
    return 0;
}

static int parse_document(parser *P, pp_toml_value *root)
{
    keypath hdr = {0}, kp = {0};
    pp_toml_value *cur = root;
    int section = P->next_section++;
    pathstr ps;
    char b[40];
    int rc = -1;
    for (;;) {
        skip_ws(P);
        if (P->p == P->end)
            break;
        if (at_newline(P)) {
            skip_newline(P);
            continue;
        }
        if (*P->p == '#') {
            if (skip_comment(P))
                goto out;
            continue;
        }
        pathctx hctx = {NULL, &hdr, hdr.n, 0};
        if (*P->p == '[') {
            if (parse_header(P, root, &hdr, &cur))
                goto out;
            section = P->next_section++;
            hctx.nkey = hdr.n;
            int e = at_eol(P);
            if (e > 0)
                fail_at(P, P->p, "unexpected %s after header [%s]; expected a comment or the end "
                        "of the line", describe(P, P->p, b, sizeof b), path_of(&ps, &hctx));
            if (e)
                goto out;
            continue;
        }
        const char *key_pos = P->p;
        if (parse_key(P, &kp))
            goto out;
        if (P->p == P->end || *P->p != '=') {
            fail_at(P, P->p, "expected '=' after key '%s', found %s",
                    path_plus(&ps, &hctx, &kp, kp.n), describe(P, P->p, b, sizeof b));
            goto out;
        }
        P->p++;
        skip_ws(P);
        if (define_key(P, cur, section, &kp, &hctx, key_pos))
            goto out;
        int e = at_eol(P);
        if (e > 0)
            fail_at(P, P->p, "unexpected %s after the value of key '%s'; expected a comment or "
                    "the end of the line", describe(P, P->p, b, sizeof b),
                    path_plus(&ps, &hctx, &kp, kp.n));
        if (e)
            goto out;
    }
    rc = 0;
out:
    keypath_free(&hdr);
    keypath_free(&kp);
    return rc;
}

int pp_toml_parse(const char *text, size_t len, const char *filename, pp_toml_value **root,
                  pp_error *err)
{
    *root = NULL;
    parser P = {0};
    P.begin = P.p = P.lc_pos = text ? text : "";
    P.end = P.begin + (text ? len : 0);
    P.file = filename ? filename : "<input>";
    P.err = err;
    P.lc_line = 1;
    if (len > PP_TOML_MAX_BYTES)
        return pp_fail(err, PP_ERR_INPUT, "%s: %zu bytes is larger than the %zu MiB a case file "
                       "may have", P.file, len, PP_TOML_MAX_BYTES >> 20);
    if (check_encoding(&P))
        return PP_ERR_INPUT;
    P.lc_pos = P.begin;
    P.lc_line = 1;
    pp_toml_value *r = new_value(PP_TOML_TABLE, 1, 0);
    if (!r)
        return oom(&P), PP_ERR_RUNTIME;
    r->flags = F_HEADER;
    int rc = parse_document(&P, r);
    free(P.buf);
    if (rc) {
        free_value(r);
        return P.code;
    }
    *root = r;
    return PP_OK;
}

int pp_toml_parse_file(const char *path, pp_toml_value **root, pp_error *err)
{
    *root = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return pp_fail(err, PP_ERR_INPUT, "%s: cannot read: %s", path, strerror(errno));
    char *text = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            if (cap > PP_TOML_MAX_BYTES) {
                break;  // pp_toml_parse reports the size
            }
            cap = cap ? 2 * cap : 65536;
            char *t = realloc(text, cap);
            if (!t) {
                free(text);
                fclose(f);
                return pp_fail(err, PP_ERR_RUNTIME, "%s: out of memory while reading", path);
            }
            text = t;
        }
        size_t got = fread(text + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    int e = errno;
    fclose(f);
    if (bad) {
        free(text);
        return pp_fail(err, PP_ERR_INPUT, "%s: cannot read: %s", path, strerror(e));
    }
    int rc = pp_toml_parse(text, n, path, root, err);
    free(text);
    return rc;
}

// ---------------------------------------------------------------------------------------------
// Reading the tree

pp_toml_type pp_toml_type_of(const pp_toml_value *v)
{
    return v->type;
}

const char *pp_toml_type_name(pp_toml_type t)
{
    switch (t) {
    case PP_TOML_STRING: return "string";
    case PP_TOML_INT: return "integer";
    case PP_TOML_FLOAT: return "float";
    case PP_TOML_BOOL: return "boolean";
    case PP_TOML_ARRAY: return "array";
    case PP_TOML_TABLE: return "table";
    }
    return "?";
}

int pp_toml_line(const pp_toml_value *v)
{
    return v ? v->line : 0;
}

int pp_toml_table_size(const pp_toml_value *t)
{
    return t && t->type == PP_TOML_TABLE ? t->u.tab.n : 0;
}

const char *pp_toml_table_key(const pp_toml_value *t, int i)
{
    return i >= 0 && i < pp_toml_table_size(t) ? t->u.tab.e[i].key : NULL;
}

const pp_toml_value *pp_toml_table_value(const pp_toml_value *t, int i)
{
    return i >= 0 && i < pp_toml_table_size(t) ? t->u.tab.e[i].val : NULL;
}

const pp_toml_value *pp_toml_get(const pp_toml_value *t, const char *key)
{
    if (!t || t->type != PP_TOML_TABLE || !key)
        return NULL;
    int k = table_find(t, key);
    return k >= 0 ? t->u.tab.e[k].val : NULL;
}

int pp_toml_array_size(const pp_toml_value *a)
{
    return a && a->type == PP_TOML_ARRAY ? a->u.arr.n : 0;
}

const pp_toml_value *pp_toml_array_at(const pp_toml_value *a, int i)
{
    return i >= 0 && i < pp_toml_array_size(a) ? a->u.arr.item[i] : NULL;
}

const char *pp_toml_as_string(const pp_toml_value *v)
{
    return v && v->type == PP_TOML_STRING ? v->u.s : NULL;
}

int pp_toml_as_int(const pp_toml_value *v, int64_t *out)
{
    if (!v || v->type != PP_TOML_INT)
        return -1;
    *out = v->u.i;
    return 0;
}

int pp_toml_as_bool(const pp_toml_value *v, bool *out)
{
    if (!v || v->type != PP_TOML_BOOL)
        return -1;
    *out = v->u.b;
    return 0;
}

int pp_toml_as_double(const pp_toml_value *v, double *out)
{
    if (v && v->type == PP_TOML_FLOAT) {
        *out = v->u.f;
        return 0;
    }
    if (!v || v->type != PP_TOML_INT)
        return -1;
    // Exact when the conversion round-trips; 2^63 (the rounding of INT64_MAX) is out of range
    // for the conversion back, so it is checked first.
    double d = (double)v->u.i;
    if (d >= 0x1p63 || (int64_t)d != v->u.i)
        return -2;
    *out = d;
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Checking keys against a schema

int pp_toml_check_keys(const pp_toml_value *t, const char *filename, const char *where,
                       const char *const *names, int n, pp_error *err)
{
    for (int i = 0; i < pp_toml_table_size(t); i++) {
        const char *key = t->u.tab.e[i].key;
        bool known = false;
        for (int j = 0; j < n && !known; j++)
            known = strcmp(key, names[j]) == 0;
        if (known)
            continue;
        char shown[160];
        size_t len = 0;
        put_key(shown, sizeof shown, &len, key);
        const char *near = pp_nearest_name(key, names, n);
        return pp_fail(err, PP_ERR_INPUT, "%s:%d: unknown key '%s' in %s%s%s%s",
                       filename ? filename : "<input>", t->u.tab.e[i].val->line, shown,
                       where ? where : "the top level", near ? " (did you mean '" : "",
                       near ? near : "", near ? "'?)" : "");
    }
    return PP_OK;
}
