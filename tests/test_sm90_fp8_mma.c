// test_sm90_fp8_mma.c — kernels/sm90_fp8_mma.h, Hopper's FP8 accumulation, against what GPUs
// returned, bit for bit: tests/data/sm90_fp8/probe.bin (an H200; an H100 gave the same bits: every
// constructed dot product of tools/probe_fp8_accum.py and a slice of its two random 256×256×4096
// GEMMs, e4m3 × e4m3) and probe_e4m3xe5m2.bin, probe_e5m2xe4m3.bin (an H100,
// tools/probe_fp8_accum_e5m2.py), both use_fast_accum modes, made by
// tests/data/sm90_fp8/make_fixture.py; probe_e5m2xe5m2.bin (wgmma itself on the H100,
// tools/probe_wgmma_fp8.cu); and hand-computed cases for each rule of the model
// (kernels/gemm.h "Hopper FP8 accumulation").
#include "test_util.h"

#include "sm90_fp8_mma.h"

#define FIXTURE_DIR "tests/data/sm90_fp8/"
#define E4M3_EMIN (-6)
#define E5M2_EMIN (-14)

// e4m3fn code → value (bias 7, no infinities, S.1111.111 NaN).
static double e4m3(uint8_t code)
{
    int e = (code >> 3) & 15, m = code & 7;
    double v = e == 15 && m == 7 ? NAN : e == 0 ? ldexp(m, -9) : ldexp(8 + m, e - 10);
    return code & 0x80 ? -v : v;
}

// e5m2 code → value (bias 15, S.11111.00 ±Inf, S.11111.xx NaN).
static double e5m2(uint8_t code)
{
    int e = (code >> 2) & 31, m = code & 3;
    double v = e == 31 ? (m ? NAN : INFINITY) : e == 0 ? ldexp(m, -16) : ldexp(4 + m, e - 17);
    return code & 0x80 ? -v : v;
}

// One operand format of a fixture: its decoder and the exponent the adder gives its subnormals.
typedef struct fp8_format {
    double (*decode)(uint8_t);
    int emin;
} fp8_format;

static const fp8_format FORMAT_E4M3 = {.decode = e4m3, .emin = E4M3_EMIN};
static const fp8_format FORMAT_E5M2 = {.decode = e5m2, .emin = E5M2_EMIN};

static uint32_t f32_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

// The model's output bits for both modes, compared with the GPU's; NaN equals NaN.
static int check(const double *a, const double *b, int64_t k, int emin_a, int emin_b, uint32_t slow, uint32_t fast,
                 const char *what, long index)
{
    float got[2] = {pp_sm90_fp8_dot(a, 1, b, 1, k, emin_a, emin_b, PP_SM90_FP8_PROMOTE),
                    pp_sm90_fp8_dot(a, 1, b, 1, k, emin_a, emin_b, 0)};
    uint32_t want[2] = {slow, fast};
    int bad = 0;
    for (int mode = 0; mode < 2; mode++) {
        float w;
        memcpy(&w, &want[mode], sizeof w);
        if (f32_bits(got[mode]) != want[mode] && !(isnan(got[mode]) && isnan(w))) {
            fprintf(stderr, "  %s #%ld %s: model %a (0x%08x), GPU %a (0x%08x)\n", what, index,
                    mode ? "fast" : "slow", (double)got[mode], f32_bits(got[mode]), (double)w, want[mode]);
            bad++;
        }
    }
    return bad;
}

static int read_exact(FILE *f, void *p, size_t n)
{
    return fread(p, 1, n, f) == n;
}

