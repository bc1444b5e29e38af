// test_cast.c — `precprobe cast`'s computation: the values written are pp_round's, element by
// element, in every format and mode, through a file and back; the packed codes round-trip
// (pp_decode of each code is the value, NaN where the format has NaN); the .npy of codes is what
// numpy.save writes for uint8.
#include "test_util.h"

#include <math.h>

#include "core/cast.h"
#include "format.h"
#include "io/npy_codes.h"
#include "io/tensor_io.h"

// Biased inputs: specials, values near every small format's max, midpoints, random magnitudes.
static void fill(pp_tensor *t, uint64_t seed)
{
    pp_test_xoshiro g;
    pp_test_xoshiro_seed(&g, seed);
    const double sp[12] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 464.0, 465.0, 5.0, 0.25, 61440.0, 0x1.8p127, 1e-40};
    for (int64_t i = 0; i < t->numel; i++) {
        uint64_t r = pp_test_xoshiro_next(&g);
        double x = i < 12 ? sp[i] : ldexp((double)(r >> 11) / 0x1p53, (int)(r % 40) - 20);
        float xf = (float)(r >> 63 ? -x : x);  // a binary32: the files hold float32
        t->data[i] = (double)xf;
    }
}

static void cast_values_equal_pp_round_through_a_file(void **state)
{
    int64_t shape[2] = {7, 37};
    pp_tensor in, back;
    pp_error err = {0};
    assert_int_equal(pp_tensor_alloc(&in, 2, shape, PP_FMT_FP32, &err), PP_OK);
    fill(&in, 0xCA57);
    char path[PP_TEST_PATH_MAX];
    pp_test_tmp_path(state, "in.npy", path);
    assert_int_equal(pp_tensor_save(path, &in, &err), PP_OK);
    pp_tensor loaded;
    assert_int_equal(pp_tensor_load(path, &loaded, &err), PP_OK);
    for (int f = 0; f < PP_FMT_COUNT; f++)
        for (int m = 0; m < 3; m++)
            for (int sat = 0; sat < 2; sat++) {
                pp_cast_opts o = {.to = (pp_format_id)f, .mode = (pp_rounding)m, .saturate = sat, .seed = 42};
                pp_tensor out;
                assert_int_equal(pp_cast_tensor(&loaded, &o, &out, &err), PP_OK);
                assert_int_equal(out.format, f);
                pp_rounding mm = (pp_rounding)(m | (sat ? PP_RND_SAT : 0));
                for (int64_t i = 0; i < in.numel; i++) {
                    uint32_t rb = m == PP_RND_SR ? pp_cast_rbits(42, i) : 0;
                    assert_true(pp_test_same_bits(out.data[i], pp_round((pp_format_id)f, in.data[i], mm, rb)));
                }
                // as `cast` writes values: float32 (float64 for fp64), read back exactly
                out.format = f == PP_FMT_FP64 ? PP_FMT_FP64 : PP_FMT_FP32;
                pp_test_tmp_path(state, "out.npy", path);
                assert_int_equal(pp_tensor_save(path, &out, &err), PP_OK);
                assert_int_equal(pp_tensor_load(path, &back, &err), PP_OK);
                for (int64_t i = 0; i < in.numel; i++)
                    assert_true(pp_test_same_value(back.data[i], out.data[i]));
                pp_tensor_free(&back);
                pp_tensor_free(&out);
            }
    // SR's bits depend on (seed, index) only
    assert_true(pp_cast_rbits(42, 5) == pp_cast_rbits(42, 5) && pp_cast_rbits(42, 5) != pp_cast_rbits(43, 5));
    pp_tensor_free(&loaded);
    pp_tensor_free(&in);
}

