// test_tensor_io.c — the spec dispatch (X.npy, X.safetensors[:NAME], X.h5:/DATASET), whole-file
// reading, and atomic writing: a failed write (file size limit hit midway) leaves the old file
// intact and no temporary file behind, and a replaced file keeps its mode.
#include "test_util.h"

#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/file_bytes.h"
#include "io/printable.h"
#include "io/tensor_io.h"

// ---------------------------------------------------------------------------------------------
// Helpers

// A tensor of n values k + i/4 (exact in every format with p >= 3 for small k and n).
static void ramp(pp_tensor *t, int64_t n, pp_format_id f, double k)
{
    pp_error err = {0};
    assert_int_equal(pp_tensor_alloc(t, 1, &n, f, &err), PP_OK);
    for (int64_t i = 0; i < n; i++)
        t->data[i] = k + (double)(i % 8) / 4;
}

static void expect_equal(const pp_tensor *a, const pp_tensor *b)
{
    assert_int_equal(a->ndim, b->ndim);
    assert_int_equal(a->numel, b->numel);
    for (int64_t i = 0; i < a->numel; i++)
        if (a->data[i] != b->data[i]) {
            fprintf(stderr, "FAIL value at %lld\n", (long long)i);
            pp_test_print_double("got ", a->data[i]);
            pp_test_print_double("want", b->data[i]);
            fail();
        }
}

// ---------------------------------------------------------------------------------------------
// Specs

static void tensor_io_every_spec_form(void **state)
{
    char d[512], spec[600];
    snprintf(d, sizeof d, "%s", (const char *)*state);
    static const struct {
        const char *suffix;  // appended to the directory
        pp_format_id f, back;
    } cases[] = {
        {"/a.npy", PP_FMT_FP16, PP_FMT_FP16},
        {"/b.safetensors:x", PP_FMT_BF16, PP_FMT_BF16},
        {"/b.safetensors:name:with:colons.npy", PP_FMT_E4M3, PP_FMT_E4M3},
        {"/c.safetensors:only", PP_FMT_FP32, PP_FMT_FP32},
        {"/c.safetensors", PP_FMT_FP32, PP_FMT_FP32},  // loads the only tensor (saved above)
        {"/d.h5:/run/out", PP_FMT_FP16, PP_FMT_FP16},
        {"/d.h5:run/e5", PP_FMT_E5M2, PP_FMT_E5M2},
        {"/e.hdf5:/x.npy", PP_FMT_FP64, PP_FMT_FP64},
        {"/dir.npy.h5:/y", PP_FMT_TF32, PP_FMT_TF32},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        snprintf(spec, sizeof spec, "%s%s", d, cases[k].suffix);
        pp_tensor t, r;
        pp_error err = {0};
        ramp(&t, 5, cases[k].f, 1.0);
        if (strcmp(cases[k].suffix, "/c.safetensors") != 0)
            assert_int_equal(pp_tensor_save(spec, &t, &err), PP_OK);
        int rc = pp_tensor_load(spec, &r, &err);
        if (rc)
            fprintf(stderr, "FAIL %s: %s\n", spec, err.msg);
        assert_int_equal(rc, PP_OK);
        assert_int_equal(r.format, cases[k].back);
        expect_equal(&r, &t);
        pp_tensor_free(&t);
        pp_tensor_free(&r);
    }
    // Both tensors saved into b.safetensors are there: saving adds, it does not replace.
    snprintf(spec, sizeof spec, "%s/b.safetensors:x", d);
    pp_tensor r;
    pp_error err = {0};
    assert_int_equal(pp_tensor_load(spec, &r, &err), PP_OK);
    pp_tensor_free(&r);
    snprintf(spec, sizeof spec, "%s/d.h5:/run/out", d);
    assert_int_equal(pp_tensor_load(spec, &r, &err), PP_OK);
    pp_tensor_free(&r);
}

