// bench_args.h — the benches' optional positional arguments (threads, sizes): whole numbers in a
// range, checked, so that a mistyped or unknown argument stops the bench with its usage line and
// exit status 2 instead of running it on atoi's 0 (`bench_attention_ref --help` once ran with 0
// threads and projected "inf s").
#ifndef PP_BENCH_ARGS_H
#define PP_BENCH_ARGS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

// Exits with status 2 after the usage line when argc − 1 exceeds max_args.
static inline void pp_bench_args_at_most(int argc, char **argv, int max_args, const char *usage)
{
    if (argc - 1 > max_args) {
        fprintf(stderr, "%s: too many arguments\nusage: %s\n", argv[0], usage);
        exit(2);
    }
}

// Argument i (1-based) as a whole number in [lo, hi], or dflt when it is absent; anything else
// exits with status 2, naming the argument, after the usage line.
static inline long long pp_bench_arg(int argc, char **argv, int i, long long dflt, long long lo, long long hi,
                                     const char *usage)
{
    if (argc <= i)
        return dflt;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(argv[i], &end, 10);
    if (errno || end == argv[i] || *end || v < lo || v > hi) {
        fprintf(stderr, "%s: argument %d ('%s') must be a whole number from %lld to %lld\nusage: %s\n", argv[0], i,
                argv[i], lo, hi, usage);
        exit(2);
    }
    return v;
}

#endif
