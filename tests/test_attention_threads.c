// test_attention_threads.c — the attention's per-thread bodies (kernels/attention_threads.h) and
// its launch sequence (kernels/attention_plan.c) run the way the GPU runs them — one thread at a
// time (no lanes, the plain fmaf step), every block scratch slice a single (batch, kv head) —
// through a deliberately adversarial "loop device", against the CPU emulation (pp_attention_cpu:
// the same plan on the CPU device, in lanes with AVX2, its own slices and thread count) bit for
// bit: every knob (kernel, block_n, accumulate, scale, qk_layer_scaling, softmax, max_subtract,
// cp_world, cp_accum, cp_grad_accum), formats, causal and not, GQA, ragged shapes, rows that see
// no key, fp16 scores that overflow. tests/test_attention_cuda.c checks the GPU itself when one
// exists.
// The loop device runs each launch's threads in reverse order and fills new buffers with NaN
// garbage, so a thread reading another thread's output of the same launch, or a buffer element
// nobody wrote, shows up as a difference; its runs of one lane against the CPU device's vector
// lanes show that a run of lanes computes each thread's chain in the thread's order.
// Engine cublas: the loop device also has a GEMM (pp_attn_gemm's contract as a plain loop, fp32 or
// storage-format accumulation), so the whole cublas pipeline (operands, transposes, strides, GQA
// batching, alphas, masking) runs here too; cuBLAS's own order is the GPU's (test_attention_cuda.c).
#include "attention_cases.h"

#include <math.h>

#include "attention_plan.h"
#include "cpu/attention.h"

// ---------------------------------------------------------------------------------------------
// The loop device

typedef struct loop_dev {
    int64_t launches, threads;
    int fail_alloc_at;  // > 0: the n-th allocation fails (error path test)
    int allocs;
    int reverse;        // gemm: reduce l = k−1 … 0 instead of 0 … k−1
    int gemms, fail_gemm_at;
    // key_tile > 0: every launch reads and writes the key-major arrays in tiles of key_tile keys
    // (attention_threads.h, Key-major tiles) and runs its threads in runs of `lanes` (the plain
    // fmaf lane step, no vector device): tiles that split CP chunks, key runs and partial tiles
    int64_t key_tile;
    int lanes;
} loop_dev;

static int loop_alloc(void *ctx, void **p, size_t bytes)
{
    loop_dev *L = ctx;
    L->allocs++;
    *p = L->fail_alloc_at == L->allocs ? NULL : malloc(bytes);
    if (!*p)
        return 3;
    memset(*p, 0xFF, bytes);  // NaN garbage: reading an unwritten element poisons the result
    return 0;
}

