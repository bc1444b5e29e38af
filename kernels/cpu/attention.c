// cpu/attention.c — the loops of the CPU attention emulation: per (batch, kv-head group) task,
// the unfused or flash kernel on a (q block, kv block, mask), forward and backward, and the TE
// context-parallel ring built from the same kernel. Steps and orders: kernels/attention.h.
#include "attention.h"
#include "attention_check.h"
#include "parallel.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define ATTN_HAVE_AVX2 1
#endif

// ---------------------------------------------------------------------------------------------
// The one vector primitive: y_c = fma(a, x_c, y_c) for c < n. Each lane is an independent
// chain, so vectorising across c never changes an element's order of operations.

typedef void (*attn_axpy_fn)(float a, const float *x, float *y, int64_t n);

static void attn_axpy_portable(float a, const float *x, float *y, int64_t n)
{
    for (int64_t c = 0; c < n; c++)
        y[c] = fmaf(a, x[c], y[c]);
}

#ifdef ATTN_HAVE_AVX2
__attribute__((target("avx2,fma"))) static void attn_axpy_avx2(float a, const float *x, float *y, int64_t n)
{
    __m256 va = _mm256_set1_ps(a);
    int64_t c = 0;
    for (; c + 8 <= n; c += 8)
        _mm256_storeu_ps(y + c, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + c), _mm256_loadu_ps(y + c)));
    for (; c < n; c++)
        y[c] = fmaf(a, x[c], y[c]);  // vfmadd213ss here: the same single rounding
}
#endif

