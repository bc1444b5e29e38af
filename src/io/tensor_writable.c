// tensor_writable.c — a tensor's shape, data and values checked against its format.
#include "io/tensor_writable.h"

#include <stdint.h>

int pp_tensor_check_writable(const char *path, const pp_tensor *t, pp_error *err)
{
    pp_error e2 = {0};
    int64_t numel;
    if ((int)t->format < 0 || t->format >= PP_FMT_COUNT)
        return pp_fail(err, PP_ERR_INPUT, "%s: tensor has no valid format", path);
    if (pp_shape_numel(t->ndim, t->shape, &numel, &e2))
        return pp_fail(err, PP_ERR_INPUT, "%s: %s", path, e2.msg);
    if (numel != t->numel || (numel > 0 && !t->data))
        return pp_fail(err, PP_ERR_INPUT, "%s: tensor's element count does not match its shape",
                       path);
    return pp_tensor_check_format(t, t->format, path, err);
}
