// test_attention_cuda.c — the GPU attention (kernels/cuda/attention_kernels.cu) against the CPU
// emulation (pp_attention_cpu), bit for bit (NaNs: any NaN equals any NaN), over every knob: kernel,
// block_n, accumulate, scale, qk_layer_scaling, softmax, max_subtract, cp_world 1/2/3, cp_accum,
// cp_grad_accum, formats, causal and not, GQA, ragged shapes, rows that see no key, fp16 scores
// that overflow, NaN/Inf inputs; plus a te-cp-small-sized run (s 512, world 4). The same sweeps as
// tests/test_attention_threads.c, which runs the identical launch sequence on the CPU. Skips with
// a message when there is no GPU.
// Engine cublas (cuBLAS's GEMMs, its own summation order): every supported knob combination runs,
// returns values of the storage format, and stays within CUDA_CUBLAS_TOL units of F's roundoff
// of the CPU emulation (ours), measured and printed.
#include "attention_cases.h"
#include "test_util_cuda.h"

#include <math.h>
#include <time.h>

#include "cpu/attention.h"
#include "cuda/attention_cuda.h"
#include "cuda/format_cuda.h"

static const attn_case_backend cuda_backend = {"cuda", pp_attention_cuda, 0};

static void cuda_flash_every_knob(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    int fails = attn_case_flash_every_knob(&cuda_backend);
    if (fails)
        pp_test_report_seed();
    assert_int_equal(fails, 0);
}

static void cuda_unfused_every_knob(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    int fails = attn_case_unfused_every_knob(&cuda_backend);
    if (fails)
        pp_test_report_seed();
    assert_int_equal(fails, 0);
}

static void cuda_sigma_and_longer(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    assert_int_equal(attn_case_sigma_and_longer(&cuda_backend), 0);
}

static void cuda_special_inputs(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    assert_int_equal(attn_case_special_inputs(&cuda_backend), 0);
}

static void cuda_order_seeds(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    assert_int_equal(attn_case_order_seeds(&cuda_backend), 0);
}

// FP8 (fp8 = "fa3") under every scaling: the GPU against the CPU emulation bit for bit
// (attention_cases.h).
static void cuda_fp8_fa3(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    assert_int_equal(attn_case_fp8_fa3(&cuda_backend), 0);
}

// FP8 with Hopper's accumulation (mma = "sm90-fp8"): the GPU against the CPU emulation bit for bit.
static void cuda_fp8_sm90(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    assert_int_equal(attn_case_fp8_sm90(&cuda_backend), 0);
}

