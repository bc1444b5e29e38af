// attention_plan.c — the launch sequence of the attention (see attention_plan.h): the shared
// checks, then per slice of (batch, kv head) units (the whole problem unless the device limits
// its memory; slices hold disjoint heads): the slice's inputs to the device (binary32,
// head-major, prescaled; k', v key-major too), the stages of attention_threads.h, its outputs
// back.
//
// Plain:  forward blocks; backward blocks, dk/dv (GQA sum), dq.
// CP:     ring steps i = 0..W−1: forward block of every rank (one launch per stage), lse merge;
//         out merge; then backward steps i = 0..W−1: backward blocks, dk/dv and dq accumulation;
//         final roundings. One launch per stage per step, so the step order is the launch order.
// Engine cublas (unfused, plain only): the score, P·V, dP, dq, dk and dv chains are the device's
//         GEMMs (pp_attn_device.gemm), one call per (batch, kv head) with the group's q heads
//         batched; masked entries are zeroed before a GEMM reads them, and the backward's alpha is
//         a separate element-wise multiply, as torch's baddbmm backward does.
#include "attention_plan.h"

#include "attention_check.h"
#include "parallel.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PLAN_OK = 0, PLAN_ERR_INPUT = 2, PLAN_ERR_RUNTIME = 3 };

