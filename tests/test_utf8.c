// test_utf8.c — pp_utf8_len and pp_utf8_valid against RFC 3629: the boundary code points of each
// length, and every way to be ill-formed (overlongs, surrogates, past U+10FFFF, stray or missing
// continuation bytes, sequences cut by the end); NUL is an ordinary byte. Then every sequence of
// up to three bytes, and the four-byte ones over their first two bytes, against a decoder that
// computes the code point (a second, independent reading of the RFC).
#include "test_util.h"

#include "core/utf8.h"

typedef struct seq {
    const char *bytes;
    size_t n;
    size_t len;  // pp_utf8_len of the whole
} seq;

#define SEQ(s, len) {s, sizeof s - 1, len}

static const seq cases[] = {
    SEQ("A", 1), SEQ("\x7F", 1), SEQ("\0", 1),           // ASCII; NUL like any ASCII byte
    SEQ("\xC2\x80", 2), SEQ("\xDF\xBF", 2),               // U+0080, U+07FF
    SEQ("\xE0\xA0\x80", 3), SEQ("\xEF\xBF\xBF", 3),       // U+0800, U+FFFF
    SEQ("\xED\x9F\xBF", 3), SEQ("\xEE\x80\x80", 3),       // U+D7FF, U+E000: around the surrogates
    SEQ("\xF0\x90\x80\x80", 4), SEQ("\xF4\x8F\xBF\xBF", 4),  // U+10000, U+10FFFF
    SEQ("\xC3\xA9t", 2),                                  // a sequence followed by more text
    // overlong forms
    SEQ("\xC0\x80", 0), SEQ("\xC1\xBF", 0), SEQ("\xE0\x80\x80", 0), SEQ("\xE0\x9F\xBF", 0),
    SEQ("\xF0\x80\x80\x80", 0), SEQ("\xF0\x8F\xBF\xBF", 0),
    // surrogates
    SEQ("\xED\xA0\x80", 0), SEQ("\xED\xBF\xBF", 0),
    // above U+10FFFF
    SEQ("\xF4\x90\x80\x80", 0), SEQ("\xF5\x80\x80\x80", 0), SEQ("\xF7\xBF\xBF\xBF", 0),
    // bytes that never start a sequence
    SEQ("\x80", 0), SEQ("\xBF", 0), SEQ("\xF8\x88\x80\x80\x80", 0), SEQ("\xFE", 0), SEQ("\xFF", 0),
    // truncated by the end, or by a byte that is no continuation (NUL, ASCII, a lead byte)
    SEQ("\xC3", 0), SEQ("\xE2\x82", 0), SEQ("\xF0\x9F\x98", 0), SEQ("\xC3\0", 0), SEQ("\xC3" "A", 0),
    SEQ("\xE2\x82" "A", 0), SEQ("\xF0\x9F\x98" "A", 0), SEQ("\xE2\xC3\xA9", 0), SEQ("", 0),
};

static void utf8_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const seq *c = &cases[i];
        const unsigned char *s = (const unsigned char *)c->bytes;
        size_t got = pp_utf8_len(s, c->n);
        if (got != c->len)
            fprintf(stderr, "  case %zu (%zu bytes): length %zu, expected %zu\n", i, c->n, got, c->len);
        assert_int_equal(got, c->len);
        // valid exactly when the first sequence is well formed and the rest is too
        int rest_ok = c->len && pp_utf8_valid(s + c->len, c->n - c->len);
        assert_int_equal(pp_utf8_valid(s, c->n), c->n == 0 || rest_ok);
    }
    // A sequence is judged by the bytes given, not by what lies past them.
    assert_int_equal(pp_utf8_len((const unsigned char *)"\xC3\xA9", 1), 0);
    assert_int_equal(pp_utf8_valid((const unsigned char *)"ab\0c\xC3\xA9", 6), 1);
    assert_int_equal(pp_utf8_valid((const unsigned char *)"ab\xC3\xA9", 3), 0);
}

// The code point the bytes encode when they are a complete, shortest, in-range, non-surrogate
// sequence: decoded, then judged (the code's range table is not used).
static size_t decoded_len(const unsigned char *s, size_t n)
{
    if (n == 0)
        return 0;
    unsigned c = s[0];
    size_t len;
    unsigned min;
    if (c < 0x80)
        return 1;
    else if ((c & 0xE0) == 0xC0)
        len = 2, min = 0x80, c &= 0x1F;
    else if ((c & 0xF0) == 0xE0)
        len = 3, min = 0x800, c &= 0x0F;
    else if ((c & 0xF8) == 0xF0)
        len = 4, min = 0x10000, c &= 0x07;
    else
        return 0;
    if (n < len)
        return 0;
    for (size_t k = 1; k < len; k++) {
        if ((s[k] & 0xC0) != 0x80)
            return 0;
        c = (c << 6) | (s[k] & 0x3F);
    }
    return c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF) ? 0 : len;
}

static void utf8_every_short_sequence(void **state)
{
    (void)state;
    unsigned char s[4];
    for (unsigned a = 0; a < 256; a++) {
        s[0] = (unsigned char)a;
        assert_int_equal(pp_utf8_len(s, 1), decoded_len(s, 1));
        for (unsigned b = 0; b < 256; b++) {
            s[1] = (unsigned char)b;
            assert_int_equal(pp_utf8_len(s, 2), decoded_len(s, 2));
            for (unsigned c = 0; c < 256; c++) {
                s[2] = (unsigned char)c;
                if (pp_utf8_len(s, 3) != decoded_len(s, 3))
                    fprintf(stderr, "  %02X %02X %02X\n", a, b, c);
                assert_int_equal(pp_utf8_len(s, 3), decoded_len(s, 3));
            }
        }
    }
    // Four bytes: every first and second byte, the last two at the edges of the continuation
    // range and just outside it.
    static const unsigned char edge[] = {0x00, 0x41, 0x7F, 0x80, 0xBF, 0xC0, 0xFF};
    for (unsigned a = 0xF0; a < 256; a++)
        for (unsigned b = 0; b < 256; b++)
            for (size_t c = 0; c < sizeof edge; c++)
                for (size_t d = 0; d < sizeof edge; d++) {
                    s[0] = (unsigned char)a, s[1] = (unsigned char)b, s[2] = edge[c], s[3] = edge[d];
                    assert_int_equal(pp_utf8_len(s, 4), decoded_len(s, 4));
                    assert_int_equal(pp_utf8_len(s, 3), decoded_len(s, 3));
                }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(utf8_table),
        cmocka_unit_test(utf8_every_short_sequence),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
