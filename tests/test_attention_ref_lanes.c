// test_attention_ref_lanes.c — the attention reference's vector paths (AVX-512, AVX2;
// reference/attention_ref_lanes.c) against its portable scalar path, bit for bit (memcmp of every
// output and every element bound), and the scalar path against the values it gave when its
// arithmetic was last changed (a hash of them: recorded when the anchored dot and accumulation
// replaced Dot2 and the split accumulation, reference epoch 5). Run:
// build/rel/tests/test_attention_ref_lanes
#include <math.h>
#include <string.h>

#include "test_util.h"

#include "attention_ref.h"
#include "attention_ref_fast.h"
#include "attention_ref_lanes.h"
#include "format.h"

// ---------------------------------------------------------------------------------------------
// Cases: fixed shapes and inputs (a fixed LCG, not PRECPROBE_SEED: the hashes below pin them)

typedef enum fill_kind {
    FILL_PLAIN,    // bf16 values of moderate size
    FILL_SPECIAL,  // zeros, −0, binary32 subnormals, powers of two, repeated (tied) scores
    FILL_CUT,      // large q, k: most keys end more than 500 below the row maximum (cut)
    FILL_NAN,      // one NaN in k and one −Inf in v: the fast path hands the task to mpfr-plain
} fill_kind;

typedef struct lanes_case {
    int64_t b, s_q, s_kv, h, h_kv, d;
    int causal, backward;
    fill_kind fill;
    uint64_t hash;  // of the portable path's outputs and bounds (FNV-1a 64), at reference epoch 5
} lanes_case;

static const lanes_case CASES[] = {
    {1, 37, 37, 2, 2, 64, 1, 1, FILL_PLAIN, UINT64_C(0x4532ea5a2cd43979)},
    {1, 37, 37, 2, 2, 64, 0, 1, FILL_PLAIN, UINT64_C(0xfc72c71ecc171a49)},
    {2, 13, 29, 4, 2, 19, 0, 1, FILL_PLAIN, UINT64_C(0xaa106c135bbe5213)},   // GQA, s_q < s_kv, odd d
    {1, 29, 13, 3, 1, 7, 1, 1, FILL_PLAIN, UINT64_C(0x0197e259b5bc765a)},    // GQA 3:1, rows that see no key
    {1, 40, 40, 2, 1, 128, 1, 0, FILL_PLAIN, UINT64_C(0x50b4adc89ca5bd07)},  // forward only: several row blocks per head
    {1, 23, 23, 2, 2, 1, 1, 1, FILL_PLAIN, UINT64_C(0x06dfa010defe9173)},    // d = 1
    {1, 1, 1, 1, 1, 5, 0, 1, FILL_PLAIN, UINT64_C(0x65a472e2b73cf656)},      // one key
    {1, 21, 33, 2, 2, 33, 1, 1, FILL_SPECIAL, UINT64_C(0x5d9a76c0e7df467e)},
    {1, 17, 17, 2, 2, 24, 0, 1, FILL_CUT, UINT64_C(0xdcb6f2b35ed80a6a)},
    {1, 9, 9, 2, 1, 16, 1, 1, FILL_NAN, UINT64_C(0x0ad8aae050b1c8a0)},
};

static uint64_t lcg(uint64_t *s)
{
    *s = *s * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
    return *s >> 11;
}

static double draw(uint64_t *s, fill_kind f, int is_qk)
{
    double u = (double)lcg(s) * 0x1p-53, sign = lcg(s) & 1 ? -1.0 : 1.0;
    if (f == FILL_SPECIAL) {
        switch (lcg(s) % 6) {
        case 0: return 0.0;
        case 1: return -0.0;
        case 2: return sign * 0x1p-149 * (double)(1 + lcg(s) % 1000);  // binary32 subnormals
        case 3: return sign * 0.5;                                      // ties among scores
        case 4: return sign * ldexp(1.0, (int)(lcg(s) % 9) - 4);
        default: break;
        }
    }
    double scale = f == FILL_CUT && is_qk ? 40.0 : 1.0;
    return pp_round(PP_FMT_BF16, sign * scale * (0.125 + 2.0 * u), PP_RND_NE, 0);
}

