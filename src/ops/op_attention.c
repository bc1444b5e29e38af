// op_attention.c — the operation-table row of attention, forward and backward, with context
// parallelism (kernels/attention.h defines each variant's arithmetic, kernels/cpu/attention.c
// its loops, reference/attention_ref.c the truth).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention_check.h"
#include "attention_fp8.h"
#include "attention_ref.h"
#include "attention_te_bwd_exact.h"
#include "attention_te_exact.h"
#include "cpu/attention.h"
#include "cpu/attention_te_fp8.h"
#include "cpu/attention_te_fp8_bwd.h"
#ifdef PP_HAVE_CUDA
#include "cuda/attention_cuda.h"
#include "cuda/attention_te_bwd_cuda.h"
#include "cuda/attention_te_cuda.h"
#endif
#include "ops/attention_fp8_ranges.h"
#include "ops/attention_ref_quantised.h"
#include "ops/delayed_knobs.h"
#include "ops/engine_knob.h"
#include "ops/op.h"
#include "scaling.h"

enum { P_B, P_S, P_S_KV, P_H, P_H_KV, P_D, P_MASK, P_PASSES, P_SIGMA };
enum {
    K_FORMAT, K_KERNEL, K_BLOCK_M, K_BLOCK_N, K_ACCUMULATE, K_SCALE, K_QK_LAYER_SCALING, K_SOFTMAX,
    K_MAX_SUBTRACT, K_CP_WORLD, K_CP_ACCUM, K_CP_GRAD_ACCUM, K_ENGINE, K_ARCH, K_CP_FLAVOUR, K_FP8, K_SCALING,
    K_HIST_Q, K_HIST_K, K_HIST_V, K_AMAX_ALGO, K_MARGIN, K_MMA, K_MX_SCALE, K_TE_SOFTMAX, K_TE_EXP, K_TE_PV,
    K_TE_RESCALE, K_HIST_S, K_HIST_O, K_TE_GRAD_FORMAT, K_HIST_DP, K_TE_DQ, K_TE_DS_AMAX,
    K_HIST_DO, K_HIST_DQ, K_HIST_DK, K_HIST_DV
};
enum { O_OUT, O_LSE, O_DQ, O_DK, O_DV };

static const char *const masks[] = {"none", "causal", NULL};
static const char *const passes[] = {"fwd+bwd", "fwd", NULL};
static const pp_param_def params[] = {
    [P_B] = {"b", PP_PARAM_INT, 1, 1 << 16, 1, 0, "batch size", NULL},
    [P_S] = {"s", PP_PARAM_INT, 1, 1 << 20, 0, 1, "query sequence length", NULL},
    [P_S_KV] = {"s_kv", PP_PARAM_INT, 1, 1 << 20, 0, 0, "key/value sequence length (default s)", NULL},
    [P_H] = {"h", PP_PARAM_INT, 1, 1 << 12, 0, 1, "query heads", NULL},
    [P_H_KV] = {"h_kv", PP_PARAM_INT, 1, 1 << 12, 0, 0,
                "key/value heads (default h; fewer is GQA: query head i uses kv head i / (h / h_kv))", NULL},
    [P_D] = {"d", PP_PARAM_INT, 1, 1 << 12, 0, 1, "head dimension", NULL},
    [P_MASK] = {"mask", PP_PARAM_CHOICE, 0, 0, 0, 0,
                "causal: query i sees keys j <= i + s_kv - s (bottom-right aligned)", masks},
    [P_PASSES] = {"passes", PP_PARAM_CHOICE, 0, 0, 0, 0, "fwd: out and lse; fwd+bwd: also dq, dk, dv", passes},
    [P_SIGMA] = {"softmax_scale", PP_PARAM_FLOAT, 1e-30, 1e30, 0, 0,
                 "the softmax scale (default 1/sqrt(d), the exact real number)", NULL},
};

static const char *const formats[] = {"bf16", "fp16", "fp32", NULL};
static const char *const kernels[] = {"flash", "unfused", NULL};
static const char *const accumulates[] = {"fp32", "storage", NULL};
static const char *const scales[] = {"post", "pre", "pre-q", NULL};
static const char *const softmaxes[] = {"fp32", "storage", "naive", NULL};
static const char *const max_subtracts[] = {"row", "pb-relax", "none", NULL};
static const char *const cp_accums[] = {"flavour", "storage", "fp32", NULL};
static const char *const cp_flavours[] = {"te-main", "te-2024", "pr-821", NULL};
static const char *const archs[] = {"sm90", "sm80", "sm86", NULL};
static const char *const fp8s[] = {"none", "fa3", "te", NULL};
static const pp_knob_meaning fp8_ids[] = {
    {"none", PP_ATTN_FP8_NONE}, {"fa3", PP_ATTN_FP8_FA3}, {"te", PP_ATTN_FP8_TE}, {NULL, 0}};
// fp8 = te's unknowns (kernels/attention.h "FP8 (fp8 = te)")
static const char *const te_softmaxes[] = {"online", "two-pass", NULL};
static const pp_knob_meaning te_softmax_ids[] = {
    {"online", PP_ATTN_TE_ONLINE}, {"two-pass", PP_ATTN_TE_TWO_PASS}, {NULL, 0}};
static const char *const te_exps[] = {"base-e", "base-2", NULL};
static const pp_knob_meaning te_exp_ids[] = {{"base-e", PP_ATTN_TE_EXP}, {"base-2", PP_ATTN_TE_EXP2}, {NULL, 0}};
static const char *const te_pvs[] = {"per-tile", "chain", NULL};
static const pp_knob_meaning te_pv_ids[] = {{"per-tile", PP_ATTN_TE_PV_BLOCK}, {"chain", PP_ATTN_TE_PV_CHAIN}, {NULL, 0}};
// fp8 = te's backward (kernels/attention.h "FP8 (fp8 = te)", "Backward:")
static const char *const te_grad_formats[] = {"e5m2", "e4m3", NULL};
static const pp_knob_meaning te_grad_format_ids[] = {{"e5m2", 0}, {"e4m3", 1}, {NULL, 0}};
static const char *const te_dqs[] = {"per-tile", "chain", NULL};
static const pp_knob_meaning te_dq_ids[] = {{"per-tile", PP_ATTN_TE_DQ_BLOCK}, {"chain", PP_ATTN_TE_DQ_CHAIN}, {NULL, 0}};
static const char *const te_ds_amaxes[] = {"max-dp", "max-ds", NULL};
static const pp_knob_meaning te_ds_amax_ids[] = {{"max-dp", 0}, {"max-ds", 1}, {NULL, 0}};
static const char *const scalings[] = {"auto", "none", "tensor-current", "tensor-delayed", "mx", "nvfp4", NULL};
static const pp_knob_meaning scaling_ids[] = {
    {"auto", PP_ATTN_FP8_SCALING_AUTO}, {"none", PP_ATTN_FP8_SCALING_NONE},
    {"tensor-current", PP_ATTN_FP8_SCALING_TENSOR}, {"tensor-delayed", PP_ATTN_FP8_SCALING_DELAYED},
    {"mx", PP_ATTN_FP8_SCALING_MX}, {"nvfp4", PP_ATTN_FP8_SCALING_NVFP4}, {NULL, 0}};
static const char *const mmas[] = {"fp32-chain", "sm90-fp8", NULL};
static const pp_knob_meaning mma_ids[] = {
    {"fp32-chain", PP_ATTN_FP8_MMA_CHAIN}, {"sm90-fp8", PP_ATTN_FP8_MMA_SM90}, {NULL, 0}};
static const char *const mx_scales[] = {"ocp", "te", NULL};
static const pp_knob_meaning mx_scale_ids[] = {{"ocp", PP_MX_RULE_OCP}, {"te", PP_MX_RULE_TE}, {NULL, 0}};
static const pp_knob_meaning arch_ids[] = {
    {"sm90", PP_ATTN_ARCH_SM90}, {"sm80", PP_ATTN_ARCH_SM80}, {"sm86", PP_ATTN_ARCH_SM86}, {NULL, 0}};

// What each choice means to the kernels (kernels/attention.h), by name (op.h).
static const pp_knob_meaning kernel_ids[] = {{"flash", PP_ATTN_FLASH}, {"unfused", PP_ATTN_UNFUSED}, {NULL, 0}};
static const pp_knob_meaning accumulate_ids[] = {
    {"fp32", PP_ATTN_ACC_FP32}, {"storage", PP_ATTN_ACC_STORAGE}, {NULL, 0}};
