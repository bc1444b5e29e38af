// exactsum.c — the exact accumulator: base-2^32 digits in int64 limbs, so up to 2^30 additions
// can go in without carrying, then one carry pass. See exactsum.h for the representation.
#include "core/exactsum.h"

#include <math.h>
#include <string.h>

__extension__ typedef unsigned __int128 pp_u128;

#define NLIMB PP_EXACTSUM_LIMBS
#define CARRY_EVERY (1u << 30)  // each pending addition moves a limb by < 2^32: 2^30·2^32 < 2^63

// ---------------------------------------------------------------------------------------------
// Digits

// Brings limbs 0..NLIMB-2 into [0, 2^32), pushing the carries into the signed top limb.
// The value is unchanged.
static void carry_all(int64_t *limb)
{
    int64_t c = 0;
    for (int k = 0; k < NLIMB - 1; k++) {
        int64_t v = limb[k] + c;
        int64_t lo = v & 0xFFFFFFFF;
        c = (v - lo) / 4294967296;  // exact: v - lo is a multiple of 2^32
        limb[k] = lo;
    }
    limb[NLIMB - 1] += c;
}

// s += (neg ? -1 : 1) · m · 2^q, exactly. Requires q >= PP_EXACTSUM_LSB and m·2^q < 2^2048.
static void add_bits(pp_exactsum *s, uint64_t m, int q, int neg)
{
    int p = q - PP_EXACTSUM_LSB;
    int k = p >> 5;
    pp_u128 v = (pp_u128)m << (p & 31);  // < 2^95: three digits
    int64_t d0 = (int64_t)((uint64_t)v & 0xFFFFFFFF);
    int64_t d1 = (int64_t)((uint64_t)(v >> 32) & 0xFFFFFFFF);
    int64_t d2 = (int64_t)(uint64_t)(v >> 64);
    if (neg) {
        s->limb[k] -= d0;
        s->limb[k + 1] -= d1;
        s->limb[k + 2] -= d2;
    } else {
        s->limb[k] += d0;
        s->limb[k + 1] += d1;
        s->limb[k + 2] += d2;
    }
    if (++s->pending >= CARRY_EVERY) {
        carry_all(s->limb);
        s->pending = 0;
    }
}

// x = (neg ? -1 : 1) · m · 2^q with m < 2^53, for finite nonzero x.
static void split(double x, uint64_t *m, int *q, int *neg)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    int e = (int)((b >> 52) & 0x7FF);
    uint64_t f = b & (((uint64_t)1 << 52) - 1);
    *neg = (int)(b >> 63);
    if (e == 0) {
        *m = f;
        *q = -1074;
    } else {
        *m = f | ((uint64_t)1 << 52);
        *q = e - 1075;
    }
}

static void count_special(pp_exactsum *s, double v)
{
    if (isnan(v))
        s->n_nan++;
    else if (v > 0)
        s->n_pinf++;
    else
        s->n_ninf++;
}

// ---------------------------------------------------------------------------------------------
// Public functions

void pp_exactsum_init(pp_exactsum *s)
{
    memset(s, 0, sizeof *s);
}

void pp_exactsum_add(pp_exactsum *s, double x)
{
    if (!isfinite(x)) {
        count_special(s, x);
        return;
    }
    if (x == 0.0)
        return;
    uint64_t m;
    int q, neg;
    split(x, &m, &q, &neg);
    add_bits(s, m, q, neg);
}

void pp_exactsum_add_product(pp_exactsum *s, double a, double b)
{
    if (!isfinite(a) || !isfinite(b)) {
        count_special(s, a * b);  // Inf·0 and NaN give NaN, Inf·x gives the signed Inf
        return;
    }
    if (a == 0.0 || b == 0.0)
        return;
    uint64_t ma, mb;
    int qa, qb, na, nb;
    split(a, &ma, &qa, &na);
    split(b, &mb, &qb, &nb);
    pp_u128 p = (pp_u128)ma * mb;  // < 2^106, exact
    uint64_t lo = (uint64_t)p, hi = (uint64_t)(p >> 64);
    if (lo)
        add_bits(s, lo, qa + qb, na ^ nb);
    if (hi)
        add_bits(s, hi, qa + qb + 64, na ^ nb);
}

