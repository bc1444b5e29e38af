// engine_knob.c — the engine knob shared by gemm and attention (engine_knob.h).
#include "ops/engine_knob.h"

#include <string.h>

const char *const pp_engine_values[] = {"ours", "cublas", NULL};
const pp_knob_meaning pp_engine_meanings[] = {{"ours", PP_ENGINE_OURS}, {"cublas", PP_ENGINE_CUBLAS}, {NULL, 0}};

const char *pp_engine_vendor_note(const pp_knob_setting *knobs, int n_knobs)
{
    const char *engine = pp_knob_setting_value(knobs, n_knobs, "engine");
    if (engine && !strcmp(engine, "cublas"))
        return "(GEMMs in cuBLAS: its reduction order and tensor cores, not the emulation's; "
               "--cross-check measures the difference)";
    return NULL;
}
