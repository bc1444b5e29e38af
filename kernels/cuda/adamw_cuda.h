// adamw_cuda.h — host launcher of the AdamW run on the GPU: our kernels, running the per-thread
// bodies of kernels/adamw_thread.h (the CPU emulation's own statements) in the decomposition
// below, so the result equals pp_adamw_cpu bit for bit. C linkage; defined in adamw_kernels.cu.
#ifndef PP_ADAMW_CUDA_H
#define PP_ADAMW_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "adamw.h"
#include "adamw_problem.h"
#include "ranges.h"

#ifdef __cplusplus
extern "C" {
#endif

// Runs pr->steps steps of variant va from θ₀ on the GPU, bit for bit as pp_adamw_cpu.
//
// Launch decomposition (every sum in kernels/adamw_thread.h's documented order):
// - synthetic and quadratic: pp_adamw_elem_kernel1, one thread per element running
//   pp_adamw_elem_thread over a chunk of loss indices t0..t1 (its state kept in device memory
//   between chunks; θ snapshots written as the CPU writes them). Without a loss (synthetic, or
//   no trace) one chunk covers 0..T. With the quadratic loss traced, each thread stores its
//   per-step terms in a [chunk][n] binary64 buffer (at most 256 MiB, or chunk_steps loss indices
//   when chunk_steps > 0), then pp_adamw_loss_block_kernel1 (one thread per (t, block of
//   PP_ADAMW_LOSS_BLOCK elements)) sums each block in element order, and
//   pp_adamw_loss_total_kernel1 (one thread per t) sums the blocks in order: the CPU's partial
//   sums and their total, operand for operand.
// - linear regression: per step, pp_adamw_linreg_row_kernel1 (one thread per data row: the
//   fp32 FMA chain and the binary64 residual), pp_adamw_linreg_loss_kernel1 (one thread: the
//   rows' squared residuals in row order; only when traced), pp_adamw_linreg_update_kernel1 (one
//   thread per parameter: the FMA chain over rows in order, the gradient, the element step).
// The per-step scalars and the linear-regression data are computed on the host by the same
// functions the CPU emulation calls (kernels/adamw_problem.h) and copied to the device.
//
// @param [in]  va, pr, theta0   as pp_adamw_cpu (host memory)
// @param [out] theta, m, v, c   n values each after step T, host memory (c may be NULL; zero
//                               without Kahan)
// @param [out] trace            as pp_adamw_cpu (may be NULL; its snap and loss are allocated
//                               here with malloc/calloc and freed with free, as
//                               pp_adamw_trace_free does)
// @param [in]  chunk_steps      0 for the default chunking; > 0 caps the loss indices per chunk
//                               (tests exercise the chunking with it; the bits do not depend on it)
// @param [out] errbuf           errlen bytes for a one-line message on failure (may be NULL)
// Returns 0; 2 for a bad variant, problem or θ₀ (pp_adamw_check's message); 3 when a CUDA call
// or a host allocation fails (the message names the call, file and line).
int pp_adamw_cuda(const pp_adamw_variant *va, const pp_adamw_problem *pr, const double *theta0, double *theta,
                  double *m, double *v, double *c, pp_adamw_trace *trace, int chunk_steps, char *errbuf,
                  size_t errlen);
// pp_adamw_cuda with range diagnostics (kernels/ranges.h; R NULL: none, as pp_adamw_cuda): every
// element's step notes its sites (pp_adamw_step_notes, from the element and update kernels) into
// one device accumulator (atomics), cell i / ⌈n / R->heads⌉ (θ in R->heads equal consecutive
// blocks, as pp_adamw_cpu_ranges), merged into R at the end. Every counter equals the CPU
// emulation's; the outputs are the same bits as without R.
int pp_adamw_cuda_ranges(const pp_adamw_variant *va, const pp_adamw_problem *pr, const double *theta0, double *theta,
                         double *m, double *v, double *c, pp_adamw_trace *trace, int chunk_steps, pp_ranges *R,
                         char *errbuf, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
