// test_h5io.c — HDF5 datasets: round trips of every format (bf16, tf32 and fp8 through the
// "precprobe_format" attribute), every binary16 and bfloat16 pattern through HDF5's conversion,
// files h5py wrote, updating a file, rejections with their messages, and silence on stderr.
#include "test_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/h5io.h"
#include "io/h5quiet.h"
#include "io/tensor_io.h"

// ---------------------------------------------------------------------------------------------
// Helpers

#define FIX "tests/fixtures/tensorio/"

// Fills t (allocated here) with v repeated.
static void fill(pp_tensor *t, int ndim, const int64_t *shape, pp_format_id f, const double *v, int n)
{
    pp_error err = {0};
    assert_int_equal(pp_tensor_alloc(t, ndim, shape, f, &err), PP_OK);
    for (int64_t i = 0; i < t->numel; i++)
        t->data[i] = v[i % n];
}

// The stored type's size in bytes and whether the dataset has the format attribute.
static void stored_type(const char *path, const char *ds, size_t *size, int *has_attr)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t d = H5Dopen2(f, ds, H5P_DEFAULT);
    assert_true(d >= 0);
    hid_t t = H5Dget_type(d);
    *size = H5Tget_size(t);
    *has_attr = H5Aexists(d, PP_H5_FORMAT_ATTR) > 0;
    H5Tclose(t);
    H5Dclose(d);
    H5Fclose(f);
}

// ---------------------------------------------------------------------------------------------
// Round trips

static void h5_roundtrip_every_format(void **state)
{
    char pbuf[512];
    const char *path = pp_test_tmp_path(state, "rt.h5", pbuf);
    static const size_t stored_size[PP_TEST_FMT_IEEE] = {8, 4, 4, 2, 4, 4, 4};
    for (int fi = 0; fi < PP_TEST_FMT_IEEE; fi++) {
        pp_format_id f = (pp_format_id)fi;
        double v[16];
        int n = pp_test_special_values(f, v);
        const int64_t shapes[3][2] = {{0, 0}, {2, n}, {0, 5}};
        const int ndims[3] = {0, 2, 2};
        for (int s = 0; s < 3; s++) {
            pp_tensor t, r;
            pp_error err = {0};
            fill(&t, ndims[s], shapes[s], f, v, n);
            char ds[64];
            snprintf(ds, sizeof ds, "/g/%s/shape%d", pp_format_get(f).name, s);
            assert_int_equal(pp_h5_write(path, ds, &t, fi == 0 && s == 0, &err), PP_OK);
            int rc = pp_h5_read(path, ds, &r, &err);
            if (rc)
                fprintf(stderr, "FAIL %s: %s\n", ds, err.msg);
            assert_int_equal(rc, PP_OK);
            assert_int_equal(r.format, f);
            pp_test_check_tensor(ds, &r, t.ndim, t.shape, t.data);
            size_t size;
            int has_attr;
            stored_type(path, ds, &size, &has_attr);
            assert_int_equal(size, stored_size[fi]);
            assert_int_equal(has_attr, f != PP_FMT_FP64 && f != PP_FMT_FP32 && f != PP_FMT_FP16);
            pp_tensor_free(&t);
            pp_tensor_free(&r);
        }
    }
    assert_false(pp_test_has_temp_file(*state));
}

// Writes raw 16-bit patterns 0..65535 as a dataset of a 16-bit float type with the given
// exponent width, bias and byte order, the way other tools (h5py, bf16 writers) store them.
static void write_raw16(const char *path, const char *ds, size_t esize, size_t ebias, H5T_order_t order)
{
    size_t msize = 15 - esize;
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t t = H5Tcopy(H5T_IEEE_F32LE);
    assert_true(H5Tset_fields(t, 15, msize, esize, 0, msize) >= 0);
    assert_true(H5Tset_size(t, 2) >= 0);
    assert_true(H5Tset_ebias(t, ebias) >= 0);
    assert_true(H5Tset_order(t, order) >= 0);
    hsize_t dims[1] = {65536};
    hid_t sp = H5Screate_simple(1, dims, NULL);
    hid_t d = H5Dcreate2(f, ds, t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    unsigned char *raw = malloc(2 * 65536);
    assert_non_null(raw);
    for (uint32_t i = 0; i < 65536; i++) {
        raw[2 * i + (order == H5T_ORDER_BE)] = (unsigned char)i;
        raw[2 * i + (order != H5T_ORDER_BE)] = (unsigned char)(i >> 8);
    }
    assert_true(H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw) >= 0);  // no conversion
    free(raw);
    H5Dclose(d);
    H5Sclose(sp);
    H5Tclose(t);
    H5Fclose(f);
}

