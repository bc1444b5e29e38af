// sites.h — the registry of ROUNDING SITES: every intermediate that an emulated variant stores or
// computes in a format of its own, named once for all of precprobe. The range diagnostics
// (kernels/ranges.h: amax, overflow, underflow, … per site and head) and the attribution
// (`precprobe explain`: each site made exact in turn) use these ids and names; the names are
// stable once committed (reports, baselines and case gates spell them), new sites are appended
// per op. Each op's header (kernels/attention.h, gemm.h, adamw.h) documents its sites too.
// C11 and nvcc: the enum is usable in PP_HD code; the table (pp_site_get) is host only.
#ifndef PP_SITES_H
#define PP_SITES_H

#include <string.h>

// One id per site, grouped by op; PP_SITE_COUNT ends the list. Never renumber: append (an id is
// also an index into per-site arrays of a run, never stored in a report: reports use the name).
typedef enum pp_site {
    // ---- attention (kernels/attention.h; loops in kernels/attention_threads.h)
    PP_SITE_ATTN_SCORES = 0,   // S after the Q·Kᵀ GEMM
    PP_SITE_ATTN_SCALED_SCORES,// S after PB-Relax's shift and the layer-scaling multiply
    PP_SITE_ATTN_SOFTMAX_IN,   // the exponent's argument
    PP_SITE_ATTN_P,            // P as stored (fed to P·V)
    PP_SITE_ATTN_ROW_MAX,      // the row max m
    PP_SITE_ATTN_ROW_SUM,      // the row sum of the exponentials
    PP_SITE_ATTN_OUT_PARTIAL,  // a CP ring step's partial output
    PP_SITE_ATTN_LSE,          // each block's (CP: each step's) lse
    PP_SITE_ATTN_CP_LSE_MERGE, // the running merged lse
    PP_SITE_ATTN_CP_OUT_MERGE, // the out merge's accumulator
    PP_SITE_ATTN_OUT,          // the final out store
    PP_SITE_ATTN_D,            // D = rowsum(dO∘O) (flash) / Σ dP·P (unfused)
    PP_SITE_ATTN_DP,           // dP
    PP_SITE_ATTN_DS,           // dS as stored
    PP_SITE_ATTN_DQ,           // a block's dq' (the dq partial)
    PP_SITE_ATTN_DK,           // a block's dk' of one q head
    PP_SITE_ATTN_DV,           // a block's dv of one q head
    PP_SITE_ATTN_CP_DQ_ACC,    // the CP dq accumulator
    PP_SITE_ATTN_CP_DKV_ACC,   // the CP dk and dv accumulators
    // ---- gemm (kernels/gemm.h; loops in kernels/gemm_thread.h, kernels/cpu/gemm_scaled.c)
    PP_SITE_GEMM_QUANT_A,      // A as the GEMM reads it (prescaled or quantised)
    PP_SITE_GEMM_QUANT_B,      // B likewise
    PP_SITE_GEMM_BLOCK_SCALE_A,// A's block scales (scaling = tensor-current, mx, nvfp4)
    PP_SITE_GEMM_BLOCK_SCALE_B,// B's
    PP_SITE_GEMM_ACCUM,        // the products' accumulator at the end of each chain
    PP_SITE_GEMM_SCALE,        // the post-scaled accumulator before the C store
    PP_SITE_GEMM_C,            // C as stored
    // ---- adamw (kernels/adamw.h; loops in kernels/adamw_thread.h, kernels/cpu/adamw*.c)
    PP_SITE_ADAMW_G,           // the gradient as stored
    PP_SITE_ADAMW_M,           // the momentum store
    PP_SITE_ADAMW_V,           // the variance store
    PP_SITE_ADAMW_DENOM,       // √v/dc + ε as stored
    PP_SITE_ADAMW_UPDATE,      // the addcdiv's increment to θ (or to c with Kahan)
    PP_SITE_ADAMW_THETA,       // the θ store
    PP_SITE_ADAMW_COMP,        // the Kahan compensation store
    // ---- attention's fp8 quantisation (kernels/attention.h "FP8 scaling schemes"; appended)
    PP_SITE_ATTN_QUANT_Q,      // q as the FP8 MMAs read it (e4m3 or e2m1 elements)
    PP_SITE_ATTN_QUANT_K,      // k likewise
    PP_SITE_ATTN_QUANT_V,      // v likewise
    PP_SITE_ATTN_BLOCK_SCALE_Q,// q's scales (per tensor, or per block of d)
    PP_SITE_ATTN_BLOCK_SCALE_K,// k's
    PP_SITE_ATTN_BLOCK_SCALE_V,// v's (blocks along the keys)
    PP_SITE_ATTN_BLOCK_SCALE_P,// P's block scales (mx, nvfp4; blocks along the keys)
    // ---- FA3 fp8's softmax scalars (kernels/attention.h "FP8 (fp8 = fa3)"; appended)
    PP_SITE_ATTN_SOFTMAX_SCALE,// σ' = RN_32(sl2·RN_32(X_q·X_k)), the exp2 scale with the descales
    PP_SITE_ATTN_ROW_INV,      // the epilogue's 1/l
    PP_SITE_ATTN_OUT_SCALE,    // the epilogue's scale s = (1/l)·X_v
    // ---- fp8 = te's exponential (kernels/attention.h "Exact sites", fp8 = te; appended)
    PP_SITE_ATTN_EXP,          // p = exp(x − m) as the binary32 exp returns it
    // ---- attention's GEMM accumulation chains (kernels/attention.h "Exact sites", chains; appended)
    PP_SITE_ATTN_PV_ACC,       // flash: the running P·V accumulator o (through the tiles' rescales)
    PP_SITE_ATTN_DQ_ACC,       // the backward's dq chain over keys (flash: the key blocks' partials too)
    PP_SITE_ATTN_DKV_ACC,      // the backward's dk and dv chains over queries
    // ---- fp8 = te's backward scales (kernels/attention.h "Exact sites", fp8 = te, backward; appended)
    PP_SITE_ATTN_QUANT_DO,     // dO as the backward's FP8 GEMMs read it (te_grad_format)
    PP_SITE_ATTN_BLOCK_SCALE_DO, // dO's descale X_dO
    PP_SITE_ATTN_BLOCK_SCALE_DS, // dS's scale_dP and descale X_dP
    PP_SITE_COUNT
} pp_site;