// A run of digit additions at one limb position, kept in registers: the terms of a batch mostly
// share their position (differences of similar size), and adding each to the limbs in memory
// makes every addition wait for the previous one's store. Limb k + j receives the sum of the
// runs' digit j, which is what adding the terms one by one gives (integer sums: any order), so
// the limbs afterwards are the same bits. Five digits: a square's low and high 64 bits.
typedef struct digit_run {
    int64_t *limb;
    int nd;         // digits per term: 3 (|x|) or 5 (x²); limbs k .. k + nd − 1 exist
    int k;          // the run's position; −1: none yet
    int64_t r[5];   // digit sums for limbs k .. k + 4 (each < 2^32 per term: no overflow
                    // within a batch below the carry pass's 2^30 additions)
} digit_run;

static inline void run_flush(digit_run *R)
{
    if (R->k < 0)
        return;
    for (int j = 0; j < R->nd; j++)
        R->limb[R->k + j] += R->r[j];
}

static inline void run_add(digit_run *R, int k, int64_t d0, int64_t d1, int64_t d2, int64_t d3, int64_t d4)
{
    if (k != R->k) {
        run_flush(R);
        R->k = k;
        R->r[0] = R->r[1] = R->r[2] = R->r[3] = R->r[4] = 0;
    }
    R->r[0] += d0, R->r[1] += d1, R->r[2] += d2, R->r[3] += d3, R->r[4] += d4;
}

void pp_exactsum_add_abs_sq(pp_exactsum *abs, pp_exactsum *sq, const double *d, int n)
{
    // Between carry passes the limbs are sums of digit contributions, so the order of the
    // additions is free; only where a carry pass falls matters. Far from one (the usual case),
    // the counts are added once at the end; near one, the calls are made one by one.
    if (n <= 0)
        return;
    if ((uint64_t)abs->pending + (uint64_t)n >= CARRY_EVERY || (uint64_t)sq->pending + 2u * (uint64_t)n >= CARRY_EVERY) {
        for (int i = 0; i < n; i++) {
            pp_exactsum_add(abs, fabs(d[i]));
            pp_exactsum_add_product(sq, d[i], d[i]);
        }
        return;
    }
    uint32_t na = 0, ns = 0;
    digit_run ra = {abs->limb, 3, -1, {0}}, rs = {sq->limb, 5, -1, {0}};
    for (int i = 0; i < n; i++) {
        double x = d[i];
        if (!isfinite(x) || x == 0.0) {  // counted or nothing, exactly as the calls do
            if (!isfinite(x)) {
                count_special(abs, fabs(x));
                count_special(sq, x * x);
            }
            continue;
        }
        uint64_t m;
        int q, neg;
        split(x, &m, &q, &neg);
        // |x| = m·2^q: three digits from limb k on
        int p = q - PP_EXACTSUM_LSB;
        pp_u128 v = (pp_u128)m << (p & 31);
        run_add(&ra, p >> 5, (int64_t)((uint64_t)v & 0xFFFFFFFF), (int64_t)((uint64_t)(v >> 32) & 0xFFFFFFFF),
                (int64_t)(uint64_t)(v >> 64), 0, 0);
        // x² = m²·2^(2q), positive: its low 64 bits' three digits from limb k, its high 64 bits'
        // from limb k + 2 (64 bits on), so five digits from k
        pp_u128 sqm = (pp_u128)m * m;
        uint64_t lo = (uint64_t)sqm, hi = (uint64_t)(sqm >> 64);
        int ps = 2 * q - PP_EXACTSUM_LSB;
        pp_u128 vl = (pp_u128)lo << (ps & 31), vh = (pp_u128)hi << (ps & 31);
        run_add(&rs, ps >> 5, (int64_t)((uint64_t)vl & 0xFFFFFFFF), (int64_t)((uint64_t)(vl >> 32) & 0xFFFFFFFF),
                (int64_t)(uint64_t)(vl >> 64) + (int64_t)((uint64_t)vh & 0xFFFFFFFF),
                (int64_t)((uint64_t)(vh >> 32) & 0xFFFFFFFF), (int64_t)(uint64_t)(vh >> 64));
        na++;
        ns += (lo != 0) + (hi != 0);
    }
    run_flush(&ra);
    run_flush(&rs);
    abs->pending += na;
    sq->pending += ns;
}

