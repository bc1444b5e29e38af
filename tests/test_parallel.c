// test_parallel.c — pp_parallel_for: every task runs exactly once whatever the thread count (none,
// one, more threads than tasks, more than PP_MAX_THREADS), and thread_exit runs once per worker.
#include "test_util.h"

#include <stdatomic.h>

#include "parallel.h"

typedef struct count_job {
    atomic_int *hits;
} count_job;

static void count_task(void *ctx, int64_t t)
{
    count_job *j = ctx;
    atomic_fetch_add(&j->hits[t], 1);
}

static void parallel_for_runs_each_task_once(void **state)
{
    (void)state;
    const int64_t ntasks[] = {0, 1, 7, 64, 1000};
    const int threads[] = {-3, 0, 1, 2, 5, 64, 300};
    for (size_t a = 0; a < sizeof ntasks / sizeof ntasks[0]; a++)
        for (size_t b = 0; b < sizeof threads / sizeof threads[0]; b++) {
            int64_t n = ntasks[a];
            atomic_int *hits = calloc((size_t)(n > 0 ? n : 1), sizeof *hits);
            assert_non_null(hits);
            count_job j = {hits};
            pp_parallel_for(count_task, &j, n, threads[b], NULL);
            for (int64_t t = 0; t < n; t++)
                if (atomic_load(&hits[t]) != 1) {
                    fprintf(stderr, "ntasks %lld, threads %d: task %lld ran %d times\n", (long long)n, threads[b],
                            (long long)t, atomic_load(&hits[t]));
                    fail();
                }
            free(hits);
        }
}

// thread_exit takes no argument (it frees per-thread library state, as mpfr_free_cache2 does), so
// the test counts its calls in a function-local static: test-only state.
static atomic_int *exit_calls_of(void)
{
    static atomic_int calls;
    return &calls;
}

static void on_exit_count(void)
{
    atomic_fetch_add(exit_calls_of(), 1);
}

static void noop_task(void *ctx, int64_t t)
{
    (void)ctx;
    (void)t;
}

static void parallel_for_thread_exit_once_per_worker(void **state)
{
    (void)state;
    atomic_store(exit_calls_of(), 0);
    pp_parallel_for(noop_task, NULL, 10, 4, on_exit_count);
    assert_int_equal(atomic_load(exit_calls_of()), 4);
    atomic_store(exit_calls_of(), 0);
    pp_parallel_for(noop_task, NULL, 3, 8, on_exit_count);  // min(threads, tasks) workers
    assert_int_equal(atomic_load(exit_calls_of()), 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parallel_for_runs_each_task_once),
        cmocka_unit_test(parallel_for_thread_exit_once_per_worker),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
