// adamw_ref_dd.c — one element's exact AdamW trajectory in double-double, with a running error
// bound per quantity (PROOFS.md#adamw-dd). Products and sums use dd_mul and dd_add, whose
// bounds PROOFS.md#attention proves; the square root and the division are certified a
// posteriori from their residuals, computed with the same two operations.
#include "adamw_ref_dd.h"

#include <math.h>

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

static inline dd two_sum(double a, double b)  // exact: h + l = a + b
{
    double s = a + b, bb = s - a;
    return (dd){s, (a - (s - bb)) + (b - bb)};
}

static inline double mg(dd x)  // ≥ |x|
{
    return fabs(x.h) * MAGF;
}

static inline dd neg(dd x)
{
    return (dd){-x.h, -x.l};
}

// x·y, normalised: ±DM·|xh·yh| + UF (the algorithm of attention_ref_fast.c's dd_mul).
static inline dd mul(dd x, dd y)
{
    double p = x.h * y.h;
    double pe = fma(x.h, y.h, -p);  // exact
    double t3 = x.h * y.l + x.l * y.h;
    return two_sum(p, pe + t3);
}

// x + y, normalised: ±DA·(|xh| + |yh|), whatever the cancellation.
static inline dd add(dd x, dd y)
{
    dd s = two_sum(x.h, y.h);
    return two_sum(s.h, s.l + (x.l + y.l));
}

// n/d and √v, any accuracy: their errors are measured afterwards from residuals.
static inline dd quo(dd n, dd d)
{
    double q1 = n.h / d.h;
    double p = q1 * d.h, pe = fma(q1, d.h, -p);
    double r = (((n.h - p) - pe) + n.l) - q1 * d.l;
    return two_sum(q1, r / d.h);
}

static inline dd root(dd v)
{
    double s1 = sqrt(v.h);
    double p = s1 * s1, pe = fma(s1, s1, -p);
    double r = ((v.h - p) - pe) + v.l;
    return two_sum(s1, r / (2.0 * s1));
}

// Bound on |x − y·z| for computed dd x, y, z: the residual x − y·z by dd_mul and dd_add, plus
// their bounds (PROOFS.md#adamw-dd, "a posteriori").
static inline double residual(dd x, dd y, dd z)
{
    dd p = mul(y, z), r = add(x, neg(p));
    return (fabs(r.h) + fabs(r.l) + DM * mg(y) * mg(z) + UF + DA * (mg(x) + mg(p))) * SLACK;
}

// Certified? e ≤ max_rel·scale, the scale the largest magnitude so far.
static int certified(pp_adamw_dd_elem_ *out, double max_rel, int t, int what, double x, double *scale, double e)
{
    if (x > *scale)
        *scale = x;
    if (e <= max_rel * *scale)
        return 1;
    out->fail_step = t, out->fail_what = what, out->fail_bound = e, out->fail_scale = *scale;
    return 0;
}

// The binary64 nearest x and its bound: e plus ½ulp when the rounding was inexact.
static double deliver(dd x, double e, double *bound)
{
    dd r = two_sum(x.h, x.l);  // r.h = RN(x.h + x.l), r.l the rest
    *bound = r.l != 0.0 ? e + 0.5 * pp_ulp(PP_FMT_FP64, r.h) : e;
    return r.h;
}

