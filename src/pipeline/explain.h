// explain.h — `precprobe explain`: where a variant's error comes from. Every rounding site of the
// variant (kernels/sites.h; the op row's explain_sites) is made exact one at a time and, separately,
// every site but one, on the CPU emulation (pp_op_params.exact_sites, kernels/exact_sites.h); each
// run is compared like the variant itself (against the reference, or against another variant
// through the case's [compare] pair, else whole tensors; a site the other variant has too is made
// exact on both sides), and the statistics go into the variant's
// explain tables (core/explain_result.h). The staged pipeline does the rest: the plan, the inputs
// and the reference (computed once, through the reference cache), the compare stage.
#ifndef PP_EXPLAIN_H
#define PP_EXPLAIN_H

#include "core/results.h"
#include "pipeline/case.h"
#include "pipeline/run_opts.h"

typedef struct pp_explain_opts {
    const char *variant;  // the variant explained; NULL: every variant that has exact sites
    const char *against;  // NULL or "reference": the reference; else another variant's name
} pp_explain_opts;

// Explains case c under e on the CPU emulation (o's device is ignored; o->orders = N > 0 adds the
// order band to the nominal comparisons, as `run --orders` does, and each site's share band: its
// share recomputed under each of the N admissible orders, pp_explain_site.share_band). On success r holds the run of
// the compared variants (pp_run_result; the others listed without comparisons) and
// r->variants[v].explain for each variant explained. Before any site is made exact, the variant is
// run once more through the explain path with nothing exact and its outputs compared bit for bit
// with the nominal run: a difference is a PP_ERR_RUNTIME ("explain path is not the emulation").
// Returns PP_OK, PP_ERR_INPUT (unknown variant, a variant without exact sites, external or
// vendor variant, too many pairs) or PP_ERR_RUNTIME.
int pp_explain_case(const pp_case *c, const pp_run_opts *o, const pp_explain_opts *e, pp_run_result *r,
                    pp_error *err);

// Why variant v of c offers no exact site, as its op says (pp_op.explain_none), or NULL.
const char *pp_explain_none(const pp_case *c, int v);

// The statistics explain keeps of one comparison's.
pp_explain_stats pp_explain_stats_of(const pp_close_stats *s);

#endif
