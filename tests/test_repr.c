// test_repr.c — pp_repr_double and pp_format_percent against Python's own output, read from
// tests/data/repr.txt (made by tools/gen_repr_table.py), plus buffer-size and special cases.
#include "test_util.h"

#include <math.h>

#include "format.h"
#include "core/repr.h"

// ---------------------------------------------------------------------------------------------
// The table loader
//
// tests/data/repr.txt, one case per line, fields separated by one space:
//   d HHHHHHHHHHHHHHHH TEXT  binary64 bits (16 hex digits) and Python's repr of that float
//   f HHHHHHHH TEXT          binary32 bits; TEXT is repr(float) of its exact binary64 value
//   h HHHH TEXT              binary16 bits; likewise
//   p HHHHHHHHHHHHHHHH HHHHHHHHHHHHHHHH TEXT  num and den as binary64 bits; TEXT is f"{num/den:.1%}"
//   # …                      comment (the second line names the Python that generated the file)
// Returns the number of mismatches (printing the first 10); *cases counts the lines checked.

static double from_bits64(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

static int check_table(const char *path, int *cases, int *kinds)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "cannot open %s (run the tests from the repository root)\n", path);
        return 1;
    }
    char line[512];
    int bad = 0, lineno = 0;
    *cases = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '#' || line[0] == '\0')
            continue;
        char kind = line[0];
        char text[128], got[PP_REPR_MAX + 16];
        unsigned long long b1 = 0, b2 = 0;
        double x = 0, y = 0;
        int ok;
        if (kind == 'p') {
            ok = sscanf(line + 2, "%llx %llx %127s", &b1, &b2, text) == 3;
            x = from_bits64(b1);
            y = from_bits64(b2);
            if (ok)
                pp_format_percent(x, y, got, sizeof got);
        } else {
            ok = sscanf(line + 2, "%llx %127s", &b1, text) == 2;
            if (kind == 'd') {
                x = from_bits64(b1);
            } else if (kind == 'f') {
                uint32_t u = (uint32_t)b1;
                float fx;
                memcpy(&fx, &u, sizeof fx);
                x = fx;
            } else if (kind == 'h') {
                x = pp_decode(PP_FMT_FP16, b1);
            } else {
                ok = 0;
            }
            if (ok)
                pp_repr_double(x, got, sizeof got);
        }
        if (!ok) {
            fprintf(stderr, "%s:%d: malformed line\n", path, lineno);
            bad++;
        } else {
            (*cases)++;
            kinds[(unsigned char)kind]++;
            if (strcmp(got, text) != 0) {
                if (bad < 10) {
                    fprintf(stderr, "FAIL %s:%d (%c): expected '%s', got '%s'\n", path, lineno, kind,
                            text, got);
                    pp_test_print_double("x", x);
                    if (kind == 'p')
                        pp_test_print_double("den", y);
                }
                bad++;
            }
        }
        if (bad >= 10)
            break;
    }
    fclose(f);
    return bad;
}

static void repr_table_matches_python(void **state)
{
    (void)state;
    int cases, kinds[256] = {0};
    int bad = check_table("tests/data/repr.txt", &cases, kinds);
    assert_int_equal(bad, 0);
    // The table really holds each kind (a truncated file must not pass).
    assert_true(kinds['d'] > 10000);
    assert_true(kinds['h'] > 63000);
    assert_true(kinds['f'] > 2000);
    assert_true(kinds['p'] > 4000);
}

// ---------------------------------------------------------------------------------------------
// Named cases (also in the table; here so a failure names the rule that broke)

static void expect_repr(double x, const char *want)
{
    char got[PP_REPR_MAX];
    int len = pp_repr_double(x, got, sizeof got);
    if (strcmp(got, want) != 0 || len != (int)strlen(want)) {
        fprintf(stderr, "FAIL repr: expected '%s', got '%s' (len %d)\n", want, got, len);
        pp_test_print_double("x", x);
        fail();
    }
}

