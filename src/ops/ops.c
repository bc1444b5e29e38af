// ops.c — the operation table: one row per operation. Each row lives in its own op_<name>.c.
#include "ops/op.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const pp_op pp_op_adamw;
extern const pp_op pp_op_gemm;
extern const pp_op pp_op_attention;

const pp_knob_meaning pp_knob_formats[] = {
    {"fp16", PP_FMT_FP16}, {"bf16", PP_FMT_BF16}, {"fp32", PP_FMT_FP32}, {NULL, 0},
};

const pp_knob_meaning pp_knob_formats_scaled[] = {
    {"fp16", PP_FMT_FP16}, {"bf16", PP_FMT_BF16}, {"fp32", PP_FMT_FP32},
    {"e4m3", PP_FMT_E4M3}, {"e5m2", PP_FMT_E5M2}, {"e2m1", PP_FMT_E2M1}, {NULL, 0},
};

static const pp_op *const ops[] = {
    &pp_op_gemm,
    &pp_op_attention,
    &pp_op_adamw,
};

int pp_op_count(void)
{
    return (int)(sizeof ops / sizeof ops[0]);
}

const pp_op *pp_op_at(int i)
{
    return i >= 0 && i < pp_op_count() ? ops[i] : NULL;
}

const pp_op *pp_op_find(const char *name)
{
    for (int i = 0; i < pp_op_count(); i++)
        if (!strcmp(ops[i]->name, name))
            return ops[i];
    return NULL;
}

int pp_op_param_index(const pp_op *op, const char *name)
{
    for (int i = 0; i < op->n_params; i++)
        if (!strcmp(op->params[i].name, name))
            return i;
    return -1;
}

int pp_op_knob_index(const pp_op *op, const char *name)
{
    for (int i = 0; i < op->n_knobs; i++)
        if (!strcmp(op->knobs[i].name, name))
            return i;
    return -1;
}

int pp_choice_index(const char *const *choices, const char *name)
{
    for (int i = 0; choices[i]; i++)
        if (!strcmp(choices[i], name))
            return i;
    return -1;
}

void pp_choices_str(const char *const *choices, char *buf, size_t n)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; choices[i] && at < n; i++)
        at += (size_t)snprintf(buf + at, n - at, i ? ", %s" : "%s", choices[i]);
}

int pp_knob_value_index(const pp_knob_def *knob, const char *value)
{
    if (knob->list_max > 0)  // a list is read as a TOML array (src/pipeline/case.c); as text only its default
        return !strcmp(value, "[]") || !value[0] ? 0 : -1;
    if (knob->values) {
        int i = pp_choice_index(knob->values, value);
        pp_format_id f;
        // A storage-format knob takes torch's spellings too ("bfloat16", "torch.float16"),
        // stored as the format's own name, so variant names and reports do not change.
        if (i < 0 && (knob->meanings == pp_knob_formats || knob->meanings == pp_knob_formats_scaled) &&
            !pp_format_from_name(value, &f))
            i = pp_choice_index(knob->values, pp_format_get(f).name);
        return i;
    }
    // an integer knob: plain decimal digits, no sign, no leading zeros, within range
    size_t len = strlen(value);
    if (len == 0 || len > 9 || (value[0] == '0' && len > 1))
        return -1;
    for (size_t i = 0; i < len; i++)
        if (value[i] < '0' || value[i] > '9')
            return -1;
    long v = strtol(value, NULL, 10);
    return v >= knob->int_min && v <= knob->int_max ? (int)v : -1;
}

void pp_knob_values_str(const pp_knob_def *knob, char *buf, size_t n)
{
    if (knob->list_max > 0)
        snprintf(buf, n, "a list of at most %d non-negative finite numbers", knob->list_max);
    else if (knob->values)
        pp_choices_str(knob->values, buf, n);
    else
        snprintf(buf, n, "an integer from %lld to %lld", (long long)knob->int_min, (long long)knob->int_max);
}

int pp_knob_id(const pp_knob_def *knob, int v)
{
    if (!knob->values || !knob->meanings || v < 0)
        return -1;
    for (int i = 0; knob->meanings[i].value; i++)
        if (!strcmp(knob->meanings[i].value, knob->values[v]))
            return knob->meanings[i].id;
    return -1;
}

void pp_knob_text(const pp_knob_def *knob, int v, char *buf, size_t n)
{
    if (knob->values)
        snprintf(buf, n, "%s", knob->values[v]);
    else
        snprintf(buf, n, "%d", v);
}

int pp_knob_setting_text(const pp_knob_def *knob, const pp_op_knobs *k, int ki, char *buf, size_t n)
{
    if (knob->list_max <= 0) {
        pp_knob_text(knob, k->v[ki], buf, n);
        return (int)strlen(buf);
    }
    size_t at = 0;
    int len = snprintf(buf, n, "[");
    for (int i = 0; i < k->v[ki]; i++) {
        at = (size_t)len < n ? (size_t)len : n;
        len += snprintf(buf + at, n - at, i ? ", %.17g" : "%.17g", k->list[ki][i]);
    }
    at = (size_t)len < n ? (size_t)len : n;
    len += snprintf(buf + at, n - at, "]");
    return len;
}

int pp_knob_same(const pp_knob_def *knob, const pp_op_knobs *a, const pp_op_knobs *b, int ki)
{
    if (a->v[ki] != b->v[ki])
        return 0;
    return knob->list_max <= 0 || !memcmp(a->list[ki], b->list[ki], (size_t)a->v[ki] * sizeof a->list[ki][0]);
}

pp_format_id pp_op_output_format(const pp_op *op, const pp_op_knobs *k, int i)
{
    return op->output_format ? op->output_format(k, i) : op->format(k);
}

pp_format_id pp_op_saved_format(const pp_op *op, const pp_op_params *p, const pp_op_knobs *k, int i)
{
    return op->saved_format ? op->saved_format(p, k, i) : pp_op_output_format(op, k, i);
}

int pp_op_output_active(const pp_op *op, const pp_op_params *p, const pp_op_knobs *k, int i)
{
    return op->output_active ? op->output_active(p, k, i) : 1;
}

double pp_op_param(const pp_op *op, const pp_op_params *p, const char *name)
{
    int i = pp_op_param_index(op, name);
    if (i < 0)
        return 0.0;
    return p->given[i] ? p->v[i] : op->params[i].def;
}

const char *pp_knob_setting_value(const pp_knob_setting *knobs, int n_knobs, const char *name)
{
    for (int k = 0; k < n_knobs; k++)
        if (!strcmp(knobs[k].name, name))
            return knobs[k].value;
    return NULL;
}

int pp_op_view_world(const pp_op *op, const pp_op_params *p, const pp_op_knobs *a, const pp_op_knobs *e)
{
    if (!op->view_world)
        return 0;
    int wa = op->view_world(p, a), we = op->view_world(p, e);
    return wa > we ? wa : we;
}

int pp_op_emulated(const pp_op *op, const pp_op_knobs *k)
{
    return !op->emulated || op->emulated(k);
}

const char *pp_op_vendor_note(const pp_op *op, const pp_variant_result *vr)
{
    return op && op->vendor_note ? op->vendor_note(vr->knobs, vr->n_knobs) : NULL;
}

const pp_seq_chunking *pp_op_chunking(const char *op_name)
{
    const pp_op *op = pp_op_find(op_name);
    return op ? op->chunking : NULL;
}