// Every binary16 and bfloat16 pattern, both byte orders, read through HDF5's conversion to
// binary64: exactly pp_decode's value (NaN as NaN of the same sign).
static void h5_all_16bit_patterns(void **state)
{
    char pbuf[512];
    static const struct {
        size_t esize, ebias;
        H5T_order_t order;
        pp_format_id f;
    } kinds[] = {{5, 15, H5T_ORDER_LE, PP_FMT_FP16},
                 {5, 15, H5T_ORDER_BE, PP_FMT_FP16},
                 {8, 127, H5T_ORDER_LE, PP_FMT_BF16},
                 {8, 127, H5T_ORDER_BE, PP_FMT_BF16}};
    const char *path = pp_test_tmp_path(state, "raw16.h5", pbuf);
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        write_raw16(path, "/x", kinds[k].esize, kinds[k].ebias, kinds[k].order);
        pp_tensor r;
        pp_error err = {0};
        assert_int_equal(pp_h5_read(path, "x", &r, &err), PP_OK);
        assert_int_equal(r.format, kinds[k].f);
        int count = 0;
        for (uint32_t i = 0; i < 65536; i++)
            pp_test_check_value(pp_format_get(kinds[k].f).name, i, r.data[i], pp_decode(kinds[k].f, i), &count);
        assert_int_equal(count, 0);
        pp_tensor_free(&r);
    }
}

// ---------------------------------------------------------------------------------------------
// h5py's file (tools/make_fixture.py)

static const double f16_special[13] = {0.0, -0.0, 0x1p-24, -0x1p-24, 0x3ffp-24, 0x1p-14, 65504.0,
                                       -65504.0, INFINITY, -INFINITY, NAN, 1.0, -1.5};
static const double f32_2x3[6] = {1.0, -2.5, 0x1p-149, 3.4028234663852886e38, -INFINITY, -0.0};
static const double f64_be[5] = {1.0, -0.0, 0x1p-1074, 1.7976931348623157e308, INFINITY};
static const double seven[1] = {7.0};
static const double bf16_vals[3] = {1.0, -0.0078125, 3.3895313892515355e38};
static const double half[1] = {0.5};

static void h5_reads_h5py_file(void **state)
{
    (void)state;
    static const struct {
        const char *ds;
        pp_format_id f;
        int ndim;
        int64_t shape[2];
        const double *want;
    } cases[] = {
        {"/f16", PP_FMT_FP16, 1, {13, 0}, f16_special},   // h5py's float16 type
        {"/f32", PP_FMT_FP32, 2, {2, 3}, f32_2x3},
        {"/g/sub/f64", PP_FMT_FP64, 1, {5, 0}, f64_be},
        {"f64_be", PP_FMT_FP64, 1, {5, 0}, f64_be},       // big-endian; no leading '/'
        {"/scalar", PP_FMT_FP32, 0, {0, 0}, seven},
        {"/empty", PP_FMT_FP32, 2, {0, 3}, NULL},
        {"/bf16", PP_FMT_BF16, 1, {3, 0}, bf16_vals},     // attribute: variable-length str
        {"/fixed_attr", PP_FMT_E5M2, 1, {1, 0}, half},    // attribute: fixed-length bytes
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        pp_tensor t;
        pp_error err = {0};
        int rc = pp_h5_read(FIX "h5py.h5", cases[k].ds, &t, &err);
        if (rc)
            fprintf(stderr, "FAIL %s: %s\n", cases[k].ds, err.msg);
        assert_int_equal(rc, PP_OK);
        assert_int_equal(t.format, cases[k].f);
        pp_test_check_tensor(cases[k].ds, &t, cases[k].ndim, cases[k].shape, cases[k].want);
        pp_tensor_free(&t);
    }
}

