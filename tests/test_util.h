// test_util.h — shared helpers for the cmocka tests: seed and iteration scaling from the
// environment (PRECPROBE_SEED, PRECPROBE_TEST_MULTIPLIER), and failure printing.
#ifndef PP_TEST_UTIL_H
#define PP_TEST_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define PP_TEST_DEFAULT_SEED 20240428u

// The seed for randomized tests: PRECPROBE_SEED when set, else a fixed default. Printed by
// pp_test_report_seed so a failure can be reproduced.
static inline uint64_t pp_test_seed(void)
{
    const char *s = getenv("PRECPROBE_SEED");
    return s && *s ? strtoull(s, NULL, 0) : PP_TEST_DEFAULT_SEED;
}

// Scales an iteration count by PRECPROBE_TEST_MULTIPLIER (default 1; the sanitizer run uses
// 0.1). Never returns less than 1.
static inline uint64_t pp_test_iters(uint64_t base)
{
    const char *s = getenv("PRECPROBE_TEST_MULTIPLIER");
    double m = s && *s ? strtod(s, NULL) : 1.0;
    double n = (double)base * m;
    return n < 1.0 ? 1 : (uint64_t)n;
}

static inline void pp_test_report_seed(void)
{
    fprintf(stderr, "  (seed %llu: rerun with PRECPROBE_SEED=%llu; include this in bug reports)\n",
            (unsigned long long)pp_test_seed(), (unsigned long long)pp_test_seed());
}

// Prints a double as decimal, %a and its bit pattern: the failure format of every test.
static inline void pp_test_print_double(const char *label, double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    fprintf(stderr, "  %s = %.17g = %a = 0x%016llx\n", label, x, x, (unsigned long long)b);
}

// A small reproducible generator for test data (splitmix64): not Philox, which is under test.
typedef struct pp_test_rng {
    uint64_t s;
} pp_test_rng;

static inline uint64_t pp_test_rng_next(pp_test_rng *r)
{
    uint64_t z = (r->s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

#endif
