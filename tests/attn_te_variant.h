// attn_te_variant.h — the fp8 = "te" tests' starting variant: bf16 storage (and CP accumulators),
// the flash kernel, TransformerEngine's FP8 attention, every other knob 0 (its defaults); each
// test sets what it varies. (tests/test_attention_te_*.c, tests/test_explain_attention_te*.c)
#ifndef PP_TEST_ATTN_TE_VARIANT_H
#define PP_TEST_ATTN_TE_VARIANT_H

#include <string.h>

#include "attention.h"

static inline pp_attn_variant attn_te_variant(void)
{
    pp_attn_variant v;
    memset(&v, 0, sizeof v);
    v.format = v.cp_accum = v.cp_grad_accum = PP_FMT_BF16;
    v.kernel = PP_ATTN_FLASH;
    v.fp8 = PP_ATTN_FP8_TE;
    return v;
}

#endif
