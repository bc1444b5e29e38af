// cpu/attention_run_level.h — the attention plan's thread code (attention_threads.h, pp_attn_run)
// compiled once more at an x86-64 level by the file that includes this one after its
// `#pragma GCC target`: attention_run_v3.c (x86-64-v3: AVX2, FMA) and attention_run_v4.c
// (x86-64-v4: AVX-512). The CPU device (attention_device.c) runs a launch's threads through the
// copy of the level it picked (pp_isa), so the thread bodies' scalar steps run on that level's
// instructions: fmaf is the FMA instruction instead of a call into libm, and GCC may keep the
// bodies' plain loops in wider registers.
//
// Why the bits cannot change: the source is the same, built with the same -ffp-contract=off
// -frounding-math, no -ffast-math. GCC never reassociates or contracts binary32/binary64
// operations under those flags, whatever the target; it vectorises only loops whose lanes are
// independent; fmaf, sqrt, the conversions and the comparisons are IEEE operations with one
// result on every level, and libm's exp, log (the binary64 exact sites) are the same library
// functions called from every copy. tests/test_attention_run_levels.c runs every variant family
// through each level's copy and checks the outputs bit for bit against the baseline copy.
#ifndef PP_CPU_ATTENTION_RUN_LEVEL_H
#define PP_CPU_ATTENTION_RUN_LEVEL_H

#include "attention_run_levels.h"
#include "../attention_threads.h"

void ATTN_RUN_LEVEL_NAME(const pp_attn_launch *L, int64_t t0, int64_t n)
{
    pp_attn_run(L, t0, n);
}

#endif