static int plan_fail(char *errbuf, size_t errlen, int code, const char *fmt, ...)
{
    if (errbuf && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(errbuf, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}


// ---------------------------------------------------------------------------------------------
// Device buffers: every one the plan allocates is listed, so one loop frees them.

enum { B_STAGE, B_Q, B_K, B_V, B_KT, B_VT, B_GO, B_OUT, B_LSE, B_SP, B_DS, B_MROW, B_MBLK, B_DQB, B_DKH, B_DVH, B_DQ, B_DK,
       B_DV, B_OALL, B_LALL, B_ADQ, B_ADK, B_ADV, B_LSE64, B_QS, B_KS, B_KST, B_VS,
       // explain's binary64 shadows (attention_threads.h; doubles, as float pairs), of B_OUT, B_LSE
       // (plain), B_OALL, B_LALL, B_DQB, B_DKH, B_DVH, B_ADQ, B_ADK, B_ADV, B_DQ, B_DK, B_DV
       B_OUT64, B_LSEX64, B_OALL64, B_LALL64, B_DQB64, B_DKH64, B_DVH64, B_ADQ64, B_ADK64, B_ADV64, B_DQ64, B_DK64,
       B_DV64,
       // flash's running P·V accumulator in binary64 (site pv_acc), laid out as one step's B_OUT
       B_OACC64, B_COUNT };

typedef struct plan {
    const pp_attn_device *dev;
    int cublas;  // engine cublas: the unfused GEMMs are dev->gemm's
    float *buf[B_COUNT];
    char *eb;
    size_t el;
} plan;

static int plan_alloc(plan *P, int which, int64_t count)
{
    if (count < 0 || (uint64_t)count > ((uint64_t)1 << 60) / sizeof(float))
        return plan_fail(P->eb, P->el, PLAN_ERR_RUNTIME, "attention: a work buffer of %lld floats is too large",
                         (long long)count);
    void *p = NULL;
    int rc = P->dev->alloc(P->dev->ctx, &p, (size_t)(count ? count : 1) * sizeof(float));
    P->buf[which] = p;
    return rc;
}

static int plan_launch(plan *P, pp_attn_launch *L, int op, int64_t n)
{
    if (n <= 0)
        return PLAN_OK;
    L->op = op;
    L->n = n;
    return P->dev->launch(P->dev->ctx, L);
}

// Engine cublas: C = α·op(A)·op(B) for every q head of L's (plain) block, m×n = op(A) m×k ·
// op(B) k×n, each operand per q head (a_kv / b_kv 0) or the q head's kv head (1). One device GEMM
// per (batch, kv head), the group's q heads batched (the kv operand's stride 0); one GEMM over
// all b·h heads when there is no GQA. C is per q head.
static int plan_gemm(plan *P, const pp_attn_launch *L, int ta, int tb, int64_t m, int64_t n, int64_t k, double alpha,
                     const float *a, int a_kv, const float *b, int b_kv, float *c)
{
    if (m <= 0 || n <= 0)
        return PLAN_OK;
    pp_attn_gemm G;
    memset(&G, 0, sizeof G);
    G.f = L->f, G.accum = L->accum, G.ta = ta, G.tb = tb, G.m = m, G.n = n, G.k = k, G.alpha = alpha;
    G.lda = ta ? m : k, G.ldb = tb ? k : n, G.ldc = n;
    int64_t za = m * k, zb = k * n, zc = m * n;
    int whole = L->grp == 1;
    int64_t calls = whole ? 1 : L->b * L->h_kv;
    G.batch = whole ? L->b * L->h : L->grp;
    G.sa = a_kv && !whole ? 0 : za, G.sb = b_kv && !whole ? 0 : zb, G.sc = zc;
    for (int64_t o = 0; o < calls; o++) {  // o: (batch, kv head); its q heads start at o·grp
        G.a = a + (a_kv ? o : o * L->grp) * za;
        G.b = b + (b_kv ? o : o * L->grp) * zb;
        G.c = c + o * L->grp * zc;
        int rc = P->dev->gemm(P->dev->ctx, &G);
        if (rc)
            return rc;
    }
    return PLAN_OK;
}

// Engine cublas: x = RN_F(α ⊗ x) over n elements (baddbmm's backward: the bmm's result times alpha).
static int plan_scale(plan *P, const pp_attn_launch *L, float alpha, float *x, int64_t n)
{
    if (alpha == 1.0f)
        return PLAN_OK;
    pp_attn_launch S = *L;
    S.src = x;
    S.dst = x;
    S.gscale = alpha;
    return plan_launch(P, &S, PP_AT_SCALE, n);
}

// A slice is the units [u0, u0 + n) (unit: one batch's kv head with its grp q heads). x is a
// host tensor [b][len][H][d] (H = h or h_kv, uh = H/h_kv of its heads per unit); the slice's
// part, head-major, is [n][uh][len][d]. Element i of that part sits at x[plan_host_at(...)].
static int64_t plan_host_at(const pp_attn_launch *L, int64_t u0, int64_t len, int64_t H, int64_t d, int head_major,
                            int64_t i)
{
    int64_t uh = H / L->h_kv, e = i % d, s = (i / d) % len, hu = i / (d * len);  // hu: head of the slice
    int64_t u = u0 + hu / uh, bi = u / L->h_kv, hh = (u % L->h_kv) * uh + hu % uh;
    return head_major ? ((bi * H + hh) * len + s) * d + e : ((bi * len + s) * H + hh) * d + e;
}

// A host loop over rows [0, rows) of row_len elements: fn(ctx, r0, r1) on ranges of whole rows,
// on the device's host threads when there is enough to share (rows are independent: any split
// gives the same bits).
typedef void (*plan_rows_fn)(void *ctx, int64_t r0, int64_t r1);

typedef struct plan_rows {
    plan_rows_fn fn;
    void *ctx;
    int64_t rows, per;
} plan_rows;

static void plan_rows_task(void *ctx, int64_t t)
{
    const plan_rows *R = ctx;
    int64_t r0 = t * R->per, r1 = r0 + R->per < R->rows ? r0 + R->per : R->rows;
    if (r0 < r1)
        R->fn(R->ctx, r0, r1);
}

static void plan_for_rows(const plan *P, int64_t rows, int64_t row_len, plan_rows_fn fn, void *ctx)
{
    int th = P->dev->host_threads;
    if (th <= 1 || rows * row_len < ((int64_t)1 << 18)) {
        fn(ctx, 0, rows);
        return;
    }
    int64_t tasks = (int64_t)th * 4;
    plan_rows R = {fn, ctx, rows, (rows + tasks - 1) / tasks};
    pp_parallel_for(plan_rows_task, &R, (rows + R.per - 1) / R.per, th, NULL);
}

// plan_input's rows: x's rows of the slice in x's own order [n][len][uh] into h.
typedef struct plan_in_rows {
    const pp_attn_launch *L;
    int64_t u0, len, H, uh;
    const double *x;
    float *h;
} plan_in_rows;

static void plan_in_rows_run(void *ctx, int64_t r0, int64_t r1)
{
    const plan_in_rows *I = ctx;
    const int64_t d = I->L->d;
    for (int64_t r = r0; r < r1; r++) {
        int64_t hu = r % I->uh, s = r / I->uh % I->len, u = r / (I->uh * I->len);
        const double *xr = I->x + plan_host_at(I->L, I->u0, I->len, I->H, d, 0, ((u * I->uh + hu) * I->len + s) * d);
        float *hr = I->h + r * d;
        for (int64_t e = 0; e < d; e++)
            hr[e] = (float)xr[e];
    }
}

// Uploads the n-unit slice's part of x (binary64 values of F, exact in binary32) through the
// staging buffer and gathers it head-major into dst, times scale (RN_F(RN_32(scale·x)); a copy
// when scale is 1). Under fp8 x holds the quantised elements or their block scales (plan_fp8:
// quantised on the host, so every device reads the same values). L is the whole problem.
static int plan_input(plan *P, const pp_attn_launch *L, int64_t u0, int64_t n, const double *x, int64_t len,
                      int64_t H, float scale, float *dst)
{
    int64_t uh = H / L->h_kv, count = n * uh * len * L->d;
    float *h = malloc((size_t)(count ? count : 1) * sizeof *h);
    if (!h)
        return plan_fail(P->eb, P->el, PLAN_ERR_RUNTIME, "attention: out of host memory");
    // the slice's rows in x's own order [n][len][uh][d], a row of d at a time (element e of the
    // row at x[plan_host_at(L, u0, len, H, d, 0, ((u·uh + hu)·len + s)·d + e)], e contiguous)
    plan_in_rows I = {L, u0, len, H, uh, x, h};
    plan_for_rows(P, n * len * uh, L->d, plan_in_rows_run, &I);
    int rc = count ? P->dev->upload(P->dev->ctx, P->buf[B_STAGE], h, (size_t)count * sizeof *h) : 0;
    free(h);
    if (rc)
        return rc;
    pp_attn_launch G = *L;
    G.b = n;
    G.src = P->buf[B_STAGE];
    G.dst = dst;
    G.gS = len;
    G.gH = uh;
    G.gscale = scale;
    return plan_launch(P, &G, PP_AT_GATHER, count);
}

// plan_output's rows: row r of the slice's head-major part h into x.
typedef struct plan_out_rows {
    const pp_attn_launch *L;
    int64_t u0, len, H, d;
    int head_major;
    const float *h;
    double *x;
} plan_out_rows;

static void plan_out_rows_run(void *ctx, int64_t r0, int64_t r1)
{
    const plan_out_rows *O = ctx;
    for (int64_t r = r0; r < r1; r++) {
        double *xr = O->x + plan_host_at(O->L, O->u0, O->len, O->H, O->d, O->head_major, r * O->d);
        const float *hr = O->h + r * O->d;
        for (int64_t e = 0; e < O->d; e++)
            xr[e] = (double)hr[e];
    }
}

// Downloads the n-unit slice's head-major part src of a tensor x (as plan_input; d = 1 for lse)
// into x, laid out [b][len][H][d], or [b][H][len] when head_major.
static int plan_output(plan *P, const pp_attn_launch *L, int64_t u0, int64_t n, const float *src, int64_t len,
                       int64_t H, int64_t d, int head_major, double *x)
{
    int64_t count = n * (H / L->h_kv) * len * d;
    if (!count)
        return PLAN_OK;
    float *h = malloc((size_t)count * sizeof *h);
    if (!h)
        return plan_fail(P->eb, P->el, PLAN_ERR_RUNTIME, "attention: out of host memory");
    int rc = P->dev->download(P->dev->ctx, h, src, (size_t)count * sizeof *h);
    plan_out_rows O = {L, u0, len, H, d, head_major, h, x};
    if (!rc)  // a row of d at a time: e contiguous in x too
        plan_for_rows(P, count / d, d, plan_out_rows_run, &O);
    free(h);
    return rc;
}

// The same for a binary64 shadow src (explain's exact store sites).
static int plan_output64(plan *P, const pp_attn_launch *L, int64_t u0, int64_t n, const double *src, int64_t len,
                         int64_t H, int64_t d, int head_major, double *x)
{
    int64_t count = n * (H / L->h_kv) * len * d;
    if (!count)
        return PLAN_OK;
    double *h = malloc((size_t)count * sizeof *h);
    if (!h)
        return plan_fail(P->eb, P->el, PLAN_ERR_RUNTIME, "attention: out of host memory");
    int rc = P->dev->download(P->dev->ctx, h, src, (size_t)count * sizeof *h);
    for (int64_t i = 0; !rc && i < count; i++)
        x[plan_host_at(L, u0, len, H, d, head_major, i)] = h[i];
    free(h);
    return rc;
}

// The output x from the binary64 shadow s64 when the plan keeps one, else from the binary32 s.
static int plan_output_x(plan *P, const pp_attn_launch *L, int64_t u0, int64_t n, const float *s, const double *s64,
                         int64_t len, int64_t H, int64_t d, int head_major, double *x)
{
    return s64 ? plan_output64(P, L, u0, n, s64, len, H, d, head_major, x)
               : plan_output(P, L, u0, n, s, len, H, d, head_major, x);
}

// The forward of the blocks of L's geometry (step), into L->O and L->Lse.
static int plan_fwd_block(plan *P, pp_attn_launch *L)
{
    int64_t rows = L->b * L->h * L->R * L->BQ;
    if (L->kernel == PP_ATTN_FLASH)
        return plan_launch(P, L, PP_AT_FLASH_FWD, rows);
    int rc = P->cublas ? plan_gemm(P, L, 0, 1, L->BQ, L->BK, L->d, L->sc.alpha_c, L->q, 0, L->k, 1, L->SP)
                       : plan_launch(P, L, PP_AT_UNF_SCORES, rows * L->BK);
    if (!rc && L->max_subtract == PP_ATTN_MAX_PB_RELAX) {
        rc = plan_launch(P, L, PP_AT_UNF_PB_ROW, rows);
        if (!rc)
            rc = plan_launch(P, L, PP_AT_UNF_PB_BLOCK, L->b * L->h * L->R);
    }
    if (!rc)
        rc = plan_launch(P, L, PP_AT_UNF_SOFTMAX, rows);
    if (!rc && P->cublas)
        rc = plan_launch(P, L, PP_AT_UNF_ZERO_MASKED, rows * L->BK);
    if (!rc)
        rc = P->cublas ? plan_gemm(P, L, 0, 0, L->BQ, L->d, L->BK, 1.0, L->SP, 0, L->v, 1, L->O)
                       : plan_launch(P, L, PP_AT_UNF_PV, rows * L->d);
    return rc;
}

// The backward of the blocks of L's geometry: dq' partials into dqb (global rows), per-head
// dk', dv into dkh, dvh (block scratch).
static int plan_bwd_block(plan *P, pp_attn_launch *L)
{
    int64_t rows = L->b * L->h * L->R * L->BQ;
    int rc;
    if (L->kernel == PP_ATTN_FLASH) {
        rc = plan_launch(P, L, PP_AT_FLASH_BWD_ROW, rows);
    } else {
        pp_attn_launch U = *L;
        U.Lse = NULL;  // P recomputed as in the forward; the lse is the forward's
        U.recompute = 1;  // range notes: the forward noted S and P
        rc = P->cublas ? plan_gemm(P, &U, 0, 1, L->BQ, L->BK, L->d, L->sc.alpha_c, L->q, 0, L->k, 1, L->SP)
                       : plan_launch(P, &U, PP_AT_UNF_SCORES, rows * L->BK);
        if (!rc && L->max_subtract == PP_ATTN_MAX_PB_RELAX) {
            rc = plan_launch(P, &U, PP_AT_UNF_PB_ROW, rows);
            if (!rc)
                rc = plan_launch(P, &U, PP_AT_UNF_PB_BLOCK, L->b * L->h * L->R);
        }
        if (!rc)
            rc = plan_launch(P, &U, PP_AT_UNF_SOFTMAX, rows);
        if (!rc)
            rc = P->cublas ? plan_gemm(P, &U, 0, 1, L->BQ, L->BK, L->d, 1.0, L->go, 0, L->v, 1, L->DS)
                           : plan_launch(P, &U, PP_AT_UNF_DP, rows * L->BK);
        if (!rc)
            rc = plan_launch(P, &U, PP_AT_UNF_BWD_ROW, rows);  // also zeroes masked and dead P, dS
        if (!rc && P->cublas) {
            // dq'' = dS·K', dk'' = dSᵀ·Q', dv = Pᵀ·dO (bmm), then baddbmm backward's alpha
            int64_t nq = L->b * L->h * L->sq * L->d, nkh = L->b * L->h * L->BK * L->d;
            float a = pp_attn_bwd_alpha(L);
            rc = plan_gemm(P, L, 0, 0, L->BQ, L->d, L->BK, 1.0, L->DS, 0, L->k, 1, L->dqb);
            if (!rc)
                rc = plan_scale(P, L, a, L->dqb, nq);
            if (!rc)
                rc = plan_gemm(P, L, 1, 0, L->BK, L->d, L->BQ, 1.0, L->DS, 0, L->q, 0, L->dkh);
            if (!rc)
                rc = plan_scale(P, L, a, L->dkh, nkh);
            if (!rc)
                rc = plan_gemm(P, L, 1, 0, L->BK, L->d, L->BQ, 1.0, L->SP, 0, L->go, 0, L->dvh);
            return rc;
        }
    }
    if (!rc)
        rc = plan_launch(P, L, PP_AT_BWD_DQ, rows * L->d);
    if (!rc)
        rc = plan_launch(P, L, PP_AT_BWD_DKV, L->b * L->h * L->R * L->BK * L->d);
    return rc;
}

// L seen on a slice of n units as n batches of one kv head: every buffer holds the slice only.
static pp_attn_launch plan_slice(const pp_attn_launch *L, int64_t n)
{
    pp_attn_launch S = *L;
    S.b = n, S.h = L->grp, S.h_kv = 1;
    return S;
}

// Plain attention of slice S: forward blocks; backward blocks, dk/dv (GQA sum), dq.
static int plan_plain(plan *P, pp_attn_launch *S, int backward)
{
    int rc = plan_fwd_block(P, S);
    if (!rc && backward)
        rc = plan_bwd_block(P, S);
    if (!rc && backward)
        rc = plan_launch(P, S, PP_AT_PLAIN_DKV, S->b * S->skv * S->d);
    if (!rc && backward)
        rc = plan_launch(P, S, PP_AT_PLAIN_DQ, S->b * S->h * S->sq * S->d);
    return rc;
}

// The CP ring of slice S: forward steps (lse merge after each), the out merge; backward steps
// (dk/dv and dq accumulation after each), the final roundings. One launch per stage per step, so
// the step order is the launch order. S->O, S->Lse and the accumulators are the slice's scratch.
static int plan_ring(plan *P, pp_attn_launch *S, int backward)
{
    int64_t nq = S->b * S->h * S->sq * S->d, nrow = S->b * S->h * S->sq, nkv = S->b * S->skv * S->d;
    float *O = S->O, *Lse = S->Lse;
    double *O64 = S->O64, *Lse64 = S->Lse64;  // explain's shadows of the partials (NULL: none)
    int rc = PLAN_OK;
    for (int i = 0; !rc && i < S->W; i++) {
        S->step = i, S->ring_bwd = 0;
        S->O = O + i * nq, S->Lse = Lse + i * nrow;
        S->O64 = O64 ? O64 + i * nq : NULL, S->Lse64 = Lse64 ? Lse64 + i * nrow : NULL;
        rc = plan_fwd_block(P, S);
        if (!rc)
            rc = plan_launch(P, S, PP_AT_CP_LSE, nrow);
    }
    if (!rc)
        rc = plan_launch(P, S, PP_AT_CP_OUT, nq);
    if (rc || !backward)
        return rc;
    float *acc[] = {S->acc_dq, S->acc_dk, S->acc_dv, (float *)(void *)S->acc_dq64, (float *)(void *)S->acc_dk64,
                    (float *)(void *)S->acc_dv64};
    int64_t cnt[] = {nq, nkv, nkv, 2 * nq, 2 * nkv, 2 * nkv};  // the shadows: doubles (+0: zero bits)
    for (int i = 0; !rc && i < 6; i++) {
        if (!acc[i])
            continue;
        pp_attn_launch Z = *S;
        Z.dst = acc[i];
        rc = plan_launch(P, &Z, PP_AT_FILL0, cnt[i]);
    }
    S->Lse = NULL;
    S->Lse64 = NULL;
    for (int i = 0; !rc && i < S->W; i++) {
        S->step = i, S->ring_bwd = 1;
        rc = plan_bwd_block(P, S);
        if (!rc)
            rc = plan_launch(P, S, PP_AT_CP_DKV, S->b * S->R * S->BK * S->d);
        if (!rc)
            rc = plan_launch(P, S, PP_AT_CP_DQ, nq);
    }
    if (!rc)
        rc = plan_launch(P, S, PP_AT_CP_FINAL_DQ, nq);
    if (!rc)
        rc = plan_launch(P, S, PP_AT_CP_FINAL_DKV, nkv);
    return rc;
}

// Whether the n values of x are all finite (NULL: yes): range notes tell an overflow inside a
// chain from an Inf that came in (attention_threads.h, finite_in).
static int plan_finite(const double *x, int64_t n)
{
    for (int64_t i = 0; x && i < n; i++)
        if (!isfinite(x[i]))
            return 0;
    return 1;
}

// FP8 (attention_fp8.h): q, k, v quantised on the host over the whole tensors, before any slice
// (pp_attn_fp8_quantise_tensor): the elements e[t], each element's block scale bs[t] (1 per
// tensor) and the per-tensor factors X[t] (t = q, k, v).
typedef struct plan_fp8 {
    double *e[3], *bs[3];
    double X[3];
} plan_fp8;

static void plan_fp8_free(plan_fp8 *F)
{
    for (int t = 0; t < 3; t++) {
        free(F->e[t]);
        free(F->bs[t]);
    }
}

static int plan_fp8_make(plan *P, const pp_attn_variant *v, const pp_attn_dims *dm, const double *const x[3],
                         plan_fp8 *F)
{
    static const int site[3] = {PP_SITE_ATTN_QUANT_Q, PP_SITE_ATTN_QUANT_K, PP_SITE_ATTN_QUANT_V};
    memset(F, 0, sizeof *F);
    for (int t = 0; t < 3; t++) {
        int64_t n = (t ? dm->s_kv * dm->h_kv : dm->s_q * dm->h) * dm->b * dm->d;
        F->e[t] = malloc((size_t)(n ? n : 1) * sizeof(double));
        F->bs[t] = malloc((size_t)(n ? n : 1) * sizeof(double));
        if (!F->e[t] || !F->bs[t])
            return plan_fail(P->eb, P->el, PLAN_ERR_RUNTIME, "attention: out of host memory");
        F->X[t] = pp_attn_fp8_quantise_tensor(v, dm, t, x[t], pp_site_exact(v->exact_sites, site[t]), F->e[t],
                                              F->bs[t]);
    }
    return PLAN_OK;
}

static int plan_body(plan *P, const pp_attn_variant *v, const pp_attn_dims *dm, int backward, int force_cp,
                     const double *q, const double *k, const double *vv, const double *dout, double *out, double *lse,
                     double *dq, double *dk, double *dv, const plan_fp8 *F)
{
    pp_attn_launch L;
    memset(&L, 0, sizeof L);
    L.f = v->format;
    L.kernel = v->kernel;
    L.accum = v->accum;
    L.scale = v->scale;
    L.softmax = v->softmax;
    L.max_subtract = v->max_subtract;
    L.cp_accum = v->cp_accum;
    L.cp_grad_accum = v->cp_grad_accum;
    L.cp_flavour = v->cp_flavour;
    int tiles[4];
    pp_attn_flash_tiles(v, dm->d, dm->causal, tiles);
    L.bn = tiles[1], L.bbm = tiles[2], L.bbn = tiles[3];
    pp_attn_scalars_make(v, dm->d, &L.sc);
    // FP8 (attention_fp8.h): the per-tensor factors of q and k folded into the exp2 scale, v's
    // (nvfp4: with P's global scale) kept for the epilogue; the block scales' size; FA3's tiles
    int fblk = 0;
    if (F) {
        pp_scaling sch = pp_attn_fp8_scheme(v);
        fblk = pp_attn_fp8_block(sch);
        L.fp8 = 1;
        L.fp8_sch = (int)sch;
        L.fp8_mx_rule = (int)v->mx_rule;
        L.fp8_block = fblk;
        L.fp8_xv = pp_attn_fp8_xv(sch, F->X[2], pp_site_exact(v->exact_sites, PP_SITE_ATTN_P));
        L.fp8_sig = pp_attn_fp8_sig64(v->exact_sites, L.sc.sl2, F->X[0], F->X[1]);  // explain: softmax_scale
        L.sc.sl2 = pp_attn_fp8_sl2(L.sc.sl2, F->X[0], F->X[1]);
        L.bn = pp_attn_fp8_block_n(v, dm->d);
        L.mma = v->mma == PP_ATTN_FP8_MMA_SM90;
    }
    L.order_seed = v->order_seed;
    L.exact_sites = v->exact_sites;
    L.b = dm->b, L.h = dm->h, L.h_kv = dm->h_kv, L.grp = dm->h / dm->h_kv, L.sq = dm->s_q, L.skv = dm->s_kv;
    L.d = dm->d, L.causal = dm->causal;
    int W = v->cp_world > 0 ? v->cp_world : 1;
    L.cp = W > 1 || force_cp;
    L.W = W;
    L.c = L.cp ? dm->s_q / (2 * W) : 0;
    L.R = L.cp ? W : 1;
    L.BQ = L.cp ? 2 * L.c : dm->s_q;
    L.BK = L.cp ? 2 * L.c : dm->s_kv;
    int64_t b = L.b, h = L.h, hkv = L.h_kv, sq = L.sq, skv = L.skv, d = L.d, grp = L.grp;
    L.hkv_all = hkv;
    L.finite_in = plan_finite(q, b * sq * h * d) && plan_finite(k, b * skv * hkv * d) &&
                  plan_finite(vv, b * skv * hkv * d) && plan_finite(backward ? dout : NULL, b * sq * h * d);
    int unf = v->kernel == PP_ATTN_UNFUSED, pb = v->max_subtract == PP_ATTN_MAX_PB_RELAX, cp = L.cp;
    // Everything on the device is per unit (one batch's kv head with its q heads): its inputs,
    // outputs, block scratch, dq partials, CP partials and accumulators. A slice holds as many
    // units as the device's budget (at least one); it is uploaded, computed and downloaded alone.
    int64_t blk = grp * L.R * L.BQ * L.BK, kvh = grp * L.R * L.BK * d, uq = grp * sq * d, ukv = skv * d;
    int64_t cnt[B_COUNT] = {0};
    cnt[B_STAGE] = uq > ukv ? uq : ukv;
    cnt[B_Q] = cnt[B_OUT] = uq;
    cnt[B_K] = cnt[B_V] = ukv;
    cnt[B_KT] = cnt[B_VT] = P->cublas ? 0 : ukv;
    cnt[B_LSE] = grp * sq;
    cnt[B_GO] = cnt[B_DQ] = backward ? uq : 0;
    cnt[B_DK] = cnt[B_DV] = backward ? ukv : 0;
    cnt[B_SP] = unf || backward ? blk : 0;
    cnt[B_MROW] = unf && pb ? grp * L.R * L.BQ : 0;
    cnt[B_MBLK] = unf && pb ? grp * L.R : 0;
    cnt[B_DS] = backward ? blk : 0;
    cnt[B_DKH] = cnt[B_DVH] = backward ? kvh : 0;
    cnt[B_DQB] = backward ? uq : 0;
    cnt[B_OALL] = cp ? W * uq : 0;
    cnt[B_LALL] = cp ? W * grp * sq : 0;
    cnt[B_ADQ] = cp && backward ? uq : 0;
    cnt[B_ADK] = cnt[B_ADV] = cp && backward ? ukv : 0;
    cnt[B_LSE64] = cp && (v->cp_flavour == PP_ATTN_CP_TE_2024 || pp_site_exact(v->exact_sites, PP_SITE_ATTN_CP_LSE_MERGE))
                       ? 2 * grp * sq : 0;  // doubles, as float pairs (te-2024's lse, or cp_lse_merge exact)
    cnt[B_QS] = fblk ? uq : 0;  // fp8 block scalings: each element's block scale, as q, k, kT, v
    cnt[B_KS] = cnt[B_KST] = cnt[B_VS] = fblk ? ukv : 0;
    // explain's binary64 shadows (attention.h "Exact sites"), only for the exact store sites: two
    // floats a double
    pp_site_mask xs = v->exact_sites;
    int xo = pp_site_exact(xs, PP_SITE_ATTN_OUT), xl = pp_site_exact(xs, PP_SITE_ATTN_LSE);
    int xdq = backward && pp_site_exact(xs, PP_SITE_ATTN_DQ), xdk = backward && pp_site_exact(xs, PP_SITE_ATTN_DK);
    int xdv = backward && pp_site_exact(xs, PP_SITE_ATTN_DV);
    int xadq = cp && backward && pp_site_exact(xs, PP_SITE_ATTN_CP_DQ_ACC);
    int xadkv = cp && backward && pp_site_exact(xs, PP_SITE_ATTN_CP_DKV_ACC);
    cnt[B_OUT64] = xo ? 2 * uq : 0;
    cnt[B_LSEX64] = !cp && xl ? 2 * grp * sq : 0;
    cnt[B_OALL64] = cp && pp_site_exact(xs, PP_SITE_ATTN_OUT_PARTIAL) ? 2 * W * uq : 0;
    cnt[B_LALL64] = cp && xl ? 2 * W * grp * sq : 0;
    cnt[B_DQB64] = xdq ? 2 * uq : 0;
    cnt[B_DKH64] = xdk ? 2 * kvh : 0;
    cnt[B_DVH64] = xdv ? 2 * kvh : 0;
    cnt[B_ADQ64] = xadq ? 2 * uq : 0;
    cnt[B_ADK64] = cnt[B_ADV64] = xadkv ? 2 * ukv : 0;
    cnt[B_DQ64] = (cp ? xadq : xdq) ? 2 * uq : 0;  // CP: the accumulator kept to the output
    cnt[B_DK64] = (cp ? xadkv : xdk) ? 2 * ukv : 0;
    cnt[B_DV64] = (cp ? xadkv : xdv) ? 2 * ukv : 0;
    // flash's running o kept in binary64 (FA2's and FA3 fp8's; te runs its own loop)
    cnt[B_OACC64] = !unf && v->fp8 != PP_ATTN_FP8_TE && pp_site_exact(xs, PP_SITE_ATTN_PV_ACC) ? 2 * uq : 0;
    int64_t units = b * hkv, per_unit = 0, per = units;
    for (int i = 0; i < B_COUNT; i++)
        per_unit += cnt[i];
    if (P->dev->scratch_floats > 0) {
        per = P->dev->scratch_floats / per_unit;
        per = per < 1 ? 1 : per > units ? units : per;
    }
    int rc = PLAN_OK;
    for (int i = 0; !rc && i < B_COUNT; i++)
        if (cnt[i] > 0)
            rc = plan_alloc(P, i, per * cnt[i]);
    if (rc)
        return rc;
    float **B = P->buf;
    L.q = B[B_Q], L.k = B[B_K], L.v = B[B_V], L.go = B[B_GO], L.kT = B[B_KT], L.vT = B[B_VT];
    L.SP = B[B_SP], L.DS = B[B_DS], L.Mrow = B[B_MROW], L.Mblk = B[B_MBLK];
    L.dqb = B[B_DQB], L.dkh = B[B_DKH], L.dvh = B[B_DVH];
    L.out = B[B_OUT], L.dq = B[B_DQ], L.dk = B[B_DK], L.dv = B[B_DV];
    L.out_f = B[B_OUT], L.lse_f = B[B_LSE];
    L.Oall = B[B_OALL], L.Lall = B[B_LALL];
    L.run_lse = B[B_LSE], L.acc_dq = B[B_ADQ], L.acc_dk = B[B_ADK], L.acc_dv = B[B_ADV];
    L.run_lse64 = (double *)(void *)B[B_LSE64];  // the device's allocations are 8-byte aligned
    L.O = cp ? B[B_OALL] : B[B_OUT], L.Lse = cp ? B[B_LALL] : B[B_LSE];
    L.qs = B[B_QS], L.ksT = B[B_KST], L.vs = B[B_VS];
    double *X[B_COUNT];  // the shadows as doubles (NULL where not allocated)
    for (int i = 0; i < B_COUNT; i++)
        X[i] = cnt[i] > 0 ? (double *)(void *)B[i] : NULL;
    L.O64 = cp ? X[B_OALL64] : X[B_OUT64], L.Lse64 = cp ? X[B_LALL64] : X[B_LSEX64];
    L.out_f64 = X[B_OUT64];
    L.lse_f64 = cp ? (pp_site_exact(xs, PP_SITE_ATTN_CP_LSE_MERGE) ? L.run_lse64 : NULL) : X[B_LSEX64];
    L.Oall64 = X[B_OALL64], L.Lall64 = X[B_LALL64], L.out64 = cp ? X[B_OUT64] : NULL;
    L.dqb64 = X[B_DQB64], L.dkh64 = X[B_DKH64], L.dvh64 = X[B_DVH64];
    L.acc_dq64 = X[B_ADQ64], L.acc_dk64 = X[B_ADK64], L.acc_dv64 = X[B_ADV64];
    L.dq64 = X[B_DQ64], L.dk64 = X[B_DK64], L.dv64 = X[B_DV64];
    L.Oacc64 = X[B_OACC64];
    if (F)  // the kernel reads the quantised elements
        q = F->e[0], k = F->e[1], vv = F->e[2];
    for (int64_t u = 0; !rc && u < units; u += per) {
        int64_t n = units - u < per ? units - u : per;
        pp_attn_launch S = plan_slice(&L, n);
        S.order_row0 = u * L.grp * L.sq, S.order_rows = L.b * L.h * L.sq;  // the order band's row keys
        S.unit0 = u;  // range notes: the slice's first (batch, kv head) unit
        // inputs: q' and k' prescaled (s = 1: a copy), v and dout as they are; k', v key-major too
        rc = plan_input(P, &L, u, n, q, sq, h, L.sc.s_q, B[B_Q]);
        if (!rc)
            rc = plan_input(P, &L, u, n, k, skv, hkv, L.sc.s_k, B[B_K]);
        if (!rc)
            rc = plan_input(P, &L, u, n, vv, skv, hkv, 1.0f, B[B_V]);
        if (!rc && backward)
            rc = plan_input(P, &L, u, n, dout, sq, h, 1.0f, B[B_GO]);
        if (!rc && fblk)
            rc = plan_input(P, &L, u, n, F->bs[0], sq, h, 1.0f, B[B_QS]);
        if (!rc && fblk)
            rc = plan_input(P, &L, u, n, F->bs[1], skv, hkv, 1.0f, B[B_KS]);
        if (!rc && fblk)
            rc = plan_input(P, &L, u, n, F->bs[2], skv, hkv, 1.0f, B[B_VS]);
        if (!rc && fblk) {
            pp_attn_launch T = S;
            T.src = B[B_KS], T.dst = B[B_KST], T.gS = skv;
            rc = plan_launch(P, &T, PP_AT_TRANSPOSE, n * ukv);
        }
        for (int i = 0; !rc && !P->cublas && i < 2; i++) {
            pp_attn_launch T = S;
            T.src = B[i ? B_V : B_K], T.dst = B[i ? B_VT : B_KT], T.gS = skv;
            rc = plan_launch(P, &T, PP_AT_TRANSPOSE, n * ukv);
        }
        if (!rc)
            rc = cp ? plan_ring(P, &S, backward) : plan_plain(P, &S, backward);
        // the outputs, from the binary64 shadows where their sites are exact
        if (!rc)
            rc = plan_output_x(P, &L, u, n, B[B_OUT], X[B_OUT64], sq, h, d, 0, out);
        if (!rc)
            rc = plan_output_x(P, &L, u, n, B[B_LSE], L.lse_f64, sq, h, 1, 1, lse);
        if (!rc && backward)
            rc = plan_output_x(P, &L, u, n, B[B_DQ], X[B_DQ64], sq, h, d, 0, dq);
        if (!rc && backward)
            rc = plan_output_x(P, &L, u, n, B[B_DK], X[B_DK64], skv, hkv, d, 0, dk);
        if (!rc && backward)
            rc = plan_output_x(P, &L, u, n, B[B_DV], X[B_DV64], skv, hkv, d, 0, dv);
    }
    return rc;
}

int pp_attn_plan_run_opts(const pp_attn_device *dev, const pp_attn_variant *v, const pp_attn_dims *dm, int backward,
                          int force_cp, const double *q, const double *k, const double *vv, const double *dout,
                          double *out, double *lse, double *dq, double *dk, double *dv, char *errbuf, size_t errlen)
{
    // the checks, messages and empty result every backend shares (attention_check.c)
    int rc = pp_attn_check_threads(v, dm, backward, force_cp, q, k, vv, dout, out, lse, dq, dk, dv,
                                   dev->host_threads, errbuf, errlen);
    if (rc || dm->b == 0 || pp_attn_empty_result(dm, backward, out, lse, dq, dk, dv))
        return rc;
    if (v->engine == PP_ATTN_ENGINE_CUBLAS && !dev->gemm)
        return plan_fail(errbuf, errlen, PLAN_ERR_INPUT, "attention: engine 'cublas': this device has no GEMM");
    plan P;
    memset(&P, 0, sizeof P);
    P.dev = dev;
    P.cublas = v->engine == PP_ATTN_ENGINE_CUBLAS;
    P.eb = errbuf;
    P.el = errlen;
    plan_fp8 F;
    const double *x[3] = {q, k, vv};
    int fp8 = v->fp8 == PP_ATTN_FP8_FA3;
    rc = fp8 ? plan_fp8_make(&P, v, dm, x, &F) : PLAN_OK;
    if (!rc)
        rc = plan_body(&P, v, dm, backward, force_cp, q, k, vv, dout, out, lse, dq, dk, dv, fp8 ? &F : NULL);
    if (fp8)
        plan_fp8_free(&F);
    for (int i = 0; i < B_COUNT; i++)
        dev->release(dev->ctx, P.buf[i]);
    return rc;
}

int pp_attn_plan_run(const pp_attn_device *dev, const pp_attn_variant *v, const pp_attn_dims *dm, int backward,
                     const double *q, const double *k, const double *vv, const double *dout, double *out,
                     double *lse, double *dq, double *dk, double *dv, char *errbuf, size_t errlen)
{
    return pp_attn_plan_run_opts(dev, v, dm, backward, 0, q, k, vv, dout, out, lse, dq, dk, dv, errbuf, errlen);
}
