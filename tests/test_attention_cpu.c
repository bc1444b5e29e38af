// test_attention_cpu.c — the CPU attention emulation (kernels/attention.h, kernels/cpu/attention.c):
// hand-worked knob examples, fp32 agreement with an fp64 evaluation, flash = FA2's forward written out
// softmax, backward vs finite differences, GQA, causal with s_q ≠ s_kv, fp16 overflow of the
// storage softmax, thread and SIMD invariance. Run: build/rel/tests/test_attention_cpu
#include <math.h>
#include <string.h>

#include "test_util.h"

#include "cpu/attention.h"

// ---------------------------------------------------------------------------------------------
// Helpers

static double rng_normalish(pp_test_rng *r)  // sum of uniforms: mean 0, sd ≈ 1
{
    double s = 0.0;
    for (int i = 0; i < 4; i++)
        s += (double)(pp_test_rng_next(r) >> 11) * 0x1p-53;
    return (s - 2.0) * 1.7320508;
}

static void fill(pp_test_rng *r, pp_format_id f, double *x, int64_t n, double scale)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = pp_round(f, scale * rng_normalish(r), PP_RND_NE, 0);
}

static int same_bits(double x, double y)
{
    if (x != x && y != y)
        return 1;
    return memcmp(&x, &y, sizeof x) == 0;
}

static int all_same(const char *what, const double *a, const double *b, int64_t n)
{
    int bad = 0;
    for (int64_t i = 0; i < n; i++)
        if (!same_bits(a[i], b[i])) {
            if (bad < 10) {
                fprintf(stderr, "  %s[%lld] differs\n", what, (long long)i);
                pp_test_print_double("got ", a[i]);
                pp_test_print_double("want", b[i]);
            }
            bad++;
        }
    return bad == 0;
}

// The tensors of one run.
typedef struct run {
    pp_attn_dims dm;
    double *q, *k, *v, *dout, *out, *lse, *dq, *dk, *dv;
} run;

static void run_init(run *R, pp_attn_dims dm, pp_format_id f, uint64_t seed, double scale)
{
    R->dm = dm;
    int64_t nq = dm.b * dm.s_q * dm.h * dm.d, nk = dm.b * dm.s_kv * dm.h_kv * dm.d;
    R->q = calloc((size_t)nq, 8);
    R->dout = calloc((size_t)nq, 8);
    R->out = calloc((size_t)nq, 8);
    R->dq = calloc((size_t)nq, 8);
    R->k = calloc((size_t)nk, 8);
    R->v = calloc((size_t)nk, 8);
    R->dk = calloc((size_t)nk, 8);
    R->dv = calloc((size_t)nk, 8);
    R->lse = calloc((size_t)(dm.b * dm.h * dm.s_q), 8);
    pp_test_rng r = {seed};
    fill(&r, f, R->q, nq, scale);
    fill(&r, f, R->k, nk, scale);
    fill(&r, f, R->v, nk, 1.0);
    fill(&r, f, R->dout, nq, 1.0);
}

static void run_copy_inputs(run *D, const run *S)
{
    int64_t nq = S->dm.b * S->dm.s_q * S->dm.h * S->dm.d, nk = S->dm.b * S->dm.s_kv * S->dm.h_kv * S->dm.d;
    memcpy(D->q, S->q, (size_t)nq * 8);
    memcpy(D->dout, S->dout, (size_t)nq * 8);
    memcpy(D->k, S->k, (size_t)nk * 8);
    memcpy(D->v, S->v, (size_t)nk * 8);
}

static void run_free(run *R)
{
    double *p[] = {R->q, R->k, R->v, R->dout, R->out, R->lse, R->dq, R->dk, R->dv};
    for (int i = 0; i < 9; i++)
        free(p[i]);
}

static int run_exec(run *R, const pp_attn_variant *v, int bwd, int threads, const pp_attn_cpu_opts *o)
{
    pp_error e = {0};
    int rc = pp_attention_cpu_opts(v, &R->dm, bwd, R->q, R->k, R->v, R->dout, R->out, R->lse, R->dq,
                                   R->dk, R->dv, threads, o, &e);
    if (rc)
        fprintf(stderr, "  error: %s\n", e.msg);
    return rc;
}

static int run_same(const run *A, const run *B, int bwd)
{
    const pp_attn_dims *dm = &A->dm;
    int64_t nq = dm->b * dm->s_q * dm->h * dm->d, nk = dm->b * dm->s_kv * dm->h_kv * dm->d;
    int ok = all_same("out", A->out, B->out, nq) && all_same("lse", A->lse, B->lse, dm->b * dm->h * dm->s_q);
    if (ok && bwd)
        ok = all_same("dq", A->dq, B->dq, nq) && all_same("dk", A->dk, B->dk, nk) &&
             all_same("dv", A->dv, B->dv, nk);
    return ok;
}

static pp_attn_variant variant(pp_format_id f, pp_attn_kernel kern)
{
    pp_attn_variant v;
    memset(&v, 0, sizeof v);
    v.format = f;
    v.kernel = kern;
    v.block_m = v.block_n = 64;
    v.qk_layer_scaling = 1;
    v.cp_world = 1;
    v.cp_accum = v.cp_grad_accum = f;
    return v;
}

// ---------------------------------------------------------------------------------------------
// An fp64 evaluation of the exact math (softmax attention, no rounding beyond binary64)

