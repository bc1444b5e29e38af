// attention_ref_fast.c — the attention reference's fast path: exact products of binary32 values,
// anchored dots and accumulations, double-double scalars, MPFR once per score
// (exp) and per row (1/l, log). Each step names its error; the proof is PROOFS.md#attention.
#include <stdlib.h>
#include <string.h>

#include "attention_ref_eft.h"
#include "attention_ref_fast.h"
#include "attention_ref_lanes.h"
#include "format.h"
#include "interrupt.h"

// ---------------------------------------------------------------------------------------------
// Constants

// The fast exp's constants (PROOFS.md#attention, "exp"): 2^(j/256) for j < 256 as double-doubles
// from RN_256 (hi = RN(t), lo = RN(t − hi): ±2^−105 relative), and ln2/256 split into L1 and L2
// of 35 bits each (RZ at 35 bits, exact remainders) and L3 = RN(the rest).
void pp_attn_exp_init_(pp_attn_job_ *J)
{
    mpfr_t t, r;
    mpfr_inits2(256, t, r, (mpfr_ptr)0);
    for (int j = 0; j < 256; j++) {
        mpfr_set_si(t, j, MPFR_RNDN);
        mpfr_div_2ui(t, t, 8, MPFR_RNDN);  // exact
        mpfr_exp2(t, t, MPFR_RNDN);          // ±2^−256 relative
        J->exp_tab[j][0] = mpfr_get_d(t, MPFR_RNDN);
        mpfr_sub_d(t, t, J->exp_tab[j][0], MPFR_RNDN);  // exact
        J->exp_tab[j][1] = mpfr_get_d(t, MPFR_RNDN);
    }
    mpfr_const_log2(t, MPFR_RNDN);
    mpfr_div_2ui(t, t, 8, MPFR_RNDN);
    for (int i = 0; i < 2; i++) {
        mpfr_set_prec(r, 35);
        mpfr_set(r, t, MPFR_RNDZ);          // the top 35 bits
        J->exp_L[i] = mpfr_get_d(r, MPFR_RNDN);  // exact
        mpfr_sub_d(t, t, J->exp_L[i], MPFR_RNDN);  // exact at 256 bits
    }
    J->exp_L[2] = mpfr_get_d(t, MPFR_RNDN);
    mpfr_set_prec(r, 256);
    mpfr_clears(t, r, (mpfr_ptr)0);
}

// ---------------------------------------------------------------------------------------------
// exp (PROOFS.md#attention, "exp")

// The scalar step (pp_attn_exp_dd_, attention_ref_eft.h) with the job's constants.
void pp_attn_fast_exp_(const pp_attn_job_ *J, double Sh, double M, double Sl, double *eh, double *el)
{
    pp_attn_exp_dd_((const double(*)[2])J->exp_tab, J->exp_L, Sh, M, Sl, eh, el);
}

// ---------------------------------------------------------------------------------------------
// Dots and accumulations (PROOFS.md#attention, "Anchored dot" and "Anchored accumulation")

// Four anchored dots of x with y[0..3] (binary32 values, so every product is exact), from the
// anchor A = 1.5·p (PROOFS.md#attention, "Anchored dot"): h = H − A (exact) and c = lo after
// pp_attn_dot_elem_ over l in order; h + c is within d²·p·u²(1 + 2^−19) of the exact dot product.
static void dotx4(const double *x, const double *const y[4], int64_t d, double A, double h[4],
                  double c[4])
{
    double H[4] = {A, A, A, A}, lo[4] = {0, 0, 0, 0};
    for (int64_t l = 0; l < d; l++)
        for (int m = 0; m < 4; m++)  // four independent chains
            pp_attn_dot_elem_(&H[m], &lo[m], x[l], y[m][l]);
    for (int m = 0; m < 4; m++) {
        h[m] = H[m] - A;  // exact
        c[m] = lo[m];
    }
}

// The anchored accumulation (PROOFS.md#attention, "Anchored accumulation"): each element's H
// holds A = 1.5·scale·ypow[l] plus the sum so far, lo the exact errors of H's roundings and the
// low parts' terms. scale = acc_scale(X) for X ≥ the sum of the multipliers' magnitudes, ypow[l]
// = acc_ypow(max |y|) for the column: |H − A| then stays below A/6, in the binade of A.
static double acc_scale(double X)
{
    if (X == 0.0)
        return 0.0;
    int e;
    frexp(X * 1.001, &e);  // X·1.001 < 2^e
    return ldexp(1.0, e + 2);
}

static double acc_ypow(double m)
{
    if (!(m > 0x1p-149))
        return 0x1p-149;
    int e;
    double f = frexp(m, &e);  // m = f·2^e, f in [½, 1)
    return f == 0.5 ? m : ldexp(1.0, e);
}

// The bound's two coefficients after N − 1 roundings of lo (PROOFS: "Anchored accumulation"):
// (N + 1)·2^−80.99·W from the low parts, N²·2^−106·2^k from lo's roundings, each times 1 + 2^−19.
static double acc_coef(int64_t N)
{
    return ((double)N + 1.0) * 0x1.01c8p-81 * (1.0 + 0x1p-19);  // 2^−80.99, rounded up
}

static double acc_anchor_coef(int64_t N)
{
    return (double)N * (double)N * 0x1p-106 * (1.0 + 0x1p-19);
}

// Moves a row of d elements from its anchors 1.5·p0·ypow[l] to 1.5·p1·ypow[l] (p1 > p0 > 0).
static void acc_rebase(double *H, double *lo, int64_t d, double p0, double p1, const double *ypow)
{
    for (int64_t l = 0; l < d; l++)
        pp_attn_acc_rebase_elem_(H + l, lo + l, 1.5 * p0 * ypow[l], 1.5 * p1 * ypow[l]);
}

// Sets a row of d elements to their anchors 1.5·p·ypow[l] (the empty sum), lo to 0.
static void acc_start(double *H, double *lo, int64_t d, double p, const double *ypow)
{
    for (int64_t l = 0; l < d; l++) {
        H[l] = 1.5 * p * ypow[l];
        lo[l] = 0.0;
    }
}

// Anchors above this scale are beyond the proof's range (a precondition: the task falls back).
#define ACC_SCALE_MAX 0x1p800

// ---------------------------------------------------------------------------------------------
// The task

// Rows computed together (fast_rows): a block of keys, or one key's k and v row, is then read
// from the cache once per group rather than once per row from further out (a kv head's k and v
// are 8 MiB at s = 4096, d = 128); no row's own chain changes.
#define FAST_GROUP 32

// The accumulation a task runs: up to PP_ATTN_ACC_TERMS terms into one accumulator
// (pp_attn_acc_multi_, or a vector path's): the anchored accumulation, each element's terms in order.
typedef void (*fast_acc_fn)(double *restrict h, double *restrict lo, int64_t d, int64_t n,
                            const double *const *y, const double *xh, const double *xl);