static attn_axpy_fn attn_pick_axpy(int portable)
{
#ifdef ATTN_HAVE_AVX2
    if (!portable && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return attn_axpy_avx2;
#endif
    (void)portable;
    return attn_axpy_portable;
}

// ---------------------------------------------------------------------------------------------
// A kernel call: one q head's block of nq rows against a kv block of nk rows, d columns.

typedef struct attn_kern {
    const pp_attn_variant *v;
    pp_attn_scalars sc;
    pp_format_id f;
    int64_t d;
    int bn;
    attn_axpy_fn axpy;
} attn_kern;

typedef struct attn_blk {
    const float *q;         // [nq][d] (prescaled q')
    const float *k, *kT;    // [nk][d], [d][nk] (prescaled k')
    const float *v, *vT;    // [nk][d], [d][nk]
    int64_t nq, nk;
    int causal;
    int64_t off;            // row i sees j ≤ i + off when causal
} attn_blk;

// Last visible key of row i, or −1 for none.
static int64_t attn_jend(const attn_blk *B, int64_t i)
{
    if (!B->causal)
        return B->nk - 1;
    int64_t e = i + B->off;
    return e < B->nk - 1 ? (e < -1 ? -1 : e) : B->nk - 1;
}

// acc[j − j0] = fma chain over c of a_c·xT[c][j] for j in [j0, j1) (xT row-major [d][nk]).
static void attn_dots_fp32(const attn_kern *K, const float *a, const float *xT, int64_t nk,
                           int64_t j0, int64_t j1, float *acc)
{
    for (int64_t j = j0; j < j1; j++)
        acc[j - j0] = 0.0f;
    for (int64_t c = 0; c < K->d; c++)
        K->axpy(a[c], xT + c * nk + j0, acc, j1 - j0);
}

// The same with a storage-format accumulator (one rounding per step), as values of F.
static void attn_dots_storage(const attn_kern *K, const float *a, const float *x, int64_t j0,
                              int64_t j1, double *acc)
{
    for (int64_t j = j0; j < j1; j++) {
        double s = 0.0;
        for (int64_t c = 0; c < K->d; c++)
            s = pp_gemm_step_storage(K->f, a[c], x[j * K->d + c], s);
        acc[j - j0] = s;
    }
}

// ---------------------------------------------------------------------------------------------
// Unfused forward

// Scores S_ij (values of F) of row i for j in [0, je], into S.
static void unf_scores_row(const attn_kern *K, const attn_blk *B, int64_t i, int64_t je, float *S,
                           float *facc, double *dacc)
{
    if (je < 0)
        return;
    if (K->v->accum == PP_ATTN_ACC_FP32) {
        attn_dots_fp32(K, B->q + i * K->d, B->kT, B->nk, 0, je + 1, facc);
        for (int64_t j = 0; j <= je; j++)
            S[j] = pp_attn_score_fp32(K->f, &K->sc, facc[j]);
    } else {
        attn_dots_storage(K, B->q + i * K->d, B->k, 0, je + 1, dacc);
        for (int64_t j = 0; j <= je; j++)
            S[j] = pp_attn_score_storage(K->f, &K->sc, dacc[j]);
    }
}

// PB-Relax's M: max |S_ij| over the block's visible scores (0 without pb-relax).
static float unf_pb_max(const attn_kern *K, const attn_blk *B, float *S, float *facc, double *dacc)
{
    if (K->v->max_subtract != PP_ATTN_MAX_PB_RELAX)
        return 0.0f;
    float M = 0.0f;
    for (int64_t i = 0; i < B->nq; i++) {
        int64_t je = attn_jend(B, i);
        unf_scores_row(K, B, i, je, S, facc, dacc);
        for (int64_t j = 0; j <= je; j++)
            if (fabsf(S[j]) > M || S[j] != S[j])
                M = fabsf(S[j]);
    }
    return M;
}

// Row i's probabilities P[0..je] (values of F) and its lse. Returns je.
static int64_t unf_probs_row(const attn_kern *K, const attn_blk *B, int64_t i, float M, float *P,
                             float *lse, float *facc, double *dacc)
{
    const pp_attn_variant *v = K->v;
    int64_t je = attn_jend(B, i);
    if (je < 0) {
        *lse = -INFINITY;
        return je;
    }
    unf_scores_row(K, B, i, je, P, facc, dacc);
    int pb = v->max_subtract == PP_ATTN_MAX_PB_RELAX;
    for (int64_t j = 0; j <= je; j++) {
        float t = pb ? pp_attn_pb_relax(K->f, v->softmax, P[j], M, K->sc.A) : P[j];
        P[j] = pp_attn_layer_scale(K->f, v->softmax, t, K->sc.L);
    }
    float m = 0.0f;
    if (v->max_subtract != PP_ATTN_MAX_NONE) {
        m = P[0];
        for (int64_t j = 1; j <= je; j++)
            m = P[j] > m || P[j] != P[j] ? P[j] : m;  // NaN propagates, as CUDA's fmaxf would not
    }
    float sum = 0.0f;
    for (int64_t j = 0; j <= je; j++) {
        P[j] = pp_attn_softmax_exp(K->f, v->softmax, P[j], m);
        sum = pp_attn_softmax_sum_step(K->f, v->softmax, sum, P[j]);
    }
    for (int64_t j = 0; j <= je; j++)
        P[j] = pp_attn_softmax_prob(K->f, P[j], sum);
    float shift = pb ? (M * K->sc.A) * K->sc.L : 0.0f;
    *lse = pp_attn_lse(m, sum, shift);
    return je;
}

// out_ic = RN_F(Σ_j P_j·v_jc) over j ≤ je, in order (fp32 or storage accumulation).
static void attn_pv_row(const attn_kern *K, const attn_blk *B, const float *P, int64_t je, float *o,
                        double *dacc)
{
    int64_t d = K->d;
    if (K->v->accum == PP_ATTN_ACC_FP32) {
        for (int64_t c = 0; c < d; c++)
            o[c] = 0.0f;
        for (int64_t j = 0; j <= je; j++)
            K->axpy(P[j], B->v + j * d, o, d);
        for (int64_t c = 0; c < d; c++)
            o[c] = pp_attn_store(K->f, o[c]);
    } else {
        for (int64_t c = 0; c < d; c++)
            dacc[c] = 0.0;
        for (int64_t j = 0; j <= je; j++)
            for (int64_t c = 0; c < d; c++)
                dacc[c] = pp_gemm_step_storage(K->f, P[j], B->v[j * d + c], dacc[c]);
        for (int64_t c = 0; c < d; c++)
            o[c] = (float)dacc[c];
    }
}

// ---------------------------------------------------------------------------------------------
// Flash forward: one row at a time through the key tiles (block_m never changes a result).

static void flash_row(const attn_kern *K, const attn_blk *B, int64_t i, float *o, float *lse,
                      float *s)
{
    int64_t d = K->d, je = attn_jend(B, i);
    int none = K->v->max_subtract == PP_ATTN_MAX_NONE;
    float m = none ? 0.0f : -INFINITY, l = 0.0f;
    for (int64_t c = 0; c < d; c++)
        o[c] = 0.0f;
    for (int64_t j0 = 0; j0 <= je; j0 += K->bn) {
        int64_t j1 = j0 + K->bn <= je + 1 ? j0 + K->bn : je + 1;
        attn_dots_fp32(K, B->q + i * d, B->kT, B->nk, j0, j1, s);
        float mn = m;
        for (int64_t j = 0; j < j1 - j0; j++) {
            s[j] = pp_attn_flash_s(&K->sc, s[j]);
            if (!none && (s[j] > mn || s[j] != s[j]))
                mn = s[j];
        }
        float corr = none ? 1.0f : pp_attn_flash_corr(m, mn);
        pp_attn_flash_rescale(o, d, &l, corr);
        for (int64_t j = 0; j < j1 - j0; j++) {
            float p = pp_attn_flash_p(s[j], mn);
            l = l + p;
            K->axpy(pp_attn_store(K->f, p), B->v + (j0 + j) * d, o, d);
        }
        m = mn;
    }
    pp_attn_flash_finish(K->f, je >= 0, m, l, o, d, lse);
}

// ---------------------------------------------------------------------------------------------
// Forward of a block: out [nq][d] (values of F), lse [nq].

typedef struct attn_work {
    float *row, *facc, *o;  // [nk], [nk], [d]
    double *dacc;           // [max(nk, d)]
    float *Pm, *dSm;        // backward: [nq][nk] each
} attn_work;

static void attn_fwd_block(const attn_kern *K, const attn_blk *B, float *out, float *lse, attn_work *w)
{
    if (K->v->kernel == PP_ATTN_FLASH) {
        for (int64_t i = 0; i < B->nq; i++)
            flash_row(K, B, i, out + i * K->d, lse + i, w->facc);
        return;
    }
    float M = unf_pb_max(K, B, w->row, w->facc, w->dacc);
    for (int64_t i = 0; i < B->nq; i++) {
        int64_t je = unf_probs_row(K, B, i, M, w->row, lse + i, w->facc, w->dacc);
        if (je < 0) {
            for (int64_t c = 0; c < K->d; c++)
                out[i * K->d + c] = 0.0f;
            continue;
        }
        attn_pv_row(K, B, w->row, je, out + i * K->d, w->dacc);
    }
}

// ---------------------------------------------------------------------------------------------
// Backward of a block: dq' [nq][d], dk', dv [nk][d] (values of F, before the prescale's
// backward and the GQA group sum), given out, lse, dout of the rows.

// y_c = chain over the listed rows r of a_r·X[r][c] (fp32 or storage), then the epilogue:
// post_round: y = RN_F(acc) first; then, alpha != 1: y = RN_F(alpha ⊗ y).
static void attn_col_chain(const attn_kern *K, const float *coef, int64_t stride, int64_t r0,
                           int64_t r1, const float *X, float alpha, int post_round, float *y,
                           double *dacc)
{
    int64_t d = K->d;
    int storage = K->v->kernel == PP_ATTN_UNFUSED && K->v->accum == PP_ATTN_ACC_STORAGE;
    if (!storage) {
        for (int64_t c = 0; c < d; c++)
            y[c] = 0.0f;
        for (int64_t r = r0; r < r1; r++)
            K->axpy(coef[r * stride], X + r * d, y, d);
        for (int64_t c = 0; c < d; c++) {
            float t = post_round ? pp_attn_store(K->f, y[c]) : y[c];
            y[c] = alpha != 1.0f || !post_round ? pp_attn_mul_store(K->f, alpha, t) : t;
        }
    } else {
        for (int64_t c = 0; c < d; c++)
            dacc[c] = 0.0;
        for (int64_t r = r0; r < r1; r++)
            for (int64_t c = 0; c < d; c++)
                dacc[c] = pp_gemm_step_storage(K->f, coef[r * stride], X[r * d + c], dacc[c]);
        for (int64_t c = 0; c < d; c++)
            y[c] = alpha != 1.0f ? pp_attn_mul_store(K->f, alpha, (float)dacc[c]) : (float)dacc[c];
    }
}

static void attn_bwd_block(const attn_kern *K, const attn_blk *B, const float *out, const float *lse,
                           const float *dout, float *dq, float *dk, float *dv, attn_work *w)
{
    int64_t d = K->d, nk = B->nk;
    int flash = K->v->kernel == PP_ATTN_FLASH;
    int post = K->v->scale == PP_ATTN_SCALE_POST;
    float alpha = post ? K->sc.alpha32 : 1.0f;
    float M = flash ? 0.0f : unf_pb_max(K, B, w->row, w->facc, w->dacc);
    // rows: P, dS (values of F) and dq'
    for (int64_t i = 0; i < B->nq; i++) {
        float *P = w->Pm + i * nk, *dS = w->dSm + i * nk;
        const float *go = dout + i * d;
        int64_t je = attn_jend(B, i);
        if (je < 0 || lse[i] == -INFINITY) {
            for (int64_t j = 0; j < nk; j++)
                P[j] = dS[j] = 0.0f;
            for (int64_t c = 0; c < d; c++)
                dq[i * d + c] = 0.0f;
            continue;
        }
        if (flash) {
            float D = 0.0f;
            for (int64_t c = 0; c < d; c++)
                D = fmaf(go[c], out[i * d + c], D);
            attn_dots_fp32(K, B->q + i * d, B->kT, nk, 0, je + 1, w->row);  // s_ij (unscaled)
            attn_dots_fp32(K, go, B->vT, nk, 0, je + 1, w->facc);           // dP_ij
            for (int64_t j = 0; j <= je; j++) {
                float p = pp_attn_bwd_p(pp_attn_flash_s(&K->sc, w->row[j]), lse[i]);
                P[j] = pp_attn_store(K->f, p);
                dS[j] = pp_attn_store(K->f, pp_attn_bwd_ds(p, w->facc[j], D));
            }
        } else {
            float lse_unused;
            unf_probs_row(K, B, i, M, P, &lse_unused, w->facc, w->dacc);
            float *dP = w->row;
            if (K->v->accum == PP_ATTN_ACC_FP32) {
                attn_dots_fp32(K, go, B->vT, nk, 0, je + 1, w->facc);
                for (int64_t j = 0; j <= je; j++)
                    dP[j] = pp_attn_store(K->f, w->facc[j]);
            } else {
                attn_dots_storage(K, go, B->v, 0, je + 1, w->dacc);
                for (int64_t j = 0; j <= je; j++)
                    dP[j] = (float)w->dacc[j];
            }
            pp_attn_softmax sm = K->v->softmax;
            float D = 0.0f;
            for (int64_t j = 0; j <= je; j++)
                D = pp_attn_softmax_bwd_d_step(K->f, sm, D, dP[j], P[j]);
            for (int64_t j = 0; j <= je; j++)
                dS[j] = pp_attn_softmax_bwd_dx(K->f, sm, dP[j], P[j], D, K->sc.L, K->sc.A);
        }
        for (int64_t j = je + 1; j < nk; j++)
            P[j] = dS[j] = 0.0f;
        // dq'_ic: chain over j ≤ je of dS_ij·k'_jc
        attn_col_chain(K, dS, 1, 0, je + 1, B->k, alpha, !flash, dq + i * d, w->dacc);
    }
    // columns: dv_j, dk'_j over the rows that see key j, in increasing i
    for (int64_t j = 0; j < nk; j++) {
        int64_t i0 = 0;
        if (B->causal && j - B->off > 0)
            i0 = j - B->off;
        if (i0 > B->nq)
            i0 = B->nq;
        attn_col_chain(K, w->Pm + j, nk, i0, B->nq, dout, 1.0f, 1, dv + j * d, w->dacc);
        attn_col_chain(K, w->dSm + j, nk, i0, B->nq, B->q, alpha, !flash, dk + j * d, w->dacc);
    }
}

// ---------------------------------------------------------------------------------------------
// Tasks: one (batch, kv head) with every q head of its group

typedef struct attn_job {
    attn_kern K;
    const pp_attn_dims *dm;
    int backward, cp;  // cp: run the ring simulation with world W
    int W;
    const double *q, *k, *v, *dout;
    double *out, *lse, *dq, *dk, *dv;
    int failed;  // set (racy but monotonic, any thread) when a task could not allocate
    pthread_mutex_t mu;
} attn_job;

// x[(b, s, hh, :)] of a [b, S, H, d] tensor, rows s in [0, S), as floats.
static void attn_gather(const double *x, int64_t b, int64_t S, int64_t H, int64_t hh, int64_t d,
                        float *y)
{
    for (int64_t s = 0; s < S; s++)
        for (int64_t c = 0; c < d; c++)
            y[s * d + c] = (float)x[((b * S + s) * H + hh) * d + c];
}

static void attn_scatter(double *x, int64_t b, int64_t S, int64_t H, int64_t hh, int64_t d,
                         const float *y)
{
    for (int64_t s = 0; s < S; s++)
        for (int64_t c = 0; c < d; c++)
            x[((b * S + s) * H + hh) * d + c] = (double)y[s * d + c];
}

static void attn_transpose(const float *x, int64_t n, int64_t d, float *xT)
{
    for (int64_t r = 0; r < n; r++)
        for (int64_t c = 0; c < d; c++)
            xT[c * n + r] = x[r * d + c];
}

// y = RN_F(RN_32(s·x)) element-wise (the prescale and its backward); copies when s = 1.
static void attn_scale_rows(pp_format_id f, float s, const float *x, int64_t n, float *y)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = s == 1.0f ? x[i] : pp_attn_mul_store(f, s, x[i]);
}

