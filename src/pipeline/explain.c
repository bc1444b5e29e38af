// explain.c — `precprobe explain` over the staged pipeline (explain.h): plan the comparisons of the
// variants explained, execute and compare them once (the nominal run, the reference through the
// cache), then rerun each variant on the CPU emulation under exact-site masks and compare again.
#include "pipeline/explain.h"

#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/statistic.h"
#include "interrupt.h"
#include "parallel.h"
#include "pipeline/assemble.h"
#include "pipeline/compare.h"
#include "pipeline/order_band.h"
#include "sites.h"

pp_explain_stats pp_explain_stats_of(const pp_close_stats *s)
{
    pp_explain_stats x = {
        .mismatch_fraction = pp_statistic_value("mismatch_fraction", s),
        .max_abs_error = pp_statistic_value("max_abs_error", s),
        .rms = pp_statistic_value("rms", s),
        .max_ulp = pp_statistic_value("max_ulp", s),
        .nonfinite = s->nan_actual + s->inf_actual,
    };
    return x;
}

// ---------------------------------------------------------------------------------------------
// Which variants, which comparisons

static int variant_index(const pp_case *c, const char *name)
{
    for (int v = 0; v < c->n_variants; v++)
        if (!strcmp(c->variants[v].name, name))
            return v;
    return -1;
}

static uint64_t sites_of(const pp_case *c, int v)
{
    const pp_variant_spec *vs = &c->variants[v];
    if (vs->external || !pp_op_emulated(c->op, &vs->knobs) || !c->op->explain_sites)
        return 0;
    return c->op->explain_sites(&c->params, &vs->knobs);
}

const char *pp_explain_none(const pp_case *c, int v)
{
    const pp_variant_spec *vs = &c->variants[v];
    if (vs->external || !pp_op_emulated(c->op, &vs->knobs) || !c->op->explain_none || sites_of(c, v))
        return NULL;
    return c->op->explain_none(&c->params, &vs->knobs);
}

// The pair (actual v, expected w) of case cc, appended (whole tensors) when the case has none.
static int pair_of(pp_case *cc, int v, int w, int *pair, pp_error *err)
{
    for (int p = 0; p < cc->n_pairs; p++)
        if (cc->pairs[p].actual == v && cc->pairs[p].expected == w) {
            *pair = p;
            return PP_OK;
        }
    if (cc->n_pairs >= PP_MAX_PAIRS)
        return pp_fail(err, PP_ERR_INPUT, "%s: explain: no room for the pair (%s, %s) (at most %d pairs)", cc->path,
                       cc->variants[v].name, cc->variants[w].name, PP_MAX_PAIRS);
    pp_pair_spec *ps = &cc->pairs[cc->n_pairs];
    memset(ps, 0, sizeof *ps);
    ps->actual = v;
    ps->expected = w;
    *pair = cc->n_pairs++;
    return PP_OK;
}

// The compare tasks of variant v's explanation: against the reference (w < 0) or its pair. A
// second comparison (exact on the original or quantised inputs) is not explained: its reference
// sees other inputs than the variant, so no site of the variant's can close that gap.
static void select_compares(const pp_run_plan *plan, int v, int pair, unsigned char *sel)
{
    for (int i = 0; i < plan->n_tasks; i++) {
        const pp_task *t = &plan->tasks[i];
        sel[i] = pair < 0 ? t->kind == PP_TASK_COMPARE && t->variant == v && !t->second
                          : t->kind == PP_TASK_COMPARE_PAIR && t->pair == pair;
    }
}

// ---------------------------------------------------------------------------------------------
// One variant under a mask

typedef struct explain_job {
    const pp_run_plan *plan;
    const pp_run_products *p;
    const unsigned char *sel;  // its compare tasks (without their dependencies)
    int v;
    int w;                     // the variant compared against, or -1 (the reference)
    int threads;               // workers of each masked run (explain_runs: several runs at once)
    uint64_t order_seed;       // 0: the nominal order; else --orders' admissible order (order_band.h)
    // w with every one of its sites exact, kept once run (nominal order): the all-exact run and the
    // all-but-one runs of every site w lacks (the CP merges against a plain kernel) all ask for it
    pp_tensor *w_all;          // [PP_MAX_OP_TENSORS], owned by the caller; w_all_ok once filled
    int *w_all_ok;
} explain_job;

