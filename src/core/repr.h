// repr.h — Python's text for numbers: repr(float) (the shortest round-trip form, in Python's
// layout) and f"{num/den:.1%}", so precprobe prints numbers exactly as torch's messages do.
#ifndef PP_REPR_H
#define PP_REPR_H

#include <stddef.h>

// Longest text pp_repr_double writes, NUL included ("-1.7976931348623157e+308" is 24 + 1).
#define PP_REPR_MAX 32

// Writes repr(x) as CPython 3 prints it: the shortest decimal string that reads back as x (among
// strings of that length, the one nearest x), in fixed notation when the decimal point position
// decpt (x = 0.d1d2… × 10^decpt) satisfies -4 < decpt <= 16, else as d[.ddd]e±XX (two exponent
// digits at least); ".0" is appended to integral fixed values. Special values: "inf", "-inf",
// "nan" (any NaN, sign ignored, as Python does), "-0.0".
// @param [in] x     any binary64
// @param [out] buf  receives the text, NUL-terminated
// @param [in] n     size of buf
// Returns the length written (excluding the NUL), or -1 when n is too small (buf then holds "").
// PP_REPR_MAX bytes always suffice.
int pp_repr_double(double x, char *buf, size_t n);

// Writes Python's f"{num/den:.1%}": q = fl(num/den) (one binary64 division), v = fl(q·100), then
// v in '%.1f' correctly rounded (ties to even on the exact binary value), then '%'. So 2/3 gives
// "66.7%", 31/50 "62.0%", 1/453120 "0.0%"; inf and nan give "inf%", "-inf%", "nan%".
// @param [in] num, den  the fraction; den == 0 is Python's ZeroDivisionError: returns -1
// @param [out] buf      receives the text, NUL-terminated
// @param [in] n         size of buf
// Returns the length written, or -1 (den == 0, or n too small; buf then holds "" when n > 0).
int pp_format_percent(double num, double den, char *buf, size_t n);

#endif
