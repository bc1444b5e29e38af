// attention_check.c — the attention backends' shared checks (see attention_check.h).
#include "attention_check.h"

#include "attention_fp8.h"
#include "parallel.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int check_fail(char *errbuf, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int check_fail(char *errbuf, size_t errlen, const char *fmt, ...)
{
    if (errbuf && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(errbuf, errlen, fmt, ap);
        va_end(ap);
    }
    return 2;
}

// The scan of the input values: chunks of CHECK_CHUNK elements of the four tensors in order, each
// chunk's first element that is not a value of f (or −1).
#define CHECK_CHUNK ((int64_t)1 << 16)

typedef struct check_scan {
    pp_format_id f;
    const double *const *xs;
    const int64_t *ns, *first;  // first[t]: tensor t's first chunk
    int64_t *bad;               // per chunk (the threaded scan)
} check_scan;

// The tensor chunk c belongs to.
static int check_tensor(const check_scan *S, int64_t c)
{
    int t = 3;
    while (t > 0 && S->first[t] > c)
        t--;
    return t;
}

// Chunk c's first element that is not a value of f, or −1.
static int64_t check_first_bad(const check_scan *S, int64_t c)
{
    int t = check_tensor(S, c);
    int64_t i0 = (c - S->first[t]) * CHECK_CHUNK, i1 = i0 + CHECK_CHUNK < S->ns[t] ? i0 + CHECK_CHUNK : S->ns[t];
    for (int64_t i = i0; i < i1; i++)
        if (!pp_is_representable(S->f, S->xs[t][i]))
            return i;
    return -1;
}

static void check_chunk(void *ctx, int64_t c)
{
    check_scan *S = ctx;
    S->bad[c] = check_first_bad(S, c);
}

int pp_attn_check(const pp_attn_variant *v, const pp_attn_dims *dm, int backward, int cp_forced, const double *q,
                  const double *k, const double *vv, const double *dout, const double *out, const double *lse,
                  const double *dq, const double *dk, const double *dv, char *eb, size_t el)
{
    return pp_attn_check_threads(v, dm, backward, cp_forced, q, k, vv, dout, out, lse, dq, dk, dv, 1, eb, el);
}