static void cast_codes_round_trip_npy(void **state)
{
    int64_t shape[3] = {2, 3, 41};
    pp_tensor in;
    pp_error err = {0};
    assert_int_equal(pp_tensor_alloc(&in, 3, shape, PP_FMT_FP32, &err), PP_OK);
    fill(&in, 0xC0DE);
    char path[PP_TEST_PATH_MAX];
    pp_test_tmp_path(state, "codes.npy", path);
    for (int f = 0; f < PP_FMT_COUNT; f++) {
        pp_format F = pp_format_get((pp_format_id)f);
        pp_cast_opts o = {.to = (pp_format_id)f, .mode = PP_RND_NE, .saturate = 0, .seed = 0};
        pp_tensor out;
        assert_int_equal(pp_cast_tensor(&in, &o, &out, &err), PP_OK);
        uint8_t codes[2 * 3 * 41];
        if (F.storage_bits > 8) {
            assert_int_equal(pp_cast_codes(&out, codes, &err), PP_ERR_INPUT);
            pp_tensor_free(&out);
            continue;
        }
        assert_int_equal(pp_cast_codes(&out, codes, &err), PP_OK);
        assert_int_equal(pp_npy_write_codes(path, 3, shape, in.numel, codes, &err), PP_OK);
        size_t n;
        unsigned char *b = pp_test_slurp(path, &n);
        const char *want = "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3, 41), }";
        size_t hlen = (size_t)b[8] | (size_t)b[9] << 8;
        assert_memory_equal(b, "\x93NUMPY\x01\x00", 8);
        assert_int_equal((10 + hlen) % 64, 0);
        assert_int_equal(b[10 + hlen - 1], '\n');
        assert_memory_equal(b + 10, want, strlen(want));
        assert_int_equal(n, 10 + hlen + (size_t)in.numel);
        for (int64_t i = 0; i < in.numel; i++) {
            uint8_t c = b[10 + hlen + (size_t)i];
            assert_int_equal(c, codes[i]);
            assert_true(c < (1u << F.storage_bits));
            double v = out.data[i], d = pp_decode((pp_format_id)f, c);
            if (isnan(v) && F.has_nan == PP_NAN_NONE)
                assert_true(fabs(d) == F.max_finite);  // FP4/FP6: NaN codes as ±max (documented)
            else if (!pp_test_same_value(d, v) && !(isnan(v) && isnan(d))) {
                fprintf(stderr, "FAIL code_decodes_to_value: %s index %lld code 0x%02x\n", F.name, (long long)i, c);
                pp_test_print_double("value", v);
                pp_test_print_double("decoded", d);
                fail();
            }
        }
        free(b);
        pp_tensor_free(&out);
    }
    // one dimension and none: numpy's "(n,)" and "()"
    uint8_t one = 7;
    int64_t s1 = 1;
    assert_int_equal(pp_npy_write_codes(path, 1, &s1, 1, &one, &err), PP_OK);
    unsigned char *b = pp_test_slurp(path, NULL);
    assert_non_null(strstr((const char *)b + 10, "'shape': (1,), }"));
    free(b);
    assert_int_equal(pp_npy_write_codes(path, 0, NULL, 1, &one, &err), PP_OK);
    b = pp_test_slurp(path, NULL);
    assert_non_null(strstr((const char *)b + 10, "'shape': (), }"));
    free(b);
    assert_int_equal(pp_npy_write_codes(path, 1, &s1, 2, &one, &err), PP_ERR_INPUT);
    pp_tensor_free(&in);
}

// MX block scaling, restated from OCP MX v1.0 §6.3: per block of 32 along the last dimension,
// X = 2^(floor(log2 amax) − emax_elem) (clamped to E8M0), P = round(V/X) saturated.
static void cast_mx_follows_the_spec(void **state)
{
    (void)state;
    int64_t shape[2] = {3, 70};  // rows of 32 + 32 + 6
    pp_tensor in, P, X;
    pp_error err = {0};
    assert_int_equal(pp_tensor_alloc(&in, 2, shape, PP_FMT_FP32, &err), PP_OK);
    fill(&in, 0x3C);
    for (int64_t i = 12; i < in.numel; i++)  // outliers in some blocks (the specials fill row 0)
        if (i % 37 == 0)
            in.data[i] *= 1e4;
    in.data[69] = 0.0;  // row 0's short block: zero and one value
    const pp_format_id fs[5] = {PP_FMT_E4M3, PP_FMT_E5M2, PP_FMT_E2M1, PP_FMT_E2M3, PP_FMT_E3M2};
    for (int k = 0; k < 5; k++) {
        pp_format F = pp_format_get(fs[k]);
        pp_cast_opts o = {.to = fs[k], .mode = PP_RND_NE, .saturate = 0, .seed = 0};
        assert_int_equal(pp_cast_mx(&in, &o, 32, &P, &X, &err), PP_OK);
        assert_int_equal(X.ndim, 2);
        assert_int_equal(X.shape[1], 3);
        for (int64_t r = 0; r < 3; r++)
            for (int64_t b = 0; b < 3; b++) {
                int64_t lo = b * 32, hi = lo + 32 > 70 ? 70 : lo + 32;
                double amax = 0;
                int special = 0;
                for (int64_t c = lo; c < hi; c++) {
                    double a = fabs(in.data[r * 70 + c]);
                    special |= !isfinite(a);
                    amax = a > amax ? a : amax;
                }
                double x = X.data[r * 3 + b];
                if (special) {
                    assert_true(isnan(x));
                    continue;
                }
                int e = amax == 0 ? -127 : (int)floor(log2(amax)) - F.emax;
                e = e < -127 ? -127 : e > 127 ? 127 : e;
                assert_true(x == ldexp(1.0, e));
                for (int64_t c = lo; c < hi; c++) {
                    double v = in.data[r * 70 + c];
                    double want = pp_round(fs[k], v / x, (pp_rounding)(PP_RND_NE | PP_RND_SAT), 0);
                    assert_true(pp_test_same_value(P.data[r * 70 + c], want));
                    assert_true(fabs(P.data[r * 70 + c]) <= F.max_finite);
                }
            }
        pp_tensor_free(&P);
        pp_tensor_free(&X);
    }
    pp_cast_opts bad = {.to = PP_FMT_FP16, .mode = PP_RND_NE, .saturate = 0, .seed = 0};
    assert_int_equal(pp_cast_mx(&in, &bad, 32, &P, &X, &err), PP_ERR_INPUT);
    pp_tensor_free(&in);
}