static void repr_layout_rules(void **state)
{
    (void)state;
    expect_repr(1e16, "1e+16");                             // decpt 17 > 16: exponent
    expect_repr(1234567890123456.0, "1234567890123456.0");  // decpt 16: fixed, ".0" added
    expect_repr(0.0001, "0.0001");                          // decpt -3: fixed
    expect_repr(1e-05, "1e-05");                            // decpt -4: exponent, 2 digits
    expect_repr(0.1, "0.1");
    expect_repr(123456789012345678.0, "1.2345678901234568e+17");
    expect_repr(2784.0, "2784.0");
    expect_repr(0.001953125, "0.001953125");
    expect_repr(1.3e-06, "1.3e-06");
    expect_repr((double)0.1f, "0.10000000149011612");
    expect_repr(5e-324, "5e-324");
    expect_repr(1.7976931348623157e308, "1.7976931348623157e+308");
    expect_repr(-0.0, "-0.0");
    expect_repr(0.0, "0.0");
    expect_repr(INFINITY, "inf");
    expect_repr(-INFINITY, "-inf");
    expect_repr(NAN, "nan");
    expect_repr(-NAN, "nan");
    expect_repr(9.000000000000001e-10, "9.000000000000001e-10");
    expect_repr(0.016, "0.016");
    // 2^-1074·2^k near powers of two where the nearest short string fails to read back
    expect_repr(ldexp(1.0, -1022), "2.2250738585072014e-308");
    expect_repr(ldexp(1.0, 1023), "8.98846567431158e+307");
}

static void repr_buffer_size(void **state)
{
    (void)state;
    char b[PP_REPR_MAX];
    assert_int_equal(pp_repr_double(-1.7976931348623157e308, b, sizeof b), 24);
    assert_int_equal(pp_repr_double(-2.2250738585072014e-308, b, sizeof b), 24);
    assert_int_equal(pp_repr_double(-0.00012345678901234567, b, sizeof b), 23);
    char small[4] = "xyz";
    assert_int_equal(pp_repr_double(0.5, small, 4), 3);  // "0.5" + NUL fits exactly
    assert_string_equal(small, "0.5");
    assert_int_equal(pp_repr_double(0.25, small, 4), -1);
    assert_string_equal(small, "");
    assert_int_equal(pp_repr_double(0.25, small, 0), -1);
}

static void percent_rules(void **state)
{
    (void)state;
    char b[64];
    assert_int_equal(pp_format_percent(2, 3, b, sizeof b), 5);
    assert_string_equal(b, "66.7%");
    pp_format_percent(31, 50, b, sizeof b);
    assert_string_equal(b, "62.0%");
    pp_format_percent(1, 453120, b, sizeof b);
    assert_string_equal(b, "0.0%");
    pp_format_percent(487642, 786432, b, sizeof b);
    assert_string_equal(b, "62.0%");
    pp_format_percent(1, 1, b, sizeof b);
    assert_string_equal(b, "100.0%");
    pp_format_percent(1, 400, b, sizeof b);  // 0.25 exactly after ·100: half to even
    assert_string_equal(b, "0.2%");
    pp_format_percent(3, 400, b, sizeof b);
    assert_string_equal(b, "0.8%");
    assert_int_equal(pp_format_percent(1, 0, b, sizeof b), -1);
    pp_format_percent(INFINITY, 1, b, sizeof b);
    assert_string_equal(b, "inf%");
    pp_format_percent(NAN, 1, b, sizeof b);
    assert_string_equal(b, "nan%");
    char small[5];
    assert_int_equal(pp_format_percent(1, 2, small, sizeof small), -1);  // "50.0%" needs 6
    assert_string_equal(small, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(repr_layout_rules),
        cmocka_unit_test(repr_buffer_size),
        cmocka_unit_test(percent_rules),
        cmocka_unit_test(repr_table_matches_python),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
