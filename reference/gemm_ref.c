// gemm_ref.c — the GEMM reference: an exact integer accumulator of the (exact) products and α
// as a double-double (fast), or MPFR at 128 bits throughout (mpfr-plain); each value with its
// proven error bound. The proofs are reference/PROOFS.md#gemm; the step comments cite them.
#include "gemm_ref.h"
#include "parallel.h"

#include <math.h>
#include <mpfr.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// Threads (the reference's own: it shares no code with the kernels it judges). Task t runs on
// thread t mod nthreads; no task's result depends on which thread runs it.

#define REF_ROWS_PER_TASK 4
#define REF_MAX_NUMEL ((int64_t)1 << 40)  // as PP_MAX_NUMEL in src/core/tensor.h

// The references' threads free MPFR's per-thread caches when their share is done (leak checkers).
static void ref_thread_exit(void)
{
    mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);
}

// ---------------------------------------------------------------------------------------------
// The exact accumulator (PROOFS.md#gemm, "Exact sum")
//
// Every product of two values of F (p bits, emin) is an integer multiple of 2^q, q = 2(emin−p+1),
// below 2^(2emax+2) in magnitude, and exact in binary64 (≤ 48 bits). Written as M·2^e with M the
// 53-bit binary64 significand, e ≥ base = q − 52. The accumulator is S = Σ_i ch[i]·2^(base+26i)
// with int64 chunks: a term adds its significand, split at 26-bit boundaries, to three chunks
// (each addition < 2^28 in magnitude), so 2^34 additions cannot overflow a chunk; normalising
// (carrying into [0, 2^26)) every 2^34 terms keeps that true. Integer arithmetic: S is exact.

#define XACC_BITS 26
#define XACC_MASK ((UINT64_C(1) << XACC_BITS) - 1)
#define XACC_MAX 28
#define XACC_NORM_EVERY (INT64_C(1) << 34)

typedef struct xacc_layout {
    int base;  // exponent of chunk 0's lowest bit
    int n;     // chunks used: room for 2^40 terms of magnitude < 2^(2emax+2), and a sign
} xacc_layout;

static xacc_layout xacc_layout_for(pp_format_id f)
{
    pp_format F = pp_format_get(f);
    int q = 2 * (F.emin - F.p + 1);
    xacc_layout L = {q - 52, (2 * F.emax + 2 + 40 - (q - 52)) / XACC_BITS + 2};
    return L;  // fp32: base −350, n 26; bf16: −318, 25; fp16: −100, 8
}

// ch += t, t a nonzero finite binary64 that is a product of two values of the layout's format.
static inline void xacc_add(int64_t *ch, int base, double t)
{
    uint64_t u;
    memcpy(&u, &t, sizeof u);
    int be = (int)((u >> 52) & 0x7FF);  // ≥ 1: |t| ≥ 2^−298 is a binary64 normal
    uint64_t M = (u & ((UINT64_C(1) << 52) - 1)) | (UINT64_C(1) << 52);
    int pos = be - 1075 - base;  // ≥ 0: the significand's last bit, relative to chunk 0
    int c = pos / XACC_BITS, s = pos % XACC_BITS;
    uint64_t x0 = (M & XACC_MASK) << s, x1 = (M >> XACC_BITS) << s;  // < 2^52, < 2^53
    int64_t d0 = (int64_t)(x0 & XACC_MASK);
    int64_t d1 = (int64_t)((x0 >> XACC_BITS) + (x1 & XACC_MASK));
    int64_t d2 = (int64_t)(x1 >> XACC_BITS);
    if (u >> 63) {
        ch[c] -= d0;
        ch[c + 1] -= d1;
        ch[c + 2] -= d2;
    } else {
        ch[c] += d0;
        ch[c + 1] += d1;
        ch[c + 2] += d2;
    }
}

// Carries every chunk but the top one into [0, 2^26); the value is unchanged.
static void xacc_normalize(int64_t *ch, int n)
{
    for (int i = 0; i < n - 1; i++) {
        int64_t lo = (int64_t)((uint64_t)ch[i] & XACC_MASK);  // ch[i] mod 2^26, also for ch[i] < 0
        ch[i + 1] += (ch[i] - lo) / (INT64_C(1) << XACC_BITS);  // exact division
        ch[i] = lo;
    }
}

