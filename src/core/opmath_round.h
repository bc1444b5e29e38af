// opmath_round.h — the rounding of a binary32 opmath result to fp16 or bf16 (nearest even), as
// pp_round does it, fast for the usual operands: the hot loop of close.c calls it up to four
// times per pair.
#ifndef PP_OPMATH_ROUND_H
#define PP_OPMATH_ROUND_H

#include <stdint.h>
#include <string.h>

#include "format.h"

// pp_round(f, x, PP_RND_NE, 0) for f fp16 or bf16 and a binary32 x, bit for bit. The usual
// operands take a bit trick on x's binary32 pattern (add half the dropped quantum, less one,
// plus the kept lsb, then truncate: round to nearest, ties to even): bf16 for every finite
// nonzero x (its exponent range is binary32's, subnormals included, and the carry out of the
// largest finite values lands on the Inf pattern exactly when nearest-even overflows); fp16 on
// 2^−14 <= |x| < 65504, where neither its subnormal quantum nor its overflow enters. Everything
// else (zeros, NaN, Inf, fp16's subnormal range and overflow edge) goes to pp_round.
// tests/test_opmath_round.c checks it against pp_round.
// The rare operands, out of line so that the hot loops stay small.
static __attribute__((noinline, unused)) double pp_opmath_round_slow_(pp_format_id f, float x)
{
    return pp_round(f, (double)x, PP_RND_NE, 0);
}

static inline __attribute__((always_inline)) double pp_opmath_round(pp_format_id f, float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    uint32_t ax = u & 0x7FFFFFFFu;
    if (f == PP_FMT_BF16) {
        if (ax - 1u < 0x7F7FFFFFu) {  // finite, nonzero
            u = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
            memcpy(&x, &u, sizeof x);
            return x;
        }
    } else if (f == PP_FMT_FP16 && ax >= 0x38800000u && ax < 0x477FE000u) {
        u = (u + 0xFFFu + ((u >> 13) & 1u)) & 0xFFFFE000u;
        memcpy(&x, &u, sizeof x);
        return x;
    }
    return pp_opmath_round_slow_(f, x);
}

#endif
