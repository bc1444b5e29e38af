// report_schema_verdict_hook.c — report.h5's order verdict (run --orders): on each banded
// comparison, which of its verdict partners (pipeline/order_band.h pp_order_pair: the other
// variants compared with the same tensor against the same expected tensor) it is closer to the
// expected than, per statistic, and whether under every order. Derived from the bands, so written
// for other readers only: precprobe recomputes it from the bands when it reads a report back.
#include <stdio.h>
#include <stdlib.h>

#include "core/statistic.h"
#include "io/h5attr.h"
#include "pipeline/order_band.h"
#include "report/report_schema_hooks.h"

// order_verdict_partners (str[P]) and <statistic>_order_verdict (int32[P]): pp_order_verdict_of
// this comparison's figure against partner p's (2: lower under every order, 1: lower nominally, the
// bands overlap, 0: equal, −1, −2 the same for higher, 3: a NaN figure). Absent without partners.
static int write_verdicts(const pp_rs_io *io, hid_t loc, const char *where, const char *name, const pp_rs_frame *fr)
{
    (void)io, (void)where, (void)name;
    const pp_comparison *c = &((const cmp_rec *)fr->obj)->c;
    while (fr->up)
        fr = fr->up;
    const pp_run_result *r = fr->obj;
    if (!c->band_runs)
        return 0;
    int ns = c->n_band_stats < pp_statistic_count() ? c->n_band_stats : pp_statistic_count();
    const char **names = malloc(sizeof *names * (size_t)(r->n_comparisons + 1));
    int *who = malloc(sizeof *who * (size_t)(r->n_comparisons + 1)), *v = malloc(sizeof *v * (size_t)(r->n_comparisons + 1));
    int np = 0, bad = !names || !who || !v;
    for (int j = 0; !bad && j < r->n_comparisons; j++)
        if (pp_order_pair(c, &r->comparisons[j])) {
            names[np] = r->comparisons[j].variant;
            who[np++] = j;
        }
    if (!bad && np) {
        bad = pp_h5attr_put_vstrs(loc, "order_verdict_partners", names, (size_t)np);
        for (int k = 0; !bad && k < ns; k++) {
            const pp_statistic *st = pp_statistic_at(k);
            for (int p = 0; p < np; p++) {
                const pp_comparison *o = &r->comparisons[who[p]];
                v[p] = (int)pp_order_verdict_of(st->value(&c->stats), c->band[k], st->value(&o->stats), o->band[k]);
            }
            char an[96];
            snprintf(an, sizeof an, "%s_order_verdict", st->name);
            bad = pp_h5attr_put(loc, an, H5T_STD_I32LE, H5T_NATIVE_INT, 1, (size_t)np, v);
        }
    }
    free(names), free(who), free(v);
    return bad ? -1 : 0;
}

const pp_rs_hook pp_report_order_verdict_hook = {NULL, write_verdicts, NULL};
