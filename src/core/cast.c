// cast.c — rounding a tensor's values into a format (pp_round per element) and their codes.
#include "core/cast.h"

#include "philox.h"

uint32_t pp_cast_rbits(uint64_t seed, int64_t i)
{
    return pp_philox_element(seed, 0, (uint64_t)i, 0).v[0];
}

int pp_cast_tensor(const pp_tensor *in, const pp_cast_opts *o, pp_tensor *out, pp_error *err)
{
    if ((unsigned)o->to >= (unsigned)PP_FMT_COUNT)
        return pp_fail(err, PP_ERR_INPUT, "cast: unknown format id %d", (int)o->to);
    if ((unsigned)o->mode > (unsigned)PP_RND_SR)
        return pp_fail(err, PP_ERR_INPUT, "cast: unknown rounding mode %d", (int)o->mode);
    int rc = pp_tensor_alloc(out, in->ndim, in->shape, o->to, err);
    if (rc)
        return rc;
    pp_rounding m = (pp_rounding)(o->mode | (o->saturate ? PP_RND_SAT : 0));
    for (int64_t i = 0; i < in->numel; i++) {
        uint32_t rb = o->mode == PP_RND_SR ? pp_cast_rbits(o->seed, i) : 0;
        out->data[i] = pp_round(o->to, in->data[i], m, rb);
    }
    return PP_OK;
}

int pp_cast_codes(const pp_tensor *t, uint8_t *codes, pp_error *err)
{
    if ((unsigned)t->format >= (unsigned)PP_FMT_COUNT || pp_format_get(t->format).storage_bits > 8)
        return pp_fail(err, PP_ERR_INPUT, "cast: codes need a format of at most 8 bits");
    for (int64_t i = 0; i < t->numel; i++)
        codes[i] = (uint8_t)pp_encode(t->format, t->data[i]);
    return PP_OK;
}
