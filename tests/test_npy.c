// test_npy.c — .npy reading and writing: round trips of every format with its special values,
// every binary16 pattern, files written by numpy itself (read, and reproduced byte for byte),
// big-endian and version 2.0/3.0 files, and a table of malformed files with their messages.
#include "test_util.h"

#include <dirent.h>
#include <math.h>
#include <unistd.h>

#include "io/npy.h"
#include "io/tensor_io.h"

// ---------------------------------------------------------------------------------------------
// Helpers

#define FIX "tests/fixtures/tensorio/"

// ---------------------------------------------------------------------------------------------
// Round trips

// Every format, its special values, in 0-d, 1-D, 3-D and empty shapes: written and read back
// with the same values; the format read back is the dtype written.
static void npy_roundtrip_special_values(void **state)
{
    char pbuf[512];
    for (int fi = 0; fi < PP_TEST_FMT_IEEE; fi++) {
        pp_format_id f = (pp_format_id)fi;
        double v[16];
        int n = pp_test_special_values(f, v);
        const int64_t shapes[4][3] = {{0}, {n}, {1, n, 1}, {0, 3}};
        const int ndims[4] = {0, 1, 3, 2};
        pp_format_id back = f == PP_FMT_FP64 ? PP_FMT_FP64 : f == PP_FMT_FP16 ? PP_FMT_FP16 : PP_FMT_FP32;
        for (int s = 0; s < 4; s++) {
            pp_tensor t, r;
            pp_error err = {0};
            assert_int_equal(pp_tensor_alloc(&t, ndims[s], shapes[s], f, &err), PP_OK);
            for (int64_t i = 0; i < t.numel; i++)
                t.data[i] = v[i % n];
            const char *path = pp_test_tmp_path(state, "rt.npy", pbuf);
            assert_int_equal(pp_npy_write(path, &t, &err), PP_OK);
            assert_int_equal(pp_npy_read(path, &r, &err), PP_OK);
            assert_int_equal(r.format, back);
            pp_test_check_tensor(pp_format_get(f).name, &r, t.ndim, t.shape, t.data);
            pp_tensor_free(&t);
            pp_tensor_free(&r);
        }
    }
    assert_false(pp_test_has_temp_file(*state));
}

// All 65,536 binary16 patterns through '<f2' (NaNs come back as NaN of the same sign).
static void npy_roundtrip_all_fp16_patterns(void **state)
{
    char pbuf[512];
    pp_tensor t, r;
    pp_error err = {0};
    int64_t shape[1] = {65536};
    assert_int_equal(pp_tensor_alloc(&t, 1, shape, PP_FMT_FP16, &err), PP_OK);
    for (int64_t i = 0; i < 65536; i++)
        t.data[i] = pp_decode(PP_FMT_FP16, (uint64_t)i);
    const char *path = pp_test_tmp_path(state, "all16.npy", pbuf);
    assert_int_equal(pp_npy_write(path, &t, &err), PP_OK);
    assert_int_equal(pp_npy_read(path, &r, &err), PP_OK);
    assert_int_equal(r.format, PP_FMT_FP16);
    pp_test_check_tensor("fp16 pattern", &r, 1, shape, t.data);
    // The stored bits are pp_encode's: the pattern itself, or the quiet NaN 0x7e00 with its sign.
    size_t n;
    unsigned char *b = pp_test_slurp(path, &n);
    assert_int_equal(n, 128 + 2 * 65536);
    int count = 0;
    for (uint32_t i = 0; i < 65536; i++) {
        uint32_t got = b[128 + 2 * i] | (uint32_t)b[128 + 2 * i + 1] << 8;
        int nan = (i & 0x7c00) == 0x7c00 && (i & 0x3ff);
        uint32_t want = nan ? (i & 0x8000) | 0x7e00 : i;
        if (got != want && count++ < 10)
            fprintf(stderr, "FAIL stored bits of pattern 0x%04x: 0x%04x, want 0x%04x\n", i, got, want);
    }
    assert_int_equal(count, 0);
    free(b);
    pp_tensor_free(&t);
    pp_tensor_free(&r);
}

// ---------------------------------------------------------------------------------------------
// Files numpy wrote (tools/make_fixture.py)