static const pp_knob_meaning scale_ids[] = {
    {"post", PP_ATTN_SCALE_POST}, {"pre", PP_ATTN_SCALE_PRE}, {"pre-q", PP_ATTN_SCALE_PRE_Q}, {NULL, 0}};
static const pp_knob_meaning softmax_ids[] = {
    {"fp32", PP_ATTN_SOFTMAX_FP32}, {"storage", PP_ATTN_SOFTMAX_STORAGE}, {"naive", PP_ATTN_SOFTMAX_NAIVE}, {NULL, 0}};
static const pp_knob_meaning max_subtract_ids[] = {
    {"row", PP_ATTN_MAX_ROW}, {"pb-relax", PP_ATTN_MAX_PB_RELAX}, {"none", PP_ATTN_MAX_NONE}, {NULL, 0}};
// CP accumulation: in the storage format (the variant's format), or fp32.
// flavour: as cp_flavour's TransformerEngine does (storage, but fp32 for pr-821).
enum { CP_ACC_FLAVOUR, CP_ACC_STORAGE, CP_ACC_FP32 };
static const pp_knob_meaning cp_accum_ids[] = {
    {"flavour", CP_ACC_FLAVOUR}, {"storage", CP_ACC_STORAGE}, {"fp32", CP_ACC_FP32}, {NULL, 0}};
static const pp_knob_meaning cp_flavour_ids[] = {
    {"te-main", PP_ATTN_CP_TE_MAIN}, {"te-2024", PP_ATTN_CP_TE_2024}, {"pr-821", PP_ATTN_CP_PR_821}, {NULL, 0}};

