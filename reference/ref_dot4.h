// ref_dot4.h — the binary64 dot product and γ_n that the AdamW reference's running bounds use
// (adamw_ref_lohner.c, adamw_ref_coupled.c): one definition, so the order a bound was proven for
// (PROOFS.md#adamw-lohner) is the order both files run.
#ifndef PP_REF_DOT4_H
#define PP_REF_DOT4_H

#include <stdint.h>

// The bound arithmetic's own roundings (PROOFS.md#adamw, "bookkeeping"): a few ulps on any path
// for n ≤ 2^10, ((3n + 8)·2^−53 < 2^−40).
#define PP_REF_SLACK (1.0 + 0x1p-40)

// γ_n = n·u/(1 − n·u), rounded up generously.
static inline double pp_ref_gamma(int64_t n)
{
    double nu = (double)n * 0x1p-53;
    return nu / (1.0 - nu) * PP_REF_SLACK;
}

// Σ_k x_k·y_k over contiguous memory with four interleaved partial sums: the order is fixed, so
// the result is deterministic; its error is ≤ γ_n·Σ|x_k·y_k| whatever the order.
static inline double pp_ref_dot4(const double *x, const double *y, int n)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int k = 0;
    for (; k + 4 <= n; k += 4) {
        s0 += x[k] * y[k];
        s1 += x[k + 1] * y[k + 1];
        s2 += x[k + 2] * y[k + 2];
        s3 += x[k + 3] * y[k + 3];
    }
    for (; k < n; k++)
        s0 += x[k] * y[k];
    return (s0 + s1) + (s2 + s3);
}

#endif
