// cpu/attention.h — the CPU emulation of precprobe's attention variants (unfused, flash, the
// context-parallel ring), forward and backward, bit-identical for any thread count: the launch
// plan of kernels/attention_plan.h (the GPU's, the one statement of the order) run on the CPU
// device of cpu/attention_device.h.
#ifndef PP_CPU_ATTENTION_H
#define PP_CPU_ATTENTION_H

#include <stdint.h>

#include "../attention.h"
#include "../ranges.h"
#include "error.h"
#include "isa.h"

// Runs variant v (kernels/attention.h gives every rounding and reduction order).
// @param [in]  v, dims   the variant and the shapes; h a multiple of h_kv; d ≥ 1.
// @param [in]  backward  0: forward only (dout, dq, dk, dv may be NULL); 1: also the gradients.
// @param [in]  q, dout   [b, s_q, h, d]; k, vv [b, s_kv, h_kv, d]: values of v->format as binary64.
// @param [out] out       [b, s_q, h, d] values of v->format; lse [b, h, s_q] binary32 values
//                        (−Inf for a row that sees no key; see attention.h for the unfused lse).
// @param [out] dq        [b, s_q, h, d]; dk, dv [b, s_kv, h_kv, d]: values of v->format.
// @param [in]  threads   worker threads (< 1 means 1); results do not depend on it.
// Context parallel (cp_world > 1) needs s_q = s_kv, divisible by 2·cp_world.
// Returns PP_OK, PP_ERR_INPUT (bad variant, combination or shape; one line in err) or
// PP_ERR_RUNTIME (out of memory).
int pp_attention_cpu(const pp_attn_variant *v, const pp_attn_dims *dims, int backward,
                     const double *q, const double *k, const double *vv, const double *dout,
                     double *out, double *lse, double *dq, double *dk, double *dv, int threads,
                     pp_error *err);

// Options for tests: force_cp runs the ring simulation even for cp_world = 1 (which must equal
// the plain kernel bit for bit); portable = 1 uses the plain-C fmaf lane step instead of the
// AVX2+FMA one (same bits: an FMA is one correct rounding either way).
typedef struct pp_attn_cpu_opts {
    int force_cp;
    int portable;
    // Range diagnostics (kernels/ranges.h): when set, every site's notes are added to it (its
    // heads = h); the outputs are the same bits either way.
    pp_ranges *ranges;
    // The vector lane step's x86-64 level (base/isa.h; 0 = PP_ISA_AUTO: the widest the CPU runs):
    // tests name AVX2 and baseline to run them on an AVX-512 machine. The same bits at every level.
    pp_isa isa;
} pp_attn_cpu_opts;

int pp_attention_cpu_opts(const pp_attn_variant *v, const pp_attn_dims *dims, int backward,
                          const double *q, const double *k, const double *vv, const double *dout,
                          double *out, double *lse, double *dq, double *dk, double *dv, int threads,
                          const pp_attn_cpu_opts *opts, pp_error *err);

#endif
