// test_ranges_gemm_adamw.c — range diagnostics of the gemm and AdamW emulations: recording
// changes no output bit (memcmp, every gemm scheme; AdamW's vector path against the scalar loop
// that records), the counters do not depend on the thread count, and hand-computed answers: an
// fp16 accumulator that overflows at the fourth step, an MX block whose scale exponent is
// clamped, an AdamW bf16 θ that no update moves (every increment lost: the stall). The GPU's
// decomposition of the plain GEMM (kernels/cuda/gemm_kernels.cu: a prescale thread per element, a
// thread per output element with one lane, one accumulator) run on the CPU gives the emulation's
// counters exactly.
// Run: build/rel/tests/test_ranges_gemm_adamw.
#include "test_util.h"
#include "adamw_cases.h"

#include "cpu/adamw.h"
#include "cpu/gemm.h"
#include "gemm_thread.h"
#include "ranges.h"
#include "ranges_compare.h"

#define CELLS(heads) (PP_SITE_COUNT * (heads))

static uint64_t mixu(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDull;
    return x ^ (x >> 31);
}

static void fill(double *x, int64_t n, pp_format_id f, double scale, uint64_t seed)
{
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = mixu(seed ^ (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ull);
        x[i] = pp_round(f, ((double)(r >> 11) * 0x1p-53 - 0.5) * scale, PP_RND_NE, 0);
    }
}

// ---------------------------------------------------------------------------------------------
// gemm

static pp_gemm_variant gv(pp_format_id f, pp_gemm_accum a, pp_gemm_scale s, pp_scaling sc)
{
    pp_gemm_variant v;
    memset(&v, 0, sizeof v);
    v.format = f, v.accum = a, v.scale = s, v.scaling = sc;
    return v;
}

static int gemm_sweep(pp_gemm_variant *vs)
{
    int n = 0;
    vs[n++] = gv(PP_FMT_FP16, PP_GEMM_ACC_STORAGE, PP_GEMM_SCALE_POST, PP_SCALING_NONE);
    vs[n++] = gv(PP_FMT_FP16, PP_GEMM_ACC_FP32, PP_GEMM_SCALE_PRE, PP_SCALING_NONE);
    vs[n++] = gv(PP_FMT_BF16, PP_GEMM_ACC_STORAGE, PP_GEMM_SCALE_PRE_A, PP_SCALING_NONE);
    vs[n++] = gv(PP_FMT_E4M3, PP_GEMM_ACC_FP32, PP_GEMM_SCALE_POST, PP_SCALING_TENSOR);
    vs[n++] = gv(PP_FMT_E5M2, PP_GEMM_ACC_FP32, PP_GEMM_SCALE_POST, PP_SCALING_MX);
    vs[n++] = gv(PP_FMT_E2M1, PP_GEMM_ACC_FP32, PP_GEMM_SCALE_POST, PP_SCALING_NVFP4);
    return n;
}

// Every scheme: outputs with and without notes memcmp-equal; notes with 1 and 3 threads equal.
static void ranges_gemm_no_bit_and_threads(void **state)
{
    (void)state;
    pp_gemm_variant vs[8];
    int nv = gemm_sweep(vs);
    const int64_t B = 2, M = 20, N = 300, K = 70;  // N > one tile of 256 lanes, K over two MX blocks
    double *a = malloc(B * M * K * 8), *b = malloc(B * K * N * 8), *c0 = malloc(B * M * N * 8),
           *c1 = malloc(B * M * N * 8);
    for (int i = 0; i < nv; i++) {
        pp_format_id in = vs[i].scaling == PP_SCALING_NONE ? vs[i].format : PP_FMT_FP32;
        fill(a, B * M * K, in, 600.0, 11 + (uint64_t)i);
        fill(b, B * K * N, in, 600.0, 12 + (uint64_t)i);
        pp_range_cell x1[CELLS(1)], x3[CELLS(1)];
        pp_ranges R1, R3;
        pp_ranges_init(&R1, x1, 1), pp_ranges_init(&R3, x3, 1);
        pp_error e = {0};
        assert_int_equal(pp_gemm_cpu(&vs[i], B, M, N, K, a, b, c0, 3, &e), PP_OK);
        assert_int_equal(pp_gemm_cpu_ranges(&vs[i], B, M, N, K, a, b, c1, 1, &R1, &e), PP_OK);
        assert_memory_equal(c0, c1, (size_t)(B * M * N) * 8);
        assert_int_equal(pp_gemm_cpu_ranges(&vs[i], B, M, N, K, a, b, c1, 3, &R3, &e), PP_OK);
        assert_memory_equal(c0, c1, (size_t)(B * M * N) * 8);
        assert_memory_equal(x1, x3, sizeof x1);
        assert_int_equal(x1[PP_SITE_GEMM_C].count, B * M * N);
        assert_int_equal(x1[PP_SITE_GEMM_ACCUM].count, B * M * N);
        if (vs[i].scaling != PP_SCALING_NONE || vs[i].scale != PP_GEMM_SCALE_POST)
            assert_int_equal(x1[PP_SITE_GEMM_QUANT_A].count, B * M * K);
    }
    free(a), free(b), free(c0), free(c1);
}

