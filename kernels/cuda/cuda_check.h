// cuda_check.h — the one way precprobe's CUDA launchers report a failure: a one-line
// "file:line: call: reason" in the caller's errbuf, rc = 3 (PP_CUDA_ERR_RUNTIME), and a jump to
// the launcher's `done:` label, which frees what it holds. The launchers' return codes are
// base/error.h's values (kernels/ does not include src/). Included by the .cu files only.
#ifndef PP_CUDA_CHECK_H
#define PP_CUDA_CHECK_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdio.h>

enum { PP_CUDA_OK = 0, PP_CUDA_ERR_INPUT = 2, PP_CUDA_ERR_RUNTIME = 3 };

static inline void pp_cuda_message(char *errbuf, size_t errlen, const char *file, int line, const char *what,
                                   const char *why)
{
    if (errbuf && errlen)
        snprintf(errbuf, errlen, "%s:%d: %s: %s", file, line, what, why);
}

// Needs `errbuf`, `errlen`, `rc` and a `done:` label in scope.
#define PP_CUDA_CHECK(call)                                                                        \
    do {                                                                                           \
        cudaError_t pp_e_ = (call);                                                                \
        if (pp_e_ != cudaSuccess) {                                                                \
            pp_cuda_message(errbuf, errlen, __FILE__, __LINE__, #call, cudaGetErrorString(pp_e_)); \
            rc = PP_CUDA_ERR_RUNTIME;                                                              \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

// A host allocation that must succeed, with the same one-line message.
#define PP_HOST_CHECK(ptr)                                                                         \
    do {                                                                                           \
        if (!(ptr)) {                                                                              \
            pp_cuda_message(errbuf, errlen, __FILE__, __LINE__, #ptr, "out of host memory");       \
            rc = PP_CUDA_ERR_RUNTIME;                                                              \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

#endif