// Variant v run on the CPU emulation with exact sites mask into outs (allocated like its
// nominal outputs).
static int run_masked(const explain_job *j, int v, uint64_t mask, pp_tensor *outs, pp_error *err)
{
    const pp_case *c = j->plan->c;
    const pp_op *op = c->op;
    pp_op_params prm = c->params;
    prm.exact_sites = mask;
    prm.order_seed = j->order_seed;
    memset(outs, 0, sizeof(pp_tensor) * PP_MAX_OP_TENSORS);
    int rc = PP_OK;
    for (int t = 0; t < op->n_outputs && !rc; t++) {
        const pp_tensor *n = &j->p->variants[v].outs[t];
        if (n->data)
            rc = pp_tensor_alloc(&outs[t], n->ndim, n->shape, n->format, err);
    }
    if (!rc)
        rc = op->run_cpu(&prm, &c->variants[v].knobs, j->p->groups[j->plan->group_of[v]].inputs, outs, j->threads,
                         err);
    if (!rc && pp_interrupted())  // the run was cut short: its outputs are incomplete
        rc = pp_fail(err, PP_ERR_INTERRUPTED, "%s: explain: interrupted (%s) during a run of variant %s", c->name,
                     pp_interrupted() == SIGINT ? "SIGINT" : "SIGTERM", c->variants[v].name);
    return rc;
}

static void free_outs(const pp_op *op, pp_tensor *outs)
{
    for (int t = 0; t < op->n_outputs; t++)
        pp_tensor_free(&outs[t]);
}

// The statistics of j's comparisons with the variant's outputs replaced by a run under mask;
// stats[k] for the k-th comparison (n of them, in plan order). Against a variant w that the
// emulation runs, w is rerun with the same sites exact where it has them (a site both variants
// share, say the out store, is made exact on both sides: what is left is the difference the
// site makes, not one side's rounding against the other's exact value).
static int compare_masked(const explain_job *j, uint64_t mask, pp_explain_stats *stats, int n, pp_error *err)
{
    const pp_case *c = j->plan->c;
    pp_tensor outs[PP_MAX_OP_TENSORS], wouts[PP_MAX_OP_TENSORS];
    memset(wouts, 0, sizeof wouts);
    uint64_t wsites = j->w >= 0 ? sites_of(c, j->w) : 0, wmask = mask & wsites;
    int rerun_w = wsites && (wmask || j->order_seed);  // under another order, w runs in it too
    int memo = rerun_w && wmask == wsites && !j->order_seed && j->w_all;  // w_all: borrowed, not freed here
    int rc = run_masked(j, j->v, mask, outs, err);
    if (!rc && memo && !*j->w_all_ok) {
        rc = run_masked(j, j->w, wmask, j->w_all, err);
        *j->w_all_ok = !rc;
    }
    if (!rc && rerun_w)
        rc = memo ? (memcpy(wouts, j->w_all, sizeof wouts), PP_OK) : run_masked(j, j->w, wmask, wouts, err);
    pp_variant_products *alt = rc ? NULL : calloc((size_t)c->n_variants, sizeof *alt);
    if (!rc && !alt)
        rc = pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    pp_comparison *cs = NULL;
    int m = 0;
    if (!rc) {
        for (int v = 0; v < c->n_variants; v++)
            alt[v] = j->p->variants[v];  // borrowed
        memcpy(alt[j->v].outs, outs, sizeof outs);
        if (rerun_w)
            memcpy(alt[j->w].outs, wouts, sizeof wouts);
        pp_run_products q = *j->p;
        q.variants = alt;
        rc = pp_run_compare(j->plan, &q, j->sel, &cs, &m, err);
    }
    if (!rc && m != n)
        rc = pp_fail(err, PP_ERR_RUNTIME, "explain: a masked run made %d comparisons, not %d", m, n);
    for (int k = 0; !rc && k < n; k++)
        stats[k] = pp_explain_stats_of(&cs[k].stats);
    pp_comparisons_free(cs, m);
    free(alt);
    free_outs(j->plan->c->op, outs);
    if (!memo)
        free_outs(j->plan->c->op, wouts);
    return rc;
}

