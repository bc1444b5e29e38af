// cpu/polar_lanes.c — the halves of a polar attempt side by side, one function per x86-64 level
// (polar_lanes.h). Philox keeps one 128-bit block per 64-bit lane: vpmuludq multiplies the low
// words of the lanes into full 64-bit products, so the high half is a shift and the low half is
// the product itself (its upper word is never read: the next vpmuludq ignores it, and the words
// leave through a mask or a left shift). A count that is not a multiple of the width runs masked
// (AVX-512) or through the inline definition (AVX2). The costly half runs 4 lanes at both
// levels (pp_polar_z_for says why).
#include "polar_lanes.h"

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PP_POLAR_INTRIN 1
#endif

static void det_log_baseline(int n, const double *x, double *y)
{
    for (int k = 0; k < n; k++) {
        uint64_t b;
        memcpy(&b, &x[k], sizeof b);
        y[k] = pp_det_log_normal(b, 0);
    }
}

#ifdef PP_POLAR_INTRIN
// The round keys of pp_philox4x32_10 (key + r·(W0, W1) mod 2^32), zero-extended to 64 bits.
static void round_keys64(uint64_t seed, int64_t k0[PP_PHILOX_ROUNDS], int64_t k1[PP_PHILOX_ROUNDS])
{
    uint32_t a = (uint32_t)seed, b = (uint32_t)(seed >> 32);
    for (int r = 0; r < PP_PHILOX_ROUNDS; r++) {
        k0[r] = (int64_t)a, k1[r] = (int64_t)b;
        a += PP_PHILOX_W0, b += PP_PHILOX_W1;
    }
}

// ---------------------------------------------------------------------------------------------
// AVX-512: 8 lanes

// The high word of each 64-bit lane moved to its low word (and kept in the high one, which is
// never read): vpshufd runs on another port than vpmuludq and the shifts (port 0 for zmm on
// Intel), so the rounds are not all queued on one port (measured: ~25% of Philox's time).
#define HI512(p) _mm512_shuffle_epi32(p, (_MM_PERM_ENUM)0xF5)
#define HI256(p) _mm256_shuffle_epi32(p, 0xF5)

// pp_u11_oo of the 64 bits lo (low word) | hi (high word): k = ((bits >> 11) << 1) + 1 − 2^53
// = ((bits >> 10) | 1) − 2^53, |k| < 2^53, converted exactly and scaled by 2^-53 exactly.
__attribute__((target("avx512f,avx512dq,avx512vl"), always_inline))
static inline __m512d u11_512(__m512i lo, __m512i hi)
{
    __m512i bits = _mm512_mask_blend_epi32((__mmask16)0xAAAA, lo, _mm512_slli_epi64(hi, 32));
    __m512i k = _mm512_sub_epi64(_mm512_or_si512(_mm512_srli_epi64(bits, 10), _mm512_set1_epi64(1)),
                                 _mm512_set1_epi64(INT64_C(1) << 53));
    return _mm512_mul_pd(_mm512_cvtepi64_pd(k), _mm512_set1_pd(0x1p-53));
}

// One register of 8 entries from kj on (lanes at or past n masked: not read, not written):
// LOAD512 the counters of pp_philox_element (low word of i, high word of i, tensor, draw), ROUND512
// one pp_philox4x32_round (0x96: a ^ b ^ c), STORE512 u, v, s and s < 1. Macros over named registers,
// so that several registers' rounds interleave in one block of code with nothing on the stack
// (GCC kept arrays of registers in memory: a store and a load in every round's chain).
#define LOAD512(x0, x1, x2, x3, live, kj)                                                        \
    do {                                                                                        \
        int left_ = n - (kj);                                                                   \
        live = left_ >= 8 ? (__mmask8)0xFF : left_ > 0 ? (__mmask8)((1u << left_) - 1) : (__mmask8)0; \
        x0 = _mm512_maskz_loadu_epi64(live, idx + (kj)), x1 = _mm512_srli_epi64(x0, 32);        \
        x2 = _mm512_cvtepu32_epi64(_mm256_maskz_loadu_epi32(live, tid + (kj)));                 \
        x3 = _mm512_set1_epi64((int64_t)d);                                                     \
    } while (0)
#define ROUND512(x0, x1, x2, x3, c0, c1)                                                         \
    do {                                                                                        \
        __m512i p0_ = _mm512_mul_epu32(x0, m0), p1_ = _mm512_mul_epu32(x2, m1);                 \
        x0 = _mm512_ternarylogic_epi64(HI512(p1_), x1, c0, 0x96);                               \
        x2 = _mm512_ternarylogic_epi64(HI512(p0_), x3, c1, 0x96);                               \
        x1 = p1_, x3 = p0_;                                                                     \
    } while (0)
