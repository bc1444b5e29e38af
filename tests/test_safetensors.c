// test_safetensors.c — safetensors reading and writing: round trips of every format (bf16 and fp8
// natively), every 8- and 16-bit pattern, the reference implementation's files (read, and
// reproduced byte for byte), updating a file in place, and a table of malformed headers.
#include "test_util.h"

#include <dirent.h>
#include <math.h>
#include <unistd.h>

#include "io/safetensors.h"
#include "io/tensor_io.h"

// ---------------------------------------------------------------------------------------------
// Helpers

#define FIX "tests/fixtures/tensorio/"

// True when needle[0..len) occurs in b[0..n).
static int contains(const unsigned char *b, size_t n, const void *needle, size_t len)
{
    for (size_t i = 0; i + len <= n; i++)
        if (!memcmp(b + i, needle, len))
            return 1;
    return 0;
}

static void spill(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    fclose(f);
}

// A safetensors image: the 8-byte length of header, header, ndata data bytes (data or zeros).
static unsigned char *build(const char *header, const unsigned char *data, size_t ndata, size_t *n)
{
    size_t hl = strlen(header);
    *n = 8 + hl + ndata;
    unsigned char *b = calloc(*n, 1);
    assert_non_null(b);
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)((uint64_t)hl >> (8 * i));
    memcpy(b + 8, header, hl);
    if (data)
        memcpy(b + 8 + hl, data, ndata);
    return b;
}

// ---------------------------------------------------------------------------------------------
// Round trips

// Every format with its special values, several tensors in one file (0-d and empty among them);
// bf16, e4m3 and e5m2 come back in their own format, tf32 as fp32.
static void safetensors_roundtrip_every_format(void **state)
{
    char pbuf[512];
    const char *path = pp_test_tmp_path(state, "rt.safetensors", pbuf);
    pp_tensor ts[PP_TEST_FMT_IEEE + 2];
    const pp_tensor *tp[PP_TEST_FMT_IEEE + 2];
    const char *names[PP_TEST_FMT_IEEE + 2];
    pp_error err = {0};
    for (int fi = 0; fi < PP_TEST_FMT_IEEE; fi++) {
        double v[16];
        int n = pp_test_special_values((pp_format_id)fi, v);
        int64_t shape[2] = {2, n};
        assert_int_equal(pp_tensor_alloc(&ts[fi], 2, shape, (pp_format_id)fi, &err), PP_OK);
        for (int64_t i = 0; i < ts[fi].numel; i++)
            ts[fi].data[i] = i < n ? v[i] : -v[i - n];
        names[fi] = pp_format_get((pp_format_id)fi).name;
        tp[fi] = &ts[fi];
    }
    int64_t empty[3] = {4, 0, 2};
    assert_int_equal(pp_tensor_alloc(&ts[PP_TEST_FMT_IEEE], 3, empty, PP_FMT_BF16, &err), PP_OK);
    assert_int_equal(pp_tensor_alloc(&ts[PP_TEST_FMT_IEEE + 1], 0, NULL, PP_FMT_E4M3, &err), PP_OK);
    ts[PP_TEST_FMT_IEEE + 1].data[0] = -448.0;
    names[PP_TEST_FMT_IEEE] = "empty";
    names[PP_TEST_FMT_IEEE + 1] = "scalar";
    tp[PP_TEST_FMT_IEEE] = &ts[PP_TEST_FMT_IEEE];
    tp[PP_TEST_FMT_IEEE + 1] = &ts[PP_TEST_FMT_IEEE + 1];
    assert_int_equal(pp_safetensors_write(path, PP_TEST_FMT_IEEE + 2, names, tp, &err), PP_OK);
    for (int k = 0; k < PP_TEST_FMT_IEEE + 2; k++) {
        pp_tensor r;
        int rc = pp_safetensors_read(path, names[k], &r, &err);
        if (rc)
            fprintf(stderr, "FAIL reading %s: %s\n", names[k], err.msg);
        assert_int_equal(rc, PP_OK);
        pp_format_id want = ts[k].format == PP_FMT_TF32 ? PP_FMT_FP32 : ts[k].format;
        assert_int_equal(r.format, want);
        pp_test_check_tensor(names[k], &r, ts[k].ndim, ts[k].shape, ts[k].data);
        pp_tensor_free(&r);
    }
    for (int k = 0; k < PP_TEST_FMT_IEEE + 2; k++)
        pp_tensor_free(&ts[k]);
}

