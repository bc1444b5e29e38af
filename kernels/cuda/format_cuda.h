// format_cuda.h — host launchers that round arrays on the GPU with kernels/format.h (the same
// header the CPU uses, so results match bit for bit). C linkage; defined in format_kernels.cu.
// Built only when nvcc exists (the Makefile defines PP_HAVE_CUDA=1 then).
#ifndef PP_FORMAT_CUDA_H
#define PP_FORMAT_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"

#ifdef __cplusplus
extern "C" {
#endif

// Number of usable CUDA devices: 0 when there is no GPU, no driver, or the runtime fails.
int pp_cuda_device_count(void);
// The name of device i into buf (n bytes); "" when it cannot be read.
void pp_cuda_device_name(int i, char *buf, size_t n);

// y[i] = pp_round(f, x[i], mode, rbits[i]) on the GPU, one thread per element.
// @param [in]  f, mode  the format and rounding mode (as pp_round)
// @param [in]  x        n binary64 values (host memory)
// @param [in]  rbits    n random words for PP_RND_SR (host memory), or NULL for all zero
// @param [out] y        n results (host memory); may alias x
// @param [out] errbuf   errlen bytes for a one-line message on failure (may be NULL)
// Returns 0; 2 (PP_ERR_INPUT) for an id or mode outside the tables, or x/y NULL with n > 0;
// 3 (PP_ERR_RUNTIME) when a CUDA call fails: the message names the call, file and line.
int pp_cuda_round_array(pp_format_id f, pp_rounding mode, const double *x, const uint32_t *rbits,
                        double *y, size_t n, char *errbuf, size_t errlen);

// y[i] = pp_round_<f>_<mode>(x[i]) (the named binary32 functions; pp_round_from_f32 for fp32
// and fp64) on the GPU. Same contract as pp_cuda_round_array.
int pp_cuda_round_f32_array(pp_format_id f, pp_rounding mode, const float *x, const uint32_t *rbits,
                            float *y, size_t n, char *errbuf, size_t errlen);

// y[i] = pp_round_fp32_<mode>(x[i]) (binary64 → fp32) on the GPU. Same contract.
int pp_cuda_round_fp32_array(pp_rounding mode, const double *x, const uint32_t *rbits, float *y,
                             size_t n, char *errbuf, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