static int32_t le32(const unsigned char *p)
{
    return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

// Every output of one fixture (tests/data/sm90_fp8/make_fixture.py) reproduced; the header names
// the codes' formats ("formats e4m3 e5m2"; e4m3 e4m3 where absent) and the counts.
static void fixture_reproduced(const char *path, long min_dots)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char line[4096], fa_name[8] = "e4m3", fb_name[8] = "e4m3";
    long ndots = -1, nblocks = -1;
    while (fgets(line, sizeof line, f) && strcmp(line, "end\n") != 0) {
        sscanf(line, "dots %ld", &ndots);
        sscanf(line, "blocks %ld", &nblocks);
        sscanf(line, "formats %7s %7s", fa_name, fb_name);
    }
    assert_true(ndots >= min_dots && nblocks == 2);
    const fp8_format *fa = strcmp(fa_name, "e5m2") == 0 ? &FORMAT_E5M2 : &FORMAT_E4M3;
    const fp8_format *fb = strcmp(fb_name, "e5m2") == 0 ? &FORMAT_E5M2 : &FORMAT_E4M3;
    int bad = 0;
    long checked = 0;
    double *a = NULL, *b = NULL;
    for (long i = 0; i < ndots && bad < 10; i++) {
        unsigned char h[16];
        assert_true(read_exact(f, h, sizeof h));
        int32_t k = le32(h), nruns = le32(h + 4);
        assert_true(k > 0 && k <= 4096 && nruns >= 0 && nruns <= k);
        a = realloc(a, sizeof(double) * (size_t)k), b = realloc(b, sizeof(double) * (size_t)k);
        for (int32_t l = 0; l < k; l++)
            a[l] = b[l] = 0.0;
        for (int32_t r = 0; r < nruns; r++) {
            unsigned char u[12];
            assert_true(read_exact(f, u, sizeof u));
            int32_t first = le32(u), count = le32(u + 4);
            assert_true(first >= 0 && count > 0 && first + count <= k);
            for (int32_t l = first; l < first + count; l++)
                a[l] = fa->decode(u[8]), b[l] = fb->decode(u[9]);
        }
        bad += check(a, b, k, fa->emin, fb->emin, (uint32_t)le32(h + 8), (uint32_t)le32(h + 12), "dot", i);
        checked++;
    }
    for (long blk = 0; blk < nblocks && bad < 10; blk++) {
        unsigned char h[12];
        assert_true(read_exact(f, h, sizeof h));
        int32_t k = le32(h), m = le32(h + 4), n = le32(h + 8);
        assert_true(k == 4096 && m > 0 && m <= 256 && n > 0 && n <= 256);
        unsigned char *ca = malloc((size_t)m * (size_t)k), *cb = malloc((size_t)n * (size_t)k);
        unsigned char *out = malloc((size_t)m * (size_t)n * 8);
        assert_true(read_exact(f, ca, (size_t)m * (size_t)k) && read_exact(f, cb, (size_t)n * (size_t)k));
        assert_true(read_exact(f, out, (size_t)m * (size_t)n * 8));
        a = realloc(a, sizeof(double) * (size_t)k), b = realloc(b, sizeof(double) * (size_t)k);
        for (int32_t i = 0; i < m; i++)
            for (int32_t j = 0; j < n; j++) {
                for (int32_t l = 0; l < k; l++)
                    a[l] = fa->decode(ca[(size_t)i * (size_t)k + (size_t)l]),
                    b[l] = fb->decode(cb[(size_t)j * (size_t)k + (size_t)l]);
                size_t o = (size_t)i * (size_t)n + (size_t)j;
                bad += check(a, b, k, fa->emin, fb->emin, (uint32_t)le32(out + 4 * o),
                             (uint32_t)le32(out + 4 * ((size_t)m * (size_t)n + o)),
                             blk ? "rand_loguniform" : "rand_normal_outliers", (long)o);
                checked++;
            }
        free(ca), free(cb), free(out);
    }
    unsigned char extra;
    assert_int_equal(fread(&extra, 1, 1, f), 0);  // the whole file was read
    fclose(f);
    free(a), free(b);
    assert_int_equal(bad, 0);
    assert_int_equal(checked, ndots + 2 * 8 * 16);
}

// e4m3 × e4m3 (tools/probe_fp8_accum.py): an H200's outputs; an H100's were the same bits.
static void fixture_e4m3_reproduced_bit_for_bit(void **state)
{
    (void)state;
    fixture_reproduced(FIXTURE_DIR "probe.bin", 4000);
}

// e4m3 × e5m2 and e5m2 × e4m3 (tools/probe_fp8_accum_e5m2.py), an H100's outputs.
static void fixture_e4m3_e5m2_reproduced_bit_for_bit(void **state)
{
    (void)state;
    fixture_reproduced(FIXTURE_DIR "probe_e4m3xe5m2.bin", 1500);
}

static void fixture_e5m2_e4m3_reproduced_bit_for_bit(void **state)
{
    (void)state;
    fixture_reproduced(FIXTURE_DIR "probe_e5m2xe4m3.bin", 1500);
}

// e5m2 × e5m2, which cuBLASLt does not run: wgmma.mma_async itself on an H100
// (tools/probe_wgmma_fp8.cu: fast = the register chain FA3's mainloop keeps, slow = CUTLASS's
// promotion every 128), the instruction that reproduced every cuBLASLt output of the three fixtures
// above in both modes.
static void fixture_e5m2_e5m2_wgmma_reproduced_bit_for_bit(void **state)
{
    (void)state;
    fixture_reproduced(FIXTURE_DIR "probe_e5m2xe5m2.bin", 1000);
}

