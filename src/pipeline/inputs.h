// inputs.h — filling input tensors with bit-reproducible random values: element i of input t
// under seed s is a pure function of (s, t, i) (kernels/philox.h), drawn in binary64 and then
// rounded to the tensor's format, so every backend and the reference see the same values.
#ifndef PP_INPUTS_H
#define PP_INPUTS_H

#include <stdint.h>

#include "error.h"
#include "core/tensor.h"

typedef enum pp_dist_kind {
    PP_DIST_NORMAL = 0,  // mean + std·Z, Z standard normal (kernels/random_dist.h)
    PP_DIST_UNIFORM      // low + (high − low)·U, U uniform on the grid {k·2^-53} in [0, 1)
} pp_dist_kind;

#define PP_DIST_MAX_AXIS_SCALE 256

// A distribution. NORMAL reads mean and std; UNIFORM reads low and high; the other pair is
// ignored. With n_axis_scale > 0, the value of an element whose index along dimension axis is j
// is multiplied by axis_scale[j] (e.g. some attention heads with far larger scores than others:
// axis 2 of q [b, s, h, d]); n_axis_scale must then equal the tensor's extent along axis.
typedef struct pp_dist {
    pp_dist_kind kind;
    double mean, std;
    double low, high;
    int axis;
    int n_axis_scale;
    double axis_scale[PP_DIST_MAX_AXIS_SCALE];
} pp_dist;

// Checks that d describes a distribution: kind is known; NORMAL: mean and std finite, std >= 0;
// UNIFORM: low and high finite, low <= high.
// @param [in]  d    the distribution (NULL is rejected)
// @param [out] err  set on failure (may be NULL)
// Returns PP_OK or PP_ERR_INPUT.
int pp_dist_check(const pp_dist *d, pp_error *err);

// x = the unrounded binary64 value of element i of input tensor_id under seed:
//   NORMAL:  RN(mean + RN(std · pp_rand_normal(seed, tensor_id, i)))
//   UNIFORM: RN(low + RN(RN(high − low) · U)), U = pp_rand_uniform01(seed, tensor_id, i),
//            clamped to [low, high] (rounding can reach high, never pass it); when high − low
//            overflows, 2·(low/2 + (high/2 − low/2)·U) instead.
// @param [in] d  a distribution that passes pp_dist_check
// @param [in] i  the flat row-major index, 0 <= i (< PP_MAX_NUMEL for a tensor)
// A pure function: element i can be computed alone, in any order, on any machine.
double pp_inputs_element(const pp_dist *d, uint64_t seed, uint32_t tensor_id, int64_t i);

// Fills every element of t: t->data[i] = pp_round(t->format, x, PP_RND_NE, 0) with
// x = pp_inputs_element(d, seed, tensor_id, i), times RN(axis_scale[j]·x) when d has an axis scale
// (j = i's index along d->axis). Large tensors are filled by several threads; the values do not
// depend on how many.
// @param [in,out] t    an allocated tensor (pp_tensor_alloc); its shape and format are kept
// @param [in]     d    the distribution
// @param [out]    err  set on failure (may be NULL)
// Returns PP_OK or PP_ERR_INPUT (NULL t or d, numel > 0 with NULL data, unknown format, a
// distribution pp_dist_check rejects, or an axis scale that does not fit t's shape); t is
// untouched on failure. If a thread cannot start,
// the calling thread does its share: the result is the same.
// Bound: |t->data[i] − x_i| ≤ ½ ulp_format(t->data[i]) for finite, non-overflowing x_i.
int pp_inputs_fill(pp_tensor *t, const pp_dist *d, uint64_t seed, uint32_t tensor_id, pp_error *err);

#endif
