// stream.h — the execute and compare stages of a whole run interleaved (pipeline/plan.h), so that
// a tensor lives only while some task still reads it: each comparison runs as soon as the tasks
// it reads have run, and the inputs, reference or outputs a task produced are freed once the last
// task reading them (the plan's dependencies) is done. Same comparisons, same bits, same order
// as pp_run_execute then pp_run_compare; less memory (a full-size attention case holds one
// variant pair's outputs at a time rather than every variant's).
#ifndef PP_STREAM_H
#define PP_STREAM_H

#include "pipeline/compare.h"

// What the stream did, in order, for a caller that watches (tests: what is freed, and when).
typedef enum pp_stream_event_kind {
    PP_STREAM_RAN,       // task ran (execute or compare)
    PP_STREAM_RELEASED,  // what task produced was freed
} pp_stream_event_kind;

typedef struct pp_stream_watch {
    void (*event)(void *ctx, pp_stream_event_kind kind, int task);
    void *ctx;
} pp_stream_watch;

// Runs every task of plan: each execute task in id order, each comparison as soon as what it
// reads exists. Comparisons go to *out (*n of them, in id order, as pp_run_compare gives them;
// the caller owns them). Products are freed after their last reader unless a later stage needs
// them: o->save_tensors (assemble moves them into the result) or o->orders > 0 (the order band
// re-runs variants on the inputs and compares again); the series and the references' method and
// bound are always kept. watch may be NULL. Returns as pp_run_execute and pp_run_compare.
int pp_run_stream(const pp_run_plan *plan, const pp_run_opts *o, pp_run_products *p, const pp_stream_watch *watch,
                  pp_comparison **out, int *n, pp_error *err);

#endif
