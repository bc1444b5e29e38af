// delayed_knobs.c — amax_compute_algo's values, shared by gemm and attention (delayed_knobs.h).
#include "ops/delayed_knobs.h"

const char *const pp_amax_algo_values[] = {"max", "most_recent", NULL};
const pp_knob_meaning pp_amax_algo_meanings[] = {
    {.value = "max", .id = PP_AMAX_MAX}, {.value = "most_recent", .id = PP_AMAX_MOST_RECENT}, {.value = NULL}};