// Keys per block of the out and dq accumulations: a row takes a block's terms in one call (its
// accumulator in registers), the block's k or v rows stay in L1 for the group's rows.
#define FAST_ACC_KEYS 32

typedef struct fast_ws {
    double *Sh, *Sl, *eS, *Ph, *Pl, *dph, *dpl, *edp;  // [FAST_GROUP][s_kv]: the group rows' scores
    unsigned char *cut;                                // [FAST_GROUP][s_kv]
    double *ah, *al;                          // [FAST_GROUP][d]: the row accumulators (out, then dq)
    double *kmax, *vmax, *qmax, *omax;        // [d]: column maxima of |k|, |v|, |q|, |dout|
    double *kpow, *vpow, *qpow, *opow;        // [d]: their acc_ypow, the anchors' column factors
    double *dkh, *dkl, *dvh, *dvl;            // [s_kv·d]: the task's dk, dv accumulators
    // [s_kv]: each key's dk and dv anchor scale (0 until its first term) and how many times it
    // moved (acc_rebase)
    double *dk_p, *dv_p, *dk_m, *dv_m;
    double *colP, *colDP, *colCut, *colDS, *colEdS;  // [s_kv]: per-key bound sums
    // The vector path (NULL: the portable loops) and the task's k and v in transposed blocks of
    // PP_ATTN_KEY_BLOCK keys (its dots run one key per lane), the last block padded with zeros.
    const pp_attn_lanes_ *lanes;
    double *kt, *vt;
    // The rows the accumulations multiply, packed (exact copies): the kv head's k and v rows
    // ([s_kv][d]), and with backward the task's q and dout rows ([rows][d], rows (head, i) in the
    // task's order). In the inputs a head's rows lie h·d apart: at h·d·8 bytes a multiple of 4 KiB,
    // 32 of them would share a handful of the L1 cache's sets.
    double *kp, *vp, *qp, *op;
    // The backward's row block: dk_j and dv_j take each row's share in row order, as before, but a
    // block of rows at a time (fast_flush), so that the 4·s_kv·d accumulators pass through the
    // cache once per block rather than once per row. Per row r: its keys nv, offset qo, dP bound;
    // per (r, j) at r·s_kv + j: the key's state, dŜ (sh, sl), its bound term e, P̂ (ph, pl).
    int64_t blk_cap, blk_n;
    int64_t *blk_nv, *blk_pr;  // per block row: its keys, its packed row's offset in qp, op
    double *blk_dP, *blk_sh, *blk_sl, *blk_e, *blk_ph, *blk_pl;
    unsigned char *blk_state;
    mpfr_t x, e;
} fast_ws;

// A key's state in a block row: PP_ATTN_BLK_CUT, _DROP or _ACC (attention_ref_eft.h).
// The block's size: up to 32 rows (one row group: fast_rows), its per-(row, key) arrays up to
// about 2^21 entries. (128 rows measured slower at s = 4096: the larger arrays cost more than the
// accumulators' passes they save.)
#define FAST_BLOCK_ROWS 32
#define FAST_BLOCK_ENTRIES ((int64_t)1 << 21)
_Static_assert(FAST_ACC_KEYS <= PP_ATTN_ACC_TERMS, "a key block's terms fit one pp_attn_acc_multi_ call");

static void fast_ws_free(fast_ws *w)
{
    double **arr[] = {&w->Sh, &w->Sl, &w->eS, &w->Ph, &w->Pl, &w->dph, &w->dpl, &w->edp,
                      &w->ah, &w->al, &w->kmax, &w->vmax, &w->qmax, &w->omax, &w->kpow,
                      &w->vpow, &w->qpow, &w->opow, &w->dk_p, &w->dv_p, &w->dk_m, &w->dv_m, &w->dkh,
                      &w->dkl, &w->dvh, &w->dvl, &w->colP, &w->colDP, &w->colCut, &w->colDS,
                      &w->colEdS, &w->kt, &w->vt, &w->kp, &w->vp, &w->qp, &w->op, &w->blk_dP, &w->blk_sh, &w->blk_sl,
                      &w->blk_e, &w->blk_ph, &w->blk_pl};
    for (size_t i = 0; i < sizeof arr / sizeof *arr; i++)
        free(*arr[i]);
    free(w->cut);
    free(w->blk_nv);
    free(w->blk_pr);
    free(w->blk_state);
    mpfr_clears(w->x, w->e, (mpfr_ptr)0);
}

static int fast_ws_init(fast_ws *w, int64_t skv, int64_t d, int backward, int64_t rows,
                        const pp_attn_lanes_ *lanes)
{
    memset(w, 0, sizeof *w);
    w->lanes = lanes;
    mpfr_inits2(128, w->x, w->e, (mpfr_ptr)0);
    size_t n = (size_t)(skv > 0 ? skv : 1), nd = (size_t)d, nn = n * nd;
    double **rowarr[] = {&w->Sh, &w->Sl, &w->eS, &w->Ph, &w->Pl, &w->dph, &w->dpl, &w->edp};
    for (size_t i = 0; i < sizeof rowarr / sizeof *rowarr; i++)
        if (!(*rowarr[i] = malloc(FAST_GROUP * n * sizeof(double))))
            return -1;
    double **darr[] = {&w->ah, &w->al};
    for (size_t i = 0; i < sizeof darr / sizeof *darr; i++)
        if (!(*darr[i] = calloc(FAST_GROUP * nd, sizeof(double))))
            return -1;
    double **marr[] = {&w->kmax, &w->vmax, &w->qmax, &w->omax, &w->kpow, &w->vpow, &w->qpow, &w->opow};
    for (size_t i = 0; i < sizeof marr / sizeof *marr; i++)
        if (!(*marr[i] = calloc(nd, sizeof(double))))
            return -1;
    if (!(w->cut = malloc(FAST_GROUP * n)) || !(w->kp = malloc(nn * sizeof(double))) ||
        !(w->vp = malloc(nn * sizeof(double))))
        return -1;
    if (backward) {
        size_t nr = (size_t)(rows > 0 ? rows : 1) * nd;
        if (!(w->qp = malloc(nr * sizeof(double))) || !(w->op = malloc(nr * sizeof(double))))
            return -1;
        double **big[] = {&w->dkh, &w->dkl, &w->dvh, &w->dvl};
        for (size_t i = 0; i < 4; i++)
            if (!(*big[i] = calloc(nn, sizeof(double))))
                return -1;
        double **col[] = {&w->colP, &w->colDP, &w->colCut, &w->colDS, &w->colEdS,
                          &w->dk_p, &w->dv_p, &w->dk_m, &w->dv_m};
        for (size_t i = 0; i < sizeof col / sizeof *col; i++)
            if (!(*col[i] = calloc(n, sizeof(double))))
                return -1;
        int64_t cap = FAST_BLOCK_ENTRIES / (int64_t)n;
        w->blk_cap = cap < 1 ? 1 : cap > FAST_BLOCK_ROWS ? FAST_BLOCK_ROWS : cap;
        size_t nb = (size_t)w->blk_cap * n, rb = (size_t)w->blk_cap;
        double **blk[] = {&w->blk_sh, &w->blk_sl, &w->blk_e, &w->blk_ph, &w->blk_pl};
        for (size_t i = 0; i < 5; i++)
            if (!(*blk[i] = malloc(nb * sizeof(double))))
                return -1;
        if (!(w->blk_state = malloc(nb)) || !(w->blk_dP = malloc(rb * sizeof(double))) ||
            !(w->blk_nv = malloc(rb * sizeof(int64_t))) || !(w->blk_pr = malloc(rb * sizeof(int64_t))))
            return -1;
    }
    if (lanes) {
        size_t nt = (n + PP_ATTN_KEY_BLOCK - 1) / PP_ATTN_KEY_BLOCK * PP_ATTN_KEY_BLOCK * nd;
        if (!(w->kt = calloc(nt, sizeof(double))) || (backward && !(w->vt = calloc(nt, sizeof(double)))))
            return -1;
    }
    return 0;
}

