// adamw_ref_dd.c — one element's exact AdamW trajectory in double-double, with a running error
// bound per quantity (PROOFS.md#adamw-dd). Products and sums use dd_mul and dd_add, whose
// bounds PROOFS.md#attention proves; the square root and the division are certified a
// posteriori from their residuals, computed with the same two operations.
#include "adamw_ref_dd.h"
#include "adamw_ref_jac.h"
#include "adamw_ref_lohner.h"

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

static inline void cw_prop(const cw_local *c, double eth, double em, double ev, cw_out *o)
{
    double eg = c->quad ? (c->h * eth + c->lg) * SLACK : 0.0;
    if (c->decay)
        eth = (c->dec_f * eth + c->ldec) * SLACK;
    em = (c->b1 * em + c->c1d * eg + c->lm) * SLACK;
    ev = (c->b2 * ev + c->c2d * ((2.0 * c->gd + eg) * eg) + c->lv) * SLACK;
    double es = sqrt(ev);
    if (c->has_root) {
        if (ev / sqrt(c->vlo) < es)
            es = ev / sqrt(c->vlo);
        es += c->lres;
    }
    es *= SLACK;
    double eden = (c->b_f * es + c->lden) * SLACK;
    double D = c->dlo - eden;
    o->ok = D > 0.0;
    double en = (c->a_f * em + c->ln) * SLACK;
    double eq = (en / D + c->nmag * eden / (c->dlo * D) + c->lq) * SLACK;
    o->eg = eg, o->em = em, o->ev = ev, o->eden = eden;
    o->eth = (eth + eq + c->lth) * SLACK;
}