static void h5_read_rejects(void **state)
{
    char pbuf[512];
    const char *notdf5 = pp_test_tmp_path(state, "text.h5", pbuf);
    FILE *f = fopen(notdf5, "w");
    assert_non_null(f);
    fputs("not hdf5\n", f);
    fclose(f);
    static const struct {
        const char *file, *ds, *words;
    } cases[] = {
        {FIX "h5py.h5", "/int32", ":/int32 holds integers, not floating-point numbers"},
        {FIX "h5py.h5", "/compound", "holds a compound type"},
        {FIX "h5py.h5", "/null", "null dataspace"},
        {FIX "h5py.h5", "/dims9", "has 9 dimensions; at most 8"},
        {FIX "h5py.h5", "/longdouble", "a 16-byte float with 15 exponent and 64 mantissa bits"},
        {FIX "h5py.h5", "/not_bf16", "value 1.1000000238418579 at index (1,) is not a bf16 value"},
        {FIX "h5py.h5", "/unknown_attr", "names unknown format 'fp12'"},
        {FIX "h5py.h5", "/number_attr", "is not a single string"},
        {FIX "h5py.h5", "/nope", "no dataset '/nope' (/ holds "},
        {FIX "h5py.h5", "/g", ":/g is a group, not a dataset"},
        {FIX "h5py.h5", "/g/nope", "no dataset '/g/nope' (/g holds 'sub')"},
        {FIX "h5py.h5", "/q/r/s", "(there is no group '/q/r')"},
        {FIX "h5py.h5", "", "name the dataset"},
        {FIX "h5py.h5", "/", "name the dataset"},
        {FIX "missing.h5", "/x", "missing.h5: cannot open: No such file"},
        {NULL, "/x", "not an HDF5 file"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const char *file = cases[k].file ? cases[k].file : notdf5;
        pp_tensor t;
        pp_error err = {0};
        int rc = pp_h5_read(file, cases[k].ds, &t, &err);
        int ok = rc == PP_ERR_INPUT && !strncmp(err.msg, file, strlen(file)) &&
                 strstr(err.msg, cases[k].words) && !t.data;
        if (!ok)
            fprintf(stderr, "FAIL rejection %s:%s: rc %d \"%s\", want \"%s\"\n", file, cases[k].ds,
                    rc, err.msg, cases[k].words);
        assert_true(ok);
    }
}

// ---------------------------------------------------------------------------------------------
// Writing into an existing file

static void h5_update_and_truncate(void **state)
{
    char pbuf[512];
    const char *path = pp_test_tmp_path(state, "upd.h5", pbuf);
    static const double v[3] = {1.0, 2.0, 3.0};
    int64_t s3[1] = {3}, s2x3[2] = {2, 3};
    pp_tensor a, b, r;
    pp_error err = {0};
    fill(&a, 1, s3, PP_FMT_FP32, v, 3);
    fill(&b, 2, s2x3, PP_FMT_BF16, v, 3);
    assert_int_equal(pp_h5_write(path, "/run/a", &a, 1, &err), PP_OK);
    assert_int_equal(pp_h5_write(path, "/run/b", &b, 0, &err), PP_OK);  // added beside a
    assert_int_equal(pp_h5_read(path, "/run/a", &r, &err), PP_OK);
    pp_tensor_free(&r);
    assert_int_equal(pp_h5_write(path, "/run/a", &b, 0, &err), PP_OK);  // replaced
    assert_int_equal(pp_h5_read(path, "/run/a", &r, &err), PP_OK);
    assert_int_equal(r.format, PP_FMT_BF16);
    pp_test_check_tensor("replaced", &r, 2, s2x3, b.data);
    pp_tensor_free(&r);
    assert_int_equal(pp_h5_write(path, "c", &a, 1, &err), PP_OK);  // a new file: only /c
    assert_int_equal(pp_h5_read(path, "/run/b", &r, &err), PP_ERR_INPUT);
    assert_int_equal(pp_h5_read(path, "/c", &r, &err), PP_OK);
    pp_tensor_free(&r);

    // Refusals, with the file left as it was.
    assert_int_equal(pp_h5_write(path, "/", &a, 0, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "does not name a dataset"));
    assert_int_equal(pp_h5_write(path, "/c/", &a, 0, &err), PP_ERR_INPUT);
    assert_int_equal(pp_h5_write(path, "/c/x", &a, 0, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "cannot create the dataset"));
    assert_int_equal(pp_h5_write(path, "/g/x", &a, 0, &err), PP_OK);
    assert_int_equal(pp_h5_write(path, "/g", &a, 0, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, ":/g exists and is not a dataset"));
    assert_int_equal(pp_h5_read(path, "/g/x", &r, &err), PP_OK);
    pp_tensor_free(&r);
    b.data[0] = 1.1;  // not a bf16 value
    assert_int_equal(pp_h5_write(path, "/d", &b, 0, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "is not a bf16 value"));
    assert_int_equal(pp_h5_read(path, "/d", &r, &err), PP_ERR_INPUT);

    const char *text = pp_test_tmp_path(state, "text.h5", pbuf);
    FILE *f = fopen(text, "w");
    assert_non_null(f);
    fputs("precious\n", f);
    fclose(f);
    assert_int_equal(pp_h5_write(text, "/x", &a, 0, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "not an HDF5 file; not replacing it"));
    struct stat st;
    assert_int_equal(stat(text, &st), 0);
    assert_int_equal(st.st_size, 9);
    char nodir[600];
    snprintf(nodir, sizeof nodir, "%s/no_dir/x.h5", (const char *)*state);
    assert_int_equal(pp_h5_write(nodir, "/x", &a, 1, &err), PP_ERR_RUNTIME);
    assert_false(pp_test_has_temp_file(*state));
    pp_tensor_free(&a);
    pp_tensor_free(&b);
}

// HDF5 prints nothing on its own, and the caller's error handler is restored.
static void h5_errors_are_silent(void **state)
{
    char pbuf[512];
    const char *log = pp_test_tmp_path(state, "stderr.txt", pbuf);
    H5E_auto2_t before_func;
    void *before_data;
    H5Eget_auto2(H5E_DEFAULT, &before_func, &before_data);
    fflush(stderr);
    int saved = dup(2);
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    pp_tensor t;
    pp_error err = {0};
    int r1 = pp_h5_read(FIX "h5py.h5", "/nope/x", &t, &err);
    int r2 = pp_h5_read(FIX "h5py.h5", "/int32", &t, &err);
    int r3 = pp_h5_read(FIX "h5py.h5", "/g", &t, &err);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd);
    assert_int_equal(r1, PP_ERR_INPUT);
    assert_int_equal(r2, PP_ERR_INPUT);
    assert_int_equal(r3, PP_ERR_INPUT);
    struct stat st;
    assert_int_equal(stat(log, &st), 0);
    assert_int_equal(st.st_size, 0);
    H5E_auto2_t after_func;
    void *after_data;
    H5Eget_auto2(H5E_DEFAULT, &after_func, &after_data);
    assert_true(after_func == before_func && after_data == before_data);
}

