// case.c — reading a case file: TOML (src/io/toml.c) checked against the operation's schema
// (src/ops/op.h). Every error names the file, the line and the key; see cases/README.md.
#include "pipeline/case.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/layout.h"
#include "core/nearest.h"
#include "core/statistic.h"
#include "io/tensor_io.h"
#include "io/toml.h"
#include "core/view.h"

// ---- small helpers ---------------------------------------------------------------------------

typedef struct ctx {
    const char *file;
    pp_error *err;
    // [point]: one sweep point's values (src/pipeline/sweep.h), taking the place of [case] seed,
    // the [op] parameter and the [knobs] default of the same name; NULL when the case has none.
    const pp_toml_value *point;
} ctx;

static int fail_at(const ctx *x, const pp_toml_value *v, const char *fmt, const char *a, const char *b,
                   const char *c)
{
    char msg[400];
    snprintf(msg, sizeof msg, fmt, a ? a : "", b ? b : "", c ? c : "");
    return pp_fail(x->err, PP_ERR_INPUT, "%s:%d: %s", x->file, pp_toml_line(v), msg);
}

static const char *article(pp_toml_type t)
{
    return t == PP_TOML_INT || t == PP_TOML_ARRAY ? "an" : "a";
}

// "FILE:LINE: 'key' must be a string, not an integer" unless v has type t.
static int want_type(const ctx *x, const pp_toml_value *v, pp_toml_type t, const char *key)
{
    pp_toml_type have = pp_toml_type_of(v);
    if (have == t)
        return 0;
    return pp_fail(x->err, PP_ERR_INPUT, "%s:%d: '%s' must be %s %s, not %s %s", x->file, pp_toml_line(v), key,
                   article(t), pp_toml_type_name(t), article(have), pp_toml_type_name(have));
}

static int get_string(const ctx *x, const pp_toml_value *v, const char *key, const char **out)
{
    if (want_type(x, v, PP_TOML_STRING, key))
        return PP_ERR_INPUT;
    *out = pp_toml_as_string(v);
    return 0;
}

static int get_number(const ctx *x, const pp_toml_value *v, const char *key, double *out)
{
    int rc = pp_toml_as_double(v, out);
    if (rc == -1)
        return pp_fail(x->err, PP_ERR_INPUT, "%s:%d: '%s' must be a number, not %s", x->file, pp_toml_line(v),
                       key, pp_toml_type_name(pp_toml_type_of(v)));
    if (rc == -2)
        return pp_fail(x->err, PP_ERR_INPUT, "%s:%d: '%s' is an integer binary64 cannot hold exactly", x->file,
                       pp_toml_line(v), key);
    return 0;
}

static int check_name(const ctx *x, const pp_toml_value *v, const char *what, const char *name)
{
    size_t len = strlen(name);
    int ok = len > 0 && len < PP_NAME_MAX;
    for (size_t i = 0; ok && i < len; i++)
        ok = isalnum((unsigned char)name[i]) || strchr("_-+=", name[i]);
    if (!ok)
        return pp_fail(x->err, PP_ERR_INPUT,
                       "%s:%d: %s '%s' must be 1 to %d letters, digits or _ - + = (no '.' or '/')", x->file,
                       pp_toml_line(v), what, name, PP_NAME_MAX - 1);
    return 0;
}

// A file named in a case is relative to the case file's folder, unless absolute.
static void resolve_path(const char *case_path, const char *spec, char *out, size_t n)
{
    const char *slash = strrchr(case_path, '/');
    if (spec[0] == '/' || !slash)
        snprintf(out, n, "%s", spec);
    else
        snprintf(out, n, "%.*s/%s", (int)(slash - case_path), case_path, spec);
}

// "unknown X 'w' in WHERE (did you mean 'n'?)" with the suggestion when one is close.
static int unknown(const ctx *x, const pp_toml_value *v, const char *what, const char *word, const char *where,
                   const char *const *names, int n)
{
    const char *near = pp_nearest_name(word, names, n);
    char hint[160] = "";
    if (near)
        snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
    return pp_fail(x->err, PP_ERR_INPUT, "%s:%d: unknown %s '%s' in %s%s", x->file, pp_toml_line(v), what, word,
                   where, hint);
}

// An unknown statistic in a gate rule: the nearest name, and every name a rule may use.
static int unknown_statistic(const ctx *x, const pp_toml_value *v, const char *word)
{
    const char *names[64];
    int n = pp_statistic_count();
    for (int i = 0; i < n && i < 64; i++)
        names[i] = pp_statistic_at(i)->name;
    const char *near = pp_nearest_name(word, names, n);
    char hint[160] = "", known[1024];
    if (near)
        snprintf(hint, sizeof hint, "did you mean '%s'? ", near);
    pp_statistic_names(known, sizeof known);
    return pp_fail(x->err, PP_ERR_INPUT, "%s:%d: unknown statistic '%s' in [gate] (%sknown: %s)", x->file,
                   pp_toml_line(v), word, hint, known);
}

// ---- sections --------------------------------------------------------------------------------

static int read_case_table(const ctx *x, const pp_toml_value *t, pp_case *c)
{
    static const char *const keys[] = {"name", "op", "seed", "description", "reference"};
    int rc = pp_toml_check_keys(t, x->file, "[case]", keys, 5, x->err);
    if (rc)
        return rc;
    const pp_toml_value *v;
    const char *s;
    if (!(v = pp_toml_get(t, "name")))
        return pp_fail(x->err, PP_ERR_INPUT, "%s:%d: [case] needs 'name'", x->file, pp_toml_line(t));
    if ((rc = get_string(x, v, "name", &s)) || (rc = check_name(x, v, "case name", s)))
        return rc;
    snprintf(c->name, sizeof c->name, "%s", s);
    if (!(v = pp_toml_get(t, "op")))
        return pp_fail(x->err, PP_ERR_INPUT, "%s:%d: [case] needs 'op'", x->file, pp_toml_line(t));
    if ((rc = get_string(x, v, "op", &s)))
        return rc;
    if (!(c->op = pp_op_find(s))) {
        const char *names[16];
        int n = pp_op_count();
        char list[256] = "";
        size_t at = 0;
        for (int i = 0; i < n && i < 16; i++) {
            names[i] = pp_op_at(i)->name;
            at += (size_t)snprintf(list + at, sizeof list - at, i ? ", %s" : "%s", names[i]);
        }
        const char *near = pp_nearest_name(s, names, n);
        return pp_fail(x->err, PP_ERR_INPUT, "%s:%d: unknown op '%s'%s%s%s (known: %s)", x->file, pp_toml_line(v), s,
                       near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "", list);
    }
    if ((v = pp_toml_get(t, "seed"))) {
        int64_t seed;
        if ((rc = want_type(x, v, PP_TOML_INT, "seed")))
            return rc;
        pp_toml_as_int(v, &seed);
        if (seed < 0)
            return pp_fail(x->err, PP_ERR_INPUT, "%s:%d: 'seed' must be >= 0", x->file, pp_toml_line(v));
        c->seed = (uint64_t)seed;
    }
    if ((v = pp_toml_get(t, "description"))) {
        if ((rc = get_string(x, v, "description", &s)))
            return rc;
        snprintf(c->description, sizeof c->description, "%s", s);
    }
    if ((v = pp_toml_get(t, "reference"))) {
        if ((rc = get_string(x, v, "reference", &s)))
            return rc;
        int n = 0;
        while (c->op->ref_methods[n])
            n++;
        for (int i = 0; i < n; i++)
            if (!strcmp(s, c->op->ref_methods[i]))
                c->reference_method = c->op->ref_methods[i];
        if (!c->reference_method)
            return unknown(x, v, "reference method", s, "[case] reference", c->op->ref_methods, n);
    }
    return 0;
}

