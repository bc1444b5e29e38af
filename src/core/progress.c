// progress.c — the progress bar of long references and variants (see progress.h).
#include "core/progress.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void pp_progress_start(pp_progress *p, const char *label, int enabled)
{
    memset(p, 0, sizeof *p);
    snprintf(p->label, sizeof p->label, "%s", label);
    p->enabled = enabled;
    p->t0 = p->last = now_s();
}

void pp_progress_format(const char *label, int64_t done, int64_t total, double elapsed, char *buf, size_t n)
{
    double frac = total > 0 ? (double)done / (double)total : 0.0;
    double rate = elapsed > 0 ? (double)done / elapsed : 0.0;
    char eta[32] = "?";
    if (rate > 0 && done <= total) {
        long s = (long)((double)(total - done) / rate + 0.5);
        snprintf(eta, sizeof eta, "%ld:%02ld", s / 60, s % 60);
    }
    snprintf(buf, n, "%s  %lld/%lld (%.0f%%)  %.3g/s  ETA %s", label, (long long)done, (long long)total,
             100.0 * frac, rate, eta);
}

void pp_progress_update_at(pp_progress *p, int64_t done, int64_t total, double t)
{
    if (!p || !p->enabled)
        return;
    char line[320];
    if (p->enabled == PP_PROGRESS_LOG) {
        if (t - p->last < PP_PROGRESS_LOG_EVERY)
            return;
        pp_progress_format(p->label, done, total, t - p->t0, line, sizeof line);
        fprintf(stderr, "precprobe: %s\n", line);
        fflush(stderr);
        p->last = t;
        return;
    }
    if (t - p->t0 < 1.0 || (p->drawn && t - p->last < 0.1))
        return;
    pp_progress_format(p->label, done, total, t - p->t0, line, sizeof line);
    fprintf(stderr, "\r\033[K%s", line);
    fflush(stderr);
    p->last = t;
    p->drawn = 1;
}

void pp_progress_update(void *vp, int64_t done, int64_t total)
{
    pp_progress *p = vp;
    if (p && p->enabled)
        pp_progress_update_at(p, done, total, now_s());
}

void pp_progress_end(pp_progress *p)
{
    if (p->enabled == PP_PROGRESS_BAR && p->drawn) {
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
    }
    p->drawn = 0;
}
