// cast.h — a tensor's values rounded into a format, and their storage codes: what
// `precprobe cast` computes (the rounding itself is kernels/format.h's pp_round).
#ifndef PP_CAST_H
#define PP_CAST_H

#include <stdint.h>

#include "error.h"
#include "format.h"
#include "scaling.h"
#include "core/tensor.h"

typedef struct pp_cast_opts {
    pp_format_id to;     // the target format
    pp_rounding mode;    // PP_RND_NE, PP_RND_TZ or PP_RND_SR (no flag bits)
    int saturate;        // 1: PP_RND_SAT (TransformerEngine); 0: torch's casts (no saturation)
    uint64_t seed;       // PP_RND_SR only: element i's bits are the first word of Philox draw 0
                         // of (seed, tensor 0, i), so a cast is reproducible and independent of
                         // the element order
    pp_mx_rule mx_rule;  // MX block scaling: OCP's exponent (PP_MX_RULE_OCP, 0, the default) or
                         // TransformerEngine's round-up rule (kernels/scaling.h pp_mx_rule)
} pp_cast_opts;

// The 32 random bits element i gets under PP_RND_SR.
uint32_t pp_cast_rbits(uint64_t seed, int64_t i);

// out gets in's shape and, element by element, pp_round(o->to, in->data[i], mode[|SAT], rbits_i).
// out->format is o->to. Returns PP_OK, PP_ERR_INPUT (unknown format or mode) or PP_ERR_RUNTIME
// (out of memory); on failure out is zeroed.
int pp_cast_tensor(const pp_tensor *in, const pp_cast_opts *o, pp_tensor *out, pp_error *err);

// codes[i] = pp_encode(t->format, t->data[i]) for a format of at most 8 bits: the storage code in
// the low storage_bits bits of a byte (E2M1: bit 3 the sign; E2M3, E3M2: bit 5; E8M0: no sign).
// A format without NaN (FP4, FP6) codes NaN as ±max_finite (the NaN's sign), as pp_encode does.
// Returns PP_OK, or PP_ERR_INPUT when the format is wider than 8 bits.
int pp_cast_codes(const pp_tensor *t, uint8_t *codes, pp_error *err);

// MX block scaling (OCP MX v1.0 §6.3): along the last dimension, blocks of `block` consecutive
// elements (the last block of a row may be shorter) share one E8M0 scale
// X = 2^(floor(log2(amax)) − emax_elem), the exponent clamped to E8M0's [−127, 127] (amax 0
// gives 2^−127); each element becomes P = round(V / X) in o->to (V / X is exact), saturated to
// ±max_finite as the spec's conversion clamps, in o->mode (o->saturate is ignored). A block
// holding NaN or ±Inf gets the NaN scale (0xFF) and its elements round(V) (X·P is then NaN).
// o->mx_rule PP_MX_RULE_TE: TransformerEngine's exponent instead, ceil(log2(RN_32(amax ·
// RN_32(1/max_finite)))) (pp_mx_rule_exp: the block's largest element never saturates) and its
// P = RN_F,sat(RN_32(V·2^−e)) (pp_mx_rule_quantise); nearest-even only.
// @param [out] elems   in's shape, format o->to: the P values
// @param [out] scales  in's shape with the last extent ceil(extent/block), format E8M0: the X
//                      values (NaN for the NaN scale); a 0-d tensor is one block of one.
// Returns PP_OK, PP_ERR_INPUT (o->to is not an OCP MX element format: e4m3 e5m2 e2m1 e2m3 e3m2;
// block < 1) or PP_ERR_RUNTIME (out of memory); on failure both are zeroed.
int pp_cast_mx(const pp_tensor *in, const pp_cast_opts *o, int block, pp_tensor *elems,
               pp_tensor *scales, pp_error *err);

// Per-tensor current scaling and NVFP4 (kernels/scaling.h defines both; nearest-even only):
//   PP_SCALING_TENSOR: o->to e4m3, e5m2 or e2m1 (as the scaled GEMM); s = pp_tensor_scale(to, amax of the whole tensor),
//       P = pp_tensor_quantise(to, V, s); *global = X = pp_tensor_scale_inv(s) (TE's scale_inv: V ≈ X·P),
//       scales left zeroed (no blocks).
//   PP_SCALING_NVFP4: o->to e2m1; g = pp_nvfp4_global(amax of the whole tensor), per block of
//       PP_NVFP4_BLOCK along the last dimension s = pp_nvfp4_block_scale(block amax, g),
//       P = pp_nvfp4_quantise(V, s, g); *global = g, scales the s values (format E4M3, in's shape
//       with the last extent ceil(extent/16)).
// A NaN or ±Inf in the tensor makes X (g) NaN, as in the scaled GEMM.
// Returns PP_OK, PP_ERR_INPUT (another scaling, a format the scheme does not store, a rounding
// mode other than PP_RND_NE) or PP_ERR_RUNTIME (out of memory); on failure both are zeroed.
int pp_cast_scaled(const pp_tensor *in, const pp_cast_opts *o, pp_scaling scheme, pp_tensor *elems,
                   pp_tensor *scales, double *global, pp_error *err);

// FP4 nibble packing, as torch's float4_e2m1fn_x2 stores two e2m1 codes per byte
// (pytorch/pytorch torch/headeronly/util/Float4_e2m1fn_x2.h, commit f34fa15, the header comment:
// "val1 : val0" in bits "7654 : 3210"): along each row of `cols` codes, element 2j goes to bits
// 3..0 of byte j and element 2j+1 to bits 7..4; a row of odd length ends with a zero high
// nibble (+0). packed holds rows·ceil(cols/2) bytes; codes are 4-bit (pp_cast_codes of e2m1).
void pp_cast_pack_fp4(const uint8_t *codes, int64_t rows, int64_t cols, uint8_t *packed);

#endif