// Every pattern of the 16- and 8-bit dtypes, built here as raw bytes, reads as pp_decode says;
// written back, the bytes are the same except NaNs, which become the canonical quiet NaN.
static void safetensors_all_patterns(void **state)
{
    static const struct {
        const char *dtype;
        pp_format_id f;
        int bytes;
        uint32_t count;
    } kinds[] = {{"F16", PP_FMT_FP16, 2, 65536}, {"BF16", PP_FMT_BF16, 2, 65536},
                 {"F8_E4M3", PP_FMT_E4M3, 1, 256}, {"F8_E5M2", PP_FMT_E5M2, 1, 256}};
    char pbuf[512];
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        char header[160];
        size_t nbytes = (size_t)kinds[k].bytes * kinds[k].count;
        snprintf(header, sizeof header, "{\"x\":{\"dtype\":\"%s\",\"shape\":[%u],\"data_offsets\":[0,%zu]}}",
                 kinds[k].dtype, kinds[k].count, nbytes);
        unsigned char *raw = malloc(nbytes);
        assert_non_null(raw);
        for (uint32_t i = 0; i < kinds[k].count; i++)
            for (int b = 0; b < kinds[k].bytes; b++)
                raw[i * (uint32_t)kinds[k].bytes + (uint32_t)b] = (unsigned char)(i >> (8 * b));
        size_t n;
        unsigned char *img = build(header, raw, nbytes, &n);
        pp_tensor t;
        pp_error err = {0};
        assert_int_equal(pp_safetensors_parse(img, n, "p.safetensors", "x", &t, &err), PP_OK);
        assert_int_equal(t.format, kinds[k].f);
        int count = 0;
        for (uint32_t i = 0; i < kinds[k].count; i++)
            pp_test_check_value(kinds[k].dtype, i, t.data[i], pp_decode(kinds[k].f, i), &count);
        assert_int_equal(count, 0);

        const char *path = pp_test_tmp_path(state, "pat.safetensors", pbuf);
        const char *nm = "x";
        const pp_tensor *tp = &t;
        assert_int_equal(pp_safetensors_write(path, 1, &nm, &tp, &err), PP_OK);
        size_t m;
        unsigned char *out = pp_test_slurp(path, &m);
        size_t at = m - nbytes;
        for (uint32_t i = 0; i < kinds[k].count; i++) {
            uint32_t got = 0;
            for (int b = 0; b < kinds[k].bytes; b++)
                got |= (uint32_t)out[at + i * (uint32_t)kinds[k].bytes + (uint32_t)b] << (8 * b);
            uint32_t want = isnan(t.data[i]) ? (uint32_t)pp_encode(kinds[k].f, t.data[i]) : i;
            if (got != want && count++ < 10)
                fprintf(stderr, "FAIL %s pattern 0x%x written as 0x%x, want 0x%x\n", kinds[k].dtype,
                        i, got, want);
        }
        assert_int_equal(count, 0);
        free(out);
        free(img);
        free(raw);
        pp_tensor_free(&t);
    }
}

// ---------------------------------------------------------------------------------------------
// The reference implementation's files (tools/make_fixture.py, safetensors 0.8.0)

static const double f16_special[13] = {0.0, -0.0, 0x1p-24, -0x1p-24, 0x3ffp-24, 0x1p-14, 65504.0,
                                       -65504.0, INFINITY, -INFINITY, NAN, 1.0, -1.5};
