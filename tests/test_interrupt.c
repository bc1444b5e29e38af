// test_interrupt.c — Ctrl-C during a run: a SIGINT sent from this test while the second of two
// references is being computed stops the run (PP_ERR_INTERRUPTED, a message naming what was cut
// short), keeps the finished reference in the cache and stores nothing of the interrupted one;
// the rerun resumes: the finished reference is read from the cache (its entry untouched), only
// the other is computed, and the results equal an uninterrupted run's.
#include "test_util.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>

#include "core/statistic.h"
#include "interrupt.h"
#include "pipeline/run.h"

// Two format groups, so two references; the plain MPFR method makes each take long enough
// (a good fraction of a second) for the signal to land inside the second.
static const char case_text[] = "[case]\nname = \"interrupt\"\nop = \"gemm\"\nseed = 5\nreference = \"mpfr-plain\"\n"
                                "[op]\nbatch = 2\nm = 24\nn = 24\nk = 2048\n"
                                "[variants.fp16]\nformat = \"fp16\"\n"
                                "[variants.bf16]\nformat = \"bf16\"\n";

// The .h5 entries in the cache folder.
static int cache_entries(const char *dir, char *first, size_t n)
{
    int count = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len > 3 && !strcmp(e->d_name + len - 3, ".h5")) {
            if (!count && first)
                snprintf(first, n, "%s/%s", dir, e->d_name);
            count++;
        }
    }
    if (d)
        closedir(d);
    return count;
}

typedef struct watcher {
    const char *dir;
    atomic_int stop, signalled;
} watcher;

// Sends SIGINT to this process as soon as the first reference is in the cache.
static void *watch(void *arg)
{
    watcher *w = arg;
    while (!atomic_load(&w->stop)) {
        if (cache_entries(w->dir, NULL, 0) >= 1) {
            kill(getpid(), SIGINT);
            atomic_store(&w->signalled, 1);
            return NULL;
        }
        struct timespec ts = {0, 200000};  // 0.2 ms
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void interrupted_run_keeps_finished_references_and_resumes(void **state)
{
    const char *dir = *state;
    pp_case c;
    pp_error err = {0};
    assert_int_equal(pp_case_parse(case_text, strlen(case_text), "interrupt.toml", &c, &err), PP_OK);
    pp_run_opts o = {.device = "cpu", .threads = 2, .cache_dir = dir};
    // a shell's background job (make test run with &) ignores SIGINT, and pp_interrupt_install
    // keeps an ignored SIGINT ignored: this test wants the default first, then the handler
    signal(SIGINT, SIG_DFL);
    assert_int_equal(pp_interrupt_install(), 0);
    struct sigaction now;
    assert_int_equal(sigaction(SIGINT, NULL, &now), 0);
    assert_true(now.sa_handler != SIG_IGN && now.sa_handler != SIG_DFL);

    watcher w = {dir, 0, 0};
    pthread_t tid;
    assert_int_equal(pthread_create(&tid, NULL, watch, &w), 0);
    pp_run_result r;
    int rc = pp_run_case(&c, &o, &r, &err);
    atomic_store(&w.stop, 1);
    pthread_join(tid, NULL);
    assert_true(atomic_load(&w.signalled));
    assert_int_equal(rc, PP_ERR_INTERRUPTED);
    assert_int_equal(pp_interrupted(), SIGINT);
    // the signal lands while the other group's inputs or reference are being made: usually bf16's,
    // but the two groups' references run side by side (2 threads), and on a loaded machine the
    // bf16 one may finish first
    if (strncmp(err.msg, "interrupt: interrupted (SIGINT) during the ", 43) ||
        (!strstr(err.msg, " (bf16); 1 finished reference kept in the reference cache: a rerun resumes from there") &&
         !strstr(err.msg, " (fp16); 1 finished reference kept in the reference cache: a rerun resumes from there")))
        fail_msg("message: %s", err.msg);
    char entry[PP_TEST_PATH_MAX + 300];
    assert_int_equal(cache_entries(dir, entry, sizeof entry), 1);  // the interrupted one not stored
    assert_false(pp_test_has_temp_file(dir));
    struct stat before;
    assert_int_equal(stat(entry, &before), 0);

    // the rerun: the finished reference from the cache, the other one computed
    pp_interrupt_clear();
    assert_int_equal(pp_run_case(&c, &o, &r, &err), PP_OK);
    assert_int_equal(cache_entries(dir, NULL, 0), 3);  // fp16, bf16, and binary32 (the original inputs)
    struct stat after;
    assert_int_equal(stat(entry, &after), 0);
    assert_int_equal(after.st_ino, before.st_ino);  // read, not rewritten
    assert_memory_equal(&after.st_mtim, &before.st_mtim, sizeof after.st_mtim);

    // the same statistics as a run that was never interrupted (and uses no cache)
    pp_run_opts fresh = o;
    fresh.cache_dir = NULL;
    pp_run_result whole;
    assert_int_equal(pp_run_case(&c, &fresh, &whole, &err), PP_OK);
    assert_int_equal(r.n_comparisons, whole.n_comparisons);
    for (int i = 0; i < r.n_comparisons; i++)
        for (int s = 0; s < pp_statistic_count(); s++) {
            double x = pp_statistic_at(s)->value(&r.comparisons[i].stats);
            double y = pp_statistic_at(s)->value(&whole.comparisons[i].stats);
            assert_memory_equal(&x, &y, sizeof x);
        }
    pp_run_result_free(&whole);
    pp_run_result_free(&r);
    pp_case_free(&c);
}

// A stop request before the run starts: nothing is computed, and the message says so.
static void a_run_interrupted_before_it_starts_keeps_nothing(void **state)
{
    (void)state;
    pp_case c;
    pp_error err = {0};
    assert_int_equal(pp_case_parse(case_text, strlen(case_text), "interrupt.toml", &c, &err), PP_OK);
    pp_run_opts o = {.device = "cpu", .threads = 1};
    assert_int_equal(pp_interrupt_install(), 0);
    raise(SIGTERM);
    pp_run_result r;
    assert_int_equal(pp_run_case(&c, &o, &r, &err), PP_ERR_INTERRUPTED);
    assert_string_equal(err.msg, "interrupt: interrupted (SIGTERM) during the inputs (fp16); no reference had finished");
    pp_interrupt_clear();
    pp_case_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(interrupted_run_keeps_finished_references_and_resumes),
        cmocka_unit_test(a_run_interrupted_before_it_starts_keeps_nothing),
    };
    return cmocka_run_group_tests(tests, pp_test_tmpdir_setup, pp_test_tmpdir_teardown);
}
