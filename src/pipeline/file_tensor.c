// file_tensor.c — reading a case's tensor from a file: format, shape, layout, rounding.
#include "pipeline/file_tensor.h"

#include <stdio.h>
#include <string.h>

#include "core/layout.h"
#include "io/tensor_io.h"

// " (layout = \"bhsd\"?)" when the file's shape is the op's with two axes swapped (the usual
// mistake: SDPA's [b, h, s, d] given for [b, s, h, d]), else nothing.
static void suggest_layout(const char *axes, int ndim, const int64_t *want, const int64_t *have, char *buf,
                           size_t n)
{
    for (int i = 0; i < ndim; i++) {
        for (int j = i + 1; j < ndim; j++) {
            if (want[i] == want[j])
                continue;  // swapping equal extents says nothing
            int same = 1;
            for (int d = 0; d < ndim && same; d++)
                same = have[d] == want[d == i ? j : d == j ? i : d];
            if (!same)
                continue;
            char lay[PP_MAX_DIMS + 1];
            memcpy(lay, axes, (size_t)ndim + 1);
            lay[i] = axes[j];
            lay[j] = axes[i];
            snprintf(buf, n, " (is it layout = \"%s\"?)", lay);
            return;
        }
    }
}

int pp_file_tensor_load(const pp_file_tensor *f, int ndim, const int64_t *shape, pp_tensor *t, pp_error *err)
{
    int rc = pp_tensor_load_as(f->spec, f->declared, t, err);
    if (rc)
        return rc;
    int transposed = f->layout && f->layout[0] && f->axes && strcmp(f->layout, f->axes);
    int64_t held[PP_MAX_DIMS];
    if (transposed)
        pp_layout_shape(f->axes, f->layout, shape, held);
    else
        memcpy(held, shape, sizeof(int64_t) * (size_t)ndim);
    if (!pp_tensor_has_shape(t, ndim, held)) {
        char have[200], want[200], as[64] = "";
        pp_shape_str(t->ndim, t->shape, have, sizeof have);
        pp_shape_str(ndim, held, want, sizeof want);
        if (transposed)
            snprintf(as, sizeof as, " (layout %s)", f->layout);
        else if (f->axes && (int)strlen(f->axes) == ndim && t->ndim == ndim)
            suggest_layout(f->axes, ndim, shape, t->shape, as, sizeof as);
        pp_fail(err, PP_ERR_INPUT, "%s has shape %s, but the case's [op] needs %s%s", f->what, have, want, as);
        pp_tensor_free(t);
        return PP_ERR_INPUT;
    }
    if (f->declared >= 0 && (rc = pp_tensor_check_format(t, (pp_format_id)f->declared, f->what, err))) {
        pp_tensor_free(t);
        return rc;
    }
    if (f->declared >= 0)
        t->format = (pp_format_id)f->declared;
    if (transposed && (rc = pp_layout_to_axes(f->axes, f->layout, t, err))) {
        pp_tensor_free(t);
        return rc;
    }
    return PP_OK;
}

int pp_file_tensor_to_format(pp_tensor *t, pp_format_id format, int round_nearest, const char *what,
                             pp_error *err)
{
    if (round_nearest) {
        for (int64_t i = 0; i < t->numel; i++)
            t->data[i] = pp_round(format, t->data[i], PP_RND_NE, 0);
    } else {
        // The variant computes in its storage format: the file's values must be values of it.
        int rc = pp_tensor_check_format(t, format, what, err);
        if (rc && err) {
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s (round = \"nearest\" rounds the file's values to it)", err->msg);
            memcpy(err->msg, msg, sizeof msg);
        }
        if (rc)
            return rc;
    }
    t->format = format;
    return PP_OK;
}
