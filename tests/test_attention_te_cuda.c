// test_attention_te_cuda.c — fp8 = "te" on the GPU (kernels/cuda/attention_te_kernels.cu) against
// the CPU emulation, bit for bit, for each of cuDNN's unknowns' alternatives (te_softmax, te_exp,
// te_pv, the lazy-rescale threshold, tiles; mma sm90-fp8: Hopper's FP8 accumulation through
// pp_attn_te_sm90, per-tile and chain, tiles of 32 and 128), causal and not, GQA. Skips with a message when there is
// no GPU (tests/test_attention_te_fp8.c runs the same rows through a CPU loop device).
#include "test_util_cuda.h"

#include <math.h>

#include "cpu/attention_te_fp8.h"
#include "cuda/attention_te_cuda.h"

enum { B = 2, S = 29, SKV = 41, H = 4, HKV = 2, D = 16 };

static void te_cuda_equals_cpu(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    static double q[B * S * H * D], k[B * SKV * HKV * D], vv[B * SKV * HKV * D];
    static double oc[B * S * H * D], og[B * S * H * D], lc[B * H * S], lg[B * H * S];
    pp_test_rng r = {pp_test_seed() ^ 0x7E};
    for (int i = 0; i < B * S * H * D; i++)
        q[i] = pp_round(PP_FMT_BF16, 4 * pp_test_rng_unit(&r) - 2, PP_RND_NE, 0);
    for (int i = 0; i < B * SKV * HKV * D; i++)
        k[i] = pp_round(PP_FMT_BF16, 4 * pp_test_rng_unit(&r) - 2, PP_RND_NE, 0),
        vv[i] = pp_round(PP_FMT_BF16, 2 * pp_test_rng_unit(&r) - 1, PP_RND_NE, 0);
    for (int cfg = 0; cfg < 16; cfg++) {
        pp_attn_variant v;
        memset(&v, 0, sizeof v);
        v.format = v.cp_accum = v.cp_grad_accum = PP_FMT_BF16;
        v.kernel = PP_ATTN_FLASH;
        v.fp8 = PP_ATTN_FP8_TE;
        v.te_softmax = cfg & 1 ? PP_ATTN_TE_TWO_PASS : PP_ATTN_TE_ONLINE;
        v.te_exp = cfg & 2 ? PP_ATTN_TE_EXP2 : PP_ATTN_TE_EXP;
        v.te_pv = cfg & 4 ? PP_ATTN_TE_PV_CHAIN : PP_ATTN_TE_PV_BLOCK;
        v.block_n = cfg & 8 ? 8 : 0;
        v.te_rescale = (cfg & 1) ? 0 : cfg & 8 ? 3 : 0;
        if (cfg >= 12) {  // sm90-fp8 (block_n a multiple of 32): 12, 13 one tile; 14, 15 tiles of 32
            v.mma = PP_ATTN_FP8_MMA_SM90;
            v.block_n = cfg >= 14 ? 32 : 0;
        }
        pp_attn_dims dm = {B, S, SKV, H, HKV, D, cfg % 3 == 0};
        pp_error err;
        char msg[300] = "";
        assert_int_equal(pp_attn_te_fp8_cpu(&v, &dm, q, k, vv, oc, lc, 2, NULL, &err), PP_OK);
        int rc = pp_attn_te_fp8_cuda(&v, &dm, q, k, vv, og, lg, NULL, msg, sizeof msg);
        if (rc)
            fail_msg("cfg %d: %s", cfg, msg);
        assert_memory_equal(oc, og, sizeof oc);
        assert_memory_equal(lc, lg, sizeof lc);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(te_cuda_equals_cpu),
    };
    pp_test_report_seed();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
