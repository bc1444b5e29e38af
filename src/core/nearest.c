// nearest.c — "did you mean …?": the known name closest to a misspelt word, by optimal string
// alignment distance (Levenshtein plus adjacent swaps, the commonest typing slip).
#include "core/nearest.h"

#include <string.h>

#define NEAREST_MAX_NAME 64

static int lower(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static int min3(int a, int b, int c)
{
    int m = a < b ? a : b;
    return m < c ? m : c;
}

// Distance between w[0..lw) and s[0..ls), ls <= NEAREST_MAX_NAME; three rows of the usual table.
static int osa_distance(const char *w, int lw, const char *s, int ls)
{
    int rows[3][NEAREST_MAX_NAME + 1];
    int *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
    for (int j = 0; j <= ls; j++)
        prev[j] = j;
    for (int i = 1; i <= lw; i++) {
        cur[0] = i;
        for (int j = 1; j <= ls; j++) {
            int cost = lower((unsigned char)w[i - 1]) != lower((unsigned char)s[j - 1]);
            cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
            if (i > 1 && j > 1 && lower((unsigned char)w[i - 1]) == lower((unsigned char)s[j - 2])
                && lower((unsigned char)w[i - 2]) == lower((unsigned char)s[j - 1])
                && prev2[j - 2] + 1 < cur[j])
                cur[j] = prev2[j - 2] + 1;
        }
        int *t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
    }
    return prev[ls];
}

const char *pp_nearest_name(const char *word, const char *const *names, int n)
{
    size_t lw = strlen(word);
    const char *best = NULL;
    int best_d = 0;
    for (int k = 0; k < n; k++) {
        size_t ls = strlen(names[k]);
        if (ls > NEAREST_MAX_NAME)
            continue;
        int limit = ls / 3 > 1 ? (int)(ls / 3) : 1;
        // The distance is at least the difference in length: skip long words before any work.
        size_t diff = lw > ls ? lw - ls : ls - lw;
        if (diff > (size_t)limit)
            continue;
        int d = osa_distance(word, (int)lw, names[k], (int)ls);
        if (d > limit || (size_t)d >= ls || (size_t)d >= lw)
            continue;
        if (!best || d < best_d) {
            best = names[k];
            best_d = d;
        }
    }
    return best;
}
