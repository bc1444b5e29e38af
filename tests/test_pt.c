// test_pt.c — torch.save files: every dtype precprobe reads, views through offset and stride, a
// state_dict (OrderedDict with BUILD), a Parameter, against the values numpy read from the same
// tensor (tools/make_data_in_fixtures.py); and every rejection: what torch.save writes but
// precprobe does not read, hostile pickles (globals, opcodes, memo, stack), a damaged ZIP, and
// every truncation and byte flip of a real file, none of which may crash or leak.
#include "test_util.h"

#include "io/npy.h"
#include "io/pt.h"
#include "io/pt_pickle.h"
#include "io/zip_stored.h"

#define FIX "tests/fixtures/pt/"

static void load_ok(const char *spec_file, const char *name, pp_tensor *t)
{
    pp_error err = {0};
    int rc = pp_pt_read(spec_file, name, t, &err);
    if (rc)
        fprintf(stderr, "  %s:%s: %s\n", spec_file, name ? name : "", err.msg);
    assert_int_equal(rc, PP_OK);
}

static void pt_reads_every_dtype_and_view(void **state)
{
    (void)state;
    pp_tensor base, t;
    pp_error err = {0};
    assert_int_equal(pp_npy_read(FIX "base_f32.npy", &base, &err), PP_OK);  // [3, 4] float32
    static const struct {
        const char *name;
        pp_format_id f;
    } dt[] = {{"f64", PP_FMT_FP64}, {"f32", PP_FMT_FP32}, {"f16", PP_FMT_FP16},
              {"bf16", PP_FMT_BF16}, {"e4m3", PP_FMT_E4M3}, {"e5m2", PP_FMT_E5M2}};
    for (size_t k = 0; k < sizeof dt / sizeof dt[0]; k++) {
        load_ok(FIX "dtypes.pt", dt[k].name, &t);
        int count = 0;
        assert_int_equal(t.format, dt[k].f);
        assert_true(pp_tensor_has_shape(&t, 2, base.shape));
        for (int64_t i = 0; i < t.numel; i++)  // torch's .to(dtype): round to nearest-even
            pp_test_check_value(dt[k].name, i, t.data[i], pp_round(dt[k].f, base.data[i], PP_RND_NE, 0), &count);
        assert_int_equal(count, 0);
        pp_tensor_free(&t);
    }
    // views: base.t() and base[1:, 2:] share base's storage; read through offset and stride
    load_ok(FIX "dtypes.pt", "t", &t);
    assert_true(t.ndim == 2 && t.shape[0] == 4 && t.shape[1] == 3);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++)
            assert_true(t.data[i * 3 + j] == base.data[j * 4 + i]);
    pp_tensor_free(&t);
    load_ok(FIX "dtypes.pt", "slice", &t);
    assert_true(t.ndim == 2 && t.shape[0] == 2 && t.shape[1] == 2);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            assert_true(t.data[i * 2 + j] == base.data[(1 + i) * 4 + 2 + j]);
    pp_tensor_free(&t);
    load_ok(FIX "dtypes.pt", "scalar", &t);
    assert_true(t.ndim == 0 && t.numel == 1 && t.data[0] == 2.5);
    pp_tensor_free(&t);
    load_ok(FIX "dtypes.pt", "empty", &t);
    assert_true(t.ndim == 2 && t.shape[0] == 0 && t.shape[1] == 3 && t.numel == 0);
    pp_tensor_free(&t);
    // a single tensor (X.pt), a Parameter, a dict holding one tensor among other values
    load_ok(FIX "single.pt", NULL, &t);
    assert_true(pp_tensor_has_shape(&t, 2, base.shape) && !memcmp(t.data, base.data, 12 * sizeof(double)));
    pp_tensor_free(&t);
    load_ok(FIX "parameter.pt", "p", &t);
    assert_true(pp_tensor_has_shape(&t, 2, base.shape) && !memcmp(t.data, base.data, 12 * sizeof(double)));
    pp_tensor_free(&t);
    load_ok(FIX "mixed.pt", NULL, &t);
    assert_true(pp_tensor_has_shape(&t, 2, base.shape));
    pp_tensor_free(&t);
    pp_tensor_free(&base);
}