// out, lse of head (b, hh) for scale alpha; GQA and causal as the op defines them.
static void f64_forward(const pp_attn_dims *dm, double alpha, const double *q, const double *k,
                        const double *v, double *out, double *lse)
{
    int64_t d = dm->d, grp = dm->h / dm->h_kv;
    double *s = malloc((size_t)dm->s_kv * 8);
    for (int64_t b = 0; b < dm->b; b++)
        for (int64_t hh = 0; hh < dm->h; hh++)
            for (int64_t i = 0; i < dm->s_q; i++) {
                int64_t g = hh / grp, je = dm->causal ? i + dm->s_kv - dm->s_q : dm->s_kv - 1;
                if (je > dm->s_kv - 1)
                    je = dm->s_kv - 1;
                double m = -INFINITY, sum = 0.0;
                for (int64_t j = 0; j <= je; j++) {
                    double a = 0.0;
                    for (int64_t c = 0; c < d; c++)
                        a += q[((b * dm->s_q + i) * dm->h + hh) * d + c] * k[((b * dm->s_kv + j) * dm->h_kv + g) * d + c];
                    s[j] = alpha * a;
                    m = fmax(m, s[j]);
                }
                for (int64_t j = 0; j <= je; j++)
                    sum += exp(s[j] - m);
                double *o = out + ((b * dm->s_q + i) * dm->h + hh) * d;
                for (int64_t c = 0; c < d; c++) {
                    double a = 0.0;
                    for (int64_t j = 0; j <= je; j++)
                        a += exp(s[j] - m) / sum * v[((b * dm->s_kv + j) * dm->h_kv + g) * d + c];
                    o[c] = je < 0 ? 0.0 : a;
                }
                if (lse)
                    lse[(b * dm->h + hh) * dm->s_q + i] = je < 0 ? -INFINITY : m + log(sum);
            }
    free(s);
}

// Σ dout·out: the scalar whose gradient the backward computes.
static double f64_loss(const pp_attn_dims *dm, double alpha, const double *q, const double *k,
                       const double *v, const double *dout)
{
    int64_t n = dm->b * dm->s_q * dm->h * dm->d;
    double *o = malloc((size_t)n * 8), l = 0.0;
    f64_forward(dm, alpha, q, k, v, o, NULL);
    for (int64_t i = 0; i < n; i++)
        l += dout[i] * o[i];
    free(o);
    return l;
}

// max |a − b| / (1 + |b|)
static double max_rel(const double *a, const double *b, int64_t n)
{
    double m = 0.0;
    for (int64_t i = 0; i < n; i++)
        m = fmax(m, fabs(a[i] - b[i]) / (1.0 + fabs(b[i])));
    return m;
}

// ---------------------------------------------------------------------------------------------
// Hand-worked examples of single knobs

static void attention_scalars_hand_worked(void **state)
{
    (void)state;
    pp_attn_variant v = variant(PP_FMT_BF16, PP_ATTN_UNFUSED);
    pp_attn_scalars s;
    assert_int_equal(pp_attn_scalars_make(&v, 16, &s), 0);
    assert_true(s.alpha_c == 0.25 && s.alpha32 == 0.25f && s.s_q == 1.0f);  // 1/√16
    v.scale = PP_ATTN_SCALE_PRE;
    assert_int_equal(pp_attn_scalars_make(&v, 16, &s), 0);
    assert_true(s.s_q == 0.5f && s.s_k == 0.5f && s.alpha_c == 1.0);        // 16^(−1/4)
    v.scale = PP_ATTN_SCALE_PRE_Q;
    assert_int_equal(pp_attn_scalars_make(&v, 16, &s), 0);
    assert_true(s.s_q == 0.25f && s.s_k == 1.0f);
    v.scale = PP_ATTN_SCALE_POST;
    v.qk_layer_scaling = 4;  // α/L = 1/(4·4)
    assert_int_equal(pp_attn_scalars_make(&v, 16, &s), 0);
    assert_true(s.alpha_c == 0.0625 && s.L == 4.0f);
    v.qk_layer_scaling = 1;
    v.max_subtract = PP_ATTN_MAX_PB_RELAX;  // α/A = 1/(4·32)
    assert_int_equal(pp_attn_scalars_make(&v, 16, &s), 0);
    assert_true(s.alpha_c == 1.0 / 128 && s.A == 32.0f);
    v.accum = PP_ATTN_ACC_STORAGE;  // α in the compute type bf16: RN_bf16(1/√3·…)
    v.max_subtract = PP_ATTN_MAX_ROW;
    assert_int_equal(pp_attn_scalars_make(&v, 3, &s), 0);
    assert_true(s.alpha_c == pp_round(PP_FMT_BF16, 1.0 / sqrt(3.0), PP_RND_NE, 0));
}

