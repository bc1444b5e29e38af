// cpu/attention_device.c — the CPU device of the attention plan (see attention_device.h).
#include "attention_device.h"
#include "attention_run_levels.h"

#include "parallel.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define ATTN_HAVE_AVX2 1
#endif

// Device memory the plan may hold at once (floats): 64 MiB, so the plan's slices stay near one
// (batch, kv head) unit for long sequences (one unit is always allowed): the emulation's peak
// memory is the caller's arrays plus about one unit's work.
#define ATTN_CPU_SCRATCH ((int64_t)1 << 24)
// Chunks per worker in a launch: rows differ in cost (causal masks), so many small chunks even
// the load out.
#define ATTN_CHUNKS_PER_WORKER 32
// Launches with fewer threads run on the calling thread (starting workers costs more).
#define ATTN_MIN_PARALLEL 4096
// Keys per key-major tile (attention_threads.h, Key-major tiles): a run of PP_ATTN_MAX_LANES key
// lanes reads its d columns 512 bytes apart, one 64 KiB tile at d = 128, instead of s_kv floats
// apart (16 KiB at s 4096: every column in the same L1 sets, each dot product's loads from L2).
#define ATTN_CPU_KEY_TILE PP_ATTN_MAX_LANES

// ---------------------------------------------------------------------------------------------
// The lane step y_l = fma(a, x_l, y_l): each lane one rounding, so vectors change no bit. AVX-512
// (16 lanes) where the CPU has it, else AVX2 + FMA (8 lanes), else the plain fmaf loop.

#ifdef ATTN_HAVE_AVX2
__attribute__((target("avx2,fma"))) static void attn_axpy_avx2(float a, const float *x, float *y, int64_t n)
{
    __m256 va = _mm256_set1_ps(a);
    int64_t c = 0;
    for (; c + 8 <= n; c += 8)
        _mm256_storeu_ps(y + c, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + c), _mm256_loadu_ps(y + c)));
    for (; c < n; c++)
        y[c] = fmaf(a, x[c], y[c]);  // vfmadd213ss here: the same single rounding
}

// 16 lanes, the tail under a mask: the same single rounding per lane as attn_axpy_avx2 and fmaf.
__attribute__((target("avx512f"))) static void attn_axpy_avx512(float a, const float *x, float *y, int64_t n)
{
    __m512 va = _mm512_set1_ps(a);
    int64_t c = 0;
    for (; c + 16 <= n; c += 16)
        _mm512_storeu_ps(y + c, _mm512_fmadd_ps(va, _mm512_loadu_ps(x + c), _mm512_loadu_ps(y + c)));
    if (c < n) {
        __mmask16 m = (__mmask16)((1u << (n - c)) - 1u);
        _mm512_mask_storeu_ps(y + c, m, _mm512_fmadd_ps(va, _mm512_maskz_loadu_ps(m, x + c),
                                                        _mm512_maskz_loadu_ps(m, y + c)));
    }
}

// nt lane steps on y, y_l = fma(a_t, x_t[l], y_l) for t in order: columns in slices of 128 (8
// vectors of 16), each slice held in registers through all nt steps, so a step does not wait
// for the previous one's store. Every lane is the same chain of single roundings as nt calls of
// attn_axpy_avx512.
__attribute__((target("avx512f"))) static void attn_axpy_n_avx512(const float *a, const float *const *x, int nt,
                                                                  float *y, int64_t n)
{
    int64_t c = 0;
    for (; c + 128 <= n; c += 128) {
        __m512 r0 = _mm512_loadu_ps(y + c), r1 = _mm512_loadu_ps(y + c + 16), r2 = _mm512_loadu_ps(y + c + 32),
               r3 = _mm512_loadu_ps(y + c + 48), r4 = _mm512_loadu_ps(y + c + 64), r5 = _mm512_loadu_ps(y + c + 80),
               r6 = _mm512_loadu_ps(y + c + 96), r7 = _mm512_loadu_ps(y + c + 112);
        for (int t = 0; t < nt; t++) {
            __m512 va = _mm512_set1_ps(a[t]);
            const float *xt = x[t] + c;
            r0 = _mm512_fmadd_ps(va, _mm512_loadu_ps(xt), r0);
            r1 = _mm512_fmadd_ps(va, _mm512_loadu_ps(xt + 16), r1);
            r2 = _mm512_fmadd_ps(va, _mm512_loadu_ps(xt + 32), r2);
            r3 = _mm512_fmadd_ps(va, _mm512_loadu_ps(xt + 48), r3);
            r4 = _mm512_fmadd_ps(va, _mm512_loadu_ps(xt + 64), r4);
            r5 = _mm512_fmadd_ps(va, _mm512_loadu_ps(xt + 80), r5);
            r6 = _mm512_fmadd_ps(va, _mm512_loadu_ps(xt + 96), r6);
            r7 = _mm512_fmadd_ps(va, _mm512_loadu_ps(xt + 112), r7);
        }
        _mm512_storeu_ps(y + c, r0), _mm512_storeu_ps(y + c + 16, r1), _mm512_storeu_ps(y + c + 32, r2);
        _mm512_storeu_ps(y + c + 48, r3), _mm512_storeu_ps(y + c + 64, r4), _mm512_storeu_ps(y + c + 80, r5);
        _mm512_storeu_ps(y + c + 96, r6), _mm512_storeu_ps(y + c + 112, r7);
    }
    if (c < n) {  // the rest (< 128 columns) as 8 masked vectors: 8 chains in flight, not one
        __mmask16 m[8];
        for (int v = 0; v < 8; v++) {
            int64_t k = n - c - 16 * v;
            m[v] = k >= 16 ? (__mmask16)0xffff : k <= 0 ? (__mmask16)0 : (__mmask16)((1u << k) - 1u);
        }
        // named registers: GCC keeps an indexed array of vectors in memory, one store per step
#define ATTN_LD(p, v) _mm512_maskz_loadu_ps(m[v], (p) + 16 * (v))
        float *yc = y + c;
        __m512 r0 = ATTN_LD(yc, 0), r1 = ATTN_LD(yc, 1), r2 = ATTN_LD(yc, 2), r3 = ATTN_LD(yc, 3),
               r4 = ATTN_LD(yc, 4), r5 = ATTN_LD(yc, 5), r6 = ATTN_LD(yc, 6), r7 = ATTN_LD(yc, 7);
        for (int t = 0; t < nt; t++) {
            __m512 va = _mm512_set1_ps(a[t]);
            const float *xt = x[t] + c;
            r0 = _mm512_fmadd_ps(va, ATTN_LD(xt, 0), r0);
            r1 = _mm512_fmadd_ps(va, ATTN_LD(xt, 1), r1);
            r2 = _mm512_fmadd_ps(va, ATTN_LD(xt, 2), r2);
            r3 = _mm512_fmadd_ps(va, ATTN_LD(xt, 3), r3);
            r4 = _mm512_fmadd_ps(va, ATTN_LD(xt, 4), r4);
            r5 = _mm512_fmadd_ps(va, ATTN_LD(xt, 5), r5);
            r6 = _mm512_fmadd_ps(va, ATTN_LD(xt, 6), r6);
            r7 = _mm512_fmadd_ps(va, ATTN_LD(xt, 7), r7);
        }
#undef ATTN_LD
        _mm512_mask_storeu_ps(yc, m[0], r0), _mm512_mask_storeu_ps(yc + 16, m[1], r1);
        _mm512_mask_storeu_ps(yc + 32, m[2], r2), _mm512_mask_storeu_ps(yc + 48, m[3], r3);
        _mm512_mask_storeu_ps(yc + 64, m[4], r4), _mm512_mask_storeu_ps(yc + 80, m[5], r5);
        _mm512_mask_storeu_ps(yc + 96, m[6], r6), _mm512_mask_storeu_ps(yc + 112, m[7], r7);
    }
}

// The key lanes' dot products acc_l = fma chain over c < nc of a_c·xT[c·ld + l], from +0, c
// increasing (pp_attn_dots_fn), m ≤ 128 lanes: the ⌈m/16⌉ accumulators stay in registers through
// all nc steps (no store and reload every PP_ATTN_STEP_BUF steps, no pointer list), the last one
// under a mask; each lane the chain of single roundings of nc fmaf calls.
#define ATTN_DOTS_STEP(v)                                                                             \
    if ((v) < NV)                                                                                     \
    r##v = _mm512_fmadd_ps(va, (v) == NV - 1 ? _mm512_maskz_loadu_ps(ml, x + 16 * (v)) : _mm512_loadu_ps(x + 16 * (v)), \
                           r##v)
