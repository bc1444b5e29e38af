// test_ref_cache.c — the reference cache: a stored entry loads back bit for bit; the key changes
// with every input bit, parameter, format, method and output set; truncated, garbage, renamed
// and tampered entries are misses with a reason, and a later store repairs them; every byte of an
// entry flipped and every truncation is a miss or (a byte HDF5 never reads) a hit with the exact
// values, never wrong values; concurrent writers in forked processes all succeed and leave one
// valid entry and no temporary file; the per-entry lock makes a second process wait for the
// first's entry instead of computing it again.
#include "test_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <hdf5.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "io/h5attr.h"
#include "pipeline/ref_cache.h"

typedef struct fixture {
    char dir[64];
    const pp_op *op;
    pp_op_params p;
    pp_tensor in[2];
    pp_tensor ref[1];
    pp_reference_info info[1];
    int want[1];
} fixture;

static void make_tensor(pp_tensor *t, int64_t a, int64_t b, uint64_t seed)
{
    int64_t shape[3] = {1, a, b};
    pp_error err = {0};
    assert_int_equal(pp_tensor_alloc(t, 3, shape, PP_FMT_FP16, &err), PP_OK);
    for (int64_t i = 0; i < t->numel; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        t->data[i] = pp_round(PP_FMT_FP16, (double)(int64_t)(seed >> 40) / 4096.0, PP_RND_NE, 0);
    }
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_int_equal(pp_test_mkdtemp(f->dir, sizeof f->dir, "ref_cache"), 0);
    strcat(f->dir, "/sub");  // store creates missing folders
    f->op = pp_op_find("gemm");
    assert_non_null(f->op);
    f->p.v[1] = 3, f->p.given[1] = 1;  // m
    f->p.v[2] = 4, f->p.given[2] = 1;  // n
    f->p.v[3] = 5, f->p.given[3] = 1;  // k
    make_tensor(&f->in[0], 3, 5, 1);
    make_tensor(&f->in[1], 5, 4, 2);
    make_tensor(&f->ref[0], 3, 4, 3);
    f->ref[0].format = PP_FMT_FP64;
    f->ref[0].data[5] = 0x1.23456789abcdep-3;  // a value fp16 cannot hold: stored as binary64
    snprintf(f->info[0].tensor, sizeof f->info[0].tensor, "c");
    snprintf(f->info[0].method, sizeof f->info[0].method, "exact");
    f->info[0].error_bound = 0x1p-60;
    f->want[0] = 1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    f->dir[strlen(f->dir) - 4] = '\0';  // less "/sub"
    pp_test_rm_tree(f->dir);
    pp_tensor_free(&f->in[0]);
    pp_tensor_free(&f->in[1]);
    pp_tensor_free(&f->ref[0]);
    free(f);
    return 0;
}

static void key_of(const fixture *f, char hex[PP_REF_KEY_HEX])
{
    pp_ref_cache_key(f->op, &f->p, PP_FMT_FP16, "fast", f->want, f->in, hex);
}

static void store(const fixture *f, const char *hex)
{
    pp_error err = {0};
    assert_int_equal(pp_ref_cache_store(f->dir, hex, f->op, f->want, f->ref, f->info, &err), PP_OK);
}

// 1 on a hit (and then the loaded values are compared bit for bit), 0 on a miss with why set.
static int load(const fixture *f, const char *hex, char *why, size_t n)
{
    pp_tensor got[1];
    pp_reference_info info[1];
    memset(got, 0, sizeof got);
    memset(info, 0, sizeof info);
    int hit = pp_ref_cache_load(f->dir, hex, f->op, &f->p, f->want, got, info, why, n);
    if (hit) {
        assert_int_equal(got[0].numel, f->ref[0].numel);
        assert_memory_equal(got[0].data, f->ref[0].data, (size_t)got[0].numel * sizeof(double));
        assert_true(info[0].error_bound == f->info[0].error_bound);
        assert_string_equal(info[0].method, f->info[0].method);
        assert_string_equal(info[0].tensor, "c");
        pp_tensor_free(&got[0]);
    }
    return hit;
}

static void ref_cache_roundtrip_is_exact(void **state)
{
    fixture *f = *state;
    char hex[PP_REF_KEY_HEX], why[600];
    key_of(f, hex);
    assert_int_equal(strlen(hex), 64);
    assert_int_equal(load(f, hex, why, sizeof why), 0);  // nothing there yet: a plain miss
    assert_string_equal(why, "");
    store(f, hex);
    assert_int_equal(load(f, hex, why, sizeof why), 1);
}

