// adamw_ref.c — exact AdamW with a running error bound per element (PROOFS.md#adamw): the
// double-double path per element (adamw_ref_dd.c) with MPFR where it cannot certify, or MPFR only
// (mpfr-plain). Per-step scalars once per step in MPFR; per element, mpfr_t variables reused.
#include "adamw_ref.h"
#include "adamw_ref_dd.h"
#include "adamw_ref_dd_lanes.h"
#include "adamw_ref_coupled.h"
#include "adamw_ref_jac.h"
#include "adamw_ref_lohner.h"
#include "parallel.h"

#include <math.h>
#include <mpfr.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// Per-step scalars: a_t = lr_t/(1 − β1^t), b_t = 1/√(1 − β2^t), dec_t = 1 − lr_t·wd, each with a
// relative error bound (PROOFS.md#adamw, "scalars").

typedef struct ref_scal {
    mpfr_t a, b, dec;
    double a_d, b_d, dec_d;  // magnitudes, rounded away from zero
    double ra, rb, rdec;     // relative error bounds
} ref_scal;

// Where a block's running bound first exceeded PP_ADAMW_REF_MAX_REL of its quantity's scale.
typedef struct ref_fail {
    int64_t elem;
    int step;       // 0: no failure
    int what;       // 0 θ, 1 m, 2 v
    double bound, scale;
} ref_fail;

typedef struct ref_ctx {
    const pp_adamw_problem *pr;
    pp_format_id P;
    mpfr_prec_t prec;
    double u;                // 2^(1 − prec): bound on one rounding's relative error, with slack
    ref_scal *sc;            // [T + 1]
    mpfr_t beta1, beta2, c1, c2, eps;
    double c1e, c2e;         // relative error of c1 = 1 − β1, c2 = 1 − β2 (0 when exact)
    const double *theta0;
    double *theta, *m, *v;
    double *bnd;             // [nblocks][3] per-block max bounds
    ref_fail *fail;          // [nblocks] the block's first uncertified element (step 0: none)
    int fast;                // 1: double-double per element, MPFR where it cannot certify
    pp_adamw_dd_scal_ *dsc;  // [T + 1] the scalars as double-doubles (fast)
    pp_adamw_trace *trace;
    double *lossp;           // [nblocks][T + 1]
} ref_ctx;

// Every running-bound update is evaluated in binary64 (a few dozen operations, each relative
// error ≤ 2^−53); multiplying by SLACK covers those roundings (PROOFS.md#adamw, "bookkeeping").
#define SLACK (1.0 + 0x1p-40)

static double mag(const mpfr_t x)
{
    return fabs(mpfr_get_d(x, MPFR_RNDA));
}

// x as a double-double: hi = RN(x), lo = RN(x − hi) (x − hi is exact at x's precision), so
// |hi + lo − x| ≤ 2^−106·|x| and the pair is normalised (PROOFS.md#adamw-dd, "scalars").
static void dd_of(const mpfr_t x, mpfr_t tmp, double out[2])
{
    out[0] = mpfr_get_d(x, MPFR_RNDN);
    mpfr_sub_d(tmp, x, out[0], MPFR_RNDN);  // exact
    out[1] = mpfr_get_d(tmp, MPFR_RNDN);
}

// The double-double scalars of step t from the MPFR ones: each relative bound grows by the
// conversion's 2^−106 (rounded up to 2^−105 to cover (1 + r) factors).
static void dd_scal_make(pp_adamw_dd_scal_ *D, const ref_scal *S, mpfr_t tmp)
{
    dd_of(S->a, tmp, D->a);
    dd_of(S->b, tmp, D->b);
    dd_of(S->dec, tmp, D->dec);
    D->a_d = S->a_d, D->b_d = S->b_d, D->dec_d = S->dec_d;
    D->ra = (S->ra + 0x1p-105) * SLACK;
    D->rb = (S->rb + 0x1p-105) * SLACK;
    D->rdec = (S->rdec + 0x1p-105) * SLACK;
}