// .pt and .pth through the dispatch: a dict key (which may hold ':' and dots), the only tensor,
// and a raw bf16 .npy read with the format the caller declares.
static void tensor_io_pt_and_declared_formats(void **state)
{
    (void)state;
    pp_tensor a, b;
    pp_error err = {0};
    assert_int_equal(pp_tensor_load("tests/fixtures/pt/state_dict.pt:weight", &a, &err), PP_OK);
    assert_true(a.format == PP_FMT_BF16 && a.numel == 8);
    pp_tensor_free(&a);
    assert_int_equal(pp_tensor_load("tests/fixtures/pt/single.pt", &a, &err), PP_OK);
    assert_int_equal(pp_tensor_load("tests/fixtures/pt/base_f32.npy", &b, &err), PP_OK);
    assert_true(a.numel == 12 && !memcmp(a.data, b.data, 12 * sizeof(double)));
    pp_tensor_free(&a);
    pp_tensor_free(&b);
    assert_int_equal(pp_tensor_load("tests/e2e/fixtures/data_in/k_bhsd_bf16.npy", &a, &err), PP_ERR_INPUT);
    assert_int_equal(pp_tensor_load_as("tests/e2e/fixtures/data_in/k_bhsd_bf16.npy", PP_FMT_BF16, &a, &err), PP_OK);
    assert_int_equal(pp_tensor_load("tests/e2e/fixtures/data_in/attn_bhsd.pt:k", &b, &err), PP_OK);
    assert_true(a.format == PP_FMT_BF16 && b.format == PP_FMT_BF16 && a.numel == b.numel && a.ndim == 4);
    assert_true(!memcmp(a.data, b.data, (size_t)a.numel * sizeof(double)));
    pp_tensor_free(&a);
    pp_tensor_free(&b);
    // a declared format does not change what a file that names its dtype holds
    assert_int_equal(pp_tensor_load_as("tests/fixtures/pt/single.pt", PP_FMT_BF16, &a, &err), PP_OK);
    assert_int_equal(a.format, PP_FMT_FP32);
    pp_tensor_free(&a);
}

static void tensor_io_spec_errors(void **state)
{
    (void)state;
    static const struct {
        const char *spec;
        int save;  // 1: pp_tensor_save, else pp_tensor_load
        const char *words;
    } cases[] = {
        {"x.txt", 0, "x.txt: unknown kind of tensor file; give FILE.npy, FILE.safetensors[:NAME], FILE.h5:/DATASET"},
        {"x.npy:a", 0, "x.npy:a: unknown kind"},
        {"dir.npy/x", 1, "unknown kind"},
        {"x.h5", 0, "x.h5: name the dataset, as x.h5:/GROUP/DATASET"},
        {"x.hdf5:", 1, "x.hdf5: name the dataset"},
        {"x.h5:/", 0, "name the dataset"},
        {"x.safetensors", 1, "x.safetensors: name the tensor to save, as x.safetensors:NAME"},
        {"x.safetensors:", 1, "name the tensor to save"},
        {"/nonexistent/x.npy", 0, "/nonexistent/x.npy: cannot open: No such file or directory"},
        {"/nonexistent/x.safetensors:a", 0, "/nonexistent/x.safetensors: cannot open"},
        {"/nonexistent/x.h5:/a", 0, "/nonexistent/x.h5: cannot open"},
        {"/nonexistent/x.pt:a", 0, "/nonexistent/x.pt: cannot open"},
        {"/nonexistent/x.pth", 0, "/nonexistent/x.pth: cannot open"},
        {"x.pt:a", 1, "x.pt: precprobe reads .pt files but does not write them"},
        {"tests/fixtures/pt/dtypes.pt:", 0, "dtypes.pt: holds 10 tensors; name one"},  // ':' alone = none
        {"tests/fixtures/pt/single.pt:a", 0, "single.pt: holds a single tensor, not a dict"},
        {"x.ptx", 0, "x.ptx: unknown kind"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        pp_tensor t;
        pp_error err = {0};
        int rc;
        if (cases[k].save) {
            ramp(&t, 2, PP_FMT_FP32, 0.0);
            rc = pp_tensor_save(cases[k].spec, &t, &err);
            pp_tensor_free(&t);
        } else {
            rc = pp_tensor_load(cases[k].spec, &t, &err);
            assert_null(t.data);
        }
        if (rc != PP_ERR_INPUT || !strstr(err.msg, cases[k].words))
            fprintf(stderr, "FAIL %s: rc %d \"%s\", want \"%s\"\n", cases[k].spec, rc, err.msg,
                    cases[k].words);
        assert_int_equal(rc, PP_ERR_INPUT);
        assert_non_null(strstr(err.msg, cases[k].words));
    }
}

// ---------------------------------------------------------------------------------------------
// Atomic writing

// With the file size limit hit midway through the write, each writer fails with
// PP_ERR_RUNTIME, the old file still holds the old tensor, and no temporary file remains.
static void tensor_io_failed_write_keeps_old_file(void **state)
{
    static const char *suffixes[] = {"/big.npy", "/big.safetensors:t", "/big.h5:/t"};
    char spec[600];
    for (size_t k = 0; k < sizeof suffixes / sizeof suffixes[0]; k++) {
        snprintf(spec, sizeof spec, "%s%s", (const char *)*state, suffixes[k]);
        pp_tensor small, big, r;
        pp_error err = {0};
        ramp(&small, 4, PP_FMT_FP64, 3.0);
        ramp(&big, 1 << 17, PP_FMT_FP64, 5.0);  // 1 MiB
        assert_int_equal(pp_tensor_save(spec, &small, &err), PP_OK);

        struct rlimit old, lim;
        assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
        lim = old;
        lim.rlim_cur = 256 * 1024;
        void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);  // write() then fails with EFBIG
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
        int rc = pp_tensor_save(spec, &big, &err);
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
        signal(SIGXFSZ, prev);

        if (rc != PP_ERR_RUNTIME)
            fprintf(stderr, "FAIL %s: rc %d \"%s\"\n", spec, rc, err.msg);
        assert_int_equal(rc, PP_ERR_RUNTIME);
        assert_false(pp_test_has_temp_file(*state));
        assert_int_equal(pp_tensor_load(spec, &r, &err), PP_OK);
        expect_equal(&r, &small);
        pp_tensor_free(&r);
        pp_tensor_free(&small);
        pp_tensor_free(&big);
    }
}

