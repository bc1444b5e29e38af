// adamw_ref_jac.h — the Jacobian of one exact AdamW step with respect to the state (θ, m, v) at
// its start, as binary64 entries M, and bounds on how far the mean-value Jacobian between the
// computed and the exact state can be from M (PROOFS.md#adamw-lohner, "the Jacobian"). Shared
// by the double-double and MPFR paths of the reference; internal to reference/.
//
// The step (exact scalars a, b, dec, c1 = 1 − β1, c2 = 1 − β2; G = ∂g/∂θ: h for the quadratic
// source, (1/r)XᵀX for linear regression):
//   m' = β1 m + c1 g,  v' = β2 v + c2 g²,  den = b√v' + ε,  θ' = dec·θ − a·m'/den.
// Its partial derivatives, with k = a/den and p = a·m'·b/(2√v'·den²):
//   θ'_θ = dec·I + α·G, α = −k·c1 + 2c2·p·g;  θ'_m = −k·β1;  θ'_v = p·β2;
//   m'_θ = c1·G;  m'_m = β1;  v'_θ = 2c2·g·G;  v'_v = β2.
#ifndef PP_ADAMW_REF_JAC_H
#define PP_ADAMW_REF_JAC_H

#include <math.h>

// What the step computed (centres) and how far each quantity can be from its centre over the
// whole error box of the state (radii: the componentwise running bounds after the step, fed
// with the box at its start), with the scalars' magnitudes and relative errors.
typedef struct pp_adamw_jac_in_ {
    double dec_d, rdec;        // dec's magnitude (upper) and relative error; its centre is dec_c
    double dec_c, a_c, b_c;    // the binary64 values the entries use
    double a_d, ra, b_d, rb;   // magnitudes (upper) and relative errors of a, b
    double beta1, beta2, c1, c2;  // binary64; c1, c2 upper bounds of 1 − β1, 1 − β2 (within 2^−52)
    double eps;
    double g, eg;              // g: centre, radius
    double m1, em1;            // m'
    double v1, ev1;            // v'
    double den, eden;          // den
} pp_adamw_jac_in_;

// The entries (centres) and the bounds of their deviations over the box.
typedef struct pp_adamw_jac_ {
    double alpha, thm, thv;        // α̂, −k̂β1, p̂β2
    double d_alpha, d_thm, d_thv;  // |α(ξ) − α̂|, |θ'_m(ξ) − θ̂'_m|, |θ'_v(ξ) − θ̂'_v| over the box
    double d_g;                    // |g(ξ) − ĝ|
    double abs_alpha;              // |α̂| (for the rounding of M's entries)
} pp_adamw_jac_;

#define PP_JAC_SLACK (1.0 + 0x1p-40)
#define PP_JAC_ROUND 0x1p-48  // relative rounding of an entry computed from a few binary64 operations

static inline double pp_jac_max_(double a, double b)
{
    return a > b ? a : b;
}

