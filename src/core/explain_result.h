// explain_result.h — what `precprobe explain` found for one variant (pipeline/explain.h): per
// compared tensor, the comparison's statistics as the variant is, with every rounding site exact,
// and per site with that site exact (one at a time) and with every other site exact (all but
// one); each site's share of the error and the interaction the one-at-a-time gains leave over.
#ifndef PP_EXPLAIN_RESULT_H
#define PP_EXPLAIN_RESULT_H

#include <stddef.h>
#include <stdint.h>

#include "core/tensor.h"

// Names as core/results.h's PP_NAME_MAX (which static-asserts they agree; results.h includes this).
#define PP_EXPLAIN_NAME_MAX 96

// The statistics explain reports of one comparison (src/core/statistic.c's definitions).
typedef struct pp_explain_stats {
    double mismatch_fraction;  // mismatch_fraction
    double max_abs_error;      // max_abs_error: the greatest |a − e| over finite pairs
    double rms;                // rms: over finite pairs
    double max_ulp;            // max_ulp
    int64_t nonfinite;         // nan_count + inf_count of the actual
} pp_explain_stats;

// One rounding site of the variant, for one compared tensor.
typedef struct pp_explain_site {
    char name[PP_EXPLAIN_NAME_MAX];    // kernels/sites.h's name ("accum", "cp_out_merge")
    pp_explain_stats exact;    // this site exact, every other one rounding
    pp_explain_stats alone;    // every other site exact: this one the only rounding
    // (mse_nominal − mse_exact) / (mse_nominal − mse_all_exact), mse = rms²: the fraction of the
    // error this site's exactness removes; NaN when nothing is left to remove
    double share;
    // --orders N: the least and greatest share over the nominal order and the N admissible ones
    // (pipeline/order_band.h; NaN shares left out); NaN, NaN without a band
    double share_band[2];
} pp_explain_site;

// One compared tensor (a name as the comparison has it: "c", "out@te-cp-rank:3").
typedef struct pp_explain_table {
    char tensor[PP_EXPLAIN_NAME_MAX];
    char against[PP_EXPLAIN_NAME_MAX];  // "reference" or the other variant
    pp_explain_stats nominal;   // the variant as is (bit for bit its run)
    pp_explain_stats all_exact; // every site of the variant exact
    double interaction;         // 1 − Σ share: what the one-at-a-time gains do not add up to
    int64_t band_runs;          // --orders N: N + 1 runs in each site's share_band; 0: no band
    int n_sites;
    pp_explain_site *sites;     // owned; sorted: most of the error first (pp_explain_sort)
} pp_explain_table;

// Sorts t's sites: NaN/Inf removed first, then share, then the site's name (a total order, so
// the table's order is deterministic).
void pp_explain_sort(pp_explain_table *t);
// A share (a fraction) as a percentage with one decimal, "12.3%", into buf: "0.0%" for any
// |share| that rounds to 0.0 (so never "-0.0%": a site whose exactness changes nothing reads as
// nothing), a real negative kept ("-1.2%": making that site exact made the error larger), "-" for
// NaN. Returns buf.
const char *pp_explain_percent(char *buf, size_t len, double share);
// Frees n tables and their sites (not the array).
void pp_explain_tables_free(pp_explain_table *t, int n);

#endif
