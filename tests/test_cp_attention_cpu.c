// test_cp_attention_cpu.c — the context-parallel ring simulation of kernels/cpu/attention.c:
// world 1 equals the plain kernel bit for bit; the ring's merges by hand on world 2; fp32
// accumulation never worse than storage accumulation against fp64; shape checks.
// Run: build/rel/tests/test_cp_attention_cpu
#include <math.h>

#include "test_util.h"

#include "cpu/attention.h"

// ---------------------------------------------------------------------------------------------
// Helpers

static void fill(pp_test_rng *r, pp_format_id f, double *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        double s = 0.0;
        for (int k = 0; k < 4; k++)
            s += (double)(pp_test_rng_next(r) >> 11) * 0x1p-53;
        x[i] = pp_round(f, (s - 2.0) * 1.7320508, PP_RND_NE, 0);
    }
}

typedef struct run {
    pp_attn_dims dm;
    double *q, *k, *v, *dout, *out, *lse, *dq, *dk, *dv;
} run;

static void run_init(run *R, pp_attn_dims dm, pp_format_id f, uint64_t seed)
{
    R->dm = dm;
    int64_t nq = dm.b * dm.s_q * dm.h * dm.d, nk = dm.b * dm.s_kv * dm.h_kv * dm.d;
    double **p[] = {&R->q, &R->dout, &R->out, &R->dq};
    for (int i = 0; i < 4; i++)
        *p[i] = calloc((size_t)nq, 8);
    double **pk[] = {&R->k, &R->v, &R->dk, &R->dv};
    for (int i = 0; i < 4; i++)
        *pk[i] = calloc((size_t)nk, 8);
    R->lse = calloc((size_t)(dm.b * dm.h * dm.s_q), 8);
    pp_test_rng r = {seed};
    fill(&r, f, R->q, nq);
    fill(&r, f, R->k, nk);
    fill(&r, f, R->v, nk);
    fill(&r, f, R->dout, nq);
}

static void run_free(run *R)
{
    double *p[] = {R->q, R->k, R->v, R->dout, R->out, R->lse, R->dq, R->dk, R->dv};
    for (int i = 0; i < 9; i++)
        free(p[i]);
}

static int run_exec(run *R, const pp_attn_variant *v, int threads, const pp_attn_cpu_opts *o)
{
    pp_error e = {0};
    int rc = pp_attention_cpu_opts(v, &R->dm, 1, R->q, R->k, R->v, R->dout, R->out, R->lse, R->dq,
                                   R->dk, R->dv, threads, o, &e);
    if (rc)
        fprintf(stderr, "  error: %s\n", e.msg);
    return rc;
}

static int same(const char *what, const double *a, const double *b, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], 8) != 0 && !(a[i] != a[i] && b[i] != b[i])) {
            fprintf(stderr, "  %s[%lld]: %a vs %a\n", what, (long long)i, a[i], b[i]);
            return 0;
        }
    return 1;
}

static pp_attn_variant variant(pp_format_id f, pp_attn_kernel kern, int world, pp_format_id acc)
{
    pp_attn_variant v;
    memset(&v, 0, sizeof v);
    v.format = f;
    v.kernel = kern;
    v.block_m = v.block_n = 64;
    v.qk_layer_scaling = 1;
    v.cp_world = world;
    v.cp_accum = v.cp_grad_accum = acc;
    return v;
}

// ---------------------------------------------------------------------------------------------
// Tests

static void cp_world1_equals_plain(void **state)
{
    (void)state;
    pp_attn_dims shapes[2] = {{2, 12, 12, 4, 2, 8, 1}, {1, 10, 10, 2, 2, 8, 0}};
    pp_attn_kernel kerns[2] = {PP_ATTN_FLASH, PP_ATTN_UNFUSED};
    pp_format_id accs[2] = {PP_FMT_BF16, PP_FMT_FP32};
    for (int si = 0; si < 2; si++)
        for (int kk = 0; kk < 2; kk++)
            for (int ai = 0; ai < 2; ai++) {
                run A, B;
                run_init(&A, shapes[si], PP_FMT_BF16, pp_test_seed() + 11);
                run_init(&B, shapes[si], PP_FMT_BF16, pp_test_seed() + 11);
                pp_attn_variant v = variant(PP_FMT_BF16, kerns[kk], 1, accs[ai]);
                v.block_n = 5;
                pp_attn_cpu_opts force = {.force_cp = 1, .portable = 0};
                assert_int_equal(run_exec(&A, &v, 1, NULL), 0);
                assert_int_equal(run_exec(&B, &v, 2, &force), 0);
                const pp_attn_dims *dm = &A.dm;
                int64_t nq = dm->b * dm->s_q * dm->h * dm->d, nk = dm->b * dm->s_kv * dm->h_kv * dm->d;
                assert_true(same("out", A.out, B.out, nq) && same("lse", A.lse, B.lse, dm->b * dm->h * dm->s_q));
                assert_true(same("dq", A.dq, B.dq, nq) && same("dk", A.dk, B.dk, nk) && same("dv", A.dv, B.dv, nk));
                run_free(&A);
                run_free(&B);
            }
}