// kernels/cuda/gemm_kernels.cu's pp_gemm_cuda_ranges with each launch a loop over its threads,
// last first, and the device accumulator R one host accumulator: the prescale threads note their
// element, the non-finite flag is taken over the prescaled operands, each output thread runs the
// loop order with one lane and notes (pp_gemm_row_notes).
static void gemm_loop_device(const pp_gemm_variant *v, int64_t B, int64_t M, int64_t N, int64_t K, const double *a,
                             const double *b, double *c, pp_ranges *R)
{
    pp_gemm_scalars sc = {0, 0, 0};
    assert_int_equal(pp_gemm_scalars_make(v, K, &sc), 0);
    int64_t na = B * M * K, nb = B * K * N;
    double *da = malloc((size_t)na * 8), *db = malloc((size_t)nb * 8);
    assert_true(da && db);
    memcpy(da, a, (size_t)na * 8), memcpy(db, b, (size_t)nb * 8);
    for (int64_t i = na - 1; v->scale != PP_GEMM_SCALE_POST && i >= 0; i--) {  // pp_gemm_prescale_kernel1
        double xi = da[i], yi = pp_gemm_prescale(v->format, sc.scale_a, xi);
        da[i] = yi;
        pp_range_note(R, PP_SITE_GEMM_QUANT_A, 0, v->format, sc.scale_a * xi, yi);
    }
    for (int64_t i = nb - 1; v->scale == PP_GEMM_SCALE_PRE && i >= 0; i--) {
        double xi = db[i], yi = pp_gemm_prescale(v->format, sc.scale_b, xi);
        db[i] = yi;
        pp_range_note(R, PP_SITE_GEMM_QUANT_B, 0, v->format, sc.scale_b * xi, yi);
    }
    int nonfinite = 0;  // pp_gemm_nonfinite_kernel1
    for (int64_t i = 0; i < na; i++)
        nonfinite |= !isfinite(da[i]);
    for (int64_t i = 0; i < nb; i++)
        nonfinite |= !isfinite(db[i]);
    for (int64_t t = B * M * N - 1; t >= 0; t--) {  // pp_gemm_kernel1
        int64_t j = t % N, i = (t / N) % M, bi = t / (M * N);
        float acc32;
        double acc64;
        pp_gemm_lane_acc acc = {&acc32, &acc64};
        double *crow = c + (bi * M + i) * N;
        pp_gemm_row_run(v->format, v->accum, sc.alpha_c, N, K, da + (bi * M + i) * K, db + bi * K * N, j, 1, crow,
                        acc, 0, 0);
        pp_gemm_row_notes(R, v->format, v->accum, sc.alpha_c, j, 1, acc, crow, !nonfinite);
    }
    free(da), free(db);
}