typedef struct attn_bufs {
    float *k, *kT, *v, *vT;              // the group's kv (prescaled k), full sequence
    float *q, *go, *o, *ls;              // one q head: q', dout, out, lse (full sequence)
    float *dq, *dkh, *dvh, *dkg, *dvg;   // per-head grads and the group's fp32 sums
    float *bk, *bkT, *bv, *bvT, *bq, *bgo, *bo, *bls, *bdq;  // CP step blocks
    float *cp_o, *cp_l;                  // CP: per step partials [W][2c][d], [W][2c]
    float *cp_dq, *cp_dk, *cp_dv;        // CP accumulators
    attn_work w;
} attn_bufs;

static void *attn_alloc(size_t n, int *bad)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        *bad = 1;
    return p;
}

// ---- non-CP: the kernel on the whole sequence

static void attn_task_plain(attn_job *J, attn_bufs *U, int64_t b, int64_t g)
{
    const pp_attn_dims *dm = J->dm;
    int64_t d = dm->d, sq = dm->s_q, skv = dm->s_kv, grp = dm->h / dm->h_kv;
    const attn_kern *K = &J->K;
    attn_blk B = {U->q, U->k, U->kT, U->v, U->vT, sq, skv, dm->causal, skv - sq};
    for (int64_t c = 0; c < skv * d; c++)
        U->dkg[c] = U->dvg[c] = 0.0f;
    for (int64_t hh = g * grp; hh < (g + 1) * grp; hh++) {
        attn_gather(J->q, b, sq, dm->h, hh, d, U->o);
        attn_scale_rows(K->f, K->sc.s_q, U->o, sq * d, U->q);
        attn_fwd_block(K, &B, U->o, U->ls, &U->w);
        attn_scatter(J->out, b, sq, dm->h, hh, d, U->o);
        for (int64_t i = 0; i < sq; i++)
            J->lse[(b * dm->h + hh) * sq + i] = (double)U->ls[i];
        if (!J->backward)
            continue;
        attn_gather(J->dout, b, sq, dm->h, hh, d, U->go);
        attn_bwd_block(K, &B, U->o, U->ls, U->go, U->dq, U->dkh, U->dvh, &U->w);
        attn_scale_rows(K->f, K->sc.s_q, U->dq, sq * d, U->dq);
        attn_scatter(J->dq, b, sq, dm->h, hh, d, U->dq);
        for (int64_t c = 0; c < skv * d; c++) {
            U->dkg[c] = U->dkg[c] + U->dkh[c];
            U->dvg[c] = U->dvg[c] + U->dvh[c];
        }
    }
    if (!J->backward)
        return;
    for (int64_t c = 0; c < skv * d; c++) {
        U->dkg[c] = pp_attn_mul_store(K->f, K->sc.s_k, pp_attn_store(K->f, U->dkg[c]));
        U->dvg[c] = pp_attn_store(K->f, U->dvg[c]);
    }
    attn_scatter(J->dk, b, skv, dm->h_kv, g, d, U->dkg);
    attn_scatter(J->dv, b, skv, dm->h_kv, g, d, U->dvg);
}

