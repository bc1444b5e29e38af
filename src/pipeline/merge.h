// merge.h — `precprobe merge`: the partial results of the N shards of one run (pipeline/shard.h,
// pipeline/partial.h) assembled into the pp_run_result the unsharded run makes. The plan is made
// again from the case text the partials hold, every task's result is taken from the shard that
// owns it, and the assemble stage (pipeline/assemble.h) runs on them as in `precprobe run`: the
// same comparisons in the same order with the same bits, the same references, variants and
// series. What may differ from an unsharded run: created_utc (the earliest shard's), and device
// when the shards ran on different machines ("cpu + cuda (NAME)", each device once, in shard order).
#ifndef PP_MERGE_H
#define PP_MERGE_H

#include "pipeline/partial.h"

// Merges parts[0..n) (read from names[0..n), for messages) into *r (zeroed here; free with
// pp_run_result_free) and the case they ran into *c (for the gate; free with pp_case_free, also
// after a failure). The partials' results are moved out (series) or copied. Refused with
// PP_ERR_INPUT and a message naming the partials: none given; a precprobe version other than
// this one's, or two versions; two cases (or two option sets: --reference, --orders,
// --cross-check); two shard counts; a shard given twice with different results (twice with the
// same results is accepted); missing shards (each named); plans that differ (the case no longer
// reads as it did, or shards planned on devices that make different tasks). PP_ERR_RUNTIME: out
// of memory.
int pp_merge_partials(pp_partial *parts, const char *const *names, int n, pp_case *c, pp_run_result *r,
                      pp_error *err);

#endif
