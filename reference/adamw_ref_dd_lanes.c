// adamw_ref_dd_lanes.c — the lanes of the double-double AdamW reference (adamw_ref_dd_lanes.h).
// Per step: the gradients (the normal draws side by side, GB steps at a time,
// kernels/random_lanes.h), then one loop over the lanes running dd_step and cw_prop (vectorised:
// state in structure-of-arrays form, the root's branch if-converted — both sides computed, one
// kept, with -fno-trapping-math for this file), then the certification of each lane in the
// scalar path's order. A lane that fails keeps being computed (its values unused) so the loop
// stays branch-free; its out and ok are those of the scalar path at the failing step. Check the
// vectorisation with
//   gcc ... -fopt-info-vec-optimized -c reference/adamw_ref_dd_lanes.c
#include "adamw_ref_dd_lanes.h"
#include "adamw_ref_dd_step.h"
#include "random_lanes.h"

#define W PP_ADAMW_DD_LANES

// Steps whose synthetic normals are drawn in one batch (GB rows of pairs ≤ PP_RAND_BATCH_MAX).
#define GB 32
_Static_assert(GB * PP_RAND_PAIR_ROWS_MAX(W) <= PP_RAND_BATCH_MAX, "a batch of GB steps fits pp_rand_normal_batch");

// The synthetic source's normals of steps t .. t + ns − 1 (ns ≤ GB) into z[s][l] (step t + s, lane
// l): pp_rand_normal_pair_rows (kernels/random_lanes.h; its inline halves, vectorised in each
// clone below), the same bits as pp_adamw_synth_noise's. A rejected attempt is retried side by
// side with the others' (not one lane at a time through the scalar pp_rand_normal_pair_from,
// which took half of this reference's time).
static void lanes_normals(const pp_adamw_problem *pr, int t, int ns, int64_t i0, double (*z)[W])
{
    pp_rand_normal_pair_rows(pr->seed, PP_ADAMW_TID_NOISE + (uint32_t)t, ns, i0, W, (pp_rand_lanes_fns){0}, &z[0][0]);
}

// The step's gradients. Input: the given ones (pp_adamw_given_grad). Synthetic: from the step's
// normals z (lanes_normals), the rounding to P per lane. Exact: values of P.
static void lanes_grads(const pp_adamw_problem *pr, pp_format_id P, int t, int64_t i0, const double *sig,
                        const double *z, double *g)
{
    if (pr->kind == PP_ADAMW_GRAD_INPUT) {
        for (int l = 0; l < W; l++)
            g[l] = pp_adamw_given_grad(pr, P, t, i0 + l, sig[l]);
        return;
    }
    for (int l = 0; l < W; l++)
        g[l] = pp_adamw_synth_grad_z(pr, P, sig[l], z[l]);
}

// The certification of one lane after step t, as certified() in adamw_ref_dd.c.
static int lane_certified(pp_adamw_dd_elem_ *out, double max_rel, int t, int what, double x, double *scale, double e)
{
    if (x > *scale)
        *scale = x;
    if (e <= max_rel * *scale)
        return 1;
    out->fail_step = t, out->fail_what = what, out->fail_bound = e, out->fail_scale = *scale;
    return 0;
}

static double lane_deliver(dd x, double e, double *bound)
{
    dd r = two_sum(x.h, x.l);
    *bound = r.l != 0.0 ? e + 0.5 * pp_ulp(PP_FMT_FP64, r.h) : e;
    return r.h;
}

// target_clones (GCC 12 will not inline the default-target step into a function with its own
// target attribute); the clones are called by name below.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__gnu_linux__) && \
    !defined(__SANITIZE_ADDRESS__)