#define ATTN_DOTS_STORE(v)                                                                            \
    if ((v) < NV) {                                                                                   \
        if ((v) == NV - 1)                                                                            \
            _mm512_mask_storeu_ps(acc + 16 * (v), ml, r##v);                                          \
        else                                                                                          \
            _mm512_storeu_ps(acc + 16 * (v), r##v);                                                   \
    }
__attribute__((target("avx512f"), always_inline)) static inline void attn_dots_nv(const int NV, const float *a,
                                                                                  const float *xT, int64_t ld,
                                                                                  int64_t nc, float *acc, int64_t m)
{
    __mmask16 ml = (__mmask16)(m - 16 * (NV - 1) >= 16 ? 0xffffu : (1u << (m - 16 * (NV - 1))) - 1u);
    __m512 z = _mm512_setzero_ps(), r0 = z, r1 = z, r2 = z, r3 = z, r4 = z, r5 = z, r6 = z, r7 = z;
    for (int64_t c = 0; c < nc; c++) {
        __m512 va = _mm512_set1_ps(a[c]);
        const float *x = xT + c * ld;
        ATTN_DOTS_STEP(0);
        ATTN_DOTS_STEP(1);
        ATTN_DOTS_STEP(2);
        ATTN_DOTS_STEP(3);
        ATTN_DOTS_STEP(4);
        ATTN_DOTS_STEP(5);
        ATTN_DOTS_STEP(6);
        ATTN_DOTS_STEP(7);
    }
    ATTN_DOTS_STORE(0)
    ATTN_DOTS_STORE(1)
    ATTN_DOTS_STORE(2)
    ATTN_DOTS_STORE(3)
    ATTN_DOTS_STORE(4)
    ATTN_DOTS_STORE(5)
    ATTN_DOTS_STORE(6)
    ATTN_DOTS_STORE(7)
}
#undef ATTN_DOTS_STEP
#undef ATTN_DOTS_STORE

__attribute__((target("avx512f"))) static void attn_dots_T_avx512(const float *a, const float *xT, int64_t ld,
                                                                  int64_t nc, float *acc, int64_t m)
{
    switch ((m + 15) / 16) {
    case 0: return;
    case 1: attn_dots_nv(1, a, xT, ld, nc, acc, m); return;
    case 2: attn_dots_nv(2, a, xT, ld, nc, acc, m); return;
    case 3: attn_dots_nv(3, a, xT, ld, nc, acc, m); return;
    case 4: attn_dots_nv(4, a, xT, ld, nc, acc, m); return;
    case 5: attn_dots_nv(5, a, xT, ld, nc, acc, m); return;
    case 6: attn_dots_nv(6, a, xT, ld, nc, acc, m); return;
    case 7: attn_dots_nv(7, a, xT, ld, nc, acc, m); return;
    default: attn_dots_nv(8, a, xT, ld, nc, acc, m); return;  // m ≤ 128: the caller's lanes
    }
}

// Two rows' key-lane dot products (pp_attn_dots2_fn): attn_dots_nv's chains for a0 and for a1 at
// once, 2·NV accumulators in registers, each key vector loaded once for both rows' FMAs. Each
// lane of each row is the chain of single roundings of nc fmaf calls, as attn_dots_T_avx512's.
#define ATTN_DOTS2_STEP(v)                                                                          \
    if ((v) < NV) {                                                                                 \
        __m512 x_ = (v) == NV - 1 ? _mm512_maskz_loadu_ps(ml, x + 16 * (v)) : _mm512_loadu_ps(x + 16 * (v)); \
        r##v = _mm512_fmadd_ps(va, x_, r##v);                                                       \
        s##v = _mm512_fmadd_ps(vb, x_, s##v);                                                       \
    }
#define ATTN_DOTS2_STORE(v)                                                                         \
    if ((v) < NV) {                                                                                 \
        if ((v) == NV - 1) {                                                                        \
            _mm512_mask_storeu_ps(acc0 + 16 * (v), ml, r##v);                                        \
            _mm512_mask_storeu_ps(acc1 + 16 * (v), ml, s##v);                                        \
        } else {                                                                                    \
            _mm512_storeu_ps(acc0 + 16 * (v), r##v);                                                 \
            _mm512_storeu_ps(acc1 + 16 * (v), s##v);                                                 \
        }                                                                                           \
    }
__attribute__((target("avx512f"), always_inline)) static inline void
attn_dots2_nv(const int NV, const float *a0, const float *a1, const float *xT, int64_t ld, int64_t nc, float *acc0,
              float *acc1, int64_t m)
{
    __mmask16 ml = (__mmask16)(m - 16 * (NV - 1) >= 16 ? 0xffffu : (1u << (m - 16 * (NV - 1))) - 1u);
    __m512 z = _mm512_setzero_ps(), r0 = z, r1 = z, r2 = z, r3 = z, r4 = z, r5 = z, r6 = z, r7 = z;
    __m512 s0 = z, s1 = z, s2 = z, s3 = z, s4 = z, s5 = z, s6 = z, s7 = z;
    for (int64_t c = 0; c < nc; c++) {
        __m512 va = _mm512_set1_ps(a0[c]), vb = _mm512_set1_ps(a1[c]);
        const float *x = xT + c * ld;
        ATTN_DOTS2_STEP(0)
        ATTN_DOTS2_STEP(1)
        ATTN_DOTS2_STEP(2)
        ATTN_DOTS2_STEP(3)
        ATTN_DOTS2_STEP(4)
        ATTN_DOTS2_STEP(5)
        ATTN_DOTS2_STEP(6)
        ATTN_DOTS2_STEP(7)
    }
    ATTN_DOTS2_STORE(0)
    ATTN_DOTS2_STORE(1)
    ATTN_DOTS2_STORE(2)
    ATTN_DOTS2_STORE(3)
    ATTN_DOTS2_STORE(4)
    ATTN_DOTS2_STORE(5)
    ATTN_DOTS2_STORE(6)
    ATTN_DOTS2_STORE(7)
}
#undef ATTN_DOTS2_STEP
#undef ATTN_DOTS2_STORE

__attribute__((target("avx512f"))) static void attn_dots2_T_avx512(const float *a0, const float *a1, const float *xT,
                                                                   int64_t ld, int64_t nc, float *acc0, float *acc1,
                                                                   int64_t m)
{
    switch ((m + 15) / 16) {
    case 0: return;
    case 1: attn_dots2_nv(1, a0, a1, xT, ld, nc, acc0, acc1, m); return;
    case 2: attn_dots2_nv(2, a0, a1, xT, ld, nc, acc0, acc1, m); return;
    case 3: attn_dots2_nv(3, a0, a1, xT, ld, nc, acc0, acc1, m); return;
    case 4: attn_dots2_nv(4, a0, a1, xT, ld, nc, acc0, acc1, m); return;
    case 5: attn_dots2_nv(5, a0, a1, xT, ld, nc, acc0, acc1, m); return;
    case 6: attn_dots2_nv(6, a0, a1, xT, ld, nc, acc0, acc1, m); return;
    case 7: attn_dots2_nv(7, a0, a1, xT, ld, nc, acc0, acc1, m); return;
    default: attn_dots2_nv(8, a0, a1, xT, ld, nc, acc0, acc1, m); return;  // m ≤ 128
    }
}

// Four rows' key-lane dot products (pp_attn_dots4_fn): attn_dots_nv's chains for a_0 … a_3 at
// once over 64 keys at a time (4 rows × 4 vectors: 16 accumulators in registers), each key vector
// loaded once for the four rows' FMAs (the flash forward's row groups and the backward's quads:
// half the loads of dots2 per FMA). Each lane of each row the chain of single roundings of nc
// fmaf calls from +0, c increasing, as attn_dots_T_avx512's.
#define ATTN_DOTS4_STEP(v)                                                                          \
    if ((v) < NV) {                                                                                 \
        __m512 x_ = (v) == NV - 1 ? _mm512_maskz_loadu_ps(ml, x + 16 * (v)) : _mm512_loadu_ps(x + 16 * (v)); \
        r##v = _mm512_fmadd_ps(va, x_, r##v);                                                       \
        s##v = _mm512_fmadd_ps(vb, x_, s##v);                                                       \
        t##v = _mm512_fmadd_ps(vc, x_, t##v);                                                       \
        u##v = _mm512_fmadd_ps(vd, x_, u##v);                                                       \
    }
#define ATTN_DOTS4_ST1(p, r, v)                                                                     \
    if ((v) == NV - 1)                                                                              \
        _mm512_mask_storeu_ps((p) + 16 * (v), ml, r);                                               \
    else                                                                                            \
        _mm512_storeu_ps((p) + 16 * (v), r);
#define ATTN_DOTS4_STORE(v)                                                                         \
    if ((v) < NV) {                                                                                 \
        ATTN_DOTS4_ST1(acc[0] + l0, r##v, v)                                                        \
        ATTN_DOTS4_ST1(acc[1] + l0, s##v, v)                                                        \
        ATTN_DOTS4_ST1(acc[2] + l0, t##v, v)                                                        \
        ATTN_DOTS4_ST1(acc[3] + l0, u##v, v)                                                        \
    }
__attribute__((target("avx512f"), always_inline)) static inline void
attn_dots4_nv(const int NV, const float *const *a, const float *xT, int64_t ld, int64_t nc, float *const *acc,
              int64_t l0, int64_t m)
{
    __mmask16 ml = (__mmask16)(m - 16 * (NV - 1) >= 16 ? 0xffffu : (1u << (m - 16 * (NV - 1))) - 1u);
    __m512 z = _mm512_setzero_ps(), r0 = z, r1 = z, r2 = z, r3 = z, s0 = z, s1 = z, s2 = z, s3 = z;
    __m512 t0 = z, t1 = z, t2 = z, t3 = z, u0 = z, u1 = z, u2 = z, u3 = z;
    const float *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3];
    for (int64_t c = 0; c < nc; c++) {
        __m512 va = _mm512_set1_ps(a0[c]), vb = _mm512_set1_ps(a1[c]), vc = _mm512_set1_ps(a2[c]),
               vd = _mm512_set1_ps(a3[c]);
        const float *x = xT + c * ld + l0;
        ATTN_DOTS4_STEP(0)
        ATTN_DOTS4_STEP(1)
        ATTN_DOTS4_STEP(2)
        ATTN_DOTS4_STEP(3)
    }
    ATTN_DOTS4_STORE(0)
    ATTN_DOTS4_STORE(1)
    ATTN_DOTS4_STORE(2)
    ATTN_DOTS4_STORE(3)
}
#undef ATTN_DOTS4_STEP
#undef ATTN_DOTS4_ST1
#undef ATTN_DOTS4_STORE

__attribute__((target("avx512f"))) static void attn_dots4_T_avx512(const float *const *a, const float *xT, int64_t ld,
                                                                   int64_t nc, float *const *acc, int64_t m)
{
    for (int64_t l0 = 0; l0 < m; l0 += 64) {  // m ≤ 128: one or two runs of 64 keys
        int64_t n = m - l0 < 64 ? m - l0 : 64;
        switch ((n + 15) / 16) {
        case 1: attn_dots4_nv(1, a, xT, ld, nc, acc, l0, n); break;
        case 2: attn_dots4_nv(2, a, xT, ld, nc, acc, l0, n); break;
        case 3: attn_dots4_nv(3, a, xT, ld, nc, acc, l0, n); break;
        default: attn_dots4_nv(4, a, xT, ld, nc, acc, l0, n); break;
        }
    }
}
#endif

// ---------------------------------------------------------------------------------------------
// explain's exact chains in binary64 lanes (attention_threads.h, pp_attn_axpy64_fn and
// pp_attn_dots64_fn): each lane the scalar loop's fma((double)a, (double)x, y), one binary64
// rounding (the binary32 → binary64 conversions are exact), so the same bits; before, every step
// was a call of libm's fma (the build targets the x86-64 baseline, which has no FMA instruction).

#ifdef ATTN_HAVE_AVX2
__attribute__((target("avx512f"))) static void attn_axpy64_avx512(float a, const float *x, double *y, int64_t n)
{
    __m512d va = _mm512_set1_pd((double)a);
    int64_t c = 0;
    for (; c + 8 <= n; c += 8)
        _mm512_storeu_pd(y + c, _mm512_fmadd_pd(va, _mm512_cvtps_pd(_mm256_loadu_ps(x + c)), _mm512_loadu_pd(y + c)));
    if (c < n) {
        __mmask8 m = (__mmask8)((1u << (n - c)) - 1u);
        __m512d xv = _mm512_cvtps_pd(_mm512_castps512_ps256(_mm512_maskz_loadu_ps((__mmask16)m, x + c)));
        _mm512_mask_storeu_pd(y + c, m, _mm512_fmadd_pd(va, xv, _mm512_maskz_loadu_pd(m, y + c)));
    }
}

__attribute__((target("avx2,fma"))) static void attn_axpy64_avx2(float a, const float *x, double *y, int64_t n)
{
    __m256d va = _mm256_set1_pd((double)a);
    int64_t c = 0;
    for (; c + 4 <= n; c += 4)
        _mm256_storeu_pd(y + c, _mm256_fmadd_pd(va, _mm256_cvtps_pd(_mm_loadu_ps(x + c)), _mm256_loadu_pd(y + c)));
    for (; c < n; c++)
        y[c] = fma((double)a, (double)x[c], y[c]);  // vfmadd…sd here: the same single rounding
}

// The key lanes' binary64 dot products, NV ≤ 8 vectors of 8 keys (m ≤ 64; the last vector under a
// mask) in registers through all nc steps.
#define ATTN_D64_LD(p, v) \
    ((v) == NV - 1 ? _mm512_cvtps_pd(_mm512_castps512_ps256(_mm512_maskz_loadu_ps(ml, (p) + 8 * (v)))) \
                   : _mm512_cvtps_pd(_mm256_loadu_ps((p) + 8 * (v))))
#define ATTN_D64_STEP(v)                                  \
    if ((v) < NV)                                         \
    r##v = _mm512_fmadd_pd(va, ATTN_D64_LD(x, v), r##v)
#define ATTN_D64_STORE(v)                                 \
    if ((v) < NV) {                                       \
        if ((v) == NV - 1)                                \
            _mm512_mask_storeu_pd(acc + 8 * (v), (__mmask8)ml, r##v); \
        else                                              \
            _mm512_storeu_pd(acc + 8 * (v), r##v);        \
    }
__attribute__((target("avx512f"), always_inline)) static inline void attn_dots64_nv(const int NV, const float *a,
                                                                                    const float *xT, int64_t ld,
                                                                                    int64_t nc, double *acc, int64_t m)
{
    __mmask16 ml = (__mmask16)(m - 8 * (NV - 1) >= 8 ? 0xffu : (1u << (m - 8 * (NV - 1))) - 1u);
    __m512d z = _mm512_setzero_pd(), r0 = z, r1 = z, r2 = z, r3 = z, r4 = z, r5 = z, r6 = z, r7 = z;
    for (int64_t c = 0; c < nc; c++) {
        __m512d va = _mm512_set1_pd((double)a[c]);
        const float *x = xT + c * ld;
        ATTN_D64_STEP(0);
        ATTN_D64_STEP(1);
        ATTN_D64_STEP(2);
        ATTN_D64_STEP(3);
        ATTN_D64_STEP(4);
        ATTN_D64_STEP(5);
        ATTN_D64_STEP(6);
        ATTN_D64_STEP(7);
    }
    ATTN_D64_STORE(0)
    ATTN_D64_STORE(1)
    ATTN_D64_STORE(2)
    ATTN_D64_STORE(3)
    ATTN_D64_STORE(4)
    ATTN_D64_STORE(5)
    ATTN_D64_STORE(6)
    ATTN_D64_STORE(7)
}
#undef ATTN_D64_LD
#undef ATTN_D64_STEP
#undef ATTN_D64_STORE

// Up to 128 keys: groups of 64 (eight vectors), each with its own pass over the nc steps.
__attribute__((target("avx512f"))) static void attn_dots64_avx512(const float *a, const float *xT, int64_t ld,
                                                                  int64_t nc, double *acc, int64_t m)
{
    for (int64_t g = 0; g < m; g += 64) {
        int64_t k = m - g < 64 ? m - g : 64;
        const float *x = xT + g;
        double *y = acc + g;
        switch ((k + 7) / 8) {
        case 1: attn_dots64_nv(1, a, x, ld, nc, y, k); break;
        case 2: attn_dots64_nv(2, a, x, ld, nc, y, k); break;
        case 3: attn_dots64_nv(3, a, x, ld, nc, y, k); break;
        case 4: attn_dots64_nv(4, a, x, ld, nc, y, k); break;
        case 5: attn_dots64_nv(5, a, x, ld, nc, y, k); break;
        case 6: attn_dots64_nv(6, a, x, ld, nc, y, k); break;
        case 7: attn_dots64_nv(7, a, x, ld, nc, y, k); break;
        default: attn_dots64_nv(8, a, x, ld, nc, y, k); break;
        }
    }
}

// AVX2: groups of 16 keys (four vectors of four) in registers through the nc steps, the last
// group's keys past a multiple of 4 by the scalar statements (vfmadd…sd here).
__attribute__((target("avx2,fma"))) static void attn_dots64_avx2(const float *a, const float *xT, int64_t ld,
                                                                 int64_t nc, double *acc, int64_t m)
{
    int64_t g = 0;
    for (; g + 16 <= m; g += 16) {
        __m256d r0 = _mm256_setzero_pd(), r1 = r0, r2 = r0, r3 = r0;
        for (int64_t c = 0; c < nc; c++) {
            __m256d va = _mm256_set1_pd((double)a[c]);
            const float *x = xT + c * ld + g;
            r0 = _mm256_fmadd_pd(va, _mm256_cvtps_pd(_mm_loadu_ps(x)), r0);
            r1 = _mm256_fmadd_pd(va, _mm256_cvtps_pd(_mm_loadu_ps(x + 4)), r1);
            r2 = _mm256_fmadd_pd(va, _mm256_cvtps_pd(_mm_loadu_ps(x + 8)), r2);
            r3 = _mm256_fmadd_pd(va, _mm256_cvtps_pd(_mm_loadu_ps(x + 12)), r3);
        }
        _mm256_storeu_pd(acc + g, r0), _mm256_storeu_pd(acc + g + 4, r1);
        _mm256_storeu_pd(acc + g + 8, r2), _mm256_storeu_pd(acc + g + 12, r3);
    }
    for (; g + 4 <= m; g += 4) {
        __m256d r = _mm256_setzero_pd();
        for (int64_t c = 0; c < nc; c++)
            r = _mm256_fmadd_pd(_mm256_set1_pd((double)a[c]), _mm256_cvtps_pd(_mm_loadu_ps(xT + c * ld + g)), r);
        _mm256_storeu_pd(acc + g, r);
    }
    for (; g < m; g++) {
        double r = 0.0;
        for (int64_t c = 0; c < nc; c++)
            r = fma((double)a[c], (double)xT[c * ld + g], r);
        acc[g] = r;
    }
}
#endif

// ---------------------------------------------------------------------------------------------
// The flash softmax's exponentials p_i = pp_attn_exp2f(fmaf(s_i, a, b)) in vector lanes: the
// fmaf as one vector FMA (one rounding per lane), then pp_attn_exp2f's binary64 statements lane
// by lane — clamp to [−160, 150], n by the 1.5·2^52 trick, r = (x − n)·ln 2, the degree-13 Taylor
// polynomial by Horner (a multiply and an add, no FMA: -ffp-contract=off), times 2^n, one
// conversion to binary32 — and NaN lanes by the scalar statements; so each lane's bits are the
// scalar call's.
// Its constants are written as pp_math.h's pp_exp_taylor13 writes them.

// One p by the scalar statements, compiled for the baseline target like the thread bodies' own
// calls: the vector paths hand it their NaN lanes, whose payload an FMA picks by operand order.
__attribute__((noinline)) static float attn_exp2_one(float s, float a, float b)
{
    return pp_attn_exp2f(fmaf(s, a, b));
}

#ifdef ATTN_HAVE_AVX2
#define ATTN_EXP2_SHIFT 6755399441055744.0  // 1.5·2^52
#define ATTN_EXP2_LN2 0.69314718055994530942

// The common tail of the exponentials below (pp_attn_exp2f's and pp_expf's binary64
// statements): e^r by its Taylor polynomial of degree 13 in Horner's form, one rounding per
// multiply and per add, times 2^n built from n's bits (n integral and within the callers'
// clamps: the conversion is exact and 2^n a normal binary64), rounded once to binary32.
__attribute__((target("avx512f"), always_inline)) static inline __m256 attn_exp_tail_8_avx512(__m512d r, __m512d n)
{
#define ATTN_H512(c) p = _mm512_add_pd(_mm512_mul_pd(p, r), _mm512_set1_pd(c))
    __m512d p = _mm512_set1_pd(1.0 / 6227020800.0);
    ATTN_H512(1.0 / 479001600.0);
    ATTN_H512(1.0 / 39916800.0);
    ATTN_H512(1.0 / 3628800.0);
    ATTN_H512(1.0 / 362880.0);
    ATTN_H512(1.0 / 40320.0);
    ATTN_H512(1.0 / 5040.0);
    ATTN_H512(1.0 / 720.0);
    ATTN_H512(1.0 / 120.0);
    ATTN_H512(1.0 / 24.0);
    ATTN_H512(1.0 / 6.0);
    ATTN_H512(0.5);
    ATTN_H512(1.0);
    ATTN_H512(1.0);
#undef ATTN_H512
    __m512i e = _mm512_cvtepi32_epi64(_mm512_cvtpd_epi32(n));
    __m512d scale = _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_add_epi64(e, _mm512_set1_epi64(1023)), 52));
    return _mm512_cvtpd_ps(_mm512_mul_pd(p, scale));
}

__attribute__((target("avx2,fma"), always_inline)) static inline __m128 attn_exp_tail_4_avx2(__m256d r, __m256d n)
{
#define ATTN_H256(c) p = _mm256_add_pd(_mm256_mul_pd(p, r), _mm256_set1_pd(c))
    __m256d p = _mm256_set1_pd(1.0 / 6227020800.0);
    ATTN_H256(1.0 / 479001600.0);
    ATTN_H256(1.0 / 39916800.0);
    ATTN_H256(1.0 / 3628800.0);
    ATTN_H256(1.0 / 362880.0);
    ATTN_H256(1.0 / 40320.0);
    ATTN_H256(1.0 / 5040.0);
    ATTN_H256(1.0 / 720.0);
    ATTN_H256(1.0 / 120.0);
    ATTN_H256(1.0 / 24.0);
    ATTN_H256(1.0 / 6.0);
    ATTN_H256(0.5);
    ATTN_H256(1.0);
    ATTN_H256(1.0);
#undef ATTN_H256
    __m256i e = _mm256_cvtepi32_epi64(_mm256_cvtpd_epi32(n));
    __m256d scale = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(e, _mm256_set1_epi64x(1023)), 52));
    return _mm256_cvtpd_ps(_mm256_mul_pd(p, scale));
}

// 2^x for 8 binary32 values (no NaN handling: the caller's), AVX-512.
__attribute__((target("avx512f"))) static __m256 attn_exp2_8_avx512(__m256 x)
{
    __m512d xd = _mm512_cvtps_pd(x);
    xd = _mm512_min_pd(_mm512_max_pd(xd, _mm512_set1_pd(-160.0)), _mm512_set1_pd(150.0));
    __m512d sh = _mm512_set1_pd(ATTN_EXP2_SHIFT);
    __m512d n = _mm512_sub_pd(_mm512_add_pd(xd, sh), sh);
    __m512d r = _mm512_mul_pd(_mm512_sub_pd(xd, n), _mm512_set1_pd(ATTN_EXP2_LN2));
    return attn_exp_tail_8_avx512(r, n);
}

__attribute__((target("avx512f"))) static void attn_exp2_avx512(const float *s, float a, float b, float *p, int64_t n)
{
    __m512 va = _mm512_set1_ps(a), vb = _mm512_set1_ps(b);
    for (int64_t c = 0; c < n; c += 16) {
        __mmask16 m = n - c >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - c)) - 1u);
        __m512 x = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, s + c), va, vb);  // fmaf(s, a, b)
        __m256 lo = attn_exp2_8_avx512(_mm512_castps512_ps256(x));
        __m256 hi = attn_exp2_8_avx512(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1)));
        __m512 y = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(lo)),
                                                       _mm256_castps_pd(hi), 1));
        _mm512_mask_storeu_ps(p + c, m, y);
        __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q) & m;
        for (int i = 0; nan; i++, nan >>= 1)  // NaN (rare): the scalar statements
            if (nan & 1)
                p[c + i] = attn_exp2_one(s[c + i], a, b);
    }
}