// One query, two keys, d = 1, fp16: scores and softmax by hand.
// q = 2, k = (1, 3), v = (4, 8), α = 1 (sigma given).
// Scores 2, 6; softmax fp32: e = (exp(−4), 1), sum = 1 + exp(−4) ⊕;
// P = RN_fp16(e/sum); out = RN_fp16(P0·4 + P1·8) (fma chain).
static void attention_softmax_hand_worked(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 1, .s_q = 1, .s_kv = 2, .h = 1, .h_kv = 1, .d = 1, .causal = 0};
    double q[1] = {2.0}, k[2] = {1.0, 3.0}, vv[2] = {4.0, 8.0}, out[1], lse[1];
    pp_attn_variant v = variant(PP_FMT_FP16, PP_ATTN_UNFUSED);
    v.sigma_given = 1;
    v.sigma = 1.0;
    pp_error e;
    assert_int_equal(pp_attention_cpu(&v, &dm, 0, q, k, vv, NULL, out, lse, NULL, NULL, NULL, 1, &e), 0);
    float e0 = pp_expf(-4.0f), sum = (0.0f + e0) + 1.0f;
    float p0 = pp_round_fp16_ne(e0 / sum), p1 = pp_round_fp16_ne(1.0f / sum);
    float acc = fmaf(p1, 8.0f, fmaf(p0, 4.0f, 0.0f));
    assert_true(out[0] == (double)pp_round_fp16_ne(acc));
    assert_true(lse[0] == (double)(6.0f + pp_logf(sum)));
    // hand values: P = (0.01799, 0.982), out = 7.926 (fp16 step 2^−8·4 at 7.9)
    assert_true(fabs(out[0] - 7.928) < 4e-3);
    // max none: e = (exp(2), exp(6)), lse = log(sum)
    v.max_subtract = PP_ATTN_MAX_NONE;
    assert_int_equal(pp_attention_cpu(&v, &dm, 0, q, k, vv, NULL, out, lse, NULL, NULL, NULL, 1, &e), 0);
    float s2 = (0.0f + pp_expf(2.0f)) + pp_expf(6.0f);
    assert_true(lse[0] == (double)pp_logf(s2));
    // naive: e rounded to fp16, sum rounded per step
    v.max_subtract = PP_ATTN_MAX_ROW;
    v.softmax = PP_ATTN_SOFTMAX_NAIVE;
    assert_int_equal(pp_attention_cpu(&v, &dm, 0, q, k, vv, NULL, out, lse, NULL, NULL, NULL, 1, &e), 0);
    float n0 = pp_round_fp16_ne(pp_expf(-4.0f));
    float ns = pp_round_fp16_ne(pp_round_fp16_ne(0.0f + n0) + 1.0f);
    float np0 = pp_round_fp16_ne(n0 / ns), np1 = pp_round_fp16_ne(1.0f / ns);
    assert_true(out[0] == (double)pp_round_fp16_ne(fmaf(np1, 8.0f, fmaf(np0, 4.0f, 0.0f))));
    // pb-relax: α given 1 → GEMM alpha 1/32: S = (1/16, 3/16), M = 3/16, t = (S − M)·32 = (−4, 0)
    v.softmax = PP_ATTN_SOFTMAX_FP32;
    v.max_subtract = PP_ATTN_MAX_PB_RELAX;
    double out_pb[1], lse_pb[1];
    assert_int_equal(pp_attention_cpu(&v, &dm, 0, q, k, vv, NULL, out_pb, lse_pb, NULL, NULL, NULL, 1, &e), 0);
    assert_true(out_pb[0] == (double)pp_round_fp16_ne(acc));  // same probabilities as row max
    assert_true(lse_pb[0] == (double)((0.0f + pp_logf(sum)) + 6.0f));
}

// qk_layer_scaling in storage: scores 2000·L/L; with L = 64 the storage flavour's multiply by L
// overflows fp16 (2000·... > 65504) → +Inf → the row is NaN, exactly as torch's fp16 softmax; fp32
// flavour stays finite.
static void attention_fp16_overflow_storage_softmax(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 1, .s_q = 1, .s_kv = 2, .h = 1, .h_kv = 1, .d = 1, .causal = 0};
    double q[1] = {256.0}, k[2] = {256.0, 128.0}, vv[2] = {1.0, 2.0}, out[1], lse[1];
    pp_attn_variant v = variant(PP_FMT_FP16, PP_ATTN_UNFUSED);
    v.sigma_given = 1;
    v.sigma = 1.0;
    v.qk_layer_scaling = 64;
    // GEMM: acc = 65536 (exact in fp32); S = RN_fp16(65536/64) = 1024; 2048·... → S·64 = 65536 > max
    pp_error e;
    v.softmax = PP_ATTN_SOFTMAX_STORAGE;
    assert_int_equal(pp_attention_cpu(&v, &dm, 0, q, k, vv, NULL, out, lse, NULL, NULL, NULL, 1, &e), 0);
    assert_true(isnan(out[0]));
    v.softmax = PP_ATTN_SOFTMAX_FP32;
    assert_int_equal(pp_attention_cpu(&v, &dm, 0, q, k, vv, NULL, out, lse, NULL, NULL, NULL, 1, &e), 0);
    assert_true(isfinite(out[0]) && out[0] == 1.0);  // exp(32768 − 65536) = 0: P = (1, 0)
    // without layer scaling a score beyond 65504 already overflows in the GEMM's store: every
    // flavour then sees +Inf (and the row is NaN), as Megatron's baddbmm output would
    v.qk_layer_scaling = 1;
    q[0] = 512.0;
    assert_int_equal(pp_attention_cpu(&v, &dm, 0, q, k, vv, NULL, out, lse, NULL, NULL, NULL, 1, &e), 0);
    assert_true(isnan(out[0]));
}

// ---------------------------------------------------------------------------------------------
// Agreement with the exact math, flash = plain softmax, invariances