// The one-definition check: the explain path with nothing exact gives the nominal outputs, bit
// for bit (NaN payloads included: the same code ran).
static int check_nominal(const explain_job *j, pp_error *err)
{
    const pp_op *op = j->plan->c->op;
    pp_tensor outs[PP_MAX_OP_TENSORS];
    int rc = run_masked(j, j->v, 0, outs, err);
    for (int t = 0; !rc && t < op->n_outputs; t++) {
        const pp_tensor *n = &j->p->variants[j->v].outs[t];
        if (n->data && memcmp(n->data, outs[t].data, (size_t)n->numel * sizeof *n->data))
            rc = pp_fail(err, PP_ERR_RUNTIME, "explain: variant '%s' output '%s': the explain path with no site "
                         "exact differs from the emulation (a bug: please report)",
                         j->plan->c->variants[j->v].name, op->outputs[t]);
    }
    free_outs(op, outs);
    return rc;
}

// ---------------------------------------------------------------------------------------------
// Many masks at once: the one-at-a-time and all-but-one runs are independent of each other (each
// its own outputs, the nominal products and w's memo only read), so they run side by side, up to
// PP_EXPLAIN_CONCURRENT at a time with the workers shared out among them. One masked run alone
// keeps two cores only partly busy (its serial set-up and comparison); two at once keep both. The
// runs are taken from a queue in the caller's order as each lane finishes (the caller lists the
// costly all-but-one runs first: a lane never waits long on the last of them), and each result
// lands in its own slot, so the tables never depend on how many ran at once or who ran which.

#define PP_EXPLAIN_CONCURRENT 4  // at most this many masked runs' buffers at once (memory)

typedef struct explain_run {
    uint64_t mask;
    pp_explain_stats *stats;  // n of them
    int rc;                   // -1: not run (a stop request skipped it)
    pp_error err;
} explain_run;

typedef struct explain_batch {
    const explain_job *j;
    explain_run *runs;
    int count, n;
    atomic_int next;  // the next run to take
} explain_batch;

static void explain_lane(void *ctx, int64_t lane)
{
    (void)lane;
    explain_batch *b = ctx;
    for (int i; !pp_interrupted() && (i = atomic_fetch_add(&b->next, 1)) < b->count;) {
        explain_run *x = &b->runs[i];
        x->rc = compare_masked(b->j, x->mask, x->stats, b->n, &x->err);
    }
}

// compare_masked for each of runs[0..count), side by side; the first failure's error (in run order).
// w's memo must be filled already (or never wanted): the runs only read it.
static int explain_runs(const explain_job *j, explain_run *runs, int count, int n, pp_error *err)
{
    int total = j->threads, at_once = total < PP_EXPLAIN_CONCURRENT ? total : PP_EXPLAIN_CONCURRENT;
    at_once = at_once < count ? at_once : count;
    at_once = at_once < 1 ? 1 : at_once;
    explain_job each = *j;
    each.threads = total / at_once > 1 ? total / at_once : 1;
    explain_batch b = {.j = &each, .runs = runs, .count = count, .n = n};
    atomic_init(&b.next, 0);
    for (int i = 0; i < count; i++)
        runs[i].rc = -1;
    pp_parallel_for(explain_lane, &b, at_once, at_once, NULL);
    for (int i = 0; i < count; i++) {
        if (runs[i].rc > 0) {
            *err = runs[i].err;
            return runs[i].rc;
        }
        if (runs[i].rc < 0)
            return pp_fail(err, PP_ERR_INTERRUPTED, "%s: explain: interrupted (%s) before a run of variant %s",
                           j->plan->c->name, pp_interrupted() == SIGINT ? "SIGINT" : "SIGTERM",
                           j->plan->c->variants[j->v].name);
    }
    return PP_OK;
}

// ---------------------------------------------------------------------------------------------
// The tables

static double mse(const pp_explain_stats *s)
{
    return s->rms * s->rms;
}

// A site's share: the part of (as is − every site exact) that its exactness removes, in squared
// RMS error; NaN when nothing is left to remove.
static double share_of(const pp_explain_stats *nominal, const pp_explain_stats *all, const pp_explain_stats *exact)
{
    double total = mse(nominal) - mse(all);
    return total > 0.0 && isfinite(total) ? (mse(nominal) - mse(exact)) / total : NAN;
}