static int read_params(const ctx *x, const pp_toml_value *t, const pp_toml_value *root, pp_case *c)
{
    const pp_op *op = c->op;
    const char *names[PP_MAX_PARAMS];
    for (int i = 0; i < op->n_params; i++)
        names[i] = op->params[i].name;
    int rc = pp_toml_check_keys(t, x->file, "[op]", names, op->n_params, x->err);
    if (rc)
        return rc;
    for (int i = 0; i < op->n_params; i++) {
        const pp_param_def *d = &op->params[i];
        const pp_toml_value *v = pp_toml_get(x->point, d->name);
        if (!v)
            v = pp_toml_get(t, d->name);
        if (!v) {
            if (d->required)
                return pp_fail(x->err, PP_ERR_INPUT, "%s:%d: [op] needs '%s' (%s)", x->file,
                               pp_toml_line(t ? t : root), d->name, d->doc);
            continue;
        }
        double val;
        if (d->kind == PP_PARAM_CHOICE) {
            const char *name;
            if ((rc = get_string(x, v, d->name, &name)))
                return rc;
            int ci = pp_choice_index(d->choices, name);
            if (ci < 0) {
                char allowed[256];
                pp_choices_str(d->choices, allowed, sizeof allowed);
                return pp_fail(x->err, PP_ERR_INPUT, "%s:%d: '%s' cannot be '%s' (allowed: %s)", x->file,
                               pp_toml_line(v), d->name, name, allowed);
            }
            c->params.v[i] = ci;
            c->params.given[i] = 1;
            continue;
        }
        if (d->kind == PP_PARAM_INT) {
            int64_t iv;
            if ((rc = want_type(x, v, PP_TOML_INT, d->name)))
                return rc;
            pp_toml_as_int(v, &iv);
            val = (double)iv;
        } else if ((rc = get_number(x, v, d->name, &val))) {
            return rc;
        }
        if (!(val >= d->min && val <= d->max))
            return pp_fail(x->err, PP_ERR_INPUT, "%s:%d: '%s' = %.17g is out of range [%.17g, %.17g]", x->file,
                           pp_toml_line(v), d->name, val, d->min, d->max);
        c->params.v[i] = val;
        c->params.given[i] = 1;
    }
    char msg[256];
    if (op->check_params && op->check_params(&c->params, msg, sizeof msg))
        return c->invalid_combination = 1, pp_fail(x->err, PP_ERR_INPUT, "%s:%d: [op]: %s", x->file, pp_toml_line(t ? t : root), msg);
    return 0;
}

static const char *const dist_keys[] = {"distribution", "mean", "std", "low", "high", "file", "format",
                                        "axis", "axis_scale", "round", "layout"};
#define N_DIST_KEYS 11

// Reads distribution keys of table t into d (starting from the values already there).
static int read_dist(const ctx *x, const pp_toml_value *t, pp_dist *d)
{
    const pp_toml_value *v;
    int rc;
    if ((v = pp_toml_get(t, "distribution"))) {
        const char *s;
        static const char *const kinds[] = {"normal", "uniform"};
        if ((rc = get_string(x, v, "distribution", &s)))
            return rc;
        if (!strcmp(s, "normal"))
            d->kind = PP_DIST_NORMAL;
        else if (!strcmp(s, "uniform"))
            d->kind = PP_DIST_UNIFORM;
        else
            return unknown(x, v, "distribution", s, "[inputs] (allowed: normal, uniform)", kinds, 2);
    }
    static const char *const nums[] = {"mean", "std", "low", "high"};
    double *dst[] = {&d->mean, &d->std, &d->low, &d->high};
    for (int i = 0; i < 4; i++)
        if ((v = pp_toml_get(t, nums[i])) && (rc = get_number(x, v, nums[i], dst[i])))
            return rc;
    const pp_toml_value *ax = pp_toml_get(t, "axis"), *as = pp_toml_get(t, "axis_scale");
    if (!ax != !as)
        return fail_at(x, ax ? ax : as, "'axis' and 'axis_scale' go together", NULL, NULL, NULL);
    if (ax) {
        int64_t a;
        if ((rc = want_type(x, ax, PP_TOML_INT, "axis")))
            return rc;
        pp_toml_as_int(ax, &a);
        if (a < 0 || a >= PP_MAX_DIMS)
            return fail_at(x, ax, "'axis' must be a dimension index from 0 to 7", NULL, NULL, NULL);
        if ((rc = want_type(x, as, PP_TOML_ARRAY, "axis_scale")))
            return rc;
        int n = pp_toml_array_size(as);
        if (n < 1 || n > PP_DIST_MAX_AXIS_SCALE)
            return fail_at(x, as, "'axis_scale' needs 1 to 256 numbers", NULL, NULL, NULL);
        d->axis = (int)a;
        d->n_axis_scale = n;
        for (int j = 0; j < n; j++)
            if ((rc = get_number(x, pp_toml_array_at(as, j), "axis_scale", &d->axis_scale[j])))
                return rc;
    }
    pp_error e;
    if (pp_dist_check(d, &e))
        return pp_fail(x->err, PP_ERR_INPUT, "%s:%d: %s", x->file, pp_toml_line(t), e.msg);
    return 0;
}

// 'format' of a tensor read from a file: a format name, torch's spellings included.
static int read_file_format(const ctx *x, const pp_toml_value *v, pp_format_id *f)
{
    const char *str;
    int rc = get_string(x, v, "format", &str);
    if (rc)
        return rc;
    if (pp_format_from_name(str, f))
        return fail_at(x, v,
                       "unknown format '%s' (allowed: fp64, fp32, tf32, fp16, bf16, e4m3, e5m2, e8m0, e2m1, "
                       "e2m3, e3m2, or torch's names: bfloat16, torch.float16, float8_e4m3fn, ...)", str, NULL, NULL);
    return 0;
}

// 'layout' of table t, if given, for a tensor whose axes the op row names (axes, or NULL).
static int read_layout(const ctx *x, const pp_toml_value *t, const char *axes, const char *tensor, char *out)
{
    const pp_toml_value *v = pp_toml_get(t, "layout");
    const char *s;
    int rc;
    if (!v)
        return 0;
    if ((rc = get_string(x, v, "layout", &s)))
        return rc;
    if (!axes)
        return fail_at(x, v, "'%s' has no named axes, so it takes no 'layout'", tensor, NULL, NULL);
    if (pp_layout_check(axes, s)) {
        char letters[3 * PP_MAX_DIMS + 1] = "";  // "b, s, h, d"
        size_t at = 0;
        for (size_t i = 0; axes[i] && at < sizeof letters; i++)
            at += (size_t)snprintf(letters + at, sizeof letters - at, i ? ", %c" : "%c", axes[i]);
        return pp_fail(x->err, PP_ERR_INPUT,
                       "%s:%d: 'layout' = '%s' must be the letters of '%s' (%s) in the order the file holds "
                       "them, each once (the op's is \"%s\")",
                       x->file, pp_toml_line(v), s, tensor, letters, axes);
    }
    snprintf(out, PP_MAX_DIMS + 1, "%s", s);
    return 0;
}

