// attention_ref_lanes.c — the attention reference's vector paths (attention_ref_lanes.h): the
// anchored dot over 16 keys, the anchored accumulation over d, and the per-key steps (attention_ref_lanes_body.h,
// included once per instruction set), in AVX-512 and AVX2 intrinsics compiled for their targets
// alone and chosen at run time; and the per-key steps' portable loops, their oracle. Every lane is
// one chain of the scalar path (attention_ref_fast.c, attention_ref_eft.h): the same rounded IEEE
// binary64 operations in the same order (-ffp-contract=off; the only FMAs are the scalar path's
// own and ones whose product is exact, the same value as the product-then-add they replace), so
// the same bits (PROOFS.md#attention, "Vector paths").
#include "attention_ref_lanes.h"

#include <stddef.h>
#include <string.h>

#include "attention_ref_eft.h"

// ---------------------------------------------------------------------------------------------
// The per-key steps' portable loops: the scalar step per key (attention_ref_eft.h)

void pp_attn_exp_row_(const double (*tab)[2], const double *L, int64_t n, const double *Sh,
                      const double *Sl, double M, double *eh, double *el, unsigned char *cut)
{
    for (int64_t j = 0; j < n; j++) {
        cut[j] = Sh[j] - M < -500.0;  // E < e^−499.9 < 2^−721 (PROOFS: "Softmax")
        if (cut[j])
            eh[j] = el[j] = 0.0;
        else
            pp_attn_exp_dd_(tab, L, Sh[j], M, Sl[j], eh + j, el + j);  // ±2^−81 relative
    }
}

int pp_attn_score_keys_(int64_t n, const double *h, const double *c, const double *T, double sig_h,
                        double sig_l, double sig_b, double coef, double *Sh, double *Sl, double *eS)
{
    int bad = 0;
    for (int64_t j = 0; j < n; j++)
        bad |= pp_attn_score_elem_(h[j], c[j], T[j], sig_h, sig_l, sig_b, coef, Sh + j, Sl + j,
                                   eS + j);
    return bad;
}

void pp_attn_scale_row_(int64_t n, double *Ph, double *Pl, const unsigned char *cut, double rh,
                        double rl)
{
    for (int64_t j = 0; j < n; j++)
        if (!cut[j])  // ≥ 2^−722·0.98 > 2^−800
            pp_attn_dd_mul_inl_(Ph[j], Pl[j], rh, rl, Ph + j, Pl + j);
}

void pp_attn_dp_keys_(int64_t n, const double *h, const double *c, const double *V, double coef,
                      const double *Ph, const double *Pl, double *dph, double *dpl, double *edp,
                      double *mh, double *ml)
{
    for (int64_t j = 0; j < n; j++)
        pp_attn_dp_elem_(h[j], c[j], V[j], coef, Ph[j], Pl[j], dph + j, dpl + j, edp + j, mh + j,
                         ml + j);
}

