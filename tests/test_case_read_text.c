// test_case_read_text.c — pp_case_read_text (src/pipeline/case.h), the one reader of case files
// behind pp_case_load and pp_sweep_load: every byte of a file longer than its first buffer, NUL
// bytes counted, the text NUL-terminated; a missing file's message; and both loaders through it.
// Run: build/rel/tests/test_case_read_text
#include "test_util.h"

#include "pipeline/case.h"
#include "pipeline/sweep.h"

static void write_file(const char *path, const char *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

// 10,000 bytes (the buffer starts at 4096 and doubles), a NUL in the middle: every byte read
static void case_read_text_every_byte(void **state)
{
    char path[PP_TEST_PATH_MAX];
    pp_test_tmp_path(state, "long.toml", path);
    size_t n = 10000;
    char *data = malloc(n);
    assert_non_null(data);
    for (size_t i = 0; i < n; i++)
        data[i] = (char)('a' + i % 26);
    data[5000] = '\0';
    write_file(path, data, n);
    size_t len = 0;
    pp_error err = {0};
    char *text = pp_case_read_text(path, &len, &err);
    assert_non_null(text);
    assert_int_equal(len, n);
    assert_memory_equal(text, data, n);
    assert_int_equal(text[n], '\0');
    free(text);
    text = pp_case_read_text(path, NULL, &err);  // no length wanted
    assert_non_null(text);
    free(text);
    free(data);
}

static void case_read_text_missing_file(void **state)
{
    char path[PP_TEST_PATH_MAX];
    pp_test_tmp_path(state, "nope.toml", path);
    pp_error err = {0};
    size_t len = 7;
    assert_null(pp_case_read_text(path, &len, &err));
    assert_int_equal(err.code, PP_ERR_INPUT);
    char want[PP_TEST_PATH_MAX + 64];
    snprintf(want, sizeof want, "%s: cannot read the case file: No such file or directory", path);
    assert_string_equal(err.msg, want);
    // both loaders say the same
    pp_case c;
    assert_int_equal(pp_case_load(path, &c, &err), PP_ERR_INPUT);
    assert_string_equal(err.msg, want);
    pp_sweep s;
    assert_int_equal(pp_sweep_load(path, &s, &err), PP_ERR_INPUT);
    assert_string_equal(err.msg, want);
}

// the shipped tiny sweep, loaded from its file: its points, as make test's sweep runs them
static void sweep_load_reads_the_file(void **state)
{
    (void)state;
    pp_sweep s;
    pp_error err = {0};
    int rc = pp_sweep_load("tests/data/cases/sweep/tiny.toml", &s, &err);
    if (rc)
        fprintf(stderr, "  %s\n", err.msg);
    assert_int_equal(rc, PP_OK);
    assert_int_equal(s.n_points, 10);
    pp_sweep_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(case_read_text_every_byte),
        cmocka_unit_test(case_read_text_missing_file),
        cmocka_unit_test(sweep_load_reads_the_file),
    };
    return cmocka_run_group_tests(tests, pp_test_tmpdir_setup, pp_test_tmpdir_teardown);
}
