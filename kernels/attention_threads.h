// attention_threads.h — the per-thread bodies of the GPU attention (kernels/cuda/attention_kernels.cu)
// as PP_HD C, so plain C (tests/test_attention_threads.c) can run the very same code in loops and
// check it against the CPU emulation (kernels/cpu/attention.c) bit for bit without a GPU.
//
// A launch is one pp_attn_launch (the op, its thread count n and every pointer and scalar it
// needs); thread t of it runs pp_attn_thread(L, t). Threads of one launch never read what another
// thread of the same launch writes, so any execution order gives the same bits; launches run in
// the order kernels/attention_plan.c issues them.
//
// Layout on the device: every tensor head-major, q', dout, out, dq [b][h][s_q][d], k', v, dk, dv
// [b][h_kv][s_kv][d], lse [b][h][s_q] (binary32 values; the values of F are exact in binary32).
//
// Blocks. Each kernel call of the CPU emulation (attn_fwd_block / attn_bwd_block) is one block:
// a q-row range against a kv-row range with a mask. Plain attention has one block per (b, head):
// all rows against all keys, mask off = s_kv − s_q. The CP ring (world W, chunk c = s/(2W)) has
// per step one block per (b, head, rank r): rank r's rows (chunks r and 2W−1−r, local rows
// [q0, q0 + nq)) against the kv of rank o (chunk o, and 2W−1−o unless the step type takes only
// the first chunk), exactly as the CPU's cp_setup. A launch covers every rank of its step (their
// blocks write disjoint rows), so a ring step is one launch per stage below.
// Block-local scratch (scores, P, dS, PB-Relax maxima, per-head dk/dv) is indexed
// [b][h][r][x][y] with extents R (1 or W), BQ, BK (s_q, s_kv, or 2c, 2c); block outputs (out,
// lse, dq partials) go straight to their global rows.
//
// Reduction orders (each a sequential chain in one thread, the CPU's own order):
//   dot products (scores, dP, flash s): from +0, c = 0..d−1, fma (fp32) or pp_gemm_step_storage;
//   P·V, dq (over j), dk, dv (over i): one thread per output element, the chain over the block's
//     rows/keys in increasing order from +0 (masked terms skipped, zeroed rows included, as the CPU);
//   softmax max/sum, flash tiles, D: one thread per row, j increasing;
//   PB-Relax max: one thread per row (j increasing), then one per block over the rows in order
//     (the NaN-sticky max composes: the same bits as the CPU's single pass);
//   GQA sums: one thread per dk/dv element, heads of the group in order from +0;
//   CP merges: one thread per row (lse, step order) or element (out after the ring; dq, dk, dv
//     per ring step, one launch per step, so the step order is the launch order).
#ifndef PP_ATTENTION_THREADS_H
#define PP_ATTENTION_THREADS_H

#include <math.h>
#include <stdint.h>

#include "attention.h"

typedef enum {
    PP_AT_GATHER = 0,    // dst[b][H][S][d] ← scale(src[b][S][H][d]): (b, hh, s, e)
    PP_AT_FILL0,         // dst[t] = +0: t
    PP_AT_UNF_SCORES,    // S_xy of visible (x, y): (b, hh, r, x, y)
    PP_AT_UNF_PB_ROW,    // Mrow = NaN-sticky max |S| over row x: (b, hh, r, x)
    PP_AT_UNF_PB_BLOCK,  // Mblk = the same over the block's rows: (b, hh, r)
    PP_AT_UNF_SOFTMAX,   // row x: S → P in place, lse (forward): (b, hh, r, x)
    PP_AT_UNF_PV,        // out_xe: (b, hh, r, x, e)
    PP_AT_FLASH_FWD,     // row x through the key tiles: out, lse: (b, hh, r, x)
    PP_AT_FLASH_BWD_ROW, // row x: P, dS: (b, hh, r, x)
    PP_AT_UNF_DP,        // dP_xy into dS: (b, hh, r, x, y)
    PP_AT_UNF_BWD_ROW,   // row x: D, dS in place: (b, hh, r, x)
    PP_AT_BWD_DQ,        // dq'_xe (block partial, global row): (b, hh, r, x, e)
    PP_AT_BWD_DKV,       // dk'_ye, dv_ye of one q head (block scratch): (b, hh, r, y, e)
    PP_AT_PLAIN_DQ,      // dq = prescale backward of the block's dq': (b, hh, s, e)
    PP_AT_PLAIN_DKV,     // GQA sum, RN_F, prescale backward: (b, g, j, e)
    PP_AT_CP_LSE,        // running lse merge of step i: (b, hh, s)
    PP_AT_CP_OUT,        // out merge after the ring: (b, hh, s, e)
    PP_AT_CP_DQ,         // dq accumulator step: (b, hh, s, e)
    PP_AT_CP_DKV,        // dk, dv accumulators along the ring path: (b, g, r, y, e)
    PP_AT_CP_FINAL_DQ,   // (b, hh, s, e)
    PP_AT_CP_FINAL_DKV,  // (b, g, s, e)
    // engine cublas only (the GEMMs are the device's; these are the steps around them)
    PP_AT_UNF_ZERO_MASKED, // P_xy = +0 where (x, y) is masked, before P·V reads the whole block: (b, hh, r, x, y)
    PP_AT_SCALE,         // dst[t] = RN_F(RN_32(gscale·src[t])) (baddbmm backward's alpha): t
    PP_AT_N_OPS
} pp_attn_thread_op;

