// test_philox.c — Philox4x32-10 against the published known-answer vectors, and precprobe's
// (seed, tensor, index, draw) -> counter/key mapping. Run: build/rel/tests/test_philox.
#include "test_util.h"

#include <math.h>

#include "philox.h"

// ---------------------------------------------------------------------------------------------
// Known answers

typedef struct kat {
    uint32_t ctr[4];
    uint32_t key[2];
    uint32_t out[4];
    const char *origin;
} kat;

// Columns: counter words 0..3, key words 0..1, expected output words 0..3 (Random123's order).
// The first three are the "philox4x32 10" lines of Random123's tests/kat_vectors
// (github.com/DEShawResearch/random123; the same three lines are quoted, identically, in the
// test vectors of E. Sarmas' philox.py and of several Philox ports). The others are from the
// generated table examples/kat_vectors of github.com/girving/random123-manual (commit 61e8479):
// they put a single bit in each counter word and key word, so a swapped word fails.
static const kat KATS[] = {
    {{0x00000000, 0x00000000, 0x00000000, 0x00000000}, {0x00000000, 0x00000000},
     {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}, "Random123 kat_vectors: all zero"},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}, "Random123 kat_vectors: all ones"},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}, "Random123 kat_vectors: pi digits"},
    {{0x00000001, 0x00000000, 0x00000000, 0x00000000}, {0x00000001, 0x00000000},
     {0xac08141b, 0xdfc5ccbe, 0x79c07a47, 0xa7f66093}, "random123-manual: ctr word 0, key word 0"},
    {{0x00000000, 0x00000000, 0x00000000, 0x00000001}, {0x00000000, 0x00000001},
     {0x96b27e8c, 0x28826d0f, 0x66d958ef, 0x081509dc}, "random123-manual: ctr word 3, key word 1"},
    {{0x00000000, 0x00000000, 0x80000000, 0x00000000}, {0x00000000, 0xffffffff},
     {0xb6f48e28, 0xf2fa9414, 0x00b64f66, 0x4810cdb4}, "random123-manual: ctr word 2 top bit"},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0x00000000, 0x80000000},
     {0x63675d2c, 0x422d7c4d, 0x3145d30d, 0x3bce33a4}, "random123-manual: pi counter, key top bit"},
};

static void print_block(const char *label, const uint32_t w[4])
{
    fprintf(stderr, "  %s = %08x %08x %08x %08x\n", label, w[0], w[1], w[2], w[3]);
}

static void philox4x32_10_known_answers(void **state)
{
    (void)state;
    int bad = 0;
    for (size_t n = 0; n < sizeof KATS / sizeof KATS[0]; n++) {
        const kat *k = &KATS[n];
        pp_philox4x32_ctr c = {{k->ctr[0], k->ctr[1], k->ctr[2], k->ctr[3]}};
        pp_philox4x32_key key = {{k->key[0], k->key[1]}};
        pp_philox4x32_ctr r = pp_philox4x32_10(c, key);
        if (memcmp(r.v, k->out, sizeof r.v) != 0) {
            fprintf(stderr, "FAIL: known answer %zu (%s)\n", n, k->origin);
            print_block("counter ", k->ctr);
            fprintf(stderr, "  key      = %08x %08x\n", k->key[0], k->key[1]);
            print_block("expected", k->out);
            print_block("got     ", r.v);
            bad++;
        }
    }
    assert_int_equal(bad, 0);
}

// ---------------------------------------------------------------------------------------------
// The element mapping

// pp_philox_element must be exactly Philox of key (s lo, s hi), counter (i lo, i hi, t, d).
static void philox_element_mapping(void **state)
{
    (void)state;
    static const struct {
        uint64_t seed;
        uint32_t tensor;
        uint64_t i;
        uint32_t draw;
    } cases[] = {
        {0, 0, 0, 0},
        {7, 0, 1, 0},
        {UINT64_C(0x0123456789abcdef), 5, (UINT64_C(1) << 40) - 1, 3},
        {UINT64_C(0xffffffff00000000), 0xffffffffu, UINT64_C(0xfedcba9876543210), 0xffffffffu},
    };
    for (size_t n = 0; n < sizeof cases / sizeof cases[0]; n++) {
        pp_philox4x32_ctr c = {{(uint32_t)(cases[n].i & 0xffffffffu), (uint32_t)(cases[n].i >> 32),
                                cases[n].tensor, cases[n].draw}};
        pp_philox4x32_key k = {{(uint32_t)(cases[n].seed & 0xffffffffu), (uint32_t)(cases[n].seed >> 32)}};
        pp_philox4x32_ctr want = pp_philox4x32_10(c, k);
        pp_philox4x32_ctr got = pp_philox_element(cases[n].seed, cases[n].tensor, cases[n].i, cases[n].draw);
        if (memcmp(want.v, got.v, sizeof want.v) != 0) {
            fprintf(stderr, "FAIL: element mapping, case %zu\n", n);
            print_block("expected", want.v);
            print_block("got     ", got.v);
        }
        assert_memory_equal(want.v, got.v, sizeof want.v);
    }
}