// World 2, causal, s = 8 (c = 2): rank 0 holds chunks 0, 3; rank 1 chunks 1, 2. Rank 1's rows of
// chunk 1 (positions 2, 3) see keys 0..3 through two steps: step 0 (own KV, chunks 1, 2: keys 2,
// 3 visible causally) and step 1 (KV of rank 0, first chunk 0: keys 0, 1). Their out is merged by
// hand here from per-step kernel calls on the same rows.
static void cp_merge_by_hand_world2(void **state)
{
    (void)state;
    pp_attn_dims dm = {1, 8, 8, 1, 1, 4, 1};
    run R;
    run_init(&R, dm, PP_FMT_BF16, pp_test_seed() + 12);
    pp_attn_variant v = variant(PP_FMT_BF16, PP_ATTN_FLASH, 2, PP_FMT_BF16);
    assert_int_equal(run_exec(&R, &v, 1, NULL), 0);
    // the two partials of position 3 (row 1 of chunk 1), by plain flash calls:
    // step 0: q = positions 2, 3 against keys 2, 3, causal (the diagonal, local rows 0, 1)
    // step 1: q = position 3 against keys 0, 1, no mask
    pp_attn_variant p = variant(PP_FMT_BF16, PP_ATTN_FLASH, 1, PP_FMT_BF16);
    pp_attn_dims d0 = {1, 2, 2, 1, 1, 4, 1}, d1 = {1, 1, 2, 1, 1, 4, 0};
    double o0[8], l0[2], o1[4], l1[1];
    pp_error e;
    assert_int_equal(pp_attention_cpu(&p, &d0, 0, R.q + 2 * 4, R.k + 2 * 4, R.v + 2 * 4, NULL, o0, l0, NULL, NULL, NULL, 1, &e), 0);
    assert_int_equal(pp_attention_cpu(&p, &d1, 0, R.q + 3 * 4, R.k, R.v, NULL, o1, l1, NULL, NULL, NULL, 1, &e), 0);
    float lse = pp_attn_cp_lse_merge(PP_ATTN_CP_TE_MAIN, (float)l0[1], (float)l1[0]);
    assert_true(R.lse[3] == (double)lse);
    for (int c = 0; c < 4; c++) {
        float acc = pp_attn_cp_out_step(PP_FMT_BF16, 0.0f, (float)o0[4 + c], (float)l0[1], lse);
        acc = pp_attn_cp_out_step(PP_FMT_BF16, acc, (float)o1[c], (float)l1[0], lse);
        assert_true(R.out[3 * 4 + c] == (double)pp_round_bf16_ne(acc));
    }
    run_free(&R);
}

// cp_flavour te-2024 (TE before PR 821), world 2, causal, s = 8: rank 0 holds chunks 0 and 3
// (positions 0, 1, 6, 7). Position 7 sees step 0 (rank 0's own kv, local causal: positions 0, 1,
// 6, 7) and step 1 (rank 1's kv, chunks 1, 2: keys 2..5, no mask; a second-half step, i > rank).
// The lse merge runs in binary64 and is rounded once; step 0's out correction reads that fp32
// lse, step 1's the binary64 one (the stale view), its product and add in binary64.
static void cp_te2024_merge_by_hand(void **state)
{
    (void)state;
    pp_attn_dims dm = {1, 8, 8, 1, 1, 4, 1};
    run R;
    run_init(&R, dm, PP_FMT_BF16, pp_test_seed() + 14);
    pp_attn_variant v = variant(PP_FMT_BF16, PP_ATTN_FLASH, 2, PP_FMT_BF16);
    v.cp_flavour = PP_ATTN_CP_TE_2024;
    assert_int_equal(run_exec(&R, &v, 1, NULL), 0);
    pp_attn_variant p = variant(PP_FMT_BF16, PP_ATTN_FLASH, 1, PP_FMT_BF16);
    pp_attn_dims d0 = {1, 4, 4, 1, 1, 4, 1}, d1 = {1, 1, 4, 1, 1, 4, 0};
    double q0[16], k0[16], v0[16], o0[16], l0[4], o1[4], l1[1];
    const int pos[4] = {0, 1, 6, 7};
    for (int i = 0; i < 4; i++)
        for (int c = 0; c < 4; c++)
            q0[i * 4 + c] = R.q[pos[i] * 4 + c], k0[i * 4 + c] = R.k[pos[i] * 4 + c], v0[i * 4 + c] = R.v[pos[i] * 4 + c];
    pp_error e;
    assert_int_equal(pp_attention_cpu(&p, &d0, 0, q0, k0, v0, NULL, o0, l0, NULL, NULL, NULL, 1, &e), 0);
    assert_int_equal(pp_attention_cpu(&p, &d1, 0, R.q + 7 * 4, R.k + 2 * 4, R.v + 2 * 4, NULL, o1, l1, NULL, NULL, NULL, 1, &e), 0);
    double lse64 = pp_attn_cp_lse_merge64((double)(float)l0[3], (float)l1[0]);
    assert_true(R.lse[7] == (double)(float)lse64);
    for (int c = 0; c < 4; c++) {
        float acc = pp_attn_cp_out_step(PP_FMT_BF16, 0.0f, (float)o0[12 + c], (float)l0[3], (float)lse64);
        acc = pp_attn_cp_out_step64(PP_FMT_BF16, acc, (float)o1[c], (float)l1[0], lse64);
        assert_true(R.out[7 * 4 + c] == (double)pp_round_bf16_ne(acc));
    }
    run_free(&R);
}