// The plain schemes (every accumulation and scale placement), finite inputs large enough to
// overflow fp16 somewhere, then with NaN and ±Inf among them (operands_finite 0): the loop
// device's counters equal the CPU emulation's (3 workers, merged), and C is the same bits.
static void ranges_gemm_gpu_decomposition_equal(void **state)
{
    (void)state;
    pp_gemm_variant vs[8];
    int nv = gemm_sweep(vs);
    const int64_t B = 2, M = 9, N = 300, K = 37;
    double *a = malloc(B * M * K * 8), *b = malloc(B * K * N * 8), *c0 = malloc(B * M * N * 8),
           *c1 = malloc(B * M * N * 8);
    assert_true(a && b && c0 && c1);
    for (int specials = 0; specials < 2; specials++)
        for (int i = 0; i < nv; i++) {
            if (vs[i].scaling != PP_SCALING_NONE)
                continue;  // the scaled GEMM's decomposition: tests/test_gemm_scaled_threads.c
            fill(a, B * M * K, vs[i].format, 600.0, 21 + (uint64_t)i);
            fill(b, B * K * N, vs[i].format, 600.0, 22 + (uint64_t)i);
            if (specials)
                a[5] = NAN, b[7] = INFINITY, a[B * M * K - 1] = -INFINITY;
            pp_range_cell cw[CELLS(1)], cg[CELLS(1)];
            pp_ranges Rw, Rg;
            pp_ranges_init(&Rw, cw, 1), pp_ranges_init(&Rg, cg, 1);
            pp_error e = {0};
            assert_int_equal(pp_gemm_cpu_ranges(&vs[i], B, M, N, K, a, b, c0, 3, &Rw, &e), PP_OK);
            gemm_loop_device(&vs[i], B, M, N, K, a, b, c1, &Rg);
            for (int64_t x = 0; x < B * M * N; x++)
                assert_true(pp_test_same_bits(c0[x], c1[x]) || (isnan(c0[x]) && isnan(c1[x])));
            char what[64];
            snprintf(what, sizeof what, "gemm variant %d specials %d", i, specials);
            assert_int_equal(pp_test_ranges_differ(&Rg, &Rw, PP_SITE_GEMM_FIRST, PP_SITE_GEMM_END, what), 0);
            assert_int_equal(cw[PP_SITE_GEMM_C].count, B * M * N);  // not vacuous
            if (specials)
                assert_true(cw[PP_SITE_GEMM_ACCUM].nan > 0);
        }
    free(a), free(b), free(c0), free(c1);
}

// fp16, storage accumulation, k = 4: every product is 200·100 = 20000, the chain 20000, 40000,
// 60000, then 80000 > 65520: ±Inf at the fourth step, an overflow inside the chain (the operands
// are finite); C = RN_16(½·Inf) passes the Inf on. fp32 accumulation: 80000 exact, scale
// RN_32(½·80000) = 40000, C = 40000 (within a factor 2 of 65504: headroom), no Inf anywhere.
static void ranges_gemm_accum_overflow(void **state)
{
    (void)state;
    double a[2 * 4], b[4 * 3], c[2 * 3];
    for (int i = 0; i < 8; i++)
        a[i] = i == 5 ? -200.0 : 200.0;  // row 1 has one negative product: 20000 + (−20000) + …
    for (int i = 0; i < 12; i++)
        b[i] = 100.0;
    pp_gemm_variant st = gv(PP_FMT_FP16, PP_GEMM_ACC_STORAGE, PP_GEMM_SCALE_POST, PP_SCALING_NONE);
    pp_range_cell x[CELLS(1)];
    pp_ranges R;
    pp_ranges_init(&R, x, 1);
    pp_error e = {0};
    assert_int_equal(pp_gemm_cpu_ranges(&st, 1, 2, 3, 4, a, b, c, 2, &R, &e), PP_OK);
    // row 0 (3 outputs) overflows; row 1: 20000 − 20000 + 20000 + 20000 = 40000, finite
    assert_int_equal(x[PP_SITE_GEMM_ACCUM].overflow, 3);
    assert_int_equal(x[PP_SITE_GEMM_ACCUM].inf, 3);
    assert_int_equal(x[PP_SITE_GEMM_C].inf, 3);
    assert_int_equal(x[PP_SITE_GEMM_C].overflow, 0);  // passed on, not made here
    assert_true(x[PP_SITE_GEMM_C].min_nz == 20000.0);  // ½·40000
    assert_int_equal(x[PP_SITE_GEMM_SCALE].count, 0);  // storage accumulation has no fp32 scale step
    pp_gemm_variant f32 = gv(PP_FMT_FP16, PP_GEMM_ACC_FP32, PP_GEMM_SCALE_POST, PP_SCALING_NONE);
    pp_ranges_init(&R, x, 1);
    assert_int_equal(pp_gemm_cpu_ranges(&f32, 1, 2, 3, 4, a, b, c, 1, &R, &e), PP_OK);
    assert_int_equal(x[PP_SITE_GEMM_ACCUM].inf + x[PP_SITE_GEMM_C].inf + x[PP_SITE_GEMM_SCALE].inf, 0);
    assert_true(x[PP_SITE_GEMM_ACCUM].amax == 80000.0 && x[PP_SITE_GEMM_SCALE].amax == 40000.0);
    assert_int_equal(x[PP_SITE_GEMM_C].near_max, 3);  // 40000 ≥ 65504/2; 20000 is not
    assert_int_equal(R.fmt[PP_SITE_GEMM_ACCUM], PP_FMT_FP32);
    assert_int_equal(R.fmt[PP_SITE_GEMM_C], PP_FMT_FP16);
}

