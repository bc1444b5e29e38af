// test_attention_mma_order.c — the order band's MMA k-chunks in the attention's GEMMs
// (kernels/attention.h "Order band", MMA): the chunk walk visits every index once, in chunks of
// 16 in increasing order, the identity at seed 0; and FlashAttention-2's forward and backward and
// the unfused forward, written out here with every perturbation of an order seed applied by hand
// (each GEMM's chunk orders, the exp2 and log moves, the row-sum tree, the dQ block order), equal the
// emulation bit for bit at seeds 0, 3 and 11. Run: build/rel/tests/test_attention_mma_order
#include <math.h>

#include "test_util.h"

#include "attention_threads.h"
#include "cpu/attention.h"

// ---------------------------------------------------------------------------------------------
// Helpers

// The reduction index a chain over [lo, hi) of GEMM gemm reads at walk position q, q running over
// the 16-aligned chunks that meet [lo, hi); positions mapping outside [lo, hi) are skipped.
static int64_t mma_at(uint64_t seed, int gemm, int64_t q)
{
    int64_t a, c;
    pp_attn_mma_chunk(seed, gemm, q / 16, &a, &c);
    return q - q % 16 + (a * (q % 16) + c) % 16;
}

static int64_t ceil16(int64_t x)
{
    return (x + 15) / 16 * 16;
}

static void fill(uint64_t *s, double *x, int64_t n, double scale)
{
    for (int64_t i = 0; i < n; i++) {
        *s = *s * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = pp_round(PP_FMT_BF16, scale * ((double)(*s >> 11) * 0x1p-52 - 1.0), PP_RND_NE, 0);
    }
}

static pp_attn_variant variant(pp_attn_kernel kern, uint64_t seed)
{
    pp_attn_variant v;
    memset(&v, 0, sizeof v);
    v.format = PP_FMT_BF16, v.kernel = kern, v.qk_layer_scaling = 1, v.cp_world = 1;
    v.cp_accum = v.cp_grad_accum = PP_FMT_BF16;
    v.order_seed = seed;
    return v;
}

static const uint64_t seeds[] = {0, 3, 11};

// ---------------------------------------------------------------------------------------------
// The walk

// Every index of [lo, hi) exactly once, each in its own 16-chunk, chunks in increasing order;
// at seed 0 in increasing order; some seed moves some index; GEMMs draw different orders.
static void mma_walk_permutes_within_chunks(void **state)
{
    (void)state;
    int64_t ranges[][2] = {{0, 16}, {0, 64}, {3, 40}, {16, 17}, {5, 5}, {33, 160}, {0, 7}};
    int moved = 0, gemms_differ = 0;
    for (uint64_t seed = 0; seed < 12; seed++)
        for (int gemm = PP_ATTN_MMA_S; gemm <= PP_ATTN_MMA_DKV; gemm++)
            for (size_t k = 0; k < sizeof ranges / sizeof ranges[0]; k++) {
                int64_t lo = ranges[k][0], hi = ranges[k][1], n = 0, prev = lo, l;
                int seen[160] = {0};
                pp_attn_mma_walk w;
                for (pp_attn_mma_begin(&w, seed, gemm, lo, hi); pp_attn_mma_next(&w, &l); n++) {
                    assert_true(l >= lo && l < hi && !seen[l]);
                    seen[l] = 1;
                    assert_true(l / 16 >= prev / 16);  // chunks in increasing order
                    if (seed == 0)
                        assert_true(l == lo + n);
                    moved += l != lo + n;
                    prev = l;
                }
                assert_true(n == hi - lo);
            }
    for (uint64_t seed = 1; seed < 12; seed++)
        gemms_differ += mma_at(seed, PP_ATTN_MMA_S, 5) != mma_at(seed, PP_ATTN_MMA_PV, 5);
    assert_true(moved > 0 && gemms_differ > 0);
}