static void attention_fp32_close_to_fp64(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 2, .s_q = 9, .s_kv = 11, .h = 4, .h_kv = 2, .d = 8, .causal = 1};
    pp_attn_kernel kerns[2] = {PP_ATTN_UNFUSED, PP_ATTN_FLASH};
    for (int kk = 0; kk < 2; kk++) {
        run R;
        run_init(&R, dm, PP_FMT_FP32, pp_test_seed() + 1, 1.0);
        pp_attn_variant v = variant(PP_FMT_FP32, kerns[kk]);
        v.block_n = 4;
        assert_int_equal(run_exec(&R, &v, 0, 2, NULL), 0);
        int64_t n = dm.b * dm.s_q * dm.h * dm.d;
        double *o = malloc((size_t)n * 8), *l = malloc((size_t)(dm.b * dm.h * dm.s_q) * 8);
        f64_forward(&dm, 1.0 / sqrt((double)dm.d), R.q, R.k, R.v, o, l);
        // Bound: each output is a convex combination of v (|v| ≤ 4) through chains of length
        // ≤ d + s_kv + 10 binary32 roundings (score dot, exp, sum, division, P·V), each at most
        // 2^−24 relative, amplified at most by |s| ≤ 8·16·α (scores' exp sensitivity): 2^−24 ·
        // 40 · 4 · 8 < 2^−14. Observed errors are ~2^−21.
        double err_o = max_rel(R.out, o, n), err_l = max_rel(R.lse, l, dm.b * dm.h * dm.s_q);
        if (err_o > 0x1p-14 || err_l > 0x1p-14) {
            fprintf(stderr, "  kernel %d: out err %g, lse err %g\n", kk, err_o, err_l);
            fail();
        }
        free(o);
        free(l);
        run_free(&R);
    }
}

// Flash = FlashAttention-2's forward written out directly (kernels/attention.h, "Flash"): key tiles
// of 4 from the last one down (row 5 sees tiles [4, 6) then [0, 4)), raw scores, the running max
// scaled once by σlog2e, p = exp2(fma(s, σlog2e, −m·σlog2e)), the correction exp2((m_old −
// m_new)·σlog2e) on o and the 4 partial sums, key j into partial (j mod 8)/2, the quad all-reduce
// (l0 + l2) + (l1 + l3), out = RN_F(o·(1/l)), lse = fma(m, σ, log l).
static void attention_flash_is_fa2_forward(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 1, .s_q = 6, .s_kv = 6, .h = 1, .h_kv = 1, .d = 8, .causal = 1};
    run R;
    run_init(&R, dm, PP_FMT_BF16, pp_test_seed() + 2, 2.0);
    pp_attn_variant v = variant(PP_FMT_BF16, PP_ATTN_FLASH);
    v.block_n = 4;
    assert_int_equal(run_exec(&R, &v, 0, 1, NULL), 0);
    pp_attn_scalars sc;
    pp_attn_scalars_make(&v, dm.d, &sc);
    assert_true(sc.sl2 == (float)((double)sc.alpha32 * 1.4426950408889634));
    for (int64_t i = 0; i < dm.s_q; i++) {
        float m = -INFINITY, l4[4] = {0}, o[8] = {0};
        for (int64_t j0 = i - i % 4; j0 >= 0; j0 -= 4) {
            int64_t j1 = j0 + 4 < i + 1 ? j0 + 4 : i + 1;
            float s[4], mn = m;
            for (int64_t j = j0; j < j1; j++) {
                float a = 0.0f;
                for (int64_t c = 0; c < dm.d; c++)
                    a = fmaf((float)R.q[i * 8 + c], (float)R.k[j * 8 + c], a);
                s[j - j0] = a;
                mn = a > mn ? a : mn;
            }
            float corr = m == -INFINITY ? 0.0f : (float)exp2((double)((m - mn) * sc.sl2));
            for (int q = 0; q < 4; q++)
                l4[q] = l4[q] * corr;
            for (int64_t c = 0; c < 8; c++)
                o[c] = o[c] * corr;
            float ms = mn * sc.sl2;
            for (int64_t j = j0; j < j1; j++) {
                float p = (float)exp2((double)fmaf(s[j - j0], sc.sl2, -ms));
                l4[(j % 8) / 2] += p;
                for (int64_t c = 0; c < 8; c++)
                    o[c] = fmaf(pp_round_bf16_ne(p), (float)R.v[j * 8 + c], o[c]);
            }
            m = mn;
        }
        float l = (l4[0] + l4[2]) + (l4[1] + l4[3]);
        for (int64_t c = 0; c < 8; c++)
            assert_true(R.out[i * 8 + c] == (double)pp_round_bf16_ne(o[c] * (1.0f / l)));
        assert_true(R.lse[i] == (double)fmaf(m, sc.alpha32, pp_logf(l)));
    }
    run_free(&R);
}

