// attention_ref_plain.h — the attention reference's mpfr-plain path (attention_ref_plain.c): every
// operation in MPFR; also the fast path's fallback. Not a public interface.
#ifndef PP_ATTENTION_REF_PLAIN_H
#define PP_ATTENTION_REF_PLAIN_H

#include <stdint.h>

#include "attention_ref_job.h"

// Runs task with every operation in MPFR at J->prec bits, overwriting everything the task owns.
// Returns 0, or -1 when out of memory.
int pp_attn_plain_task_(pp_attn_job_ *J, int64_t task, int worker);

#endif