static const pp_knob_def knobs[] = {
    [K_FORMAT] = {"format", formats, "bf16", "storage of q, k, v, dout, out, dq, dk, dv and every stored intermediate",
                  .meanings = pp_knob_formats},
    [K_KERNEL] = {"kernel", kernels, "flash",
                  "flash: FlashAttention-2 tiles with online softmax; unfused: Megatron-style, every intermediate "
                  "tensor materialised in its storage format",
                  .meanings = kernel_ids},
    [K_BLOCK_M] = {"block_m", NULL, "0",
                   "flash forward: query rows per tile (0: the arch's; it never changes a result: a tile a row "
                   "cannot see is a no-op)",
                   0, 4096},
    [K_BLOCK_N] = {"block_n", NULL, "0",
                   "flash forward: keys per tile (0: the arch's, e.g. 64 at d = 128 on sm80/sm90); it changes the "
                   "rounding",
                   0, 4096},
    [K_ACCUMULATE] = {"accumulate", accumulates, "fp32", "GEMM accumulation: fp32, or the storage format",
                      .meanings = accumulate_ids},
    [K_SCALE] = {"scale", scales, "post",
                 "post: 1/sqrt(d) applied to the GEMM result (baddbmm's alpha); pre: d^(-1/4) into Q and K, rounded, "
                 "before the GEMM (BLOOM-104B); pre-q: 1/sqrt(d) into Q",
                 .meanings = scale_ids},
    [K_QK_LAYER_SCALING] = {"qk_layer_scaling", NULL, "1",
                            "Megatron's apply_query_key_layer_scaling: scores divided by L in the GEMM's alpha, "
                            "multiplied back by L in the softmax",
                            1, 100000},
    [K_SOFTMAX] = {"softmax", softmaxes, "fp32",
                   "fp32: scores upcast, softmax in fp32 (softmax_in_fp32); storage: element-wise ops before the "
                   "softmax round to storage, softmax computes in fp32 internally; naive: every step rounded to "
                   "storage (no framework does this; an illustration)",
                   .meanings = softmax_ids},
    [K_MAX_SUBTRACT] = {"max_subtract", max_subtracts, "row",
                        "row: safe softmax; pb-relax: CogView's per-head max of |scores|; none",
                        .meanings = max_subtract_ids},
    [K_CP_WORLD] = {"cp_world", NULL, "1", "context-parallel ring size (1: off), simulated on one machine", 1, 1024},
    [K_CP_ACCUM] = {"cp_accum", cp_accums, "flavour",
                    "CP forward: accumulation of partial outputs (flavour: cp_flavour's; storage: TransformerEngine's, "
                    "before PR 821 and still today, the PR was never merged; fp32: as PR 821 proposed)",
                    .meanings = cp_accum_ids},
    [K_CP_GRAD_ACCUM] = {"cp_grad_accum", cp_accums, "flavour",
                         "CP backward: accumulation of dq, dk, dv (flavour: cp_flavour's; storage: TransformerEngine's, "
                         "then and now; fp32: as PR 821 proposed)",
                         .meanings = cp_accum_ids},
    // Last, so the knobs before it keep their indices and existing reports their order.
    [K_ENGINE] = {"engine", pp_engine_values, "ours",
                  "ours: precprobe's kernels (the CPU emulation's arithmetic; on cuda bit-identical to it); cublas: "
                  "the unfused kernel's GEMMs through cublasGemmStridedBatchedEx as torch's baddbmm/bmm and their "
                  "backward call it (cuda only; kernel unfused, cp_world 1; compute type 32F for accumulate fp32, "
                  "16F for fp16 with accumulate storage)",
                  .meanings = pp_engine_meanings},
    [K_ARCH] = {"arch", archs, "sm90",
                "flash: whose FlashAttention-2 launch templates pick the tiles (forward, and the backward's blocks "
                "that order dk/dv and dq): sm90 and sm80 128x64 forward, 64x128 backward at d = 128; sm86 (sm86/sm89) "
                "smaller",
                .meanings = arch_ids},
    [K_CP_FLAVOUR] = {"cp_flavour", cp_flavours, "te-main",
                      "CP: whose TransformerEngine ring merges: te-main (today: fp32 lse merge with log1p; out, dq, "
                      "dk, dv accumulated in the storage format), te-2024 (before PR 821: binary64 lse merge rounded "
                      "to fp32 once, second-half steps reading the binary64 view; storage accumulation), pr-821 (as "
                      "PR 821 proposed, never merged: fp32 lse merge, fp32 out and gradient buffers)",
                      .meanings = cp_flavour_ids},
    [K_FP8] = {"fp8", fp8s, "none",
               "none: q, k, v in the storage format; fa3: FlashAttention-3's FP8 forward (q, k, v quantised to "
               "e4m3 with per-tensor current scales, their descales in the softmax's exp2 scale, P converted to "
               "e4m3 with FA3's max offset 8 before P.V, v's descale in the epilogue, out in bf16; kernel flash, "
               "format bf16, scale post, max_subtract row, cp_world 1, passes fwd: FA3's FP8 has no backward); "
               "te: TransformerEngine's FP8 DPA forward (cuDNN's sdpa_fp8 graph as cudnn-frontend's reference "
               "applies its scales: S times descale_q.descale_k.attn_scale, P times scale_s into e4m3, P8.V8 times "
               "descale_s.descale_v, out stored in e4m3 with scale_o; the same knob limits, and passes fwd+bwd runs "
               "cuDNN's FP8 backward as cudnn-frontend's reference applies its scales: dO, dq, dk, dv in "
               "te_grad_format, dS scaled by scale_dP into e4m3)",
               .meanings = fp8_ids},
    // fp8's scaling (kernels/attention.h "FP8 scaling schemes"); after fp8, so earlier knobs keep
    // their indices. The delayed recipe as the gemm's (kernels/scaling.h cites TE's DelayedScaling).
    [K_SCALING] = {"scaling", scalings, "auto",
                   "fp8 fa3's scaling of q, k, v (and P): auto (tensor-current with fp8 fa3, none without); none: "
                   "cast as they are; tensor-current: per-tensor scale from this tensor's amax (FA3's descales); "
                   "tensor-delayed: from amax_history_q/_k/_v (TE's DelayedScaling); mx: e4m3 with e8m0 scales per 32 "
                   "(q, k along d; v and P along the keys); nvfp4: e2m1 with e4m3 scales per 16 and fp32 global "
                   "scales; every value but auto and none needs fp8 fa3 (fp8 te: per-tensor values only)",
                   .meanings = scaling_ids},
    // the delayed recipe's knobs (ops/delayed_knobs.h), as the gemm's
    [K_HIST_Q] = PP_DELAYED_HISTORY_KNOB("amax_history_q", "q"),
    [K_HIST_K] = PP_DELAYED_HISTORY_KNOB("amax_history_k", "k"),
    [K_HIST_V] = PP_DELAYED_HISTORY_KNOB("amax_history_v", "v"),
    [K_AMAX_ALGO] = PP_DELAYED_AMAX_ALGO_KNOB,
    [K_MARGIN] = PP_DELAYED_MARGIN_KNOB,
    [K_MMA] = {"mma", mmas, "fp32-chain",
               "fp8 fa3: the accumulation of S = q.k and P.V; fp32-chain: binary32 fma chains; sm90-fp8: Hopper's "
               "FP8 tensor cores as measured on an H200 (groups of 32, 13 fraction bits, truncation), never "
               "promoted, as FA3 accumulates in the wgmma fragments (kernels/attention.h); fp8 te: every FP8 GEMM "
               "of its forward and backward, promoted into binary32 every 128 as cuBLASLt: a bound on cuDNN's "
               "unknown accumulation (kernels/attention_te_fp8.h)", .meanings = mma_ids},
    // mx's E8M0 exponent rule, as the gemm's (kernels/scaling.h); only fp8 fa3 with scaling mx reads it.
    [K_MX_SCALE] = {"mx_scale", mx_scales, "ocp",
                    "fp8 fa3 with scaling mx: the block scales' exponent (q, k, v and P); ocp: floor(log2 amax) - 8 "
                    "(OCP MX v1.0); te: TransformerEngine's MXFP8 cast, amax / 448 rounded up to a power of two "
                    "(kernels/scaling.h)", .meanings = mx_scale_ids},
    // fp8 = te's unknowns inside cuDNN (kernels/attention.h "FP8 (fp8 = te)"); each default is
    // cudnn-frontend's reference; only fp8 te reads them.
    [K_TE_SOFTMAX] = {"te_softmax", te_softmaxes, "online",
                      "fp8 te: online (running max over key tiles, P unnormalised when scaled into e4m3, out divided "
                      "by the row sum at the end) or two-pass (max and sum first, P normalised before its scale)",
                      .meanings = te_softmax_ids},
    [K_TE_EXP] = {"te_exp", te_exps, "base-e",
                  "fp8 te: the softmax's exponential, e^x (base-e) or 2^x of log2e-scaled scores (base-2)",
                  .meanings = te_exp_ids},
    [K_TE_PV] = {"te_pv", te_pvs, "per-tile",
                 "fp8 te: P8.V8 per key tile from zero, descaled and added to the running out (per-tile), or one fp32 "
                 "accumulator through every tile, descaled once (chain)", .meanings = te_pv_ids},
    [K_TE_RESCALE] = {"te_rescale_threshold", NULL, "0",
                      "fp8 te online: the running max moves only when a tile's max exceeds it by more than this "
                      "(log2 units); P may then exceed 1 and is scaled by scale_s / 2^threshold",
                      0, 16},
    [K_HIST_S] = {"amax_history_s", NULL, "[]",
                  "fp8 te: P's amax at earlier steps, most recent first: scale_s from TE's delayed recipe (margin, "
                  "amax_compute_algo); empty: 448, the bound P <= 1", .list_max = PP_KNOB_LIST_MAX},
    [K_HIST_O] = {"amax_history_o", NULL, "[]",
                  "fp8 te: out's amax at earlier steps: scale_o from TE's delayed recipe; empty: current scaling "
                  "from this run's amax_o", .list_max = PP_KNOB_LIST_MAX},
    // fp8 = te's backward (kernels/attention.h "FP8 (fp8 = te)", "Backward:"); appended, so the
    // knobs before keep their indices
    [K_TE_GRAD_FORMAT] = {"te_grad_format", te_grad_formats, "e5m2",
                          "fp8 te backward: the FP8 format of dout, dq, dk, dv (e5m2: TE's default recipe, "
                          "DelayedScaling's fp8_format HYBRID; e4m3: Format.E4M3)", .meanings = te_grad_format_ids},
    [K_HIST_DP] = {"amax_history_dp", NULL, "[]",
                   "fp8 te backward: dP's amax at earlier steps: scale_dP (dS's scale into e4m3) from TE's delayed "
                   "recipe; empty: current scaling from this run's dP amax (cudnn-frontend's reference)",
                   .list_max = PP_KNOB_LIST_MAX},
    [K_TE_DQ] = {"te_dq", te_dqs, "per-tile",
                 "fp8 te backward: dS8.K8 per key tile of 128 from zero, descaled and added to the running dq "
                 "(per-tile, the reference), or one fp32 accumulator through every key, descaled once (chain)",
                 .meanings = te_dq_ids},
    [K_TE_DS_AMAX] = {"te_ds_amax", te_ds_amaxes, "max-dp",
                      "fp8 te backward: what current scale_dP is taken from: max |dP| over every key (max-dp, "
                      "cudnn-frontend's reference) or max |dS| over the visible keys (max-ds: dS then spans e4m3's "
                      "range)", .meanings = te_ds_amax_ids},
    // TE's delayed recipe for the backward's FP8 tensors besides dP (kernels/attention.h "FP8 (fp8 =
    // te)", "Backward:", where TE's meta slots are cited); appended, so the knobs before keep their indices
    [K_HIST_DO] = {"amax_history_do", NULL, "[]",
                   "fp8 te backward: dout's amax at earlier steps: dO's scale into te_grad_format from TE's delayed "
                   "recipe (amax_compute_algo, margin); empty: current scaling from this run's dout amax",
                   .list_max = PP_KNOB_LIST_MAX},
    [K_HIST_DQ] = {"amax_history_dq", NULL, "[]",
                   "fp8 te backward: dq's amax at earlier steps: its FP8 store's scale from TE's delayed recipe; "
                   "empty: current (TE keeps dq, dk, dv in one meta slot: give the three the same history to follow "
                   "it)", .list_max = PP_KNOB_LIST_MAX},
    [K_HIST_DK] = {"amax_history_dk", NULL, "[]",
                   "fp8 te backward: dk's amax at earlier steps: its FP8 store's scale from TE's delayed recipe; "
                   "empty: current", .list_max = PP_KNOB_LIST_MAX},
    [K_HIST_DV] = {"amax_history_dv", NULL, "[]",
                   "fp8 te backward: dv's amax at earlier steps: its FP8 store's scale from TE's delayed recipe; "
                   "empty: current", .list_max = PP_KNOB_LIST_MAX},
};
static const char *const inputs[] = {"q", "k", "v", "dout"};
static const char *const outputs[] = {"out", "lse", "dq", "dk", "dv"};
// the axes of each, as letters (layout = ... in a case orders them as a file holds them)
static const char *const input_layouts[] = {"bshd", "bshd", "bshd", "bshd"};
static const char *const output_layouts[] = {"bshd", "bhs", "bshd", "bshd", "bshd"};
static const char *const ref_methods[] = {"fast", "mpfr-plain", NULL};

static int64_t param(const pp_op_params *p, int i)
{
    if (i == P_S_KV && !p->given[P_S_KV])
        return (int64_t)p->v[P_S];
    if (i == P_H_KV && !p->given[P_H_KV])
        return (int64_t)p->v[P_H];
    return (int64_t)(p->given[i] ? p->v[i] : params[i].def);
}

static int backward(const pp_op_params *p)
{
    return param(p, P_PASSES) == 0;
}

static int check_params(const pp_op_params *p, char *msg, size_t n)
{
    int64_t h = param(p, P_H), h_kv = param(p, P_H_KV);
    if (h % h_kv) {
        snprintf(msg, n, "h = %lld is not a multiple of h_kv = %lld", (long long)h, (long long)h_kv);
        return -1;
    }
    double b = (double)param(p, P_B), s = (double)param(p, P_S), skv = (double)param(p, P_S_KV),
           d = (double)param(p, P_D);
    double elems = b * d * (3 * s * (double)h + 2 * skv * (double)h_kv) * 2;
    if (elems > 4e9) {
        snprintf(msg, n, "the tensors would hold %.3g elements; at most 4e9", elems);
        return -1;
    }
    return 0;
}

