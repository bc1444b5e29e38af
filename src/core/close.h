// close.h — torch.testing.assert_close statistics over (actual, expected) pairs, bit for bit
// with the torch version named, plus richer error statistics; streaming and exactly mergeable.
#ifndef PP_CLOSE_H
#define PP_CLOSE_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"
#include "core/exactsum.h"

// The torch version whose semantics a comparison uses when none is named. Every 2.x from 2.1 on
// gives the same numbers and text here, so the first of them stands for all.
#define PP_TORCH_DEFAULT_MAJOR 2
#define PP_TORCH_DEFAULT_MINOR 1

typedef struct pp_close_opts {
    double rtol, atol;                            // >= 0, finite (torch rejects negative ones)
    int equal_nan;                                // NaN == NaN counts as close
    int torch_major, torch_minor;                 // torch version whose semantics to use (>= 1.10)
    pp_format_id actual_format, expected_format;  // the operands' dtypes
} pp_close_opts;

// ---------------------------------------------------------------------------------------------
// Formats, tolerances, versions

// torch.promote_types for the formats here: equal formats stay (tf32 becomes fp32: torch has no
// tf32 dtype, a tf32 result is an fp32 tensor); anything with fp64 gives fp64; otherwise the
// wider of the two, and bf16 with fp16 gives fp32. fp8 formats have no torch arithmetic
// (torch.promote_types refuses them; isclose upcasts): with each other, with themselves, or with
// fp16/bf16/fp32/tf32 they give fp32; with fp64, fp64. (Torch builds from 2025 on compare fp8
// tensors bitwise with a shorter message, pytorch PR #150002; that path is not emulated here.)
pp_format_id pp_common_format(pp_format_id a, pp_format_id b);

// torch's default tolerances (_DTYPE_PRECISIONS) for the two operands' formats: the larger rtol
// and the larger atol of the two. Per format: fp16 1e-3/1e-5, bf16 1.6e-2/1e-5, fp32 and tf32
// 1.3e-6/1e-5, fp64 1e-7/1e-7, fp8 0/0 (not in torch's table: equality).
void pp_default_tolerances(pp_format_id a, pp_format_id b, double *rtol, double *atol);

// Parses "MAJOR.MINOR[.PATCH][SUFFIX]" ("2.1", "1.13", "2.5.1", "2.3.0+cu121", "2.6.0a0",
// "2.4.0rc1", "2.5.0.dev20240801"). SUFFIX is '+' and anything, or a/b/rc followed by digits,
// or ".dev" followed by digits. Returns 0 and sets *major, *minor; -1 on anything else or a
// version below 1.10 (the first with torch.testing.assert_close).
int pp_parse_torch_version(const char *s, int *major, int *minor);

// 1 when the version computes in the operands' common dtype (torch >= 2.1), 0 when it promotes
// both operands to float64 first (1.10 to 2.0).
int pp_close_uses_common_dtype(const pp_close_opts *o);

// ---------------------------------------------------------------------------------------------
// Statistics

// A maximum and where it first occurs. Order: NaN above everything; between equal values (and
// between NaNs) the smaller flat index wins, as torch.max/argmax return the first maximal index.
typedef struct pp_close_max {
    double value;              // the statistic; meaningless while index < 0
    int64_t index;             // first flat (row-major) index attaining it; -1: no element seen
    double actual, expected;   // the operands at index, as given (binary64, exact)
} pp_close_max;

// ulp-error histogram bins, u = |a − e| / pp_ulp(actual_format, e) (exact edges, see close.c):
// bin 0: a == e (incl. +0 == −0 and equal infinities); bin 1: 0 < u <= 0.5; bin 2: 0.5 < u <= 1;
// bin j for 3 <= j <= 22: 2^(j−3) < u <= 2^(j−2) (so bin 22 is "<= 2^20"); bin 23: u > 2^20;
// bin 24: a NaN operand, or an infinite operand not equal to the other (NaN/NaN always here).
#define PP_CLOSE_ULP_BINS 25
#define PP_CLOSE_BIN_EQUAL 0
#define PP_CLOSE_BIN_HUGE 23
#define PP_CLOSE_BIN_NONFINITE 24

