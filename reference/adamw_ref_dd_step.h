// adamw_ref_dd_step.h — one exact AdamW step in double-double with the pieces of its
// componentwise bound (PROOFS.md#adamw-dd): the building blocks (dd_mul, dd_add, the quotient
// and root certified by residuals) and the step itself, written once for the scalar element
// (adamw_ref_dd.c, the oracle) and the lanes (adamw_ref_dd_lanes.c, the same statements per
// lane). Internal to reference/.
#ifndef PP_ADAMW_REF_DD_STEP_H
#define PP_ADAMW_REF_DD_STEP_H

#include <math.h>

#include "adamw_ref_dd_scal.h"
#include "format.h"

#if defined(__GNUC__) && !defined(__clang__)
#define DD_INLINE static inline __attribute__((always_inline))
#else
#define DD_INLINE static inline
#endif

#define U2 0x1p-106
#define DM (9.1 * U2)            // dd_mul: ±9.1u²·|xh·yh| (PROOFS.md#attention, "dd_mul")
#define DA (3.02 * U2)           // dd_add: ±3.02u²·(|xh| + |yh|) (PROOFS.md#attention, "dd_add")
#define UF 0x1p-1073             // dd_mul's four roundings when they underflow (ibid.)
#define MAGF (1.0 + 0x1p-52)     // |hi + lo| ≤ |hi|·MAGF for a normalised pair (|lo| ≤ u|hi|)
#define LOWF (1.0 - 0x1p-52)     // |hi + lo| ≥ |hi|·LOWF
#define SLACK (1.0 + 0x1p-40)    // the bound arithmetic's own roundings (PROOFS.md#adamw, "bookkeeping")
#define BIG 0x1p500              // magnitudes past which the fast path hands over (no overflow)

typedef struct dd {
    double h, l;
} dd;

DD_INLINE dd two_sum(double a, double b)  // exact: h + l = a + b
{
    double s = a + b, bb = s - a;
    return (dd){s, (a - (s - bb)) + (b - bb)};
}

DD_INLINE double mg(dd x)  // ≥ |x|
{
    return fabs(x.h) * MAGF;
}

DD_INLINE dd neg(dd x)
{
    return (dd){-x.h, -x.l};
}

// x·y, normalised: ±DM·|xh·yh| + UF (the algorithm of attention_ref_fast.c's dd_mul).
DD_INLINE dd mul(dd x, dd y)
{
    double p = x.h * y.h;
    double pe = fma(x.h, y.h, -p);  // exact
    double t3 = x.h * y.l + x.l * y.h;
    return two_sum(p, pe + t3);
}

// x + y, normalised: ±DA·(|xh| + |yh|), whatever the cancellation.
DD_INLINE dd add(dd x, dd y)
{
    dd s = two_sum(x.h, y.h);
    return two_sum(s.h, s.l + (x.l + y.l));
}

// n/d and √v, any accuracy: their errors are measured afterwards from residuals.
DD_INLINE dd quo(dd n, dd d)
{
    double q1 = n.h / d.h;
    double p = q1 * d.h, pe = fma(q1, d.h, -p);
    double r = (((n.h - p) - pe) + n.l) - q1 * d.l;
    return two_sum(q1, r / d.h);
}

DD_INLINE dd root(dd v)
{
    double s1 = sqrt(v.h);
    double p = s1 * s1, pe = fma(s1, s1, -p);
    double r = ((v.h - p) - pe) + v.l;
    return two_sum(s1, r / (2.0 * s1));
}

// Bound on |x − y·z| for computed dd x, y, z: the residual x − y·z by dd_mul and dd_add, plus
// their bounds (PROOFS.md#adamw-dd, "a posteriori").
DD_INLINE double residual(dd x, dd y, dd z)
{
    dd p = mul(y, z), r = add(x, neg(p));
    return (fabs(r.h) + fabs(r.l) + DM * mg(y) * mg(z) + UF + DA * (mg(x) + mg(p))) * SLACK;
}

// ---------------------------------------------------------------------------------------------
// The componentwise bound of one step, split into what the step's own operations add (computed
// once from the step's values: "local") and what it propagates from the bounds e_in of θ, m, v
// at its start. Called twice per step where the gradient feeds back: with the running bounds
// (the componentwise bound, and the radii of the Jacobian's box), and with e_in = 0 (the step's
// local error, what the sign-keeping set adds; PROOFS.md#adamw-lohner).

typedef struct cw_local {
    int quad, decay, has_root;
    double h, lg;                 // g = h(θ − θ*): e_g = h·e_θ + lg
    double dec_f, ldec;           // θ·dec: dec_d(1 + rdec)·e + ldec
    double c1d, lm, b1;           // m: β1·e_m + c1·e_g + lm
    double c2d, gd, lv, b2;       // v: β2·e_v + c2((2|g| + e_g)e_g) + lv
    double vlo, lres;             // √v: min(√e_v, e_v/√vlo) + lres
    double b_f, lden;             // den: b_d(1 + rb)·e_s + lden
    double dlo;                   // den's lower magnitude
    double a_f, ln;               // n = a·m: a_d(1 + ra)·e_m + ln
    double nmag, lq;              // q: e_n/D + |n|e_den/(dlo·D) + lq
    double lth;                   // θ − q: + lth
} cw_local;

typedef struct cw_out {
    double eg, em, ev, eden, eth;
    int ok;                       // 0: den's lower bound D is not positive (no certification)
} cw_out;

