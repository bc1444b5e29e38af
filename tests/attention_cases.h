// attention_cases.h — the attention cases both GPU-path tests run against the CPU emulation bit
// for bit: tests/test_attention_threads.c (the launch plan on the CPU through a loop device) and
// tests/test_attention_cuda.c (the GPU). A backend is the run function under test; every case
// returns the number of differing elements (capped), printing the first ones.
#ifndef PP_TEST_ATTENTION_CASES_H
#define PP_TEST_ATTENTION_CASES_H

#include "test_util.h"

#include <math.h>

#include "cpu/attention.h"

#define MAX_FAILS 8

typedef struct attn_case_backend {
    const char *name;  // in failure messages: "plan", "cuda"
    // the contract of pp_attention_cpu, with a one-line message in err on failure
    int (*run)(const pp_attn_variant *v, const pp_attn_dims *dm, int backward, const double *q, const double *k,
               const double *vv, const double *dout, double *out, double *lse, double *dq, double *dk, double *dv,
               char *err, size_t n);
    int sample;  // 1: under PRECPROBE_TEST_MULTIPLIER < 1 (the sanitizer run) sweep every 7th combination
} attn_case_backend;

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

// Equal bits, or both NaN: IEEE leaves open which NaN an invalid operation returns (x86 gives the
// negative default NaN or an operand's payload, CUDA its canonical one; an FMA's NaN depends on
// the operand order of the instruction the compiler picked).
static int same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0 || (a != a && b != b);
}

static int compare(const char *label, const char *what, const char *tensor, const double *got, const double *want, int64_t n)
{
    int fails = 0;
    for (int64_t i = 0; i < n && fails < MAX_FAILS; i++)
        if (!same_bits(got[i], want[i])) {
            if (!fails)
                fprintf(stderr, "FAIL %s == cpu: %s\n", label, what);
            fails++;
            fprintf(stderr, "  %s[%lld]\n", tensor, (long long)i);
            pp_test_print_double(label, got[i]);
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
static int check_one(const attn_case_backend *be, const pp_attn_variant *v, const pp_attn_dims *dm, const bufs *B, int backward, const char *what)
{
    pp_error e = {0};
    int rc = pp_attention_cpu(v, dm, backward, B->q, B->k, B->v, B->dout, B->o[1], B->l[1], B->dq[1], B->dk[1],
                              B->dv[1], 1, &e);
    if (rc) {
        fprintf(stderr, "cpu: %s: %s\n", what, e.msg);
        return 1;
    }
    char err[400] = "";
    rc = be->run(v, dm, backward, B->q, B->k, B->v, B->dout, B->o[0], B->l[0], B->dq[0], B->dk[0], B->dv[0], err,
                 sizeof err);
    if (rc) {
        fprintf(stderr, "%s: %s: rc %d: %s\n", be->name, what, rc, err);
        return 1;
    }
    int fails = compare(be->name, what, "out", B->o[0], B->o[1], B->nq) + compare(be->name, what, "lse", B->l[0], B->l[1], B->nl);
    if (backward)
        fails += compare(be->name, what, "dq", B->dq[0], B->dq[1], B->nq) + compare(be->name, what, "dk", B->dk[0], B->dk[1], B->nkv) +
                 compare(be->name, what, "dv", B->dv[0], B->dv[1], B->nkv);
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
static int sweep(const attn_case_backend *be, pp_attn_variant v, const char *knobs, double scale, uint64_t seed)
{
    int fails = 0, stride = be->sample && pp_test_iters(10) < 10 ? 7 : 1, n = 0;
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
                    v.cp_flavour = (pp_attn_cp_flavour)ca;  // te-main, te-2024, pr-821 in turn
                    bufs B;
                    double sc = f == 0 ? scale : 1.0;  // fp16: the scale that overflows
                    bufs_init(&B, &dm, v.format, sc, seed + (uint64_t)si * 977);
                    char what[300];
                    snprintf(what, sizeof what, "%s %s shape %d (b %lld s %lld/%lld h %lld/%lld d %lld causal %d) "
                             "cp %d accum %s/%s flavour %d",
                             knobs, pp_format_get(v.format).name, si, (long long)dm.b, (long long)dm.s_q,
                             (long long)dm.s_kv, (long long)dm.h, (long long)dm.h_kv, (long long)dm.d, dm.causal,
                             v.cp_world, pp_format_get(v.cp_accum).name, pp_format_get(v.cp_grad_accum).name, ca);
                    fails += check_one(be, &v, &dm, &B, 1, what);
                    if (si == 1 || si == 5)
                        fails += check_one(be, &v, &dm, &B, 0, what);  // forward only
                    bufs_free(&B);
                    if (fails >= MAX_FAILS)
                        return fails;
                }
        }
    }
    return fails;
}

