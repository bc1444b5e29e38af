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
#include "test_util_cuda.h"

#include <math.h>
#include <time.h>

#include "cpu/attention.h"
#include "cuda/attention_cuda.h"
#include "cuda/format_cuda.h"

#define MAX_FAILS 8

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDull;
    x ^= x >> 33;
    x *= 0xC4CEB9FE1A85EC53ull;
    return x ^ (x >> 33);
}

static void fill(double *x, int64_t n, pp_format_id f, double scale, uint64_t seed)
{
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = mix(seed ^ (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ull);
        x[i] = pp_round(f, ((double)(r >> 11) * 0x1p-53 - 0.5) * 4.0 * scale, PP_RND_NE, 0);
    }
}

// Equal bits, or both NaN: IEEE leaves open which NaN an invalid operation returns; x86 gives
// the negative default NaN or an operand's payload, CUDA its canonical 0x7FFFFFFF.
static int same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0 || (a != a && b != b);
}

static int compare(const char *what, const char *tensor, const double *got, const double *want, int64_t n)
{
    int fails = 0;
    for (int64_t i = 0; i < n && fails < MAX_FAILS; i++)
        if (!same_bits(got[i], want[i])) {
            if (!fails)
                fprintf(stderr, "FAIL cuda == cpu: %s\n", what);
            fails++;
            fprintf(stderr, "  %s[%lld]\n", tensor, (long long)i);
            pp_test_print_double("cuda", got[i]);
            pp_test_print_double("cpu", want[i]);
        }
    return fails;
}

typedef struct bufs {
    int64_t nq, nkv, nl;
    double *q, *k, *v, *dout;
    double *o[2], *l[2], *dq[2], *dk[2], *dv[2];  // [0] plan, [1] cpu
} bufs;

static void bufs_init(bufs *B, const pp_attn_dims *dm, pp_format_id f, double scale, uint64_t seed)
{
    B->nq = dm->b * dm->s_q * dm->h * dm->d;
    B->nkv = dm->b * dm->s_kv * dm->h_kv * dm->d;
    B->nl = dm->b * dm->h * dm->s_q;
    size_t D = sizeof(double);
    B->q = malloc((size_t)B->nq * D), B->dout = malloc((size_t)B->nq * D);
    B->k = malloc((size_t)B->nkv * D), B->v = malloc((size_t)B->nkv * D);
    for (int i = 0; i < 2; i++) {
        B->o[i] = malloc((size_t)B->nq * D), B->dq[i] = malloc((size_t)B->nq * D);
        B->l[i] = malloc((size_t)B->nl * D);
        B->dk[i] = malloc((size_t)B->nkv * D), B->dv[i] = malloc((size_t)B->nkv * D);
    }
    fill(B->q, B->nq, f, scale, seed + 1);
    fill(B->k, B->nkv, f, scale, seed + 2);
    fill(B->v, B->nkv, f, 1.0, seed + 3);
    fill(B->dout, B->nq, f, 1.0, seed + 4);
}

static void bufs_free(bufs *B)
{
    free(B->q), free(B->k), free(B->v), free(B->dout);
    for (int i = 0; i < 2; i++)
        free(B->o[i]), free(B->l[i]), free(B->dq[i]), free(B->dk[i]), free(B->dv[i]);
}

// Runs v on both and compares every output; returns the number of differing elements (capped).
static int check_one(const pp_attn_variant *v, const pp_attn_dims *dm, const bufs *B, int backward, const char *what)
{
    pp_error e = {0};
    int rc = pp_attention_cpu(v, dm, backward, B->q, B->k, B->v, B->dout, B->o[1], B->l[1], B->dq[1], B->dk[1],
                              B->dv[1], 1, &e);
    if (rc) {
        fprintf(stderr, "cpu: %s: %s\n", what, e.msg);
        return 1;
    }
    char err[400] = "";
    rc = pp_attention_cuda(v, dm, backward, B->q, B->k, B->v, B->dout, B->o[0], B->l[0], B->dq[0], B->dk[0], B->dv[0],
                           err, sizeof err);
    if (rc) {
        fprintf(stderr, "cuda: %s: rc %d: %s\n", what, rc, err);
        return 1;
    }
    int fails = compare(what, "out", B->o[0], B->o[1], B->nq) + compare(what, "lse", B->l[0], B->l[1], B->nl);
    if (backward)
        fails += compare(what, "dq", B->dq[0], B->dq[1], B->nq) + compare(what, "dk", B->dk[0], B->dk[1], B->nkv) +
                 compare(what, "dv", B->dv[0], B->dv[1], B->nkv);
    return fails;
}

