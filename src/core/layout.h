// layout.h — a tensor's axes in another order: a file may hold attention's q as [b, h, s, d]
// (torch's scaled_dot_product_attention takes it so) where the operation reads [b, s, h, d].
// Axes are named by letters, one per dimension ("bshd"); a layout is an order of those letters.
#ifndef PP_LAYOUT_H
#define PP_LAYOUT_H

#include <stdint.h>

#include "error.h"
#include "core/tensor.h"

// Whether layout holds exactly the letters of axes, each once, in any order: 0, or -1.
// axes itself must hold distinct letters (at most PP_MAX_DIMS).
int pp_layout_check(const char *axes, const char *layout);

// The shape a tensor of shape[] (in axes order) has when held in layout order.
// @param [in]  axes, layout  as accepted by pp_layout_check
// @param [out] held          strlen(axes) extents
void pp_layout_shape(const char *axes, const char *layout, const int64_t *shape, int64_t *held);

// Transposes t, held in layout order, into axes order (new values, same format).
// @param [in,out] t  a tensor of strlen(layout) dimensions; replaced on success, untouched on failure
// Returns PP_OK, PP_ERR_INPUT (t's rank is not the layout's) or PP_ERR_RUNTIME (out of memory).
int pp_layout_to_axes(const char *axes, const char *layout, pp_tensor *t, pp_error *err);

#endif
