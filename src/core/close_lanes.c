// close_lanes.c — close_lanes.h's chunk, written once with GCC's vector extensions (eight lanes
// of binary64; binary32 for fp32 verdicts) and compiled for each x86-64 level. Each statement is
// close.c's one-pair statement lane by lane: IEEE operations, correctly rounded, no contraction
// (-ffp-contract=off holds inside target() functions too), selections by bit masks instead of
// branches, so every lane gives close.c's bits.
#include "core/close_lanes.h"

#include <string.h>

// Vectors live only inside the chunk functions (no vector arguments or returns: their ABI would
// differ between the levels). A cast between two vector types of one size keeps the bits.

#define ABS64 UINT64_C(0x7FFFFFFFFFFFFFFF)
#define EXP64 UINT64_C(0x7FF0000000000000)
#define MANT64 UINT64_C(0x000FFFFFFFFFFFFF)

// y = pp_opmath_round(fp16 or bf16, x) on binary32 lanes: close.c's round_half_v (its bit trick,
// ±0 kept, fp16's subnormal grid by |x| + 0.75 − 0.75); slow gets the lanes left to pp_round
// (NaN, ±Inf, fp16 from its overflow edge). A macro: the lanes' vector types are the caller's.
#define CL_ROUND_HALF(y, x, bf, slow)                                                                  \
    do {                                                                                               \
        __typeof__(slow) u_ = (__typeof__(slow))(x), ax_ = u_ & 0x7FFFFFFFu, ok_, r_;                  \
        if (bf) {                                                                                      \
            __typeof__(slow) z_ = (__typeof__(slow))(ax_ == 0u);                                       \
            ok_ = (__typeof__(slow))(ax_ - 1u < 0x7F7FFFFFu) | z_;                                     \
            r_ = (u_ + 0x7FFFu + ((u_ >> 16) & 1u)) & 0xFFFF0000u;                                     \
            r_ = (z_ & u_) | (~z_ & r_);                                                               \
        } else {                                                                                       \
            __typeof__(slow) tiny_ = (__typeof__(slow))(ax_ < 0x38800000u);                            \
            ok_ = (__typeof__(slow))(ax_ < 0x477FE000u);                                               \
            __typeof__(slow) yb_ = (__typeof__(slow))(((__typeof__(x))ax_ + 0.75f) - 0.75f);           \
            yb_ |= u_ & 0x80000000u;                                                                   \
            r_ = (u_ + 0xFFFu + ((u_ >> 13) & 1u)) & 0xFFFFE000u;                                      \
            r_ = (tiny_ & yb_) | (~tiny_ & r_);                                                        \
        }                                                                                              \
        (slow) |= ~ok_;                                                                                \
        (y) = (__typeof__(x))r_;                                                                       \
    } while (0)

#define SEL(m, x, y) (((m) & (x)) | (~(m) & (y)))  // integer lanes: m ? x : y, m all ones or 0

#define CL_NAME chunk_baseline
#define CL_TGT
#define CL_W 2
#include "close_lanes_body.h"
#undef CL_NAME
#undef CL_TGT
#undef CL_W

#if defined(__x86_64__) && defined(__GNUC__)
#define CL_NAME chunk_avx2
#define CL_TGT __attribute__((target("avx2,fma")))
#define CL_W 4
#include "close_lanes_body.h"
#undef CL_NAME
#undef CL_TGT
#undef CL_W

#define CL_NAME chunk_avx512
#define CL_TGT __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw")))
#define CL_W 8
#include "close_lanes_body.h"
#undef CL_NAME
#undef CL_TGT
#undef CL_W
#endif

pp_close_chunk_fn pp_close_chunk_for(pp_isa isa)
{
    switch (pp_isa_resolve(isa)) {
#if defined(__x86_64__) && defined(__GNUC__)
    case PP_ISA_AVX512: return chunk_avx512;
    case PP_ISA_AVX2: return chunk_avx2;
#endif
    default: return chunk_baseline;
    }
}