// |S| = Sh + Sl + δ with |δ| ≤ 2^−105·|S| and |Sl| ≤ 2^−52·|S|; *exact when δ = 0. Returns the
// sign of S (−1, 0, 1). Destroys ch. (PROOFS.md#gemm, "From chunks to a double-double")
static int xacc_result(int64_t *ch, const xacc_layout *L, double *Sh, double *Sl, int *exact)
{
    xacc_normalize(ch, L->n);
    int sign = 1;
    if (ch[L->n - 1] < 0) {  // the lower chunks are in [0, 2^26): the top chunk's sign is S's
        sign = -1;
        for (int i = 0; i < L->n; i++)
            ch[i] = -ch[i];
        xacc_normalize(ch, L->n);
    }
    int h = L->n - 1;
    while (h >= 0 && ch[h] == 0)
        h--;
    if (h < 0)
        return 0;
    // pairs of 26-bit chunks are integers < 2^52: exact binary64, exactly scaled by 2^(...)
#define XACC_CH(i) ((i) >= 0 ? ch[(i)] : 0)
#define XACC_PAIR(i) ldexp((double)(XACC_CH(i) * (INT64_C(1) << XACC_BITS) + XACC_CH((i) - 1)), \
                           L->base + XACC_BITS * ((i) - 1))
    double U = XACC_PAIR(h), V = XACC_PAIR(h - 2), X = XACC_PAIR(h - 4);
#undef XACC_PAIR
    int rest = 0;  // chunks below h − 5: R < 2^(base+26(h−5)) ≤ 2^−130·|S|
    for (int i = h - 6; i >= 0; i--)
        rest |= ch[i] != 0;
#undef XACC_CH
    double s = U + V;  // TwoSum: U + V = s + e exactly
    double z = s - U;
    double e = (U - (s - z)) + (V - z);
    double l = e + X;  // one rounding: ≤ 2^−53·|e + X| ≤ 2^−105.9·|S|
    double z2 = l - e;
    double e2 = (e - (l - z2)) + (X - z2);  // its error, exactly
    *Sh = s;
    *Sl = l;
    *exact = !rest && e2 == 0.0;
    return sign;
}

// ---------------------------------------------------------------------------------------------
// α

typedef struct ref_alpha {
    double hi, lo;  // |hi + lo − α| ≤ 2^−105·|α| (exact for a given α: lo = 0)
    mpfr_t plain;   // RN_128(α) for mpfr-plain
    int plain_inexact;
} ref_alpha;

// α = 1/√k (default) or the given binary64. hi, lo from RN_256(1/√k) (mpfr_rec_sqrt, correctly
// rounded): hi = RN_64(α_256), lo = RN_64(α_256 − hi) (the subtraction is exact at 256 bits).
static void ref_alpha_init(ref_alpha *al, const pp_gemm_ref_opts *o, int64_t k)
{
    mpfr_init2(al->plain, PP_GEMM_REF_PLAIN_PREC);
    if (o->alpha_given) {
        al->hi = o->alpha;
        al->lo = 0.0;
        al->plain_inexact = mpfr_set_d(al->plain, o->alpha, MPFR_RNDN) != 0;  // 0: 53 ≤ 128 bits
        return;
    }
    mpfr_t x, r;
    mpfr_inits2(256, x, r, (mpfr_ptr)0);
    mpfr_set_d(x, (double)k, MPFR_RNDN);  // exact: k ≤ 2^40
    al->plain_inexact = mpfr_rec_sqrt(al->plain, x, MPFR_RNDN) != 0;  // ±½ulp_128: |α̃ − α| ≤ 2^−128|α̃|
    mpfr_rec_sqrt(r, x, MPFR_RNDN);                                    // ±½ulp_256
    al->hi = mpfr_get_d(r, MPFR_RNDN);                                 // ±2^−53|hi|
    mpfr_sub_d(r, r, al->hi, MPFR_RNDN);                               // exact
    al->lo = mpfr_get_d(r, MPFR_RNDN);                                 // ±2^−53|lo|
    mpfr_clears(x, r, (mpfr_ptr)0);
}

