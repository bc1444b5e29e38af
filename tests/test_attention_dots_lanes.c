// test_attention_dots_lanes.c — the CPU device's key-lane dot products (kernels/cpu/attention_device.c,
// pp_attn_cpu_dots: acc_l = fma chain from +0 over c of a_c·xT[c·ld + l], AVX-512 lanes with the
// accumulators in registers) against the plain fmaf chain, bit for bit, at every x86-64 level this
// CPU runs: hand-computed chains (the fused step's single rounding, a tie to even, −0 products from
// +0, overflow to Inf, Inf − Inf, NaN), every lane count 0 … 128 (the masked last vector), step
// counts 0, 1, 7 and 128, column strides, and random inputs biased to special values.
// The four-row form (pp_attn_cpu_dots4) too. The two-row form (pp_attn_cpu_dots2: the flash backward's pairs of rows) alongside, its second
// row a reversed and negated. The same for explain's binary64 chains (pp_attn_cpu_dots64,
// pp_attn_cpu_axpy64) against the scalar binary64 fma loops. And dk/dv's rank-1 updates
// (pp_attn_cpu_ger: a group of keys' chains over rows, each row's active keys a prefix) against the
// scalar fmaf loop.
// Run: build/rel/tests/test_attention_dots_lanes
#include <math.h>
#include <string.h>

#include "test_util.h"

#include "format.h"

#include "cpu/attention_device.h"

static const pp_isa LEVELS[] = {PP_ISA_AVX512, PP_ISA_AVX2, PP_ISA_BASELINE};

#define MAXC 128
#define MAXL 128
#define PAD 16

