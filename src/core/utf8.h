// utf8.h — well-formed UTF-8 (RFC 3629): what the safetensors header and names must be, and what
// the HTML and JUnit reports pass through while replacing everything else.
#ifndef PP_UTF8_H
#define PP_UTF8_H

#include <stddef.h>

// Length (1 to 4) of the well-formed UTF-8 sequence the n bytes at s start with, or 0 when they
// start with none: an overlong form, a surrogate (U+D800..U+DFFF), a code point above U+10FFFF, a
// stray continuation byte, a sequence cut short by the end (n = 0 included). NUL is a sequence of
// one byte like any ASCII character.
size_t pp_utf8_len(const unsigned char *s, size_t n);

// 1 when the n bytes at s are well-formed UTF-8 throughout, else 0. NUL bytes count as well
// formed; callers that forbid them check for them.
int pp_utf8_valid(const unsigned char *s, size_t n);

#endif
