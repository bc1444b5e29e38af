// textbuf.c — growing text buffer and HTML escaping (see textbuf.h).
#include "core/textbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/utf8.h"

// Grows b to hold at least need bytes; 0, or -1 (and b->oom) when memory runs out.
static int tb_reserve(pp_textbuf *b, size_t need)
{
    if (b->oom)
        return -1;
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < need)
        cap *= 2;
    char *p = realloc(b->s, cap);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->s = p;
    b->cap = cap;
    return 0;
}

void pp_tb_put(pp_textbuf *b, const char *s, size_t n)
{
    if (tb_reserve(b, b->len + n + 1))
        return;
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
    // Formatted straight into the buffer; when it does not fit, grown to fit and formatted again.
    for (;;) {
        if (tb_reserve(b, b->len + 1))
            return;
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->s[b->len] = '\0';
            b->oom = 1;
            return;
        }
        if (b->len + (size_t)k < b->cap) {
            b->len += (size_t)k;
            return;
        }
        b->s[b->len] = '\0';  // the cut attempt leaves nothing behind
        if (tb_reserve(b, b->len + (size_t)k + 1))
            return;
    }
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

char *pp_tb_take(pp_textbuf *b)
{
    if (!b->oom && !b->s)
        pp_tb_put(b, "", 0);
    if (b->oom) {
        pp_tb_free(b);
        return NULL;
    }
    char *s = b->s;
    memset(b, 0, sizeof *b);
    return s;
}
