// cpu/attention_te_fp8_bwd.h — fp8 = "te" forward and backward (kernels/attention.h "FP8 (fp8 =
// te)", "Backward:") on the CPU: the host steps of kernels/attention_te_bwd_run.h with the rows
// and key columns on the thread pool.
#ifndef PP_CPU_ATTENTION_TE_FP8_BWD_H
#define PP_CPU_ATTENTION_TE_FP8_BWD_H

#include "../attention_te_bwd_run.h"
#include "error.h"

// The CPU backward device: tasks of 16 rows (or key columns) on up to `threads` workers (the same
// bits for any count). ctx must point to an int holding the thread count.
pp_attn_te_bwd_device pp_attn_te_bwd_cpu_device(int *threads);

// pp_attn_te_bwd_run on the CPU devices; amax and R may be NULL. Returns PP_OK, PP_ERR_INPUT (one
// line in err) or PP_ERR_RUNTIME (out of memory).
int pp_attn_te_fp8_bwd_cpu(const pp_attn_variant *v, const pp_attn_dims *dm, const double *q, const double *k,
                           const double *vv, const double *dout, double *out, double *lse, double *dq, double *dk,
                           double *dv, int threads, pp_attn_te_bwd_amax *amax, pp_ranges *R, pp_error *err);

#endif