// The offset of row (hh, i) of the task in its packed q and dout rows.
static int64_t fast_packed_row(const pp_attn_span_ *sp, int64_t d, int64_t hh, int64_t i)
{
    return ((hh - sp->h0) * (sp->i1 - sp->i0) + (i - sp->i0)) * d;
}

// t = the kv head's keys (k or v) in transposed blocks: t[(j/8·d + l)·8 + j%8] = x_j[l].
static void fast_transpose(const pp_attn_job_ *J, const pp_attn_span_ *sp, const double *x,
                           double *t)
{
    for (int64_t j = 0; j < J->s_kv; j++) {
        const double *xj = x + pp_attn_ki_(J, sp->bi, j, sp->hk);
        double *tj = t + (j / PP_ATTN_KEY_BLOCK) * PP_ATTN_KEY_BLOCK * J->d + j % PP_ATTN_KEY_BLOCK;
        for (int64_t l = 0; l < J->d; l++)
            tj[l * PP_ATTN_KEY_BLOCK] = xj[l];
    }
}

// The two transposed blocks of keys j0 … j0 + 15 (j0 a multiple of 16) that a row seeing nv keys
// reads: the second is the first again when the row sees none of its keys (it may not exist).
static void fast_kblocks(const double *yt, int64_t j0, int64_t nv, int64_t d, const double *b[2])
{
    b[0] = yt + j0 / PP_ATTN_KEY_BLOCK * PP_ATTN_KEY_BLOCK * d;
    b[1] = j0 + PP_ATTN_KEY_BLOCK < nv ? b[0] + PP_ATTN_KEY_BLOCK * d : b[0];
}

// The anchored dots of x (anchor A) with keys j0 … min(j0 + 16, nv) − 1 of y (the task's packed
// k or v rows; yt the same transposed): h, c at [j − j0]. The vector path runs 16 keys in its
// lanes; the portable loops take four at a time (dotx4). Either way each key's chain is the same
// operations in the same order.
static void fast_dots16(const pp_attn_job_ *J, const fast_ws *w, const double *x, double A,
                        const double *y, const double *yt, int64_t j0, int64_t nv, double h[16],
                        double c[16])
{
    const int64_t d = J->d;
    if (w->lanes) {
        const double *b[2];
        fast_kblocks(yt, j0, nv, d, b);
        w->lanes->dot_keys16(x, A, b[0], b[1], d, h, c);
        return;
    }
    for (int64_t q0 = j0; q0 < j0 + 16 && q0 < nv; q0 += 4) {
        const double *yy[4];
        for (int m = 0; m < 4; m++) {
            int64_t j = q0 + m < nv ? q0 + m : nv - 1;
            yy[m] = y + j * d;
        }
        dotx4(x, yy, d, A, h + (q0 - j0), c + (q0 - j0));
    }
}

// m[l] = max(m[l], |x[l]|); returns nonzero when x has a non-finite value.
static int absmax_row(double *m, const double *x, int64_t d)
{
    int bad = 0;
    for (int64_t l = 0; l < d; l++) {
        double a = fabs(x[l]);
        bad |= !(a <= 1e300);
        m[l] = a > m[l] ? a : m[l];
    }
    return bad;
}

// One query row of a group (fast_rows): where it is, its scores' arrays, and what its phases
// hand on to the next.
typedef struct fast_row_st {
    int64_t hh, i, nv, qo, lo_idx, slot;  // slot: its row in the backward's block
    const double *qi, *oi;                // its q and dout rows
    double qp, op;                        // their dots' anchor scales (with k, with v)
    double *Sh, *Sl, *eS, *Ph, *Pl, *dph, *dpl, *edp, *ah, *al;  // its rows of the workspace
    unsigned char *cut;
    double M, dP, Dh, Dl, eD, aD;         // max score; P̂'s relative bound; D̂ and its bound
    int64_t ncut;                         // keys cut (P̂ = 0)
} fast_row_st;

// The anchored dots of row r of the group (and of row r + 1 with it, where the vector path runs
// and that row also sees a key of the block: one pass over the block for both) with keys j0 …
// j0 + 15 of k (dp = 0: x = q) or v (dp = 1: x = dout); row r + k's h, c at [16·k + m]. Returns 1
// when row r + 1 was done too. Each row's chains are the ones fast_dots16 gives it alone.
static int fast_dots_rows(const pp_attn_job_ *J, const fast_ws *w, const fast_row_st *st, int64_t nr,
                          int64_t r, int dp, int64_t j0, double h[32], double c[32])
{
    const fast_row_st *S = &st[r], *S1 = r + 1 < nr ? &st[r + 1] : NULL;
    const double *y = dp ? w->vp : w->kp, *yt = dp ? w->vt : w->kt;
    double A = 1.5 * (dp ? S->op : S->qp);
    if (w->lanes && S1 && j0 < S1->nv) {
        const double *b[2];
        fast_kblocks(yt, j0, S->nv > S1->nv ? S->nv : S1->nv, J->d, b);
        w->lanes->dot_rows2(dp ? S->oi : S->qi, A, dp ? S1->oi : S1->qi, 1.5 * (dp ? S1->op : S1->qp),
                            b[0], b[1], J->d, h, c);
        return 1;
    }
    fast_dots16(J, w, dp ? S->oi : S->qi, A, y, yt, j0, S->nv, h, c);
    return 0;
}