// Shares and the interaction of table t from its statistics; the bands start at the share.
static void shares(pp_explain_table *t)
{
    double sum = 0.0;
    for (int s = 0; s < t->n_sites; s++) {
        pp_explain_site *x = &t->sites[s];
        x->share = share_of(&t->nominal, &t->all_exact, &x->exact);
        x->share_band[0] = x->share_band[1] = x->share;
        sum += x->share;
    }
    t->interaction = sum == sum ? 1.0 - sum : NAN;
}

// --orders: the shares again under order seeds 1..orders (the variant, and the variant compared
// against when the emulation runs it, in that order), each table's band widened to them.
static int share_bands(explain_job *j, const int *ids, int n_sites, uint64_t all, int orders, pp_explain_table *tab,
                       int n, pp_error *err)
{
    pp_explain_stats *nom = calloc((size_t)(n ? n : 1), sizeof *nom), *ex = calloc((size_t)(n ? n : 1), sizeof *ex),
                     *st = calloc((size_t)(n ? n : 1), sizeof *st);
    int rc = nom && ex && st ? PP_OK : pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    for (int o = 1; !rc && o <= orders; o++) {
        j->order_seed = (uint64_t)o;
        rc = compare_masked(j, 0, nom, n, err);
        if (!rc)
            rc = compare_masked(j, all, ex, n, err);
        for (int s = 0; !rc && s < n_sites; s++) {
            rc = compare_masked(j, (uint64_t)1 << ids[s], st, n, err);
            for (int k = 0; !rc && k < n; k++) {
                double x = share_of(&nom[k], &ex[k], &st[k]);
                double *b = tab[k].sites[s].share_band;
                if (x == x) {
                    b[0] = b[0] == b[0] && b[0] <= x ? b[0] : x;
                    b[1] = b[1] == b[1] && b[1] >= x ? b[1] : x;
                }
            }
        }
    }
    for (int k = 0; !rc && k < n; k++)
        tab[k].band_runs = orders + 1;
    j->order_seed = 0;
    free(nom), free(ex), free(st);
    return rc;
}