static const double f32_2x3[6] = {1.0, -2.5, 0x1p-149, 3.4028234663852886e38, -INFINITY, -0.0};
static const double ref_f64[4] = {1.0, -0.0, 0x1p-1074, INFINITY};
static const double ref_bf16[4] = {1.0, -0.0078125, 3.3895313892515355e38, -INFINITY};
static const double ref_e4m3[5] = {0.0, -0.0, 0x1p-9, 448.0, -NAN};
static const double ref_e5m2[5] = {0.0, 0x1p-16, 57344.0, INFINITY, -INFINITY};
static const double one[1] = {1.0};

static const struct {
    const char *name;
    pp_format_id f;
    int ndim;
    int64_t shape[2];
    const double *v;
} ref_tensors[] = {
    {"f64", PP_FMT_FP64, 2, {2, 2}, ref_f64},     {"f32", PP_FMT_FP32, 2, {2, 3}, f32_2x3},
    {"bf16", PP_FMT_BF16, 1, {4, 0}, ref_bf16},   {"f16", PP_FMT_FP16, 1, {13, 0}, f16_special},
    {"e4m3", PP_FMT_E4M3, 1, {5, 0}, ref_e4m3},   {"e5m2", PP_FMT_E5M2, 1, {5, 0}, ref_e5m2},
    {"empty", PP_FMT_FP32, 2, {0, 3}, NULL},      {"scalar", PP_FMT_FP16, 0, {0, 0}, one},
};
#define N_REF ((int)(sizeof ref_tensors / sizeof ref_tensors[0]))

static void safetensors_reads_reference_file(void **state)
{
    (void)state;
    for (int k = 0; k < N_REF; k++) {
        pp_tensor t;
        pp_error err = {0};
        int rc = pp_safetensors_read(FIX "ref.safetensors", ref_tensors[k].name, &t, &err);
        if (rc)
            fprintf(stderr, "FAIL %s: %s\n", ref_tensors[k].name, err.msg);
        assert_int_equal(rc, PP_OK);
        assert_int_equal(t.format, ref_tensors[k].f);
        pp_test_check_tensor(ref_tensors[k].name, &t, ref_tensors[k].ndim, ref_tensors[k].shape,
                     ref_tensors[k].v);
        pp_tensor_free(&t);
    }
    char **names;
    int count;
    pp_error err = {0};
    assert_int_equal(pp_safetensors_list(FIX "ref.safetensors", &names, &count, &err), PP_OK);
    // In the reference's layout order: by dtype alignment, then by name.
    static const char *order[] = {"f64", "empty", "f32", "bf16", "f16", "scalar", "e4m3", "e5m2"};
    assert_int_equal(count, 8);
    for (int i = 0; i < count; i++)
        assert_string_equal(names[i], order[i]);
    assert_null(names[count]);
    pp_safetensors_free_names(names);
}

// pp_safetensors_write reproduces the reference implementation's file byte for byte, whatever
// the order the tensors are given in.
static void safetensors_write_matches_reference_bytes(void **state)
{
    char pbuf[512];
    pp_tensor ts[N_REF];
    const pp_tensor *tp[N_REF];
    const char *names[N_REF];
    pp_error err = {0};
    for (int k = 0; k < N_REF; k++) {
        int j = N_REF - 1 - k;  // reversed, so the writer has to sort
        assert_int_equal(pp_tensor_alloc(&ts[k], ref_tensors[j].ndim, ref_tensors[j].shape,
                                         ref_tensors[j].f, &err), PP_OK);
        for (int64_t i = 0; i < ts[k].numel; i++)
            ts[k].data[i] = ref_tensors[j].v[i];
        tp[k] = &ts[k];
        names[k] = ref_tensors[j].name;
    }
    const char *path = pp_test_tmp_path(state, "ref.safetensors", pbuf);
    assert_int_equal(pp_safetensors_write(path, N_REF, names, tp, &err), PP_OK);
    size_t n1, n2;
    unsigned char *ours = pp_test_slurp(path, &n1), *theirs = pp_test_slurp(FIX "ref.safetensors", &n2);
    if (n1 != n2 || memcmp(ours, theirs, n1))
        fprintf(stderr, "FAIL bytes differ from the reference (%zu vs %zu bytes):\n%.*s\n%.*s\n",
                n1, n2, (int)(n1 > 8 ? n1 - 8 : 0), ours + 8, (int)(n2 > 8 ? n2 - 8 : 0), theirs + 8);
    assert_int_equal(n1, n2);
    assert_memory_equal(ours, theirs, n1);
    free(ours);
    free(theirs);
    for (int k = 0; k < N_REF; k++)
        pp_tensor_free(&ts[k]);
}