static const pp_format_id formats[] = {PP_FMT_FP16, PP_FMT_BF16, PP_FMT_FP32};
static const char *const scale_names[] = {"post", "pre", "pre-q"};
static const char *const sm_names[] = {"fp32", "storage", "naive"};
static const char *const max_names[] = {"row", "pb-relax", "none"};

// Shapes: ragged, GQA, s_q ≠ s_kv both ways (a causal s_q > s_kv leaves rows with no key), and CP
// shapes (s divisible by 2·world for worlds 2 and 3).
static const pp_attn_dims plain_shapes[] = {
    {2, 7, 11, 4, 2, 5, 0}, {2, 7, 11, 4, 2, 5, 1}, {1, 9, 5, 3, 1, 3, 1}, {1, 1, 1, 1, 1, 1, 0},
};
static const pp_attn_dims cp_shape = {2, 12, 12, 4, 2, 6, 0};

// Every knob of variant v × the shapes × worlds 1, 2, 3 (with both cp accumulations). Under
// PRECPROBE_TEST_MULTIPLIER < 1 (the sanitizer run) every 7th combination only.
static int sweep(pp_attn_variant v, const char *knobs, double scale, uint64_t seed)
{
    int fails = 0, stride = 1, n = 0;
    for (int f = 0; f < 3; f++) {
        v.format = formats[f];
        for (int si = 0; si < 6; si++) {
            pp_attn_dims dm = si < 4 ? plain_shapes[si] : cp_shape;
            dm.causal = si < 4 ? dm.causal : si == 5;
            int worlds[] = {1, 2, 3};
            for (int wi = si < 4 ? 0 : 1; wi < (si < 4 ? 1 : 3); wi++)
                for (int ca = 0; ca < (si < 4 ? 1 : 3); ca++) {
                    if (n++ % stride)
                        continue;
                    v.cp_world = worlds[wi];
                    v.cp_accum = ca == 1 ? PP_FMT_FP32 : v.format;
                    v.cp_grad_accum = ca == 2 ? PP_FMT_FP32 : v.format;
                    bufs B;
                    double sc = f == 0 ? scale : 1.0;  // fp16: the scale that overflows
                    bufs_init(&B, &dm, v.format, sc, seed + (uint64_t)si * 977);
                    char what[300];
                    snprintf(what, sizeof what, "%s %s shape %d (b %lld s %lld/%lld h %lld/%lld d %lld causal %d) "
                             "cp %d accum %s/%s",
                             knobs, pp_format_get(v.format).name, si, (long long)dm.b, (long long)dm.s_q,
                             (long long)dm.s_kv, (long long)dm.h, (long long)dm.h_kv, (long long)dm.d, dm.causal,
                             v.cp_world, pp_format_get(v.cp_accum).name, pp_format_get(v.cp_grad_accum).name);
                    fails += check_one(&v, &dm, &B, 1, what);
                    if (si == 1 || si == 5)
                        fails += check_one(&v, &dm, &B, 0, what);  // forward only
                    bufs_free(&B);
                    if (fails >= MAX_FAILS)
                        return fails;
                }
        }
    }
    return fails;
}

static void cuda_flash_every_knob(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    int fails = 0;
    const int bns[] = {64, 3, 1};
    for (int sc = 0; sc < 3 && !fails; sc++)
        for (int mx = 0; mx < 3 && !fails; mx += 2)
            for (int bi = 0; bi < 3 && !fails; bi++)
                for (int big = 0; big < 2 && !fails; big++) {
                    pp_attn_variant v;
                    memset(&v, 0, sizeof v);
                    v.kernel = PP_ATTN_FLASH;
                    v.block_n = bns[bi];
                    v.scale = (pp_attn_scale)sc;
                    v.max_subtract = (pp_attn_max)mx;
                    char knobs[200];
                    snprintf(knobs, sizeof knobs, "flash block_n %d scale %s max %s inputs x%s", bns[bi],
                             scale_names[sc], max_names[mx], big ? "200" : "1");
                    fails += sweep(v, knobs, big ? 200.0 : 1.0, pp_test_seed() + (uint64_t)(sc * 7 + mx * 3 + bi));
                }
    if (fails)
        pp_test_report_seed();
    assert_int_equal(fails, 0);
}

