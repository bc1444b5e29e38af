// attention_te_run.h — fp8 = "te" (TransformerEngine's FP8 DPA forward, kernels/attention.h
// "FP8 (fp8 = te)") on any device: the host quantises q, k, v, makes the scalars, hands the rows to
// the device (every row through pp_attn_te_row_at, kernels/attention_te_fp8.h), then takes O's
// amax, scale and e4m3 store. The CPU (kernels/cpu/attention_te_fp8.c) and the GPU
// (kernels/cuda/attention_te_kernels.cu) are two devices of it. Host C only.
#ifndef PP_ATTENTION_TE_RUN_H
#define PP_ATTENTION_TE_RUN_H

#include <stddef.h>

#include "attention_te_fp8.h"

#ifdef __cplusplus
extern "C" {
#endif

// What the graph returns besides O and the stats: the amaxes TE's recipe records, and the scales
// the run used (X_o = RN_32(1/scale_o) dequantises out).
typedef struct pp_attn_te_amax {
    double amax_s, amax_o;    // max P (before scale_s) and max |O| (before scale_o) over the run
    double scale_s, scale_o;  // P's scale (the recipe's or the bound's), O's (current or delayed)
} pp_attn_te_amax;

// A device: rows() runs pp_attn_te_row_at for every r < b·h·s_q (q8 [b, s_q, h, d], k8, v8
// [b, s_kv, h_kv, d] binary32 e4m3 values; o, lse, amax_s as pp_attn_te_row_at writes them, host
// arrays). Returns 0, or 3 with a one-line message in errbuf.
typedef struct pp_attn_te_device {
    int (*rows)(void *ctx, const pp_attn_te_cfg *c, const pp_attn_dims *dm, const float *q8, const float *k8,
                const float *v8, float *o, float *lse, float *amax_s, char *errbuf, size_t errlen);
    void *ctx;
} pp_attn_te_device;

// What every fp8 = te forward run begins with (the device's, pp_attn_te_run, and explain's binary64
// one, attention_te_exact.c): pp_attn_check of the inputs, the scalars into *sc, amax (may be NULL)
// cleared to zero amaxes and unit scales, and an empty problem's result written. Returns 0 to go
// on, 1 when the result is complete (empty), 2 with one line in errbuf for bad input.
int pp_attn_te_begin(const pp_attn_variant *v, const pp_attn_dims *dm, const double *q, const double *k,
                     const double *vv, double *out, double *lse, pp_attn_scalars *sc, pp_attn_te_amax *amax,
                     char *errbuf, size_t errlen);

// Runs v (v->fp8 == PP_ATTN_FP8_TE, forward) on q [b, s_q, h, d], k, vv [b, s_kv, h_kv, d]
// (values of v->format as binary64): out [b, s_q, h, d] the values O8 stands for (X_o·O8), lse
// [b, h, s_q] binary32 values (−Inf for a row that sees no key). amax may be NULL. The same bits
// on every device and for every order of the rows. Returns 0; 2 (pp_attn_check's refusal) or 3
// (out of memory, the device's failure) with one line in errbuf.
int pp_attn_te_run(const pp_attn_te_device *dev, const pp_attn_variant *v, const pp_attn_dims *dm, const double *q,
                   const double *k, const double *vv, double *out, double *lse, pp_attn_te_amax *amax, char *errbuf,
                   size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
