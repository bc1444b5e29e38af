// stream.c — execute and compare interleaved, each product freed after its last reader (stream.h).
#include "pipeline/stream.h"
#include "pipeline/task_clock.h"

#include <stdlib.h>
#include <string.h>

typedef struct stream {
    const pp_run_plan *plan;
    const pp_run_opts *o;
    pp_run_products *p;
    const pp_stream_watch *watch;
    int keep;            // a later stage reads the products: free nothing
    int *readers;        // per task: the tasks still to run that read its products
    unsigned char *ran;  // per task
    int refs_done;       // for the line a stop request ends the run with
} stream;

static void note(const stream *s, pp_stream_event_kind kind, int task)
{
    if (s->watch && s->watch->event)
        s->watch->event(s->watch->ctx, kind, task);
}

// Task t has run: it no longer holds what it read, and what nothing will read goes.
static void settle(stream *s, const pp_task *t)
{
    s->ran[t->id] = 1;
    note(s, PP_STREAM_RAN, t->id);
    for (int d = 0; d < t->n_deps; d++)
        if (--s->readers[t->deps[d]] == 0 && !s->keep) {
            pp_run_products_release(s->plan, s->p, &s->plan->tasks[t->deps[d]]);
            note(s, PP_STREAM_RELEASED, t->deps[d]);
        }
}

static int is_compare(const pp_task *t)
{
    return t->kind == PP_TASK_COMPARE || t->kind == PP_TASK_COMPARE_PAIR;
}

static int ready(const stream *s, const pp_task *t)
{
    for (int d = 0; d < t->n_deps; d++)
        if (!s->ran[t->deps[d]])
            return 0;
    return 1;
}

// Every comparison not yet run whose tensors now exist, in id order, into its task's slot.
static int compare_ready(stream *s, pp_comparison *slot, unsigned char *filled, pp_error *err)
{
    const pp_run_plan *plan = s->plan;
    for (int i = 0; i < plan->n_tasks; i++) {
        const pp_task *t = &plan->tasks[i];
        if (!is_compare(t) || s->ran[i] || !ready(s, t))
            continue;
        pp_task_clock clk;
        pp_task_clock_start(&clk);
        // a no-op but for a stop request, which it reports as the execute stage always did
        int compared, rc = pp_run_execute_task(plan, s->o, t, s->p, &s->refs_done, err);
        if (!rc)
            rc = pp_run_compare_task(plan, s->p, t, &slot[i], &compared, err);
        if (rc)
            return rc;
        pp_task_clock_report(&clk, plan, t);
        filled[i] = (unsigned char)compared;
        settle(s, t);
    }
    return PP_OK;
}

// Moves the filled slots, in id order, into a fresh array; frees slot.
static int gather(const pp_run_plan *plan, pp_comparison *slot, unsigned char *filled, pp_comparison **out,
                  int *n, pp_error *err)
{
    int count = 0;
    for (int i = 0; i < plan->n_tasks; i++)
        count += filled[i];
    pp_comparison *cmps = calloc((size_t)(count ? count : 1), sizeof *cmps);
    if (!cmps)
        return pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    count = 0;
    for (int i = 0; i < plan->n_tasks; i++)
        if (filled[i]) {
            cmps[count++] = slot[i];
            filled[i] = 0;  // moved: its axes are cmps' now
        }
    *out = cmps;
    *n = count;
    return PP_OK;
}

int pp_run_stream(const pp_run_plan *plan, const pp_run_opts *o, pp_run_products *p, const pp_stream_watch *watch,
                  pp_comparison **out, int *n, pp_error *err)
{
    *out = NULL;
    *n = 0;
    size_t nt = (size_t)(plan->n_tasks ? plan->n_tasks : 1);
    stream s = {plan, o, p, watch, o->save_tensors || o->orders > 0, calloc(nt, sizeof(int)), calloc(nt, 1), 0};
    pp_comparison *slot = calloc(nt, sizeof *slot);
    unsigned char *filled = calloc(nt, 1);
    int rc = PP_OK;
    if (!s.readers || !s.ran || !slot || !filled)
        rc = pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    for (int i = 0; !rc && i < plan->n_tasks; i++)
        for (int d = 0; d < plan->tasks[i].n_deps; d++)
            s.readers[plan->tasks[i].deps[d]]++;
    for (int i = 0; !rc && i < plan->n_tasks; i++) {
        const pp_task *t = &plan->tasks[i];
        if (is_compare(t))
            continue;
        pp_task_clock clk;
        pp_task_clock_start(&clk);
        rc = pp_run_execute_task(plan, o, t, p, &s.refs_done, err);
        if (!rc) {
            pp_task_clock_report(&clk, plan, t);
            settle(&s, t);
            rc = compare_ready(&s, slot, filled, err);
        }
    }
    if (rc != PP_ERR_INTERRUPTED)
        pp_run_execute_done(o);  // as pp_run_execute: a stop request's line follows the bar
    if (!rc)
        rc = gather(plan, slot, filled, out, n, err);
    for (int i = 0; filled && i < plan->n_tasks; i++)
        if (filled[i])
            pp_axis_stats_free(&slot[i].axes);
    free(slot);
    free(filled);
    free(s.readers);
    free(s.ran);
    return rc;
}