// Scores of the group's rows: t = q·k_j by the anchored dot (±d²·p·u²(1 + 2^−19)), S = σ·t as a
// double-double (PROOFS: "Scores"), and each row's max. Key blocks outer, rows inner: a block of
// keys is read once for the group; each row still takes its keys in increasing order. Returns 1
// when a precondition of the proof fails.
static int fast_scores(const pp_attn_job_ *J, const fast_ws *w, fast_row_st *st,
                       int64_t nr, int64_t jmax)
{
    const double dd = (double)J->d * (double)J->d + 1.0;
    for (int64_t r = 0; r < nr; r++)
        st[r].M = -INFINITY;
    for (int64_t j0 = 0; j0 < jmax; j0 += 16)
        for (int64_t r = 0; r < nr; r++) {
            if (j0 >= st[r].nv)
                continue;
            double hc[32], cc[32], T[32];
            int two = fast_dots_rows(J, w, st, nr, r, 0, j0, hc, cc);
            for (int k = 0; k <= two; k++) {
                fast_row_st *S = &st[r + k];
                int64_t m = S->nv - j0 < 16 ? S->nv - j0 : 16;
                // |Ŝ − S| ≤ σ_b·T·u², T = 12(|h| + |c|) (dd_mul, σ) + (d² + 1)·p (the dot)
                double Tp = dd * S->qp * (1.0 + 0x1p-19);
                for (int64_t q = 0; q < m; q++)
                    T[16 * k + q] = 12.0 * (fabs(hc[16 * k + q]) + fabs(cc[16 * k + q])) * (1.0 + 0x1p-40) + Tp;
                if ((w->lanes ? w->lanes->score_keys : pp_attn_score_keys_)(
                        m, hc + 16 * k, cc + 16 * k, T + 16 * k, J->sig_h, J->sig_l, J->sig_b,
                        ATTN_U2, S->Sh + j0, S->Sl + j0, S->eS + j0))
                    return 1;
                double M = S->M;
                for (int64_t j = j0; j < j0 + m; j++)
                    M = S->Sh[j] > M ? S->Sh[j] : M;
                S->M = M;
            }
            r += two;
        }
    return 0;
}

// One row's softmax: E_j, l, 1/l, lse (delivered) and P̂'s relative bound S->dP; P̂_j = Ê_j·r̂ is
// formed in fast_out. Per row: its own MPFR calls.
static void fast_softmax(pp_attn_job_ *J, fast_ws *w, fast_row_st *S, double *rh, double *rl,
                         pp_attn_task_res_ *R)
{
    const int64_t nv = S->nv;
    const double M = S->M;
    // E_j = exp(S_j − M) by pp_attn_fast_exp_ (±2^−81 relative + the score's error);
    // x < −500 is cut: E < e^−499.9 < 2^−721 (PROOFS: "Softmax").
    double lh = 0.0, ll = 0.0, dEmax = 0.0;
    int64_t ncut = 0;
    (w->lanes ? w->lanes->exp_row : pp_attn_exp_row_)((const double(*)[2])J->exp_tab, J->exp_L, nv,
                                                      S->Sh, S->Sl, M, S->Ph, S->Pl, S->cut);
    for (int64_t j = 0; j < nv; j++) {
        if (S->cut[j]) {
            ncut++;
            continue;
        }
        double eh = S->Ph[j], el = S->Pl[j];
        double dE = 1.0001 * S->eS[j] + 0x1p-81;
        dEmax = dE > dEmax ? dE : dEmax;
        double s, e;
        pp_attn_two_sum_(lh, eh, &s, &e);  // l = Σ E: a TwoSum chain, errors and El summed (PROOFS: "l")
        lh = s;
        ll += e + el;
    }
    {
        double s, e;
        pp_attn_two_sum_(lh, ll, &s, &e);
        lh = s;
        ll = e;
    }
    double n1 = (double)nv + 1.0;
    double Ls = lh * (1.0 + 0x1p-50);
    double el_ = ((dEmax * (1.0 + 0x1p-38) + 1.02 * n1 * n1 * ATTN_U2) * Ls +
                  (double)ncut * 0x1p-721) * ATTN_INFL;  // |l̂ − l|
    double l_lo = lh - el_;  // ≥ 0.99: E_max ≥ e^(Sl − εS) with |Sl| < 2^−13

    // 1/l and lse = M + log l in MPFR (PROOFS: "Softmax").
    mpfr_set_d(w->x, lh, MPFR_RNDN);
    mpfr_add_d(w->x, w->x, ll, MPFR_RNDN);  // ±2^−128
    mpfr_ui_div(w->e, 1, w->x, MPFR_RNDN);  // ±2^−128
    *rh = mpfr_get_d(w->e, MPFR_RNDN);
    mpfr_sub_d(w->e, w->e, *rh, MPFR_RNDN);  // exact
    *rl = mpfr_get_d(w->e, MPFR_RNDN);       // r̂: ±1.03u² of 1/l̂
    mpfr_log(w->e, w->x, MPFR_RNDN);        // ±2^−128|log l̂|
    double logl = fabs(mpfr_get_d(w->e, MPFR_RNDN));
    mpfr_add_d(w->e, w->e, M, MPFR_RNDN);   // ±2^−128|lse|
    double lse_v = mpfr_get_d(w->e, MPFR_RNDN);  // the final rounding
    double dl = el_ / l_lo;                 // |log l̂ − log l|, and |l − l̂|/l
    pp_attn_put_(J->lse, J->elem.lse, S->lo_idx, lse_v,
                 dl + 0x1p-126 * (1.0 + 1.01 * logl + 1.01 * fabs(lse_v)), &R->max[1]);
    double dr = 1.03 * ATTN_U2 + dl;                                     // r̂ vs 1/l, relative
    S->dP = ((dEmax + dr) * (1.0 + 0x1p-38) + 9.2 * ATTN_U2) * ATTN_INFL;  // P̂ vs P, relative
    S->ncut = ncut;
}