// 2^x for 4 binary32 values, AVX2.
__attribute__((target("avx2,fma"))) static __m128 attn_exp2_4_avx2(__m128 x)
{
    __m256d xd = _mm256_cvtps_pd(x);
    xd = _mm256_min_pd(_mm256_max_pd(xd, _mm256_set1_pd(-160.0)), _mm256_set1_pd(150.0));
    __m256d sh = _mm256_set1_pd(ATTN_EXP2_SHIFT);
    __m256d n = _mm256_sub_pd(_mm256_add_pd(xd, sh), sh);
    __m256d r = _mm256_mul_pd(_mm256_sub_pd(xd, n), _mm256_set1_pd(ATTN_EXP2_LN2));
    return attn_exp_tail_4_avx2(r, n);
}

__attribute__((target("avx2,fma"))) static void attn_exp2_avx2(const float *s, float a, float b, float *p, int64_t n)
{
    __m128 va = _mm_set1_ps(a), vb = _mm_set1_ps(b);
    int64_t c = 0;
    for (; c + 4 <= n; c += 4) {
        __m128 x = _mm_fmadd_ps(_mm_loadu_ps(s + c), va, vb);  // fmaf(s, a, b)
        _mm_storeu_ps(p + c, attn_exp2_4_avx2(x));
        int nan = _mm_movemask_ps(_mm_cmpunord_ps(x, x));
        for (int i = 0; nan; i++, nan >>= 1)  // NaN (rare): the scalar statements
            if (nan & 1)
                p[c + i] = attn_exp2_one(s[c + i], a, b);
    }
    for (; c < n; c++)
        p[c] = attn_exp2_one(s[c], a, b);
}
#endif