// The sign-keeping set's step for one element of the quadratic source (PROOFS.md#adamw-lohner):
// M is the step's Jacobian at the computed state; the box added is the step's local error
// (cw_prop from zero bounds) plus (J̃ − M)·e over the running bounds s at the step's start. The
// new bounds are the smaller of the componentwise ones (in e_new) and the set's. Where the
// Jacobian is not defined on the box, the set restarts from the componentwise bounds.
static void lohner_step(pp_adamw_lohner_ *L, const cw_local *c, const pp_adamw_dd_scal_ *S, const pp_adamw_hyper *hy,
                        dd g, dd m, dd v, dd den, const double s[3], const double scale[3], const cw_out *o,
                        double e_new[3])
{
    double Dn[3];
    for (int k = 0; k < 3; k++)
        Dn[k] = pp_adamw_lohner_scale_(scale[k]);
    cw_out loc;
    cw_prop(c, 0.0, 0.0, 0.0, &loc);
    pp_adamw_jac_in_ in;
    in.dec_d = c->decay ? S->dec_d : 1.0, in.rdec = c->decay ? S->rdec : 0.0, in.dec_c = c->decay ? S->dec[0] : 1.0;
    in.a_c = S->a[0], in.b_c = S->b[0], in.a_d = S->a_d, in.ra = S->ra, in.b_d = S->b_d, in.rb = S->rb;
    in.beta1 = hy->beta1, in.beta2 = hy->beta2, in.c1 = c->c1d, in.c2 = c->c2d, in.eps = hy->eps;
    in.g = g.h, in.eg = o->eg, in.m1 = m.h, in.em1 = o->em, in.v1 = v.h, in.ev1 = o->ev;
    in.den = den.h, in.eden = o->eden;
    pp_adamw_jac_ J;
    double eb[3], box[3];
    if (!loc.ok || !pp_adamw_jac_make_(&in, &J)) {
        pp_adamw_lohner_reset_(L, e_new, Dn);
        return;
    }
    pp_adamw_jac_box_(&in, &J, s[0], s[1], s[2], c->h * s[0] * SLACK, 0.0, box);
    double rt[3] = {(loc.eth + box[0]) * SLACK, (loc.em + box[1]) * SLACK, (loc.ev + box[2]) * SLACK};
    double M[9] = {in.dec_c + J.alpha * c->h, J.thm, J.thv,  // θ row
                   c->c1d * c->h, hy->beta1, 0.0,             // m row
                   2.0 * c->c2d * g.h * c->h, 0.0, hy->beta2}; // v row
    if (!pp_adamw_lohner_step_dense_(L, M, Dn, rt, eb)) {
        pp_adamw_lohner_reset_(L, e_new, Dn);
        return;
    }
    for (int k = 0; k < 3; k++)
        e_new[k] = fmin(e_new[k], eb[k]);  // fmin: a NaN componentwise bound yields the set's
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
    else
        sig = pp_adamw_synth_signal(pr, i);
    double h = hf, opt = optf, b1 = hy->beta1, b2 = hy->beta2, eps = hy->eps;
    dd c1 = two_sum(1.0, -b1), c2 = two_sum(1.0, -b2);  // exact
    double c1d = mg(c1), c2d = mg(c2);
    dd th = {theta0, 0.0}, m = {0.0, 0.0}, v = {0.0, 0.0};
    double eth = 0.0, em = 0.0, ev = 0.0, sth = fabs(theta0), sm = 0.0, sv = 0.0;
    // the sign-keeping error set of (θ, m, v) where the gradient feeds back (PROOFS.md#adamw-lohner)
    double lmem[PP_ADAMW_LOHNER_DOUBLES(3)];
    pp_adamw_lohner_ L;
    if (quad)
        pp_adamw_lohner_init_(&L, 3, lmem);
    *out = (pp_adamw_dd_elem_){0};
    for (int t = 1; t <= T; t++) {
        const pp_adamw_dd_scal_ *S = &sc[t];
        cw_local c;
        c.quad = quad, c.decay = hy->weight_decay != 0.0, c.h = h, c.b1 = b1, c.b2 = b2, c.c1d = c1d, c.c2d = c2d;
        dd g;
        if (quad) {  // g = h(θ − θ*): dd_add, then dd_mul by the binary32 h
            dd dl = add(th, (dd){-opt, 0.0});
            g = mul(dl, (dd){h, 0.0});
            c.lg = h * DA * (mg(th) + fabs(opt)) + DM * mg(dl) * h + UF;
        } else {
            g = (dd){pp_adamw_synth_grad_s(pr, P, t, i, sig), 0.0};  // exact: a value of P
            c.lg = 0.0;
        }
        if (!(fabs(th.h) < BIG && fabs(m.h) < BIG && v.h < BIG && fabs(g.h) < BIG)) {
            out->fail_step = t, out->fail_bound = INFINITY, out->fail_scale = sth;  // range: hand over
            return 0;
        }
        double gd = mg(g);
        c.gd = gd;
        // θ ← θ·dec: dec's own error (rdec), one dd_mul
        c.dec_f = S->dec_d * (1.0 + S->rdec), c.ldec = 0.0;
        if (c.decay) {
            double t0 = mg(th);
            th = mul(th, (dd){S->dec[0], S->dec[1]});
            c.ldec = t0 * S->dec_d * S->rdec + DM * t0 * S->dec_d + UF;
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
        dd s = {0.0, 0.0};
        c.has_root = v.h > 0.0, c.vlo = 0.0, c.lres = 0.0;
        if (c.has_root) {
            c.vlo = v.h * LOWF;
            s = root(v);
            c.lres = residual(v, s, s) / (s.h * LOWF);
        }
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
        cw_out o;
        cw_prop(&c, eth, em, ev, &o);
        if (!o.ok) {
            out->fail_step = t, out->fail_what = 0, out->fail_bound = INFINITY, out->fail_scale = sth;
            return 0;
        }
        double e_new[3] = {o.eth, o.em, o.ev};
        if (quad)
            lohner_step(&L, &c, S, hy, g, m, v, den, (const double[3]){eth, em, ev},
                        (const double[3]){fmax(sth, mg(th)), fmax(sm, mg(m)), fmax(sv, mg(v))}, &o, e_new);
        eth = e_new[0], em = e_new[1], ev = e_new[2];
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
