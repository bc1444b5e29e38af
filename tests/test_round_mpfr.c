// test_round_mpfr.c — pp_round and the named rounding functions against MPFR as the oracle, in NE
// and TZ: the neighbourhood of every fp16, bf16, tf32, E4M3 and E5M2 value, ≥ 10M biased random
// binary64 per format, biased binary32 inputs, and single binary32 operations (+ − × ÷ √).
#include "test_util.h"

#include <math.h>
#include <mpfr.h>
#include <pthread.h>

#include "format.h"

// ---------------------------------------------------------------------------------------------
// Random numbers: test_util.h's xoshiro256**, one stream per sweep

static uint64_t rng_below(pp_test_xoshiro *g, uint64_t n) { return pp_test_xoshiro_next(g) % n; }

// ---------------------------------------------------------------------------------------------
// The oracle: MPFR with the format's precision and exponent range
//
// MPFR writes x = m·2^e with m in [1/2, 1), so the format's smallest subnormal 2^(emin−p+1) has
// MPFR exponent emin − p + 2 and the values of its top binade exponent emax + 1. mpfr_set_d
// rounds to p bits inside that range (overflow to ±Inf in RNDN, to the largest p-bit value in
// RNDZ); mpfr_subnormalize then re-rounds below 2^emin in fixed point, using the first rounding's
// ternary value so that there is no double rounding (MPFR manual, mpfr_subnormalize). E4M3 has no
// Inf and stops at 448 where p and emax allow 480: every result beyond 448 saturates. The range
// is thread-local (MPFR is built with TLS: checked in main), so each thread sets its own.

typedef struct oracle {
    pp_format F;
    mpfr_t v, a, b, max;
    mpfr_exp_t old_emin, old_emax;
} oracle;

static void oracle_init(oracle *o, pp_format_id f)
{
    o->F = pp_format_get(f);
    o->old_emin = mpfr_get_emin();
    o->old_emax = mpfr_get_emax();
    mpfr_set_emin(o->F.emin - o->F.p + 2);
    mpfr_set_emax(o->F.emax + 1);
    mpfr_init2(o->v, o->F.p);
    mpfr_inits2(53, o->a, o->b, o->max, (mpfr_ptr)0);
    mpfr_set_d(o->max, o->F.max_finite, MPFR_RNDN);
}

static void oracle_clear(oracle *o)
{
    mpfr_clears(o->v, o->a, o->b, o->max, (mpfr_ptr)0);
    mpfr_set_emin(o->old_emin);
    mpfr_set_emax(o->old_emax);
}

static mpfr_rnd_t mpfr_mode(pp_rounding m) { return m == PP_RND_NE ? MPFR_RNDN : MPFR_RNDZ; }

// The format's value from o->v after a first rounding with ternary t. mpfr_subnormalize is a
// no-op (it only passes t on) outside the subnormal range EXP < emin + p − 1 = F.emin + 1, so
// the fast path calls it only inside; the plain path (always_sub) always, as the manual does.
static void oracle_finish_v(oracle *o, int t, mpfr_rnd_t rnd, int always_sub)
{
    if (always_sub || (mpfr_regular_p(o->v) && mpfr_get_exp(o->v) < o->F.emin + 1))
        mpfr_subnormalize(o->v, t, rnd);
    if (o->F.has_inf || mpfr_nan_p(o->v) || mpfr_cmpabs(o->v, o->max) <= 0)
        return;
    // E4M3 (torch's float8_e4m3fn): ±Inf in any mode, and an overflow in RNDN, give NaN with the
    // sign; RNDZ's overflow (MPFR's 480) saturates to ±448
    int s = mpfr_signbit(o->v);
    if (o->F.has_nan && (mpfr_inf_p(o->v) || rnd != MPFR_RNDZ)) {
        mpfr_set_nan(o->v);
        mpfr_setsign(o->v, o->v, s, MPFR_RNDN);
    } else {
        mpfr_setsign(o->v, o->max, s, MPFR_RNDN);
    }
}

static double oracle_finish(oracle *o, int t, mpfr_rnd_t rnd)
{
    oracle_finish_v(o, t, rnd, 1);
    if (mpfr_nan_p(o->v))  // E4M3's overflow: NaN with the sign (mpfr_get_d drops it)
        return mpfr_signbit(o->v) ? -NAN : NAN;
    return mpfr_get_d(o->v, MPFR_RNDN);  // exact: p ≤ 53 bits inside binary64's range
}

// The plain oracle: mpfr_set_d, mpfr_subnormalize, mpfr_get_d.
static double oracle_round(oracle *o, double x, pp_rounding m)
{
    if (isnan(x))
        return x;  // pp_round returns a NaN unchanged: compared bit for bit
    int t = mpfr_set_d(o->v, x, mpfr_mode(m));
    return oracle_finish(o, t, mpfr_mode(m));
}

