// cuda_powf.h — CUDA's single-precision powf (libdevice __nv_powf, as nvcc 13.0 compiles it for
// sm_90), step by step in binary32, so the CPU emulation computes the bits a CUDA kernel's
// powf(x, y) gives. C11 and nvcc (PP_HD).
//
// Why: torch's fused AdamW kernel computes its bias corrections on the GPU as
// 1 − powf(β, step) (kernels/adamw.h, flavour cuda-fused), and CUDA's powf is not correctly
// rounded: against glibc's powf it differs for some (β, t) (β = 0.8f: at 8 θ of 102 475
// element-steps of one probe on an H200, torch 2.11.0+cu130). So glibc's powf cannot stand in.
//
// Where it comes from: the PTX and the SASS of `powf(a, b)` in a kernel built by nvcc 13.0.88
// (`nvcc -arch=sm_90 -O3 -cubin`, read with cuobjdump -sass): no contraction beyond the FFMAs
// written below (ptxas left every FMUL/FADD as it is), and one approximate instruction,
// MUFU.RCP (rcp.approx.ftz.f32) of 1 + m. That reciprocal is replaced here by the correctly
// rounded 1/(1 + m): the log's tail term is computed with it and corrects most of its error, so
// a one-ulp difference in it reaches the result only when the result lies within ~2^-45 of a
// rounding boundary. Measured, not assumed: tests/test_cuda_powf_cuda.c compares this function
// with the device's powf on a grid of bases and steps, and the notes in kernels/adamw.h give the
// H200 counts. The algorithm: log2|a| in double-float (hi + lo, a polynomial in q = 2(m−1)/(m+1)),
// times b in double-float, then 2^frac by a polynomial and 2^int by exponent arithmetic.
// Every constant below is the binary32 the SASS holds (hex patterns of the PTX).
#ifndef PP_CUDA_POWF_H
#define PP_CUDA_POWF_H

#include <math.h>
#include <stdint.h>

#include "format.h"
#include "pp_hd.h"

// 2^|b| of the body: the finite, non-special path of powf (|a| finite and non-zero, b finite).
PP_HD static inline float pp_cuda_powf_body_(float a, float b)
{
    float ax = fabsf(a);
    int sub = ax < 0x1p-126f;  // subnormal: scale into the normal range first
    float x = sub ? ax * 0x1p24f : ax;
    float e0 = sub ? -24.0f : 0.0f;
    uint32_t xb = pp_f32_bits(x);
    uint32_t eb = (xb - 0x3F3504F3u) & 0xFF800000u;  // exponent so that m lies in [√½, √2)
    float m = pp_f32_from_bits(xb - eb);
    float e = fmaf((float)(int32_t)eb, 0x1p-23f, e0);  // the exponent as a float, exactly
    float u = m - 1.0f, w = m + 1.0f;
    float r = 1.0f / w;  // MUFU.RCP on the GPU (see the top comment)
    float q = (u + u) * r;
    float q2 = q * q;
    float d = u - q;
    float tail = r * fmaf(-q, u, d + d);  // q's rounding error, divided by 1 + m
    float p = fmaf(0x1.5865c8p-11f, q2, 0x1.a5cfb6p-9f);  // 0x3A2C32E4, 0x3B52E7DB
    p = fmaf(p, q2, 0x1.2776e6p-6f);                     // 0x3C93BB73
    p = fmaf(p, q2, 0x1.ec709ep-4f);                     // 0x3DF6384F
    p = p * q2;
    const float log2e = 0x1.715476p+0f;  // 0x3FB8AA3B
    float hi = fmaf(q, log2e, e);
    float lo = fmaf(q, log2e, e - hi);
    lo = fmaf(tail, log2e, lo);
    lo = fmaf(q, 0x1.4abc68p-26f, lo);  // 0x32A55E34: log2e's own tail
    lo = fmaf(p * 3.0f, tail, lo);
    lo = fmaf(p, q, lo);
    float l = hi + lo;  // log2|a| = l + lt in double-float
    float lt = lo - (l - hi);
    float y = l * b;  // b·log2|a| = y + yt
    float yt = fmaf(lt, b, fmaf(l, b, -y));
    float n = rintf(y);
    float f = yt + (y - n);
    float s = fmaf(0x1.3f971cp-13f, f, 0x1.5f0bdap-10f);  // 0x391FCB8E, 0x3AAF85ED
    s = fmaf(s, f, 0x1.3b30acp-7f);                       // 0x3C1D9856
    s = fmaf(s, f, 0x1.c6af76p-5f);                       // 0x3D6357BB
    s = fmaf(s, f, 0x1.ebfbd8p-3f);                       // 0x3E75FDEC
    s = fmaf(s, f, 0x1.62e43p-1f);                        // 0x3F317218
    s = fmaf(s, f, 1.0f);
    if (fabsf(y) > 152.0f)
        return y < 0.0f ? 0.0f : INFINITY;
    // 2^n in two factors (n may exceed the exponent range of one): 2^127 and 2^(n − 127) above
    // zero, 2^-123 and 2^(n + 123) at or below it
    uint32_t bias = n > 0.0f ? 0u : 0x83000000u;
    float s1 = pp_f32_from_bits(bias + 0x7F000000u);
    float s2 = pp_f32_from_bits(((uint32_t)(int32_t)n << 23) - bias);
    return s * s1 * s2;
}

// powf(a, b) as CUDA computes it, special cases included (C99 Annex F's, as the SASS branches).
PP_HD static inline float pp_cuda_powf(float a, float b)
{
    if (a == 1.0f || b == 0.0f)
        return 1.0f;
    if (isnan(a) || isnan(b))
        return a + b;
    float odd_b = fabsf(b - 2.0f * truncf(b * 0.5f));  // 1 exactly when b is an odd integer
    if (a == 0.0f || isinf(a)) {
        uint32_t r = pp_f32_bits(a + a);  // ±0 or ±inf, a's sign
        if (b < 0.0f)
            r ^= 0x7F800000u;  // 0 ↔ inf
        return pp_f32_from_bits(odd_b == 1.0f ? r : r & 0x7FFFFFFFu);
    }
    if (a == -1.0f && isinf(b))
        return 1.0f;
    float v = pp_cuda_powf_body_(a, b);
    if (a >= 0.0f)
        return v;
    if (floorf(b) != b)
        return pp_f32_from_bits(0x7FFFFFFFu);  // the canonical NaN CUDA returns
    return odd_b == 1.0f ? -v : v;
}

#endif
