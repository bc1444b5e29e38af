// comparison.h — one comparison of two tensors: torch's closeness statistics under the case's
// tolerances, and the error per position and head when against the reference.
#ifndef PP_COMPARISON_H
#define PP_COMPARISON_H

#include "pipeline/case.h"

// Fills cmp with a (actual) against e (expected), named (variant, tensor, against). identical = 1
// asks "identical?" rather than "close?" (--cross-check): zero tolerances, and NaN equal to NaN
// (their sign and payload are the hardware's choice, x86's and CUDA's differ).
void pp_compare_tensors(pp_comparison *cmp, const pp_case *c, const char *variant, const char *tensor,
                        const char *against, const pp_tensor *a, const pp_tensor *e, int identical);

#endif