// x as an MPFR number without copying or rounding, through MPFR's custom interface: the
// significand is one 64-bit limb in *limb (which must outlive X). x must not be NaN.
_Static_assert(GMP_NUMB_BITS == 64, "one 64-bit limb holds a binary64 significand");
static void exact_mpfr(mpfr_ptr X, mp_limb_t *limb, double x)
{
    uint64_t u = pp_f64_bits(x), a = u & ~PP_F64_SIGN;
    int sign = u >> 63 ? -1 : 1, be = (int)(a >> 52);
    *limb = 0;
    if (a == 0) {
        mpfr_custom_init_set(X, sign * MPFR_ZERO_KIND, 0, 64, limb);
    } else if (a == PP_F64_INF) {
        mpfr_custom_init_set(X, sign * MPFR_INF_KIND, 0, 64, limb);
    } else {
        uint64_t M = (a & PP_F64_FRAC) | (be ? PP_F64_FRAC + 1 : 0);
        int lz = __builtin_clzll(M);
        *limb = (mp_limb_t)(M << lz);  // normalized: top bit set; x = 0.limb·2^(e + 64 − lz)
        mpfr_custom_init_set(X, sign * MPFR_REGULAR_KIND, (be ? be : 1) - 1075 + 64 - lz, 64, limb);
    }
}

// The fast oracle: 1 when got is x correctly rounded to the format in mode m. x enters MPFR
// exactly through exact_mpfr (mpfr_set_d when its exponent lies outside the format's MPFR range,
// where mpfr_set's input would be out of range), got is compared as an MPFR number, and *want
// gets MPFR's value only on a mismatch. Checked against oracle_round by
// oracle_fast_path_matches_plain_mpfr.
static int oracle_agrees(oracle *o, double x, pp_rounding m, double got, double *want)
{
    if (isnan(x)) {
        *want = x;
        return pp_test_same_bits(got, x);
    }
    mpfr_rnd_t rnd = mpfr_mode(m);
    mpfr_t X, G;
    mp_limb_t lx, lg;
    exact_mpfr(X, &lx, x);
    int t;
    if (mpfr_regular_p(X) && (mpfr_get_exp(X) < o->F.emin - o->F.p + 2 || mpfr_get_exp(X) > o->F.emax + 1))
        t = mpfr_set_d(o->v, x, rnd);
    else
        t = mpfr_set(o->v, X, rnd);
    oracle_finish_v(o, t, rnd, 0);
    int ok = 0;
    if (mpfr_nan_p(o->v)) {
        ok = isnan(got) && !signbit(got) == !mpfr_signbit(o->v);
    } else if (!isnan(got)) {
        exact_mpfr(G, &lg, got);
        ok = mpfr_equal_p(o->v, G) && !mpfr_signbit(o->v) == !signbit(got);
    }
    if (!ok)
        *want = mpfr_get_d(o->v, MPFR_RNDN);
    return ok;
}

// ---------------------------------------------------------------------------------------------
// Failure records (filled by worker threads, printed and asserted by the main thread)

#define MAX_FAILS 10

typedef struct fail_rec {
    const char *what;
    const char *mode;
    uint64_t idx;
    double x, y, got, want;  // y: second operand of an operation (NAN otherwise)
} fail_rec;

typedef struct fails {
    int n;
    fail_rec rec[MAX_FAILS];
} fails;

static const char *mode_name(pp_rounding m) { return m == PP_RND_NE ? "NE" : m == PP_RND_TZ ? "TZ" : "SR"; }


// Records a mismatch; returns nonzero once MAX_FAILS are recorded (the caller stops).
static int fail_add(fails *fl, const char *what, pp_rounding m, uint64_t idx, double x, double y,
                    double got, double want)
{
    if (fl->n < MAX_FAILS) {
        fail_rec r = {what, mode_name(m), idx, x, y, got, want};
        fl->rec[fl->n] = r;
    }
    return ++fl->n >= MAX_FAILS;
}

static void fails_check(const fails *fl, int nfl, pp_format_id f)
{
    int total = 0;
    for (int j = 0; j < nfl; j++) {
        for (int i = 0; i < fl[j].n && i < MAX_FAILS; i++) {
            const fail_rec *r = &fl[j].rec[i];
            fprintf(stderr, "FAIL %s: format %s, mode %s, index %llu\n", r->what,
                    pp_format_get(f).name, r->mode, (unsigned long long)r->idx);
            pp_test_print_double("x", r->x);
            if (!isnan(r->y))
                pp_test_print_double("y", r->y);
            pp_test_print_double("got", r->got);
            pp_test_print_double("want", r->want);
        }
        total += fl[j].n;
    }
    if (total)
        pp_test_report_seed();
    assert_int_equal(total, 0);
}