// An external variant's output o: "FILE" or { file = "FILE", format = "...", layout = "..." }.
static int read_external_output(const ctx *x, const pp_toml_value *f, const pp_op *op, int o, pp_variant_spec *v)
{
    int rc;
    const pp_toml_value *file = f;
    if (pp_toml_type_of(f) == PP_TOML_TABLE) {
        static const char *const keys[] = {"file", "format", "layout"};
        char where[PP_NAME_MAX + 32];
        snprintf(where, sizeof where, "external output '%s'", op->outputs[o]);
        if ((rc = pp_toml_check_keys(f, x->file, where, keys, 3, x->err)))
            return rc;
        if (!(file = pp_toml_get(f, "file")))
            return fail_at(x, f, "external output '%s' needs 'file'", op->outputs[o], NULL, NULL);
        const pp_toml_value *fmt = pp_toml_get(f, "format");
        if (fmt && (rc = read_file_format(x, fmt, &v->external_format[o])))
            return rc;
        v->external_has_format[o] = fmt != NULL;
        if ((rc = read_layout(x, f, op->output_layouts ? op->output_layouts[o] : NULL, op->outputs[o],
                              v->external_layouts[o])))
            return rc;
    } else if (pp_toml_type_of(f) != PP_TOML_STRING) {
        return fail_at(x, f, "external output '%s' must be a file spec or { file = \"...\", layout = \"...\" }",
                       op->outputs[o], NULL, NULL);
    }
    const char *s;
    if ((rc = get_string(x, file, op->outputs[o], &s)))
        return rc;
    resolve_path(x->file, s, v->external_files[o], sizeof v->external_files[o]);
    v->external_lines[o] = pp_toml_line(file);
    return 0;
}

static int read_inputs(const ctx *x, const pp_toml_value *t, pp_case *c)
{
    const pp_op *op = c->op;
    pp_dist base = {.kind = PP_DIST_NORMAL, .mean = 0.0, .std = 1.0, .low = 0.0, .high = 1.0};
    const char *names[PP_MAX_OP_TENSORS + 8];
    int n = 0;
    for (int i = 0; i < 5; i++)
        names[n++] = dist_keys[i];
    for (int i = 0; i < op->n_inputs; i++)
        names[n++] = op->inputs[i];
    int rc = pp_toml_check_keys(t, x->file, "[inputs]", names, n, x->err);
    if (rc)
        return rc;
    for (int i = 0; i < 5; i++) {
        const pp_toml_value *v = pp_toml_get(t, dist_keys[i]);
        if (v && pp_toml_type_of(v) == PP_TOML_TABLE)
            return fail_at(x, v, "'%s' is a distribution key, not an input", dist_keys[i], NULL, NULL);
    }
    if (t && (rc = read_dist(x, t, &base)))
        return rc;
    for (int i = 0; i < op->n_inputs; i++) {
        pp_input_spec *in = &c->inputs[i];
        in->dist = base;
        const pp_toml_value *s = pp_toml_get(t, op->inputs[i]);
        if (!s)
            continue;
        char where[128];
        snprintf(where, sizeof where, "[inputs.%s]", op->inputs[i]);
        if ((rc = want_type(x, s, PP_TOML_TABLE, op->inputs[i])) ||
            (rc = pp_toml_check_keys(s, x->file, where, dist_keys, N_DIST_KEYS, x->err)) ||
            (rc = read_dist(x, s, &in->dist)))
            return rc;
        if (in->dist.n_axis_scale) {  // the scale list must fit the input's shape from [op]
            int ndim;
            int64_t shape[PP_MAX_DIMS];
            op->shape(&c->params, 0, i, &ndim, shape);
            const pp_toml_value *as = pp_toml_get(s, "axis_scale");
            if (in->dist.axis >= ndim || shape[in->dist.axis] != in->dist.n_axis_scale)
                return c->invalid_combination = 1, pp_fail(x->err, PP_ERR_INPUT, "%s:%d: %s axis_scale has %d values, but axis %d of '%s' has %lld",
                               x->file, pp_toml_line(as), where, in->dist.n_axis_scale, in->dist.axis, op->inputs[i],
                               (long long)(in->dist.axis < ndim ? shape[in->dist.axis] : 0));
        }
        const pp_toml_value *v;
        const char *str;
        if ((v = pp_toml_get(s, "file"))) {
            if ((rc = get_string(x, v, "file", &str)))
                return rc;
            resolve_path(x->file, str, in->file, sizeof in->file);
            in->line = pp_toml_line(v);
        }
        if ((v = pp_toml_get(s, "format"))) {
            if ((rc = read_file_format(x, v, &in->format)))
                return rc;
            in->has_format = 1;
        }
        if ((v = pp_toml_get(s, "round"))) {
            static const char *const modes[] = {"exact", "nearest"};
            if ((rc = get_string(x, v, "round", &str)))
                return rc;
            if (strcmp(str, "exact") && strcmp(str, "nearest"))
                return unknown(x, v, "rounding", str, "'round' (allowed: exact, nearest)", modes, 2);
            in->round_nearest = !strcmp(str, "nearest");
        }
        if ((rc = read_layout(x, s, op->input_layouts ? op->input_layouts[i] : NULL, op->inputs[i], in->layout)))
            return rc;
        static const char *const file_only[] = {"round", "layout"};
        for (int k = 0; k < 2 && !in->file[0]; k++)
            if ((v = pp_toml_get(s, file_only[k])))
                return fail_at(x, v, "'%s' applies to an input read from a file (give 'file')", file_only[k], NULL,
                               NULL);
    }
    return 0;
}

// The text of a knob value: a string as it is; an integer (block_m = 64) or a boolean
// (kahan = true) as its TOML spelling, so knobs whose values are numbers read naturally.
static int knob_text(const ctx *x, const pp_toml_value *v, const char *key, char *buf, size_t n)
{
    int64_t iv;
    bool bv;
    switch (pp_toml_type_of(v)) {
    case PP_TOML_INT:
        pp_toml_as_int(v, &iv);
        snprintf(buf, n, "%lld", (long long)iv);
        return 0;
    case PP_TOML_BOOL:
        pp_toml_as_bool(v, &bv);
        snprintf(buf, n, "%s", bv ? "true" : "false");
        return 0;
    default: {
        const char *s;
        int rc = get_string(x, v, key, &s);
        if (!rc)
            snprintf(buf, n, "%s", s);
        return rc;
    }
    }
}