// The group's P_j = E_j·r (dd_mul) and out = Σ P_j v_j (anchored accumulation, its scale from
// Σ P̂h_j): keys outer, rows inner (v_j read once for the group), each row's chain over its keys
// in increasing order.
static void fast_out(pp_attn_job_ *J, const fast_ws *w, const fast_row_st *st, int64_t nr, int64_t jmax,
                     const double *rh, const double *rl, fast_acc_fn acc, pp_attn_task_res_ *R)
{
    const int64_t d = J->d;
    double Psum[FAST_GROUP], scale[FAST_GROUP];
    for (int64_t r = 0; r < nr; r++) {
        const fast_row_st *S = &st[r];
        // P̂_j = Ê_j·r̂ by dd_mul, each key alone (≥ 2^−722·0.98 > 2^−800)
        (w->lanes ? w->lanes->scale_row : pp_attn_scale_row_)(S->nv, S->Ph, S->Pl, S->cut, rh[r], rl[r]);
        double ps = 0.0;  // Σ P̂h_j over the keys not cut, in order: the anchor's X, the bound's scale
        for (int64_t j = 0; j < S->nv; j++)
            if (!S->cut[j])
                ps += S->Ph[j];
        Psum[r] = ps;
        scale[r] = acc_scale(ps);  // ≤ 8: P̂ sums to about 1
        acc_start(S->ah, S->al, d, scale[r], w->vpow);
    }
    for (int64_t j0 = 0; j0 < jmax; j0 += FAST_ACC_KEYS) {
        const double *vb[FAST_ACC_KEYS];
        for (int64_t j = j0; j < j0 + FAST_ACC_KEYS && j < jmax; j++)
            vb[j - j0] = w->vp + j * d;
        for (int64_t r = 0; r < nr; r++) {
            const fast_row_st *S = &st[r];
            const double *ty[FAST_ACC_KEYS];
            double th[FAST_ACC_KEYS], tl[FAST_ACC_KEYS];
            int64_t n = 0;
            for (int64_t j = j0; j < j0 + FAST_ACC_KEYS && j < S->nv; j++) {
                if (S->cut[j])
                    continue;
                ty[n] = vb[j - j0];
                th[n] = S->Ph[j];
                tl[n++] = S->Pl[j];
            }
            acc(S->ah, S->al, d, n, ty, th, tl);
        }
    }
    for (int64_t r = 0; r < nr; r++) {
        const fast_row_st *S = &st[r];
        double ps = Psum[r] * (1.0 + 0x1p-40), n1 = (double)S->nv + 1.0;
        double cf = acc_coef(S->nv + 1), ca = acc_anchor_coef(S->nv + 1) * scale[r];
        for (int64_t l = 0; l < d; l++) {
            double hi = S->ah[l] - 1.5 * scale[r] * w->vpow[l];  // exact
            double pre = ((S->dP * (1.0 + 0x1p-49) + cf) * ps + (double)S->ncut * 0x1p-720) * w->vmax[l] +
                         ca * w->vpow[l] + n1 * 0x1p-1074;  // underflow of x2·y + r, once per term
            pp_attn_put_(J->out, J->elem.out, S->qo + l, hi + S->al[l], pre, &R->max[0]);
        }
    }
}

// A row's sums over its keys in fast_dp: D̂ (dd_add of P̂_j·dP̂_j), Z = Σ P̂_j·|dP̂_j|, Y = Σ P̂_j·e_j
// and the cut keys' bound.
typedef struct fast_d_acc {
    double Dh, Dl, Z, Y, cut;
} fast_d_acc;

static inline void fast_d_key(const fast_row_st *S, int64_t j, double mh, double ml, fast_d_acc *a)
{
    double adp = fabs(S->dph[j]) * (1.0 + 0x1p-50);
    if (S->cut[j]) {
        a->cut += 0x1p-720 * (adp + S->edp[j]);
        return;
    }
    pp_attn_dd_add_inl_(a->Dh, a->Dl, mh, ml, &a->Dh, &a->Dl);  // ±3.02u²(|D|+|m|)
    a->Z += S->Ph[j] * adp;
    a->Y += S->Ph[j] * S->edp[j];
}

// The group's dP_j = dout·v_j by the anchored dot (±d²·p·u²(1 + 2^−19)) and D = Σ P_j·dP_j
// (dd_mul, dd_add) (PROOFS: "Backward"): key blocks outer, rows inner, as fast_scores.
static void fast_dp(const pp_attn_job_ *J, const fast_ws *w, fast_row_st *st,
                    int64_t nr, int64_t jmax)
{
    const int64_t d = J->d;
    const double dd = (double)d * (double)d * (1.0 + 0x1p-19);
    double Z[FAST_GROUP], Y[FAST_GROUP], cutD[FAST_GROUP];
    for (int64_t r = 0; r < nr; r++) {
        st[r].Dh = st[r].Dl = 0.0;
        Z[r] = Y[r] = cutD[r] = 0.0;
    }
    for (int64_t j0 = 0; j0 < jmax; j0 += 16)
        for (int64_t r = 0; r < nr; r++) {
            if (j0 >= st[r].nv)
                continue;
            double hc[32], cc[32], V[32], mh[32], ml[32];
            int two = fast_dots_rows(J, w, st, nr, r, 1, j0, hc, cc);
            int64_t n[2] = {0, 0};
            for (int k = 0; k <= two; k++) {
                fast_row_st *S = &st[r + k];
                n[k] = S->nv - j0 < 16 ? S->nv - j0 : 16;
                for (int64_t q = 0; q < n[k]; q++)  // |dP̂ − dP| ≤ V·u², the row's d²·p
                    V[16 * k + q] = dd * S->op;
                (w->lanes ? w->lanes->dp_keys : pp_attn_dp_keys_)(
                    n[k], hc + 16 * k, cc + 16 * k, V + 16 * k, ATTN_U2, S->Ph + j0, S->Pl + j0,
                    S->dph + j0, S->dpl + j0, S->edp + j0, mh + 16 * k, ml + 16 * k);
            }
            // the rows' sums over the block's keys in locals (no store and reload per key on
            // their chains), the two rows' chains side by side, each in its keys' order
            fast_row_st *S0 = &st[r], *S1 = &st[r + two];
            fast_d_acc a0 = {S0->Dh, S0->Dl, Z[r], Y[r], cutD[r]};
            fast_d_acc a1 = {S1->Dh, S1->Dl, Z[r + two], Y[r + two], cutD[r + two]};
            for (int m = 0; m < 16; m++) {
                if (m < n[0])
                    fast_d_key(S0, j0 + m, mh[m], ml[m], &a0);
                if (m < n[1])
                    fast_d_key(S1, j0 + m, mh[16 + m], ml[16 + m], &a1);
            }
            S0->Dh = a0.Dh, S0->Dl = a0.Dl, Z[r] = a0.Z, Y[r] = a0.Y, cutD[r] = a0.cut;
            if (two)
                S1->Dh = a1.Dh, S1->Dl = a1.Dl, Z[r + 1] = a1.Z, Y[r + 1] = a1.Y, cutD[r + 1] = a1.cut;
            r += two;
        }
    for (int64_t r = 0; r < nr; r++) {
        fast_row_st *S = &st[r];
        double n1 = (double)S->nv + 1.0, dP = S->dP;
        S->eD = ((dP * Z[r] + Y[r] * (1.0 + dP) + (9.2 + 3.1 * n1) * ATTN_U2 * Z[r]) * (1.0 + 0x1p-40) +
                 cutD[r] + n1 * 0x1p-1072) * ATTN_INFL;  // |D̂ − D|; + underflow in dd_mul
        S->aD = fabs(S->Dh) * (1.0 + 0x1p-50);
    }
}

