// scaling.h — the element-wise arithmetic of scaled low-precision storage: a scale from an amax,
// an element divided by its scale and rounded to the storage format. One definition for
// `precprobe cast --scaling mx` (src/core/cast.c) and the scaled GEMM (kernels/gemm.h, cpu/gemm.c).
// C11 and nvcc (PP_HD).
//
// Schemes (V a value of the input, P the stored element, X the dequantisation scale; V ≈ X·P):
//   per-tensor, current (TransformerEngine's Float8CurrentScaling): over the whole tensor,
//       s = RN_32(max_finite(F) / amax)  (TE's `scale`; 1 when amax is 0, FLT_MAX when the
//           quotient overflows binary32),
//       P = RN_F,sat(RN_32(V·s)),  X = RN_32(1/s)  (TE's `scale_inv`, what the GEMM multiplies by).
//       As TE computes them: NVIDIA/TransformerEngine @01c24fe
//       transformer_engine/common/recipe/recipe_common.cuh:31, compute_scale_from_amax
//       (scale = __fdiv_rn(max_fp8, amax), FLT_MAX for an infinite quotient, 1 for amax 0, Inf or
//       NaN), called by nvte_compute_scale_from_amax (recipe/current_scaling.cu @e9a0581); the
//       cast multiplies by the scale in binary32, then converts to FP8 with saturation
//       (util/vectorized_pointwise.h @4faec05, unary_kernel: `temp = temp * s` before the
//       static_cast to the output type), and scale_inv is the binary32 reciprocal 1/scale, as for
//       delayed scaling below (delayed_scaling.cu @6b71a0a). Before this, precprobe computed the
//       descale first, X = RN_32(amax / max_finite) and P = RN_F,sat(RN_32(V / X)): not TE's bits
//       (X·s ≠ 1 in general, so elements near a rounding boundary landed on the other side).
//       One deliberate difference: a NaN or ±Inf in the tensor makes s NaN here (so every
//       output it reaches is NaN, as with the other schemes), where TE's fmaxf-based amax skips
//       NaN and an infinite amax gives s = 1.
//   MX (OCP MX v1.0 §6.3; TransformerEngine's round-up rule below, pp_mx_rule): per block of 32 along the reduction dimension,
//       X = 2^(floor(log2(block amax)) − emax_elem), the exponent clamped to E8M0's [−127, 127]
//       (amax 0: 2^−127); NaN scale (E8M0 0xFF) for a block holding NaN or ±Inf;
//       P = RN_F,sat(V / X) (V / X exact: a power of two).
//   per-tensor, delayed (TransformerEngine's DelayedScaling recipe; pp_delayed_* below): the scale
//       comes from an amax history of earlier steps, not from this tensor, so an outlier newer
//       than the history saturates.
//   NVFP4 (NVIDIA's two-level FP4): a global binary32 scale and an E4M3 scale per block of 16,
//       g = RN_32(amax / (6·448)) (g = 1 when amax = 0),
//       s = RN_e4m3,sat(block_amax / (6·g)),  X = s·g (exact in binary64: 4 × 24 bits),
//       P = RN_e2m1,sat(V / X), and P = 0 for a block whose s is 0 (all zeros, or underflow).
//       (Quotients in binary64 then one rounding to a ≤ 24-bit format: correctly rounded.)
//       NVIDIA's definition as TransformerEngine implements it (NVIDIA/TransformerEngine
//       transformer_engine/common/cast/nvfp4/core_nvfp4.cuh @433b1db,
//       compute_global_encode_scaling_factor_FP4 and quantization_SF::compute_decoding_scaling_factor)
//       keeps the encode scale S_enc = RN_32(448·6 / amax) and s = RN_e4m3(RN_32(block_amax/6·S_enc));
//       precprobe keeps the decode form above, g = RN_32(amax/2688), which can differ from TE's
//       1/S_enc in the last bit of g and so, rarely, in s (not yet emulated bit for bit).
#ifndef PP_SCALING_H
#define PP_SCALING_H

#include <math.h>

#include "format.h"
#include "pp_hd.h"

typedef enum pp_scaling {
    PP_SCALING_NONE = 0,     // values stored as they are (today's arithmetic)
    PP_SCALING_TENSOR,       // per-tensor, current amax
    PP_SCALING_MX,           // OCP MX v1.0, blocks of PP_MX_BLOCK, E8M0 scales
    PP_SCALING_NVFP4,        // e2m1, blocks of PP_NVFP4_BLOCK, E4M3 scales, fp32 global scale
    PP_SCALING_DELAYED       // per-tensor, from an amax history (pp_delayed_recipe)
} pp_scaling;

#define PP_MX_BLOCK 32
#define PP_NVFP4_BLOCK 16
#define PP_MX_NAN_EXP 128  // the shared exponent that stands for E8M0's NaN scale

