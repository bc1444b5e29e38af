// attention_ref_lanes.c — the attention reference's vector paths (attention_ref_lanes.h): Dot2
// over 16 keys and the split accumulation over d, in AVX-512 and AVX2 intrinsics compiled for
// their targets alone and chosen at run time. Every lane is one chain of the scalar path
// (attention_ref_fast.c): the same IEEE binary64 operations (no FMA: -ffp-contract=off, and none
// written), in the same order, so the same bits (PROOFS.md#attention, "Vector paths").
#include "attention_ref_lanes.h"

#include <stddef.h>

#include "attention_ref_eft.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define ATTN_LANES_X86 1
#endif

#ifdef ATTN_LANES_X86

// ---------------------------------------------------------------------------------------------
// AVX-512: 8 lanes

// One Dot2 step on 8 chains: p = x·y (exact: binary32 values), TwoSum(h, p), error into c, |p|
// into t — the scalar dot2x4's statements in its order.
#define DOT2_STEP_512(h, c, t, xv, yv)                                                     \
    do {                                                                                   \
        __m512d p_ = _mm512_mul_pd(xv, yv);                                                \
        __m512d s_ = _mm512_add_pd(h, p_);                                                 \
        __m512d z_ = _mm512_sub_pd(s_, h);                                                 \
        c = _mm512_add_pd(c, _mm512_add_pd(_mm512_sub_pd(h, _mm512_sub_pd(s_, z_)),        \
                                           _mm512_sub_pd(p_, z_)));                        \
        h = s_;                                                                            \
        t = _mm512_add_pd(t, _mm512_abs_pd(p_));                                           \
    } while (0)

__attribute__((target("avx512f"))) static void dot2_keys16_avx512(const double *x,
                                                                  const double *kt0,
                                                                  const double *kt1, int64_t d,
                                                                  double h[16], double c[16],
                                                                  double T[16])
{
    __m512d h0 = _mm512_setzero_pd(), c0 = h0, t0 = h0, h1 = h0, c1 = h0, t1 = h0;
    for (int64_t l = 0; l < d; l++) {
        __m512d xv = _mm512_set1_pd(x[l]);
        DOT2_STEP_512(h0, c0, t0, xv, _mm512_loadu_pd(kt0 + l * PP_ATTN_KEY_BLOCK));
        DOT2_STEP_512(h1, c1, t1, xv, _mm512_loadu_pd(kt1 + l * PP_ATTN_KEY_BLOCK));
    }
    _mm512_storeu_pd(h, h0);
    _mm512_storeu_pd(h + 8, h1);
    _mm512_storeu_pd(c, c0);
    _mm512_storeu_pd(c + 8, c1);
    _mm512_storeu_pd(T, t0);
    _mm512_storeu_pd(T + 8, t1);
}

__attribute__((target("avx512f"))) static void acc_split_avx512(double *restrict h,
                                                                double *restrict lo,
                                                                const double *restrict y,
                                                                int64_t d, double xh, double xl)
{
    double x1, x2;
    pp_attn_split29_(xh, &x1, &x2);
    __m512d X1 = _mm512_set1_pd(x1), X2 = _mm512_set1_pd(x2), XL = _mm512_set1_pd(xl);
    int64_t l = 0;
    for (; l + 8 <= d; l += 8) {
        __m512d yv = _mm512_loadu_pd(y + l), hv = _mm512_loadu_pd(h + l);
        __m512d a = _mm512_mul_pd(X1, yv);
        __m512d s = _mm512_add_pd(hv, a);
        __m512d z = _mm512_sub_pd(s, hv);
        __m512d e = _mm512_add_pd(_mm512_sub_pd(hv, _mm512_sub_pd(s, z)), _mm512_sub_pd(a, z));
        __m512d r = _mm512_add_pd(e, _mm512_add_pd(_mm512_mul_pd(X2, yv), _mm512_mul_pd(XL, yv)));
        _mm512_storeu_pd(h + l, s);
        _mm512_storeu_pd(lo + l, _mm512_add_pd(_mm512_loadu_pd(lo + l), r));
    }
    for (; l < d; l++)
        pp_attn_acc_split_elem_(h + l, lo + l, y[l], x1, x2, xl);
}

// ---------------------------------------------------------------------------------------------
// AVX2: 4 lanes (a block of 8 keys is two vectors)

