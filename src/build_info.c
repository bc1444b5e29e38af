// build_info.c — what this binary was built with.
#include "cli.h"

int pp_cuda_compiled(void)
{
#ifdef PP_HAVE_CUDA
    return 1;
#else
    return 0;
#endif
}