// Every level's acc for m lanes, nc steps, stride ld against the plain chain; returns the
// mismatches (printed, at most 10), lanes past m written counted too.
static int check_dots(const float *a, const float *xT, int64_t ld, int64_t nc, int64_t m)
{
    float acc[MAXL + PAD], want[MAXL];
    int bad = 0;
    for (int64_t l = 0; l < m; l++) {
        float s = 0.0f;
        for (int64_t c = 0; c < nc; c++)
            s = fmaf(a[c], xT[c * ld + l], s);
        want[l] = s;
    }
    for (size_t v = 0; v < sizeof LEVELS / sizeof *LEVELS; v++) {
        memset(acc, 0x5A, sizeof acc);
        pp_attn_cpu_dots(LEVELS[v], a, xT, ld, nc, acc, m);
        for (int64_t l = 0; l < m; l++)
            if (pp_f32_bits(acc[l]) != pp_f32_bits(want[l]) && bad++ < 10)
                fprintf(stderr, "  dots (%s), lane %lld of %lld, %lld steps, ld %lld: got %a (0x%08x), want %a (0x%08x)\n",
                        pp_isa_name(LEVELS[v]), (long long)l, (long long)m, (long long)nc, (long long)ld,
                        (double)acc[l], pp_f32_bits(acc[l]), (double)want[l], pp_f32_bits(want[l]));
        for (int64_t l = m; l < MAXL + PAD; l++)
            if (pp_f32_bits(acc[l]) != 0x5A5A5A5Au && bad++ < 10)
                fprintf(stderr, "  dots (%s): wrote lane %lld past %lld\n", pp_isa_name(LEVELS[v]), (long long)l,
                        (long long)m);
    }
    // the two-row form (pp_attn_cpu_dots2): row 0 a, row 1 a reversed and negated, each row the bits
    // of the one-row form at the same level (a NaN's sign included: which NaN operand an FMA passes
    // on is the hardware's choice, so the one-row form is the oracle; NaN against the scalar chain)
    float b[MAXC], acc1[MAXL + PAD], want1[MAXL];
    for (int64_t c = 0; c < nc; c++)
        b[c] = -a[nc - 1 - c];
    for (size_t v = 0; v < sizeof LEVELS / sizeof *LEVELS; v++) {
        pp_attn_cpu_dots(LEVELS[v], b, xT, ld, nc, want1, m);
        for (int64_t l = 0; l < m; l++) {
            float s = 0.0f;
            for (int64_t c = 0; c < nc; c++)
                s = fmaf(b[c], xT[c * ld + l], s);
            int same = isnan(s) ? isnan(want1[l]) : pp_f32_bits(s) == pp_f32_bits(want1[l]);
            if (!same && bad++ < 10)
                fprintf(stderr, "  dots (%s), reversed row, lane %lld: got %a, want %a\n", pp_isa_name(LEVELS[v]),
                        (long long)l, (double)want1[l], (double)s);
        }
        memset(acc, 0x5A, sizeof acc);
        memset(acc1, 0x5A, sizeof acc1);
        pp_attn_cpu_dots2(LEVELS[v], a, b, xT, ld, nc, acc, acc1, m);
        for (int64_t l = 0; l < m; l++)
            if ((pp_f32_bits(acc[l]) != pp_f32_bits(want[l]) || pp_f32_bits(acc1[l]) != pp_f32_bits(want1[l])) && bad++ < 10)
                fprintf(stderr, "  dots2 (%s), lane %lld of %lld, %lld steps, ld %lld: got %a, %a, want %a, %a\n",
                        pp_isa_name(LEVELS[v]), (long long)l, (long long)m, (long long)nc, (long long)ld,
                        (double)acc[l], (double)acc1[l], (double)want[l], (double)want1[l]);
        for (int64_t l = m; l < MAXL + PAD; l++)
            if ((pp_f32_bits(acc[l]) != 0x5A5A5A5Au || pp_f32_bits(acc1[l]) != 0x5A5A5A5Au) && bad++ < 10)
                fprintf(stderr, "  dots2 (%s): wrote lane %lld past %lld\n", pp_isa_name(LEVELS[v]), (long long)l,
                        (long long)m);
    }
    // the four-row form (pp_attn_cpu_dots4: the flash forward's row groups, the backward's quads):
    // rows b, a, a, b (each row's own chain, not a neighbour's), each the one-row form's bits at
    // the same level, but for which NaN: with two NaN operands an FMA passes on the one its
    // instruction form puts first, and GCC picks the form per register allocation (the masked
    // last vector of a 64-key half here), so a NaN is checked as a NaN; nothing written past m
    float acc2[MAXL + PAD], acc3[MAXL + PAD];
    const float *rows4[4] = {b, a, a, b};
    float *accs4[4] = {acc, acc1, acc2, acc3};
    const float *want4[4] = {want1, want, want, want1};
    for (size_t v = 0; v < sizeof LEVELS / sizeof *LEVELS; v++) {
        pp_attn_cpu_dots(LEVELS[v], b, xT, ld, nc, want1, m);
        for (int i = 0; i < 4; i++)
            memset(accs4[i], 0x5A, sizeof acc);
        pp_attn_cpu_dots4(LEVELS[v], rows4, xT, ld, nc, accs4, m);
        for (int i = 0; i < 4; i++) {
            for (int64_t l = 0; l < m; l++)
                if (!(isnan(want4[i][l]) ? isnan(accs4[i][l]) : pp_f32_bits(accs4[i][l]) == pp_f32_bits(want4[i][l])) &&
                    bad++ < 10)
                    fprintf(stderr, "  dots4 (%s), row %d, lane %lld of %lld, %lld steps, ld %lld: got %a, want %a\n",
                            pp_isa_name(LEVELS[v]), i, (long long)l, (long long)m, (long long)nc, (long long)ld,
                            (double)accs4[i][l], (double)want4[i][l]);
            for (int64_t l = m; l < MAXL + PAD; l++)
                if (pp_f32_bits(accs4[i][l]) != 0x5A5A5A5Au && bad++ < 10)
                    fprintf(stderr, "  dots4 (%s): row %d wrote lane %lld past %lld\n", pp_isa_name(LEVELS[v]), i,
                            (long long)l, (long long)m);
        }
    }
    return bad;
}

