// stream.c — execute and compare interleaved, each product freed after its last reader (stream.h).
#include "pipeline/stream.h"
#include "pipeline/task_clock.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "parallel.h"

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

// The comparisons of one batch on the worker threads: each worker takes the next one as it
// finishes (their sizes differ: lse is a row per head, out, dq, dk, dv all of s·d), and each
// writes only its own slot, result and error, so the batch's results are the serial loop's
// whatever the thread count. Before, the batch ran on one thread, one core idle: 4 s of
// te-cp-821's wall time.
typedef struct compare_batch {
    const stream *s;
    const int *ids;  // the batch's task ids, increasing
    int n;
    pp_comparison *slot;
    int *compared, *rc;
    unsigned char *done;  // 0: not started (a stop request skipped it)
    pp_error *errs;
    atomic_int next;
} compare_batch;

static void compare_worker(void *ctx, int64_t worker)
{
    compare_batch *B = ctx;
    (void)worker;
    for (int k; (k = atomic_fetch_add(&B->next, 1)) < B->n;) {
        const pp_task *t = &B->s->plan->tasks[B->ids[k]];
        pp_task_clock clk;  // wall of this comparison; cpu: the process's, every worker's
        pp_task_clock_start(&clk);
        B->rc[k] = pp_run_compare_task(B->s->plan, B->s->p, t, &B->slot[t->id], &B->compared[k], &B->errs[k]);
        if (!B->rc[k])
            pp_task_clock_report(&clk, B->s->plan, t);
        B->done[k] = 1;
    }
}

// Every comparison not yet run whose tensors now exist, into its task's slot (in parallel), then
// settled in id order.
static int compare_ready(stream *s, pp_comparison *slot, unsigned char *filled, pp_error *err)
{
    const pp_run_plan *plan = s->plan;
    int n = 0;
    for (int i = 0; i < plan->n_tasks; i++)
        n += is_compare(&plan->tasks[i]) && !s->ran[i] && ready(s, &plan->tasks[i]);
    if (!n)
        return PP_OK;
    int *ids = calloc((size_t)n, sizeof *ids), *compared = calloc((size_t)n, sizeof *compared);
    int *rcs = calloc((size_t)n, sizeof *rcs);
    unsigned char *done = calloc((size_t)n, 1);
    pp_error *errs = calloc((size_t)n, sizeof *errs);
    int rc = PP_OK;
    if (!ids || !compared || !rcs || !done || !errs)
        rc = pp_fail(err, PP_ERR_RUNTIME, "out of memory");
    n = 0;
    for (int i = 0; !rc && i < plan->n_tasks; i++) {
        const pp_task *t = &plan->tasks[i];
        if (!is_compare(t) || s->ran[i] || !ready(s, t))
            continue;
        // a no-op but for a stop request, which it reports as the execute stage always did
        rc = pp_run_execute_task(plan, s->o, t, s->p, &s->refs_done, err);
        ids[n++] = i;
    }
    if (!rc) {
        compare_batch B = {.s = s, .ids = ids, .n = n, .slot = slot, .compared = compared, .rc = rcs,
                           .done = done, .errs = errs};
        atomic_init(&B.next, 0);
        int workers = plan->threads < n ? plan->threads : n;
        pp_parallel_for(compare_worker, &B, workers, workers, NULL);
    }
    for (int k = 0; !rc && k < n; k++) {
        const pp_task *t = &plan->tasks[ids[k]];
        if (!done[k])  // skipped after a stop request: that request's message
            rc = pp_run_execute_task(plan, s->o, t, s->p, &s->refs_done, err);
        if (!rc && !done[k])
            rcs[k] = pp_run_compare_task(plan, s->p, t, &slot[ids[k]], &compared[k], &errs[k]);
        if (!rc && (rc = rcs[k]))
            *err = errs[k];
        if (rc)
            break;
        filled[ids[k]] = (unsigned char)compared[k];
        settle(s, t);
    }
    for (int k = 0; rc && compared && k < n; k++)  // the batch's results past the error go with it
        if (compared[k] && !filled[ids[k]])
            pp_axis_stats_free(&slot[ids[k]].axes);
    free(ids);
    free(compared);
    free(rcs);
    free(done);
    free(errs);
    return rc;
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