// ---------------------------------------------------------------------------------------------
// Threads: a fixed number of chunks, so results do not depend on the machine's core count

#define NCHUNK 4

static void run_chunks(void *(*fn)(void *), void *jobs, size_t job_size)
{
    pthread_t tid[NCHUNK];
    int started[NCHUNK];
    for (int k = 0; k < NCHUNK; k++) {
        void *job = (char *)jobs + (size_t)k * job_size;
        started[k] = pthread_create(&tid[k], NULL, fn, job) == 0;
        if (!started[k])
            fn(job);  // no thread: run it here
    }
    for (int k = 0; k < NCHUNK; k++)
        if (started[k])
            pthread_join(tid[k], NULL);
}

// ---------------------------------------------------------------------------------------------
// Biased random inputs, in binary64 or binary32 layout

typedef struct layout {
    int fb;    // fraction bits
    int bias;  // exponent bias
    int sign;  // position of the sign bit
} layout;

static const layout L64 = {52, 1023, 63};
static const layout L32 = {23, 127, 31};

// Bits of 2^E·(1 + frac/2^fb) in layout L: subnormal (significand shifted right, truncated)
// below its range, Inf above.
static uint64_t make_bits(const layout *L, int E, uint64_t frac)
{
    uint64_t fmask = ((uint64_t)1 << L->fb) - 1;
    int be = E + L->bias, top = 2 * L->bias + 1;
    frac &= fmask;
    if (be >= top)
        return (uint64_t)top << L->fb;
    if (be >= 1)
        return (uint64_t)be << L->fb | frac;
    int sh = 1 - be;
    return sh < 64 ? (frac | (fmask + 1)) >> sh : 0;
}

// Bits of M·2^q in layout L (exact when representable). Requires M < 2^(fb+1).
static uint64_t value_bits(const layout *L, uint64_t M, int q)
{
    if (M == 0)
        return 0;
    int msb = 63 - __builtin_clzll(M);
    return make_bits(L, q + msb, M << (L->fb - msb));
}

// A random value M·2^q of format F: binade uniform over the subnormal range and every normal
// binade; significand uniform, or its extremes.
static void random_value(pp_test_xoshiro *g, const pp_format *F, uint64_t *M, int *q)
{
    int E = F->emin - 1 + (int)rng_below(g, (uint64_t)(F->emax - F->emin + 2));
    uint64_t half = (uint64_t)1 << (F->p - 1), r = pp_test_xoshiro_next(g) & (half - 1);
    switch (rng_below(g, 8)) {
    case 0: r = 0; break;
    case 1: r = half - 1; break;
    case 2: r = 1; break;
    default: break;
    }
    *M = E < F->emin ? r : half | r;
    *q = (E < F->emin ? F->emin : E) - F->p + 1;
}

// Bits made of runs of equal bits (lengths 1 to 16), as Arb's randtest draws mantissas.
static uint64_t runs(pp_test_xoshiro *g)
{
    uint64_t r = 0, bit = pp_test_xoshiro_next(g) & 1;
    for (int pos = 0; pos < 64;) {
        int len = 1 + (int)rng_below(g, 16);
        if (bit)
            r |= (len >= 64 - pos ? ~(uint64_t)0 : (((uint64_t)1 << len) - 1)) << pos;
        pos += len;
        bit ^= 1;
    }
    return r;
}

