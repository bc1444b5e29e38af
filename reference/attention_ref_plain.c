// attention_ref_plain.c — the attention reference's mpfr-plain path: every operation in MPFR at P
// bits (default 128), round to nearest, in the order written; each step's error named, bounds as
// in PROOFS.md#attention "mpfr-plain". Slow and obviously right; also the fast path's fallback.
#include <stdlib.h>
#include <string.h>

#include "attention_ref_plain.h"
#include "interrupt.h"

// ---------------------------------------------------------------------------------------------
// Workspace

typedef struct plain_ws {
    int64_t n, nn;     // s_kv (≥ 1), s_kv·d when backward
    mpfr_t *S, *E, *DP, *A, *DK, *DV;  // [s_kv] scores, probabilities, dP; [d] row acc; [s_kv·d]
    mpfr_t t, x, r, D, X, sum;
    double *eS, *edp, *kmax, *vmax, *qmax, *omax;
    double *colP, *colDP, *colCut, *colDS, *colEdS;
    unsigned char *cut;
} plain_ws;

static mpfr_t *mp_array(int64_t n, mpfr_prec_t P)
{
    mpfr_t *a = malloc(sizeof(mpfr_t) * (size_t)(n > 0 ? n : 1));
    if (a)
        for (int64_t i = 0; i < n; i++)
            mpfr_init2(a[i], P);
    return a;
}

static void mp_array_free(mpfr_t *a, int64_t n)
{
    if (!a)
        return;
    for (int64_t i = 0; i < n; i++)
        mpfr_clear(a[i]);
    free(a);
}

static void plain_ws_free(plain_ws *w, int64_t d)
{
    mp_array_free(w->S, w->n);
    mp_array_free(w->E, w->n);
    mp_array_free(w->DP, w->n);
    mp_array_free(w->A, d);
    mp_array_free(w->DK, w->nn);
    mp_array_free(w->DV, w->nn);
    mpfr_clears(w->t, w->x, w->r, w->D, w->X, w->sum, (mpfr_ptr)0);
    double *arr[] = {w->eS, w->edp, w->kmax, w->vmax, w->qmax, w->omax, w->colP, w->colDP,
                     w->colCut, w->colDS, w->colEdS};
    for (size_t i = 0; i < sizeof arr / sizeof *arr; i++)
        free(arr[i]);
    free(w->cut);
}

static int plain_ws_init(plain_ws *w, int64_t skv, int64_t d, int backward, mpfr_prec_t P)
{
    memset(w, 0, sizeof *w);
    mpfr_inits2(P, w->t, w->x, w->r, w->D, w->X, w->sum, (mpfr_ptr)0);
    w->n = skv > 0 ? skv : 1;
    w->nn = backward ? skv * d : 0;
    w->S = mp_array(w->n, P);
    w->E = mp_array(w->n, P);
    w->DP = mp_array(w->n, P);
    w->A = mp_array(d, P);
    if (!w->S || !w->E || !w->DP || !w->A)
        return -1;
    if (backward) {
        w->DK = mp_array(w->nn, P);
        w->DV = mp_array(w->nn, P);
        if (!w->DK || !w->DV)
            return -1;
        for (int64_t i = 0; i < w->nn; i++) {
            mpfr_set_zero(w->DK[i], 1);
            mpfr_set_zero(w->DV[i], 1);
        }
    }
    double **rowarr[] = {&w->eS, &w->edp, &w->colP, &w->colDP, &w->colCut, &w->colDS, &w->colEdS};
    for (size_t i = 0; i < sizeof rowarr / sizeof *rowarr; i++)
        if (!(*rowarr[i] = calloc((size_t)w->n, sizeof(double))))
            return -1;
    double **darr[] = {&w->kmax, &w->vmax, &w->qmax, &w->omax};
    for (size_t i = 0; i < 4; i++)
        if (!(*darr[i] = calloc((size_t)d, sizeof(double))))
            return -1;
    return (w->cut = malloc((size_t)w->n)) ? 0 : -1;
}

static void absmax_row(double *m, const double *x, int64_t d)
{
    for (int64_t l = 0; l < d; l++) {
        double a = fabs(x[l]);
        m[l] = a > m[l] || a != a ? a : m[l];  // NaN sticks: its bounds become NaN
    }
}

// |x| as a binary64 upper bound.
static double up(const mpfr_t x)
{
    return fabs(mpfr_get_d(x, MPFR_RNDA));
}

// The delivered value: RN to binary64, an exact zero as +0.
static double val(const mpfr_t x)
{
    double v = mpfr_get_d(x, MPFR_RNDN);
    return v == 0.0 ? 0.0 : v;
}

