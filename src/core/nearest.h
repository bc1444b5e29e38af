// nearest.h — "did you mean …?": the known name closest to a misspelt word, by edit distance.
#ifndef PP_NEAREST_H
#define PP_NEAREST_H

// The name in names[0..n) closest to word, or NULL when none is close.
// Distance: optimal string alignment (insert, delete, substitute, swap two adjacent characters,
// each costing 1; ASCII letters compared without case; bytes otherwise).
// Close: distance <= max(1, strlen(name) / 3) — about one slip per three characters — and
// smaller than the length of both word and name, so a one-letter word suggests nothing.
// Ties go to the earliest name. Names longer than 64 bytes are never suggested.
// Preconditions: word and every names[i] non-NULL and NUL-terminated; n >= 0.
// Time: O(n * 64 * 85) at most (long words are rejected by their length before any work).
const char *pp_nearest_name(const char *word, const char *const *names, int n);

#endif