// A new file gets 0666 less the umask; a replaced file keeps its mode.
static void tensor_io_file_modes(void **state)
{
    char pbuf[512];
    const char *path = pp_test_tmp_path(state, "mode.npy", pbuf);
    pp_tensor t;
    pp_error err = {0};
    struct stat st;
    ramp(&t, 3, PP_FMT_FP32, 0.0);
    mode_t mask = umask(027);
    unlink(path);
    int rc1 = pp_tensor_save(path, &t, &err);
    int st1 = stat(path, &st);
    mode_t m1 = st.st_mode & 07777;
    int ch = chmod(path, 0604);
    int rc2 = pp_tensor_save(path, &t, &err);
    int st2 = stat(path, &st);
    mode_t m2 = st.st_mode & 07777;
    umask(mask);
    assert_true(rc1 == PP_OK && st1 == 0 && ch == 0 && rc2 == PP_OK && st2 == 0);
    assert_int_equal(m1, 0640);
    assert_int_equal(m2, 0604);
    pp_tensor_free(&t);
}

// Whole-file reading: an empty file, a character device (read, not mapped), a directory.
static void tensor_io_file_load(void **state)
{
    char pbuf[512];
    const char *path = pp_test_tmp_path(state, "empty.bin", pbuf);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
    pp_file_buf b;
    pp_error err = {0};
    assert_int_equal(pp_file_load(path, &b, &err), PP_OK);
    assert_true(b.size == 0 && b.data == NULL);
    pp_file_release(&b);
    assert_int_equal(pp_file_load("/dev/null", &b, &err), PP_OK);
    assert_true(b.size == 0);
    pp_file_release(&b);
    assert_int_equal(pp_file_load("tests/fixtures/tensorio/np_f32_0d.npy", &b, &err), PP_OK);
    assert_true(b.size == 132 && b.data[0] == 0x93 && b.data[131] == 0xc0);
    pp_file_release(&b);
    assert_int_equal(pp_file_load((const char *)*state, &b, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "is a directory"));
    pp_tensor t;
    char npy[600];
    snprintf(npy, sizeof npy, "%s/empty.npy", (const char *)*state);
    assert_int_equal(rename(path, npy), 0);
    assert_int_equal(pp_tensor_load(npy, &t, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "empty.npy: not a .npy file"));
}

// Names from files go into one-line messages: control characters escaped, long names cut.
static void tensor_io_printable(void **state)
{
    (void)state;
    char buf[64], small[8];
    assert_string_equal(pp_printable("a\nb\x7f\x01", buf, sizeof buf), "a\\x0ab\\x7f\\x01");
    assert_string_equal(pp_printable("\xc3\xa9t\xc3\xa9", buf, sizeof buf), "\xc3\xa9t\xc3\xa9");
    assert_string_equal(pp_printable("", buf, sizeof buf), "");
    assert_string_equal(pp_printable("abcd", small, sizeof small), "abcd");
    assert_string_equal(pp_printable("abcdefghij", small, sizeof small), "abcd...");
    assert_string_equal(pp_printable("ab\ncd", small, sizeof small), "ab...");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tensor_io_every_spec_form),
        cmocka_unit_test(tensor_io_pt_and_declared_formats),
        cmocka_unit_test(tensor_io_spec_errors),
        cmocka_unit_test(tensor_io_failed_write_keeps_old_file),
        cmocka_unit_test(tensor_io_file_modes),
        cmocka_unit_test(tensor_io_file_load),
        cmocka_unit_test(tensor_io_printable),
    };
    return cmocka_run_group_tests(tests, pp_test_tmpdir_setup, pp_test_tmpdir_teardown);
}