// nn.Linear(4, 2).to(bfloat16).state_dict() under torch.manual_seed(0): an OrderedDict whose
// _metadata comes through BUILD.
static void pt_reads_a_state_dict(void **state)
{
    (void)state;
    static const double w[8] = {-0.0037384033203125, 0.267578125, -0.412109375, -0.3671875,
                                -0.1923828125, 0.1337890625, -0.0098876953125, 0.396484375};
    static const double b[2] = {-0.04443359375, 0.1318359375};
    pp_tensor t;
    load_ok(FIX "state_dict.pt", "weight", &t);
    assert_true(t.format == PP_FMT_BF16 && t.ndim == 2 && t.shape[0] == 2 && t.shape[1] == 4);
    for (int i = 0; i < 8; i++)
        assert_true(t.data[i] == w[i]);
    pp_tensor_free(&t);
    load_ok(FIX "state_dict.pt", "bias", &t);
    assert_true(t.format == PP_FMT_BF16 && t.ndim == 1 && t.data[0] == b[0] && t.data[1] == b[1]);
    pp_tensor_free(&t);
}

// Nested dicts (tools/make_pt_nested_fixtures.py): {"layer": {"weight": w, "bias": b}, "head":
// OrderedDict(weight=h), "scale": s} reads as tensors "layer.weight", "layer.bias", "head.weight",
// "scale", with w = arange(6)/4 [2, 3] fp32, b = [-1, 0.5] bf16, h = [3, -0] fp16, s = 2 (0-d);
// OrderedDict(a=OrderedDict(b={"c": w.t()})) as "a.b.c", the view read through its strides.
static void pt_reads_nested_dicts(void **state)
{
    (void)state;
    pp_tensor t;
    load_ok(FIX "nested_dicts.pt", "layer.weight", &t);
    assert_true(t.format == PP_FMT_FP32 && t.ndim == 2 && t.shape[0] == 2 && t.shape[1] == 3);
    for (int i = 0; i < 6; i++)
        assert_true(t.data[i] == i / 4.0);
    pp_tensor_free(&t);
    load_ok(FIX "nested_dicts.pt", "layer.bias", &t);
    assert_true(t.format == PP_FMT_BF16 && t.numel == 2 && t.data[0] == -1.0 && t.data[1] == 0.5);
    pp_tensor_free(&t);
    load_ok(FIX "nested_dicts.pt", "head.weight", &t);
    assert_true(t.format == PP_FMT_FP16 && t.numel == 2 && t.data[0] == 3.0 && t.data[1] == 0.0 &&
                signbit(t.data[1]));
    pp_tensor_free(&t);
    load_ok(FIX "nested_dicts.pt", "scale", &t);
    assert_true(t.ndim == 0 && t.numel == 1 && t.data[0] == 2.0);
    pp_tensor_free(&t);
    load_ok(FIX "nested_deep.pt", "a.b.c", &t);
    assert_true(t.ndim == 2 && t.shape[0] == 3 && t.shape[1] == 2);
    static const double wt[6] = {0, 0.75, 0.25, 1.0, 0.5, 1.25};  // w transposed, row-major
    for (int i = 0; i < 6; i++)
        assert_true(t.data[i] == wt[i]);
    pp_tensor_free(&t);
    load_ok(FIX "nested_deep.pt", NULL, &t);  // the only tensor
    assert_true(t.numel == 6);
    pp_tensor_free(&t);
    load_ok(FIX "nested_mixed.pt", "opt.p", &t);
    assert_true(t.numel == 2 && t.data[0] == -1.0);
    pp_tensor_free(&t);
}

