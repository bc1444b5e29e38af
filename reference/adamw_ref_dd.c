// adamw_ref_dd.c — one element's exact AdamW trajectory in double-double, with a running error
// bound per quantity (PROOFS.md#adamw-dd). Products and sums use dd_mul and dd_add, whose
// bounds PROOFS.md#attention proves; the square root and the division are certified a
// posteriori from their residuals, computed with the same two operations.
#include "adamw_ref_dd.h"
#include "adamw_ref_dd_step.h"
#include "adamw_ref_jac.h"
#include "adamw_ref_lohner.h"

#include <math.h>

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
    else if (pr->kind == PP_ADAMW_GRAD_SYNTHETIC)
        sig = pp_adamw_synth_signal(pr, i);
    double h = hf, opt = optf, b1 = hy->beta1, b2 = hy->beta2, eps = hy->eps;
    dd c1 = two_sum(1.0, -b1), c2 = two_sum(1.0, -b2);  // exact
    double c1d = mg(c1), c2d = mg(c2);
    const dd_consts K = {b1, b2, eps, c1d, c2d, c1, c2};
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
            g = (dd){pp_adamw_given_grad(pr, P, t, i, sig), 0.0};  // exact: a value of P
            c.lg = 0.0;
        }
        if (!(fabs(th.h) < BIG && fabs(m.h) < BIG && v.h < BIG && fabs(g.h) < BIG)) {
            out->fail_step = t, out->fail_bound = INFINITY, out->fail_scale = sth;  // range: hand over
            return 0;
        }
        dd den;
        dd_step(&K, S, g, &th, &m, &v, &den, &c);
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