static const double f16_special[13] = {0.0, -0.0, 0x1p-24, -0x1p-24, 0x3ffp-24, 0x1p-14, 65504.0,
                                       -65504.0, INFINITY, -INFINITY, NAN, 1.0, -1.5};
static const double f32_2x3[6] = {1.0, -2.5, 0x1p-149, 3.4028234663852886e38, -INFINITY, -0.0};
static const double f64_be[5] = {1.0, -0.0, 0x1p-1074, 1.7976931348623157e308, INFINITY};
static const double minus3[1] = {-3.0};
static const double one_two[2] = {1.0, 2.0};
static const double half_quarter[2] = {0.5, -0.25};

static void npy_reads_numpy_files(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        pp_format_id f;
        int ndim;
        int64_t shape[2];
        const double *want;
    } cases[] = {
        {FIX "np_f16_special.npy", PP_FMT_FP16, 1, {13, 0}, f16_special},
        {FIX "np_f32_2x3.npy", PP_FMT_FP32, 2, {2, 3}, f32_2x3},
        {FIX "np_f64_be.npy", PP_FMT_FP64, 1, {5, 0}, f64_be},  // '>f8'
        {FIX "np_f32_0d.npy", PP_FMT_FP32, 0, {0, 0}, minus3},
        {FIX "np_f64_empty.npy", PP_FMT_FP64, 2, {0, 3}, NULL},
        {FIX "np_f32_v2.npy", PP_FMT_FP32, 1, {2, 0}, one_two},      // version 2.0
        {FIX "np_f16_v3.npy", PP_FMT_FP16, 1, {2, 0}, half_quarter},    // version 3.0
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        pp_tensor t;
        pp_error err = {0};
        int rc = pp_npy_read(cases[k].file, &t, &err);
        if (rc)
            fprintf(stderr, "FAIL reading %s: %s\n", cases[k].file, err.msg);
        assert_int_equal(rc, PP_OK);
        assert_int_equal(t.format, cases[k].f);
        pp_test_check_tensor(cases[k].file, &t, cases[k].ndim, cases[k].shape, cases[k].want);
        pp_tensor_free(&t);
    }
}

// pp_npy_write produces numpy.save's bytes exactly (little-endian, version 1.0 files).
static void npy_write_matches_numpy_bytes(void **state)
{
    char pbuf[512];
    static const struct {
        const char *file;
        pp_format_id f;
        int ndim;
        int64_t shape[2];
        const double *v;
    } cases[] = {
        {FIX "np_f16_special.npy", PP_FMT_FP16, 1, {13, 0}, f16_special},
        {FIX "np_f32_2x3.npy", PP_FMT_FP32, 2, {2, 3}, f32_2x3},
        {FIX "np_f32_0d.npy", PP_FMT_FP32, 0, {0, 0}, minus3},
        {FIX "np_f64_empty.npy", PP_FMT_FP64, 2, {0, 3}, NULL},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        pp_tensor t;
        pp_error err = {0};
        assert_int_equal(pp_tensor_alloc(&t, cases[k].ndim, cases[k].shape, cases[k].f, &err), PP_OK);
        for (int64_t i = 0; i < t.numel; i++)
            t.data[i] = cases[k].v[i];
        const char *path = pp_test_tmp_path(state, "same.npy", pbuf);
        assert_int_equal(pp_npy_write(path, &t, &err), PP_OK);
        size_t n1, n2;
        unsigned char *ours = pp_test_slurp(path, &n1), *theirs = pp_test_slurp(cases[k].file, &n2);
        if (n1 != n2 || memcmp(ours, theirs, n1))
            fprintf(stderr, "FAIL bytes differ from numpy's %s (%zu vs %zu bytes)\n",
                    cases[k].file, n1, n2);
        assert_int_equal(n1, n2);
        assert_memory_equal(ours, theirs, n1);
        free(ours);
        free(theirs);
        pp_tensor_free(&t);
    }
}

// ---------------------------------------------------------------------------------------------
// Files built here, byte by byte

