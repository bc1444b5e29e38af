// attention_ref_types.h — the attention reference's options and bounds (attention_ref.h is the
// interface): apart so the reference's own files can share a job built from them without
// including the entry point that runs them.
#ifndef PP_ATTENTION_REF_TYPES_H
#define PP_ATTENTION_REF_TYPES_H

#include <stdint.h>

// Default working precision of the mpfr-plain path, in bits.
#define PP_ATTN_REF_PLAIN_PREC 128

typedef enum pp_attn_ref_method {
    PP_ATTN_REF_FAST = 0,    // exact products, compensated sums, double-double; MPFR for exp/log
    PP_ATTN_REF_MPFR_PLAIN   // every operation in MPFR at prec_bits: slow, obviously right
} pp_attn_ref_method;

// The fast path's loops (reference/attention_ref_lanes.h). Every choice gives the same values, bit
// for bit; the portable loops are the vector paths' oracle in tests.
typedef enum pp_attn_ref_lanes {
    PP_ATTN_REF_LANES_AUTO = 0,  // the widest vector path the CPU runs (AVX-512, AVX2), else portable
    PP_ATTN_REF_LANES_PORTABLE,  // the portable scalar loops
    PP_ATTN_REF_LANES_AVX2       // at most AVX2 (so tests reach it on an AVX-512 machine)
} pp_attn_ref_lanes;

typedef struct pp_attn_ref_opts {
    pp_attn_ref_method method;
    int prec_bits;                     // mpfr-plain precision, 64…4096; 0 = 128
    int64_t b, s_q, s_kv, h, h_kv, d;  // h % h_kv == 0; head i uses kv head i / (h / h_kv)
    int causal;                        // query i sees keys j <= i + s_kv − s_q
    int sigma_given;                   // 0: σ is the exact real 1/√d; 1: σ = sigma
    double sigma;                      // finite, any sign (used when sigma_given)
    int backward;                      // 0: out and lse only; 1: also dq, dk, dv
    int threads;                       // pthreads over (batch, head[, row block]); < 1 = 1
    void (*progress)(void *ctx, int64_t done, int64_t total);  // may be NULL; one thread, ≤ 10/s
    void *progress_ctx;
    pp_attn_ref_lanes lanes;  // the fast path's loops: every choice gives the same bits
} pp_attn_ref_opts;

// Proven max |delivered − exact| per tensor, absolute, over the elements whose value is finite
// (0 for an empty or not computed tensor). Includes the final rounding to binary64 (½ulp).
typedef struct pp_attn_ref_bounds {
    double out, lse, dq, dk, dv;
    int64_t plain_tasks;  // tasks the fast path handed to mpfr-plain (its preconditions failed)
} pp_attn_ref_bounds;

// Optional per-element bounds, each shaped like its tensor (NULL: not wanted). NaN where the value
// is not finite; 0 where it is exact by construction (rows that see no key).
typedef struct pp_attn_ref_elem_bounds {
    double *out, *lse, *dq, *dk, *dv;
} pp_attn_ref_elem_bounds;

#endif