// Per-tensor current scaling, hand-computed: amax 896 gives X = 896/448 = 2; 5e-4/2 is below half
// e4m3's smallest subnormal 2^-9 (flushes to 0), -0 keeps its sign; 1000 with X = 2 saturates.
static void cast_tensor_current_hand_cases(void **state)
{
    (void)state;
    int64_t shape[1] = {6};
    pp_tensor in, P, S;
    pp_error err = {0};
    double g;
    assert_int_equal(pp_tensor_alloc(&in, 1, shape, PP_FMT_FP32, &err), PP_OK);
    const double v[6] = {896.0, 1.0, -0.0, 0.0, 5e-4, -3.0};
    for (int i = 0; i < 6; i++)
        in.data[i] = v[i];
    pp_cast_opts o = {.to = PP_FMT_E4M3, .mode = PP_RND_NE, .saturate = 0, .seed = 0};
    assert_int_equal(pp_cast_scaled(&in, &o, PP_SCALING_TENSOR, &P, &S, &g, &err), PP_OK);
    assert_true(g == 2.0 && S.data == NULL);
    const double want[6] = {448.0, 0.5, -0.0, 0.0, 0.0, -1.5};
    for (int i = 0; i < 6; i++)
        assert_true(pp_test_same_bits(P.data[i], want[i]));
    pp_tensor_free(&P);
    // all zeros: X = 1; a NaN: X NaN (the GEMM's rule)
    for (int i = 0; i < 6; i++)
        in.data[i] = 0.0;
    assert_int_equal(pp_cast_scaled(&in, &o, PP_SCALING_TENSOR, &P, &S, &g, &err), PP_OK);
    assert_true(g == 1.0);
    pp_tensor_free(&P);
    in.data[3] = NAN;
    assert_int_equal(pp_cast_scaled(&in, &o, PP_SCALING_TENSOR, &P, &S, &g, &err), PP_OK);
    assert_true(isnan(g));
    pp_tensor_free(&P);
    // formats and modes the schemes do not take
    pp_cast_opts fp4 = {.to = PP_FMT_E2M1, .mode = PP_RND_NE}, tz = {.to = PP_FMT_E4M3, .mode = PP_RND_TZ};
    pp_cast_opts fp6 = {.to = PP_FMT_E2M3, .mode = PP_RND_NE, .saturate = 0, .seed = 0};
    assert_int_equal(pp_cast_scaled(&in, &fp6, PP_SCALING_TENSOR, &P, &S, &g, &err), PP_ERR_INPUT);
    assert_int_equal(pp_cast_scaled(&in, &o, PP_SCALING_NVFP4, &P, &S, &g, &err), PP_ERR_INPUT);
    assert_int_equal(pp_cast_scaled(&in, &tz, PP_SCALING_TENSOR, &P, &S, &g, &err), PP_ERR_INPUT);
    assert_int_equal(pp_cast_scaled(&in, &fp4, PP_SCALING_MX, &P, &S, &g, &err), PP_ERR_INPUT);
    pp_tensor_free(&in);
}

