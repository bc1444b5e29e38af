// utf8.c — RFC 3629's table of well-formed byte sequences, read off directly: the second byte's
// range is what rules out overlongs (E0, F0), surrogates (ED) and code points past U+10FFFF (F4).
#include "core/utf8.h"

static int continuation(unsigned char c)
{
    return (c & 0xC0) == 0x80;
}

size_t pp_utf8_len(const unsigned char *s, size_t n)
{
    if (n == 0)
        return 0;
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        return n >= 2 && continuation(s[1]) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        return n >= 3 && s[1] >= lo && s[1] <= hi && continuation(s[2]) ? 3 : 0;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        return n >= 4 && s[1] >= lo && s[1] <= hi && continuation(s[2]) && continuation(s[3]) ? 4
                                                                                                : 0;
    }
    return 0;
}

int pp_utf8_valid(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t k = pp_utf8_len(s + i, n - i);
        if (!k)
            return 0;
        i += k;
    }
    return 1;
}