static void cuda_unfused_every_knob(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    int fails = 0;
    const int Ls[] = {1, 3};
    for (int acc = 0; acc < 2 && !fails; acc++)
        for (int sc = 0; sc < 3 && !fails; sc++)
            for (int li = 0; li < 2 && !fails; li++)
                for (int sm = 0; sm < 3 && !fails; sm++)
                    for (int mx = 0; mx < 3 && !fails; mx++) {
                        pp_attn_variant v;
                        memset(&v, 0, sizeof v);
                        v.kernel = PP_ATTN_UNFUSED;
                        v.accum = (pp_attn_accum)acc;
                        v.scale = (pp_attn_scale)sc;
                        v.qk_layer_scaling = Ls[li];
                        v.softmax = (pp_attn_softmax)sm;
                        v.max_subtract = (pp_attn_max)mx;
                        int big = (acc + sc + li + sm + mx) % 2;  // half the combinations overflow fp16
                        char knobs[200];
                        snprintf(knobs, sizeof knobs, "unfused accum %s scale %s L %d softmax %s max %s inputs x%s",
                                 acc ? "storage" : "fp32", scale_names[sc], Ls[li], sm_names[sm], max_names[mx],
                                 big ? "200" : "1");
                        fails += sweep(v, knobs, big ? 200.0 : 1.0,
                                       pp_test_seed() + (uint64_t)(acc * 1000 + sc * 100 + li * 10 + sm * 3 + mx));
                    }
    if (fails)
        pp_test_report_seed();
    assert_int_equal(fails, 0);
}

// A given softmax_scale and PB-Relax's A, GQA 4:1, a longer flash sequence with several tiles.
static void cuda_sigma_and_longer(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    pp_attn_dims dm = {1, 40, 40, 4, 1, 16, 1};
    bufs B;
    bufs_init(&B, &dm, PP_FMT_BF16, 2.0, pp_test_seed() + 99);
    pp_attn_variant v;
    memset(&v, 0, sizeof v);
    v.format = PP_FMT_BF16;
    v.kernel = PP_ATTN_FLASH;
    v.block_n = 16;
    v.cp_world = 4;
    v.cp_accum = v.cp_grad_accum = PP_FMT_BF16;
    v.sigma_given = 1;
    v.sigma = 0.3;
    dm.s_q = dm.s_kv = 48;
    bufs_free(&B);
    bufs_init(&B, &dm, PP_FMT_BF16, 2.0, pp_test_seed() + 99);
    int fails = check_one(&v, &dm, &B, 1, "flash sigma 0.3 world 4 s 48");
    v.kernel = PP_ATTN_UNFUSED;
    v.max_subtract = PP_ATTN_MAX_PB_RELAX;
    v.pb_alpha = 8;
    v.qk_layer_scaling = 2;
    v.softmax = PP_ATTN_SOFTMAX_STORAGE;
    fails += check_one(&v, &dm, &B, 1, "unfused pb-relax A 8 L 2 sigma 0.3 world 4 s 48");
    bufs_free(&B);
    assert_int_equal(fails, 0);
}

