// case_identity.h — what makes two case texts the same experiment: the operation, its
// parameters, the seed, the inputs (distribution or file) and each variant's knobs (or external
// files). `precprobe check` compares the case it runs with the case text its baseline holds, so
// a baseline of another experiment (a new seed, a shape, a knob) is refused instead of giving
// spurious regressions or a pass. Descriptions, comments, tolerances and gate rules are not
// identity: changing them is what a baseline is for.
#ifndef PP_CASE_IDENTITY_H
#define PP_CASE_IDENTITY_H

#include <stddef.h>

#include "pipeline/case.h"

// Writes one line per difference from base (the baseline's case) to now into buf (n bytes,
// each line "  LINE\n"; truncated with "  ...\n" when it does not fit) and returns how many
// differences there are (0: the same experiment). A variant of now that base lacks is new, not
// a difference (it has no baseline to regress from); one base has and now lacks is.
int pp_case_identity_diff(const pp_case *base, const pp_case *now, char *buf, size_t n);

#endif
