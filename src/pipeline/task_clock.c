// task_clock.c — per-task wall and CPU time on stderr under PRECPROBE_TIMINGS=1 (task_clock.h).
#include "pipeline/task_clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format.h"

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void pp_task_clock_start(pp_task_clock *c)
{
    const char *env = getenv("PRECPROBE_TIMINGS");
    c->on = env && !strcmp(env, "1");
    if (!c->on)
        return;
    c->wall = clock_s(CLOCK_MONOTONIC);
    c->cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID);  // all threads: a reference's workers included
}

void pp_task_clock_report(const pp_task_clock *c, const pp_run_plan *plan, const pp_task *t)
{
    if (!c->on)
        return;
    double wall = clock_s(CLOCK_MONOTONIC) - c->wall, cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c->cpu;
    const char *what = t->variant >= 0 ? plan->c->variants[t->variant].name
                     : t->group >= 0   ? pp_format_get(plan->group_format[t->group]).name
                                       : "";
    fprintf(stderr, "timing: %-12s %-20s slot %2d  wall %8.3f s  cpu %8.3f s\n", pp_task_kind_name(t->kind),
            what, t->slot, wall, cpu);
}