// A .npy image: magic, version, header length (2 or 4 bytes), header text, ndata data bytes.
static unsigned char *build(int major, int minor, const char *header, size_t ndata,
                            const unsigned char *data, size_t *n)
{
    size_t hl = strlen(header), lb = major == 1 ? 2 : 4;
    *n = 8 + lb + hl + ndata;
    unsigned char *b = calloc(*n, 1);
    assert_non_null(b);
    memcpy(b, "\x93NUMPY", 6);
    b[6] = (unsigned char)major;
    b[7] = (unsigned char)minor;
    for (size_t i = 0; i < lb; i++)
        b[8 + i] = (unsigned char)(hl >> (8 * i));
    memcpy(b + 8 + lb, header, hl);
    if (data)
        memcpy(b + 8 + lb + hl, data, ndata);
    return b;
}

// Big-endian dtypes and the 4-byte header lengths of versions 2.0 and 3.0.
static void npy_parse_big_endian_and_versions(void **state)
{
    (void)state;
    static const struct {
        int major;
        const char *header;
        unsigned char data[16];
        size_t ndata;
        pp_format_id f;
        double want[2];
    } cases[] = {
        {1, "{'descr': '>f2', 'fortran_order': False, 'shape': (2,), }\n", {0x3c, 0x00, 0x80, 0x01}, 4,
         PP_FMT_FP16, {1.0, -0x1p-24}},
        {1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }\n",
         {0x3f, 0x80, 0, 0, 0x80, 0, 0, 1}, 8, PP_FMT_FP32, {1.0, -0x1p-149}},
        {2, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }\n",
         {0, 0, 0, 0, 0, 0, 0xf0, 0x3f}, 8, PP_FMT_FP64, {1.0}},
        {3, "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (1,)}", {0, 0, 0xc0, 0x7f}, 4,
         PP_FMT_FP32, {NAN}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        size_t n;
        unsigned char *b = build(cases[k].major, 0, cases[k].header, cases[k].ndata, cases[k].data, &n);
        pp_tensor t;
        pp_error err = {0};
        int rc = pp_npy_parse(b, n, "x.npy", &t, &err);
        if (rc)
            fprintf(stderr, "FAIL case %zu: %s\n", k, err.msg);
        assert_int_equal(rc, PP_OK);
        assert_int_equal(t.format, cases[k].f);
        int count = 0;
        for (int64_t i = 0; i < t.numel; i++)
            pp_test_check_value(cases[k].header, i, t.data[i], cases[k].want[i], &count);
        assert_int_equal(count, 0);
        pp_tensor_free(&t);
        free(b);
    }
}