typedef struct lanes_run {
    double *t[5], *e[5];
    int64_t n[5];
    pp_attn_ref_bounds b;
} lanes_run;

static double *alloc_d(int64_t n)
{
    double *p = calloc((size_t)n + 1, sizeof(double));
    assert_non_null(p);
    return p;
}

static void run_case(const lanes_case *c, pp_attn_ref_lanes lanes, lanes_run *r)
{
    pp_attn_ref_opts o = {0};
    o.method = PP_ATTN_REF_FAST;
    o.b = c->b, o.s_q = c->s_q, o.s_kv = c->s_kv, o.h = c->h, o.h_kv = c->h_kv, o.d = c->d;
    o.causal = c->causal;
    o.backward = c->backward;
    o.threads = 2;
    o.lanes = lanes;
    int64_t nq = c->b * c->s_q * c->h * c->d, nk = c->b * c->s_kv * c->h_kv * c->d;
    double *q = alloc_d(nq), *dout = alloc_d(nq), *k = alloc_d(nk), *v = alloc_d(nk);
    uint64_t s = 17;
    for (int64_t i = 0; i < nq; i++) {
        q[i] = draw(&s, c->fill, 1);
        dout[i] = draw(&s, c->fill, 0);
    }
    for (int64_t i = 0; i < nk; i++) {
        k[i] = draw(&s, c->fill, 1);
        v[i] = draw(&s, c->fill, 0);
    }
    if (c->fill == FILL_NAN) {
        k[nk / 2] = NAN;
        v[nk / 3] = -INFINITY;
    }
    int64_t n[5] = {nq, c->b * c->h * c->s_q, nq, nk, nk};
    for (int t = 0; t < 5; t++) {
        r->n[t] = n[t];
        r->t[t] = alloc_d(n[t]);
        r->e[t] = alloc_d(n[t]);
    }
    pp_attn_ref_elem_bounds eb = {r->e[0], r->e[1], r->e[2], r->e[3], r->e[4]};
    pp_error err = {0};
    int rc = pp_attention_ref_ex(&o, q, k, v, dout, r->t[0], r->t[1], r->t[2], r->t[3], r->t[4],
                                 &r->b, &eb, &err);
    if (rc != PP_OK)
        fprintf(stderr, "pp_attention_ref: %s\n", err.msg);
    assert_int_equal(rc, PP_OK);
    free(q);
    free(k);
    free(v);
    free(dout);
}

static void run_free(lanes_run *r)
{
    for (int t = 0; t < 5; t++) {
        free(r->t[t]);
        free(r->e[t]);
    }
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * UINT64_C(0x100000001b3);
    return h;
}

static uint64_t run_hash(const lanes_run *r)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (int t = 0; t < 5; t++) {
        h = fnv(h, r->t[t], sizeof(double) * (size_t)r->n[t]);
        h = fnv(h, r->e[t], sizeof(double) * (size_t)r->n[t]);
    }
    double b[5] = {r->b.out, r->b.lse, r->b.dq, r->b.dk, r->b.dv};
    h = fnv(h, b, sizeof b);
    return fnv(h, &r->b.plain_tasks, sizeof r->b.plain_tasks);
}

static const char *const NAMES[5] = {"out", "lse", "dq", "dk", "dv"};

// ---------------------------------------------------------------------------------------------
// Tests

