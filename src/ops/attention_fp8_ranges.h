// attention_fp8_ranges.h — range diagnostics of FP8 attention's host quantisation (fp8 = "fa3"):
// the sites quant_q/k/v and block_scale_q/k/v (kernels/sites.h), noted on the host for every
// device, since the quantisation happens there (kernels/attention_plan.c, plan_fp8_make).
#ifndef PP_ATTENTION_FP8_RANGES_H
#define PP_ATTENTION_FP8_RANGES_H

#include "attention.h"
#include "ranges.h"

// Notes into R (NULL: nothing) each element of q, k, v before and after its rounding to the
// element format (x·s per tensor; x over its block's scale, times g for nvfp4, per block) and
// each scale once (per tensor: X at head 0; per block: at the block's head), with `clamped` for
// scales at their format's limits. Returns 0, or 3 when out of memory. v->fp8 none: nothing.
int pp_attn_fp8_range_notes(const pp_attn_variant *v, const pp_attn_dims *dm, const double *q, const double *k,
                            const double *vv, pp_ranges *R);

#endif