// An HDF5 error handler that counts its calls in *data.
static herr_t count_calls(hid_t stack, void *data)
{
    (void)stack;
    ++*(int *)data;
    return 0;
}

// pp_h5_quiet: nothing reaches the handler inside, nested pairs restore in turn, and the
// caller's handler is back (and called) after the outer end.
static void h5_quiet_nests_and_restores(void **state)
{
    (void)state;
    H5E_auto2_t saved_func;
    void *saved_data;
    H5Eget_auto2(H5E_DEFAULT, &saved_func, &saved_data);
    int calls = 0;
    H5Eset_auto2(H5E_DEFAULT, count_calls, &calls);
    pp_h5_quiet outer, inner;
    pp_h5_quiet_begin(&outer);
    pp_h5_quiet_begin(&inner);
    assert_true(H5Fopen("/nonexistent/precprobe.h5", H5F_ACC_RDONLY, H5P_DEFAULT) < 0);
    pp_h5_quiet_end(&inner);
    assert_true(H5Fopen("/nonexistent/precprobe.h5", H5F_ACC_RDONLY, H5P_DEFAULT) < 0);
    assert_int_equal(calls, 0);
    pp_h5_quiet_end(&outer);
    assert_true(H5Fopen("/nonexistent/precprobe.h5", H5F_ACC_RDONLY, H5P_DEFAULT) < 0);
    assert_true(calls >= 1);
    H5E_auto2_t func;
    void *data;
    H5Eget_auto2(H5E_DEFAULT, &func, &data);
    assert_true(func == count_calls && data == &calls);
    H5Eset_auto2(H5E_DEFAULT, saved_func, saved_data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(h5_roundtrip_every_format),
        cmocka_unit_test(h5_all_16bit_patterns),
        cmocka_unit_test(h5_reads_h5py_file),
        cmocka_unit_test(h5_read_rejects),
        cmocka_unit_test(h5_update_and_truncate),
        cmocka_unit_test(h5_errors_are_silent),
        cmocka_unit_test(h5_quiet_nests_and_restores),
    };
    return cmocka_run_group_tests(tests, pp_test_tmpdir_setup, pp_test_tmpdir_teardown);
}