// A binary32 value (as the reference's inputs are), biased to special patterns: ±0, subnormals,
// powers of two, large and tiny magnitudes, and equal magnitudes of opposite sign (cancellation).
static double draw_f32(uint64_t *s)
{
    double sign = lcg(s) & 1 ? -1.0 : 1.0, u = (double)lcg(s) * 0x1p-53;
    switch (lcg(s) % 8) {
    case 0: return sign * 0.0;
    case 1: return sign * 0x1p-149 * (double)(1 + lcg(s) % 4096);
    case 2: return sign * ldexp(1.0, (int)(lcg(s) % 200) - 100);
    case 3: return pp_round(PP_FMT_FP32, sign * u * 0x1p60, PP_RND_NE, 0);
    default: return pp_round(PP_FMT_FP32, sign * (0.5 + u), PP_RND_NE, 0);
    }
}

// The two vector loops alone against their portable twins, on their intermediate values (the
// chains h, c of the anchored dot; the accumulators H, lo of the anchored accumulation), which a changed
// operation or order would alter far more often than the final rounded outputs.
static void attention_ref_lanes_loops_bit_identical(void **state)
{
    (void)state;
    const pp_attn_ref_lanes choice[2] = {PP_ATTN_REF_LANES_AUTO, PP_ATTN_REF_LANES_AVX2};
    enum { D_MAX = 77, KEYS = 16 };
    uint64_t s = 5;
    int fails = 0;
    for (int k = 0; k < 2; k++) {
        const pp_attn_lanes_ *L = pp_attn_lanes_pick_(choice[k]);
        if (!L) {
            fprintf(stderr, "  no vector path on this CPU: nothing to compare\n");
            return;
        }
        for (int rep = 0; rep < 200 && fails < 10; rep++) {
            int64_t d = 1 + (int64_t)(lcg(&s) % D_MAX);
            double x[2][D_MAX], xa[2][D_MAX], keys[KEYS][D_MAX], kt[2][D_MAX * PP_ATTN_KEY_BLOCK];
            double mirror = lcg(&s) % 4 == 0;  // key 1 = −key 0: exact cancellation
            for (int64_t l = 0; l < d; l++) {
                for (int i = 0; i < 2; i++) {
                    x[i][l] = draw_f32(&s);
                    xa[i][l] = fabs(x[i][l]);
                }
                for (int m = 0; m < KEYS; m++)
                    keys[m][l] = m == 1 && mirror ? -keys[0][l] : draw_f32(&s);
            }
            for (int m = 0; m < KEYS; m++)
                for (int64_t l = 0; l < d; l++)
                    kt[m / 8][l * PP_ATTN_KEY_BLOCK + m % 8] = keys[m][l];
            // one row (dot_keys16) and two rows at once (dot_rows2), each row against dotx4, from
            // each row's anchor (or another: the same operations either way)
            double h[2 * KEYS], c[2 * KEYS], h2[2 * KEYS], c2[2 * KEYS], h4[2 * KEYS], c4[2 * KEYS];
            double A[2];
            for (int i = 0; i < 2; i++) {
                double b = 0.0;  // Σ_l |x_l|·max_m |key_m,l|: the anchor's X
                for (int64_t l = 0; l < d; l++) {
                    double km = 0.0;
                    for (int m = 0; m < KEYS; m++)
                        km = fabs(keys[m][l]) > km ? fabs(keys[m][l]) : km;
                    b += xa[i][l] * km;
                }
                A[i] = 1.5 * (rep % 5 == 4 ? ldexp(1.0, (int)(lcg(&s) % 60) - 30) : pp_attn_acc_scale_(b));
                L->dot_keys16(x[i], A[i], kt[0], kt[1], d, h + KEYS * i, c + KEYS * i);
                for (int q = 0; q < KEYS; q += 4) {
                    const double *y[4] = {keys[q], keys[q + 1], keys[q + 2], keys[q + 3]};
                    int o = KEYS * i + q;
                    pp_attn_dotx4_(x[i], y, d, A[i], h4 + o, c4 + o);
                }
            }
            L->dot_rows2(x[0], A[0], x[1], A[1], kt[0], kt[1], d, h2, c2);
            if (memcmp(h, h4, sizeof h) || memcmp(c, c4, sizeof c)) {
                fprintf(stderr, "FAIL: %s: dot_keys16 differs from dotx4 (d %lld)\n", L->name,
                        (long long)d);
                fails++;
            }
            if (memcmp(h2, h4, sizeof h2) || memcmp(c2, c4, sizeof c2)) {
                fprintf(stderr, "FAIL: %s: dot_rows2 differs from dotx4 (d %lld)\n", L->name,
                        (long long)d);
                fails++;
            }
            // ten one-term anchored accumulations of (xh + xl)·y into (H, lo), xl = ±u·|xh| or
            // less, H at an anchor 1.5·2^12 (the terms sum to far less than 2^10)
            double ah[D_MAX], al[D_MAX], bh[D_MAX], bl[D_MAX];
            for (int64_t l = 0; l < d; l++) {
                ah[l] = bh[l] = 0x1.8p12 + draw_f32(&s);
                al[l] = bl[l] = ah[l] * 0x1p-60;
            }
            for (int t = 0; t < 10; t++) {
                double xh = draw_f32(&s) * (1.0 + (double)(lcg(&s) % 1024) * 0x1p-40);
                double xl = xh * 0x1p-54 * (double)(lcg(&s) % 3);
                const double *yt[1] = {keys[t]};
                L->acc_multi(ah, al, d, 1, yt, &xh, &xl);
                pp_attn_acc_multi_(bh, bl, d, 1, yt, &xh, &xl);
            }
            if (memcmp(ah, bh, sizeof(double) * (size_t)d) || memcmp(al, bl, sizeof(double) * (size_t)d)) {
                fprintf(stderr, "FAIL: %s: acc_multi differs from the portable loop (d %lld)\n",
                        L->name, (long long)d);
                fails++;
            }
        }
    }
    assert_int_equal(fails, 0);
}

