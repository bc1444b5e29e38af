// test_gemm_scaling.c — scaled storage (kernels/scaling.h) and the scaled GEMM (kernels/gemm.h
// "Scaled storage", cpu/gemm_scaled.c): scales against hand-computed cases, quantise→dequantise
// properties, and the GEMM against a straightforward implementation written here, bit for bit.
// Run: build/rel/tests/test_gemm_scaling
#include "test_util.h"

#include "cpu/gemm.h"
#include "scaling.h"

// ---------------------------------------------------------------------------------------------
// Scales by hand

static void mx_scale_of_amax_1000_for_e4m3_is_2(void **state)
{
    (void)state;
    // floor(log2 1000) = 9, e4m3's emax 8: X = 2^(9−8) = 2
    int e = pp_mx_shared_exp(1000.0, pp_format_get(PP_FMT_E4M3).emax);
    assert_int_equal(e, 1);
    assert_true(pp_mx_scale(e) == 2.0);
    // e2m1 (emax 2): 2^(9−2) = 128; 1000/128 = 7.8125 saturates to 6
    e = pp_mx_shared_exp(1000.0, pp_format_get(PP_FMT_E2M1).emax);
    assert_int_equal(e, 7);
    assert_true(pp_mx_quantise(PP_FMT_E2M1, 1000.0, e, PP_RND_NE, 0) == 6.0);
    // amax 0: the smallest scale; a non-finite block: the NaN scale
    assert_int_equal(pp_mx_shared_exp(0.0, 8), -127);
    assert_int_equal(pp_mx_shared_exp(pp_amax_step(0.0, INFINITY), 8), PP_MX_NAN_EXP);
    assert_true(isnan(pp_mx_scale(PP_MX_NAN_EXP)));
    // 1000/2 = 500 > 448: saturated to 448 (the spec's clamp), not torch's NaN
    assert_true(pp_mx_quantise(PP_FMT_E4M3, 1000.0, 1, PP_RND_NE, 0) == 448.0);
}

static void nvfp4_scales_round_in_e4m3(void **state)
{
    (void)state;
    assert_true(pp_nvfp4_global(2688.0) == 1.0);  // 2688 = 6·448
    assert_true(pp_nvfp4_global(0.0) == 1.0);
    assert_true(pp_nvfp4_global(1000.0) == (double)(float)(1000.0 / 2688.0));
    // g = 1: s = RN_e4m3(amax/6). 100/6 = 16.67: e4m3's step in [16, 32) is 2, so 16
    assert_true(pp_nvfp4_block_scale(100.0, 1.0) == 16.0);
    // 102/6 = 17, the midpoint of 16 and 18: ties to even, 16 (1.000₂·2^4)
    assert_true(pp_nvfp4_block_scale(102.0, 1.0) == 16.0);
    // 114/6 = 19, the midpoint of 18 and 20: ties to even, 20 (1.010₂·2^4)
    assert_true(pp_nvfp4_block_scale(114.0, 1.0) == 20.0);
    // 3000/6 = 500 > 448: saturated
    assert_true(pp_nvfp4_block_scale(3000.0, 1.0) == 448.0);
    // g = 0.5: s = RN_e4m3(amax/3); 9/3 = 3
    assert_true(pp_nvfp4_block_scale(9.0, 0.5) == 3.0);
    // elements: V/(s·g) in e2m1; 5/(16·1) = 0.3125 → 0.5 (e2m1: 0, 0.5, 1, 1.5, 2, 3, 4, 6)
    assert_true(pp_nvfp4_quantise(5.0, 16.0, 1.0) == 0.5);  // 0.3125 > 0.25: nearer 0.5
    assert_true(pp_nvfp4_quantise(100.0, 16.0, 1.0) == 6.0);  // 6.25: saturated
    assert_true(pp_nvfp4_quantise(3.0, 0.0, 1.0) == 0.0);     // no scale: 0
}

