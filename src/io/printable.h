// printable.h — names from files (and users) made fit for a one-line message.
#ifndef PP_PRINTABLE_H
#define PP_PRINTABLE_H

#include <stddef.h>

// Copies s into buf (size n >= 8) fit for a one-line message: control characters and DEL as
// \xHH, and, past n - 1 bytes, cut with "...". Names from files (and users) may hold anything.
// Returns buf.
const char *pp_printable(const char *s, char *buf, size_t n);

#endif
