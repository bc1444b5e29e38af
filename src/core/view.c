// view.c — gathering output tensors into the layout a user's own test compares (see view.h).
#include "core/view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pp_view_parse(const char *text, pp_view *v, char *msg, size_t n)
{
    memset(v, 0, sizeof *v);
    if (!text[0])
        return 0;
    static const char prefix[] = "te-cp-rank:";
    if (strncmp(text, prefix, sizeof prefix - 1)) {
        snprintf(msg, n, "unknown view '%s' (known: te-cp-rank:R, te-cp-rank:R/W)", text);
        return -1;
    }
    const char *p = text + sizeof prefix - 1;
    char *end;
    long r = strtol(p, &end, 10), w = 0;
    int ok = end != p && r >= 0 && r < 65536 && (p[0] >= '0' && p[0] <= '9');
    if (ok && *end == '/') {
        p = end + 1;
        w = strtol(p, &end, 10);
        ok = end != p && (p[0] >= '0' && p[0] <= '9') && w >= 1 && w < 65536 && r < w;
    }
    if (!ok || *end) {
        snprintf(msg, n, "view '%s' must be te-cp-rank:R or te-cp-rank:R/W with 0 <= R < W", text);
        return -1;
    }
    v->kind = PP_VIEW_TE_CP_RANK;
    v->rank = (int)r;
    v->world = (int)w;
    return 0;
}

static int same_tail(const pp_tensor *a, const pp_tensor *b, int from)
{
    if (a->ndim != b->ndim)
        return 0;
    for (int d = from; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d])
            return 0;
    return 1;
}

int pp_view_gather(const pp_view *v, const pp_tensor *const *ts, int n, pp_tensor *out, const char *what,
                   pp_error *err)
{
    memset(out, 0, sizeof *out);
    if (n < 1)
        return pp_fail(err, PP_ERR_INPUT, "%s: a view needs at least one tensor", what);
    for (int i = 1; i < n; i++)
        if (ts[i]->format != ts[0]->format)
            return pp_fail(err, PP_ERR_INPUT, "%s: the tensors of a group must have one format (%s and %s)", what,
                           pp_format_get(ts[0]->format).name, pp_format_get(ts[i]->format).name);
    int64_t shape[PP_MAX_DIMS];
    int ndim;
    if (v->kind == PP_VIEW_WHOLE) {
        for (int i = 1; i < n; i++)
            if (ts[i]->ndim < 1 || !same_tail(ts[0], ts[i], 1))
                return pp_fail(err, PP_ERR_INPUT, "%s: cannot concatenate tensors of different shapes", what);
        ndim = ts[0]->ndim;
        memcpy(shape, ts[0]->shape, sizeof shape);
        for (int i = 1; i < n; i++)
            shape[0] += ts[i]->shape[0];
        int rc = pp_tensor_alloc(out, ndim, shape, ts[0]->format, err);
        if (rc)
            return rc;
        int64_t at = 0;
        for (int i = 0; i < n; i++) {
            memcpy(out->data + at, ts[i]->data, (size_t)ts[i]->numel * sizeof(double));
            at += ts[i]->numel;
        }
        return PP_OK;
    }

    // te-cp-rank: [b, S, H, d] → rank R's chunks R and 2W−1−R, each c tokens
    int64_t W = v->world, R = v->rank;
    for (int i = 0; i < n; i++) {
        const pp_tensor *t = ts[i];
        if (t->ndim != 4)
            return pp_fail(err, PP_ERR_INPUT, "%s: view te-cp-rank needs [b, s, heads, d] tensors, not %d-D", what,
                           t->ndim);
        if (t->shape[1] % (2 * W))
            return pp_fail(err, PP_ERR_INPUT, "%s: view te-cp-rank: sequence length %lld is not divisible by 2*%lld",
                           what, (long long)t->shape[1], (long long)W);
        if (i && (t->shape[1] != ts[0]->shape[1] || t->shape[2] != ts[0]->shape[2] ||
                  t->shape[3] != ts[0]->shape[3]))
            return pp_fail(err, PP_ERR_INPUT,
                           "%s: view te-cp-rank: the tensors of a group need equal sequence, heads and head dim", what);
    }
    int64_t S = ts[0]->shape[1], H = ts[0]->shape[2], D = ts[0]->shape[3], c = S / (2 * W);
    int64_t b_total = 0;
    for (int i = 0; i < n; i++)
        b_total += ts[i]->shape[0];
    if (n == 1) {
        ndim = 4;
        shape[0] = b_total, shape[1] = 2, shape[2] = c, shape[3] = H * D;
    } else {
        ndim = 5;
        shape[0] = b_total, shape[1] = 2, shape[2] = c, shape[3] = H, shape[4] = D;
    }
    int rc = pp_tensor_alloc(out, ndim, shape, ts[0]->format, err);
    if (rc)
        return rc;
    const int64_t row = H * D;  // values per token
    double *dst = out->data;
    for (int i = 0; i < n; i++)
        for (int64_t b = 0; b < ts[i]->shape[0]; b++)
            for (int half = 0; half < 2; half++) {
                int64_t chunk = half == 0 ? R : 2 * W - 1 - R;
                const double *src = ts[i]->data + (b * S + chunk * c) * row;
                memcpy(dst, src, (size_t)(c * row) * sizeof(double));
                dst += c * row;
            }
    return PP_OK;
}