// The group's dS_j = P_j·(dP_j − D); dq += dS_j k_j here (keys outer, rows inner: k_j read once
// for the group; anchored accumulation, its scale from Σ|dŜh_j|); dk_j += dS_j q, dv_j += P_j dout
// and the keys' bound sums when the row block is flushed (fast_flush). Each row takes its block
// row st[r].slot. Returns 1 when an anchor is beyond the proof's range.
static int fast_ds(pp_attn_job_ *J, fast_ws *w, const pp_attn_span_ *sp, const fast_row_st *st, int64_t nr,
                   int64_t jmax, fast_acc_fn acc, pp_attn_task_res_ *R)
{
    const int64_t d = J->d;
    double rowEdS[FAST_GROUP], rowDS[FAST_GROUP], scale[FAST_GROUP];
    // each key's dŜ, its bound and state (the per-key steps), then the row's sums (keys in order)
    for (int64_t r = 0; r < nr; r++) {
        const fast_row_st *S = &st[r];
        int64_t x = S->slot * J->s_kv;
        pp_attn_ds_row_ row = {.Dh = S->Dh, .Dl = S->Dl, .eD = S->eD, .aD = S->aD, .dP = S->dP};
        (w->lanes ? w->lanes->ds_keys : pp_attn_ds_keys_)(&row, S->nv, S->Ph, S->Pl, S->dph, S->dpl,
                                                          S->edp, S->cut, w->blk_sh + x,
                                                          w->blk_sl + x, w->blk_e + x,
                                                          w->blk_state + x);
        memcpy(w->blk_ph + x, S->Ph, sizeof(double) * (size_t)S->nv);
        memcpy(w->blk_pl + x, S->Pl, sizeof(double) * (size_t)S->nv);
        double ds = 0.0, eds = 0.0;
        for (int64_t j = 0; j < S->nv; j++) {
            if (w->blk_state[x + j] == PP_ATTN_BLK_ACC)
                ds += fabs(w->blk_sh[x + j]);
            eds += w->blk_e[x + j];
        }
        rowDS[r] = ds, rowEdS[r] = eds;
        scale[r] = acc_scale(ds);
        if (scale[r] > ACC_SCALE_MAX)
            return 1;
        acc_start(S->ah, S->al, d, scale[r], w->kpow);
    }
    for (int64_t j0 = 0; j0 < jmax; j0 += FAST_ACC_KEYS) {
        const double *kb[FAST_ACC_KEYS];
        for (int64_t j = j0; j < j0 + FAST_ACC_KEYS && j < jmax; j++)
            kb[j - j0] = w->kp + j * d;
        for (int64_t r = 0; r < nr; r++) {
            const fast_row_st *S = &st[r];
            const double *ty[FAST_ACC_KEYS];
            double th[FAST_ACC_KEYS], tl[FAST_ACC_KEYS];
            int64_t n = 0;
            for (int64_t j = j0; j < j0 + FAST_ACC_KEYS && j < S->nv; j++) {
                int64_t x = S->slot * J->s_kv + j;
                if (w->blk_state[x] == PP_ATTN_BLK_ACC) {
                    ty[n] = kb[j - j0];
                    th[n] = w->blk_sh[x];
                    tl[n++] = w->blk_sl[x];
                }
            }
            acc(S->ah, S->al, d, n, ty, th, tl);
        }
    }
    for (int64_t r = 0; r < nr; r++) {
        const fast_row_st *S = &st[r];
        w->blk_nv[S->slot] = S->nv;
        w->blk_pr[S->slot] = fast_packed_row(sp, d, S->hh, S->i);
        w->blk_dP[S->slot] = S->dP;
        double n1 = (double)S->nv + 1.0, cf = acc_coef(S->nv + 1);
        double ca = acc_anchor_coef(S->nv + 1) * scale[r];
        // dq = σ·acc: normalised (exact), dd_mul by σ: ±(9.1u² + 2^−105)|σ||acc| (PROOFS: "σ last").
        for (int64_t l = 0; l < d; l++) {
            double a, b, vh, vl;
            pp_attn_two_sum_(S->ah[l] - 1.5 * scale[r] * w->kpow[l], S->al[l], &a, &b);  // exact
            pp_attn_dd_mul_inl_(J->sig_h, J->sig_l, a, b, &vh, &vl);
            double pre = J->sig_b * (((rowEdS[r] * (1.0 + 0x1p-40) + cf * rowDS[r]) * w->kmax[l] +
                                      ca * w->kpow[l] + n1 * 0x1p-1074) * ATTN_INFL +
                                     11.2 * ATTN_U2 * fabs(a) * (1.0 + 0x1p-50)) + 0x1p-1072;
            pp_attn_put_(J->dq, J->elem.dq, S->qo + l, vh, pre, &R->max[2]);
        }
    }
    return 0;
}

// Rows i0 … i0 + n − 1 of head hh, computed together (at most FAST_GROUP; with backward, at most
// the block's free rows): scores, softmax, out, lse; with backward also dP, D, dS and each row's
// dq and its share of dk, dv (in the row block). Every row's values are the ones it gets alone:
// the group changes which row runs between two steps of another, never a row's own steps.
// Returns 1 when a precondition of the proof fails.
static int fast_rows(pp_attn_job_ *J, fast_ws *w, const pp_attn_span_ *sp, int64_t hh, int64_t i0, int64_t n,
                     pp_attn_task_res_ *R)
{
    const int64_t d = J->d;
    fast_acc_fn acc = w->lanes ? w->lanes->acc_multi : pp_attn_acc_multi_;
    fast_row_st st[FAST_GROUP];
    int64_t nr = 0, jmax = 0;
    for (int64_t i = i0; i < i0 + n; i++) {
        const int64_t nv = pp_attn_visible_(J, i);
        const int64_t qo = pp_attn_qi_(J, sp->bi, i, hh);
        const int64_t lo_idx = (sp->bi * J->h + hh) * J->s_q + i;
        if (nv == 0) {  // sees no key: the convention, exactly
            pp_attn_row_empty_(J, qo, lo_idx, R);
            continue;
        }
        fast_row_st *S = &st[nr];
        size_t o = (size_t)nr * (size_t)J->s_kv, od = (size_t)nr * (size_t)d;
        *S = (fast_row_st){.hh = hh, .i = i, .nv = nv, .qo = qo, .lo_idx = lo_idx,
                           .slot = J->backward ? w->blk_n + nr : 0, .qi = J->q + qo,
                           .oi = J->backward ? J->dout + qo : NULL,
                           .Sh = w->Sh + o, .Sl = w->Sl + o, .eS = w->eS + o, .Ph = w->Ph + o, .Pl = w->Pl + o,
                           .dph = w->dph + o, .dpl = w->dpl + o, .edp = w->edp + o, .ah = w->ah + od,
                           .al = w->al + od, .cut = w->cut + o};
        // the dots' anchors: Σ_l |q_l|·max_j |k_jl| bounds every partial sum of q·k_j (and so
        // for dout·v_j)
        double bq = 0.0, bo = 0.0;
        for (int64_t l = 0; l < d; l++) {
            bq += fabs(S->qi[l]) * w->kmax[l];
            if (S->oi)
                bo += fabs(S->oi[l]) * w->vmax[l];
        }
        S->qp = acc_scale(bq), S->op = acc_scale(bo);
        jmax = nv > jmax ? nv : jmax;
        nr++;
    }
    if (nr == 0)
        return 0;
    if (fast_scores(J, w, st, nr, jmax))
        return 1;
    double rh[FAST_GROUP], rl[FAST_GROUP];
    for (int64_t r = 0; r < nr; r++)
        fast_softmax(J, w, &st[r], &rh[r], &rl[r], R);
    fast_out(J, w, st, nr, jmax, rh, rl, acc, R);
    if (!J->backward)
        return 0;
    fast_dp(J, w, st, nr, jmax);
    if (fast_ds(J, w, sp, st, nr, jmax, acc, R))
        return 1;
    w->blk_n += nr;
    return 0;
}