// Flash backward = FlashAttention-2's written out (kernels/attention.h, "Backward"): at d = 8 on
// sm90 the blocks are 128×128, so 160 rows make two query blocks and two key blocks. dv, dk: per
// key, the query block [128, 160) first, then [0, 128), rows increasing within each; dq: per
// key block a chain from +0, the two partials added in fp32 (the atomicAdd order assumed).
static void attention_flash_is_fa2_backward(void **state)
{
    (void)state;
    enum { S = 160, D = 8, B = 128 };
    pp_attn_dims dm = {.b = 1, .s_q = S, .s_kv = S, .h = 1, .h_kv = 1, .d = D, .causal = 1};
    run R;
    run_init(&R, dm, PP_FMT_BF16, pp_test_seed() + 4, 2.0);
    pp_attn_variant v = variant(PP_FMT_BF16, PP_ATTN_FLASH);
    v.block_m = v.block_n = 0;  // the arch's (sm90)
    int tiles[4];
    pp_attn_flash_tiles(&v, D, 1, tiles);
    assert_true(tiles[0] == 128 && tiles[1] == 128 && tiles[2] == B && tiles[3] == B);
    assert_int_equal(run_exec(&R, &v, 1, 1, NULL), 0);
    pp_attn_scalars sc;
    pp_attn_scalars_make(&v, D, &sc);
    float(*P)[S] = calloc(S, sizeof *P), (*dS)[S] = calloc(S, sizeof *dS);
    for (int i = 0; i < S; i++) {
        float Di = 0.0f;
        for (int c = 0; c < D; c++)
            Di = fmaf((float)R.dout[i * D + c], (float)R.out[i * D + c], Di);
        for (int j = 0; j <= i; j++) {
            float s = 0.0f, dp = 0.0f;
            for (int c = 0; c < D; c++) {
                s = fmaf((float)R.q[i * D + c], (float)R.k[j * D + c], s);
                dp = fmaf((float)R.dout[i * D + c], (float)R.v[j * D + c], dp);
            }
            float p = pp_attn_exp2f(fmaf(s, sc.sl2, -((float)R.lse[i] * 1.44269502f)));
            P[i][j] = pp_round_bf16_ne(p);
            dS[i][j] = pp_round_bf16_ne(p * (dp - Di));
        }
    }
    for (int j = 0; j < S; j++)
        for (int c = 0; c < D; c++) {
            float av = 0.0f, ak = 0.0f;
            for (int x0 = B; x0 >= 0; x0 -= B)
                for (int i = x0 > j ? x0 : j; i < x0 + B && i < S; i++) {
                    av = fmaf(P[i][j], (float)R.dout[i * D + c], av);
                    ak = fmaf(dS[i][j], (float)R.q[i * D + c], ak);
                }
            assert_true(R.dv[j * D + c] == (double)pp_round_bf16_ne(av));
            assert_true(R.dk[j * D + c] == (double)pp_round_bf16_ne(sc.alpha32 * ak));
        }
    for (int i = 0; i < S; i++)
        for (int c = 0; c < D; c++) {
            float acc = 0.0f;
            for (int j0 = 0; j0 <= i; j0 += B) {
                float part = 0.0f;
                for (int j = j0; j <= i && j < j0 + B; j++)
                    part = fmaf(dS[i][j], (float)R.k[j * D + c], part);
                acc = j0 == 0 ? part : acc + part;
            }
            assert_true(R.dq[i * D + c] == (double)pp_round_bf16_ne(sc.alpha32 * acc));
        }
    free(P);
    free(dS);
    run_free(&R);
}

// FA2's launch templates' tiles (kernels/attention.h, pp_attn_flash_tiles): at d = 128 sm90 and
// sm80 forward 128×64, backward 64×128; sm86 forward 128×32 (64×64 causal), backward 64×64; at
// d = 64 128×128 (sm86's backward 64×128); block_m, block_n override the forward only.
static void attention_flash_tiles_by_arch(void **state)
{
    (void)state;
    static const struct { pp_attn_arch a; int d, causal, t[4]; } want[] = {
        {PP_ATTN_ARCH_SM90, 128, 1, {128, 64, 64, 128}}, {PP_ATTN_ARCH_SM80, 128, 0, {128, 64, 64, 128}},
        {PP_ATTN_ARCH_SM86, 128, 0, {128, 32, 64, 64}},  {PP_ATTN_ARCH_SM86, 128, 1, {64, 64, 64, 64}},
        {PP_ATTN_ARCH_SM90, 64, 1, {128, 128, 128, 128}}, {PP_ATTN_ARCH_SM86, 64, 0, {128, 128, 64, 128}},
        {PP_ATTN_ARCH_SM90, 256, 0, {64, 64, 64, 64}},   {PP_ATTN_ARCH_SM80, 256, 0, {128, 64, 64, 64}},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        pp_attn_variant v = variant(PP_FMT_BF16, PP_ATTN_FLASH);
        v.block_m = v.block_n = 0;
        v.arch = want[i].a;
        int t[4];
        pp_attn_flash_tiles(&v, want[i].d, want[i].causal, t);
        assert_memory_equal(t, want[i].t, sizeof t);
        v.block_m = 16, v.block_n = 8;
        pp_attn_flash_tiles(&v, want[i].d, want[i].causal, t);
        assert_true(t[0] == 16 && t[1] == 8 && t[2] == want[i].t[2] && t[3] == want[i].t[3]);
    }
}

// pp_attn_log1pf (today's TE lse merge) against binary64 log1p rounded once on [0, 1].
static void attention_log1pf_correctly_rounded(void **state)
{
    (void)state;
    uint64_t x = 0x243F6A8885A308D3u;
    for (int i = 0; i < 1000000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        float a = (float)ldexp((double)(x >> 40) * 0x1p-24, -(int)(x % 40));  // [0, 1), all scales
        assert_true(pp_f32_bits(pp_attn_log1pf(a)) == pp_f32_bits((float)log1p((double)a)));
    }
    assert_true(pp_attn_log1pf(1.0f) == (float)log1p(1.0) && pp_attn_log1pf(0.0f) == 0.0f);
}

// pp_attn_exp2f is 2^x correctly rounded: against binary64 exp2 rounded once (which double
// rounding could only break within 2^−29 ulp of a binary32 midpoint: none among these).
static void attention_exp2f_correctly_rounded(void **state)
{
    (void)state;
    uint64_t x = 0x9E3779B97F4A7C15u;
    for (int i = 0; i < 2000000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        float a = (float)((double)(x >> 11) * 0x1p-53 * 300.0 - 160.0);
        assert_true(pp_f32_bits(pp_attn_exp2f(a)) == pp_f32_bits((float)exp2((double)a)));
    }
    assert_true(pp_attn_exp2f(-INFINITY) == 0.0f && pp_attn_exp2f(0.0f) == 1.0f && pp_attn_exp2f(200.0f) == INFINITY);
    assert_true(pp_attn_exp2f(-149.0f) == 0x1p-149f && isnan(pp_attn_exp2f(NAN)));
}