static void shape(const pp_op_params *p, int is_output, int i, int *ndim, int64_t *s)
{
    int64_t b = param(p, P_B), sq = param(p, P_S), skv = param(p, P_S_KV), h = param(p, P_H),
            hkv = param(p, P_H_KV), d = param(p, P_D);
    *ndim = 4;
    int kv = is_output ? (i == O_DK || i == O_DV) : (i == 1 || i == 2);
    if (is_output && i == O_LSE) {
        *ndim = 3;
        s[0] = b, s[1] = h, s[2] = sq;
        return;
    }
    s[0] = b, s[1] = kv ? skv : sq, s[2] = kv ? hkv : h, s[3] = d;
}

// A knob's value as the enum it stands for (by name: op.h).
static int id(const pp_op_knobs *k, int knob)
{
    return pp_knob_id(&knobs[knob], k->v[knob]);
}

// Our kernels have a CPU emulation; a vendor engine runs only on the GPU.
static int emulated(const pp_op_knobs *k)
{
    return id(k, K_ENGINE) == PP_ENGINE_OURS;
}

static pp_format_id format(const pp_op_knobs *k)
{
    return (pp_format_id)id(k, K_FORMAT);
}

static pp_format_id output_format(const pp_op_knobs *k, int i)
{
    return i == O_LSE ? PP_FMT_FP32 : format(k);
}

static int output_active(const pp_op_params *p, const pp_op_knobs *k, int i)
{
    (void)k;
    return i <= O_LSE || backward(p);
}

static void describe(const pp_op_params *p, char *buf, size_t n)
{
    char sigma[64] = "1/sqrt(d)";
    if (p->given[P_SIGMA])
        snprintf(sigma, sizeof sigma, "%.17g", p->v[P_SIGMA]);
    snprintf(buf, n, "attention q[%lld, %lld, %lld, %lld] k,v[%lld, %lld, %lld, %lld], mask %s, %s, softmax scale %s",
             (long long)param(p, P_B), (long long)param(p, P_S), (long long)param(p, P_H), (long long)param(p, P_D),
             (long long)param(p, P_B), (long long)param(p, P_S_KV), (long long)param(p, P_H_KV),
             (long long)param(p, P_D), masks[param(p, P_MASK)], passes[param(p, P_PASSES)], sigma);
}

static pp_attn_dims dims_of(const pp_op_params *p)
{
    pp_attn_dims d = {param(p, P_B), param(p, P_S), param(p, P_S_KV), param(p, P_H), param(p, P_H_KV),
                      param(p, P_D), param(p, P_MASK) == 1};
    return d;
}

static pp_attn_variant variant_of(const pp_op_params *p, const pp_op_knobs *k)
{
    pp_attn_variant v;
    memset(&v, 0, sizeof v);
    v.order_seed = p->order_seed;
    v.exact_sites = p->exact_sites;
    v.format = format(k);
    v.kernel = (pp_attn_kernel)id(k, K_KERNEL);
    v.block_m = k->v[K_BLOCK_M];
    v.block_n = k->v[K_BLOCK_N];
    v.arch = (pp_attn_arch)id(k, K_ARCH);
    v.accum = (pp_attn_accum)id(k, K_ACCUMULATE);
    v.scale = (pp_attn_scale)id(k, K_SCALE);
    v.qk_layer_scaling = k->v[K_QK_LAYER_SCALING];
    v.softmax = (pp_attn_softmax)id(k, K_SOFTMAX);
    v.max_subtract = (pp_attn_max)id(k, K_MAX_SUBTRACT);
    v.cp_world = k->v[K_CP_WORLD];
    v.cp_flavour = (pp_attn_cp_flavour)id(k, K_CP_FLAVOUR);
    int acc = id(k, K_CP_ACCUM), gacc = id(k, K_CP_GRAD_ACCUM), fl32 = v.cp_flavour == PP_ATTN_CP_PR_821;
    v.cp_accum = acc == CP_ACC_FP32 || (acc == CP_ACC_FLAVOUR && fl32) ? PP_FMT_FP32 : v.format;
    v.cp_grad_accum = gacc == CP_ACC_FP32 || (gacc == CP_ACC_FLAVOUR && fl32) ? PP_FMT_FP32 : v.format;
    v.sigma_given = p->given[P_SIGMA];
    v.sigma = p->v[P_SIGMA];
    v.engine = id(k, K_ENGINE) == PP_ENGINE_OURS ? PP_ATTN_ENGINE_OURS : PP_ATTN_ENGINE_CUBLAS;
    v.fp8 = (pp_attn_fp8)id(k, K_FP8);
    v.fp8_scaling = (pp_attn_fp8_scaling)id(k, K_SCALING);
    // tensor-delayed: TE's scale of each tensor from its history (kernels/scaling.h); 0 when the
    // history is empty (pp_attn_fp8_error refuses it)
    for (int t = 0; t < 3; t++)
        v.fp8_delayed_s[t] = k->v[K_HIST_Q + t] > 0
                               ? pp_delayed_scale(PP_FMT_E4M3,
                                                  pp_delayed_amax(k->list[K_HIST_Q + t], k->v[K_HIST_Q + t],
                                                                  (pp_amax_algo)id(k, K_AMAX_ALGO)),
                                                  k->v[K_MARGIN])
                               : 0.0;
    v.mma = (pp_attn_fp8_mma)id(k, K_MMA);
    v.mx_rule = (pp_mx_rule)id(k, K_MX_SCALE);
    v.te_softmax = (pp_attn_te_softmax)id(k, K_TE_SOFTMAX);
    v.te_exp = (pp_attn_te_exp)id(k, K_TE_EXP);
    v.te_pv = (pp_attn_te_pv)id(k, K_TE_PV);
    v.te_rescale = k->v[K_TE_RESCALE];
    // TE's recipe for P and O from their amax histories (0: the bound for P, current for O)
    pp_amax_algo algo = (pp_amax_algo)id(k, K_AMAX_ALGO);
    v.te_scale_s = k->v[K_HIST_S] > 0 ? pp_delayed_scale(PP_FMT_E4M3, pp_delayed_amax(k->list[K_HIST_S], k->v[K_HIST_S],
                                                                                       algo), k->v[K_MARGIN])
                                      : 0.0;
    v.te_scale_o = k->v[K_HIST_O] > 0 ? pp_delayed_scale(PP_FMT_E4M3, pp_delayed_amax(k->list[K_HIST_O], k->v[K_HIST_O],
                                                                                       algo), k->v[K_MARGIN])
                                      : 0.0;
    v.te_grad_e4m3 = id(k, K_TE_GRAD_FORMAT);
    v.te_scale_dp = k->v[K_HIST_DP] > 0 ? pp_delayed_scale(PP_FMT_E4M3, pp_delayed_amax(k->list[K_HIST_DP],
                                                                                         k->v[K_HIST_DP], algo),
                                                           k->v[K_MARGIN])
                                        : 0.0;
    v.te_dq = (pp_attn_te_dq)id(k, K_TE_DQ);
    v.te_ds_amax = id(k, K_TE_DS_AMAX);
    // dO and the gradient stores in te_grad_format, each from its history (0: current)
    pp_format_id gf = v.te_grad_e4m3 ? PP_FMT_E4M3 : PP_FMT_E5M2;
    double *grad_scales[4] = {&v.te_scale_do, &v.te_scale_dq, &v.te_scale_dk, &v.te_scale_dv};
    for (int t = 0; t < 4; t++)
        *grad_scales[t] = k->v[K_HIST_DO + t] > 0 ? pp_delayed_scale(gf, pp_delayed_amax(k->list[K_HIST_DO + t],
                                                                                          k->v[K_HIST_DO + t], algo),
                                                                      k->v[K_MARGIN])
                                                  : 0.0;
    return v;
}

// fp8 = "te" stores out (and dq, dk, dv) in FP8 and reports X·code, the value the FP8 tensor stands
// for (kernels/attention.h "FP8 (fp8 = te)"): 4 significant bits times a binary32 descale, exact in
// binary64 and not, in general, a value of the case's format, so report.h5 keeps them as binary64.
static pp_format_id saved_format(const pp_op_params *p, const pp_op_knobs *k, int i)
{
    return i != O_LSE && variant_of(p, k).fp8 == PP_ATTN_FP8_TE ? PP_FMT_FP64 : output_format(k, i);
}