// ---------------------------------------------------------------------------------------------
// The unfused softmax's exponentials p_i = pp_expf(x_i − m) (pp_attn_expf_fn) in vector lanes: the
// binary32 subtraction (one rounding per lane), then pp_expf's binary64 statements lane by lane —
// the clamp to [−120, 100], n = (x·log2 e + 1.5·2^52) − 1.5·2^52 (a multiply and an add: no FMA,
// as -ffp-contract=off compiles the scalar), r = (x − n·LN2_HI) − n·LN2_LO, the degree-13 Taylor
// polynomial by Horner (multiply, add), times 2^n, one conversion to binary32 — and NaN lanes by
// the scalar statements (pp_expf returns its NaN argument); so each lane's bits are the scalar
// call's. The constants are pp_math.h's, written as it writes them. p may be x (in place).

// One p by the scalar statements, compiled for the baseline target like the thread bodies' own.
__attribute__((noinline)) static float attn_expf_one(float x, float m)
{
    return pp_expf(x - m);
}

static void attn_expf_scalar(const float *x, float m, float *p, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        p[i] = attn_expf_one(x[i], m);
}

#ifdef ATTN_HAVE_AVX2
#define ATTN_EXPF_LOG2E 1.4426950408889634
#define ATTN_EXPF_LN2_HI 6.93147180369123816490e-01
#define ATTN_EXPF_LN2_LO 1.90821492927058770002e-10