PP_HD static inline const char *pp_scaling_name(pp_scaling s)
{
    return s == PP_SCALING_NONE ? "none"
         : s == PP_SCALING_TENSOR ? "tensor-current"
         : s == PP_SCALING_MX ? "mx"
         : s == PP_SCALING_NVFP4 ? "nvfp4"
         : s == PP_SCALING_DELAYED ? "tensor-delayed" : "?";
}

// Whether f is an OCP MX element format.
PP_HD static inline int pp_mx_elem_format(pp_format_id f)
{
    return f == PP_FMT_E4M3 || f == PP_FMT_E5M2 || f == PP_FMT_E2M1 || f == PP_FMT_E2M3 || f == PP_FMT_E3M2;
}

// amax folded over one more value: |v| if larger; NaN (sticky) for NaN or ±Inf, so a caller
// sees "this block holds a non-finite value" from the result alone.
PP_HD static inline double pp_amax_step(double amax, double v)
{
    double a = fabs(v);
    if (isnan(amax) || !(a <= 1.7976931348623157e308))
        return (double)NAN;
    return a > amax ? a : amax;
}

// The MX shared exponent of a block with amax (pp_amax_step's fold from 0): floor(log2(amax))
// − emax_elem clamped to [−127, 127]; −127 for amax 0; PP_MX_NAN_EXP for NaN (non-finite block).
PP_HD static inline int pp_mx_shared_exp(double amax, int emax_elem)
{
    if (isnan(amax))
        return PP_MX_NAN_EXP;
    if (amax == 0)
        return -127;
    int e = ilogb(amax) - emax_elem;  // ilogb: floor(log2 |x|), exact, subnormals included
    return e < -127 ? -127 : e > 127 ? 127 : e;
}

// ---- the MX shared exponent rule (knob mx_scale): OCP's floor or TransformerEngine's round-up
// ocp: OCP MX v1.0 §6.3, as pp_mx_shared_exp above: X = 2^(floor(log2 amax) − emax_elem). A block
//      whose amax has a significand above the element format's largest (e4m3: 1.75) saturates its
//      largest elements (−12.5% at worst for e4m3).
// te:  TransformerEngine's MXFP8 quantisation (NVIDIA/TransformerEngine @03198ae
//      transformer_engine/common/util/ptx.cuh, float_to_e8m0 and exp2f_rcp; earlier in
//      common/utils.cuh, @1ae1d22 lines 937 and 971, as a fork's port cites them), called by the
//      MXFP8 cast kernels as float_to_e8m0(block_amax * Quantized_Limits<T>::max_norm_rcp) (the
//      binary32 constant 1/max_norm; block_amax an fmaxf fold of |x|) and the elements cast as
//      x * exp2f_rcp(byte) in binary32, then to FP8 with satfinite:
//        val = RN_32(amax · RN_32(1/max_finite)),
//        X = 2^e, e = ceil(log2 val) clamped to [−127, 127] (Blackwell's cvt.rp.satfinite.ue8m0x2.f32,
//            and the portable branch's "exponent + 1 unless the significand is 0", which for a
//            binary32 subnormal val ≤ 2^−127 keeps the E8M0 byte 0 = 2^−127): val 0 (amax 0, or
//            the product underflows) gives 2^−127, val ≥ 2^127 gives 2^127, NaN the NaN scale;
//        P = RN_F,sat(RN_32(V · X_rcp)), X_rcp = exp2f_rcp(byte) = 2^−e, except byte 0 (e = −127),
//            whose X_rcp is 1, not 2^127: such a block (amax ≤ ~448·2^−127) stores its elements
//            unscaled, so every one rounds to 0 in e4m3/e5m2 (TE's quirk, emulated).
//      So amax / X ≤ max_finite up to val's own binary32 rounding: nothing saturates but, rarely,
//      by that last half ulp. The elements' formats other than e4m3/e5m2 (e2m1 here) take the same
//      rule with their max_finite (TE has no MXFP4 cast to follow: a generalisation).
//      Non-finite blocks: TE's amax is an fmaxf fold that skips NaN, and float_to_e8m0 maps an
//      infinite amax to 2^127; precprobe keeps its rule for both (a block holding NaN or ±Inf gets
//      the NaN scale), as for the per-tensor scalings above: a deliberate difference.
typedef enum pp_mx_rule {
    PP_MX_RULE_OCP = 0,  // the default: every existing result unchanged
    PP_MX_RULE_TE
} pp_mx_rule;

PP_HD static inline const char *pp_mx_rule_name(pp_mx_rule r)
{
    return r == PP_MX_RULE_OCP ? "ocp" : r == PP_MX_RULE_TE ? "te" : "?";
}