// A seeded dot product equals the nominal one of identically permuted operands (d = 40: two full
// chunks and a partial one), fp32 lanes and storage chains.
static void mma_dots_equal_nominal_on_permuted_operands(void **state)
{
    (void)state;
    enum { D = 40, M = 3 };
    double buf[D * (M + 1)];
    uint64_t s = 7;
    fill(&s, buf, D * (M + 1), 4.0);
    float a[D], xT[D * M], ap[D], xTp[D * M], acc[M], accp[M];
    for (int c = 0; c < D; c++) {
        a[c] = (float)buf[c];
        for (int l = 0; l < M; l++)
            xT[c * M + l] = (float)buf[D + c * M + l];
    }
    for (size_t si = 0; si < sizeof seeds / sizeof seeds[0]; si++) {
        pp_attn_launch L, L0;
        memset(&L, 0, sizeof L);
        L.d = D, L.order_seed = seeds[si];
        L0 = L, L0.order_seed = 0;
        for (int64_t q = 0, n = 0; q < ceil16(D); q++) {  // the operands in the walk's order
            int64_t c = mma_at(seeds[si], PP_ATTN_MMA_DP, q);
            if (c >= D)
                continue;
            ap[n] = a[c];
            for (int l = 0; l < M; l++)
                xTp[n * M + l] = xT[c * M + l];
            n++;
        }
        pp_attn_dots_T(&L, PP_ATTN_MMA_DP, a, xT, M, M, acc);
        pp_attn_dots_T(&L0, PP_ATTN_MMA_DP, ap, xTp, M, M, accp);
        for (int l = 0; l < M; l++)
            assert_true(pp_f32_bits(acc[l]) == pp_f32_bits(accp[l]));
        float x0[D], x0p[D];
        for (int c = 0; c < D; c++)
            x0[c] = xT[c * M], x0p[c] = xTp[c * M];
        double st = pp_attn_dot_storage(PP_FMT_BF16, a, x0, D, seeds[si], PP_ATTN_MMA_DP);
        double stp = pp_attn_dot_storage(PP_FMT_BF16, ap, x0p, D, 0, PP_ATTN_MMA_DP);
        assert_true(st == stp);
    }
}

// ---------------------------------------------------------------------------------------------
// FA2 written out, every perturbation by hand

// Forward, s = 40, d = 24, causal, tiles of 32 keys (block_n): per tile the scores (chain over c in
// S's chunk walk), then per 16-key chunk the p (exp2 moved as pp_attn_order_exp), the row sums in key
// order, o's chain over the chunk's keys in PV's walk; the row-sum tree pp_attn_order_row_sum.
static void mma_flash_forward_written_out(void **state)
{
    (void)state;
    enum { S = 40, D = 24, BN = 32 };
    pp_attn_dims dm = {1, S, S, 1, 1, D, 1};
    double *in = calloc(4 * S * D, 8), out[S * D], lse[S];
    uint64_t sd = 21;
    fill(&sd, in, 4 * S * D, 2.0);
    const double *Q = in, *K = in + S * D, *V = in + 2 * S * D;
    for (size_t si = 0; si < sizeof seeds / sizeof seeds[0]; si++) {
        uint64_t seed = seeds[si];
        pp_attn_variant v = variant(PP_ATTN_FLASH, seed);
        v.block_m = 64, v.block_n = BN;
        pp_error e = {0};
        assert_int_equal(pp_attention_cpu(&v, &dm, 0, Q, K, V, NULL, out, lse, NULL, NULL, NULL, 1, &e), PP_OK);
        pp_attn_scalars sc;
        pp_attn_scalars_make(&v, D, &sc);
        for (int64_t i = 0; i < S; i++) {
            float m = -INFINITY, l4[4] = {0}, o[D] = {0}, sv[BN], pc[S];
            for (int64_t j0 = i - i % BN; j0 >= 0; j0 -= BN) {
                int64_t j1 = j0 + BN < i + 1 ? j0 + BN : i + 1;
                float mn = m;
                for (int64_t j = j0; j < j1; j++) {
                    float a = 0.0f;
                    for (int64_t q = 0; q < ceil16(D); q++) {
                        int64_t c = mma_at(seed, PP_ATTN_MMA_S, q);
                        if (c < D)
                            a = fmaf((float)Q[i * D + c], (float)K[j * D + c], a);
                    }
                    sv[j - j0] = a;
                    mn = a > mn ? a : mn;
                }
                float corr = m == -INFINITY ? 0.0f : pp_attn_exp2f((m - mn) * sc.sl2), ms = mn * sc.sl2;
                for (int q = 0; q < 4; q++)
                    l4[q] = l4[q] * corr;
                for (int64_t c = 0; c < D; c++)
                    o[c] = o[c] * corr;
                for (int64_t cb = j0; cb < j1; cb += 16) {
                    int64_t hi = cb + 16 < j1 ? cb + 16 : j1;
                    for (int64_t j = cb; j < hi; j++) {
                        float p = pp_attn_order_exp(seed, PP_ATTN_ORDER_FWD_P, i, j,
                                                    pp_attn_exp2f(fmaf(sv[j - j0], sc.sl2, -ms)));
                        l4[(j % 8) / 2] += p;
                        pc[j] = pp_round_bf16_ne(p);
                    }
                    for (int64_t q = cb; q < cb + 16; q++) {
                        int64_t j = mma_at(seed, PP_ATTN_MMA_PV, q);
                        if (j < hi)
                            for (int64_t c = 0; c < D; c++)
                                o[c] = fmaf(pc[j], (float)V[j * D + c], o[c]);
                    }
                }
                m = mn;
            }
            float l = pp_attn_order_row_sum(seed, i, l4);
            for (int64_t c = 0; c < D; c++)
                assert_true(out[i * D + c] == (double)pp_round_bf16_ne(o[c] * (1.0f / l)));
            assert_true(lse[i] == (double)fmaf(m, sc.alpha32, pp_attn_order_log(seed, i, l, pp_logf(l))));
        }
    }
    free(in);
}

