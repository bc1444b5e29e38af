// ops.c — the operation table: one row per operation. Each row lives in its own op_<name>.c.
#include "op.h"

#include <stdio.h>
#include <string.h>

extern const pp_op pp_op_adamw;
extern const pp_op pp_op_gemm;

static const pp_op *const ops[] = {
    &pp_op_gemm,
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

int pp_knob_value_index(const pp_knob_def *knob, const char *value)
{
    for (int i = 0; knob->values[i]; i++)
        if (!strcmp(knob->values[i], value))
            return i;
    return -1;
}

void pp_knob_values_str(const pp_knob_def *knob, char *buf, size_t n)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; knob->values[i] && at < n; i++)
        at += (size_t)snprintf(buf + at, n - at, i ? ", %s" : "%s", knob->values[i]);
}

double pp_op_param(const pp_op *op, const pp_op_params *p, const char *name)
{
    int i = pp_op_param_index(op, name);
    if (i < 0)
        return 0.0;
    return p->given[i] ? p->v[i] : op->params[i].def;
}