typedef struct pp_attn_launch {
    int op;
    int64_t n;  // threads
    // the problem
    pp_format_id f;
    pp_attn_kernel kernel;
    pp_attn_accum accum;
    pp_attn_scale scale;
    pp_attn_softmax softmax;
    pp_attn_max max_subtract;
    pp_format_id cp_accum, cp_grad_accum;
    int bn;  // flash key tile
    pp_attn_scalars sc;
    int64_t b, h, h_kv, grp, sq, skv, d;
    int causal;
    // the block geometry: cp = 0 plain (R = 1), else ring world W, chunk c, step, direction
    int cp, W, step, ring_bwd;
    int64_t c, R, BQ, BK;
    // inputs (head-major)
    const float *q, *k, *v, *go;
    const float *out_f, *lse_f;  // backward: the forward's final out and lse
    // block outputs
    float *O, *Lse;              // forward: out and lse at global rows (CP: step i's partials)
    float *SP, *DS, *Mrow, *Mblk;
    float *dqb, *dkh, *dvh;      // backward partials: dq' [b][h][s][d]; dk', dv [b][h][R][BK][d]
    // CP state
    const float *Oall, *Lall;    // all steps' partials [W][b][h][s][d], [W][b][h][s]
    float *run_lse, *acc_dq, *acc_dk, *acc_dv;
    // finals
    float *out, *dq, *dk, *dv;
    // PP_AT_GATHER / PP_AT_FILL0
    const float *src;
    float *dst;
    int64_t gS, gH;
    float gscale;
} pp_attn_launch;

// ---------------------------------------------------------------------------------------------
// Geometry

typedef struct pp_attn_geom {
    int64_t nq, nk, q0, off;
    int causal, r, o;
} pp_attn_geom;

// The CPU's cp_step_type: 0 diagonal, 1 full q × first kv chunk, 2 second-half q × full kv, 3 no mask.
PP_HD static inline int pp_attn_step_type(int causal, int r, int i)
{
    if (!causal)
        return 3;
    return i == 0 ? 0 : i <= r ? 1 : 2;
}

// The block of rank r in L's step (the CPU's cp_setup; the whole problem when not CP).
PP_HD static inline void pp_attn_geom_of(const pp_attn_launch *L, int r, pp_attn_geom *G)
{
    if (!L->cp) {
        G->nq = L->sq, G->nk = L->skv, G->q0 = 0, G->off = L->skv - L->sq;
        G->causal = L->causal, G->r = 0, G->o = 0;
        return;
    }
    int W = L->W, i = L->step;
    int fi = L->ring_bwd ? W - 1 - i : i;  // backward step i runs forward step W−1−i's block
    int o = L->ring_bwd ? (r + 1 + i) % W : ((r - i) % W + W) % W;
    int t = pp_attn_step_type(L->causal, r, fi);
    G->nk = t == 1 ? L->c : 2 * L->c;
    G->nq = t == 2 ? L->c : 2 * L->c;
    G->q0 = t == 2 ? L->c : 0;
    G->off = 0;
    G->causal = t == 0;
    G->r = r, G->o = o;
}

// Global sequence position of the rank-local row lx of rank r (chunks r, 2W−1−r).
PP_HD static inline int64_t pp_attn_cp_row(const pp_attn_launch *L, int r, int64_t lx)
{
    return lx < L->c ? r * L->c + lx : (2 * L->W - 1 - r) * L->c + lx - L->c;
}

PP_HD static inline int64_t pp_attn_qrow(const pp_attn_launch *L, const pp_attn_geom *G, int64_t x)
{
    return L->cp ? pp_attn_cp_row(L, G->r, G->q0 + x) : x;
}

PP_HD static inline int64_t pp_attn_krow(const pp_attn_launch *L, const pp_attn_geom *G, int64_t y)
{
    return L->cp ? pp_attn_cp_row(L, G->o, y) : y;
}

// Last visible key of block row x, or −1 (the CPU's attn_jend).
PP_HD static inline int64_t pp_attn_jend(const pp_attn_geom *G, int64_t x)
{
    if (!G->causal)
        return G->nk - 1;
    int64_t e = x + G->off;
    return e < G->nk - 1 ? (e < -1 ? -1 : e) : G->nk - 1;
}