// Explains variant v (its compare tasks sel, n comparisons cmps[first..first+n)) into *out.
static int explain_variant(const pp_run_plan *plan, const pp_run_products *p, const unsigned char *sel, int v, int w,
                           int orders, const pp_comparison *cmps, int n, pp_explain_table **out, pp_error *err)
{
    const pp_case *c = plan->c;
    pp_tensor w_all[PP_MAX_OP_TENSORS];
    int w_all_ok = 0;
    memset(w_all, 0, sizeof w_all);
    explain_job j = {.plan = plan, .p = p, .sel = sel, .v = v, .w = w, .threads = plan->threads, .order_seed = 0,
                     .w_all = w_all, .w_all_ok = &w_all_ok};
    uint64_t all = sites_of(c, v);
    int ids[64], n_sites = 0;
    for (int s = 0; s < 64; s++)
        if (all >> s & 1)
            ids[n_sites++] = s;
    pp_explain_table *tab = calloc((size_t)(n ? n : 1), sizeof *tab);
    pp_explain_stats *st = calloc((size_t)(n ? n : 1) * (size_t)(2 * n_sites + 1), sizeof *st);
    explain_run *runs = calloc((size_t)(2 * n_sites + 1), sizeof *runs);
    if (!tab || !st || !runs) {
        free(tab), free(st), free(runs);
        return pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    }
    int rc = PP_OK;
    for (int k = 0; k < n && !rc; k++) {
        snprintf(tab[k].tensor, sizeof tab[k].tensor, "%s", cmps[k].tensor);
        snprintf(tab[k].against, sizeof tab[k].against, "%s", cmps[k].against);
        tab[k].nominal = pp_explain_stats_of(&cmps[k].stats);
        tab[k].n_sites = n_sites;
        tab[k].sites = calloc((size_t)(n_sites ? n_sites : 1), sizeof *tab[k].sites);
        if (!tab[k].sites)
            rc = pp_fail(err, PP_ERR_RUNTIME, "out of memory");
        for (int s = 0; !rc && s < n_sites; s++)
            snprintf(tab[k].sites[s].name, sizeof tab[k].sites[s].name, "%s", pp_site_get(ids[s])->name);
    }
    if (!rc)
        rc = check_nominal(&j, err);
    if (!rc)  // first and alone: it fills w's memo, which the runs below read
        rc = compare_masked(&j, all, st, n, err);
    for (int k = 0; !rc && k < n; k++)
        tab[k].all_exact = st[k];
    // run s: every site but s exact (the costly ones first: most chains in binary64); run
    // n_sites + s: site s alone exact
    for (int s = 0; s < n_sites; s++) {
        uint64_t bit = (uint64_t)1 << ids[s];
        runs[s] = (explain_run){.mask = all & ~bit, .stats = st + (size_t)n * (size_t)(s + 1)};
        runs[n_sites + s] = (explain_run){.mask = bit, .stats = st + (size_t)n * (size_t)(n_sites + s + 1)};
    }
    if (!rc)
        rc = explain_runs(&j, runs, 2 * n_sites, n, err);
    for (int s = 0; !rc && s < n_sites; s++)
        for (int k = 0; k < n; k++) {
            tab[k].sites[s].exact = runs[n_sites + s].stats[k];
            tab[k].sites[s].alone = runs[s].stats[k];
        }
    for (int k = 0; !rc && k < n; k++)
        shares(&tab[k]);
    if (!rc && orders > 0)
        rc = share_bands(&j, ids, n_sites, all, orders, tab, n, err);
    for (int k = 0; !rc && k < n; k++) {
        if (!tab[k].band_runs)
            for (int s = 0; s < tab[k].n_sites; s++)
                tab[k].sites[s].share_band[0] = tab[k].sites[s].share_band[1] = NAN;
        pp_explain_sort(&tab[k]);
    }
    free(st), free(runs);
    free_outs(c->op, w_all);
    if (rc) {
        pp_explain_tables_free(tab, n);
        free(tab);
        return rc;
    }
    *out = tab;
    return PP_OK;
}

// ---------------------------------------------------------------------------------------------
// The command's work

// The variants explained (flags per variant) and, against a variant, each one's pair in cc.
static int targets(pp_case *cc, const pp_explain_opts *e, unsigned char *is_target, int *pair_of_v, pp_error *err)
{
    int w = -1;
    if (e->against && strcmp(e->against, "reference")) {
        w = variant_index(cc, e->against);
        if (w < 0)
            return pp_fail(err, PP_ERR_INPUT, "%s: --against: no variant '%s' (or 'reference')", cc->path, e->against);
    }
    int any = 0;
    for (int v = 0; v < cc->n_variants; v++) {
        pair_of_v[v] = -1;
        int named = e->variant && !strcmp(cc->variants[v].name, e->variant);
        if (e->variant ? !named : (!sites_of(cc, v) || v == w))
            continue;
        if (!sites_of(cc, v) && pp_explain_none(cc, v))
            return pp_fail(err, PP_ERR_INPUT, "%s: explain: variant '%s' offers no exact sites: %s", cc->path,
                           cc->variants[v].name, pp_explain_none(cc, v));
        if (!sites_of(cc, v))
            return pp_fail(err, PP_ERR_INPUT,
                           "%s: explain: variant '%s' has no rounding site the CPU emulation can make exact "
                           "(external, a vendor library's path, or not instrumented)", cc->path, cc->variants[v].name);
        if (v == w)
            return pp_fail(err, PP_ERR_INPUT, "%s: explain: --against names the variant itself ('%s')", cc->path,
                           e->against);
        is_target[v] = 1;
        any = 1;
        if (w >= 0) {
            int rc = pair_of(cc, v, w, &pair_of_v[v], err);
            if (rc)
                return rc;
        }
    }
    if (!any)
        return e->variant ? pp_fail(err, PP_ERR_INPUT, "%s: explain: no variant '%s'", cc->path, e->variant)
                          : pp_fail(err, PP_ERR_INPUT, "%s: explain: no variant has exact sites", cc->path);
    return PP_OK;
}