// The exponent a rule wants before E8M0's clamp, for a finite amax > 0: ocp floor(log2 amax) −
// emax_elem; te ceil(log2 val) with val as above (−150 for a val that underflows to 0, 128 for
// one that overflows binary32: both outside [−127, 127], so the clamp flags them).
PP_HD static inline int pp_mx_raw_exp(pp_mx_rule r, double amax, pp_format_id f)
{
    if (r == PP_MX_RULE_OCP)
        return ilogb(amax) - pp_format_get(f).emax;
    double rcp = pp_round(PP_FMT_FP32, 1.0 / pp_format_get(f).max_finite, PP_RND_NE, 0);
    double val = pp_round(PP_FMT_FP32, amax * rcp, PP_RND_NE, 0);
    if (val == 0)
        return -150;
    if (!(val <= 3.4028234663852886e38))
        return 128;
    int e = ilogb(val);  // floor(log2 val), exact; one more unless val is a power of two
    return ldexp(1.0, e) == val ? e : e + 1;
}

// The shared exponent of a block with amax (pp_amax_step's fold from 0) under rule r: the raw
// exponent clamped to [−127, 127]; −127 for amax 0; PP_MX_NAN_EXP for NaN (a non-finite block).
// Rule ocp is pp_mx_shared_exp(amax, emax of f).
PP_HD static inline int pp_mx_rule_exp(pp_mx_rule r, double amax, pp_format_id f)
{
    if (isnan(amax))
        return PP_MX_NAN_EXP;
    if (amax == 0)
        return -127;
    int e = pp_mx_raw_exp(r, amax, f);
    return e < -127 ? -127 : e > 127 ? 127 : e;
}

// Whether a block's exponent hit E8M0's limits (range diagnostics): a NaN block, or a non-zero
// amax whose raw exponent was clamped.
PP_HD static inline int pp_mx_rule_clamped(pp_mx_rule r, double amax, pp_format_id f)
{
    if (isnan(amax))
        return 1;
    return amax > 0 && pp_mx_raw_exp(r, amax, f) != pp_mx_rule_exp(r, amax, f);
}

// X = 2^e as a binary64 (NaN for PP_MX_NAN_EXP).
PP_HD static inline double pp_mx_scale(int e)
{
    return e == PP_MX_NAN_EXP ? pp_f64_from_bits(PP_F64_QNAN) : pp_f64_from_bits(pp_pow2_bits_(e));
}

// P = RN_f,sat(V / 2^e) in mode (| PP_RND_SAT added); a NaN-scale block gives round(V), as the
// spec leaves P free there (X·P is NaN). V / 2^e is exact for binary32 V (≥ 2^−149 times
// 2^−127 stays normal in binary64).
PP_HD static inline double pp_mx_quantise(pp_format_id f, double v, int e, pp_rounding mode, uint32_t rbits)
{
    double inv = pp_f64_from_bits(pp_pow2_bits_(e == PP_MX_NAN_EXP ? 0 : -e));
    return pp_round(f, v * inv, (pp_rounding)(mode | PP_RND_SAT), rbits);
}

// P under rule r (round to nearest even, saturating): ocp pp_mx_quantise; te RN_F,sat(RN_32(V·X_rcp))
// with X_rcp = 2^−e, or 1 for e = −127 (TE's exp2f_rcp of the byte 0, see above). A NaN-scale
// block as pp_mx_quantise.
PP_HD static inline double pp_mx_rule_quantise(pp_mx_rule r, pp_format_id f, double v, int e)
{
    if (r == PP_MX_RULE_OCP || e == PP_MX_NAN_EXP)
        return pp_mx_quantise(f, v, e, PP_RND_NE, 0);
    double rcp = e == -127 ? 1.0 : pp_f64_from_bits(pp_pow2_bits_(-e));
    return pp_round(f, pp_round(PP_FMT_FP32, v * rcp, PP_RND_NE, 0), (pp_rounding)(PP_RND_NE | PP_RND_SAT), 0);
}

// Per-tensor current scale s = RN_32(max_finite(f) / amax) (TE's `scale`, which multiplies the
// elements); 1 when amax is 0; FLT_MAX when the quotient overflows binary32; NaN when the tensor
// holds NaN or ±Inf (amax NaN from pp_amax_step).
PP_HD static inline double pp_tensor_scale(pp_format_id f, double amax)
{
    if (amax == 0)
        return 1.0;
    if (isnan(amax))
        return amax;
    double s = pp_round(PP_FMT_FP32, pp_format_get(f).max_finite / amax, PP_RND_NE, 0);
    return s > 3.4028234663852886e38 ? 3.4028234663852886e38 : s;
}

// X = RN_32(1/s): the dequantisation factor (TE's `scale_inv`) of a per-tensor scale s.
PP_HD static inline double pp_tensor_scale_inv(double s)
{
    return pp_round(PP_FMT_FP32, 1.0 / s, PP_RND_NE, 0);
}