typedef struct pp_close_stats {
    int64_t numel;         // pairs seen
    int64_t mismatched;    // pairs torch's isclose calls not close (numel − matches)
    // torch's message numbers: the greatest |a − e| and |a − e| / |e| over all pairs, matched
    // pairs counting as 0, computed in the torch version's arithmetic (common dtype or float64).
    pp_close_max abs_diff, rel_diff;
    // Beyond torch, in binary64 (see close.c for the NaN/Inf rules):
    pp_close_max tol_ratio;  // |a − e| / (atol + rtol·|e|)
    pp_close_max ulp_err;    // |a − e| / pp_ulp(actual_format, e), over pairs in bins 0..23
    pp_close_max abs_err;    // RN(|a − e|) over pairs with both operands finite (every pair, close
                             // or not, unlike abs_diff; +Inf only if a − e overflows binary64)
    double ulp_scale;        // the greatest pp_ulp(actual_format, e) over pairs with both operands
                             // finite: the ulp at the expected tensor's largest magnitude, which
                             // max_ulp_at_scale measures max |a − e| in; 0 when none (or a report
                             // older than it)
    int64_t n_finite;        // pairs with both operands finite: the mean/RMS population
    pp_exactsum sum_abs;     // Σ |a − e| over those pairs, exact
    pp_exactsum sum_sq;      // Σ (a − e)² over those pairs, exact
    int64_t nan_actual, inf_actual, nan_expected, inf_expected;
    int64_t ulp_hist[PP_CLOSE_ULP_BINS];
} pp_close_stats;

// Empty statistics (no pairs).
void pp_close_stats_init(pp_close_stats *s);

// Adds the pairs (actual[i], expected[i]), i < n, whose flat indices are first_flat_index + i.
// @param [in,out] s   statistics to extend
// @param [in] o       options; the same for every update and merge of s
// @param [in] actual, expected  n values each, every one a value of o's actual/expected format
// Preconditions: the index ranges of all updates of s and of what is merged into it are
// disjoint; o->rtol, o->atol >= 0 and finite; o's version >= 1.10.
void pp_close_stats_update(pp_close_stats *s, const pp_close_opts *o, const double *actual,
                           const double *expected, int64_t n, int64_t first_flat_index);

// pp_close_stats_update with the lanes of x86-64 level isa (a pp_isa, base/isa.h: PP_ISA_AUTO is
// the widest this CPU runs, which pp_close_stats_update uses) for the chunks of usual pairs
// (src/core/close_lanes.h), or PP_CLOSE_ISA_NONE: every pair by the one-pair code. The same
// statistics, bit for bit, at every level (tests/test_close_fast.c); for tests and benchmarks.
#define PP_CLOSE_ISA_NONE (-1)
void pp_close_stats_update_isa(pp_close_stats *s, const pp_close_opts *o, const double *actual,
                               const double *expected, int64_t n, int64_t first_flat_index, int isa);

// into ∪= from: afterwards into holds exactly what one update over both index ranges would
// give, whatever the split and the order of merges. from is unchanged.
void pp_close_stats_merge(pp_close_stats *into, const pp_close_stats *from);

// Mean of |a − e| over the pairs with both operands finite: the exact sum rounded once, then
// divided (|error| <= 1 ulp of the mean; Inf when the sum itself exceeds binary64, possible only
// for fp64 operands). NaN when there are no such pairs.
double pp_close_stats_mean_abs(const pp_close_stats *s);

// Root mean square of (a − e) over the same pairs: sqrt(fl(Σ(a − e)²) / n), the exact sum
// rounded once, then one division and one square root (|error| <= 2 ulp; Inf when Σ(a − e)²
// exceeds binary64, which needs |a − e| > 2^511, so fp64 operands). NaN when none.
double pp_close_stats_rms(const pp_close_stats *s);

// Pairs with a NaN or infinite operand (numel − n_finite).
int64_t pp_close_stats_nonfinite_pairs(const pp_close_stats *s);

// ---------------------------------------------------------------------------------------------
// Text (close_msg.c)

// torch's AssertionError message, byte for byte, without a trailing newline.
// @param [in] s, o        the statistics and the options they were computed with
// @param [in] ndim, shape the compared tensors' shape (ndim 0: the scalar message)
// @param [out] buf, n     receives the message, NUL-terminated
// Returns 0 (buf "") when every pair is close, 1 with the message when not, -1 when n is too
// small (buf then holds as much as fits).
int pp_close_message(const pp_close_stats *s, const pp_close_opts *o, int ndim,
                     const int64_t *shape, char *buf, size_t n);

// The extra statistics as aligned, labelled lines, each ending in '\n' (values as Python's repr,
// indices as Python tuples, the ulp histogram as one line of its non-empty bins).
// Returns 0, or -1 when n is too small (buf then holds as much as fits).
int pp_close_stats_text(const pp_close_stats *s, const pp_close_opts *o, int ndim,
                        const int64_t *shape, char *buf, size_t n);

#endif