// Threads and the portable (libm fmaf) path give the same bits as 1 thread with AVX2+FMA.
static void attention_threads_and_simd_invariant(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 2, .s_q = 13, .s_kv = 13, .h = 4, .h_kv = 2, .d = 24, .causal = 1};
    pp_attn_kernel kerns[2] = {PP_ATTN_UNFUSED, PP_ATTN_FLASH};
    for (int kk = 0; kk < 2; kk++) {
        run A, B;
        run_init(&A, dm, PP_FMT_BF16, pp_test_seed() + 3, 1.0);
        run_init(&B, dm, PP_FMT_BF16, pp_test_seed() + 3, 1.0);
        pp_attn_variant v = variant(PP_FMT_BF16, kerns[kk]);
        v.block_n = 5;
        pp_attn_cpu_opts po = {.force_cp = 0, .portable = 1};
        assert_int_equal(run_exec(&A, &v, 1, 1, NULL), 0);
        assert_int_equal(run_exec(&B, &v, 1, 3, &po), 0);
        assert_true(run_same(&A, &B, 1));
        run_free(&A);
        run_free(&B);
    }
}

// The vector lane steps at full width: d = 136 and 160 keys give chains longer than the device's
// buffer of 32 steps, runs of 128 columns or keys plus a masked rest, CP chunks of 40 keys; the
// vector device (AVX-512 or AVX2 where the CPU has them) and the portable fmaf loop, bit for bit;
// and each x86-64 level's lane step (AVX-512, AVX2, baseline) by name.
static void attention_wide_lanes_invariant(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 1, .s_q = 160, .s_kv = 160, .h = 2, .h_kv = 1, .d = 136, .causal = 1};
    pp_attn_kernel kerns[2] = {PP_ATTN_UNFUSED, PP_ATTN_FLASH};
    for (int kk = 0; kk < 2; kk++)
        for (int world = 1; world <= 2; world++) {
            if (world > 1 && kerns[kk] != PP_ATTN_FLASH)
                continue;
            run A, B;
            run_init(&A, dm, PP_FMT_BF16, pp_test_seed() + 9, 1.0);
            run_init(&B, dm, PP_FMT_BF16, pp_test_seed() + 9, 1.0);
            pp_attn_variant v = variant(PP_FMT_BF16, kerns[kk]);
            v.cp_world = world;
            v.cp_accum = v.cp_grad_accum = PP_FMT_FP32;
            v.block_n = 128;  // flash: key tiles of 128 lanes
            pp_attn_cpu_opts po = {.force_cp = 0, .portable = 1};
            assert_int_equal(run_exec(&A, &v, 1, 1, NULL), 0);
            assert_int_equal(run_exec(&B, &v, 1, 1, &po), 0);
            assert_true(run_same(&A, &B, 1));
            // each x86-64 level's lane step named (base/isa.h), not dispatched: AVX2 and the
            // baseline run here even where the CPU has AVX-512 (a level it lacks: the widest below)
            static const pp_isa lv[] = {PP_ISA_AVX512, PP_ISA_AVX2, PP_ISA_BASELINE};
            for (size_t j = 0; j < sizeof lv / sizeof lv[0]; j++) {
                run C;
                run_init(&C, dm, PP_FMT_BF16, pp_test_seed() + 9, 1.0);
                pp_attn_cpu_opts pl = {.force_cp = 0, .portable = 0, .isa = lv[j]};
                assert_int_equal(run_exec(&C, &v, 1, 2, &pl), 0);
                if (!run_same(&A, &C, 1))
                    fail_msg("attention lane step at level %s differs from the widest", pp_isa_name(lv[j]));
                run_free(&C);
            }
            run_free(&A);
            run_free(&B);
        }
}

// ---------------------------------------------------------------------------------------------
// Backward against central finite differences of the fp64 forward

// Tolerance: the emulation (fp32 format, fp32 everything) differs from the exact gradient by
// ~chain length · 2^−24 relative (< 2^−16 here), the central difference at h = 2^−20 by
// O(h²·f''') ≈ 1e−12 plus rounding 2^−52/h ≈ 4e−10: 1e−4 absolute-plus-relative is a wide margin
// that a wrong formula (missing D, missing α, wrong mask) exceeds by orders of magnitude.
static void fd_check(pp_attn_kernel kern, pp_attn_dims dm)
{
    run R;
    run_init(&R, dm, PP_FMT_FP32, pp_test_seed() + 4, 1.0);
    pp_attn_variant v = variant(PP_FMT_FP32, kern);
    v.block_n = 3;
    assert_int_equal(run_exec(&R, &v, 1, 1, NULL), 0);
    double alpha = 1.0 / sqrt((double)dm.d), h = 0x1p-20;
    double *ts[3] = {R.q, R.k, R.v}, *gs[3] = {R.dq, R.dk, R.dv};
    int64_t ns[3] = {dm.b * dm.s_q * dm.h * dm.d, dm.b * dm.s_kv * dm.h_kv * dm.d,
                     dm.b * dm.s_kv * dm.h_kv * dm.d};
    int bad = 0;
    for (int t = 0; t < 3; t++)
        for (int64_t i = 0; i < ns[t]; i++) {
            double x0 = ts[t][i];
            ts[t][i] = x0 + h;
            double lp = f64_loss(&dm, alpha, R.q, R.k, R.v, R.dout);
            ts[t][i] = x0 - h;
            double lm = f64_loss(&dm, alpha, R.q, R.k, R.v, R.dout);
            ts[t][i] = x0;
            double fd = (lp - lm) / (2 * h);
            if (fabs(fd - gs[t][i]) > 1e-4 * (1.0 + fabs(fd))) {
                if (bad++ < 10)
                    fprintf(stderr, "  tensor %d [%lld]: fd %.9g, got %.9g\n", t, (long long)i, fd, gs[t][i]);
            }
        }
    run_free(&R);
    if (bad) {
        pp_test_report_seed();
        fail();
    }
}

