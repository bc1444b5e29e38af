// test_ref_cache.c — the reference cache (src/ref_cache.c): SHA-256 against FIPS 180-2's
// examples, key sensitivity, store/lookup round trip bit for bit, and corrupt, truncated,
// mislabelled entries reported as misses, then overwritten. Run: build/rel/tests/test_ref_cache
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

#include "attention_ref.h"
#include "ref_cache.h"

// ---------------------------------------------------------------------------------------------
// Helpers

static void hex_of(const uint8_t *d, char *hex)
{
    pp_ref_key_hex(d, hex);
}

static void sha_hex(const void *data, size_t n, char hex[65])
{
    pp_sha256 s;
    uint8_t d[32];
    pp_sha256_init(&s);
    pp_sha256_update(&s, data, n);
    pp_sha256_final(&s, d);
    hex_of(d, hex);
}

typedef struct tmpdir {
    char path[64];
} tmpdir;

static void tmpdir_make(tmpdir *t)
{
    snprintf(t->path, sizeof t->path, "/tmp/pp_ref_cache_XXXXXX");
    assert_non_null(mkdtemp(t->path));
}

static void tmpdir_remove(const tmpdir *t)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", t->path);
    assert_int_equal(system(cmd), 0);
}

// Two reference tensors (an out-like [2, 3] and an lse-like [2]) with their info.
static void make_payload(pp_tensor t[2], pp_reference_info info[2])
{
    int64_t s0[2] = {2, 3}, s1[1] = {2};
    assert_int_equal(pp_tensor_alloc(&t[0], 2, s0, PP_FMT_FP64, NULL), PP_OK);
    assert_int_equal(pp_tensor_alloc(&t[1], 1, s1, PP_FMT_FP64, NULL), PP_OK);
    const double v0[6] = {1.0, -0.0, 0x1.23456789abcdep-1000, INFINITY, -3.5, 0x1p-1074};
    memcpy(t[0].data, v0, sizeof v0);
    t[1].data[0] = 0.1;
    t[1].data[1] = -INFINITY;
    memset(info, 0, 2 * sizeof *info);
    snprintf(info[0].tensor, sizeof info[0].tensor, "out");
    snprintf(info[0].method, sizeof info[0].method, "fast");
    info[0].error_bound = 0x1.8p-53;
    snprintf(info[1].tensor, sizeof info[1].tensor, "lse");
    snprintf(info[1].method, sizeof info[1].method, "fast");
    info[1].error_bound = 0x1p-50;
}

static void key_of(const pp_tensor *in, double sigma, uint8_t key[32])
{
    pp_ref_key k;
    pp_ref_key_init(&k, "attention");
    pp_ref_key_i64(&k, "d", 16);
    pp_ref_key_f64(&k, "sigma", sigma);
    pp_ref_key_str(&k, "method", "fast");
    pp_ref_key_tensor(&k, "q", in);
    pp_ref_key_final(&k, key);
}

static char *entry_file(const char *dir, const uint8_t key[32])
{
    char hex[65];
    pp_ref_key_hex(key, hex);
    char *p = malloc(strlen(dir) + 70);
    sprintf(p, "%s/%s.h5", dir, hex);
    return p;
}

static int lookup(const char *dir, const uint8_t key[32], pp_tensor out[2], pp_reference_info info[2])
{
    pp_error err = {0};
    int hit = pp_ref_cache_lookup(dir, key, 2, out, info, &err);
    assert_int_equal(err.code, PP_OK);  // a miss is never an error
    if (!hit)
        assert_true(strstr(err.msg, "cache miss") != NULL);
    return hit;
}

// ---------------------------------------------------------------------------------------------
// Tests