// Each vector path the CPU runs (the widest, and AVX2) gives the portable path's bits: every
// value, every element bound, every per-tensor bound. The first differing elements are printed.
static void attention_ref_lanes_bit_identical(void **state)
{
    (void)state;
    const pp_attn_ref_lanes choice[2] = {PP_ATTN_REF_LANES_AUTO, PP_ATTN_REF_LANES_AVX2};
    for (int k = 0; k < 2; k++) {
        const char *name = pp_attn_lanes_name_(pp_attn_lanes_pick_(choice[k]));
        fprintf(stderr, "  vector path: %s\n", name);
        for (size_t ci = 0; ci < sizeof CASES / sizeof *CASES; ci++) {
            lanes_run a, v;
            run_case(&CASES[ci], PP_ATTN_REF_LANES_PORTABLE, &a);
            run_case(&CASES[ci], choice[k], &v);
            int fails = 0;
            for (int t = 0; t < 5; t++)
                for (int64_t i = 0; i < a.n[t] && fails < 10; i++) {
                    if (memcmp(&a.t[t][i], &v.t[t][i], sizeof(double)) == 0 &&
                        memcmp(&a.e[t][i], &v.e[t][i], sizeof(double)) == 0)
                        continue;
                    fprintf(stderr, "FAIL: %s, case %zu: %s[%lld] differs from portable\n", name,
                            ci, NAMES[t], (long long)i);
                    pp_test_print_double("portable", a.t[t][i]);
                    pp_test_print_double(name, v.t[t][i]);
                    pp_test_print_double("portable bound", a.e[t][i]);
                    pp_test_print_double("vector bound", v.e[t][i]);
                    fails++;
                }
            if (memcmp(&a.b, &v.b, sizeof a.b) != 0) {
                fprintf(stderr, "FAIL: %s, case %zu: per-tensor bounds differ\n", name, ci);
                fails++;
            }
            run_free(&a);
            run_free(&v);
            assert_int_equal(fails, 0);
        }
    }
}