// Knob combinations the kernels cannot run (flash with Megatron-style knobs, a ring that does
// not divide the sequence, engine cublas with kernel flash, context parallelism or bf16 storage
// accumulation, fp8 fa3 outside FA3's FP8 forward), found when the case is read rather than after the reference is computed: the
// kernels' own check (kernels/attention_check.h) on the shapes with no data (batch 0).
static int check_knobs(const pp_op_params *p, const pp_op_knobs *k, char *msg, size_t n)
{
    pp_attn_variant v = variant_of(p, k);
    int te = v.fp8 == PP_ATTN_FP8_TE, delayed = v.fp8 != PP_ATTN_FP8_NONE && v.fp8_scaling == PP_ATTN_FP8_SCALING_DELAYED;
    int qkv_hist = k->v[K_HIST_Q] || k->v[K_HIST_K] || k->v[K_HIST_V],
        grad_hist = k->v[K_HIST_DO] || k->v[K_HIST_DQ] || k->v[K_HIST_DK] || k->v[K_HIST_DV],
        so_hist = k->v[K_HIST_S] || k->v[K_HIST_O] || k->v[K_HIST_DP] || grad_hist;
    int recipe_set = id(k, K_AMAX_ALGO) != PP_AMAX_MAX || k->v[K_MARGIN];
    if ((qkv_hist && !delayed) || (recipe_set && !delayed && !(te && so_hist))) {
        snprintf(msg, n, "amax_history_q, amax_history_k, amax_history_v, amax_compute_algo and margin are scaling = "
                 "\"tensor-delayed\"'s (with fp8 = \"fa3\" or \"te\"; amax_compute_algo and margin also fp8 = "
                 "\"te\"'s amax_history_s, _o, _dp, _do, _dq, _dk, _dv)");
        return -1;
    }
    int te_set = so_hist || id(k, K_TE_SOFTMAX) != PP_ATTN_TE_ONLINE || id(k, K_TE_EXP) != PP_ATTN_TE_EXP ||
                 id(k, K_TE_PV) != PP_ATTN_TE_PV_BLOCK || k->v[K_TE_RESCALE];
    int te_bwd_set = k->v[K_HIST_DP] || grad_hist || id(k, K_TE_GRAD_FORMAT) || id(k, K_TE_DQ) != PP_ATTN_TE_DQ_BLOCK ||
                     id(k, K_TE_DS_AMAX);
    if (te_bwd_set && (!te || !backward(p))) {
        snprintf(msg, n, "te_grad_format, amax_history_dp, _do, _dq, _dk, _dv, te_dq and te_ds_amax are fp8 = \"te\"'s "
                 "backward's (passes = \"fwd+bwd\")");
        return -1;
    }
    if (te_set && !te) {
        snprintf(msg, n, "te_softmax, te_exp, te_pv, te_rescale_threshold, amax_history_s and amax_history_o are "
                 "fp8 = \"te\"'s");
        return -1;
    }
    if (v.mx_rule != PP_MX_RULE_OCP && (v.fp8 == PP_ATTN_FP8_NONE || v.fp8_scaling != PP_ATTN_FP8_SCALING_MX)) {
        snprintf(msg, n, "mx_scale \"%s\" is scaling = \"mx\"'s (with fp8 = \"fa3\")",
                 knobs[K_MX_SCALE].values[k->v[K_MX_SCALE]]);
        return -1;
    }
    pp_attn_dims dm = dims_of(p);
    dm.b = 0;
    char e[256] = "";
    if (pp_attn_check(&v, &dm, backward(p), 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, e, sizeof e) == 0)
        return 0;
    snprintf(msg, n, "%s", e);
    return -1;
}

static const char knob_rules[] =
    "kernel flash takes accumulate fp32, softmax fp32, qk_layer_scaling 1 and max_subtract row or none; "
    "cp_world > 1 needs s = s_kv divisible by 2 x cp_world; engine cublas needs kernel unfused and cp_world 1, "
    "and with accumulate storage format fp16 or fp32; fp8 fa3 needs kernel flash, format bf16, scale post, "
    "max_subtract row, cp_world 1 and passes fwd; scaling other than auto/none needs fp8 fa3, tensor-delayed "
    "needs amax_history_q, _k, _v (and only it takes them, amax_compute_algo and margin), mx and nvfp4 a block_n "
    "that is a multiple of 32 or 16, and only mx takes mx_scale te; mma sm90-fp8 needs fp8 fa3 or te with per-tensor scaling "
    "(auto, tensor-current or tensor-delayed) and block_n a multiple of 32; fp8 te has fp8 fa3's limits, takes "
    "per-tensor scaling only, and alone takes te_softmax, te_exp, te_pv, te_rescale_threshold "
    "(online only), amax_history_s and amax_history_o; with passes fwd+bwd fp8 te alone takes te_grad_format, "
    "amax_history_dp, te_dq and te_ds_amax, and amax_history_do, _dq, _dk, _dv (TE's delayed scales of dout and "
    "the gradient stores)";

// fp8 = "te"'s range notes (kernels/attention_te_exact.h pp_attn_te_ranges_x: a second pass of its
// row in the kernel's arithmetic, taken only with --ranges; with passes fwd+bwd the forward's and the
// backward's, kernels/attention_te_bwd_exact.h pp_attn_te_bwd_ranges_x), after either device's run.
static int te_range_notes(const pp_attn_variant *v, const pp_attn_dims *d, int bwd, const pp_tensor *in, pp_ranges *R,
                          int threads, pp_error *err)
{
    char msg[256] = "";
    if (!R || v->fp8 != PP_ATTN_FP8_TE)
        return PP_OK;
    int rc = bwd ? pp_attn_te_bwd_ranges_x(v, d, in[0].data, in[1].data, in[2].data, in[3].data, threads, R, msg,
                                           sizeof msg)
                 : pp_attn_te_ranges_x(v, d, in[0].data, in[1].data, in[2].data, threads, R, msg, sizeof msg);
    return rc ? pp_fail(err, rc, "%s", msg) : PP_OK;
}

static int run_cpu(const pp_op_params *p, const pp_op_knobs *k, const pp_tensor *in, pp_tensor *out, int threads,
                   pp_error *err)
{
    pp_attn_variant v = variant_of(p, k);
    pp_attn_dims d = dims_of(p);
    int bwd = backward(p);
    pp_attn_cpu_opts o = {.ranges = p->ranges};
    int rc = v.fp8 == PP_ATTN_FP8_TE && bwd  // kernels/attention.h "FP8 (fp8 = te)", "Backward:"
                 ? pp_attn_te_fp8_bwd_cpu(&v, &d, in[0].data, in[1].data, in[2].data, in[3].data, out[O_OUT].data,
                                          out[O_LSE].data, out[O_DQ].data, out[O_DK].data, out[O_DV].data, threads,
                                          NULL, NULL, err)  // its notes: te_range_notes
             : v.fp8 == PP_ATTN_FP8_TE  // kernels/attention.h "FP8 (fp8 = te)": its own row loop
                 ? pp_attn_te_fp8_cpu(&v, &d, in[0].data, in[1].data, in[2].data, out[O_OUT].data, out[O_LSE].data,
                                      threads, NULL, err)
                 : pp_attention_cpu_opts(&v, &d, bwd, in[0].data, in[1].data, in[2].data, in[3].data,
                                         out[O_OUT].data, out[O_LSE].data, bwd ? out[O_DQ].data : NULL,
                                         bwd ? out[O_DK].data : NULL, bwd ? out[O_DV].data : NULL, threads, &o, err);
    if (!rc && pp_attn_fp8_range_notes(&v, &d, in[0].data, in[1].data, in[2].data, p->ranges))
        return pp_fail(err, PP_ERR_RUNTIME, "attention: out of memory for the fp8 range notes");
    return rc ? rc : te_range_notes(&v, &d, bwd, in, p->ranges, threads, err);
}

// Range diagnostics: one cell per q head (kernels/sites.h; cp_dkv_acc uses the first h_kv).
static int64_t range_heads(const pp_op_params *p)
{
    return dims_of(p).h;
}