static void expect_error(const char *file, const char *name, const char *msg)
{
    pp_tensor t;
    pp_error err = {0};
    int rc = pp_pt_read(file, name, &t, &err);
    if (rc != PP_ERR_INPUT || !strstr(err.msg, msg))
        fprintf(stderr, "  %s:%s: rc %d: %s\n  want: %s\n", file, name ? name : "", rc, err.msg, msg);
    assert_int_equal(rc, PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, msg));
    assert_null(t.data);
    assert_false(pp_test_has_control(err.msg));
}

// What nesting does not change: a non-tensor is refused by its joined name, a dict is not a
// tensor, the listing names the joined keys; a dict that holds itself, a non-string key deep
// down: refused while reading the pickle (hand-made: torch.save never writes them).
static void pt_nested_refusals(void **state)
{
    (void)state;
    expect_error(FIX "nested_mixed.pt", "opt.step", "nested_mixed.pt: 'opt.step' is an integer, not a tensor");
    expect_error(FIX "nested_dicts.pt", "layer", "nested_dicts.pt: no tensor 'layer' (tensors: layer.weight, "
                                                 "layer.bias, head.weight, scale)");
    expect_error(FIX "nested_dicts.pt", NULL, "holds 4 tensors; name one");
    expect_error(FIX "nested_dicts.pt", "layer.weight.x", "no tensor 'layer.weight.x'");
    // d_i = {"a": d_(i-1), "b": d_(i-1)} for i = 1..30 over d_0 = {} (memo i): 2^30 paths to walk
    // in a few hundred bytes; refused after a bounded walk
    unsigned char pkl[1024];
    size_t n = 0;
    memcpy(pkl, "\x80\x02}q\x00", 5);
    n = 5;
    for (int i = 1; i <= 30; i++) {
        unsigned char step[] = {'}', 'q', (unsigned char)i, '(', 'X', 1, 0, 0, 0, 'a', 'h', (unsigned char)(i - 1),
                                'X', 1, 0, 0, 0, 'b', 'h', (unsigned char)(i - 1), 'u'};
        memcpy(pkl + n, step, sizeof step);
        n += sizeof step;
    }
    pkl[n++] = '.';
    pp_pt_contents c;
    pp_error err = {0};
    assert_int_equal(pp_pt_unpickle(pkl, n, "h.pt", &c, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "h.pt: more entries than a torch.save of tensors holds"));
}

static void pt_rejects_what_it_does_not_read(void **state)
{
    (void)state;
    expect_error(FIX "int64.pt", "i", "int64.pt: tensor 'i' has dtype torch.int64; precprobe reads float64");
    expect_error(FIX "int64.pt", NULL, "int64.pt: holds 2 tensors; name one, as " FIX "int64.pt:NAME (i, x)");
    expect_error(FIX "mixed.pt", "step", "mixed.pt: 'step' is an integer, not a tensor");
    expect_error(FIX "nested.pt", "od", "nested.pt: no tensor 'od' (tensors: x)");  // a dict: its entries
    expect_error(FIX "nested.pt", "od.a", "nested.pt: 'od.a' is an integer, not a tensor");
    expect_error(FIX "list.pt", NULL, "list.pt: data.pkl at byte 2: opcode 0x5d is not one torch.save writes");
    expect_error(FIX "legacy.pt", NULL, "legacy.pt: torch.save's legacy format (before PyTorch 1.6");
    expect_error(FIX "dtypes.pt", "nope", "dtypes.pt: no tensor 'nope' (tensors: f64, f32, f16, bf16, e4m3");
    expect_error(FIX "single.pt", "x", "single.pt: holds a single tensor, not a dict");
    expect_error(FIX "base_f32.npy", NULL, "base_f32.npy: not a readable torch.save archive: no ZIP end");
    expect_error(FIX "missing.pt", NULL, "missing.pt: cannot open");
}

// ---- hand-made archives ------------------------------------------------------------------------

typedef struct zbuf {
    unsigned char b[1 << 16];
    size_t n;
} zbuf;