// ---- CP: the TE ring (shared/notes/te-context-parallel.md §1.2–1.4)

// Copies chunk ch (c rows) of x [S][d] to y at row offset r0.
static void cp_chunk(const float *x, int64_t ch, int64_t c, int64_t d, float *y, int64_t r0)
{
    memcpy(y + r0 * d, x + ch * c * d, (size_t)(c * d) * sizeof *y);
}

// The step type at forward step i of rank r: 0 diagonal (causal, full q × full kv),
// 1 full q × first kv chunk, 2 second-half q × full kv; non-causal: 3 full × full, no mask.
static int cp_step_type(int causal, int r, int i)
{
    if (!causal)
        return 3;
    return i == 0 ? 0 : i <= r ? 1 : 2;
}

// Sets up the step's kv block (KV of rank o) and q block (rank r) for step type t.
static void cp_setup(attn_job *J, attn_bufs *U, int W, int r, int o, int t, int64_t c,
                     attn_blk *B, int64_t *q0, int64_t *nq)
{
    int64_t d = J->dm->d;
    int64_t nk = t == 1 ? c : 2 * c;
    cp_chunk(U->k, o, c, d, U->bk, 0);
    cp_chunk(U->v, o, c, d, U->bv, 0);
    if (nk == 2 * c) {
        cp_chunk(U->k, 2 * W - 1 - o, c, d, U->bk, c);
        cp_chunk(U->v, 2 * W - 1 - o, c, d, U->bv, c);
    }
    attn_transpose(U->bk, nk, d, U->bkT);
    attn_transpose(U->bv, nk, d, U->bvT);
    *q0 = t == 2 ? c : 0;  // local row offset of the q block
    *nq = t == 2 ? c : 2 * c;
    (void)r;
    *B = (attn_blk){U->bq + *q0 * d, U->bk, U->bkT, U->bv, U->bvT, *nq, nk, t == 0, 0};
}

