// adamw_ref_lohner.c — the sign-keeping error set of the AdamW reference (Lohner's QR method,
// PROOFS.md#adamw-lohner). Matrices are stored column-major here (column j of B, A, Q at
// [j·d .. j·d + d)), so every dot product and update runs over contiguous memory.
#include "adamw_ref_lohner.h"

#include "ref_dot4.h"

#include <math.h>
#include <string.h>

// Every bound below is a sum of products of nonnegative binary64 values with at most 3d + 8
// roundings on any path; SLACK covers them for d ≤ 2^10 ((3d + 8)·2^−53 < 2^−40).
#define SLACK (1.0 + 0x1p-40)
// Scaling by a power of two is exact unless the result is subnormal: TINY covers that rounding in
// every scaled bound.
#define TINY 0x1p-1060

void pp_adamw_lohner_init_(pp_adamw_lohner_ *L, int d, double *mem)
{
    size_t dd = (size_t)d * (size_t)d;
    L->d = d;
    L->B = mem, L->A = mem + dd, L->Q = mem + 2 * dd, L->P = mem + 3 * dd;
    L->w = mem + 4 * dd, L->t1 = L->w + d, L->t2 = L->t1 + d, L->D = L->t2 + 2 * d;
    memset(L->w, 0, (size_t)d * sizeof *L->w);
    for (int j = 0; j < d; j++)
        L->D[j] = 1.0;
    memset(L->B, 0, dd * sizeof *L->B);
    for (int j = 0; j < d; j++)
        L->B[(size_t)j * d + j] = 1.0;
}

void pp_adamw_lohner_reset_(pp_adamw_lohner_ *L, const double *s, const double *Dn)
{
    int d = L->d;
    memset(L->B, 0, (size_t)d * (size_t)d * sizeof *L->B);
    for (int j = 0; j < d; j++) {
        L->B[(size_t)j * d + j] = 1.0;
        L->D[j] = Dn[j];
        L->w[j] = s[j] / Dn[j] * SLACK + TINY;  // exact but for a subnormal quotient
    }
}

double pp_adamw_lohner_scale_(double x)
{
    if (!(x > 0x1p-500))
        return x > 0.0 ? 0x1p-500 : 1.0;
    if (!(x < 0x1p500))
        return 0x1p500;
    return ldexp(1.0, ilogb(x));
}

// q ← q − (qᵢ·q)qᵢ for every earlier column i, twice ("twice is enough": the second pass
// restores orthogonality to working precision). Returns ‖q‖₂ afterwards.
static double orthogonalise(const double *Q, double *q, int j, int d)
{
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < j; i++) {
            const double *qi = Q + (size_t)i * d;
            double r = pp_ref_dot4(qi, q, d);
            for (int k = 0; k < d; k++)
                q[k] -= r * qi[k];
        }
    return sqrt(pp_ref_dot4(q, q, d));
}

// Q = an orthonormal basis from A by modified Gram–Schmidt (columns in A's order); a column that
// is (numerically) dependent on the earlier ones is replaced by a unit vector orthogonalised
// against them. Q need not be exactly orthonormal: the step measures ‖I − QᵀQ‖∞.
static void gram_schmidt(const double *A, double *Q, int d)
{
    for (int j = 0; j < d; j++) {
        double *q = Q + (size_t)j * d;
        memcpy(q, A + (size_t)j * d, (size_t)d * sizeof *q);
        double n0 = sqrt(pp_ref_dot4(q, q, d));
        double nr = orthogonalise(Q, q, j, d);
        if (!(nr > 0x1p-30 * n0) || !(nr > 0x1p-900)) {
            for (int c = 0; c < d; c++) {
                memset(q, 0, (size_t)d * sizeof *q);
                q[c] = 1.0;
                nr = orthogonalise(Q, q, j, d);
                if (nr > 0.5)
                    break;
            }
        }
        for (int k = 0; k < d; k++)
            q[k] /= nr;
    }
}

// ρ ≥ ‖I − QᵀQ‖∞ for the real product: the computed Ĝ = fl(QᵀQ) is within γ_d·|Q|ᵀ|Q| of it,
// and (|Q|ᵀ|Q|)_ij ≤ ‖qᵢ‖‖qⱼ‖ ≤ (nᵢ + nⱼ)/2 with nᵢ = ‖qᵢ‖² (itself within γ_d: factor 1 + 2γ_d).
static double orth_defect(const double *Q, int d, double *nrm2)
{
    double g = pp_ref_gamma(d);
    for (int i = 0; i < d; i++)
        nrm2[i] = pp_ref_dot4(Q + (size_t)i * d, Q + (size_t)i * d, d) * (1.0 + 2.0 * g);
    double rho = 0.0;
    for (int i = 0; i < d; i++) {
        double row = 0.0;
        for (int j = 0; j < d; j++) {
            double G = i == j ? nrm2[i] / (1.0 + 2.0 * g) : pp_ref_dot4(Q + (size_t)i * d, Q + (size_t)j * d, d);
            row += fabs((i == j ? 1.0 : 0.0) - G) + g * 0.5 * (nrm2[i] + nrm2[j]);
        }
        row *= SLACK;
        rho = row > rho ? row : rho;
    }
    return rho;
}

