// test_atomic_file.c — the one atomic writer: a destination that is not a regular file (FIFO,
// socket, directory, a symlink to a FIFO) is refused with exit status 3 and left untouched; a
// symlink to a file (or to a file not there yet) stays a link and its target is replaced; a set
// of files is renamed only when every one was written, and a failed set leaves no file behind.
#include "test_util.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/un.h>

#include "io/atomic_file.h"

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void assert_file_text(const char *path, const char *want)
{
    char *got = (char *)pp_test_slurp(path, NULL);
    assert_string_equal(got, want);
    free(got);
}

static void assert_refused(const char *path, const char *why)
{
    pp_error err = {0};
    assert_int_equal(pp_atomic_write_text(path, "report\n", &err), PP_ERR_RUNTIME);
    if (!strstr(err.msg, why))
        fail_msg("message '%s' does not say '%s'", err.msg, why);
}

static void non_regular_targets_are_refused_untouched(void **state)
{
    char fifo[PP_TEST_PATH_MAX], sock[PP_TEST_PATH_MAX], dir[PP_TEST_PATH_MAX], link[PP_TEST_PATH_MAX];
    pp_test_tmp_path(state, "fifo", fifo);
    pp_test_tmp_path(state, "sock", sock);
    pp_test_tmp_path(state, "dir", dir);
    pp_test_tmp_path(state, "link-to-fifo", link);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(symlink("fifo", link), 0);
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(s >= 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", sock);
    assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);

    assert_refused(fifo, "a FIFO, not a regular file");
    assert_refused(sock, "a socket, not a regular file");
    assert_refused(dir, "is a directory");
    assert_refused(link, "a FIFO, not a regular file");
    close(s);

    struct stat st;
    assert_int_equal(lstat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    assert_int_equal(lstat(sock, &st), 0);
    assert_true(S_ISSOCK(st.st_mode));
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_false(pp_test_has_temp_file(*state));
    // a character device, where the test may make one (root): /dev/null's numbers
    char dev[PP_TEST_PATH_MAX];
    pp_test_tmp_path(state, "null", dev);
    if (mknod(dev, S_IFCHR | 0600, makedev(1, 3)) == 0) {
        assert_refused(dev, "a character device, not a regular file");
        assert_int_equal(lstat(dev, &st), 0);
        assert_true(S_ISCHR(st.st_mode));
    }
}

static void symlink_is_kept_and_its_target_replaced(void **state)
{
    char sub[PP_TEST_PATH_MAX], target[PP_TEST_PATH_MAX], link[PP_TEST_PATH_MAX], chain[PP_TEST_PATH_MAX];
    pp_test_tmp_path(state, "sub", sub);
    pp_test_tmp_path(state, "sub/real.txt", target);
    pp_test_tmp_path(state, "link.txt", link);
    pp_test_tmp_path(state, "chain.txt", chain);
    assert_int_equal(mkdir(sub, 0700), 0);
    write_file(target, "old\n");
    assert_int_equal(symlink("sub/real.txt", link), 0);  // relative to the link's folder
    assert_int_equal(symlink("link.txt", chain), 0);     // a link to a link
    pp_error err = {0};
    assert_int_equal(pp_atomic_write_text(link, "new\n", &err), PP_OK);
    assert_file_text(target, "new\n");
    assert_int_equal(pp_atomic_write_text(chain, "newer\n", &err), PP_OK);
    assert_file_text(target, "newer\n");
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(lstat(chain, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_false(pp_test_has_temp_file(*state));
    assert_false(pp_test_has_temp_file(sub));

    // a dangling link: the file it names is created, the link kept
    char dangling[PP_TEST_PATH_MAX], created[PP_TEST_PATH_MAX];
    pp_test_tmp_path(state, "dangling.txt", dangling);
    pp_test_tmp_path(state, "sub/later.txt", created);
    assert_int_equal(symlink("sub/later.txt", dangling), 0);
    assert_int_equal(pp_atomic_write_text(dangling, "made\n", &err), PP_OK);
    assert_file_text(created, "made\n");
    assert_int_equal(lstat(dangling, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
}

static void a_set_is_renamed_together_or_not_at_all(void **state)
{
    char a[PP_TEST_PATH_MAX], b[PP_TEST_PATH_MAX], fifo[PP_TEST_PATH_MAX];
    pp_test_tmp_path(state, "set-a.txt", a);
    pp_test_tmp_path(state, "set-b.txt", b);
    pp_test_tmp_path(state, "set-fifo", fifo);
    write_file(a, "old a\n");
    write_file(b, "old b\n");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    pp_error err = {0};

    // a refused member: nothing written, nothing renamed
    pp_atomic_set s = {0};
    const char *ta, *tb, *tf;
    assert_int_equal(pp_atomic_set_add(&s, a, &ta, &err), PP_OK);
    assert_int_equal(pp_atomic_set_add(&s, fifo, &tf, &err), PP_ERR_RUNTIME);
    pp_atomic_set_discard(&s);
    assert_file_text(a, "old a\n");
    assert_false(pp_test_has_temp_file(*state));

    // a writer that fails after another succeeded: neither destination changes
    assert_int_equal(pp_atomic_set_add(&s, a, &ta, &err), PP_OK);
    assert_int_equal(pp_atomic_set_add(&s, b, &tb, &err), PP_OK);
    assert_int_equal(pp_atomic_write_text(ta, "new a\n", &err), PP_OK);
    assert_file_text(a, "old a\n");  // staged, not yet renamed
    pp_atomic_set_discard(&s);
    assert_file_text(a, "old a\n");
    assert_file_text(b, "old b\n");
    assert_false(pp_test_has_temp_file(*state));

    // every writer succeeded: all renamed
    assert_int_equal(pp_atomic_set_add(&s, a, &ta, &err), PP_OK);
    assert_int_equal(pp_atomic_set_add(&s, b, &tb, &err), PP_OK);
    assert_int_equal(pp_atomic_write_text(ta, "new a\n", &err), PP_OK);
    assert_int_equal(pp_atomic_write_text(tb, "new b\n", &err), PP_OK);
    assert_int_equal(pp_atomic_set_commit(&s, &err), PP_OK);
    pp_atomic_set_discard(&s);  // harmless after a commit
    assert_file_text(a, "new a\n");
    assert_file_text(b, "new b\n");
    assert_false(pp_test_has_temp_file(*state));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(non_regular_targets_are_refused_untouched),
        cmocka_unit_test(symlink_is_kept_and_its_target_replaced),
        cmocka_unit_test(a_set_is_renamed_together_or_not_at_all),
    };
    return cmocka_run_group_tests(tests, pp_test_tmpdir_setup, pp_test_tmpdir_teardown);
}
