// comparison.c — one comparison of two tensors (comparison.h).
#include "pipeline/comparison.h"

#include <stdio.h>
#include <string.h>

static void fill_opts(const pp_case *c, pp_format_id actual, pp_format_id expected, pp_close_opts *o)
{
    memset(o, 0, sizeof *o);
    o->equal_nan = c->equal_nan;
    o->torch_major = c->torch_major;
    o->torch_minor = c->torch_minor;
    o->actual_format = actual;
    o->expected_format = expected;
    if (c->has_tolerances) {
        o->rtol = c->rtol;
        o->atol = c->atol;
    } else {
        pp_default_tolerances(actual, expected, &o->rtol, &o->atol);
    }
}

void pp_compare_tensors(pp_comparison *cmp, const pp_case *c, const char *variant, const char *tensor,
                        const char *against, const pp_tensor *a, const pp_tensor *e, int identical)
{
    memset(cmp, 0, sizeof *cmp);
    snprintf(cmp->variant, sizeof cmp->variant, "%s", variant);
    snprintf(cmp->tensor, sizeof cmp->tensor, "%s", tensor);
    snprintf(cmp->against, sizeof cmp->against, "%s", against);
    cmp->ndim = a->ndim;
    memcpy(cmp->shape, a->shape, sizeof cmp->shape);
    fill_opts(c, a->format, e->format, &cmp->opts);
    if (identical) {
        cmp->opts.rtol = cmp->opts.atol = 0.0;
        cmp->opts.equal_nan = 1;
    }
    pp_close_stats_init(&cmp->stats);
    pp_close_stats_update(&cmp->stats, &cmp->opts, a->data, e->data, a->numel, 0);
    // error per position and head for the HTML charts: against the reference only, and optional
    // (out of memory leaves them out, n_pos 0)
    int o = 0, pos_dim, head_dim;
    while (o < c->op->n_outputs && strcmp(c->op->outputs[o], tensor))
        o++;
    if (!strcmp(against, "reference") && o < c->op->n_outputs && c->op->axes &&
        c->op->axes(&c->params, o, &pos_dim, &head_dim))
        pp_axis_stats_compute(&cmp->axes, a->ndim, a->shape, pos_dim, head_dim, a->data, e->data);
}