int pp_adamw_lohner_step_(pp_adamw_lohner_ *L, const double *Dn, const double *eA, const double *rt, double *eb)
{
    int d = L->d;
    double *A = L->A, *Q = L->Q, *P = L->P, *w = L->w, *t1 = L->t1, *t2 = L->t2, g = pp_ref_gamma(d);
    // into the new scaled coordinates ẽ' = Dn⁻¹e': A's rows (exact, or within 2^−1074 each when
    // subnormal: Σw·2^−1074 more in eA), eA and rt (bounds: + TINY)
    double wsum = 0.0;
    for (int j = 0; j < d; j++)
        wsum += w[j];
    for (int k = 0; k < d; k++) {
        double inv = 1.0 / Dn[k];
        for (int j = 0; j < d; j++)
            A[(size_t)j * d + k] *= inv;
        t2[k] = (eA[k] * inv + rt[k] * inv) * SLACK + (wsum * SLACK + 1.0) * TINY;
    }
    // t2 = γ_d·|A|·w + eA + rt: what |Qᵀ| multiplies (the product's own rounding, A's, the box)
    for (int j = 0; j < d; j++) {
        const double *a = A + (size_t)j * d;
        double wj = g * w[j];
        for (int k = 0; k < d; k++)
            t2[k] += fabs(a[k]) * wj;
    }
    gram_schmidt(A, Q, d);
    double rho = orth_defect(Q, d, t1);
    if (!(rho <= 0.5))
        return 0;
    // u_b = |P|·w + |Q|ᵀ·t2 with P = fl(QᵀA); then |Q⁻¹z| ≤ u_b + ρ/(1 − ρ)·‖u_b‖∞
    double umax = 0.0;
    for (int i = 0; i < d; i++) {
        const double *qi = Q + (size_t)i * d;
        double s = 0.0;
        for (int j = 0; j < d; j++) {
            P[(size_t)j * d + i] = pp_ref_dot4(qi, A + (size_t)j * d, d);
            s += fabs(P[(size_t)j * d + i]) * w[j];
        }
        for (int k = 0; k < d; k++)
            s += fabs(qi[k]) * t2[k];
        t1[i] = s * SLACK;
        if (!(t1[i] < INFINITY))  // NaN or Inf: no bound
            return 0;
        umax = t1[i] > umax ? t1[i] : umax;
    }
    double inv = rho / (1.0 - rho) * SLACK * SLACK;
    for (int i = 0; i < d; i++)
        w[i] = (t1[i] + inv * umax) * SLACK;
    memcpy(L->B, Q, (size_t)d * (size_t)d * sizeof *Q);
    // eb = |B|·w
    for (int k = 0; k < d; k++)
        eb[k] = 0.0;
    for (int j = 0; j < d; j++) {
        const double *b = L->B + (size_t)j * d;
        for (int k = 0; k < d; k++)
            eb[k] += fabs(b[k]) * w[j];
    }
    for (int k = 0; k < d; k++) {
        eb[k] *= SLACK * Dn[k];
        L->D[k] = Dn[k];
    }
    return 1;
}

int pp_adamw_lohner_step_dense_(pp_adamw_lohner_ *L, const double *M, const double *Dn, const double *rt, double *eb)
{
    int d = L->d;
    double g = pp_ref_gamma(d), *t1 = L->t1, *eA = L->t2 + d;  // t3: the fifth vector of mem
    // A = fl(M·D·B): column j of A is M times the unscaled column D⊙b_j (exact scaling)
    for (int j = 0; j < d; j++) {
        const double *b = L->B + (size_t)j * d;
        double *a = L->A + (size_t)j * d;
        for (int i = 0; i < d; i++) {
            double s = 0.0;
            for (int k = 0; k < d; k++)
                s += M[(size_t)i * d + k] * (L->D[k] * b[k]);
            a[i] = s;
        }
    }
    // eA = γ_d·|M|·(D|B|·w) ≥ |(M·D·B − A)·y| for |y| ≤ w
    for (int k = 0; k < d; k++)
        t1[k] = 0.0;
    for (int j = 0; j < d; j++)
        for (int k = 0; k < d; k++)
            t1[k] += fabs(L->B[(size_t)j * d + k]) * L->w[j];
    for (int k = 0; k < d; k++)
        t1[k] *= L->D[k] * SLACK;
    for (int i = 0; i < d; i++) {
        double s = 0.0;
        for (int k = 0; k < d; k++)
            s += fabs(M[(size_t)i * d + k]) * t1[k];
        eA[i] = g * s * SLACK * SLACK;
    }
    return pp_adamw_lohner_step_(L, Dn, eA, rt, eb);
}
