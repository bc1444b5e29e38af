// attention_ref_lanes_body.h — the attention reference's per-key vector steps, written once and
// included by attention_ref_lanes.c once per instruction set (AVX-512, AVX2) with its L_* macros,
// FN() naming and TGT target attribute. Each lane runs the statements of the scalar step in
// attention_ref_eft.h (pp_attn_exp_dd_, pp_attn_score_elem_, pp_attn_dp_elem_, pp_attn_ds_elem_,
// dd_mul), in their order, one IEEE binary64 operation each; tails run the scalar step itself.
// Same bits (PROOFS.md#attention, "Vector paths"). Not a header to include elsewhere.

TGT static inline void FN(two_sum)(L_T a, L_T b, L_T *s, L_T *e)
{
    L_T t = L_ADD(a, b);
    L_T z = L_SUB(t, a);
    *e = L_ADD(L_SUB(a, L_SUB(t, z)), L_SUB(b, z));
    *s = t;
}

// One step of the anchored dot on L_W chains (pp_attn_dot_elem_'s statements, in its order): H
// takes x·y rounded once (an FMA: x·y is exact, binary32 values), its exact error x·y − (H' − H)
// goes to c (PROOFS.md#attention, "Anchored dot"). 4 operations. attention_ref_lanes.c's dot
// kernels, one per instruction set, run it.
TGT static inline void FN(dot_step)(L_T *H, L_T *c, L_T x, L_T y)
{
    L_T s = L_FMA(x, y, *H);
    *c = L_ADD(*c, L_FMS(x, y, L_SUB(s, *H)));
    *H = s;
}

TGT static inline void FN(dd_mul)(L_T xh, L_T xl, L_T yh, L_T yl, L_T *zh, L_T *zl)
{
    L_T p = L_MUL(xh, yh);
    L_T pe = L_FMS(xh, yh, p);  // the scalar's written fma(xh, yh, −p)
    L_T t3 = L_ADD(L_MUL(xh, yl), L_MUL(xl, yh));
    L_T pl = L_ADD(pe, t3);
    FN(two_sum)(p, pl, zh, zl);
}

TGT static inline void FN(dd_add)(L_T xh, L_T xl, L_T yh, L_T yl, L_T *zh, L_T *zl)
{
    L_T sh, se;
    FN(two_sum)(xh, yh, &sh, &se);
    L_T w = L_ADD(se, L_ADD(xl, yl));
    FN(two_sum)(sh, w, zh, zl);
}