// TE's Float8CurrentScaling (kernels/scaling.h cites the source): s = RN_32(max/amax) multiplies,
// X = RN_32(1/s) dequantises.
static void tensor_scale_is_max_finite_over_amax(void **state)
{
    (void)state;
    assert_true(pp_tensor_scale(PP_FMT_E4M3, 1344.0) == (double)(1.0f / 3.0f));  // 1344 = 3·448
    assert_true(pp_tensor_scale_inv(pp_tensor_scale(PP_FMT_E4M3, 1344.0)) == 3.0);
    assert_true(pp_tensor_scale(PP_FMT_E5M2, 57344.0) == 1.0);
    assert_true(pp_tensor_scale(PP_FMT_E4M3, 1000.0) == (double)(float)(448.0 / 1000.0));
    assert_true(pp_tensor_scale(PP_FMT_E4M3, 0.0) == 1.0);
    assert_true(isnan(pp_tensor_scale(PP_FMT_E4M3, NAN)));
    assert_true(pp_tensor_scale(PP_FMT_E4M3, 0x1p-149) == 3.4028234663852886e38);  // FLT_MAX, as TE
    // the element: RN_e4m3,sat(RN_32(V·s)); amax's element lands on max_finite
    double s = pp_tensor_scale(PP_FMT_E4M3, 1000.0);
    assert_true(pp_tensor_quantise(PP_FMT_E4M3, 1000.0, s) == 448.0);
    assert_true(pp_tensor_quantise(PP_FMT_E4M3, -1000.0, s) == -448.0);
    // s·1 = 0.448: e4m3 step 2^−5 in [0.25, 0.5): 0.4375 (14·2^−5) or 0.46875; 0.448 → 0.4375
    assert_true(pp_tensor_quantise(PP_FMT_E4M3, 1.0, s) == 0.4375);
}

// Where the two forms part: dividing by the descale X = RN_32(amax/max) (precprobe's form before)
// and multiplying by TE's s = RN_32(max/amax) put some elements on different e4m3 values, since
// X·s ≠ 1. The sweep checks pp_tensor_quantise against TE's form written out, and that some
// element tells the forms apart, so a return to the old form fails here.
static void tensor_scale_multiplies_as_te_does(void **state)
{
    (void)state;
    int differ = 0;
    for (int amax_i = 1; amax_i < 200 && !differ; amax_i++) {
        double amax = (double)(float)(amax_i * 0.37), s = pp_tensor_scale(PP_FMT_E4M3, amax);
        double x_old = pp_round(PP_FMT_FP32, amax / 448.0, PP_RND_NE, 0);
        for (int i = 1; i < 4000 && !differ; i++) {
            double v = (double)(float)(amax * i / 4000.0);
            double te = pp_round(PP_FMT_E4M3, pp_round(PP_FMT_FP32, v * s, PP_RND_NE, 0), PP_RND_NE, 0);
            double old = pp_round(PP_FMT_E4M3, pp_round(PP_FMT_FP32, v / x_old, PP_RND_NE, 0), PP_RND_NE, 0);
            assert_true(pp_tensor_quantise(PP_FMT_E4M3, v, s) == te);
            differ = te != old;
        }
    }
    assert_true(differ);
}

// ---------------------------------------------------------------------------------------------
// Quantise → dequantise

