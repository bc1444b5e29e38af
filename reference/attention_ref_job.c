// attention_ref_job.c — what both paths of the attention reference call back: progress, counted
// per row in units of its work and reported from worker 0.
#include "attention_ref_job.h"

#include <time.h>

static double attn_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void pp_attn_progress_start_(pp_attn_job_ *J)
{
    J->last_report = attn_now();
}

int64_t pp_attn_row_done_(pp_attn_job_ *J, int worker, int64_t i)
{
    int64_t w = pp_attn_row_work_(J, i);
    long long d = atomic_fetch_add(&J->done, w) + w;
    if (worker != 0 || !J->o->progress)
        return w;
    double t = attn_now();
    if (t - J->last_report < 0.1)
        return w;
    J->last_report = t;
    J->o->progress(J->o->progress_ctx, d < J->total ? d : J->total, J->total);
    return w;
}
