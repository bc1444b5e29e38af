// progress.h — a one-line progress bar on stderr (done/total, rate, ETA) for work that takes more
// than a second; silent unless enabled (the caller checks that stderr is a terminal, --quiet).
#ifndef PP_PROGRESS_H
#define PP_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

typedef struct pp_progress {
    char label[160];
    int enabled;
    double t0, last;   // seconds (monotonic): start, and the last time a line was drawn
    int drawn;         // a line is on the terminal and must be cleared at the end
} pp_progress;

// Starts timing; nothing is drawn during the first second.
void pp_progress_start(pp_progress *p, const char *label, int enabled);
// Reports done of total units; redraws at most 10 times a second. Signature fits pp_ref_ctx.
void pp_progress_update(void *p, int64_t done, int64_t total);
// Clears the line if one was drawn.
void pp_progress_end(pp_progress *p);

// Formats one progress line into buf: "LABEL  done/total (pct%)  rate/s  ETA m:ss".
void pp_progress_format(const char *label, int64_t done, int64_t total, double elapsed, char *buf, size_t n);

#endif