// The byte vectors of the reference implementation's own unit tests (safetensors/src/tensor.rs:
// test_serialization, test_serialization_forced_alignement, test_empty): the header is compact
// JSON padded with spaces to a multiple of 8.
static void safetensors_write_reference_vectors(void **state)
{
    char pbuf[512];
    pp_error err = {0};
    static const struct {
        const char *name;
        int ndim;
        int64_t shape[4];
        const char *header;
    } cases[] = {
        {"attn.0", 3, {1, 2, 3}, "{\"attn.0\":{\"dtype\":\"F32\",\"shape\":[1,2,3],\"data_offsets\":[0,24]}}"},
        {"attn0", 4, {1, 1, 2, 3},
         "{\"attn0\":{\"dtype\":\"F32\",\"shape\":[1,1,2,3],\"data_offsets\":[0,24]}}       "},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        pp_tensor t;
        assert_int_equal(pp_tensor_alloc(&t, cases[k].ndim, cases[k].shape, PP_FMT_FP32, &err), PP_OK);
        for (int i = 0; i < 6; i++)
            t.data[i] = i;
        const pp_tensor *tp = &t;
        const char *path = pp_test_tmp_path(state, "vec.safetensors", pbuf);
        assert_int_equal(pp_safetensors_write(path, 1, &cases[k].name, &tp, &err), PP_OK);
        static const float vals[6] = {0, 1, 2, 3, 4, 5};
        size_t n, want_n;
        unsigned char *want = build(cases[k].header, (const unsigned char *)vals, sizeof vals, &want_n);
        unsigned char *got = pp_test_slurp(path, &n);
        assert_int_equal(n, want_n);
        assert_memory_equal(got, want, n);
        free(got);
        free(want);
        pp_tensor_free(&t);
    }
    const char *path = pp_test_tmp_path(state, "none.safetensors", pbuf);
    assert_int_equal(pp_safetensors_write(path, 0, NULL, NULL, &err), PP_OK);
    size_t n;
    unsigned char *got = pp_test_slurp(path, &n);
    assert_int_equal(n, 16);
    assert_memory_equal(got, "\x08\0\0\0\0\0\0\0{}      ", 16);
    free(got);
}

// A file with a dtype precprobe does not read (I64) and metadata, as torch leaves it.
static void safetensors_other_dtypes_and_metadata(void **state)
{
    (void)state;
    pp_tensor t;
    pp_error err = {0};
    assert_int_equal(pp_safetensors_read(FIX "ref_i64.safetensors", "w", &t, &err), PP_OK);
    assert_int_equal(t.format, PP_FMT_FP32);
    assert_true(t.numel == 1 && t.data[0] == 0.5);
    pp_tensor_free(&t);
    assert_int_equal(pp_safetensors_read(FIX "ref_i64.safetensors", "i64", &t, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "tensor 'i64' has dtype I64; precprobe reads F64"));
    assert_null(t.data);
}

// ---------------------------------------------------------------------------------------------
// Updating a file