// Whether global row s of head data is touched by L's step (CP: rank-local rows ≥ q0).
PP_HD static inline int pp_attn_cp_touched(const pp_attn_launch *L, int64_t s)
{
    int64_t ch = s / L->c;
    int r = (int)(ch < L->W ? ch : 2 * L->W - 1 - ch);
    pp_attn_geom G;
    pp_attn_geom_of(L, r, &G);
    int64_t lx = ch < L->W ? s % L->c : L->c + s % L->c;
    return lx >= G.q0;
}

// Row pointers of block row x / key y for q head hh.
PP_HD static inline int64_t pp_attn_qoff(const pp_attn_launch *L, int64_t b, int64_t hh, int64_t s)
{
    return ((b * L->h + hh) * L->sq + s) * L->d;
}
PP_HD static inline int64_t pp_attn_koff(const pp_attn_launch *L, int64_t b, int64_t hh, int64_t s)
{
    return ((b * L->h_kv + hh / L->grp) * L->skv + s) * L->d;
}
// Block scratch [b][h][R][BQ][BK] and row scratch [b][h][R][BQ].
PP_HD static inline int64_t pp_attn_blk_row(const pp_attn_launch *L, int64_t b, int64_t hh, int r, int64_t x)
{
    return ((b * L->h + hh) * L->R + r) * L->BQ + x;
}

// ---------------------------------------------------------------------------------------------
// Dot products (the CPU's attn_dots_fp32 / attn_dots_storage lanes)

PP_HD static inline float pp_attn_dot32(const float *a, const float *x, int64_t d)
{
    float acc = 0.0f;
    for (int64_t c = 0; c < d; c++)
        acc = fmaf(a[c], x[c], acc);
    return acc;
}

PP_HD static inline double pp_attn_dot_storage(pp_format_id f, const float *a, const float *x, int64_t d)
{
    double s = 0.0;
    for (int64_t c = 0; c < d; c++)
        s = pp_gemm_step_storage(f, a[c], x[c], s);
    return s;
}

// ---------------------------------------------------------------------------------------------
// Thread bodies. Each decodes its index, then does what the CPU loop does for that element/row.

// PP_AT_GATHER: the prescale (attn_scale_rows: a copy when the factor is 1) and the transpose.
PP_HD static inline void pp_attn_t_gather(const pp_attn_launch *L, int64_t t)
{
    int64_t e = t % L->d, s = (t / L->d) % L->gS, hh = (t / (L->d * L->gS)) % L->gH, b = t / (L->d * L->gS * L->gH);
    float x = L->src[((b * L->gS + s) * L->gH + hh) * L->d + e];
    L->dst[t] = L->gscale == 1.0f ? x : pp_attn_mul_store(L->f, L->gscale, x);
}

// Decodes t = (((b·h + hh)·R + r)·BQ + x) [·inner + y].
// Row task t of a launch: its (b, head, rank r, block-local row x) and r's block geometry G.
// Returns 0 when x lies past the block's rows (the launch is sized for the largest block).
PP_HD static inline int pp_attn_row(const pp_attn_launch *L, int64_t t, int64_t *b, int64_t *hh, int *r, int64_t *x,
                                    pp_attn_geom *G)
{
    *x = t % L->BQ;
    t /= L->BQ;
    *r = (int)(t % L->R);
    t /= L->R;
    *hh = t % L->h;
    *b = t / L->h;
    pp_attn_geom_of(L, *r, G);
    return *x < G->nq;
}

PP_HD static inline float pp_attn_score(const pp_attn_launch *L, const float *qr, const float *kr)
{
    if (L->accum == PP_ATTN_ACC_FP32)
        return pp_attn_score_fp32(L->f, &L->sc, pp_attn_dot32(qr, kr, L->d));
    return pp_attn_score_storage(L->f, &L->sc, pp_attn_dot_storage(L->f, qr, kr, L->d));
}

PP_HD static inline void pp_attn_t_unf_scores(const pp_attn_launch *L, int64_t t)
{
    int64_t y = t % L->BK, b, hh, x;
    int r;
    pp_attn_geom G;
    if (!pp_attn_row(L, t / L->BK, &b, &hh, &r, &x, &G) || y > pp_attn_jend(&G, x))
        return;
    const float *qr = L->q + pp_attn_qoff(L, b, hh, pp_attn_qrow(L, &G, x));
    const float *kr = L->k + pp_attn_koff(L, b, hh, pp_attn_krow(L, &G, y));
    L->SP[t] = pp_attn_score(L, qr, kr);
}

// NaN-sticky max of |x| (the CPU's unf_pb_max step).
PP_HD static inline float pp_attn_pb_step(float M, float s)
{
    return fabsf(s) > M || s != s ? fabsf(s) : M;
}

