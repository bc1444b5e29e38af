// attention_te_exact.h — fp8 = "te" (TransformerEngine's FP8 DPA forward) with `explain`'s exact
// sites (kernels/attention.h "Exact sites", fp8 = te): the host steps of attention_te_run.h (q, k,
// v's quantisation, the scalars, O's amax, scale and e4m3 store) and every row through
// pp_attn_te_row_x (kernels/attention_te_fp8_x.h), in binary64 where a site is exact. CPU only.
#ifndef PP_ATTENTION_TE_EXACT_H
#define PP_ATTENTION_TE_EXACT_H

#include <stddef.h>

#include "attention_te_fp8_x.h"
#include "attention_te_run.h"
#include "ranges.h"

// pp_attn_te_run's contract for v->exact_sites (any mask; 0 gives pp_attn_te_run's bits) on up to
// `threads` workers (the same bits for any count): out the values O8 stands for, or O itself with
// site out exact; lse binary64 where its site keeps it. amax may be NULL. Returns 0; 2 or 3 with
// one line in errbuf as pp_attn_te_run.
int pp_attn_te_run_x(const pp_attn_variant *v, const pp_attn_dims *dm, const double *q, const double *k,
                     const double *vv, double *out, double *lse, int threads, pp_attn_te_amax *amax, char *errbuf,
                     size_t errlen);

// The range notes of fp8 = "te"'s forward (kernels/sites.h: scores, softmax_in, exp, p, row_max,
// row_sum, lse, out) into R, from the same row (pp_attn_te_row_xr: with v's mask 0 the kernel's own
// values, so the notes hold for the CPU and the GPU run alike), on up to `threads` workers (the
// same counts for any number). A second pass over the forward, taken only with --ranges. R NULL:
// nothing. Returns 0; 2 or 3 with one line in errbuf.
int pp_attn_te_ranges_x(const pp_attn_variant *v, const pp_attn_dims *dm, const double *q, const double *k,
                        const double *vv, int threads, pp_ranges *R, char *errbuf, size_t errlen);

// What fp8 = "te"'s backward with exact sites (kernels/attention_te_bwd_exact.c) reads of the
// forward run under the same mask: q, k, v as its rows read them, their descales, O8 and X_o, P's
// scale and the forward's scalars.
typedef struct pp_attn_te_fwd_keep {
    double *e;          // [nq + 2·nkv], the caller's: q8, k8, v8 (the inputs with the quant sites exact)
    double *o8;         // [nq], the caller's: O8's e4m3 codes (site out exact: O itself)
    double X[3];        // X_q, X_k, X_v (binary64 with their block_scale sites exact; 1 with quant)
    double xo;          // X_o (out exact: 1)
    double scale_s;     // P's scale (amax_history_s's, else 448: the bound P ≤ 1)
    double alpha32;     // RN_32(α) (a binary32 value), and α in binary64
    double alpha64;
    pp_attn_te_cfg_x t; // the forward's scalars under the mask
} pp_attn_te_fwd_keep;

// pp_attn_te_run_x's forward (amax may be NULL) with range notes into R (may be NULL) and, when it succeeds,
// the values of pp_attn_te_fwd_keep into keep (its arrays the caller's). Returns as pp_attn_te_run_x.
int pp_attn_te_fwd_x(const pp_attn_variant *v, const pp_attn_dims *dm, const double *q, const double *k,
                     const double *vv, double *out, double *lse, int threads, pp_attn_te_amax *amax, pp_ranges *R,
                     pp_attn_te_fwd_keep *keep, char *errbuf, size_t errlen);

#endif
