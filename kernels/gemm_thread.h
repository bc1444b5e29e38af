// gemm_thread.h — the loop order of the batched GEMM, written once (PP_HD) for both devices: a
// run of `lanes` consecutive output columns j0 … j0+lanes−1 of one row, each column its own chain
//   acc = +0;  for l = 0, 1, …, k−1: acc = step(a_il, b_lj, acc);  c_ij = epilogue(acc)
// with the steps of kernels/gemm.h (pp_gemm_step_fp32: one fmaf; pp_gemm_step_storage: one
// rounding to F per addition). The lane loop is innermost and lanes never meet, so any lane count
// gives the same bits: the CPU emulation (kernels/cpu/gemm.c) runs tiles of columns and the
// compiler vectorises across them; the GPU's kernel1 (kernels/cuda/gemm_kernels.cu) runs one
// lane per thread. C11 and nvcc.
#ifndef PP_GEMM_THREAD_H
#define PP_GEMM_THREAD_H

#include <stdint.h>

#include "gemm.h"
#include "pp_hd.h"
#include "ranges.h"

// The lanes' accumulators: binary32 for accumulate fp32, values of F held in binary64 otherwise.
// The caller provides at least `lanes` of the one its accumulation uses.
typedef struct pp_gemm_lane_acc {
    float *f32;
    double *f64;
} pp_gemm_lane_acc;

// crow[j0 + j] for j < lanes: row `arow` (k values) times columns j0 … of b (k rows of n values,
// row-major), under accumulation accum, epilogue factor alpha_c in the compute type.
// order_seed: 0 for the documented order l = 0 … k−1, else the MMA chunks' admissible order
// (kernels/gemm.h "Order band"). The chunk starting at step l0 is walked as l0 + (a·r + c) mod 16,
// r = 0 … 15; (a, c) = (1, 0), the identity, at seed 0 and for a last partial chunk.
// exact: the exact sites (kernels/gemm.h "Exact sites"); 0 on the GPU and in every nominal run.
PP_HD static inline void pp_gemm_chunk_perm(uint64_t order_seed, int64_t k, int64_t l0, int64_t *a, int64_t *c)
{
    *a = 1, *c = 0;
    if (order_seed != 0 && l0 + PP_GEMM_MMA_CHUNK <= k)
        pp_gemm_order_chunk(order_seed, l0 / PP_GEMM_MMA_CHUNK, a, c);
}

PP_HD static inline int64_t pp_gemm_perm_step(int64_t q, int64_t a, int64_t c)
{
    int64_t r = q % PP_GEMM_MMA_CHUNK;
    return q - r + (a * r + c) % PP_GEMM_MMA_CHUNK;
}

// The reduction index that step q of a run reads.
PP_HD static inline int64_t pp_gemm_order_l(uint64_t order_seed, int64_t k, int64_t q)
{
    int64_t a, c;
    pp_gemm_chunk_perm(order_seed, k, q - q % PP_GEMM_MMA_CHUNK, &a, &c);
    return pp_gemm_perm_step(q, a, c);
}

// The one loop order over the lanes' accumulators s (type T, from zero): q = 0 … k−1 in the
// chunks' order, each lane's step s_j = STEP(a_il, b_lj, s_j) with a_il, b_lj converted to T
// (exact: values of F). Written once for pp_gemm_row_run's three arithmetics (fp32 FMA, F per
// addition, the exact sites' binary64), which differ by design; the lane loop stays innermost so
// the CPU compiler vectorises across it.
#define PP_GEMM_LANE_CHAINS(T, s, STEP)                                                           \
    do {                                                                                          \
        for (int64_t j = 0; j < lanes; j++)                                                       \
            s[j] = (T)0;                                                                          \
        int64_t pa = 1, pc = 0; /* the chunk's permutation, drawn once per chunk */               \
        for (int64_t q = 0; q < k; q++) {                                                         \
            if (q % PP_GEMM_MMA_CHUNK == 0)                                                       \
                pp_gemm_chunk_perm(order_seed, k, q, &pa, &pc);                                   \
            int64_t l = pp_gemm_perm_step(q, pa, pc);                                             \
            T ail = (T)arow[l];                                                                   \
            const double *brow = b + l * n + j0;                                                  \
            for (int64_t j = 0; j < lanes; j++)                                                   \
                s[j] = STEP(ail, (T)brow[j], s[j]);                                               \
        }                                                                                         \
    } while (0)