static void ref_cache_key_depends_on_everything(void **state)
{
    fixture *f = *state;
    char base[PP_REF_KEY_HEX], hex[PP_REF_KEY_HEX];
    key_of(f, base);
    key_of(f, hex);
    assert_string_equal(base, hex);  // deterministic
    // one input bit: +0 and -0 are different inputs
    double keep = f->in[1].data[7];
    f->in[1].data[7] = pp_f64_from_bits(pp_f64_bits(keep) ^ 1ull << 63);
    key_of(f, hex);
    assert_string_not_equal(base, hex);
    f->in[1].data[7] = keep;
    // a parameter (alpha given vs default), the format, the method, the outputs wanted
    f->p.given[4] = 1;
    f->p.v[4] = 0.0;
    key_of(f, hex);
    assert_string_not_equal(base, hex);
    f->p.given[4] = 0;
    pp_ref_cache_key(f->op, &f->p, PP_FMT_BF16, "fast", f->want, f->in, hex);
    assert_string_not_equal(base, hex);
    pp_ref_cache_key(f->op, &f->p, PP_FMT_FP16, "mpfr-plain", f->want, f->in, hex);
    assert_string_not_equal(base, hex);
    int none[1] = {0};
    pp_ref_cache_key(f->op, &f->p, PP_FMT_FP16, "fast", none, f->in, hex);
    assert_string_not_equal(base, hex);
    key_of(f, hex);
    assert_string_equal(base, hex);
}

static void entry_path(const fixture *f, const char *hex, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s.h5", f->dir, hex);
}

static void ref_cache_corrupt_entries_are_misses(void **state)
{
    fixture *f = *state;
    char hex[PP_REF_KEY_HEX], path[600], why[600];
    key_of(f, hex);
    store(f, hex);
    entry_path(f, hex, path, sizeof path);

    // truncated to half its size
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    long size = ftell(fp);
    fclose(fp);
    assert_int_equal(truncate(path, size / 2), 0);
    assert_int_equal(load(f, hex, why, sizeof why), 0);
    assert_non_null(strstr(why, path));
    store(f, hex);  // the next store repairs it
    assert_int_equal(load(f, hex, why, sizeof why), 1);

    // garbage
    fp = fopen(path, "wb");
    fputs("not an HDF5 file", fp);
    fclose(fp);
    assert_int_equal(load(f, hex, why, sizeof why), 0);
    assert_non_null(strstr(why, "truncated"));

    // another key's entry under this name
    char other[PP_REF_KEY_HEX];
    pp_ref_cache_key(f->op, &f->p, PP_FMT_BF16, "fast", f->want, f->in, other);
    store(f, other);
    char other_path[600];
    entry_path(f, other, other_path, sizeof other_path);
    assert_int_equal(rename(other_path, path), 0);
    assert_int_equal(load(f, hex, why, sizeof why), 0);
    assert_non_null(strstr(why, "another key"));

    // one stored value changed: the checksum catches it
    store(f, hex);
    hid_t file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t ds = H5Dopen2(file, "/c", H5P_DEFAULT);
    double *vals = malloc((size_t)f->ref[0].numel * sizeof *vals);
    assert_true(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, vals) >= 0);
    vals[3] = nextafter(vals[3], INFINITY);
    assert_true(H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, vals) >= 0);
    free(vals);
    H5Dclose(ds);
    H5Fclose(file);
    assert_int_equal(load(f, hex, why, sizeof why), 0);
    assert_non_null(strstr(why, "checksum"));

    // a tampered error bound: also covered by the checksum
    store(f, hex);
    file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    ds = H5Dopen2(file, "/c", H5P_DEFAULT);
    H5Adelete(ds, "error_bound");
    assert_int_equal(pp_h5attr_put_f64(ds, "error_bound", 0.0), 0);
    H5Dclose(ds);
    H5Fclose(file);
    assert_int_equal(load(f, hex, why, sizeof why), 0);
    store(f, hex);
    assert_int_equal(load(f, hex, why, sizeof why), 1);
}

static long file_size(const char *path)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    long size = ftell(fp);
    fclose(fp);
    return size;
}

static unsigned char *read_all(const char *path, long size)
{
    unsigned char *b = malloc((size_t)size);
    FILE *fp = fopen(path, "rb");
    assert_non_null(b);
    assert_non_null(fp);
    assert_int_equal(fread(b, 1, (size_t)size, fp), (size_t)size);
    fclose(fp);
    return b;
}