// Local rows of rank r (chunks r, 2W−1−r) of a full-sequence [S][d] array, into y [2c][d].
static void cp_local(const float *x, int W, int r, int64_t c, int64_t d, float *y)
{
    cp_chunk(x, r, c, d, y, 0);
    cp_chunk(x, 2 * W - 1 - r, c, d, y, c);
}

static void cp_unlocal(const float *y, int W, int r, int64_t c, int64_t d, float *x)
{
    memcpy(x + r * c * d, y, (size_t)(c * d) * sizeof *x);
    memcpy(x + (2 * W - 1 - r) * c * d, y + c * d, (size_t)(c * d) * sizeof *x);
}

static void attn_task_cp(attn_job *J, attn_bufs *U, int64_t b, int64_t g)
{
    const pp_attn_dims *dm = J->dm;
    const attn_kern *K = &J->K;
    int W = J->W;
    int64_t d = dm->d, S = dm->s_q, c = S / (2 * W), grp = dm->h / dm->h_kv;
    pp_format_id ca = J->K.v->cp_accum, cg = J->K.v->cp_grad_accum;
    attn_blk B;
    int64_t q0, nq;
    // forward, per q head and rank: W steps, lse merge in step order, out merge after the ring
    for (int64_t hh = g * grp; hh < (g + 1) * grp; hh++) {
        attn_gather(J->q, b, S, dm->h, hh, d, U->o);
        attn_scale_rows(K->f, K->sc.s_q, U->o, S * d, U->q);
        for (int r = 0; r < W; r++) {
            cp_local(U->q, W, r, c, d, U->bq);
            float *lse = U->bls;  // running lse [2c]
            for (int i = 0; i < W; i++) {
                int t = cp_step_type(dm->causal, r, i);
                cp_setup(J, U, W, r, ((r - i) % W + W) % W, t, c, &B, &q0, &nq);
                float *oi = U->cp_o + (int64_t)i * 2 * c * d, *li = U->cp_l + (int64_t)i * 2 * c;
                attn_fwd_block(K, &B, oi + q0 * d, li + q0, &U->w);
                for (int64_t x = q0; x < q0 + nq; x++)
                    lse[x] = i == 0 ? li[x] : pp_attn_cp_lse_merge(lse[x], li[x]);
            }
            float *acc = U->bo;
            for (int64_t x = 0; x < 2 * c * d; x++)
                acc[x] = 0.0f;
            for (int i = 0; i < W; i++) {
                int t = cp_step_type(dm->causal, r, i);
                int64_t x0 = t == 2 ? c : 0;
                const float *oi = U->cp_o + (int64_t)i * 2 * c * d, *li = U->cp_l + (int64_t)i * 2 * c;
                for (int64_t x = x0; x < 2 * c; x++)
                    for (int64_t e = 0; e < d; e++)
                        acc[x * d + e] = pp_attn_cp_out_step(ca, acc[x * d + e], oi[x * d + e], li[x], lse[x]);
            }
            for (int64_t x = 0; x < 2 * c * d; x++)
                acc[x] = pp_attn_store(K->f, acc[x]);
            cp_unlocal(acc, W, r, c, d, U->o);
            for (int64_t x = 0; x < c; x++) {
                U->ls[r * c + x] = lse[x];
                U->ls[(2 * W - 1 - r) * c + x] = lse[c + x];
            }
        }
        attn_scatter(J->out, b, S, dm->h, hh, d, U->o);
        for (int64_t i = 0; i < S; i++)
            J->lse[(b * dm->h + hh) * S + i] = (double)U->ls[i];
    }
    if (!J->backward)
        return;
    // backward: step i of rank r uses the KV of rank o = (r+1+i) mod W (forward step W−1−i);
    // dq accumulates per (head, rank) in step order; dk/dv of block o collect one contribution
    // per step, from ranks o−1, o−2, …, o: the ring path.
    for (int64_t x = 0; x < grp * S * d; x++)
        U->cp_dq[x] = 0.0f;
    for (int64_t x = 0; x < S * d; x++)
        U->cp_dk[x] = U->cp_dv[x] = 0.0f;
    for (int i = 0; i < W; i++) {
        for (int r = 0; r < W; r++) {
            int o = (r + 1 + i) % W, t = cp_step_type(dm->causal, r, W - 1 - i);
            int64_t nk = t == 1 ? c : 2 * c;
            for (int64_t x = 0; x < nk * d; x++)
                U->dkg[x] = U->dvg[x] = 0.0f;
            for (int64_t hh = g * grp; hh < (g + 1) * grp; hh++) {
                attn_gather(J->q, b, S, dm->h, hh, d, U->dq);  // scratch: q of the head
                attn_scale_rows(K->f, K->sc.s_q, U->dq, S * d, U->q);
                cp_local(U->q, W, r, c, d, U->bq);
                cp_setup(J, U, W, r, o, t, c, &B, &q0, &nq);
                // final out, lse, dout of the rank's rows
                attn_gather(J->out, b, S, dm->h, hh, d, U->o);
                attn_gather(J->dout, b, S, dm->h, hh, d, U->go);
                float *lo = U->bo, *lgo = U->bgo, *lls = U->bls;
                cp_local(U->o, W, r, c, d, lo);
                cp_local(U->go, W, r, c, d, lgo);
                for (int64_t x = 0; x < c; x++) {
                    lls[x] = (float)J->lse[(b * dm->h + hh) * S + r * c + x];
                    lls[c + x] = (float)J->lse[(b * dm->h + hh) * S + (2 * W - 1 - r) * c + x];
                }
                attn_bwd_block(K, &B, lo + q0 * d, lls + q0, lgo + q0 * d, U->bdq, U->dkh, U->dvh, &U->w);
                float *dqa = U->cp_dq + (hh - g * grp) * S * d;  // local layout [2c][d] per rank
                // dq accumulators live in the rank's local layout inside a [W][2c][d] block
                for (int64_t x = 0; x < nq * d; x++)
                    dqa[(int64_t)r * 2 * c * d + q0 * d + x] =
                        pp_attn_cp_grad_step(cg, dqa[(int64_t)r * 2 * c * d + q0 * d + x], U->bdq[x]);
                for (int64_t x = 0; x < nk * d; x++) {
                    U->dkg[x] = U->dkg[x] + U->dkh[x];
                    U->dvg[x] = U->dvg[x] + U->dvh[x];
                }
            }
            // the step's dk_i, dv_i (group-summed, F) added into block o's travelling partial
            for (int64_t x = 0; x < nk * d; x++) {
                int64_t row = x / d, e = x % d;
                int64_t ch = row < c ? o : 2 * W - 1 - o;
                int64_t gx = (ch * c + row % c) * d + e;
                U->cp_dk[gx] = pp_attn_cp_grad_step(cg, U->cp_dk[gx], pp_attn_store(K->f, U->dkg[x]));
                U->cp_dv[gx] = pp_attn_cp_grad_step(cg, U->cp_dv[gx], pp_attn_store(K->f, U->dvg[x]));
            }
        }
    }
    for (int64_t hh = g * grp; hh < (g + 1) * grp; hh++) {
        float *dqa = U->cp_dq + (hh - g * grp) * S * d;
        for (int r = 0; r < W; r++) {
            float *loc = dqa + (int64_t)r * 2 * c * d;
            for (int64_t x = 0; x < 2 * c * d; x++)
                loc[x] = pp_attn_mul_store(K->f, K->sc.s_q, pp_attn_store(K->f, loc[x]));
            cp_unlocal(loc, W, r, c, d, U->dq);
        }
        attn_scatter(J->dq, b, S, dm->h, hh, d, U->dq);
    }
    for (int64_t x = 0; x < S * d; x++) {
        U->cp_dk[x] = pp_attn_mul_store(K->f, K->sc.s_k, pp_attn_store(K->f, U->cp_dk[x]));
        U->cp_dv[x] = pp_attn_store(K->f, U->cp_dv[x]);
    }
    attn_scatter(J->dk, b, S, dm->h_kv, g, d, U->cp_dk);
    attn_scatter(J->dv, b, S, dm->h_kv, g, d, U->cp_dv);
}