// Hand-computed two-step chains, each in every lane position of a 128-lane run (the others 0):
// the result, bit for bit, from every level.
static void dots_lanes_hand_computed(void **state)
{
    (void)state;
    const float e12 = 1.0f + 0x1p-12f;
    static struct {
        float a0, x0, a1, x1, want;
        const char *why;
    } cases[] = {
        // fused: −1 + (1 + 2^-12)² = 2^-11 + 2^-24 exactly (a separate multiply rounds to 1 + 2^-11 first)
        {1.0f, -1.0f, 0.0f, 0.0f, 0.0f, "fma keeps the product exact"},
        {1.0f, 0x1p24f, 1.0f, 1.0f, 0x1p24f, "2^24 + 1 ties to even 2^24"},
        {1.0f, 0x1p24f, 1.0f, 3.0f, 0x1p24f + 4.0f, "2^24 + 3 ties to even 2^24 + 4"},
        {-0.0f, 1.0f, 1.0f, -0.0f, 0.0f, "-0 products from +0 stay +0"},
        {0x1p127f, 2.0f, 1.0f, 1.0f, INFINITY, "overflow to +Inf"},
        {0x1p127f, 2.0f, -0x1p127f, 2.0f, INFINITY, "Inf + (-2^128): the fused product never overflows"},
        {0x1p127f, 2.0f, -1.0f, INFINITY, NAN, "Inf - Inf"},
        {0x1p-149f, 1.0f, 0x1p-149f, 1.0f, 0x1p-148f, "subnormals add exactly"},
        {0x1p-75f, 0x1p-75f, 0x1p-149f, 1.0f, 0x1p-149f, "2^-150 + 2^-149: first step ties to +0"},
    };
    cases[0].a1 = e12, cases[0].x1 = e12, cases[0].want = 0x1p-11f + 0x1p-24f;
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (int64_t pos = 0; pos < MAXL; pos += 7) {
            float a[2] = {cases[i].a0, cases[i].a1}, xT[2 * MAXL], acc[MAXL];
            memset(xT, 0, sizeof xT);
            xT[pos] = cases[i].x0, xT[MAXL + pos] = cases[i].x1;
            for (size_t v = 0; v < sizeof LEVELS / sizeof *LEVELS; v++) {
                pp_attn_cpu_dots(LEVELS[v], a, xT, MAXL, 2, acc, MAXL);
                int ok = isnan(cases[i].want) ? isnan(acc[pos]) : pp_f32_bits(acc[pos]) == pp_f32_bits(cases[i].want);
                if (!ok && bad++ < 10)
                    fprintf(stderr, "  %s (%s), lane %lld: got %a, want %a\n", cases[i].why, pp_isa_name(LEVELS[v]),
                            (long long)pos, (double)acc[pos], (double)cases[i].want);
            }
        }
    assert_int_equal(bad, 0);
}

static uint64_t rng_next(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 11;
}

// A random float, 1 in 8 a special value (±0, ±Inf, NaN, subnormal, huge).
static float rand_float(uint64_t *s)
{
    static const uint32_t special[] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00001u,
                                       0x00000001u, 0x807fffffu, 0x7f7fffffu};
    uint64_t r = rng_next(s);
    if (r % 8 == 0)
        return pp_f32_from_bits(special[(r >> 3) % 8]);
    return (float)((double)(int64_t)(rng_next(s) % 2000001) / 1000000.0 - 1.0) * (r % 5 == 1 ? 1e30f : 1.0f);
}

// Every lane count 0 … 128 at step counts 0, 1, 7, 128 and strides m, 128 and 131, random inputs.
static void dots_lanes_every_width(void **state)
{
    (void)state;
    static float a[MAXC], xT[MAXC * (MAXL + 3)];
    uint64_t s = pp_test_seed();
    int bad = 0;
    const int64_t steps[] = {0, 1, 7, MAXC};
    for (int64_t m = 0; m <= MAXL && bad < 10; m++)
        for (size_t k = 0; k < sizeof steps / sizeof *steps; k++) {
            const int64_t lds[] = {m > 0 ? m : 1, MAXL, MAXL + 3};
            for (size_t j = 0; j < 3; j++) {
                for (int64_t c = 0; c < MAXC; c++)
                    a[c] = rand_float(&s);
                for (int64_t i = 0; i < MAXC * (MAXL + 3); i++)
                    xT[i] = rand_float(&s);
                bad += check_dots(a, xT, lds[j], steps[k], m);
            }
        }
    if (bad)
        pp_test_report_seed();
    assert_int_equal(bad, 0);
}

// ---- explain's binary64 chains (pp_attn_cpu_axpy64, pp_attn_cpu_dots64): each lane the scalar
// fma((double)a, (double)x, y) chain, bit for bit, at every level.