PP_HD static inline void pp_attn_t_unf_pb_row(const pp_attn_launch *L, int64_t t)
{
    int64_t b, hh, x;
    int r;
    pp_attn_geom G;
    if (!pp_attn_row(L, t, &b, &hh, &r, &x, &G))
        return;
    const float *S = L->SP + t * L->BK;
    float M = 0.0f;
    for (int64_t j = 0; j <= pp_attn_jend(&G, x); j++)
        M = pp_attn_pb_step(M, S[j]);
    L->Mrow[t] = M;
}

PP_HD static inline void pp_attn_t_unf_pb_block(const pp_attn_launch *L, int64_t t)
{
    pp_attn_geom G;
    pp_attn_geom_of(L, (int)(t % L->R), &G);
    float M = 0.0f;
    for (int64_t x = 0; x < G.nq; x++)
        M = pp_attn_pb_step(M, L->Mrow[t * L->BQ + x]);
    L->Mblk[t] = M;
}

// The CPU's unf_probs_row after the scores: S[0..je] → P in place; lse into L->Lse when set.
PP_HD static inline void pp_attn_t_unf_softmax(const pp_attn_launch *L, int64_t t)
{
    int64_t b, hh, x;
    int r;
    pp_attn_geom G;
    if (!pp_attn_row(L, t, &b, &hh, &r, &x, &G))
        return;
    int64_t je = pp_attn_jend(&G, x), s = pp_attn_qrow(L, &G, x);
    float *P = L->SP + t * L->BK;
    float *lse = L->Lse ? L->Lse + (b * L->h + hh) * L->sq + s : (float *)0;
    if (je < 0) {
        if (lse)
            *lse = -INFINITY;
        return;
    }
    int pb = L->max_subtract == PP_ATTN_MAX_PB_RELAX;
    float M = pb ? L->Mblk[t / L->BQ] : 0.0f;
    for (int64_t j = 0; j <= je; j++) {
        float tt = pb ? pp_attn_pb_relax(L->f, L->softmax, P[j], M, L->sc.A) : P[j];
        P[j] = pp_attn_layer_scale(L->f, L->softmax, tt, L->sc.L);
    }
    float m = 0.0f;
    if (L->max_subtract != PP_ATTN_MAX_NONE) {
        m = P[0];
        for (int64_t j = 1; j <= je; j++)
            m = P[j] > m || P[j] != P[j] ? P[j] : m;
    }
    float sum = 0.0f;
    for (int64_t j = 0; j <= je; j++) {
        P[j] = pp_attn_softmax_exp(L->f, L->softmax, P[j], m);
        sum = pp_attn_softmax_sum_step(L->f, L->softmax, sum, P[j]);
    }
    for (int64_t j = 0; j <= je; j++)
        P[j] = pp_attn_softmax_prob(L->f, P[j], sum);
    float shift = pb ? (M * L->sc.A) * L->sc.L : 0.0f;
    if (lse)
        *lse = pp_attn_lse(m, sum, shift);
}

// The CPU's attn_pv_row, one element.
PP_HD static inline void pp_attn_t_unf_pv(const pp_attn_launch *L, int64_t t)
{
    int64_t e = t % L->d, b, hh, x;
    int r;
    int64_t rt = t / L->d;
    pp_attn_geom G;
    if (!pp_attn_row(L, rt, &b, &hh, &r, &x, &G))
        return;
    int64_t je = pp_attn_jend(&G, x);
    float *o = L->O + pp_attn_qoff(L, b, hh, pp_attn_qrow(L, &G, x)) + e;
    const float *P = L->SP + rt * L->BK;
    if (je < 0) {
        *o = 0.0f;
        return;
    }
    if (L->accum == PP_ATTN_ACC_FP32) {
        float acc = 0.0f;
        for (int64_t j = 0; j <= je; j++)
            acc = fmaf(P[j], L->v[pp_attn_koff(L, b, hh, pp_attn_krow(L, &G, j)) + e], acc);
        *o = pp_attn_store(L->f, acc);
    } else {
        double acc = 0.0;
        for (int64_t j = 0; j <= je; j++)
            acc = pp_gemm_step_storage(L->f, P[j], L->v[pp_attn_koff(L, b, hh, pp_attn_krow(L, &G, j)) + e], acc);
        *o = (float)acc;
    }
}

