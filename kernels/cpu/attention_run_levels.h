// cpu/attention_run_levels.h — the attention plan's thread code compiled at x86-64-v3 and v4
// (attention_run_level.h says why and how); each runs threads [t0, t0 + n) of launch L as
// pp_attn_run does. Only on x86-64 with GCC's target pragmas; the CPU device calls a level's copy
// only where the CPU runs it (pp_isa_resolve).
#ifndef PP_CPU_ATTENTION_RUN_LEVELS_H
#define PP_CPU_ATTENTION_RUN_LEVELS_H

#include <stdint.h>

#include "../attention_plan.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define PP_ATTN_RUN_LEVELS 1
void pp_attn_cpu_run_v3(const pp_attn_launch *L, int64_t t0, int64_t n);
void pp_attn_cpu_run_v4(const pp_attn_launch *L, int64_t t0, int64_t n);
#endif

#endif