// pp_attn_exp_row_ per lane: cut = (Sh − M < −500), E = 0 when cut, else pp_attn_exp_dd_.
TGT static void FN(exp_row)(const double (*tab)[2], const double *L, int64_t n, const double *Sh,
                            const double *Sl, double M, double *eh, double *el, unsigned char *cut)
{
    const L_T Mv = L_SET1(M), nM = L_SET1(-M), big = L_SET1(0x1.8p52), zero = L_SET1(0.0);
    const L_T L0 = L_SET1(L[0]), L1 = L_SET1(L[1]), L2 = L_SET1(L[2]);
    int64_t j = 0;
    for (; j + L_W <= n; j += L_W) {
        L_T sh = L_LD(Sh + j), sl = L_LD(Sl + j);
        L_M c = L_LT(L_SUB(sh, Mv), L_SET1(-500.0));
        L_T a, b, cc, e2, xh, t;
        FN(two_sum)(sh, nM, &a, &b);
        FN(two_sum)(b, sl, &cc, &e2);
        FN(two_sum)(a, cc, &xh, &t);
        L_T xl = L_ADD(t, e2);
        L_T T = L_ADD(L_MUL(xh, L_SET1(369.3299304675746)), big);
        L_T Nd = L_SUB(T, big);
        // N = (int64)Nd from T's bits (T = 1.5·2^52 + N, |N| < 2^51: its ulp is 1), j = N mod 256,
        // 2^k's bits (k + 1023)·2^52 = (N − j)·2^44 + 1023·2^52 (two's complement)
        L_I N = L_ISUB(L_ICAST(T), L_ICAST(big));
        L_I jj = L_IAND(N, L_ISET1(255));
        L_I sbits = L_IADD(L_ISLL(L_ISUB(N, jj), 44), L_ISET1((int64_t)1023 << 52));
        L_T r1 = L_SUB(xh, L_MUL(Nd, L0));
        L_T rh0, rb, rh, rl;
        FN(two_sum)(r1, L_NEG(L_MUL(Nd, L1)), &rh0, &rb);
        L_T c2 = L_SUB(xl, L_MUL(Nd, L2));
        FN(two_sum)(rh0, L_ADD(rb, c2), &rh, &rl);
        L_T w = L_ADD(L_SET1(1.0 / 24.0),
                      L_MUL(rh, L_ADD(L_SET1(1.0 / 120.0),
                                      L_MUL(rh, L_ADD(L_SET1(1.0 / 720.0),
                                                      L_MUL(rh, L_SET1(1.0 / 5040.0)))))));
        L_T y = L_ADD(L_SET1(1.0 / 6.0), L_MUL(rh, w));
        L_T p = L_MUL(rh, y);
        L_T pe = L_ADD(L_FMS(rh, y, p), L_MUL(rl, y));
        L_T zh, zl;
        FN(two_sum)(L_SET1(0.5), p, &zh, &zl);
        FN(two_sum)(zh, L_ADD(zl, pe), &zh, &zl);
        L_T s2h = L_MUL(rh, rh), s2l;
        FN(two_sum)(s2h, L_ADD(L_FMS(rh, rh, s2h), L_MUL(L_MUL(L_SET1(2.0), rh), rl)), &s2h, &s2l);
        L_T qh, ql, fh, fl, gh, gl;
        FN(dd_mul)(s2h, s2l, zh, zl, &qh, &ql);
        FN(dd_add)(L_SET1(1.0), zero, rh, rl, &fh, &fl);
        FN(dd_add)(fh, fl, qh, ql, &fh, &fl);
        L_I ix = L_ISLL(jj, 1);  // tab[j][0] is element 2j of the table
        FN(dd_mul)(L_GATHER(&tab[0][0], ix), L_GATHER(&tab[0][1], ix), fh, fl, &gh, &gl);
        L_T s = L_DCAST(sbits);
        L_ST(eh + j, L_SEL(c, L_MUL(gh, s), zero));
        L_ST(el + j, L_SEL(c, L_MUL(gl, s), zero));
        int bits = L_BITS(c);
        for (int i = 0; i < L_W; i++)
            cut[j + i] = (unsigned char)(bits >> i & 1);
    }
    for (; j < n; j++)
        pp_attn_exp_row_(tab, L, 1, Sh + j, Sl + j, M, eh + j, el + j, cut + j);
}

// pp_attn_score_keys_ per lane.
TGT static int FN(score_keys)(int64_t n, const double *h, const double *c, const double *T,
                              double sig_h, double sig_l, double sig_b, double coef, double *Sh,
                              double *Sl, double *eS)
{
    const L_T sH = L_SET1(sig_h), sL = L_SET1(sig_l), sB = L_SET1(sig_b), C = L_SET1(coef);
    int bad = 0;
    int64_t j = 0;
    for (; j + L_W <= n; j += L_W) {
        L_T th, tl, zh, zl;
        FN(two_sum)(L_LD(h + j), L_LD(c + j), &th, &tl);
        FN(dd_mul)(sH, sL, th, tl, &zh, &zl);
        L_T e = L_MUL(L_MUL(sB, L_LD(T + j)), C);
        bad |= L_BITS(L_MOR(L_NLE(e, L_SET1(0x1p-40)), L_NLT(L_ABS(zh), L_SET1(0x1p40))));
        L_ST(Sh + j, zh);
        L_ST(Sl + j, zl);
        L_ST(eS + j, e);
    }
    for (; j < n; j++)
        bad |= pp_attn_score_elem_(h[j], c[j], T[j], sig_h, sig_l, sig_b, coef, Sh + j, Sl + j,
                                   eS + j);
    return bad != 0;
}

