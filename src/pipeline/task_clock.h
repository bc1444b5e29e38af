// task_clock.h — where a run's time goes: with PRECPROBE_TIMINGS=1 in the environment, one line
// per task on stderr (its kind, format group or variant, wall and process CPU seconds), so the
// cost of a full-size case can be split into inputs, references, variants and statistics
// (issue 17). Off by default; it never changes what a run computes or reports.
#ifndef PP_TASK_CLOCK_H
#define PP_TASK_CLOCK_H

#include "pipeline/plan.h"

typedef struct pp_task_clock {
    int on;           // PRECPROBE_TIMINGS=1
    double wall, cpu; // when the task started (monotonic, process CPU time), seconds
} pp_task_clock;

// Starts timing a task (a no-op unless PRECPROBE_TIMINGS=1).
void pp_task_clock_start(pp_task_clock *c);

// Prints "timing: KIND WHAT wall W s cpu C s" for task t, started at c, when timings are on.
void pp_task_clock_report(const pp_task_clock *c, const pp_run_plan *plan, const pp_task *t);

#endif
