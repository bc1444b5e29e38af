// order_verdict.h — the order band's verdict in words (run --orders; the arithmetic is
// pipeline/order_band.h's pp_order_verdict_of): for a pair of banded comparisons of one tensor
// against the same expected tensor, which variant is closer in each statistic of the table, and
// whether it stays closer under every admissible order. The text and HTML reports print it.
#ifndef PP_ORDER_VERDICT_H
#define PP_ORDER_VERDICT_H

#include "core/results.h"
#include "core/textbuf.h"

// One line (no newline) for the pair a, b (pp_order_pair): "A vs B, T against E: " then the
// statistics grouped by verdict, e.g. "B closer, robust to order: mismatch_fraction, rms; A closer,
// not robust to order: max_ulp; equal under every order: nan_count, inf_count".
void pp_order_verdict_line(pp_textbuf *b, const pp_comparison *a, const pp_comparison *c);

// Called once per verdict pair: k counts from 0 (the caller's heading goes before k == 0).
typedef void pp_order_verdict_fn(void *ctx, int k, const pp_comparison *a, const pp_comparison *c);

// Calls fn for every pair i < j of r's comparisons that pp_order_pair accepts, in that order (the
// text and HTML reports list the same pairs in the same order); returns how many.
int pp_order_verdict_each(const pp_run_result *r, pp_order_verdict_fn *fn, void *ctx);

#endif