// s = Σ_l x_l·y_l, the products exact (≤ 48 bits ≤ P), each addition ±2^−P|s_l|: the recursive
// sum is within 1.01·d·2^−P·T of the exact dot product, T = Σ|x·y| (returned).
static double plain_dot(mpfr_t s, mpfr_t t, const double *x, const double *y, int64_t d)
{
    double T = 0.0;
    mpfr_set_zero(s, 1);
    for (int64_t l = 0; l < d; l++) {
        mpfr_set_d(t, x[l], MPFR_RNDN);      // exact
        mpfr_mul_d(t, t, y[l], MPFR_RNDN);   // exact
        mpfr_add(s, s, t, MPFR_RNDN);        // ±2^−P|s_l|
        T += fabs(x[l] * y[l]);
    }
    return T;
}

// ---------------------------------------------------------------------------------------------
// One row (the same steps as the fast path, every operation in MPFR)

static void plain_row(pp_attn_job_ *J, plain_ws *w, const pp_attn_span_ *sp, int64_t hh, int64_t i,
                      pp_attn_task_res_ *R)
{
    const int64_t d = J->d;
    const double up_ = ldexp(1.0, -J->prec);  // u_P = 2^−P
    const int64_t nv = pp_attn_visible_(J, i);
    const int64_t qo = pp_attn_qi_(J, sp->bi, i, hh);
    const int64_t lo_idx = (sp->bi * J->h + hh) * J->s_q + i;
    const double *qi = J->q + qo;
    if (nv == 0) {  // sees no key: the convention, exactly
        pp_attn_row_empty_(J, qo, lo_idx, R);
        return;
    }
    // Scores S = RN(σ̃·t): |S̃ − S| ≤ σ·T·(u + u + 1.01(d − 1)u) ≤ 1.01(d + 2)·u·σ·T.
    int have_M = 0;
    for (int64_t j = 0; j < nv; j++) {
        double T = plain_dot(w->t, w->x, qi, J->k + pp_attn_ki_(J, sp->bi, j, sp->hk), d);
        mpfr_mul(w->S[j], w->t, J->sig_p, MPFR_RNDN);  // ±u|S̃|
        w->eS[j] = J->sig_b * T * 1.01 * ((double)d + 2.0) * up_;
        if (!have_M || mpfr_greater_p(w->S[j], w->X) || mpfr_nan_p(w->S[j])) {
            mpfr_set(w->X, w->S[j], MPFR_RNDN);  // M, exact
            have_M = 1;
        }
    }
    // E = RN(exp(RN(S − M))): relative error ≤ 1.0001(εS + 1.01u|x|) + 1.01u; x < −2^20 is cut
    // (E < 2^−1074 as a binary64 bound). l = Σ E, recursive: ±1.01·n·u·Σ E.
    double dEmax = 0.0;
    int64_t ncut = 0;
    mpfr_set_zero(w->sum, 1);
    for (int64_t j = 0; j < nv; j++) {
        mpfr_sub(w->x, w->S[j], w->X, MPFR_RNDN);  // ±u|x|
        if (mpfr_cmp_si(w->x, -(1L << 20)) < 0) {  // false for NaN
            w->cut[j] = 1;
            mpfr_set_zero(w->E[j], 1);
            ncut++;
            continue;
        }
        w->cut[j] = 0;
        mpfr_exp(w->E[j], w->x, MPFR_RNDN);        // ±u relative
        double ax = up(w->x);
        double dE = w->eS[j] <= 0x1p-40 ? 1.0001 * (w->eS[j] + 1.01 * up_ * ax) + 1.01 * up_ : 1e300;
        dEmax = dE > dEmax || dE != dE ? dE : dEmax;
        mpfr_add(w->sum, w->sum, w->E[j], MPFR_RNDN);  // ±u|l_j|
    }
    double Ls = up(w->sum);
    double n1 = (double)nv + 1.0;
    double el = ((dEmax * (1.0 + 0x1p-38) + 1.01 * n1 * up_) * Ls + (double)ncut * 0x1p-1074) *
                ATTN_INFL;
    double lmin = mpfr_get_d(w->sum, MPFR_RNDZ) - el;  // ≤ l, ≥ 0.99 (the max term is exp(0) = 1)
    double dl = el / lmin;
    mpfr_ui_div(w->r, 1, w->sum, MPFR_RNDN);  // r̃ = RN(1/l̃): ±u
    mpfr_log(w->x, w->sum, MPFR_RNDN);        // ±u|log l̃|
    double logl = up(w->x);
    mpfr_add(w->x, w->x, w->X, MPFR_RNDN);    // ±u|lse|
    double lse_v = val(w->x);
    pp_attn_put_(J->lse, J->elem.lse, lo_idx, lse_v,
                 dl + 2.02 * up_ * (logl + fabs(lse_v)), &R->max[1]);
    double dr = 1.01 * up_ + dl;
    double dP = ((dEmax + dr) * (1.0 + 0x1p-38) + 1.01 * up_) * ATTN_INFL;
    // P = RN(E·r̃); out = Σ_j RN(P_j·v_j), recursive: ±1.01(n + 1)u·Σ P|v| + δP·Σ P|v|.
    double Psum = 0.0;
    for (int64_t l = 0; l < d; l++)
        mpfr_set_zero(w->A[l], 1);
    for (int64_t j = 0; j < nv; j++) {
        if (w->cut[j])
            continue;
        mpfr_mul(w->E[j], w->E[j], w->r, MPFR_RNDN);  // P_j: ±u
        Psum += up(w->E[j]);
        const double *vj = J->v + pp_attn_ki_(J, sp->bi, j, sp->hk);
        for (int64_t l = 0; l < d; l++) {
            mpfr_mul_d(w->t, w->E[j], vj[l], MPFR_RNDN);  // ±u
            mpfr_add(w->A[l], w->A[l], w->t, MPFR_RNDN);  // ±u
        }
    }
    Psum *= 1.0 + 0x1p-40;
    double ca = 1.01 * n1 * up_;
    for (int64_t l = 0; l < d; l++) {
        double pre = ((dP * (1.0 + 0x1p-49) + ca) * Psum + (double)ncut * 0x1p-1073) * w->vmax[l];
        pp_attn_put_(J->out, J->elem.out, qo + l, val(w->A[l]), pre, &R->max[0]);
    }
    if (!J->backward)
        return;

    // dP_j = dout·v_j (±1.01·d·u·V_j); D = Σ RN(P_j·dP_j) (±δP·Z + Σ P·εdP + 1.01(n + 1)u·Z).
    const double *oi = J->dout + qo;
    double Z = 0.0, Y = 0.0, cutD = 0.0;
    mpfr_set_zero(w->D, 1);
    for (int64_t j = 0; j < nv; j++) {
        double V = plain_dot(w->DP[j], w->x, oi, J->v + pp_attn_ki_(J, sp->bi, j, sp->hk), d);
        w->edp[j] = V * 1.01 * (double)d * up_;
        double adp = up(w->DP[j]);
        if (w->cut[j]) {
            cutD += 0x1p-1073 * (adp + w->edp[j]);
            continue;
        }
        mpfr_mul(w->t, w->E[j], w->DP[j], MPFR_RNDN);  // ±u
        mpfr_add(w->D, w->D, w->t, MPFR_RNDN);        // ±u
        double p = up(w->E[j]);
        Z += p * adp;
        Y += p * w->edp[j];
    }
    double eD = ((dP * Z + Y * (1.0 + dP) + ca * Z) * (1.0 + 0x1p-40) + cutD) * ATTN_INFL;
    double aD = up(w->D);
    // dS = RN(P·RN(dP − D)); dq = RN(σ̃·Σ RN(dS·k)), dk += RN(dS·q), dv += RN(P·dout).
    double rowEdS = 0.0, rowDS = 0.0;
    for (int64_t l = 0; l < d; l++)
        mpfr_set_zero(w->A[l], 1);
    for (int64_t j = 0; j < nv; j++) {
        int64_t ko = pp_attn_ki_(J, sp->bi, j, sp->hk);
        double adp = up(w->DP[j]);
        if (w->cut[j]) {
            double c = 0x1p-1073 * (adp + w->edp[j] + aD + eD);
            rowEdS += c;
            w->colEdS[j] += c;
            w->colCut[j] += 1.0;
            continue;
        }
        mpfr_sub(w->x, w->DP[j], w->D, MPFR_RNDN);  // Δ: ±u|Δ| ≤ u(|dP| + |D|)
        double eX = w->edp[j] + eD + 1.01 * up_ * (adp + aD);
        double aX = up(w->x);
        double p = up(w->E[j]);
        mpfr_mul(w->x, w->x, w->E[j], MPFR_RNDN);   // dS: ±u
        double edS = (dP * p * aX + p * (1.0 + dP) * eX + 1.01 * up_ * p * aX) * (1.0 + 0x1p-40);
        double adS = up(w->x);
        rowEdS += edS;
        rowDS += adS;
        w->colEdS[j] += edS;
        w->colDS[j] += adS;
        w->colP[j] += p;
        w->colDP[j] += dP * p;
        const double *kj = J->k + ko;
        for (int64_t l = 0; l < d; l++) {
            mpfr_mul_d(w->t, w->x, kj[l], MPFR_RNDN);                     // ±u
            mpfr_add(w->A[l], w->A[l], w->t, MPFR_RNDN);                  // ±u
            mpfr_mul_d(w->t, w->x, qi[l], MPFR_RNDN);                     // ±u
            mpfr_add(w->DK[j * d + l], w->DK[j * d + l], w->t, MPFR_RNDN);  // ±u
            mpfr_mul_d(w->t, w->E[j], oi[l], MPFR_RNDN);                  // ±u
            mpfr_add(w->DV[j * d + l], w->DV[j * d + l], w->t, MPFR_RNDN);  // ±u
        }
    }
    rowEdS *= 1.0 + 0x1p-40;
    rowDS *= 1.0 + 0x1p-40;
    for (int64_t l = 0; l < d; l++) {
        double aa = up(w->A[l]);
        mpfr_mul(w->t, w->A[l], J->sig_p, MPFR_RNDN);  // ±u, and σ̃ ±u
        double pre = J->sig_b * ((rowEdS + ca * rowDS) * w->kmax[l] + 2.02 * up_ * aa);
        pp_attn_put_(J->dq, J->elem.dq, qo + l, val(w->t), pre, &R->max[2]);
    }
}

