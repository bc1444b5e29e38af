// bench_adamw_variants.h — the four AdamW variants issue 17's table times (tools/bench_adamw_emu.c,
// tools/bench_adamw_ref.c), named as the benchmarks print them; one table so both time the same.
#ifndef PP_BENCH_ADAMW_VARIANTS_H
#define PP_BENCH_ADAMW_VARIANTS_H

#include "adamw.h"

typedef struct pp_bench_adamw_variant {
    const char *name;
    pp_adamw_variant v;
} pp_bench_adamw_variant;

#define PP_BENCH_ADAMW_BF16(...)                                                                         \
    {.param = PP_FMT_BF16, .momentum = PP_FMT_BF16, .variance = PP_FMT_BF16, .compensation = PP_FMT_BF16, \
     .update = PP_ADAMW_ANYPRECISION, .kernels = PP_ADAMW_KERNELS_CUDA, __VA_ARGS__}

static const pp_bench_adamw_variant pp_bench_adamw_variants[4] = {
    {.name = "fp32 torch",
     .v = {.param = PP_FMT_FP32, .momentum = PP_FMT_FP32, .variance = PP_FMT_FP32, .compensation = PP_FMT_FP32,
           .update = PP_ADAMW_TORCH, .kernels = PP_ADAMW_KERNELS_CUDA}},
    {.name = "bf16 plain", .v = PP_BENCH_ADAMW_BF16(.kahan = 0)},
    {.name = "bf16 kahan(bf16)", .v = PP_BENCH_ADAMW_BF16(.kahan = 1)},
    {.name = "bf16 stochastic", .v = PP_BENCH_ADAMW_BF16(.stochastic = 1)},
};

#undef PP_BENCH_ADAMW_BF16

#endif
