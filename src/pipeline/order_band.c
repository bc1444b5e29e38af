// order_band.c — the --orders stage (order_band.h).
#include "pipeline/order_band.h"

#include <stdlib.h>
#include <string.h>

#include "core/statistic.h"
#include "pipeline/compare.h"

// NaN last, so min and max are numbers whenever some run gave one.
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    if (x != x || y != y)
        return (x != x) - (y != y);
    return (x > y) - (x < y);
}

int pp_band_overlap(const double a[3], const double b[3])
{
    if (a[0] != a[0] || a[2] != a[2] || b[0] != b[0] || b[2] != b[2])
        return 1;
    return !(a[2] < b[0] || b[2] < a[0]);
}

pp_order_verdict pp_order_verdict_of(double x, const double bx[3], double y, const double by[3])
{
    if (x != x || y != y)
        return PP_ORDER_UNDECIDED;
    if (x == y)
        return PP_ORDER_EQUAL;
    int robust = !pp_band_overlap(bx, by);
    if (x < y)
        return robust ? PP_ORDER_LOWER_ROBUST : PP_ORDER_LOWER;
    return robust ? PP_ORDER_HIGHER_ROBUST : PP_ORDER_HIGHER;
}

int pp_order_pair(const pp_comparison *a, const pp_comparison *b)
{
    return a->band_runs && b->band_runs && a->n_band_stats == b->n_band_stats && !strcmp(a->tensor, b->tensor) &&
           !strcmp(a->against, b->against) && strcmp(a->variant, b->variant);
}

// Whether variant v is re-run: ours to order (not external, the emulation runs it) and run.
static int reruns(const pp_run_plan *plan, const pp_run_products *p, int v)
{
    const pp_case *c = plan->c;
    if (c->variants[v].external || !pp_op_emulated(c->op, &c->variants[v].knobs))
        return 0;
    for (int t = 0; t < c->op->n_outputs; t++)
        if (p->variants[v].outs[t].data)
            return 1;
    return 0;
}

static int named_rerun(const pp_case *c, const unsigned char *rerun, const char *name)
{
    for (int v = 0; v < c->n_variants; v++)
        if (rerun[v] && !strcmp(c->variants[v].name, name))
            return 1;
    return 0;
}

// The re-run variants' outputs under order seed s, in alt (outs allocated here, like p's).
static int run_seeded(const pp_run_plan *plan, const pp_run_products *p, const unsigned char *rerun, uint64_t s,
                      pp_variant_products *alt, pp_error *err)
{
    const pp_case *c = plan->c;
    const pp_op *op = c->op;
    pp_op_params prm = c->params;
    prm.order_seed = s;
    int rc = PP_OK;
    for (int v = 0; v < c->n_variants && !rc; v++) {
        if (!rerun[v])
            continue;
        memset(alt[v].outs, 0, sizeof alt[v].outs);
        for (int t = 0; t < op->n_outputs && !rc; t++) {
            const pp_tensor *n = &p->variants[v].outs[t];
            if (n->data)
                rc = pp_tensor_alloc(&alt[v].outs[t], n->ndim, n->shape, n->format, err);
        }
        if (!rc)
            rc = op->run_cpu(&prm, &c->variants[v].knobs, p->groups[plan->group_of[v]].inputs, alt[v].outs,
                             plan->threads, err);
    }
    return rc;
}

static void free_seeded(const pp_run_plan *plan, const unsigned char *rerun, pp_variant_products *alt)
{
    for (int v = 0; v < plan->c->n_variants; v++)
        for (int t = 0; rerun[v] && t < plan->c->op->n_outputs; t++)
            pp_tensor_free(&alt[v].outs[t]);
}

int pp_run_order_bands(const pp_run_plan *plan, int orders, const pp_run_products *p, const unsigned char *selected,
                       pp_comparison *cmps, int n, pp_error *err)
{
    if (orders <= 0 || n <= 0)
        return PP_OK;
    const pp_case *c = plan->c;
    int ns = pp_statistic_count() < PP_BAND_MAX_STATS ? pp_statistic_count() : PP_BAND_MAX_STATS;
    size_t runs = (size_t)orders + 1;
    double *val = malloc((size_t)n * (size_t)ns * runs * sizeof *val);
    unsigned char *rerun = calloc((size_t)c->n_variants, 1);
    pp_variant_products *alt = calloc((size_t)c->n_variants, sizeof *alt);
    if (!val || !rerun || !alt) {
        free(val), free(rerun), free(alt);
        return pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    }
    for (int v = 0; v < c->n_variants; v++) {
        rerun[v] = (unsigned char)reruns(plan, p, v);
        alt[v] = p->variants[v];  // not re-run: the nominal outputs (borrowed)
    }
    for (int i = 0; i < n; i++)
        for (int k = 0; k < ns; k++)
            val[((size_t)i * (size_t)ns + (size_t)k) * runs] = pp_statistic_at(k)->value(&cmps[i].stats);
    pp_run_products q = *p;  // borrowed: groups, cross-checks; variants replaced
    q.variants = alt;
    int rc = PP_OK;
    for (int s = 1; s <= orders && !rc; s++) {
        pp_comparison *cs = NULL;
        int m = 0;
        rc = run_seeded(plan, p, rerun, (uint64_t)s, alt, err);
        if (!rc)
            rc = pp_run_compare(plan, &q, selected, &cs, &m, err);
        if (!rc && m != n)
            rc = pp_fail(err, PP_ERR_RUNTIME, "--orders: order %d made %d comparisons, not %d", s, m, n);
        for (int i = 0; !rc && i < n; i++)
            for (int k = 0; k < ns; k++)
                val[((size_t)i * (size_t)ns + (size_t)k) * runs + (size_t)s] = pp_statistic_at(k)->value(&cs[i].stats);
        pp_comparisons_free(cs, m);
        free_seeded(plan, rerun, alt);
        for (int v = 0; v < c->n_variants; v++)
            alt[v] = p->variants[v];
    }
    for (int i = 0; !rc && i < n; i++) {
        pp_comparison *cm = &cmps[i];
        if (!named_rerun(c, rerun, cm->variant) && !named_rerun(c, rerun, cm->against))
            continue;
        cm->n_band_stats = ns;
        cm->band_runs = (int)runs;
        for (int k = 0; k < ns; k++) {
            double *x = &val[((size_t)i * (size_t)ns + (size_t)k) * runs];
            qsort(x, runs, sizeof *x, cmp_double);
            cm->band[k][0] = x[0];
            cm->band[k][1] = x[(runs - 1) / 2];  // the lower median: a value some run gave
            cm->band[k][2] = x[runs - 1];
            for (size_t r = runs; r > 0 && cm->band[k][2] != cm->band[k][2]; r--)
                cm->band[k][2] = x[r - 1];  // the max of the numbers
        }
    }
    free(val), free(rerun), free(alt);
    return rc;
}