// Backward, s = 160, d = 24 (sm90: 128×128 blocks): s and dP chains over c in S_BWD's and DP's
// walks, p's exp2 moved; dv, dk per key over the query blocks from the last down, the rows of a
// block in DKV's walk; dq per key block in DQ's walk, the blocks' partials added in
// pp_attn_order_blocks' order.
static void mma_flash_backward_written_out(void **state)
{
    (void)state;
    enum { S = 160, D = 24, B = 128 };
    pp_attn_dims dm = {1, S, S, 1, 1, D, 1};
    double *in = calloc(4 * S * D, 8), *res = calloc(5 * S * D, 8);
    uint64_t sd = 5;
    fill(&sd, in, 4 * S * D, 2.0);
    const double *Q = in, *K = in + S * D, *V = in + 2 * S * D, *dO = in + 3 * S * D;
    double *out = res, *lse = res + S * D, *dq = res + 2 * S * D, *dk = res + 3 * S * D, *dv = res + 4 * S * D;
    float(*P)[S] = calloc(S, sizeof *P), (*dS)[S] = calloc(S, sizeof *dS);
    for (size_t si = 0; si < sizeof seeds / sizeof seeds[0]; si++) {
        uint64_t seed = seeds[si];
        pp_attn_variant v = variant(PP_ATTN_FLASH, seed);
        pp_error e = {0};
        assert_int_equal(pp_attention_cpu(&v, &dm, 1, Q, K, V, dO, out, lse, dq, dk, dv, 1, &e), PP_OK);
        pp_attn_scalars sc;
        pp_attn_scalars_make(&v, D, &sc);
        for (int i = 0; i < S; i++) {
            float Di = 0.0f;
            for (int c = 0; c < D; c++)
                Di = fmaf((float)dO[i * D + c], (float)out[i * D + c], Di);
            for (int j = 0; j <= i; j++) {
                float s = 0.0f, dp = 0.0f;
                for (int64_t q = 0; q < ceil16(D); q++) {
                    int64_t c = mma_at(seed, PP_ATTN_MMA_S_BWD, q), c2 = mma_at(seed, PP_ATTN_MMA_DP, q);
                    if (c < D)
                        s = fmaf((float)Q[i * D + c], (float)K[j * D + c], s);
                    if (c2 < D)
                        dp = fmaf((float)dO[i * D + c2], (float)V[j * D + c2], dp);
                }
                float p = pp_attn_order_exp(seed, PP_ATTN_ORDER_BWD_P, i, j,
                                            pp_attn_exp2f(fmaf(s, sc.sl2, -((float)lse[i] * 1.44269502f))));
                P[i][j] = pp_round_bf16_ne(p);
                dS[i][j] = pp_round_bf16_ne(p * (dp - Di));
            }
        }
        for (int j = 0; j < S; j++)
            for (int c = 0; c < D; c++) {
                float av = 0.0f, ak = 0.0f;
                for (int x0 = B; x0 >= 0; x0 -= B) {
                    int lo = x0 > j ? x0 : j, hi = x0 + B < S ? x0 + B : S;
                    for (int64_t q = lo - lo % 16; q < ceil16(hi); q++) {
                        int64_t i = mma_at(seed, PP_ATTN_MMA_DKV, q);
                        if (i < lo || i >= hi)
                            continue;
                        av = fmaf(P[i][j], (float)dO[i * D + c], av);
                        ak = fmaf(dS[i][j], (float)Q[i * D + c], ak);
                    }
                }
                assert_true(dv[j * D + c] == (double)pp_round_bf16_ne(av));
                assert_true(dk[j * D + c] == (double)pp_round_bf16_ne(sc.alpha32 * ak));
            }
        for (int i = 0; i < S; i++) {
            int64_t nb = i / B + 1, ba, bc;
            pp_attn_order_blocks(seed, i, nb, &ba, &bc);
            for (int c = 0; c < D; c++) {
                float acc = 0.0f;
                for (int64_t u = 0; u < nb; u++) {
                    int64_t j0 = (ba * u + bc) % nb * B, j1 = j0 + B < i + 1 ? j0 + B : i + 1;
                    float part = 0.0f;
                    for (int64_t q = j0; q < ceil16(j1); q++) {
                        int64_t j = mma_at(seed, PP_ATTN_MMA_DQ, q);
                        if (j < j1)
                            part = fmaf(dS[i][j], (float)K[j * D + c], part);
                    }
                    acc = u == 0 ? part : acc + part;
                }
                assert_true(dq[i * D + c] == (double)pp_round_bf16_ne(sc.alpha32 * acc));
            }
        }
    }
    free(P);
    free(dS);
    free(res);
    free(in);
}