PP_HD static inline void pp_gemm_row_run(pp_format_id f, pp_gemm_accum accum, double alpha_c, int64_t n,
                                         int64_t k, const double *arow, const double *b, int64_t j0,
                                         int64_t lanes, double *crow, pp_gemm_lane_acc acc, uint64_t order_seed,
                                         pp_site_mask exact)
{
    pp_site_mask wide = PP_SITE_BIT(PP_SITE_GEMM_ACCUM) | PP_SITE_BIT(PP_SITE_GEMM_QUANT_A) |
                        PP_SITE_BIT(PP_SITE_GEMM_QUANT_B);
    if (exact & wide) {  // kernels/gemm.h "Exact sites": binary64 accumulators or operands
        double *s = acc.f64;
#define PP_GEMM_STEP_X_(a, b, c) pp_gemm_step_x(exact, f, accum, a, b, c)
        PP_GEMM_LANE_CHAINS(double, s, PP_GEMM_STEP_X_);
#undef PP_GEMM_STEP_X_
        for (int64_t j = 0; j < lanes; j++)
            crow[j0 + j] = accum == PP_GEMM_ACC_FP32 ? pp_gemm_epilogue_fp32_x(exact, f, alpha_c, s[j])
                                                     : pp_gemm_epilogue_storage_x(exact, f, alpha_c, s[j]);
    } else if (accum == PP_GEMM_ACC_FP32) {
        float *s = acc.f32;
        PP_GEMM_LANE_CHAINS(float, s, pp_gemm_step_fp32);
        for (int64_t j = 0; j < lanes; j++)
            crow[j0 + j] = pp_gemm_epilogue_fp32_x(exact, f, alpha_c, (double)s[j]);
    } else {
        double *s = acc.f64;
#define PP_GEMM_STEP_F_(a, b, c) pp_gemm_step_storage(f, a, b, c)
        PP_GEMM_LANE_CHAINS(double, s, PP_GEMM_STEP_F_);
#undef PP_GEMM_STEP_F_
        for (int64_t j = 0; j < lanes; j++)
            crow[j0 + j] = pp_gemm_epilogue_storage_x(exact, f, alpha_c, s[j]);
    }
}

// Range diagnostics (kernels/ranges.h) of a run pp_gemm_row_run just computed, from its lanes'
// final accumulators acc and outputs crow[j0 …]: the sites accum (each chain's end; an Inf there
// is an overflow inside the chain when every operand was finite), scale (RN_32(α_c·acc), fp32
// accumulation only) and c. Reads only; R NULL: nothing.
PP_HD static inline void pp_gemm_row_notes(pp_ranges *R, pp_format_id f, pp_gemm_accum accum, double alpha_c,
                                           int64_t j0, int64_t lanes, pp_gemm_lane_acc acc, const double *crow,
                                           int operands_finite)
{
    for (int64_t j = 0; R && j < lanes; j++) {
        if (accum == PP_GEMM_ACC_FP32) {
            double t = pp_round(PP_FMT_FP32, alpha_c * (double)acc.f32[j], PP_RND_NE, 0);
            pp_range_note_chain(R, PP_SITE_GEMM_ACCUM, 0, PP_FMT_FP32, acc.f32[j], operands_finite);
            pp_range_note(R, PP_SITE_GEMM_SCALE, 0, PP_FMT_FP32, alpha_c * (double)acc.f32[j], t);
            pp_range_note(R, PP_SITE_GEMM_C, 0, f, t, crow[j0 + j]);
        } else {
            pp_range_note_chain(R, PP_SITE_GEMM_ACCUM, 0, f, acc.f64[j], operands_finite);
            pp_range_note(R, PP_SITE_GEMM_C, 0, f, alpha_c * acc.f64[j], crow[j0 + j]);
        }
    }
}

#endif