static void ref_scal_make(ref_ctx *R, ref_scal *S, int t)
{
    const pp_adamw_hyper *h = &R->pr->hyper;
    double u = R->u, lr = pp_adamw_lr(R->pr, t);
    mpfr_t p, bc;
    mpfr_inits2(R->prec, p, bc, S->a, S->b, S->dec, (mpfr_ptr)0);
    // bc1 = 1 − β1^t: pow one rounding (u·β1^t), subtraction one rounding (u·bc1)
    mpfr_pow_ui(p, R->beta1, (unsigned long)t, MPFR_RNDN);
    mpfr_ui_sub(bc, 1, p, MPFR_RNDN);
    double rbc1 = u * (mag(p) / mpfr_get_d(bc, MPFR_RNDZ) + 1.0) * SLACK;
    mpfr_set_d(S->a, lr, MPFR_RNDN);  // exact: lr_t is a binary64
    mpfr_div(S->a, S->a, bc, MPFR_RNDN);
    S->ra = (rbc1 / (1.0 - 2.0 * rbc1) + u) * SLACK;  // 1/(1 + δ) − 1 ≤ δ/(1 − δ); + the division
    mpfr_pow_ui(p, R->beta2, (unsigned long)t, MPFR_RNDN);
    mpfr_ui_sub(bc, 1, p, MPFR_RNDN);
    double rbc2 = u * (mag(p) / mpfr_get_d(bc, MPFR_RNDZ) + 1.0) * SLACK;
    mpfr_rec_sqrt(S->b, bc, MPFR_RNDN);
    S->rb = (0.5 * rbc2 / (1.0 - 2.0 * rbc2) + u) * SLACK;  // (1 + δ)^(−½) − 1 ≤ ½δ/(1 − δ)
    // dec = 1 − lr·wd: the product (u·lr·wd), the subtraction (u·|dec|)
    mpfr_set_d(p, lr, MPFR_RNDN);
    mpfr_mul_d(p, p, h->weight_decay, MPFR_RNDN);
    mpfr_ui_sub(S->dec, 1, p, MPFR_RNDN);
    S->a_d = mag(S->a);
    S->b_d = mag(S->b);
    S->dec_d = mag(S->dec);
    S->rdec = S->dec_d > 0 ? u * (mag(p) + S->dec_d) / fabs(mpfr_get_d(S->dec, MPFR_RNDZ)) * SLACK : 0.0;
    if (h->weight_decay == 0.0)
        S->rdec = 0.0;
    if (R->dsc)
        dd_scal_make(&R->dsc[t], S, p);
    mpfr_clears(p, bc, (mpfr_ptr)0);
}

// ---------------------------------------------------------------------------------------------
// One element's state and step

typedef struct ref_elem {
    mpfr_t th, m, v, g, t1, t2, s, den, q;
    double eth, em, ev;  // absolute error bounds of th, m, v
    double sth, sm, sv;  // scales: the largest |θ|, |m|, |v| seen so far on this trajectory
} ref_elem;

static void ref_elem_init(ref_elem *E, mpfr_prec_t prec)
{
    mpfr_inits2(prec, E->th, E->m, E->v, E->g, E->t1, E->t2, E->s, E->den, E->q, (mpfr_ptr)0);
}

static void ref_elem_clear(ref_elem *E)
{
    mpfr_clears(E->th, E->m, E->v, E->g, E->t1, E->t2, E->s, E->den, E->q, (mpfr_ptr)0);
}

static void ref_elem_start(ref_elem *E, double theta0)
{
    mpfr_set_d(E->th, theta0, MPFR_RNDN);  // exact
    mpfr_set_zero(E->m, 1);
    mpfr_set_zero(E->v, 1);
    E->eth = E->em = E->ev = 0.0;
    E->sth = fabs(theta0);
    E->sm = E->sv = 0.0;
}

// Is the element still certified after step t? Its running bounds must stay within
// PP_ADAMW_REF_MAX_REL of each quantity's scale (the largest magnitude on its trajectory so
// far). They can grow geometrically where the gradient feeds back (quadratic, linear
// regression), PROOFS.md#adamw-feedback: a bound past the limit is reported, never delivered.
// Returns 1 when certified, else 0 with *f filled.
static int ref_certified(ref_elem *E, int64_t i, int t, ref_fail *f)
{
    double x[3] = {mag(E->th), mag(E->m), mag(E->v)}, *sc[3] = {&E->sth, &E->sm, &E->sv};
    double e[3] = {E->eth, E->em, E->ev};
    for (int k = 0; k < 3; k++) {
        if (x[k] > *sc[k])
            *sc[k] = x[k];
        if (!(e[k] <= PP_ADAMW_REF_MAX_REL * *sc[k])) {  // NaN bounds fail too
            *f = (ref_fail){i, t, k, e[k], *sc[k]};
            return 0;
        }
    }
    return 1;
}

// What one step's own roundings add to each running bound ("local": computed from the step's
// values), and how the bounds at its start propagate (mp_prop). Split so that the step can be
// bounded twice: from the running bounds (componentwise, and the radii of the Jacobian's box) and
// from zero (its local error, what the sign-keeping set adds; PROOFS.md#adamw-lohner).
typedef struct mp_local {
    int decay, has_root;
    double dec_f, ldec;       // θ·dec: dec_d(1 + rdec)·e + ldec
    double b1, c1f, lm;       // m: β1·e_m + c1(1 + c1e)·e_g + lm
    double b2, c2f, gm, lv;   // v: β2·e_v + c2(1 + c2e)(2|g|e_g + e_g²) + lv
    double vv, ls;            // √v: min(√e_v, e_v/√vv) + ls
    double b_f, lden, den;    // den: b_d(1 + rb)·e_s + lden; den rounded toward zero
    double a_f, mm, la, t1m, qm;  // q
    double th_out;            // |θ| after the step
} mp_local;