static void sha256_fips_examples(void **state)
{
    (void)state;
    char hex[65];
    sha_hex("abc", 3, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    sha_hex("", 0, hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sha_hex(m, strlen(m), hex);
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    // one million 'a', fed in uneven pieces (the buffering across blocks)
    pp_sha256 s;
    uint8_t d[32];
    char a[1000];
    memset(a, 'a', sizeof a);
    pp_sha256_init(&s);
    for (size_t done = 0, step = 1; done < 1000000; done += step, step = step % 997 + 1) {
        if (done + step > 1000000)
            step = 1000000 - done;
        pp_sha256_update(&s, a, step);
    }
    pp_sha256_final(&s, d);
    hex_of(d, hex);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Every input bit and parameter changes the key; the same inputs give the same key.
static void ref_key_sensitivity(void **state)
{
    (void)state;
    pp_tensor in;
    int64_t sh[1] = {4};
    assert_int_equal(pp_tensor_alloc(&in, 1, sh, PP_FMT_BF16, NULL), PP_OK);
    in.data[0] = 1.0;
    in.data[3] = 0.0;
    uint8_t k0[32], k1[32];
    key_of(&in, 0.25, k0);
    key_of(&in, 0.25, k1);
    assert_memory_equal(k0, k1, 32);
    in.data[3] = -0.0;  // one bit
    key_of(&in, 0.25, k1);
    assert_memory_not_equal(k0, k1, 32);
    in.data[3] = 0.0;
    key_of(&in, nextafter(0.25, 1.0), k1);
    assert_memory_not_equal(k0, k1, 32);
    in.format = PP_FMT_FP16;  // same values, another format
    key_of(&in, 0.25, k1);
    assert_memory_not_equal(k0, k1, 32);
    in.format = PP_FMT_BF16;
    in.shape[0] = 2;  // same bytes, another shape: the shape is hashed before the values
    in.ndim = 2;
    in.shape[1] = 2;
    key_of(&in, 0.25, k1);
    assert_memory_not_equal(k0, k1, 32);
    pp_tensor_free(&in);
}

static void ref_cache_round_trip(void **state)
{
    (void)state;
    tmpdir td;
    tmpdir_make(&td);
    char dir[96];
    snprintf(dir, sizeof dir, "%s/cache", td.path);  // created by store
    pp_tensor t[2], out[2];
    pp_reference_info info[2], got[2];
    make_payload(t, info);
    uint8_t key[32];
    key_of(&t[1], 0.125, key);
    assert_int_equal(lookup(dir, key, out, got), 0);  // no directory yet
    pp_error err = {0};
    assert_int_equal(pp_ref_cache_store(dir, key, 2, t, info, &err), PP_OK);
    assert_int_equal(lookup(dir, key, out, got), 1);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(out[i].ndim, t[i].ndim);
        assert_memory_equal(out[i].shape, t[i].shape, sizeof(int64_t) * (size_t)t[i].ndim);
        assert_memory_equal(out[i].data, t[i].data, sizeof(double) * (size_t)t[i].numel);  // bits
        assert_string_equal(got[i].tensor, info[i].tensor);
        assert_string_equal(got[i].method, info[i].method);
        assert_true(got[i].error_bound == info[i].error_bound);
        pp_tensor_free(&out[i]);
    }
    // another key, or another count, misses
    uint8_t other[32];
    memcpy(other, key, 32);
    other[31] ^= 1;
    assert_int_equal(lookup(dir, other, out, got), 0);
    assert_int_equal(pp_ref_cache_lookup(dir, key, 1, out, got, &err), 0);
    pp_tensor_free(&t[0]);
    pp_tensor_free(&t[1]);
    tmpdir_remove(&td);
}

// Corrupt, truncated and renamed entries are misses; storing again repairs them.
static void ref_cache_corrupt_entries(void **state)
{
    (void)state;
    tmpdir td;
    tmpdir_make(&td);
    pp_tensor t[2], out[2];
    pp_reference_info info[2], got[2];
    make_payload(t, info);
    uint8_t key[32], key2[32];
    key_of(&t[0], 0.5, key);
    key_of(&t[0], 0.75, key2);
    pp_error err = {0};
    char *path = entry_file(td.path, key), *path2 = entry_file(td.path, key2);
    FILE *f;
    long size;
    unsigned char *bytes;

    // 1. a payload byte flipped: find the stored bits of −3.5 (little-endian) and change one
    assert_int_equal(pp_ref_cache_store(td.path, key, 2, t, info, &err), PP_OK);
    f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    fseek(f, 0, SEEK_SET);
    bytes = malloc((size_t)size);
    assert_int_equal(fread(bytes, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    double needle = -3.5;
    long at = -1;
    for (long i = 0; i + 8 <= size && at < 0; i++)
        if (memcmp(bytes + i, &needle, 8) == 0)
            at = i;
    assert_true(at >= 0);
    bytes[at] ^= 0x01;  // −3.5 becomes −3.5 + 1 ulp: still a valid double, still valid HDF5
    f = fopen(path, "wb");
    fwrite(bytes, 1, (size_t)size, f);
    fclose(f);
    assert_int_equal(lookup(td.path, key, out, got), 0);
    pp_ref_cache_lookup(td.path, key, 2, out, got, &err);
    assert_true(strstr(err.msg, "checksum") != NULL);

    // 2. repaired by storing again
    assert_int_equal(pp_ref_cache_store(td.path, key, 2, t, info, &err), PP_OK);
    assert_int_equal(lookup(td.path, key, out, got), 1);
    pp_tensor_free(&out[0]);
    pp_tensor_free(&out[1]);

    // 3. truncated at several lengths
    static const double frac[] = {0.0, 0.1, 0.5, 0.9, 0.99};
    for (size_t i = 0; i < sizeof frac / sizeof *frac; i++) {
        assert_int_equal(pp_ref_cache_store(td.path, key, 2, t, info, &err), PP_OK);
        assert_int_equal(truncate(path, (off_t)(frac[i] * (double)size)), 0);
        assert_int_equal(lookup(td.path, key, out, got), 0);
    }

    // 4. a valid entry under another key's name: the stored key differs
    assert_int_equal(pp_ref_cache_store(td.path, key, 2, t, info, &err), PP_OK);
    assert_int_equal(rename(path, path2), 0);
    assert_int_equal(lookup(td.path, key2, out, got), 0);
    pp_ref_cache_lookup(td.path, key2, 2, out, got, &err);
    assert_true(strstr(err.msg, "key") != NULL);

    // 5. not HDF5 at all
    f = fopen(path, "wb");
    fputs("not a cache entry\n", f);
    fclose(f);
    assert_int_equal(lookup(td.path, key, out, got), 0);

    free(bytes);
    free(path);
    free(path2);
    pp_tensor_free(&t[0]);
    pp_tensor_free(&t[1]);
    tmpdir_remove(&td);
}

// An attention reference through the cache: its key sees every input bit and parameter, and the
// stored out/lse come back bit for bit with their bounds.
static void ref_cache_attention(void **state)
{
    (void)state;
    tmpdir td;
    tmpdir_make(&td);
    pp_attn_ref_opts o = {0};
    o.b = 1;
    o.s_q = o.s_kv = 3;
    o.h = o.h_kv = 1;
    o.d = 4;
    o.causal = 1;
    double q[12], k[12], v[12];
    for (int i = 0; i < 12; i++) {
        q[i] = (i % 5) * 0.25 - 0.5;
        k[i] = (i % 3) * 0.5 - 0.25;
        v[i] = i - 6.0;
    }
    pp_tensor t[2];
    int64_t s0[4] = {1, 3, 1, 4}, s1[3] = {1, 1, 3};
    assert_int_equal(pp_tensor_alloc(&t[0], 4, s0, PP_FMT_FP64, NULL), PP_OK);
    assert_int_equal(pp_tensor_alloc(&t[1], 3, s1, PP_FMT_FP64, NULL), PP_OK);
    pp_attn_ref_bounds b;
    pp_error err = {0};
    assert_int_equal(pp_attention_ref(&o, q, k, v, NULL, t[0].data, t[1].data, NULL, NULL, NULL, &b, &err), PP_OK);
    pp_reference_info info[2];
    memset(info, 0, sizeof info);
    snprintf(info[0].tensor, sizeof info[0].tensor, "out");
    snprintf(info[1].tensor, sizeof info[1].tensor, "lse");
    snprintf(info[0].method, sizeof info[0].method, "fast");
    snprintf(info[1].method, sizeof info[1].method, "fast");
    info[0].error_bound = b.out;
    info[1].error_bound = b.lse;
    uint8_t key[32], key2[32];
    pp_attention_ref_key(&o, q, k, v, NULL, key);
    assert_int_equal(pp_ref_cache_store(td.path, key, 2, t, info, &err), PP_OK);
    pp_tensor out[2];
    pp_reference_info got[2];
    assert_int_equal(lookup(td.path, key, out, got), 1);
    for (int i = 0; i < 2; i++) {
        assert_memory_equal(out[i].data, t[i].data, sizeof(double) * (size_t)t[i].numel);
        assert_true(got[i].error_bound == info[i].error_bound);
        pp_tensor_free(&out[i]);
    }
    k[7] = -k[7];  // one input bit
    pp_attention_ref_key(&o, q, k, v, NULL, key2);
    assert_memory_not_equal(key, key2, 32);
    assert_int_equal(lookup(td.path, key2, out, got), 0);
    k[7] = -k[7];
    o.causal = 0;
    pp_attention_ref_key(&o, q, k, v, NULL, key2);
    assert_memory_not_equal(key, key2, 32);
    o.causal = 1;
    o.method = PP_ATTN_REF_MPFR_PLAIN;
    pp_attention_ref_key(&o, q, k, v, NULL, key2);
    assert_memory_not_equal(key, key2, 32);
    o.method = PP_ATTN_REF_FAST;
    o.threads = 7;  // changes nothing
    pp_attention_ref_key(&o, q, k, v, NULL, key2);
    assert_memory_equal(key, key2, 32);
    pp_tensor_free(&t[0]);
    pp_tensor_free(&t[1]);
    tmpdir_remove(&td);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sha256_fips_examples),
        cmocka_unit_test(ref_key_sensitivity),
        cmocka_unit_test(ref_cache_round_trip),
        cmocka_unit_test(ref_cache_corrupt_entries),
        cmocka_unit_test(ref_cache_attention),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