// A dot product of length k with the given (position, a, b) terms, every other product 0.
typedef struct term {
    int64_t l;
    double a, b;
} term;

static float dot(const term *t, int nt, int64_t k, int64_t promote, int emin)
{
    double *a = calloc((size_t)k, sizeof(double)), *b = calloc((size_t)k, sizeof(double));
    for (int i = 0; i < nt; i++)
        a[t[i].l] = t[i].a, b[t[i].l] = t[i].b;
    float r = pp_sm90_fp8_dot(a, 1, b, 1, k, emin, emin, promote);
    free(a), free(b);
    return r;
}

static float dot4(const term *t, int nt, int64_t k, int64_t promote)
{
    return dot(t, nt, k, promote, E4M3_EMIN);
}

// 2^12 = 64·64 sets the group's exponent E = 12: terms are cut to multiples of 2^(12−13) = 1/2,
// toward zero whatever their sign: ±3.75 → ±3.5, ±0.25 → 0.
static void alignment_truncates_toward_zero(void **state)
{
    (void)state;
    assert_true(dot4((term[]){{0, 64, 64}, {5, 1.875, 2}}, 2, 32, 0) == 4099.5f);
    assert_true(dot4((term[]){{0, 64, 64}, {5, -1.875, 2}}, 2, 32, 0) == 4092.5f);
    assert_true(dot4((term[]){{0, -64, 64}, {5, 1.875, 2}}, 2, 32, 0) == -4092.5f);
    assert_true(dot4((term[]){{0, -64, 64}, {5, -1.875, 2}}, 2, 32, 0) == -4099.5f);
    assert_true(dot4((term[]){{0, 64, 64}, {31, 0.5, 0.5}}, 2, 32, 0) == 4096.0f);     // 2^-2 dropped
    assert_true(dot4((term[]){{0, 64, 64}, {31, 0.5, 1}}, 2, 32, 0) == 4096.5f);       // 2^-1 kept: 14 bits
    // a subnormal input counts as exponent emin: 2^-9 alone is exact, beside 2^12 it is gone
    assert_true(dot4((term[]){{3, 0.001953125, 1}}, 1, 32, 0) == 0.001953125f);
    assert_true(dot4((term[]){{0, 64, 64}, {3, 0.001953125, 1}}, 2, 32, 0) == 4096.0f);
}

// The exponent is e(a) + e(b), not the product's leading bit: 1.875² = 3.515625 has e = 0, so the
// grain is 2^-13 and two products 2^-13 survive (a leading-bit alignment, grain 2^-12, drops them).
static void product_exponent_from_the_inputs(void **state)
{
    (void)state;
    term t[] = {{0, 1.875, 1.875}, {1, 0.0078125, 0.015625}, {2, 0.0078125, 0.015625}};
    assert_true(dot4(t, 3, 32, 0) == (float)(3.515625 + ldexp(1, -12)));
    // one of them: 3.515625 + 2^-13 needs 15 significant bits; the normalisation keeps 14
    assert_true(dot4(t, 2, 32, 0) == 3.515625f);
}

// The group's exact sum is truncated to 14 significant bits: 2^12 + 2^12 + 2^-1 = 8192.5 → 8192.
static void normalisation_truncates_to_14_bits(void **state)
{
    (void)state;
    assert_true(dot4((term[]){{0, 64, 64}, {1, 64, 64}, {2, 0.5, 1}}, 3, 32, 0) == 8192.0f);
    assert_true(dot4((term[]){{0, -64, 64}, {1, -64, 64}, {2, -0.5, 1}}, 3, 32, 0) == -8192.0f);
    // in the next group the same 2^-1 meets C = 8192 (E = 13, grain 1): cut before the addition
    assert_true(dot4((term[]){{0, 64, 64}, {1, 64, 64}, {32, 0.5, 1}}, 3, 64, 0) == 8192.0f);
}

// Groups of 32: L − L + 2^-2 in one group loses 2^-2 (aligned to L); with 2^-2 in the next group
// the running C is 0 and it is exact. C takes part in the maximum: L then 2^-2 in the next group
// (C = L) drops it.
static void cancellation_across_groups(void **state)
{
    (void)state;
    assert_true(dot4((term[]){{0, 64, 64}, {1, -64, 64}, {2, 0.5, 0.5}}, 3, 64, 0) == 0.0f);
    assert_true(dot4((term[]){{0, 64, 64}, {1, -64, 64}, {32, 0.5, 0.5}}, 3, 64, 0) == 0.25f);
    assert_true(dot4((term[]){{0, 64, 64}, {32, -64, 64}, {33, 0.5, 0.5}}, 3, 64, 0) == 0.0f);
    assert_true(dot4((term[]){{0, 64, 64}, {33, 0.5, 0.5}}, 2, 64, 0) == 4096.0f);
}