#ifdef PP_HAVE_CUDA
// Our kernels (kernels/cuda/attention_kernels.cu): the CPU emulation's arithmetic, bit for bit;
// with engine cublas the unfused GEMMs are cuBLAS's (measured, not expected to match).
static int run_cuda(const pp_op_params *p, const pp_op_knobs *k, const pp_tensor *in, pp_tensor *out, pp_error *err)
{
    pp_attn_variant v = variant_of(p, k);
    if (v.exact_sites)
        return pp_fail(err, PP_ERR_RUNTIME, "attention on cuda: exact sites run on the CPU emulation only");
    pp_attn_dims d = dims_of(p);
    int bwd = backward(p);
    char msg[400] = "";
    if (v.fp8 == PP_ATTN_FP8_TE) {  // kernels/attention.h "FP8 (fp8 = te)": its own row kernel
        int trc = bwd ? pp_attn_te_fp8_bwd_cuda(&v, &d, in[0].data, in[1].data, in[2].data, in[3].data,
                                                out[O_OUT].data, out[O_LSE].data, out[O_DQ].data, out[O_DK].data,
                                                out[O_DV].data, NULL, NULL, msg, sizeof msg)
                      : pp_attn_te_fp8_cuda(&v, &d, in[0].data, in[1].data, in[2].data, out[O_OUT].data,
                                            out[O_LSE].data, NULL, msg, sizeof msg);
        if (trc)
            return pp_fail(err, trc, "attention on cuda: %s", msg);
        if (pp_attn_fp8_range_notes(&v, &d, in[0].data, in[1].data, in[2].data, p->ranges))
            return pp_fail(err, PP_ERR_RUNTIME, "attention: out of memory for the fp8 range notes");
        return te_range_notes(&v, &d, bwd, in, p->ranges, 0, err);
    }
    int rc = pp_attention_cuda_ranges(&v, &d, bwd, in[0].data, in[1].data, in[2].data, in[3].data,
                                      out[O_OUT].data, out[O_LSE].data, bwd ? out[O_DQ].data : NULL,
                                      bwd ? out[O_DK].data : NULL, bwd ? out[O_DV].data : NULL, p->ranges, msg,
                                      sizeof msg);
    if (rc)
        return pp_fail(err, rc, "attention on cuda: %s", msg);
    if (pp_attn_fp8_range_notes(&v, &d, in[0].data, in[1].data, in[2].data, p->ranges))
        return pp_fail(err, PP_ERR_RUNTIME, "attention: out of memory for the fp8 range notes");
    return PP_OK;
}
#endif

// The reference's options for p (shape, σ, method, threads, progress), backward off; shared by
// the reference and the quantised-inputs reference.
static pp_attn_ref_opts ref_opts_of(const pp_op_params *p, const pp_ref_ctx *ctx)
{
    pp_attn_dims d = dims_of(p);
    pp_attn_ref_opts o;
    memset(&o, 0, sizeof o);
    o.method = ctx->method && !strcmp(ctx->method, "mpfr-plain") ? PP_ATTN_REF_MPFR_PLAIN : PP_ATTN_REF_FAST;
    o.b = d.b, o.s_q = d.s_q, o.s_kv = d.s_kv, o.h = d.h, o.h_kv = d.h_kv, o.d = d.d, o.causal = d.causal;
    o.sigma_given = p->given[P_SIGMA];
    o.sigma = p->v[P_SIGMA];
    o.threads = ctx->threads;
    o.progress = ctx->progress;
    o.progress_ctx = ctx->progress_ctx;
    return o;
}

static const char *ref_method_name(const pp_attn_ref_opts *o)
{
    return o->method == PP_ATTN_REF_FAST ? "anchored dot + double-double exp (fast)" : "mpfr-plain-128";
}

// data[t] = out[t].data, or a binary64 scratch tensor (freed by the caller) where an output the
// reference always computes (t < n, skip[t] 0) is not wanted.
static int ref_outputs(const pp_op_params *p, pp_tensor *out, int n, const int *skip, pp_tensor *scratch,
                       double **data, pp_error *err)
{
    for (int t = 0; t < n; t++) {
        data[t] = out[t].data;
        if (data[t] || skip[t])
            continue;
        int ndim;
        int64_t sh[PP_MAX_DIMS];
        shape(p, 1, t, &ndim, sh);
        int rc = pp_tensor_alloc(&scratch[t], ndim, sh, PP_FMT_FP64, err);
        if (rc)
            return rc;
        data[t] = scratch[t].data;
    }
    return PP_OK;
}

static int reference(const pp_op_params *p, pp_format_id in_format, const pp_tensor *in, pp_tensor *out,
                     pp_reference_info *info, const pp_ref_ctx *ctx, pp_error *err)
{
    (void)in_format;
    pp_attn_ref_opts o = ref_opts_of(p, ctx);
    // The reference computes out and lse always, and dq, dk, dv together: an output no variant
    // has (an external variant that gave only out, or only dq) gets a scratch tensor, freed here.
    o.backward = backward(p) && (out[O_DQ].data || out[O_DK].data || out[O_DV].data);
    pp_tensor scratch[5];
    memset(scratch, 0, sizeof scratch);
    double *data[5];
    const int skip[5] = {0, 0, !o.backward, !o.backward, !o.backward};
    int rc = ref_outputs(p, out, 5, skip, scratch, data, err);
    pp_attn_ref_bounds b;
    if (!rc)
        rc = pp_attention_ref(&o, in[0].data, in[1].data, in[2].data, in[3].data, data[O_OUT], data[O_LSE],
                              data[O_DQ], data[O_DK], data[O_DV], &b, err);
    for (int t = 0; t < 5; t++)
        pp_tensor_free(&scratch[t]);
    if (rc)
        return rc;
    const double bound[] = {b.out, b.lse, b.dq, b.dk, b.dv};
    for (int t = 0; t < 5; t++) {
        snprintf(info[t].tensor, sizeof info[t].tensor, "%s", outputs[t]);
        snprintf(info[t].method, sizeof info[t].method, "%s", ref_method_name(&o));
        info[t].error_bound = bound[t];
    }
    return PP_OK;
}

// Second references (op.h): FA3's FP8 forward quantises its inputs to e4m3 itself, so it is also
// compared with the exact attention of those e4m3 values (out and lse; it has no backward; fp8 te
// with passes fwd+bwd also dq, dk, dv, dO quantised as its backward does).
static int second_reference(const pp_op_params *p, const pp_op_knobs *k)
{
    return variant_of(p, k).fp8 != PP_ATTN_FP8_NONE ? PP_REF2_QUANTISED : PP_REF2_NONE;
}

// fp8 = te's backward: the exact gradients of the quantised problem too (q, k, v as the forward
// quantises them, dO as the backward does: src/ops/attention_ref_quantised.h).
static int reference_quantised_bwd(const pp_op_params *p, const pp_attn_variant *v, const pp_attn_ref_opts *o,
                                   const pp_tensor *in, pp_tensor *out, pp_reference_info *info, pp_error *err)
{
    pp_tensor scratch[5];
    memset(scratch, 0, sizeof scratch);
    double *data[5];
    const int skip[5] = {0, 0, 0, 0, 0};
    int rc = ref_outputs(p, out, 5, skip, scratch, data, err);
    double bound[5] = {0, 0, 0, 0, 0};
    if (!rc)
        rc = pp_attention_ref_quantised_bwd(o, v, in[0].data, in[1].data, in[2].data, in[3].data, data[O_OUT],
                                            data[O_LSE], data[O_DQ], data[O_DK], data[O_DV], bound, err);
    for (int t = 0; t < 5; t++)
        pp_tensor_free(&scratch[t]);
    if (rc)
        return rc;
    for (int t = 0; t < 5; t++) {
        snprintf(info[t].tensor, sizeof info[t].tensor, "%s", outputs[t]);
        snprintf(info[t].method, sizeof info[t].method, "%s, on the quantised inputs", ref_method_name(o));
        info[t].error_bound = bound[t];
    }
    return PP_OK;
}