static void write_all(const char *path, const unsigned char *b, long size)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(b, 1, (size_t)size, fp), (size_t)size);
    fclose(fp);
}

// Every byte of the entry flipped in turn is a miss with a reason (the file checksum of the
// trailer; load() would check a hit's values bit for bit): a damaged entry is never trusted.
static void ref_cache_every_byte_flip_is_caught(void **state)
{
    fixture *f = *state;
    char hex[PP_REF_KEY_HEX], path[600], why[600];
    key_of(f, hex);
    store(f, hex);
    entry_path(f, hex, path, sizeof path);
    long size = file_size(path);
    unsigned char *good = read_all(path, size), *bad = malloc((size_t)size);
    assert_non_null(bad);
    int misses = 0, hits = 0;
    // flipped in place (pwrite, no truncation: rewriting a file from empty makes ext4 flush it)
    int fd = open(path, O_WRONLY);
    assert_true(fd >= 0);
    for (long k = 0; k < size; k++) {
        unsigned char flipped = good[k] ^ 0x5a;
        assert_int_equal(pwrite(fd, &flipped, 1, k), 1);
        int hit = load(f, hex, why, sizeof why);
        assert_int_equal(pwrite(fd, &good[k], 1, k), 1);
        if (hit)
            hits++;
        else {
            misses++;
            assert_non_null(strstr(why, path));
        }
    }
    close(fd);
    // the values: find the first stored binary64 in the image and flip one of its mantissa bits
    const double v = f->ref[0].data[0];
    long at = -1;
    for (long k = 0; k + 8 <= size && at < 0; k++)
        if (!memcmp(good + k, &v, 8))
            at = k;
    assert_true(at >= 0);
    memcpy(bad, good, (size_t)size);
    bad[at] ^= 1;
    write_all(path, bad, size);
    assert_int_equal(load(f, hex, why, sizeof why), 0);
    assert_non_null(strstr(why, "checksum"));
    printf("byte flips of a %ld-byte entry: %d misses\n", size, misses);
    assert_int_equal(hits, 0);
    assert_int_equal(misses, size);
    write_all(path, good, size);
    assert_int_equal(load(f, hex, why, sizeof why), 1);
    free(good);
    free(bad);
}

// Every truncation of the entry (each length from 0 to size - 1) is a miss.
static void ref_cache_every_truncation_is_a_miss(void **state)
{
    fixture *f = *state;
    char hex[PP_REF_KEY_HEX], path[600], why[600];
    key_of(f, hex);
    store(f, hex);
    entry_path(f, hex, path, sizeof path);
    long size = file_size(path);
    for (long len = size - 1; len >= 0; len--) {  // shorter and shorter, in place
        assert_int_equal(truncate(path, len), 0);
        assert_int_equal(load(f, hex, why, sizeof why), 0);
        assert_true(why[0] != '\0');
    }
}

// Files in dir other than the entries and lock files: temporary names left behind.
static int stray_files(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || (len == 67 && !strcmp(e->d_name + 64, ".h5")) ||
            (len == 69 && !strcmp(e->d_name + 64, ".lock")))
            continue;
        printf("stray file %s\n", e->d_name);
        n++;
    }
    closedir(d);
    return n;
}

// Eight processes store the same entry at once, each many times: every store succeeds, the one
// entry left is valid, no temporary file is left.
static void ref_cache_concurrent_writers_leave_one_valid_entry(void **state)
{
    fixture *f = *state;
    char hex[PP_REF_KEY_HEX], why[600];
    key_of(f, hex);
    enum { WRITERS = 8, STORES = 4 };
    pid_t pid[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
        pid[w] = fork();
        assert_true(pid[w] >= 0);
        if (pid[w] == 0) {
            int bad = 0;
            for (int i = 0; i < STORES; i++) {
                pp_error err = {0};
                bad |= pp_ref_cache_store(f->dir, hex, f->op, f->want, f->ref, f->info, &err) != PP_OK;
                pp_tensor got[1];
                pp_reference_info info[1];
                memset(got, 0, sizeof got);
                // a reader in the middle of the writes sees the whole entry, never a partial one
                if (pp_ref_cache_load(f->dir, hex, f->op, &f->p, f->want, got, info, why, sizeof why)) {
                    bad |= memcmp(got[0].data, f->ref[0].data, (size_t)got[0].numel * sizeof(double)) != 0;
                    pp_tensor_free(&got[0]);
                } else {
                    bad = 1;
                }
            }
            _exit(bad);
        }
    }
    for (int w = 0; w < WRITERS; w++) {
        int st;
        assert_int_equal(waitpid(pid[w], &st, 0), pid[w]);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
    }
    assert_int_equal(load(f, hex, why, sizeof why), 1);
    assert_int_equal(stray_files(f->dir), 0);
}