static void put(zbuf *z, const void *p, size_t n)
{
    assert_true(z->n + n <= sizeof z->b);
    memcpy(z->b + z->n, p, n);
    z->n += n;
}

static void put16(zbuf *z, uint32_t v)
{
    unsigned char b[2] = {(unsigned char)v, (unsigned char)(v >> 8)};
    put(z, b, 2);
}

static void put32(zbuf *z, uint32_t v)
{
    put16(z, v & 0xffff);
    put16(z, v >> 16);
}

typedef struct zentry {
    const char *name;
    const unsigned char *data;
    size_t n;
    int method;  // 0 stored; anything else claims compression
} zentry;

static void put64(zbuf *z, uint64_t v)
{
    put32(z, (uint32_t)v);
    put32(z, (uint32_t)(v >> 32));
}

// A ZIP of stored entries, as PyTorch writes it (without the alignment padding); zip64: with
// the ZIP64 end records and every size and offset in ZIP64 extra fields, as for files > 4 GB.
static void make_zip_as(zbuf *z, const zentry *e, int count, int zip64)
{
    z->n = 0;
    uint32_t off[16];
    for (int i = 0; i < count; i++) {
        off[i] = (uint32_t)z->n;
        put32(z, 0x04034b50u);
        put16(z, 20), put16(z, 0), put16(z, (uint32_t)e[i].method), put16(z, 0), put16(z, 0);
        put32(z, pp_zip_crc32(e[i].data, e[i].n));
        put32(z, (uint32_t)e[i].n), put32(z, (uint32_t)e[i].n);
        put16(z, (uint32_t)strlen(e[i].name)), put16(z, 0);
        put(z, e[i].name, strlen(e[i].name));
        put(z, e[i].data, e[i].n);
    }
    uint32_t cd = (uint32_t)z->n;
    const uint32_t big = 0xffffffffu;
    for (int i = 0; i < count; i++) {
        put32(z, 0x02014b50u);
        put16(z, 45), put16(z, 45), put16(z, 0), put16(z, (uint32_t)e[i].method), put16(z, 0), put16(z, 0);
        put32(z, pp_zip_crc32(e[i].data, e[i].n));
        put32(z, zip64 ? big : (uint32_t)e[i].n), put32(z, zip64 ? big : (uint32_t)e[i].n);
        put16(z, (uint32_t)strlen(e[i].name)), put16(z, zip64 ? 28 : 0), put16(z, 0), put16(z, 0), put16(z, 0);
        put32(z, 0), put32(z, zip64 ? big : off[i]);
        put(z, e[i].name, strlen(e[i].name));
        if (zip64) {
            put16(z, 1), put16(z, 24);
            put64(z, e[i].n), put64(z, e[i].n), put64(z, off[i]);
        }
    }
    uint32_t cdsize = (uint32_t)z->n - cd;
    if (zip64) {
        uint64_t rec = z->n;
        put32(z, 0x06064b50u), put64(z, 44), put16(z, 45), put16(z, 45), put32(z, 0), put32(z, 0);
        put64(z, (uint64_t)count), put64(z, (uint64_t)count), put64(z, cdsize), put64(z, cd);
        put32(z, 0x07064b50u), put32(z, 0), put64(z, rec), put32(z, 1);
    }
    put32(z, 0x06054b50u);
    put16(z, 0), put16(z, 0), put16(z, zip64 ? 0xffff : (uint32_t)count), put16(z, zip64 ? 0xffff : (uint32_t)count);
    put32(z, zip64 ? big : cdsize), put32(z, zip64 ? big : cd), put16(z, 0);
}

static void make_zip(zbuf *z, const zentry *e, int count)
{
    make_zip_as(z, e, count, 0);
}

// Pickle text with "\xNN" escapes spelled by the caller; lengths given explicitly.
#define P(s) (const unsigned char *)(s), sizeof(s) - 1