// Shapes for the row pairs of the vector dots (dot_rows2: two rows of a group over one pass of
// a key block, the last row of an odd group alone) and the side-by-side D chains of fast_dp: odd
// row counts per group and per head, blocks of keys that end inside a pair's last block, d not a
// multiple of 8 or 16, GQA, causal with s_q ≠ s_kv. Each vector path against the portable path,
// bit for bit (the portable path is the oracle: its values are pinned by the hashes above).
static void attention_ref_lanes_row_pairs_bit_identical(void **state)
{
    (void)state;
    static const lanes_case PAIRS[] = {
        {1, 33, 33, 1, 1, 128, 1, 1, FILL_PLAIN, 0},
        {1, 65, 47, 3, 1, 100, 1, 1, FILL_PLAIN, 0},
        {1, 31, 70, 2, 2, 17, 1, 1, FILL_SPECIAL, 0},
        {2, 35, 35, 2, 1, 24, 0, 1, FILL_CUT, 0},
        {1, 67, 67, 2, 2, 3, 0, 1, FILL_PLAIN, 0},
        {1, 45, 45, 2, 2, 40, 1, 0, FILL_PLAIN, 0},
    };
    const pp_attn_ref_lanes choice[2] = {PP_ATTN_REF_LANES_AUTO, PP_ATTN_REF_LANES_AVX2};
    for (int k = 0; k < 2; k++) {
        const char *name = pp_attn_lanes_name_(pp_attn_lanes_pick_(choice[k]));
        for (size_t ci = 0; ci < sizeof PAIRS / sizeof *PAIRS; ci++) {
            lanes_run a, v;
            run_case(&PAIRS[ci], PP_ATTN_REF_LANES_PORTABLE, &a);
            run_case(&PAIRS[ci], choice[k], &v);
            int fails = 0;
            for (int t = 0; t < 5; t++)
                if (memcmp(a.t[t], v.t[t], sizeof(double) * (size_t)a.n[t]) ||
                    memcmp(a.e[t], v.e[t], sizeof(double) * (size_t)a.n[t])) {
                    fprintf(stderr, "FAIL: %s, pair case %zu: %s differs from portable\n", name,
                            ci, NAMES[t]);
                    fails++;
                }
            if (memcmp(&a.b, &v.b, sizeof a.b) != 0 || a.b.plain_tasks != 0) {
                fprintf(stderr, "FAIL: %s, pair case %zu: per-tensor bounds differ or fell back\n",
                        name, ci);
                fails++;
            }
            run_free(&a);
            run_free(&v);
            assert_int_equal(fails, 0);
        }
    }
}

// The portable path gives the values it gave at reference epoch 5 (hashes recorded then).
static void attention_ref_lanes_portable_unchanged(void **state)
{
    (void)state;
    int fails = 0;
    for (size_t ci = 0; ci < sizeof CASES / sizeof *CASES; ci++) {
        lanes_run a;
        run_case(&CASES[ci], PP_ATTN_REF_LANES_PORTABLE, &a);
        uint64_t h = run_hash(&a);
        // the NaN case is the mpfr-plain path's (the fast path refuses it); every other case the
        // fast path's own
        if ((a.b.plain_tasks > 0) != (CASES[ci].fill == FILL_NAN)) {
            fprintf(stderr, "FAIL: case %zu: %lld tasks on mpfr-plain\n", ci,
                    (long long)a.b.plain_tasks);
            fails++;
        }
        if (h != CASES[ci].hash) {
            fprintf(stderr, "FAIL: case %zu: hash 0x%016llxu, recorded 0x%016llxu\n", ci,
                    (unsigned long long)h, (unsigned long long)CASES[ci].hash);
            fails++;
        }
        run_free(&a);
    }
    assert_int_equal(fails, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(attention_ref_lanes_portable_unchanged),
        cmocka_unit_test(attention_ref_lanes_loops_bit_identical),
        cmocka_unit_test(attention_ref_lanes_bit_identical),
        cmocka_unit_test(attention_ref_lanes_row_pairs_bit_identical),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
