// attention_check.h — what every attention backend checks before it computes (variant, shape,
// data pointers, input values) and the result of an attention with nothing to see: one definition
// for every backend (the launch plan, kernels/attention_plan.c, which the CPU emulation and the GPU
// both run), so all refuse the same inputs with the same message. Host C only.
#ifndef PP_ATTENTION_CHECK_H
#define PP_ATTENTION_CHECK_H

#include <stddef.h>

#include "attention.h"

// Returns 0, or 2 with a one-line message in errbuf (errlen bytes; may be NULL). cp_forced runs
// the context-parallel shape checks even for cp_world 1 (the CPU's force_cp test option).
int pp_attn_check(const pp_attn_variant *v, const pp_attn_dims *dm, int backward, int cp_forced, const double *q,
                  const double *k, const double *vv, const double *dout, const double *out, const double *lse,
                  const double *dq, const double *dk, const double *dv, char *errbuf, size_t errlen);

// The same with the scan of the input values on up to `threads` threads (chunks of the tensors,
// each checked alone; the first offending element in the serial order is the one reported, so the
// message never depends on the thread count).
int pp_attn_check_threads(const pp_attn_variant *v, const pp_attn_dims *dm, int backward, int cp_forced,
                          const double *q, const double *k, const double *vv, const double *dout, const double *out,
                          const double *lse, const double *dq, const double *dk, const double *dv, int threads,
                          char *errbuf, size_t errlen);

// When s_q or s_kv is 0 (no query sees a key): out 0, lse −Inf, zero gradients; returns 1. Else
// writes nothing and returns 0.
int pp_attn_empty_result(const pp_attn_dims *dm, int backward, double *out, double *lse, double *dq, double *dk,
                         double *dv);

#endif
