// test_attention_ref_quantised.c — FP8 attention's second reference (src/ops/attention_ref_quantised.h):
// a hand case where FA3's FP8 forward is exact against the exact attention of its e4m3 inputs and
// far from the exact attention of its bf16 inputs (the split a report shows); the split inputs
// against the plain reference on X·T8 when X is a power of two; fast against mpfr-plain when X is
// not. Run: make test (build/rel/tests/test_attention_ref_quantised).
#include "test_util.h"

#include <math.h>

#include "attention_fp8.h"
#include "attention_ref.h"
#include "cpu/attention.h"
#include "ops/attention_ref_quantised.h"

static void fa3(pp_attn_variant *v)
{
    memset(v, 0, sizeof *v);
    v->format = v->cp_accum = v->cp_grad_accum = PP_FMT_BF16;
    v->kernel = PP_ATTN_FLASH;
    v->fp8 = PP_ATTN_FP8_FA3;
}

static void opts(pp_attn_ref_opts *o, const pp_attn_dims *dm, pp_attn_ref_method m)
{
    memset(o, 0, sizeof *o);
    o->method = m;
    o->b = dm->b, o->s_q = dm->s_q, o->s_kv = dm->s_kv, o->h = dm->h, o->h_kv = dm->h_kv, o->d = dm->d;
    o->causal = dm->causal;
    o->threads = 1;
}

// One query, one key, d = 4, σ = 1/√4 = ½ (not given: the split's doubled k). q = [3, 1, 0, 0]:
// s_q = RN_32(448/3), T8 = [448, 144] (149.3 → 144, step 16), so q' = X_q·[448, 144] ≈ [3, 0.964]
// and X_q = RN_32(1/s_q) is not a power of two; k = [1, 1, 0, 0]: s_k = 448, T8 = [448, 448],
// X_k = RN_32(1/448). lse' = ½·X_q·X_k·448·(448 + 144), exact in x87's 64-bit significand (48 + 3
// + 6 bits) ≈ 1.982 against the original 2. v = [3.5, 0.050048828125 (bf16 0.05), 0, 0]: X_v = 2^−7,
// 0.05·128 = 6.406 → 6.5, so out' = [3.5, 0.05078125, 0, 0] against the original [3.5, 0.05005].
// One key: P = 1, FA3's p = 2^8 exactly (its max offset), so its out is exactly out'.
static void hand_split(void **state)
{
    (void)state;
    pp_attn_dims dm = {1, 1, 1, 1, 1, 4, 0};
    double q[4] = {3, 1, 0, 0}, k[4] = {1, 1, 0, 0}, v[4] = {3.5, 0.050048828125, 0, 0};
    double ro[4], rl[1], bo, bl, po[4], pl[1], out[4], lse[1];
    pp_attn_ref_opts o;
    opts(&o, &dm, PP_ATTN_REF_FAST);
    pp_error e = {0};
    pp_attn_variant fv;
    fa3(&fv);
    assert_int_equal(pp_attention_ref_quantised(&o, &fv, q, k, v, ro, rl, &bo, &bl, &e), 0);
    double sq = pp_attn_fp8_tensor_scale(q, 4), xq = pp_attn_fp8_descale(sq), xk = pp_attn_fp8_descale(448.0);
    assert_true(pp_attn_fp8_quantise(1.0, sq) == 144.0f && pp_attn_fp8_quantise(3.0, sq) == 448.0f);
    assert_true(xq != ldexp(1.0, ilogb(xq)));  // not a power of two: the split is needed
    long double want = 0.5L * (long double)xq * (long double)xk * 448.0L * 592.0L;
    print_message("quantised lse %.17g (want %.17Lg, bound %.3g), out[1] %.17g (bound %.3g)\n", rl[0], want, bl,
                  ro[1], bo);
    assert_true(fabsl((long double)rl[0] - want) <= (long double)bl + 0x1p-52L * fabsl(want));
    assert_true(bl < 1e-14 && bo < 1e-15);
    assert_true(fabs(ro[0] - 3.5) <= bo && fabs(ro[1] - 0.05078125) <= bo && ro[2] == 0 && ro[3] == 0);
    // the original inputs' exact attention: lse 2, out v
    opts(&o, &dm, PP_ATTN_REF_FAST);
    assert_int_equal(pp_attention_ref(&o, q, k, v, NULL, po, pl, NULL, NULL, NULL, NULL, &e), 0);
    assert_true(fabs(pl[0] - 2.0) < 1e-15 && fabs(po[1] - v[1]) < 1e-15);
    // FA3's FP8 forward: exact against the quantised reference, far from the original's
    assert_int_equal(pp_attention_cpu(&fv, &dm, 0, q, k, v, NULL, out, lse, NULL, NULL, NULL, 1, &e), 0);
    print_message("fa3: out[1] %.9g lse %.9g; vs quantised %.3g, %.3g; vs original %.3g, %.3g\n", out[1], lse[0],
                  fabs(out[1] - ro[1]), fabs(lse[0] - rl[0]), fabs(out[1] - po[1]), fabs(lse[0] - pl[0]));
    for (int i = 0; i < 4; i++)
        assert_true(fabs(out[i] - ro[i]) <= 1e-12);
    assert_true(fabs(lse[0] - rl[0]) < 1e-6);        // binary32 arithmetic only
    assert_true(fabs(out[1] - po[1]) > 7e-4);         // v's e4m3 step: 0.05005 → 0.05078
    assert_true(fabs(lse[0] - pl[0]) > 0.015);        // q's e4m3 step: 1 → 0.964
}