// MX e4m3, k = 32 (one block per row): row 0 of A is 2^−140 everywhere, whose shared exponent
// floor(log2 amax) − 8 = −148 is clamped to E8M0's −127 (a block at the scale's limit); row 1 is
// 1.0 (exponent −8, inside). B's blocks (ones) are inside too.
static void ranges_gemm_block_scale_clamped(void **state)
{
    (void)state;
    double a[2 * 32], b[32 * 2], c[2 * 2];
    for (int i = 0; i < 64; i++) {
        a[i] = i < 32 ? 0x1p-140 : 1.0;
        b[i] = 1.0;
    }
    pp_gemm_variant v = gv(PP_FMT_E4M3, PP_GEMM_ACC_FP32, PP_GEMM_SCALE_POST, PP_SCALING_MX);
    pp_range_cell x[CELLS(1)];
    pp_ranges R;
    pp_ranges_init(&R, x, 1);
    pp_error e = {0};
    assert_int_equal(pp_gemm_cpu_ranges(&v, 1, 2, 2, 32, a, b, c, 1, &R, &e), PP_OK);
    assert_int_equal(x[PP_SITE_GEMM_BLOCK_SCALE_A].count, 2);
    assert_int_equal(x[PP_SITE_GEMM_BLOCK_SCALE_A].clamped, 1);
    assert_int_equal(x[PP_SITE_GEMM_BLOCK_SCALE_B].count, 2);
    assert_int_equal(x[PP_SITE_GEMM_BLOCK_SCALE_B].clamped, 0);
    assert_true(x[PP_SITE_GEMM_BLOCK_SCALE_A].min_nz == 0x1p-127 && x[PP_SITE_GEMM_BLOCK_SCALE_A].amax == 0x1p-8);
    // 2^−140 / 2^−127 = 2^−13 is below e4m3's smallest subnormal 2^−9: all 32 flushed to zero
    assert_int_equal(x[PP_SITE_GEMM_QUANT_A].underflow, 32);
    assert_int_equal(R.fmt[PP_SITE_GEMM_BLOCK_SCALE_A], PP_FMT_E8M0);
}