static void safetensors_update_keeps_the_rest(void **state)
{
    char pbuf[512];
    const char *path = pp_test_tmp_path(state, "upd.safetensors", pbuf);
    size_t n;
    unsigned char *orig = pp_test_slurp(FIX "ref_i64.safetensors", &n);
    spill(path, orig, n);
    pp_tensor t, r;
    pp_error err = {0};
    int64_t shape[1] = {2};
    assert_int_equal(pp_tensor_alloc(&t, 1, shape, PP_FMT_BF16, &err), PP_OK);
    t.data[0] = 0.5;
    t.data[1] = -INFINITY;
    assert_int_equal(pp_safetensors_update(path, "new", &t, &err), PP_OK);
    t.format = PP_FMT_FP64;
    t.data[0] = 0.1;
    assert_int_equal(pp_safetensors_update(path, "w", &t, &err), PP_OK);  // replaces w

    char **names;
    int count;
    assert_int_equal(pp_safetensors_list(path, &names, &count, &err), PP_OK);
    assert_int_equal(count, 3);
    assert_string_equal(names[0], "i64");  // I64 comes after F64 in the reference's dtype order
    assert_string_equal(names[1], "w");
    assert_string_equal(names[2], "new");
    pp_safetensors_free_names(names);
    assert_int_equal(pp_safetensors_read(path, "w", &r, &err), PP_OK);
    assert_int_equal(r.format, PP_FMT_FP64);
    assert_true(r.data[0] == 0.1 && r.data[1] == -INFINITY);
    pp_tensor_free(&r);
    assert_int_equal(pp_safetensors_read(path, "new", &r, &err), PP_OK);
    assert_int_equal(r.format, PP_FMT_BF16);
    pp_tensor_free(&r);
    size_t m;
    unsigned char *now = pp_test_slurp(path, &m);
    assert_true(contains(now, m, "\"__metadata__\":{\"format\":\"pt\"}", 30));
    static const unsigned char i64_bytes[16] = {1, 0, 0, 0, 0, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff,
                                                0xff, 0xff, 0xff, 0xff};
    assert_true(contains(now, m, i64_bytes, 16));
    free(now);
    free(orig);

    // Not a safetensors file: refused, left as it was.
    spill(path, "hello, world", 12);
    assert_int_equal(pp_safetensors_update(path, "x", &t, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "not replacing it"));
    now = pp_test_slurp(path, &m);
    assert_true(m == 12 && !memcmp(now, "hello, world", 12));
    free(now);
    // A missing file is created.
    unlink(path);
    assert_int_equal(pp_safetensors_update(path, "x", &t, &err), PP_OK);
    assert_int_equal(pp_safetensors_read(path, NULL, &r, &err), PP_OK);
    pp_tensor_free(&r);
    pp_tensor_free(&t);
}

// ---------------------------------------------------------------------------------------------
// Names

// Names needing JSON escapes, and UTF-8, round-trip and are escaped as serde_json escapes them.
static void safetensors_names_escape(void **state)
{
    char pbuf[512];
    static const char *names[] = {"a\"b", "c\\d", "e\nf\t", "g\x01h", "\xc3\xbcn\xc3\xaf", "x:y.npy"};
    enum { N = sizeof names / sizeof names[0] };
    pp_tensor ts[N];
    const pp_tensor *tp[N];
    pp_error err = {0};
    for (int k = 0; k < N; k++) {
        int64_t shape[1] = {1};
        assert_int_equal(pp_tensor_alloc(&ts[k], 1, shape, PP_FMT_FP32, &err), PP_OK);
        ts[k].data[0] = k;
        tp[k] = &ts[k];
    }
    const char *path = pp_test_tmp_path(state, "names.safetensors", pbuf);
    assert_int_equal(pp_safetensors_write(path, N, names, tp, &err), PP_OK);
    for (int k = 0; k < N; k++) {
        pp_tensor r;
        assert_int_equal(pp_safetensors_read(path, names[k], &r, &err), PP_OK);
        assert_true(r.data[0] == k);
        pp_tensor_free(&r);
        pp_tensor_free(&ts[k]);
    }
    size_t m;
    unsigned char *b = pp_test_slurp(path, &m);
    assert_true(contains(b, m, "\"a\\\"b\"", 6));
    assert_true(contains(b, m, "\"c\\\\d\"", 6));
    assert_true(contains(b, m, "\"e\\nf\\t\"", 8));
    assert_true(contains(b, m, "\"g\\u0001h\"", 10));
    assert_true(contains(b, m, "\"\xc3\xbcn\xc3\xaf\"", 7));
    free(b);
}

