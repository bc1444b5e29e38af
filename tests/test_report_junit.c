// test_report_junit.c — junit.xml: well-formed (xmllint --noout, where installed), one testcase
// per comparison and per verdict, failures only for failed verdicts, every text escaped so that
// an XML parser gives back exactly torch's message, the statistics and the names (invalid UTF-8
// as U+FFFD); and pp_atomic_write_text's replace-or-nothing behaviour.
#include "test_util.h"

#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/atomic_file.h"
#include "core/close.h"
#include "report/report_junit.h"
#include "core/results.h"

// ---------------------------------------------------------------------------------------------
// Helpers

typedef struct scratch {
    char dir[64];
    char path[160];  // dir/junit.xml
} scratch;

static void scratch_make(scratch *s)
{
    assert_int_equal(pp_test_mkdtemp(s->dir, sizeof s->dir, "report_junit"), 0);
    snprintf(s->path, sizeof s->path, "%s/junit.xml", s->dir);
}

static int scratch_entries(const scratch *s)
{
    return pp_test_dir_entries(s->dir);
}

static void scratch_remove(scratch *s)
{
    pp_test_rm_tree(s->dir);
}

// The whole file, malloc'd and NUL-terminated.
static char *slurp(const char *path)
{
    return (char *)pp_test_slurp(path, NULL);
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static int have(const char *tool)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "command -v %s > /dev/null 2>&1", tool);
    return system(cmd) == 0;
}

// Runs cmd and captures its standard output (at most n - 1 bytes), less the one newline
// xmllint --xpath puts after a string result. Returns its exit status.
static int capture(const char *cmd, char *out, size_t n)
{
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t k = fread(out, 1, n - 1, p);
    if (k > 0 && out[k - 1] == '\n')
        k--;
    out[k] = '\0';
    return pclose(p);
}

static void set_name(char *dst, const char *src)
{
    snprintf(dst, PP_NAME_MAX, "%s", src);
}

static void add_cmp(pp_run_result *r, const char *variant, const char *tensor, const char *against,
                    const double *a, const double *e, int64_t n)
{
    pp_comparison *c = &r->comparisons[r->n_comparisons++];
    set_name(c->variant, variant);
    set_name(c->tensor, tensor);
    set_name(c->against, against);
    c->ndim = 2;
    c->shape[0] = 2;
    c->shape[1] = n / 2;
    c->opts = (pp_close_opts){1e-3, 1e-5, 0, 2, 1, PP_FMT_FP16, PP_FMT_FP64};
    pp_close_stats_init(&c->stats);
    pp_close_stats_update(&c->stats, &c->opts, a, e, n, 0);
}

// Names that need escaping, and bytes that are not UTF-8 or not XML characters: overlong '/',
// a surrogate, U+FFFE, a code point above U+10FFFF, a truncated sequence at the end.
#define NASTY_VARIANT "a<b&\"c'\x01\xff"
#define NASTY_TENSOR "t\tab\r\n\xC0\xAF\xED\xA0\x80\xEF\xBF\xBE\xF4\x90\x80\x80"
#define NASTY_AGAINST "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xE2\x82"
// What an XML parser must give back for "VARIANT.TENSOR vs AGAINST": each bad byte one U+FFFD,
// the control character as \x01.
#define FFFD "\xEF\xBF\xBD"
#define NASTY_NAME "a<b&\"c'\\x01" FFFD ".t\tab\r\n" FFFD FFFD FFFD FFFD FFFD FFFD FFFD FFFD FFFD \
                   FFFD FFFD FFFD " vs \xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80" FFFD FFFD

static void build_run(pp_run_result *r)
{
    memset(r, 0, sizeof *r);
    snprintf(r->precprobe_version, sizeof r->precprobe_version, "0.1.0");
    set_name(r->case_name, "cp & <ring>");
    set_name(r->op, "attention_fwd");
    snprintf(r->device, sizeof r->device, "cpu");
    snprintf(r->created_utc, sizeof r->created_utc, "2026-11-22T22:30:00Z");
    r->seed = 42;
    // Mismatching pairs with NaN and Inf, one close pair set, and the nasty names.
    static const double e0[6] = {1.0, 2.0, 3.0, INFINITY, NAN, -0.0};
    static const double a0[6] = {1.0, 2.001953125, 3.5, INFINITY, 1.0, 0.0};
    static const double a1[4] = {0.5, 0.25, -1.0, 0x1p-24};
    r->comparisons = calloc(3, sizeof *r->comparisons);
    assert_non_null(r->comparisons);
    add_cmp(r, "fp16-softmax=fp32", "out", "reference", a0, e0, 6);
    add_cmp(r, "fp16-softmax=fp32", "lse", "reference", a1, a1, 4);
    add_cmp(r, NASTY_VARIANT, NASTY_TENSOR, NASTY_AGAINST, a0, e0, 6);
    r->verdicts = calloc(2, sizeof *r->verdicts);
    assert_non_null(r->verdicts);
    r->n_verdicts = 2;
    snprintf(r->verdicts[0].rule, sizeof r->verdicts[0].rule, "*.out.mismatch_fraction <= 0.01");
    snprintf(r->verdicts[0].detail, sizeof r->verdicts[0].detail,
             "fp16-softmax=fp32.out: mismatch_fraction 0.5 > 0.01 ]]> <&>");
    r->verdicts[0].passed = 0;
    snprintf(r->verdicts[1].rule, sizeof r->verdicts[1].rule, "baseline: \"max_ulp\"");
    snprintf(r->verdicts[1].detail, sizeof r->verdicts[1].detail, "2.0 -> 2.0");
    r->verdicts[1].passed = 1;
}