// Every field of the mapping reaches the output: changing the seed's high or low half, the
// tensor, the index's high or low half, or the draw changes the block.
static void philox_element_every_field_matters(void **state)
{
    (void)state;
    const uint64_t s = 7, i = 12345;
    const uint32_t t = 3, d = 1;
    pp_philox4x32_ctr base = pp_philox_element(s, t, i, d);
    pp_philox4x32_ctr v[] = {
        pp_philox_element(s ^ 1, t, i, d),
        pp_philox_element(s ^ (UINT64_C(1) << 32), t, i, d),
        pp_philox_element(s, t ^ 1, i, d),
        pp_philox_element(s, t, i ^ 1, d),
        pp_philox_element(s, t, i ^ (UINT64_C(1) << 32), d),
        pp_philox_element(s, t, i, d ^ 1),
    };
    for (size_t n = 0; n < sizeof v / sizeof v[0]; n++) {
        if (memcmp(base.v, v[n].v, sizeof base.v) == 0) {
            fprintf(stderr, "FAIL: field %zu does not change the block\n", n);
            print_block("block", base.v);
        }
        assert_memory_not_equal(base.v, v[n].v, sizeof base.v);
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

// A bijection of the counter for a fixed key: no two of 2^16 consecutive counters give the same
// block (sorted by word 0, then the full blocks of equal neighbours compared), and word 0 is
// spread: each of its 16 top-bit buckets is within 6 sigma of its Binomial(2^16, 1/16) mean.
static void philox4x32_10_distinct_blocks(void **state)
{
    (void)state;
    enum { N = 1 << 16 };
    static uint64_t pairs[N];  // word 0 in the high half, the counter in the low half
    int bucket[16] = {0};
    pp_philox4x32_key k = {{(uint32_t)pp_test_seed(), (uint32_t)(pp_test_seed() >> 32)}};
    for (uint32_t n = 0; n < N; n++) {
        pp_philox4x32_ctr r = pp_philox4x32_10((pp_philox4x32_ctr){{n, 0, 0, 0}}, k);
        pairs[n] = (uint64_t)r.v[0] << 32 | n;
        bucket[r.v[0] >> 28]++;
    }
    qsort(pairs, N, sizeof pairs[0], cmp_u64);
    int dup = 0;
    for (uint32_t n = 1; n < N && dup < 10; n++) {
        if (pairs[n] >> 32 != pairs[n - 1] >> 32)
            continue;
        uint32_t ca = (uint32_t)pairs[n - 1], cb = (uint32_t)pairs[n];
        pp_philox4x32_ctr A = pp_philox4x32_10((pp_philox4x32_ctr){{ca, 0, 0, 0}}, k);
        pp_philox4x32_ctr B = pp_philox4x32_10((pp_philox4x32_ctr){{cb, 0, 0, 0}}, k);
        if (memcmp(A.v, B.v, sizeof A.v) == 0) {
            fprintf(stderr, "FAIL: counters %u and %u give the same block\n", ca, cb);
            print_block("block", A.v);
            pp_test_report_seed();
            dup++;
        }
    }
    assert_int_equal(dup, 0);
    const double mean = N / 16.0, sd = sqrt(N * (1.0 / 16.0) * (15.0 / 16.0));
    int bad = 0;
    for (int b = 0; b < 16; b++) {
        if (fabs(bucket[b] - mean) > 6.0 * sd) {
            fprintf(stderr, "FAIL: bucket %d of word 0 has %d of %d (mean %.0f, sd %.1f)\n", b,
                    bucket[b], N, mean, sd);
            pp_test_report_seed();
            bad++;
        }
    }
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(philox4x32_10_known_answers),
        cmocka_unit_test(philox_element_mapping),
        cmocka_unit_test(philox_element_every_field_matters),
        cmocka_unit_test(philox4x32_10_distinct_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