#define DOT2_STEP_256(h, c, t, xv, yv, sign)                                               \
    do {                                                                                   \
        __m256d p_ = _mm256_mul_pd(xv, yv);                                                \
        __m256d s_ = _mm256_add_pd(h, p_);                                                 \
        __m256d z_ = _mm256_sub_pd(s_, h);                                                 \
        c = _mm256_add_pd(c, _mm256_add_pd(_mm256_sub_pd(h, _mm256_sub_pd(s_, z_)),        \
                                           _mm256_sub_pd(p_, z_)));                        \
        h = s_;                                                                            \
        t = _mm256_add_pd(t, _mm256_andnot_pd(sign, p_));                                  \
    } while (0)

__attribute__((target("avx2"))) static void dot2_keys16_avx2(const double *x, const double *kt0,
                                                             const double *kt1, int64_t d,
                                                             double h[16], double c[16],
                                                             double T[16])
{
    const __m256d sign = _mm256_set1_pd(-0.0);
    __m256d hv[4], cv[4], tv[4];
    for (int i = 0; i < 4; i++)
        hv[i] = cv[i] = tv[i] = _mm256_setzero_pd();
    for (int64_t l = 0; l < d; l++) {
        __m256d xv = _mm256_set1_pd(x[l]);
        const double *y0 = kt0 + l * PP_ATTN_KEY_BLOCK, *y1 = kt1 + l * PP_ATTN_KEY_BLOCK;
        DOT2_STEP_256(hv[0], cv[0], tv[0], xv, _mm256_loadu_pd(y0), sign);
        DOT2_STEP_256(hv[1], cv[1], tv[1], xv, _mm256_loadu_pd(y0 + 4), sign);
        DOT2_STEP_256(hv[2], cv[2], tv[2], xv, _mm256_loadu_pd(y1), sign);
        DOT2_STEP_256(hv[3], cv[3], tv[3], xv, _mm256_loadu_pd(y1 + 4), sign);
    }
    for (int i = 0; i < 4; i++) {
        _mm256_storeu_pd(h + 4 * i, hv[i]);
        _mm256_storeu_pd(c + 4 * i, cv[i]);
        _mm256_storeu_pd(T + 4 * i, tv[i]);
    }
}

__attribute__((target("avx2"))) static void acc_split_avx2(double *restrict h, double *restrict lo,
                                                           const double *restrict y, int64_t d,
                                                           double xh, double xl)
{
    double x1, x2;
    pp_attn_split29_(xh, &x1, &x2);
    __m256d X1 = _mm256_set1_pd(x1), X2 = _mm256_set1_pd(x2), XL = _mm256_set1_pd(xl);
    int64_t l = 0;
    for (; l + 4 <= d; l += 4) {
        __m256d yv = _mm256_loadu_pd(y + l), hv = _mm256_loadu_pd(h + l);
        __m256d a = _mm256_mul_pd(X1, yv);
        __m256d s = _mm256_add_pd(hv, a);
        __m256d z = _mm256_sub_pd(s, hv);
        __m256d e = _mm256_add_pd(_mm256_sub_pd(hv, _mm256_sub_pd(s, z)), _mm256_sub_pd(a, z));
        __m256d r = _mm256_add_pd(e, _mm256_add_pd(_mm256_mul_pd(X2, yv), _mm256_mul_pd(XL, yv)));
        _mm256_storeu_pd(h + l, s);
        _mm256_storeu_pd(lo + l, _mm256_add_pd(_mm256_loadu_pd(lo + l), r));
    }
    for (; l < d; l++)
        pp_attn_acc_split_elem_(h + l, lo + l, y[l], x1, x2, xl);
}

static const pp_attn_lanes_ LANES_AVX512 = {"avx512", dot2_keys16_avx512, acc_split_avx512};
static const pp_attn_lanes_ LANES_AVX2 = {"avx2", dot2_keys16_avx2, acc_split_avx2};

#endif  // ATTN_LANES_X86

// ---------------------------------------------------------------------------------------------
// The choice

const pp_attn_lanes_ *pp_attn_lanes_pick_(pp_attn_ref_lanes choice)
{
    if (choice == PP_ATTN_REF_LANES_PORTABLE)
        return NULL;
#ifdef ATTN_LANES_X86
    if (choice == PP_ATTN_REF_LANES_AUTO && __builtin_cpu_supports("avx512f"))
        return &LANES_AVX512;
    if (__builtin_cpu_supports("avx2"))
        return &LANES_AVX2;
#endif
    return NULL;
}

const char *pp_attn_lanes_name_(const pp_attn_lanes_ *lanes)
{
    return lanes ? lanes->name : "portable";
}
