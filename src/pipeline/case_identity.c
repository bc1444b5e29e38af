// case_identity.c — the differences between two cases' identities (case_identity.h).
#include "pipeline/case_identity.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct diff_out {
    char *buf;
    size_t n, used;
    int count;
} diff_out;

static void line(diff_out *d, const char *fmt, ...)
{
    d->count++;
    if (d->used + 1 >= d->n)
        return;
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    size_t need = strlen(text) + 4;
    if (d->used + need + 6 >= d->n) {  // keep room for the ellipsis
        d->used += (size_t)snprintf(d->buf + d->used, d->n - d->used, "  ...\n");
        d->n = d->used + 1;           // nothing more fits
        return;
    }
    d->used += (size_t)snprintf(d->buf + d->used, d->n - d->used, "  %s\n", text);
}

static int same_double(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

static void param_str(const pp_param_def *p, double v, char *s, size_t n)
{
    if (p->kind == PP_PARAM_CHOICE)
        snprintf(s, n, "\"%s\"", p->choices[(int)v]);
    else if (p->kind == PP_PARAM_INT)
        snprintf(s, n, "%lld", (long long)v);
    else
        snprintf(s, n, "%.17g", v);
}

static void knob_str(const pp_knob_def *k, const pp_op_knobs *ks, int ki, char *s, size_t n)
{
    if (k->values)
        snprintf(s, n, "\"%s\"", k->values[ks->v[ki]]);
    else
        pp_knob_setting_text(k, ks, ki, s, n);  // an integer, or a list "[…]"
}

static void dist_str(const pp_input_spec *in, char *s, size_t n)
{
    if (in->file[0]) {
        snprintf(s, n, "file %s%s%s", in->file, in->has_format ? " as " : "",
                 in->has_format ? pp_format_get(in->format).name : "");
        return;
    }
    const pp_dist *d = &in->dist;
    int k = d->kind == PP_DIST_NORMAL ? snprintf(s, n, "normal(mean %.17g, std %.17g)", d->mean, d->std)
                                      : snprintf(s, n, "uniform(low %.17g, high %.17g)", d->low, d->high);
    for (int j = 0; j < d->n_axis_scale && k > 0 && (size_t)k < n; j++)
        k += snprintf(s + k, n - (size_t)k, "%s%.17g%s", j ? ", " : ", axis_scale along axis %d [", d->axis_scale[j],
                      j + 1 == d->n_axis_scale ? "]" : "");
}

static int same_input(const pp_input_spec *a, const pp_input_spec *b)
{
    if (strcmp(a->file, b->file) || a->has_format != b->has_format || (a->has_format && a->format != b->format))
        return 0;
    if (a->file[0])
        return 1;
    const pp_dist *x = &a->dist, *y = &b->dist;
    if (x->kind != y->kind || x->n_axis_scale != y->n_axis_scale || (x->n_axis_scale && x->axis != y->axis))
        return 0;
    if (x->kind == PP_DIST_NORMAL ? !same_double(x->mean, y->mean) || !same_double(x->std, y->std)
                                  : !same_double(x->low, y->low) || !same_double(x->high, y->high))
        return 0;
    for (int j = 0; j < x->n_axis_scale; j++)
        if (!same_double(x->axis_scale[j], y->axis_scale[j]))
            return 0;
    return 1;
}

static void variant_diff(diff_out *d, const pp_op *op, const pp_variant_spec *a, const pp_variant_spec *b)
{
    if (a->external != b->external) {
        line(d, "variant %s: %s in the baseline, %s now", a->name, a->external ? "external" : "emulated",
             b->external ? "external" : "emulated");
        return;
    }
    if (a->external) {
        for (int o = 0; o < op->n_outputs; o++)
            if (strcmp(a->external_files[o], b->external_files[o]))
                line(d, "variant %s: external %s: %s -> %s", a->name, op->outputs[o],
                     a->external_files[o][0] ? a->external_files[o] : "(none)",
                     b->external_files[o][0] ? b->external_files[o] : "(none)");
        return;
    }
    for (int k = 0; k < op->n_knobs; k++)
        if (!pp_knob_same(&op->knobs[k], &a->knobs, &b->knobs, k)) {
            char x[PP_NAME_MAX], y[PP_NAME_MAX];
            knob_str(&op->knobs[k], &a->knobs, k, x, sizeof x);
            knob_str(&op->knobs[k], &b->knobs, k, y, sizeof y);
            line(d, "variant %s: %s %s -> %s", a->name, op->knobs[k].name, x, y);
        }
}

int pp_case_identity_diff(const pp_case *base, const pp_case *now, char *buf, size_t n)
{
    diff_out d = {buf, n, 0, 0};
    if (n)
        buf[0] = '\0';
    if (base->op != now->op) {
        line(&d, "op: %s -> %s", base->op->name, now->op->name);
        return d.count;  // nothing else is comparable
    }
    const pp_op *op = now->op;
    if (base->seed != now->seed)
        line(&d, "seed: %llu -> %llu", (unsigned long long)base->seed, (unsigned long long)now->seed);
    for (int i = 0; i < op->n_params; i++)
        if (!same_double(base->params.v[i], now->params.v[i])) {
            char x[64], y[64];
            param_str(&op->params[i], base->params.v[i], x, sizeof x);
            param_str(&op->params[i], now->params.v[i], y, sizeof y);
            line(&d, "[op] %s: %s -> %s", op->params[i].name, x, y);
        }
    for (int i = 0; i < op->n_inputs; i++)
        if (!same_input(&base->inputs[i], &now->inputs[i])) {
            char x[400], y[400];
            dist_str(&base->inputs[i], x, sizeof x);
            dist_str(&now->inputs[i], y, sizeof y);
            line(&d, "input %s: %s -> %s", op->inputs[i], x, y);
        }
    for (int v = 0; v < base->n_variants; v++) {
        int w = pp_case_variant_index(now, base->variants[v].name);
        if (w < 0)
            line(&d, "variant %s: in the baseline, not in the case", base->variants[v].name);
        else
            variant_diff(&d, op, &base->variants[v], &now->variants[w]);
    }
    return d.count;
}