// e^x for 8 binary32 values (no NaN handling: the caller's), AVX-512.
__attribute__((target("avx512f"))) static __m256 attn_expf_8_avx512(__m256 x)
{
    __m512d xd = _mm512_cvtps_pd(x);
    xd = _mm512_max_pd(_mm512_min_pd(xd, _mm512_set1_pd(100.0)), _mm512_set1_pd(-120.0));
    __m512d sh = _mm512_set1_pd(ATTN_EXP2_SHIFT);
    __m512d n = _mm512_sub_pd(_mm512_add_pd(_mm512_mul_pd(xd, _mm512_set1_pd(ATTN_EXPF_LOG2E)), sh), sh);
    __m512d r = _mm512_sub_pd(_mm512_sub_pd(xd, _mm512_mul_pd(n, _mm512_set1_pd(ATTN_EXPF_LN2_HI))),
                              _mm512_mul_pd(n, _mm512_set1_pd(ATTN_EXPF_LN2_LO)));
    return attn_exp_tail_8_avx512(r, n);
}

__attribute__((target("avx512f"))) static void attn_expf_avx512(const float *x, float m, float *p, int64_t n)
{
    __m512 vm = _mm512_set1_ps(m);
    for (int64_t c = 0; c < n; c += 16) {
        __mmask16 k = n - c >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - c)) - 1u);
        __m512 xv = _mm512_maskz_loadu_ps(k, x + c);
        __m512 t = _mm512_sub_ps(xv, vm);  // x − m, one binary32 rounding
        __m256 lo = attn_expf_8_avx512(_mm512_castps512_ps256(t));
        __m256 hi = attn_expf_8_avx512(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(t), 1)));
        __mmask16 nan = _mm512_cmp_ps_mask(t, t, _CMP_UNORD_Q) & k;
        float xs[16];
        if (nan)  // x as loaded: p may be x
            _mm512_storeu_ps(xs, xv);
        _mm512_mask_storeu_ps(p + c, k, _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(lo)),
                                                                            _mm256_castps_pd(hi), 1)));
        for (int i = 0; nan; i++, nan >>= 1)  // NaN (rare): the scalar statements
            if (nan & 1)
                p[c + i] = attn_expf_one(xs[i], m);
    }
}

// e^x for 4 binary32 values, AVX2.
__attribute__((target("avx2,fma"))) static __m128 attn_expf_4_avx2(__m128 x)
{
    __m256d xd = _mm256_cvtps_pd(x);
    xd = _mm256_max_pd(_mm256_min_pd(xd, _mm256_set1_pd(100.0)), _mm256_set1_pd(-120.0));
    __m256d sh = _mm256_set1_pd(ATTN_EXP2_SHIFT);
    __m256d n = _mm256_sub_pd(_mm256_add_pd(_mm256_mul_pd(xd, _mm256_set1_pd(ATTN_EXPF_LOG2E)), sh), sh);
    __m256d r = _mm256_sub_pd(_mm256_sub_pd(xd, _mm256_mul_pd(n, _mm256_set1_pd(ATTN_EXPF_LN2_HI))),
                              _mm256_mul_pd(n, _mm256_set1_pd(ATTN_EXPF_LN2_LO)));
    return attn_exp_tail_4_avx2(r, n);
}

__attribute__((target("avx2,fma"))) static void attn_expf_avx2(const float *x, float m, float *p, int64_t n)
{
    __m128 vm = _mm_set1_ps(m);
    int64_t c = 0;
    for (; c + 4 <= n; c += 4) {
        __m128 xv = _mm_loadu_ps(x + c), t = _mm_sub_ps(xv, vm);  // x − m, one binary32 rounding
        int nan = _mm_movemask_ps(_mm_cmpunord_ps(t, t));
        float xs[4];
        _mm_storeu_ps(xs, xv);  // x as loaded: p may be x
        _mm_storeu_ps(p + c, attn_expf_4_avx2(t));
        for (int i = 0; nan; i++, nan >>= 1)  // NaN (rare): the scalar statements
            if (nan & 1)
                p[c + i] = attn_expf_one(xs[i], m);
    }
    attn_expf_scalar(x + c, m, p + c, n - c);
}
#endif

static pp_attn_expf_fn attn_pick_expf(int portable, pp_isa isa)
{
#ifdef ATTN_HAVE_AVX2
    if (!portable && isa == PP_ISA_AVX512)
        return attn_expf_avx512;
    if (!portable && isa == PP_ISA_AVX2)
        return attn_expf_avx2;
#endif
    (void)portable, (void)isa;
    return NULL;  // pp_expf one key at a time
}

void pp_attn_cpu_expf(pp_isa isa, const float *x, float m, float *p, int64_t n)
{
    pp_attn_expf_fn f = attn_pick_expf(0, pp_isa_resolve(isa));
    if (f)
        f(x, m, p, n);
    else
        attn_expf_scalar(x, m, p, n);
}

// ---------------------------------------------------------------------------------------------
// The unfused softmax's probabilities p_i = RN_F(e_i / sum) (pp_attn_prob_fn) in vector lanes: the
// binary32 division (correctly rounded in every lane), then pp_attn_store's rounding: bf16 by its
// integer statements in lanes (up iff rem + odd > 2^15; a NaN kept as it is), fp32 the quotient,
// fp16 by the scalar pp_attn_store of each quotient. The same bits as the scalar loop; p may be e.

static void attn_prob_scalar(pp_format_id f, const float *e, float sum, float *p, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        p[i] = pp_attn_store(f, e[i] / sum);
}

