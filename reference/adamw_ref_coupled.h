// adamw_ref_coupled.h — the sign-keeping error set of the linear-regression AdamW reference, whose
// elements are coupled through the gradient g = (1/r)Xᵀ(Xθ − y): one set for the whole state
// (θ, m, v) of n elements, d = 3n (adamw_ref_lohner.h), stepped with the Jacobian's structure
// (PROOFS.md#adamw-lohner, "linear regression"). Internal to reference/.
#ifndef PP_ADAMW_REF_COUPLED_H
#define PP_ADAMW_REF_COUPLED_H

#include <stdint.h>

#include "adamw_ref_jac.h"
#include "adamw_ref_lohner.h"

typedef struct pp_adamw_coupled_ {
    int n;
    double *H;       // [n][n] Ĥ = fl(XᵀX)/r (row-major; products of binary32 values are exact)
    double *Habs;    // [n][n] fl(|X|ᵀ|X|)/r, an upper bound of |X|ᵀ|X|/r within a factor 1 + γ_(r+1)
    double gH;       // |Ĥ − H| ≤ gH·Habs
    double *mem;     // the set's storage and the workspace
    pp_adamw_lohner_ L;
    double *eA, *rt, *eb, *z, *hb;  // [3n] each (hb: [n])
    pp_adamw_jac_ *J;               // [n]
} pp_adamw_coupled_;

// Ĥ and the set {0} for n features and r rows of X (binary32 values, row-major [r][n]).
// Returns 0 when out of memory.
int pp_adamw_coupled_init_(pp_adamw_coupled_ *C, int64_t n, int64_t r, const float *X);
void pp_adamw_coupled_free_(pp_adamw_coupled_ *C);

// One step. in[k]: the Jacobian inputs of element k (centres and radii over the box s);
// loc[3n]: the step's local error bounds (θ block, m block, v block); s[3n]: the running bounds
// at the step's start; Dn[3n]: the new scales (pp_adamw_lohner_scale_); e_new[3n]: on entry the componentwise bounds after the step, on exit the
// smaller of those and the set's. Where the Jacobian is not defined on the box, or the set's step
// fails, the set restarts from e_new.
void pp_adamw_coupled_step_(pp_adamw_coupled_ *C, const pp_adamw_jac_in_ *in, const double *loc, const double *s,
                            const double *Dn, double *e_new);

#endif
