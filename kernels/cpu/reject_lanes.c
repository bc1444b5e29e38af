// cpu/reject_lanes.c — the rejected list of a batch of polar attempts, one function per x86-64
// level (reject_lanes.h). Each packs whole registers and finishes a count that is not a multiple
// of its width with the scalar loop.
#include "reject_lanes.h"
#include "philox_lanes.h"
#include "polar_lanes.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PP_REJECT_INTRIN 1
#endif

// The definition for j0 ≤ j < n, r entries already listed: branch-free (a rejection is random,
// a branch on it mispredicts a fifth of the time). The store at dst[r] precedes the read of
// src[j + 1], and r ≤ j, so dst = src compacts in place.
static int rejected_tail(const int *acc, const int *src, int j0, int n, int r, int *dst)
{
    for (int j = j0; j < n; j++) {
        dst[r] = src ? src[j] : j;
        r += !acc[j];
    }
    return r;
}

static int rejected_baseline(const int *acc, const int *src, int n, int *dst)
{
    return rejected_tail(acc, src, 0, n, 0, dst);
}

#ifdef PP_REJECT_INTRIN
// 16 entries a step: the rejected lanes' values packed to the register's bottom in lane order
// (vpcompressd into a register, then a full store: the compressing store to memory is
// microcoded, slow on AMD Zen 4). The store writes dst[r .. r + 15] with r ≤ j, so at most up to
// dst[j + 15] < dst[n]: nothing past n, and in place it overwrites only src entries already
// loaded.
__attribute__((target("avx512f,avx512vl,popcnt"), noinline))
static int rejected_avx512(const int *acc, const int *src, int n, int *dst)
{
    const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    int r = 0, j = 0;
    for (; j + 16 <= n; j += 16) {
        __mmask16 k = _mm512_cmpeq_epi32_mask(_mm512_loadu_si512(acc + j), _mm512_setzero_si512());
        __m512i x = src ? _mm512_loadu_si512(src + j) : _mm512_add_epi32(iota, _mm512_set1_epi32(j));
        _mm512_storeu_si512(dst + r, _mm512_maskz_compress_epi32(k, x));
        r += _mm_popcnt_u32((unsigned)k);
    }
    return rejected_tail(acc, src, j, n, r, dst);
}

// 8 entries a step: AVX2 has no compress, so the permutation is made from the mask: pdep spreads
// the 8 mask bits to 8 bytes of 0xFF, pext picks the byte indices 0..7 of the kept lanes in
// order (packed to the bottom), and they widen to vpermd's lane indices. The store bounds are
// the AVX-512 ones with 8 for 16.
__attribute__((target("avx2,bmi2,popcnt"), noinline))
static int rejected_avx2(const int *acc, const int *src, int n, int *dst)
{
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    int r = 0, j = 0;
    for (; j + 8 <= n; j += 8) {
        __m256i z = _mm256_cmpeq_epi32(_mm256_loadu_si256((const __m256i *)(acc + j)), _mm256_setzero_si256());
        unsigned m = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(z));
        uint64_t bytes = _pdep_u64(m, UINT64_C(0x0101010101010101)) * 0xFF;
        uint64_t sel = _pext_u64(UINT64_C(0x0706050403020100), bytes);
        __m256i perm = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)sel));
        __m256i x = src ? _mm256_loadu_si256((const __m256i *)(src + j)) : _mm256_add_epi32(iota, _mm256_set1_epi32(j));
        _mm256_storeu_si256((__m256i *)(dst + r), _mm256_permutevar8x32_epi32(x, perm));
        r += _mm_popcnt_u32(m);
    }
    return rejected_tail(acc, src, j, n, r, dst);
}
#endif

pp_rejected_fn pp_rejected_for(pp_isa isa)
{
    isa = pp_isa_resolve(isa);
#ifdef PP_REJECT_INTRIN
    if (isa == PP_ISA_AVX512)
        return rejected_avx512;
    if (isa == PP_ISA_AVX2)
        return rejected_avx2;
#endif
    (void)isa;
    return rejected_baseline;
}

pp_rand_lanes_fns pp_rand_lanes_fns_for(pp_isa isa)
{
    return (pp_rand_lanes_fns){.words = pp_philox_words_for(isa), .rejected = pp_rejected_for(isa),
                               .us = pp_polar_us_for(isa), .z = pp_polar_z_for(isa)};
}