// Fills J. Returns 0 when the box reaches v' ≤ 0 or den ≤ 0 (the step is not differentiable on
// it: the caller restarts its error set from the componentwise bound).
static inline int pp_adamw_jac_make_(const pp_adamw_jac_in_ *in, pp_adamw_jac_ *J)
{
    const double lo = 1.0 - 0x1p-50, hi = 1.0 + 0x1p-50;  // directed-rounding substitutes
    double vlo = (fabs(in->v1) * (1.0 - 0x1p-52) - in->ev1) * lo;
    double vhi = (fabs(in->v1) * (1.0 + 0x1p-52) + in->ev1) * hi;
    double dlo = (in->den * (1.0 - 0x1p-52) - in->eden) * lo;
    double dhi = (in->den * (1.0 + 0x1p-52) + in->eden) * hi;
    if (!(vlo > 0.0) || !(dlo > 0.0) || !isfinite(vhi) || !isfinite(dhi))
        return 0;
    double a_hi = in->a_d * (1.0 + in->ra) * hi, a_lo = in->a_d * (1.0 - 0x1p-52) * (1.0 - in->ra) * lo;
    double b_hi = in->b_d * (1.0 + in->rb) * hi, b_lo = in->b_d * (1.0 - 0x1p-52) * (1.0 - in->rb) * lo;
    // k = a/den ∈ [k_lo, k_hi]; k̂ the entry's value
    double k_hi = a_hi / dlo * hi, k_lo = a_lo / dhi * lo, k_c = in->a_c / in->den;
    double d_k = pp_jac_max_(k_hi - k_c, k_c - k_lo) * hi;
    // |m'| ∈ [m_lo, m_hi]; p's magnitude ∈ [p_lo, p_hi]; its sign is m's unless m' can vanish
    double m_hi = (fabs(in->m1) * (1.0 + 0x1p-52) + in->em1) * hi;
    double m_lo = (fabs(in->m1) * (1.0 - 0x1p-52) - in->em1) * lo;
    double p_hi = a_hi * m_hi * b_hi / (2.0 * sqrt(vlo) * lo * dlo * dlo * lo * lo) * hi;
    double p_c = in->a_c * in->m1 * in->b_c / (2.0 * sqrt(fabs(in->v1)) * in->den * in->den);
    double d_p;
    if (m_lo > 0.0) {
        double p_lo = a_lo * m_lo * b_lo / (2.0 * sqrt(vhi) * hi * dhi * dhi * hi * hi) * lo;
        d_p = pp_jac_max_(p_hi - fabs(p_c), fabs(p_c) - p_lo) * hi;
    } else {
        d_p = (p_hi + fabs(p_c)) * hi;
    }
    double g_abs = fabs(in->g);
    J->d_g = (in->eg + 0x1p-52 * g_abs) * hi;
    // α = −k·c1 + 2c2·p·g: |α(ξ) − α̂| ≤ c1·Δk + 2c2(|p|max·Δg + |ĝ|·Δp) + rounding
    J->alpha = -k_c * in->c1 + 2.0 * in->c2 * p_c * in->g;
    J->abs_alpha = k_c * in->c1 + 2.0 * in->c2 * fabs(p_c) * g_abs;
    J->d_alpha = (in->c1 * d_k + 2.0 * in->c2 * (p_hi * J->d_g + g_abs * d_p) + PP_JAC_ROUND * J->abs_alpha) *
                 PP_JAC_SLACK;
    J->thm = -k_c * in->beta1;
    J->d_thm = (d_k * in->beta1 + PP_JAC_ROUND * k_c * in->beta1) * PP_JAC_SLACK;
    J->thv = p_c * in->beta2;
    J->d_thv = (d_p * in->beta2 + PP_JAC_ROUND * fabs(p_c) * in->beta2) * PP_JAC_SLACK;
    return isfinite(J->d_alpha) && isfinite(J->d_thm) && isfinite(J->d_thv);
}

// The box ξ of one element's rows: |(J̃ − M)·e| for |e| ≤ s (s_th, s_m, s_v its own state's
// bounds), where the θ'_θ, m'_θ, v'_θ entries act through G: Sg ≥ |G|·s_θ for the true G (row
// of the element), dGs ≥ |G − Ĝ|·s_θ (0 when M uses the exact G). M's entries are dec_c + α̂·Ĝ,
// −k̂β1, p̂β2 (θ row), c1·Ĝ, β1 (m row), 2c2·ĝ·Ĝ, β2 (v row).
static inline void pp_adamw_jac_box_(const pp_adamw_jac_in_ *in, const pp_adamw_jac_ *J, double s_th, double s_m,
                                     double s_v, double Sg, double dGs, double out[3])
{
    double dec_dev = in->dec_d * (in->rdec + 0x1p-51);  // |dec − dec_c|
    out[0] = (dec_dev * s_th + J->d_alpha * Sg + J->abs_alpha * dGs +
              PP_JAC_ROUND * (in->dec_d * s_th + J->abs_alpha * Sg) + J->d_thm * s_m + J->d_thv * s_v) *
             PP_JAC_SLACK;
    out[1] = (in->c1 * dGs + PP_JAC_ROUND * in->c1 * Sg) * PP_JAC_SLACK;
    double g_abs = fabs(in->g);
    out[2] = (2.0 * in->c2 * (J->d_g * Sg + g_abs * dGs) + PP_JAC_ROUND * 2.0 * in->c2 * g_abs * Sg) *
             PP_JAC_SLACK;
}

#endif