int pp_adamw_ref_dd_elem_(const pp_adamw_problem *pr, pp_format_id P, const pp_adamw_dd_scal_ *sc, int64_t i,
                          double theta0, double max_rel, double *th64, pp_adamw_dd_elem_ *out)
{
    const pp_adamw_hyper *hy = &pr->hyper;
    int T = pr->steps, quad = pr->kind == PP_ADAMW_GRAD_QUADRATIC;
    float hf = 0.0f, optf = 0.0f;
    double sig = 0.0;
    if (quad)
        pp_adamw_quad_data(pr, i, &hf, &optf);
    else if (pr->kind == PP_ADAMW_GRAD_SYNTHETIC)
        sig = pp_adamw_synth_signal(pr, i);
    double h = hf, opt = optf, b1 = hy->beta1, b2 = hy->beta2, eps = hy->eps;
    dd c1 = two_sum(1.0, -b1), c2 = two_sum(1.0, -b2);  // exact
    double c1d = mg(c1), c2d = mg(c2);
    dd th = {theta0, 0.0}, m = {0.0, 0.0}, v = {0.0, 0.0};
    double eth = 0.0, em = 0.0, ev = 0.0, sth = fabs(theta0), sm = 0.0, sv = 0.0;
    *out = (pp_adamw_dd_elem_){0};
    for (int t = 1; t <= T; t++) {
        const pp_adamw_dd_scal_ *S = &sc[t];
        dd g;
        double eg = 0.0;
        if (quad) {  // g = h(θ − θ*): dd_add, then dd_mul by the binary32 h
            dd dl = add(th, (dd){-opt, 0.0});
            g = mul(dl, (dd){h, 0.0});
            eg = (h * (eth + DA * (mg(th) + fabs(opt))) + DM * mg(dl) * h + UF) * SLACK;
        } else {
            g = (dd){pp_adamw_given_grad(pr, P, t, i, sig), 0.0};  // exact: a value of P
        }
        if (!(fabs(th.h) < BIG && fabs(m.h) < BIG && v.h < BIG && fabs(g.h) < BIG)) {
            out->fail_step = t, out->fail_bound = INFINITY, out->fail_scale = sth;  // range: hand over
            return 0;
        }
        double gd = mg(g);
        // θ ← θ·dec: dec's own error (rdec), one dd_mul
        if (hy->weight_decay != 0.0) {
            double t0 = mg(th);
            th = mul(th, (dd){S->dec[0], S->dec[1]});
            eth = (S->dec_d * (1.0 + S->rdec) * eth + t0 * S->dec_d * S->rdec + DM * t0 * S->dec_d + UF) * SLACK;
        }
        // m ← β1·m + c1·g: two dd_mul (β1 binary64, c1 exact), one dd_add
        dd t1 = mul(m, (dd){b1, 0.0}), t2 = mul(g, c1);
        double m0 = mg(m);
        m = add(t1, t2);
        em = (b1 * em + c1d * eg + DM * (m0 * b1 + gd * c1d) + 2.0 * UF + DA * (mg(t1) + mg(t2))) * SLACK;
        // v ← β2·v + c2·g²: g² (dd_mul, and |ĝ² − g²| ≤ (2|ĝ| + e_g)e_g), ·c2, β2·v, dd_add
        dd g2 = mul(g, g);
        dd u2 = mul(g2, c2), u1 = mul(v, (dd){b2, 0.0});
        double v0 = mg(v);
        v = add(u1, u2);
        ev = (b2 * ev + c2d * ((2.0 * gd + eg) * eg + DM * gd * gd + UF) + DM * (mg(g2) * c2d + v0 * b2) +
              2.0 * UF + DA * (mg(u1) + mg(u2))) * SLACK;
        // s = √v: propagated |√v̂ − √V| ≤ min(√e_v, e_v/√v̂); computed |ŝ − √v̂| ≤ |v̂ − ŝ²|/ŝ
        dd s = {0.0, 0.0};
        double es = sqrt(ev);
        if (v.h > 0.0) {
            double vlo = v.h * LOWF;
            if (ev / sqrt(vlo) < es)
                es = ev / sqrt(vlo);
            s = root(v);
            es += residual(v, s, s) / (s.h * LOWF);
        }
        es *= SLACK;
        // den = s·b + ε: b's own error (rb), one dd_mul, one dd_add (ε a binary64)
        dd sb = mul(s, (dd){S->b[0], S->b[1]});
        dd den = add(sb, (dd){eps, 0.0});
        double eden = (S->b_d * (1.0 + S->rb) * es + mg(s) * S->b_d * S->rb + DM * mg(s) * S->b_d + UF +
                       DA * (mg(sb) + eps)) * SLACK;
        double dlo = den.h * LOWF, D = dlo - eden;  // the true den is at least D
        if (!(D > 0.0)) {
            out->fail_step = t, out->fail_what = 0, out->fail_bound = INFINITY, out->fail_scale = sth;
            return 0;
        }
        // q = a·m/den: a's own error (ra) and a dd_mul for the numerator n; the quotient
        // certified by its residual; then the errors of n and den carried through the division
        dd n = mul((dd){S->a[0], S->a[1]}, m);
        double en = (S->a_d * (1.0 + S->ra) * em + mg(m) * S->a_d * S->ra + DM * S->a_d * mg(m) + UF) * SLACK;
        dd q = quo(n, den);
        double eq = (en / D + mg(n) * eden / (dlo * D) + residual(n, q, den) / dlo) * SLACK;
        // θ ← θ − q: one dd_add
        double t0 = mg(th);
        th = add(th, neg(q));
        eth = (eth + eq + DA * (t0 + mg(q))) * SLACK;
        if (th64)
            th64[t] = th.h + th.l;  // RN of the pair's value
        if (!certified(out, max_rel, t, 0, mg(th), &sth, eth) || !certified(out, max_rel, t, 1, mg(m), &sm, em) ||
            !certified(out, max_rel, t, 2, mg(v), &sv, ev))
            return 0;
    }
    dd x[3] = {th, m, v};
    double e[3] = {eth, em, ev};
    for (int k = 0; k < 3; k++)
        out->pair[k][0] = x[k].h, out->pair[k][1] = x[k].l, out->pair_bound[k] = e[k];
    out->theta = deliver(th, eth, &out->bound[0]);
    out->m = deliver(m, em, &out->bound[1]);
    out->v = deliver(v, ev, &out->bound[2]);
    return 1;
}