#define DD_LANES_CLONES 1
__attribute__((flatten, target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
void pp_adamw_ref_dd_lanes_(const pp_adamw_problem *pr, pp_format_id P, const pp_adamw_dd_scal_ *sc, int64_t i0,
                            const double *theta0, double max_rel, double *th64, pp_adamw_dd_elem_ *out, int *ok)
{
    const pp_adamw_hyper *hy = &pr->hyper;
    int T = pr->steps, decay = hy->weight_decay != 0.0;
    double b1 = hy->beta1, b2 = hy->beta2, eps = hy->eps;
    dd c1 = two_sum(1.0, -b1), c2 = two_sum(1.0, -b2);  // exact
    const dd_consts K = {b1, b2, eps, mg(c1), mg(c2), c1, c2};
    double thh[W], thl[W], mh[W], ml[W], vh[W], vl[W], eth[W], em[W], ev[W], sth[W], sm[W], sv[W];
    double sig[W], g[W], th_rn[W];
    int big[W], dfail[W], alive = W;
    for (int l = 0; l < W; l++) {
        sig[l] = pr->kind == PP_ADAMW_GRAD_SYNTHETIC ? pp_adamw_synth_signal(pr, i0 + l) : 0.0;
        thh[l] = theta0[l], thl[l] = 0.0, mh[l] = ml[l] = vh[l] = vl[l] = 0.0;
        eth[l] = em[l] = ev[l] = 0.0;
        sth[l] = fabs(theta0[l]), sm[l] = sv[l] = 0.0;
        ok[l] = 1;
        out[l] = (pp_adamw_dd_elem_){0};
    }
    double z[GB][W];
    for (int t = 1; t <= T && alive > 0; t++) {
        const pp_adamw_dd_scal_ *S = &sc[t];
        if (pr->kind == PP_ADAMW_GRAD_SYNTHETIC && (t - 1) % GB == 0)
            lanes_normals(pr, t, T - t + 1 < GB ? T - t + 1 : GB, i0, z);
        lanes_grads(pr, P, t, i0, sig, z[(t - 1) % GB], g);
        for (int l = 0; l < W; l++) {
            dd th = {thh[l], thl[l]}, m = {mh[l], ml[l]}, v = {vh[l], vl[l]}, den;
            big[l] = !((fabs(th.h) < BIG) & (fabs(m.h) < BIG) & (v.h < BIG) & (fabs(g[l]) < BIG));
            cw_local c;
            c.quad = 0, c.decay = decay, c.h = 0.0, c.lg = 0.0;
            c.b1 = b1, c.b2 = b2, c.c1d = K.c1d, c.c2d = K.c2d;
            dd_step(&K, S, (dd){g[l], 0.0}, &th, &m, &v, &den, &c);
            cw_out o;
            cw_prop(&c, eth[l], em[l], ev[l], &o);
            dfail[l] = !o.ok;
            thh[l] = th.h, thl[l] = th.l, mh[l] = m.h, ml[l] = m.l, vh[l] = v.h, vl[l] = v.l;
            eth[l] = o.eth, em[l] = o.em, ev[l] = o.ev;
            th_rn[l] = th.h + th.l;  // RN of the pair's value
        }
        for (int l = 0; l < W; l++) {  // the scalar path's checks, in its order
            if (!ok[l])
                continue;
            pp_adamw_dd_elem_ *o = &out[l];
            if (big[l]) {
                o->fail_step = t, o->fail_bound = INFINITY, o->fail_scale = sth[l];  // range: hand over
                ok[l] = 0, alive--;
                continue;
            }
            if (dfail[l]) {
                o->fail_step = t, o->fail_what = 0, o->fail_bound = INFINITY, o->fail_scale = sth[l];
                ok[l] = 0, alive--;
                continue;
            }
            if (th64)
                th64[(int64_t)l * (T + 1) + t] = th_rn[l];
            if (!lane_certified(o, max_rel, t, 0, fabs(thh[l]) * MAGF, &sth[l], eth[l]) ||
                !lane_certified(o, max_rel, t, 1, fabs(mh[l]) * MAGF, &sm[l], em[l]) ||
                !lane_certified(o, max_rel, t, 2, fabs(vh[l]) * MAGF, &sv[l], ev[l]))
                ok[l] = 0, alive--;
        }
    }
    for (int l = 0; l < W; l++) {
        if (!ok[l])
            continue;
        dd x[3] = {{thh[l], thl[l]}, {mh[l], ml[l]}, {vh[l], vl[l]}};
        double e[3] = {eth[l], em[l], ev[l]};
        pp_adamw_dd_elem_ *o = &out[l];
        for (int k = 0; k < 3; k++)
            o->pair[k][0] = x[k].h, o->pair[k][1] = x[k].l, o->pair_bound[k] = e[k];
        o->theta = lane_deliver(x[0], e[0], &o->bound[0]);
        o->m = lane_deliver(x[1], e[1], &o->bound[1]);
        o->v = lane_deliver(x[2], e[2], &o->bound[2]);
    }
}

// The clones by name, so a caller can run a level other than the one the CPU dispatch picks
// (tests run every level on an AVX-512 machine). GCC names a target_clones clone
// "<function>.<target with '-' as '_'>" (GCC 12; another naming fails the link, not silently).
#ifdef DD_LANES_CLONES
#define DD_LANES_CLONE(name, sym)                                                                          \
    void name(const pp_adamw_problem *pr, pp_format_id P, const pp_adamw_dd_scal_ *sc, int64_t i0,        \
              const double *theta0, double max_rel, double *th64, pp_adamw_dd_elem_ *out, int *ok) __asm__(sym);
DD_LANES_CLONE(dd_lanes_v4, "pp_adamw_ref_dd_lanes_.arch_x86_64_v4")
DD_LANES_CLONE(dd_lanes_v3, "pp_adamw_ref_dd_lanes_.arch_x86_64_v3")
DD_LANES_CLONE(dd_lanes_base, "pp_adamw_ref_dd_lanes_.default")
#endif

void pp_adamw_ref_dd_lanes_isa_(pp_isa isa, const pp_adamw_problem *pr, pp_format_id P, const pp_adamw_dd_scal_ *sc,
                                int64_t i0, const double *theta0, double max_rel, double *th64,
                                pp_adamw_dd_elem_ *out, int *ok)
{
#ifdef DD_LANES_CLONES
    isa = isa == PP_ISA_AUTO ? PP_ISA_AUTO : pp_isa_resolve(isa);
    if (isa == PP_ISA_AVX512)
        dd_lanes_v4(pr, P, sc, i0, theta0, max_rel, th64, out, ok);
    else if (isa == PP_ISA_AVX2)
        dd_lanes_v3(pr, P, sc, i0, theta0, max_rel, th64, out, ok);
    else if (isa == PP_ISA_BASELINE)
        dd_lanes_base(pr, P, sc, i0, theta0, max_rel, th64, out, ok);
    else
#endif
        pp_adamw_ref_dd_lanes_(pr, P, sc, i0, theta0, max_rel, th64, out, ok);
    (void)isa;
}
