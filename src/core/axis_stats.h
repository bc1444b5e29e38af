// axis_stats.h — |actual − expected| aggregated along an operation's sequence-position and head
// axes (max and mean per position, max per head × position block): the data behind the HTML
// report's position and head charts, computed while comparing and stored in report.h5.
#ifndef PP_AXIS_STATS_H
#define PP_AXIS_STATS_H

#include <stdint.h>

#include "core/tensor.h"

// Positions per head-strip block, and the most blocks a strip has (longer sequences get wider
// blocks, so the strip stays drawable and the file small).
#define PP_AXIS_BLOCK 64
#define PP_AXIS_MAX_BLOCKS 256

// Error per position and per (head, block). The error of a pair is |a − e| rounded once to
// binary64; a pair with a NaN operand, or with an infinite operand that the other does not
// equal, has error +Inf (counted in the maxima, left out of the means); equal infinities have
// error 0. A missing axis counts as one of extent 1 (n_pos or n_heads 1).
typedef struct pp_axis_stats {
    int64_t n_pos;          // P; 0: no statistics (the op declares no axes, or out of memory)
    int64_t n_heads;        // H
    int64_t block;          // positions per block
    int64_t n_blocks;       // B = ceil(P / block) <= PP_AXIS_MAX_BLOCKS
    int pos_dim, head_dim;  // the tensor dimensions used, -1: none
    double *pos_max;        // [P] max error over the pairs at position p
    double *pos_mean;       // [P] mean error over the finite pairs at p (NaN when none)
    double *head_block_max; // [H × B] row-major: max error over head h, positions of block b
} pp_axis_stats;

// The statistics of n pairs (actual[i], expected[i]) of a row-major tensor of shape
// shape[0..ndim), along dimension pos_dim (positions) and head_dim (heads); either may be -1.
// @param [out] s  zeroed first; holds owned arrays on success (free with pp_axis_stats_free)
// Returns 0, or -1 when out of memory or a dimension is out of range (s stays zeroed).
int pp_axis_stats_compute(pp_axis_stats *s, int ndim, const int64_t *shape, int pos_dim, int head_dim,
                          const double *actual, const double *expected);

// Allocates empty statistics of the given extents (for a reader filling them in).
// Returns 0, or -1 when out of memory or an extent is out of range.
int pp_axis_stats_alloc(pp_axis_stats *s, int64_t n_pos, int64_t n_heads, int64_t block, int64_t n_blocks);

// Positions per block for a sequence of n_pos: PP_AXIS_BLOCK, widened so that at most
// PP_AXIS_MAX_BLOCKS blocks cover it.
int64_t pp_axis_block_size(int64_t n_pos);

void pp_axis_stats_free(pp_axis_stats *s);

// A deep copy of src into dst (dst zeroed first). Returns 0, or -1 when out of memory.
int pp_axis_stats_copy(pp_axis_stats *dst, const pp_axis_stats *src);

#endif