// The CPU's flash_row: the tile's scores are computed twice (for the max, then for p), the same
// values both times; o lives in the output row itself.
PP_HD static inline void pp_attn_t_flash_fwd(const pp_attn_launch *L, int64_t t)
{
    int64_t b, hh, x;
    int r;
    pp_attn_geom G;
    if (!pp_attn_row(L, t, &b, &hh, &r, &x, &G))
        return;
    int64_t d = L->d, je = pp_attn_jend(&G, x), s = pp_attn_qrow(L, &G, x);
    const float *qr = L->q + pp_attn_qoff(L, b, hh, s);
    float *o = L->O + pp_attn_qoff(L, b, hh, s);
    float *lse = L->Lse + (b * L->h + hh) * L->sq + s;
    int none = L->max_subtract == PP_ATTN_MAX_NONE;
    float m = none ? 0.0f : -INFINITY, l = 0.0f;
    for (int64_t c = 0; c < d; c++)
        o[c] = 0.0f;
    for (int64_t j0 = 0; j0 <= je; j0 += L->bn) {
        int64_t j1 = j0 + L->bn <= je + 1 ? j0 + L->bn : je + 1;
        float mn = m;
        for (int64_t j = j0; j < j1; j++) {
            const float *kr = L->k + pp_attn_koff(L, b, hh, pp_attn_krow(L, &G, j));
            float sj = pp_attn_flash_s(&L->sc, pp_attn_dot32(qr, kr, d));
            if (!none && (sj > mn || sj != sj))
                mn = sj;
        }
        float corr = none ? 1.0f : pp_attn_flash_corr(m, mn);
        pp_attn_flash_rescale(o, d, &l, corr);
        for (int64_t j = j0; j < j1; j++) {
            int64_t kg = pp_attn_koff(L, b, hh, pp_attn_krow(L, &G, j));
            float sj = pp_attn_flash_s(&L->sc, pp_attn_dot32(qr, L->k + kg, d));
            float p = pp_attn_flash_p(sj, mn);
            l = l + p;
            float ps = pp_attn_store(L->f, p);
            for (int64_t c = 0; c < d; c++)
                o[c] = fmaf(ps, L->v[kg + c], o[c]);
        }
        m = mn;
    }
    pp_attn_flash_finish(L->f, je >= 0, m, l, o, d, lse);
}

// A row the backward skips (no visible key, or lse −Inf): P = dS = 0.
PP_HD static inline int pp_attn_bwd_row_dead(const pp_attn_launch *L, const pp_attn_geom *G, int64_t b, int64_t hh,
                                             int64_t x)
{
    int64_t s = pp_attn_qrow(L, G, x);
    return pp_attn_jend(G, x) < 0 || L->lse_f[(b * L->h + hh) * L->sq + s] == -INFINITY;
}

// The flash branch of the CPU's attn_bwd_block row loop.
PP_HD static inline void pp_attn_t_flash_bwd_row(const pp_attn_launch *L, int64_t t)
{
    int64_t b, hh, x;
    int r;
    pp_attn_geom G;
    if (!pp_attn_row(L, t, &b, &hh, &r, &x, &G))
        return;
    float *P = L->SP + t * L->BK, *dS = L->DS + t * L->BK;
    int64_t je = pp_attn_bwd_row_dead(L, &G, b, hh, x) ? -1 : pp_attn_jend(&G, x);
    if (je >= 0) {
        int64_t d = L->d, s = pp_attn_qrow(L, &G, x), qo = pp_attn_qoff(L, b, hh, s);
        const float *qr = L->q + qo, *go = L->go + qo, *out = L->out_f + qo;
        float lse = L->lse_f[(b * L->h + hh) * L->sq + s];
        float D = 0.0f;
        for (int64_t c = 0; c < d; c++)
            D = fmaf(go[c], out[c], D);
        for (int64_t j = 0; j <= je; j++) {
            int64_t kg = pp_attn_koff(L, b, hh, pp_attn_krow(L, &G, j));
            float sj = pp_attn_dot32(qr, L->k + kg, d), dp = pp_attn_dot32(go, L->v + kg, d);
            float p = pp_attn_bwd_p(pp_attn_flash_s(&L->sc, sj), lse);
            P[j] = pp_attn_store(L->f, p);
            dS[j] = pp_attn_store(L->f, pp_attn_bwd_ds(p, dp, D));
        }
    }
    for (int64_t j = je + 1; j < G.nk; j++)
        P[j] = dS[j] = 0.0f;
}

// Unfused dP_xy = RN_F(acc) of dout_x·v_y, into DS.
PP_HD static inline void pp_attn_t_unf_dp(const pp_attn_launch *L, int64_t t)
{
    int64_t y = t % L->BK, b, hh, x;
    int r;
    pp_attn_geom G;
    if (!pp_attn_row(L, t / L->BK, &b, &hh, &r, &x, &G) || y > pp_attn_jend(&G, x))
        return;
    const float *go = L->go + pp_attn_qoff(L, b, hh, pp_attn_qrow(L, &G, x));
    const float *vr = L->v + pp_attn_koff(L, b, hh, pp_attn_krow(L, &G, y));
    L->DS[t] = L->accum == PP_ATTN_ACC_FP32 ? pp_attn_store(L->f, pp_attn_dot32(go, vr, L->d))
                                            : (float)pp_attn_dot_storage(L->f, go, vr, L->d);
}

