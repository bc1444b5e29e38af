// cpu/attention_te_fp8.h — fp8 = "te" (TransformerEngine's FP8 DPA forward, kernels/attention.h
// "FP8 (fp8 = te)") on the CPU: the host steps of kernels/attention_te_run.h with the rows on the
// thread pool.
#ifndef PP_CPU_ATTENTION_TE_FP8_H
#define PP_CPU_ATTENTION_TE_FP8_H

#include "../attention_te_run.h"
#include "error.h"

// The CPU device: tasks of 16 rows on up to `threads` workers (the same bits for any count).
// ctx must point to an int holding the thread count.
pp_attn_te_device pp_attn_te_cpu_device(int *threads);

// pp_attn_te_run on the CPU device; amax may be NULL. Returns PP_OK, PP_ERR_INPUT (one line in
// err) or PP_ERR_RUNTIME (out of memory).
int pp_attn_te_fp8_cpu(const pp_attn_variant *v, const pp_attn_dims *dm, const double *q, const double *k,
                       const double *vv, double *out, double *lse, int threads, pp_attn_te_amax *amax, pp_error *err);

#endif
