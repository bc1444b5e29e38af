// textbuf.c — growing text buffer and HTML escaping (see textbuf.h).
#include "core/textbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/utf8.h"

void pp_tb_put(pp_textbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->s, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void pp_tb_str(pp_textbuf *b, const char *s)
{
    pp_tb_put(b, s, strlen(s));
}

void pp_tb_printf(pp_textbuf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= sizeof tmp) {
        b->oom = 1;  // callers format short fields only: a cut would be a silent bug
        return;
    }
    pp_tb_put(b, tmp, (size_t)k);
}

void pp_tb_html(pp_textbuf *b, const char *str)
{
    const unsigned char *s = (const unsigned char *)str, *end = s + strlen(str);
    while (*s) {
        const char *rep = NULL;
        switch (*s) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&#39;"; break;
        default:
            if (*s < 0x20 && *s != '\t' && *s != '\n')
                rep = "\xEF\xBF\xBD";
            break;
        }
        if (rep) {
            pp_tb_str(b, rep);
            s++;
            continue;
        }
        size_t n = pp_utf8_len(s, (size_t)(end - s));
        if (!n) {
            pp_tb_str(b, "\xEF\xBF\xBD");
            s++;
        } else {
            pp_tb_put(b, (const char *)s, n);
            s += n;
        }
    }
}

void pp_tb_free(pp_textbuf *b)
{
    free(b->s);
    memset(b, 0, sizeof *b);
}
