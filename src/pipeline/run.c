// run.c — a case run end to end: plan → execute and compare (interleaved, pipeline/stream.h) →
// assemble (pipeline/plan.h).
#include "pipeline/run.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/assemble.h"
#include "pipeline/order_band.h"
#include "pipeline/stream.h"

int pp_run_case(const pp_case *c, const pp_run_opts *o, pp_run_result *r, pp_error *err)
{
    memset(r, 0, sizeof *r);
    pp_run_plan plan;
    pp_run_products products;
    memset(&products, 0, sizeof products);
    pp_comparison *cmps = NULL;
    int n = 0;
    int rc = pp_run_plan_make(c, o, &plan, err);
    if (!rc)
        rc = pp_run_products_make(&plan, &products, err);
    if (!rc)  // execute and compare interleaved: each tensor freed after its last reader
        rc = pp_run_stream(&plan, o, &products, NULL, &cmps, &n, err);
    if (!rc)
        rc = pp_run_order_bands(&plan, o->orders, &products, NULL, cmps, n, err);
    if (!rc)
        rc = pp_run_assemble(&plan, o, &products, cmps, n, r, err);  // takes cmps
    if (plan.c)
        pp_run_products_free(&plan, &products);
    pp_run_plan_free(&plan);
    return rc;
}

int pp_run_reference(const pp_case *c, const pp_run_opts *o, pp_format_id format, pp_tensor *inputs,
                     pp_tensor *refs, pp_reference_info *info, pp_error *err)
{
    const pp_op *op = c->op;
    int threads = o->threads > 0 ? o->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    pp_format_group g;
    memset(&g, 0, sizeof g);
    g.format = format;
    int any = 0;
    for (int v = 0; v < c->n_variants; v++)
        if (op->format(&c->variants[v].knobs) == format) {
            any = 1;
            for (int t = 0; t < op->n_outputs; t++)
                g.want[t] |= pp_op_output_active(op, &c->params, &c->variants[v].knobs, t);
        }
    if (!any)
        for (int t = 0; t < op->n_outputs; t++)
            g.want[t] = pp_op_output_active(op, &c->params, &c->variants[0].knobs, t);
    int rc = pp_run_group_inputs(c, &g, err);
    if (!rc)
        rc = pp_run_group_reference(c, o, &g, threads < 1 ? 1 : threads, err);
    if (rc) {
        pp_run_group_free(op, &g);
        return rc;
    }
    memcpy(inputs, g.inputs, sizeof g.inputs[0] * (size_t)op->n_inputs);
    memcpy(refs, g.refs, sizeof g.refs[0] * (size_t)op->n_outputs);
    memcpy(info, g.info, sizeof g.info[0] * (size_t)op->n_outputs);
    // the tensors are the caller's now; a traced op's trajectory (AdamW's snapshots and loss) has
    // no reader here and is freed (tests/test_run_reference.c, under ASan)
    if (g.trace && op->traced)
        op->traced->trace_free(g.trace);
    return PP_OK;
}
