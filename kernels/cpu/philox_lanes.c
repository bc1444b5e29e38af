// cpu/philox_lanes.c — Philox4x32-10 side by side, one function per x86-64 level
// (philox_lanes.h). Each runs the rounds of kernels/philox.h on whole registers and finishes a
// count that is not a multiple of its width with pp_philox4x32_10 itself.
#include "philox_lanes.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PP_PHILOX_INTRIN 1
#endif

// The scalar definition for lanes k0 .. n − 1 (the tail, and the baseline level: GCC vectorises
// this loop as far as SSE2 allows).
static void words_tail(pp_philox4x32_key key, const uint32_t *c0, const uint32_t *c1, const uint32_t *c2,
                       uint32_t d, int k0, int n, uint32_t *const w[4])
{
    for (int k = k0; k < n; k++) {
        pp_philox4x32_ctr c = {{c0[k], c1[k], c2[k], d}};
        pp_philox4x32_ctr y = pp_philox4x32_10(c, key);
        w[0][k] = y.v[0], w[1][k] = y.v[1], w[2][k] = y.v[2], w[3][k] = y.v[3];
    }
}

static void words_baseline(pp_philox4x32_key key, const uint32_t *c0, const uint32_t *c1, const uint32_t *c2,
                           uint32_t d, int n, uint32_t *const w[4])
{
    words_tail(key, c0, c1, c2, d, 0, n, w);
}

#ifdef PP_PHILOX_INTRIN
// The round keys: key + r·(W0, W1) mod 2^32, r = 0..9 (pp_philox4x32_10's bumps, precomputed).
static void round_keys(pp_philox4x32_key key, uint32_t k0[PP_PHILOX_ROUNDS], uint32_t k1[PP_PHILOX_ROUNDS])
{
    for (int r = 0; r < PP_PHILOX_ROUNDS; r++) {
        k0[r] = key.v[0], k1[r] = key.v[1];
        key.v[0] += PP_PHILOX_W0, key.v[1] += PP_PHILOX_W1;
    }
}

// hi, lo = the halves of a·m per 32-bit lane: mul_epu32 multiplies the even lanes (the low words
// of the 64-bit lanes); shifted right by 32 the odd lanes become even; the products' halves go
// back to their lanes by a shift and a blend (odd lanes: mask 0xAA...).
#define MULHILO(MUL, SRL, SLL, BLEND, a, m, hi, lo)                                                        \
    do {                                                                                                  \
        __typeof__(a) pe_ = MUL(a, m), po_ = MUL(SRL(a, 32), m);                                          \
        hi = BLEND(SRL(pe_, 32), po_);                                                                    \
        lo = BLEND(pe_, SLL(po_, 32));                                                                    \
    } while (0)

#define BLEND512(a, b) _mm512_mask_blend_epi32((__mmask16)0xAAAA, a, b)
#define BLEND256(a, b) _mm256_blend_epi32(a, b, 0xAA)

__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"), noinline))
static void words_avx512(pp_philox4x32_key key, const uint32_t *c0, const uint32_t *c1, const uint32_t *c2,
                         uint32_t d, int n, uint32_t *const w[4])
{
    uint32_t k0[PP_PHILOX_ROUNDS], k1[PP_PHILOX_ROUNDS];
    round_keys(key, k0, k1);
    const __m512i m0 = _mm512_set1_epi32((int)PP_PHILOX_M0), m1 = _mm512_set1_epi32((int)PP_PHILOX_M1);
    int k = 0;
    for (; k + 16 <= n; k += 16) {
        __m512i x0 = _mm512_loadu_si512(c0 + k), x1 = _mm512_loadu_si512(c1 + k);
        __m512i x2 = _mm512_loadu_si512(c2 + k), x3 = _mm512_set1_epi32((int)d);
        for (int r = 0; r < PP_PHILOX_ROUNDS; r++) {
            __m512i hi0, lo0, hi1, lo1;
            MULHILO(_mm512_mul_epu32, _mm512_srli_epi64, _mm512_slli_epi64, BLEND512, x0, m0, hi0, lo0);
            MULHILO(_mm512_mul_epu32, _mm512_srli_epi64, _mm512_slli_epi64, BLEND512, x2, m1, hi1, lo1);
            // 0x96: a ^ b ^ c
            x0 = _mm512_ternarylogic_epi32(hi1, x1, _mm512_set1_epi32((int)k0[r]), 0x96);
            x2 = _mm512_ternarylogic_epi32(hi0, x3, _mm512_set1_epi32((int)k1[r]), 0x96);
            x1 = lo1, x3 = lo0;
        }
        _mm512_storeu_si512(w[0] + k, x0), _mm512_storeu_si512(w[1] + k, x1);
        _mm512_storeu_si512(w[2] + k, x2), _mm512_storeu_si512(w[3] + k, x3);
    }
    words_tail(key, c0, c1, c2, d, k, n, w);
}

__attribute__((target("avx2"), noinline))
static void words_avx2(pp_philox4x32_key key, const uint32_t *c0, const uint32_t *c1, const uint32_t *c2,
                       uint32_t d, int n, uint32_t *const w[4])
{
    uint32_t k0[PP_PHILOX_ROUNDS], k1[PP_PHILOX_ROUNDS];
    round_keys(key, k0, k1);
    const __m256i m0 = _mm256_set1_epi32((int)PP_PHILOX_M0), m1 = _mm256_set1_epi32((int)PP_PHILOX_M1);
    int k = 0;
    for (; k + 8 <= n; k += 8) {
        __m256i x0 = _mm256_loadu_si256((const __m256i *)(c0 + k)), x1 = _mm256_loadu_si256((const __m256i *)(c1 + k));
        __m256i x2 = _mm256_loadu_si256((const __m256i *)(c2 + k)), x3 = _mm256_set1_epi32((int)d);
        for (int r = 0; r < PP_PHILOX_ROUNDS; r++) {
            __m256i hi0, lo0, hi1, lo1;
            MULHILO(_mm256_mul_epu32, _mm256_srli_epi64, _mm256_slli_epi64, BLEND256, x0, m0, hi0, lo0);
            MULHILO(_mm256_mul_epu32, _mm256_srli_epi64, _mm256_slli_epi64, BLEND256, x2, m1, hi1, lo1);
            x0 = _mm256_xor_si256(_mm256_xor_si256(hi1, x1), _mm256_set1_epi32((int)k0[r]));
            x2 = _mm256_xor_si256(_mm256_xor_si256(hi0, x3), _mm256_set1_epi32((int)k1[r]));
            x1 = lo1, x3 = lo0;
        }
        _mm256_storeu_si256((__m256i *)(w[0] + k), x0), _mm256_storeu_si256((__m256i *)(w[1] + k), x1);
        _mm256_storeu_si256((__m256i *)(w[2] + k), x2), _mm256_storeu_si256((__m256i *)(w[3] + k), x3);
    }
    words_tail(key, c0, c1, c2, d, k, n, w);
}
#endif

pp_philox_words_fn pp_philox_words_for(pp_isa isa)
{
    isa = pp_isa_resolve(isa);
#ifdef PP_PHILOX_INTRIN
    if (isa == PP_ISA_AVX512)
        return words_avx512;
    if (isa == PP_ISA_AVX2)
        return words_avx2;
#endif
    (void)isa;
    return words_baseline;
}