// A list knob's value (op.h pp_knob_def.list_max): an array of at most list_max numbers, each
// finite and ≥ 0, whose text ("[1.5, 300]") fits a report's knob setting.
static int read_list_knob(const ctx *x, const pp_toml_value *v, const pp_op *op, int ki, pp_op_knobs *k,
                          const char *where)
{
    const pp_knob_def *kd = &op->knobs[ki];
    int line = pp_toml_line(v);
    if (pp_toml_type_of(v) != PP_TOML_ARRAY)
        return pp_fail(x->err, PP_ERR_INPUT, "%s:%d: knob '%s' in %s takes a list of numbers, e.g. [2.5, 300.0]",
                       x->file, line, kd->name, where);
    int len = pp_toml_array_size(v);
    if (len > kd->list_max)
        return pp_fail(x->err, PP_ERR_INPUT, "%s:%d: knob '%s' in %s has %d numbers; at most %d", x->file, line,
                       kd->name, where, len, kd->list_max);
    pp_op_knobs t = *k;
    t.v[ki] = len;
    for (int i = 0; i < len; i++) {
        const pp_toml_value *e = pp_toml_array_at(v, i);
        double d;
        if (pp_toml_as_double(e, &d) || !(d >= 0 && d <= 1.7976931348623157e308))
            return pp_fail(x->err, PP_ERR_INPUT, "%s:%d: knob '%s' in %s: element %d must be a finite number >= 0",
                           x->file, pp_toml_line(e), kd->name, where, i + 1);
        t.list[ki][i] = d;
    }
    char text[PP_NAME_MAX];
    if (pp_knob_setting_text(kd, &t, ki, text, sizeof text) >= (int)sizeof text)
        return pp_fail(x->err, PP_ERR_INPUT, "%s:%d: knob '%s' in %s is too long to record in a report (%d "
                       "characters as text at most)", x->file, line, kd->name, where, (int)sizeof text - 1);
    *k = t;
    return 0;
}

// Sets knob values from the string keys of table t that are knobs; other keys are left to the
// caller (who checked them already).
static int read_knobs(const ctx *x, const pp_toml_value *t, const pp_op *op, pp_op_knobs *k, const char *where)
{
    for (int i = 0; i < pp_toml_table_size(t); i++) {
        const char *key = pp_toml_table_key(t, i);
        const pp_toml_value *v = pp_toml_table_value(t, i);
        int ki = pp_op_knob_index(op, key);
        if (ki < 0)
            continue;
        if (op->knobs[ki].list_max > 0) {
            int rc = read_list_knob(x, v, op, ki, k, where);
            if (rc)
                return rc;
            continue;
        }
        char s[PP_NAME_MAX];
        int rc = knob_text(x, v, key, s, sizeof s);
        if (rc)
            return rc;
        int vi = pp_knob_value_index(&op->knobs[ki], s);
        if (vi < 0) {
            char allowed[256];
            pp_knob_values_str(&op->knobs[ki], allowed, sizeof allowed);
            return pp_fail(x->err, PP_ERR_INPUT, "%s:%d: knob '%s' in %s cannot be '%s' (allowed: %s)", x->file,
                           pp_toml_line(v), key, where, s, allowed);
        }
        k->v[ki] = vi;
    }
    return 0;
}

static int add_variant(const ctx *x, const pp_toml_value *at, pp_case *c, const char *name, const pp_op_knobs *k)
{
    if (pp_case_variant_index(c, name) >= 0)
        return fail_at(x, at, "variant '%s' is defined twice", name, NULL, NULL);
    if (c->n_variants == PP_MAX_VARIANTS)
        return pp_fail(x->err, PP_ERR_INPUT, "%s:%d: more than %d variants", x->file, pp_toml_line(at),
                       PP_MAX_VARIANTS);
    pp_variant_spec *v = &c->variants[c->n_variants++];
    memset(v, 0, sizeof *v);
    snprintf(v->name, sizeof v->name, "%s", name);
    v->knobs = *k;
    v->line = pp_toml_line(at);
    return 0;
}

// Appends one line to the case's notes (what the reader decided for the user: a skipped
// [matrix] combination), printed by the command line before the run.
static int add_skip_note(const ctx *x, pp_case *c, int line, const char *name, const char *why)
{
    char text[PP_PATH_MAX + 512];
    int k = snprintf(text, sizeof text, "%s:%d: note: [matrix] combination '%s' skipped: %s", x->file, line, name,
                     why);
    size_t old = c->notes ? strlen(c->notes) : 0, add = k > 0 ? strlen(text) : 0;
    char *grown = realloc(c->notes, old + add + 2);
    if (!grown)
        return pp_fail(x->err, PP_ERR_RUNTIME, "out of memory");
    memcpy(grown + old, text, add);
    grown[old + add] = '\n';
    grown[old + add + 1] = '\0';
    c->notes = grown;
    return 0;
}

