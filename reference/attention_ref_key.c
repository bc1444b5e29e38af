// attention_ref_key.c — the reference cache key of an attention reference: op, every parameter
// that changes a value or a bound, the method and precision, and the exact bits of the inputs.
#include "attention_ref.h"
#include "ref_cache.h"

void pp_attention_ref_key(const pp_attn_ref_opts *o, const double *q, const double *k,
                          const double *v, const double *dout, uint8_t key[32])
{
    pp_ref_key h;
    pp_ref_key_init(&h, "attention");
    pp_ref_key_str(&h, "method", o->method == PP_ATTN_REF_MPFR_PLAIN ? "mpfr-plain" : "fast");
    // the precision changes plain's values; fast's only through the tasks it hands to plain
    pp_ref_key_i64(&h, "prec_bits", o->prec_bits == 0 ? PP_ATTN_REF_PLAIN_PREC : o->prec_bits);
    const int64_t dims[6] = {o->b, o->s_q, o->s_kv, o->h, o->h_kv, o->d};
    static const char *const names[6] = {"b", "s_q", "s_kv", "h", "h_kv", "d"};
    for (int i = 0; i < 6; i++)
        pp_ref_key_i64(&h, names[i], dims[i]);
    pp_ref_key_i64(&h, "causal", o->causal != 0);
    pp_ref_key_i64(&h, "sigma_given", o->sigma_given != 0);
    pp_ref_key_f64(&h, "sigma", o->sigma_given ? o->sigma : 0.0);
    pp_ref_key_i64(&h, "backward", o->backward != 0);
    int64_t nq = o->b * o->s_q * o->h * o->d, nk = o->b * o->s_kv * o->h_kv * o->d;
    pp_ref_key_values(&h, "q", q, nq);
    pp_ref_key_values(&h, "k", k, nk);
    pp_ref_key_values(&h, "v", v, nk);
    pp_ref_key_values(&h, "dout", o->backward ? dout : NULL, o->backward ? nq : 0);
    pp_ref_key_final(&h, key);
}
