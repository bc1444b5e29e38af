// build_info.c — what this binary was built with.
#include "core/build_info.h"

#include <stdio.h>

#ifdef PP_HAVE_CUDA
#include "cuda/format_cuda.h"
#endif

int pp_cuda_compiled(void)
{
#ifdef PP_HAVE_CUDA
    return 1;
#else
    return 0;
#endif
}

int pp_cuda_usable(char *name, size_t n)
{
#ifdef PP_HAVE_CUDA
    if (pp_cuda_device_count() > 0) {
        if (name && n)
            pp_cuda_device_name(0, name, n);
        return 1;
    }
#endif
    if (name && n)
        name[0] = '\0';
    return 0;
}
