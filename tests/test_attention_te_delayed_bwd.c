// test_attention_te_delayed_bwd.c — TE's delayed scaling in fp8 = "te"'s backward (kernels/attention.h
// "FP8 (fp8 = te)", "Backward:"; knobs amax_history_do, _dq, _dk, _dv): dO quantised with a stale
// scale by hand (e5m2's saturation at 57344 and its flush below 2^−17, ±0, NaN), each gradient's
// store taking its own history's scale and no other's, a history equal to this run's amax giving
// today's current scaling bit for bit, and the op's knobs: max over the window, most_recent, margin,
// te_grad_format's max_finite, the refusals.
// Run: make test (build/rel/tests/test_attention_te_delayed_bwd).
#include "test_util.h"

#include "attn_te_variant.h"

#include <math.h>

#include "attention_check.h"
#include "attention_fp8.h"
#include "attention_te_bwd_run.h"
#include "cpu/attention_te_fp8_bwd.h"
#include "ops/op.h"
#include "scaling.h"


// dO = (1, −3, 0.25, 2^−13, 0, −0, NaN) in e5m2 (max 57344 = 7·2^13, smallest subnormal 2^−16).
// A stale history amax 0.5: s = RN_32(57344/0.5) = 114688; 1·s and 3·s saturate to ±57344, 0.25·s =
// 28672 = 1.75·2^14 is a code; ±0 stay, NaN stays. A history amax 2^20: s = 57344·2^−20 = 7·2^−7,
// 2^−13·s = 7·2^−20 < 2^−17 (half the smallest subnormal): flushed to 0; 1·s = 0.0546875 = 1.75·2^−5
// a code; −3·s = −1.3125·2^−3 rounds to −1.25·2^−3 (two fraction bits). X_dO = RN_32(1/s) either
// way. Default: the current scale.
static void quantise_dout_stale_scale(void **state)
{
    (void)state;
    const double dout[7] = {1.0, -3.0, 0.25, 0x1p-13, 0.0, -0.0, NAN};
    double codes[7], s, a;
    pp_attn_variant v = attn_te_variant();
    v.te_scale_do = pp_delayed_scale(PP_FMT_E5M2, 0.5, 0);
    assert_true(v.te_scale_do == 114688.0);
    double x = pp_attn_te_quantise_dout(&v, 7, dout, codes, &s, &a);
    assert_true(s == 114688.0 && x == pp_tensor_scale_inv(114688.0) && isnan(a));
    assert_true(codes[0] == 57344.0 && codes[1] == -57344.0 && codes[2] == 28672.0);
    assert_true(codes[3] == 14.0);  // 114688·2^−13 = 14 = 1.75·2^3: a code
    assert_true(codes[4] == 0.0 && !signbit(codes[4]) && codes[5] == 0.0 && signbit(codes[5]) && isnan(codes[6]));
    v.te_scale_do = pp_delayed_scale(PP_FMT_E5M2, 0x1p20, 0);
    assert_true(v.te_scale_do == 7.0 * 0x1p-7);
    pp_attn_te_quantise_dout(&v, 4, dout, codes, &s, NULL);
    assert_true(codes[0] == 0.0546875 && codes[1] == -0.15625 && codes[3] == 0.0);
    // default (no history): the current scale of this dout's amax 3 (NaN left out of the finite part)
    v.te_scale_do = 0;
    pp_attn_te_quantise_dout(&v, 4, dout, codes, &s, &a);
    assert_true(a == 3.0 && s == pp_tensor_scale(PP_FMT_E5M2, 3.0) && codes[1] == -57344.0);
}

enum { B = 1, S = 21, SKV = 21, H = 2, HKV = 1, D = 8, NQ = B * S * H * D, NKV = B * SKV * HKV * D };

static double bf16(double x)
{
    return pp_round(PP_FMT_BF16, x, PP_RND_NE, 0);
}

