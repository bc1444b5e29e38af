// pp_hd.h — the one macro that lets an element-wise header compile under both a C11
// compiler (CPU emulation) and nvcc (CUDA kernels), so the two cannot drift.
#ifndef PP_HD_H
#define PP_HD_H

#ifdef __CUDACC__
#define PP_HD __host__ __device__
#else
#define PP_HD
#endif

#endif
