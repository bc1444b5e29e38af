// round_lanes.h — binary64 values rounded to nearest-even into a format no wider than binary32,
// many side by side (CPU): (float)pp_round(f, x[l], PP_RND_NE, 0) for every lane, in a loop the
// compiler vectorises where the caller's flags allow (kernels/cpu/adamw_lanes.c). The same bits
// as pp_round (tests/test_round_lanes.c).
#ifndef PP_ROUND_LANES_H
#define PP_ROUND_LANES_H

#include <stdint.h>
#include <string.h>

#include "format.h"

#if defined(__GNUC__) && !defined(__clang__)
#define PP_ROUND_LANES_INLINE static inline __attribute__((always_inline))
#else
#define PP_ROUND_LANES_INLINE static inline
#endif

// out[l] = (float)pp_round(f, x[l], PP_RND_NE, 0) for l < n.
// f == PP_FMT_FP32: the conversion instruction itself. IEEE 754 binary64 → binary32 conversion
// rounds to nearest even with gradual underflow, overflows to ±Inf exactly when pp_round's NE
// does (|x| ≥ FLT_MAX + ½ulp: FLT_MAX's last bit is odd, so the tie goes up), and keeps a NaN's
// sign and top payload bits, quiet — which is what (float) does to pp_round's unchanged NaN. It
// needs round-to-nearest and no flush-to-zero (MXCSR's FTZ/DAZ clear), which precprobe never
// changes and which the binary32 arithmetic of the step around it needs as well.
// Another format with p ≤ 24 and emin ≥ −126 (its values are binary32 values): pp_round_mag64_'s
// common case (2^emin ≤ |x| < max_finite: add half an ulp minus one plus the kept parity, clear
// the dropped bits) in every lane, branch-free, and the lanes outside that range (zero,
// subnormals of the target, overflow, ±Inf, NaN: rare in a gradient) redone by pp_round one by
// one. Any wider format: pp_round per lane.
PP_ROUND_LANES_INLINE void pp_round_ne_f32_lanes(pp_format_id f, int n, const double *x, float *out)
{
    if (f == PP_FMT_FP32) {
        for (int l = 0; l < n; l++)
            out[l] = (float)x[l];
        return;
    }
    pp_format F = pp_format_get(f);  // an id outside the table: p = 0, below
    if (f == PP_FMT_E8M0 || F.p > 24 || F.p < 2 || F.emin < -126) {
        for (int l = 0; l < n; l++)
            out[l] = (float)pp_round(f, x[l], PP_RND_NE, 0);
        return;
    }
    int kn = 53 - F.p;  // dropped bits in the common case: 29 ≤ kn ≤ 51
    uint64_t lo = (uint64_t)(F.emin + 1023) << 52, max_bits = pp_f64_bits(F.max_finite);
    uint64_t mask = ((uint64_t)1 << kn) - 1, half = (uint64_t)1 << (kn - 1);
    int rare = 0;
    for (int l = 0; l < n; l++) {
        uint64_t u;
        memcpy(&u, &x[l], sizeof u);
        uint64_t a = u & ~PP_F64_SIGN;
        rare |= !(a - lo < max_bits - lo);
        // rem + parity > half ⇔ rem + parity − 1 ≥ half: the add carries into the kept bits
        // exactly when rounding goes up, and clearing the dropped bits afterwards gives the result
        uint64_t r = (a + (half - 1) + ((a >> kn) & 1)) & ~mask;
        uint64_t b = (u & PP_F64_SIGN) | r;
        double d;
        memcpy(&d, &b, sizeof d);
        out[l] = (float)d;  // exact: d is a value of f, so of binary32
    }
    if (rare)
        for (int l = 0; l < n; l++) {
            uint64_t u;
            memcpy(&u, &x[l], sizeof u);
            uint64_t a = u & ~PP_F64_SIGN;
            if (!(a - lo < max_bits - lo))
                out[l] = (float)pp_round(f, x[l], PP_RND_NE, 0);
        }
}

#endif