// NaN and ±Inf inputs (values of every format): the NaN-sticky maxima, Inf − Inf in the softmax,
// 0·Inf in the chains, on both kernels, plain and CP.
static void cuda_special_inputs(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    pp_attn_dims dm = {1, 12, 12, 4, 2, 4, 0};
    int fails = 0;
    for (int kern = 0; kern < 2; kern++)
        for (int causal = 0; causal < 2; causal++)
            for (int w = 1; w <= 3; w++)
                for (int mx = 0; mx < 3; mx++) {
                    if (kern == 0 && mx == 1)
                        continue;  // flash has no pb-relax
                    bufs B;
                    dm.causal = causal;
                    bufs_init(&B, &dm, PP_FMT_FP16, 1.0, pp_test_seed() + 7);
                    B.k[5] = NAN;           // kv head 0, row 1: a NaN score column in heads 0, 1
                    B.q[4 * 4 * 7 + 2] = INFINITY;   // row 7, head 0
                    B.k[8 * 2 * 4 + 4 + 1] = -INFINITY;  // row 8, kv head 1
                    B.v[3 * 8 + 2] = INFINITY;
                    B.q[1] = NAN;  // row 0, head 0 only: the block max is NaN, later rows are not
                    B.dout[2 * 16 + 5] = -INFINITY;
                    pp_attn_variant v;
                    memset(&v, 0, sizeof v);
                    v.format = PP_FMT_FP16;
                    v.kernel = kern ? PP_ATTN_UNFUSED : PP_ATTN_FLASH;
                    v.block_n = 5;
                    v.max_subtract = (pp_attn_max)mx;
                    v.cp_world = w == 1 ? 1 : w;
                    v.cp_accum = v.cp_grad_accum = PP_FMT_FP16;
                    char what[200];
                    snprintf(what, sizeof what, "specials %s causal %d world %d max %s", kern ? "unfused" : "flash",
                             causal, w, max_names[mx]);
                    fails += check_one(&v, &dm, &B, 1, what);
                    bufs_free(&B);
                }
    assert_int_equal(fails, 0);
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
            fails += check_one(&v, &dm, &B, 1, what);
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

static double unit_roundoff(pp_format_id f)
{
    return f == PP_FMT_FP16 ? 0x1p-11 : f == PP_FMT_BF16 ? 0x1p-8 : 0x1p-24;
}

// Worst |got − want| / (u·max|want|); +Inf where exactly one side is finite or infinities differ.
static double worst_units(pp_format_id f, const double *got, const double *want, int64_t n)
{
    double M = 0.0, worst = 0.0;
    for (int64_t i = 0; i < n; i++)
        if (isfinite(want[i]) && fabs(want[i]) > M)
            M = fabs(want[i]);
    for (int64_t i = 0; i < n; i++) {
        if (want[i] != want[i] && got[i] != got[i])
            continue;
        if (!isfinite(want[i]) || !isfinite(got[i])) {
            if (got[i] != want[i])
                return INFINITY;
            continue;
        }
        double d = fabs(got[i] - want[i]), r = d == 0.0 ? 0.0 : d / (unit_roundoff(f) * (M > 0.0 ? M : 1.0));
        if (r > worst)
            worst = r;
    }
    return worst;
}

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
static void cuda_cublas_every_knob(void **state)
{
    (void)state;
    PP_TEST_REQUIRE_GPU();
    int fails = 0, runs = 0;
    double worst = 0.0;
    const int Ls[] = {1, 3};
    for (int acc = 0; acc < 2; acc++)
        for (int sc = 0; sc < 3; sc++)
            for (int li = 0; li < 2; li++)
                for (int sm = 0; sm < 3; sm++)
                    for (int mx = 0; mx < 3 && fails < MAX_FAILS; mx++)
                        for (int f = 0; f < 3; f++)
                            for (int si = 0; si < 4; si++) {
                                pp_attn_variant v;
                                memset(&v, 0, sizeof v);
                                v.format = formats[f];
                                v.kernel = PP_ATTN_UNFUSED;
                                v.engine = PP_ATTN_ENGINE_CUBLAS;
                                v.accum = (pp_attn_accum)acc;
                                v.scale = (pp_attn_scale)sc;
                                v.qk_layer_scaling = Ls[li];
                                v.softmax = (pp_attn_softmax)sm;
                                v.max_subtract = (pp_attn_max)mx;
                                v.cp_world = 1;
                                if (acc && v.format == PP_FMT_BF16)
                                    continue;  // no cuBLAS compute type: rejected
                                int big = (acc + sc + li + sm + mx + si) % 2 && f == 0;
                                pp_attn_dims dm = plain_shapes[si];
                                bufs B;
                                bufs_init(&B, &dm, v.format, big ? 200.0 : 1.0,
                                          pp_test_seed() + (uint64_t)(acc * 1000 + sc * 100 + li * 10 + sm * 3 + mx));
                                char what[300];
                                snprintf(what, sizeof what, "cublas accum %s scale %s L %d softmax %s max %s %s shape %d "
                                         "inputs x%s",
                                         acc ? "storage" : "fp32", scale_names[sc], Ls[li], sm_names[sm],
                                         max_names[mx], pp_format_get(v.format).name, si, big ? "200" : "1");
                                double bound = big ? 0.0 : CUDA_CUBLAS_TOL;
                                fails += check_cublas(&v, &dm, &B, 1, bound, what, &worst);
                                if (si == 1)
                                    fails += check_cublas(&v, &dm, &B, 0, bound, what, &worst);
                                runs++;
                                bufs_free(&B);
                            }
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cuda_flash_every_knob),
        cmocka_unit_test(cuda_unfused_every_knob),
        cmocka_unit_test(cuda_sigma_and_longer),
        cmocka_unit_test(cuda_special_inputs),
        cmocka_unit_test(cuda_te_cp_small_size),
        cmocka_unit_test(cuda_cublas_every_knob),
        cmocka_unit_test(cuda_cublas_larger),
        cmocka_unit_test(cuda_cublas_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
