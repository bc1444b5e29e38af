// close_msg.c — the text of torch.testing.assert_close's AssertionError, byte for byte for the
// torch version named, and precprobe's extra statistics as labelled lines.
//
// Version differences, read from torch/testing/_comparison.py (pytorch/pytorch at 539f6ce and
// the 1.11-era file; the rendered sources of 1.13, 2.0 and 2.1 on pytorch.github.io):
// - the scalar (0-d) block's line "Expected {expected} but got {actual}." is in 2.1 (docs/2.1
//   _modules/torch/testing/_comparison.html, make_scalar_mismatch_msg passes it as `extra`) and
//   in the 2.x main snapshot, and absent from 1.11, 1.13 and 2.0: emitted for torch >= 2.1;
// - a 1-D index prints as a bare int before 1.13 (torch.testing._core._unravel_index returns
//   res[0] for one dimension) and as a 1-tuple "(3,)" from 1.13 on (a local unravel_flat_index
//   returns a tuple); 1.12 was not read, and is treated as the older form;
// - before 1.13 the message kept a trailing newline; this function never writes one.
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/close.h"
#include "core/repr.h"
#include "core/tensor.h"

// ---------------------------------------------------------------------------------------------
// An appender that remembers whether everything fitted

typedef struct out {
    char *buf;
    size_t n, at;
    int overflow;
} out;