static int read_variants(const ctx *x, const pp_toml_value *root, pp_case *c)
{
    const pp_op *op = c->op;
    pp_op_knobs defaults;
    memset(&defaults, 0, sizeof defaults);  // list knobs: empty
    memset(&defaults, 0, sizeof defaults);
    for (int i = 0; i < op->n_knobs; i++)
        defaults.v[i] = pp_knob_value_index(&op->knobs[i], op->knobs[i].def);
    const char *knob_names[PP_MAX_KNOBS + 1];
    for (int i = 0; i < op->n_knobs; i++)
        knob_names[i] = op->knobs[i].name;
    const pp_toml_value *kt = pp_toml_get(root, "knobs");
    int rc;
    if (kt && ((rc = want_type(x, kt, PP_TOML_TABLE, "knobs")) ||
               (rc = pp_toml_check_keys(kt, x->file, "[knobs]", knob_names, op->n_knobs, x->err)) ||
               (rc = read_knobs(x, kt, op, &defaults, "[knobs]"))))
        return rc;
    if (x->point && (rc = read_knobs(x, x->point, op, &defaults, "[sweep]")))
        return rc;  // a point's knob: the default of every variant that does not set it itself

    c->variants = calloc(PP_MAX_VARIANTS, sizeof *c->variants);
    if (!c->variants)
        return pp_fail(x->err, PP_ERR_RUNTIME, "out of memory");
    const pp_toml_value *vt = pp_toml_get(root, "variants");
    if (vt && (rc = want_type(x, vt, PP_TOML_TABLE, "variants")))
        return rc;
    knob_names[op->n_knobs] = "external";
    for (int i = 0; i < pp_toml_table_size(vt); i++) {
        const char *name = pp_toml_table_key(vt, i);
        const pp_toml_value *t = pp_toml_table_value(vt, i);
        char where[PP_NAME_MAX + 16];
        snprintf(where, sizeof where, "[variants.%s]", name);
        if ((rc = check_name(x, t, "variant name", name)) || (rc = want_type(x, t, PP_TOML_TABLE, name)) ||
            (rc = pp_toml_check_keys(t, x->file, where, knob_names, op->n_knobs + 1, x->err)))
            return rc;
        pp_op_knobs k = defaults;
        if ((rc = read_knobs(x, t, op, &k, where)) || (rc = add_variant(x, t, c, name, &k)))
            return rc;
        const pp_toml_value *ext = pp_toml_get(t, "external");
        if (!ext)
            continue;
        pp_variant_spec *v = &c->variants[c->n_variants - 1];
        if ((rc = want_type(x, ext, PP_TOML_TABLE, "external")) ||
            (rc = pp_toml_check_keys(ext, x->file, "external", op->outputs, op->n_outputs, x->err)))
            return rc;
        // An external variant gives a file for some or all of the outputs the case produces
        // (a user's kernel may not expose every tensor, e.g. attention's lse); the outputs it
        // leaves out are not compared.
        int given = 0;
        for (int o = 0; o < op->n_outputs; o++) {
            const pp_toml_value *f = pp_toml_get(ext, op->outputs[o]);
            if (!f)
                continue;
            if ((rc = read_external_output(x, f, op, o, v)))
                return rc;
            if (!pp_op_output_active(op, &c->params, &k, o))
                return fail_at(x, f, "external output '%s' is not produced by this case (see its [op])",
                               op->outputs[o], NULL, NULL);
            given++;
        }
        if (!given)
            return fail_at(x, ext, "external variant needs a file for at least one output", NULL, NULL, NULL);
        v->external = 1;
    }

    // [matrix]: the cross product of the listed knob values, other knobs from [knobs].
    const pp_toml_value *mt = pp_toml_get(root, "matrix");
    if (mt) {
        // skip_unsupported (default true): a combination the op cannot run is left out with a
        // note rather than failing the case, since a cross product easily holds a few.
        knob_names[op->n_knobs] = "skip_unsupported";
        if ((rc = want_type(x, mt, PP_TOML_TABLE, "matrix")) ||
            (rc = pp_toml_check_keys(mt, x->file, "[matrix]", knob_names, op->n_knobs + 1, x->err)))
            return rc;
        bool skip_unsupported = true;
        const pp_toml_value *su = pp_toml_get(mt, "skip_unsupported");
        if (su && ((rc = want_type(x, su, PP_TOML_BOOL, "skip_unsupported")) ||
                   (pp_toml_as_bool(su, &skip_unsupported), 0)))
            return rc;
        int nk = 0;
        int ki[PP_MAX_KNOBS], count[PP_MAX_KNOBS], vals[PP_MAX_KNOBS][32];
        long total = 1;
        for (int jt = 0; jt < pp_toml_table_size(mt); jt++) {
            const char *key = pp_toml_table_key(mt, jt);
            const pp_toml_value *arr = pp_toml_table_value(mt, jt);
            if (!strcmp(key, "skip_unsupported"))
                continue;
            int j = nk++;
            ki[j] = pp_op_knob_index(op, key);
            if (op->knobs[ki[j]].list_max > 0)  // a list of lists would read as a matrix of matrices
                return fail_at(x, arr, "knob '%s' takes a list: set it in [knobs] or a variant, not in [matrix]", key,
                               NULL, NULL);
            if ((rc = want_type(x, arr, PP_TOML_ARRAY, key)))
                return rc;
            count[j] = pp_toml_array_size(arr);
            if (count[j] < 1 || count[j] > 32)
                return fail_at(x, arr, "[matrix] '%s' needs 1 to 32 values", key, NULL, NULL);
            for (int e = 0; e < count[j]; e++) {
                const pp_toml_value *item = pp_toml_array_at(arr, e);
                char s[PP_NAME_MAX];
                if ((rc = knob_text(x, item, key, s, sizeof s)))
                    return rc;
                vals[j][e] = pp_knob_value_index(&op->knobs[ki[j]], s);
                if (vals[j][e] < 0) {
                    char allowed[256];
                    pp_knob_values_str(&op->knobs[ki[j]], allowed, sizeof allowed);
                    return pp_fail(x->err, PP_ERR_INPUT, "%s:%d: knob '%s' in [matrix] cannot be '%s' (allowed: %s)",
                                   x->file, pp_toml_line(item), key, s, allowed);
                }
            }
            total *= count[j];
            if (total > PP_MAX_VARIANTS)
                return fail_at(x, mt, "[matrix] makes more than 256 variants", NULL, NULL, NULL);
        }
        for (long combo = 0; combo < total; combo++) {
            pp_op_knobs k = defaults;
            char name[PP_NAME_MAX] = "";
            size_t at = 0;
            long rest = combo;
            for (int j = nk - 1; j >= 0; j--) {  // last knob varies fastest
                k.v[ki[j]] = vals[j][rest % count[j]];
                rest /= count[j];
            }
            for (int j = 0; j < nk; j++) {
                char text[PP_NAME_MAX];
                pp_knob_text(&op->knobs[ki[j]], k.v[ki[j]], text, sizeof text);
                at += (size_t)snprintf(name + at, sizeof name - at, j ? "-%s" : "%s", text);
            }
            char why[256];
            if (op->check_knobs && op->check_knobs(&c->params, &k, why, sizeof why)) {
                if (!skip_unsupported)
                    return c->invalid_combination = 1, pp_fail(x->err, PP_ERR_INPUT, "%s:%d: variant '%s' (from [matrix]): %s "
                                   "(skip_unsupported = false)", x->file, pp_toml_line(mt), name, why);
                if ((rc = add_skip_note(x, c, pp_toml_line(mt), name, why)))
                    return rc;
                continue;
            }
            if ((rc = add_variant(x, mt, c, name, &k)))
                return rc;
            c->variants[c->n_variants - 1].from_matrix = 1;
        }
    }
    // Knob combinations the operation cannot run ([variants] and [matrix] alike; an external
    // variant's knobs only describe it).
    for (int i = 0; op->check_knobs && i < c->n_variants; i++) {
        const pp_variant_spec *vs = &c->variants[i];
        char msg[256];
        if (!vs->external && op->check_knobs(&c->params, &vs->knobs, msg, sizeof msg))
            return c->invalid_combination = 1, pp_fail(x->err, PP_ERR_INPUT, "%s:%d: variant '%s'%s: %s", x->file, vs->line, vs->name,
                           vs->from_matrix ? " (from [matrix])" : "", msg);
    }
    if (c->n_variants == 0)
        return pp_fail(x->err, PP_ERR_INPUT, "%s:%d: the case has no variants: add [variants.NAME] tables or a [matrix]",
                       x->file, pp_toml_line(root));
    return 0;
}

static int pair_variant(const ctx *x, const pp_toml_value *p, const pp_toml_value *name, pp_case *c, int *vi)
{
    const char *s;
    int rc = get_string(x, name, "pairs", &s);
    if (rc)
        return rc;
    if ((*vi = pp_case_variant_index(c, s)) < 0) {
        // the variants' names, the generated [matrix] names among them (a user writes the name a
        // matrix makes from its values, in key order, and is told what it made)
        const char *names[PP_MAX_VARIANTS];
        char known[600] = "";
        size_t at = 0;
        for (int k = 0; k < c->n_variants; k++) {
            names[k] = c->variants[k].name;
            if (at + strlen(names[k]) + 8 < sizeof known)
                at += (size_t)snprintf(known + at, sizeof known - at, "%s%s", k ? ", " : "", names[k]);
            else if (at + 6 < sizeof known) {
                snprintf(known + at, sizeof known - at, ", ...");
                at = sizeof known;  // full: the names after this one are left out
            }
        }
        const char *near = pp_nearest_name(s, names, c->n_variants);
        char hint[160] = "";
        if (near)
            snprintf(hint, sizeof hint, "did you mean '%s'? ", near);
        return pp_fail(x->err, PP_ERR_INPUT, "%s:%d: unknown variant '%s' in [compare] pairs (%svariants: %s)", x->file,
                       pp_toml_line(p), s, hint, known);
    }
    return 0;
}

