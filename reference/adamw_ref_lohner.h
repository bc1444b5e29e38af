// adamw_ref_lohner.h — an error set that keeps its signs around a feedback loop: the running
// error e of a d-dimensional state is kept as {B·y : |y_j| ≤ w_j}, B an orthonormal-ish basis
// carried along the linearised dynamics (Lohner's QR method). Each step maps it through a
// matrix M close to the step's Jacobian and adds a box of everything else (rounding, the
// difference between M and the mean-value Jacobian); QR re-orthogonalisation stops the
// parallelepiped from flattening. PROOFS.md#adamw-lohner proves the step. Internal to reference/.
#ifndef PP_ADAMW_REF_LOHNER_H
#define PP_ADAMW_REF_LOHNER_H

// The set. B, A, Q, P are stored column-major (column j at [j·d, j·d + d): direction j of B);
// mem holds them, w and the workspace: PP_ADAMW_LOHNER_DOUBLES(d) doubles, owned by the caller.
typedef struct pp_adamw_lohner_ {
    int d;
    double *B, *w;       // the basis and the radii
    double *A, *Q, *P;   // workspace: A = fl(M·B) (the caller may fill it), Q, P = fl(Qᵀ·A)
    double *t1, *t2;     // workspace vectors (and a third after t2)
    double *D;           // [d] the scales, powers of two
} pp_adamw_lohner_;

#define PP_ADAMW_LOHNER_DOUBLES(d) (4 * (d) * (d) + 5 * (d))

// Points L at mem and sets the set to {0} (B = I, D = 1).
void pp_adamw_lohner_init_(pp_adamw_lohner_ *L, int d, double *mem);

// The set becomes the box |e_j| ≤ s_j (B = I, D = Dn, w = s/Dn): always a valid restart from a
// componentwise bound.
void pp_adamw_lohner_reset_(pp_adamw_lohner_ *L, const double *s, const double *Dn);

// The power of two at or below x > 0, clamped to [2^−500, 2^500]; 1 for x = 0 (or NaN): the
// scale of a component whose largest magnitude so far is x.
double pp_adamw_lohner_scale_(double x);

// One step of the error set: e' = M·e + ξ for e in the set and |ξ| ≤ rt componentwise, where
// the caller has already filled L->A = fl(M·D·B) (column-major, unscaled image of the set's
// columns, as computed: any rounding) and gives eA with |(M·D·B − A)·y| ≤ eA componentwise for
// every |y| ≤ w; Dn: the new scales (powers of two, pp_adamw_lohner_scale_). The new set
// contains every such e'; eb ≥ |e'| componentwise. Returns 1, or 0 when the new basis is too far
// from orthogonal to be inverted (‖I − QᵀQ‖∞ > ½) or a bound is not finite (the set is then
// unusable: the caller resets it).
int pp_adamw_lohner_step_(pp_adamw_lohner_ *L, const double *Dn, const double *eA, const double *rt, double *eb);

// The same for a dense M (row-major d×d): fills L->A and eA = γ_d·|M|·D|B|·w itself.
int pp_adamw_lohner_step_dense_(pp_adamw_lohner_ *L, const double *M, const double *Dn, const double *rt, double *eb);

#endif
