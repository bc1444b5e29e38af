// op_gemm.c — the operation-table row of the batched GEMM C = α·A·B (kernels/gemm.h defines the
// arithmetic of each variant, reference/gemm_ref.c the truth).
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cpu/gemm.h"
#ifdef PP_HAVE_CUDA
#include "cuda/gemm_cuda.h"
#include "cuda/gemm_scaled_cuda.h"
#endif
#include "gemm_ref.h"
#include "ops/delayed_knobs.h"
#include "ops/engine_knob.h"
#include "ops/gemm_ref_quantised.h"
#include "ops/op.h"

enum { P_BATCH, P_M, P_N, P_K, P_ALPHA };
enum { K_FORMAT, K_ACCUMULATE, K_SCALE, K_ENGINE, K_SCALING, K_HIST_A, K_HIST_B, K_AMAX_ALGO, K_MARGIN, K_MMA, K_MX_SCALE };

static const pp_param_def params[] = {
    [P_BATCH] = {"batch", PP_PARAM_INT, 1, 1 << 20, 1, 0, "number of independent products"},
    [P_M] = {"m", PP_PARAM_INT, 1, 1 << 24, 0, 1, "rows of A and C"},
    [P_N] = {"n", PP_PARAM_INT, 1, 1 << 24, 0, 1, "columns of B and C"},
    [P_K] = {"k", PP_PARAM_INT, 1, 1 << 24, 0, 1, "the reduction length: columns of A, rows of B"},
    [P_ALPHA] = {"alpha", PP_PARAM_FLOAT, -1e300, 1e300, 0, 0,
                 "the real factor α (default 1/sqrt(k), the exact real number)"},
};

static const char *const formats[] = {"fp16", "bf16", "fp32", "e4m3", "e5m2", "e2m1", NULL};
static const char *const accumulates[] = {"fp32", "storage", NULL};
static const char *const scales[] = {"post", "pre", "pre-a", NULL};
static const pp_knob_meaning accumulate_ids[] = {
    {"fp32", PP_GEMM_ACC_FP32}, {"storage", PP_GEMM_ACC_STORAGE}, {NULL, 0}};
static const pp_knob_meaning scale_ids[] = {
    {"post", PP_GEMM_SCALE_POST}, {"pre", PP_GEMM_SCALE_PRE}, {"pre-a", PP_GEMM_SCALE_PRE_A}, {NULL, 0}};
static const char *const scalings[] = {"none", "tensor-current", "tensor-delayed", "mx", "nvfp4", NULL};
static const pp_knob_meaning scaling_ids[] = {
    {"none", PP_SCALING_NONE}, {"tensor-current", PP_SCALING_TENSOR}, {"tensor-delayed", PP_SCALING_DELAYED},
    {"mx", PP_SCALING_MX}, {"nvfp4", PP_SCALING_NVFP4}, {NULL, 0}};
static const char *const mmas[] = {"fp32-chain", "sm90-fp8", "sm90-fp8-fast", NULL};
static const pp_knob_meaning mma_ids[] = {{"fp32-chain", PP_GEMM_MMA_FP32_CHAIN},
                                          {"sm90-fp8", PP_GEMM_MMA_SM90_FP8},
                                          {"sm90-fp8-fast", PP_GEMM_MMA_SM90_FP8_FAST}, {NULL, 0}};