static int attn_case_flash_every_knob(const attn_case_backend *be)
{
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
                    fails += sweep(be, v, knobs, big ? 200.0 : 1.0, pp_test_seed() + (uint64_t)(sc * 7 + mx * 3 + bi));
                }
    return fails;
}

static int attn_case_unfused_every_knob(const attn_case_backend *be)
{
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
                        fails += sweep(be, v, knobs, big ? 200.0 : 1.0,
                                       pp_test_seed() + (uint64_t)(acc * 1000 + sc * 100 + li * 10 + sm * 3 + mx));
                    }
    return fails;
}

// A given softmax_scale and PB-Relax's A, GQA 4:1, a longer flash sequence with several tiles.
static int attn_case_sigma_and_longer(const attn_case_backend *be)
{
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
    int fails = check_one(be, &v, &dm, &B, 1, "flash sigma 0.3 world 4 s 48");
    v.kernel = PP_ATTN_UNFUSED;
    v.max_subtract = PP_ATTN_MAX_PB_RELAX;
    v.pb_alpha = 8;
    v.qk_layer_scaling = 2;
    v.softmax = PP_ATTN_SOFTMAX_STORAGE;
    fails += check_one(be, &v, &dm, &B, 1, "unfused pb-relax A 8 L 2 sigma 0.3 world 4 s 48");
    bufs_free(&B);
    return fails;
}

// NaN and ±Inf inputs (values of every format): the NaN-sticky maxima, Inf − Inf in the softmax,
// 0·Inf in the chains, on both kernels, plain and CP.
// The order band's perturbations (order_seed ≠ 0: exp2 and log moves, row-sum tree, dQ block
// order, every GEMM's MMA chunk walk) are pure functions of (seed, row, key, chunk): the backend
// gives the CPU's bits under a seed too, flash (tiles of 64 and 3 keys) and unfused (fp32 and
// storage accumulation), every format, shape and world of sweep.
static int attn_case_order_seeds(const attn_case_backend *be)
{
    int fails = 0;
    for (int c = 0; c < 4 && !fails; c++) {
        pp_attn_variant v;
        memset(&v, 0, sizeof v);
        v.kernel = c < 2 ? PP_ATTN_FLASH : PP_ATTN_UNFUSED;
        v.block_n = c == 1 ? 3 : 64;
        v.accum = c == 3 ? PP_ATTN_ACC_STORAGE : PP_ATTN_ACC_FP32;
        v.order_seed = 5 + (uint64_t)c;
        char knobs[200];
        snprintf(knobs, sizeof knobs, "order_seed %llu %s block_n %d accum %s", (unsigned long long)v.order_seed,
                 c < 2 ? "flash" : "unfused", v.block_n, c == 3 ? "storage" : "fp32");
        fails += sweep(be, v, knobs, 1.0, pp_test_seed() + 31 + (uint64_t)c);
    }
    return fails;
}

static int attn_case_special_inputs(const attn_case_backend *be)
{
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
                    fails += check_one(be, &v, &dm, &B, 1, what);
                    bufs_free(&B);
                }
    return fails;
}