// te-cp-small's shape (b 1, s 512, h 2, d 64, causal, world 4) on both kernels: equal, and timed.
static void cuda_te_cp_small_size(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    pp_attn_dims dm = {1, 512, 512, 2, 2, 64, 1};
    bufs B;
    bufs_init(&B, &dm, PP_FMT_BF16, 1.0, pp_test_seed() + 821);
    int fails = 0;
    for (int kern = 0; kern < 2; kern++)
        for (int w = 1; w <= 4; w += 3) {
            pp_attn_variant v;
            memset(&v, 0, sizeof v);
            v.format = PP_FMT_BF16;
            v.kernel = kern ? PP_ATTN_UNFUSED : PP_ATTN_FLASH;
            v.cp_world = w;
            v.cp_accum = v.cp_grad_accum = w == 4 ? PP_FMT_FP32 : PP_FMT_BF16;
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            char what[100];
            snprintf(what, sizeof what, "te-cp-small size, %s, world %d", kern ? "unfused" : "flash", w);
            fails += check_one(&cuda_backend, &v, &dm, &B, 1, what);
            clock_gettime(CLOCK_MONOTONIC, &t1);
            print_message("%s: cpu + cuda + compare %.2f s\n", what,
                          (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
        }
    bufs_free(&B);
    assert_int_equal(fails, 0);
}

// ---------------------------------------------------------------------------------------------
// Engine cublas

// A loose bound, in units of F's unit roundoff u times the tensor's largest magnitude, on
// |cuBLAS pipeline − CPU emulation|: cuBLAS's order (tensor-core tiles, possibly split-K reduced
// in the output type under the default math mode) is not ours. The CPU-side test's reversed-order
// GEMM (tests/test_attention_threads.c) measures up to ~36 u on these shapes; 256 u leaves room
// for cuBLAS's own order. The worst value is printed so the bound can be judged.
#define CUDA_CUBLAS_TOL 256.0

// Runs v (engine cublas) on the GPU and ours on the CPU; checks rc 0, values of F (lse: of fp32),
// and the distance against bound (0: not measured; INFINITY: measured and printed only). Returns
// the failures; *worst the largest distance seen.
static int check_cublas(const pp_attn_variant *v, const pp_attn_dims *dm, const bufs *B, int backward, double bound,
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
    char err[400] = "";
    int rc = pp_attention_cuda(v, dm, backward, B->q, B->k, B->v, B->dout, B->o[0], B->l[0], B->dq[0], B->dk[0],
                               B->dv[0], err, sizeof err);
    if (rc) {
        fprintf(stderr, "cuda cublas: %s: rc %d: %s\n", what, rc, err);
        return 1;
    }
    const char *names[] = {"out", "lse", "dq", "dk", "dv"};
    double *got[] = {B->o[0], B->l[0], B->dq[0], B->dk[0], B->dv[0]};
    double *want[] = {B->o[1], B->l[1], B->dq[1], B->dk[1], B->dv[1]};
    int64_t ns[] = {B->nq, B->nl, B->nq, B->nkv, B->nkv};
    int fails = 0;
    for (int t = 0; t < (backward ? 5 : 2); t++) {
        pp_format_id f = t == 1 ? PP_FMT_FP32 : v->format;
        for (int64_t i = 0; i < ns[t]; i++)
            if (!pp_is_representable(f, got[t][i])) {
                fprintf(stderr, "FAIL cublas: %s: %s[%lld] = %.17g is not a %s value\n", what, names[t],
                        (long long)i, got[t][i], pp_format_get(f).name);
                fails++;
                break;
            }
        if (bound == 0.0)
            continue;
        double w = worst_units(v->format, got[t], want[t], ns[t]);
        if (w > *worst)
            *worst = w;
        if (!(w <= bound) && isfinite(bound)) {
            fprintf(stderr, "FAIL cublas within %g u of the emulation: %s: %s off by %g u\n", bound, what, names[t], w);
            fails++;
        }
    }
    return fails;
}

// Every combination engine cublas takes (unfused; cp_world 1; bf16 with accumulate fp32 only) ×
// formats × the plain shapes (GQA, causal, ragged, rows with no key), forward+backward and forward
// only; inputs that overflow fp16 run for the format check only (Inf/NaN patterns may differ).
static int cuda_cublas_case(const pp_attn_variant *v, const pp_attn_dims *dm, const bufs *B, int backward, int big,
                            const char *what, double *worst)
{
    return check_cublas(v, dm, B, backward, big ? 0.0 : CUDA_CUBLAS_TOL, what, worst);
}

static void cuda_cublas_every_knob(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    int runs = 0;
    double worst = 0.0;
    int fails = attn_case_cublas_sweep(cuda_cublas_case, 1, &runs, &worst);
    print_message("engine cublas: %d combinations; worst distance from the emulation %.3g u (bound %g u)\n", runs,
                  worst, CUDA_CUBLAS_TOL);
    if (fails)
        pp_test_report_seed();
    assert_int_equal(fails, 0);
}

// te-cp-small's shape without CP (b 1, s 512, h 2, d 64, causal) and GQA 4:2 at s 256: bf16 with
// accumulate fp32 (bounded: both sides accumulate in fp32), fp16 with accumulate storage
// (CUBLAS_COMPUTE_16F; measured and printed only: over 256–512 terms the emulation's sequential
// fp16 chain has its own large error, which a blocked cuBLAS sum need not share). Timed.
static void cuda_cublas_larger(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    const pp_attn_dims dims[] = {{1, 512, 512, 2, 2, 64, 1}, {2, 256, 256, 4, 2, 64, 0}};
    int fails = 0;
    for (int di = 0; di < 2; di++)
        for (int f = 0; f < 2; f++) {
            pp_attn_dims dm = dims[di];
            pp_attn_variant v;
            memset(&v, 0, sizeof v);
            v.format = f ? PP_FMT_FP16 : PP_FMT_BF16;
            v.kernel = PP_ATTN_UNFUSED;
            v.engine = PP_ATTN_ENGINE_CUBLAS;
            v.accum = f ? PP_ATTN_ACC_STORAGE : PP_ATTN_ACC_FP32;
            v.cp_world = 1;
            bufs B;
            bufs_init(&B, &dm, v.format, 1.0, pp_test_seed() + 512);
            char what[160];
            snprintf(what, sizeof what, "cublas %s accum %s b %lld s %lld h %lld/%lld d %lld causal %d",
                     pp_format_get(v.format).name, f ? "storage" : "fp32", (long long)dm.b, (long long)dm.s_q,
                     (long long)dm.h, (long long)dm.h_kv, (long long)dm.d, dm.causal);
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            double worst = 0.0;
            fails += check_cublas(&v, &dm, &B, 1, f ? INFINITY : CUDA_CUBLAS_TOL, what, &worst);
            clock_gettime(CLOCK_MONOTONIC, &t1);
            print_message("%s: worst %.3g u, cpu + cuda + compare %.2f s\n", what, worst,
                          (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
            bufs_free(&B);
        }
    assert_int_equal(fails, 0);
}

// What cuBLAS cannot run is rejected before the GPU is touched, with the knob named (2).
static void cuda_cublas_errors(void **state)
{
    (void)state;
    pp_attn_dims dm = {1, 12, 12, 2, 1, 3, 0};
    bufs B;
    bufs_init(&B, &dm, PP_FMT_BF16, 1.0, 5);
    pp_attn_variant v;
    memset(&v, 0, sizeof v);
    v.format = v.cp_accum = v.cp_grad_accum = PP_FMT_BF16;
    v.kernel = PP_ATTN_UNFUSED;
    v.engine = PP_ATTN_ENGINE_CUBLAS;
    v.accum = PP_ATTN_ACC_STORAGE;
    v.cp_world = 1;
    char err[400] = "";
    assert_int_equal(pp_attention_cuda(&v, &dm, 1, B.q, B.k, B.v, B.dout, B.o[0], B.l[0], B.dq[0], B.dk[0], B.dv[0],
                                       err, sizeof err),
                     2);
    assert_non_null(strstr(err, "no bf16 compute type"));
    v.accum = PP_ATTN_ACC_FP32;
    v.kernel = PP_ATTN_FLASH;
    assert_int_equal(pp_attention_cuda(&v, &dm, 1, B.q, B.k, B.v, B.dout, B.o[0], B.l[0], B.dq[0], B.dk[0], B.dv[0],
                                       err, sizeof err),
                     2);
    assert_non_null(strstr(err, "kernel = \"unfused\""));
    bufs_free(&B);
}

// Range diagnostics on the GPU (pp_attention_cuda_ranges: one device accumulator, atomic notes)
// against the CPU emulation's (per-worker accumulators merged): every counter, amax and min |x|
// of every site and head bit for bit, and the same outputs as without diagnostics.
static void cuda_ranges_equal_cpu(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    const pp_attn_dims dm = {2, 48, 48, 4, 2, 16, 1};
    int64_t nq = dm.b * dm.s_q * dm.h * dm.d, nk = dm.b * dm.s_kv * dm.h_kv * dm.d, nl = dm.b * dm.h * dm.s_q;
    pp_attn_variant vs[3];
    memset(vs, 0, sizeof vs);
    for (int i = 0; i < 3; i++)
        vs[i].qk_layer_scaling = 1, vs[i].cp_world = 1;
    vs[0].format = vs[0].cp_accum = vs[0].cp_grad_accum = PP_FMT_BF16, vs[0].kernel = PP_ATTN_FLASH;
    vs[1].format = vs[1].cp_accum = vs[1].cp_grad_accum = PP_FMT_FP16, vs[1].kernel = PP_ATTN_UNFUSED;
    vs[1].softmax = PP_ATTN_SOFTMAX_STORAGE, vs[1].qk_layer_scaling = 64;  // fp16 scores overflow
    vs[2].format = vs[2].cp_grad_accum = PP_FMT_BF16, vs[2].cp_accum = PP_FMT_FP32, vs[2].kernel = PP_ATTN_FLASH;
    vs[2].cp_world = 2, vs[2].cp_flavour = PP_ATTN_CP_TE_2024;
    for (int i = 0; i < 3; i++) {
        double *in = malloc((size_t)(2 * nq + 2 * nk) * 8), *oc = calloc((size_t)(3 * nq + 2 * nk + nl), 8),
               *og = calloc((size_t)(3 * nq + 2 * nk + nl), 8);
        assert_non_null(in), assert_non_null(oc), assert_non_null(og);
        for (int64_t j = 0; j < 2 * nq + 2 * nk; j++)  // a fixed pattern in (−4, 4), values of the format
            in[j] = pp_round(vs[i].format, 4.0 * sin(0.37 * (double)j + 0.11 * i), PP_RND_NE, 0);
        const double *q = in, *dout = in + nq, *k = in + 2 * nq, *v = in + 2 * nq + nk;
        pp_range_cell *cc = malloc(PP_SITE_COUNT * dm.h * sizeof *cc), *cg = malloc(PP_SITE_COUNT * dm.h * sizeof *cg);
        pp_ranges Rc, Rg;
        pp_ranges_init(&Rc, cc, dm.h), pp_ranges_init(&Rg, cg, dm.h);
        pp_attn_cpu_opts o = {.ranges = &Rc};
        pp_error err = {0};
        double *c[5] = {oc, oc + nq, oc + nq + nl, oc + 2 * nq + nl, oc + 2 * nq + nl + nk};
        double *g[5] = {og, og + nq, og + nq + nl, og + 2 * nq + nl, og + 2 * nq + nl + nk};
        assert_int_equal(pp_attention_cpu_opts(&vs[i], &dm, 1, q, k, v, dout, c[0], c[1], c[2], c[3], c[4], 2, &o,
                                               &err), 0);
        char msg[256] = "";
        int rc = pp_attention_cuda_ranges(&vs[i], &dm, 1, q, k, v, dout, g[0], g[1], g[2], g[3], g[4], &Rg, msg,
                                          sizeof msg);
        if (rc)
            fprintf(stderr, "  variant %d: %s\n", i, msg);
        assert_int_equal(rc, 0);
        assert_memory_equal(oc, og, (size_t)(3 * nq + 2 * nk + nl) * 8);
        for (int s = PP_SITE_ATTN_FIRST; s < PP_SITE_ATTN_END; s++) {
            if (Rc.fmt[s] != Rg.fmt[s] || memcmp(&cc[s * dm.h], &cg[s * dm.h], (size_t)dm.h * sizeof *cc)) {
                fprintf(stderr, "FAIL variant %d: site %s: the GPU's range counters differ from the CPU's\n", i,
                        pp_site_get(s)->name);
                fail();
            }
        }
        free(in), free(oc), free(og), free(cc), free(cg);
    }
}

// FP8 block scalings (mx with OCP's and TE's exponent rule, nvfp4): the GPU's out, lse and range counters (P's block scales noted in
// the kernel: block_scale_p, and every attention site) equal the CPU emulation's.
static void cuda_fp8_ranges_equal_cpu(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    const pp_attn_dims dm = {2, 48, 40, 4, 2, 48, 1};
    int64_t nq = dm.b * dm.s_q * dm.h * dm.d, nk = dm.b * dm.s_kv * dm.h_kv * dm.d, nl = dm.b * dm.h * dm.s_q;
    const pp_attn_fp8_scaling sch[3] = {PP_ATTN_FP8_SCALING_MX, PP_ATTN_FP8_SCALING_NVFP4, PP_ATTN_FP8_SCALING_MX};
    const pp_mx_rule rule[3] = {PP_MX_RULE_OCP, PP_MX_RULE_OCP, PP_MX_RULE_TE};
    for (int i = 0; i < 3; i++) {
        pp_attn_variant v;
        memset(&v, 0, sizeof v);
        v.format = v.cp_accum = v.cp_grad_accum = PP_FMT_BF16, v.kernel = PP_ATTN_FLASH;
        v.fp8 = PP_ATTN_FP8_FA3, v.fp8_scaling = sch[i], v.mx_rule = rule[i];
        double *in = malloc((size_t)(nq + 2 * nk) * 8), *oc = calloc((size_t)(nq + nl), 8),
               *og = calloc((size_t)(nq + nl), 8);
        assert_non_null(in), assert_non_null(oc), assert_non_null(og);
        for (int64_t j = 0; j < nq + 2 * nk; j++)  // a fixed pattern in (−4, 4), times 40 now and then
            in[j] = pp_round(PP_FMT_BF16, 4.0 * sin(0.37 * (double)j) * (j % 97 == 0 ? 40.0 : 1.0), PP_RND_NE, 0);
        const double *q = in, *k = in + nq, *vv = in + nq + nk;
        pp_range_cell *cc = malloc(PP_SITE_COUNT * dm.h * sizeof *cc), *cg = malloc(PP_SITE_COUNT * dm.h * sizeof *cg);
        pp_ranges Rc, Rg;
        pp_ranges_init(&Rc, cc, dm.h), pp_ranges_init(&Rg, cg, dm.h);
        pp_attn_cpu_opts o = {.ranges = &Rc};
        pp_error err = {0};
        assert_int_equal(pp_attention_cpu_opts(&v, &dm, 0, q, k, vv, NULL, oc, oc + nq, NULL, NULL, NULL, 2, &o,
                                               &err), 0);
        char msg[256] = "";
        int rc = pp_attention_cuda_ranges(&v, &dm, 0, q, k, vv, NULL, og, og + nq, NULL, NULL, NULL, &Rg, msg,
                                          sizeof msg);
        if (rc)
            fprintf(stderr, "  scaling %d: %s\n", i, msg);
        assert_int_equal(rc, 0);
        assert_memory_equal(oc, og, (size_t)(nq + nl) * 8);
        assert_true(cc[PP_SITE_ATTN_BLOCK_SCALE_P * dm.h].count > 0);  // the notes ran
        for (int s = 0; s < PP_SITE_COUNT; s++) {
            if ((s < PP_SITE_ATTN_FIRST || s >= PP_SITE_ATTN_END) && (s < PP_SITE_ATTN_FP8_FIRST || s >= PP_SITE_ATTN_FP8_END))
                continue;
            if (Rc.fmt[s] != Rg.fmt[s] || memcmp(&cc[s * dm.h], &cg[s * dm.h], (size_t)dm.h * sizeof *cc)) {
                fprintf(stderr, "FAIL scaling %d: site %s: the GPU's range counters differ from the CPU's\n", i,
                        pp_site_get(s)->name);
                fail();
            }
        }
        free(in), free(oc), free(og), free(cc), free(cg);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cuda_flash_every_knob),
        cmocka_unit_test(cuda_unfused_every_knob),
        cmocka_unit_test(cuda_sigma_and_longer),
        cmocka_unit_test(cuda_special_inputs),
        cmocka_unit_test(cuda_order_seeds),
        cmocka_unit_test(cuda_te_cp_small_size),
        cmocka_unit_test(cuda_cublas_every_knob),
        cmocka_unit_test(cuda_cublas_larger),
        cmocka_unit_test(cuda_cublas_errors),
        cmocka_unit_test(cuda_ranges_equal_cpu),
        cmocka_unit_test(cuda_fp8_fa3),
        cmocka_unit_test(cuda_fp8_ranges_equal_cpu),
        cmocka_unit_test(cuda_fp8_sm90),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
