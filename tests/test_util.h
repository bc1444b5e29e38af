// test_util.h — shared helpers for the cmocka tests: seed and iteration scaling from the
// environment (PRECPROBE_SEED, PRECPROBE_TEST_MULTIPLIER), failure printing, the generators of
// test data, the named rounding functions by format, each format's special values, bit and
// stored-value comparison, temporary folders and whole-file reading. One definition each.
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

#include <dirent.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format.h"
#include "core/tensor.h"

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

// A uniform double in [0, 1): 53 random bits.
static inline double pp_test_rng_unit(pp_test_rng *r)
{
    return (double)(pp_test_rng_next(r) >> 11) * 0x1p-53;
}

// A longer-period generator for large random sweeps (xoshiro256**), seeded through splitmix64
// from (PRECPROBE_SEED, stream) so each sweep draws its own sequence.
typedef struct pp_test_xoshiro {
    uint64_t s[4];
} pp_test_xoshiro;

static inline void pp_test_xoshiro_seed(pp_test_xoshiro *g, uint64_t stream)
{
    pp_test_rng x = {pp_test_seed() ^ (stream * UINT64_C(0xD1B54A32D192ED03))};
    for (int i = 0; i < 4; i++)
        g->s[i] = pp_test_rng_next(&x);
}

static inline uint64_t pp_test_xoshiro_next(pp_test_xoshiro *g)
{
    uint64_t *s = g->s, r = ((s[1] * 5) << 7 | (s[1] * 5) >> 57) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = s[3] << 45 | s[3] >> 19;
    return r;
}

// The formats below this id (fp64 … e5m2: signed, subnormals, Inf or E4M3's NaN) are those the
// generic sweeps over "every format" were written for; the OCP MX formats appended after them
// (E8M0 unsigned without zero, FP4/FP6 without Inf or NaN) have their own tests
// (tests/test_format_mx.c).
#define PP_TEST_FMT_IEEE PP_FMT_E8M0

// What ±Inf and an overflow in NE or SR become in format F without PP_RND_SAT: ±Inf, NaN where F
// has NaN but no Inf (E4M3, as torch's float8_e4m3fn), else ±max_finite (FP4, FP6).
static inline double pp_test_overflow_value(const pp_format *F)
{
    return F->has_inf ? INFINITY : F->has_nan ? NAN : F->max_finite;
}

// ---------------------------------------------------------------------------------------------
// The named rounding functions

// pp_round_<f>_<mode>(x[, r]) of format f and mode m (r: the stochastic bits), or
// pp_round_from_f32 for a format that has no named functions.
static inline float pp_test_round_named(pp_format_id f, pp_rounding m, float x, uint32_t r)
{
#define PP_NAMED(fmt) m == PP_RND_NE ? pp_round_##fmt##_ne(x) : m == PP_RND_TZ ? pp_round_##fmt##_tz(x) : pp_round_##fmt##_sr(x, r)
    switch (f) {
    case PP_FMT_TF32: return PP_NAMED(tf32);
    case PP_FMT_FP16: return PP_NAMED(fp16);
    case PP_FMT_BF16: return PP_NAMED(bf16);
    case PP_FMT_E4M3: return PP_NAMED(e4m3);
    case PP_FMT_E5M2: return PP_NAMED(e5m2);
    default: return pp_round_from_f32(f, x, m, r);
    }
#undef PP_NAMED
}

// ---------------------------------------------------------------------------------------------
// Special values and stored-value comparison

// At most this many values from pp_test_special_values.
#define PP_TEST_SPECIAL_MAX 16

// The special values of format f: zeros, extreme subnormals, the smallest normal, the largest
// finite, ordinary values, infinities where f has them, NaN of both signs. Writes them to v
// (PP_TEST_SPECIAL_MAX room) and returns the count.
static inline int pp_test_special_values(pp_format_id f, double *v)
{
    pp_format F = pp_format_get(f);
    double min_sub = ldexp(1.0, F.emin - F.p + 1);
    int n = 0;
    v[n++] = 0.0;
    v[n++] = -0.0;
    v[n++] = min_sub;
    v[n++] = -min_sub;
    v[n++] = ldexp(1.0, F.emin) - min_sub;  // largest subnormal
    v[n++] = ldexp(1.0, F.emin);
    v[n++] = F.max_finite;
    v[n++] = -F.max_finite;
    v[n++] = 1.0;
    v[n++] = -1.5;
    if (F.has_inf) {
        v[n++] = INFINITY;
        v[n++] = -INFINITY;
    }
    v[n++] = NAN;
    v[n++] = -NAN;
    return n;
}