static int reference_quantised(const pp_op_params *p, const pp_op_knobs *k, const pp_tensor *in, pp_tensor *out,
                               pp_reference_info *info, const pp_ref_ctx *ctx, pp_error *err)
{
    pp_attn_variant v = variant_of(p, k);
    pp_attn_ref_opts o = ref_opts_of(p, ctx);
    if (v.fp8 == PP_ATTN_FP8_TE && backward(p) && (out[O_DQ].data || out[O_DK].data || out[O_DV].data))
        return reference_quantised_bwd(p, &v, &o, in, out, info, err);
    // both forward outputs are computed; one not wanted (data NULL) gets a scratch tensor
    pp_tensor scratch[2];
    memset(scratch, 0, sizeof scratch);
    double *data[2];
    const int skip[2] = {0, 0};
    int rc = ref_outputs(p, out, 2, skip, scratch, data, err);
    double bound[2] = {0, 0};
    if (!rc)
        rc = pp_attention_ref_quantised(&o, &v, in[0].data, in[1].data, in[2].data, data[O_OUT], data[O_LSE], &bound[0],
                                        &bound[1], err);
    for (int t = 0; t < 2; t++)
        pp_tensor_free(&scratch[t]);
    if (rc)
        return rc;
    for (int t = 0; t < 2; t++) {
        snprintf(info[t].tensor, sizeof info[t].tensor, "%s", outputs[t]);
        snprintf(info[t].method, sizeof info[t].method, "%s, on the quantised inputs", ref_method_name(&o));
        info[t].error_bound = bound[t];
    }
    return PP_OK;
}

// Position and head axes for the per-axis error charts: [b, s, h, d] tensors and lse [b, h, s].
static int axes(const pp_op_params *p, int output, int *pos_dim, int *head_dim)
{
    (void)p;
    *pos_dim = output == O_LSE ? 2 : 1;
    *head_dim = output == O_LSE ? 1 : 2;
    return 1;
}

// Context parallelism, as the generic code sees it: a te-cp-rank view takes the ring size as its
// world, and the HTML report charts the error per ring chunk (2·cp_world chunks; with load-balanced
// causal chunking rank r holds chunks r and 2·cp_world − 1 − r).
static int view_world(const pp_op_params *p, const pp_op_knobs *k)
{
    (void)p;
    return k->v[K_CP_WORLD];
}

static int cp_chunks(const pp_knob_setting *knobs_set, int n)
{
    const char *w = pp_knob_setting_value(knobs_set, n, "cp_world");
    return w && atoi(w) > 1 ? 2 * atoi(w) : 0;
}

static int cp_rank_of_chunk(int k, int n)
{
    return k < n / 2 ? k : n - 1 - k;
}

// The report header's note: the engine's (cuBLAS), else for flash what the emulation cannot
// reproduce of FlashAttention-2 without a GPU (kernels/attention.h, "Flash": not emulated).
static const char *vendor_note(const pp_knob_setting *knobs_set, int n)
{
    const char *e = pp_engine_vendor_note(knobs_set, n), *kern = pp_knob_setting_value(knobs_set, n, "kernel");
    if (e || (kern && strcmp(kern, "flash")))
        return e;
    const char *fp8 = pp_knob_setting_value(knobs_set, n, "fp8");
    const char *mma = pp_knob_setting_value(knobs_set, n, "mma");
    if (fp8 && !strcmp(fp8, "te") && mma && !strcmp(mma, "sm90-fp8"))
        return "(TransformerEngine's FP8 DPA with Hopper's FP8 accumulation in every GEMM (groups of 32, truncated, "
               "promoted every 128 as cuBLASLt): a bound on what cuDNN's closed kernels could do on Hopper, not a "
               "claim; the rest as fp8 = \"te\"'s)";
    if (fp8 && !strcmp(fp8, "te"))
        return "(TransformerEngine's FP8 DPA forward: where cudnn-frontend's reference applies each scale; the "
               "closed kernel's softmax form, exponential and P.V accumulation are the knobs te_softmax, te_exp, "
               "te_pv, te_rescale_threshold; exp and log correctly rounded here, its dot products, P.V chains and row "
               "sums in key order: run --orders measures what other orders move)";
    if (fp8 && !strcmp(fp8, "fa3"))
        return "(FlashAttention-3's FP8 forward: its exp2 argument, max offset, e4m3 conversions and order; its "
               "ex2.approx and __logf are correctly rounded exp2 and log here, its FP8 MMAs binary32 fma chains "
               "unless mma = \"sm90-fp8\" (Hopper's truncating FP8 accumulation as measured on an H200))";
    return "(FlashAttention-2's exp2 argument and order; its ex2.approx and __logf are correctly rounded exp2 and "
           "log here, its MMAs' order inside each k-chunk of 16 a chain, its dq atomicAdd order the key blocks' "
           "order: run --orders measures what they move)";
}

static const pp_seq_chunking cp_chunking = {
    .title = "max |error| per context-parallel ring chunk",
    .svg_title = "max error per ring chunk",
    .x_label = "ring chunk (the rank holding it)",
    .owner = "rank",
    .caption = "The sequence in 2 x cp_world chunks; with load-balanced causal chunking rank r holds chunks r "
               "and 2 x cp_world - 1 - r (hover a bar for its rank).",
    .n_chunks = cp_chunks,
    .owner_of = cp_rank_of_chunk,
};