#define PP_SITE_ATTN_FIRST PP_SITE_ATTN_SCORES
#define PP_SITE_ATTN_END (PP_SITE_ATTN_CP_DKV_ACC + 1)
#define PP_SITE_GEMM_FIRST PP_SITE_GEMM_QUANT_A
#define PP_SITE_GEMM_END (PP_SITE_GEMM_C + 1)
#define PP_SITE_ADAMW_FIRST PP_SITE_ADAMW_G
#define PP_SITE_ADAMW_END (PP_SITE_ADAMW_COMP + 1)
#define PP_SITE_ATTN_FP8_FIRST PP_SITE_ATTN_QUANT_Q
#define PP_SITE_ATTN_FP8_END (PP_SITE_ATTN_EXP + 1)
#define PP_SITE_ATTN_CHAIN_FIRST PP_SITE_ATTN_PV_ACC
#define PP_SITE_ATTN_CHAIN_END (PP_SITE_ATTN_DKV_ACC + 1)
#define PP_SITE_ATTN_TE_BWD_FIRST PP_SITE_ATTN_QUANT_DO
#define PP_SITE_ATTN_TE_BWD_END (PP_SITE_ATTN_BLOCK_SCALE_DS + 1)

// What the per-head index of a site counts: attention's q heads, its kv heads (dk, dv
// accumulators), a GEMM's tensor (one cell), AdamW's parameter blocks.
typedef enum pp_site_axis {
    PP_SITE_AXIS_HEAD = 0,
    PP_SITE_AXIS_KV_HEAD,
    PP_SITE_AXIS_TENSOR,
    PP_SITE_AXIS_BLOCK
} pp_site_axis;

