// exact_sites.h — the exact-site mask of `precprobe explain` (issue 18): which rounding sites of a
// run are made exact. C11 and nvcc (PP_HD). The sites and their names are kernels/sites.h's.
//
// A rounding site is one place of an op's arithmetic where a value is rounded to a reduced format
// (a store to bf16, an fp16 accumulation step, the binary32 epilogue). Bit s of a mask set means
// site s (the op's id in kernels/sites.h) does not round: the value stays what it was before the
// rounding, held in binary64. What "before the rounding" is, per site, is written beside each
// site in the op's header (kernels/gemm.h, adamw.h, attention.h "Exact sites"). AdamW's state
// sites (θ, m, v, comp) carry their state in binary64 from step to step (kernels/adamw_exact.h);
// attention's stores whose exact value is finer than binary32 (out, lse, dq/dk/dv, the CP partials,
// merges and accumulators) keep it in binary64 shadow buffers that its readers read
// (kernels/attention.h "Exact sites"), the others the binary32 value the kernel computed.
//
// Why a mask through the existing kernels and not a second model: with mask 0 every site below
// calls pp_round exactly as the kernel did before, so the explain path with nothing exact is the
// emulation itself, bit for bit (tested per op in tests/test_explain_*.c), and there is still one
// definition of each arithmetic. The mask is part of the variant struct the kernels already
// receive (like order_seed), set by the op row from pp_op_params.exact_sites; the CUDA launchers
// pass 0 (explain runs on the CPU emulation only).
#ifndef PP_EXACT_SITES_H
#define PP_EXACT_SITES_H

#include <stdint.h>

#include "format.h"
#include "pp_hd.h"

// Bit s: site s exact. 64 sites per op at most (kernels/sites.h has fewer than 32 per op).
typedef uint64_t pp_site_mask;

#define PP_SITE_BIT(s) ((pp_site_mask)1 << (s))

// Whether site s is exact under mask m.
PP_HD static inline int pp_site_exact(pp_site_mask m, int s)
{
    return (int)((m >> s) & 1u);
}

// The one function a rounding site goes through: RN_f(x) (pp_round, nearest-even), or x itself,
// unrounded, when site s is exact under m.
PP_HD static inline double pp_site_round(pp_site_mask m, int s, pp_format_id f, double x)
{
    return pp_site_exact(m, s) ? x : pp_round(f, x, PP_RND_NE, 0);
}

#endif
