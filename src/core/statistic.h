// statistic.h — the statistics of a comparison by name: one table that the case reader (which
// names a gate rule may use), the gate (their values) and the reports (their headings) read.
// Adding a statistic = one row in src/core/statistic.c.
#ifndef PP_STATISTIC_H
#define PP_STATISTIC_H

#include <stddef.h>

#include "core/close.h"

typedef struct pp_statistic {
    const char *name;   // as gate rules and report.h5 name it, e.g. "max_ulp"
    const char *label;  // a report column's heading ("max ulp"), NULL: no column of its own
    const char *doc;    // one line, what it measures
    double (*value)(const pp_close_stats *s);  // 0 when no element attains a maximum
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

// "<stat>_band_max" (a gate rule on the largest value over --orders' runs): the index of <stat>
// in the table, or -1 when name is not of that form.
int pp_statistic_band_max(const char *name);

#endif
