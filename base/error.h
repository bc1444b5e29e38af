// error.h — how every host-side function reports failure: a status code plus one line of text.
// Exit statuses follow the CLI contract: 2 bad usage or input, 3 runtime failure (I/O, CUDA).
#ifndef PP_ERROR_H
#define PP_ERROR_H

enum {
    PP_OK = 0,
    PP_ERR_INPUT = 2,   // bad usage, unreadable or malformed input: exit status 2
    PP_ERR_RUNTIME = 3,  // I/O failure while writing, CUDA failure, out of memory: exit status 3
    PP_ERR_INTERRUPTED = 130  // stopped by Ctrl-C or SIGTERM (base/interrupt.h): exit status 130
};

typedef struct pp_error {
    int code;       // PP_OK, PP_ERR_INPUT, PP_ERR_RUNTIME or PP_ERR_INTERRUPTED
    char msg[1024];  // one line, no trailing newline; begins with the offending file or name (1024: the
                     // unknown-key messages list every knob)
} pp_error;

// Sets err (when not NULL) and returns code, so callers can write `return pp_fail(err, ...)`.
int pp_fail(pp_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
