// test_attention_fp8_mma.c — Hopper's FP8 accumulation in FA3's FP8 forward (fp8 = "fa3",
// mma = "sm90-fp8"; kernels/attention_fp8.h): hand cases of S = q·k over d and of P·V into the
// running O (the truncations kernels/sm90_fp8_mma.h models, tested against an H200 in
// tests/test_sm90_fp8_mma.c), the refusals, and the whole kernel: the default fp32 chain keeps its
// bits, the sm90 accumulation moves them, and a run on values where no truncation can act agrees.
#include "test_util.h"

#include <math.h>

#include "attention_check.h"
#include "attention_fp8.h"
#include "cpu/attention.h"

// S over d = 64 (two groups of 32): q·k = 448·448 + 1·1 = 200705 in the fp32 chain; the second
// group meets C = 200704 (exponent 17, grain 2^4) and drops the 1. With the 1 in the first group
// it is dropped too (grain 2^(16 − 13) = 8 from e(448) + e(448) = 16). Keys lie key-major (ld).
static void sm90_dots_truncate_over_d(void **state)
{
    (void)state;
    float q[64] = {0}, kT[64 * 3] = {0}, acc[3];
    q[0] = 448.0f, q[40] = 1.0f, q[5] = 1.0f;
    kT[0 * 3 + 0] = 448.0f, kT[40 * 3 + 0] = 1.0f;  // key 0: 448² + 1 (second group)
    kT[0 * 3 + 1] = 448.0f, kT[5 * 3 + 1] = 1.0f;   // key 1: 448² + 1 (same group)
    kT[5 * 3 + 2] = 0.5f, kT[40 * 3 + 2] = 0.25f;   // key 2: 0.5 + 0.25, exact
    pp_attn_fp8_sm90_dots(q, kT, 3, 64, 3, acc);
    assert_true(acc[0] == 200704.0f);
    assert_true(acc[1] == 200704.0f);
    assert_true(acc[2] == 0.75f);
}

// P·V into the running O: o = 4096 (a rescaled accumulator), products 256·16 = 4096 and 1·0.25:
// E = 12, grain 2^-1, the 0.25 is dropped (the chain: 8192.25); an o of 0 keeps a lone 0.25.
static void sm90_pv_truncates_into_the_running_o(void **state)
{
    (void)state;
    float p[2] = {256.0f, 1.0f}, v0[2] = {16.0f, 0.0f}, v1[2] = {0.25f, 0.25f}, o[2] = {4096.0f, 0.0f};
    const float *rows[2] = {v0, v1};
    pp_attn_fp8_sm90_pv(p, rows, 2, o, 2);
    assert_true(o[0] == 8192.0f);
    assert_true(o[1] == 0.25f);
}

static void fa3(pp_attn_variant *v, pp_attn_fp8_mma mma)
{
    memset(v, 0, sizeof *v);
    v->format = v->cp_accum = v->cp_grad_accum = PP_FMT_BF16;
    v->kernel = PP_ATTN_FLASH;
    v->fp8 = PP_ATTN_FP8_FA3;
    v->mma = mma;
}

static void refusals(void **state)
{
    (void)state;
    pp_attn_variant v;
    fa3(&v, PP_ATTN_FP8_MMA_SM90);
    assert_null(pp_attn_fp8_mma_error(&v, 64));   // FA3's 160 keys: five groups of 32
    assert_null(pp_attn_fp8_mma_error(&v, 128));  // 224
    v.block_n = 48;
    assert_non_null(strstr(pp_attn_fp8_mma_error(&v, 64), "multiple of 32"));
    v.block_n = 64;
    assert_null(pp_attn_fp8_mma_error(&v, 64));
    v.fp8 = PP_ATTN_FP8_NONE;
    assert_non_null(strstr(pp_attn_fp8_mma_error(&v, 64), "fp8 = \"fa3\""));
    fa3(&v, PP_ATTN_FP8_MMA_CHAIN);
    assert_null(pp_attn_fp8_mma_error(&v, 64));
    // through the kernels' check, as a case is read
    fa3(&v, PP_ATTN_FP8_MMA_SM90);
    v.fp8 = PP_ATTN_FP8_NONE;
    pp_attn_dims dm = {0, 4, 4, 1, 1, 64, 1};
    char e[256] = "";
    assert_int_not_equal(pp_attn_check(&v, &dm, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, e, sizeof e), 0);
    assert_non_null(strstr(e, "mma"));
}