// Random bf16 inputs, GQA, causal: (a) amaxes 448·2^k (X powers of two, X·T8 binary32): the split
// reference against pp_attention_ref on pp_attn_fp8_dequantised's X·T8 within the sum of their
// bounds; (b) amaxes that make X not a power of two, σ given: fast against mpfr-plain likewise.
static void split_against_plain(void **state)
{
    (void)state;
    pp_attn_dims dm = {1, 12, 12, 2, 1, 8, 1};
    enum { NQ = 12 * 2 * 8, NKV = 12 * 8, NL = 2 * 12 };
    double q[NQ], k[NKV], v[NKV], qd[NQ], kd[NKV], vd[NKV];
    double ao[NQ], al[NL], bo[NQ], bl[NL], boa, bla, bob, blb;
    pp_test_rng r = {pp_test_seed() + 23};
    pp_attn_variant fv;
    fa3(&fv);
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < NQ; i++)
            q[i] = pp_round(PP_FMT_BF16, 3.0 * pp_test_rng_unit(&r) - 1.5, PP_RND_NE, 0);
        for (int i = 0; i < NKV; i++) {
            k[i] = pp_round(PP_FMT_BF16, 3.0 * pp_test_rng_unit(&r) - 1.5, PP_RND_NE, 0);
            v[i] = pp_round(PP_FMT_BF16, 1.6 * pp_test_rng_unit(&r) - 0.8, PP_RND_NE, 0);
        }
        if (pass == 0)
            q[5] = 3.5, k[7] = -1.75, v[3] = 0.875;  // X = 2^−7, 2^−8, 2^−9
        else
            q[5] = 3.0, k[7] = -1.625, v[3] = 0.8125;
        pp_attn_ref_opts o;
        opts(&o, &dm, PP_ATTN_REF_FAST);
        o.sigma_given = pass, o.sigma = 0.3;
        pp_error e = {0};
        assert_int_equal(pp_attention_ref_quantised(&o, &fv, q, k, v, ao, al, &boa, &bla, &e), 0);
        pp_attn_ref_bounds b;
        if (pass == 0) {
            assert_true(pp_attn_fp8_dequantised(q, NQ, qd) == 0x1p-7);
            assert_true(pp_attn_fp8_dequantised(k, NKV, kd) == 0x1p-8);
            assert_true(pp_attn_fp8_dequantised(v, NKV, vd) == 0x1p-9);
            assert_int_equal(pp_attention_ref(&o, qd, kd, vd, NULL, bo, bl, NULL, NULL, NULL, &b, &e), 0);
            bob = b.out, blb = b.lse;
        } else {
            double X = pp_attn_fp8_descale(pp_attn_fp8_tensor_scale(q, NQ));
            assert_true(X != ldexp(1.0, ilogb(X)));
            o.method = PP_ATTN_REF_MPFR_PLAIN;
            assert_int_equal(pp_attention_ref_quantised(&o, &fv, q, k, v, bo, bl, &bob, &blb, &e), 0);
        }
        int bad = 0;
        for (int i = 0; i < NQ; i++)
            bad += !(fabs(ao[i] - bo[i]) <= boa + bob);
        for (int i = 0; i < NL; i++)
            bad += !(fabs(al[i] - bl[i]) <= bla + blb) || isinf(al[i]) != isinf(bl[i]);
        if (bad)
            pp_test_report_seed();
        assert_int_equal(bad, 0);
        assert_true(boa < 1e-14 && bla < 1e-13);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hand_split),
        cmocka_unit_test(split_against_plain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
