// attention_ref_lanes.h — the attention reference's vector paths (attention_ref_lanes.c): the two
// loops that carry its work, Dot2 over keys and the split accumulation over d, in AVX-512 (8
// lanes) or AVX2 (4 lanes), chosen at run time. Each lane runs the scalar path's IEEE operations
// in the scalar path's order on its own chain, so the values are the scalar path's, bit for bit
// (PROOFS.md#attention, "Vector paths"). Not a public interface.
#ifndef PP_ATTENTION_REF_LANES_H
#define PP_ATTENTION_REF_LANES_H

#include <stdint.h>

#include "attention_ref_types.h"

// Keys per transposed block: kt[l·8 + m] is element l of key m of the block.
#define PP_ATTN_KEY_BLOCK 8

typedef struct pp_attn_lanes_ {
    const char *name;
    // Dot2 of x (d values) with the 16 keys of two transposed blocks kt0, kt1: for each key, the
    // TwoSum chain h, its recursive error sum c, and T = Σ|x·y|, over l = 0…d−1 in order — the
    // scalar dot2x4's chain per key. Results for key m of kt0 at [m], of kt1 at [8 + m].
    void (*dot2_keys16)(const double *x, const double *kt0, const double *kt1, int64_t d,
                        double h[16], double c[16], double T[16]);
    // (h, lo)[l] += (xh + xl)·y[l] for l < d: the scalar acc_split, element by element.
    void (*acc_split)(double *restrict h, double *restrict lo, const double *restrict y, int64_t d,
                      double xh, double xl);
} pp_attn_lanes_;

// The widest vector path this CPU runs within the choice; NULL for the portable loops (chosen, or
// no vector path runs here).
const pp_attn_lanes_ *pp_attn_lanes_pick_(pp_attn_ref_lanes choice);

// "avx512", "avx2" or "portable" (for NULL).
const char *pp_attn_lanes_name_(const pp_attn_lanes_ *lanes);

#endif
