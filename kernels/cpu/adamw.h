// cpu/adamw.h — the CPU emulation of precprobe's AdamW variants: T steps of kernels/adamw.h's
// element update over n parameters, on a gradient source of kernels/adamw_problem.h.
#ifndef PP_CPU_ADAMW_H
#define PP_CPU_ADAMW_H

#include <stdint.h>

#include "../adamw.h"
#include "../adamw_problem.h"
#include "../adamw_thread.h"
#include "error.h"

// Runs pr->steps steps of variant va from θ₀, bit for bit as kernels/adamw.h specifies.
// @param [in]  va, pr    the variant and the problem (n, T, hyper-parameters, gradient source).
// @param [in]  theta0    n values of va->param (binary64 carrying them).
// @param [out] theta, m, v, c   n values each after step T (c may be NULL; zero without Kahan).
// @param [out] trace     snapshots and loss per step (may be NULL; snap and loss are allocated
//                        here and freed with pp_adamw_trace_free).
// @param [in]  threads   worker threads (< 1 means 1); the result does not depend on it.
// Returns PP_OK, PP_ERR_INPUT (bad variant or problem, θ₀ not in the format), PP_ERR_RUNTIME
// (out of memory).
int pp_adamw_cpu(const pp_adamw_variant *va, const pp_adamw_problem *pr, const double *theta0, double *theta,
                 double *m, double *v, double *c, pp_adamw_trace *trace, int threads, pp_error *err);

// The loops that run the element-parallel sources (synthetic, quadratic): the same arithmetic,
// the same bits (tests/test_adamw_lanes.c); the scalar loop is the oracle the vector one is
// tested against. Linear regression runs the scalar loop on both.
// The vector loop's code is the widest x86-64 level the CPU runs, or the one named (tests run
// each level against the others and the scalar oracle; where the CPU lacks it, the widest below).
typedef enum pp_adamw_path {
    PP_ADAMW_PATH_VECTOR = 0,        // groups of PP_ADAMW_LANES elements (cpu/adamw_lanes.h): the default
    PP_ADAMW_PATH_SCALAR,            // one element at a time: kernels/adamw_thread.h's body as written
    PP_ADAMW_PATH_VECTOR_AVX512,     // the vector loop's x86-64-v4 code
    PP_ADAMW_PATH_VECTOR_AVX2,       // its x86-64-v3 code
    PP_ADAMW_PATH_VECTOR_BASELINE    // its baseline x86-64 (SSE2) code
} pp_adamw_path;

// pp_adamw_cpu with the loop chosen (pp_adamw_cpu is this with PP_ADAMW_PATH_VECTOR).
int pp_adamw_cpu_path(const pp_adamw_variant *va, const pp_adamw_problem *pr, const double *theta0, double *theta,
                      double *m, double *v, double *c, pp_adamw_trace *trace, int threads, pp_adamw_path path,
                      pp_error *err);

// pp_adamw_cpu_path with range diagnostics (kernels/ranges.h, sites adamw.*) noted into R when
// set: θ cut into R->heads equal consecutive blocks (the last possibly shorter), one cell each;
// the element-parallel sources then run the scalar loop (the same bits as the vector one).
int pp_adamw_cpu_ranges(const pp_adamw_variant *va, const pp_adamw_problem *pr, const double *theta0, double *theta,
                        double *m, double *v, double *c, pp_adamw_trace *trace, int threads, pp_adamw_path path,
                        pp_ranges *R, pp_error *err);

// Frees a trace's arrays and zeroes it.
void pp_adamw_trace_free(pp_adamw_trace *t);

#endif