// Identical bits: signed zeros and NaN payloads told apart.
static inline int pp_test_same_bits(double a, double b)
{
    return pp_f64_bits(a) == pp_f64_bits(b);
}

// Identical bits, or both NaN (of any sign and payload).
static inline int pp_test_same_or_nan(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return pp_test_same_bits(a, b);
}

// Equal as stored values: the same bits, or both NaN with the same sign (a NaN's payload is not
// carried through 16-bit formats: they write the canonical quiet NaN).
static inline int pp_test_same_value(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b) && signbit(a) == signbit(b);
    return memcmp(&a, &b, sizeof a) == 0;
}

// Counts a mismatch in *count and prints the first 10.
static inline void pp_test_check_value(const char *property, int64_t i, double got, double want, int *count)
{
    if (pp_test_same_value(got, want))
        return;
    if ((*count)++ < 10) {
        fprintf(stderr, "FAIL %s at index %lld\n", property, (long long)i);
        pp_test_print_double("got ", got);
        pp_test_print_double("want", want);
    }
}

// t has the shape given and holds want's values (pp_test_same_value), else the test fails.
static inline void pp_test_check_tensor(const char *property, const pp_tensor *t, int ndim, const int64_t *shape,
                                        const double *want)
{
    assert_int_equal(t->ndim, ndim);
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) {
        assert_int_equal(t->shape[d], shape[d]);
        n *= shape[d];
    }
    assert_int_equal(t->numel, n);
    int count = 0;
    for (int64_t i = 0; i < n; i++)
        pp_test_check_value(property, i, t->data[i], want[i], &count);
    assert_int_equal(count, 0);
}

// True when msg holds a control character: messages must be one printable line.
static inline int pp_test_has_control(const char *msg)
{
    for (const unsigned char *p = (const unsigned char *)msg; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return 1;
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Temporary folders and files

// Room for a path inside a temporary folder (pp_test_tmp_path's buffer).
#define PP_TEST_PATH_MAX 512

// Makes a fresh folder /tmp/pp_test_TAG_XXXXXX (mkdtemp) and writes its name to dir (n bytes).
// Returns 0, or -1 (nothing made) when it cannot.
static inline int pp_test_mkdtemp(char *dir, size_t n, const char *tag)
{
    int k = snprintf(dir, n, "/tmp/pp_test_%s_XXXXXX", tag);
    return k < 0 || (size_t)k >= n || !mkdtemp(dir) ? -1 : 0;
}

// Removes dir and everything below it (files and folders, links not followed).
static inline void pp_test_rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char p[PP_TEST_PATH_MAX + 256];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            pp_test_rm_tree(p);
        else
            unlink(p);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

// The entries of dir other than . and .. (what a writer left there).
static inline int pp_test_dir_entries(const char *dir)
{
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

// True when some file in dir has ".tmp-" in its name (a writer left its temporary file).
static inline int pp_test_has_temp_file(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = 0;
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".tmp-"))
            found = 1;
    if (d)
        closedir(d);
    return found;
}

// A cmocka group setup and teardown: the group's state is a fresh temporary folder's name
// (malloc'd), removed with all it holds after the group.
static inline int pp_test_tmpdir_setup(void **state)
{
    char *d = malloc(PP_TEST_PATH_MAX);
    if (!d || pp_test_mkdtemp(d, PP_TEST_PATH_MAX, "group")) {
        free(d);
        return -1;
    }
    *state = d;
    return 0;
}

static inline int pp_test_tmpdir_teardown(void **state)
{
    pp_test_rm_tree(*state);
    free(*state);
    return 0;
}

// The path of name inside the group's temporary folder (pp_test_tmpdir_setup), in buf
// (PP_TEST_PATH_MAX bytes).
static inline const char *pp_test_tmp_path(void **state, const char *name, char *buf)
{
    snprintf(buf, PP_TEST_PATH_MAX, "%s/%s", (const char *)*state, name);
    return buf;
}

// The whole file at path, malloc'd, with a NUL after its *n bytes (n may be NULL); the test
// fails when it cannot be read.
static inline unsigned char *pp_test_slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char *b = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 1 >= cap) {
            cap = cap ? 2 * cap : 4096;
            b = realloc(b, cap);
            assert_non_null(b);
        }
        size_t got = fread(b + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0)
            break;
    }
    assert_int_equal(ferror(f), 0);
    fclose(f);
    b[len] = '\0';
    if (n)
        *n = len;
    return b;
}

#endif