void pp_exactsum_merge(pp_exactsum *into, const pp_exactsum *from)
{
    pp_exactsum f = *from;
    carry_all(f.limb);
    carry_all(into->limb);
    for (int k = 0; k < NLIMB; k++)
        into->limb[k] += f.limb[k];  // digits < 2^33 now: as if one addition were pending
    into->pending = 1;
    into->n_pinf += f.n_pinf;
    into->n_ninf += f.n_ninf;
    into->n_nan += f.n_nan;
}

// Digit k of the normalized magnitude, 0 outside the digits.
static uint64_t digit(const int64_t *limb, int k)
{
    return k >= 0 && k < NLIMB - 1 ? (uint64_t)limb[k] : 0;
}

double pp_exactsum_value(const pp_exactsum *s)
{
    if (s->n_nan || (s->n_pinf && s->n_ninf))
        return NAN;
    if (s->n_pinf)
        return INFINITY;
    if (s->n_ninf)
        return -INFINITY;
    int64_t limb[NLIMB];
    memcpy(limb, s->limb, sizeof limb);
    carry_all(limb);
    int neg = limb[NLIMB - 1] < 0;
    if (neg) {  // work on the magnitude
        for (int k = 0; k < NLIMB; k++)
            limb[k] = -limb[k];
        carry_all(limb);
    }
    if (limb[NLIMB - 1] != 0)  // magnitude >= 2^2048
        return neg ? -INFINITY : INFINITY;
    int h = NLIMB - 2;
    while (h >= 0 && limb[h] == 0)
        h--;
    if (h < 0)
        return 0.0;
    int b = 63 - __builtin_clzll((unsigned long long)limb[h]);
    int P = 32 * h + b;           // bit index of the leading 1
    int E = P + PP_EXACTSUM_LSB;  // magnitude in [2^E, 2^(E+1))
    if (E >= 1024)
        return neg ? -INFINITY : INFINITY;
    // Lowest kept bit: 53 significant bits, or the subnormal quantum 2^-1074. L >= 1102 > 0.
    int L = E >= -1022 ? P - 52 : -1074 - PP_EXACTSUM_LSB;
    int k = L >> 5;
    pp_u128 w = (pp_u128)digit(limb, k) | ((pp_u128)digit(limb, k + 1) << 32) |
                ((pp_u128)digit(limb, k + 2) << 64);
    // Below the subnormal quantum (P < L) nothing is kept; only the rounding bit can count.
    uint64_t mant = P < L ? 0 : (uint64_t)(w >> (L & 31)) & ((((uint64_t)1) << (P - L + 1)) - 1);
    int r = L - 1;  // the rounding bit
    int half = (int)((digit(limb, r >> 5) >> (r & 31)) & 1);
    int sticky = (digit(limb, r >> 5) & ((((uint64_t)1) << (r & 31)) - 1)) != 0;
    for (int j = (r >> 5) - 1; j >= 0 && !sticky; j--)
        sticky = limb[j] != 0;
    if (half && (sticky || (mant & 1)))
        mant++;  // may reach 2^53 (or 2^52 from a subnormal): still exact as a double
    double v = ldexp((double)mant, L + PP_EXACTSUM_LSB);  // exact, or Inf past the top binade
    return neg ? -v : v;
}