static const char *const mx_scales[] = {"ocp", "te", NULL};
static const pp_knob_meaning mx_scale_ids[] = {{"ocp", PP_MX_RULE_OCP}, {"te", PP_MX_RULE_TE}, {NULL, 0}};
static const pp_knob_def knobs[] = {
    [K_FORMAT] = {"format", formats, "fp16",
                  "storage format of A, B, the rescaled inputs and C; with scaling: the quantised "
                  "storage of A and B (e4m3, e5m2, e2m1), A, B and C being fp32",
                   .meanings = pp_knob_formats_scaled},
    [K_ACCUMULATE] = {"accumulate", accumulates, "fp32",
                      "fp32: binary32 FMA accumulator; storage: the storage format, rounded after "
                      "every addition (reduced-precision reduction), left to right over k",
                       .meanings = accumulate_ids},
    [K_SCALE] = {"scale", scales, "post",
                 "post: α applied to the accumulator (BLAS epilogue); pre: sqrt(α) into A and B "
                 "before the product (BLOOM-104B); pre-a: α into A only",
                  .meanings = scale_ids},
    [K_ENGINE] = {"engine", pp_engine_values, "ours",
                  "ours: precprobe's kernel (the CPU emulation's arithmetic; on cuda bit-identical to it); cublas: "
                  "cublasGemmStridedBatchedEx as torch.baddbmm calls it (cuda only; its order is cuBLAS's)",
                   .meanings = pp_engine_meanings},
    [K_SCALING] = {"scaling", scalings, "none",
                   "none: A and B stored as they are; tensor-current: per-tensor scale from this tensor's amax "
                   "(TE's Float8CurrentScaling); tensor-delayed: per-tensor scale from the amax history of earlier "
                   "steps (TE's DelayedScaling: amax_history_a/_b, amax_compute_algo, margin); mx: OCP MX "
                   "v1.0 e8m0 scales per 32 along k; nvfp4: e2m1, e4m3 scales per 16 along k and an "
                   "fp32 global scale (kernels/scaling.h)",
                   .meanings = scaling_ids},
    // TE's DelayedScaling recipe (kernels/scaling.h cites its source; the knobs are
    // ops/delayed_knobs.h's, as attention's): the history is what TE's amax_history buffer holds
    // when this step quantises, most recent first.
    [K_HIST_A] = PP_DELAYED_HISTORY_KNOB("amax_history_a", "a"),
    [K_HIST_B] = PP_DELAYED_HISTORY_KNOB("amax_history_b", "b"),
    [K_AMAX_ALGO] = PP_DELAYED_AMAX_ALGO_KNOB,
    [K_MARGIN] = PP_DELAYED_MARGIN_KNOB,
    [K_MMA] = {"mma", mmas, "fp32-chain",
               "tensor-current/-delayed e4m3, e5m2: the accumulation; fp32-chain: binary32 FMA chain; sm90-fp8: "
               "Hopper's FP8 tensor cores as measured on an H200 (groups of 32, 13 fraction bits, truncation), "
               "promoted to fp32 every 128 (cuBLASLt); sm90-fp8-fast: never promoted (use_fast_accum) "
               "(kernels/gemm.h)", .meanings = mma_ids},
    // mx's E8M0 exponent rule (kernels/scaling.h cites TE's float_to_e8m0); only mx reads it.
    [K_MX_SCALE] = {"mx_scale", mx_scales, "ocp",
                    "scaling mx: the block scale's exponent; ocp: floor(log2 amax) - emax_elem (OCP MX v1.0, the "
                    "largest elements may saturate); te: TransformerEngine's MXFP8 cast, amax / max_finite rounded "
                    "up to a power of two (nothing saturates) (kernels/scaling.h)", .meanings = mx_scale_ids},
};
static const char *const inputs[] = {"a", "b"};
static const char *const outputs[] = {"c"};
// the axes of each, as letters (layout = ... in a case orders them as a file holds them)
static const char *const input_layouts[] = {"bmk", "bkn"};
static const char *const output_layouts[] = {"bmn"};
static const char *const ref_methods[] = {"fast", "mpfr-plain", NULL};

static int check_params(const pp_op_params *p, char *msg, size_t n)
{
    if (p->given[P_ALPHA] && !isfinite(p->v[P_ALPHA])) {
        snprintf(msg, n, "alpha must be finite");
        return -1;
    }
    double elems = (p->given[P_BATCH] ? p->v[P_BATCH] : 1) *
                   (p->v[P_M] * p->v[P_K] + p->v[P_K] * p->v[P_N] + p->v[P_M] * p->v[P_N]);
    if (elems > 1e10) {
        snprintf(msg, n, "the tensors would hold %.3g elements; at most 1e10", elems);
        return -1;
    }
    return 0;
}