#ifdef ATTN_HAVE_AVX2
__attribute__((target("avx512f"))) static void attn_prob_avx512(pp_format_id f, const float *e, float sum, float *p,
                                                                int64_t n)
{
    __m512 vs = _mm512_set1_ps(sum);
    const __m512i odd = _mm512_set1_epi32(1), half = _mm512_set1_epi32(0x7FFF), hi = _mm512_set1_epi32((int)0xFFFF0000u);
    const __m512i abs = _mm512_set1_epi32(0x7FFFFFFF), inf = _mm512_set1_epi32(0x7F800000);
    for (int64_t c = 0; c < n; c += 16) {
        __mmask16 k = n - c >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - c)) - 1u);
        __m512 q = _mm512_div_ps(_mm512_mask_loadu_ps(_mm512_set1_ps(1.0f), k, e + c), vs);
        if (f == PP_FMT_BF16) {
            __m512i u = _mm512_castps_si512(q);
            __m512i r = _mm512_and_si512(
                _mm512_add_epi32(_mm512_add_epi32(u, half), _mm512_and_si512(_mm512_srli_epi32(u, 16), odd)), hi);
            __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(u, abs), inf);
            q = _mm512_castsi512_ps(_mm512_mask_blend_epi32(nan, r, u));
        }
        if (f == PP_FMT_FP16) {
            float qs[16];
            _mm512_storeu_ps(qs, q);
            for (int64_t i = 0; i < 16 && c + i < n; i++)
                p[c + i] = pp_attn_store(f, qs[i]);
            continue;
        }
        _mm512_mask_storeu_ps(p + c, k, q);
    }
}

__attribute__((target("avx2,fma"))) static void attn_prob_avx2(pp_format_id f, const float *e, float sum, float *p,
                                                               int64_t n)
{
    __m256 vs = _mm256_set1_ps(sum);
    const __m256i odd = _mm256_set1_epi32(1), half = _mm256_set1_epi32(0x7FFF), hi = _mm256_set1_epi32((int)0xFFFF0000u);
    const __m256i abs = _mm256_set1_epi32(0x7FFFFFFF), inf = _mm256_set1_epi32(0x7F800000);
    int64_t c = 0;
    for (; c + 8 <= n; c += 8) {
        __m256 q = _mm256_div_ps(_mm256_loadu_ps(e + c), vs);
        if (f == PP_FMT_BF16) {
            __m256i u = _mm256_castps_si256(q);
            __m256i r = _mm256_and_si256(
                _mm256_add_epi32(_mm256_add_epi32(u, half), _mm256_and_si256(_mm256_srli_epi32(u, 16), odd)), hi);
            __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, abs), inf);  // |u| > Inf's bits: signed compare holds
            q = _mm256_castsi256_ps(_mm256_blendv_epi8(r, u, nan));
        }
        if (f == PP_FMT_FP16) {
            float qs[8];
            _mm256_storeu_ps(qs, q);
            for (int i = 0; i < 8; i++)
                p[c + i] = pp_attn_store(f, qs[i]);
            continue;
        }
        _mm256_storeu_ps(p + c, q);
    }
    attn_prob_scalar(f, e + c, sum, p + c, n - c);
}
#endif

static pp_attn_prob_fn attn_pick_prob(int portable, pp_isa isa)
{
#ifdef ATTN_HAVE_AVX2
    if (!portable && isa == PP_ISA_AVX512)
        return attn_prob_avx512;
    if (!portable && isa == PP_ISA_AVX2)
        return attn_prob_avx2;
#endif
    (void)portable, (void)isa;
    return NULL;  // the scalar loop
}

void pp_attn_cpu_prob(pp_isa isa, pp_format_id f, const float *e, float sum, float *p, int64_t n)
{
    pp_attn_prob_fn fn = attn_pick_prob(0, pp_isa_resolve(isa));
    if (fn)
        fn(f, e, sum, p, n);
    else
        attn_prob_scalar(f, e, sum, p, n);
}

// ---------------------------------------------------------------------------------------------
// dk/dv's rank-1 updates (pp_attn_ger_fn) in AVX-512 registers: tiles of up to 4 keys by up to 4
// vectors of 16 lanes (16 accumulators), loaded once, then every row's x vectors loaded once for
// the tile's keys (4 FMAs a load, against 1 for the lane steps), stored after the last row. Each
// chain gets its rows in order, one FMA each, so each lane is the scalar loop's chain of fmaf.

static void attn_ger_scalar(int nr, const float *const *a, const float *const *x, const int *na, int ng, float *acc,
                            int64_t m)
{
    for (int r = 0; r < nr; r++)
        for (int g = 0; g < ng && g < na[r]; g++)
            for (int64_t l = 0; l < m; l++)
                acc[g * PP_ATTN_MAX_LANES + l] = fmaf(a[r][g], x[r][l], acc[g * PP_ATTN_MAX_LANES + l]);
}

#ifdef ATTN_HAVE_AVX2
// NV vectors from lane v0·16 (the last under mask ml), keys g0 … g0 + K − 1.
#define ATTN_GER_LD(k, v)                                                                          \
    if ((k) < K && (v) < NV)                                                                       \
    a##k##v = (v) == NV - 1 ? _mm512_maskz_loadu_ps(ml, y + (k) * PP_ATTN_MAX_LANES + 16 * (v))     \
                            : _mm512_loadu_ps(y + (k) * PP_ATTN_MAX_LANES + 16 * (v))
#define ATTN_GER_ST(k, v)                                                                          \
    if ((k) < K && (v) < NV) {                                                                     \
        if ((v) == NV - 1)                                                                         \
            _mm512_mask_storeu_ps(y + (k) * PP_ATTN_MAX_LANES + 16 * (v), ml, a##k##v);            \
        else                                                                                       \
            _mm512_storeu_ps(y + (k) * PP_ATTN_MAX_LANES + 16 * (v), a##k##v);                     \
    }
#define ATTN_GER_X(v)                                                                              \
    if ((v) < NV)                                                                                  \
    x##v = (v) == NV - 1 ? _mm512_maskz_loadu_ps(ml, xr + 16 * (v)) : _mm512_loadu_ps(xr + 16 * (v))
#define ATTN_GER_FMA(k)                                                                            \
    if ((k) < ka) {                                                                                \
        __m512 c_ = _mm512_set1_ps(ar[k]);                                                         \
        if (0 < NV)                                                                                \
            a##k##0 = _mm512_fmadd_ps(c_, x0, a##k##0);                                            \
        if (1 < NV)                                                                                \
            a##k##1 = _mm512_fmadd_ps(c_, x1, a##k##1);                                            \
        if (2 < NV)                                                                                \
            a##k##2 = _mm512_fmadd_ps(c_, x2, a##k##2);                                            \
        if (3 < NV)                                                                                \
            a##k##3 = _mm512_fmadd_ps(c_, x3, a##k##3);                                            \
    }
__attribute__((target("avx512f"), always_inline)) static inline void
attn_ger_tile(const int NV, int K, int nr, const float *const *a, const float *const *x, const int *na, int g0,
              int64_t l0, float *y, __mmask16 ml)
{
    __m512 z = _mm512_setzero_ps();
    __m512 a00 = z, a01 = z, a02 = z, a03 = z, a10 = z, a11 = z, a12 = z, a13 = z;
    __m512 a20 = z, a21 = z, a22 = z, a23 = z, a30 = z, a31 = z, a32 = z, a33 = z;
    ATTN_GER_LD(0, 0); ATTN_GER_LD(0, 1); ATTN_GER_LD(0, 2); ATTN_GER_LD(0, 3);
    ATTN_GER_LD(1, 0); ATTN_GER_LD(1, 1); ATTN_GER_LD(1, 2); ATTN_GER_LD(1, 3);
    ATTN_GER_LD(2, 0); ATTN_GER_LD(2, 1); ATTN_GER_LD(2, 2); ATTN_GER_LD(2, 3);
    ATTN_GER_LD(3, 0); ATTN_GER_LD(3, 1); ATTN_GER_LD(3, 2); ATTN_GER_LD(3, 3);
    for (int r = 0; r < nr; r++) {
        int ka = na[r] - g0;  // the row's active keys in the tile (a prefix)
        ka = ka < K ? ka : K;
        if (ka <= 0)
            continue;
        const float *xr = x[r] + l0, *ar = a[r] + g0;
        __m512 x0 = z, x1 = z, x2 = z, x3 = z;
        ATTN_GER_X(0); ATTN_GER_X(1); ATTN_GER_X(2); ATTN_GER_X(3);
        ATTN_GER_FMA(0)
        ATTN_GER_FMA(1)
        ATTN_GER_FMA(2)
        ATTN_GER_FMA(3)
    }
    ATTN_GER_ST(0, 0) ATTN_GER_ST(0, 1) ATTN_GER_ST(0, 2) ATTN_GER_ST(0, 3)
    ATTN_GER_ST(1, 0) ATTN_GER_ST(1, 1) ATTN_GER_ST(1, 2) ATTN_GER_ST(1, 3)
    ATTN_GER_ST(2, 0) ATTN_GER_ST(2, 1) ATTN_GER_ST(2, 2) ATTN_GER_ST(2, 3)
    ATTN_GER_ST(3, 0) ATTN_GER_ST(3, 1) ATTN_GER_ST(3, 2) ATTN_GER_ST(3, 3)
}
#undef ATTN_GER_LD
#undef ATTN_GER_ST
#undef ATTN_GER_X
#undef ATTN_GER_FMA

__attribute__((target("avx512f"))) static void attn_ger_avx512(int nr, const float *const *a, const float *const *x,
                                                               const int *na, int ng, float *acc, int64_t m)
{
    int64_t nv = (m + 15) / 16;  // m ≤ PP_ATTN_MAX_LANES: at most 8 vectors
    for (int g0 = 0; g0 < ng; g0 += 4) {
        int K = ng - g0 < 4 ? ng - g0 : 4;
        for (int64_t v0 = 0; v0 < nv; v0 += 4) {
            int64_t NV = nv - v0 < 4 ? nv - v0 : 4, rest = m - 16 * (v0 + NV - 1);  // lanes of the tile's last vector
            __mmask16 ml = rest >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << rest) - 1u);
            float *y = acc + g0 * PP_ATTN_MAX_LANES + 16 * v0;
            switch (NV) {
            case 1: attn_ger_tile(1, K, nr, a, x, na, g0, 16 * v0, y, ml); break;
            case 2: attn_ger_tile(2, K, nr, a, x, na, g0, 16 * v0, y, ml); break;
            case 3: attn_ger_tile(3, K, nr, a, x, na, g0, 16 * v0, y, ml); break;
            default: attn_ger_tile(4, K, nr, a, x, na, g0, 16 * v0, y, ml); break;
            }
        }
    }
}
#endif