static void safetensors_write_rejects(void **state)
{
    char pbuf[512];
    pp_tensor t;
    pp_error err = {0};
    int64_t shape[1] = {1};
    assert_int_equal(pp_tensor_alloc(&t, 1, shape, PP_FMT_BF16, &err), PP_OK);
    const pp_tensor *tp[2] = {&t, &t};
    const char *path = pp_test_tmp_path(state, "rej.safetensors", pbuf);
    static const struct {
        const char *names[2];
        int count;
        const char *words;
    } cases[] = {
        {{"a", "a"}, 2, "given twice"},
        {{"", NULL}, 1, "name is empty"},
        {{"__metadata__", NULL}, 1, "cannot name a tensor"},
        {{"\xff", NULL}, 1, "not valid UTF-8"},
        {{"\xc0\xaf", NULL}, 1, "not valid UTF-8"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int rc = pp_safetensors_write(path, cases[k].count, cases[k].names, tp, &err);
        if (rc != PP_ERR_INPUT || !strstr(err.msg, cases[k].words))
            fprintf(stderr, "FAIL write rejection %zu: rc %d \"%s\"\n", k, rc, err.msg);
        assert_int_equal(rc, PP_ERR_INPUT);
        assert_non_null(strstr(err.msg, cases[k].words));
    }
    t.data[0] = 1.1;  // not a bf16 value
    const char *nm = "x";
    assert_int_equal(pp_safetensors_write(path, 1, &nm, tp, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "is not a bf16 value"));
    assert_int_equal(access(path, F_OK), -1);
    pp_tensor_free(&t);
}

// ---------------------------------------------------------------------------------------------
// Rejections

#define T(name, dtype, shape, b, e) "\"" name "\":{\"dtype\":\"" dtype "\",\"shape\":" shape ",\"data_offsets\":[" #b "," #e "]}"

static void safetensors_rejects_malformed(void **state)
{
    (void)state;
    static const struct {
        const char *header;
        size_t ndata;
        const char *tensor;  // the name asked for (NULL: the only one)
        const char *words;
    } cases[] = {
        {"{" T("a", "F32", "[2]", 0, 8) "}", 4, "a", "reach past the 4-byte data buffer"},
        {"{" T("a", "F32", "[2]", 0, 8) "}", 12, "a", "4 bytes after the last tensor"},
        {"{" T("a", "F32", "[2]", 0, 4) "}", 4, "a", "span 4 bytes, but 2 elements of F32 need 8"},
        {"{" T("a", "F32", "[1]", 0, 8) "}", 8, "a", "span 8 bytes, but 1 elements of F32 need 4"},
        {"{" T("a", "F32", "[2]", 8, 0) "}", 8, "a", "end before they begin"},
        {"{" T("a", "F32", "[2]", 0, 8) "," T("b", "F32", "[2]", 4, 12) "}", 12, "a", "overlap"},
        {"{" T("a", "F32", "[1]", 0, 4) "," T("b", "F32", "[1]", 8, 12) "}", 12, "a",
         "bytes [4, 8) of the data buffer belong to no tensor"},
        {"{" T("a", "F32", "[1]", 4, 8) "}", 8, "a", "bytes [0, 4)"},
        {"{" T("a", "F32", "[1]", 0, 4) "," T("a", "F32", "[1]", 4, 8) "}", 8, "a", "appears twice"},
        {"{" T("b", "F32", "[1]", 0, 4) "," T("a", "F32", "[1]", 4, 8) "," T("b", "F32", "[0]", 8, 8) "}", 8,
         "a", "tensor 'b' appears twice"},
        {"{" T("a", "F32", "[1,1,1,1,1,1,1,1,1]", 0, 4) "}", 4, "a", "more than 8 dimensions"},
        {"{" T("a", "F32", "[-1]", 0, 0) "}", 0, "a", "negative extent"},
        {"{" T("a", "F32", "[1.5]", 0, 4) "}", 4, "a", "other than integers"},
        {"{" T("a", "F32", "[\"2\"]", 0, 8) "}", 8, "a", "other than integers"},
        {"{" T("a", "F32", "[1e300]", 0, 4) "}", 4, "a", "other than integers"},
        {"{" T("a", "F32", "[1048576,1048576,2]", 0, 0) "}", 0, "a", "absurd"},
        {"{" T("a", "F32", "[4294967296,4294967296,0]", 0, 0) "}", 0, "a", "absurd"},
        {"{" T("a", "F32", "[1]", -4, 0) "}", 0, "a", "not integers in [0, 2^53]"},
        {"{" T("a", "F32", "[1]", 0, 1e300) "}", 0, "a", "not integers in [0, 2^53]"},
        {"{" T("a", "F32", "[1]", 18446744073709551616, 18446744073709551620) "}", 4, "a", "not integers"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":2,\"data_offsets\":[0,4]}}", 4, "a", "'shape' is missing or not an array"},
        {"{\"a\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "a", "'dtype' is missing"},
        {"{\"a\":{\"dtype\":5,\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "a", "not a string"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4, "a", "'data_offsets' is missing"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,8]}}", 8, "a", "'data_offsets' is missing or not"},
        {"{\"a\":3}", 0, "a", "entry 'a' is not an object"},
        {"{\"__metadata__\":3}", 0, NULL, "'__metadata__' is not an object"},
        {"{\"__metadata__\":{\"k\":1}}", 0, NULL, "value 'k' is not a string"},
        {"{\"__metadata__\":{},\"__metadata__\":{}}", 0, NULL, "given twice"},
        {"{\"a\":", 0, "a", "not valid JSON"},
        {"{\"a\":{}}}", 0, "a", "text after the JSON header"},
        {"{} x", 0, NULL, "text after the JSON header"},
        {"[]", 0, NULL, "does not start with '{'"},
        {" {}", 0, NULL, "does not start with '{'"},
        {"{", 0, NULL, "does not start with '{'"},
        {"{\"\xff\":1}", 0, NULL, "not valid UTF-8"},
        {"{\"\xc0\xaf\":1}", 0, NULL, "not valid UTF-8"},
        {"{\"\xed\xa0\x80\":1}", 0, NULL, "not valid UTF-8"},
        {"{" T("i", "I64", "[1]", 0, 8) "}", 8, "i", "tensor 'i' has dtype I64"},
        {"{" T("q", "Q9", "[1]", 0, 3) "}", 3, "q", "tensor 'q' has dtype Q9"},
        {"{" T("a\\nb", "F8\\tE4M3", "[1]", 0, 1) "}", 1, "a\nb", "tensor 'a\\x0ab' has dtype F8\\x09E4M3"},
        {"{" T("a", "F32", "[1]", 0, 4) "," T("b", "F32", "[1]", 4, 8) "}", 8, "zz",
         "no tensor 'zz'; the file holds 'a', 'b'"},
        {"{" T("a", "F32", "[1]", 0, 4) "," T("b", "F32", "[1]", 4, 8) "}", 8, NULL,
         "the file holds 2 tensors; name one as t.safetensors:NAME: 'a', 'b'"},
        {"{" T("a", "F32", "[0]", 0, 0) "," T("b", "F32", "[0]", 0, 0) "," T("c", "F32", "[0]", 0, 0) ","
             T("d", "F32", "[0]", 0, 0) "," T("e", "F32", "[0]", 0, 0) "," T("f", "F32", "[0]", 0, 0) ","
             T("g", "F32", "[0]", 0, 0) "}", 0, "x", "'f', ... (7 in all)"},
        {"{}", 0, NULL, "the file holds no tensors"},
        {"{\"__metadata__\":{\"format\":\"pt\"}}", 0, "x", "no tensor 'x': the file holds no tensors"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        size_t n;
        unsigned char *b = build(cases[k].header, NULL, cases[k].ndata, &n);
        pp_tensor t;
        pp_error err = {0};
        int rc = pp_safetensors_parse(b, n, "t.safetensors", cases[k].tensor, &t, &err);
        int ok = rc == PP_ERR_INPUT && !strncmp(err.msg, "t.safetensors: ", 15) &&
                 strstr(err.msg, cases[k].words) && !pp_test_has_control(err.msg) && !t.data;
        if (!ok)
            fprintf(stderr, "FAIL rejection %zu (%s): rc %d, message \"%s\", want \"%s\"\n", k,
                    cases[k].header, rc, err.msg, cases[k].words);
        assert_true(ok);
        free(b);
    }
}

// Valid oddities: zero-size tensors anywhere, unknown keys, a tensor of an unknown dtype beside
// the one asked for, whitespace around and after the JSON.
static void safetensors_accepts_valid_oddities(void **state)
{
    (void)state;
    static const char *headers[] = {
        "{" T("z", "F32", "[0]", 0, 0) "," T("a", "F32", "[1]", 0, 4) "," T("y", "BF16", "[3,0]", 4, 4) "}",
        "{\"a\":{\"data_offsets\":[0,4],\"extra\":[1],\"shape\":[1],\"dtype\":\"F32\"}}",
        "{" T("q", "F4", "[2]", 0, 1) "," T("a", "F32", "[1]", 1, 5) "}",
        "{ \"a\" : {\"dtype\":\"F32\", \"shape\":[ 1 ],\"data_offsets\":[0, 4]}\n}\n  \t",
        "{\"__metadata__\":{\"format\":\"pt\"}," T("a", "F32", "[1]", 0, 4) "}",
    };
    static const size_t ndata[] = {4, 4, 5, 4, 4};
    for (size_t k = 0; k < sizeof headers / sizeof headers[0]; k++) {
        size_t n;
        unsigned char *b = build(headers[k], NULL, ndata[k], &n);
        pp_tensor t;
        pp_error err = {0};
        int rc = pp_safetensors_parse(b, n, "ok.safetensors", "a", &t, &err);
        if (rc)
            fprintf(stderr, "FAIL valid header %zu: %s\n", k, err.msg);
        assert_int_equal(rc, PP_OK);
        assert_true(t.numel == 1 && t.data[0] == 0.0);
        pp_tensor_free(&t);
        free(b);
    }
}

// The 8-byte length: too short a file, over 100 MB, or past the end of the file.
static void safetensors_rejects_bad_length(void **state)
{
    (void)state;
    static const struct {
        const char *bytes;
        size_t n;
        const char *words;
    } cases[] = {
        {"", 0, "shorter than the 8-byte header length"},
        {"\x02\0\0\0\0\0\0", 7, "shorter than the 8-byte header length"},
        {"\x01\xe1\xf5\x05\0\0\0\0{}", 10, "exceeds the 100 MB limit"},
        {"\xff\xff\xff\xff\xff\xff\xff\xff{}", 10, "exceeds the 100 MB limit"},
        {"\x08\0\0\0\0\0\0\0{}", 10, "larger than the 2 bytes after it"},
        {"\0\0\0\0\0\0\0\0", 8, "does not start with '{'"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        pp_tensor t;
        pp_error err = {0};
        int rc = pp_safetensors_parse((const unsigned char *)cases[k].bytes, cases[k].n, "l.safetensors",
                                      NULL, &t, &err);
        int ok = rc == PP_ERR_INPUT && !strncmp(err.msg, "l.safetensors: ", 15) && strstr(err.msg, cases[k].words);
        if (!ok)
            fprintf(stderr, "FAIL length case %zu: rc %d \"%s\", want \"%s\"\n", k, rc, err.msg, cases[k].words);
        assert_true(ok);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(safetensors_roundtrip_every_format),
        cmocka_unit_test(safetensors_all_patterns),
        cmocka_unit_test(safetensors_reads_reference_file),
        cmocka_unit_test(safetensors_write_matches_reference_bytes),
        cmocka_unit_test(safetensors_write_reference_vectors),
        cmocka_unit_test(safetensors_other_dtypes_and_metadata),
        cmocka_unit_test(safetensors_update_keeps_the_rest),
        cmocka_unit_test(safetensors_names_escape),
        cmocka_unit_test(safetensors_write_rejects),
        cmocka_unit_test(safetensors_rejects_malformed),
        cmocka_unit_test(safetensors_accepts_valid_oddities),
        cmocka_unit_test(safetensors_rejects_bad_length),
    };
    return cmocka_run_group_tests(tests, pp_test_tmpdir_setup, pp_test_tmpdir_teardown);
}
