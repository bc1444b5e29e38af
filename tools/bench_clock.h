// bench_clock.h — the benches' clocks: monotonic wall seconds, and a struct timeval (rusage's
// user and system times) in seconds. (tools/bench_attention_e2e.c, tools/bench_explain.c)
#ifndef PP_BENCH_CLOCK_H
#define PP_BENCH_CLOCK_H

#include <sys/time.h>
#include <time.h>

static inline double pp_bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline double pp_bench_tv_s(struct timeval t)
{
    return (double)t.tv_sec + 1e-6 * (double)t.tv_usec;
}

#endif