// {'x': tensor of 2 float32 values in storage '0'} with the given size and stride tuples' bytes
#define TENSOR_PKL(CLS, NUMEL, OFFSET, SIZE, STRIDE)                                                        \
    "\x80\x02}q\x00(X\x01\x00\x00\x00xctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\n" \
    CLS "\nX\x01\x00\x00\x00" "0X\x03\x00\x00\x00" "cpuK" NUMEL "tQK" OFFSET SIZE STRIDE                            \
    "\x89" "ccollections\nOrderedDict\n)RtRu."

static int parse_archive(const zentry *e, int count, const char *name, pp_tensor *t, pp_error *err)
{
    zbuf *z = malloc(sizeof *z);
    assert_non_null(z);
    make_zip(z, e, count);
    int rc = pp_pt_parse(z->b, z->n, "h.pt", name, t, err);
    free(z);
    return rc;
}

static void pt_hand_made_archives(void **state)
{
    (void)state;
    static const unsigned char two[8] = {0, 0, 0x80, 0x3f, 0, 0, 0, 0x40};  // 1.0f, 2.0f
    static const struct {
        const unsigned char *pkl;
        size_t n;
        const char *byteorder;
        size_t data_n;
        int method;
        const char *msg;  // NULL: reads [1, 2]
    } cases[] = {
        {P(TENSOR_PKL("FloatStorage", "\x02", "\x00", "K\x02\x85", "K\x01\x85")), "little", 8, 0, NULL},
        // reversed through a stride: offset 1, stride... (a [2] view with stride 0 reads [2, 2])
        {P(TENSOR_PKL("FloatStorage", "\x02", "\x01", "K\x02\x85", "K\x00\x85")), NULL, 8, 0, "=2,2"},
        {P(TENSOR_PKL("FloatStorage", "\x02", "\x01", "K\x02\x85", "K\x01\x85")), NULL, 8, 0,
         "h.pt: tensor 'x' reaches past the end of its storage"},
        {P(TENSOR_PKL("FloatStorage", "\x02", "\x00", "K\x03\x85", "K\x01\x85")), NULL, 8, 0,
         "h.pt: tensor 'x' reaches past the end of its storage"},
        {P(TENSOR_PKL("FloatStorage", "\x03", "\x00", "K\x02\x85", "K\x01\x85")), NULL, 8, 0,
         "h.pt: tensor 'x': its storage holds 8 bytes, its record says 12"},
        {P(TENSOR_PKL("FloatStorage", "\x02", "\x00", "K\x02\x85", "K\x01K\x01\x86")), NULL, 8, 0,
         "size and stride are not tuples of as many integers"},
        {P(TENSOR_PKL("FloatStorage", "\x02", "\x00", "K\x02\x85", "K\x01\x85")), "big", 8, 0,
         "h.pt: a big-endian archive"},
        {P(TENSOR_PKL("FloatStorage", "\x02", "\x00", "K\x02\x85", "K\x01\x85")), NULL, 8, 8,
         "compressed entry"},
        {P(TENSOR_PKL("FloatStorage", "\x02", "\x00", "K\x02\x85", "K\x01\x85")), NULL, 0, 0,
         "h.pt: tensor 'x': its storage holds 0 bytes"},
        {P(TENSOR_PKL("LongStorage", "\x01", "\x00", "K\x01\x85", "K\x01\x85")), NULL, 8, 0,
         "has dtype torch.int64"},
        {P(TENSOR_PKL("EvilStorage", "\x02", "\x00", "K\x02\x85", "K\x01\x85")), NULL, 8, 0,
         "the pickle names torch.EvilStorage; precprobe reads only plain tensors"},
        // what a malicious pickle does: import and call
        {P("\x80\x02" "cos\nsystem\nX\x02\x00\x00\x00idR."), NULL, 8, 0, "the pickle names os.system"},
        {P("\x80\x04\x8c\x08" "builtins\x8c\x04" "eval\x93X\x01\x00\x00\x00" "1\x85R."), NULL, 8, 0,
         "the pickle names builtins.eval"},
        {P("\x80\x02" "ccollections\nOrderedDict\nX\x01\x00\x00\x00" "a\x85R."), NULL, 8, 0,
         "OrderedDict called with arguments"},
        {P("\x80\x02}X\x01\x00\x00\x00" "a\x85R."), NULL, 8, 0, "REDUCE of something other than"},
        {P("\x80\x02(ios\nsystem\n."), NULL, 8, 0, "opcode 0x69 is not one torch.save writes"},
        {P("\x80\x02h\x05."), NULL, 8, 0, "memo read of an unset index"},
        {P("\x80\x02t."), NULL, 8, 0, "TUPLE without MARK"},
        {P("\x80\x02s."), NULL, 8, 0, "stack underflow"},
        {P("\x80\x02}"), NULL, 8, 0, "no STOP at the end"},
        {P("\x80\x02X\xff\xff\xff\x7f"), NULL, 8, 0, "truncated"},
        {P("\x80\x09}."), NULL, 8, 0, "pickle protocol other than 2 to 5"},
        {P("\x80\x02K\x01."), NULL, 8, 0, "h.pt: holds an integer, not a tensor or a dict of tensors"},
        {P("\x80\x02}(K\x01K\x02u."), NULL, 8, 0, "h.pt: a dict key is not a string"},
        // nested dicts: a non-string key one level down; a dict holding itself (memo 0)
        {P("\x80\x02}(X\x01\x00\x00\x00" "a}(K\x01K\x02uu."), NULL, 8, 0, "h.pt: a dict key is not a string"},
        {P("\x80\x02}q\x00(X\x01\x00\x00\x00" "ah\x00u."), NULL, 8, 0, "h.pt: dicts nested deeper than 32"},
        {P("\x80\x02}."), NULL, 8, 0, "h.pt: holds no tensor"},
        // found by fuzz_pt: OrderedDict() before any tuple with items (clang's UBSan: NULL + 0)
        {P("\x80\x02" "ccollections\nOrderedDict\n)R."), NULL, 8, 0, "h.pt: holds no tensor"},
        {P("\x80\x02\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x00."), NULL, 8, 0, "integer wider than 64 bits"},
        {P("\x80\x02(X\x07\x00\x00\x00storageK\x01K\x01K\x01K\x01tQ."), NULL, 8, 0,
         "a persistent id that is not ('storage', class, key, location, numel)"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        zentry e[3] = {{"h/data.pkl", cases[k].pkl, cases[k].n, 0}, {"h/data/0", two, cases[k].data_n, cases[k].method}};
        int count = 2;
        if (cases[k].byteorder) {
            e[2] = (zentry){"h/byteorder", (const unsigned char *)cases[k].byteorder, strlen(cases[k].byteorder), 0};
            count = 3;
        }
        pp_tensor t;
        pp_error err = {0};
        int rc = parse_archive(e, count, NULL, &t, &err);
        const char *msg = cases[k].msg;
        if (!msg || msg[0] == '=') {
            if (rc)
                fprintf(stderr, "  case %zu: %s\n", k, err.msg);
            assert_int_equal(rc, PP_OK);
            assert_true(t.format == PP_FMT_FP32 && t.ndim == 1 && t.numel == 2);
            assert_true(t.data[0] == (msg ? 2.0 : 1.0) && t.data[1] == 2.0);
            pp_tensor_free(&t);
            continue;
        }
        if (rc != PP_ERR_INPUT || !strstr(err.msg, msg))
            fprintf(stderr, "  case %zu: rc %d: %s\n  want: %s\n", k, rc, err.msg, msg);
        assert_int_equal(rc, PP_ERR_INPUT);
        assert_non_null(strstr(err.msg, msg));
        assert_true(strncmp(err.msg, "h.pt: ", 6) == 0);
        assert_false(pp_test_has_control(err.msg));
        assert_null(t.data);
    }
    // the archive's own structure: no data.pkl, two of them, a missing storage
    static const unsigned char ok[] = TENSOR_PKL("FloatStorage", "\x02", "\x00", "K\x02\x85", "K\x01\x85");
    zentry none[1] = {{"h/other", two, 8, 0}};
    zentry twice[3] = {{"h/data.pkl", ok, sizeof ok - 1, 0}, {"g/data.pkl", ok, sizeof ok - 1, 0}, {"h/data/0", two, 8, 0}};
    zentry nostorage[1] = {{"h/data.pkl", ok, sizeof ok - 1, 0}};
    pp_tensor t;
    pp_error err = {0};
    assert_int_equal(parse_archive(none, 1, NULL, &t, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "no data.pkl in the archive"));
    assert_int_equal(parse_archive(twice, 3, NULL, &t, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "more than one data.pkl"));
    assert_int_equal(parse_archive(nostorage, 1, "x", &t, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "tensor 'x': its storage is not in the archive"));
    // ZIP64, as torch writes archives over 4 GB: read; without its locator: refused
    zentry good[2] = {{"h/data.pkl", ok, sizeof ok - 1, 0}, {"h/data/0", two, 8, 0}};
    zbuf *z = malloc(sizeof *z);
    assert_non_null(z);
    make_zip_as(z, good, 2, 1);
    int rc = pp_pt_parse(z->b, z->n, "h.pt", "x", &t, &err);
    if (rc)
        fprintf(stderr, "  zip64: %s\n", err.msg);
    assert_int_equal(rc, PP_OK);
    assert_true(t.numel == 2 && t.data[0] == 1.0 && t.data[1] == 2.0);
    pp_tensor_free(&t);
    z->b[z->n - 22 - 20] ^= 0xff;  // the locator's signature
    assert_int_equal(pp_pt_parse(z->b, z->n, "h.pt", "x", &t, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "h.pt: not a readable torch.save archive: ZIP64 values without a ZIP64 locator"));
    free(z);
}

// Every truncation and every byte flip of a real file: an error or a consistent tensor, never a
// crash (the sanitizer run checks every read).
static void pt_survives_truncation_and_flips(void **state)
{
    (void)state;
    size_t n;
    unsigned char *b = pp_test_slurp(FIX "state_dict.pt", &n);
    assert_non_null(b);
    unsigned char *c = malloc(n);
    assert_non_null(c);
    int ok = 0, bad = 0;
    for (size_t len = 0; len <= n; len++) {
        memcpy(c, b, len);
        pp_tensor t;
        pp_error err = {0};
        int rc = pp_pt_parse(c, len, "s.pt", "weight", &t, &err);
        if (rc == PP_OK) {
            ok++;
            pp_tensor_free(&t);
        } else {
            assert_int_equal(rc, PP_ERR_INPUT);
            assert_false(pp_test_has_control(err.msg));
            bad++;
        }
    }
    assert_int_equal(ok, 1);  // only the whole file
    uint64_t step = n / pp_test_iters(n) ? n / pp_test_iters(n) : 1;
    for (size_t i = 0; i < n; i += step) {
        memcpy(c, b, n);
        c[i] ^= 0x5a;
        pp_tensor t;
        pp_error err = {0};
        int rc = pp_pt_parse(c, n, "s.pt", "weight", &t, &err);
        if (rc == PP_OK) {
            assert_true(t.numel == 8 && t.format == PP_FMT_BF16);
            pp_tensor_free(&t);
        } else {
            assert_int_equal(rc, PP_ERR_INPUT);
            assert_false(pp_test_has_control(err.msg));
        }
    }
    (void)bad;
    free(c);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pt_reads_every_dtype_and_view),
        cmocka_unit_test(pt_reads_a_state_dict),
        cmocka_unit_test(pt_reads_nested_dicts),
        cmocka_unit_test(pt_nested_refusals),
        cmocka_unit_test(pt_rejects_what_it_does_not_read),
        cmocka_unit_test(pt_hand_made_archives),
        cmocka_unit_test(pt_survives_truncation_and_flips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