// The FP8 sweeps' inputs and variant: bf16 inputs with head 1 of q scaled 30x (an outlier head),
// and FA3's FP8 forward in bf16 with the flash kernel; the rest of v zero (the defaults).
static void fp8_case_setup(bufs *B, pp_attn_variant *v, const pp_attn_dims *dim, uint64_t seed)
{
    bufs_init(B, dim, PP_FMT_BF16, 2.0, seed);
    for (int64_t t = 0; t < B->nq; t++)  // q [b][s][h][d]: head 1 scaled 30x
        if (dim->h > 1 && (t / dim->d) % dim->h == 1)
            B->q[t] = pp_round(PP_FMT_BF16, B->q[t] * 30.0, PP_RND_NE, 0);
    memset(v, 0, sizeof *v);
    v->format = v->cp_accum = v->cp_grad_accum = PP_FMT_BF16;
    v->kernel = PP_ATTN_FLASH;
    v->fp8 = PP_ATTN_FP8_FA3;
}

// FP8 (fp8 = "fa3", kernels/attention_fp8.h), forward only, under every scaling (auto =
// tensor-current, none, tensor-delayed with fixed scales, mx, nvfp4): GQA, causal and not, ragged
// s_q ≠ s_kv (rows with no key), head dims across FA3's FP8 tile rows (d 5, 16, 80: 160 and 128
// keys per tile; d 5 and 80 end in a partial block along d, s_kv 11 and 5 in a partial block of
// keys), block_n given (tiles that split the keys; the block scalings take multiples of their
// block), order seeds 0 and 3, and an outlier head (q 30x in head 1: P spans e4m3's subnormals).
static int attn_case_fp8_fa3(const attn_case_backend *be)
{
    const pp_attn_dims shapes[] = {
        {2, 7, 11, 4, 2, 5, 0}, {2, 7, 11, 4, 2, 5, 1}, {1, 9, 5, 3, 1, 16, 1}, {1, 33, 40, 2, 2, 80, 1},
        {1, 1, 1, 1, 1, 1, 0},
    };
    const pp_attn_fp8_scaling schemes[] = {PP_ATTN_FP8_SCALING_AUTO, PP_ATTN_FP8_SCALING_NONE,
                                           PP_ATTN_FP8_SCALING_DELAYED, PP_ATTN_FP8_SCALING_MX,
                                           PP_ATTN_FP8_SCALING_NVFP4};
    const char *const scheme_names[] = {"auto", "none", "tensor-delayed", "mx", "nvfp4"};
    const int block_ns[] = {0, 3, 16}, block_ns_mx[] = {0, 32, 64};
    int fails = 0;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int sc = 0; sc < 5; sc++)
            for (int bn = 0; bn < 3; bn++)
                for (int seed = 0; seed < 2; seed++) {
                    bufs B;
                    pp_attn_variant v;
                    fp8_case_setup(&B, &v, &shapes[i], pp_test_seed() + 200 + i);
                    v.fp8_scaling = schemes[sc];
                    // delayed: stale scales (q's history below its 30x head: it saturates)
                    v.fp8_delayed_s[0] = 448.0 / 4.0, v.fp8_delayed_s[1] = 448.0 / 3.0, v.fp8_delayed_s[2] = 100.0;
                    int blocked = schemes[sc] == PP_ATTN_FP8_SCALING_MX || schemes[sc] == PP_ATTN_FP8_SCALING_NVFP4;
                    v.block_n = blocked ? block_ns_mx[bn] : block_ns[bn];
                    v.order_seed = seed ? 3 : 0;
                    char what[200];
                    snprintf(what, sizeof what, "fp8 fa3 scaling %s shape %zu block_n %d order_seed %d",
                             scheme_names[sc], i, v.block_n, (int)v.order_seed);
                    fails += check_one(be, &v, &shapes[i], &B, 0, what);
                    bufs_free(&B);
                }
    return fails;
}