static int64_t param(const pp_op_params *p, int i)
{
    return (int64_t)(p->given[i] ? p->v[i] : params[i].def);
}

static void shape(const pp_op_params *p, int is_output, int i, int *ndim, int64_t *s)
{
    *ndim = 3;
    s[0] = param(p, P_BATCH);
    if (is_output) {
        s[1] = param(p, P_M);
        s[2] = param(p, P_N);
    } else if (i == 0) {
        s[1] = param(p, P_M);
        s[2] = param(p, P_K);
    } else {
        s[1] = param(p, P_K);
        s[2] = param(p, P_N);
    }
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

// The inputs' and C's format: the storage format, or binary32 for a quantised storage format
// (e4m3, e5m2, e2m1: only with a scaling, which quantises binary32 inputs). Decided by the format
// knob alone, so the scaling knob never changes an external variant's format.
static pp_format_id format(const pp_op_knobs *k)
{
    pp_format_id f = (pp_format_id)id(k, K_FORMAT);
    return f == PP_FMT_FP16 || f == PP_FMT_BF16 ? f : PP_FMT_FP32;
}

static void describe(const pp_op_params *p, char *buf, size_t n)
{
    char alpha[64] = "1/sqrt(k)";
    if (p->given[P_ALPHA])
        snprintf(alpha, sizeof alpha, "%.17g", p->v[P_ALPHA]);
    snprintf(buf, n, "C[%lld, %lld, %lld] = alpha * A[%lld, %lld, %lld] @ B[%lld, %lld, %lld], alpha = %s",
             (long long)param(p, P_BATCH), (long long)param(p, P_M), (long long)param(p, P_N),
             (long long)param(p, P_BATCH), (long long)param(p, P_M), (long long)param(p, P_K),
             (long long)param(p, P_BATCH), (long long)param(p, P_K), (long long)param(p, P_N), alpha);
}

// Variant k's delayed recipe (its histories point into k), for tensor-delayed.
static pp_delayed_recipe recipe_of(const pp_op_knobs *k)
{
    pp_delayed_recipe r = {.history = {k->list[K_HIST_A], k->list[K_HIST_B]},
                           .len = {k->v[K_HIST_A], k->v[K_HIST_B]},
                           .algo = (pp_amax_algo)id(k, K_AMAX_ALGO),
                           .margin = k->v[K_MARGIN]};
    return r;
}

static pp_gemm_variant variant_of(const pp_op_params *p, const pp_op_knobs *k)
{
    pp_gemm_variant v = {
        .format = (pp_format_id)id(k, K_FORMAT),
        .scaling = (pp_scaling)id(k, K_SCALING),
        .accum = (pp_gemm_accum)id(k, K_ACCUMULATE),
        .scale = (pp_gemm_scale)id(k, K_SCALE),
        .alpha_given = p->given[P_ALPHA],
        .alpha = p->v[P_ALPHA],
        .order_seed = p->order_seed,
        .exact_sites = p->exact_sites,
        .mma = (pp_gemm_mma)id(k, K_MMA),
        .mx_rule = (pp_mx_rule)id(k, K_MX_SCALE),
    };
    return v;
}

// Storage format, scaling, accumulation and scale placement that go together (kernels/gemm.h),
// and what the cuBLAS engine can be asked for (kernels/cuda/gemm_cuda.h, pp_gemm_cublas): the
// scalings are our kernels' (CPU emulation, and CUDA: kernels/cuda/gemm_scaled_kernels.cu), and storage accumulation maps to a cuBLAS compute type
// only for fp16 (CUBLAS_COMPUTE_16F) and fp32; cuBLAS has no bf16 compute type.
static int check_knobs(const pp_op_params *p, const pp_op_knobs *k, char *msg, size_t n)
{
    pp_gemm_variant v = variant_of(p, k);
    if (v.scaling != PP_SCALING_NONE && id(k, K_ENGINE) != PP_ENGINE_OURS) {
        snprintf(msg, n, "scaling '%s' needs engine = \"ours\"", knobs[K_SCALING].values[k->v[K_SCALING]]);
        return -1;
    }
    if (id(k, K_ENGINE) == PP_ENGINE_CUBLAS && v.accum == PP_GEMM_ACC_STORAGE && v.format != PP_FMT_FP16 &&
        v.format != PP_FMT_FP32) {
        snprintf(msg, n, "engine \"cublas\" with accumulate = \"storage\" needs format fp16 or fp32 (cuBLAS has no "
                 "%s compute type)", knobs[K_FORMAT].values[k->v[K_FORMAT]]);
        return -1;
    }
    int recipe_set = k->v[K_HIST_A] || k->v[K_HIST_B] || id(k, K_AMAX_ALGO) != PP_AMAX_MAX || k->v[K_MARGIN];
    if (v.scaling != PP_SCALING_DELAYED && recipe_set) {
        snprintf(msg, n, "amax_history_a, amax_history_b, amax_compute_algo and margin are scaling = "
                 "\"tensor-delayed\"'s (this variant's scaling is '%s')", knobs[K_SCALING].values[k->v[K_SCALING]]);
        return -1;
    }
    if (v.scaling == PP_SCALING_DELAYED && (!k->v[K_HIST_A] || !k->v[K_HIST_B])) {
        snprintf(msg, n, "scaling \"tensor-delayed\" needs amax_history_a and amax_history_b (each operand's amax "
                 "at the earlier steps, most recent first, e.g. [3.0, 2.5])");
        return -1;
    }
    if (v.mx_rule != PP_MX_RULE_OCP && v.scaling != PP_SCALING_MX) {
        snprintf(msg, n, "mx_scale \"%s\" is scaling = \"mx\"'s (this variant's scaling is '%s')",
                 knobs[K_MX_SCALE].values[k->v[K_MX_SCALE]], knobs[K_SCALING].values[k->v[K_SCALING]]);
        return -1;
    }
    if (v.mma != PP_GEMM_MMA_FP32_CHAIN && (v.scaling != PP_SCALING_TENSOR && v.scaling != PP_SCALING_DELAYED)) {
        snprintf(msg, n, "mma '%s' is Hopper's FP8 MMA: it needs scaling \"tensor-current\" or \"tensor-delayed\" "
                 "(mx and nvfp4 are Blackwell's block-scaled MMAs, not modelled)", knobs[K_MMA].values[k->v[K_MMA]]);
        return -1;
    }
    if (v.mma != PP_GEMM_MMA_FP32_CHAIN && v.format != PP_FMT_E4M3 && v.format != PP_FMT_E5M2) {
        snprintf(msg, n, "mma '%s' is Hopper's FP8 MMA: it needs format e4m3 or e5m2", knobs[K_MMA].values[k->v[K_MMA]]);
        return -1;
    }
    if (pp_gemm_variant_formats_ok(&v))
        return 0;
    const char *f = knobs[K_FORMAT].values[k->v[K_FORMAT]], *s = knobs[K_SCALING].values[k->v[K_SCALING]];
    if (v.scaling == PP_SCALING_NONE)
        snprintf(msg, n, "format '%s' needs a scaling (tensor-current, mx, nvfp4)", f);
    else if (v.accum != PP_GEMM_ACC_FP32 || v.scale != PP_GEMM_SCALE_POST)
        snprintf(msg, n, "scaling '%s' needs accumulate = \"fp32\" and scale = \"post\"", s);
    else
        snprintf(msg, n, "scaling '%s' does not store format '%s' (tensor-current: e4m3 e5m2 e2m1; tensor-delayed: "
                 "e4m3 e5m2; mx: e4m3 e5m2 e2m1; nvfp4: e2m1)", s, f);
    return -1;
}

static int run_cpu(const pp_op_params *p, const pp_op_knobs *k, const pp_tensor *in, pp_tensor *out,
                   int threads, pp_error *err)
{
    if (id(k, K_ENGINE) != PP_ENGINE_OURS)
        return pp_fail(err, PP_ERR_RUNTIME, "gemm: engine '%s' runs only on the GPU (--device cuda)",
                       knobs[K_ENGINE].values[k->v[K_ENGINE]]);
    pp_gemm_variant v = variant_of(p, k);
    if (v.scaling == PP_SCALING_DELAYED) {  // the recipe beside the variant (pp_gemm_delayed_cpu)
        pp_gemm_scalars sc;
        pp_delayed_recipe r = recipe_of(k);
        if (pp_gemm_scalars_make(&v, param(p, P_K), &sc))
            return pp_fail(err, PP_ERR_INPUT, "gemm: bad variant");
        return pp_gemm_delayed_cpu_ranges(&v, &r, sc.alpha_c, param(p, P_BATCH), param(p, P_M), param(p, P_N),
                                          param(p, P_K), in[0].data, in[1].data, out[0].data, threads, p->ranges,
                                          err);
    }
    return pp_gemm_cpu_ranges(&v, param(p, P_BATCH), param(p, P_M), param(p, P_N), param(p, P_K), in[0].data,
                              in[1].data, out[0].data, threads, p->ranges, err);
}

// Range diagnostics: one cell per site, the tensor.
static int64_t range_heads(const pp_op_params *p)
{
    (void)p;
    return 1;
}

#ifdef PP_HAVE_CUDA
static int run_cuda(const pp_op_params *p, const pp_op_knobs *k, const pp_tensor *in, pp_tensor *out,
                    pp_error *err)
{
    pp_gemm_variant v = variant_of(p, k);
    if (v.exact_sites)
        return pp_fail(err, PP_ERR_RUNTIME, "gemm on cuda: exact sites run on the CPU emulation only");
    char msg[400] = "";
    if (v.scaling != PP_SCALING_NONE) {  // our kernels only (check_knobs): the emulation's bodies on the GPU
        pp_gemm_scalars sc;
        if (pp_gemm_scalars_make(&v, param(p, P_K), &sc))
            return pp_fail(err, PP_ERR_INPUT, "gemm on cuda: bad variant");
        pp_delayed_recipe r = recipe_of(k);
        int rc = pp_gemm_scaled_cuda_ranges(&v, v.scaling == PP_SCALING_DELAYED ? &r : NULL, sc.alpha_c,
                                            param(p, P_BATCH), param(p, P_M), param(p, P_N), param(p, P_K),
                                            in[0].data, in[1].data, out[0].data, p->ranges, msg, sizeof msg);
        return rc ? pp_fail(err, rc, "gemm on cuda: %s", msg) : PP_OK;
    }
    // range diagnostics from our kernel only (the pipeline notes none for a vendor path)
    int rc = id(k, K_ENGINE) == PP_ENGINE_OURS
           ? pp_gemm_cuda_ranges(&v, param(p, P_BATCH), param(p, P_M), param(p, P_N), param(p, P_K), in[0].data,
                                 in[1].data, out[0].data, p->ranges, msg, sizeof msg)
           : pp_gemm_cublas(&v, param(p, P_BATCH), param(p, P_M), param(p, P_N), param(p, P_K), in[0].data,
                            in[1].data, out[0].data, msg, sizeof msg);
    return rc ? pp_fail(err, rc, "gemm on cuda: %s", msg) : PP_OK;
}
#endif

// The reference's options: inputs of format f, α as the case gives it, ctx's method.
static pp_gemm_ref_opts ref_opts_of(const pp_op_params *p, pp_format_id f, const pp_ref_ctx *ctx)
{
    pp_gemm_ref_opts o = {
        .format = f,
        .alpha_given = p->given[P_ALPHA],
        .alpha = p->v[P_ALPHA],
        .method = ctx->method && !strcmp(ctx->method, "mpfr-plain") ? PP_GEMM_REF_MPFR_PLAIN : PP_GEMM_REF_FAST,
    };
    return o;
}

// C's info row after a reference run: its method (with what suffix adds) and the worst element
// bound (NaN bounds belong to NaN values: skipped).
static void ref_info(const pp_gemm_ref_opts *o, const pp_tensor *bound, const char *suffix, pp_reference_info *info)
{
    double worst = 0;
    for (int64_t i = 0; i < bound->numel; i++)
        if (bound->data[i] > worst)
            worst = bound->data[i];
    snprintf(info[0].tensor, sizeof info[0].tensor, "c");
    snprintf(info[0].method, sizeof info[0].method, "%s%s",
             o->method == PP_GEMM_REF_FAST ? "exact-accumulator (fast)" : "mpfr-plain-128", suffix);
    info[0].error_bound = worst;
}

static int reference(const pp_op_params *p, pp_format_id in_format, const pp_tensor *in, pp_tensor *out,
                     pp_reference_info *info, const pp_ref_ctx *ctx, pp_error *err)
{
    pp_gemm_ref_opts o = ref_opts_of(p, in_format, ctx);
    pp_tensor bound;
    int rc = pp_tensor_alloc(&bound, out[0].ndim, out[0].shape, PP_FMT_FP64, err);
    if (rc)
        return rc;
    rc = pp_gemm_ref(&o, param(p, P_BATCH), param(p, P_M), param(p, P_N), param(p, P_K), in[0].data,
                     in[1].data, out[0].data, bound.data, ctx->threads, err);
    if (!rc)
        ref_info(&o, &bound, "", info);
    pp_tensor_free(&bound);
    return rc;
}

// Second references (op.h): a scaled variant quantises its binary32 inputs itself; an fp16 or
// bf16 variant reads inputs rounded to its format.
static int second_reference(const pp_op_params *p, const pp_op_knobs *k)
{
    pp_gemm_variant v = variant_of(p, k);
    if (v.scaling != PP_SCALING_NONE)
        return PP_REF2_QUANTISED;
    return v.format == PP_FMT_FP16 || v.format == PP_FMT_BF16 ? PP_REF2_ORIGINAL : PP_REF2_NONE;
}

static int reference_quantised(const pp_op_params *p, const pp_op_knobs *k, const pp_tensor *in, pp_tensor *out,
                               pp_reference_info *info, const pp_ref_ctx *ctx, pp_error *err)
{
    pp_gemm_variant v = variant_of(p, k);
    pp_gemm_ref_opts o = ref_opts_of(p, PP_FMT_FP32, ctx);
    pp_tensor bound;
    int rc = pp_tensor_alloc(&bound, out[0].ndim, out[0].shape, PP_FMT_FP64, err);
    if (rc)
        return rc;
    pp_delayed_recipe r = recipe_of(k);
    rc = pp_gemm_ref_quantised(&v, v.scaling == PP_SCALING_DELAYED ? &r : NULL, &o, param(p, P_BATCH), param(p, P_M), param(p, P_N), param(p, P_K),
                               in[0].data, in[1].data, out[0].data, bound.data, ctx->threads, err);
    if (!rc)
        ref_info(&o, &bound, ", on the quantised inputs", info);
    pp_tensor_free(&bound);
    return rc;
}

// C [batch, m, n]: its rows as the position axis and the batch as the head axis, so the
// HTML report's position and head charts have data.
static int axes(const pp_op_params *p, int output, int *pos_dim, int *head_dim)
{
    (void)p;
    (void)output;
    *pos_dim = 1;
    *head_dim = 0;
    return 1;
}

// The sites explain can make exact (kernels/gemm.h "Exact sites"): the prescale of each operand
// the variant prescales, the accumulator, the epilogue's factor (post-scaling), the C store;
// scaled storage: the quantisations, nvfp4's E4M3 block scales and the per-tensor scalings'
// binary32 s and X (mx's E8M0 scale rounds nothing).
static uint64_t explain_sites(const pp_op_params *p, const pp_op_knobs *k)
{
    pp_gemm_variant v = variant_of(p, k);
    if (id(k, K_ENGINE) != PP_ENGINE_OURS)
        return 0;
    if (v.scaling != PP_SCALING_NONE)  // scaled storage: the quantisations first (kernels/gemm.h)
        return PP_SITE_BIT(PP_SITE_GEMM_QUANT_A) | PP_SITE_BIT(PP_SITE_GEMM_QUANT_B)
             | PP_SITE_BIT(PP_SITE_GEMM_ACCUM) | PP_SITE_BIT(PP_SITE_GEMM_SCALE) | PP_SITE_BIT(PP_SITE_GEMM_C)
             | (v.scaling != PP_SCALING_MX
                    ? PP_SITE_BIT(PP_SITE_GEMM_BLOCK_SCALE_A) | PP_SITE_BIT(PP_SITE_GEMM_BLOCK_SCALE_B) : 0);
    uint64_t m = PP_SITE_BIT(PP_SITE_GEMM_ACCUM) | PP_SITE_BIT(PP_SITE_GEMM_C);
    if (v.scale == PP_GEMM_SCALE_POST)
        m |= PP_SITE_BIT(PP_SITE_GEMM_SCALE);
    if (v.scale != PP_GEMM_SCALE_POST)
        m |= PP_SITE_BIT(PP_SITE_GEMM_QUANT_A);
    if (v.scale == PP_GEMM_SCALE_PRE)
        m |= PP_SITE_BIT(PP_SITE_GEMM_QUANT_B);
    return m;
}

const pp_op pp_op_gemm = {
    .name = "gemm",
    .doc = "batched GEMM C = alpha * A @ B, A [batch, m, k], B [batch, k, n]",
    .params = params,
    .n_params = (int)(sizeof params / sizeof params[0]),
    .knobs = knobs,
    .n_knobs = (int)(sizeof knobs / sizeof knobs[0]),
    .inputs = inputs,
    .n_inputs = 2,
    .outputs = outputs,
    .n_outputs = 1,
    .explain_sites = explain_sites,
    .input_layouts = input_layouts,
    .output_layouts = output_layouts,
    .check_params = check_params,
    .check_knobs = check_knobs,
    .knob_rules = "format fp16/bf16/fp32 with scaling none; e4m3/e5m2 with tensor-current, tensor-delayed or mx; e2m1 "
                  "with tensor-current, mx or nvfp4; tensor-delayed needs amax_history_a and amax_history_b, and only "
                  "it takes them, amax_compute_algo and margin; only mx takes mx_scale te; a scaling needs accumulate fp32, scale post, engine "
                  "ours; engine cublas "
                  "with accumulate storage needs format fp16 or fp32; engine cublas runs only on the GPU (--device cuda)",
    .shape = shape,
    .format = format,
    .describe = describe,
    .run_cpu = run_cpu,
    .run_cuda = PP_CUDA_FN(run_cuda),
    .reference = reference,
    .ref_methods = ref_methods,
    .axes = axes,
    .vendor_note = pp_engine_vendor_note,
    .emulated = emulated,
    .range_heads = range_heads,
    .range_cuda = 1,  // our kernels note on the GPU too (cuda/gemm_cuda.h, cuda/gemm_scaled_cuda.h)
    .second_reference = second_reference,
    .reference_quantised = reference_quantised,
};
