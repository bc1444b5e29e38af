// view.h — index views for comparisons: a group of output tensors gathered into the one tensor a
// user's own test compares, so reported indices read as that test prints them (TE's CP test).
#ifndef PP_VIEW_H
#define PP_VIEW_H

#include "error.h"
#include "core/tensor.h"

typedef enum pp_view_kind {
    PP_VIEW_WHOLE = 0,   // the tensors as they are; a group of several is concatenated along dim 0
    PP_VIEW_TE_CP_RANK   // only the tokens one context-parallel rank holds, in TE's test layout
} pp_view_kind;

typedef struct pp_view {
    pp_view_kind kind;
    int rank;            // PP_VIEW_TE_CP_RANK: the rank R
    int world;           // PP_VIEW_TE_CP_RANK: the world size W; 0 = take it from the variants
} pp_view;

// Parses "" (whole), "te-cp-rank:R" or "te-cp-rank:R/W". Returns 0, or -1 with a one-line reason
// in msg.
int pp_view_parse(const char *text, pp_view *v, char *msg, size_t n);

// Gathers tensors ts[0..n) as seen through view v into out (allocated here; free it).
// PP_VIEW_WHOLE: one tensor is copied; several are concatenated along dim 0, which needs equal
// extents in the other dims.
// PP_VIEW_TE_CP_RANK with world W: each tensor is [b, S, H, d] with S divisible by 2W; the
// sequence is cut into 2W chunks of c = S/(2W) tokens and rank R holds chunks R and 2W−1−R
// (TE's load-balanced causal split). One tensor gives [b, 2, c, H·d] (TE's test sees the
// attention output as [b, S, h·d]); several give each [b, 2, c, H, d] concatenated along dim 0
// (TE's gradients: cat(dq, dk, dv) is [3b, 2, c, h, d]), which needs equal H and d.
// Every tensor must have the same format. Returns PP_OK, or PP_ERR_INPUT with what is wrong
// (prefixed by what), PP_ERR_RUNTIME when out of memory.
int pp_view_gather(const pp_view *v, const pp_tensor *const *ts, int n, pp_tensor *out, const char *what,
                   pp_error *err);

#endif
