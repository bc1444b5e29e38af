// partial.c — a shard's partial result (partial.h): its identity, and freeing it.
#include "pipeline/partial.h"

#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Strings with their NUL and integers as decimal text with a separator, so no two different
// option sets hash the same bytes.
static void put_str(struct sha256_ctx *h, const char *s)
{
    sha256_update(h, strlen(s) + 1, (const uint8_t *)s);
}

static void put_int(struct sha256_ctx *h, const char *name, long v)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s=%ld", name, v);
    put_str(h, buf);
}

void pp_partial_identity(const pp_case *c, const pp_run_opts *o, char hex[PP_IDENTITY_HEX])
{
    struct sha256_ctx h;
    sha256_init(&h);
    put_str(&h, PP_PARTIAL_FORMAT);
    put_str(&h, c->text ? c->text : "");
    put_str(&h, o->reference_method ? o->reference_method : "");
    put_int(&h, "orders", o->orders > 0 ? o->orders : 0);
    put_int(&h, "cross_check", o->cross_check != 0);
    put_int(&h, "save_tensors", o->save_tensors != 0);
    uint8_t d[SHA256_DIGEST_SIZE];
    sha256_digest(&h, SHA256_DIGEST_SIZE, d);
    for (int i = 0; i < SHA256_DIGEST_SIZE; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

void pp_partial_free(pp_partial *p)
{
    free(p->plan_signature);
    free(p->owned);
    free(p->cmp_task);
    for (int i = 0; i < PP_MAX_OP_TENSORS; i++)
        pp_tensor_free(&p->inputs[i]);
    for (int g = 0; g < PP_FMT_COUNT; g++)
        for (int t = 0; t < PP_MAX_OP_TENSORS; t++)
            pp_tensor_free(&p->refs[g][t]);
    for (int v = 0; v < p->n_outs; v++)
        for (int t = 0; t < PP_MAX_OP_TENSORS; t++)
            pp_tensor_free(&p->outs[v][t]);
    free(p->outs);
    pp_run_result_free(&p->r);
    memset(p, 0, sizeof *p);
}