// The scaled GEMM's accumulation overflowing, MX e4m3, k = 32, m = 2, n = 1, α = 1: A's row 0 and B are
// 2^127 in lane 0 (zeros elsewhere), so both blocks take X = 2^(127−8) = 2^119 and quantise to
// 256; the block's chain gives p = 2^16, and its add RN_32(p·2^119·2^119) = RN_32(2^254) = +Inf:
// made inside the accumulation from finite operands, one overflow at accum. The descale (d = 1)
// and C pass that Inf on: inf 1, overflow 0 there. Row 1 of A (ones; X = 2^−8, q = 256) gives
// 256·256·2^−8·2^119 = 2^127, finite. A NaN in A's row 1 makes its acc NaN, not an overflow.
static void ranges_gemm_scaled_accum_overflow(void **state)
{
    (void)state;
    double a[2 * 32] = {0}, b[32] = {0}, c[2];
    a[0] = 0x1p127, b[0] = 0x1p127;
    for (int l = 0; l < 32; l++)
        a[32 + l] = 1.0;
    pp_gemm_variant v = gv(PP_FMT_E4M3, PP_GEMM_ACC_FP32, PP_GEMM_SCALE_POST, PP_SCALING_MX);
    v.alpha_given = 1, v.alpha = 1.0;
    pp_range_cell x[CELLS(1)];
    pp_ranges R;
    pp_ranges_init(&R, x, 1);
    pp_error e = {0};
    assert_int_equal(pp_gemm_cpu_ranges(&v, 1, 2, 1, 32, a, b, c, 2, &R, &e), PP_OK);
    assert_true(isinf(c[0]) && c[0] > 0);
    assert_true(pp_test_same_bits(c[1], 0x1p127));
    assert_int_equal(x[PP_SITE_GEMM_ACCUM].count, 2);
    assert_int_equal(x[PP_SITE_GEMM_ACCUM].inf, 1);
    assert_int_equal(x[PP_SITE_GEMM_ACCUM].overflow, 1);  // made here
    assert_int_equal(x[PP_SITE_GEMM_SCALE].inf, 1);
    assert_int_equal(x[PP_SITE_GEMM_SCALE].overflow, 0);  // passed on
    assert_int_equal(x[PP_SITE_GEMM_C].inf, 1);
    assert_int_equal(x[PP_SITE_GEMM_C].overflow, 0);
    a[33] = NAN;  // row 1's block scale is NaN: its acc NaN, nothing counted as an overflow
    pp_ranges_init(&R, x, 1);
    assert_int_equal(pp_gemm_cpu_ranges(&v, 1, 2, 1, 32, a, b, c, 1, &R, &e), PP_OK);
    assert_true(isnan(c[1]));
    assert_int_equal(x[PP_SITE_GEMM_ACCUM].nan, 1);
    assert_int_equal(x[PP_SITE_GEMM_ACCUM].overflow, 1);
}

// ---------------------------------------------------------------------------------------------
// adamw

static int adamw_run(const pp_adamw_variant *va, const pp_adamw_problem *pr, const double *th0, double *out,
                     int threads, pp_ranges *R)
{
    int64_t n = pr->n;
    pp_error e = {0};
    int rc = pp_adamw_cpu_ranges(va, pr, th0, out, out + n, out + 2 * n, out + 3 * n, NULL, threads,
                                 PP_ADAMW_PATH_VECTOR, R, &e);
    if (rc)
        fprintf(stderr, "adamw: %s\n", e.msg);
    return rc;
}

// A sample of the 432 variants on each gradient source: θ, m, v, c memcmp-equal with and without
// notes (the vector path against the scalar loop that records); 1 and 3 threads note the same.
static void ranges_adamw_no_bit_and_threads(void **state)
{
    (void)state;
    const int64_t n = 2100;  // 3 element blocks of 1024 (threads), lanes of 16 and a tail
    double *th0 = malloc(n * 8), *o0 = malloc(4 * n * 8), *o1 = malloc(4 * n * 8);
    pp_adamw_grad_kind kinds[3] = {PP_ADAMW_GRAD_SYNTHETIC, PP_ADAMW_GRAD_QUADRATIC, PP_ADAMW_GRAD_LINREG};
    // every 9th variant; all with PRECPROBE_TEST_MULTIPLIER ≥ 2, every 47th under a smaller one (sanitizers)
    const char *mult = getenv("PRECPROBE_TEST_MULTIPLIER");
    int step = pp_test_iters(1) > 1 ? 1 : mult && *mult && strtod(mult, NULL) < 1.0 ? 47 : 9;
    for (int vi = 0; vi < ADAMW_N_VARIANTS; vi += step)
        for (int kk = 0; kk < 3; kk++) {
            int64_t nn = kinds[kk] == PP_ADAMW_GRAD_LINREG ? 40 : n;
            pp_adamw_problem pr = adamw_case_problem(kinds[kk], nn, 5, 9, vi);
            pp_adamw_variant va = adamw_case_variant(vi);
            adamw_case_theta0(&pr, va.param, th0);
            pp_range_cell *x1 = malloc(CELLS(3) * sizeof *x1), *x3 = malloc(CELLS(3) * sizeof *x3);
            pp_ranges R1, R3;
            pp_ranges_init(&R1, x1, 3), pp_ranges_init(&R3, x3, 3);
            memset(o0, 0, 4 * n * 8), memset(o1, 0, 4 * n * 8);
            assert_int_equal(adamw_run(&va, &pr, th0, o0, 3, NULL), 0);
            assert_int_equal(adamw_run(&va, &pr, th0, o1, 1, &R1), 0);
            if (memcmp(o0, o1, (size_t)(4 * nn) * 8)) {
                fprintf(stderr, "FAIL variant %d, source %d: outputs differ with range notes\n", vi, kk);
                fail();
            }
            assert_int_equal(adamw_run(&va, &pr, th0, o1, 3, &R3), 0);
            assert_memory_equal(x1, x3, CELLS(3) * sizeof *x1);
            int64_t steps = 0;
            for (int h = 0; h < 3; h++)
                steps += x1[PP_SITE_ADAMW_THETA * 3 + h].count;
            assert_int_equal(steps, nn * 5);
            assert_int_equal(x1[PP_SITE_ADAMW_COMP * 3].count > 0, va.kahan);
            free(x1), free(x3);
        }
    free(th0), free(o0), free(o1);
}