// One entry of tensors: an output name, or "cat(a, b, ...)" of output names.
static int read_group(const ctx *x, const pp_toml_value *item, const pp_op *op, pp_pair_spec *ps)
{
    const char *s;
    int rc = get_string(x, item, "tensors", &s);
    if (rc)
        return rc;
    if (ps->n_groups == PP_MAX_PAIR_GROUPS)
        return fail_at(x, item, "more than 8 entries in 'tensors'", NULL, NULL, NULL);
    int g = ps->n_groups++;
    char buf[PP_NAME_MAX];
    size_t len = strlen(s);
    int is_cat = len > 5 && !strncmp(s, "cat(", 4) && s[len - 1] == ')';
    if (len >= sizeof buf)
        return fail_at(x, item, "tensor group '%s' is too long", s, NULL, NULL);
    snprintf(buf, sizeof buf, "%.*s", is_cat ? (int)(len - 5) : (int)len, is_cat ? s + 4 : s);
    snprintf(ps->group_name[g], sizeof ps->group_name[g], "%s%s", is_cat ? "cat(" : "", "");
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ')
            tok++;
        char *e = tok + strlen(tok);
        while (e > tok && e[-1] == ' ')
            *--e = '\0';
        int o = -1;
        for (int k = 0; k < op->n_outputs; k++)
            if (!strcmp(op->outputs[k], tok))
                o = k;
        if (o < 0)
            return unknown(x, item, "output", tok, "[compare] pairs tensors", op->outputs, op->n_outputs);
        if (ps->group_len[g] == PP_MAX_OP_TENSORS || (!is_cat && ps->group_len[g] == 1))
            return fail_at(x, item, "'%s': write several outputs as cat(a, b, ...)", s, NULL, NULL);
        ps->group[g][ps->group_len[g]++] = o;
        size_t at = strlen(ps->group_name[g]);
        snprintf(ps->group_name[g] + at, sizeof ps->group_name[g] - at, "%s%s", ps->group_len[g] > 1 ? ", " : "",
                 tok);
    }
    if (!ps->group_len[g])
        return fail_at(x, item, "'%s' names no output", s, NULL, NULL);
    if (is_cat) {
        size_t at = strlen(ps->group_name[g]);
        snprintf(ps->group_name[g] + at, sizeof ps->group_name[g] - at, ")");
    }
    return 0;
}

// A pair: ["ACTUAL", "EXPECTED"], or { actual, expected, view, tensors } (cases/README.md).
static int read_pair(const ctx *x, const pp_toml_value *p, pp_case *c, pp_pair_spec *ps)
{
    int rc;
    memset(ps, 0, sizeof *ps);
    if (pp_toml_type_of(p) == PP_TOML_ARRAY && pp_toml_array_size(p) == 2) {
        if ((rc = pair_variant(x, p, pp_toml_array_at(p, 0), c, &ps->actual)) ||
            (rc = pair_variant(x, p, pp_toml_array_at(p, 1), c, &ps->expected)))
            return rc;
        return 0;
    }
    if (pp_toml_type_of(p) != PP_TOML_TABLE)
        return fail_at(x, p,
                       "each of 'pairs' must be [\"ACTUAL\", \"EXPECTED\"] or { actual = \"...\", expected = "
                       "\"...\", view = \"...\", tensors = [...] }",
                       NULL, NULL, NULL);
    static const char *const keys[] = {"actual", "expected", "view", "tensors"};
    if ((rc = pp_toml_check_keys(p, x->file, "a pair", keys, 4, x->err)))
        return rc;
    const pp_toml_value *a = pp_toml_get(p, "actual"), *e = pp_toml_get(p, "expected");
    if (!a || !e)
        return fail_at(x, p, "a pair needs 'actual' and 'expected'", NULL, NULL, NULL);
    if ((rc = pair_variant(x, p, a, c, &ps->actual)) || (rc = pair_variant(x, p, e, c, &ps->expected)))
        return rc;
    const pp_toml_value *v = pp_toml_get(p, "view");
    if (v) {
        const char *s;
        if ((rc = get_string(x, v, "view", &s)))
            return rc;
        pp_view view;
        char msg[200];
        if (pp_view_parse(s, &view, msg, sizeof msg))
            return fail_at(x, v, "%s", msg, NULL, NULL);
        if (view.kind == PP_VIEW_TE_CP_RANK && !view.world) {
            // the world is the larger of the two variants' (the op row knows where it lives)
            view.world = pp_op_view_world(c->op, &c->params, &c->variants[ps->actual].knobs,
                                          &c->variants[ps->expected].knobs);
            c->invalid_combination = view.rank >= view.world;
            if (view.rank >= view.world && c->op->view_world_knob)
                return pp_fail(x->err, PP_ERR_INPUT,
                               "%s:%d: view '%s' needs rank < world, and neither variant has %s > %d "
                               "(write te-cp-rank:R/W to name the world)",
                               x->file, pp_toml_line(v), s, c->op->view_world_knob, view.rank);
            if (view.rank >= view.world)
                return pp_fail(x->err, PP_ERR_INPUT,
                               "%s:%d: view '%s' needs rank < world, and the variants of op '%s' have no world "
                               "(write te-cp-rank:R/W to name it)",
                               x->file, pp_toml_line(v), s, c->op->name);
        }
        ps->view_world = view.world;
        snprintf(ps->view, sizeof ps->view, "%s", s);
    }
    const pp_toml_value *t = pp_toml_get(p, "tensors");
    if (t) {
        if ((rc = want_type(x, t, PP_TOML_ARRAY, "tensors")))
            return rc;
        if (pp_toml_array_size(t) < 1)
            return fail_at(x, t, "'tensors' needs at least one output or cat(...) group", NULL, NULL, NULL);
        for (int i = 0; i < pp_toml_array_size(t); i++)
            if ((rc = read_group(x, pp_toml_array_at(t, i), c->op, ps)))
                return rc;
    }
    return 0;
}