// For random blocks: |P| ≤ max_finite; the dequantised X·P is within half a step of F (at P)
// times X of V, except where V/X lies beyond max_finite or below the smallest subnormal's half;
// and re-quantising X·P with the same scale gives P back (a value of F is a fixed point).
static void quantise_dequantise_round_trip(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() ^ 0x5CA1E};
    const pp_format_id fmts[3] = {PP_FMT_E4M3, PP_FMT_E5M2, PP_FMT_E2M1};
    for (uint64_t it = 0; it < pp_test_iters(2000); it++) {
        pp_format_id f = fmts[it % 3];
        pp_format F = pp_format_get(f);
        double v[32], amax = 0;
        double mag = ldexp(1.0, (int)(pp_test_rng_next(&r) % 40) - 20);
        for (int i = 0; i < 32; i++) {
            v[i] = (double)(float)((pp_test_rng_unit(&r) * 2 - 1) * mag);
            amax = pp_amax_step(amax, v[i]);
        }
        int e = pp_mx_shared_exp(amax, F.emax);
        double X = pp_mx_scale(e);
        double st = pp_tensor_scale(f, amax), xt = pp_tensor_scale_inv(st);
        for (int i = 0; i < 32; i++) {
            double P = pp_mx_quantise(f, v[i], e, PP_RND_NE, 0);
            assert_true(fabs(P) <= F.max_finite);
            assert_true(pp_is_representable(f, P));
            assert_true(pp_mx_quantise(f, X * P, e, PP_RND_NE, 0) == P);
            if (fabs(v[i] / X) < F.max_finite)
                assert_true(fabs(X * P - v[i]) <= 0.5 * X * pp_ulp(f, fabs(P)) * (1 + 1e-12));
            if (f == PP_FMT_E2M1)
                continue;
            double Q = pp_tensor_quantise(f, v[i], st);
            assert_true(fabs(Q) <= F.max_finite);
            assert_true(pp_tensor_quantise(f, pp_round(PP_FMT_FP32, xt * Q, PP_RND_NE, 0), st) == Q ||
                        fabs(Q) < ldexp(1.0, F.emin));  // subnormal Q: X·Q may round off its grid
        }
        // the block's largest magnitude keeps MX's top binade: |P_max| ≥ 2^emax_elem
        if (amax > 0 && amax < 1e30) {
            double pm = 0;
            for (int i = 0; i < 32; i++)
                pm = fmax(pm, fabs(pp_mx_quantise(f, v[i], e, PP_RND_NE, 0)));
            assert_true(pm >= ldexp(1.0, F.emax));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The GEMM against a straightforward implementation

// x [batch][rows][cols] element (b, r, c); A's lines run along cols, B's along rows.
typedef struct plain_q {
    double *q, *xs;  // elements; block scales [batch][line][block]
    double g;
} plain_q;

// Quantise one operand the plain way: pp_round and ilogb written out, no scaling.h.
static void plain_quantise(pp_scaling s, pp_format_id f, const double *x, int64_t batch, int64_t m, int64_t k,
                           int64_t n, int is_a, plain_q *o)
{
    int64_t bs = s == PP_SCALING_MX ? 32 : s == PP_SCALING_NVFP4 ? 16 : k, nb = (k + bs - 1) / bs;
    int64_t lines = is_a ? m : n, total = batch * m * k;
    if (!is_a)
        total = batch * k * n;
    o->q = calloc((size_t)total, sizeof(double));
    o->xs = calloc((size_t)(batch * lines * nb), sizeof(double));
    double amax = 0;
    for (int64_t i = 0; i < total; i++)
        amax = fmax(amax, fabs(x[i]));
    pp_rounding sat = (pp_rounding)(PP_RND_NE | PP_RND_SAT);
    float ts = amax == 0 ? 1.0f : (float)(pp_format_get(f).max_finite / amax);  // TE's scale (finite here)
    if (s == PP_SCALING_TENSOR)
        o->g = (double)(1.0f / ts);  // TE's scale_inv
    else if (s == PP_SCALING_NVFP4)
        o->g = amax == 0 ? 1.0 : (double)(float)(amax / (6.0 * 448.0));
    else
        o->g = 1.0;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t t = 0; t < lines; t++)
            for (int64_t blk = 0; blk < nb; blk++) {
                int64_t l0 = blk * bs, l1 = l0 + bs < k ? l0 + bs : k;
#define AT(l) (is_a ? (b * m + t) * k + (l) : (b * k + (l)) * n + t)
                double bmax = 0;
                for (int64_t l = l0; l < l1; l++)
                    bmax = fmax(bmax, fabs(x[AT(l)]));
                double sc = 1.0;
                if (s == PP_SCALING_MX) {
                    int e = bmax == 0 ? -127 : ilogb(bmax) - pp_format_get(f).emax;
                    sc = ldexp(1.0, e < -127 ? -127 : e);
                } else if (s == PP_SCALING_NVFP4) {
                    sc = pp_round(PP_FMT_E4M3, bmax / (6.0 * o->g), sat, 0);
                }
                o->xs[(b * lines + t) * nb + blk] = sc;
                for (int64_t l = l0; l < l1; l++) {
                    double v = x[AT(l)], q;
                    if (s == PP_SCALING_TENSOR)
                        q = pp_round(f, (double)((float)v * ts), sat, 0);
                    else if (s == PP_SCALING_MX)
                        q = pp_round(f, v / sc, sat, 0);
                    else
                        q = sc == 0 ? 0.0 : pp_round(f, v / (sc * o->g), sat, 0);
                    o->q[AT(l)] = q;
                }
#undef AT
            }
}

static void plain_gemm(pp_scaling s, pp_format_id f, double alpha, int64_t batch, int64_t m, int64_t n, int64_t k,
                       const double *a, const double *b, double *c)
{
    plain_q A, B;
    plain_quantise(s, f, a, batch, m, k, n, 1, &A);
    plain_quantise(s, f, b, batch, m, k, n, 0, &B);
    int64_t bs = s == PP_SCALING_MX ? 32 : s == PP_SCALING_NVFP4 ? 16 : k, nb = (k + bs - 1) / bs;
    float d = (float)(A.g * B.g);
    float al = (float)alpha;
    for (int64_t bi = 0; bi < batch; bi++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                float acc = 0.0f;
                for (int64_t blk = 0; blk < nb; blk++) {
                    float p = s == PP_SCALING_TENSOR ? acc : 0.0f;
                    for (int64_t l = blk * bs; l < k && l < (blk + 1) * bs; l++)
                        p = fmaf((float)A.q[(bi * m + i) * k + l], (float)B.q[(bi * k + l) * n + j], p);
                    if (s == PP_SCALING_TENSOR) {
                        acc = p;
                    } else {
                        double x = A.xs[(bi * m + i) * nb + blk] * B.xs[(bi * n + j) * nb + blk];
                        acc = acc + (float)((double)p * x);
                    }
                }
                float t = (float)((double)d * (double)acc);
                c[(bi * m + i) * n + j] = (double)(float)((double)al * (double)t);
            }
    free(A.q);
    free(A.xs);
    free(B.q);
    free(B.xs);
}

static void scaled_gemm_matches_plain_bit_for_bit(void **state)
{
    (void)state;
    const struct { pp_scaling s; pp_format_id f; } cfg[] = {
        {PP_SCALING_TENSOR, PP_FMT_E4M3}, {PP_SCALING_TENSOR, PP_FMT_E5M2}, {PP_SCALING_MX, PP_FMT_E4M3},
        {PP_SCALING_MX, PP_FMT_E5M2},     {PP_SCALING_MX, PP_FMT_E2M1},     {PP_SCALING_NVFP4, PP_FMT_E2M1},
    };
    const int64_t ks[] = {1, 16, 45, 96};
    pp_test_rng r = {pp_test_seed() ^ 0x6E33};
    for (size_t ci = 0; ci < sizeof cfg / sizeof cfg[0]; ci++)
        for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
            int64_t batch = 2, m = 9, n = 11, k = ks[ki];
            double *a = malloc(sizeof(double) * (size_t)(batch * m * k));
            double *b = malloc(sizeof(double) * (size_t)(batch * k * n));
            double *c = malloc(sizeof(double) * (size_t)(batch * m * n));
            double *c4 = malloc(sizeof(double) * (size_t)(batch * m * n));
            double *e = malloc(sizeof(double) * (size_t)(batch * m * n));
            for (int64_t i = 0; i < batch * m * k; i++)  // outliers: one row in 5 is 2^12 larger
                a[i] = (double)(float)((pp_test_rng_unit(&r) * 2 - 1) * ((i / k) % 5 == 2 ? 4096.0 : 1.0));
            for (int64_t i = 0; i < batch * k * n; i++)
                b[i] = (double)(float)(pp_test_rng_unit(&r) * 2 - 1);
            pp_gemm_variant v = {.format = cfg[ci].f, .scaling = cfg[ci].s};
            pp_error err = {0};
            assert_int_equal(pp_gemm_cpu(&v, batch, m, n, k, a, b, c, 1, &err), PP_OK);
            assert_int_equal(pp_gemm_cpu(&v, batch, m, n, k, a, b, c4, 4, &err), PP_OK);
            plain_gemm(cfg[ci].s, cfg[ci].f, 1.0 / sqrt((double)k), batch, m, n, k, a, b, e);
            for (int64_t i = 0; i < batch * m * n; i++) {
                if (memcmp(&c[i], &e[i], sizeof(double)) || memcmp(&c4[i], &c[i], sizeof(double)))
                    fail_msg("%s %s k %lld: c[%lld] = %.17g (4 threads %.17g), plain %.17g",
                             pp_scaling_name(cfg[ci].s), pp_format_get(cfg[ci].f).name, (long long)k, (long long)i,
                             c[i], c4[i], e[i]);
            }
            free(a);
            free(b);
            free(c);
            free(c4);
            free(e);
        }
}