static void attn_bufs_free(attn_bufs *U)
{
    float *fs[] = {U->k, U->kT, U->v, U->vT, U->q, U->go, U->o, U->ls, U->dq, U->dkh, U->dvh,
                   U->dkg, U->dvg, U->bk, U->bkT, U->bv, U->bvT, U->bq, U->bgo, U->bo, U->bls,
                   U->bdq, U->cp_o, U->cp_l, U->cp_dq, U->cp_dk, U->cp_dv, U->w.row, U->w.facc,
                   U->w.o, U->w.Pm, U->w.dSm};
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
        free(fs[i]);
    free(U->w.dacc);
}

static void attn_task(void *ctx, int64_t t)
{
    attn_job *J = ctx;
    const pp_attn_dims *dm = J->dm;
    int64_t b = t / dm->h_kv, g = t % dm->h_kv, d = dm->d, sq = dm->s_q, skv = dm->s_kv;
    int64_t grp = dm->h / dm->h_kv, S = sq > skv ? sq : skv;
    int W = J->W;
    int64_t c = J->cp ? S / (2 * W) : 0;
    // block extents: the whole sequence (plain) or at most 2c rows (CP)
    int64_t bq = J->cp ? 2 * c : sq, bk = J->cp ? 2 * c : skv;
    size_t F = sizeof(float);
    int bad = 0;
    attn_bufs U;
    memset(&U, 0, sizeof U);
    U.k = attn_alloc((size_t)(skv * d) * F, &bad);
    U.v = attn_alloc((size_t)(skv * d) * F, &bad);
    U.kT = attn_alloc((size_t)(skv * d) * F, &bad);
    U.vT = attn_alloc((size_t)(skv * d) * F, &bad);
    U.q = attn_alloc((size_t)(sq * d) * F, &bad);
    U.go = attn_alloc((size_t)(sq * d) * F, &bad);
    U.o = attn_alloc((size_t)(sq * d) * F, &bad);
    U.ls = attn_alloc((size_t)sq * F, &bad);
    U.dq = attn_alloc((size_t)(sq * d) * F, &bad);
    U.dkh = attn_alloc((size_t)(bk * d) * F, &bad);
    U.dvh = attn_alloc((size_t)(bk * d) * F, &bad);
    U.dkg = attn_alloc((size_t)(skv * d) * F, &bad);
    U.dvg = attn_alloc((size_t)(skv * d) * F, &bad);
    U.w.row = attn_alloc((size_t)S * F, &bad);
    U.w.facc = attn_alloc((size_t)S * F, &bad);
    U.w.o = attn_alloc((size_t)d * F, &bad);
    U.w.dacc = attn_alloc((size_t)(S > d ? S : d) * sizeof(double), &bad);
    if (J->backward) {
        U.w.Pm = attn_alloc((size_t)(bq * bk) * F, &bad);
        U.w.dSm = attn_alloc((size_t)(bq * bk) * F, &bad);
    }
    if (J->cp) {
        U.bk = attn_alloc((size_t)(bk * d) * F, &bad);
        U.bv = attn_alloc((size_t)(bk * d) * F, &bad);
        U.bkT = attn_alloc((size_t)(bk * d) * F, &bad);
        U.bvT = attn_alloc((size_t)(bk * d) * F, &bad);
        U.bq = attn_alloc((size_t)(bq * d) * F, &bad);
        U.bo = attn_alloc((size_t)(bq * d) * F, &bad);
        U.bgo = attn_alloc((size_t)(bq * d) * F, &bad);
        U.bls = attn_alloc((size_t)bq * F, &bad);
        U.bdq = attn_alloc((size_t)(bq * d) * F, &bad);
        U.cp_o = attn_alloc((size_t)(W * bq * d) * F, &bad);
        U.cp_l = attn_alloc((size_t)(W * bq) * F, &bad);
        U.cp_dq = attn_alloc((size_t)(grp * S * d) * F, &bad);
        U.cp_dk = attn_alloc((size_t)(S * d) * F, &bad);
        U.cp_dv = attn_alloc((size_t)(S * d) * F, &bad);
    }
    if (bad) {
        pthread_mutex_lock(&J->mu);
        J->failed = 1;
        pthread_mutex_unlock(&J->mu);
        attn_bufs_free(&U);
        return;
    }
    attn_gather(J->k, b, skv, dm->h_kv, g, d, U.kT);
    attn_scale_rows(J->K.f, J->K.sc.s_k, U.kT, skv * d, U.k);
    attn_gather(J->v, b, skv, dm->h_kv, g, d, U.v);
    attn_transpose(U.k, skv, d, U.kT);
    attn_transpose(U.v, skv, d, U.vT);
    if (J->cp)
        attn_task_cp(J, &U, b, g);
    else
        attn_task_plain(J, &U, b, g);
    attn_bufs_free(&U);
}

