// test_attention_te_bwd_cuda.c — fp8 = "te"'s backward on the GPU (kernels/cuda/
// attention_te_bwd_kernels.cu) against the CPU emulation, bit for bit: out, lse, dq, dk, dv and the
// amaxes, for the backward's knobs (te_grad_format, te_dq, te_ds_amax, a stale amax_history_dp) with
// forward knobs, mma sm90-fp8 (Hopper's FP8 accumulation in every GEMM: pp_attn_te_sm90), the
// delayed scales of dO, dq, dk, dv (amax_history_do/_dq/_dk/_dv), causal and not, GQA, more keys
// than one dQ tile and one promotion of 128. Skips with a message when there
// is no GPU (tests/test_attention_te_fp8_bwd.c runs the same rows and columns through a CPU loop
// device). Run: build/rel/tests/test_attention_te_bwd_cuda.
#include "test_util_cuda.h"

#include <math.h>

#include "cpu/attention_te_fp8_bwd.h"
#include "cuda/attention_te_bwd_cuda.h"

enum { B = 2, S = 37, SKV = 161, H = 4, HKV = 2, D = 16 };
enum { NQ = B * S * H * D, NKV = B * SKV * HKV * D, ROWS = B * H * S };

static void te_bwd_cuda_equals_cpu(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    static double q[NQ], k[NKV], vv[NKV], dout[NQ];
    static double oc[NQ], og[NQ], lc[ROWS], lg[ROWS], qc[NQ], qg[NQ], kc[NKV], kg[NKV], vc[NKV], vg[NKV];
    pp_test_rng r = {pp_test_seed() ^ 0x7EB};
    for (int i = 0; i < NQ; i++)
        q[i] = pp_round(PP_FMT_BF16, 4 * pp_test_rng_unit(&r) - 2, PP_RND_NE, 0),
        dout[i] = pp_round(PP_FMT_BF16, pp_test_rng_unit(&r) - 0.5, PP_RND_NE, 0);
    for (int i = 0; i < NKV; i++)
        k[i] = pp_round(PP_FMT_BF16, 4 * pp_test_rng_unit(&r) - 2, PP_RND_NE, 0),
        vv[i] = pp_round(PP_FMT_BF16, 2 * pp_test_rng_unit(&r) - 1, PP_RND_NE, 0);
    for (int cfg = 0; cfg < 24; cfg++) {
        pp_attn_variant v;
        memset(&v, 0, sizeof v);
        v.format = v.cp_accum = v.cp_grad_accum = PP_FMT_BF16;
        v.kernel = PP_ATTN_FLASH;
        v.fp8 = PP_ATTN_FP8_TE;
        v.te_grad_e4m3 = cfg & 1;
        v.te_dq = cfg & 2 ? PP_ATTN_TE_DQ_CHAIN : PP_ATTN_TE_DQ_BLOCK;
        v.te_exp = cfg & 4 ? PP_ATTN_TE_EXP2 : PP_ATTN_TE_EXP;
        v.te_scale_dp = cfg & 8 ? 448.0 / 0.01 : 0.0;
        v.te_softmax = cfg == 5 ? PP_ATTN_TE_TWO_PASS : PP_ATTN_TE_ONLINE;
        v.te_ds_amax = cfg == 6 || cfg == 7 || cfg == 3;
        v.mma = cfg >= 16 && cfg != 21 ? PP_ATTN_FP8_MMA_SM90 : PP_ATTN_FP8_MMA_CHAIN;
        v.te_scale_do = cfg == 20 || cfg == 21 ? 57344.0 / 0.05 : 0.0;  // stale dO: the largest saturate
        v.te_scale_dq = v.te_scale_dk = v.te_scale_dv = cfg == 22 ? 57344.0 / 0.01 : 0.0;
        pp_attn_dims dm = {.b = B, .s_q = S, .s_kv = SKV, .h = H, .h_kv = HKV, .d = D, .causal = cfg % 3 == 0};
        pp_error err;
        char msg[300] = "";
        pp_attn_te_bwd_amax ac, ag;
        assert_int_equal(pp_attn_te_fp8_bwd_cpu(&v, &dm, q, k, vv, dout, oc, lc, qc, kc, vc, 2, &ac, NULL, &err),
                         PP_OK);
        int rc = pp_attn_te_fp8_bwd_cuda(&v, &dm, q, k, vv, dout, og, lg, qg, kg, vg, &ag, NULL, msg, sizeof msg);
        if (rc)
            fail_msg("cfg %d: %s", cfg, msg);
        assert_memory_equal(oc, og, sizeof oc);
        assert_memory_equal(lc, lg, sizeof lc);
        assert_memory_equal(qc, qg, sizeof qc);
        assert_memory_equal(kc, kg, sizeof kc);
        assert_memory_equal(vc, vg, sizeof vc);
        assert_true(ac.amax_dp == ag.amax_dp && ac.amax_dq == ag.amax_dq && ac.amax_dk == ag.amax_dk &&
                    ac.amax_dv == ag.amax_dv);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(te_bwd_cuda_equals_cpu),
    };
    pp_test_report_seed();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