// MX's two exponent rules (--mx-scale), e4m3, one short block [480, 3.375, 3·2^−11]:
// ocp: floor(log2 480) − 8 = 0, X = 1: 480 saturates to 448, 3.375 a tie → 3.5 (even), 3·2^−11
// is 0.75 of e4m3's smallest subnormal 2^−9 → 2^−9. te: RN_32(480·RN_32(1/448)) = 1.0714 rounds
// up to 2, X = 2: 240 (nothing saturates), 1.6875 a tie → 1.75, 3·2^−12 → 0. TransformerEngine's
// rule rounds to nearest-even only.
static void cast_mx_scale_rules(void **state)
{
    (void)state;
    int64_t shape[1] = {3};
    pp_tensor in, P, S;
    pp_error err = {0};
    assert_int_equal(pp_tensor_alloc(&in, 1, shape, PP_FMT_FP32, &err), PP_OK);
    in.data[0] = 480.0, in.data[1] = 3.375, in.data[2] = 3.0 * 0x1p-11;
    pp_cast_opts ocp = {.to = PP_FMT_E4M3, .mode = PP_RND_NE};
    pp_cast_opts te = {.to = PP_FMT_E4M3, .mode = PP_RND_NE, .mx_rule = PP_MX_RULE_TE};
    assert_int_equal(pp_cast_mx(&in, &ocp, 32, &P, &S, &err), PP_OK);
    assert_true(S.data[0] == 1.0 && P.data[0] == 448.0 && P.data[1] == 3.5 && P.data[2] == 0x1p-9);
    pp_tensor_free(&P);
    pp_tensor_free(&S);
    assert_int_equal(pp_cast_mx(&in, &te, 32, &P, &S, &err), PP_OK);
    assert_true(S.data[0] == 2.0 && P.data[0] == 240.0 && P.data[1] == 1.75 && P.data[2] == 0.0);
    pp_tensor_free(&P);
    pp_tensor_free(&S);
    // a zero block: 2^−127 under either rule; NaN: the NaN scale
    in.data[0] = in.data[1] = in.data[2] = 0.0;
    assert_int_equal(pp_cast_mx(&in, &te, 32, &P, &S, &err), PP_OK);
    assert_true(S.data[0] == 0x1p-127 && P.data[0] == 0.0);
    pp_tensor_free(&P);
    pp_tensor_free(&S);
    in.data[1] = NAN;
    assert_int_equal(pp_cast_mx(&in, &te, 32, &P, &S, &err), PP_OK);
    assert_true(isnan(S.data[0]));
    pp_tensor_free(&P);
    pp_tensor_free(&S);
    te.mode = PP_RND_TZ;
    assert_int_equal(pp_cast_mx(&in, &te, 32, &P, &S, &err), PP_ERR_INPUT);
    assert_non_null(strstr(err.msg, "nearest-even"));
    pp_tensor_free(&in);
}

// NVFP4, hand-computed: amax 2688 = 6·448 gives g = 1. Block 0 [2688, 1]: s = 448, P = 6 and
// 1/448 → 0. Block 1 [3, 1.5, 0.75, -0.25, 1.25]: s = 0.5, P = 6, 3, 1.5, -0.5, and 2.5 a tie
// between 2 and 3 → 2 (even mantissa). Block 2 all zeros: s = 0, P = 0. The short last block
// (2 values) [0, 2688·2^-12]: s = RN_e4m3(0.109375) = 0.109375, P = 0.65625/0.109375 = 6.
static void cast_nvfp4_hand_cases(void **state)
{
    (void)state;
    int64_t shape[2] = {1, 50};
    pp_tensor in, P, S;
    pp_error err = {0};
    double g;
    assert_int_equal(pp_tensor_alloc(&in, 2, shape, PP_FMT_FP32, &err), PP_OK);
    for (int i = 0; i < 50; i++)
        in.data[i] = 0.0;
    in.data[0] = 2688.0;
    in.data[1] = 1.0;
    const double b1[5] = {3.0, 1.5, 0.75, -0.25, 1.25};
    for (int i = 0; i < 5; i++)
        in.data[16 + i] = b1[i];
    in.data[49] = 2688.0 / 4096.0;
    pp_cast_opts o = {.to = PP_FMT_E2M1, .mode = PP_RND_NE, .saturate = 0, .seed = 0};
    assert_int_equal(pp_cast_scaled(&in, &o, PP_SCALING_NVFP4, &P, &S, &g, &err), PP_OK);
    assert_true(g == 1.0);
    assert_int_equal(S.ndim, 2);
    assert_int_equal(S.shape[1], 4);
    assert_int_equal(S.format, PP_FMT_E4M3);
    assert_true(S.data[0] == 448.0 && S.data[1] == 0.5 && S.data[2] == 0.0 && S.data[3] == 0.109375);
    assert_true(P.data[0] == 6.0 && P.data[1] == 0.0);
    const double w1[5] = {6.0, 3.0, 1.5, -0.5, 2.0};
    for (int i = 0; i < 5; i++)
        assert_true(P.data[16 + i] == w1[i]);
    for (int i = 32; i < 48; i++)
        assert_true(P.data[i] == 0.0);
    assert_true(P.data[48] == 0.0 && P.data[49] == 6.0);
    pp_tensor_free(&P);
    pp_tensor_free(&S);
    pp_tensor_free(&in);
}