// P = RN_f,sat(RN_32(V·s)) for the per-tensor scale s (TE's cast: the product in binary32, then
// the saturating conversion). V·s is exact in binary64 (two binary32 values).
PP_HD static inline double pp_tensor_quantise(pp_format_id f, double v, double s)
{
    return pp_round(f, pp_round(PP_FMT_FP32, v * s, PP_RND_NE, 0), (pp_rounding)(PP_RND_NE | PP_RND_SAT), 0);
}

// NVFP4's global scale g = RN_32(amax / 2688) (2688 = 6·448); 1 when amax is 0.
PP_HD static inline double pp_nvfp4_global(double amax)
{
    if (amax == 0)
        return 1.0;
    return pp_round(PP_FMT_FP32, amax / 2688.0, PP_RND_NE, 0);
}

// NVFP4's block scale s = RN_e4m3,sat(block_amax / (6·g)); 6·g exact.
PP_HD static inline double pp_nvfp4_block_scale(double block_amax, double g)
{
    return pp_round(PP_FMT_E4M3, block_amax / (6.0 * g), (pp_rounding)(PP_RND_NE | PP_RND_SAT), 0);
}

// P = RN_e2m1,sat(V / (s·g)); 0 when s is 0 (the block has no scale to divide by).
PP_HD static inline double pp_nvfp4_quantise(double v, double s, double g)
{
    if (s == 0)
        return 0.0;
    return pp_round(PP_FMT_E2M1, v / (s * g), (pp_rounding)(PP_RND_NE | PP_RND_SAT), 0);
}

// ---- per-tensor delayed scaling: TransformerEngine's DelayedScaling recipe
// Sources: NVIDIA/TransformerEngine @799cf76 transformer_engine/common/recipe/__init__.py, class
// DelayedScaling (margin, amax_history_len, amax_compute_algo "max" | "most_recent"; "scale =
// (FP8_MAX / amax) / 2^margin"), and @6b71a0a transformer_engine/common/recipe/delayed_scaling.cu,
// amax_and_scale_update_impl::kernel (history[0] is the most recent amax; "max" takes fmaxf over
// the whole window, "most_recent" history[0]; scaled_max = fp8_max·2^−margin in binary32;
// scale = scaled_max / amax when amax is finite and > 0, else the previous scale; an infinite
// scale becomes FLT_MAX; scale_inv = 1 / scale), and the FP8 cast that multiplies by the scale:
//   s = RN_32(RN_32(max_finite(F)·2^−margin) / amax),  P = RN_F,sat(RN_32(V·s)),
//   the GEMM's dequantisation factor X = RN_32(1/s)  (as tensor-current's, with another amax).
// With no previous step here, "the previous scale" is 1.
typedef enum pp_amax_algo {
    PP_AMAX_MAX = 0,      // the largest amax of the window
    PP_AMAX_MOST_RECENT   // history[0]
} pp_amax_algo;

// What the recipe knows of each GEMM operand (A, B) before this step.
typedef struct pp_delayed_recipe {
    const double *history[2];  // history[t][0] the most recent amax, as TE stores the window
    int len[2];                // ≥ 1
    pp_amax_algo algo;
    int margin;                // TE's margin: the scale leaves 2^margin of headroom
} pp_delayed_recipe;

// The amax the recipe uses: max over history[0..n) (NaN entries skipped, as fmaxf does) or
// history[0].
PP_HD static inline double pp_delayed_amax(const double *history, int n, pp_amax_algo algo)
{
    if (algo == PP_AMAX_MOST_RECENT)
        return history[0];
    double amax = 0;
    for (int i = 0; i < n; i++)
        amax = history[i] > amax ? history[i] : amax;
    return amax;
}

// s = RN_32(RN_32(max_finite(f)·2^−margin) / amax); 1 for amax 0, NaN or ±Inf; FLT_MAX when the
// quotient overflows binary32.
PP_HD static inline double pp_delayed_scale(pp_format_id f, double amax, int margin)
{
    if (!(amax > 0) || !(amax <= 1.7976931348623157e308))
        return 1.0;
    double scaled_max = pp_round(PP_FMT_FP32, ldexp(pp_format_get(f).max_finite, -margin), PP_RND_NE, 0);
    double s = pp_round(PP_FMT_FP32, scaled_max / amax, PP_RND_NE, 0);
    return s > 3.4028234663852886e38 ? 3.4028234663852886e38 : s;
}

// P = RN_f,sat(RN_32(V·s)) (TE's cast: the product in binary32, then the saturating cast; the
// same cast as tensor-current's).
PP_HD static inline double pp_delayed_quantise(pp_format_id f, double v, double s)
{
    return pp_tensor_quantise(f, v, s);
}

#endif
