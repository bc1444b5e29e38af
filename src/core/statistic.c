// statistic.c — the table of comparison statistics (statistic.h).
#include "core/statistic.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

// A maximum's value, 0 while no element attains it (an empty tensor, or no finite pair).
static double max_of(const pp_close_max *m)
{
    return m->index < 0 ? 0.0 : m->value;
}

static double mismatch_fraction(const pp_close_stats *s)
{
    return s->numel ? (double)s->mismatched / (double)s->numel : 0.0;
}

static double mismatched(const pp_close_stats *s)
{
    return (double)s->mismatched;
}

static double max_abs_diff(const pp_close_stats *s)
{
    return max_of(&s->abs_diff);
}

static double max_rel_diff(const pp_close_stats *s)
{
    return max_of(&s->rel_diff);
}

static double max_ulp(const pp_close_stats *s)
{
    return max_of(&s->ulp_err);
}

static double worst_tolerance_ratio(const pp_close_stats *s)
{
    return max_of(&s->tol_ratio);
}

static double max_abs_error(const pp_close_stats *s)
{
    return max_of(&s->abs_err);
}

// max |a − e| in ulps at the expected tensor's scale (the ulp of its largest magnitude), so a
// near-zero expected element, whose own ulp is tiny, cannot dominate as it does max_ulp; NaN when
// the scale is unknown (a report older than it), 0 when no pair has both operands finite.
static double max_ulp_at_scale(const pp_close_stats *s)
{
    if (s->abs_err.index < 0)
        return 0.0;
    return s->ulp_scale > 0 ? s->abs_err.value / s->ulp_scale : NAN;
}

static double nan_count(const pp_close_stats *s)
{
    return (double)s->nan_actual;
}

static double inf_count(const pp_close_stats *s)
{
    return (double)s->inf_actual;
}

// Gate rules and reports name these; the order is the one error messages list them in.
static const pp_statistic statistics[] = {
    {"mismatch_fraction", "mismatch", "the fraction of elements torch's isclose calls not close", mismatch_fraction,
     {"total", "mismatched"}},
    {"mismatched", NULL, "the number of elements torch's isclose calls not close", mismatched, {NULL}},
    {"max_abs_diff", "max abs", "torch's greatest absolute difference (close elements count as 0)", max_abs_diff, {NULL}},
    {"max_rel_diff", "max rel", "torch's greatest relative difference (close elements count as 0)", max_rel_diff, {NULL}},
    {"max_ulp", "max ulp", "the greatest |a - e| in ulps of the actual's format", max_ulp, {NULL}},
    {"mean_abs", "mean abs", "the mean |a - e| over the pairs with both operands finite", pp_close_stats_mean_abs,
     {"exact_sums", "n_finite"}},
    {"rms", NULL, "the root mean square of a - e over the pairs with both operands finite", pp_close_stats_rms,
     {"exact_sums", "n_finite"}},
    {"worst_tolerance_ratio", NULL, "the greatest |a - e| / (atol + rtol |e|)", worst_tolerance_ratio, {NULL}},
    {"nan_count", NULL, "NaN values in the actual tensor", nan_count, {NULL}},
    {"inf_count", NULL, "infinite values in the actual tensor", inf_count, {NULL}},
    {"max_abs_error", "max error", "the greatest |a - e| over every pair with both operands finite, close or not",
     max_abs_error, {NULL}},
    {"max_ulp_at_scale", "ulp@scale",
     "max_abs_error in ulps of the actual's format at the expected tensor's largest magnitude (a near-zero "
     "expected element cannot dominate, as it can max_ulp)",
     max_ulp_at_scale, {"max_abs_error", "ulp_scale"}},
};
// pp_comparison.unrecorded holds one bit per statistic
_Static_assert(sizeof statistics / sizeof statistics[0] <= 32, "more statistics than bits of unrecorded");

int pp_statistic_count(void)
{
    return (int)(sizeof statistics / sizeof statistics[0]);
}

const pp_statistic *pp_statistic_at(int i)
{
    return i >= 0 && i < pp_statistic_count() ? &statistics[i] : NULL;
}

const pp_statistic *pp_statistic_find(const char *name)
{
    for (int i = 0; i < pp_statistic_count(); i++)
        if (!strcmp(statistics[i].name, name))
            return &statistics[i];
    return NULL;
}

void pp_statistic_names(char *buf, size_t n)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < pp_statistic_count() && at < n; i++)
        at += (size_t)snprintf(buf + at, n - at, i ? ", %s" : "%s", statistics[i].name);
}

double pp_statistic_value(const char *name, const pp_close_stats *s)
{
    const pp_statistic *st = pp_statistic_find(name);
    return st ? st->value(s) : NAN;
}

int pp_statistic_band_max(const char *name)
{
    static const char suffix[] = "_band_max";
    size_t n = strlen(name), ns = sizeof suffix - 1;
    if (n <= ns || strcmp(name + n - ns, suffix))
        return -1;
    for (int i = 0; i < pp_statistic_count(); i++)
        if (strlen(statistics[i].name) == n - ns && !strncmp(statistics[i].name, name, n - ns))
            return i;
    return -1;
}

int pp_statistic_recorded(const pp_comparison *c, int k)
{
    return k < 0 || k >= 32 || !(c->unrecorded >> k & 1u);
}

const char *pp_statistic_stored(int k, int i)
{
    const pp_statistic *st = pp_statistic_at(k);
    if (!st || i < 0 || i >= PP_STATISTIC_MAX_STORED)
        return NULL;
    if (!st->stored[0])
        return i == 0 ? st->name : NULL;
    return st->stored[i];
}

uint32_t pp_statistic_unrecorded_mask(int (*present)(void *ctx, const char *attribute), void *ctx)
{
    uint32_t mask = 0;
    for (int k = 0; k < pp_statistic_count() && k < 32; k++)
        for (int i = 0; pp_statistic_stored(k, i); i++)
            if (!present(ctx, pp_statistic_stored(k, i)))
                mask |= 1u << k;
    return mask;
}
