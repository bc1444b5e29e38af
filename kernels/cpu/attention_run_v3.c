// cpu/attention_run_v3.c — pp_attn_run at x86-64-v3 (AVX2, FMA, BMI2): attention_run_level.h.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC target("arch=x86-64-v3")
#define ATTN_RUN_LEVEL_NAME pp_attn_cpu_run_v3
#include "attention_run_level.h"
#else
typedef int pp_attn_run_v3_unused;  // ISO C: a translation unit declares something
#endif