// NVFP4 on biased random data, element by element against kernels/scaling.h's functions.
static void cast_nvfp4_equals_the_scaling_header(void **state)
{
    (void)state;
    int64_t shape[2] = {5, 37};
    pp_tensor in, P, S;
    pp_error err = {0};
    double g;
    assert_int_equal(pp_tensor_alloc(&in, 2, shape, PP_FMT_FP32, &err), PP_OK);
    fill(&in, 0xF4);
    for (int64_t i = 0; i < 12; i++)  // the specials, but finite: a NaN makes every scale NaN
        if (!isfinite(in.data[i]))
            in.data[i] = 0.5;
    assert_int_equal(pp_cast_scaled(&in, &(pp_cast_opts){.to = PP_FMT_E2M1, .mode = PP_RND_NE}, PP_SCALING_NVFP4, &P, &S,
                                    &g, &err), PP_OK);
    double amax = 0;
    for (int64_t i = 0; i < in.numel; i++)
        amax = fabs(in.data[i]) > amax ? fabs(in.data[i]) : amax;
    assert_true(pp_test_same_bits(g, pp_nvfp4_global(amax)));
    for (int64_t r = 0; r < 5; r++)
        for (int64_t b = 0; b < 3; b++) {
            int64_t lo = b * 16, hi = lo + 16 > 37 ? 37 : lo + 16;
            double bamax = 0;
            for (int64_t c = lo; c < hi; c++)
                bamax = fabs(in.data[r * 37 + c]) > bamax ? fabs(in.data[r * 37 + c]) : bamax;
            double s = pp_nvfp4_block_scale(bamax, g);
            assert_true(pp_test_same_bits(S.data[r * 3 + b], s));
            for (int64_t c = lo; c < hi; c++)
                assert_true(pp_test_same_bits(P.data[r * 37 + c], pp_nvfp4_quantise(in.data[r * 37 + c], s, g)));
        }
    pp_tensor_free(&P);
    pp_tensor_free(&S);
    pp_tensor_free(&in);
}

// Nibble order (torch's float4_e2m1fn_x2): element 2j low, 2j+1 high, an odd row padded with +0.
static void cast_pack_fp4_nibble_order(void **state)
{
    (void)state;
    const uint8_t codes[6] = {0x2, 0xF, 0x7, 0x9, 0x0, 0x8};  // 2 rows of 3
    uint8_t packed[4];
    pp_cast_pack_fp4(codes, 2, 3, packed);
    assert_int_equal(packed[0], 0xF2);
    assert_int_equal(packed[1], 0x07);
    assert_int_equal(packed[2], 0x09);
    assert_int_equal(packed[3], 0x08);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cast_values_equal_pp_round_through_a_file),
        cmocka_unit_test(cast_codes_round_trip_npy),
        cmocka_unit_test(cast_mx_follows_the_spec),
        cmocka_unit_test(cast_tensor_current_hand_cases),
        cmocka_unit_test(cast_nvfp4_hand_cases),
        cmocka_unit_test(cast_mx_scale_rules),
        cmocka_unit_test(cast_nvfp4_equals_the_scaling_header),
        cmocka_unit_test(cast_pack_fp4_nibble_order),
    };
    return cmocka_run_group_tests(tests, pp_test_tmpdir_setup, pp_test_tmpdir_teardown);
}