static void inputs(double *q, double *k, double *v, double *dout)
{
    pp_test_rng r = {pp_test_seed() ^ 0xDE1A};
    for (int i = 0; i < NQ; i++)
        q[i] = bf16(4.0 * pp_test_rng_unit(&r) - 2.0), dout[i] = bf16(pp_test_rng_unit(&r) - 0.5);
    for (int i = 0; i < NKV; i++)
        k[i] = bf16(4.0 * pp_test_rng_unit(&r) - 2.0), v[i] = bf16(2.0 * pp_test_rng_unit(&r) - 1.0);
}

typedef struct run {
    double o[NQ], l[B * H * S], dq[NQ], dk[NKV], dv[NKV];
    pp_attn_te_bwd_amax am;
} run;

static void run_te(const pp_attn_variant *v, const double *q, const double *k, const double *vv, const double *dout,
                   run *r)
{
    pp_attn_dims dm = {.b = B, .s_q = S, .s_kv = SKV, .h = H, .h_kv = HKV, .d = D, .causal = 1};
    pp_error err;
    if (pp_attn_te_fp8_bwd_cpu(v, &dm, q, k, vv, dout, r->o, r->l, r->dq, r->dk, r->dv, 2, &r->am, NULL, &err))
        fail_msg("%s", err.msg);
}

static int same(const double *a, const double *b, int64_t n)
{
    return memcmp(a, b, sizeof(double) * (size_t)n) == 0;
}

// A history equal to this run's amax (algo max, margin 0) is today's current scaling: every output
// the same bits, for dO and each gradient, e5m2 and e4m3.
static void history_of_this_run_is_current(void **state)
{
    (void)state;
    static double q[NQ], k[NKV], vv[NKV], dout[NQ];
    static run cur, del;
    inputs(q, k, vv, dout);
    for (int e4 = 0; e4 < 2; e4++) {
        pp_attn_variant v = attn_te_variant();
        v.te_grad_e4m3 = e4;
        run_te(&v, q, k, vv, dout, &cur);
        pp_format_id f = e4 ? PP_FMT_E4M3 : PP_FMT_E5M2;
        v.te_scale_do = pp_delayed_scale(f, cur.am.amax_do, 0);
        v.te_scale_dq = pp_delayed_scale(f, cur.am.amax_dq, 0);
        v.te_scale_dk = pp_delayed_scale(f, cur.am.amax_dk, 0);
        v.te_scale_dv = pp_delayed_scale(f, cur.am.amax_dv, 0);
        assert_true(v.te_scale_do == cur.am.scale_do && v.te_scale_dv == cur.am.scale_dv);
        run_te(&v, q, k, vv, dout, &del);
        assert_true(same(cur.dq, del.dq, NQ) && same(cur.dk, del.dk, NKV) && same(cur.dv, del.dv, NKV));
        assert_true(same(cur.o, del.o, NQ));
    }
}

// Each store takes its own history's scale and leaves the others alone; the amaxes stay this run's
// (what TE folds into the next step's history). dq with a stale amax 2^−30 (scale 57344·2^30):
// every nonzero element saturates at ±57344, so dq = ±X·57344; dv with amax 2^40 (scale 7·2^−27):
// every |g|·s < 2^−17 flushes, dv all zero; dk current, bit-identical to the plain run.
static void each_store_its_own_history(void **state)
{
    (void)state;
    static double q[NQ], k[NKV], vv[NKV], dout[NQ];
    static run cur, del;
    inputs(q, k, vv, dout);
    pp_attn_variant v = attn_te_variant();
    run_te(&v, q, k, vv, dout, &cur);
    assert_true(cur.am.amax_dq < 64 && cur.am.amax_dv < 64 && cur.am.amax_dq > 0x1p-20);
    v.te_scale_dq = pp_delayed_scale(PP_FMT_E5M2, 0x1p-30, 0);
    v.te_scale_dv = pp_delayed_scale(PP_FMT_E5M2, 0x1p40, 0);
    assert_true(v.te_scale_dq == 57344.0 * 0x1p30 && v.te_scale_dv == 7.0 * 0x1p-27);
    run_te(&v, q, k, vv, dout, &del);
    assert_true(del.am.scale_dq == v.te_scale_dq && del.am.scale_dv == v.te_scale_dv);
    assert_true(del.am.amax_dq == cur.am.amax_dq && del.am.amax_dv == cur.am.amax_dv);
    double xq = pp_tensor_scale_inv(v.te_scale_dq);
    int64_t sat = 0;
    for (int i = 0; i < NQ; i++) {
        assert_true(del.dq[i] == 0.0 || fabs(del.dq[i]) == xq * 57344.0);
        assert_true(cur.dq[i] == 0.0 || del.dq[i] != 0.0);  // nothing the current scale kept is flushed
        sat += del.dq[i] != 0.0;
    }
    assert_true(sat > NQ / 2);
    for (int i = 0; i < NKV; i++)
        assert_true(del.dv[i] == 0.0);
    assert_true(same(cur.dk, del.dk, NKV) && same(cur.o, del.o, NQ));
    // dO's own history moves dq, dk, dv (all read dO8) but not the forward
    v = attn_te_variant();
    v.te_scale_do = 4.0 * cur.am.scale_do;  // amax thought 4x smaller: the largest dO saturate
    run_te(&v, q, k, vv, dout, &del);
    assert_true(del.am.scale_do == v.te_scale_do && same(cur.o, del.o, NQ));
    assert_false(same(cur.dq, del.dq, NQ) || same(cur.dv, del.dv, NKV));
}