static int check_dots64(const float *a, const float *xT, int64_t ld, int64_t nc, int64_t m)
{
    double acc[MAXL + PAD], want[MAXL];
    int bad = 0;
    for (int64_t l = 0; l < m; l++) {
        double s = 0.0;
        for (int64_t c = 0; c < nc; c++)
            s = fma((double)a[c], (double)xT[c * ld + l], s);
        want[l] = s;
    }
    for (size_t v = 0; v < sizeof LEVELS / sizeof *LEVELS; v++) {
        memset(acc, 0x5A, sizeof acc);
        pp_attn_cpu_dots64(LEVELS[v], a, xT, ld, nc, acc, m);
        for (int64_t l = 0; l < m; l++)
            if (pp_f64_bits(acc[l]) != pp_f64_bits(want[l]) && bad++ < 10)
                fprintf(stderr, "  dots64 (%s), lane %lld of %lld, %lld steps, ld %lld: got %a, want %a\n",
                        pp_isa_name(LEVELS[v]), (long long)l, (long long)m, (long long)nc, (long long)ld, acc[l],
                        want[l]);
        for (int64_t l = m; l < MAXL + PAD; l++)
            if (pp_f64_bits(acc[l]) != 0x5A5A5A5A5A5A5A5Aull && bad++ < 10)
                fprintf(stderr, "  dots64 (%s): wrote lane %lld past %lld\n", pp_isa_name(LEVELS[v]), (long long)l,
                        (long long)m);
    }
    return bad;
}

// nt axpy64 steps on y0 (n lanes) against the scalar steps.
static int check_axpy64(const float *a, const float *x, int nt, const double *y0, int64_t n)
{
    double y[MAXL + PAD], want[MAXL];
    int bad = 0;
    for (int64_t l = 0; l < n; l++) {
        want[l] = y0[l];
        for (int t = 0; t < nt; t++)
            want[l] = fma((double)a[t], (double)x[t * MAXL + l], want[l]);
    }
    for (size_t v = 0; v < sizeof LEVELS / sizeof *LEVELS; v++) {
        memset(y, 0x5A, sizeof y);
        memcpy(y, y0, (size_t)n * sizeof *y);
        for (int t = 0; t < nt; t++)
            pp_attn_cpu_axpy64(LEVELS[v], a[t], x + t * MAXL, y, n);
        for (int64_t l = 0; l < n; l++)
            if (pp_f64_bits(y[l]) != pp_f64_bits(want[l]) && bad++ < 10)
                fprintf(stderr, "  axpy64 (%s), lane %lld of %lld, %d steps: got %a, want %a\n",
                        pp_isa_name(LEVELS[v]), (long long)l, (long long)n, nt, y[l], want[l]);
        for (int64_t l = n; l < MAXL + PAD; l++)
            if (pp_f64_bits(y[l]) != 0x5A5A5A5A5A5A5A5Aull && bad++ < 10)
                fprintf(stderr, "  axpy64 (%s): wrote lane %lld past %lld\n", pp_isa_name(LEVELS[v]), (long long)l,
                        (long long)n);
    }
    return bad;
}

// Hand-computed binary64 chains, in every lane position (7 apart) of 128: the fused step's single
// binary64 rounding, ties to even at 2^53, signed zeros, Inf and Inf − Inf.
static void lanes64_hand_computed(void **state)
{
    (void)state;
    const float e = 1.0f + 0x1p-23f;
    static struct {
        float a0, x0, a1, x1;
        double want;
        const char *why;
    } cases[] = {
        // (1 + 2^-23)² − 1 = 2^-22 + 2^-46 exactly: binary64 keeps it (a binary32 chain would not)
        {1.0f, -1.0f, 0.0f, 0.0f, 0.0, "the product of two binary32 values is exact in binary64"},
        {0x1p26f, 0x1p27f, 1.0f, 1.0f, 0x1p53, "2^53 + 1 ties to even 2^53"},
        {0x1p26f, 0x1p27f, 1.0f, 3.0f, 0x1p53 + 4.0, "2^53 + 3 ties to even 2^53 + 4"},
        {-0.0f, 1.0f, 1.0f, -0.0f, 0.0, "-0 products from +0 stay +0"},
        {0x1p127f, 0x1p127f, 0x1p-149f, 0x1p-149f, 0x1p254, "2^254 + 2^-298: the tiny product is lost"},
        {INFINITY, 1.0f, 1.0f, 1.0f, INFINITY, "Inf stays"},
        {INFINITY, 1.0f, -1.0f, INFINITY, NAN, "Inf - Inf"},
        {0x1p-149f, 0x1p-149f, 0x1p-149f, 0x1p-149f, 0x1p-297, "2^-298 twice: subnormal binary32 products, exact"},
    };
    cases[0].a1 = e, cases[0].x1 = e, cases[0].want = 0x1p-22 + 0x1p-46;
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (int64_t pos = 0; pos < MAXL; pos += 7) {
            float a[2] = {cases[i].a0, cases[i].a1}, xT[2 * MAXL];
            double acc[MAXL], y[MAXL];
            memset(xT, 0, sizeof xT);
            xT[pos] = cases[i].x0, xT[MAXL + pos] = cases[i].x1;
            for (size_t v = 0; v < sizeof LEVELS / sizeof *LEVELS; v++) {
                pp_attn_cpu_dots64(LEVELS[v], a, xT, MAXL, 2, acc, MAXL);
                for (int64_t l = 0; l < MAXL; l++)
                    y[l] = 0.0;
                pp_attn_cpu_axpy64(LEVELS[v], a[0], xT, y, MAXL);
                pp_attn_cpu_axpy64(LEVELS[v], a[1], xT + MAXL, y, MAXL);
                const double got[2] = {acc[pos], y[pos]};
                for (int k = 0; k < 2; k++) {
                    int ok = isnan(cases[i].want) ? isnan(got[k]) : pp_f64_bits(got[k]) == pp_f64_bits(cases[i].want);
                    if (!ok && bad++ < 10)
                        fprintf(stderr, "  %s (%s, %s), lane %lld: got %a, want %a\n", cases[i].why,
                                k ? "axpy64" : "dots64", pp_isa_name(LEVELS[v]), (long long)pos, got[k],
                                cases[i].want);
                }
            }
        }
    assert_int_equal(bad, 0);
}

