// axis_stats.c — per-position and per-(head, block) error of one comparison (see axis_stats.h).
#include "core/axis_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int64_t pp_axis_block_size(int64_t n_pos)
{
    int64_t b = PP_AXIS_BLOCK;
    if (n_pos > b * PP_AXIS_MAX_BLOCKS)
        b = (n_pos + PP_AXIS_MAX_BLOCKS - 1) / PP_AXIS_MAX_BLOCKS;
    return b;
}

void pp_axis_stats_free(pp_axis_stats *s)
{
    free(s->pos_max);
    free(s->pos_mean);
    free(s->head_block_max);
    memset(s, 0, sizeof *s);
    s->pos_dim = s->head_dim = -1;
}

int pp_axis_stats_alloc(pp_axis_stats *s, int64_t n_pos, int64_t n_heads, int64_t block, int64_t n_blocks)
{
    memset(s, 0, sizeof *s);
    s->pos_dim = s->head_dim = -1;
    if (n_pos < 1 || n_heads < 1 || block < 1 || n_blocks < 1 || n_blocks > PP_AXIS_MAX_BLOCKS ||
        n_blocks != (n_pos + block - 1) / block || n_pos > ((int64_t)1 << 40) || n_heads > ((int64_t)1 << 24))
        return -1;
    s->pos_max = malloc(sizeof(double) * (size_t)n_pos);
    s->pos_mean = malloc(sizeof(double) * (size_t)n_pos);
    s->head_block_max = malloc(sizeof(double) * (size_t)(n_heads * n_blocks));
    if (!s->pos_max || !s->pos_mean || !s->head_block_max) {
        pp_axis_stats_free(s);
        return -1;
    }
    s->n_pos = n_pos;
    s->n_heads = n_heads;
    s->block = block;
    s->n_blocks = n_blocks;
    return 0;
}

int pp_axis_stats_copy(pp_axis_stats *dst, const pp_axis_stats *src)
{
    if (!src->n_pos) {
        memset(dst, 0, sizeof *dst);
        dst->pos_dim = dst->head_dim = -1;
        return 0;
    }
    if (pp_axis_stats_alloc(dst, src->n_pos, src->n_heads, src->block, src->n_blocks))
        return -1;
    dst->pos_dim = src->pos_dim;
    dst->head_dim = src->head_dim;
    memcpy(dst->pos_max, src->pos_max, sizeof(double) * (size_t)src->n_pos);
    memcpy(dst->pos_mean, src->pos_mean, sizeof(double) * (size_t)src->n_pos);
    memcpy(dst->head_block_max, src->head_block_max, sizeof(double) * (size_t)(src->n_heads * src->n_blocks));
    return 0;
}

// The error of one pair as axis_stats.h defines it; *finite says whether it joins the means.
static double pair_error(double a, double e, int *finite)
{
    *finite = isfinite(a) && isfinite(e);
    if (*finite)
        return fabs(a - e);
    if (!isnan(a) && !isnan(e) && a == e)
        return 0.0;  // equal infinities: torch calls them close, so no error
    return INFINITY;
}

int pp_axis_stats_compute(pp_axis_stats *s, int ndim, const int64_t *shape, int pos_dim, int head_dim,
                          const double *actual, const double *expected)
{
    memset(s, 0, sizeof *s);
    s->pos_dim = s->head_dim = -1;
    if (pos_dim >= ndim || head_dim >= ndim || pos_dim < -1 || head_dim < -1 ||
        (pos_dim >= 0 && pos_dim == head_dim))
        return -1;
    // strides of the two axes in the row-major layout; a missing axis has extent 1
    int64_t numel = 1, stride[PP_MAX_DIMS];
    for (int d = ndim - 1; d >= 0; d--) {
        stride[d] = numel;
        numel *= shape[d];
    }
    int64_t P = pos_dim >= 0 ? shape[pos_dim] : 1, H = head_dim >= 0 ? shape[head_dim] : 1;
    if (P < 1 || H < 1 || numel < 1)
        return -1;
    int64_t block = pp_axis_block_size(P), B = (P + block - 1) / block;
    int64_t *count = calloc((size_t)P, sizeof *count);
    if (!count || pp_axis_stats_alloc(s, P, H, block, B)) {
        free(count);
        return -1;
    }
    s->pos_dim = pos_dim;
    s->head_dim = head_dim;
    for (int64_t p = 0; p < P; p++)
        s->pos_max[p] = s->pos_mean[p] = 0.0;  // pos_mean holds the sum until the end
    for (int64_t k = 0; k < H * B; k++)
        s->head_block_max[k] = 0.0;
    // i's position p = i / ps % P and head h = i / hs % H (a missing axis: stride numel, so
    // always 0), followed as i counts up (no division per element: ps_left / hs_left are the
    // elements left before p / h move on); the pairs are taken in i's order, so each position's
    // running sum adds its terms in the same order as before
    int64_t ps = pos_dim >= 0 ? stride[pos_dim] : numel, hs = head_dim >= 0 ? stride[head_dim] : numel;
    int64_t p = 0, h = 0, pb = 0, ps_left = ps, hs_left = hs;  // pb = p / block
    for (int64_t i = 0; i < numel; i++) {
        int finite;
        double err = pair_error(actual[i], expected[i], &finite);
        if (err > s->pos_max[p])
            s->pos_max[p] = err;
        double *hb = &s->head_block_max[h * B + pb];
        if (err > *hb)
            *hb = err;
        if (finite) {
            s->pos_mean[p] += err;  // a binary64 running sum: for plotting, not certified
            count[p]++;
        }
        if (--ps_left == 0) {
            ps_left = ps;
            p = p + 1 == P ? 0 : p + 1;
            pb = p / block;
        }
        if (--hs_left == 0) {
            hs_left = hs;
            h = h + 1 == H ? 0 : h + 1;
        }
    }
    for (int64_t k = 0; k < P; k++)
        s->pos_mean[k] = count[k] ? s->pos_mean[k] / (double)count[k] : NAN;
    free(count);
    return 0;
}