// One biased random input for format F, as bits in layout L.
static uint64_t gen_bits(pp_test_xoshiro *g, const pp_format *F, const layout *L)
{
    uint64_t r = pp_test_xoshiro_next(g), sign = (r & 1) << L->sign;
    uint64_t width_mask = L->sign == 63 ? ~(uint64_t)0 : ((uint64_t)1 << (L->sign + 1)) - 1;
    int p = F->p, cls = (int)((r >> 1) % 10);
    int qmax = F->emax - p + 1;
    // max_finite = Mmax·2^qmax, its p-bit significand (E4M3: 448 = 14·2^5)
    uint64_t Mmax = ((pp_f64_bits(F->max_finite) & PP_F64_FRAC) | (PP_F64_FRAC + 1)) >> (53 - p), M, b;
    int q;
    if ((cls == 4 || cls == 9) && p > L->fb)
        cls = 1;  // no midpoints of fp64 in binary64 (nor of fp32 in binary32)
    switch (cls) {
    case 0:  // anything: NaN, Inf, huge, tiny
        return pp_test_xoshiro_next(g) & width_mask;
    case 1:  // the format's exponent range and a few binades beyond, random fraction
        b = make_bits(L, F->emin - p - 3 + (int)rng_below(g, (uint64_t)(F->emax - F->emin + p + 6)),
                      pp_test_xoshiro_next(g));
        break;
    case 2:  // the format's subnormal range and just below it
        b = make_bits(L, F->emin - p - 1 + (int)rng_below(g, (uint64_t)p + 1), runs(g));
        break;
    case 3: {  // near max_finite: ± up to 2^j ulps of the layout
        uint64_t mb = value_bits(L, Mmax, qmax), d = pp_test_xoshiro_next(g) & (((uint64_t)1 << rng_below(g, 30)) - 1);
        b = pp_test_xoshiro_next(g) & 1 ? mb + d : mb - d;
        break;
    }
    case 4:  // exact midpoints between neighbours of the format, ± up to 2 layout ulps
        random_value(g, F, &M, &q);
        b = value_bits(L, 2 * M + 1, q - 1) + rng_below(g, 5) - 2;
        break;
    case 5: {  // values of the format with the bits below its last place set to a pattern
        random_value(g, F, &M, &q);
        b = value_bits(L, M ? M : 1, q);
        int be = (int)(b >> L->fb);
        int d = q - ((be ? be : 1) - L->bias - L->fb);  // layout bits below the format's ulp
        uint64_t half = d > 0 ? (uint64_t)1 << (d - 1) : 0, low = d > 0 ? (half << 1) - 1 : 0;
        uint64_t pat[6] = {low, 0, half, half - 1, half + 1, pp_test_xoshiro_next(g)};
        b |= pat[rng_below(g, 6)] & low;
        break;
    }
    case 6:  // run-structured fractions over the format's range
        b = make_bits(L, F->emin - p - 1 + (int)rng_below(g, (uint64_t)(F->emax - F->emin + p + 3)),
                      runs(g));
        break;
    case 7:  // exact values of the format
        random_value(g, F, &M, &q);
        b = value_bits(L, M, q);
        break;
    case 8:  // the whole exponent field of the layout, run-structured fraction
        b = rng_below(g, (uint64_t)2 * L->bias + 2) << L->fb | (runs(g) & (((uint64_t)1 << L->fb) - 1));
        break;
    default: {  // the overflow thresholds: max + ½ulp and 2^(emax+1), ± up to 3 layout ulps
        uint64_t t = pp_test_xoshiro_next(g) & 1 ? value_bits(L, 2 * Mmax + 1, qmax - 1)
                                     : make_bits(L, F->emax + 1, 0);
        b = t + rng_below(g, 7) - 3;
        break;
    }
    }
    return (b & (width_mask >> 1)) | sign;
}

// ---------------------------------------------------------------------------------------------
// Neighbourhood of every value: v, v ± 1 binary64 ulp, the midpoint m to the next value up,
// m ± 1 binary64 ulp, each with both signs, in NE and TZ

typedef struct nb_job {
    pp_format_id f;
    uint64_t first, last, step;  // positive finite patterns (shifted left by shift)
    int shift;                   // 13 for tf32
    fails fl;
} nb_job;

static void *nb_worker(void *arg)
{
    nb_job *j = (nb_job *)arg;
    oracle o;
    oracle_init(&o, j->f);
    const pp_rounding modes[2] = {PP_RND_NE, PP_RND_TZ};
    for (uint64_t b = j->first; b <= j->last && j->fl.n < MAX_FAILS; b += j->step) {
        double v = pp_decode(j->f, b << j->shift);
        double next = pp_decode(j->f, (b + 1) << j->shift);
        if (!isfinite(next))  // the top value: its next is max + its ulp (2^(emax+1); E4M3: 480)
            next = v + ldexp(1.0, ilogb(v) - o.F.p + 1);
        double m = (v + next) / 2;  // exact: both are multiples of the ulp, sum below 2^1024
        double in[6] = {v, nextafter(v, INFINITY), nextafter(v, -INFINITY),
                        m, nextafter(m, INFINITY), nextafter(m, -INFINITY)};
        for (int i = 0; i < 12; i++) {
            double x = i < 6 ? in[i] : -in[i - 6];
            for (int k = 0; k < 2; k++) {
                double got = pp_round(j->f, x, modes[k], 0), want;
                if (!oracle_agrees(&o, x, modes[k], got, &want) &&
                    fail_add(&j->fl, "round_matches_mpfr_neighbourhood", modes[k], b, x, NAN, got, want))
                    goto done;
            }
        }
    }
done:
    oracle_clear(&o);
    return NULL;
}