// The sites explain can make exact (kernels/attention.h "Exact sites"): those the variant rounds
// into a storage format — P and out always; the unfused kernel's stored scores (and their PB-Relax
// or layer-scaled form, the naive row sum, dP, D); the backward's dS and dq', dk', dv partials;
// context parallelism's partials and merges — and the softmax's binary32 steps (softmax_in, lse,
// flash's row_max, the CP lse merge), computed in binary64 when exact.
static uint64_t explain_sites(const pp_op_params *p, const pp_op_knobs *k)
{
    if (!emulated(k))
        return 0;
    pp_attn_variant v = variant_of(p, k);
    if (v.fp8 == PP_ATTN_FP8_TE) {
        // TransformerEngine's FP8 forward (attention.h "Exact sites", fp8 = te): q, k, v's
        // quantisation and (per-tensor scaling but none) their descales, σ, S's chain, the scaled
        // score and argument, the exp, the row sums, P8's store and X_s, the P·V chains, the
        // division by l, lse, O's scale and store; row_max on the online softmax only (two-pass:
        // a plain max, no correction, nothing rounds)
        pp_scaling sch = pp_attn_fp8_scheme(&v);
        uint64_t m = PP_SITE_BIT(PP_SITE_ATTN_QUANT_Q) | PP_SITE_BIT(PP_SITE_ATTN_QUANT_K) |
                     PP_SITE_BIT(PP_SITE_ATTN_QUANT_V) | PP_SITE_BIT(PP_SITE_ATTN_SOFTMAX_SCALE) |
                     PP_SITE_BIT(PP_SITE_ATTN_SCORES) | PP_SITE_BIT(PP_SITE_ATTN_SOFTMAX_IN) |
                     PP_SITE_BIT(PP_SITE_ATTN_EXP) | PP_SITE_BIT(PP_SITE_ATTN_ROW_SUM) | PP_SITE_BIT(PP_SITE_ATTN_P) |
                     PP_SITE_BIT(PP_SITE_ATTN_BLOCK_SCALE_P) | PP_SITE_BIT(PP_SITE_ATTN_OUT_PARTIAL) |
                     PP_SITE_BIT(PP_SITE_ATTN_ROW_INV) | PP_SITE_BIT(PP_SITE_ATTN_LSE) |
                     PP_SITE_BIT(PP_SITE_ATTN_OUT_SCALE) | PP_SITE_BIT(PP_SITE_ATTN_OUT);
        if (v.te_softmax != PP_ATTN_TE_TWO_PASS)
            m |= PP_SITE_BIT(PP_SITE_ATTN_ROW_MAX);
        if (sch == PP_SCALING_TENSOR || sch == PP_SCALING_DELAYED)
            m |= PP_SITE_BIT(PP_SITE_ATTN_BLOCK_SCALE_Q) | PP_SITE_BIT(PP_SITE_ATTN_BLOCK_SCALE_K) |
                 PP_SITE_BIT(PP_SITE_ATTN_BLOCK_SCALE_V);
        // its backward (attention.h "Exact sites", fp8 = te, backward; attention_te_fp8_bwd_x.h):
        // dO's quantisation (and its descale where it is scaled), D, dP, dS8 and its scale_dP, the
        // dq and dk/dv chains with their descales, the three FP8 stores
        if (backward(p)) {
            m |= PP_SITE_BIT(PP_SITE_ATTN_QUANT_DO) | PP_SITE_BIT(PP_SITE_ATTN_D) | PP_SITE_BIT(PP_SITE_ATTN_DP) |
                 PP_SITE_BIT(PP_SITE_ATTN_DS) | PP_SITE_BIT(PP_SITE_ATTN_BLOCK_SCALE_DS) |
                 PP_SITE_BIT(PP_SITE_ATTN_DQ_ACC) | PP_SITE_BIT(PP_SITE_ATTN_DKV_ACC) | PP_SITE_BIT(PP_SITE_ATTN_DQ) |
                 PP_SITE_BIT(PP_SITE_ATTN_DK) | PP_SITE_BIT(PP_SITE_ATTN_DV);
            if (sch != PP_SCALING_NONE)
                m |= PP_SITE_BIT(PP_SITE_ATTN_BLOCK_SCALE_DO);
        }
        return m;
    }
    if (v.fp8 != PP_ATTN_FP8_NONE) {
        // FA3's FP8 forward (attention.h "FP8 scaling schemes"): the quantisations of q, k, v
        // (elements kept), P (kept in binary32), the out store, and where a block scale rounds
        // (nvfp4's E4M3 scales; mx's are powers of two, the per-tensor descales not offered);
        // FA3's softmax scalars in binary64 (attention.h "Exact sites", FP8): the max offset
        // (row_max), the exp2 argument and correction (softmax_in), the row sums, 1/l (row_inv),
        // the epilogue scale (out_scale), the lse, and σ' where the descales make it round
        // (σ' = sl2·X_q·X_k; X = 1 without scaling and with mx: nothing rounds); its two GEMM chains
        // in binary64 (attention.h "Exact sites", chains: S = q8·k8 and the running o of P8·v8,
        // under either mma, with the block scales folded in as the kernel folds them)
        pp_scaling sch = pp_attn_fp8_scheme(&v);
        uint64_t m = PP_SITE_BIT(PP_SITE_ATTN_QUANT_Q) | PP_SITE_BIT(PP_SITE_ATTN_QUANT_K) |
                     PP_SITE_BIT(PP_SITE_ATTN_QUANT_V) | PP_SITE_BIT(PP_SITE_ATTN_P) | PP_SITE_BIT(PP_SITE_ATTN_OUT) |
                     PP_SITE_BIT(PP_SITE_ATTN_SCORES) | PP_SITE_BIT(PP_SITE_ATTN_PV_ACC) | PP_ATTN_FP8_SOFTMAX_SITES;
        if (sch == PP_SCALING_NONE || sch == PP_SCALING_MX)
            m &= ~PP_SITE_BIT(PP_SITE_ATTN_SOFTMAX_SCALE);
        if (sch == PP_SCALING_NVFP4)
            m |= PP_SITE_BIT(PP_SITE_ATTN_BLOCK_SCALE_Q) | PP_SITE_BIT(PP_SITE_ATTN_BLOCK_SCALE_K) |
                 PP_SITE_BIT(PP_SITE_ATTN_BLOCK_SCALE_V) | PP_SITE_BIT(PP_SITE_ATTN_BLOCK_SCALE_P);
        return m;
    }
    int bwd = backward(p), cp = v.cp_world > 1, unf = v.kernel == PP_ATTN_UNFUSED;
    int naive = v.softmax == PP_ATTN_SOFTMAX_NAIVE;
    uint64_t m = PP_SITE_BIT(PP_SITE_ATTN_P) | PP_SITE_BIT(PP_SITE_ATTN_OUT);
    if (unf)
        m |= PP_SITE_BIT(PP_SITE_ATTN_SCORES);
    if (unf && v.softmax != PP_ATTN_SOFTMAX_FP32 && (v.max_subtract == PP_ATTN_MAX_PB_RELAX || v.qk_layer_scaling > 1))
        m |= PP_SITE_BIT(PP_SITE_ATTN_SCALED_SCORES);
    if (unf && naive)
        m |= PP_SITE_BIT(PP_SITE_ATTN_ROW_SUM);
    if (bwd)
        m |= PP_SITE_BIT(PP_SITE_ATTN_DS) | PP_SITE_BIT(PP_SITE_ATTN_DQ) | PP_SITE_BIT(PP_SITE_ATTN_DK) |
             PP_SITE_BIT(PP_SITE_ATTN_DV);
    if (bwd && unf)  // the dP GEMM's chain and its store (fp32 or storage accumulation)
        m |= PP_SITE_BIT(PP_SITE_ATTN_DP);
    if (bwd && unf && naive)
        m |= PP_SITE_BIT(PP_SITE_ATTN_D);
    // the softmax's binary32 scalar steps, made exact in binary64 (attention.h "Exact sites", kind 2):
    // every kernel has an exponent argument and an lse; the row max rounds only on flash (m·sl2)
    m |= PP_SITE_BIT(PP_SITE_ATTN_SOFTMAX_IN) | PP_SITE_BIT(PP_SITE_ATTN_LSE);
    if (!unf)  // flash: also the 4 partial row sums and the epilogue's 1/l (FA2's, attention.h "Exact sites")
        m |= PP_SITE_BIT(PP_SITE_ATTN_ROW_MAX) | PP_SITE_BIT(PP_SITE_ATTN_ROW_SUM) | PP_SITE_BIT(PP_SITE_ATTN_ROW_INV);
    if (cp)
        m |= PP_SITE_BIT(PP_SITE_ATTN_OUT_PARTIAL) | PP_SITE_BIT(PP_SITE_ATTN_CP_OUT_MERGE) |
             PP_SITE_BIT(PP_SITE_ATTN_CP_LSE_MERGE);
    if (cp && bwd)
        m |= PP_SITE_BIT(PP_SITE_ATTN_CP_DQ_ACC) | PP_SITE_BIT(PP_SITE_ATTN_CP_DKV_ACC);
    // the GEMM chains in binary64 (attention.h "Exact sites", chains): flash's S (forward and the
    // backward's recomputation), P·V's running o, dP and D; every backward's dq, dk/dv chains; the
    // unfused fp32 row sum (the naive one rounds to F: its site is above)
    if (!unf)
        m |= PP_SITE_BIT(PP_SITE_ATTN_SCORES);
    m |= PP_SITE_BIT(PP_SITE_ATTN_PV_ACC);  // flash's running o; the unfused P·V GEMM's chain
    if (!unf && bwd)
        m |= PP_SITE_BIT(PP_SITE_ATTN_DP) | PP_SITE_BIT(PP_SITE_ATTN_D);
    if (bwd)
        m |= PP_SITE_BIT(PP_SITE_ATTN_DQ_ACC) | PP_SITE_BIT(PP_SITE_ATTN_DKV_ACC);
    if (unf && !naive)
        m |= PP_SITE_BIT(PP_SITE_ATTN_ROW_SUM);
    if (bwd && unf && !naive)  // the softmax backward's fp32 D = Σ dP·P in binary64 (naive's: above)
        m |= PP_SITE_BIT(PP_SITE_ATTN_D);
    return m;
}

const pp_op pp_op_attention = {
    .name = "attention",
    .doc = "attention forward (out, lse) and backward (dq, dk, dv), with GQA, causal mask and context parallelism; "
           "q, dout [b, s, h, d], k, v [b, s_kv, h_kv, d]",
    .params = params,
    .n_params = (int)(sizeof params / sizeof params[0]),
    .knobs = knobs,
    .n_knobs = (int)(sizeof knobs / sizeof knobs[0]),
    .inputs = inputs,
    .n_inputs = 4,
    .outputs = outputs,
    .n_outputs = 5,
    .explain_sites = explain_sites,
    .input_layouts = input_layouts,
    .output_layouts = output_layouts,
    .check_params = check_params,
    .check_knobs = check_knobs,
    .knob_rules = knob_rules,
    .shape = shape,
    .format = format,
    .output_format = output_format,
    .saved_format = saved_format,
    .output_active = output_active,
    .describe = describe,
    .run_cpu = run_cpu,
    .run_cuda = PP_CUDA_FN(run_cuda),
    .reference = reference,
    .ref_methods = ref_methods,
    .axes = axes,
    .view_world = view_world,
    .view_world_knob = "cp_world",
    .chunking = &cp_chunking,
    .vendor_note = vendor_note,
    .emulated = emulated,
    .range_heads = range_heads,
    .range_cuda = 1,
    .second_reference = second_reference,
    .reference_quantised = reference_quantised,
};