// Every lane count 0 … 128 (the masked or scalar tails), step counts 0, 1, 7, 128, strides m, 128
// and 131, random inputs biased to special values; axpy64 from random binary64 starts.
static void lanes64_every_width(void **state)
{
    (void)state;
    static float a[MAXC], xT[MAXC * (MAXL + 3)];
    static double y0[MAXL];
    uint64_t s = pp_test_seed();
    int bad = 0;
    const int64_t steps[] = {0, 1, 7, MAXC};
    for (int64_t m = 0; m <= MAXL && bad < 10; m++)
        for (size_t k = 0; k < sizeof steps / sizeof *steps; k++) {
            const int64_t lds[] = {m > 0 ? m : 1, MAXL, MAXL + 3};
            for (size_t j = 0; j < 3; j++) {
                for (int64_t c = 0; c < MAXC; c++)
                    a[c] = rand_float(&s);
                for (int64_t i = 0; i < MAXC * (MAXL + 3); i++)
                    xT[i] = rand_float(&s);
                bad += check_dots64(a, xT, lds[j], steps[k], m);
            }
            for (int64_t l = 0; l < MAXL; l++)
                y0[l] = (double)rand_float(&s) * (double)rand_float(&s);
            bad += check_axpy64(a, xT, (int)(steps[k] < 7 ? steps[k] : 7), y0, m);
        }
    if (bad)
        pp_test_report_seed();
    assert_int_equal(bad, 0);
}

// ---------------------------------------------------------------------------------------------
// dk/dv's rank-1 updates (pp_attn_cpu_ger) against the scalar loop of fmaf, bit for bit: every key
// count 1 … 8 with every lane count 1 … 128, rows whose active keys are every prefix (0 … ng: the
// causal edge, where a row's later keys do not see it), row counts 0, 1, 5 and 32, initial
// accumulators and operands biased to special values (±0, ±Inf, NaN payloads, subnormals, ties of
// the fused step), and nothing written past a key's m lanes nor to keys past ng (NaN results
// against NaN: the FMA's choice of NaN operand is the hardware's).

#define GER_ROWS 32
#define GER_KEYS 8

static float ger_special(pp_test_rng *r)
{
    static const uint32_t sp[] = {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00011u, 0xFFA00003u,
                                  0x00000001u, 0x807FFFFFu, 0x7F7FFFFFu, 0x3F800001u, 0x33800000u, 0xB3800000u};
    uint64_t u = pp_test_rng_next(r);
    if (u % 7 == 0)
        return pp_f32_from_bits(sp[(u >> 8) % (sizeof sp / sizeof *sp)]);
    return (float)(pp_test_rng_unit(r) * 4.0 - 2.0);
}

