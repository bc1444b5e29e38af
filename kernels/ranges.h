// ranges.h — range diagnostics of the rounding sites (kernels/sites.h): per site and head, what
// the values a variant stored there look like against the format they were stored in. The
// kernels call pp_range_note at each site with the value before the site's rounding and the
// value it stored; a NULL accumulator makes every call one pointer test, and a note only reads
// values, so recording never changes an output bit. C11 and nvcc (PP_HD); the CPU device gives
// each worker its own accumulator and merges them (pp_ranges_merge): every counter is a count,
// a max or a min, so the merge is exact and the result independent of the thread count.
//
// Counters of one cell (one site, one head), over the values x stored there, e the value before
// the site's rounding (the exact value when the rounding is the site's only operation), F the
// site's format:
//   count      values noted
//   amax       max |x| over x not NaN (±Inf counts as Inf); 0 when none
//   min_nz     min |x| over x ≠ 0 not NaN; +Inf when none
//   nan        x is NaN
//   inf        x is ±Inf
//   overflow   x is ±Inf and e is finite: the site's rounding (or its operation) overflowed here,
//              rather than passing on an Inf that came in (chains: pp_range_note_chain)
//   underflow  x = ±0 and e ≠ 0 (not NaN): a non-zero value flushed to zero
//   subnormal  x finite, non-zero, |x| < 2^emin(F)
//   near_max   x finite, |x| ≥ max_finite(F)/2: within a factor 2 of F's largest value
//              (the headroom fraction is near_max/count)
//   clamped    scale sites only (gemm block_scale_*): scales that hit their format's limits
#ifndef PP_RANGES_H
#define PP_RANGES_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "format.h"
#include "pp_hd.h"
#include "sites.h"

typedef struct pp_range_cell {
    double amax, min_nz;
    int64_t count, nan, inf, overflow, underflow, subnormal, near_max, clamped;
} pp_range_cell;

// One run's accumulator: cells[site·heads + head]; fmt[site] the format the site's notes were
// taken in (−1: none yet).
typedef struct pp_ranges {
    pp_range_cell *cells;
    int64_t heads;
    signed char fmt[PP_SITE_COUNT];
} pp_ranges;

PP_HD static inline void pp_range_cell_clear(pp_range_cell *c)
{
    c->amax = 0.0;
    c->min_nz = (double)INFINITY;
    c->count = c->nan = c->inf = c->overflow = c->underflow = c->subnormal = c->near_max = c->clamped = 0;
}

// Clears R: heads cells per site in cells (PP_SITE_COUNT·heads of them, the caller's memory).
PP_HD static inline void pp_ranges_init(pp_ranges *R, pp_range_cell *cells, int64_t heads)
{
    R->cells = cells;
    R->heads = heads;
    for (int s = 0; s < PP_SITE_COUNT; s++) {
        R->fmt[s] = -1;
        for (int64_t h = 0; h < heads; h++)
            pp_range_cell_clear(&cells[s * heads + h]);
    }
}

// One value: e before the site's rounding, x as stored (binary64 holds every value of F and of
// binary32 exactly). A head outside [0, heads) is noted nowhere.
PP_HD static inline void pp_range_note(pp_ranges *R, int site, int64_t head, pp_format_id f, double e, double x)
{
    if (!R || head < 0 || head >= R->heads)
        return;
    pp_range_cell *c = &R->cells[site * R->heads + head];
    R->fmt[site] = (signed char)f;
    c->count++;
    if (x != x) {
        c->nan++;
        return;
    }
    double a = fabs(x);
    c->amax = a > c->amax ? a : c->amax;
    if (a != 0.0 && a < c->min_nz)
        c->min_nz = a;
    if (isinf(a)) {
        c->inf++;
        c->overflow += !isinf(e);
        return;
    }
    if (a == 0.0) {
        c->underflow += e != 0.0 && e == e;
        return;
    }
    pp_format F = pp_format_get(f);
    c->subnormal += a < ldexp(1.0, F.emin);
    c->near_max += a >= 0.5 * F.max_finite;
}

// A value stored as it was computed (no rounding at the site itself, or one whose input is the
// value itself): e = x.
PP_HD static inline void pp_range_note1(pp_ranges *R, int site, int64_t head, pp_format_id f, double x)
{
    pp_range_note(R, site, head, f, x, x);
}

// The end of a reduction chain acc whose every step rounds into F: an ±Inf accumulator is an
// overflow inside the chain when every operand was finite (operands_finite), else a passed-on Inf.
PP_HD static inline void pp_range_note_chain(pp_ranges *R, int site, int64_t head, pp_format_id f, double acc,
                                             int operands_finite)
{
    pp_range_note(R, site, head, f, isinf(acc) && operands_finite ? 0.0 : acc, acc);
}

// A scale that hit its format's limits (gemm block scales): counted once per block.
PP_HD static inline void pp_range_note_clamp(pp_ranges *R, int site, int64_t head)
{
    if (R && head >= 0 && head < R->heads)
        R->cells[site * R->heads + head].clamped++;
}

// dst ← dst ∪ src, cell by cell (same heads). Exact and order-independent.
static inline void pp_range_cell_merge(pp_range_cell *d, const pp_range_cell *s)
{
    d->amax = s->amax > d->amax ? s->amax : d->amax;
    d->min_nz = s->min_nz < d->min_nz ? s->min_nz : d->min_nz;
    d->count += s->count, d->nan += s->nan, d->inf += s->inf, d->overflow += s->overflow;
    d->underflow += s->underflow, d->subnormal += s->subnormal, d->near_max += s->near_max;
    d->clamped += s->clamped;
}

static inline void pp_ranges_merge(pp_ranges *dst, const pp_ranges *src)
{
    for (int s = 0; s < PP_SITE_COUNT; s++) {
        if (dst->fmt[s] < 0)
            dst->fmt[s] = src->fmt[s];
        for (int64_t h = 0; h < dst->heads && h < src->heads; h++)
            pp_range_cell_merge(&dst->cells[s * dst->heads + h], &src->cells[s * src->heads + h]);
    }
}

// ---------------------------------------------------------------------------------------------
// Host devices: one accumulator per worker (a worker's tasks run one after another, so its notes
// need no lock), merged into the run's when the workers are done. Host only.

// n accumulators shaped like `like` (its heads), cleared, in one allocation; NULL when like is
// NULL or memory runs out.
static inline pp_ranges *pp_ranges_workers(const pp_ranges *like, int n)
{
    if (!like || n < 1)
        return (pp_ranges *)0;
    size_t per = (size_t)PP_SITE_COUNT * (size_t)like->heads;
    pp_ranges *w = (pp_ranges *)malloc((size_t)n * sizeof *w + (size_t)n * per * sizeof(pp_range_cell));
    if (!w)
        return w;
    pp_range_cell *cells = (pp_range_cell *)(void *)(w + n);
    for (int i = 0; i < n; i++)
        pp_ranges_init(&w[i], cells + (size_t)i * per, like->heads);
    return w;
}

// Merges the n workers' accumulators w into dst (when both are set) and frees w.
static inline void pp_ranges_workers_done(pp_ranges *dst, pp_ranges *w, int n)
{
    for (int i = 0; dst && w && i < n; i++)
        pp_ranges_merge(dst, &w[i]);
    free(w);
}

#endif
