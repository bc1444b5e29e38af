// layout.c — transposing a tensor from the axis order a file holds it in to the operation's.
#include "core/layout.h"

#include <string.h>

int pp_layout_check(const char *axes, const char *layout)
{
    size_t n = strlen(axes);
    if (n > PP_MAX_DIMS || strlen(layout) != n)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const char *at = strchr(layout, axes[i]);
        // each letter of axes once in layout: with equal lengths and distinct axes, that is all
        if (!at || strchr(at + 1, axes[i]))
            return -1;
    }
    return 0;
}

void pp_layout_shape(const char *axes, const char *layout, const int64_t *shape, int64_t *held)
{
    size_t n = strlen(layout);
    for (size_t j = 0; j < n; j++)
        held[j] = shape[strchr(axes, layout[j]) - axes];
}

int pp_layout_to_axes(const char *axes, const char *layout, pp_tensor *t, pp_error *err)
{
    int n = (int)strlen(axes);
    if (t->ndim != n || pp_layout_check(axes, layout))
        return pp_fail(err, PP_ERR_INPUT, "tensor of %d dimensions cannot be read as layout '%s'", t->ndim,
                       layout);
    // The stride of the held tensor along each of the operation's axes.
    int64_t held_stride[PP_MAX_DIMS], stride[PP_MAX_DIMS], shape[PP_MAX_DIMS];
    int64_t s = 1;
    for (int j = n - 1; j >= 0; j--) {
        held_stride[j] = s;
        s *= t->shape[j];
    }
    for (int d = 0; d < n; d++) {
        int j = (int)(strchr(layout, axes[d]) - layout);
        stride[d] = held_stride[j];
        shape[d] = t->shape[j];
    }
    pp_tensor out;
    int rc = pp_tensor_alloc(&out, n, shape, t->format, err);
    if (rc)
        return rc;
    int64_t idx[PP_MAX_DIMS] = {0}, from = 0;
    for (int64_t i = 0; i < out.numel; i++) {
        out.data[i] = t->data[from];
        // the next index in row-major order of the operation's axes, and where it lies in t
        for (int d = n - 1; d >= 0; d--) {
            if (++idx[d] < shape[d]) {
                from += stride[d];
                break;
            }
            from -= stride[d] * (shape[d] - 1);
            idx[d] = 0;
        }
    }
    pp_tensor_free(t);
    *t = out;
    return PP_OK;
}
