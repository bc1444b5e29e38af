// ranges_compare.h — the one comparison of range accumulators (kernels/ranges.h) that the tests of
// a second device use (the GPU, a CPU loop device in the GPU's decomposition) against the CPU
// emulation's: sites [first, end), every head, the site's format and every counter bit for bit
// (amax and min |x| by their bit patterns, as the GPU's atomics order them).
#ifndef PP_TEST_RANGES_COMPARE_H
#define PP_TEST_RANGES_COMPARE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ranges.h"
#include "sites.h"

// The number of (site, head) cells of got that differ from want's, each printed with both values
// (at most 10 lines); a different head count is one difference.
static inline int pp_test_ranges_differ(const pp_ranges *got, const pp_ranges *want, int first, int end,
                                        const char *what)
{
    if (got->heads != want->heads) {
        fprintf(stderr, "FAIL %s: %lld heads, want %lld\n", what, (long long)got->heads, (long long)want->heads);
        return 1;
    }
    int diff = 0;
    for (int s = first; s < end; s++)
        for (int64_t h = 0; h < got->heads; h++) {
            const pp_range_cell *g = &got->cells[s * got->heads + h], *w = &want->cells[s * want->heads + h];
            if (got->fmt[s] == want->fmt[s] && memcmp(g, w, sizeof *g) == 0)
                continue;
            if (diff++ < 10)
                fprintf(stderr,
                        "FAIL %s: site %s head %lld: fmt %d/%d count %lld/%lld amax %a/%a min_nz %a/%a nan %lld/%lld "
                        "inf %lld/%lld overflow %lld/%lld underflow %lld/%lld subnormal %lld/%lld near_max "
                        "%lld/%lld clamped %lld/%lld (got/want)\n",
                        what, pp_site_get(s)->name, (long long)h, got->fmt[s], want->fmt[s], (long long)g->count,
                        (long long)w->count, g->amax, w->amax, g->min_nz, w->min_nz, (long long)g->nan,
                        (long long)w->nan, (long long)g->inf, (long long)w->inf, (long long)g->overflow,
                        (long long)w->overflow, (long long)g->underflow, (long long)w->underflow,
                        (long long)g->subnormal, (long long)w->subnormal, (long long)g->near_max,
                        (long long)w->near_max, (long long)g->clamped, (long long)w->clamped);
        }
    return diff;
}

// The sum of one int64 counter (its offsetof in pp_range_cell) over sites [first, end) and every
// head: a test's check that its comparison was not vacuous (something was noted, an overflow met).
static inline int64_t pp_test_ranges_total(const pp_ranges *R, int first, int end, size_t field)
{
    int64_t sum = 0;
    for (int s = first; s < end; s++)
        for (int64_t h = 0; h < R->heads; h++) {
            int64_t v;
            memcpy(&v, (const char *)&R->cells[s * R->heads + h] + field, sizeof v);
            sum += v;
        }
    return sum;
}

#endif