static int read_compare(const ctx *x, const pp_toml_value *t, pp_case *c)
{
    static const char *const keys[] = {"rtol", "atol", "equal_nan", "torch_version", "pairs"};
    int rc = pp_toml_check_keys(t, x->file, "[compare]", keys, 5, x->err);
    if (rc || !t)
        return rc;
    const pp_toml_value *r = pp_toml_get(t, "rtol"), *a = pp_toml_get(t, "atol"), *v;
    if ((r == NULL) != (a == NULL))
        return fail_at(x, r ? r : a, "'rtol' and 'atol' must be given both or neither, as torch insists (no %s)",
                       r ? "atol" : "rtol", NULL, NULL);
    if (r) {
        if ((rc = get_number(x, r, "rtol", &c->rtol)) || (rc = get_number(x, a, "atol", &c->atol)))
            return rc;
        if (!(c->rtol >= 0 && isfinite(c->rtol)))
            return fail_at(x, r, "'rtol' must be a finite number >= 0", NULL, NULL, NULL);
        if (!(c->atol >= 0 && isfinite(c->atol)))
            return fail_at(x, a, "'atol' must be a finite number >= 0", NULL, NULL, NULL);
        c->has_tolerances = 1;
    }
    if ((v = pp_toml_get(t, "equal_nan"))) {
        bool b;
        if ((rc = want_type(x, v, PP_TOML_BOOL, "equal_nan")))
            return rc;
        pp_toml_as_bool(v, &b);
        c->equal_nan = b;
    }
    if ((v = pp_toml_get(t, "torch_version"))) {
        const char *s;
        if ((rc = get_string(x, v, "torch_version", &s)))
            return rc;
        if (pp_parse_torch_version(s, &c->torch_major, &c->torch_minor))
            return fail_at(x, v, "'torch_version' = '%s' is not a torch version >= 1.10", s, NULL, NULL);
    }
    if ((v = pp_toml_get(t, "pairs"))) {
        if ((rc = want_type(x, v, PP_TOML_ARRAY, "pairs")))
            return rc;
        if (pp_toml_array_size(v) > PP_MAX_PAIRS)
            return fail_at(x, v, "more than 64 pairs", NULL, NULL, NULL);
        for (int i = 0; i < pp_toml_array_size(v); i++)
            if ((rc = read_pair(x, pp_toml_array_at(v, i), c, &c->pairs[c->n_pairs++])))
                return rc;
    }
    return 0;
}

// Every tensor name a comparison of case c can carry: the op's outputs, then each pair's groups
// as named in the reports (GROUP, with "@VIEW" when the pair has a view); distinct names only.
static int comparison_tensor_names(const pp_case *c, char (*buf)[PP_NAME_MAX], const char **names)
{
    int n = 0;
    for (int k = 0; k < c->op->n_outputs; k++)
        names[n++] = c->op->outputs[k];
    for (int p = 0; p < c->n_pairs; p++) {
        const pp_pair_spec *ps = &c->pairs[p];
        if (!ps->view[0] && !ps->n_groups)
            continue;
        for (int g = 0; g < (ps->n_groups ? ps->n_groups : c->op->n_outputs); g++) {
            snprintf(buf[n], PP_NAME_MAX, "%s%s%s", ps->n_groups ? ps->group_name[g] : c->op->outputs[g],
                     ps->view[0] ? "@" : "", ps->view);
            int dup = 0;
            for (int k = 0; k < n; k++)
                dup |= !strcmp(names[k], buf[n]);
            if (!dup) {
                names[n] = buf[n];
                n++;
            }
        }
    }
    return n;
}

// Splits "a.b.c" or "a.b.c.d" into the rule's parts.
static int read_gate(const ctx *x, const pp_toml_value *t, pp_case *c)
{
    c->slack = (pp_slack){0.005, 1.10, 1.10, 1.0};
    int rc;
    if (!t)
        return 0;
    if ((rc = want_type(x, t, PP_TOML_TABLE, "gate")))
        return rc;
    for (int i = 0; i < pp_toml_table_size(t); i++) {
        const char *key = pp_toml_table_key(t, i);
        const pp_toml_value *v = pp_toml_table_value(t, i);
        if (!strcmp(key, "slack")) {
            static const char *const sk[] = {"mismatch_fraction", "max_abs_diff", "max_rel_diff", "max_ulp"};
            double *dst[] = {&c->slack.mismatch_fraction, &c->slack.max_abs_diff, &c->slack.max_rel_diff,
                             &c->slack.max_ulp};
            if ((rc = want_type(x, v, PP_TOML_TABLE, "slack")) ||
                (rc = pp_toml_check_keys(v, x->file, "[gate] slack", sk, 4, x->err)))
                return rc;
            for (int j = 0; j < 4; j++) {
                const pp_toml_value *s = pp_toml_get(v, sk[j]);
                if (s && (rc = get_number(x, s, sk[j], dst[j])))
                    return rc;
                if (s && !(*dst[j] >= 0 && isfinite(*dst[j])))
                    return fail_at(x, s, "slack '%s' must be a finite number >= 0", sk[j], NULL, NULL);
            }
            continue;
        }
        if (c->n_rules == PP_MAX_GATE_RULES)
            return fail_at(x, v, "more than 64 gate rules", NULL, NULL, NULL);
        pp_gate_rule *r = &c->rules[c->n_rules];
        memset(r, 0, sizeof *r);
        r->line = pp_toml_line(v);
        char parts[4][PP_NAME_MAX];
        int np = 0;
        const char *s = key;
        while (np < 4) {
            size_t len = strcspn(s, ".");
            if (len == 0 || len >= PP_NAME_MAX)
                break;
            snprintf(parts[np++], PP_NAME_MAX, "%.*s", (int)len, s);
            s += len;
            if (*s != '.')
                break;
            s++;
        }
        if (*s || (np != 3 && np != 4))
            return fail_at(x, v,
                           "gate rule '%s' must be \"VARIANT.TENSOR.STAT\" or \"VARIANT.TENSOR.AGAINST.STAT\" "
                           "('*' matches any name), or 'slack'", key, NULL, NULL);
        snprintf(r->variant, sizeof r->variant, "%s", parts[0]);
        snprintf(r->tensor, sizeof r->tensor, "%s", parts[1]);
        snprintf(r->against, sizeof r->against, "%s", np == 4 ? parts[2] : "reference");
        snprintf(r->stat, sizeof r->stat, "%s", parts[np - 1]);
        if (!pp_statistic_find(r->stat) && pp_statistic_band_max(r->stat) < 0)
            return unknown_statistic(x, v, r->stat);
        if (!strchr(r->variant, '*') && pp_case_variant_index(c, r->variant) < 0) {
            const char *names[PP_MAX_VARIANTS];
            for (int k = 0; k < c->n_variants; k++)
                names[k] = c->variants[k].name;
            return unknown(x, v, "variant", r->variant, "[gate]", names, c->n_variants);
        }
        if (!strchr(r->tensor, '*') && pp_case_variant_index(c, r->tensor) < 0) {
            // an output, or the name of a pair's group or view ("cat(dq, dk, dv)@te-cp-rank:7")
            char names_buf[PP_MAX_OP_TENSORS + PP_MAX_PAIRS * PP_MAX_PAIR_GROUPS][PP_NAME_MAX];
            const char *names[PP_MAX_OP_TENSORS + PP_MAX_PAIRS * PP_MAX_PAIR_GROUPS];
            int n = comparison_tensor_names(c, names_buf, names), found = 0;
            for (int k = 0; k < n; k++)
                found |= !strcmp(names[k], r->tensor);
            if (!found)
                return unknown(x, v, "output tensor", r->tensor, "[gate]", names, n);
        }
        static const char *const bounds[] = {"min", "max"};
        if ((rc = want_type(x, v, PP_TOML_TABLE, key)) ||
            (rc = pp_toml_check_keys(v, x->file, "a gate rule", bounds, 2, x->err)))
            return rc;
        const pp_toml_value *mn = pp_toml_get(v, "min"), *mx = pp_toml_get(v, "max");
        if (!mn && !mx)
            return fail_at(x, v, "gate rule '%s' needs min or max", key, NULL, NULL);
        if (mn && (rc = get_number(x, mn, "min", &r->min)))
            return rc;
        if (mx && (rc = get_number(x, mx, "max", &r->max)))
            return rc;
        r->has_min = mn != NULL;
        r->has_max = mx != NULL;
        snprintf(r->text, sizeof r->text, "%s", key);
        c->n_rules++;
    }
    return 0;
}