#define STORE512(x0, x1, x2, x3, live, kj)                                                       \
    do {                                                                                        \
        __m512d uk_ = u11_512(x0, x1), vk_ = u11_512(x2, x3);                                   \
        __m512d sk_ = _mm512_add_pd(_mm512_mul_pd(uk_, uk_), _mm512_mul_pd(vk_, vk_));          \
        __mmask8 a_ = _mm512_cmp_pd_mask(sk_, _mm512_set1_pd(1.0), _CMP_LT_OQ);                 \
        _mm512_mask_storeu_pd(u + (kj), live, uk_);                                             \
        _mm512_mask_storeu_pd(v + (kj), live, vk_);                                             \
        _mm512_mask_storeu_pd(s + (kj), live, sk_);                                             \
        _mm256_mask_storeu_epi32(acc + (kj), live, _mm256_maskz_mov_epi32(a_, _mm256_set1_epi32(1))); \
    } while (0)

// 32 entries a pass while they last, four registers' rounds interleaved (one register's rounds
// are a chain of dependent multiplies, 10 × ~7 cycles), then 8 a pass (the batch's retries are
// short lists: a pass of 32 would mask most of its lanes).
__attribute__((target("avx512f,avx512dq,avx512vl"), noinline))
static void us_avx512(uint64_t seed, const uint32_t *tid, const uint64_t *idx, uint32_t d, int n, double *u,
                      double *v, double *s, int *acc)
{
    int64_t k0[PP_PHILOX_ROUNDS], k1[PP_PHILOX_ROUNDS];
    round_keys64(seed, k0, k1);
    const __m512i m0 = _mm512_set1_epi64(PP_PHILOX_M0), m1 = _mm512_set1_epi64(PP_PHILOX_M1);
    int k = 0;
    for (; k + 32 <= n; k += 32) {
        __m512i a0, a1, a2, a3, b0, b1, b2, b3, e0, e1, e2, e3, f0, f1, f2, f3;
        __mmask8 la, lb, le, lf;
        LOAD512(a0, a1, a2, a3, la, k);
        LOAD512(b0, b1, b2, b3, lb, k + 8);
        LOAD512(e0, e1, e2, e3, le, k + 16);
        LOAD512(f0, f1, f2, f3, lf, k + 24);
        for (int r = 0; r < PP_PHILOX_ROUNDS; r++) {
            __m512i c0 = _mm512_set1_epi64(k0[r]), c1 = _mm512_set1_epi64(k1[r]);
            ROUND512(a0, a1, a2, a3, c0, c1);
            ROUND512(b0, b1, b2, b3, c0, c1);
            ROUND512(e0, e1, e2, e3, c0, c1);
            ROUND512(f0, f1, f2, f3, c0, c1);
        }
        STORE512(a0, a1, a2, a3, la, k);
        STORE512(b0, b1, b2, b3, lb, k + 8);
        STORE512(e0, e1, e2, e3, le, k + 16);
        STORE512(f0, f1, f2, f3, lf, k + 24);
    }
    for (; k < n; k += 8) {
        __m512i a0, a1, a2, a3;
        __mmask8 la;
        LOAD512(a0, a1, a2, a3, la, k);
        for (int r = 0; r < PP_PHILOX_ROUNDS; r++)
            ROUND512(a0, a1, a2, a3, _mm512_set1_epi64(k0[r]), _mm512_set1_epi64(k1[r]));
        STORE512(a0, a1, a2, a3, la, k);
    }
}

// ---------------------------------------------------------------------------------------------
// AVX2: 4 lanes

#define ROUNDS256(x0, x1, x2, x3, k0, k1)                                                              \
    do {                                                                                              \
        const __m256i m0_ = _mm256_set1_epi64x(PP_PHILOX_M0), m1_ = _mm256_set1_epi64x(PP_PHILOX_M1); \
        for (int r_ = 0; r_ < PP_PHILOX_ROUNDS; r_++) {                                               \
            __m256i p0_ = _mm256_mul_epu32(x0, m0_), p1_ = _mm256_mul_epu32(x2, m1_);                 \
            x0 = _mm256_xor_si256(_mm256_xor_si256(HI256(p1_), x1), _mm256_set1_epi64x(k0[r_]));      \
            x2 = _mm256_xor_si256(_mm256_xor_si256(HI256(p0_), x3), _mm256_set1_epi64x(k1[r_]));      \
            x1 = p1_, x3 = p0_;                                                                       \
        }                                                                                             \
    } while (0)

