// merge_same.h — whether two partial results of the same shard say the same thing, bit for bit:
// `precprobe merge` accepts a shard given twice (a rerun, a copy) only when they agree.
#ifndef PP_MERGE_SAME_H
#define PP_MERGE_SAME_H

#include <stddef.h>

#include "pipeline/partial.h"

// 1 when a and b own the same tasks with the same results (every comparison's statistics, exact
// sums, axes and bands; every owned reference's method and bound; every owned variant's series),
// comparing values by their bits; else 0 with the first difference in why. The manifest's
// device and created time may differ.
int pp_partial_same_results(const pp_partial *a, const pp_partial *b, char *why, size_t why_n);

#endif