// Promotion every 128: 2^-8 after 2^12 survives from l = 128 on (a new C, added to the binary32
// total), never without promotion; blocks are aligned to multiples of 128, not to the large term.
static void promotion_boundary(void **state)
{
    (void)state;
    float kept = 4096.0f + 0.00390625f;
    assert_true(dot4((term[]){{0, 64, 64}, {127, 0.0625, 0.0625}}, 2, 1024, 128) == 4096.0f);
    assert_true(dot4((term[]){{0, 64, 64}, {128, 0.0625, 0.0625}}, 2, 1024, 128) == kept);
    assert_true(dot4((term[]){{0, 64, 64}, {128, 0.0625, 0.0625}}, 2, 1024, 0) == 4096.0f);
    assert_true(dot4((term[]){{300, 64, 64}, {255, 0.0625, 0.0625}}, 2, 1024, 128) == kept);
    assert_true(dot4((term[]){{300, 64, 64}, {256, 0.0625, 0.0625}}, 2, 1024, 128) == 4096.0f);
    assert_true(dot4((term[]){{300, 64, 64}, {384, 0.0625, 0.0625}}, 2, 1024, 128) == kept);
    // the promotion is one RN_32 addition: 2^16 + 2^-8 is a tie (binary32's ulp at 2^16 is 2^-7)
    // and goes to even, 2^16; 2^16 + 3·2^-9 rounds up to 2^16 + 2^-7
    assert_true(dot4((term[]){{0, 256, 256}, {128, 0.0625, 0.0625}}, 2, 256, 128) == 65536.0f);
    assert_true(dot4((term[]){{0, 256, 256}, {128, 0.09375, 0.0625}}, 2, 256, 128) == 65536.0f + 0.0078125f);
}

// Zeros give +0 (the GPU's -0 products came back +0); NaN propagates; e5m2's ±Inf follow IEEE (not
// measured: kernels/sm90_fp8_mma.h).
static void zeros_and_specials(void **state)
{
    (void)state;
    float z = dot4((term[]){{0, -0.0, 1}, {1, 0.0, -1}}, 2, 32, 128);
    assert_true(z == 0.0f && !signbit(z));
    assert_true(isnan(dot4((term[]){{0, 64, 64}, {7, NAN, 1}}, 2, 64, 128)));
    assert_true(isnan(dot4((term[]){{0, 64, 64}, {40, NAN, 0}}, 2, 64, 0)));
    assert_true(dot((term[]){{0, INFINITY, 1}, {40, 64, 64}}, 2, 64, 0, E5M2_EMIN) == INFINITY);
    assert_true(dot((term[]){{0, -INFINITY, 1}, {200, 64, 64}}, 2, 256, 128, E5M2_EMIN) == -INFINITY);
    assert_true(isnan(dot((term[]){{0, INFINITY, 1}, {40, -INFINITY, 1}}, 2, 64, 0, E5M2_EMIN)));
    assert_true(isnan(dot((term[]){{0, INFINITY, 0}}, 1, 32, 0, E5M2_EMIN)));
    // 448²·32 = 6422528: exact (448² = 49 · 2^12, six significant bits)
    term big[32];
    for (int i = 0; i < 32; i++)
        big[i] = (term){i, 448, 448};
    assert_true(dot4(big, 32, 32, 128) == 6422528.0f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(alignment_truncates_toward_zero),
        cmocka_unit_test(product_exponent_from_the_inputs),
        cmocka_unit_test(normalisation_truncates_to_14_bits),
        cmocka_unit_test(cancellation_across_groups),
        cmocka_unit_test(promotion_boundary),
        cmocka_unit_test(zeros_and_specials),
        cmocka_unit_test(fixture_e4m3_reproduced_bit_for_bit),
        cmocka_unit_test(fixture_e4m3_e5m2_reproduced_bit_for_bit),
        cmocka_unit_test(fixture_e5m2_e4m3_reproduced_bit_for_bit),
        cmocka_unit_test(fixture_e5m2_e5m2_wgmma_reproduced_bit_for_bit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