// The unfused branch of the row loop after P (SP) and dP (DS): D, then dS in place.
PP_HD static inline void pp_attn_t_unf_bwd_row(const pp_attn_launch *L, int64_t t)
{
    int64_t b, hh, x;
    int r;
    pp_attn_geom G;
    if (!pp_attn_row(L, t, &b, &hh, &r, &x, &G))
        return;
    float *P = L->SP + t * L->BK, *dS = L->DS + t * L->BK;
    int64_t je = pp_attn_bwd_row_dead(L, &G, b, hh, x) ? -1 : pp_attn_jend(&G, x);
    if (je >= 0) {
        float D = 0.0f;
        for (int64_t j = 0; j <= je; j++)
            D = pp_attn_softmax_bwd_d_step(L->f, L->softmax, D, dS[j], P[j]);
        for (int64_t j = 0; j <= je; j++)
            dS[j] = pp_attn_softmax_bwd_dx(L->f, L->softmax, dS[j], P[j], D, L->sc.L, L->sc.A);
    }
    for (int64_t j = je + 1; j < G.nk; j++)
        P[j] = dS[j] = 0.0f;
}

// The CPU's attn_col_chain for one output element: y = chain over terms of coef·x, epilogue.
typedef struct pp_attn_chain {
    int storage, post_round;
    float alpha;
    float facc;
    double dacc;
} pp_attn_chain;

PP_HD static inline void pp_attn_chain_step(const pp_attn_launch *L, pp_attn_chain *C, float coef, float x)
{
    if (C->storage)
        C->dacc = pp_gemm_step_storage(L->f, coef, x, C->dacc);
    else
        C->facc = fmaf(coef, x, C->facc);
}

PP_HD static inline float pp_attn_chain_end(const pp_attn_launch *L, const pp_attn_chain *C)
{
    if (C->storage)
        return C->alpha != 1.0f ? pp_attn_mul_store(L->f, C->alpha, (float)C->dacc) : (float)C->dacc;
    float t = C->post_round ? pp_attn_store(L->f, C->facc) : C->facc;
    return C->alpha != 1.0f || !C->post_round ? pp_attn_mul_store(L->f, C->alpha, t) : t;
}

PP_HD static inline pp_attn_chain pp_attn_chain_start(const pp_attn_launch *L, float alpha, int post_round)
{
    pp_attn_chain C;
    C.storage = L->kernel == PP_ATTN_UNFUSED && L->accum == PP_ATTN_ACC_STORAGE;
    C.post_round = post_round;
    C.alpha = alpha;
    C.facc = 0.0f;
    C.dacc = 0.0;
    return C;
}

// The backward's GEMM alpha (baddbmm's backward multiplies by it): α32 for post, else 1.
PP_HD static inline float pp_attn_bwd_alpha(const pp_attn_launch *L)
{
    return L->scale == PP_ATTN_SCALE_POST ? L->sc.alpha32 : 1.0f;
}

// dq'_xe: chain over j ≤ je of dS_xj·k'_je (0 for a dead row, as the CPU's `continue`).
PP_HD static inline void pp_attn_t_bwd_dq(const pp_attn_launch *L, int64_t t)
{
    int64_t e = t % L->d, rt = t / L->d, b, hh, x;
    int r;
    pp_attn_geom G;
    if (!pp_attn_row(L, rt, &b, &hh, &r, &x, &G))
        return;
    float *y = L->dqb + pp_attn_qoff(L, b, hh, pp_attn_qrow(L, &G, x)) + e;
    if (pp_attn_bwd_row_dead(L, &G, b, hh, x)) {
        *y = 0.0f;
        return;
    }
    int flash = L->kernel == PP_ATTN_FLASH;
    pp_attn_chain C = pp_attn_chain_start(L, pp_attn_bwd_alpha(L), !flash);
    const float *dS = L->DS + rt * L->BK;
    for (int64_t j = 0; j <= pp_attn_jend(&G, x); j++)
        pp_attn_chain_step(L, &C, dS[j], L->k[pp_attn_koff(L, b, hh, pp_attn_krow(L, &G, j)) + e]);
    *y = pp_attn_chain_end(L, &C);
}