static pp_attn_ger_fn attn_pick_ger(int portable, pp_isa isa)
{
#ifdef ATTN_HAVE_AVX2
    if (!portable && isa == PP_ISA_AVX512)
        return attn_ger_avx512;
#endif
    (void)portable, (void)isa;
    return NULL;  // each key's lane steps
}

void pp_attn_cpu_ger(pp_isa isa, int nr, const float *const *a, const float *const *x, const int *na, int ng,
                     float *acc, int64_t m)
{
    pp_attn_ger_fn f = attn_pick_ger(0, pp_isa_resolve(isa));
    if (f)
        f(nr, a, x, na, ng, acc, m);
    else
        attn_ger_scalar(nr, a, x, na, ng, acc, m);
}

// ---------------------------------------------------------------------------------------------
// The flash forward's NaN-sticky row max (pp_attn_rowmax_fn) in 16 lanes. The scalar loop replaces
// m only by a strictly greater s_i or a NaN, so without NaN its result is m when no s_i exceeds m,
// else the first s_i equal to the largest value (its bits: −0 and +0 compare equal, the first
// wins); the lanes find the largest value, then the first key equal to it. A NaN anywhere (rare):
// the scalar loop, whose last NaN wins.

static float attn_rowmax_scalar(const float *s, int64_t n, float m)
{
    for (int64_t i = 0; i < n; i++)
        if (s[i] > m || s[i] != s[i])
            m = s[i];
    return m;
}

#ifdef ATTN_HAVE_AVX2
__attribute__((target("avx512f"))) static float attn_rowmax_avx512(const float *s, int64_t n, float m)
{
    const __m512 ninf = _mm512_set1_ps(-INFINITY);
    __m512 vmax = ninf;
    __mmask16 nan = 0;
    for (int64_t c = 0; c < n; c += 16) {
        __mmask16 k = n - c >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - c)) - 1u);
        __m512 x = _mm512_mask_loadu_ps(ninf, k, s + c);  // lanes past n: −Inf, never above m's rule
        nan |= _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
        vmax = _mm512_max_ps(vmax, x);
    }
    if (nan)
        return attn_rowmax_scalar(s, n, m);
    float top = _mm512_reduce_max_ps(vmax);
    if (!(top > m))
        return m;
    __m512 vt = _mm512_set1_ps(top);
    for (int64_t c = 0;; c += 16) {  // top is some s_i: found before n
        __mmask16 k = n - c >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - c)) - 1u);
        __mmask16 eq = _mm512_mask_cmp_ps_mask(k, _mm512_maskz_loadu_ps(k, s + c), vt, _CMP_EQ_OQ);
        if (eq)
            return s[c + __builtin_ctz(eq)];
    }
}
#endif

static pp_attn_rowmax_fn attn_pick_rowmax(int portable, pp_isa isa)
{
#ifdef ATTN_HAVE_AVX2
    if (!portable && isa == PP_ISA_AVX512)
        return attn_rowmax_avx512;
#endif
    (void)portable, (void)isa;
    return NULL;  // the scalar loop
}

float pp_attn_cpu_rowmax(pp_isa isa, const float *s, int64_t n, float m)
{
    pp_attn_rowmax_fn f = attn_pick_rowmax(0, pp_isa_resolve(isa));
    return f ? f(s, n, m) : attn_rowmax_scalar(s, n, m);
}

static pp_attn_exp2_fn attn_pick_exp2(int portable, pp_isa isa)
{
#ifdef ATTN_HAVE_AVX2
    if (!portable && isa == PP_ISA_AVX512)
        return attn_exp2_avx512;
    if (!portable && isa == PP_ISA_AVX2)
        return attn_exp2_avx2;
#endif
    (void)portable, (void)isa;
    return NULL;  // pp_attn_exp2f one key at a time
}