typedef struct mp_out {
    double em, ev, eden, eth;
} mp_out;

static void mp_prop(const mp_local *c, double eth, double em, double ev, double eg, double u, mp_out *o)
{
    if (c->decay)
        eth = (c->dec_f * eth + c->ldec) * SLACK;
    em = (c->b1 * em + c->c1f * eg + c->lm) * SLACK;
    ev = (c->b2 * ev + c->c2f * (2.0 * c->gm * eg + eg * eg) + c->lv) * SLACK;
    double es = sqrt(ev) * SLACK;  // |√V − √v| ≤ √|V − v| always, ≤ |V − v|/√v when v > 0
    if (c->has_root && ev / sqrt(c->vv) < es)
        es = ev / sqrt(c->vv) * SLACK;
    es += c->ls;
    double eden = (c->b_f * es + c->lden) * SLACK;
    double dl = c->den - eden;  // the true den is at least dl: a bound needs dl > 0
    double eq = !(dl > 0.0) ? INFINITY : ((c->a_f * em + c->la) / dl + c->mm * c->a_f * eden / (c->den * dl) + u * (c->t1m / dl + c->qm)) *
                SLACK;
    o->em = em, o->ev = ev, o->eden = eden;
    o->eth = (eth + eq + u * c->th_out) * SLACK;
}

// One exact AdamW step with gradient E->g; fills c with its local terms (each line's rounding is
// one u times the magnitude of its result, PROOFS.md#adamw, "one step"). The running bounds of E
// are not touched: the caller propagates them with mp_prop.
static void ref_step(const ref_ctx *R, int t, ref_elem *E, mp_local *c)
{
    const ref_scal *S = &R->sc[t];
    double u = R->u, b1 = R->pr->hyper.beta1, b2 = R->pr->hyper.beta2;
    double c1 = mag(R->c1), c2 = mag(R->c2);
    // θ ← θ·dec
    c->decay = R->pr->hyper.weight_decay != 0.0;
    c->dec_f = S->dec_d * (1.0 + S->rdec), c->ldec = 0.0;
    if (c->decay) {
        double th0 = mag(E->th);
        mpfr_mul(E->th, E->th, S->dec, MPFR_RNDN);
        c->ldec = th0 * S->dec_d * S->rdec + u * mag(E->th);
    }
    double gm = mag(E->g);
    // m ← β1·m + c1·g
    mpfr_mul(E->t1, E->m, R->beta1, MPFR_RNDN);
    mpfr_mul(E->t2, E->g, R->c1, MPFR_RNDN);
    mpfr_add(E->m, E->t1, E->t2, MPFR_RNDN);
    c->b1 = b1, c->c1f = c1 * (1.0 + R->c1e);
    c->lm = R->c1e * c1 * gm + u * (mag(E->t1) + mag(E->t2) + mag(E->m));
    // v ← β2·v + c2·g²
    mpfr_sqr(E->s, E->g, MPFR_RNDN);
    mpfr_mul(E->t2, E->s, R->c2, MPFR_RNDN);
    mpfr_mul(E->t1, E->v, R->beta2, MPFR_RNDN);
    mpfr_add(E->v, E->t1, E->t2, MPFR_RNDN);
    c->b2 = b2, c->c2f = c2 * (1.0 + R->c2e), c->gm = gm;
    c->lv = R->c2e * c2 * gm * gm + u * (c2 * mag(E->s) + mag(E->t2) + mag(E->t1) + mag(E->v));
    // den = √v·b + ε
    mpfr_sqrt(E->s, E->v, MPFR_RNDN);
    double sv = mag(E->s);
    c->vv = mpfr_get_d(E->v, MPFR_RNDZ);
    c->has_root = c->vv > 0.0;
    c->ls = u * sv;
    mpfr_mul(E->t1, E->s, S->b, MPFR_RNDN);
    mpfr_add(E->den, E->t1, R->eps, MPFR_RNDN);
    c->den = mpfr_get_d(E->den, MPFR_RNDZ);
    c->b_f = S->b_d * (1.0 + S->rb);
    c->lden = sv * S->b_d * S->rb + u * (mag(E->t1) + mag(E->den));
    // q = a·m / den
    mpfr_mul(E->t1, E->m, S->a, MPFR_RNDN);
    mpfr_div(E->q, E->t1, E->den, MPFR_RNDN);
    c->mm = mag(E->m), c->a_f = S->a_d * (1.0 + S->ra), c->la = c->mm * S->a_d * S->ra;
    c->t1m = mag(E->t1), c->qm = mag(E->q);
    // θ ← θ − q
    mpfr_sub(E->th, E->th, E->q, MPFR_RNDN);
    c->th_out = mag(E->th);
}