// pp_u11_oo without a 64-bit integer conversion (AVX2 has none). With h = bits >> 11 = 2^52·top
// + j (j < 2^52): top = 1 gives k = 2j + 1, top = 0 gives k = −(2·(2^52 − 1 − j) + 1). So
// u = ±(2j' + 1)·2^-53 with j' = j or j ^ (2^52 − 1); j' is read exactly as (2^52 + j') − 2^52
// (the bits of 2^52 + j' are 0x433… | j'), and 2j' + 1 < 2^53 and the scaling are exact: the same
// value as the scalar conversion, hence the same bits.
__attribute__((target("avx2"), always_inline))
static inline __m256d u11_256(__m256i lo, __m256i hi)
{
    __m256i bits = _mm256_blend_epi32(lo, _mm256_slli_epi64(hi, 32), 0xAA);
    __m256i h = _mm256_srli_epi64(bits, 11);
    const __m256i m52 = _mm256_set1_epi64x((INT64_C(1) << 52) - 1);
    __m256i neg = _mm256_cmpeq_epi64(_mm256_and_si256(h, _mm256_set1_epi64x(INT64_C(1) << 52)), _mm256_setzero_si256());
    __m256i j = _mm256_xor_si256(_mm256_and_si256(h, m52), _mm256_and_si256(neg, m52));
    __m256d jd = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(j, _mm256_set1_epi64x(INT64_C(0x4330000000000000)))),
                               _mm256_set1_pd(0x1p52));
    __m256d a = _mm256_mul_pd(_mm256_add_pd(_mm256_add_pd(jd, jd), _mm256_set1_pd(1.0)), _mm256_set1_pd(0x1p-53));
    return _mm256_xor_pd(a, _mm256_and_pd(_mm256_castsi256_pd(neg), _mm256_set1_pd(-0.0)));
}

// The inline definition of the cheap half for entries k0 .. n − 1 (the tails).
static void us_tail(uint64_t seed, const uint32_t *tid, const uint64_t *idx, uint32_t d, int k0, int n, double *u,
                    double *v, double *s, int *acc)
{
    for (int k = k0; k < n; k++) {
        pp_philox4x32_ctr w = pp_philox_element(seed, tid[k], idx[k], d);
        double uk = pp_u11_oo(pp_philox_bits64(w, 0));
        double vk = pp_u11_oo(pp_philox_bits64(w, 1));
        double sk = uk * uk + vk * vk;
        u[k] = uk, v[k] = vk, s[k] = sk, acc[k] = sk < 1.0;
    }
}

__attribute__((target("avx2"), noinline))
static void us_avx2(uint64_t seed, const uint32_t *tid, const uint64_t *idx, uint32_t d, int n, double *u,
                    double *v, double *s, int *acc)
{
    int64_t k0[PP_PHILOX_ROUNDS], k1[PP_PHILOX_ROUNDS];
    round_keys64(seed, k0, k1);
    int k = 0;
    for (; k + 4 <= n; k += 4) {
        __m256i x0 = _mm256_loadu_si256((const __m256i *)(idx + k)), x1 = _mm256_srli_epi64(x0, 32);
        __m256i x2 = _mm256_cvtepu32_epi64(_mm_loadu_si128((const __m128i *)(tid + k)));
        __m256i x3 = _mm256_set1_epi64x((int64_t)d);
        ROUNDS256(x0, x1, x2, x3, k0, k1);
        __m256d uk = u11_256(x0, x1), vk = u11_256(x2, x3);
        __m256d sk = _mm256_add_pd(_mm256_mul_pd(uk, uk), _mm256_mul_pd(vk, vk));
        __m256i a = _mm256_castpd_si256(_mm256_cmp_pd(sk, _mm256_set1_pd(1.0), _CMP_LT_OQ));
        _mm256_storeu_pd(u + k, uk);
        _mm256_storeu_pd(v + k, vk);
        _mm256_storeu_pd(s + k, sk);
        // the 64-bit masks' low words, as 0 or 1
        __m256i a32 = _mm256_permutevar8x32_epi32(a, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6));
        _mm_storeu_si128((__m128i *)(acc + k), _mm_and_si128(_mm256_castsi256_si128(a32), _mm_set1_epi32(1)));
    }
    us_tail(seed, tid, idx, d, k, n, u, v, s, acc);
}

