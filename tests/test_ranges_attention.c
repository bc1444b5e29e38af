// test_ranges_attention.c — range diagnostics of the attention (kernels/attention_threads.h's
// notes, the CPU device's per-worker accumulators): recording changes no output bit, gives the
// same counters for any thread count and on every path of the CPU device's lanes (portable, each
// x86-64 level), and counts a hand-computed overflow in the right head only.
// Run: build/rel/tests/test_ranges_attention.
#include "test_util.h"

#include "cpu/attention.h"
#include "gemm.h"
#include "ranges.h"

typedef struct prob {
    pp_attn_dims dm;
    int64_t nq, nk;
    double *q, *k, *v, *dout;
    double *o[5];  // out, lse, dq, dk, dv
} prob;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDull;
    x ^= x >> 33;
    return x ^ (x >> 29);
}

// Values of f in (−2·scale, 2·scale), a pure function of (seed, i).
static void fill(double *x, int64_t n, pp_format_id f, double scale, uint64_t seed)
{
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = mix(seed ^ (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ull);
        x[i] = pp_round(f, ((double)(r >> 11) * 0x1p-53 - 0.5) * 4.0 * scale, PP_RND_NE, 0);
    }
}

static void prob_make(prob *P, pp_attn_dims dm, pp_format_id f)
{
    P->dm = dm;
    P->nq = dm.b * dm.s_q * dm.h * dm.d, P->nk = dm.b * dm.s_kv * dm.h_kv * dm.d;
    P->q = malloc((size_t)P->nq * 8), P->dout = malloc((size_t)P->nq * 8);
    P->k = malloc((size_t)P->nk * 8), P->v = malloc((size_t)P->nk * 8);
    fill(P->q, P->nq, f, 1.0, 1), fill(P->dout, P->nq, f, 1.0, 2);
    fill(P->k, P->nk, f, 1.0, 3), fill(P->v, P->nk, f, 1.0, 4);
    int64_t n[5] = {P->nq, dm.b * dm.h * dm.s_q, P->nq, P->nk, P->nk};
    for (int i = 0; i < 5; i++)
        P->o[i] = calloc((size_t)n[i], 8);
}

static void prob_free(prob *P)
{
    free(P->q), free(P->k), free(P->v), free(P->dout);
    for (int i = 0; i < 5; i++)
        free(P->o[i]);
}

static int prob_run_isa(prob *P, const pp_attn_variant *v, int threads, pp_ranges *R, int portable, pp_isa isa)
{
    pp_attn_cpu_opts o = {.ranges = R, .portable = portable, .isa = isa};
    pp_error e = {0};
    int rc = pp_attention_cpu_opts(v, &P->dm, 1, P->q, P->k, P->v, P->dout, P->o[0], P->o[1], P->o[2], P->o[3],
                                   P->o[4], threads, &o, &e);
    if (rc)
        fprintf(stderr, "  error: %s\n", e.msg);
    return rc;
}

static int prob_run(prob *P, const pp_attn_variant *v, int threads, pp_ranges *R)
{
    return prob_run_isa(P, v, threads, R, 0, PP_ISA_AUTO);
}

static pp_attn_variant variant(pp_format_id f, pp_attn_kernel kern)
{
    pp_attn_variant v;
    memset(&v, 0, sizeof v);
    v.format = f;
    v.kernel = kern;
    v.qk_layer_scaling = 1;
    v.cp_world = 1;
    v.cp_accum = v.cp_grad_accum = f;
    return v;
}

// The variants the checks sweep: unfused (storage softmax with layer scaling, fp32 with PB-Relax,
// naive with storage accumulation), flash, and the CP ring of each kernel.
static int sweep(pp_attn_variant *vs)
{
    int n = 0;
    vs[n] = variant(PP_FMT_FP16, PP_ATTN_UNFUSED), vs[n].softmax = PP_ATTN_SOFTMAX_STORAGE,
    vs[n++].qk_layer_scaling = 8;
    vs[n] = variant(PP_FMT_BF16, PP_ATTN_UNFUSED), vs[n++].max_subtract = PP_ATTN_MAX_PB_RELAX;
    vs[n] = variant(PP_FMT_FP16, PP_ATTN_UNFUSED), vs[n].softmax = PP_ATTN_SOFTMAX_NAIVE,
    vs[n++].accum = PP_ATTN_ACC_STORAGE;
    vs[n++] = variant(PP_FMT_BF16, PP_ATTN_FLASH);
    vs[n] = variant(PP_FMT_FP16, PP_ATTN_FLASH), vs[n++].cp_world = 2;
    vs[n] = variant(PP_FMT_BF16, PP_ATTN_UNFUSED), vs[n].cp_world = 2, vs[n].cp_accum = PP_FMT_FP32,
    vs[n++].cp_flavour = PP_ATTN_CP_TE_2024;
    return n;
}