static void attention_backward_finite_difference(void **state)
{
    (void)state;
    pp_attn_dims a = {.b = 1, .s_q = 4, .s_kv = 4, .h = 2, .h_kv = 1, .d = 3, .causal = 1};   // causal, GQA 2:1
    pp_attn_dims b = {.b = 1, .s_q = 3, .s_kv = 5, .h = 2, .h_kv = 2, .d = 2, .causal = 1};   // causal, s_q < s_kv
    pp_attn_dims c = {.b = 1, .s_q = 5, .s_kv = 3, .h = 1, .h_kv = 1, .d = 2, .causal = 1};   // causal, s_q > s_kv: rows 0, 1 see nothing
    pp_attn_dims e = {.b = 2, .s_q = 3, .s_kv = 4, .h = 2, .h_kv = 2, .d = 3, .causal = 0};   // no mask
    pp_attn_dims all[4] = {a, b, c, e};
    for (int i = 0; i < 4; i++) {
        fd_check(PP_ATTN_FLASH, all[i]);
        fd_check(PP_ATTN_UNFUSED, all[i]);
    }
}

// Rows that see no key: out 0, lse −Inf, and no gradient.
static void attention_causal_empty_rows(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 1, .s_q = 5, .s_kv = 3, .h = 1, .h_kv = 1, .d = 4, .causal = 1};
    pp_attn_kernel kerns[2] = {PP_ATTN_UNFUSED, PP_ATTN_FLASH};
    for (int kk = 0; kk < 2; kk++) {
        run R;
        run_init(&R, dm, PP_FMT_BF16, pp_test_seed() + 5, 1.0);
        pp_attn_variant v = variant(PP_FMT_BF16, kerns[kk]);
        assert_int_equal(run_exec(&R, &v, 1, 1, NULL), 0);
        for (int i = 0; i < 2; i++) {
            assert_true(isinf(R.lse[i]) && R.lse[i] < 0);
            for (int c = 0; c < 4; c++)
                assert_true(R.out[i * 4 + c] == 0.0 && R.dq[i * 4 + c] == 0.0);
        }
        assert_true(isfinite(R.lse[2]));
        run_free(&R);
    }
}

// GQA: h = 4 over h_kv = 2 equals MHA with k, v repeated (forward bit for bit); dk, dv equal the
// fp32 sum over the group of the MHA per-head gradients, rounded once.
static void attention_gqa_equals_repeated_kv(void **state)
{
    (void)state;
    pp_attn_dims g = {1, 6, 6, 4, 2, 8, 1}, m = {1, 6, 6, 4, 4, 8, 1};
    pp_attn_kernel kerns[2] = {PP_ATTN_UNFUSED, PP_ATTN_FLASH};
    for (int kk = 0; kk < 2; kk++) {
        run G, M;
        run_init(&G, g, PP_FMT_BF16, pp_test_seed() + 6, 1.0);
        run_init(&M, m, PP_FMT_BF16, pp_test_seed() + 6, 1.0);
        run_copy_inputs(&M, &G);  // q, dout (sizes agree); now repeat kv
        for (int64_t s = 0; s < 6; s++)
            for (int64_t hh = 0; hh < 4; hh++)
                for (int64_t c = 0; c < 8; c++) {
                    M.k[(s * 4 + hh) * 8 + c] = G.k[(s * 2 + hh / 2) * 8 + c];
                    M.v[(s * 4 + hh) * 8 + c] = G.v[(s * 2 + hh / 2) * 8 + c];
                }
        pp_attn_variant v = variant(PP_FMT_BF16, kerns[kk]);
        v.block_n = 4;
        assert_int_equal(run_exec(&G, &v, 1, 1, NULL), 0);
        assert_int_equal(run_exec(&M, &v, 1, 1, NULL), 0);
        assert_true(all_same("out", G.out, M.out, 6 * 4 * 8) && all_same("dq", G.dq, M.dq, 6 * 4 * 8));
        for (int64_t s = 0; s < 6; s++)
            for (int64_t gg = 0; gg < 2; gg++)
                for (int64_t c = 0; c < 8; c++) {
                    float a = (0.0f + (float)M.dk[(s * 4 + 2 * gg) * 8 + c]) + (float)M.dk[(s * 4 + 2 * gg + 1) * 8 + c];
                    assert_true(G.dk[(s * 2 + gg) * 8 + c] == (double)pp_round_bf16_ne(a));
                }
        run_free(&G);
        run_free(&M);
    }
}

