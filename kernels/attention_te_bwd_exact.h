// attention_te_bwd_exact.h — fp8 = "te" forward AND backward (TransformerEngine's FP8 DPA, passes =
// "fwd+bwd") with `explain`'s exact sites and the range notes of every intermediate: the host steps
// of attention_te_bwd_run.h (dO's quantisation, scale_dP from dP's amax, the FP8 stores of dq, dk,
// dv) around the binary64 bodies of kernels/attention_te_fp8_bwd_x.h, after the forward's binary64
// run (attention_te_exact.h pp_attn_te_fwd_x) under the same mask. CPU only.
#ifndef PP_ATTENTION_TE_BWD_EXACT_H
#define PP_ATTENTION_TE_BWD_EXACT_H

#include <stddef.h>

#include "attention_te_bwd_run.h"
#include "ranges.h"

// pp_attn_te_bwd_run's contract for v->exact_sites (any mask; 0 gives pp_attn_te_bwd_run's bits)
// on up to `threads` workers (the same bits for any count): out, lse as pp_attn_te_run_x; dq, dk,
// dv the values their FP8 tensors stand for, or (sites dq, dk, dv exact) the gradients before the
// store. amax may be NULL. R (may be NULL): the range notes of the forward (pp_attn_te_ranges_x's
// sites) and of the backward — quant_do and block_scale_do (dO8 and X_dO), d, dp, ds (dS8),
// block_scale_ds (X_dP), exp and p (P recomputed and P8, per q head), dq_acc (per q head),
// dkv_acc (per kv head), the dq, dk, dv stores — each value as this run computes it (with v's mask
// 0: the kernel's own values, valid for a CPU or a GPU run alike). Returns 0; 2 or 3 with one line
// in errbuf.
int pp_attn_te_bwd_run_x(const pp_attn_variant *v, const pp_attn_dims *dm, const double *q, const double *k,
                         const double *vv, const double *dout, double *out, double *lse, double *dq, double *dk,
                         double *dv, int threads, pp_attn_te_bwd_amax *amax, pp_ranges *R, char *errbuf,
                         size_t errlen);

// The range notes alone (pp_attn_te_bwd_run_x into scratch outputs): a second pass, taken only
// with --ranges. R NULL: nothing. Returns 0; 2 or 3 with one line in errbuf.
int pp_attn_te_bwd_ranges_x(const pp_attn_variant *v, const pp_attn_dims *dm, const double *q, const double *k,
                            const double *vv, const double *dout, int threads, pp_ranges *R, char *errbuf,
                            size_t errlen);

#endif