// Every positive finite pattern 0..maxpat of f (every step-th), split over the chunks.
static void neighbourhood(pp_format_id f, uint64_t maxpat, int shift, uint64_t step)
{
    nb_job jobs[NCHUNK];
    uint64_t per = (maxpat / step + NCHUNK) / NCHUNK;
    for (int k = 0; k < NCHUNK; k++) {
        nb_job j = {f, (uint64_t)k * per * step, 0, step, shift, {0, {{0}}}};
        j.last = (uint64_t)(k + 1) * per * step - 1;
        if (j.last > maxpat || k == NCHUNK - 1)
            j.last = maxpat;
        jobs[k] = j;
    }
    run_chunks(nb_worker, jobs, sizeof jobs[0]);
    fails fl[NCHUNK];
    for (int k = 0; k < NCHUNK; k++)
        fl[k] = jobs[k].fl;
    fails_check(fl, NCHUNK, f);
}

static void round_matches_mpfr_neighbourhood_fp16(void **state) { (void)state; neighbourhood(PP_FMT_FP16, 0x7BFF, 0, 1); }
static void round_matches_mpfr_neighbourhood_bf16(void **state) { (void)state; neighbourhood(PP_FMT_BF16, 0x7F7F, 0, 1); }
static void round_matches_mpfr_neighbourhood_e4m3(void **state) { (void)state; neighbourhood(PP_FMT_E4M3, 0x7E, 0, 1); }
static void round_matches_mpfr_neighbourhood_e5m2(void **state) { (void)state; neighbourhood(PP_FMT_E5M2, 0x7B, 0, 1); }
// tf32 has 2^19 positive finite values: every 3rd (a step coprime to 2, so every binade and both
// parities of the last bit), all of them when PRECPROBE_TEST_MULTIPLIER ≥ 3.
static void round_matches_mpfr_neighbourhood_tf32(void **state)
{
    (void)state;
    uint64_t step = pp_test_iters(3) >= 9 ? 1 : 3;
    neighbourhood(PP_FMT_TF32, 0x3FBFF, 13, step);
}
// fp32: every 65537th positive finite pattern (2^15 of them: every binade, many fractions).
static void round_matches_mpfr_neighbourhood_fp32(void **state) { (void)state; neighbourhood(PP_FMT_FP32, 0x7F7FFFFF, 0, 65537); }

// ---------------------------------------------------------------------------------------------
// Random binary64 and binary32 inputs

typedef struct rnd_job {
    pp_format_id f;
    int chunk;
    uint64_t n;
    fails fl;
} rnd_job;

// The named function for (f, mode) from binary32, or NULL-equivalent pp_round_from_f32.
static float named_round(pp_format_id f, pp_rounding m, float x)
{
    int ne = m == PP_RND_NE;
    switch (f) {
    case PP_FMT_TF32: return ne ? pp_round_tf32_ne(x) : pp_round_tf32_tz(x);
    case PP_FMT_FP16: return ne ? pp_round_fp16_ne(x) : pp_round_fp16_tz(x);
    case PP_FMT_BF16: return ne ? pp_round_bf16_ne(x) : pp_round_bf16_tz(x);
    case PP_FMT_E4M3: return ne ? pp_round_e4m3_ne(x) : pp_round_e4m3_tz(x);
    case PP_FMT_E5M2: return ne ? pp_round_e5m2_ne(x) : pp_round_e5m2_tz(x);
    default: return pp_round_from_f32(f, x, m, 0);
    }
}

static void *rnd64_worker(void *arg)
{
    rnd_job *j = (rnd_job *)arg;
    oracle o;
    oracle_init(&o, j->f);
    pp_test_xoshiro g;
    pp_test_xoshiro_seed(&g, 0x64000 + (uint64_t)j->f * 16 + (uint64_t)j->chunk);
    const pp_rounding modes[2] = {PP_RND_NE, PP_RND_TZ};
    for (uint64_t i = 0; i < j->n; i++) {
        double x = pp_f64_from_bits(gen_bits(&g, &o.F, &L64));
        for (int k = 0; k < 2; k++) {
            double got = pp_round(j->f, x, modes[k], 0), want;
            if (!oracle_agrees(&o, x, modes[k], got, &want) &&
                fail_add(&j->fl, "round_matches_mpfr_random_binary64", modes[k], i, x, NAN, got, want))
                goto done;
            if (j->f == PP_FMT_FP32 && !isnan(x)) {  // the named binary64 → fp32 functions
                float n = modes[k] == PP_RND_NE ? pp_round_fp32_ne(x) : pp_round_fp32_tz(x);
                if (!oracle_agrees(&o, x, modes[k], (double)n, &want) &&
                    fail_add(&j->fl, "round_fp32_matches_mpfr_random", modes[k], i, x, NAN, n, want))
                    goto done;
            }
        }
    }
done:
    oracle_clear(&o);
    return NULL;
}