// A key's dk or dv accumulator (d elements) before terms that bring its multipliers' magnitudes
// to X in all: started at its anchors (scale *p = 0: no term yet) or moved to a larger scale when
// acc_scale(X) has grown (*m counts the moves: one rounding of lo each). Returns 1 when the scale
// is beyond the proof's range.
static int fast_anchor(double *H, double *lo, int64_t d, double *p, double *m, double X,
                       const double *ypow)
{
    double p1 = acc_scale(X);
    if (p1 > ACC_SCALE_MAX)
        return 1;
    if (p1 > *p) {
        if (*p == 0.0)
            acc_start(H, lo, d, p1, ypow);
        else {
            acc_rebase(H, lo, d, *p, p1, ypow);
            *m += 1.0;
        }
        *p = p1;
    }
    return 0;
}

// The row block's shares of dk_j, dv_j and of the keys' bound sums: for each key j, the block's
// rows in order — each accumulator takes the same terms in the same order as when every row added
// its own at once (rows in order); before a block's terms, an anchor moves (fast_anchor) where the
// scale the key's terms need has grown. So the anchors move at block boundaries, which depend on
// the row groups and the block's size (s_kv's): never on the thread count or the vector path.
// Returns 1 when an anchor is beyond the proof's range.
static int fast_flush(pp_attn_job_ *J, fast_ws *w)
{
    const int64_t d = J->d;
    fast_acc_fn acc = w->lanes ? w->lanes->acc_multi : pp_attn_acc_multi_;
    int64_t jmax = 0;
    for (int64_t r = 0; r < w->blk_n; r++)
        jmax = w->blk_nv[r] > jmax ? w->blk_nv[r] : jmax;
    // dk first, then dv: each pass's rows (q, then dout: 32 KiB for 32 rows at d = 128) stay in
    // the cache across the keys
    for (int64_t j = 0; j < jmax; j++) {
        // key j's dk terms (the accumulated dŜ), rows in order; the key's bound sums in locals
        const double *ky[FAST_BLOCK_ROWS];
        double kh[FAST_BLOCK_ROWS], kl[FAST_BLOCK_ROWS];
        double cEdS = w->colEdS[j], cCut = w->colCut[j], cDS = w->colDS[j];
        int64_t nk = 0;
        for (int64_t r = 0; r < w->blk_n; r++) {
            if (j >= w->blk_nv[r])
                continue;
            int64_t x = r * J->s_kv + j;
            if (w->blk_state[x] == PP_ATTN_BLK_CUT) {
                cCut += 1.0;
            } else if (w->blk_state[x] == PP_ATTN_BLK_ACC) {
                ky[nk] = w->qp + w->blk_pr[r];
                kh[nk] = w->blk_sh[x];
                kl[nk++] = w->blk_sl[x];
                cDS += fabs(w->blk_sh[x]);
            }
            cEdS += w->blk_e[x];
        }
        w->colEdS[j] = cEdS, w->colCut[j] = cCut, w->colDS[j] = cDS;
        // the anchors hold the sums with this block's terms: a scale that must grow moves them
        if (fast_anchor(w->dkh + j * d, w->dkl + j * d, d, &w->dk_p[j], &w->dk_m[j], cDS, w->qpow))
            return 1;
        // up to PP_ATTN_ACC_TERMS terms a call: the accumulator continues from one call to the
        // next, so the same operations in the same order as one call with all of them
        for (int64_t t = 0; t < nk; t += PP_ATTN_ACC_TERMS)
            acc(w->dkh + j * d, w->dkl + j * d, d,
                nk - t < PP_ATTN_ACC_TERMS ? nk - t : PP_ATTN_ACC_TERMS, ky + t, kh + t, kl + t);
    }
    for (int64_t j = 0; j < jmax; j++) {
        // key j's dv terms (every P̂ not cut), rows in order
        const double *vy[FAST_BLOCK_ROWS];
        double vh[FAST_BLOCK_ROWS], vl[FAST_BLOCK_ROWS];
        double cP = w->colP[j], cDP = w->colDP[j];
        int64_t nv = 0;
        for (int64_t r = 0; r < w->blk_n; r++) {
            int64_t x = r * J->s_kv + j;
            if (j >= w->blk_nv[r] || w->blk_state[x] == PP_ATTN_BLK_CUT)
                continue;
            vy[nv] = w->op + w->blk_pr[r];
            vh[nv] = w->blk_ph[x];
            vl[nv++] = w->blk_pl[x];
            cP += w->blk_ph[x];
            cDP += w->blk_dP[r] * w->blk_ph[x];
        }
        w->colP[j] = cP, w->colDP[j] = cDP;
        if (fast_anchor(w->dvh + j * d, w->dvl + j * d, d, &w->dv_p[j], &w->dv_m[j], cP, w->opow))
            return 1;
        for (int64_t t = 0; t < nv; t += PP_ATTN_ACC_TERMS)
            acc(w->dvh + j * d, w->dvl + j * d, d,
                nv - t < PP_ATTN_ACC_TERMS ? nv - t : PP_ATTN_ACC_TERMS, vy + t, vh + t, vl + t);
    }
    w->blk_n = 0;
    return 0;
}

