// sweep.c — a [sweep] expanded into its points (sweep.h): the keys checked against the op's
// parameters and knobs, then one case text per combination, each read as a case.
#include "pipeline/sweep.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/nearest.h"
#include "io/printable.h"
#include "io/toml.h"

// ---- values --------------------------------------------------------------------------------

// The shortest %g spelling of v that reads back as v (0.1, not 0.10000000000000001).
static void shortest(double v, char *buf, size_t n)
{
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, n, "%.*g", p, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

// A string as a TOML basic string: quotes, backslashes and control characters escaped.
static void toml_quote(const char *s, char *buf, size_t n)
{
    size_t at = 0;
    if (n < 3)
        return;
    buf[at++] = '"';
    for (; *s && at + 8 < n; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            at += (size_t)snprintf(buf + at, n - at, "\\%c", ch);
        else if (ch < 0x20 || ch == 0x7f)
            at += (size_t)snprintf(buf + at, n - at, "\\u%04x", ch);
        else
            buf[at++] = (char)ch;
    }
    buf[at++] = '"';
    buf[at] = '\0';
}

// One value of a [sweep] list: its TOML spelling for the point's text, its text for the point's
// name, and its number when it has one. Returns -1 for an array or a table.
static int read_value(const pp_toml_value *v, pp_sweep_key *k, int j)
{
    int64_t iv;
    double dv;
    bool bv;
    char *lit = k->literal[j], *txt = k->text[j];
    switch (pp_toml_type_of(v)) {
    case PP_TOML_INT:
        pp_toml_as_int(v, &iv);
        snprintf(lit, PP_NAME_MAX, "%lld", (long long)iv);
        snprintf(txt, PP_NAME_MAX, "%lld", (long long)iv);
        k->number[j] = (double)iv;
        return 0;
    case PP_TOML_FLOAT:
        pp_toml_as_double(v, &dv);
        k->number[j] = dv;
        if (isnan(dv) || isinf(dv)) {
            snprintf(txt, PP_NAME_MAX, "%s", isnan(dv) ? "nan" : dv > 0 ? "inf" : "-inf");
        } else {
            shortest(dv, txt, PP_NAME_MAX);
        }
        // a TOML float needs a '.' or an exponent: 2.0, not 2
        memcpy(lit, txt, strlen(txt) + 1);
        if (!strpbrk(lit, ".eni"))
            strcat(lit, ".0");
        return 0;
    case PP_TOML_BOOL:
        pp_toml_as_bool(v, &bv);
        snprintf(lit, PP_NAME_MAX, "%s", bv ? "true" : "false");
        snprintf(txt, PP_NAME_MAX, "%s", bv ? "true" : "false");
        k->numeric = 0;
        return 0;
    case PP_TOML_STRING:
        toml_quote(pp_toml_as_string(v), lit, PP_NAME_MAX);
        snprintf(txt, PP_NAME_MAX, "%s", pp_toml_as_string(v));
        k->numeric = 0;
        return 0;
    default:
        return -1;
    }
}

// ---- the [sweep] table's place in the text -------------------------------------------------

// The 1-based line of the first table header after line `after` ('[' first on a line outside
// any array or string), or one past the last line when none follows: where [sweep] ends.
static int next_header_line(const char *t, size_t len, int after)
{
    int line = 1, depth = 0, line_start = 1;
    size_t i = 0;
    while (i < len) {
        char ch = t[i];
        if (line_start && line > after && depth == 0) {
            size_t j = i;
            while (j < len && (t[j] == ' ' || t[j] == '\t'))
                j++;
            if (j < len && t[j] == '[')
                return line;
        }
        line_start = 0;
        if (ch == '\n') {
            line++;
            line_start = 1;
            i++;
        } else if (ch == '#') {
            while (i < len && t[i] != '\n')
                i++;
        } else if (ch == '"' || ch == '\'') {
            int triple = i + 2 < len && t[i + 1] == ch && t[i + 2] == ch;
            i += triple ? 3 : 1;
            while (i < len) {
                if (ch == '"' && t[i] == '\\' && i + 1 < len) {
                    if (t[i + 1] == '\n')
                        line++;
                    i += 2;
                    continue;
                }
                if (t[i] == '\n') {
                    if (!triple)
                        break;  // an unterminated one-line string: TOML refused it already
                    line++;
                }
                if (t[i] == ch && (!triple || (i + 2 < len && t[i + 1] == ch && t[i + 2] == ch))) {
                    i += triple ? 3 : 1;
                    break;
                }
                i++;
            }
        } else {
            if (ch == '[')
                depth++;
            else if (ch == ']' && depth > 0)
                depth--;
            i++;
        }
    }
    return line + 1;
}

// Whether line `line` of the text starts (after blanks) with a single '[': a [table] header.
static int is_header_line(const char *t, size_t len, int line)
{
    size_t i = 0;
    for (int l = 1; l < line && i < len; i++)
        l += t[i] == '\n';
    while (i < len && (t[i] == ' ' || t[i] == '\t'))
        i++;
    return i + 1 < len && t[i] == '[' && t[i + 1] != '[';
}

// The text of point `combo`: lines before the [sweep] header as they are, the header as [point],
// each key's line as "KEY = VALUE", the table's other lines empty, the lines after as they are.
static char *point_text(const char *t, size_t len, const pp_sweep *s, int end_line, const int *value, size_t *out_len)
{
    size_t cap = len + 64 + (size_t)s->n_keys * (2 * PP_NAME_MAX + 8);
    char *buf = malloc(cap);
    if (!buf)
        return NULL;
    size_t at = 0, i = 0;
    int line = 1;
    while (i < len || line <= s->line) {
        size_t eol = i;
        while (eol < len && t[eol] != '\n')
            eol++;
        if (line < s->line || line >= end_line) {
            memcpy(buf + at, t + i, eol - i);
            at += eol - i;
        } else if (line == s->line) {
            at += (size_t)snprintf(buf + at, cap - at, "[point]");
        } else {
            for (int k = 0; k < s->n_keys; k++)
                if (s->keys[k].line == line)
                    at += (size_t)snprintf(buf + at, cap - at, "%s = %s", s->keys[k].name,
                                           s->keys[k].literal[value[k]]);
        }
        if (eol < len)
            buf[at++] = '\n';
        i = eol + 1;
        line++;
        if (eol >= len)
            break;
    }
    buf[at] = '\0';
    *out_len = at;
    return buf;
}

// ---- reading -------------------------------------------------------------------------------

static int add_note(pp_sweep *s, const char *line)
{
    size_t old = s->notes ? strlen(s->notes) : 0, add = strlen(line);
    char *grown = realloc(s->notes, old + add + 2);
    if (!grown)
        return -1;
    memcpy(grown + old, line, add);
    grown[old + add] = '\n';
    grown[old + add + 1] = '\0';
    s->notes = grown;
    return 0;
}

// A message without its leading "FILE:LINE: ", to quote inside another.
static const char *without_place(const char *msg, const char *path)
{
    size_t n = strlen(path);
    if (strncmp(msg, path, n) || msg[n] != ':')
        return msg;
    const char *p = msg + n + 1;
    while (isdigit((unsigned char)*p))
        p++;
    return p[0] == ':' && p[1] == ' ' ? p + 2 : msg;
}

static int name_is_safe(const char *name)
{
    for (const char *p = name; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("_-+=.,", *p))
            return 0;
    return name[0] != '\0' && name[0] != '.';
}

static int read_keys(pp_sweep *s, const pp_toml_value *sw, const pp_op *op, pp_error *err)
{
    const char *names[2 + PP_MAX_PARAMS + PP_MAX_KNOBS];
    int n = 0;
    names[n++] = "skip_invalid";
    n += op ? pp_sweep_key_names(op, names + 1) : 0;
    for (int i = 0; i < pp_toml_table_size(sw); i++) {
        const char *key = pp_toml_table_key(sw, i);
        const pp_toml_value *v = pp_toml_table_value(sw, i);
        int line = pp_toml_line(v), known = 0;
        for (int j = 0; j < n; j++)
            known |= !strcmp(names[j], key);
        if (op && !known) {
            char allowed[1024] = "", hint[PP_NAME_MAX + 32] = "";
            size_t at = 0;
            for (int j = 0; j < n && at < sizeof allowed; j++)
                at += (size_t)snprintf(allowed + at, sizeof allowed - at, j ? ", %s" : "%s", names[j]);
            const char *near = pp_nearest_name(key, names, n);
            if (near)
                snprintf(hint, sizeof hint, "did you mean '%s'? ", near);
            char safe[PP_NAME_MAX];
            pp_printable(key, safe, sizeof safe);
            return pp_fail(err, PP_ERR_INPUT, "%s:%d: unknown key '%s' in [sweep] (%sallowed: %s)", s->path, line,
                           safe, hint, allowed);
        }
        if (!strcmp(key, "skip_invalid")) {
            bool b;
            if (pp_toml_as_bool(v, &b))
                return pp_fail(err, PP_ERR_INPUT, "%s:%d: 'skip_invalid' must be a boolean, not %s %s", s->path,
                               line, pp_toml_type_of(v) == PP_TOML_INT ? "an" : "a",
                               pp_toml_type_name(pp_toml_type_of(v)));
            s->skip_invalid = b;
            continue;
        }
        if (!op)
            continue;  // the case's [case] op is wrong: reading the first point says how
        if (s->n_keys == PP_SWEEP_MAX_KEYS)
            return pp_fail(err, PP_ERR_INPUT, "%s:%d: [sweep] takes at most %d keys", s->path, line,
                           PP_SWEEP_MAX_KEYS);
        int nv = pp_toml_array_size(v);
        if (pp_toml_type_of(v) != PP_TOML_ARRAY || nv < 1 || nv > PP_SWEEP_MAX_VALUES)
            return pp_fail(err, PP_ERR_INPUT, "%s:%d: [sweep] '%s' must be a list of 1 to %d values, e.g. %s = [1, 2]",
                           s->path, line, key, PP_SWEEP_MAX_VALUES, key);
        pp_sweep_key *k = &s->keys[s->n_keys++];
        snprintf(k->name, sizeof k->name, "%s", key);
        k->line = line;
        k->n_values = nv;
        k->numeric = 1;
        for (int j = 0; j < nv; j++) {
            const pp_toml_value *e = pp_toml_array_at(v, j);
            if (read_value(e, k, j))
                return pp_fail(err, PP_ERR_INPUT, "%s:%d: each value of [sweep] '%s' must be a number, string or "
                               "boolean, not %s %s", s->path, pp_toml_line(e), key,
                               pp_toml_type_of(e) == PP_TOML_ARRAY ? "an" : "a", pp_toml_type_name(pp_toml_type_of(e)));
            for (int m = 0; m < j; m++)
                if (!strcmp(k->literal[m], k->literal[j])) {
                    char safe[PP_NAME_MAX];
                    pp_printable(k->text[j], safe, sizeof safe);
                    return pp_fail(err, PP_ERR_INPUT, "%s:%d: [sweep] '%s' lists %s twice", s->path,
                                   pp_toml_line(e), key, safe);
                }
        }
        for (int m = 0; m < s->n_keys - 1; m++)
            if (s->keys[m].line == line)
                return pp_fail(err, PP_ERR_INPUT, "%s:%d: write one [sweep] key per line", s->path, line);
    }
    return 0;
}

// Reads every combination as a case; keeps the valid ones.
static int expand(pp_sweep *s, const char *text, size_t len, int end_line, pp_error *err)
{
    long total = 1;
    for (int k = 0; k < s->n_keys; k++) {
        total *= s->keys[k].n_values;
        if (total > PP_SWEEP_MAX_POINTS)
            return pp_fail(err, PP_ERR_INPUT, "%s:%d: [sweep] makes more than %d points", s->path, s->line,
                           PP_SWEEP_MAX_POINTS);
    }
    s->points = calloc((size_t)total, sizeof *s->points);
    if (!s->points)
        return pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    for (long combo = 0; combo < total; combo++) {
        pp_sweep_point *p = &s->points[s->n_points];
        long rest = combo;
        for (int k = s->n_keys - 1; k >= 0; k--) {  // the last key varies fastest
            p->value[k] = (int)(rest % s->keys[k].n_values);
            rest /= s->keys[k].n_values;
        }
        size_t at = 0;
        for (int k = 0; k < s->n_keys; k++)
            at += (size_t)snprintf(p->name + at, at < sizeof p->name ? sizeof p->name - at : 0, "%s%s=%s",
                                   k ? "," : "", s->keys[k].name, s->keys[k].text[p->value[k]]);
        if (!(p->text = point_text(text, len, s, end_line, p->value, &p->len)))
            return pp_fail(err, PP_ERR_RUNTIME, "out of memory");
        pp_case c;
        int rc = pp_case_parse(p->text, p->len, s->path, &c, err);
        int invalid = c.invalid_combination;
        pp_case_free(&c);
        if (rc && !(rc == PP_ERR_INPUT && invalid && s->skip_invalid)) {
            free(p->text);  // not a point: its text is not kept
            p->text = NULL;
        }
        if (rc == PP_ERR_INPUT && invalid) {
            char safe[PP_SWEEP_NAME_MAX];
            pp_printable(p->name, safe, sizeof safe);
            char why[sizeof err->msg];  // err->msg is rewritten below: quote a copy
            snprintf(why, sizeof why, "%s", without_place(err->msg, s->path));
            if (!s->skip_invalid)
                return pp_fail(err, PP_ERR_INPUT, "%s:%d: [sweep] point '%s': %s (skip_invalid = false)", s->path,
                               s->line, safe, why);
            char note[PP_PATH_MAX + PP_SWEEP_NAME_MAX + 600];
            snprintf(note, sizeof note, "%s:%d: note: [sweep] point '%s' skipped: %s", s->path, s->line, safe, why);
            free(p->text);
            memset(p, 0, sizeof *p);
            s->n_skipped++;
            if (add_note(s, note))
                return pp_fail(err, PP_ERR_RUNTIME, "out of memory");
            continue;
        }
        if (rc)
            return rc;
        if (at >= sizeof p->name || !name_is_safe(p->name)) {
            free(p->text);
            p->text = NULL;
            return pp_fail(err, PP_ERR_INPUT, "%s:%d: [sweep] point '%.60s...' cannot name a folder (letters, "
                           "digits, _ - + = . only, at most %d characters)", s->path, s->line, p->name,
                           PP_SWEEP_NAME_MAX - 1);
        }
        s->n_points++;
    }
    if (!s->n_points)
        return pp_fail(err, PP_ERR_INPUT, "%s:%d: every point of [sweep] is a combination the op cannot run (%s)",
                       s->path, s->line, s->notes ? "see the notes" : "none left");
    return 0;
}

int pp_sweep_parse(const char *text, size_t len, const char *path, pp_sweep *s, pp_error *err)
{
    pp_error local;
    if (!err)
        err = &local;  // the skip notes quote the points' messages
    memset(s, 0, sizeof *s);
    snprintf(s->path, sizeof s->path, "%s", path);
    s->skip_invalid = 1;
    pp_toml_value *root = NULL;
    int rc = pp_toml_parse(text, len, path, &root, err);
    if (rc)
        return rc;
    const pp_toml_value *sw = pp_toml_get(root, "sweep");
    const char *op_name = pp_toml_as_string(pp_toml_get(pp_toml_get(root, "case"), "op"));
    const char *case_name = pp_toml_as_string(pp_toml_get(pp_toml_get(root, "case"), "name"));
    snprintf(s->case_name, sizeof s->case_name, "%s", case_name ? case_name : "");
    const pp_op *op = op_name ? pp_op_find(op_name) : NULL;
    if (!sw) {
        // a plain case: one point, its own text
        pp_toml_free(root);
        s->points = calloc(1, sizeof *s->points);
        if (!s->points || !(s->points[0].text = malloc(len + 1)))
            return pp_fail(err, PP_ERR_RUNTIME, "out of memory");
        memcpy(s->points[0].text, text, len);
        s->points[0].text[len] = '\0';
        s->points[0].len = len;
        s->n_points = 1;
        pp_case c;
        rc = pp_case_parse(text, len, path, &c, err);
        pp_case_free(&c);
        return rc;
    }
    s->line = pp_toml_line(sw);
    if (pp_toml_get(root, "point"))
        rc = pp_fail(err, PP_ERR_INPUT, "%s:%d: a case with [sweep] cannot have a [point] (the table a sweep "
                     "writes into each point's case)", path, pp_toml_line(pp_toml_get(root, "point")));
    else if (pp_toml_type_of(sw) != PP_TOML_TABLE || !is_header_line(text, len, s->line))
        rc = pp_fail(err, PP_ERR_INPUT, "%s:%d: write the sweep as a [sweep] table, one key per line", path, s->line);
    else
        rc = read_keys(s, sw, op, err);
    pp_toml_free(root);
    if (rc)
        return rc;
    if (!op) {  // [case] op is missing or unknown: the case reader says which, at its line
        pp_case c;
        rc = pp_case_parse(text, len, path, &c, err);
        pp_case_free(&c);
        return rc ? rc : pp_fail(err, PP_ERR_INPUT, "%s:1: the case needs a [case] table with name and op", path);
    }
    if (!s->n_keys)
        return pp_fail(err, PP_ERR_INPUT, "%s:%d: [sweep] lists no values (e.g. s = [1024, 2048])", path, s->line);
    return expand(s, text, len, next_header_line(text, len, s->line), err);
}

int pp_sweep_load(const char *path, pp_sweep *s, pp_error *err)
{
    memset(s, 0, sizeof *s);
    size_t n;
    char *buf = pp_case_read_text(path, &n, err);
    if (!buf)
        return err ? err->code : PP_ERR_INPUT;
    int rc = pp_sweep_parse(buf, n, path, s, err);
    free(buf);
    return rc;
}

void pp_sweep_free(pp_sweep *s)
{
    for (int i = 0; s->points && i < s->n_points; i++)
        free(s->points[i].text);
    free(s->points);
    free(s->notes);
    memset(s, 0, sizeof *s);
}

int pp_sweep_point_case(const pp_sweep *s, int i, pp_case *c, pp_error *err)
{
    return pp_case_parse(s->points[i].text, s->points[i].len, s->path, c, err);
}

void pp_sweep_point_values(const pp_sweep *s, int i, char *buf, size_t n)
{
    size_t at = 0;
    if (n)
        buf[0] = '\0';
    for (int k = 0; k < s->n_keys && at < n; k++)
        at += (size_t)snprintf(buf + at, n - at, "%s%s=%s", k ? " " : "", s->keys[k].name,
                               s->keys[k].text[s->points[i].value[k]]);
}

int pp_sweep_point_index(const pp_sweep *s, const char *name)
{
    for (int i = 0; i < s->n_points; i++)
        if (!strcmp(s->points[i].name, name))
            return i;
    return -1;
}
