// close_lanes.h — one chunk of assert_close's streaming pass (close.c) in vector lanes: for 64
// pairs at once, torch's verdict and differences, the tolerance ratio, the exact difference, the
// ulp ratio and its histogram bin, and the chunk's maxima, each the same binary64/binary32
// operations as close.c's one-pair code, so the same bits. Written once (GCC vector
// extensions) and compiled per x86-64 level (base/isa.h), the widest chosen at run time.
//
// A chunk is taken only when every pair is usual: both operands finite, a − e exact and finite
// in binary64 (TwoSum's residual 0), the ulp's exponent >= −1023 (not fp64's subnormal quantum),
// every fp16/bf16 opmath rounding one of the bit trick's, and no statistic NaN. Anything else (NaN, Inf, overflowing or inexact differences) makes the
// function decline, and close.c runs its one-pair code on that chunk: the rare pairs keep their
// one definition. tests/test_close_fast.c checks every level against the one-pair oracle.
#ifndef PP_CLOSE_LANES_H
#define PP_CLOSE_LANES_H

#include <stdint.h>

#include "isa.h"

#define PP_CLOSE_CHUNK 64

// How torch's verdict is computed (close.c's arith): in binary64, in binary32, or in binary32
// opmath rounded to fp16 or bf16 (a lane whose rounding pp_round must do declines the chunk).
typedef enum pp_close_verdict { PP_CLOSE_V_F64, PP_CLOSE_V_F32, PP_CLOSE_V_FP16, PP_CLOSE_V_BF16 } pp_close_verdict;

typedef struct pp_close_lanes_ctx {
    pp_close_verdict verdict;
    int equality;            // rtol == atol == 0: close means equal
    double rtol, atol;       // the tolerances (binary64 verdict and the tolerance ratio)
    float rtol32, atol32;    // fl32 of them (binary32 verdict)
    double max_finite;       // the actual format's largest finite value, emin and precision:
    int emin, p;             // the ulp's exponent (close.c's ulp_exp)
} pp_close_lanes_ctx;

// A chunk's per-pair results and maxima, as close.c's pass would offer them.
typedef struct pp_close_chunk {
    double ad[PP_CLOSE_CHUNK], rd[PP_CLOSE_CHUNK];  // torch's abs/rel differences (+0.0 where close)
    double tr[PP_CLOSE_CHUNK];                      // the tolerance ratio
    double u[PP_CLOSE_CHUNK];                       // |a − e| / ulp (0 where a == e)
    double d[PP_CLOSE_CHUNK];                       // a − e, exact (±0 where a == e)
    int32_t bin[PP_CLOSE_CHUNK];                    // the ulp histogram's bin
    double max_ad, max_rd, max_tr, max_u, max_absd; // the maxima of ad, rd, tr, u, |d|
    double max_abs_e;                               // the greatest |e|
    int64_t mismatched;                             // pairs not close
} pp_close_chunk;

// Fills *out for the PP_CLOSE_CHUNK pairs (a[i], e[i]) and returns 1, or returns 0 (out
// unspecified) when a pair is not usual (above).
typedef int (*pp_close_chunk_fn)(const pp_close_lanes_ctx *c, const double *a, const double *e, pp_close_chunk *out);

// The chunk function of level isa (PP_ISA_AUTO: the widest this CPU runs).
pp_close_chunk_fn pp_close_chunk_for(pp_isa isa);

#endif
