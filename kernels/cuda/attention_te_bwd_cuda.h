// attention_te_bwd_cuda.h — fp8 = "te" forward and backward (kernels/attention.h "FP8 (fp8 = te)",
// "Backward:") on the GPU: the host steps of kernels/attention_te_bwd_run.h with one GPU thread per
// query row (D and dP's amax; dQ) and per key column (dK, dV), the CPU's bodies
// (kernels/attention_te_fp8_bwd.h), so the result equals pp_attn_te_fp8_bwd_cpu bit for bit.
// Hardware-untested where it was written (no GPU): tests/test_attention_te_bwd_cuda.c checks it;
// the decomposition is checked by a CPU loop device in tests/test_attention_te_fp8_bwd.c.
// C linkage; defined in attention_te_bwd_kernels.cu.
#ifndef PP_ATTENTION_TE_BWD_CUDA_H
#define PP_ATTENTION_TE_BWD_CUDA_H

#include <stddef.h>

#include "attention_te_bwd_run.h"

#ifdef __cplusplus
extern "C" {
#endif

// pp_attn_te_bwd_run on the GPU (its forward through pp_attn_te_fp8_cuda's device). Returns 0; 2
// for a bad variant or shape; 3 when a CUDA call fails (the message names the call, file, line).
int pp_attn_te_fp8_bwd_cuda(const pp_attn_variant *v, const pp_attn_dims *dm, const double *q, const double *k,
                            const double *vv, const double *dout, double *out, double *lse, double *dq, double *dk,
                            double *dv, pp_attn_te_bwd_amax *amax, pp_ranges *R, char *errbuf, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
