// build_info.h — what this binary is and what it can reach: its version, whether the CUDA backend
// is compiled in, and whether a usable CUDA device is present now.
#ifndef PP_BUILD_INFO_H
#define PP_BUILD_INFO_H

#include <stddef.h>

#define PP_VERSION "0.1.0"

// 1 when the CUDA backend was compiled in (nvcc found at build time).
int pp_cuda_compiled(void);
// 1 when it was, and a CUDA device and driver are usable now; name (n bytes, may be NULL) gets
// device 0's name, e.g. "NVIDIA H100 80GB HBM3".
int pp_cuda_usable(char *name, size_t n);

#endif