void pp_attn_ds_keys_(const pp_attn_ds_row_ *R, int64_t n, const double *Ph, const double *Pl,
                      const double *dph, const double *dpl, const double *edp,
                      const unsigned char *cut, double *sh, double *sl, double *e,
                      unsigned char *state)
{
    for (int64_t j = 0; j < n; j++)
        state[j] = pp_attn_ds_elem_(R, Ph[j], Pl[j], dph[j], dpl[j], edp[j], cut[j], sh + j,
                                    sl + j, e + j);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define ATTN_LANES_X86 1
#endif

#ifdef ATTN_LANES_X86

// ---------------------------------------------------------------------------------------------
// AVX-512: 8 lanes (the per-key steps from attention_ref_lanes_body.h, then the dot kernels)

#define L_W 8
#define L_T __m512d
#define L_M __mmask8
#define L_I __m512i
#define L_SET1 _mm512_set1_pd
#define L_LD _mm512_loadu_pd
#define L_ST _mm512_storeu_pd
#define L_ADD _mm512_add_pd
#define L_SUB _mm512_sub_pd
#define L_MUL _mm512_mul_pd
#define L_FMS _mm512_fmsub_pd
#define L_FMA _mm512_fmadd_pd
#define L_FNMA _mm512_fnmadd_pd
#define L_ABS _mm512_abs_pd
#define L_NEG(x) _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(x), _mm512_set1_epi64(INT64_MIN)))
#define L_LT(a, b) _mm512_cmp_pd_mask(a, b, _CMP_LT_OQ)
#define L_NLE(a, b) _mm512_cmp_pd_mask(a, b, _CMP_NLE_UQ)
#define L_NLT(a, b) _mm512_cmp_pd_mask(a, b, _CMP_NLT_UQ)
#define L_MOR(a, b) ((__mmask8)((a) | (b)))
#define L_SEL(m, a, b) _mm512_mask_blend_pd(m, a, b)  // m ? b : a, per lane
#define L_BITS(m) ((int)(m))
#define L_CUTMASK(p) _mm512_test_epi64_mask(_mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)(const void *)(p))), _mm512_set1_epi64(0xff))
#define L_ICAST _mm512_castpd_si512
#define L_DCAST _mm512_castsi512_pd
#define L_ISUB _mm512_sub_epi64
#define L_IADD _mm512_add_epi64
#define L_IAND _mm512_and_si512
#define L_ISLL _mm512_slli_epi64
#define L_ISET1(x) _mm512_set1_epi64(x)
#define L_GATHER(base, ix) _mm512_i64gather_pd(ix, base, 8)
#define FN(name) name##_avx512
#define TGT __attribute__((target("avx512f")))
#include "attention_ref_lanes_body.h"

// The dot kernels: the anchored dot's step on 8 chains (FN(dot_step), attention_ref_lanes_body.h).
__attribute__((target("avx512f"))) static void dot_keys16_avx512(const double *x, double A,
                                                                 const double *kt0,
                                                                 const double *kt1, int64_t d,
                                                                 double h[16], double c[16])
{
    const __m512d Av = _mm512_set1_pd(A);
    __m512d h0 = Av, h1 = Av, c0 = _mm512_setzero_pd(), c1 = c0;
    for (int64_t l = 0; l < d; l++) {
        __m512d xv = _mm512_set1_pd(x[l]);
        const double *y0 = kt0 + l * PP_ATTN_KEY_BLOCK, *y1 = kt1 + l * PP_ATTN_KEY_BLOCK;
        dot_step_avx512(&h0, &c0, xv, _mm512_loadu_pd(y0));
        dot_step_avx512(&h1, &c1, xv, _mm512_loadu_pd(y1));
    }
    _mm512_storeu_pd(h, _mm512_sub_pd(h0, Av));  // exact
    _mm512_storeu_pd(h + 8, _mm512_sub_pd(h1, Av));
    _mm512_storeu_pd(c, c0);
    _mm512_storeu_pd(c + 8, c1);
}

// dot_keys16 for two rows x0, x1 at once: each block element is loaded once for both rows'
// chains (four chains per step); each chain the one dot_keys16 computes for its row. Results for
// row i at h[16·i + m] (likewise c).
__attribute__((target("avx512f"))) static void dot_rows2_avx512(const double *x0, double A0,
                                                                const double *x1, double A1,
                                                                const double *kt0,
                                                                const double *kt1, int64_t d,
                                                                double h[32], double c[32])
{
    const __m512d Av = _mm512_set1_pd(A0), Aw = _mm512_set1_pd(A1);
    __m512d h0 = Av, h1 = Av, h2 = Aw, h3 = Aw;
    __m512d c0 = _mm512_setzero_pd(), c1 = c0, c2 = c0, c3 = c0;
    for (int64_t l = 0; l < d; l++) {
        __m512d xv = _mm512_set1_pd(x0[l]), xw = _mm512_set1_pd(x1[l]);
        const double *y0 = kt0 + l * PP_ATTN_KEY_BLOCK, *y1 = kt1 + l * PP_ATTN_KEY_BLOCK;
        __m512d ya = _mm512_loadu_pd(y0), yb = _mm512_loadu_pd(y1);
        dot_step_avx512(&h0, &c0, xv, ya);
        dot_step_avx512(&h1, &c1, xv, yb);
        dot_step_avx512(&h2, &c2, xw, ya);
        dot_step_avx512(&h3, &c3, xw, yb);
    }
    _mm512_storeu_pd(h, _mm512_sub_pd(h0, Av));  // exact
    _mm512_storeu_pd(h + 8, _mm512_sub_pd(h1, Av));
    _mm512_storeu_pd(h + 16, _mm512_sub_pd(h2, Aw));
    _mm512_storeu_pd(h + 24, _mm512_sub_pd(h3, Aw));
    _mm512_storeu_pd(c, c0);
    _mm512_storeu_pd(c + 8, c1);
    _mm512_storeu_pd(c + 16, c2);
    _mm512_storeu_pd(c + 24, c3);
}

#undef L_W
#undef L_T
#undef L_M
#undef L_I
#undef L_SET1
#undef L_LD
#undef L_ST
#undef L_ADD
#undef L_SUB
#undef L_MUL
#undef L_FMS
#undef L_FMA
#undef L_FNMA
#undef L_ABS
#undef L_NEG
#undef L_LT
#undef L_NLE
#undef L_NLT
#undef L_MOR
#undef L_SEL
#undef L_BITS
#undef L_CUTMASK
#undef L_ICAST
#undef L_DCAST
#undef L_ISUB
#undef L_IADD
#undef L_IAND
#undef L_ISLL
#undef L_ISET1
#undef L_GATHER
#undef FN
#undef TGT

// ---------------------------------------------------------------------------------------------
// AVX2: 4 lanes (a block of 8 keys is two vectors)

#define L_W 4
#define L_T __m256d
#define L_M __m256d
#define L_I __m256i
#define L_SET1 _mm256_set1_pd
#define L_LD _mm256_loadu_pd
#define L_ST _mm256_storeu_pd
#define L_ADD _mm256_add_pd
#define L_SUB _mm256_sub_pd
#define L_MUL _mm256_mul_pd
#define L_FMS _mm256_fmsub_pd
#define L_FMA _mm256_fmadd_pd
#define L_FNMA _mm256_fnmadd_pd
#define L_ABS(x) _mm256_andnot_pd(_mm256_set1_pd(-0.0), x)
#define L_NEG(x) _mm256_xor_pd(x, _mm256_set1_pd(-0.0))
#define L_LT(a, b) _mm256_cmp_pd(a, b, _CMP_LT_OQ)
#define L_NLE(a, b) _mm256_cmp_pd(a, b, _CMP_NLE_UQ)
#define L_NLT(a, b) _mm256_cmp_pd(a, b, _CMP_NLT_UQ)
#define L_MOR _mm256_or_pd
#define L_SEL(m, a, b) _mm256_blendv_pd(a, b, m)  // m ? b : a, per lane
#define L_BITS _mm256_movemask_pd
#define L_CUTMASK(p) attn_cutmask_avx2(p)
#define L_ICAST _mm256_castpd_si256
#define L_DCAST _mm256_castsi256_pd
#define L_ISUB _mm256_sub_epi64
#define L_IADD _mm256_add_epi64
#define L_IAND _mm256_and_si256
#define L_ISLL _mm256_slli_epi64
#define L_ISET1(x) _mm256_set1_epi64x(x)
#define L_GATHER(base, ix) _mm256_i64gather_pd(base, ix, 8)
#define FN(name) name##_avx2
#define TGT __attribute__((target("avx2,fma")))

// All ones in the lanes whose cut byte is nonzero.
TGT static inline __m256d attn_cutmask_avx2(const unsigned char *p)
{
    int32_t b;
    memcpy(&b, p, sizeof b);
    __m256i w = _mm256_cvtepu8_epi64(_mm_cvtsi32_si128(b));
    return _mm256_castsi256_pd(_mm256_cmpgt_epi64(w, _mm256_setzero_si256()));
}

#include "attention_ref_lanes_body.h"

// The dot kernels: the anchored dot's step on 4 chains (FN(dot_step)).
__attribute__((target("avx2,fma"))) static void dot_keys16_avx2(const double *x, double A,
                                                            const double *kt0, const double *kt1,
                                                            int64_t d, double h[16], double c[16])
{
    const __m256d Av = _mm256_set1_pd(A);
    __m256d hv[4], cv[4];
    for (int i = 0; i < 4; i++) {
        hv[i] = Av;
        cv[i] = _mm256_setzero_pd();
    }
    for (int64_t l = 0; l < d; l++) {
        __m256d xv = _mm256_set1_pd(x[l]);
        const double *y0 = kt0 + l * PP_ATTN_KEY_BLOCK, *y1 = kt1 + l * PP_ATTN_KEY_BLOCK;
        dot_step_avx2(&hv[0], &cv[0], xv, _mm256_loadu_pd(y0));
        dot_step_avx2(&hv[1], &cv[1], xv, _mm256_loadu_pd(y0 + 4));
        dot_step_avx2(&hv[2], &cv[2], xv, _mm256_loadu_pd(y1));
        dot_step_avx2(&hv[3], &cv[3], xv, _mm256_loadu_pd(y1 + 4));
    }
    for (int i = 0; i < 4; i++) {
        _mm256_storeu_pd(h + 4 * i, _mm256_sub_pd(hv[i], Av));  // exact
        _mm256_storeu_pd(c + 4 * i, cv[i]);
    }
}

// dot_rows2 in AVX2: one row after the other.
__attribute__((target("avx2,fma"))) static void dot_rows2_avx2(const double *x0, double A0,
                                                           const double *x1, double A1,
                                                           const double *kt0, const double *kt1,
                                                           int64_t d, double h[32], double c[32])
{
    dot_keys16_avx2(x0, A0, kt0, kt1, d, h, c);
    dot_keys16_avx2(x1, A1, kt0, kt1, d, h + 16, c + 16);
}


static const pp_attn_lanes_ LANES_AVX512 = {
    .name = "avx512", .dot_keys16 = dot_keys16_avx512, .dot_rows2 = dot_rows2_avx512,
    .exp_row = exp_row_avx512, .score_keys = score_keys_avx512, .scale_row = scale_row_avx512,
    .dp_keys = dp_keys_avx512, .ds_keys = ds_keys_avx512, .acc_multi = acc_multi_avx512};
static const pp_attn_lanes_ LANES_AVX2 = {
    .name = "avx2", .dot_keys16 = dot_keys16_avx2, .dot_rows2 = dot_rows2_avx2,
    .exp_row = exp_row_avx2, .score_keys = score_keys_avx2, .scale_row = scale_row_avx2,
    .dp_keys = dp_keys_avx2, .ds_keys = ds_keys_avx2, .acc_multi = acc_multi_avx2};

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
