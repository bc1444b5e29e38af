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

#endif