typedef struct pp_site_info {
    pp_site id;
    const char *op;      // the op row's name: "attention", "gemm", "adamw"
    const char *name;    // stable: report.h5 /variants/V/ranges/<name>, `explain`'s rows
    const char *what;    // one line: the quantity
    const char *format;  // the format it is stored or computed in, and which knob decides
    const char *where;   // where in the kernels it happens (file: function)
    pp_site_axis axis;
    const char *underflow;  // what the range diagnostics' underflow counter means here, in words
                            // (NULL: a non-zero value flushed to zero)
} pp_site_info;

// The site's row, or NULL for an id outside [0, PP_SITE_COUNT). Host only.
static inline const pp_site_info *pp_site_get(int id)
{
    static const pp_site_info table[PP_SITE_COUNT] = {
        {PP_SITE_ATTN_SCORES, "attention", "scores",
         "S after the Q·Kᵀ GEMM: unfused S = RN_F(RN_c(α_c·acc)) as stored; flash the raw fp32 dot s (never stored)",
         "format (F; unfused), fp32 (flash); the accumulator's by accumulate",
         "attention_threads.h: pp_attn_r_row_dots (unfused), pp_attn_t_flash_fwd (flash)", PP_SITE_AXIS_HEAD, NULL},
        {PP_SITE_ATTN_SCALED_SCORES, "attention", "scaled_scores",
         "the softmax's input x after PB-Relax's shift and the layer-scaling multiply (unfused; = S without either)",
         "F with softmax storage/naive when qk_layer_scaling > 1 or max_subtract pb-relax; fp32 with softmax fp32",
         "attention_threads.h: pp_attn_t_unf_softmax", PP_SITE_AXIS_HEAD, NULL},
        {PP_SITE_ATTN_SOFTMAX_IN, "attention", "softmax_in",
         "the exponent's argument: x − m (unfused; naive rounds it to F), fma(s, σ·log2e, −m·σ·log2e) (flash, base 2)",
         "fp32 (F with softmax naive)", "attention_threads.h: pp_attn_t_unf_softmax, pp_attn_t_flash_fwd",
         PP_SITE_AXIS_HEAD, NULL},
        {PP_SITE_ATTN_P, "attention", "p",
         "P as stored and fed to P·V (unfused RN_F(e/sum); flash forward RN_F(p); backward the recomputed P; "
         "fp8 te: P8 = RN_e4m3,sat(p ⊗ scale_s))",
         "format (F)",
         "attention_threads.h: pp_attn_t_unf_softmax, pp_attn_t_flash_fwd, pp_attn_t_flash_bwd_row",
         PP_SITE_AXIS_HEAD, NULL},
        {PP_SITE_ATTN_ROW_MAX, "attention", "row_max",
         "the row max m subtracted before exp (unfused: of x; flash: the raw running max after the last tile)",
         "fp32 compare of values of x's format", "attention_threads.h: pp_attn_t_unf_softmax, pp_attn_t_flash_fwd",
         PP_SITE_AXIS_HEAD, NULL},
        {PP_SITE_ATTN_ROW_SUM, "attention", "row_sum",
         "the row sum of exp (unfused: left to right; flash: the 4 partials' quad reduce)",
         "fp32 (F with softmax naive)", "attention_threads.h: pp_attn_t_unf_softmax; attention.h: pp_attn_flash_finish",
         PP_SITE_AXIS_HEAD, NULL},
        {PP_SITE_ATTN_OUT_PARTIAL, "attention", "out_partial",
         "a context-parallel ring step's partial output (plain attention has none: its block output is out; "
         "fp8 te: the running O, its P8·V8 tile chains, descales and corrections)",
         "format (F)", "attention_threads.h: pp_attn_r_unf_pv, pp_attn_t_flash_fwd (cp_world > 1)",
         PP_SITE_AXIS_HEAD, NULL},
        {PP_SITE_ATTN_LSE, "attention", "lse",
         "each block's lse (plain: the output lse; CP: each ring step's)", "fp32",
         "attention_threads.h: pp_attn_t_unf_softmax, pp_attn_t_flash_fwd", PP_SITE_AXIS_HEAD, NULL},
        {PP_SITE_ATTN_CP_LSE_MERGE, "attention", "cp_lse_merge",
         "the running lse after merging each ring step", "fp32 (cp_flavour te-2024: binary64, rounded to fp32)",
         "attention_threads.h: pp_attn_t_cp_lse", PP_SITE_AXIS_HEAD, NULL},
        {PP_SITE_ATTN_CP_OUT_MERGE, "attention", "cp_out_merge",
         "the out merge's accumulator after each step's corrected partial", "cp_accum",
         "attention_threads.h: pp_attn_r_cp_out", PP_SITE_AXIS_HEAD, NULL},
        {PP_SITE_ATTN_OUT, "attention", "out", "the final out store", "format (F)",
         "attention_threads.h: pp_attn_r_unf_pv, pp_attn_t_flash_fwd (plain), pp_attn_r_cp_out (CP)",
         PP_SITE_AXIS_HEAD, NULL},
        {PP_SITE_ATTN_D, "attention", "d",
         "D_i: flash the fp32 dot dO·O; unfused Σ dP·P (the softmax backward's row sum)",
         "fp32 (F with softmax naive)", "attention_threads.h: pp_attn_t_flash_bwd_row, pp_attn_t_unf_bwd_row",
         PP_SITE_AXIS_HEAD, NULL},
        {PP_SITE_ATTN_DP, "attention", "dp", "dP = dO·Vᵀ (unfused: RN_F(acc) as stored; flash: the fp32 dot)",
         "format (F; unfused), fp32 (flash)", "attention_threads.h: pp_attn_r_row_dots, pp_attn_t_flash_bwd_row",
         PP_SITE_AXIS_HEAD, NULL},
        {PP_SITE_ATTN_DS, "attention", "ds", "dS as stored for its GEMMs", "format (F)",
         "attention_threads.h: pp_attn_t_unf_bwd_row, pp_attn_t_flash_bwd_row", PP_SITE_AXIS_HEAD, NULL},
        {PP_SITE_ATTN_DQ, "attention", "dq", "a block's dq' (CP: each step's partial) as stored", "format (F)",
         "attention_threads.h: pp_attn_r_bwd_dq", PP_SITE_AXIS_HEAD, NULL},
        {PP_SITE_ATTN_DK, "attention", "dk", "a block's dk' of one q head (before the GQA sum) as stored",
         "format (F)", "attention_threads.h: pp_attn_dkv_keys", PP_SITE_AXIS_HEAD, NULL},
        {PP_SITE_ATTN_DV, "attention", "dv", "a block's dv of one q head (before the GQA sum) as stored",
         "format (F)", "attention_threads.h: pp_attn_dkv_keys", PP_SITE_AXIS_HEAD, NULL},
        {PP_SITE_ATTN_CP_DQ_ACC, "attention", "cp_dq_acc", "the CP dq accumulator after each ring step",
         "cp_grad_accum", "attention_threads.h: pp_attn_r_cp_dq", PP_SITE_AXIS_HEAD, NULL},
        {PP_SITE_ATTN_CP_DKV_ACC, "attention", "cp_dkv_acc",
         "the CP dk and dv accumulators after each hop (per kv head)", "cp_grad_accum",
         "attention_threads.h: pp_attn_r_cp_dkv", PP_SITE_AXIS_KV_HEAD, NULL},
        {PP_SITE_GEMM_QUANT_A, "gemm", "quant_a",
         "A as the GEMM reads it: prescaled RN_F(RN_32(s·a)) (scale pre, pre-a) or quantised (scaling ≠ none)",
         "format (F: fp16/bf16/fp32, or e4m3/e5m2/e2m1 with scaling)",
         "cpu/gemm.c: gemm_prescale_task; cpu/gemm_scaled.c: scaled_quantise", PP_SITE_AXIS_TENSOR, NULL},
        {PP_SITE_GEMM_QUANT_B, "gemm", "quant_b", "B likewise (prescaled with scale pre, or quantised)",
         "format (F)", "cpu/gemm.c: gemm_prescale_task; cpu/gemm_scaled.c: scaled_quantise",
         PP_SITE_AXIS_TENSOR, NULL},
        // explain makes nvfp4's E4M3 s exact (binary64, gemm.h "Exact sites"), and, for the
        // per-tensor scalings, the operand's binary32 scale s = RN_32(max_finite/amax) and its
        // X = RN_32(1/s) (both kept in binary64, X = 1/s): this site, not a new one, because its
        // row already means "the operand's scales" (X is what it notes); mx's 2^e rounds nothing
        // (a power of two chosen from the block amax), so explain does not list it there
        {PP_SITE_GEMM_BLOCK_SCALE_A, "gemm", "block_scale_a",
         "A's scales: tensor-current X, mx 2^e per block of 32, nvfp4 the E4M3 s per block of 16; "
         "`clamped` counts blocks at the scale's limits",
         "scaling (fp32 X; e8m0; e4m3)", "cpu/gemm_scaled.c: scaled_quantise", PP_SITE_AXIS_TENSOR, NULL},
        {PP_SITE_GEMM_BLOCK_SCALE_B, "gemm", "block_scale_b", "B's scales, as block_scale_a",
         "scaling (fp32 X; e8m0; e4m3)", "cpu/gemm_scaled.c: scaled_quantise", PP_SITE_AXIS_TENSOR, NULL},
        {PP_SITE_GEMM_ACCUM, "gemm", "accum",
         "the products' accumulator at the end of each output element's chain (scaled: the block-scaled sum)",
         "accumulate (fp32, or F with accumulate storage)",
         "gemm_thread.h: pp_gemm_row_run; cpu/gemm_scaled.c: scaled_task", PP_SITE_AXIS_TENSOR, NULL},
        {PP_SITE_GEMM_SCALE, "gemm", "scale",
         "the post-scaled accumulator RN_32(α_c·acc) before the store (fp32 accumulation; scaled: RN_32(d·acc), "
         "d = RN_32(g_a·g_b) included: its overflow counts here)",
         "fp32", "gemm.h: pp_gemm_epilogue_fp32; cpu/gemm_scaled.c: scaled_task", PP_SITE_AXIS_TENSOR, NULL},
        {PP_SITE_GEMM_C, "gemm", "c", "C as stored", "format (F; fp32 with scaling)",
         "gemm_thread.h: pp_gemm_row_run; cpu/gemm_scaled.c: scaled_task", PP_SITE_AXIS_TENSOR, NULL},
        {PP_SITE_ADAMW_G, "adamw", "g", "the gradient as stored", "param_format (P)",
         "adamw_thread.h: pp_adamw_src_grad, pp_adamw_linreg_update", PP_SITE_AXIS_BLOCK, NULL},
        {PP_SITE_ADAMW_M, "adamw", "m", "the momentum after the step", "momentum_format (M)",
         "adamw.h: pp_adamw_momentum", PP_SITE_AXIS_BLOCK, NULL},
        {PP_SITE_ADAMW_V, "adamw", "v", "the variance after the step", "variance_format (V)",
         "adamw.h: pp_adamw_variance", PP_SITE_AXIS_BLOCK, NULL},
        {PP_SITE_ADAMW_DENOM, "adamw", "denom", "the denominator √v/dc + ε as stored", "variance_format (V)",
         "adamw.h: pp_adamw_denom", PP_SITE_AXIS_BLOCK, NULL},
        {PP_SITE_ADAMW_UPDATE, "adamw", "update",
         "the addcdiv's increment x' − x to θ (to c with Kahan), exact in binary64, against θ's realised change",
         "fp32 (opmath)", "adamw.h: pp_adamw_addcdiv; adamw_thread.h: pp_adamw_step_notes", PP_SITE_AXIS_BLOCK,
         "loses non-zero increments in the θ store (θ did not move: a stall; with Kahan carried in c)"},
        {PP_SITE_ADAMW_THETA, "adamw", "theta", "the θ store (after the update; decay's store included)",
         "param_format (P; rounding stochastic or nearest)", "adamw.h: pp_adamw_elem_step", PP_SITE_AXIS_BLOCK, NULL},
        {PP_SITE_ADAMW_COMP, "adamw", "comp", "the Kahan compensation store (kahan only)",
         "compensation_format (C)", "adamw.h: pp_adamw_elem_step", PP_SITE_AXIS_BLOCK, NULL},
        {PP_SITE_ATTN_QUANT_Q, "attention", "quant_q",
         "q as FA3's FP8 MMAs read it: each element over its scale, rounded (fp8 = fa3; noted on the host)",
         "e4m3 (scaling nvfp4: e2m1)", "attention_fp8.h: pp_attn_fp8_quantise_tensor", PP_SITE_AXIS_HEAD, NULL},
        {PP_SITE_ATTN_QUANT_K, "attention", "quant_k", "k likewise (per kv head)", "e4m3 (scaling nvfp4: e2m1)",
         "attention_fp8.h: pp_attn_fp8_quantise_tensor", PP_SITE_AXIS_KV_HEAD, NULL},
        {PP_SITE_ATTN_QUANT_V, "attention", "quant_v", "v likewise (per kv head)", "e4m3 (scaling nvfp4: e2m1)",
         "attention_fp8.h: pp_attn_fp8_quantise_tensor", PP_SITE_AXIS_KV_HEAD, NULL},
        {PP_SITE_ATTN_BLOCK_SCALE_Q, "attention", "block_scale_q",
         "q's scales: per tensor the descale X (tensor-current, -delayed), mx 2^e per 32 along d, nvfp4 the E4M3 s "
         "per 16 along d; `clamped` counts blocks at the scale's limits",
         "scaling (fp32 X; e8m0; e4m3)", "attention_fp8.h: pp_attn_fp8_quantise_tensor", PP_SITE_AXIS_HEAD, NULL},
        {PP_SITE_ATTN_BLOCK_SCALE_K, "attention", "block_scale_k", "k's scales, as block_scale_q (per kv head)",
         "scaling (fp32 X; e8m0; e4m3)", "attention_fp8.h: pp_attn_fp8_quantise_tensor", PP_SITE_AXIS_KV_HEAD,
         NULL},
        {PP_SITE_ATTN_BLOCK_SCALE_V, "attention", "block_scale_v",
         "v's scales, as block_scale_q but blocks along the keys (per kv head)", "scaling (fp32 X; e8m0; e4m3)",
         "attention_fp8.h: pp_attn_fp8_quantise_tensor", PP_SITE_AXIS_KV_HEAD, NULL},
        {PP_SITE_ATTN_BLOCK_SCALE_P, "attention", "block_scale_p",
         "P's block scales (mx: 2^e per 32 keys; nvfp4: the E4M3 s per 16 keys over g_P; fp8 te: X_s = "
         "RN_32(1/scale_s)); `clamped` counts blocks at the scale's limits", "scaling (e8m0; e4m3)", "attention_threads.h: pp_attn_fp8_block_pv",
         PP_SITE_AXIS_HEAD, NULL},
        // FA3 fp8's scalars (explain only: no range notes); the other softmax scalars of its loop
        // (the max offset, the exp2 argument and correction, the row sums, the lse) are row_max,
        // softmax_in, row_sum and lse (kernels/attention.h "Exact sites")
        {PP_SITE_ATTN_SOFTMAX_SCALE, "attention", "softmax_scale",
         "FA3 fp8's exp2 scale with the descales folded in: σ' = RN_32(sl2·RN_32(X_q·X_k)) (fp8 te: σ = "
         "RN_32(X_q·X_k·α_32))", "fp32",
         "attention_plan.c: plan_body (pp_attn_fp8_sl2)", PP_SITE_AXIS_HEAD, NULL},
        {PP_SITE_ATTN_ROW_INV, "attention", "row_inv",
         "the flash epilogue's 1/l of the row sum (fp8 te: O ⊘ max(l, 1), two-pass p ⊘ l)", "fp32",
         "attention.h: pp_attn_flash_finish; attention_fp8.h: pp_attn_fp8_finish", PP_SITE_AXIS_HEAD, NULL},
        {PP_SITE_ATTN_OUT_SCALE, "attention", "out_scale",
         "FA3 fp8's epilogue scale s = (1/l)·X_v (fp8 te: O's scale_o = RN_32(448/amax_o) and X_o = RN_32(1/scale_o))",
         "fp32",
         "attention_fp8.h: pp_attn_fp8_finish", PP_SITE_AXIS_HEAD, NULL},
        // fp8 = te (explain only): its exponential's binary32 result, apart from P8's e4m3 store
        // (p) because te rounds both (FA3 fp8's exp is inside softmax_in: attention.h "Exact sites")
        {PP_SITE_ATTN_EXP, "attention", "exp", "fp8 te's p = exp(x − m) (base-2: 2^x) as a binary32 value",
         "fp32", "attention_te_fp8.h: pp_attn_te_row (pp_attn_te_exp_at)", PP_SITE_AXIS_HEAD, NULL},
        // the GEMM chains (explain only: no range notes of their own; scores, dp and d are the
        // chains of S, dP and D, attention.h "Exact sites")
        {PP_SITE_ATTN_PV_ACC, "attention", "pv_acc",
         "flash: the running P·V accumulator o_c = fma(P, v, o_c) across keys and tiles, rescaled by each "
         "tile's correction, before the epilogue; unfused: the P·V GEMM's chain before out's store",
         "fp32 (flash); the accumulator's by accumulate (unfused)",
         "attention_threads.h: pp_attn_t_flash_fwd, pp_attn_r_unf_pv", PP_SITE_AXIS_HEAD, NULL},
        {PP_SITE_ATTN_DQ_ACC, "attention", "dq_acc",
         "the backward's dq chain Σ_j dS·k' (flash: each key block's chain and their sum) before α and the store",
         "fp32 (F with accumulate storage)", "attention_threads.h: pp_attn_r_bwd_dq", PP_SITE_AXIS_HEAD, NULL},
        {PP_SITE_ATTN_DKV_ACC, "attention", "dkv_acc",
         "the backward's dk and dv chains Σ_i dS·q', Σ_i P·dO over the query rows before α and the store",
         "fp32 (F with accumulate storage)", "attention_threads.h: pp_attn_dkv_keys", PP_SITE_AXIS_HEAD, NULL},
        // fp8 = te's backward (kernels/attention_te_fp8_bwd_x.h): dO's quantisation and the two
        // per-tensor scales it adds; its P, D, dP, dS, chains and stores use the rows above (its
        // dkv_acc notes are per kv head: TE sums a GQA group in one chain)
        {PP_SITE_ATTN_QUANT_DO, "attention", "quant_do",
         "dO as fp8 te's backward GEMMs read it: RN_F,sat(RN_32(dO·s_dO)) (per q head)",
         "te_grad_format (e5m2, or e4m3)", "attention_te_bwd_run.c: pp_attn_te_quantise_dout", PP_SITE_AXIS_HEAD,
         NULL},
        {PP_SITE_ATTN_BLOCK_SCALE_DO, "attention", "block_scale_do",
         "dO's descale X_dO = RN_32(1/s_dO), s_dO = RN_32(max_F/amax_dO) (current; `clamped` at fp32's limits)",
         "fp32", "attention_te_bwd_run.c: pp_attn_te_quantise_dout", PP_SITE_AXIS_HEAD, NULL},
        {PP_SITE_ATTN_BLOCK_SCALE_DS, "attention", "block_scale_ds",
         "dS's descale X_dP = RN_32(1/scale_dP), scale_dP = RN_32(448/amax_dP) from dP's (te_ds_amax: dS's) amax "
         "or amax_history_dp", "fp32", "attention_te_bwd_run.c: pp_attn_te_bwd_run", PP_SITE_AXIS_HEAD, NULL},
    };
    return id >= 0 && id < PP_SITE_COUNT ? &table[id] : (const pp_site_info *)0;
}

// The site of op named name, or -1. Host only.
static inline int pp_site_find(const char *op, const char *name)
{
    for (int i = 0; i < PP_SITE_COUNT; i++)
        if (!strcmp(pp_site_get(i)->op, op) && !strcmp(pp_site_get(i)->name, name))
            return i;
    return -1;
}

#endif
