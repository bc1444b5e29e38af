// tensor.c — allocation, shapes and index printing for pp_tensor.
#include "core/tensor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pp_shape_numel(int ndim, const int64_t *shape, int64_t *numel, pp_error *err)
{
    if (ndim < 0 || ndim > PP_MAX_DIMS)
        return pp_fail(err, PP_ERR_INPUT, "tensor has %d dimensions; at most %d are supported", ndim,
                       PP_MAX_DIMS);
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            return pp_fail(err, PP_ERR_INPUT, "tensor extent %lld in dimension %d is negative",
                           (long long)shape[i], i);
        if (shape[i] != 0 && n > PP_MAX_NUMEL / shape[i])
            return pp_fail(err, PP_ERR_INPUT, "tensor shape is absurd: more than 2^40 elements");
        n *= shape[i];
    }
    *numel = n;
    return PP_OK;
}

int pp_tensor_alloc(pp_tensor *t, int ndim, const int64_t *shape, pp_format_id format, pp_error *err)
{
    memset(t, 0, sizeof *t);
    int64_t n;
    int rc = pp_shape_numel(ndim, shape, &n, err);
    if (rc)
        return rc;
    t->data = calloc(n ? (size_t)n : 1, sizeof(double));
    if (!t->data)
        return pp_fail(err, PP_ERR_RUNTIME, "out of memory allocating %lld values", (long long)n);
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++)
        t->shape[i] = shape[i];
    t->numel = n;
    t->format = format;
    return PP_OK;
}

void pp_tensor_free(pp_tensor *t)
{
    free(t->data);
    memset(t, 0, sizeof *t);
}

static void tuple_str(int ndim, const int64_t *v, char *buf, size_t n)
{
    size_t at = 0;
    at += (size_t)snprintf(buf, n, "(");
    for (int i = 0; i < ndim && at < n; i++)
        at += (size_t)snprintf(buf + at, n - at, i ? ", %lld" : "%lld", (long long)v[i]);
    if (at < n)
        snprintf(buf + at, n - at, ndim == 1 ? ",)" : ")");
}

void pp_shape_str(int ndim, const int64_t *shape, char *buf, size_t n)
{
    tuple_str(ndim, shape, buf, n);
}

void pp_index_str(int ndim, const int64_t *shape, int64_t i, char *buf, size_t n)
{
    int64_t idx[PP_MAX_DIMS] = {0};
    for (int d = ndim - 1; d >= 0; d--) {
        if (shape[d] > 0) {
            idx[d] = i % shape[d];
            i /= shape[d];
        }
    }
    tuple_str(ndim, idx, buf, n);
}

int pp_format_from_name(const char *name, pp_format_id *f)
{
    static const struct {
        const char *alias;
        pp_format_id id;
    } aliases[] = {
        {"float64", PP_FMT_FP64}, {"double", PP_FMT_FP64},  {"float32", PP_FMT_FP32},
        {"float", PP_FMT_FP32},   {"float16", PP_FMT_FP16}, {"half", PP_FMT_FP16},
        {"bfloat16", PP_FMT_BF16}, {"float8_e4m3fn", PP_FMT_E4M3}, {"float8_e5m2", PP_FMT_E5M2},
        {"e4m3fn", PP_FMT_E4M3},   {"float8_e8m0fnu", PP_FMT_E8M0}, {"float4_e2m1fn", PP_FMT_E2M1},
        {"float6_e2m3fn", PP_FMT_E2M3}, {"float6_e3m2fn", PP_FMT_E3M2},  // torch / ml_dtypes names
    };
    // torch's own spelling of a dtype ("torch.bfloat16", what str(t.dtype) prints) names the
    // same format as the bare name, so a user can paste it from Python.
    if (strncmp(name, "torch.", 6) == 0) {
        name += 6;
        int known = 0;
        for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
            known |= strcmp(name, aliases[i].alias) == 0;
        if (!known)
            return -1;  // "torch.bf16" is no torch dtype
    }
    for (int i = 0; i < PP_FMT_COUNT; i++) {
        if (strcmp(name, pp_format_get((pp_format_id)i).name) == 0) {
            *f = (pp_format_id)i;
            return 0;
        }
    }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
        if (strcmp(name, aliases[i].alias) == 0) {
            *f = aliases[i].id;
            return 0;
        }
    }
    return -1;
}

int pp_tensor_check_format(const pp_tensor *t, pp_format_id f, const char *what, pp_error *err)
{
    for (int64_t i = 0; i < t->numel; i++) {
        if (!pp_is_representable(f, t->data[i])) {
            char idx[160];
            pp_index_str(t->ndim, t->shape, i, idx, sizeof idx);
            return pp_fail(err, PP_ERR_INPUT, "%s: value %.17g at index %s is not a %s value", what,
                           t->data[i], idx, pp_format_get(f).name);
        }
    }
    return PP_OK;
}

int pp_tensor_has_shape(const pp_tensor *t, int ndim, const int64_t *shape)
{
    if (t->ndim != ndim)
        return 0;
    for (int d = 0; d < ndim; d++)
        if (t->shape[d] != shape[d])
            return 0;
    return 1;
}
