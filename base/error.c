// error.c — filling a pp_error.
#include "error.h"

#include <stdarg.h>
#include <stdio.h>

int pp_fail(pp_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}