// The Jacobian's inputs of element E after a step (centres from its MPFR values, radii o over
// the box of the running bounds at the step's start, eg the gradient's radius).
static void mp_jac_in(const ref_ctx *R, int t, const ref_elem *E, const mp_out *o, double eg, pp_adamw_jac_in_ *in)
{
    const ref_scal *S = &R->sc[t];
    const pp_adamw_hyper *h = &R->pr->hyper;
    int decay = h->weight_decay != 0.0;
    in->dec_d = decay ? S->dec_d : 1.0, in->rdec = decay ? S->rdec : 0.0;
    in->dec_c = decay ? mpfr_get_d(S->dec, MPFR_RNDN) : 1.0;
    in->a_c = mpfr_get_d(S->a, MPFR_RNDN), in->b_c = mpfr_get_d(S->b, MPFR_RNDN);
    in->a_d = S->a_d, in->ra = S->ra, in->b_d = S->b_d, in->rb = S->rb;
    in->beta1 = h->beta1, in->beta2 = h->beta2, in->eps = h->eps;
    in->c1 = mag(R->c1) * (1.0 + R->c1e), in->c2 = mag(R->c2) * (1.0 + R->c2e);
    in->g = mpfr_get_d(E->g, MPFR_RNDN), in->eg = eg;
    in->m1 = mpfr_get_d(E->m, MPFR_RNDN), in->em1 = o->em;
    in->v1 = mpfr_get_d(E->v, MPFR_RNDN), in->ev1 = o->ev;
    in->den = mpfr_get_d(E->den, MPFR_RNDN), in->eden = o->eden;
}

// The sign-keeping set's step for one element of the quadratic source (PROOFS.md#adamw-lohner):
// M the step's Jacobian at the computed state, the box the step's local error (mp_prop from zero
// bounds, lg the gradient's own rounding) plus (J̃ − M)·e over the running bounds at its start.
// e_new (the componentwise bounds) becomes the smaller of the two; where the Jacobian is not
// defined on the box, the set restarts from the componentwise bounds.
static void mp_lohner_elem(const ref_ctx *R, int t, const ref_elem *E, const mp_local *c, const mp_out *o, double eg,
                           double lg, double h, pp_adamw_lohner_ *L, double e_new[3])
{
    mp_out loc;
    mp_prop(c, 0.0, 0.0, 0.0, lg, R->u, &loc);
    double Dn[3] = {pp_adamw_lohner_scale_(fmax(E->sth, mag(E->th))), pp_adamw_lohner_scale_(fmax(E->sm, mag(E->m))),
                    pp_adamw_lohner_scale_(fmax(E->sv, mag(E->v)))};
    pp_adamw_jac_in_ in;
    pp_adamw_jac_ J;
    mp_jac_in(R, t, E, o, eg, &in);
    double box[3], eb[3];
    if (!isfinite(loc.eth) || !pp_adamw_jac_make_(&in, &J)) {
        pp_adamw_lohner_reset_(L, e_new, Dn);
        return;
    }
    pp_adamw_jac_box_(&in, &J, E->eth, E->em, E->ev, h * E->eth * SLACK, 0.0, box);
    double rt[3] = {(loc.eth + box[0]) * SLACK, (loc.em + box[1]) * SLACK, (loc.ev + box[2]) * SLACK};
    double M[9] = {in.dec_c + J.alpha * h, J.thm, J.thv, in.c1 * h, in.beta1, 0.0, 2.0 * in.c2 * in.g * h, 0.0,
                   in.beta2};
    if (!pp_adamw_lohner_step_dense_(L, M, Dn, rt, eb)) {
        pp_adamw_lohner_reset_(L, e_new, Dn);
        return;
    }
    for (int k = 0; k < 3; k++)
        e_new[k] = fmin(e_new[k], eb[k]);  // fmin: a NaN componentwise bound yields the set's
}

// |x − exact| ≤ e + the rounding of x to binary64.
static double out_bound(const mpfr_t x, double *out, double e)
{
    double d = mpfr_get_d(x, MPFR_RNDN);
    *out = d;
    if (mpfr_cmp_d(x, d) != 0)
        e += 0.5 * pp_ulp(PP_FMT_FP64, d);
    return e;
}

static void max3(double *b, const ref_elem *E, const ref_ctx *R, int64_t i)
{
    double e0 = out_bound(E->th, &R->theta[i], E->eth), e1 = out_bound(E->m, &R->m[i], E->em);
    double e2 = out_bound(E->v, &R->v[i], E->ev);
    b[0] = e0 > b[0] ? e0 : b[0];
    b[1] = e1 > b[1] ? e1 : b[1];
    b[2] = e2 > b[2] ? e2 : b[2];
}

// ---------------------------------------------------------------------------------------------
// Element-parallel sources

#define REF_BLOCK 256

