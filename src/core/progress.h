// progress.h — progress on stderr (done/total, rate, ETA) for work that takes more than a second:
// a one-line bar on a terminal, a line every 10 s in a CI log; silent when off (--quiet).
#ifndef PP_PROGRESS_H
#define PP_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

// How progress is shown: not at all; a bar redrawn in place (stderr is a terminal); or, for CI
// logs (stderr a file or pipe, where a redrawn bar would be one endless line), a line every
// PP_PROGRESS_LOG_EVERY seconds.
enum { PP_PROGRESS_OFF = 0, PP_PROGRESS_BAR = 1, PP_PROGRESS_LOG = 2 };
#define PP_PROGRESS_LOG_EVERY 10.0

typedef struct pp_progress {
    char label[160];
    int enabled;       // PP_PROGRESS_OFF, _BAR or _LOG
    double t0, last;   // seconds (monotonic): start, and the last time a line was drawn
    int drawn;         // a line is on the terminal and must be cleared at the end
} pp_progress;

// Starts timing; nothing is drawn during the first second.
void pp_progress_start(pp_progress *p, const char *label, int enabled);
// Reports done of total units; a bar redraws at most 10 times a second, a log prints a line
// when PP_PROGRESS_LOG_EVERY seconds have passed since the start or its last line. Signature
// fits pp_ref_ctx.
void pp_progress_update(void *p, int64_t done, int64_t total);
// pp_progress_update at time t (seconds on pp_progress_start's clock: p->t0 + elapsed), so a
// test can step the clock.
void pp_progress_update_at(pp_progress *p, int64_t done, int64_t total, double t);
// Clears the line if one was drawn.
void pp_progress_end(pp_progress *p);

// Formats one progress line into buf: "LABEL  done/total (pct%)  rate/s  ETA m:ss".
void pp_progress_format(const char *label, int64_t done, int64_t total, double elapsed, char *buf, size_t n);

#endif
