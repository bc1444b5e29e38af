// printable.c — control characters escaped, long names cut.
#include "io/printable.h"

#include <stdio.h>
#include <string.h>

const char *pp_printable(const char *s, char *buf, size_t n)
{
    size_t at = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        int ctl = *p < 0x20 || *p == 0x7f;
        size_t need = ctl ? 4 : 1;
        if (at + need > n - 4) {  // room for "..." and the NUL
            memcpy(buf + at, "...", 4);
            return buf;
        }
        if (ctl)
            snprintf(buf + at, 5, "\\x%02x", *p);
        else
            buf[at] = (char)*p;
        at += need;
    }
    buf[at] = '\0';
    return buf;
}
