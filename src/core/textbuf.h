// textbuf.h — a growing text buffer that remembers running out of memory, with HTML escaping:
// what the reports (text, HTML and its SVG charts, JUnit) are assembled in.
#ifndef PP_TEXTBUF_H
#define PP_TEXTBUF_H

#include <stddef.h>

typedef struct pp_textbuf {
    char *s;     // NUL-terminated once anything was added; owned
    size_t len, cap;
    int oom;     // 1: an append failed; later appends do nothing
} pp_textbuf;

void pp_tb_put(pp_textbuf *b, const char *s, size_t n);
void pp_tb_str(pp_textbuf *b, const char *s);
// Appends the formatted text, however long.
void pp_tb_printf(pp_textbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// s escaped for HTML text and double-quoted attribute values: & < > " ' as entities, control
// characters other than tab and newline as U+FFFD, invalid UTF-8 bytes as U+FFFD.
void pp_tb_html(pp_textbuf *b, const char *s);
void pp_tb_free(pp_textbuf *b);
// Hands the text over: a malloc'd string ("" when nothing was added) the caller frees, or NULL
// when an append ran out of memory (the buffer is then freed). b is left empty either way.
char *pp_tb_take(pp_textbuf *b);

#endif