// Every unfused knob runs, fwd+bwd, and gives finite results on moderate inputs.
static void attention_all_knobs_run(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 1, .s_q = 7, .s_kv = 7, .h = 2, .h_kv = 1, .d = 8, .causal = 1};
    pp_format_id fs[3] = {PP_FMT_FP16, PP_FMT_BF16, PP_FMT_FP32};
    for (int fi = 0; fi < 3; fi++)
        for (int acc = 0; acc < 2; acc++)
            for (int sc = 0; sc < 3; sc++)
                for (int sm = 0; sm < 3; sm++)
                    for (int mx = 0; mx < 3; mx++) {
                        run R;
                        run_init(&R, dm, fs[fi], pp_test_seed() + 7, 1.0);
                        pp_attn_variant v = variant(fs[fi], PP_ATTN_UNFUSED);
                        v.accum = acc;
                        v.scale = sc;
                        v.softmax = sm;
                        v.max_subtract = mx;
                        v.qk_layer_scaling = 1 + (sm == 0) * 3;
                        assert_int_equal(run_exec(&R, &v, 1, 1, NULL), 0);
                        for (int64_t i = 0; i < 7 * 2 * 8; i++)
                            assert_true(isfinite(R.out[i]) && isfinite(R.dq[i]));
                        run_free(&R);
                    }
}

// An input that is not a value of the format is refused with the first such element in the order
// q, k, v, dout — at any thread count (the scan runs in chunks of 2^16 on the threads): q has two
// chunks here, the offending elements sit in q's second chunk, in k and in dout.
static void attention_names_first_bad_value(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 1, .s_q = 512, .s_kv = 512, .h = 4, .h_kv = 2, .d = 64, .causal = 1};
    int64_t nq = dm.s_q * dm.h * dm.d, nk = dm.s_kv * dm.h_kv * dm.d;
    double *q = calloc((size_t)nq, 8), *k = calloc((size_t)nk, 8), *v = calloc((size_t)nk, 8);
    double *dout = calloc((size_t)nq, 8), *out = calloc((size_t)nq, 8), *dq = calloc((size_t)nq, 8);
    double *dk = calloc((size_t)nk, 8), *dv = calloc((size_t)nk, 8), *lse = calloc((size_t)(dm.h * dm.s_q), 8);
    assert_true(q && k && v && dout && out && dq && dk && dv && lse);
    pp_attn_variant var = variant(PP_FMT_BF16, PP_ATTN_FLASH);
    k[nk - 3] = 0.1;  // not a bf16 value
    dout[7] = 0.1;
    const char *want[2] = {"attention: q[100001] = 0.10000000000000001 is not a bf16 value",
                           "attention: k[65533] = 0.10000000000000001 is not a bf16 value"};
    for (int round = 0; round < 2; round++) {
        q[100001] = round == 0 ? 0.1 : 0.0;
        for (int threads = 1; threads <= 4; threads += 3) {
            pp_error err = {0};
            assert_int_equal(pp_attention_cpu(&var, &dm, 1, q, k, v, dout, out, lse, dq, dk, dv, threads, &err),
                             PP_ERR_INPUT);
            if (strcmp(err.msg, want[round]) != 0) {
                fprintf(stderr, "FAIL: %d threads: \"%s\", want \"%s\"\n", threads, err.msg, want[round]);
                fail();
            }
        }
    }
    free(q), free(k), free(v), free(dout), free(out), free(dq), free(dk), free(dv), free(lse);
}

static void attention_rejects_bad_combinations(void **state)
{
    (void)state;
    pp_attn_dims dm = {.b = 1, .s_q = 6, .s_kv = 6, .h = 1, .h_kv = 1, .d = 4, .causal = 1};
    run R;
    run_init(&R, dm, PP_FMT_BF16, 1, 1.0);
    pp_attn_variant v = variant(PP_FMT_BF16, PP_ATTN_FLASH);
    v.softmax = PP_ATTN_SOFTMAX_STORAGE;
    pp_error e;
    assert_int_equal(pp_attention_cpu(&v, &dm, 0, R.q, R.k, R.v, NULL, R.out, R.lse, NULL, NULL, NULL, 1, &e), PP_ERR_INPUT);
    v = variant(PP_FMT_BF16, PP_ATTN_FLASH);
    v.cp_world = 4;  // 6 not divisible by 8
    assert_int_equal(pp_attention_cpu(&v, &dm, 0, R.q, R.k, R.v, NULL, R.out, R.lse, NULL, NULL, NULL, 1, &e), PP_ERR_INPUT);
    assert_non_null(strstr(e.msg, "2·cp_world"));
    run_free(&R);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(attention_scalars_hand_worked),
        cmocka_unit_test(attention_softmax_hand_worked),
        cmocka_unit_test(attention_fp16_overflow_storage_softmax),
        cmocka_unit_test(attention_fp32_close_to_fp64),
        cmocka_unit_test(attention_flash_is_fa2_forward),
        cmocka_unit_test(attention_flash_is_fa2_backward),
        cmocka_unit_test(attention_exp2f_correctly_rounded),
        cmocka_unit_test(attention_flash_tiles_by_arch),
        cmocka_unit_test(attention_log1pf_correctly_rounded),
        cmocka_unit_test(attention_threads_and_simd_invariant),
        cmocka_unit_test(attention_wide_lanes_invariant),
        cmocka_unit_test(attention_backward_finite_difference),
        cmocka_unit_test(attention_causal_empty_rows),
        cmocka_unit_test(attention_gqa_equals_repeated_kv),
        cmocka_unit_test(attention_all_knobs_run),
        cmocka_unit_test(attention_rejects_bad_combinations),
        cmocka_unit_test(attention_names_first_bad_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
