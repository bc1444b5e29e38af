// isa.h — the x86-64 instruction-set levels precprobe's vector loops are compiled for
// (kernels/cpu/adamw_lanes.c, kernels/cpu/attention_device.c, reference/adamw_ref_dd_lanes.c),
// and the choice among them: the widest this CPU runs, or a lower one asked for by name, so the
// narrower builds run (and are tested bit for bit against the widest and the scalar oracle) on a
// machine that has the widest. A choice is a value passed down, never stored globally.
#ifndef PP_ISA_H
#define PP_ISA_H

typedef enum pp_isa {
    PP_ISA_AUTO = 0,   // the widest level below that this CPU runs
    PP_ISA_BASELINE,   // x86-64 baseline (SSE2): what runs everywhere (the "default" build)
    PP_ISA_AVX2,       // x86-64-v3: AVX2, FMA, BMI1/2, F16C
    PP_ISA_AVX512      // x86-64-v4: AVX-512 F, BW, CD, DQ, VL
} pp_isa;

// The widest level at most cap (PP_ISA_AUTO: no cap) that this CPU runs; PP_ISA_BASELINE off
// x86-64 or where the compiler cannot ask the CPU. Reads the CPU's feature bits (the C runtime
// detects them once at load time), keeps nothing.
pp_isa pp_isa_resolve(pp_isa cap);

// "avx512", "avx2", "baseline" or "auto".
const char *pp_isa_name(pp_isa isa);

#endif
