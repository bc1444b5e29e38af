// order_band.h — the --orders stage, between compare and assemble (pipeline/plan.h): how much the
// orders a GPU leaves unspecified matter. Each emulated variant runs N more times on the CPU
// emulation, run s (1..N) under pp_op_params.order_seed = s (the op row says what that seed
// perturbs, e.g. kernels/attention.h "Order band"; seed 0 is the nominal run), each run is
// compared like the nominal one, and every comparison a re-run variant takes part in gets, for
// each statistic of the statistic table, its min, median and max over the N + 1 runs. External
// variants and those the emulation cannot run (a vendor engine) are not re-run.
#ifndef PP_ORDER_BAND_H
#define PP_ORDER_BAND_H

#include "pipeline/execute.h"

// Fills the bands of cmps (the n comparisons pp_run_compare made from p with the same selected:
// NULL for the whole plan, a shard's slice otherwise); orders ≤ 0: nothing. Returns PP_OK,
// PP_ERR_RUNTIME (out of memory, a run's error) or PP_ERR_INPUT (a run's error).
int pp_run_order_bands(const pp_run_plan *plan, int orders, const pp_run_products *p, const unsigned char *selected,
                       pp_comparison *cmps, int n, pp_error *err);

// Whether the [lo, hi] bands of a statistic of two comparisons overlap (NaN bounds: they do).
int pp_band_overlap(const double a[3], const double b[3]);

// The order verdict of one statistic of two comparisons a, b of one tensor against the same
// expected tensor (every statistic of the table is a distance or a count: lower is closer).
// Each variant's GPU run may take any admissible order independently of the other's, so a's
// figure is below b's under every pair of orders exactly when a's band lies wholly below b's.
typedef enum pp_order_verdict {
    PP_ORDER_HIGHER_ROBUST = -2,  // a above b under every pair of orders: b closer, robust to order
    PP_ORDER_HIGHER = -1,         // a's nominal figure above b's, the bands overlap: not robust
    PP_ORDER_EQUAL = 0,           // the nominal figures are equal
    PP_ORDER_LOWER = 1,           // a's nominal figure below b's, the bands overlap: not robust
    PP_ORDER_LOWER_ROBUST = 2,    // a below b under every pair of orders: a closer, robust to order
    PP_ORDER_UNDECIDED = 3        // a nominal figure is NaN
} pp_order_verdict;

// The verdict of nominal figures x (band bx = min, median, max) against y (by).
pp_order_verdict pp_order_verdict_of(double x, const double bx[3], double y, const double by[3]);

// Whether a and b are a verdict pair: both banded (with the same statistics), the same tensor
// against the same expected (the reference or one variant), different variants.
int pp_order_pair(const pp_comparison *a, const pp_comparison *b);

#endif