// dv_ye and dk'_ye of q head hh: chains over the block rows that see key y, increasing.
PP_HD static inline void pp_attn_t_bwd_dkv(const pp_attn_launch *L, int64_t t)
{
    int64_t e = t % L->d, rest = t / L->d, y = rest % L->BK;
    rest /= L->BK;
    int r = (int)(rest % L->R);
    int64_t hh = (rest / L->R) % L->h, b = rest / (L->R * L->h);
    pp_attn_geom G;
    pp_attn_geom_of(L, r, &G);
    if (y >= G.nk)
        return;
    int64_t i0 = 0;
    if (G.causal && y - G.off > 0)
        i0 = y - G.off;
    if (i0 > G.nq)
        i0 = G.nq;
    int flash = L->kernel == PP_ATTN_FLASH;
    pp_attn_chain cv = pp_attn_chain_start(L, 1.0f, 1);
    pp_attn_chain ck = pp_attn_chain_start(L, pp_attn_bwd_alpha(L), !flash);
    int64_t base = pp_attn_blk_row(L, b, hh, r, 0) * L->BK + y;
    for (int64_t x = i0; x < G.nq; x++) {
        int64_t qo = pp_attn_qoff(L, b, hh, pp_attn_qrow(L, &G, x)) + e;
        pp_attn_chain_step(L, &cv, L->SP[base + x * L->BK], L->go[qo]);
        pp_attn_chain_step(L, &ck, L->DS[base + x * L->BK], L->q[qo]);
    }
    L->dvh[t] = pp_attn_chain_end(L, &cv);
    L->dkh[t] = pp_attn_chain_end(L, &ck);
}

// Plain: dq = the prescale's backward of dq' (attn_scale_rows: a copy when s_q = 1).
PP_HD static inline void pp_attn_t_plain_dq(const pp_attn_launch *L, int64_t t)
{
    float x = L->dqb[t];
    L->dq[t] = L->sc.s_q == 1.0f ? x : pp_attn_mul_store(L->f, L->sc.s_q, x);
}

// Sum over the group's q heads (in order, from +0) of the per-head dk', dv at block key y.
PP_HD static inline void pp_attn_group_sum(const pp_attn_launch *L, int64_t b, int64_t g, int r, int64_t y, int64_t e,
                                           float *dk, float *dv)
{
    float sk = 0.0f, sv = 0.0f;
    for (int64_t hh = g * L->grp; hh < (g + 1) * L->grp; hh++) {
        int64_t i = (((b * L->h + hh) * L->R + r) * L->BK + y) * L->d + e;
        sk = sk + L->dkh[i];
        sv = sv + L->dvh[i];
    }
    *dk = sk;
    *dv = sv;
}

// Plain: dk = RN_F(s_k ⊗ RN_F(Σ dk')), dv = RN_F(Σ dv), t over [b][h_kv][s_kv][d].
PP_HD static inline void pp_attn_t_plain_dkv(const pp_attn_launch *L, int64_t t)
{
    int64_t e = t % L->d, j = (t / L->d) % L->skv, g = (t / (L->d * L->skv)) % L->h_kv;
    int64_t b = t / (L->d * L->skv * L->h_kv);
    float sk, sv;
    pp_attn_group_sum(L, b, g, 0, j, e, &sk, &sv);
    L->dk[t] = pp_attn_mul_store(L->f, L->sc.s_k, pp_attn_store(L->f, sk));
    L->dv[t] = pp_attn_store(L->f, sv);
}

// CP forward, after step i's block: the running lse of each row the step touched.
PP_HD static inline void pp_attn_t_cp_lse(const pp_attn_launch *L, int64_t t)
{
    if (!pp_attn_cp_touched(L, t % L->sq))
        return;
    float li = L->Lse[t];
    L->run_lse[t] = L->step == 0 ? li : pp_attn_cp_lse_merge(L->run_lse[t], li);
}

// CP forward, after the ring: out = RN_F(acc), acc the step-ordered merge of the partials.
PP_HD static inline void pp_attn_t_cp_out(const pp_attn_launch *L, int64_t t)
{
    int64_t row = t / L->d, s = row % L->sq, n = L->b * L->h * L->sq;
    pp_attn_launch Li = *L;
    float acc = 0.0f, lse = L->run_lse[row];
    for (int i = 0; i < L->W; i++) {
        Li.step = i;
        if (pp_attn_cp_touched(&Li, s))
            acc = pp_attn_cp_out_step(L->cp_accum, acc, L->Oall[i * n * L->d + t], L->Lall[i * n + row], lse);
    }
    L->out[t] = pp_attn_store(L->f, acc);
}

// CP backward step i: dq_acc = RN_C(dq_acc ⊕ dq'_i) for the rows the step touched.
PP_HD static inline void pp_attn_t_cp_dq(const pp_attn_launch *L, int64_t t)
{
    if (pp_attn_cp_touched(L, (t / L->d) % L->sq))
        L->acc_dq[t] = pp_attn_cp_grad_step(L->cp_grad_accum, L->acc_dq[t], L->dqb[t]);
}