// Unfused forward (fp32 accumulation, fp32 softmax), s = 36, d = 20, causal: S_ij = RN_F(RN_32(α·acc))
// with acc over c in S's walk; P by the fp32 softmax; out = RN_F(chain over keys in PV's walk).
static void mma_unfused_forward_written_out(void **state)
{
    (void)state;
    enum { S = 36, D = 20 };
    pp_attn_dims dm = {1, S, S, 1, 1, D, 1};
    double *in = calloc(3 * S * D, 8), out[S * D], lse[S];
    uint64_t sd = 9;
    fill(&sd, in, 3 * S * D, 2.0);
    const double *Q = in, *K = in + S * D, *V = in + 2 * S * D;
    for (size_t si = 0; si < sizeof seeds / sizeof seeds[0]; si++) {
        uint64_t seed = seeds[si];
        pp_attn_variant v = variant(PP_ATTN_UNFUSED, seed);
        pp_error e = {0};
        assert_int_equal(pp_attention_cpu(&v, &dm, 0, Q, K, V, NULL, out, lse, NULL, NULL, NULL, 1, &e), PP_OK);
        pp_attn_scalars sc;
        pp_attn_scalars_make(&v, D, &sc);
        for (int64_t i = 0; i < S; i++) {
            float P[S], m = -INFINITY, sum = 0.0f;
            for (int64_t j = 0; j <= i; j++) {
                float a = 0.0f;
                for (int64_t q = 0; q < ceil16(D); q++) {
                    int64_t c = mma_at(seed, PP_ATTN_MMA_S, q);
                    if (c < D)
                        a = fmaf((float)Q[i * D + c], (float)K[j * D + c], a);
                }
                P[j] = pp_round_bf16_ne((float)(sc.alpha_c * (double)a));
                m = P[j] > m ? P[j] : m;
            }
            for (int64_t j = 0; j <= i; j++) {
                P[j] = pp_expf(P[j] - m);
                sum = sum + P[j];
            }
            for (int64_t j = 0; j <= i; j++)
                P[j] = pp_round_bf16_ne(P[j] / sum);
            for (int64_t c = 0; c < D; c++) {
                float acc = 0.0f;
                for (int64_t q = 0; q < ceil16(i + 1); q++) {
                    int64_t j = mma_at(seed, PP_ATTN_MMA_PV, q);
                    if (j <= i)
                        acc = fmaf(P[j], (float)V[j * D + c], acc);
                }
                assert_true(out[i * D + c] == (double)pp_round_bf16_ne(acc));
            }
            assert_true(lse[i] == (double)(m + pp_logf(sum)));
        }
    }
    free(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mma_walk_permutes_within_chunks),
        cmocka_unit_test(mma_dots_equal_nominal_on_permuted_operands),
        cmocka_unit_test(mma_flash_forward_written_out),
        cmocka_unit_test(mma_flash_backward_written_out),
        cmocka_unit_test(mma_unfused_forward_written_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
