// test_util_cuda.h — what every GPU test shares: skip, with the reason printed, where no GPU is
// usable (CI machines and most laptops), so the suite stays green there and says why.
#ifndef PP_TEST_UTIL_CUDA_H
#define PP_TEST_UTIL_CUDA_H

#include "test_util.h"

#include "cuda/format_cuda.h"

// Ends the calling cmocka test as skipped when pp_cuda_device_count() finds no usable device.
#define PP_TEST_REQUIRE_GPU()                                                                      \
    do {                                                                                           \
        if (pp_cuda_device_count() == 0) {                                                         \
            print_message("skipped: no usable CUDA device or driver (pp_cuda_device_count() == 0)\n"); \
            skip();                                                                                \
            return;                                                                                \
        }                                                                                          \
    } while (0)

#endif