// pp_attn_scale_row_ per lane: (Ph, Pl) = dd_mul(Ph, Pl, rh, rl) where not cut.
TGT static void FN(scale_row)(int64_t n, double *Ph, double *Pl, const unsigned char *cut, double rh,
                              double rl)
{
    const L_T RH = L_SET1(rh), RL = L_SET1(rl);
    int64_t j = 0;
    for (; j + L_W <= n; j += L_W) {
        L_T ph = L_LD(Ph + j), pl = L_LD(Pl + j), zh, zl;
        FN(dd_mul)(ph, pl, RH, RL, &zh, &zl);
        L_M c = L_CUTMASK(cut + j);
        L_ST(Ph + j, L_SEL(c, zh, ph));
        L_ST(Pl + j, L_SEL(c, zl, pl));
    }
    pp_attn_scale_row_(n - j, Ph + j, Pl + j, cut + j, rh, rl);
}

// pp_attn_dp_keys_ per lane.
TGT static void FN(dp_keys)(int64_t n, const double *h, const double *c, const double *V, double coef,
                            const double *Ph, const double *Pl, double *dph, double *dpl,
                            double *edp, double *mh, double *ml)
{
    const L_T C = L_SET1(coef);
    int64_t j = 0;
    for (; j + L_W <= n; j += L_W) {
        L_T a, b, zh, zl;
        FN(two_sum)(L_LD(h + j), L_LD(c + j), &a, &b);
        L_ST(dph + j, a);
        L_ST(dpl + j, b);
        L_ST(edp + j, L_MUL(L_LD(V + j), C));
        FN(dd_mul)(L_LD(Ph + j), L_LD(Pl + j), a, b, &zh, &zl);
        L_ST(mh + j, zh);
        L_ST(ml + j, zl);
    }
    for (; j < n; j++)
        pp_attn_dp_elem_(h[j], c[j], V[j], coef, Ph[j], Pl[j], dph + j, dpl + j, edp + j, mh + j,
                         ml + j);
}

// pp_attn_ds_keys_ per lane: both branches computed, the cut lanes' values chosen by mask.
TGT static void FN(ds_keys)(const pp_attn_ds_row_ *R, int64_t n, const double *Ph, const double *Pl,
                            const double *dph, const double *dpl, const double *edp,
                            const unsigned char *cut, double *sh, double *sl, double *e,
                            unsigned char *state)
{
    const L_T Dh = L_NEG(L_SET1(R->Dh)), Dl = L_NEG(L_SET1(R->Dl)), eD = L_SET1(R->eD);
    const L_T aD = L_SET1(R->aD), dP = L_SET1(R->dP), dP1 = L_SET1(1.0 + R->dP);
    const L_T u50 = L_SET1(1.0 + 0x1p-50), u40 = L_SET1(1.0 + 0x1p-40);
    int64_t j = 0;
    for (; j + L_W <= n; j += L_W) {
        L_T dh = L_LD(dph + j), ed = L_LD(edp + j), ph = L_LD(Ph + j);
        L_T adp = L_MUL(L_ABS(dh), u50);
        L_T ecut = L_MUL(L_SET1(0x1p-720), L_ADD(L_ADD(L_ADD(adp, ed), aD), eD));
        L_T xh, xl, zh, zl;
        FN(dd_add)(dh, L_LD(dpl + j), Dh, Dl, &xh, &xl);
        L_T eX = L_ADD(L_ADD(ed, eD), L_MUL(L_SET1(3.02 * 0x1p-106), L_ADD(adp, aD)));
        L_T aX = L_MUL(L_ABS(xh), u50);
        FN(dd_mul)(ph, L_LD(Pl + j), xh, xl, &zh, &zl);
        L_T s1 = L_ADD(L_MUL(L_MUL(dP, ph), aX), L_MUL(L_MUL(ph, dP1), eX));
        L_T s2 = L_ADD(s1, L_MUL(L_MUL(L_SET1(9.2 * 0x1p-106), ph), aX));
        L_T edS = L_ADD(L_MUL(s2, u40), L_SET1(0x1p-1072));
        L_M drop = L_LT(L_ABS(zh), L_SET1(0x1p-800));
        edS = L_SEL(drop, edS, L_ADD(edS, L_SET1(0x1p-799)));
        L_M c = L_CUTMASK(cut + j);
        L_ST(sh + j, zh);
        L_ST(sl + j, zl);
        L_ST(e + j, L_SEL(c, edS, ecut));
        int cb = L_BITS(c), db = L_BITS(drop);
        for (int i = 0; i < L_W; i++)
            state[j + i] = cb >> i & 1   ? PP_ATTN_BLK_CUT
                           : db >> i & 1 ? PP_ATTN_BLK_DROP
                                         : PP_ATTN_BLK_ACC;
    }
    pp_attn_ds_keys_(R, n - j, Ph + j, Pl + j, dph + j, dpl + j, edp + j, cut + j, sh + j, sl + j,
                     e + j, state + j);
}

