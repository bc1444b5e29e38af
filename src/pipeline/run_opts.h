// run_opts.h — how a case is run: backend, threads, what is kept, the reference's method and
// cache, and the cross-check. Every stage of the run (pipeline/plan.h) reads these.
#ifndef PP_RUN_OPTS_H
#define PP_RUN_OPTS_H

typedef struct pp_run_opts {
    const char *device;    // "cpu", "cuda" or "auto"
    int threads;           // < 1: one per online CPU
    int save_tensors;      // keep inputs, outputs and references in the result (for report.h5)
    int progress;          // progress on stderr: PP_PROGRESS_OFF, _BAR (a terminal), _LOG (core/progress.h)
    const char *reference_method;  // NULL: the case's; else one of the op's ref_methods
    const char *cache_dir;         // reference cache folder (src/pipeline/ref_cache.h); NULL or "": none
    int cross_check;               // on cuda, also run the CPU emulation: "cpu-emulation" comparisons
    int orders;                    // --orders N: each emulated variant N more times (pipeline/order_band.h)
    int ranges;                    // --ranges: range diagnostics of each emulated variant (core/range_table.h)
} pp_run_opts;

#endif