// ---------------------------------------------------------------------------------------------
// Checks and the entry points

int pp_attention_cpu_opts(const pp_attn_variant *v, const pp_attn_dims *dm, int backward,
                          const double *q, const double *k, const double *vv, const double *dout,
                          double *out, double *lse, double *dq, double *dk, double *dv, int threads,
                          const pp_attn_cpu_opts *opts, pp_error *err)
{
    pp_format_id f = v->format;
    int W = v->cp_world > 0 ? v->cp_world : 1;
    int cp = W > 1 || (opts && opts->force_cp);
    char msg[sizeof err->msg];
    if (pp_attn_check(v, dm, backward, cp, q, k, vv, dout, out, lse, dq, dk, dv, msg, sizeof msg))
        return pp_fail(err, PP_ERR_INPUT, "%s", msg);
    if (v->engine != PP_ATTN_ENGINE_OURS)  // src/pipeline/run.c's --cross-check skips on this message
        return pp_fail(err, PP_ERR_RUNTIME, "attention: engine 'cublas' runs only on the GPU (--device cuda)");
    if (dm->b == 0 || pp_attn_empty_result(dm, backward, out, lse, dq, dk, dv))
        return PP_OK;
    attn_job J;
    memset(&J, 0, sizeof J);
    J.K.v = v;
    J.K.f = f;
    J.K.d = dm->d;
    J.K.bn = v->block_n > 0 ? v->block_n : 64;
    J.K.axpy = attn_pick_axpy(opts ? opts->portable : 0);
    pp_attn_scalars_make(v, dm->d, &J.K.sc);  // checked above
    J.dm = dm;
    J.backward = backward;
    J.cp = cp;
    J.W = W;
    J.q = q;
    J.k = k;
    J.v = vv;
    J.dout = dout;
    J.out = out;
    J.lse = lse;
    J.dq = dq;
    J.dk = dk;
    J.dv = dv;
    pthread_mutex_init(&J.mu, NULL);
    pp_parallel_for(attn_task, &J, dm->b * dm->h_kv, threads, NULL);
    pthread_mutex_destroy(&J.mu);
    if (J.failed)
        return pp_fail(err, PP_ERR_RUNTIME, "attention: out of memory for a head's work buffers");
    return PP_OK;
}

int pp_attention_cpu(const pp_attn_variant *v, const pp_attn_dims *dims, int backward,
                     const double *q, const double *k, const double *vv, const double *dout,
                     double *out, double *lse, double *dq, double *dk, double *dv, int threads,
                     pp_error *err)
{
    return pp_attention_cpu_opts(v, dims, backward, q, k, vv, dout, out, lse, dq, dk, dv, threads,
                                 NULL, err);
}