// ---------------------------------------------------------------------------------------------
// Fast path (PROOFS.md#gemm)

#define REF_TILE 32

typedef struct ref_job {
    const pp_gemm_ref_opts *o;
    xacc_layout L;
    const ref_alpha *al;
    double ahs, als;  // α's double-double scaled by 2^−ea into [0.5, 1) in magnitude: exact
    int ea;
    int64_t m, n, k, tasks_per_batch;
    const double *a, *b;
    double *c, *c_err;
} ref_job;

// c = α·S from the exact S in ch, with its bound (PROOFS.md#gemm, "Applying α").
static void ref_fast_finish(const ref_job *g, int64_t *ch, double spec, int has_spec, double *c,
                            double *c_err)
{
    if (has_spec) {  // an infinite or NaN term: IEEE semantics, exact or NaN
        double v = g->al->hi * spec;
        *c = v;
        *c_err = v != v ? v : 0.0;
        return;
    }
    double Sh, Sl;
    int exact;
    int sS = xacc_result(ch, &g->L, &Sh, &Sl, &exact);
    if (sS == 0 || g->ahs == 0.0) {  // the exact value is 0
        *c = 0.0;
        *c_err = 0.0;
        return;
    }
    double ah = fabs(g->ahs), alo = g->ahs < 0 ? -g->als : g->als;  // |α'| = ah + alo
    double p = ah * Sh;                 // RN; |α'S| ≥ 2^−351: no underflow anywhere below
    double pe = fma(ah, Sh, -p);        // exact: ah·Sh = p + pe
    double t1 = ah * Sl;                // ±2^−53|t1|
    double t2 = alo * Sh;               // ±2^−53|t2|
    double t3 = t1 + t2;                // ±2^−53|t3|
    double t4 = pe + t3;                // ±2^−53|t4|;  |p + t4 − |α'S|| ≤ 2^−100|α'S|
    double v = p + t4;                  // the final rounding: ±½ulp(v)
    int ev;
    frexp(v, &ev);
    double e = (exact && alo == 0.0 && pe == 0.0 && Sl == 0.0) ? 0.0 : ldexp(0.5 + 0x1p-44, ev - 53);
    int neg = (sS < 0) != (g->ahs < 0);
    v = ldexp(v, g->ea);  // exact unless the result leaves binary64's normal range
    e = ldexp(e, g->ea);
    if (isinf(v)) {
        e = INFINITY;
    } else if (fabs(v) < 0x1p-968) {
        // v and e may have been rounded by ldexp (≤ 2^−1075 each); the bump covers both
        e = nextafter(e + 0x1p-1073, INFINITY);
    }
    *c = neg ? -v : v;
    *c_err = e;
}

