// cpu/attention_device.h — the CPU as a device of the attention launch plan
// (kernels/attention_plan.h): host memory, every launch's threads on the thread pool in runs of
// lanes (kernels/attention_threads.h) with an AVX2+FMA lane step. The plan and the thread bodies
// are the GPU's; only how the threads are scheduled is this device's, so the bits are the GPU's.
#ifndef PP_CPU_ATTENTION_DEVICE_H
#define PP_CPU_ATTENTION_DEVICE_H

#include <stddef.h>

#include "../attention_plan.h"
#include "isa.h"

// The device's state: its settings and where its one-line failure messages go.
typedef struct pp_attn_cpu_ctx {
    int threads;   // workers (< 1 means 1); the bits never depend on it
    int portable;  // 1: the plain fmaf lane step instead of AVX2+FMA (the same bits)
    char *errbuf;
    size_t errlen;
    // Range diagnostics (kernels/ranges.h): every launch's notes merged here (NULL: none); each
    // worker notes into its own accumulator, merged after the launch (exact in any order).
    pp_ranges *ranges;
    // The vector lane step's x86-64 level (base/isa.h): PP_ISA_AUTO the widest this CPU runs, a
    // lower one by name (tests run each; the same bits); portable = 1 overrides it.
    pp_isa isa;
} pp_attn_cpu_ctx;

// dev runs on ctx (which must outlive it). No GEMM: engine cublas is the GPU's.
void pp_attn_cpu_device(pp_attn_cpu_ctx *ctx, pp_attn_device *dev);

// p_i = pp_attn_exp2f(fmaf(s_i, a, b)) for i < n by the device's vector exponentials of level isa
// (at most the widest this CPU runs; the scalar loop below AVX2): the same bits as the scalar
// calls, for tests/test_attention_exp2_lanes.c to check.
void pp_attn_cpu_exp2(pp_isa isa, const float *s, float a, float b, float *p, int64_t n);

// acc_l = fma chain from +0 over c < nc (increasing) of a_c·xT[c·ld + l], l < m ≤ 128, by the
// device's key-lane dot products of level isa (the plain fmaf loop below AVX-512): the same bits as
// the plain loop, for tests/test_attention_dots_lanes.c to check.
void pp_attn_cpu_dots(pp_isa isa, const float *a, const float *xT, int64_t ld, int64_t nc, float *acc, int64_t m);

// explain's binary64 chains by the device's lanes of level isa (the scalar fma loops below AVX2):
// y_l = fma((double)a, (double)x_l, y_l), l < n; and acc_l = fma chain from +0 over c < nc
// (increasing) of (double)a_c·(double)xT[c·ld + l], l < m ≤ 128. The same bits as the scalar loops,
// for tests/test_attention_dots_lanes.c to check.
void pp_attn_cpu_axpy64(pp_isa isa, float a, const float *x, double *y, int64_t n);
void pp_attn_cpu_dots64(pp_isa isa, const float *a, const float *xT, int64_t ld, int64_t nc, double *acc, int64_t m);

// The flash forward's NaN-sticky row max by the device's lanes of level isa (the scalar loop
// below AVX-512): the loop "for i < n: if (s_i > m || s_i != s_i) m = s_i", its result's bits,
// for tests/test_attention_rowmax_lanes.c to check.
float pp_attn_cpu_rowmax(pp_isa isa, const float *s, int64_t n, float m);

// Four rows' key-lane dot products by the device's lanes of level isa (below AVX-512: each row
// through pp_attn_cpu_dots): acc[i]_l the chain of pp_attn_cpu_dots of a[i], i < 4, l < m ≤ 128,
// for tests/test_attention_dots_lanes.c to check.
void pp_attn_cpu_dots4(pp_isa isa, const float *const *a, const float *xT, int64_t ld, int64_t nc,
                       float *const *acc, int64_t m);

// Two rows' key-lane dot products by the device's lanes of level isa (below AVX-512: one row, then
// the other, through pp_attn_cpu_dots): acc0_l, acc1_l the chains of pp_attn_cpu_dots of a0 and a1,
// l < m ≤ 128, for tests/test_attention_dots_lanes.c to check.
void pp_attn_cpu_dots2(pp_isa isa, const float *a0, const float *a1, const float *xT, int64_t ld, int64_t nc,
                       float *acc0, float *acc1, int64_t m);

// The unfused softmax's exponentials p_i = pp_expf(x_i − m), i < n (p may be x), by the device's
// vector lanes of level isa (the scalar calls below AVX2): the same bits as the scalar calls, for
// tests/test_attention_softmax_lanes.c to check.
void pp_attn_cpu_expf(pp_isa isa, const float *x, float m, float *p, int64_t n);

// The unfused softmax's probabilities p_i = pp_attn_store(f, e_i / sum), i < n (p may be e), by the
// device's vector lanes of level isa (the scalar loop below AVX2): the same bits, for
// tests/test_attention_softmax_lanes.c to check.
void pp_attn_cpu_prob(pp_isa isa, pp_format_id f, const float *e, float sum, float *p, int64_t n);

// dk/dv's rank-1 updates (pp_attn_ger_fn: acc[g·PP_ATTN_MAX_LANES + l] = fmaf(a_r[g], x_r[l], ·) for
// rows r < nr in order, keys g < min(na_r, ng), l < m ≤ PP_ATTN_MAX_LANES) by the device's lanes of
// level isa (the scalar loop below AVX-512): the same bits, for tests/test_attention_dots_lanes.c.
void pp_attn_cpu_ger(pp_isa isa, int nr, const float *const *a, const float *const *x, const int *na, int ng,
                     float *acc, int64_t m);

#endif
