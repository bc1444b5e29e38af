// adamw_ref_coupled.c — the linear-regression reference's sign-keeping error set (one Lohner set
// for the whole state, d = 3n; PROOFS.md#adamw-lohner, "linear regression"). The Jacobian
//   [ dec·I + diag(α)·Ĥ   diag(−kβ1)   diag(pβ2) ]
//   [ c1·Ĥ                β1·I         0         ]
//   [ diag(2c2·g)·Ĥ       0            β2·I      ]
// is applied through one product Ĥ·b per column instead of a dense 3n × 3n matrix.
#include "adamw_ref_coupled.h"

#include "ref_dot4.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SLACK (1.0 + 0x1p-40)  // the bound arithmetic's own roundings (PROOFS.md#adamw, "bookkeeping")

int pp_adamw_coupled_init_(pp_adamw_coupled_ *C, int64_t n, int64_t r, const float *X)
{
    memset(C, 0, sizeof *C);
    int d = (int)(3 * n);
    C->n = (int)n;
    C->H = malloc((size_t)(n * n) * sizeof *C->H);
    C->Habs = malloc((size_t)(n * n) * sizeof *C->Habs);
    C->mem = malloc((size_t)(PP_ADAMW_LOHNER_DOUBLES(d) + 4 * d + n) * sizeof *C->mem);
    C->J = malloc((size_t)n * sizeof *C->J);
    if (!C->H || !C->Habs || !C->mem || !C->J) {
        pp_adamw_coupled_free_(C);
        return 0;
    }
    // Ĥ_kl = fl(Σ_q X_qk·X_ql)/r: exact products, r − 1 additions and a division, so
    // |Ĥ − H| ≤ γ_(r+1)·|X|ᵀ|X|/r ≤ γ_(r+1)·Habs (Habs computed from nonnegative terms: ≥ its exact value
    // times (1 − γ_(r+1)), covered by the factor 1 + 2γ_(r+1))
    for (int64_t k = 0; k < n; k++)
        for (int64_t l = 0; l < n; l++) {
            double s = 0.0, a = 0.0;
            for (int64_t q = 0; q < r; q++) {
                double p = (double)X[q * n + k] * (double)X[q * n + l];
                s += p;
                a += fabs(p);
            }
            C->H[k * n + l] = s / (double)r;
            C->Habs[k * n + l] = a / (double)r;
        }
    C->gH = pp_ref_gamma(r + 1) * (1.0 + 2.0 * pp_ref_gamma(r + 1));
    pp_adamw_lohner_init_(&C->L, d, C->mem);
    double *v = C->mem + PP_ADAMW_LOHNER_DOUBLES(d);
    C->eA = v, C->rt = v + d, C->eb = v + 2 * d, C->z = v + 3 * d, C->hb = v + 4 * d;
    return 1;
}

void pp_adamw_coupled_free_(pp_adamw_coupled_ *C)
{
    free(C->H), free(C->Habs), free(C->mem), free(C->J);
    memset(C, 0, sizeof *C);
}

// y = |Ĥ|·x (n) or Habs·x, rounded up by the caller's SLACK
static void abs_matvec(const double *H, const double *x, double *y, int n)
{
    for (int k = 0; k < n; k++) {
        double s = 0.0;
        for (int l = 0; l < n; l++)
            s += fabs(H[(size_t)k * n + l]) * x[l];
        y[k] = s * SLACK;
    }
}

void pp_adamw_coupled_step_(pp_adamw_coupled_ *C, const pp_adamw_jac_in_ *in, const double *loc, const double *s,
                            const double *Dn, double *e_new)
{
    int n = C->n, d = 3 * n;
    pp_adamw_lohner_ *L = &C->L;
    double *Sg = C->eb, *dGs = C->z;  // scratch until the step
    for (int k = 0; k < n; k++)
        if (!pp_adamw_jac_make_(&in[k], &C->J[k])) {
            pp_adamw_lohner_reset_(L, e_new, Dn);
            return;
        }
    // Sg ≥ |H|·s_θ (true H), dGs ≥ |H − Ĥ|·s_θ; the box rt = local + (J̃ − M)·e
    abs_matvec(C->Habs, s, dGs, n);
    abs_matvec(C->H, s, Sg, n);
    for (int k = 0; k < n; k++) {
        dGs[k] *= C->gH;
        Sg[k] = (Sg[k] + dGs[k]) * SLACK;
    }
    for (int k = 0; k < n; k++) {
        double box[3];
        pp_adamw_jac_box_(&in[k], &C->J[k], s[k], s[n + k], s[2 * n + k], Sg[k], dGs[k], box);
        for (int b = 0; b < 3; b++)
            C->rt[b * n + k] = (loc[b * n + k] + box[b]) * SLACK;
    }
    // A = fl(M·D·B), column by column (b = D⊙B_j, exact scaling) through hb = fl(Ĥ·b_θ)
    double *b = C->eA;  // scratch until eA is formed
    for (int j = 0; j < d; j++) {
        const double *bj = L->B + (size_t)j * d;
        double *a = L->A + (size_t)j * d;
        for (int i = 0; i < d; i++)
            b[i] = L->D[i] * bj[i];
        for (int k = 0; k < n; k++)
            C->hb[k] = pp_ref_dot4(C->H + (size_t)k * n, b, n);
        for (int k = 0; k < n; k++) {
            const pp_adamw_jac_in_ *I = &in[k];
            const pp_adamw_jac_ *J = &C->J[k];
            a[k] = ((I->dec_c * b[k] + J->alpha * C->hb[k]) + J->thm * b[n + k]) + J->thv * b[2 * n + k];
            a[n + k] = I->c1 * C->hb[k] + I->beta1 * b[n + k];
            a[2 * n + k] = 2.0 * I->c2 * I->g * C->hb[k] + I->beta2 * b[2 * n + k];
        }
    }
    // eA = γ_(n+5)·|M|·(D|B|·w) ≥ |(M·D·B − A)·y| for |y| ≤ w (|M| with |Ĥ|, applied by blocks)
    double *z = C->z;  // dGs is no longer needed
    for (int i = 0; i < d; i++)
        z[i] = 0.0;
    for (int j = 0; j < d; j++) {
        const double *bj = L->B + (size_t)j * d;
        for (int i = 0; i < d; i++)
            z[i] += fabs(bj[i]) * L->w[j];
    }
    for (int i = 0; i < d; i++)
        z[i] *= L->D[i] * SLACK;
    abs_matvec(C->H, z, C->hb, n);
    double g5 = pp_ref_gamma(n + 5) * SLACK;
    for (int k = 0; k < n; k++) {
        const pp_adamw_jac_in_ *I = &in[k];
        const pp_adamw_jac_ *J = &C->J[k];
        C->eA[k] = g5 * (I->dec_d * z[k] + J->abs_alpha * C->hb[k] + fabs(J->thm) * z[n + k] +
                         fabs(J->thv) * z[2 * n + k]);
        C->eA[n + k] = g5 * (I->c1 * C->hb[k] + I->beta1 * z[n + k]);
        C->eA[2 * n + k] = g5 * (2.0 * I->c2 * fabs(I->g) * C->hb[k] + I->beta2 * z[2 * n + k]);
    }
    if (!pp_adamw_lohner_step_(L, Dn, C->eA, C->rt, C->eb)) {
        pp_adamw_lohner_reset_(L, e_new, Dn);
        return;
    }
    for (int i = 0; i < d; i++)
        e_new[i] = fmin(e_new[i], C->eb[i]);  // fmin: a NaN componentwise bound yields the set's
}