// b 1, s 96 (causal), h 2, d 64, inputs uniform in (−1, 1) with head 1 of q ×30: the sm90
// accumulation moves some outputs off the chain's bits, within a tenth of the largest |out| (S's
// truncation is small, but it can flip P's e4m3 rounding, which moves out by whole P steps on the
// ×30 head's nearly one-hot rows), and the run does not depend on the thread count.
static void kernel_moves_some_bits_and_stays_close(void **state)
{
    (void)state;
    pp_attn_dims dm = {1, 96, 96, 2, 2, 64, 1};
    int64_t n = dm.b * dm.s_q * dm.h * dm.d, nl = dm.b * dm.h * dm.s_q;
    double *q = malloc(sizeof(double) * (size_t)n), *k = malloc(sizeof(double) * (size_t)n);
    double *vv = malloc(sizeof(double) * (size_t)n);
    double *o[3], *l[3];
    for (int r = 0; r < 3; r++)
        o[r] = malloc(sizeof(double) * (size_t)n), l[r] = malloc(sizeof(double) * (size_t)nl);
    pp_test_rng rng = {pp_test_seed() ^ 0x5390A};
    for (int64_t i = 0; i < n; i++) {
        double u = pp_test_rng_unit(&rng) * 2 - 1;
        q[i] = pp_round(PP_FMT_BF16, u * ((i / dm.d) % 2 == 1 ? 30.0 : 1.0), PP_RND_NE, 0);
        k[i] = pp_round(PP_FMT_BF16, pp_test_rng_unit(&rng) * 2 - 1, PP_RND_NE, 0);
        vv[i] = pp_round(PP_FMT_BF16, pp_test_rng_unit(&rng) * 2 - 1, PP_RND_NE, 0);
    }
    pp_attn_variant chain, sm90;
    fa3(&chain, PP_ATTN_FP8_MMA_CHAIN);
    fa3(&sm90, PP_ATTN_FP8_MMA_SM90);
    pp_error err = {0};
    assert_int_equal(pp_attention_cpu(&chain, &dm, 0, q, k, vv, NULL, o[0], l[0], NULL, NULL, NULL, 2, &err), PP_OK);
    assert_int_equal(pp_attention_cpu(&sm90, &dm, 0, q, k, vv, NULL, o[1], l[1], NULL, NULL, NULL, 2, &err), PP_OK);
    assert_int_equal(pp_attention_cpu(&sm90, &dm, 0, q, k, vv, NULL, o[2], l[2], NULL, NULL, NULL, 1, &err), PP_OK);
    int64_t moved = 0;
    double worst = 0, omax = 0;
    for (int64_t i = 0; i < n; i++) {
        assert_memory_equal(&o[1][i], &o[2][i], sizeof(double));  // 2 threads = 1 thread
        moved += o[0][i] != o[1][i];
        worst = fmax(worst, fabs(o[1][i] - o[0][i]));
        omax = fmax(omax, fabs(o[0][i]));
    }
    fprintf(stderr, "  moved %lld of %lld, max |sm90 - chain| %.3g, max |out| %.3g\n", (long long)moved, (long long)n,
            worst, omax);
    assert_true(moved > 0);
    assert_true(worst < 0.1 * omax);
    for (int r = 0; r < 3; r++)
        free(o[r]), free(l[r]);
    free(q), free(k), free(vv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sm90_dots_truncate_over_d),
        cmocka_unit_test(sm90_pv_truncates_into_the_running_o),
        cmocka_unit_test(refusals),
        cmocka_unit_test(kernel_moves_some_bits_and_stays_close),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