static void scaled_variants_refuse_what_makes_no_sense(void **state)
{
    (void)state;
    double a = 1, b = 1, c = 0;
    pp_error err = {0};
    pp_gemm_variant bad[] = {
        {.format = PP_FMT_E2M3, .scaling = PP_SCALING_TENSOR},  // (e2m1 per-tensor is offered: nvfp4-gemm)
        {.format = PP_FMT_E2M1, .scaling = PP_SCALING_DELAYED},
        {.format = PP_FMT_E4M3, .scaling = PP_SCALING_DELAYED},  // no amax history: pp_gemm_delayed_cpu
        {.format = PP_FMT_E4M3, .scaling = PP_SCALING_NVFP4},
        {.format = PP_FMT_FP32, .scaling = PP_SCALING_MX},
        {.format = PP_FMT_E4M3, .scaling = PP_SCALING_NONE},
        {.format = PP_FMT_E4M3, .scaling = PP_SCALING_MX, .accum = PP_GEMM_ACC_STORAGE},
        {.format = PP_FMT_E4M3, .scaling = PP_SCALING_MX, .scale = PP_GEMM_SCALE_PRE},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(pp_gemm_cpu(&bad[i], 1, 1, 1, 1, &a, &b, &c, 1, &err), PP_ERR_INPUT);
    // scaled inputs are binary32 values, not values of the storage format
    pp_gemm_variant v = {.format = PP_FMT_E4M3, .scaling = PP_SCALING_MX};
    double x = 0.1;  // not a binary32 value
    assert_int_equal(pp_gemm_cpu(&v, 1, 1, 1, 1, &x, &b, &c, 1, &err), PP_ERR_INPUT);
    x = (double)0.1f;
    assert_int_equal(pp_gemm_cpu(&v, 1, 1, 1, 1, &x, &b, &c, 1, &err), PP_OK);
}

// mma = sm90-fp8(-fast): the scaled GEMM's accumulation is kernels/sm90_fp8_mma.h's dot product
// of the quantised row and column (checked against the H200 in tests/test_sm90_fp8_mma.c), then
// the same descale and epilogue; k = 300 crosses two promotions and ends on a partial group.
static void sm90_mma_is_the_model_on_the_quantised_operands(void **state)
{
    (void)state;
    const pp_format_id fmts[] = {PP_FMT_E4M3, PP_FMT_E5M2};
    const pp_gemm_mma mmas[] = {PP_GEMM_MMA_SM90_FP8, PP_GEMM_MMA_SM90_FP8_FAST};
    int64_t batch = 2, m = 5, n = 3, k = 300;
    pp_test_rng r = {pp_test_seed() ^ 0x5390};
    double *a = malloc(sizeof(double) * (size_t)(batch * m * k)), *b = malloc(sizeof(double) * (size_t)(batch * k * n));
    double c[2 * 5 * 3], chain[2 * 5 * 3], col[300];
    for (int64_t i = 0; i < batch * m * k; i++)
        a[i] = (double)(float)((pp_test_rng_unit(&r) * 2 - 1) * ((i / k) % 5 == 2 ? 4096.0 : 1.0));
    for (int64_t i = 0; i < batch * k * n; i++)
        b[i] = (double)(float)(pp_test_rng_unit(&r) * 2 - 1);
    int differs = 0;
    for (int fi = 0; fi < 2; fi++) {
        plain_q A, B;
        plain_quantise(PP_SCALING_TENSOR, fmts[fi], a, batch, m, k, n, 1, &A);
        plain_quantise(PP_SCALING_TENSOR, fmts[fi], b, batch, m, k, n, 0, &B);
        pp_gemm_variant v0 = {.format = fmts[fi], .scaling = PP_SCALING_TENSOR};
        pp_error err = {0};
        assert_int_equal(pp_gemm_cpu(&v0, batch, m, n, k, a, b, chain, 1, &err), PP_OK);
        for (int mi = 0; mi < 2; mi++) {
            pp_gemm_variant v = {.format = fmts[fi], .scaling = PP_SCALING_TENSOR, .mma = mmas[mi]};
            assert_int_equal(pp_gemm_cpu(&v, batch, m, n, k, a, b, c, 2, &err), PP_OK);
            int emin = pp_format_get(fmts[fi]).emin;
            float d = (float)(A.g * B.g), al = (float)(1.0 / sqrt((double)k));
            for (int64_t bi = 0; bi < batch; bi++)
                for (int64_t i = 0; i < m; i++)
                    for (int64_t j = 0; j < n; j++) {
                        for (int64_t l = 0; l < k; l++)
                            col[l] = B.q[(bi * k + l) * n + j];
                        float acc = pp_sm90_fp8_dot(A.q + (bi * m + i) * k, 1, col, 1, k, emin, emin,
                                                    mi == 0 ? 128 : 0);
                        float t = (float)((double)d * (double)acc);
                        double want = (double)(float)((double)al * (double)t);
                        int64_t o = (bi * m + i) * n + j;
                        if (memcmp(&c[o], &want, sizeof want))
                            fail_msg("%s %s: c[%lld] = %a, model %a", pp_format_get(fmts[fi]).name,
                                     pp_gemm_mma_name(mmas[mi]), (long long)o, c[o], want);
                        differs += c[o] != chain[o];
                    }
        }
        free(A.q), free(A.xs), free(B.q), free(B.xs);
    }
    assert_true(differs > 0);  // the knob reaches the arithmetic
    free(a), free(b);
}

// Hopper's FP8 MMA with what it does not take: block scales (Blackwell's), FP4, no scaling.
static void sm90_mma_refused_outside_per_tensor_fp8(void **state)
{
    (void)state;
    double a = 1, b = 1, c = 0;
    pp_error err = {0};
    pp_gemm_variant bad[] = {
        {.format = PP_FMT_E4M3, .scaling = PP_SCALING_MX, .mma = PP_GEMM_MMA_SM90_FP8},
        {.format = PP_FMT_E2M1, .scaling = PP_SCALING_NVFP4, .mma = PP_GEMM_MMA_SM90_FP8_FAST},
        {.format = PP_FMT_E2M1, .scaling = PP_SCALING_TENSOR, .mma = PP_GEMM_MMA_SM90_FP8},
        {.format = PP_FMT_FP16, .mma = PP_GEMM_MMA_SM90_FP8},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(pp_gemm_cpu(&bad[i], 1, 1, 1, 1, &a, &b, &c, 1, &err), PP_ERR_INPUT);
    pp_gemm_variant ok = {.format = PP_FMT_E5M2, .scaling = PP_SCALING_TENSOR, .mma = PP_GEMM_MMA_SM90_FP8};
    assert_int_equal(pp_gemm_cpu(&ok, 1, 1, 1, 1, &a, &b, &c, 1, &err), PP_OK);
}

int main(void)
{
    pp_test_report_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mx_scale_of_amax_1000_for_e4m3_is_2),
        cmocka_unit_test(nvfp4_scales_round_in_e4m3),
        cmocka_unit_test(tensor_scale_is_max_finite_over_amax),
        cmocka_unit_test(tensor_scale_multiplies_as_te_does),
        cmocka_unit_test(quantise_dequantise_round_trip),
        cmocka_unit_test(scaled_gemm_matches_plain_bit_for_bit),
        cmocka_unit_test(scaled_variants_refuse_what_makes_no_sense),
        cmocka_unit_test(sm90_mma_is_the_model_on_the_quantised_operands),
        cmocka_unit_test(sm90_mma_refused_outside_per_tensor_fp8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