// One element in MPFR from θ₀ through T steps; th64[t] = the binary64 θ after step t (th64 may
// be NULL). Returns 1 and the outputs with their bounds (½ulp included), or 0 with *f filled.
static int ref_mpfr_elem(const ref_ctx *R, ref_elem *E, int64_t i, double *th64, double out[3], double bnd[3],
                         ref_fail *f)
{
    const pp_adamw_problem *pr = R->pr;
    int T = pr->steps, quad = pr->kind == PP_ADAMW_GRAD_QUADRATIC;
    double u = R->u;
    ref_elem_start(E, R->theta0[i]);
    float h = 0.0f, opt = 0.0f;
    double sig = 0.0;
    if (quad)
        pp_adamw_quad_data(pr, i, &h, &opt);
    else if (pr->kind == PP_ADAMW_GRAD_SYNTHETIC)
        sig = pp_adamw_synth_signal(pr, i);
    double lmem[PP_ADAMW_LOHNER_DOUBLES(3)];
    pp_adamw_lohner_ L;
    if (quad)
        pp_adamw_lohner_init_(&L, 3, lmem);
    for (int t = 1; t <= T; t++) {
        double eg = 0.0, lg = 0.0;
        if (quad) {  // g = h·(θ − θ*): two roundings
            mpfr_sub_d(E->t1, E->th, opt, MPFR_RNDN);
            mpfr_mul_d(E->g, E->t1, h, MPFR_RNDN);
            lg = u * (h * mag(E->t1) + mag(E->g));
            eg = (h * E->eth + lg) * SLACK;
        } else {
            mpfr_set_d(E->g, pp_adamw_given_grad(pr, R->P, t, i, sig), MPFR_RNDN);  // exact
        }
        mp_local c;
        mp_out o;
        ref_step(R, t, E, &c);
        mp_prop(&c, E->eth, E->em, E->ev, eg, u, &o);
        double e_new[3] = {o.eth, o.em, o.ev};
        if (quad)
            mp_lohner_elem(R, t, E, &c, &o, eg, lg * SLACK, h, &L, e_new);
        E->eth = e_new[0], E->em = e_new[1], E->ev = e_new[2];
        if (!ref_certified(E, i, t, f))
            return 0;
        if (th64)
            th64[t] = mpfr_get_d(E->th, MPFR_RNDN);
    }
    bnd[0] = out_bound(E->th, &out[0], E->eth);
    bnd[1] = out_bound(E->m, &out[1], E->em);
    bnd[2] = out_bound(E->v, &out[2], E->ev);
    return 1;
}

// The elements of block b: each by the double-double path when R->fast (adamw_ref_dd.c), by
// MPFR when that path cannot certify it (or when !R->fast). The loss partials and snapshots
// come from the certified run's binary64 θ, element by element in order, as before.
static void ref_block(ref_ctx *R, int64_t b)
{
    enum { W = PP_ADAMW_DD_LANES };
    const pp_adamw_problem *pr = R->pr;
    int T = pr->steps,
        lanes = R->fast && (pr->kind == PP_ADAMW_GRAD_SYNTHETIC || pr->kind == PP_ADAMW_GRAD_INPUT);
    int64_t lo = b * REF_BLOCK, hi = lo + REF_BLOCK < pr->n ? lo + REF_BLOCK : pr->n;
    double *lp = R->lossp ? R->lossp + b * (T + 1) : NULL;
    double *th64 = malloc((size_t)W * (T + 1) * sizeof *th64);
    if (!th64) {
        R->fail[b] = (ref_fail){lo, -1, 0, 0.0, 0.0};  // step −1: out of memory
        return;
    }
    ref_elem E;
    ref_elem_init(&E, R->prec);
    pp_adamw_dd_elem_ lo_out[W];
    int lo_ok[W];
    for (int64_t i = lo; i < hi; i++) {
        // a θ-independent source's double-double elements, W at a time (adamw_ref_dd_lanes.c:
        // bit-identical to the scalar element), a full group only
        int64_t l = lanes ? (i - lo) % W : 0;
        int grouped = lanes && i - l + W <= hi;
        if (grouped && l == 0)
            pp_adamw_ref_dd_lanes_(pr, R->P, R->dsc, i, R->theta0 + i, PP_ADAMW_REF_MAX_REL, th64, lo_out, lo_ok);
        double *row = th64 + (grouped ? l : 0) * (T + 1);
        double out[3], bnd[3];
        int ok = 0;
        if (R->fast) {
            pp_adamw_dd_elem_ o;
            if (grouped)
                o = lo_out[l], ok = lo_ok[l];
            else
                ok = pp_adamw_ref_dd_elem_(pr, R->P, R->dsc, i, R->theta0[i], PP_ADAMW_REF_MAX_REL, row, &o);
            if (ok) {
                out[0] = o.theta, out[1] = o.m, out[2] = o.v;
                bnd[0] = o.bound[0], bnd[1] = o.bound[1], bnd[2] = o.bound[2];
            }
        }
        if (!ok && !ref_mpfr_elem(R, &E, i, row, out, bnd, &R->fail[b]))
            break;
        R->theta[i] = out[0], R->m[i] = out[1], R->v[i] = out[2];
        for (int k = 0; k < 3; k++)
            if (bnd[k] > R->bnd[3 * b + k])
                R->bnd[3 * b + k] = bnd[k];
        row[0] = R->theta0[i];
        if (lp) {
            float h, opt;
            pp_adamw_quad_data(pr, i, &h, &opt);
            for (int t = 0; t <= T; t++) {
                double d = row[t] - opt;
                lp[t] += 0.5 * h * d * d;
            }
        }
        if (R->trace)
            for (int k = 0; k < R->trace->n_snaps; k++)
                R->trace->snap[(int64_t)k * pr->n + i] = row[R->trace->snap_step[k]];
    }
    free(th64);
    ref_elem_clear(&E);
    mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);
}

