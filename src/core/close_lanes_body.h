// close_lanes_body.h — the chunk function of close_lanes.c, included once per x86-64 level with
// CL_NAME (its name), CL_TGT (its target attribute, empty for the baseline) and CL_W (lanes: the
// level's register width in binary64) defined. GCC lowers a vector operation that the function's
// own target lacks into one operation per element, before any inlining: so the body is compiled
// as a function of each target, on vectors of that target's width, rather than inlined into one.
// Uses close_lanes.c's macros.

// the vector types of this width, named apart per width (vd is vd8 for CL_W 8, and so on)
#define CL_PASTE_(n, w) n##w
#define CL_PASTE(n, w) CL_PASTE_(n, w)
#define vd CL_PASTE(vd, CL_W)
#define vf CL_PASTE(vf, CL_W)
#define vl CL_PASTE(vl, CL_W)
#define vu CL_PASTE(vu, CL_W)
#define vi CL_PASTE(vi, CL_W)
#define vw CL_PASTE(vw, CL_W)

typedef double vd __attribute__((vector_size(8 * CL_W)));
typedef float vf __attribute__((vector_size(4 * CL_W)));
typedef int64_t vl __attribute__((vector_size(8 * CL_W)));
typedef uint64_t vu __attribute__((vector_size(8 * CL_W)));
typedef int32_t vi __attribute__((vector_size(4 * CL_W)));
typedef uint32_t vw __attribute__((vector_size(4 * CL_W)));
CL_TGT static int CL_NAME(const pp_close_lanes_ctx *c, const double *a, const double *e, pp_close_chunk *out)
{
    const vl zero = {0};
    const vl noteq_mode = zero + (int64_t)(c->equality == 0 ? -1 : 0);
    const double atol = c->atol, rtol = c->rtol;
    const float atol32 = c->atol32, rtol32 = c->rtol32;
    uint64_t maxf_bits;
    memcpy(&maxf_bits, &c->max_finite, sizeof maxf_bits);
    const vu maxf = (vu){0} + maxf_bits;
    const vl emin = zero + c->emin, p1 = zero + (c->p - 1);
    vl usual = zero - 1, nan_any = zero, close_n = zero;
    vd mx_ad = {0}, mx_rd = {0}, mx_tr = {0}, mx_u = {0}, mx_absd = {0}, mx_ae = {0};
    for (int j = 0; j < PP_CLOSE_CHUNK; j += CL_W) {
        vd av, ev;
        memcpy(&av, a + j, sizeof av);
        memcpy(&ev, e + j, sizeof ev);
        // a == e on the bits (equal patterns, or both zeros): GCC keeps a vector == of doubles
        // scalar under -ftrapping-math, integer comparisons vectorise; a NaN lane is declined below
        vl eq = ((vu)av == (vu)ev) | ((((vu)av | (vu)ev) & ABS64) == 0);
        // TwoSum(a, −e): d + t == a − e exactly when d is finite
        vd d = av - ev;
        vd bp = d - av;
        vd t = (av - (d - bp)) + (-ev - bp);
        vu ab = ((vu)(av)) & ABS64, eb = ((vu)(ev)) & ABS64, db = ((vu)(d)) & ABS64;
        usual &= (ab < EXP64) & (eb < EXP64) & (db < EXP64) & (((vu)t & ABS64) == 0);
        vd ae = ((vd)(eb)), absd = ((vd)(db));

        // close.c's ulp_exp and ulp_ratio: the quantum's exponent k from |e| clamped to the
        // largest finite value and below at emin; |d| · 2^−k, one correctly rounded product
        vu cb = SEL((vu)(eb > maxf), maxf, eb);
        vl E = (vl)(cb >> 52) - 1023;
        E = SEL(E < emin, emin, E);
        vl k = E - p1;
        usual &= k >= -1023;
        vd u = absd * ((vd)((vu)(1023 - k) << 52));

        // close.c's ulp_bin with above = 0 (the difference is exact): bin 0 where a == e
        vu ub = ((vu)(u));
        vl Eu = (vl)(ub >> 52) - 1023;
        vl j1 = Eu + 1 + ((ub & MANT64) == 0);  // the comparison is −1 where u is a power of two
        j1 = SEL(j1 < -1, zero - 1, j1);
        j1 = SEL(j1 > 21, zero + 21, j1);
        vl bin = SEL(eq, zero, j1 + 2);

        // torch's verdict and differences (close.c's torch_pair)
        vd err, rel;
        vl cl;
        if (c->verdict == PP_CLOSE_V_F64) {
            err = absd;  // fabs(a − e), finite here
            vd allowed = atol + ((vd)(((vu)(rtol * ev)) & ABS64));
            rel = err / ae;
            cl = eq | ((err <= allowed) & noteq_mode);
        } else if (c->verdict == PP_CLOSE_V_F32) {
            vf af = __builtin_convertvector(av, vf), ef = __builtin_convertvector(ev, vf);
            vf err32 = ((vf)(((vw)(af - ef)) & 0x7FFFFFFFu));
            vf t32 = rtol32 * ef;
            vf allowed32 = atol32 + ((vf)(((vw)(t32)) & 0x7FFFFFFFu));
            vi within = ((((vw)(err32)) & 0x7F800000u) != 0x7F800000u) & (err32 <= allowed32);
            vf rel32 = err32 / ((vf)(((vw)(ef)) & 0x7FFFFFFFu));
            err = __builtin_convertvector(err32, vd);
            rel = __builtin_convertvector(rel32, vd);
            cl = eq | (__builtin_convertvector(within, vl) & noteq_mode);
        } else {  // fp16/bf16 opmath: close.c's half_chunk, each binary32 result rounded to C
            const int bf = c->verdict == PP_CLOSE_V_BF16;
            vw slow = {0};
            vf af = __builtin_convertvector(av, vf), ef = __builtin_convertvector(ev, vf), x, er, tt, allowed, rl;
            x = af - ef;
            CL_ROUND_HALF(er, x, bf, slow);
            er = (vf)((vw)er & 0x7FFFFFFFu);
            x = rtol32 * ef;
            CL_ROUND_HALF(tt, x, bf, slow);
            x = atol32 + (vf)((vw)tt & 0x7FFFFFFFu);
            CL_ROUND_HALF(allowed, x, bf, slow);
            vi within = (((vw)er & 0x7F800000u) != 0x7F800000u) & (er <= allowed);
            x = er / (vf)((vw)ef & 0x7FFFFFFFu);
            CL_ROUND_HALF(rl, x, bf, slow);
            usual &= __builtin_convertvector(slow == 0, vl);  // a rounding pp_round must do: declined
            err = __builtin_convertvector(er, vd);
            rel = __builtin_convertvector(rl, vd);
            cl = eq | (__builtin_convertvector(within, vl) & noteq_mode);
        }
        vd ad = ((vd)(((vl)(err)) & ~cl)), rd = ((vd)(((vl)(rel)) & ~cl));  // close.c's keep_if
        close_n -= cl;

        // close.c's tol_ratio for finite operands: 0 where a == e, else |d| / (atol + rtol·|e|)
        // (a zero tolerance gives +Inf, as |d| > 0)
        vd tr = ((vd)(((vl)(absd / (atol + rtol * ae))) & ~eq));

        // NaN tests on the bits: GCC keeps x != x on doubles scalar (it may trap on a signalling
        // NaN under the default -ftrapping-math), the integer comparison vectorises
        nan_any |= (((vu)ad & ABS64) > EXP64) | (((vu)rd & ABS64) > EXP64) | (((vu)tr & ABS64) > EXP64) |
                   (((vu)u & ABS64) > EXP64);
        // the maxima compared as integers: in a chunk taken every value is +0 or positive, where
        // the order of the bit patterns is the order of the values
        mx_ad = (vd)SEL((vl)ad > (vl)mx_ad, (vl)ad, (vl)mx_ad);
        mx_rd = (vd)SEL((vl)rd > (vl)mx_rd, (vl)rd, (vl)mx_rd);
        mx_tr = (vd)SEL((vl)tr > (vl)mx_tr, (vl)tr, (vl)mx_tr);
        mx_u = (vd)SEL((vl)u > (vl)mx_u, (vl)u, (vl)mx_u);
        mx_absd = (vd)SEL((vl)absd > (vl)mx_absd, (vl)absd, (vl)mx_absd);
        mx_ae = (vd)SEL((vl)ae > (vl)mx_ae, (vl)ae, (vl)mx_ae);
        memcpy(out->ad + j, &ad, sizeof ad);
        memcpy(out->rd + j, &rd, sizeof rd);
        memcpy(out->tr + j, &tr, sizeof tr);
        memcpy(out->u + j, &u, sizeof u);
        memcpy(out->d + j, &d, sizeof d);
        vi bin32 = __builtin_convertvector(bin, vi);
        memcpy(out->bin + j, &bin32, sizeof bin32);
    }
    int64_t ok = -1, nan = 0, ncl = 0;
    double m[6] = {0, 0, 0, 0, 0, 0};
    for (int l = 0; l < CL_W; l++) {
        ok &= usual[l];
        nan |= nan_any[l];
        ncl += close_n[l];
        const double v[6] = {mx_ad[l], mx_rd[l], mx_tr[l], mx_u[l], mx_absd[l], mx_ae[l]};
        for (int q = 0; q < 6; q++)
            m[q] = v[q] > m[q] ? v[q] : m[q];
    }
    if (!ok || nan)
        return 0;
    out->max_ad = m[0], out->max_rd = m[1], out->max_tr = m[2], out->max_u = m[3], out->max_absd = m[4];
    out->max_abs_e = m[5];
    out->mismatched = PP_CLOSE_CHUNK - ncl;
    return 1;
}

#undef vd
#undef vf
#undef vl
#undef vu
#undef vi
#undef vw
#undef CL_PASTE
#undef CL_PASTE_