static int check_ger(pp_test_rng *r, int nr, int ng, int64_t m)
{
    static float arows[GER_ROWS][GER_KEYS], xrows[GER_ROWS][MAXL], acc0[GER_KEYS * MAXL];
    static float got[GER_KEYS * MAXL], want[GER_KEYS * MAXL];
    const float *a[GER_ROWS], *x[GER_ROWS];
    int na[GER_ROWS];
    for (int i = 0; i < nr; i++) {
        for (int g = 0; g < GER_KEYS; g++)
            arows[i][g] = ger_special(r);
        for (int64_t l = 0; l < MAXL; l++)
            xrows[i][l] = ger_special(r);
        a[i] = arows[i], x[i] = xrows[i];
        uint64_t u = pp_test_rng_next(r) % 4;  // mostly all keys, else any prefix (0 … ng, past ng too)
        na[i] = u ? ng + (int)(pp_test_rng_next(r) % 2) : (int)(pp_test_rng_next(r) % (uint64_t)(ng + 1));
    }
    for (int i = 0; i < GER_KEYS * MAXL; i++)
        acc0[i] = ger_special(r);
    memcpy(want, acc0, sizeof want);
    for (int i = 0; i < nr; i++)
        for (int g = 0; g < ng && g < na[i]; g++)
            for (int64_t l = 0; l < m; l++)
                want[g * MAXL + l] = fmaf(a[i][g], x[i][l], want[g * MAXL + l]);
    int bad = 0;
    for (size_t v = 0; v < sizeof LEVELS / sizeof *LEVELS; v++) {
        memcpy(got, acc0, sizeof got);
        pp_attn_cpu_ger(LEVELS[v], nr, a, x, na, ng, got, m);
        // NaN against NaN: which NaN operand an FMA passes on is the hardware's choice (as for the
        // dots above); every other value bit for bit
        for (int i = 0; i < GER_KEYS * MAXL; i++)
            if ((isnan(want[i]) ? !isnan(got[i]) : pp_f32_bits(got[i]) != pp_f32_bits(want[i])) && bad++ < 10)
                fprintf(stderr, "  ger lanes (%s): rows %d, keys %d, lanes %lld: key %d lane %d: got %a (0x%08x), "
                        "want %a (0x%08x)\n", pp_isa_name(LEVELS[v]), nr, ng, (long long)m, i / MAXL, i % MAXL,
                        (double)got[i], pp_f32_bits(got[i]), (double)want[i], pp_f32_bits(want[i]));
    }
    return bad;
}

static void ger_lanes_every_width(void **state)
{
    (void)state;
    pp_test_rng r = {pp_test_seed() ^ 0x6E12u};
    int bad = 0;
    for (int ng = 1; ng <= GER_KEYS && bad == 0; ng++)
        for (int64_t m = 1; m <= MAXL && bad == 0; m++)
            bad += check_ger(&r, m % 3 == 0 ? 5 : GER_ROWS, ng, m);
    for (int ng = 1; ng <= GER_KEYS; ng++) {
        bad += check_ger(&r, 0, ng, 128);
        bad += check_ger(&r, 1, ng, 128);
        bad += check_ger(&r, 1, ng, 40);
    }
    // the fused step's single rounding: 1 + 2^−12 times itself, added to −1 (an unfused
    // product-then-add rounds the product's 2^−24 away, the FMA keeps it: 2^−11 + 2^−24)
    float one = 0x1.001p0f, xr[MAXL], accv[GER_KEYS * MAXL];
    const float *ap[1] = {(const float[GER_KEYS]){one, one, one, one, one, one, one, one}}, *xp[1] = {xr};
    for (int64_t l = 0; l < MAXL; l++)
        xr[l] = one;
    for (size_t v = 0; v < sizeof LEVELS / sizeof *LEVELS; v++) {
        for (int i = 0; i < GER_KEYS * MAXL; i++)
            accv[i] = -1.0f;
        pp_attn_cpu_ger(LEVELS[v], 1, ap, xp, (const int[]){8}, 8, accv, 128);
        for (int i = 0; i < GER_KEYS * MAXL; i++)
            bad += pp_f32_bits(accv[i]) != pp_f32_bits(fmaf(one, one, -1.0f));
    }
    assert_true(pp_f32_bits(fmaf(one, one, -1.0f)) == pp_f32_bits(0x1.0008p-11f));  // the oracle fuses
    if (bad)
        pp_test_report_seed();
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dots_lanes_hand_computed),
        cmocka_unit_test(dots_lanes_every_width),
        cmocka_unit_test(lanes64_hand_computed),
        cmocka_unit_test(lanes64_every_width),
        cmocka_unit_test(ger_lanes_every_width),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