// Raw void items as numpy saves ml_dtypes' arrays ('<V2' bfloat16, '<V1' float8): read as the
// declared format, little-endian; without a declaration of their width, a message asking for one.
static void npy_raw_items_of_a_declared_format(void **state)
{
    (void)state;
    static const struct {
        const char *header;
        unsigned char data[4];
        size_t ndata;
        int declared;  // -1: none
        int rc;
        double want[2];
        const char *msg;
    } cases[] = {
        {"{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }\n", {0x80, 0x3f, 0xc0, 0x7f}, 4,
         PP_FMT_BF16, PP_OK, {1.0, NAN}, NULL},
        {"{'descr': '|V2', 'fortran_order': False, 'shape': (2,), }\n", {0x80, 0xbf, 0x80, 0x7f}, 4,
         PP_FMT_BF16, PP_OK, {-1.0, INFINITY}, NULL},
        {"{'descr': '<V2', 'fortran_order': False, 'shape': (1,), }\n", {0x00, 0x3c}, 2, PP_FMT_FP16, PP_OK,
         {1.0}, NULL},
        {"{'descr': '<V1', 'fortran_order': False, 'shape': (2,), }\n", {0x38, 0xfe}, 2, PP_FMT_E4M3, PP_OK,
         {1.0, -448.0}, NULL},
        {"{'descr': '<V1', 'fortran_order': False, 'shape': (1,), }\n", {0x3c}, 1, PP_FMT_E5M2, PP_OK, {1.0},
         NULL},
        {"{'descr': '<V2', 'fortran_order': False, 'shape': (1,), }\n", {0x80, 0x3f}, 2, -1, PP_ERR_INPUT, {0},
         "r.npy: dtype '<V2' holds raw 2-byte values (how numpy saves ml_dtypes' types); declare their "
         "format: bf16 (ml_dtypes.bfloat16) or fp16 (case: format = \"bf16\"; compare: --actual-dtype or --expected-dtype)"},
        {"{'descr': '<V2', 'fortran_order': False, 'shape': (1,), }\n", {0x80, 0x3f}, 2, PP_FMT_FP32,
         PP_ERR_INPUT, {0},
         "r.npy: dtype '<V2' holds raw 2-byte values, which cannot be fp32 values; declare bf16 "
         "(ml_dtypes.bfloat16) or fp16"},
        {"{'descr': '<V1', 'fortran_order': False, 'shape': (1,), }\n", {0x38}, 1, PP_FMT_BF16, PP_ERR_INPUT,
         {0}, "r.npy: dtype '<V1' holds raw 1-byte values, which cannot be bf16 values"},
        {"{'descr': '>V2', 'fortran_order': False, 'shape': (1,), }\n", {0x3f, 0x80}, 2, PP_FMT_BF16,
         PP_ERR_INPUT, {0}, "r.npy: dtype '>V2' (void) is not supported"},
        {"{'descr': '<V4', 'fortran_order': False, 'shape': (1,), }\n", {0, 0, 0x80, 0x3f}, 4, PP_FMT_FP32,
         PP_ERR_INPUT, {0}, "r.npy: dtype '<V4' (void) is not supported"},
        {"{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }\n", {0x80, 0x3f}, 2, PP_FMT_BF16,
         PP_ERR_INPUT, {0}, "r.npy: truncated data"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        size_t n;
        unsigned char *b = build(1, 0, cases[k].header, cases[k].ndata, cases[k].data, &n);
        pp_tensor t;
        pp_error err = {0};
        int rc = pp_npy_parse_as(b, n, "r.npy", cases[k].declared, &t, &err);
        if (rc != cases[k].rc || (cases[k].msg && strncmp(err.msg, cases[k].msg, strlen(cases[k].msg))))
            fprintf(stderr, "FAIL case %zu: rc %d: %s\n", k, rc, err.msg);
        assert_int_equal(rc, cases[k].rc);
        if (rc) {
            assert_null(t.data);
            assert_true(strncmp(err.msg, cases[k].msg, strlen(cases[k].msg)) == 0);
        } else {
            assert_int_equal(t.format, cases[k].declared);
            int count = 0;
            for (int64_t i = 0; i < t.numel; i++)
                pp_test_check_value(cases[k].header, i, t.data[i], cases[k].want[i], &count);
            assert_int_equal(count, 0);
            pp_tensor_free(&t);
        }
        free(b);
    }
    // the plain reader declares nothing
    size_t n;
    unsigned char one[2] = {0x80, 0x3f};
    unsigned char *b = build(1, 0, "{'descr': '<V2', 'fortran_order': False, 'shape': (1,), }\n", 2, one, &n);
    pp_tensor t;
    pp_error err = {0};
    assert_int_equal(pp_npy_parse(b, n, "r.npy", &t, &err), PP_ERR_INPUT);
    free(b);
}

// Every rejection: PP_ERR_INPUT, a message that starts with the file name and says why.
static void npy_rejects_malformed(void **state)
{
    (void)state;
#define H(descr, fo, shape) "{'descr': " descr ", 'fortran_order': " fo ", 'shape': " shape ", }\n"
    static const struct {
        int major, minor;
        const char *header;
        size_t ndata;
        const char *words;
    } cases[] = {
        {1, 1, H("'<f4'", "False", "(1,)"), 4, "version 1.1"},
        {4, 0, H("'<f4'", "False", "(1,)"), 4, "version 4.0"},
        {1, 0, H("'<f4'", "True", "(2, 3)"), 24, "Fortran order"},
        {1, 0, H("'|O'", "False", "(1,)"), 8, "object array"},
        {1, 0, H("'<i4'", "False", "(1,)"), 4, "'<i4' (int32) is not supported"},
        {1, 0, H("'<u2'", "False", "(1,)"), 2, "(uint16)"},
        {1, 0, H("'|b1'", "False", "(1,)"), 1, "(bool)"},
        {1, 0, H("'<c8'", "False", "(1,)"), 8, "(complex64)"},
        {1, 0, H("'<f16'", "False", "(1,)"), 16, "(float128)"},
        {1, 0, H("'<U3'", "False", "(1,)"), 12, "(str)"},
        {1, 0, H("'<M8[ns]'", "False", "(1,)"), 8, "datetime64"},
        {1, 0, H("'|f4'", "False", "(1,)"), 4, "no byte order"},
        {1, 0, H("'<\x01" "f4\r'", "False", "(1,)"), 4, "dtype '<\\x01f4\\x0d' is not supported"},
        {1, 0, H("'<f4'", "False", "(3L,)"), 12, "other than integers"},
        {1, 0, H("[('a', '<f4')]", "False", "(1,)"), 4, "structured dtype"},
        {1, 0, H("'<f4'", "False", "(-1,)"), 0, "negative"},
        {1, 0, H("'<f4'", "False", "(1, 1, 1, 1, 1, 1, 1, 1, 1)"), 4, "more than 8 dimensions"},
        {1, 0, H("'<f4'", "False", "(1048576, 1048576, 2)"), 0, "absurd"},
        {1, 0, H("'<f4'", "False", "(99999999999999999999999999,)"), 0, "absurd"},
        {1, 0, H("'<f4'", "False", "(3)"), 12, "not a tuple"},
        {1, 0, H("'<f4'", "False", "[3]"), 12, "not a tuple"},
        {1, 0, H("'<f4'", "0", "(1,)"), 4, "not True or False"},
        {1, 0, H("'<f4'", "False", "(1.5,)"), 4, "other than integers"},
        {1, 0, H("'<f4'", "False", "(2,)"), 7, "truncated data"},
        {1, 0, H("'<f4'", "False", "(2,)"), 9, "1 bytes after the array data"},
        {1, 0, "{'descr': '<f4', 'shape': (1,)}", 4, "no 'fortran_order'"},
        {1, 0, "{'fortran_order': False, 'shape': (1,)}", 4, "no 'descr'"},
        {1, 0, "{'descr': '<f4', 'fortran_order': False}", 4, "no 'shape'"},
        {1, 0, H("'<f4'", "False", "(1,), 'extra': 1"), 4, "unexpected key 'extra'"},
        {1, 0, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", 4,
         "twice"},
        {1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x", 4, "after the closing"},
        {1, 0, "{'descr' '<f4'}", 0, "expected ':'"},
        {1, 0, "['descr', '<f4']", 4, "does not start with '{'"},
        {1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)", 4, "expected ',' or '}'"},
        {1, 0, "{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}", 4, "expected ',' or '}'"},
        {1, 0, "{'descr': '<f4", 0, "unterminated string"},
        {1, 0, "{'de\\scr': '<f4'}", 0, "escape"},
        {1, 0, "{descr: '<f4'}", 0, "quoted string"},
        {1, 0, "", 0, "does not start with '{'"},
    };
#undef H
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        size_t n;
        unsigned char *b = build(cases[k].major, cases[k].minor, cases[k].header, cases[k].ndata, NULL, &n);
        pp_tensor t;
        pp_error err = {0};
        int rc = pp_npy_parse(b, n, "bad.npy", &t, &err);
        int ok = rc == PP_ERR_INPUT && !strncmp(err.msg, "bad.npy: ", 9) && strstr(err.msg, cases[k].words) &&
                 !pp_test_has_control(err.msg) && t.data == NULL;
        if (!ok)
            fprintf(stderr, "FAIL rejection %zu (%s): rc %d, message \"%s\", want \"%s\"\n", k,
                    cases[k].header, rc, err.msg, cases[k].words);
        assert_true(ok);
        free(b);
    }
}

// Files too short for the magic, the version or the header length; bad magic.
static void npy_rejects_bad_prefix(void **state)
{
    (void)state;
    static const struct {
        const char *bytes;
        size_t n;
        const char *words;
    } cases[] = {
        {"", 0, "bad magic"},
        {"\x93NUMP", 5, "bad magic"},
        {"\x93NUMPZ\x01\x00\x10\x00", 10, "bad magic"},
        {"PK\x03\x04 this is a zip", 20, "bad magic"},
        {"\x93NUMPY\x01\x00\x10", 9, "truncated .npy header"},
        {"\x93NUMPY\x02\x00\x10\x00\x00", 11, "truncated .npy header"},
        {"\x93NUMPY\x01\x00\x10\x00{'descr'", 17, "truncated .npy header (16 bytes promised, 7"},
        {"\x93NUMPY\x02\x00\xff\xff\xff\xff{}", 14, "truncated .npy header"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        pp_tensor t;
        pp_error err = {0};
        int rc = pp_npy_parse((const unsigned char *)cases[k].bytes, cases[k].n, "p.npy", &t, &err);
        int ok = rc == PP_ERR_INPUT && !strncmp(err.msg, "p.npy: ", 7) && strstr(err.msg, cases[k].words);
        if (!ok)
            fprintf(stderr, "FAIL prefix case %zu: rc %d, \"%s\", want \"%s\"\n", k, rc, err.msg,
                    cases[k].words);
        assert_true(ok);
    }
}

// A .npy header may end in any whitespace and a trailing comma; keys may come in any order.
static void npy_accepts_header_variants(void **state)
{
    (void)state;
    static const char *headers[] = {
        "{'shape': (1,), 'fortran_order': False, 'descr': '<f4'}",
        "{ 'descr' : '<f4' ,\t'fortran_order':False,'shape':(1 ,),}\n\n  ",
        "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (1, )}",
    };
    for (size_t k = 0; k < sizeof headers / sizeof headers[0]; k++) {
        size_t n;
        unsigned char one[4] = {0, 0, 0x80, 0x3f};
        unsigned char *b = build(1, 0, headers[k], 4, one, &n);
        pp_tensor t;
        pp_error err = {0};
        int rc = pp_npy_parse(b, n, "v.npy", &t, &err);
        if (rc)
            fprintf(stderr, "FAIL header %zu: %s\n", k, err.msg);
        assert_int_equal(rc, PP_OK);
        assert_true(t.ndim == 1 && t.numel == 1 && t.data[0] == 1.0);
        pp_tensor_free(&t);
        free(b);
    }
}

// ---------------------------------------------------------------------------------------------
// File errors and atomic writing

static void npy_read_file_errors(void **state)
{
    char pbuf[512];
    pp_tensor t;
    pp_error err = {0};
    assert_int_equal(pp_npy_read(pp_test_tmp_path(state, "missing.npy", pbuf), &t, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "missing.npy: cannot open: No such file"));
    assert_int_equal(pp_npy_read((const char *)*state, &t, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "is a directory"));
}

static void npy_write_rejects_unrepresentable(void **state)
{
    char pbuf[512];
    pp_tensor t;
    pp_error err = {0};
    int64_t shape[1] = {2};
    assert_int_equal(pp_tensor_alloc(&t, 1, shape, PP_FMT_FP16, &err), PP_OK);
    t.data[1] = 0.1;  // not a binary16 value
    const char *path = pp_test_tmp_path(state, "unrep.npy", pbuf);
    assert_int_equal(pp_npy_write(path, &t, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "is not a fp16 value"));
    assert_int_equal(access(path, F_OK), -1);
    assert_false(pp_test_has_temp_file(*state));
    pp_tensor_free(&t);
}

// A write that fails leaves the old file as it was and no temporary file behind.
static void npy_write_failure_keeps_old_file(void **state)
{
    pp_tensor t;
    pp_error err = {0};
    int64_t shape[1] = {3};
    assert_int_equal(pp_tensor_alloc(&t, 1, shape, PP_FMT_FP64, &err), PP_OK);
    char path[600];
    snprintf(path, sizeof path, "%s/no_such_dir/x.npy", (const char *)*state);
    assert_int_equal(pp_npy_write(path, &t, &err), PP_ERR_RUNTIME);
    assert_non_null(strstr(err.msg, "cannot write"));
    assert_false(pp_test_has_temp_file(*state));
    pp_tensor_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(npy_roundtrip_special_values),
        cmocka_unit_test(npy_roundtrip_all_fp16_patterns),
        cmocka_unit_test(npy_reads_numpy_files),
        cmocka_unit_test(npy_write_matches_numpy_bytes),
        cmocka_unit_test(npy_parse_big_endian_and_versions),
        cmocka_unit_test(npy_raw_items_of_a_declared_format),
        cmocka_unit_test(npy_rejects_malformed),
        cmocka_unit_test(npy_rejects_bad_prefix),
        cmocka_unit_test(npy_accepts_header_variants),
        cmocka_unit_test(npy_read_file_errors),
        cmocka_unit_test(npy_write_rejects_unrepresentable),
        cmocka_unit_test(npy_write_failure_keeps_old_file),
    };
    return cmocka_run_group_tests(tests, pp_test_tmpdir_setup, pp_test_tmpdir_teardown);
}
