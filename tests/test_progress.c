// test_progress.c — the progress line's text (done/total, percent, rate, ETA) and that a
// disabled or young bar draws nothing.
#include "test_util.h"

#include "core/progress.h"

static void progress_format_counts_rate_and_eta(void **state)
{
    (void)state;
    char buf[256];
    pp_progress_format("ref", 250, 1000, 5.0, buf, sizeof buf);  // 50/s, 750 left: 15 s
    assert_string_equal(buf, "ref  250/1000 (25%)  50/s  ETA 0:15");
    pp_progress_format("ref", 0, 1000, 2.0, buf, sizeof buf);    // no rate yet: ETA unknown
    assert_string_equal(buf, "ref  0/1000 (0%)  0/s  ETA ?");
    pp_progress_format("r", 6000, 12000, 1.0, buf, sizeof buf);  // 6000 left at 6000/s: 1 s
    assert_string_equal(buf, "r  6000/12000 (50%)  6e+03/s  ETA 0:01");
    pp_progress_format("r", 1, 7201, 1.0, buf, sizeof buf);      // 7200 s left: 120 minutes
    assert_string_equal(buf, "r  1/7201 (0%)  1/s  ETA 120:00");
}

static void progress_disabled_or_young_draws_nothing(void **state)
{
    (void)state;
    pp_progress p;
    pp_progress_start(&p, "x", 0);
    pp_progress_update(&p, 1, 2);
    assert_int_equal(p.drawn, 0);
    pp_progress_start(&p, "x", 1);  // enabled, but less than a second old
    pp_progress_update(&p, 1, 2);
    assert_int_equal(p.drawn, 0);
    pp_progress_end(&p);
    pp_progress_update(NULL, 1, 2);  // a reference without a bar passes NULL
}

// With stderr a file or pipe (a CI log), a line every 10 s (the first 10 s in), none between,
// and no terminal control characters.
static void progress_log_prints_a_line_every_ten_seconds(void **state)
{
    (void)state;
    char path[] = "/tmp/pp_test_progress_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    assert_true(saved >= 0);
    assert_int_equal(dup2(fd, 2), 2);
    pp_progress p;
    pp_progress_start(&p, "ref", PP_PROGRESS_LOG);
    pp_progress_update_at(&p, 10, 100, p.t0 + 1.0);   // too early
    pp_progress_update_at(&p, 50, 100, p.t0 + 9.9);   // still too early
    pp_progress_update_at(&p, 50, 100, p.t0 + 10.0);  // the first line
    pp_progress_update_at(&p, 60, 100, p.t0 + 15.0);  // too soon after it
    pp_progress_update_at(&p, 80, 100, p.t0 + 20.0);  // the second
    pp_progress_end(&p);                              // nothing to clear
    fflush(stderr);
    assert_int_equal(dup2(saved, 2), 2);
    close(saved);
    close(fd);
    char *text = (char *)pp_test_slurp(path, NULL);
    unlink(path);
    assert_string_equal(text, "precprobe: ref  50/100 (50%)  5/s  ETA 0:10\n"
                              "precprobe: ref  80/100 (80%)  4/s  ETA 0:05\n");
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(progress_format_counts_rate_and_eta),
        cmocka_unit_test(progress_disabled_or_young_draws_nothing),
        cmocka_unit_test(progress_log_prints_a_line_every_ten_seconds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