static void put(out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(out *o, const char *fmt, ...)
{
    if (o->overflow)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(o->buf + o->at, o->n - o->at, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= o->n - o->at) {
        o->overflow = 1;
        return;
    }
    o->at += (size_t)k;
}

// Python's repr of x into a caller's buffer of PP_REPR_MAX bytes.
static const char *rp(char *b, double x)
{
    pp_repr_double(x, b, PP_REPR_MAX);
    return b;
}

// The index as torch prints it: a tuple, or for 1-D tensors before torch 1.13 a bare int.
static void index_text(const pp_close_opts *o, int ndim, const int64_t *shape, int64_t i, char *b,
                       size_t n)
{
    int bare = ndim == 1 && (o->torch_major < 1 || (o->torch_major == 1 && o->torch_minor < 13));
    if (bare)
        snprintf(b, n, "%lld", (long long)i);
    else
        pp_index_str(ndim, shape, i, b, n);
}

// ---------------------------------------------------------------------------------------------
// torch's message

int pp_close_message(const pp_close_stats *s, const pp_close_opts *o, int ndim,
                     const int64_t *shape, char *buf, size_t n)
{
    if (n == 0)
        return -1;
    buf[0] = '\0';
    if (s->mismatched == 0)
        return 0;
    out w = {buf, n, 0, 0};
    int equality = o->rtol == 0 && o->atol == 0;
    char at[PP_REPR_MAX], rt[PP_REPR_MAX], x[PP_REPR_MAX], y[PP_REPR_MAX];
    char asuf[64] = "", rsuf[64] = "";
    if (!equality) {
        snprintf(asuf, sizeof asuf, " (up to %s allowed)", rp(at, o->atol));
        snprintf(rsuf, sizeof rsuf, " (up to %s allowed)", rp(rt, o->rtol));
    }
    if (ndim == 0) {
        // make_scalar_mismatch_msg on actual.item(), expected.item(): Python floats, so the
        // differences are binary64 whatever the dtype, and rel is inf whenever expected == 0.
        double a = s->abs_diff.actual, e = s->abs_diff.expected;
        double ad = fabs(a - e);
        double rd = e == 0 ? INFINITY : ad / fabs(e);
        put(&w, "Scalars are not %s!\n\n", equality ? "equal" : "close");
        if (pp_close_uses_common_dtype(o))
            put(&w, "Expected %s but got %s.\n", rp(x, e), rp(y, a));
        put(&w, "Absolute difference: %s%s\n", rp(x, ad), asuf);
        put(&w, "Relative difference: %s%s", rp(y, rd), rsuf);
    } else {
        char pct[64], ia[256], ir[256];
        pp_format_percent((double)s->mismatched, (double)s->numel, pct, sizeof pct);
        index_text(o, ndim, shape, s->abs_diff.index, ia, sizeof ia);
        index_text(o, ndim, shape, s->rel_diff.index, ir, sizeof ir);
        put(&w, "Tensor-likes are not %s!\n\n", equality ? "equal" : "close");
        put(&w, "Mismatched elements: %lld / %lld (%s)\n", (long long)s->mismatched,
            (long long)s->numel, pct);
        put(&w, "Greatest absolute difference: %s at index %s%s\n", rp(x, s->abs_diff.value), ia, asuf);
        put(&w, "Greatest relative difference: %s at index %s%s", rp(y, s->rel_diff.value), ir, rsuf);
    }
    return w.overflow ? -1 : 1;
}

// ---------------------------------------------------------------------------------------------
// The extra statistics

#define LABEL "%-30s"

static void where(out *w, const pp_close_max *m, int ndim, const int64_t *shape)
{
    if (m->index < 0) {
        put(w, "none\n");
        return;
    }
    char v[PP_REPR_MAX], a[PP_REPR_MAX], e[PP_REPR_MAX], idx[256];
    pp_index_str(ndim, shape, m->index, idx, sizeof idx);
    put(w, "%s at index %s (actual %s, expected %s)\n", rp(v, m->value), idx, rp(a, m->actual),
        rp(e, m->expected));
}

static void operands_at(out *w, const pp_close_max *m, int ndim, const int64_t *shape)
{
    if (m->index < 0) {
        put(w, "none\n");
        return;
    }
    char a[PP_REPR_MAX], e[PP_REPR_MAX], idx[256];
    pp_index_str(ndim, shape, m->index, idx, sizeof idx);
    put(w, "actual %s, expected %s at index %s\n", rp(a, m->actual), rp(e, m->expected), idx);
}

int pp_close_stats_text(const pp_close_stats *s, const pp_close_opts *o, int ndim,
                        const int64_t *shape, char *buf, size_t n)
{
    if (n == 0)
        return -1;
    buf[0] = '\0';
    out w = {buf, n, 0, 0};
    char v[PP_REPR_MAX];
    // torch's greatest differences count matched pairs as 0: with no mismatch they name no
    // element worth showing (the ulp and tolerance lines below cover every pair)
    if (s->mismatched > 0) {
        put(&w, LABEL, "At greatest absolute diff:");
        operands_at(&w, &s->abs_diff, ndim, shape);
        put(&w, LABEL, "At greatest relative diff:");
        operands_at(&w, &s->rel_diff, ndim, shape);
    }
    put(&w, LABEL, "Max absolute error:");
    if (s->abs_err.index < 0 && s->n_finite > 0)
        put(&w, "not recorded (a report from before this statistic)\n");
    else
        where(&w, &s->abs_err, ndim, shape);
    put(&w, LABEL, "Worst tolerance ratio:");
    where(&w, &s->tol_ratio, ndim, shape);
    char label[64];
    snprintf(label, sizeof label, "Max ulp error (%s):", pp_format_get(o->actual_format).name);
    put(&w, LABEL, label);
    where(&w, &s->ulp_err, ndim, shape);
    put(&w, LABEL "%s over %lld finite pairs (%lld non-finite)\n", "Mean absolute error:",
        rp(v, pp_close_stats_mean_abs(s)), (long long)s->n_finite,
        (long long)pp_close_stats_nonfinite_pairs(s));
    put(&w, LABEL "%s\n", "RMS error:", rp(v, pp_close_stats_rms(s)));
    put(&w, LABEL "%lld NaN, %lld Inf\n", "Actual non-finite:", (long long)s->nan_actual,
        (long long)s->inf_actual);
    put(&w, LABEL "%lld NaN, %lld Inf\n", "Expected non-finite:", (long long)s->nan_expected,
        (long long)s->inf_expected);
    put(&w, LABEL, "ulp error histogram:");
    int any = 0;
    for (int k = 0; k < PP_CLOSE_ULP_BINS; k++) {
        if (!s->ulp_hist[k])
            continue;
        char name[32];
        if (k == PP_CLOSE_BIN_EQUAL)
            snprintf(name, sizeof name, "0");
        else if (k == 1)
            snprintf(name, sizeof name, "<=0.5");
        else if (k == PP_CLOSE_BIN_HUGE)
            snprintf(name, sizeof name, ">%ld", 1L << 20);
        else if (k == PP_CLOSE_BIN_NONFINITE)
            snprintf(name, sizeof name, "nan/inf");
        else
            snprintf(name, sizeof name, "<=%ld", 1L << (k - 2));
        put(&w, "%s%s:%lld", any ? " " : "", name, (long long)s->ulp_hist[k]);
        any = 1;
    }
    put(&w, "%s\n", any ? "" : "empty");
    return w.overflow ? -1 : 0;
}
