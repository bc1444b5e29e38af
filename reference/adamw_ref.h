// adamw_ref.h — the certified reference of an AdamW run: the same T steps in double-double (the
// fast path, MPFR where it cannot certify an element) or in MPFR (mpfr-plain, default 128 bits)
// from the same θ₀ and gradient source, with a running bound per element (PROOFS.md#adamw,
// PROOFS.md#adamw-dd).
#ifndef PP_ADAMW_REF_H
#define PP_ADAMW_REF_H

#include <stdint.h>

#include "adamw_problem.h"
#include "error.h"

#define PP_ADAMW_REF_PREC 128

// The largest running error bound delivered, relative to the quantity's scale (the largest
// magnitude of θ, m or v on the element's trajectory so far): beyond it the run fails.
#define PP_ADAMW_REF_MAX_REL 0x1p-50

// θ_T, m_T, v_T of exact AdamW (real arithmetic; bias corrections, square root and division
// exact), with lr_t, β1, β2, ε, wd the binary64 values of pr, from theta0 (values of format P).
// Per step:  θ ← θ(1 − lr_t·wd);  m ← β1 m + (1 − β1) g;  v ← β2 v + (1 − β2) g²;
//            θ ← θ − (lr_t/(1 − β1^t))·m / (√v/√(1 − β2^t) + ε).
// The synthetic source gives the same g_{t,i} (values of P) the variants see; quadratic and
// linear regression use the exact gradient of the reference's own θ.
// @param [in]  pr, P      the problem and the parameter format (θ₀'s and the synthetic g's).
// @param [in]  prec       0: the fast path — each element (synthetic, quadratic) in double-double
//                         (adamw_ref_dd.c), in MPFR at PP_ADAMW_REF_PREC bits where its bound
//                         would leave PP_ADAMW_REF_MAX_REL; linear regression in MPFR. 64 .. 1000:
//                         mpfr-plain, every element in MPFR at prec bits.
// @param [out] theta, m, v   n values as binary64 (nearest).
// @param [out] bound      [3] max over elements of the proven |value − exact| for θ, m, v.
// @param [out] trace      snapshots (binary64 of the exact θ) and loss per step (binary64
//                         evaluation of the loss at those θ; not certified), may be NULL.
// Preconditions: ε > 0, 0 ≤ β1, β2 < 1, snr > 0 (synthetic).
// Returns PP_OK, PP_ERR_INPUT, PP_ERR_RUNTIME (also when an element's running bound exceeds
// PP_ADAMW_REF_MAX_REL of its scale: the message names the element, the step and the quantity).
int pp_adamw_ref(const pp_adamw_problem *pr, pp_format_id P, int prec, const double *theta0, double *theta,
                 double *m, double *v, double bound[3], pp_adamw_trace *trace, int threads, pp_error *err);

#endif
