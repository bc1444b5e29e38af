// adamw_ref_dd.h — one element's exact AdamW trajectory in double-double with a running error
// bound (PROOFS.md#adamw-dd): the fast path of adamw_ref.c, which falls back to MPFR for an
// element whose bound leaves max_rel (PP_ADAMW_REF_MAX_REL) of its scale. Internal to reference/.
#ifndef PP_ADAMW_REF_DD_H
#define PP_ADAMW_REF_DD_H

#include <stdint.h>

#include "adamw_problem.h"
#include "adamw_ref_dd_scal.h"

// The element's result: θ_T, m_T, v_T rounded to binary64 with their bounds (½ulp included),
// or where the bound first left max_rel of its scale.
typedef struct pp_adamw_dd_elem_ {
    double theta, m, v;        // binary64, nearest
    double bound[3];           // |value − exact| for θ, m, v
    double pair[3][2];         // θ, m, v before the rounding to binary64: hi, lo
    double pair_bound[3];      // |hi + lo − exact|
    int fail_step, fail_what;  // 0 when certified; else the step and 0 θ, 1 m, 2 v
    double fail_bound, fail_scale;
} pp_adamw_dd_elem_;

// Runs element i (synthetic or quadratic source) from theta0 through pr->steps steps with the
// scalars sc[1..T]; writes the binary64 θ after each step to th64[1..T] (th64 may be NULL).
// Certified while every bound stays within max_rel of its quantity's scale (the largest
// magnitude so far). Returns 1 when certified, 0 with out->fail_* set.
int pp_adamw_ref_dd_elem_(const pp_adamw_problem *pr, pp_format_id P, const pp_adamw_dd_scal_ *sc, int64_t i,
                          double theta0, double max_rel, double *th64, pp_adamw_dd_elem_ *out);

#endif
