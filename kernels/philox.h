// philox.h — the Philox4x32-10 counter-based generator (Salmon, Moraes, Dror, Shaw, "Parallel
// random numbers: as easy as 1, 2, 3", SC'11; the Random123 definition) and precprobe's mapping
// from (seed, tensor id, element index) to its 128 random bits. C11 and nvcc (PP_HD).
#ifndef PP_PHILOX_H
#define PP_PHILOX_H

#include <stdint.h>

#include "pp_hd.h"

// ---------------------------------------------------------------------------------------------
// Philox4x32-10

// A 128-bit counter (or output block) and a 64-bit key, as 32-bit words in Random123's order:
// word 0 first. The known-answer vectors in tests/test_philox.c are written in this order.
typedef struct pp_philox4x32_ctr {
    uint32_t v[4];
} pp_philox4x32_ctr;

typedef struct pp_philox4x32_key {
    uint32_t v[2];
} pp_philox4x32_key;

// The constants of the paper: the two multipliers of the S-box, and the Weyl increments that
// bump the key between rounds (the golden ratio and sqrt(3) - 1, as 0.32 fixed point).
#define PP_PHILOX_M0 0xD2511F53u
#define PP_PHILOX_M1 0xCD9E8D57u
#define PP_PHILOX_W0 0x9E3779B9u
#define PP_PHILOX_W1 0xBB67AE85u
#define PP_PHILOX_ROUNDS 10

// One round: two 32x32->64 multiplications; the high halves are mixed with the other words and
// the round key, the low halves pass through, and the words are permuted.
PP_HD static inline pp_philox4x32_ctr pp_philox4x32_round(pp_philox4x32_ctr x, pp_philox4x32_key k)
{
    uint64_t p0 = (uint64_t)PP_PHILOX_M0 * x.v[0];
    uint64_t p1 = (uint64_t)PP_PHILOX_M1 * x.v[2];
    pp_philox4x32_ctr y;
    y.v[0] = (uint32_t)(p1 >> 32) ^ x.v[1] ^ k.v[0];
    y.v[1] = (uint32_t)p1;
    y.v[2] = (uint32_t)(p0 >> 32) ^ x.v[3] ^ k.v[1];
    y.v[3] = (uint32_t)p0;
    return y;
}

// out = Philox4x32-10(ctr, key): ten rounds, the key bumped by (W0, W1) mod 2^32 after each of
// the first nine.
// @param [in] ctr  the 128-bit counter
// @param [in] key  the 64-bit key
// Returns the 128-bit output block. A bijection of ctr for each key; a pure function.
PP_HD static inline pp_philox4x32_ctr pp_philox4x32_10(pp_philox4x32_ctr ctr, pp_philox4x32_key key)
{
    for (int r = 0; r < PP_PHILOX_ROUNDS; r++) {
        if (r > 0) {
            key.v[0] += PP_PHILOX_W0;  // unsigned: wraps mod 2^32 by definition
            key.v[1] += PP_PHILOX_W1;
        }
        ctr = pp_philox4x32_round(ctr, key);
    }
    return ctr;
}

// ---------------------------------------------------------------------------------------------
// precprobe's element mapping
//
// Element i (0-based flat row-major index, 0 <= i < 2^40 = PP_MAX_NUMEL) of input tensor t (the
// input's uint32 id within a case) under seed s (uint64) draws its random bits from
//     key     = (low 32 bits of s, high 32 bits of s)
//     counter = (low 32 bits of i, high 32 bits of i, t, d)
// where d = 0, 1, 2, ... numbers the 128-bit draws that element makes (a rejection sampler
// takes a new draw per rejection). So every element is a pure function of (s, t, i): it can be
// generated alone, in any order, on any thread, CPU or GPU, and two tensors or two seeds never
// share a counter. The whole 64-bit index fits in the counter, so the mapping stays a bijection
// beyond 2^40 as well.

// The d-th 128-bit draw of element i of tensor t under seed s (the mapping above).
PP_HD static inline pp_philox4x32_ctr pp_philox_element(uint64_t seed, uint32_t tensor_id, uint64_t i,
                                                        uint32_t draw)
{
    pp_philox4x32_ctr c = {{(uint32_t)i, (uint32_t)(i >> 32), tensor_id, draw}};
    pp_philox4x32_key k = {{(uint32_t)seed, (uint32_t)(seed >> 32)}};
    return pp_philox4x32_10(c, k);
}

#endif