// [point]: the values of one point of a sweep (src/pipeline/sweep.c writes it in place of the
// [sweep] table, each value on its [sweep] key's line, so a message names that line): the seed,
// [op] parameters and knobs, each one value. Read after [case], since the op names the keys; the
// values themselves are read where their [case], [op] or [knobs] namesakes are.
static int read_point(ctx *x, const pp_toml_value *t, pp_case *c)
{
    int rc = want_type(x, t, PP_TOML_TABLE, "point");
    if (rc)
        return rc;
    const char *names[1 + PP_MAX_PARAMS + PP_MAX_KNOBS];
    int n = pp_sweep_key_names(c->op, names);
    if ((rc = pp_toml_check_keys(t, x->file, "[point]", names, n, x->err)))
        return rc;
    for (int i = 0; i < pp_toml_table_size(t); i++) {
        const pp_toml_value *v = pp_toml_table_value(t, i);
        pp_toml_type ty = pp_toml_type_of(v);
        if (ty == PP_TOML_ARRAY || ty == PP_TOML_TABLE)
            return fail_at(x, v, "'%s' in [point] must be one value", pp_toml_table_key(t, i), NULL, NULL);
    }
    x->point = t;
    const pp_toml_value *v = pp_toml_get(t, "seed");
    int64_t seed;
    if (v && ((rc = want_type(x, v, PP_TOML_INT, "seed")) || (pp_toml_as_int(v, &seed), 0)))
        return rc;
    if (v && seed < 0)
        return pp_fail(x->err, PP_ERR_INPUT, "%s:%d: 'seed' must be >= 0", x->file, pp_toml_line(v));
    if (v)
        c->seed = (uint64_t)seed;
    return 0;
}

int pp_sweep_key_names(const pp_op *op, const char **names)
{
    int n = 0;
    names[n++] = "seed";
    for (int i = 0; i < op->n_params; i++)
        names[n++] = op->params[i].name;
    for (int i = 0; i < op->n_knobs; i++)
        names[n++] = op->knobs[i].name;
    return n;
}

// ---- the whole file --------------------------------------------------------------------------

int pp_case_variant_index(const pp_case *c, const char *name)
{
    for (int i = 0; i < c->n_variants; i++)
        if (!strcmp(c->variants[i].name, name))
            return i;
    return -1;
}

void pp_case_free(pp_case *c)
{
    free(c->variants);
    free(c->text);
    free(c->notes);
    memset(c, 0, sizeof *c);
}

char *pp_case_read_text(const char *path, size_t *len, pp_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        pp_fail(err, PP_ERR_INPUT, "%s: cannot read the case file: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - 1 - n, f);
        if (n < cap - 1 || cap > PP_TOML_MAX_BYTES)
            break;
        char *bigger = realloc(buf, cap * 2);
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        pp_fail(err, bad ? PP_ERR_INPUT : PP_ERR_RUNTIME, "%s: cannot read the case file", path);
        return NULL;
    }
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

int pp_case_load(const char *path, pp_case *c, pp_error *err)
{
    char *text = pp_case_read_text(path, NULL, err);
    if (!text) {
        memset(c, 0, sizeof *c);
        return err ? err->code : PP_ERR_INPUT;
    }
    int rc = pp_case_parse(text, strlen(text), path, c, err);
    free(text);
    return rc;
}

int pp_case_parse(const char *text, size_t len, const char *path, pp_case *c, pp_error *err)
{
    memset(c, 0, sizeof *c);
    snprintf(c->path, sizeof c->path, "%s", path);
    c->torch_major = PP_TORCH_DEFAULT_MAJOR;
    c->torch_minor = PP_TORCH_DEFAULT_MINOR;
    c->text = malloc(len + 1);
    if (!c->text)
        return pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    memcpy(c->text, text, len);
    c->text[len] = '\0';
    pp_toml_value *root = NULL;
    int rc = pp_toml_parse(text, len, path, &root, err);
    if (rc)
        return rc;
    ctx x = {path, err, NULL};
    const pp_toml_value *t;
    static const char *const top[] = {"case", "op", "inputs", "knobs", "variants", "matrix", "compare", "gate",
                                      "sweep", "point"};
    const pp_toml_value *ct = pp_toml_get(root, "case");
    if (!(rc = pp_toml_check_keys(root, path, "the top level", top, 10, err))) {
        if (!ct)
            rc = pp_fail(err, PP_ERR_INPUT, "%s:1: the case needs a [case] table with name and op", path);
        else if (!(rc = want_type(&x, ct, PP_TOML_TABLE, "case")))
            rc = read_case_table(&x, ct, c);
    }
    if (!rc && (t = pp_toml_get(root, "sweep")))
        rc = fail_at(&x, t, "[sweep] makes one case per point: run it with 'precprobe run', list its points with "
                            "'precprobe list-points'", NULL, NULL, NULL);
    if (!rc && (t = pp_toml_get(root, "point")))
        rc = read_point(&x, t, c);
    if (!rc && (t = pp_toml_get(root, "op")) && pp_toml_type_of(t) != PP_TOML_TABLE)
        rc = want_type(&x, t, PP_TOML_TABLE, "op");
    if (!rc)
        rc = read_params(&x, pp_toml_get(root, "op"), root, c);
    c->params.seed = c->seed;
    if (!rc && (t = pp_toml_get(root, "inputs")) && pp_toml_type_of(t) != PP_TOML_TABLE)
        rc = want_type(&x, t, PP_TOML_TABLE, "inputs");
    if (!rc)
        rc = read_inputs(&x, pp_toml_get(root, "inputs"), c);
    if (!rc)
        rc = read_variants(&x, root, c);
    if (!rc && (t = pp_toml_get(root, "compare")) && pp_toml_type_of(t) != PP_TOML_TABLE)
        rc = want_type(&x, t, PP_TOML_TABLE, "compare");
    if (!rc)
        rc = read_compare(&x, pp_toml_get(root, "compare"), c);
    if (!rc)
        rc = read_gate(&x, pp_toml_get(root, "gate"), c);
    pp_toml_free(root);
    if (rc && err) {
        // Names quoted in messages come from the file: escape control characters once, here,
        // so every error stays one line whatever the file holds.
        char raw[sizeof err->msg];
        memcpy(raw, err->msg, sizeof raw);
        pp_printable(raw, err->msg, sizeof err->msg);
    }
    return rc;
}