static void plain_columns(pp_attn_job_ *J, plain_ws *w, const pp_attn_span_ *sp,
                          pp_attn_task_res_ *R)
{
    const int64_t d = J->d;
    const double up_ = ldexp(1.0, -J->prec);
    double ca = 1.01 * ((double)(J->g * J->s_q) + 1.0) * up_;
    for (int64_t j = 0; j < J->s_kv; j++) {
        int64_t ko = pp_attn_ki_(J, sp->bi, j, sp->hk);
        double cP = w->colP[j] * (1.0 + 0x1p-40), cDP = w->colDP[j] * (1.0 + 0x1p-40);
        double cDS = w->colDS[j] * (1.0 + 0x1p-40), cE = w->colEdS[j] * (1.0 + 0x1p-40);
        for (int64_t l = 0; l < d; l++) {
            int64_t x = j * d + l;
            double pre = (cDP * (1.0 + 0x1p-49) + ca * cP + w->colCut[j] * 0x1p-1073) * w->omax[l];
            pp_attn_put_(J->dv, J->elem.dv, ko + l, val(w->DV[x]), pre, &R->max[4]);
            double aa = up(w->DK[x]);
            mpfr_mul(w->t, w->DK[x], J->sig_p, MPFR_RNDN);
            pre = J->sig_b * ((cE + ca * cDS) * w->qmax[l] + 2.02 * up_ * aa);
            pp_attn_put_(J->dk, J->elem.dk, ko + l, val(w->t), pre, &R->max[3]);
        }
    }
}

