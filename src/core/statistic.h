// statistic.h — the statistics of a comparison by name: one table that the case reader (which
// names a gate rule may use), the gate (their values) and the reports (their headings) read.
// Adding a statistic = one row in src/core/statistic.c.
#ifndef PP_STATISTIC_H
#define PP_STATISTIC_H

#include <stddef.h>

#include "core/close.h"
#include "core/results.h"

#define PP_STATISTIC_MAX_STORED 3

typedef struct pp_statistic {
    const char *name;   // as gate rules and report.h5 name it, e.g. "max_ulp"
    const char *label;  // a report column's heading ("max ulp"), NULL: no column of its own
    const char *doc;    // one line, what it measures
    double (*value)(const pp_close_stats *s);  // 0 when no element attains a maximum
    // The attributes of a comparison's report.h5 group its value is computed from (NULL-ended;
    // none listed: the attribute of its own name). A report written before one of them existed
    // did not record the statistic: read back, its value would be a made-up 0.
    const char *stored[PP_STATISTIC_MAX_STORED];
} pp_statistic;

// The number of statistics and the i-th (table order), or NULL.
int pp_statistic_count(void);
const pp_statistic *pp_statistic_at(int i);

// The statistic named name, or NULL.
const pp_statistic *pp_statistic_find(const char *name);

// Every name joined with ", " into buf.
void pp_statistic_names(char *buf, size_t n);

// The value of the statistic named name in s; NaN for an unknown name.
double pp_statistic_value(const char *name, const pp_close_stats *s);

// Whether comparison c holds statistic k of the table: every comparison a run computes does; one
// read from a report.h5 written before the statistic existed does not (c->unrecorded, set by the
// reader from pp_statistic_stored). A report shows it as "—", a gate rule on it is refused.
int pp_statistic_recorded(const pp_comparison *c, int k);

// The i-th report.h5 attribute statistic k is computed from (i from 0), or NULL past the last.
const char *pp_statistic_stored(int k, int i);

// The mask of c->unrecorded for the statistics computed from any attribute that present(ctx,
// attribute) says is absent (0): what a reader sets on a comparison it read.
uint32_t pp_statistic_unrecorded_mask(int (*present)(void *ctx, const char *attribute), void *ctx);

// "<stat>_band_max" (a gate rule on the largest value over --orders' runs): the index of <stat>
// in the table, or -1 when name is not of that form.
int pp_statistic_band_max(const char *name);

#endif
