// ops.c — the operation table: one row per operation. Each row lives in its own op_<name>.c.
#include "op.h"

#include <stdio.h>
#include <string.h>

extern const pp_op pp_op_gemm;

static const pp_op *const ops[] = {
    &pp_op_gemm,
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
    return pp_choice_index(knob->values, value);
}

void pp_knob_values_str(const pp_knob_def *knob, char *buf, size_t n)
{
    pp_choices_str(knob->values, buf, n);
}

pp_format_id pp_op_output_format(const pp_op *op, const pp_op_knobs *k, int i)
{
    return op->output_format ? op->output_format(k, i) : op->format(k);
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