// dk and dv of the task's kv head from its accumulators (PROOFS: "Backward").
static void fast_columns(pp_attn_job_ *J, fast_ws *w, const pp_attn_span_ *sp, pp_attn_task_res_ *R)
{
    const int64_t d = J->d, n = J->g * J->s_q;
    double nt = (double)n + 1.0;
    for (int64_t j = 0; j < J->s_kv; j++) {
        int64_t ko = pp_attn_ki_(J, sp->bi, j, sp->hk);
        double cP = w->colP[j] * (1.0 + 0x1p-40), cDP = w->colDP[j] * (1.0 + 0x1p-40);
        double cDS = w->colDS[j] * (1.0 + 0x1p-40), cE = w->colEdS[j] * (1.0 + 0x1p-40);
        // N − 1 roundings of lo: a term's each, and one per move of the anchor
        int64_t Nv = n + (int64_t)w->dv_m[j] + 1, Nk = n + (int64_t)w->dk_m[j] + 1;
        double cfv = acc_coef(Nv), cav = acc_anchor_coef(Nv) * w->dv_p[j];
        double cfk = acc_coef(Nk), cak = acc_anchor_coef(Nk) * w->dk_p[j];
        for (int64_t l = 0; l < d; l++) {
            int64_t x = j * d + l;
            double pre = ((cDP * (1.0 + 0x1p-49) + cfv * cP + w->colCut[j] * 0x1p-720) * w->omax[l] +
                          cav * w->opow[l] + nt * 0x1p-1074) * ATTN_INFL;
            double hv = w->dvh[x] - 1.5 * w->dv_p[j] * w->opow[l];  // exact
            pp_attn_put_(J->dv, J->elem.dv, ko + l, hv + w->dvl[x], pre, &R->max[4]);
            double a, b, vh, vl;
            pp_attn_two_sum_(w->dkh[x] - 1.5 * w->dk_p[j] * w->qpow[l], w->dkl[x], &a, &b);
            pp_attn_dd_mul_inl_(J->sig_h, J->sig_l, a, b, &vh, &vl);
            pre = J->sig_b * (((cE + cfk * cDS) * w->qmax[l] + cak * w->qpow[l] + nt * 0x1p-1074) * ATTN_INFL +
                              11.2 * ATTN_U2 * fabs(a) * (1.0 + 0x1p-50)) + 0x1p-1072;
            pp_attn_put_(J->dk, J->elem.dk, ko + l, vh, pre, &R->max[3]);
        }
    }
}

int pp_attn_fast_task_(pp_attn_job_ *J, int64_t task, int worker)
{
    pp_attn_span_ sp = pp_attn_span_of_(J, task);
    pp_attn_task_res_ *R = &J->res[task];
    memset(R, 0, sizeof *R);
    double as = fabs(J->sig_h);
    if (as != 0.0 && (as < 0x1p-400 || as > 0x1p400))
        return 1;
    fast_ws w;
    if (fast_ws_init(&w, J->s_kv, J->d, J->backward, (sp.h1 - sp.h0) * (sp.i1 - sp.i0),
                     pp_attn_lanes_pick_(J->o->lanes))) {
        fast_ws_free(&w);
        return -1;
    }
    for (int64_t j = 0; j < J->s_kv; j++) {
        int64_t ko = pp_attn_ki_(J, sp.bi, j, sp.hk);
        memcpy(w.kp + j * J->d, J->k + ko, sizeof(double) * (size_t)J->d);
        memcpy(w.vp + j * J->d, J->v + ko, sizeof(double) * (size_t)J->d);
    }
    if (J->backward)
        for (int64_t hh = sp.h0; hh < sp.h1; hh++)
            for (int64_t i = sp.i0; i < sp.i1; i++) {
                int64_t qo = pp_attn_qi_(J, sp.bi, i, hh), pr = fast_packed_row(&sp, J->d, hh, i);
                memcpy(w.qp + pr, J->q + qo, sizeof(double) * (size_t)J->d);
                memcpy(w.op + pr, J->dout + qo, sizeof(double) * (size_t)J->d);
            }
    if (w.lanes) {
        fast_transpose(J, &sp, J->k, w.kt);
        if (J->backward)
            fast_transpose(J, &sp, J->v, w.vt);
    }
    int bad = 0;
    for (int64_t j = 0; j < J->s_kv; j++) {
        int64_t ko = pp_attn_ki_(J, sp.bi, j, sp.hk);
        bad |= absmax_row(w.kmax, J->k + ko, J->d);
        bad |= absmax_row(w.vmax, J->v + ko, J->d);
    }
    for (int64_t hh = sp.h0; hh < sp.h1; hh++)
        for (int64_t i = sp.i0; i < sp.i1; i++) {
            int64_t qo = pp_attn_qi_(J, sp.bi, i, hh);
            bad |= absmax_row(w.qmax, J->q + qo, J->d);
            if (J->backward)
                bad |= absmax_row(w.omax, J->dout + qo, J->d);
        }
    for (int64_t l = 0; l < J->d; l++) {  // the anchors' column factors
        w.kpow[l] = acc_ypow(w.kmax[l]);
        w.vpow[l] = acc_ypow(w.vmax[l]);
        w.qpow[l] = acc_ypow(w.qmax[l]);
        w.opow[l] = acc_ypow(w.omax[l]);
    }
    int64_t rows = 0;
    // a stop request (Ctrl-C) ends the task at the next row: the caller discards the job
    int stop = 0;
    for (int64_t hh = sp.h0; hh < sp.h1 && !bad && !stop; hh++)
        for (int64_t i = sp.i0, n; i < sp.i1 && !bad && !(stop = pp_interrupted()); i += n) {
            n = sp.i1 - i < FAST_GROUP ? sp.i1 - i : FAST_GROUP;
            if (J->backward && n > w.blk_cap - w.blk_n)
                n = w.blk_cap - w.blk_n;  // ≥ 1: a full block is flushed below
            bad = fast_rows(J, &w, &sp, hh, i, n, R);
            if (!bad && J->backward && w.blk_n == w.blk_cap)
                bad = fast_flush(J, &w);
            for (int64_t k = i; k < i + n; k++)
                rows += pp_attn_row_done_(J, worker, k);
        }
    if (!bad && !stop && J->backward && !(bad = fast_flush(J, &w)))
        fast_columns(J, &w, &sp, R);
    fast_ws_free(&w);
    if (bad)
        atomic_fetch_sub(&J->done, rows);  // the plain path counts their work again
    return bad;
}

// ---------------------------------------------------------------------------------------------
// The building blocks, for tests/test_attention_ref.c to check their bounds alone

void pp_attn_dd_mul_(double xh, double xl, double yh, double yl, double *zh, double *zl)
{
    pp_attn_dd_mul_inl_(xh, xl, yh, yl, zh, zl);
}

void pp_attn_dd_add_(double xh, double xl, double yh, double yl, double *zh, double *zl)
{
    pp_attn_dd_add_inl_(xh, xl, yh, yl, zh, zl);
}

void pp_attn_dotx4_(const double *x, const double *const y[4], int64_t d, double A, double h[4],
                    double c[4])
{
    dotx4(x, y, d, A, h, c);
}

void pp_attn_acc_multi_(double *restrict h, double *restrict lo, int64_t d, int64_t n,
                        const double *const *y, const double *xh, const double *xl)
{
    for (int64_t t = 0; t < n; t++) {
        double x1, x2;
        pp_attn_acc_x_(xh[t], xl[t], &x1, &x2);
        for (int64_t l = 0; l < d; l++)
            pp_attn_acc_elem_(h + l, lo + l, y[t][l], x1, x2);
    }
}

double pp_attn_acc_scale_(double X)
{
    return acc_scale(X);
}

double pp_attn_acc_ypow_(double m)
{
    return acc_ypow(m);
}

double pp_attn_acc_coef_(int64_t N)
{
    return acc_coef(N);
}

double pp_attn_acc_anchor_coef_(int64_t N)
{
    return acc_anchor_coef(N);
}