// CP backward step i: the group-summed dk', dv of rank r's block, RN_F, into the accumulators of
// the kv rows (block o's, travelling the ring).
PP_HD static inline void pp_attn_t_cp_dkv(const pp_attn_launch *L, int64_t t)
{
    int64_t e = t % L->d, rest = t / L->d, y = rest % L->BK;
    rest /= L->BK;
    int r = (int)(rest % L->R);
    int64_t g = (rest / L->R) % L->h_kv, b = rest / (L->R * L->h_kv);
    pp_attn_geom G;
    pp_attn_geom_of(L, r, &G);
    if (y >= G.nk)
        return;
    float sk, sv;
    pp_attn_group_sum(L, b, g, r, y, e, &sk, &sv);
    int64_t gx = ((b * L->h_kv + g) * L->skv + pp_attn_krow(L, &G, y)) * L->d + e;
    L->acc_dk[gx] = pp_attn_cp_grad_step(L->cp_grad_accum, L->acc_dk[gx], pp_attn_store(L->f, sk));
    L->acc_dv[gx] = pp_attn_cp_grad_step(L->cp_grad_accum, L->acc_dv[gx], pp_attn_store(L->f, sv));
}

PP_HD static inline void pp_attn_t_cp_final_dq(const pp_attn_launch *L, int64_t t)
{
    L->dq[t] = pp_attn_mul_store(L->f, L->sc.s_q, pp_attn_store(L->f, L->acc_dq[t]));
}

PP_HD static inline void pp_attn_t_cp_final_dkv(const pp_attn_launch *L, int64_t t)
{
    L->dk[t] = pp_attn_mul_store(L->f, L->sc.s_k, pp_attn_store(L->f, L->acc_dk[t]));
    L->dv[t] = pp_attn_store(L->f, L->acc_dv[t]);
}

// Engine cublas: the masked entries of P (and whole rows that see no key) become +0, since the
// device's P·V GEMM reads every entry of the block, as torch's bmm after a masked softmax does.
PP_HD static inline void pp_attn_t_unf_zero_masked(const pp_attn_launch *L, int64_t t)
{
    int64_t y = t % L->BK, b, hh, x;
    int r;
    pp_attn_geom G;
    if (!pp_attn_row(L, t / L->BK, &b, &hh, &r, &x, &G) || y > pp_attn_jend(&G, x))
        L->SP[t] = 0.0f;
}

// ---------------------------------------------------------------------------------------------
// Thread t of launch L.
PP_HD static inline void pp_attn_thread(const pp_attn_launch *L, int64_t t)
{
    switch (L->op) {
    case PP_AT_GATHER: pp_attn_t_gather(L, t); break;
    case PP_AT_FILL0: L->dst[t] = 0.0f; break;
    case PP_AT_UNF_SCORES: pp_attn_t_unf_scores(L, t); break;
    case PP_AT_UNF_PB_ROW: pp_attn_t_unf_pb_row(L, t); break;
    case PP_AT_UNF_PB_BLOCK: pp_attn_t_unf_pb_block(L, t); break;
    case PP_AT_UNF_SOFTMAX: pp_attn_t_unf_softmax(L, t); break;
    case PP_AT_UNF_PV: pp_attn_t_unf_pv(L, t); break;
    case PP_AT_FLASH_FWD: pp_attn_t_flash_fwd(L, t); break;
    case PP_AT_FLASH_BWD_ROW: pp_attn_t_flash_bwd_row(L, t); break;
    case PP_AT_UNF_DP: pp_attn_t_unf_dp(L, t); break;
    case PP_AT_UNF_BWD_ROW: pp_attn_t_unf_bwd_row(L, t); break;
    case PP_AT_BWD_DQ: pp_attn_t_bwd_dq(L, t); break;
    case PP_AT_BWD_DKV: pp_attn_t_bwd_dkv(L, t); break;
    case PP_AT_PLAIN_DQ: pp_attn_t_plain_dq(L, t); break;
    case PP_AT_PLAIN_DKV: pp_attn_t_plain_dkv(L, t); break;
    case PP_AT_CP_LSE: pp_attn_t_cp_lse(L, t); break;
    case PP_AT_CP_OUT: pp_attn_t_cp_out(L, t); break;
    case PP_AT_CP_DQ: pp_attn_t_cp_dq(L, t); break;
    case PP_AT_CP_DKV: pp_attn_t_cp_dkv(L, t); break;
    case PP_AT_CP_FINAL_DQ: pp_attn_t_cp_final_dq(L, t); break;
    case PP_AT_CP_FINAL_DKV: pp_attn_t_cp_final_dkv(L, t); break;
    case PP_AT_UNF_ZERO_MASKED: pp_attn_t_unf_zero_masked(L, t); break;
    case PP_AT_SCALE: L->dst[t] = pp_attn_mul_store(L->f, L->gscale, L->src[t]); break;
    default: break;
    }
}

#endif