static void *rnd32_worker(void *arg)
{
    rnd_job *j = (rnd_job *)arg;
    oracle o;
    oracle_init(&o, j->f);
    pp_test_xoshiro g;
    pp_test_xoshiro_seed(&g, 0x32000 + (uint64_t)j->f * 16 + (uint64_t)j->chunk);
    const pp_rounding modes[2] = {PP_RND_NE, PP_RND_TZ};
    for (uint64_t i = 0; i < j->n; i++) {
        uint32_t u = (uint32_t)gen_bits(&g, &o.F, &L32);
        float x = pp_f32_from_bits(u);
        for (int k = 0; k < 2; k++) {
            float got = pp_round_from_f32(j->f, x, modes[k], 0), fast = named_round(j->f, modes[k], x);
            double want = NAN;
            int ok = isnan(x) ? pp_f32_bits(got) == u : oracle_agrees(&o, (double)x, modes[k], got, &want);
            if (!ok && fail_add(&j->fl, "round_from_f32_matches_mpfr_random", modes[k], i, x, NAN, got, want))
                goto done;
            // the named function: bit for bit the same as pp_round_from_f32 (so also MPFR's)
            ok = pp_f32_bits(fast) == pp_f32_bits(got);
            want = got;
            if (!ok && fail_add(&j->fl, "round_named_matches_mpfr_random", modes[k], i, x, NAN, fast, want))
                goto done;
        }
    }
done:
    oracle_clear(&o);
    return NULL;
}

static void random_inputs(pp_format_id f, void *(*worker)(void *), uint64_t n)
{
    rnd_job jobs[NCHUNK];
    for (int k = 0; k < NCHUNK; k++) {
        rnd_job j = {f, k, n / NCHUNK + (k < (int)(n % NCHUNK)), {0, {{0}}}};
        jobs[k] = j;
    }
    run_chunks(worker, jobs, sizeof jobs[0]);
    fails fl[NCHUNK];
    for (int k = 0; k < NCHUNK; k++)
        fl[k] = jobs[k].fl;
    fails_check(fl, NCHUNK, f);
}

// The fast oracle path (custom interface, conditional subnormalize, comparison in MPFR) against
// the plain one (mpfr_set_d, mpfr_subnormalize, mpfr_get_d) on the same biased inputs.
static void *oracle_worker(void *arg)
{
    rnd_job *j = (rnd_job *)arg;
    oracle o;
    oracle_init(&o, j->f);
    pp_test_xoshiro g;
    pp_test_xoshiro_seed(&g, 0x0C000 + (uint64_t)j->f * 16 + (uint64_t)j->chunk);
    for (uint64_t i = 0; i < j->n; i++) {
        double x = pp_f64_from_bits(gen_bits(&g, &o.F, &L64));
        for (int k = 0; k < 2; k++) {
            pp_rounding m = k ? PP_RND_TZ : PP_RND_NE;
            double plain = oracle_round(&o, x, m), want, wrong;
            if (!oracle_agrees(&o, x, m, plain, &want) &&
                fail_add(&j->fl, "oracle_fast_path_matches_plain_mpfr", m, i, x, NAN, want, plain))
                goto done;
            // and it must reject a wrong answer: the neighbour one binary64 ulp away
            wrong = isnan(x) || isnan(plain) ? 0.0 : nextafter(plain, 0.0) == plain ? nextafter(plain, 1.0) : nextafter(plain, 0.0);
            if (oracle_agrees(&o, x, m, wrong, &want) &&
                fail_add(&j->fl, "oracle_fast_path_rejects_wrong", m, i, x, NAN, wrong, plain))
                goto done;
        }
    }
done:
    oracle_clear(&o);
    return NULL;
}

static void oracle_fast_path_matches_plain_mpfr(void **state)
{
    (void)state;
    for (int f = 0; f < PP_TEST_FMT_IEEE; f++)
        random_inputs((pp_format_id)f, oracle_worker, pp_test_iters(300000));
}

// 10M biased binary64 per format (each rounded NE and TZ: 20M comparisons with MPFR).
#define N64 10000000
static void round_matches_mpfr_random_fp64(void **state) { (void)state; random_inputs(PP_FMT_FP64, rnd64_worker, pp_test_iters(N64)); }
static void round_matches_mpfr_random_fp32(void **state) { (void)state; random_inputs(PP_FMT_FP32, rnd64_worker, pp_test_iters(N64)); }
static void round_matches_mpfr_random_tf32(void **state) { (void)state; random_inputs(PP_FMT_TF32, rnd64_worker, pp_test_iters(N64)); }
static void round_matches_mpfr_random_fp16(void **state) { (void)state; random_inputs(PP_FMT_FP16, rnd64_worker, pp_test_iters(N64)); }
static void round_matches_mpfr_random_bf16(void **state) { (void)state; random_inputs(PP_FMT_BF16, rnd64_worker, pp_test_iters(N64)); }
static void round_matches_mpfr_random_e4m3(void **state) { (void)state; random_inputs(PP_FMT_E4M3, rnd64_worker, pp_test_iters(N64)); }
static void round_matches_mpfr_random_e5m2(void **state) { (void)state; random_inputs(PP_FMT_E5M2, rnd64_worker, pp_test_iters(N64)); }