int pp_attn_check_threads(const pp_attn_variant *v, const pp_attn_dims *dm, int backward, int cp_forced,
                          const double *q, const double *k, const double *vv, const double *dout, const double *out,
                          const double *lse, const double *dq, const double *dk, const double *dv, int threads,
                          char *eb, size_t el)
{
    pp_format_id f = v->format;
    if (f != PP_FMT_FP16 && f != PP_FMT_BF16 && f != PP_FMT_FP32)
        return check_fail(eb, el, "attention: format %s is not fp16, bf16 or fp32", pp_format_get(f).name);
    if (dm->b < 0 || dm->s_q < 0 || dm->s_kv < 0 || dm->h < 1 || dm->h_kv < 1 || dm->d < 1 || dm->h % dm->h_kv != 0)
        return check_fail(eb, el,
                          "attention: bad shape (b %lld, s_q %lld, s_kv %lld, h %lld, h_kv %lld, d %lld): "
                          "need extents ≥ 0, h, h_kv, d ≥ 1 and h a multiple of h_kv",
                          (long long)dm->b, (long long)dm->s_q, (long long)dm->s_kv, (long long)dm->h,
                          (long long)dm->h_kv, (long long)dm->d);
    int64_t big = (int64_t)1 << 36;
    if (dm->s_q > big / (dm->h * dm->d) || dm->s_kv > big / (dm->h * dm->d) ||
        (dm->b && (dm->s_q + dm->s_kv) * dm->h * dm->d > big / dm->b))
        return check_fail(eb, el, "attention: tensors above 2^36 elements are not supported");
    int flash = v->kernel == PP_ATTN_FLASH;
    if (v->kernel != PP_ATTN_UNFUSED && !flash)
        return check_fail(eb, el, "attention: unknown kernel %d", (int)v->kernel);
    if ((unsigned)v->accum > PP_ATTN_ACC_STORAGE || (unsigned)v->scale > PP_ATTN_SCALE_PRE_Q ||
        (unsigned)v->softmax > PP_ATTN_SOFTMAX_NAIVE || (unsigned)v->max_subtract > PP_ATTN_MAX_NONE)
        return check_fail(eb, el, "attention: a knob has an unknown value");
    int L = v->qk_layer_scaling ? v->qk_layer_scaling : 1;
    if (L < 1 || L > (1 << 16) || v->block_m < 0 || v->block_n < 0 || v->pb_alpha < 0 || v->pb_alpha > (1 << 16))
        return check_fail(eb, el, "attention: qk_layer_scaling must be in [1, 65536], block sizes ≥ 1, "
                                  "pb_alpha in [1, 65536]");
    if (flash && (v->accum != PP_ATTN_ACC_FP32 || v->softmax != PP_ATTN_SOFTMAX_FP32 || L != 1 ||
                  v->max_subtract == PP_ATTN_MAX_PB_RELAX))
        return check_fail(eb, el,
                          "attention: the flash kernel takes accumulate fp32, softmax fp32, qk_layer_scaling 1 and "
                          "max_subtract row or none (the other settings are unfused, Megatron-style knobs)");
    int W = v->cp_world > 0 ? v->cp_world : 1;
    if (W > 1 || cp_forced) {
        if (dm->s_q != dm->s_kv || dm->s_q % (2 * W) != 0)
            return check_fail(eb, el,
                              "attention: context parallel needs s_q = s_kv divisible by 2·cp_world (s_q %lld, "
                              "s_kv %lld, cp_world %d)",
                              (long long)dm->s_q, (long long)dm->s_kv, W);
        if ((v->cp_accum != f && v->cp_accum != PP_FMT_FP32) ||
            (v->cp_grad_accum != f && v->cp_grad_accum != PP_FMT_FP32))
            return check_fail(eb, el, "attention: cp_accum and cp_grad_accum must be the storage format or fp32");
    }
    const char *engine_err = pp_attn_engine_error(v);
    if (engine_err)
        return check_fail(eb, el, "%s", engine_err);
    const char *fp8_err = pp_attn_fp8_error(v, backward);
    if (fp8_err)
        return check_fail(eb, el, "%s", fp8_err);
    const char *mma_err = pp_attn_fp8_mma_error(v, dm->d);
    if (mma_err)
        return check_fail(eb, el, "%s", mma_err);
    pp_attn_scalars sc;
    if (pp_attn_scalars_make(v, dm->d, &sc) != 0)
        return check_fail(eb, el, "attention: sigma must be positive and finite");
    int64_t nq = dm->b * dm->s_q * dm->h * dm->d, nkv = dm->b * dm->s_kv * dm->h_kv * dm->d;
    if ((nq && (!q || !out || !lse)) || (nkv && (!k || !vv)) ||
        (backward && ((nq && (!dout || !dq)) || (nkv && (!dk || !dv)))))
        return check_fail(eb, el, "attention: NULL data for a non-empty tensor");
    const char *names[] = {"q", "k", "v", "dout"};
    const double *xs[] = {q, k, vv, dout};
    int64_t ns[] = {nq, nkv, nkv, backward ? nq : 0}, first[4], chunks = 0;
    for (int t = 0; t < 4; t++) {
        first[t] = chunks;
        chunks += (ns[t] + CHECK_CHUNK - 1) / CHECK_CHUNK;
    }
    // threaded: every chunk's verdict, then the first in order; else chunk by chunk, up to the first
    int64_t *bad = threads > 1 ? malloc((size_t)(chunks ? chunks : 1) * sizeof *bad) : NULL;
    check_scan S = {f, xs, ns, first, bad};
    if (bad) {
        for (int64_t c = 0; c < chunks; c++)
            bad[c] = -1;  // a chunk a stop request skips stays "no verdict" (the caller discards the run)
        pp_parallel_for(check_chunk, &S, chunks, threads, NULL);
    }
    int bt = -1;
    int64_t bi = -1;
    for (int64_t c = 0; c < chunks && bi < 0; c++)
        if ((bi = bad ? bad[c] : check_first_bad(&S, c)) >= 0)
            bt = check_tensor(&S, c);
    free(bad);
    if (bt >= 0)
        return check_fail(eb, el, "attention: %s[%lld] = %.17g is not a %s value", names[bt], (long long)bi,
                          xs[bt][bi], pp_format_get(f).name);
    return 0;
}

int pp_attn_empty_result(const pp_attn_dims *dm, int backward, double *out, double *lse, double *dq, double *dk,
                         double *dv)
{
    if (dm->s_q != 0 && dm->s_kv != 0)
        return 0;
    int64_t nq = dm->b * dm->s_q * dm->h * dm->d, nkv = dm->b * dm->s_kv * dm->h_kv * dm->d;
    for (int64_t i = 0; i < nq; i++)
        out[i] = 0.0;
    for (int64_t i = 0; i < dm->b * dm->h * dm->s_q; i++)
        lse[i] = -INFINITY;
    if (backward) {
        for (int64_t i = 0; i < nq; i++)
            dq[i] = 0.0;
        for (int64_t i = 0; i < nkv; i++)
            dk[i] = dv[i] = 0.0;
    }
    return 1;
}