DD_INLINE void cw_prop(const cw_local *c, double eth, double em, double ev, cw_out *o)
{
    // selections, not branches, so that the lanes if-convert (same values)
    double eg = c->quad ? (c->h * eth + c->lg) * SLACK : 0.0;
    eth = c->decay ? (c->dec_f * eth + c->ldec) * SLACK : eth;
    em = (c->b1 * em + c->c1d * eg + c->lm) * SLACK;
    ev = (c->b2 * ev + c->c2d * ((2.0 * c->gd + eg) * eg) + c->lv) * SLACK;
    double es = sqrt(ev);
    double alt = ev / sqrt(c->vlo);  // used only where v > 0
    es = c->has_root ? (alt < es ? alt : es) + c->lres : es;
    es *= SLACK;
    double eden = (c->b_f * es + c->lden) * SLACK;
    double D = c->dlo - eden;
    o->ok = D > 0.0;
    double en = (c->a_f * em + c->ln) * SLACK;
    double eq = (en / D + c->nmag * eden / (c->dlo * D) + c->lq) * SLACK;
    o->eg = eg, o->em = em, o->ev = ev, o->eden = eden;
    o->eth = (eth + eq + c->lth) * SLACK;
}

// The step's constants: β1, β2 (binary64), ε, c1 = 1 − β1 and c2 = 1 − β2 as exact pairs.
typedef struct dd_consts {
    double b1, b2, eps, c1d, c2d;
    dd c1, c2;
} dd_consts;

// One step from (θ, m, v) with gradient g (a pair; lg: its own rounding's bound, 0 when exact):
// the new state, den (for the Jacobian), and c filled with the local terms of the bound
// (cw_prop propagates the bounds); c's quad, decay, h, lg, b1, b2, c1d, c2d set by the caller.
// The caller hands an element over before magnitudes reach BIG.
DD_INLINE void dd_step(const dd_consts *K, const pp_adamw_dd_scal_ *S, dd g, dd *thp, dd *mp, dd *vp, dd *denp,
                       cw_local *cp)
{
    dd th = *thp, m = *mp, v = *vp;
    cw_local c = *cp;
    double b1 = K->b1, b2 = K->b2, eps = K->eps, c1d = K->c1d, c2d = K->c2d;
    dd c1 = K->c1, c2 = K->c2;
    double gd = mg(g);
    c.gd = gd;
    // θ ← θ·dec: dec's own error (rdec), one dd_mul
    c.dec_f = S->dec_d * (1.0 + S->rdec);
    {  // a selection, not a branch (the lanes if-convert it; same values)
        double t0 = mg(th);
        dd thd = mul(th, (dd){S->dec[0], S->dec[1]});
        c.ldec = c.decay ? t0 * S->dec_d * S->rdec + DM * t0 * S->dec_d + UF : 0.0;
        th = c.decay ? thd : th;
    }
    // m ← β1·m + c1·g: two dd_mul (β1 binary64, c1 exact), one dd_add
    dd t1 = mul(m, (dd){b1, 0.0}), t2 = mul(g, c1);
    double m0 = mg(m);
    m = add(t1, t2);
    c.lm = DM * (m0 * b1 + gd * c1d) + 2.0 * UF + DA * (mg(t1) + mg(t2));
    // v ← β2·v + c2·g²: g² (dd_mul, and |ĝ² − g²| ≤ (2|ĝ| + e_g)e_g), ·c2, β2·v, dd_add
    dd g2 = mul(g, g);
    dd u2 = mul(g2, c2), u1 = mul(v, (dd){b2, 0.0});
    double v0 = mg(v);
    v = add(u1, u2);
    c.lv = c2d * (DM * gd * gd + UF) + DM * (mg(g2) * c2d + v0 * b2) + 2.0 * UF + DA * (mg(u1) + mg(u2));
    // s = √v: propagated |√v̂ − √V| ≤ min(√e_v, e_v/√v̂); computed |ŝ − √v̂| ≤ |v̂ − ŝ²|/ŝ
    // computed for every v, kept where v > 0 (v = 0: s = 0 exactly): a selection, as above
    c.has_root = v.h > 0.0;
    dd sr = root(v);
    double lres = residual(v, sr, sr) / (sr.h * LOWF);
    dd s = c.has_root ? sr : (dd){0.0, 0.0};
    c.vlo = c.has_root ? v.h * LOWF : 0.0;
    c.lres = c.has_root ? lres : 0.0;
    // den = s·b + ε: b's own error (rb), one dd_mul, one dd_add (ε a binary64)
    dd sb = mul(s, (dd){S->b[0], S->b[1]});
    dd den = add(sb, (dd){eps, 0.0});
    c.b_f = S->b_d * (1.0 + S->rb);
    c.lden = mg(s) * S->b_d * S->rb + DM * mg(s) * S->b_d + UF + DA * (mg(sb) + eps);
    c.dlo = den.h * LOWF;  // the true den is at least dlo − e_den
    // q = a·m/den: a's own error (ra) and a dd_mul for the numerator n; the quotient
    // certified by its residual; then the errors of n and den carried through the division
    dd n = mul((dd){S->a[0], S->a[1]}, m);
    c.a_f = S->a_d * (1.0 + S->ra);
    c.ln = mg(m) * S->a_d * S->ra + DM * S->a_d * mg(m) + UF;
    dd q = quo(n, den);
    c.nmag = mg(n);
    c.lq = residual(n, q, den) / c.dlo;
    // θ ← θ − q: one dd_add
    double t0 = mg(th);
    th = add(th, neg(q));
    c.lth = DA * (t0 + mg(q));
    *thp = th, *mp = m, *vp = v, *denp = den;
    *cp = c;
}

#endif