// FP8 with Hopper's accumulation (fp8 = "fa3", mma = "sm90-fp8": attention_fp8.h): the same
// comparison on shapes whose d (80: two groups of 32 and one of 16) and key counts (40, 70: partial
// groups of 32 in a tile) exercise every group boundary, FA3's tiles and block_n 32 and 64.
static int attn_case_fp8_sm90(const attn_case_backend *be)
{
    const pp_attn_dims shapes[] = {
        {2, 7, 11, 4, 2, 5, 0}, {1, 40, 40, 2, 1, 80, 1}, {1, 33, 70, 2, 2, 64, 0}, {1, 1, 1, 1, 1, 1, 0},
    };
    const int block_ns[] = {0, 32, 64};
    int fails = 0;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int bn = 0; bn < 3; bn++)
            for (int seed = 0; seed < 2; seed++) {
                bufs B;
                pp_attn_variant v;
                fp8_case_setup(&B, &v, &shapes[i], pp_test_seed() + 300 + i);
                v.mma = PP_ATTN_FP8_MMA_SM90;
                v.block_n = block_ns[bn];
                v.order_seed = seed ? 3 : 0;
                char what[160];
                snprintf(what, sizeof what, "fp8 fa3 mma sm90-fp8 shape %zu block_n %d order_seed %d", i,
                         block_ns[bn], (int)v.order_seed);
                fails += check_one(be, &v, &shapes[i], &B, 0, what);
                bufs_free(&B);
            }
    return fails;
}

// Every combination engine cublas supports (unfused, CP off; bf16 with storage accumulation has
// no cuBLAS compute type) on the plain shapes, checked by `check` (big: inputs ×200 that overflow
// fp16, where only agreement in the non-finite pattern is meaningful). Every stride-th
// combination only; counts the runs. Returns the number of failures.
typedef int (*attn_cublas_check)(const pp_attn_variant *v, const pp_attn_dims *dm, const bufs *B, int backward,
                                 int big, const char *what, double *worst);

static int attn_case_cublas_sweep(attn_cublas_check check, int stride, int *runs, double *worst)
{
    int fails = 0, n = 0;
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
                                    continue;  // no cuBLAS compute type: rejected (the errors tests)
                                if (n++ % stride)
                                    continue;
                                int big = (acc + sc + li + sm + mx + si) % 2 && f == 0;  // fp16 overflow
                                pp_attn_dims dm = plain_shapes[si];
                                bufs B;
                                bufs_init(&B, &dm, v.format, big ? 200.0 : 1.0,
                                          pp_test_seed() + (uint64_t)(acc * 1000 + sc * 100 + li * 10 + sm * 3 + mx));
                                char what[300];
                                snprintf(what, sizeof what, "cublas accum %s scale %s L %d softmax %s max %s %s shape %d "
                                         "inputs x%s",
                                         acc ? "storage" : "fp32", scale_names[sc], Ls[li], sm_names[sm],
                                         max_names[mx], pp_format_get(v.format).name, si, big ? "200" : "1");
                                fails += check(&v, &dm, &B, 1, big, what, worst);
                                if (si == 1)
                                    fails += check(&v, &dm, &B, 0, big, what, worst);
                                (*runs)++;
                                bufs_free(&B);
                            }
    return fails;
}

// Units for comparing against an engine whose order is not ours (cuBLAS): F's unit roundoff u.
static double unit_roundoff(pp_format_id f)
{
    return f == PP_FMT_FP16 ? 0x1p-11 : f == PP_FMT_BF16 ? 0x1p-8 : 0x1p-24;
}

// Worst |got − want| / (u·max|want|) over the elements; an element where exactly one side is
// finite, or the infinities differ, counts as +Inf.
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
        double d = fabs(got[i] - want[i]);
        double r = d == 0.0 ? 0.0 : d / (unit_roundoff(f) * (M > 0.0 ? M : 1.0));
        if (r > worst)
            worst = r;
    }
    return worst;
}

#endif
