// parallel.c — the strided thread pool (see parallel.h).
#include "parallel.h"

#include <pthread.h>

#include "interrupt.h"

typedef struct pp_worker {
    pp_task_fn fn;
    void *ctx;
    int64_t first, ntasks, stride;
    void (*thread_exit)(void);
} pp_worker;

static void *worker_main(void *arg)
{
    pp_worker *w = arg;
    // a stop request (Ctrl-C) skips the tasks not started: the caller discards the job
    for (int64_t t = w->first; t < w->ntasks && !pp_interrupted(); t += w->stride)
        w->fn(w->ctx, t);
    if (w->thread_exit)
        w->thread_exit();
    return NULL;
}

void pp_parallel_for(pp_task_fn fn, void *ctx, int64_t ntasks, int nthreads, void (*thread_exit)(void))
{
    if (ntasks <= 0)
        return;
    if (nthreads > ntasks)
        nthreads = (int)ntasks;
    if (nthreads > PP_MAX_THREADS)
        nthreads = PP_MAX_THREADS;
    if (nthreads < 1)
        nthreads = 1;
    pp_worker w[PP_MAX_THREADS];
    pthread_t tid[PP_MAX_THREADS];
    int started[PP_MAX_THREADS] = {0};
    for (int i = 0; i < nthreads; i++) {
        w[i] = (pp_worker){fn, ctx, i, ntasks, nthreads, thread_exit};
        if (i > 0)
            started[i] = pthread_create(&tid[i], NULL, worker_main, &w[i]) == 0;
    }
    worker_main(&w[0]);
    for (int i = 1; i < nthreads; i++) {
        if (started[i])
            pthread_join(tid[i], NULL);
        else
            worker_main(&w[i]);
    }
}
