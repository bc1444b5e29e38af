// attention_te_bwd_run.h — fp8 = "te" forward and backward (kernels/attention.h "FP8 (fp8 = te)",
// "Backward:") on any device: the forward (attention_te_run.h), then the host quantises dO, makes
// the backward's scalars, hands the row and column passes to the device (every one through the
// bodies of kernels/attention_te_fp8_bwd.h), takes dP's amax for scale_dP between them, and stores
// dQ, dK, dV in FP8 with scales from their amaxes. The CPU (kernels/cpu/attention_te_fp8_bwd.c)
// and the GPU (kernels/cuda/attention_te_bwd_kernels.cu) are two devices of it. Host C only.
#ifndef PP_ATTENTION_TE_BWD_RUN_H
#define PP_ATTENTION_TE_BWD_RUN_H

#include <stddef.h>

#include "attention_te_fp8_bwd.h"
#include "attention_te_run.h"
#include "ranges.h"

#ifdef __cplusplus
extern "C" {
#endif

// What the backward graph returns besides dQ, dK, dV (amax_dP, amax_dQ/dK/dV: what TE's recipe
// folds into the amax histories) and the scales the run used.
typedef struct pp_attn_te_bwd_amax {
    pp_attn_te_amax fwd;                  // the forward's
    double amax_do, scale_do;             // dO's amax and its scale (current, or amax_history_do's)
    double amax_dp, scale_dp;             // max |dP| (te_ds_amax: max |dS|) over the run; dS's scale
    double amax_dq, amax_dk, amax_dv;     // before the FP8 stores
    double scale_dq, scale_dk, scale_dv;  // current, from those (or amax_history_dq/_dk/_dv's)
} pp_attn_te_bwd_amax;

// A device's backward passes (host arrays in and out; binary32 FP8 codes for q8, o8, do8
// [b, s_q, h, d], k8, v8 [b, s_kv, h_kv, d]; lse, D, amax_dp per row r of pp_attn_te_bwd_pre_at).
// pre(): pp_attn_te_bwd_pre_at for every row (R NULL); grads(): pp_attn_te_bwd_dq_at for every row
// and pp_attn_te_bwd_dkv_at for every column into dq, dk, dv (binary32 before the stores).
// Each returns 0, or 3 with a one-line message in errbuf.
typedef struct pp_attn_te_bwd_device {
    int (*pre)(void *ctx, const pp_attn_te_bwd_cfg *c, const pp_attn_dims *dm, const float *q8, const float *k8,
               const float *v8, const float *o8, const float *do8, const float *lse, float *D, float *amax_dp,
               char *errbuf, size_t errlen);
    int (*grads)(void *ctx, const pp_attn_te_bwd_cfg *c, const pp_attn_dims *dm, const float *q8, const float *k8,
                 const float *v8, const float *do8, const float *lse, const float *D, float *dq, float *dk, float *dv,
                 char *errbuf, size_t errlen);
    void *ctx;
} pp_attn_te_bwd_device;

// dO as the backward reads it: codes[i] = RN_f,sat(RN_32(dout[i]·s)) in format f (e5m2, or e4m3
// with v->te_grad_e4m3), s = v->te_scale_do when > 0 (amax_history_do: TE's delayed recipe), else
// the current scale of dout's amax (scaling none: 1, a cast); returns
// X_dO = RN_32(1/s); *scale, *amax (may be NULL) the scale and amax. n elements.
double pp_attn_te_quantise_dout(const pp_attn_variant *v, int64_t n, const double *dout, double *codes, double *scale,
                                double *amax);

// The gradients' FP8 format (e5m2, or e4m3 with v->te_grad_e4m3).
pp_format_id pp_attn_te_grad_format(const pp_attn_variant *v);

// Runs v (fp8 te) forward and backward: out, lse as pp_attn_te_run; dq [b, s_q, h, d], dk, dv
// [b, s_kv, h_kv, d] the values their FP8 tensors stand for (X·code). R (may be NULL): range notes
// of D, dP, dS (a host pass over the rows through the same bodies: the same values on any device)
// and the three stores (the op's `run --ranges` passes NULL and takes every note of the forward
// and backward from attention_te_bwd_exact.h's pp_attn_te_bwd_ranges_x instead). amax may be NULL.
// The same bits on every device. Returns 0; 2 or 3 with one line in errbuf.
int pp_attn_te_bwd_run(const pp_attn_te_device *fdev, const pp_attn_te_bwd_device *bdev, const pp_attn_variant *v,
                       const pp_attn_dims *dm, const double *q, const double *k, const double *vv, const double *dout,
                       double *out, double *lse, double *dq, double *dk, double *dv, pp_attn_te_bwd_amax *amax,
                       pp_ranges *R, char *errbuf, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