// bf16 θ = 1 (ulp 2^−7), lr 1e-6: every increment (about lr) is far below half an ulp, so the θ
// store loses each non-zero one: update's underflow counts them, θ never moves (its amax and min
// are 1), and no counter says overflow or NaN. An fp32 θ (ulp 2^−23) keeps most of them.
static void ranges_adamw_bf16_stall(void **state)
{
    (void)state;
    const int64_t n = 64;
    const int T = 10;
    pp_adamw_problem pr = adamw_case_problem(PP_ADAMW_GRAD_SYNTHETIC, n, T, 0, 0);
    pr.hyper.lr = 1e-6, pr.hyper.weight_decay = 0.0, pr.schedule = PP_ADAMW_LR_CONSTANT;
    pp_adamw_variant va;
    memset(&va, 0, sizeof va);
    va.param = va.momentum = va.variance = va.compensation = PP_FMT_BF16;
    double th0[64], out[4 * 64];
    for (int i = 0; i < n; i++)
        th0[i] = 1.0;
    pp_range_cell x[CELLS(1)];
    pp_ranges R;
    pp_ranges_init(&R, x, 1);
    assert_int_equal(adamw_run(&va, &pr, th0, out, 2, &R), 0);
    const pp_range_cell *u = &x[PP_SITE_ADAMW_UPDATE], *th = &x[PP_SITE_ADAMW_THETA];
    assert_int_equal(u->count, n * T);
    for (int i = 0; i < n; i++)
        assert_true(out[i] == 1.0);
    // θ never moved (every realised change is 0), and the θ store lost every non-zero
    // increment; the few increments that are exactly 0 (a bf16 momentum that rounded to 0) are
    // not underflows: at most a tenth here
    assert_true(u->amax == 0.0 && isinf(u->min_nz));
    assert_true(u->underflow >= n * T - n * T / 10 && u->underflow <= n * T);
    assert_true(th->amax == 1.0 && th->min_nz == 1.0);
    for (int i = 0; i < n; i++)
        assert_true(out[i] == 1.0);
    for (int s = PP_SITE_ADAMW_FIRST; s < PP_SITE_ADAMW_END; s++)
        assert_int_equal(x[s].overflow + x[s].nan, 0);
    assert_int_equal(x[PP_SITE_ADAMW_COMP].count, 0);  // no Kahan
    int64_t bf16_lost = u->underflow;
    va.param = PP_FMT_FP32;
    pp_ranges_init(&R, x, 1);
    assert_int_equal(adamw_run(&va, &pr, th0, out, 2, &R), 0);
    assert_true(x[PP_SITE_ADAMW_UPDATE].underflow < bf16_lost / 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ranges_gemm_no_bit_and_threads),
        cmocka_unit_test(ranges_gemm_accum_overflow),
        cmocka_unit_test(ranges_gemm_block_scale_clamped),
        cmocka_unit_test(ranges_gemm_scaled_accum_overflow),
        cmocka_unit_test(ranges_gemm_gpu_decomposition_equal),
        cmocka_unit_test(ranges_adamw_no_bit_and_threads),
        cmocka_unit_test(ranges_adamw_bf16_stall),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
