// attention_te_cuda.h — fp8 = "te" (TransformerEngine's FP8 DPA forward, kernels/attention.h
// "FP8 (fp8 = te)") on the GPU: the host steps of kernels/attention_te_run.h with one GPU thread
// per query row (pp_attn_te_row_at, the CPU's statements), so the result equals
// pp_attn_te_fp8_cpu bit for bit. Hardware-untested (no GPU where it was written); its
// decomposition is checked by a CPU loop device in tests/test_attention_te_fp8.c. C linkage;
// defined in attention_te_kernels.cu.
#ifndef PP_ATTENTION_TE_CUDA_H
#define PP_ATTENTION_TE_CUDA_H

#include <stddef.h>

#include "attention_te_run.h"

#ifdef __cplusplus
extern "C" {
#endif

// pp_attn_te_run on the GPU. Returns 0; 2 for a bad variant or shape; 3 when a CUDA call fails
// (the message names the call, file and line).
int pp_attn_te_fp8_cuda(const pp_attn_variant *v, const pp_attn_dims *dm, const double *q, const double *k,
                        const double *vv, double *out, double *lse, pp_attn_te_amax *amax, char *errbuf,
                        size_t errlen);

// The GPU device of pp_attn_te_run (one thread per row), for the backward's run
// (kernels/cuda/attention_te_bwd_kernels.cu) to run its forward on.
pp_attn_te_device pp_attn_te_cuda_device(void);

#ifdef __cplusplus
}
#endif

#endif
