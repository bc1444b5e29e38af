// cast.c — rounding a tensor's values into a format (pp_round per element) and their codes.
#include "core/cast.h"

#include <math.h>
#include <string.h>

#include "philox.h"
#include "scaling.h"

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

// The amax of n values (pp_amax_step: NaN when they hold NaN or ±Inf).
static double block_amax(const double *v, int64_t n)
{
    double amax = 0;
    for (int64_t i = 0; i < n; i++)
        amax = pp_amax_step(amax, v[i]);
    return amax;
}

// The block's shared exponent (kernels/scaling.h), PP_MX_NAN_EXP when it holds NaN or ±Inf.
static int mx_shared_exp(const double *v, int64_t n, int emax_elem)
{
    return pp_mx_shared_exp(block_amax(v, n), emax_elem);
}

int pp_cast_mx(const pp_tensor *in, const pp_cast_opts *o, int block, pp_tensor *elems,
               pp_tensor *scales, pp_error *err)
{
    pp_format_id f = o->to;
    memset(elems, 0, sizeof *elems);
    memset(scales, 0, sizeof *scales);
    if (!pp_mx_elem_format(f))
        return pp_fail(err, PP_ERR_INPUT, "MX scaling needs an element format (e4m3 e5m2 e2m1 e2m3 e3m2), not %s",
                       pp_format_get(f).name);
    if (block < 1 || (unsigned)o->mode > (unsigned)PP_RND_SR)
        return pp_fail(err, PP_ERR_INPUT, "MX scaling: bad block size or rounding mode");
    if (o->mx_rule != PP_MX_RULE_OCP && o->mx_rule != PP_MX_RULE_TE)
        return pp_fail(err, PP_ERR_INPUT, "MX scaling: unknown exponent rule");
    if (o->mx_rule == PP_MX_RULE_TE && o->mode != PP_RND_NE)
        return pp_fail(err, PP_ERR_INPUT, "MX scaling with the te exponent rule rounds to nearest-even only "
                       "(--rounding ne), as TransformerEngine's cast");
    int64_t cols = in->ndim ? in->shape[in->ndim - 1] : 1, rows = cols ? in->numel / cols : 0;
    int64_t nb = (cols + block - 1) / block, sshape[PP_MAX_DIMS];
    for (int d = 0; d < in->ndim; d++)
        sshape[d] = in->shape[d];
    if (in->ndim)
        sshape[in->ndim - 1] = nb;
    int rc = pp_tensor_alloc(elems, in->ndim, in->shape, f, err);
    if (!rc)
        rc = pp_tensor_alloc(scales, in->ndim, sshape, PP_FMT_E8M0, err);
    if (rc) {
        pp_tensor_free(elems);
        return rc;
    }
    int emax_elem = pp_format_get(f).emax;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t b = 0; b < nb; b++) {
            int64_t first = r * cols + b * block, n = cols - b * block < block ? cols - b * block : block;
            int e = o->mx_rule == PP_MX_RULE_TE ? pp_mx_rule_exp(PP_MX_RULE_TE, block_amax(in->data + first, n), f)
                                                 : mx_shared_exp(in->data + first, n, emax_elem);
            scales->data[r * nb + b] = pp_mx_scale(e);
            for (int64_t i = first; i < first + n; i++) {
                uint32_t rb = o->mode == PP_RND_SR ? pp_cast_rbits(o->seed, i) : 0;
                elems->data[i] = o->mx_rule == PP_MX_RULE_TE ? pp_mx_rule_quantise(PP_MX_RULE_TE, f, in->data[i], e)
                                                             : pp_mx_quantise(f, in->data[i], e, o->mode, rb);
            }
        }
    return PP_OK;
}

// amax over the whole tensor (pp_amax_step: NaN for a tensor holding NaN or ±Inf).
static double tensor_amax(const pp_tensor *t)
{
    double amax = 0;
    for (int64_t i = 0; i < t->numel; i++)
        amax = pp_amax_step(amax, t->data[i]);
    return amax;
}