#define DL_NAME det_log_256
#define DL_TARGET __attribute__((target("avx2,fma"), always_inline))
#define VD __m256d
#define VI __m256i
#define DL_ADD _mm256_add_pd
#define DL_SUB _mm256_sub_pd
#define DL_MUL _mm256_mul_pd
#define DL_DIV _mm256_div_pd
#define DL_FMSUB _mm256_fmsub_pd
#define DL_SET1 _mm256_set1_pd
#define DL_IAND _mm256_and_si256
#define DL_IADD _mm256_add_epi64
#define DL_ISUB _mm256_sub_epi64
#define DL_ISRL _mm256_srli_epi64
#define DL_ISET1 _mm256_set1_epi64x
// b − 0x3FF0… < 2^52 for the m in [1, 2) being tested: the signed compare is the unsigned one
#define DL_GE_BIG(b) _mm256_cmpgt_epi64(b, _mm256_set1_epi64x(INT64_C(0x3FF6A09E667F3BCD) - 1))
// (double)e exactly for |e| < 2^51: the bits of 1.5·2^52 + e, less 1.5·2^52
#define DL_I2D(e) \
    _mm256_sub_pd(_mm256_castsi256_pd(_mm256_add_epi64(e, _mm256_set1_epi64x(INT64_C(0x4338000000000000)))), \
                  _mm256_set1_pd(0x1.8p52))
#define DL_CASTD _mm256_castsi256_pd
#include "det_log_lanes_body.h"

// The inline definition of the costly half for entries k0 .. n − 1 (the tails).
static void z_tail(int k0, int n, const double *u, const double *v, const double *s, double *z0, double *z1)
{
    pp_polar_z_lanes(n - k0, u + k0, v ? v + k0 : NULL, s + k0, z0 + k0, z1 ? z1 + k0 : NULL);
}

// f = RN(sqrt(RN(RN(−2·log) / s))) once per entry, then z0 = RN(u·f) and (pairs) z1 = RN(v·f)
// (the test on z1 the same every iteration: predicted, or hoisted by the compiler).
__attribute__((target("avx2,fma"), noinline))
static void z_avx2(int n, const double *u, const double *v, const double *s, double *z0, double *z1)
{
    int k = 0;
    for (; k + 4 <= n; k += 4) {
        __m256d sk = _mm256_loadu_pd(s + k);
        __m256d y = det_log_256(_mm256_castpd_si256(sk));
        __m256d f = _mm256_sqrt_pd(_mm256_div_pd(_mm256_mul_pd(_mm256_set1_pd(-2.0), y), sk));
        _mm256_storeu_pd(z0 + k, _mm256_mul_pd(_mm256_loadu_pd(u + k), f));
        if (z1)
            _mm256_storeu_pd(z1 + k, _mm256_mul_pd(_mm256_loadu_pd(v + k), f));
    }
    z_tail(k, n, u, v, s, z0, z1);
}

__attribute__((target("avx2,fma"), noinline))
static void det_log_avx2(int n, const double *x, double *y)
{
    int k = 0;
    for (; k + 4 <= n; k += 4)
        _mm256_storeu_pd(y + k, det_log_256(_mm256_castpd_si256(_mm256_loadu_pd(x + k))));
    det_log_baseline(n - k, x + k, y + k);
}
#endif

pp_polar_us_fn pp_polar_us_for(pp_isa isa)
{
    isa = pp_isa_resolve(isa);
#ifdef PP_POLAR_INTRIN
    if (isa == PP_ISA_AVX512)
        return us_avx512;
    if (isa == PP_ISA_AVX2)
        return us_avx2;
#endif
    (void)isa;
    return NULL;
}

pp_polar_z_fn pp_polar_z_for(pp_isa isa)
{
    isa = pp_isa_resolve(isa);
#ifdef PP_POLAR_INTRIN
    // the AVX-512 level too runs 4 lanes: measured, 8 (zmm division and square root) made the
    // fp32 synthetic AdamW line slower, 0.88 s against 0.65 s CPU (the 4-lane version) on this
    // Xeon (Sapphire Rapids)
    if (isa == PP_ISA_AVX512 || isa == PP_ISA_AVX2)
        return z_avx2;
#endif
    (void)isa;
    return NULL;
}

pp_det_log_lanes_fn pp_det_log_lanes_for(pp_isa isa)
{
    isa = pp_isa_resolve(isa);
#ifdef PP_POLAR_INTRIN
    if (isa == PP_ISA_AVX512 || isa == PP_ISA_AVX2)
        return det_log_avx2;
#endif
    (void)isa;
    return det_log_baseline;
}
