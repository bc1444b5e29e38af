// isa.c — which x86-64 level this CPU runs (isa.h).
#include "isa.h"

pp_isa pp_isa_resolve(pp_isa cap)
{
    if (cap == PP_ISA_AUTO)
        cap = PP_ISA_AVX512;
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
    // the levels by name (GCC ≥ 12): exactly what target("arch=x86-64-v3/v4") code needs
    if (cap >= PP_ISA_AVX512 && __builtin_cpu_supports("x86-64-v4"))
        return PP_ISA_AVX512;
    if (cap >= PP_ISA_AVX2 && __builtin_cpu_supports("x86-64-v3"))
        return PP_ISA_AVX2;
#elif defined(__clang__) && defined(__x86_64__)
    // clang (the fuzz build) names features only; its vector code here asks for no more than these
    int v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2");
    if (cap >= PP_ISA_AVX512 && v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
        return PP_ISA_AVX512;
    if (cap >= PP_ISA_AVX2 && v3)
        return PP_ISA_AVX2;
#endif
    return PP_ISA_BASELINE;
}

const char *pp_isa_name(pp_isa isa)
{
    switch (isa) {
    case PP_ISA_BASELINE:
        return "baseline";
    case PP_ISA_AVX2:
        return "avx2";
    case PP_ISA_AVX512:
        return "avx512";
    default:
        return "auto";
    }
}