int pp_attn_plain_task_(pp_attn_job_ *J, int64_t task, int worker)
{
    pp_attn_span_ sp = pp_attn_span_of_(J, task);
    pp_attn_task_res_ *R = &J->res[task];
    memset(R, 0, sizeof *R);
    plain_ws w;
    if (plain_ws_init(&w, J->s_kv, J->d, J->backward, J->prec)) {
        plain_ws_free(&w, J->d);
        return -1;
    }
    for (int64_t j = 0; j < J->s_kv; j++) {
        int64_t ko = pp_attn_ki_(J, sp.bi, j, sp.hk);
        absmax_row(w.kmax, J->k + ko, J->d);
        absmax_row(w.vmax, J->v + ko, J->d);
    }
    for (int64_t hh = sp.h0; hh < sp.h1; hh++)
        for (int64_t i = sp.i0; i < sp.i1; i++) {
            int64_t qo = pp_attn_qi_(J, sp.bi, i, hh);
            absmax_row(w.qmax, J->q + qo, J->d);
            if (J->backward)
                absmax_row(w.omax, J->dout + qo, J->d);
        }
    // a stop request (Ctrl-C) ends the task at the next row: the caller discards the job
    int stop = 0;
    for (int64_t hh = sp.h0; hh < sp.h1 && !stop; hh++)
        for (int64_t i = sp.i0; i < sp.i1 && !(stop = pp_interrupted()); i++) {
            plain_row(J, &w, &sp, hh, i, R);
            pp_attn_row_done_(J, worker, i);
        }
    if (J->backward && !stop)
        plain_columns(J, &w, &sp, R);
    plain_ws_free(&w, J->d);
    return 0;
}