int pp_explain_case(const pp_case *c, const pp_run_opts *o, const pp_explain_opts *e, pp_run_result *r,
                    pp_error *err)
{
    memset(r, 0, sizeof *r);
    pp_case cc = *c;  // shallow: a pair may be appended; the rest is borrowed
    unsigned char *is_target = calloc((size_t)c->n_variants, 1);
    int *pair = calloc((size_t)c->n_variants, sizeof *pair);
    pp_explain_table **tabs = calloc((size_t)c->n_variants, sizeof *tabs);
    int *n_tabs = calloc((size_t)c->n_variants, sizeof *n_tabs);
    if (!is_target || !pair || !tabs || !n_tabs) {
        free(is_target), free(pair), free(tabs), free(n_tabs);
        return pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    }
    pp_run_opts oo = *o;
    oo.device = "cpu";  // the masked runs are the CPU emulation's; the nominal run must be too
    oo.cross_check = 0;
    pp_run_plan plan;
    memset(&plan, 0, sizeof plan);
    pp_run_products products;
    memset(&products, 0, sizeof products);
    pp_comparison *cmps = NULL;
    int n = 0;
    unsigned char *sel = NULL, *one = NULL;
    int rc = targets(&cc, e, is_target, pair, err);
    if (!rc)
        rc = pp_run_plan_make(&cc, &oo, &plan, err);
    if (!rc && (!(sel = calloc((size_t)plan.n_tasks, 1)) || !(one = calloc((size_t)plan.n_tasks, 1))))
        rc = pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    for (int v = 0; !rc && v < c->n_variants; v++) {
        if (!is_target[v])
            continue;
        select_compares(&plan, v, pair[v], one);
        for (int i = 0; i < plan.n_tasks; i++)
            sel[i] |= one[i];
    }
    if (!rc) {
        pp_run_plan_close(&plan, sel);
        rc = pp_run_products_make(&plan, &products, err);
    }
    if (!rc)
        rc = pp_run_execute(&plan, &oo, sel, &products, err);
    if (!rc)
        rc = pp_run_compare(&plan, &products, sel, &cmps, &n, err);
    // each variant's comparisons are one run of cmps: its compare tasks are listed together
    // (plan.c: per variant its outputs; per pair its outputs or groups), one pair per variant
    for (int v = 0; !rc && v < c->n_variants; v++) {
        if (!is_target[v])
            continue;
        select_compares(&plan, v, pair[v], one);
        int first = 0, m = 0;
        while (first < n && strcmp(cmps[first].variant, c->variants[v].name))
            first++;
        while (first + m < n && !strcmp(cmps[first + m].variant, c->variants[v].name))
            m++;
        rc = explain_variant(&plan, &products, one, v, pair[v] >= 0 ? cc.pairs[pair[v]].expected : -1, o->orders,
                             cmps + first, m, &tabs[v], err);
        n_tabs[v] = m;
    }
    if (!rc && o->orders > 0)  // the nominal order band of the explained slice's comparisons
        rc = pp_run_order_bands(&plan, o->orders, &products, sel, cmps, n, err);
    // the result names the references computed: a group whose reference this run did not need
    // (no variant of it explained) wants nothing
    for (int i = 0; !rc && i < plan.n_tasks; i++)
        if (plan.tasks[i].kind == PP_TASK_REFERENCE && !sel[i])
            memset(plan.group_want[plan.tasks[i].group], 0, sizeof plan.group_want[0]);
    if (!rc) {
        rc = pp_run_assemble(&plan, &oo, &products, cmps, n, r, err);  // takes cmps
        cmps = NULL;
    }
    for (int v = 0; !rc && v < c->n_variants && v < r->n_variants; v++) {
        r->variants[v].explain = tabs[v];
        r->variants[v].n_explain = n_tabs[v];
        tabs[v] = NULL;
    }
    for (int v = 0; v < c->n_variants; v++)
        if (tabs[v]) {
            pp_explain_tables_free(tabs[v], n_tabs[v]);
            free(tabs[v]);
        }
    pp_comparisons_free(cmps, n);
    if (plan.c)
        pp_run_products_free(&plan, &products);
    pp_run_plan_free(&plan);
    free(is_target), free(pair), free(tabs), free(n_tabs), free(sel), free(one);
    return rc;
}