static void ref_fast_rows(const ref_job *g, const double *a, const double *b, double *c,
                          double *c_err, int64_t i0, int64_t i1)
{
    int64_t ch[REF_TILE][XACC_MAX];
    double spec[REF_TILE];
    int has_spec[REF_TILE];
    int nch = g->L.n, base = g->L.base;
    for (int64_t i = i0; i < i1; i++) {
        for (int64_t j0 = 0; j0 < g->n; j0 += REF_TILE) {
            int64_t jn = g->n - j0 < REF_TILE ? g->n - j0 : REF_TILE;
            memset(ch, 0, sizeof ch);
            for (int64_t j = 0; j < jn; j++) {
                spec[j] = 0.0;
                has_spec[j] = 0;
            }
            for (int64_t l = 0; l < g->k; l++) {
                double ail = a[i * g->k + l];
                const double *brow = b + l * g->n + j0;
                for (int64_t j = 0; j < jn; j++) {
                    double t = ail * brow[j];  // exact: ≤ 48 bits, in [2^−298, 2^256]
                    if (!isfinite(t)) {
                        spec[j] += t;
                        has_spec[j] = 1;
                    } else if (t != 0.0) {
                        xacc_add(ch[j], base, t);
                    }
                }
                if ((l + 1) % XACC_NORM_EVERY == 0)
                    for (int64_t j = 0; j < jn; j++)
                        xacc_normalize(ch[j], nch);
            }
            for (int64_t j = 0; j < jn; j++) {
                int64_t o = i * g->n + j0 + j;
                double e;
                ref_fast_finish(g, ch[j], spec[j], has_spec[j], &c[o], &e);
                if (c_err)
                    c_err[o] = e;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// mpfr-plain path (PROOFS.md#gemm, "mpfr-plain")

static void ref_plain_rows(const ref_job *g, const double *a, const double *b, double *c,
                           double *c_err, int64_t i0, int64_t i1)
{
    const mpfr_prec_t P = PP_GEMM_REF_PLAIN_PREC;
    mpfr_t t, s, e1, pr, bnd, tmp;
    mpfr_inits2(P, t, s, e1, pr, bnd, tmp, (mpfr_ptr)0);
    for (int64_t i = i0; i < i1; i++) {
        for (int64_t j = 0; j < g->n; j++) {
            int inex = g->al->plain_inexact;
            mpfr_set_zero(s, 1);
            mpfr_set_zero(e1, 1);
            for (int64_t l = 0; l < g->k; l++) {
                mpfr_set_d(t, a[i * g->k + l], MPFR_RNDN);          // exact
                mpfr_mul_d(t, t, b[l * g->n + j], MPFR_RNDN);       // exact: ≤ 48 bits
                inex |= mpfr_add(s, s, t, MPFR_RNDN) != 0;          // s_l: ±2^−128|s_l|
                mpfr_abs(tmp, s, MPFR_RNDN);
                mpfr_add(e1, e1, tmp, MPFR_RNDU);                   // e1 ≥ Σ|s_l|
            }
            if (mpfr_zero_p(s))
                mpfr_set_zero(s, 1);                                // exact 0 is +0
            inex |= mpfr_mul(pr, s, g->al->plain, MPFR_RNDN) != 0;  // P: ±2^−128|P|
            if (mpfr_zero_p(pr))
                mpfr_set_zero(pr, 1);
            double v = mpfr_get_d(pr, MPFR_RNDN);
            int64_t o = i * g->n + j;
            c[o] = v;
            if (!c_err)
                continue;
            if (mpfr_nan_p(pr)) {
                c_err[o] = v;
            } else if (mpfr_inf_p(pr)) {
                c_err[o] = 0.0;
            } else if (isinf(v)) {
                c_err[o] = INFINITY;
            } else if (!inex && mpfr_cmp_d(pr, v) == 0) {
                c_err[o] = 0.0;
            } else {
                // bnd = 2^−P·(|P| + |α̃||s_k| + |α̃|(1 + 2^−P)·e1) + ½ulp(v), all rounded up
                mpfr_abs(bnd, pr, MPFR_RNDU);
                mpfr_abs(tmp, g->al->plain, MPFR_RNDU);
                mpfr_mul(tmp, tmp, s, MPFR_RNDU);
                mpfr_abs(tmp, tmp, MPFR_RNDU);
                mpfr_add(bnd, bnd, tmp, MPFR_RNDU);
                mpfr_abs(tmp, g->al->plain, MPFR_RNDU);
                mpfr_mul(tmp, tmp, e1, MPFR_RNDU);
                mpfr_mul_d(tmp, tmp, 1.0 + 0x1p-52, MPFR_RNDU);  // ≥ 1 + 2^−128
                mpfr_add(bnd, bnd, tmp, MPFR_RNDU);
                mpfr_mul_2si(bnd, bnd, -(long)P, MPFR_RNDU);
                int ev;
                frexp(v, &ev);
                double half_ulp = fabs(v) < 0x1p-1022 ? 0x1p-1074 : ldexp(1.0, ev - 54);  // ≥ ½ulp(v)
                mpfr_add_d(bnd, bnd, half_ulp, MPFR_RNDU);
                c_err[o] = mpfr_get_d(bnd, MPFR_RNDU);
            }
        }
    }
    mpfr_clears(t, s, e1, pr, bnd, tmp, (mpfr_ptr)0);
}

static void ref_task(void *ctx, int64_t task)
{
    const ref_job *g = ctx;
    int64_t bi = task / g->tasks_per_batch, rb = task % g->tasks_per_batch;
    int64_t i0 = rb * REF_ROWS_PER_TASK, i1 = i0 + REF_ROWS_PER_TASK;
    if (i1 > g->m)
        i1 = g->m;
    const double *a = g->a + bi * g->m * g->k, *b = g->b + bi * g->k * g->n;
    double *c = g->c + bi * g->m * g->n;
    double *ce = g->c_err ? g->c_err + bi * g->m * g->n : NULL;
    if (g->o->method == PP_GEMM_REF_MPFR_PLAIN)
        ref_plain_rows(g, a, b, c, ce, i0, i1);
    else
        ref_fast_rows(g, a, b, c, ce, i0, i1);
}

// ---------------------------------------------------------------------------------------------
// Entry point

static int ref_mul(int64_t x, int64_t y, int64_t *out)
{
    if (y != 0 && x > REF_MAX_NUMEL / y)
        return -1;
    *out = x * y;
    return *out > REF_MAX_NUMEL ? -1 : 0;
}

static int ref_check_values(pp_format_id f, const char *what, const double *x, int64_t count,
                            pp_error *err)
{
    for (int64_t i = 0; i < count; i++)
        if (!pp_is_representable(f, x[i]))
            return pp_fail(err, PP_ERR_INPUT, "gemm reference: %s[%lld] = %.17g is not a %s value",
                           what, (long long)i, x[i], pp_format_get(f).name);
    return PP_OK;
}

int pp_gemm_ref(const pp_gemm_ref_opts *o, int64_t batch, int64_t m, int64_t n, int64_t k,
                const double *a, const double *b, double *c, double *c_err, int threads,
                pp_error *err)
{
    if (o->format != PP_FMT_FP16 && o->format != PP_FMT_BF16 && o->format != PP_FMT_FP32)
        return pp_fail(err, PP_ERR_INPUT, "gemm reference: format %s is not fp16, bf16 or fp32",
                       pp_format_get(o->format).name);
    if (o->method != PP_GEMM_REF_FAST && o->method != PP_GEMM_REF_MPFR_PLAIN)
        return pp_fail(err, PP_ERR_INPUT, "gemm reference: unknown method %d", (int)o->method);
    if (o->alpha_given ? !isfinite(o->alpha) : k < 1)
        return pp_fail(err, PP_ERR_INPUT, "gemm reference: alpha %s",
                       o->alpha_given ? "is not finite" : "= 1/sqrt(k) needs k >= 1");
    if (batch < 0 || m < 0 || n < 0 || k < 0)
        return pp_fail(err, PP_ERR_INPUT, "gemm reference: negative extent");
    int64_t bm, na, nb, nc;
    if (ref_mul(batch, m, &bm) || ref_mul(bm, k, &na) || ref_mul(batch, k, &nb) ||
        ref_mul(nb, n, &nb) || ref_mul(bm, n, &nc))
        return pp_fail(err, PP_ERR_INPUT, "gemm reference: a tensor would exceed 2^40 elements");
    if ((na && !a) || (nb && !b) || (nc && !c))
        return pp_fail(err, PP_ERR_INPUT, "gemm reference: NULL data for a non-empty tensor");
    int rc = ref_check_values(o->format, "A", a, na, err);
    if (!rc)
        rc = ref_check_values(o->format, "B", b, nb, err);
    if (rc || nc == 0)
        return rc;

    ref_alpha al;
    ref_alpha_init(&al, o, k);
    ref_job g;
    memset(&g, 0, sizeof g);
    g.o = o;
    g.L = xacc_layout_for(o->format);
    g.al = &al;
    g.ea = 0;
    if (al.hi != 0.0)
        frexp(al.hi, &g.ea);
    g.ahs = ldexp(al.hi, -g.ea);  // exact scalings (lo ≠ 0 only for α = 1/√k ≥ 2^−20)
    g.als = ldexp(al.lo, -g.ea);
    g.m = m;
    g.n = n;
    g.k = k;
    g.tasks_per_batch = (m + REF_ROWS_PER_TASK - 1) / REF_ROWS_PER_TASK;
    g.a = a;
    g.b = b;
    g.c = c;
    g.c_err = c_err;
    pp_parallel_for(ref_task, &g, batch * g.tasks_per_batch, threads, ref_thread_exit);
    mpfr_clear(al.plain);
    mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);
    return PP_OK;
}
