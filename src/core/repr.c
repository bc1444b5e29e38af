// repr.c — Python's repr(float) and '.1%' formatting, built on the C library's correctly rounded
// conversions (glibc's printf and strtod are exact), so no digit-generation algorithm of our own.
#include "core/repr.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// Shortest round-trip digits

// A decimal candidate: p significant digits d0 d1 … and exponent e, value d0.d1… × 10^e.
typedef struct dec {
    char d[20];
    int p;
    int e;
} dec;

static int reads_back(const dec *c, double ax)
{
    // The digits are written without a point: d0d1…d(p-1) × 10^(e-p+1).
    char s[48];
    snprintf(s, sizeof s, "%.*se%d", c->p, c->d, c->e - c->p + 1);
    return strtod(s, NULL) == ax;
}

// The next p-digit decimal above c (999 × 10^e becomes 100 × 10^(e+1)).
static void next_up(dec *c)
{
    int i = c->p - 1;
    while (i >= 0 && c->d[i] == '9')
        c->d[i--] = '0';
    if (i >= 0) {
        c->d[i]++;
    } else {
        c->d[0] = '1';
        c->e++;
    }
}

// The next p-digit decimal below c (100 × 10^e becomes 999 × 10^(e-1)).
static void next_down(dec *c)
{
    int i = c->p - 1;
    while (i >= 0 && c->d[i] == '0')
        c->d[i--] = '9';
    if (i < 0)
        return;  // not reached: c has a nonzero leading digit
    c->d[i]--;
    if (c->d[0] == '0') {
        for (int k = 0; k < c->p; k++)
            c->d[k] = '9';
        c->e--;
    }
}

// Shortest digits that read back as ax (finite, > 0). For each length p the correctly rounded
// p-digit decimal D is the nearest p-digit string to ax; if D does not read back, only its
// neighbour on the far side of ax can (the set of reals reading back as ax is an interval around
// ax, wider above than below when ax is a power of two: that is when this neighbour succeeds).
// At p = 17 D always reads back.
static void shortest(double ax, dec *out)
{
    for (int p = 1; p <= 17; p++) {
        char t[40];
        snprintf(t, sizeof t, "%.*e", p - 1, ax);  // "d.ddde±XX", correctly rounded
        dec c = {.p = p};
        int k = 0;
        const char *s = t;
        for (; *s && *s != 'e'; s++)
            if (*s != '.')
                c.d[k++] = *s;
        c.d[k] = '\0';
        c.e = atoi(s + 1);
        if (reads_back(&c, ax)) {
            *out = c;
            return;
        }
        double dv = strtod(t, NULL);
        dec nb = c;
        if (dv < ax)
            next_up(&nb);
        else
            next_down(&nb);
        if (reads_back(&nb, ax)) {
            *out = nb;
            return;
        }
    }
    // Not reached: 17 significant digits always identify a binary64.
    snprintf(out->d, sizeof out->d, "0");
    out->p = 1;
    out->e = 0;
}

// ---------------------------------------------------------------------------------------------
// Python's layout

int pp_repr_double(double x, char *buf, size_t n)
{
    char t[PP_REPR_MAX];
    if (isnan(x)) {
        snprintf(t, sizeof t, "nan");
    } else if (isinf(x)) {
        snprintf(t, sizeof t, x < 0 ? "-inf" : "inf");
    } else if (x == 0.0) {
        snprintf(t, sizeof t, signbit(x) ? "-0.0" : "0.0");
    } else {
        dec c;
        shortest(fabs(x), &c);
        while (c.p > 1 && c.d[c.p - 1] == '0')  // defensive: a shortest string has none
            c.d[--c.p] = '\0';
        int decpt = c.e + 1;  // x = 0.d0d1… × 10^decpt
        size_t k = 0;
        if (x < 0)
            t[k++] = '-';
        if (decpt <= -4 || decpt > 16) {  // CPython's 'r' rule (format_float_short)
            t[k++] = c.d[0];
            if (c.p > 1) {
                t[k++] = '.';
                for (int i = 1; i < c.p; i++)
                    t[k++] = c.d[i];
            }
            snprintf(t + k, sizeof t - k, "e%c%02d", decpt - 1 < 0 ? '-' : '+', abs(decpt - 1));
        } else if (decpt <= 0) {
            t[k++] = '0';
            t[k++] = '.';
            for (int i = 0; i < -decpt; i++)
                t[k++] = '0';
            for (int i = 0; i < c.p; i++)
                t[k++] = c.d[i];
            t[k] = '\0';
        } else {
            for (int i = 0; i < decpt || i < c.p; i++) {
                if (i == decpt)
                    t[k++] = '.';
                t[k++] = i < c.p ? c.d[i] : '0';
            }
            if (decpt >= c.p) {
                t[k++] = '.';
                t[k++] = '0';
            }
            t[k] = '\0';
        }
    }
    size_t len = strlen(t);
    if (len + 1 > n) {
        if (n)
            buf[0] = '\0';
        return -1;
    }
    memcpy(buf, t, len + 1);
    return (int)len;
}

// ---------------------------------------------------------------------------------------------
// Percentages

int pp_format_percent(double num, double den, char *buf, size_t n)
{
    if (n)
        buf[0] = '\0';
    if (den == 0.0)
        return -1;
    double v = num / den;
    v *= 100.0;  // CPython's '%' presentation: multiply by 100 in binary64, then format as 'f'
    int len;
    if (isnan(v))
        len = snprintf(buf, n, "nan%%");
    else if (isinf(v))
        len = snprintf(buf, n, v < 0 ? "-inf%%" : "inf%%");
    else
        len = snprintf(buf, n, "%.1f%%", v);  // glibc: exact decimal expansion, ties to even
    if (len < 0 || (size_t)len + 1 > n) {
        if (n)
            buf[0] = '\0';
        return -1;
    }
    return len;
}
