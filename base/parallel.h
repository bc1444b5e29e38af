// parallel.h — the one thread pool of the CPU code (emulations and references): every task of a
// job on up to n threads, each task computed alone, so results never depend on the thread count.
#ifndef PP_PARALLEL_H
#define PP_PARALLEL_H

#include <stdint.h>

#define PP_MAX_THREADS 256

typedef void (*pp_task_fn)(void *ctx, int64_t task);

// Runs fn(ctx, t) for every t < ntasks: task t on worker t mod n, n = min(nthreads, ntasks,
// PP_MAX_THREADS) and at least 1; worker 0 is the calling thread. A worker thread that cannot be
// created has its share run by the caller afterwards: the same tasks, the same results.
// thread_exit (may be NULL) runs at the end of every worker's share, on its thread (the
// references free MPFR's per-thread caches there). After a stop request (base/interrupt.h) the
// tasks not yet started are skipped: a caller that sees pp_interrupted() discards the results.
void pp_parallel_for(pp_task_fn fn, void *ctx, int64_t ntasks, int nthreads, void (*thread_exit)(void));

#endif