// Until process pid is sleeping (state S in /proc/pid/stat), for at most about 60 s; returns at
// once where /proc cannot be read. Ordering for the test below, not timing: nothing is asserted
// about how long it takes.
static void wait_until_sleeping(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    for (int i = 0; i < 60000; i++) {
        FILE *s = fopen(path, "r");
        if (!s)
            return;
        char line[512];
        char *got = fgets(line, sizeof line, s);
        fclose(s);
        if (!got)
            return;
        const char *close_paren = strrchr(line, ')');  // the command name may hold spaces
        if (!close_paren || close_paren[1] != ' ')
            return;
        if (close_paren[2] == 'S')
            return;
        struct timespec pause = {0, 1000 * 1000};
        nanosleep(&pause, NULL);
    }
}

// While one process holds an entry's lock, another's pp_ref_cache_lock waits (waited = 1) and gets
// the lock only after the first stored the entry and unlocked: it then finds the entry, so the
// reference is computed once. Ordering, not timing: the child cannot lock before the parent's
// unlock, which comes after the store.
static void ref_cache_lock_makes_the_second_process_wait(void **state)
{
    fixture *f = *state;
    char hex[PP_REF_KEY_HEX], why[600];
    key_of(f, hex);
    int fd = -1, waited = 0;
    assert_int_equal(pp_ref_cache_lock(f->dir, hex, &fd, &waited), PP_OK);
    assert_true(fd >= 0);
    assert_int_equal(waited, 0);
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(ready[0]);
        int cfd = -1, cwaited = 0;
        assert_int_equal(write(ready[1], "x", 1), 1);  // about to wait
        int rc = pp_ref_cache_lock(f->dir, hex, &cfd, &cwaited);
        pp_tensor got[1];
        pp_reference_info info[1];
        memset(got, 0, sizeof got);
        int hit = pp_ref_cache_load(f->dir, hex, f->op, &f->p, f->want, got, info, why, sizeof why);
        pp_tensor_free(&got[0]);
        pp_ref_cache_unlock(cfd);
        _exit(rc == PP_OK && cfd >= 0 && cwaited == 1 && hit ? 0 : 1);
    }
    close(ready[1]);
    char c;
    assert_int_equal(read(ready[0], &c, 1), 1);
    close(ready[0]);
    // the child is at (or about to reach) the lock: it cannot pass it before this unlock. Wait
    // until it sleeps in the lock's retry loop (the only call after its write that can sleep), so
    // that it must have seen the lock held (cwaited = 1) whatever the machine's load.
    wait_until_sleeping(pid);
    assert_int_equal(load(f, hex, why, sizeof why), 0);
    store(f, hex);
    pp_ref_cache_unlock(fd);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

static void ref_cache_unwritable_folder_is_runtime_error(void **state)
{
    fixture *f = *state;
    char hex[PP_REF_KEY_HEX];
    key_of(f, hex);
    pp_error err = {0};
    assert_int_equal(pp_ref_cache_store("/proc/precprobe-no", hex, f->op, f->want, f->ref, f->info, &err),
                     PP_ERR_RUNTIME);
    assert_non_null(strstr(err.msg, "/proc/precprobe-no"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(ref_cache_roundtrip_is_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(ref_cache_key_depends_on_everything, setup, teardown),
        cmocka_unit_test_setup_teardown(ref_cache_corrupt_entries_are_misses, setup, teardown),
        cmocka_unit_test_setup_teardown(ref_cache_unwritable_folder_is_runtime_error, setup, teardown),
        cmocka_unit_test_setup_teardown(ref_cache_every_byte_flip_is_caught, setup, teardown),
        cmocka_unit_test_setup_teardown(ref_cache_every_truncation_is_a_miss, setup, teardown),
        cmocka_unit_test_setup_teardown(ref_cache_concurrent_writers_leave_one_valid_entry, setup, teardown),
        cmocka_unit_test_setup_teardown(ref_cache_lock_makes_the_second_process_wait, setup, teardown),
    };
    if (getenv("PP_TEST_FILTER"))  // one test by name while debugging
        cmocka_set_test_filter(getenv("PP_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