// b, s_q, s_kv, h, h_kv, d, causal: the score launches have 2·4·64·64 threads, above the CPU
// device's threshold for running on several workers (ATTN_MIN_PARALLEL)
static const pp_attn_dims DIMS = {2, 64, 64, 4, 2, 8, 1};

// Outputs with and without diagnostics are memcmp-equal, variant by variant.
static void ranges_attention_change_no_bit(void **state)
{
    (void)state;
    pp_attn_variant vs[8];
    int n = sweep(vs);
    for (int i = 0; i < n; i++) {
        prob A, B;
        prob_make(&A, DIMS, vs[i].format), prob_make(&B, DIMS, vs[i].format);
        pp_range_cell *cells = malloc(PP_SITE_COUNT * DIMS.h * sizeof *cells);
        pp_ranges R;
        pp_ranges_init(&R, cells, DIMS.h);
        assert_int_equal(prob_run(&A, &vs[i], 2, NULL), 0);
        assert_int_equal(prob_run(&B, &vs[i], 2, &R), 0);
        int64_t n5[5] = {A.nq, DIMS.b * DIMS.h * DIMS.s_q, A.nq, A.nk, A.nk};
        for (int t = 0; t < 5; t++)
            if (memcmp(A.o[t], B.o[t], (size_t)n5[t] * 8)) {
                fprintf(stderr, "FAIL variant %d: output %d differs with range diagnostics on\n", i, t);
                fail();
            }
        int64_t noted = 0;
        for (int s = PP_SITE_ATTN_FIRST; s < PP_SITE_ATTN_END; s++)
            for (int h = 0; h < DIMS.h; h++)
                noted += cells[s * DIMS.h + h].count;
        assert_true(noted > 0);
        assert_true(cells[PP_SITE_ATTN_OUT * DIMS.h + 0].count > 0 && cells[PP_SITE_ATTN_DQ * DIMS.h + 3].count > 0);
        if (vs[i].cp_world > 1)
            assert_true(cells[PP_SITE_ATTN_CP_DQ_ACC * DIMS.h + 2].count > 0 &&
                        cells[PP_SITE_ATTN_CP_LSE_MERGE * DIMS.h + 1].count > 0);
        free(cells);
        prob_free(&A), prob_free(&B);
    }
}

// The counters do not depend on the thread count (the workers' accumulators merge exactly), nor
// on the run: two runs give the same bytes.
static void ranges_attention_deterministic(void **state)
{
    (void)state;
    pp_attn_variant vs[8];
    int n = sweep(vs);
    size_t bytes = PP_SITE_COUNT * DIMS.h * sizeof(pp_range_cell);
    for (int i = 0; i < n; i++) {
        pp_range_cell *c1 = malloc(bytes), *c3 = malloc(bytes), *c3b = malloc(bytes);
        pp_ranges R1, R3, R3b;
        pp_ranges_init(&R1, c1, DIMS.h), pp_ranges_init(&R3, c3, DIMS.h), pp_ranges_init(&R3b, c3b, DIMS.h);
        prob A;
        prob_make(&A, DIMS, vs[i].format);
        assert_int_equal(prob_run(&A, &vs[i], 1, &R1), 0);
        assert_int_equal(prob_run(&A, &vs[i], 3, &R3), 0);
        assert_int_equal(prob_run(&A, &vs[i], 3, &R3b), 0);
        assert_memory_equal(c1, c3, bytes);
        assert_memory_equal(c3, c3b, bytes);
        assert_memory_equal(R1.fmt, R3.fmt, sizeof R1.fmt);
        free(c1), free(c3), free(c3b);
        prob_free(&A);
    }
}