static void loop_release(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

static int loop_copy(void *ctx, void *dst, const void *src, size_t bytes)
{
    (void)ctx;
    memcpy(dst, src, bytes);
    return 0;
}

static int loop_launch(void *ctx, const pp_attn_launch *L)
{
    loop_dev *D = ctx;
    D->launches++;
    D->threads += L->n;
    if (D->key_tile > 0) {
        pp_attn_launch T = *L;
        T.key_tile = D->key_tile;
        T.lanes = D->lanes;
        int64_t w = pp_attn_run_width(&T);
        for (int64_t i = (L->n + w - 1) / w - 1; i >= 0; i--)  // runs in reverse
            pp_attn_run(&T, i * w, (i + 1) * w <= L->n ? w : L->n - i * w);
        return 0;
    }
    for (int64_t t = L->n - 1; t >= 0; t--)
        pp_attn_thread(L, t);
    return 0;
}

// pp_attn_gemm on the CPU: per output element one chain over l (increasing, or decreasing when
// D->reverse) from +0, fma in binary32 (accum fp32, cuBLAS's 32F compute) or rounded to F after
// every step (accum storage, 16F compute for fp16), then RN_F(α·acc) as cuBLAS's epilogue stores it.
static int loop_gemm(void *ctx, const pp_attn_gemm *G)
{
    loop_dev *D = ctx;
    if (++D->gemms == D->fail_gemm_at)
        return 3;
    if (G->accum == PP_ATTN_ACC_STORAGE && G->f == PP_FMT_BF16)
        return 3;  // no such cuBLAS compute type: the plan must never ask
    for (int64_t p = 0; p < G->batch; p++)
        for (int64_t i = 0; i < G->m; i++)
            for (int64_t j = 0; j < G->n; j++) {
                float facc = 0.0f;
                double dacc = 0.0;
                for (int64_t s = 0; s < G->k; s++) {
                    int64_t l = D->reverse ? G->k - 1 - s : s;
                    float a = G->a[p * G->sa + (G->ta ? l * G->lda + i : i * G->lda + l)];
                    float b = G->b[p * G->sb + (G->tb ? j * G->ldb + l : l * G->ldb + j)];
                    if (G->accum == PP_ATTN_ACC_FP32)
                        facc = fmaf(a, b, facc);
                    else
                        dacc = pp_gemm_step_storage(G->f, a, b, dacc);
                }
                G->c[p * G->sc + i * G->ldc + j] = (float)(G->accum == PP_ATTN_ACC_FP32
                                                               ? pp_gemm_epilogue_fp32(G->f, G->alpha, facc)
                                                               : pp_gemm_epilogue_storage(G->f, G->alpha, dacc));
            }
    return 0;
}

static int plan_on_cpu(loop_dev *D, const pp_attn_variant *v, const pp_attn_dims *dm, int backward, const double *q,
                       const double *k, const double *vv, const double *dout, double *out, double *lse, double *dq,
                       double *dk, double *dv, char *err, size_t n)
{
    // scratch budget 1 float: every slice a single (batch, kv head) unit
    pp_attn_device dev = {.ctx = D, .alloc = loop_alloc, .release = loop_release, .upload = loop_copy, .download = loop_copy, .launch = loop_launch, .gemm = loop_gemm, .scratch_floats = 1};
    return pp_attn_plan_run(&dev, v, dm, backward, q, k, vv, dout, out, lse, dq, dk, dv, err, n);
}

// ---------------------------------------------------------------------------------------------
// Inputs and comparison

static int plan_run(const pp_attn_variant *v, const pp_attn_dims *dm, int backward, const double *q,
                    const double *k, const double *vv, const double *dout, double *out, double *lse, double *dq,
                    double *dk, double *dv, char *err, size_t n)
{
    loop_dev D = {0};
    return plan_on_cpu(&D, v, dm, backward, q, k, vv, dout, out, lse, dq, dk, dv, err, n);
}

static const attn_case_backend plan_backend = {"plan", plan_run, 1};

// The same plan with the key-major arrays in tiles of 5 keys (they split the CP shapes' chunks of
// 3 and 6 keys and the plain shapes' 12) and runs of 4 lanes, so that runs stop at tiles.
static int plan_tiles_run(const pp_attn_variant *v, const pp_attn_dims *dm, int backward, const double *q,
                          const double *k, const double *vv, const double *dout, double *out, double *lse, double *dq,
                          double *dk, double *dv, char *err, size_t n)
{
    loop_dev D = {.key_tile = 5, .lanes = 4};
    return plan_on_cpu(&D, v, dm, backward, q, k, vv, dout, out, lse, dq, dk, dv, err, n);
}

static const attn_case_backend plan_tiles_backend = {.name = "plan (key tiles 5, lanes 4)", .run = plan_tiles_run,
                                                     .sample = 1};

static void threads_flash_every_knob(void **state)
{
    (void)state;
    int fails = attn_case_flash_every_knob(&plan_backend);
    if (fails)
        pp_test_report_seed();
    assert_int_equal(fails, 0);
}

static void threads_unfused_every_knob(void **state)
{
    (void)state;
    int fails = attn_case_unfused_every_knob(&plan_backend);
    if (fails)
        pp_test_report_seed();
    assert_int_equal(fails, 0);
}

static void threads_sigma_and_longer(void **state)
{
    (void)state;
    assert_int_equal(attn_case_sigma_and_longer(&plan_backend), 0);
}

static void threads_special_inputs(void **state)
{
    (void)state;
    assert_int_equal(attn_case_special_inputs(&plan_backend), 0);
}

static void threads_order_seeds(void **state)
{
    (void)state;
    int fails = attn_case_order_seeds(&plan_backend);
    if (fails)
        pp_test_report_seed();
    assert_int_equal(fails, 0);
}

// Key-major tiles (attention_threads.h): the plan on the tiled loop device against the CPU device
// (tiles of PP_ATTN_MAX_LANES keys) bit for bit, flash and unfused, CP and plain, fp8 block scales.
static void threads_key_tiles(void **state)
{
    (void)state;
    int fails = attn_case_flash_every_knob(&plan_tiles_backend);
    fails += fails ? 0 : attn_case_unfused_every_knob(&plan_tiles_backend);
    fails += fails ? 0 : attn_case_fp8_fa3(&plan_tiles_backend);
    fails += fails ? 0 : attn_case_fp8_sm90(&plan_tiles_backend);
    if (fails)
        pp_test_report_seed();
    assert_int_equal(fails, 0);
}

// The plan rejects what the CPU rejects (same message), and passes a device failure on as 3.
static void threads_errors(void **state)
{
    (void)state;
    pp_attn_dims dm = {1, 4, 4, 2, 1, 3, 0};
    bufs B;
    bufs_init(&B, &dm, PP_FMT_FP16, 1.0, 5);
    pp_attn_variant v;
    memset(&v, 0, sizeof v);
    v.format = PP_FMT_FP16;
    v.kernel = PP_ATTN_FLASH;
    v.accum = PP_ATTN_ACC_STORAGE;
    char err[300] = "";
    pp_error e = {0};
    loop_dev D = {0};
    assert_int_equal(plan_on_cpu(&D, &v, &dm, 1, B.q, B.k, B.v, B.dout, B.o[0], B.l[0], B.dq[0], B.dk[0], B.dv[0],
                                 err, sizeof err),
                     2);
    assert_int_equal(pp_attention_cpu(&v, &dm, 1, B.q, B.k, B.v, B.dout, B.o[1], B.l[1], B.dq[1], B.dk[1], B.dv[1], 1,
                                      &e),
                     2);
    assert_string_equal(err, e.msg);
    v.accum = PP_ATTN_ACC_FP32;
    B.q[3] = 1.0 + 0x1p-20;  // not an fp16 value
    assert_int_equal(plan_on_cpu(&D, &v, &dm, 1, B.q, B.k, B.v, B.dout, B.o[0], B.l[0], B.dq[0], B.dk[0], B.dv[0],
                                 err, sizeof err),
                     2);
    assert_non_null(strstr(err, "q[3]"));
    B.q[3] = 0.5;
    v.cp_world = 3;  // s 4 is not divisible by 6
    assert_int_equal(plan_on_cpu(&D, &v, &dm, 1, B.q, B.k, B.v, B.dout, B.o[0], B.l[0], B.dq[0], B.dk[0], B.dv[0],
                                 err, sizeof err),
                     2);
    v.cp_world = 1;
    for (int at = 1; at <= 6; at++) {  // an allocation failing at any point: 3, nothing leaked (ASan)
        loop_dev F = {0};
        F.fail_alloc_at = at;
        assert_int_equal(plan_on_cpu(&F, &v, &dm, 1, B.q, B.k, B.v, B.dout, B.o[0], B.l[0], B.dq[0], B.dk[0],
                                     B.dv[0], err, sizeof err),
                         3);
    }
    bufs_free(&B);
}

// ---------------------------------------------------------------------------------------------
// Engine cublas on the loop device's GEMM
//
// Against ours (pp_attention_cpu, engine ours), two ways:
//  - the GEMM in increasing order: once the masked and dead-row entries are +0, each output is the
//    very chain ours computes (fma(+0, x, acc) = acc for finite x, and the storage step likewise),
//    so on these finite inputs the result is bit-identical: the plumbing (operands, transposes,
//    strides, GQA batching, alphas, masking, the backward's separate alpha) is exact;
//  - the GEMM in decreasing order, a different summation order as cuBLAS's is (cuBLAS's own order
//    cannot be emulated, and this does not pretend to): every output stays within CUBLAS_TOL units
//    of F's unit roundoff u of the tensor's largest magnitude (lse: of F's u too, its error comes
//    from the scores). Measured over 34 seeds: sweep worst 14 u, the longer fp16-storage case
//    (PB-Relax A 8, L 2, d 16) worst 36 u; the bound leaves room for other seeds.
#define CUBLAS_TOL 64.0

static int check_cublas(const pp_attn_variant *v, const pp_attn_dims *dm, const bufs *B, int backward, int tolerance,
                        const char *what, double *worst)
{
    pp_attn_variant ours = *v;
    ours.engine = PP_ATTN_ENGINE_OURS;
    pp_error e = {0};
    if (pp_attention_cpu(&ours, dm, backward, B->q, B->k, B->v, B->dout, B->o[1], B->l[1], B->dq[1], B->dk[1],
                         B->dv[1], 1, &e)) {
        fprintf(stderr, "cpu: %s: %s\n", what, e.msg);
        return 1;
    }
    int fails = 0;
    for (int rev = 0; rev < (tolerance ? 2 : 1); rev++) {
        loop_dev D = {0};
        D.reverse = rev;
        char err[300] = "";
        int rc = plan_on_cpu(&D, v, dm, backward, B->q, B->k, B->v, B->dout, B->o[0], B->l[0], B->dq[0], B->dk[0],
                             B->dv[0], err, sizeof err);
        if (rc || D.gemms == 0) {
            fprintf(stderr, "plan cublas: %s: rc %d, %d GEMMs: %s\n", what, rc, D.gemms, err);
            return 1;
        }
        if (!rev) {
            fails += compare("plan", what, "out", B->o[0], B->o[1], B->nq) + compare("plan", what, "lse", B->l[0], B->l[1], B->nl);
            if (backward)
                fails += compare("plan", what, "dq", B->dq[0], B->dq[1], B->nq) +
                         compare("plan", what, "dk", B->dk[0], B->dk[1], B->nkv) + compare("plan", what, "dv", B->dv[0], B->dv[1], B->nkv);
            continue;
        }
        const char *names[] = {"out", "lse", "dq", "dk", "dv"};
        double *got[] = {B->o[0], B->l[0], B->dq[0], B->dk[0], B->dv[0]};
        double *want[] = {B->o[1], B->l[1], B->dq[1], B->dk[1], B->dv[1]};
        int64_t ns[] = {B->nq, B->nl, B->nq, B->nkv, B->nkv};
        for (int t = 0; t < (backward ? 5 : 2); t++) {
            double w = worst_units(v->format, got[t], want[t], ns[t]);
            if (w > *worst)
                *worst = w;
            if (!(w <= CUBLAS_TOL)) {
                fprintf(stderr, "FAIL cublas (reverse-order GEMM) within %g u of ours: %s: %s off by %g u\n",
                        CUBLAS_TOL, what, names[t], w);
                fails++;
            }
        }
    }
    return fails;
}

// Every knob combination engine cublas takes (unfused; no CP; bf16 only with accumulate fp32) ×
// formats × the plain shapes (GQA, causal, ragged, rows with no key), forward+backward and
// forward only.
static int threads_cublas_case(const pp_attn_variant *v, const pp_attn_dims *dm, const bufs *B, int backward,
                               int big, const char *what, double *worst)
{
    return check_cublas(v, dm, B, backward, !big, what, worst);
}

static void threads_cublas_every_knob(void **state)
{
    (void)state;
    int runs = 0;
    double worst = 0.0;
    int fails = attn_case_cublas_sweep(threads_cublas_case, pp_test_iters(10) < 10 ? 7 : 1, &runs, &worst);
    print_message("engine cublas on the loop device: %d combinations; reverse-order GEMM worst %.3g u "
                  "(bound %g u)\n", runs, worst, CUBLAS_TOL);
    if (fails)
        pp_test_report_seed();
    assert_int_equal(fails, 0);
}

// A given softmax_scale, PB-Relax's A, GQA 4:1, a longer causal sequence: bit-identical to ours
// with the increasing-order GEMM.
static void threads_cublas_longer(void **state)
{
    (void)state;
    pp_attn_dims dm = {2, 40, 33, 4, 1, 16, 1};
    bufs B;
    bufs_init(&B, &dm, PP_FMT_FP16, 2.0, pp_test_seed() + 98);
    pp_attn_variant v;
    memset(&v, 0, sizeof v);
    v.format = PP_FMT_FP16;
    v.kernel = PP_ATTN_UNFUSED;
    v.engine = PP_ATTN_ENGINE_CUBLAS;
    v.accum = PP_ATTN_ACC_STORAGE;
    v.max_subtract = PP_ATTN_MAX_PB_RELAX;
    v.pb_alpha = 8;
    v.qk_layer_scaling = 2;
    v.softmax = PP_ATTN_SOFTMAX_STORAGE;
    v.sigma_given = 1;
    v.sigma = 0.3;
    double worst = 0.0;
    int fails = check_cublas(&v, &dm, &B, 1, 1, "cublas fp16 storage pb-relax A 8 L 2 sigma 0.3 GQA 4:1 s 40/33", &worst);
    print_message("longer case: reverse-order GEMM worst %.3g u\n", worst);
    bufs_free(&B);
    assert_int_equal(fails, 0);
}

// What engine cublas cannot run is rejected with a message naming the knob (2), the same by the
// plan, the CPU emulation and the operation's case check; the CPU emulation runs no cuBLAS (3,
// "only on the GPU", which --cross-check skips on); a device without a GEMM (2) and a failing
// GEMM (3, nothing leaked under ASan).
static void threads_cublas_errors(void **state)
{
    (void)state;
    pp_attn_dims dm = {1, 12, 12, 2, 1, 3, 0};
    bufs B;
    bufs_init(&B, &dm, PP_FMT_FP16, 1.0, 5);
    pp_attn_variant v;
    memset(&v, 0, sizeof v);
    v.format = PP_FMT_FP16;
    v.kernel = PP_ATTN_FLASH;
    v.engine = PP_ATTN_ENGINE_CUBLAS;
    v.cp_world = 1;
    char err[300] = "";
    pp_error e = {0};
    loop_dev D = {0};
    struct {
        pp_attn_kernel kernel;
        int world;
        pp_format_id f;
        pp_attn_accum acc;
        const char *want;
    } bad[] = {
        {PP_ATTN_FLASH, 1, PP_FMT_FP16, PP_ATTN_ACC_FP32, "engine = \"cublas\" needs kernel = \"unfused\""},
        {PP_ATTN_UNFUSED, 2, PP_FMT_FP16, PP_ATTN_ACC_FP32, "engine = \"cublas\" needs cp_world = 1"},
        {PP_ATTN_UNFUSED, 1, PP_FMT_BF16, PP_ATTN_ACC_STORAGE, "no bf16 compute type"},
    };
    for (int i = 0; i < 3; i++) {
        v.kernel = bad[i].kernel;
        v.cp_world = bad[i].world;
        v.format = v.cp_accum = v.cp_grad_accum = bad[i].f;
        v.accum = bad[i].acc;
        int rc = plan_on_cpu(&D, &v, &dm, 1, B.q, B.k, B.v, B.dout, B.o[0], B.l[0], B.dq[0], B.dk[0], B.dv[0], err,
                             sizeof err);
        assert_int_equal(rc, 2);
        assert_non_null(strstr(err, bad[i].want));
        assert_int_equal(pp_attention_cpu(&v, &dm, 1, B.q, B.k, B.v, B.dout, B.o[1], B.l[1], B.dq[1], B.dk[1],
                                          B.dv[1], 1, &e),
                         2);
        assert_string_equal(err, e.msg);
        assert_string_equal(err, pp_attn_engine_error(&v));
    }
    assert_int_equal(D.gemms, 0);
    v.kernel = PP_ATTN_UNFUSED, v.cp_world = 1, v.format = PP_FMT_FP16, v.accum = PP_ATTN_ACC_STORAGE;
    assert_null(pp_attn_engine_error(&v));
    assert_int_equal(pp_attention_cpu(&v, &dm, 1, B.q, B.k, B.v, B.dout, B.o[1], B.l[1], B.dq[1], B.dk[1], B.dv[1],
                                      1, &e),
                     3);
    assert_non_null(strstr(e.msg, "runs only on the GPU"));
    pp_attn_device nogemm = {.ctx = &D, .alloc = loop_alloc, .release = loop_release, .upload = loop_copy, .download = loop_copy, .launch = loop_launch, .gemm = NULL, .scratch_floats = 0};
    assert_int_equal(pp_attn_plan_run(&nogemm, &v, &dm, 1, B.q, B.k, B.v, B.dout, B.o[0], B.l[0], B.dq[0], B.dk[0],
                                      B.dv[0], err, sizeof err),
                     2);
    assert_non_null(strstr(err, "no GEMM"));
    for (int at = 1; at <= 7; at++) {  // forward 2 GEMMs, backward 5 (scores recomputed)
        loop_dev F = {0};
        F.fail_gemm_at = at;
        assert_int_equal(plan_on_cpu(&F, &v, &dm, 1, B.q, B.k, B.v, B.dout, B.o[0], B.l[0], B.dq[0], B.dk[0],
                                     B.dv[0], err, sizeof err),
                         3);
    }
    bufs_free(&B);
}

// FP8 (fp8 = "fa3"): the plan on the loop device against the CPU device bit for bit
// (attention_cases.h, attn_case_fp8_fa3).
static void threads_fp8_fa3(void **state)
{
    (void)state;
    int fails = attn_case_fp8_fa3(&plan_backend);
    if (fails)
        pp_test_report_seed();
    assert_int_equal(fails, 0);
}

// FP8 with Hopper's accumulation (mma = "sm90-fp8"): the same (attention_cases.h, attn_case_fp8_sm90).
static void threads_fp8_sm90(void **state)
{
    (void)state;
    int fails = attn_case_fp8_sm90(&plan_backend);
    if (fails)
        pp_test_report_seed();
    assert_int_equal(fails, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(threads_flash_every_knob),
        cmocka_unit_test(threads_unfused_every_knob),
        cmocka_unit_test(threads_sigma_and_longer),
        cmocka_unit_test(threads_special_inputs),
        cmocka_unit_test(threads_order_seeds),
        cmocka_unit_test(threads_errors),
        cmocka_unit_test(threads_cublas_every_knob),
        cmocka_unit_test(threads_cublas_longer),
        cmocka_unit_test(threads_cublas_errors),
        cmocka_unit_test(threads_fp8_fa3),
        cmocka_unit_test(threads_fp8_sm90),
        cmocka_unit_test(threads_key_tiles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