// fp64 truth for the comparison below: the fp32-format plain kernel is within 2^−14 of the exact
// math (test_attention_cpu: attention_fp32_close_to_fp64), far below bf16's 2^−8.
static double max_abs_err(const double *a, const double *t, int64_t n)
{
    double m = 0.0;
    for (int64_t i = 0; i < n; i++)
        m = fmax(m, fabs(a[i] - t[i]));
    return m;
}

static void cp_fp32_accum_not_worse_than_storage(void **state)
{
    (void)state;
    pp_attn_dims dm = {1, 32, 32, 2, 2, 16, 1};
    run T, S, F;
    run_init(&T, dm, PP_FMT_BF16, pp_test_seed() + 13);
    run_init(&S, dm, PP_FMT_BF16, pp_test_seed() + 13);
    run_init(&F, dm, PP_FMT_BF16, pp_test_seed() + 13);
    pp_attn_variant t = variant(PP_FMT_FP32, PP_ATTN_FLASH, 1, PP_FMT_FP32);  // bf16 inputs are fp32 values
    assert_int_equal(run_exec(&T, &t, 1, NULL), 0);
    pp_attn_variant vs = variant(PP_FMT_BF16, PP_ATTN_FLASH, 4, PP_FMT_BF16);
    pp_attn_variant vf = variant(PP_FMT_BF16, PP_ATTN_FLASH, 4, PP_FMT_FP32);
    assert_int_equal(run_exec(&S, &vs, 1, NULL), 0);
    assert_int_equal(run_exec(&F, &vf, 1, NULL), 0);
    int64_t nq = dm.b * dm.s_q * dm.h * dm.d, nk = dm.b * dm.s_kv * dm.h_kv * dm.d;
    double es[4] = {max_abs_err(S.out, T.out, nq), max_abs_err(S.dq, T.dq, nq), max_abs_err(S.dk, T.dk, nk), max_abs_err(S.dv, T.dv, nk)};
    double ef[4] = {max_abs_err(F.out, T.out, nq), max_abs_err(F.dq, T.dq, nq), max_abs_err(F.dk, T.dk, nk), max_abs_err(F.dv, T.dv, nk)};
    for (int i = 0; i < 4; i++) {
        fprintf(stderr, "  tensor %d: max abs err storage accum %g, fp32 accum %g\n", i, es[i], ef[i]);
        assert_true(ef[i] <= es[i]);
    }
    run_free(&T);
    run_free(&S);
    run_free(&F);
}

static void cp_rejects_bad_shapes(void **state)
{
    (void)state;
    pp_attn_dims dm = {1, 12, 12, 1, 1, 4, 1}, dm2 = {1, 8, 16, 1, 1, 4, 1};
    run R;
    run_init(&R, dm, PP_FMT_BF16, 1);
    pp_attn_variant v = variant(PP_FMT_BF16, PP_ATTN_FLASH, 4, PP_FMT_BF16);
    pp_error e;
    assert_int_equal(pp_attention_cpu(&v, &dm, 0, R.q, R.k, R.v, NULL, R.out, R.lse, NULL, NULL, NULL, 1, &e), PP_ERR_INPUT);
    assert_int_equal(pp_attention_cpu(&v, &dm2, 0, R.q, R.k, R.v, NULL, R.out, R.lse, NULL, NULL, NULL, 1, &e), PP_ERR_INPUT);
    v = variant(PP_FMT_BF16, PP_ATTN_FLASH, 2, PP_FMT_FP16);
    assert_int_equal(pp_attention_cpu(&v, &dm, 0, R.q, R.k, R.v, NULL, R.out, R.lse, NULL, NULL, NULL, 1, &e), PP_ERR_INPUT);
    run_free(&R);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cp_world1_equals_plain),
        cmocka_unit_test(cp_merge_by_hand_world2),
        cmocka_unit_test(cp_te2024_merge_by_hand),
        cmocka_unit_test(cp_fp32_accum_not_worse_than_storage),
        cmocka_unit_test(cp_rejects_bad_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