// torch's message, a blank line, the statistics: what comparison i's <system-out> must decode to.
static void expected_out(const pp_comparison *c, char *buf, size_t n)
{
    char m[2048], s[4096];
    int rc = pp_close_message(&c->stats, &c->opts, c->ndim, c->shape, m, sizeof m);
    assert_true(rc >= 0);
    assert_int_equal(pp_close_stats_text(&c->stats, &c->opts, c->ndim, c->shape, s, sizeof s), 0);
    if (rc == 0)
        snprintf(m, sizeof m, "All close: 0 / %lld elements mismatched (rtol 0.001, atol 1e-05).",
                 (long long)c->stats.numel);
    snprintf(buf, n, "%s\n\n%s", m, s);
}

static void expect_equal_text(const char *what, const char *want, const char *got)
{
    if (strcmp(want, got)) {
        fprintf(stderr, "FAIL %s\n--- want\n%s\n--- got\n%s\n---\n", what, want, got);
        fail();
    }
}

// ---------------------------------------------------------------------------------------------
// JUnit

static void junit_structure_and_counts(void **state)
{
    (void)state;
    scratch s;
    scratch_make(&s);
    pp_run_result r;
    build_run(&r);
    pp_error e = {0};
    assert_int_equal(pp_report_junit_write(s.path, &r, NULL, &e), PP_OK);
    char *x = slurp(s.path);
    assert_int_equal(count(x, "<testsuite "), 1);
    assert_int_equal(count(x, "<testcase "), 5);
    // Mismatches are measurements: only the failed verdict is a failure.
    assert_int_equal(count(x, "<failure "), 1);
    assert_non_null(strstr(x, "<testsuite name=\"cp &amp; &lt;ring&gt;\" tests=\"5\" failures=\"1\""));
    assert_non_null(strstr(x, "classname=\"precprobe.cp &amp; &lt;ring&gt;\" "
                              "name=\"fp16-softmax=fp32.out vs reference\""));
    assert_non_null(strstr(x, "name=\"gate: baseline: &quot;max_ulp&quot;\""));
    assert_non_null(strstr(x, "<failure message=\"gate rule failed\" type=\"gate\">"
                              "fp16-softmax=fp32.out: mismatch_fraction 0.5 &gt; 0.01 ]]&gt; &lt;&amp;&gt;"
                              "</failure>"));
    assert_non_null(strstr(x, "Tensor-likes are not close!"));
    free(x);
    pp_run_result_free(&r);
    scratch_remove(&s);
}

static void junit_well_formed_and_decodes_exactly(void **state)
{
    (void)state;
    if (!have("xmllint")) {
        fprintf(stderr, "  xmllint not installed (apt-get install libxml2-utils): skipped\n");
        skip();
    }
    scratch s;
    scratch_make(&s);
    pp_run_result r;
    build_run(&r);
    pp_error e = {0};
    assert_int_equal(pp_report_junit_write(s.path, &r, NULL, &e), PP_OK);
    char cmd[512], got[16384], want[8192];
    snprintf(cmd, sizeof cmd, "xmllint --noout '%s' 2>&1", s.path);
    if (capture(cmd, got, sizeof got) != 0) {
        fprintf(stderr, "FAIL xmllint: junit.xml is not well-formed:\n%s\n", got);
        fail();
    }
    // An XML parser returns exactly the texts put in (escaping is lossless for valid UTF-8).
    for (int i = 0; i < r.n_comparisons; i++) {
        snprintf(cmd, sizeof cmd, "xmllint --xpath 'string(//testcase[%d]/system-out)' '%s'", i + 1,
                 s.path);
        assert_int_equal(capture(cmd, got, sizeof got), 0);
        expected_out(&r.comparisons[i], want, sizeof want);
        expect_equal_text("system-out decodes to torch's message and the statistics", want, got);
    }
    snprintf(cmd, sizeof cmd, "xmllint --xpath 'string(//testcase[3]/@name)' '%s'", s.path);
    assert_int_equal(capture(cmd, got, sizeof got), 0);
    expect_equal_text("testcase name with escapes and invalid UTF-8", NASTY_NAME, got);
    snprintf(cmd, sizeof cmd, "xmllint --xpath 'string(//testcase[4]/failure)' '%s'", s.path);
    assert_int_equal(capture(cmd, got, sizeof got), 0);
    expect_equal_text("failure text", r.verdicts[0].detail, got);
    pp_run_result_free(&r);
    scratch_remove(&s);
}

