// cpu/det_log_lanes_body.h — pp_det_log_normal(b, 0) (kernels/random_dist.h) on a register of
// binary64 lanes (b: the bits of positive normal values), Dekker's exact product replaced by one
// FMA. The operations are macros, so the body is written once for any register width
// (cpu/polar_lanes.c includes it with AVX2 + FMA's, which the AVX-512 level runs too):
//   DL_NAME  the function's name        DL_TARGET  its target attribute
//   VD / VI  the double / 64-bit integer register type
//   DL_ADD, DL_SUB, DL_MUL, DL_DIV (a, b), DL_FMSUB (a, b, c) = RN(a·b − c), DL_SET1 (double)
//   DL_IAND, DL_IADD, DL_ISUB (a, b), DL_ISRL (a, k), DL_ISET1 (int64), DL_GE_BIG (b): all ones
//   where b ≥ RN(√2)'s bits else 0, DL_I2D (e): (double)e of a small integer, exactly,
//   DL_CASTD: the bits of an integer register as doubles.
//
// Why the FMA gives the same bits. pp_det_log_normal forms pe = ((qh·dh − p) + qh·dl + ql·dh)
// + ql·dl, Dekker's product of the Veltkamp halves of q and den (split by 2^27 + 1), with
// p = RN(q·den). Dekker's theorem (binary64, no overflow or underflow in the partial products:
// |q| < 0.172, 1.70 < den < 2.42, and q = 0 or |q| ≥ 2^-54, as m − 1 is 0 or at least 2^-53 in
// magnitude) makes every operation of that sum exact, so pe is exactly q·den − p, the error of a
// rounded product, which is a binary64 value. fma(q, den, −p) rounds the exact q·den − p once;
// a representable value rounds to itself, so the FMA returns the very same number. Its sign,
// when q·den − p = 0: both give +0 (Dekker's first term is RN(x − x) = +0 and every later
// addend, ±0 or not, leaves +0 in round to nearest; the FMA's exact sum of opposite zeros, or
// of q·den and −p cancelling, is +0 too; q = −0 never occurs, since m − 1 = +0 at m = 1). Every
// other operation is pp_det_log_normal's, in its order, with plain multiply and add
// (-ffp-contract=off: none is fused). tests/test_random_lanes.c checks the equality on millions
// of s in [2^-106, 1) and on every boundary around √2.

DL_TARGET
static inline VD DL_NAME(VI b)
{
    // e = (b >> 52) − 1023, and m in [1, 2); halved to (1/√2, √2) where m ≥ RN(√2)
    VI e = DL_ISUB(DL_ISRL(b, 52), DL_ISET1(1023));
    b = DL_IADD(DL_IAND(b, DL_ISET1(INT64_C(0x000FFFFFFFFFFFFF))), DL_ISET1(INT64_C(0x3FF0000000000000)));
    VI big = DL_GE_BIG(b);  // all ones: halve
    b = DL_ISUB(b, DL_IAND(big, DL_ISET1(INT64_C(0x0010000000000000))));
    e = DL_ISUB(e, big);  // + 1 where big (all ones is −1)
    VD m = DL_CASTD(b);

    VD one = DL_SET1(1.0);
    VD a = DL_SUB(m, one);
    VD den = DL_ADD(one, m);
    VD eb = DL_SUB(m, DL_SUB(den, one));
    VD q = DL_DIV(a, den);
    VD p = DL_MUL(q, den);
    VD pe = DL_FMSUB(q, den, p);  // Dekker's pe, exactly (the header's comment)
    VD rem = DL_SUB(DL_SUB(a, p), pe);
    VD corr = DL_MUL(DL_SUB(rem, DL_MUL(q, eb)), DL_MUL(DL_SET1(0.5), DL_SUB(one, q)));

    VD z = DL_MUL(q, q);
    VD z2 = DL_MUL(z, z), z4 = DL_MUL(z2, z2), z8 = DL_MUL(z4, z4);
    VD p0 = DL_ADD(DL_SET1(0x1.5555555555555p-2), DL_MUL(DL_SET1(0x1.999999999999ap-3), z));
    VD p1 = DL_ADD(DL_SET1(0x1.2492492492492p-3), DL_MUL(DL_SET1(0x1.c71c71c71c71cp-4), z));
    VD p2 = DL_ADD(DL_SET1(0x1.745d1745d1746p-4), DL_MUL(DL_SET1(0x1.3b13b13b13b14p-4), z));
    VD p3 = DL_ADD(DL_SET1(0x1.1111111111111p-4), DL_MUL(DL_SET1(0x1.e1e1e1e1e1e1ep-5), z));
    VD p4 = DL_ADD(DL_SET1(0x1.af286bca1af28p-5), DL_MUL(DL_SET1(0x1.8618618618618p-5), z));
    VD p5 = DL_SET1(0x1.642c8590b2164p-5);
    VD P = DL_ADD(DL_ADD(DL_ADD(p0, DL_MUL(p1, z2)), DL_MUL(DL_ADD(p2, DL_MUL(p3, z2)), z4)),
                  DL_MUL(DL_ADD(p4, DL_MUL(p5, z2)), z8));
    VD t = DL_MUL(z, P);

    VD r_hi = DL_MUL(DL_SET1(2.0), q);
    VD r_lo = DL_ADD(DL_MUL(DL_SET1(2.0), corr), DL_MUL(r_hi, t));
    VD ed = DL_I2D(e);
    VD eh = DL_MUL(ed, DL_SET1(PP_LN2_HI));
    VD s = DL_ADD(eh, r_hi);
    VD s_err = DL_SUB(r_hi, DL_SUB(s, eh));
    VD w = DL_ADD(s_err, DL_ADD(DL_MUL(ed, DL_SET1(PP_LN2_LO)), r_lo));
    return DL_ADD(s, w);
}
