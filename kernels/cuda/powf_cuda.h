// powf_cuda.h — CUDA's own powf beside kernels/cuda_powf.h's emulation of it, computed on the GPU,
// so a test can hold the emulation against the hardware (tests/test_cuda_powf_cuda.c). C linkage;
// defined in powf_kernels.cu. Built only when nvcc exists.
#ifndef PP_POWF_CUDA_H
#define PP_POWF_CUDA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// y[i] = powf(a[i], b[i]) by the device's math library, and e[i] = pp_cuda_powf(a[i], b[i]) (the
// emulation compiled for the device), one thread per element; all host memory.
// Returns 0; 2 for NULL arrays with n > 0; 3 when a CUDA call fails (the message names it).
int pp_cuda_powf_array(const float *a, const float *b, float *y, float *e, size_t n, char *errbuf, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