// pp_attn_acc_multi_ per lane: 4 vectors of the accumulator (H, lo) stay in registers across the
// n terms, each term the statements of pp_attn_acc_elem_ (attention_ref_eft.h) in its order, 5
// operations. Each element takes its terms in order, as n one-term calls would give them.
#define ACC_STEP(H, O, yv)                                                                     \
    do {                                                                                       \
        L_T s_ = L_FMA(X1, yv, H);                       /* RN(H + x1·y) */                    \
        L_T r_ = L_FMS(X1, yv, L_SUB(s_, H));            /* x1·y − (s − H): exact */           \
        H = s_;                                                                                \
        O = L_ADD(O, L_FMA(X2, yv, r_));                 /* lo + RN(x2·y + r) */               \
    } while (0)

TGT static void FN(acc_multi)(double *restrict h, double *restrict lo, int64_t d, int64_t n,
                              const double *const *y, const double *xh, const double *xl)
{
    double x1[PP_ATTN_ACC_TERMS], x2[PP_ATTN_ACC_TERMS];
    for (int64_t t = 0; t < n; t++)
        pp_attn_acc_x_(xh[t], xl[t], &x1[t], &x2[t]);
    int64_t l = 0;
    for (; l + 4 * L_W <= d; l += 4 * L_W) {
        L_T H0 = L_LD(h + l), H1 = L_LD(h + l + L_W), H2 = L_LD(h + l + 2 * L_W),
            H3 = L_LD(h + l + 3 * L_W);
        L_T O0 = L_LD(lo + l), O1 = L_LD(lo + l + L_W), O2 = L_LD(lo + l + 2 * L_W),
            O3 = L_LD(lo + l + 3 * L_W);
        for (int64_t t = 0; t < n; t++) {
            const L_T X1 = L_SET1(x1[t]), X2 = L_SET1(x2[t]);
            const double *yt = y[t] + l;
            ACC_STEP(H0, O0, L_LD(yt));
            ACC_STEP(H1, O1, L_LD(yt + L_W));
            ACC_STEP(H2, O2, L_LD(yt + 2 * L_W));
            ACC_STEP(H3, O3, L_LD(yt + 3 * L_W));
        }
        L_ST(h + l, H0);
        L_ST(h + l + L_W, H1);
        L_ST(h + l + 2 * L_W, H2);
        L_ST(h + l + 3 * L_W, H3);
        L_ST(lo + l, O0);
        L_ST(lo + l + L_W, O1);
        L_ST(lo + l + 2 * L_W, O2);
        L_ST(lo + l + 3 * L_W, O3);
    }
    for (; l + L_W <= d; l += L_W) {
        L_T H0 = L_LD(h + l), O0 = L_LD(lo + l);
        for (int64_t t = 0; t < n; t++) {
            const L_T X1 = L_SET1(x1[t]), X2 = L_SET1(x2[t]);
            ACC_STEP(H0, O0, L_LD(y[t] + l));
        }
        L_ST(h + l, H0);
        L_ST(lo + l, O0);
    }
    for (; l < d; l++)
        for (int64_t t = 0; t < n; t++)
            pp_attn_acc_elem_(h + l, lo + l, y[t][l], x1[t], x2[t]);
}

#undef ACC_STEP