// 2M biased binary32 per format: pp_round_from_f32 and the named functions.
#define N32 2000000
static void round_from_f32_matches_mpfr_random(void **state)
{
    (void)state;
    const pp_format_id fs[6] = {PP_FMT_FP32, PP_FMT_TF32, PP_FMT_FP16, PP_FMT_BF16, PP_FMT_E4M3, PP_FMT_E5M2};
    for (int i = 0; i < 6; i++)
        random_inputs(fs[i], rnd32_worker, pp_test_iters(N32));
}

// ---------------------------------------------------------------------------------------------
// Operations: one binary32 + − × ÷ √ on values of f, then pp_round_from_f32, against the
// correctly rounded operation in f, for every format pp_format_validate passes

enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_SQRT, OP_COUNT };
static const char *const op_name[OP_COUNT] = {"add", "sub", "mul", "div", "sqrt"};

static float op_f32(int op, float a, float b)
{
    switch (op) {
    case OP_ADD: return a + b;
    case OP_SUB: return a - b;
    case OP_MUL: return a * b;
    case OP_DIV: return a / b;
    default: return sqrtf(a);
    }
}

static double op_oracle(oracle *o, int op, double a, double b)
{
    mpfr_set_d(o->a, a, MPFR_RNDN);  // exact: values of f
    mpfr_set_d(o->b, b, MPFR_RNDN);
    int t;
    switch (op) {
    case OP_ADD: t = mpfr_add(o->v, o->a, o->b, MPFR_RNDN); break;
    case OP_SUB: t = mpfr_sub(o->v, o->a, o->b, MPFR_RNDN); break;
    case OP_MUL: t = mpfr_mul(o->v, o->a, o->b, MPFR_RNDN); break;
    case OP_DIV: t = mpfr_div(o->v, o->a, o->b, MPFR_RNDN); break;
    default: t = mpfr_sqrt(o->v, o->a, MPFR_RNDN); break;
    }
    return oracle_finish(o, t, MPFR_RNDN);
}

typedef struct op_job {
    pp_format_id f;
    int chunk;
    uint64_t n;
    fails fl;
} op_job;

static double random_signed_value(pp_test_xoshiro *g, const pp_format *F)
{
    uint64_t M;
    int q;
    random_value(g, F, &M, &q);
    double v = ldexp((double)M, q);
    if (v > F->max_finite)
        v = F->max_finite;  // E4M3's 480
    return pp_test_xoshiro_next(g) & 1 ? -v : v;
}

// A pair of normal values of f whose product (div = 0) or quotient (div = 1) lies near 2^e.
static void steer(pp_test_xoshiro *g, const pp_format *F, int e, int div, double *a, double *b)
{
    // exponents: eb = e − ea (product) or ea − e (quotient) must lie in [emin, emax]
    int lo = div ? e + F->emin : e - F->emax, hi = div ? e + F->emax : e - F->emin;
    lo = lo < F->emin ? F->emin : lo;
    hi = hi > F->emax ? F->emax : hi;
    int ea = lo + (int)rng_below(g, (uint64_t)(hi - lo + 1)), eb = div ? ea - e : e - ea;
    uint64_t half = (uint64_t)1 << (F->p - 1);
    *a = ldexp((double)(half | (pp_test_xoshiro_next(g) & (half - 1))), ea - F->p + 1);
    *b = ldexp((double)(half | (pp_test_xoshiro_next(g) & (half - 1))), eb - F->p + 1);
    if (*a > F->max_finite)
        *a = F->max_finite;
    if (*b > F->max_finite)
        *b = F->max_finite;
}