static void ref_block_task(void *R, int64_t b)
{
    ref_block(R, b);
}

// ---------------------------------------------------------------------------------------------
// Linear regression: step by step; the residuals and the gradient by exact-product FMAs

// Per step: the residuals (with their bounds from the running θ bounds and from zero, the step's
// local part), each g_k and its AdamW step, then the coupled sign-keeping set over all elements
// (adamw_ref_coupled.c) and the certification.
typedef struct linreg_work {
    double *eres, *eres_loc;      // [r]
    double *s, *e_new, *loc;      // [3n]: bounds at the step's start, after it, its local part
    double *Dn;                   // [3n]: the set's new scales
    double *eg, *eg_loc;          // [n]
    mp_local *c;                  // [n]
    mp_out *o;                    // [n]
    pp_adamw_jac_in_ *in;         // [n]
} linreg_work;

static int ref_linreg(ref_ctx *R, pp_error *err)
{
    const pp_adamw_problem *pr = R->pr;
    int64_t n = pr->n, r = pr->rows;
    int T = pr->steps;
    double u = R->u;
    float *X = malloc((size_t)(r * n) * sizeof *X), *y = malloc((size_t)r * sizeof *y);
    ref_elem *E = malloc((size_t)n * sizeof *E);
    mpfr_t *res = malloc((size_t)r * sizeof *res), acc, x;
    linreg_work W;
    double *dbl = malloc((size_t)(2 * r + 14 * n) * sizeof *dbl);
    W.c = malloc((size_t)n * sizeof *W.c);
    W.o = malloc((size_t)n * sizeof *W.o);
    W.in = malloc((size_t)n * sizeof *W.in);
    pp_adamw_coupled_ C;
    int have_c = 0;
    if (X && y && E && res && dbl && W.c && W.o && W.in) {
        pp_adamw_linreg_data(pr, X, y);
        have_c = pp_adamw_coupled_init_(&C, n, r, X);
    }
    if (!have_c) {
        free(X), free(y), free(E), free(res), free(dbl), free(W.c), free(W.o), free(W.in);
        return pp_fail(err, PP_ERR_RUNTIME, "adamw reference: out of memory");
    }
    W.eres = dbl, W.eres_loc = dbl + r, W.s = dbl + 2 * r, W.e_new = W.s + 3 * n, W.loc = W.e_new + 3 * n;
    W.eg = W.loc + 3 * n, W.eg_loc = W.eg + n, W.Dn = W.eg_loc + n;
    mpfr_inits2(R->prec, acc, x, (mpfr_ptr)0);
    for (int64_t q = 0; q < r; q++)
        mpfr_init2(res[q], R->prec);
    for (int64_t k = 0; k < n; k++) {
        ref_elem_init(&E[k], R->prec);
        ref_elem_start(&E[k], R->theta0[k]);
    }
    int snap = 0;
    for (int t = 0; t <= T; t++) {
        double loss = 0.0;
        for (int64_t q = 0; q < r; q++) {  // res_q = x_q·θ − y_q: one rounding per FMA
            double partial = 0.0, prop = 0.0;
            mpfr_set_d(acc, -(double)y[q], MPFR_RNDN);
            for (int64_t k = 0; k < n; k++) {
                mpfr_set_d(x, X[q * n + k], MPFR_RNDN);
                mpfr_fma(acc, x, E[k].th, acc, MPFR_RNDN);
                partial += mag(acc);
                prop += fabs((double)X[q * n + k]) * E[k].eth;
            }
            mpfr_set(res[q], acc, MPFR_RNDN);
            W.eres[q] = (prop + u * partial) * SLACK;
            W.eres_loc[q] = u * partial * SLACK;
            double d = mpfr_get_d(acc, MPFR_RNDN);
            loss += d * d;
        }
        if (R->trace && R->trace->loss)
            R->trace->loss[t] = loss / (2.0 * (double)r);
        if (t == T)
            break;
        for (int64_t k = 0; k < n; k++) {  // g_k = (Σ_q x_qk res_q)/r, then the step
            double partial = 0.0, prop = 0.0, prop_loc = 0.0;
            mpfr_set_zero(acc, 1);
            for (int64_t q = 0; q < r; q++) {
                mpfr_set_d(x, X[q * n + k], MPFR_RNDN);
                mpfr_fma(acc, x, res[q], acc, MPFR_RNDN);
                partial += mag(acc);
                prop += fabs((double)X[q * n + k]) * W.eres[q];
                prop_loc += fabs((double)X[q * n + k]) * W.eres_loc[q];
            }
            mpfr_div_si(E[k].g, acc, (long)r, MPFR_RNDN);
            W.eg[k] = ((prop + u * partial) / (double)r + u * mag(E[k].g)) * SLACK;
            W.eg_loc[k] = ((prop_loc + u * partial) / (double)r + u * mag(E[k].g)) * SLACK;
            W.s[k] = E[k].eth, W.s[n + k] = E[k].em, W.s[2 * n + k] = E[k].ev;
            ref_step(R, t + 1, &E[k], &W.c[k]);
            mp_prop(&W.c[k], E[k].eth, E[k].em, E[k].ev, W.eg[k], u, &W.o[k]);
            W.e_new[k] = W.o[k].eth, W.e_new[n + k] = W.o[k].em, W.e_new[2 * n + k] = W.o[k].ev;
            mp_out lo;
            mp_prop(&W.c[k], 0.0, 0.0, 0.0, W.eg_loc[k], u, &lo);
            W.loc[k] = lo.eth, W.loc[n + k] = lo.em, W.loc[2 * n + k] = lo.ev;
            mp_jac_in(R, t + 1, &E[k], &W.o[k], W.eg[k], &W.in[k]);
            W.Dn[k] = pp_adamw_lohner_scale_(fmax(E[k].sth, mag(E[k].th)));
            W.Dn[n + k] = pp_adamw_lohner_scale_(fmax(E[k].sm, mag(E[k].m)));
            W.Dn[2 * n + k] = pp_adamw_lohner_scale_(fmax(E[k].sv, mag(E[k].v)));
        }
        pp_adamw_coupled_step_(&C, W.in, W.loc, W.s, W.Dn, W.e_new);
        for (int64_t k = 0; k < n; k++) {
            E[k].eth = W.e_new[k], E[k].em = W.e_new[n + k], E[k].ev = W.e_new[2 * n + k];
            if (!R->fail[0].step)
                ref_certified(&E[k], k, t + 1, &R->fail[0]);
        }
        if (R->fail[0].step)
            break;
        if (R->trace && snap < R->trace->n_snaps && R->trace->snap_step[snap] == t + 1) {
            for (int64_t k = 0; k < n; k++)
                R->trace->snap[(int64_t)snap * n + k] = mpfr_get_d(E[k].th, MPFR_RNDN);
            snap++;
        }
    }
    for (int64_t k = 0; k < n; k++) {
        max3(R->bnd, &E[k], R, k);
        ref_elem_clear(&E[k]);
    }
    for (int64_t q = 0; q < r; q++)
        mpfr_clear(res[q]);
    mpfr_clears(acc, x, (mpfr_ptr)0);
    pp_adamw_coupled_free_(&C);
    free(X), free(y), free(E), free(res), free(dbl), free(W.c), free(W.o), free(W.in);
    return PP_OK;
}