void pp_attn_cpu_exp2(pp_isa isa, const float *s, float a, float b, float *p, int64_t n)
{
    pp_attn_exp2_fn f = attn_pick_exp2(0, pp_isa_resolve(isa));
    if (f) {
        f(s, a, b, p, n);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        p[i] = attn_exp2_one(s[i], a, b);
}

// The lane steps of level isa (resolved: one this CPU runs); NULL for the plain fmaf loop.
static pp_attn_axpy_fn attn_pick_axpy(int portable, pp_isa isa)
{
#ifdef ATTN_HAVE_AVX2
    if (!portable && isa == PP_ISA_AVX512)
        return attn_axpy_avx512;
    if (!portable && isa == PP_ISA_AVX2)
        return attn_axpy_avx2;
#endif
    (void)portable, (void)isa;
    return NULL;  // pp_attn_axpy's plain fmaf loop
}

static pp_attn_axpy_n_fn attn_pick_axpy_n(int portable, pp_isa isa)
{
#ifdef ATTN_HAVE_AVX2
    if (!portable && isa == PP_ISA_AVX512)
        return attn_axpy_n_avx512;
#endif
    (void)portable, (void)isa;
    return NULL;  // one lane step at a time
}

static pp_attn_dots_fn attn_pick_dots(int portable, pp_isa isa)
{
#ifdef ATTN_HAVE_AVX2
    if (!portable && isa == PP_ISA_AVX512)
        return attn_dots_T_avx512;
#endif
    (void)portable, (void)isa;
    return NULL;  // the lane steps, PP_ATTN_STEP_BUF at a time
}

static pp_attn_dots2_fn attn_pick_dots2(int portable, pp_isa isa)
{
#ifdef ATTN_HAVE_AVX2
    if (!portable && isa == PP_ISA_AVX512)
        return attn_dots2_T_avx512;
#endif
    (void)portable, (void)isa;
    return NULL;  // the backward's rows one at a time
}

static pp_attn_dots4_fn attn_pick_dots4(int portable, pp_isa isa)
{
#ifdef ATTN_HAVE_AVX2
    if (!portable && isa == PP_ISA_AVX512)
        return attn_dots4_T_avx512;
#endif
    (void)portable, (void)isa;
    return NULL;  // pairs of rows, or one
}

void pp_attn_cpu_dots4(pp_isa isa, const float *const *a, const float *xT, int64_t ld, int64_t nc,
                       float *const *acc, int64_t m)
{
    pp_attn_dots4_fn f = attn_pick_dots4(0, pp_isa_resolve(isa));
    if (f) {
        f(a, xT, ld, nc, acc, m);
        return;
    }
    for (int i = 0; i < 4; i++)
        pp_attn_cpu_dots(isa, a[i], xT, ld, nc, acc[i], m);
}

void pp_attn_cpu_dots2(pp_isa isa, const float *a0, const float *a1, const float *xT, int64_t ld, int64_t nc,
                       float *acc0, float *acc1, int64_t m)
{
    pp_attn_dots2_fn f = attn_pick_dots2(0, pp_isa_resolve(isa));
    if (f) {
        f(a0, a1, xT, ld, nc, acc0, acc1, m);
        return;
    }
    pp_attn_cpu_dots(isa, a0, xT, ld, nc, acc0, m);
    pp_attn_cpu_dots(isa, a1, xT, ld, nc, acc1, m);
}

static pp_attn_axpy64_fn attn_pick_axpy64(int portable, pp_isa isa)
{
#ifdef ATTN_HAVE_AVX2
    if (!portable && isa == PP_ISA_AVX512)
        return attn_axpy64_avx512;
    if (!portable && isa == PP_ISA_AVX2)
        return attn_axpy64_avx2;
#endif
    (void)portable, (void)isa;
    return NULL;  // the scalar fma loop
}

static pp_attn_dots64_fn attn_pick_dots64(int portable, pp_isa isa)
{
#ifdef ATTN_HAVE_AVX2
    if (!portable && isa == PP_ISA_AVX512)
        return attn_dots64_avx512;
    if (!portable && isa == PP_ISA_AVX2)
        return attn_dots64_avx2;
#endif
    (void)portable, (void)isa;
    return NULL;  // the scalar fma loops
}

void pp_attn_cpu_axpy64(pp_isa isa, float a, const float *x, double *y, int64_t n)
{
    pp_attn_axpy64_fn f = attn_pick_axpy64(0, pp_isa_resolve(isa));
    if (f) {
        f(a, x, y, n);
        return;
    }
    for (int64_t l = 0; l < n; l++)
        y[l] = fma((double)a, (double)x[l], y[l]);
}

void pp_attn_cpu_dots64(pp_isa isa, const float *a, const float *xT, int64_t ld, int64_t nc, double *acc, int64_t m)
{
    pp_attn_dots64_fn f = attn_pick_dots64(0, pp_isa_resolve(isa));
    if (f) {
        f(a, xT, ld, nc, acc, m);
        return;
    }
    for (int64_t l = 0; l < m; l++) {
        double s = 0.0;
        for (int64_t c = 0; c < nc; c++)
            s = fma((double)a[c], (double)xT[c * ld + l], s);
        acc[l] = s;
    }
}

void pp_attn_cpu_dots(pp_isa isa, const float *a, const float *xT, int64_t ld, int64_t nc, float *acc, int64_t m)
{
    pp_attn_dots_fn f = attn_pick_dots(0, pp_isa_resolve(isa));
    if (f) {
        f(a, xT, ld, nc, acc, m);
        return;
    }
    for (int64_t l = 0; l < m; l++) {
        float s = 0.0f;
        for (int64_t c = 0; c < nc; c++)
            s = fmaf(a[c], xT[c * ld + l], s);
        acc[l] = s;
    }
}

// ---------------------------------------------------------------------------------------------
// Memory: plain host memory

static int attn_cpu_alloc(void *ctx, void **p, size_t bytes)
{
    pp_attn_cpu_ctx *c = ctx;
    *p = malloc(bytes);
    if (*p)
        return 0;
    if (c->errbuf && c->errlen)
        snprintf(c->errbuf, c->errlen, "attention: out of memory for a work buffer of %zu bytes", bytes);
    return 3;
}

static void attn_cpu_release(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

static int attn_cpu_copy(void *ctx, void *dst, const void *src, size_t bytes)
{
    (void)ctx;
    memcpy(dst, src, bytes);
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Launches: the threads in runs (pp_attn_run_width), runs in chunks that the workers take in
// turn as they finish (a worker slowed by another process takes fewer); every run is computed
// alone, so who computes it never matters

// A launch's threads [t0, t0 + n): pp_attn_run, or its copy compiled at the device's x86-64 level
// (attention_run_level.h: the same source, so the same bits).
typedef void (*attn_cpu_run_fn)(const pp_attn_launch *L, int64_t t0, int64_t n);

static void attn_run_baseline(const pp_attn_launch *L, int64_t t0, int64_t n)
{
    pp_attn_run(L, t0, n);
}

static attn_cpu_run_fn attn_pick_run(int portable, pp_isa isa)
{
#ifdef PP_ATTN_RUN_LEVELS
    if (!portable && isa == PP_ISA_AVX512)
        return pp_attn_cpu_run_v4;
    if (!portable && isa == PP_ISA_AVX2)
        return pp_attn_cpu_run_v3;
#else
    (void)portable, (void)isa;
#endif
    return attn_run_baseline;
}

typedef struct attn_cpu_job {
    pp_attn_launch L;
    attn_cpu_run_fn run;
    int64_t width, runs, per_chunk, chunks;
    atomic_llong next;  // the next chunk to take
    pp_ranges *wr;      // range diagnostics: one accumulator per worker, or NULL
} attn_cpu_job;

static void attn_cpu_worker(void *ctx, int64_t worker)
{
    attn_cpu_job *J = ctx;
    pp_attn_launch L = J->L;
    L.ranges = J->wr ? &J->wr[worker] : NULL;
    for (int64_t c; (c = atomic_fetch_add(&J->next, 1)) < J->chunks;) {
        int64_t r0 = c * J->per_chunk, r1 = r0 + J->per_chunk < J->runs ? r0 + J->per_chunk : J->runs;
        J->run(&L, r0 * J->width, (r1 - r0) * J->width);
    }
}

static int attn_cpu_launch(void *ctx, const pp_attn_launch *L)
{
    const pp_attn_cpu_ctx *c = ctx;
    attn_cpu_job J;
    J.L = *L;
    J.L.lanes = PP_ATTN_MAX_LANES;
    J.L.key_tile = ATTN_CPU_KEY_TILE;  // every launch of the plan: the transposes and their readers
    pp_isa isa = pp_isa_resolve(c->isa);
    J.L.axpy = attn_pick_axpy(c->portable, isa);
    J.L.axpy_n = attn_pick_axpy_n(c->portable, isa);
    J.L.dots_T = attn_pick_dots(c->portable, isa);
    J.L.exp2_fma = attn_pick_exp2(c->portable, isa);
    J.L.axpy64 = attn_pick_axpy64(c->portable, isa);
    J.L.dots64 = attn_pick_dots64(c->portable, isa);
    J.L.rowmax = attn_pick_rowmax(c->portable, isa);
    J.L.dots2_T = attn_pick_dots2(c->portable, isa);
    J.L.dots4_T = attn_pick_dots4(c->portable, isa);
    J.L.expf_sub = attn_pick_expf(c->portable, isa);
    J.L.prob = attn_pick_prob(c->portable, isa);
    J.L.ger = attn_pick_ger(c->portable, isa);
    J.run = attn_pick_run(c->portable, isa);
    J.width = pp_attn_run_width(L);
    if (L->n % J.width)
        J.width = 1;  // the plan sizes lane launches in whole runs; never taken
    J.runs = L->n / J.width;
    int workers = L->n < ATTN_MIN_PARALLEL || c->threads < 1 ? 1 : c->threads;
    int64_t want = (int64_t)workers * ATTN_CHUNKS_PER_WORKER;
    J.per_chunk = (J.runs + want - 1) / want;
    J.chunks = (J.runs + J.per_chunk - 1) / J.per_chunk;
    atomic_init(&J.next, 0);
    J.wr = NULL;
    if (c->ranges && !(J.wr = pp_ranges_workers(c->ranges, workers))) {
        if (c->errbuf && c->errlen)
            snprintf(c->errbuf, c->errlen, "attention: out of memory for the range diagnostics");
        return 3;
    }
    pp_parallel_for(attn_cpu_worker, &J, workers, workers, NULL);
    pp_ranges_workers_done(c->ranges, J.wr, workers);
    return 0;
}

void pp_attn_cpu_device(pp_attn_cpu_ctx *ctx, pp_attn_device *dev)
{
    memset(dev, 0, sizeof *dev);
    dev->ctx = ctx;
    dev->alloc = attn_cpu_alloc;
    dev->release = attn_cpu_release;
    dev->upload = attn_cpu_copy;
    dev->download = attn_cpu_copy;
    dev->launch = attn_cpu_launch;
    dev->gemm = NULL;
    dev->scratch_floats = ATTN_CPU_SCRATCH;
    dev->host_threads = ctx->threads;
}