static void *op_worker(void *arg)
{
    op_job *j = (op_job *)arg;
    oracle o;
    oracle_init(&o, j->f);
    pp_test_xoshiro g;
    pp_test_xoshiro_seed(&g, 0x0B000 + (uint64_t)j->f * 16 + (uint64_t)j->chunk);
    for (uint64_t i = 0; i < j->n; i++) {
        for (int op = 0; op < OP_COUNT; op++) {
            double a = random_signed_value(&g, &o.F), b = random_signed_value(&g, &o.F);
            if ((op == OP_MUL || op == OP_DIV) && pp_test_xoshiro_next(&g) % 2 == 0) {
                // steer the result into f's subnormal range (binary32's, for bf16 and tf32)
                int e = o.F.emin - o.F.p - 1 + (int)rng_below(&g, (uint64_t)o.F.p + 3);
                steer(&g, &o.F, e, op == OP_DIV, &a, &b);
            }
            if (op == OP_SQRT)
                a = fabs(a);
            float r32 = op_f32(op, (float)a, (float)b);
            double got = pp_round_from_f32(j->f, r32, PP_RND_NE, 0), want = op_oracle(&o, op, a, b);
            int ok = isnan(want) ? isnan(got) : pp_test_same_bits(got, want);
            if (!ok && fail_add(&j->fl, op_name[op], PP_RND_NE, i, a, op == OP_SQRT ? NAN : b, got, want))
                goto done;
        }
    }
done:
    oracle_clear(&o);
    return NULL;
}

static void ops(pp_format_id f, uint64_t n)
{
    op_job jobs[NCHUNK];
    for (int k = 0; k < NCHUNK; k++) {
        op_job j = {f, k, n / NCHUNK + (k < (int)(n % NCHUNK)), {0, {{0}}}};
        jobs[k] = j;
    }
    run_chunks(op_worker, jobs, sizeof jobs[0]);
    fails fl[NCHUNK];
    for (int k = 0; k < NCHUNK; k++)
        fl[k] = jobs[k].fl;
    fails_check(fl, NCHUNK, f);
}

// Every format pp_format_validate passes (fp32 trivially: the binary32 operation is the fp32
// operation; rounding it again is the identity).
static void round_from_f32_binary32_ops_exact_when_validated(void **state)
{
    (void)state;
    for (int f = 0; f < PP_TEST_FMT_IEEE; f++)
        if (pp_format_validate((pp_format_id)f) == PP_FMT_OK)
            ops((pp_format_id)f, pp_test_iters(200000));
}

// The warning for tf32 is real: (1099·2^−75)·(1379·2^−75) = 1515521·2^−150 lies 2^−150 above the
// tf32 midpoint 92.5·2^−136; binary32 (quantum 2^−149 there) rounds it to the midpoint itself
// (a tie, to the even 757760·2^−149), and tf32 then ties to even 92·2^−136, not 93·2^−136.
static void format_validate_tf32_warning_is_real(void **state)
{
    (void)state;
    assert_int_equal(pp_format_validate(PP_FMT_TF32), PP_FMT_WARN_BINARY32_INEXACT);
    oracle o;
    oracle_init(&o, PP_FMT_TF32);
    double a = ldexp(1099, -75), b = ldexp(1379, -75);
    assert_true(pp_is_representable(PP_FMT_TF32, a) && pp_is_representable(PP_FMT_TF32, b));
    double want = op_oracle(&o, OP_MUL, a, b);
    oracle_clear(&o);
    double got = pp_round_from_f32(PP_FMT_TF32, (float)a * (float)b, PP_RND_NE, 0);
    assert_true(want == ldexp(93, -136));
    assert_true(got == ldexp(92, -136));
}

int main(void)
{
    if (!mpfr_buildopt_tls_p()) {
        fprintf(stderr, "test_round_mpfr: MPFR without thread-local exponent range\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        // the oracle itself
        cmocka_unit_test(oracle_fast_path_matches_plain_mpfr),
        // deterministic rounding: every value's neighbourhood
        cmocka_unit_test(round_matches_mpfr_neighbourhood_fp16),
        cmocka_unit_test(round_matches_mpfr_neighbourhood_bf16),
        cmocka_unit_test(round_matches_mpfr_neighbourhood_e4m3),
        cmocka_unit_test(round_matches_mpfr_neighbourhood_e5m2),
        cmocka_unit_test(round_matches_mpfr_neighbourhood_tf32),
        cmocka_unit_test(round_matches_mpfr_neighbourhood_fp32),
        // deterministic rounding: biased random inputs
        cmocka_unit_test(round_matches_mpfr_random_fp64),
        cmocka_unit_test(round_matches_mpfr_random_fp32),
        cmocka_unit_test(round_matches_mpfr_random_tf32),
        cmocka_unit_test(round_matches_mpfr_random_fp16),
        cmocka_unit_test(round_matches_mpfr_random_bf16),
        cmocka_unit_test(round_matches_mpfr_random_e4m3),
        cmocka_unit_test(round_matches_mpfr_random_e5m2),
        cmocka_unit_test(round_from_f32_matches_mpfr_random),
        // operations
        cmocka_unit_test(round_from_f32_binary32_ops_exact_when_validated),
        cmocka_unit_test(format_validate_tf32_warning_is_real),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