// ---------------------------------------------------------------------------------------------
// Entry point

int pp_adamw_ref(const pp_adamw_problem *pr, pp_format_id P, int prec, const double *theta0, double *theta,
                 double *m, double *v, double bound[3], pp_adamw_trace *trace, int threads, pp_error *err)
{
    const pp_adamw_hyper *h = &pr->hyper;
    int fast = prec == 0 && pr->kind != PP_ADAMW_GRAD_LINREG;
    if (prec == 0)
        prec = PP_ADAMW_REF_PREC;
    // prec ≤ 1000: the bounds are binary64 multiples of u = 2^(1 − prec), which must stay normal
    // (beyond 1074 bits u would be 0 and every rounding would go uncounted)
    if (prec < 64 || prec > 1000 || pr->n < 1 || pr->steps < 1 || !(h->eps > 0.0) || !(h->beta1 >= 0.0) ||
        !(h->beta1 < 1.0) || !(h->beta2 >= 0.0) || !(h->beta2 < 1.0) ||
        (pr->kind == PP_ADAMW_GRAD_SYNTHETIC && !(pr->snr > 0.0)) ||
        (pr->kind == PP_ADAMW_GRAD_LINREG && pr->rows < 1) || (pr->kind == PP_ADAMW_GRAD_INPUT && !pr->grads))
        return pp_fail(err, PP_ERR_INPUT, "adamw reference: bad problem or precision %d", prec);
    int T = pr->steps;
    ref_ctx R;
    memset(&R, 0, sizeof R);
    R.pr = pr;
    R.P = P;
    R.prec = prec;
    R.u = ldexp(1.0, 1 - prec);
    R.theta0 = theta0;
    R.theta = theta;
    R.m = m;
    R.v = v;
    R.trace = trace;
    int has_loss = pp_adamw_has_loss(pr);
    int64_t nb = pr->kind == PP_ADAMW_GRAD_LINREG ? 1 : (pr->n + REF_BLOCK - 1) / REF_BLOCK;
    R.sc = malloc((size_t)(T + 1) * sizeof *R.sc);
    R.bnd = calloc((size_t)(3 * nb), sizeof *R.bnd);
    R.fail = calloc((size_t)nb, sizeof *R.fail);
    R.fast = fast;
    R.dsc = fast ? calloc((size_t)T + 1, sizeof *R.dsc) : NULL;
    if (trace) {
        memset(trace, 0, sizeof *trace);
        trace->n_snaps = pp_adamw_snap_steps(T, trace->snap_step);
        trace->theta0 = theta0;
        trace->snap = malloc((size_t)(trace->n_snaps * pr->n) * sizeof *trace->snap);
        trace->loss = has_loss ? calloc((size_t)T + 1, sizeof *trace->loss) : NULL;
        if (has_loss && pr->kind != PP_ADAMW_GRAD_LINREG)
            R.lossp = calloc((size_t)(nb * (T + 1)), sizeof *R.lossp);
    }
    if (!R.sc || !R.bnd || !R.fail || (fast && !R.dsc) || (trace && (!trace->snap || (has_loss && !trace->loss))) ||
        (trace && has_loss && pr->kind != PP_ADAMW_GRAD_LINREG && !R.lossp)) {
        free(R.sc), free(R.bnd), free(R.lossp), free(R.fail), free(R.dsc);
        if (trace) {
            free(trace->snap), free(trace->loss);
            memset(trace, 0, sizeof *trace);
        }
        return pp_fail(err, PP_ERR_RUNTIME, "adamw reference: out of memory");
    }
    mpfr_inits2(prec, R.beta1, R.beta2, R.c1, R.c2, R.eps, (mpfr_ptr)0);
    mpfr_set_d(R.beta1, h->beta1, MPFR_RNDN);
    mpfr_set_d(R.beta2, h->beta2, MPFR_RNDN);
    mpfr_set_d(R.eps, h->eps, MPFR_RNDN);
    R.c1e = mpfr_ui_sub(R.c1, 1, R.beta1, MPFR_RNDN) ? R.u : 0.0;
    R.c2e = mpfr_ui_sub(R.c2, 1, R.beta2, MPFR_RNDN) ? R.u : 0.0;
    for (int t = 1; t <= T; t++)
        ref_scal_make(&R, &R.sc[t], t);

    int rc = PP_OK;
    if (pr->kind == PP_ADAMW_GRAD_LINREG) {
        rc = ref_linreg(&R, err);
    } else {
        pp_parallel_for(ref_block_task, &R, nb, threads, NULL);
        if (R.lossp)  // the blocks' partial losses in block order, as the emulation sums its own
            for (int t = 0; t <= T; t++)
                trace->loss[t] = pp_adamw_loss_total(R.lossp + t, nb, T + 1);
    }
    for (int64_t b = 0; b < nb && rc == PP_OK; b++)  // the first failing block: the smallest element
        if (R.fail[b].step) {
            static const char *const names[] = {"theta", "m", "v"};
            const ref_fail *f = &R.fail[b];
            if (f->step < 0) {
                rc = pp_fail(err, PP_ERR_RUNTIME, "adamw reference: out of memory");
                break;
            }
            rc = pp_fail(err, PP_ERR_RUNTIME,
                         "adamw reference: element %lld, step %d: the proven error bound of %s (%.3g) exceeds "
                         "2^-50 of its scale (%.3g); the exact trajectory is not certified "
                         "(reference/PROOFS.md#adamw-feedback)",
                         (long long)f->elem, f->step, names[f->what], f->bound, f->scale);
        }
    bound[0] = bound[1] = bound[2] = 0.0;
    for (int64_t b = 0; b < nb; b++)
        for (int k = 0; k < 3; k++)
            if (R.bnd[3 * b + k] > bound[k])
                bound[k] = R.bnd[3 * b + k];
    for (int t = 1; t <= T; t++)
        mpfr_clears(R.sc[t].a, R.sc[t].b, R.sc[t].dec, (mpfr_ptr)0);
    mpfr_clears(R.beta1, R.beta2, R.c1, R.c2, R.eps, (mpfr_ptr)0);
    free(R.sc), free(R.bnd), free(R.lossp), free(R.fail), free(R.dsc);
    if (rc && trace) {
        free(trace->snap), free(trace->loss);
        memset(trace, 0, sizeof *trace);
    }
    return rc;
}