// The counters do not depend on the device's lanes either: the portable path (the scalar loops)
// and every x86-64 level give the bytes of the widest level's (the vector softmax notes each
// argument once, before its lanes overwrite the row), with an fp32 softmax of each format too.
static void ranges_attention_lanes_equal_portable(void **state)
{
    (void)state;
    pp_attn_variant vs[12];
    int n = sweep(vs);
    vs[n++] = variant(PP_FMT_BF16, PP_ATTN_UNFUSED);
    vs[n++] = variant(PP_FMT_FP16, PP_ATTN_UNFUSED);
    size_t bytes = PP_SITE_COUNT * DIMS.h * sizeof(pp_range_cell);
    const struct {
        int portable;
        pp_isa isa;
    } paths[] = {{1, PP_ISA_AUTO}, {0, PP_ISA_AVX2}, {0, PP_ISA_BASELINE}};
    for (int i = 0; i < n; i++) {
        pp_range_cell *c0 = malloc(bytes), *c1 = malloc(bytes);
        pp_ranges R0;
        pp_ranges_init(&R0, c0, DIMS.h);
        prob A;
        prob_make(&A, DIMS, vs[i].format);
        assert_int_equal(prob_run(&A, &vs[i], 2, &R0), 0);
        for (size_t p = 0; p < sizeof paths / sizeof *paths; p++) {
            pp_ranges R1;
            pp_ranges_init(&R1, c1, DIMS.h);
            assert_int_equal(prob_run_isa(&A, &vs[i], 2, &R1, paths[p].portable, paths[p].isa), 0);
            if (memcmp(c0, c1, bytes))
                fprintf(stderr, "FAIL variant %d: the range counters differ on path %d\n", i, (int)p);
            assert_memory_equal(c0, c1, bytes);
        }
        free(c0), free(c1);
        prob_free(&A);
    }
}

// Hand-computed: unfused fp16, softmax storage, L = 70, d = 4, no mask. Head 1's q and k are all
// 200: the score GEMM's acc = 4·200·200 = 160000, α_c = RN_32(1/(70·2)), S = RN_16(α_c·acc) ≈
// 1142.9 (finite), then x = RN_16(RN_32(S·70)) ≈ 80000 > 65520: every score of head 1 overflows at
// scaled_scores, none of head 0 (values ±1: |x| ≤ 2), and the scores site never does.
static void ranges_attention_known_overflow(void **state)
{
    (void)state;
    pp_attn_dims dm = {1, 8, 8, 2, 2, 4, 0};
    prob P;
    prob_make(&P, dm, PP_FMT_FP16);
    for (int64_t i = 0; i < P.nq; i++) {  // [b][s][h][d]: head = (i / d) % h
        int head = (int)((i / dm.d) % dm.h);
        P.q[i] = head == 1 ? 200.0 : 1.0;
        P.k[i] = head == 1 ? 200.0 : (i % 2 ? -1.0 : 1.0);
    }
    pp_attn_variant v = variant(PP_FMT_FP16, PP_ATTN_UNFUSED);
    v.softmax = PP_ATTN_SOFTMAX_STORAGE;
    v.qk_layer_scaling = 70;
    pp_range_cell cells[PP_SITE_COUNT * 2];
    pp_ranges R;
    pp_ranges_init(&R, cells, 2);
    assert_int_equal(prob_run(&P, &v, 2, &R), 0);
    const pp_range_cell *ss0 = &cells[PP_SITE_ATTN_SCALED_SCORES * 2], *ss1 = ss0 + 1;
    assert_int_equal(ss1->count, 64);
    assert_int_equal(ss1->overflow, 64);
    assert_int_equal(ss1->inf, 64);
    assert_int_equal(ss0->count, 64);
    assert_int_equal(ss0->overflow + ss0->inf + ss0->nan, 0);
    assert_true(ss0->amax <= 2.0);
    const pp_range_cell *sc1 = &cells[PP_SITE_ATTN_SCORES * 2 + 1];
    assert_int_equal(sc1->count, 64);
    assert_int_equal(sc1->overflow + sc1->inf, 0);
    double alpha_c = pp_gemm_round_kroot(PP_FMT_FP32, 70 * 70 * 4, 2);  // RN_32(1/140), as the variant's
    double S = pp_round(PP_FMT_FP16, pp_round(PP_FMT_FP32, alpha_c * 160000.0, PP_RND_NE, 0), PP_RND_NE, 0);
    assert_true(sc1->amax == S && sc1->min_nz == S);
    assert_int_equal(R.fmt[PP_SITE_ATTN_SCALED_SCORES], PP_FMT_FP16);
    assert_int_equal(cells[PP_SITE_ATTN_P * 2 + 1].nan, 64);  // Inf − Inf in the softmax: P is NaN
    assert_int_equal(cells[PP_SITE_ATTN_P * 2 + 0].nan, 0);
    prob_free(&P);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ranges_attention_change_no_bit),
        cmocka_unit_test(ranges_attention_deterministic),
        cmocka_unit_test(ranges_attention_lanes_equal_portable),
        cmocka_unit_test(ranges_attention_known_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