int pp_cast_scaled(const pp_tensor *in, const pp_cast_opts *o, pp_scaling scheme, pp_tensor *elems,
                   pp_tensor *scales, double *global, pp_error *err)
{
    pp_format_id f = o->to;
    memset(elems, 0, sizeof *elems);
    memset(scales, 0, sizeof *scales);
    *global = 1.0;
    if (scheme == PP_SCALING_TENSOR && f != PP_FMT_E4M3 && f != PP_FMT_E5M2 && f != PP_FMT_E2M1)
        return pp_fail(err, PP_ERR_INPUT, "tensor-current scaling stores e4m3, e5m2 or e2m1, not %s",
                       pp_format_get(f).name);
    if (scheme == PP_SCALING_NVFP4 && f != PP_FMT_E2M1)
        return pp_fail(err, PP_ERR_INPUT, "nvfp4 scaling stores e2m1, not %s", pp_format_get(f).name);
    if (scheme != PP_SCALING_TENSOR && scheme != PP_SCALING_NVFP4)
        return pp_fail(err, PP_ERR_INPUT, "cast: scaling '%s' is not per-tensor or nvfp4", pp_scaling_name(scheme));
    if (o->mode != PP_RND_NE)
        return pp_fail(err, PP_ERR_INPUT, "%s scaling rounds to nearest-even only (--rounding ne)",
                       pp_scaling_name(scheme));
    int rc = pp_tensor_alloc(elems, in->ndim, in->shape, f, err);
    if (rc)
        return rc;
    double amax = tensor_amax(in);
    if (scheme == PP_SCALING_TENSOR) {
        double s = pp_tensor_scale(f, amax);  // TE's scale; the report's global scale is its inverse
        *global = pp_tensor_scale_inv(s);
        for (int64_t i = 0; i < in->numel; i++)
            elems->data[i] = pp_tensor_quantise(f, in->data[i], s);
        return PP_OK;
    }
    int64_t cols = in->ndim ? in->shape[in->ndim - 1] : 1, rows = cols ? in->numel / cols : 0;
    int64_t nb = (cols + PP_NVFP4_BLOCK - 1) / PP_NVFP4_BLOCK, sshape[PP_MAX_DIMS];
    for (int d = 0; d < in->ndim; d++)
        sshape[d] = in->shape[d];
    if (in->ndim)
        sshape[in->ndim - 1] = nb;
    rc = pp_tensor_alloc(scales, in->ndim, sshape, PP_FMT_E4M3, err);
    if (rc) {
        pp_tensor_free(elems);
        return rc;
    }
    double g = *global = pp_nvfp4_global(amax);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t b = 0; b < nb; b++) {
            int64_t first = r * cols + b * PP_NVFP4_BLOCK;
            int64_t n = cols - b * PP_NVFP4_BLOCK < PP_NVFP4_BLOCK ? cols - b * PP_NVFP4_BLOCK : PP_NVFP4_BLOCK;
            double bamax = 0;
            for (int64_t i = first; i < first + n; i++)
                bamax = pp_amax_step(bamax, in->data[i]);
            double s = pp_nvfp4_block_scale(bamax, g);
            scales->data[r * nb + b] = s;
            for (int64_t i = first; i < first + n; i++)
                elems->data[i] = pp_nvfp4_quantise(in->data[i], s, g);
        }
    return PP_OK;
}

void pp_cast_pack_fp4(const uint8_t *codes, int64_t rows, int64_t cols, uint8_t *packed)
{
    int64_t half = (cols + 1) / 2;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < half; j++) {
            const uint8_t *c = codes + r * cols + 2 * j;
            uint8_t hi = 2 * j + 1 < cols ? c[1] : 0;
            packed[r * half + j] = (uint8_t)((c[0] & 0xF) | (hi & 0xF) << 4);
        }
}