// Messages handed in give the same file as messages computed here.
static void junit_given_messages_match_computed(void **state)
{
    (void)state;
    scratch s;
    scratch_make(&s);
    pp_run_result r;
    build_run(&r);
    char m[3][2048];
    const char *msgs[3];
    for (int i = 0; i < 3; i++) {
        const pp_comparison *c = &r.comparisons[i];
        assert_true(pp_close_message(&c->stats, &c->opts, c->ndim, c->shape, m[i], sizeof m[i]) >= 0);
        msgs[i] = m[i];
    }
    assert_string_equal(msgs[1], "");  // the close one
    pp_error e = {0};
    assert_int_equal(pp_report_junit_write(s.path, &r, NULL, &e), PP_OK);
    char *a = slurp(s.path);
    assert_int_equal(pp_report_junit_write(s.path, &r, msgs, &e), PP_OK);
    char *b = slurp(s.path);
    expect_equal_text("junit with given messages", a, b);
    free(a);
    free(b);
    pp_run_result_free(&r);
    scratch_remove(&s);
}

static void junit_write_failure_is_runtime_error(void **state)
{
    (void)state;
    scratch s;
    scratch_make(&s);
    pp_run_result r;
    build_run(&r);
    char path[256];
    snprintf(path, sizeof path, "%s/missing/junit.xml", s.dir);
    pp_error e = {0};
    assert_int_equal(pp_report_junit_write(path, &r, NULL, &e), PP_ERR_RUNTIME);
    assert_non_null(strstr(e.msg, path));
    assert_int_equal(scratch_entries(&s), 0);
    pp_run_result_free(&r);
    scratch_remove(&s);
}

// ---------------------------------------------------------------------------------------------
// pp_atomic_write_text

static void atomic_write_text_replaces_and_keeps_mode(void **state)
{
    (void)state;
    scratch s;
    scratch_make(&s);
    pp_error e = {0};
    assert_int_equal(pp_atomic_write_text(s.path, "first\n", &e), PP_OK);
    assert_int_equal(chmod(s.path, 0600), 0);
    assert_int_equal(pp_atomic_write_text(s.path, "2", &e), PP_OK);
    char *x = slurp(s.path);
    assert_string_equal(x, "2");
    free(x);
    struct stat st;
    assert_int_equal(stat(s.path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(pp_atomic_write_text(s.path, "", &e), PP_OK);
    assert_int_equal(stat(s.path, &st), 0);
    assert_int_equal(st.st_size, 0);
    assert_int_equal(scratch_entries(&s), 1);
    scratch_remove(&s);
}

// A directory in the way, and a write cut off by a file-size limit (in a child): PP_ERR_RUNTIME,
// the old content intact, no temporary file.
static void atomic_write_text_failure_leaves_old_file(void **state)
{
    (void)state;
    scratch s;
    scratch_make(&s);
    pp_error e = {0};
    assert_int_equal(pp_atomic_write_text(s.dir, "x", &e), PP_ERR_RUNTIME);
    assert_int_equal(pp_atomic_write_text(s.path, "old", &e), PP_OK);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {2, 2};
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
            exit(10);
        pp_error ce = {0};
        exit(pp_atomic_write_text(s.path, "longer than two bytes", &ce) == PP_ERR_RUNTIME ? 0 : 20);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char *x = slurp(s.path);
    assert_string_equal(x, "old");
    free(x);
    assert_int_equal(scratch_entries(&s), 1);
    scratch_remove(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(junit_structure_and_counts),
        cmocka_unit_test(junit_well_formed_and_decodes_exactly),
        cmocka_unit_test(junit_given_messages_match_computed),
        cmocka_unit_test(junit_write_failure_is_runtime_error),
        cmocka_unit_test(atomic_write_text_replaces_and_keeps_mode),
        cmocka_unit_test(atomic_write_text_failure_leaves_old_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