// The op's knob table (src/ops/op_attention.c): every new knob a list knob with amax_history_dp's
// limits, named in the knob rules; the recipe it feeds by hand (max over the window, most_recent,
// margin, te_grad_format's max_finite). That a case's history reaches the run: tests/e2e/te_fp8_knobs.sh.
static void op_knobs(void **state)
{
    (void)state;
    const pp_op *op = pp_op_find("attention");
    const char *const names[5] = {"amax_history_dp", "amax_history_do", "amax_history_dq", "amax_history_dk",
                                  "amax_history_dv"};
    for (int i = 0; i < 5; i++) {
        int ki = pp_op_knob_index(op, names[i]);
        assert_true(ki >= 0);
        assert_string_equal(op->knobs[ki].def, "[]");
        assert_int_equal(op->knobs[ki].list_max, PP_KNOB_LIST_MAX);
    }
    assert_non_null(strstr(op->knob_rules, "amax_history_do"));
    // the recipe by hand: max over [0.5, 4] is 4, most_recent 0.5; e5m2 57344/4 = 14336, margin 1: 7168
    const double h[2] = {0.5, 4.0};
    assert_true(pp_delayed_scale(PP_FMT_E5M2, pp_delayed_amax(h, 2, PP_AMAX_MAX), 0) == 14336.0);
    assert_true(pp_delayed_scale(PP_FMT_E5M2, pp_delayed_amax(h, 2, PP_AMAX_MOST_RECENT), 0) == 114688.0);
    assert_true(pp_delayed_scale(PP_FMT_E5M2, pp_delayed_amax(h, 2, PP_AMAX_MAX), 1) == 7168.0);
    assert_true(pp_delayed_scale(PP_FMT_E4M3, pp_delayed_amax(h, 2, PP_AMAX_MAX), 0) == 112.0);
}

// A scale that is not finite and positive is refused (the op's recipe cannot make one; a caller can).
static void refusals(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 0, .s_q = 4, .s_kv = 4, .h = 1, .h_kv = 1, .d = 4, .causal = 0};
    char msg[300];
    for (int t = 0; t < 4; t++) {
        pp_attn_variant v = attn_te_variant();
        double *s[4] = {&v.te_scale_do, &v.te_scale_dq, &v.te_scale_dk, &v.te_scale_dv};
        *s[t] = t & 1 ? NAN : -1.0;
        assert_int_not_equal(pp_attn_check(&v, &dm, 1, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, msg,
                                           sizeof msg),
                             0);
        assert_non_null(strstr(msg, "amax_history_do"));
        *s[t] = 3.0;
        assert_int_equal(pp_attn_check(&v, &dm, 1, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, msg,
                                       sizeof msg),
                         0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quantise_dout_stale_scale),
        cmocka_unit_test(history_of_this_run_is_current),
        cmocka_unit_test(each_store_its_own_history),
        cmocka_unit_test(op_knobs),
        cmocka_unit_test(refusals),
    };
    pp_test_report_seed();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
