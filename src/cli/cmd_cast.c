// cmd_cast.c — `precprobe cast IN --to FORMAT -o OUT`: a user's tensor rounded into a format,
// written as float32 values or as packed codes, to check other implementations' rounding.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_args.h"
#include "core/cast.h"
#include "core/tensor.h"
#include "io/npy_codes.h"
#include "io/tensor_io.h"

static void cast_usage(FILE *f)
{
    fprintf(f,
        "usage: precprobe cast IN --to FORMAT -o OUT [options]\n"
        "\n"
        "Rounds every value of the tensor IN into FORMAT and writes the results to OUT.\n"
        "\n"
        "IN, OUT: " PP_TENSOR_SPEC_FORMS "\n"
        "\n"
        "options:\n"
        "  --to F                 fp64 fp32 tf32 fp16 bf16 e4m3 e5m2 e8m0 e2m1 e2m3 e3m2\n"
        "                         (or torch's names: float8_e4m3fn, float4_e2m1fn, ...)\n"
        "  -o OUT                 where the result goes\n"
        "  --rounding M           ne (nearest, ties to even; default), tz (toward zero),\n"
        "                         sr (random: away from zero with probability the dropped\n"
        "                         fraction of an ulp; bits from Philox under --seed)\n"
        "  --seed N               the seed of sr's random bits (default 0)\n"
        "  --saturate             overflow and +-Inf give +-max_finite (TransformerEngine);\n"
        "                         without it, as torch's casts: Inf, or NaN for e4m3\n"
        "  --packed               write storage codes instead of values: OUT.safetensors\n"
        "                         with dtype F8_E4M3/F8_E5M2 for e4m3/e5m2, or OUT.npy of\n"
        "                         uint8 codes: e2m1 two per byte along the last dimension\n"
        "                         (element 2j in bits 3..0, 2j+1 in bits 7..4, as torch's\n"
        "                         float4_e2m1fn_x2), any other format of at most 8 bits one\n"
        "                         per byte (low bits)\n"
        "  --scaling S            none (default); tensor-current: one scale for the tensor,\n"
        "                         X = amax / max_finite (e4m3 e5m2 e2m1; saturating); mx: OCP MX\n"
        "                         v1.0 blocks of 32 along the last dimension sharing an e8m0\n"
        "                         scale 2^(floor(log2(amax)) - emax of FORMAT), elements\n"
        "                         saturated; nvfp4: e2m1, blocks of 16 along the last\n"
        "                         dimension with an e4m3 scale, an fp32 global scale\n"
        "                         amax / (6*448). OUT gets the dequantised values (scales x\n"
        "                         element, rounded once to float32) or, --packed, the codes\n"
        "  --mx-scale R           mx: the e8m0 exponent rule; ocp (default): floor(log2(amax))\n"
        "                         - emax of FORMAT (a block's largest element may saturate);\n"
        "                         te: TransformerEngine's, amax / max_finite rounded up to a\n"
        "                         power of two (nothing saturates; --rounding ne only)\n"
        "  --scales S.npy         mx, nvfp4: the block scales' codes (e8m0, e4m3), uint8, one\n"
        "                         per block (required with --packed)\n"
        "  --global-scale G.npy   tensor-current, nvfp4: the per-tensor fp32 scale as a 0-d\n"
        "                         float32 array (required with --packed)\n"
        "  -h, --help             this text\n"
        "\n"
        "Values are written as float32 (fp64 as float64): every value of every other\n"
        "format is exactly a float32.\n");
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

static int fail(const pp_error *err)
{
    fprintf(stderr, "precprobe cast: %s\n", err->msg);
    return err->code == PP_ERR_RUNTIME ? 3 : 2;
}

// Writes t's storage codes (a format of at most 8 bits) to path as uint8: e2m1 nibble-packed
// along the last dimension (core/cast.h, pp_cast_pack_fp4), every other format one per byte.
static int write_codes(const char *path, const pp_tensor *t, pp_error *err)
{
    uint8_t *codes = malloc(t->numel ? (size_t)t->numel : 1);
    uint8_t *packed = malloc(t->numel ? (size_t)t->numel : 1);  // ≥ rows·ceil(cols/2)
    if (!codes || !packed) {
        free(codes);
        free(packed);
        return pp_fail(err, PP_ERR_RUNTIME, "%s: out of memory", path);
    }
    int rc = pp_cast_codes(t, codes, err);
    if (!rc && t->format == PP_FMT_E2M1) {
        int64_t cols = t->ndim ? t->shape[t->ndim - 1] : 1, rows = cols ? t->numel / cols : 0;
        int64_t shape[PP_MAX_DIMS] = {1};  // a 0-d tensor: one byte, shape (1,)
        int ndim = t->ndim ? t->ndim : 1;
        for (int d = 0; d < t->ndim; d++)
            shape[d] = t->shape[d];
        shape[ndim - 1] = (cols + 1) / 2;
        pp_cast_pack_fp4(codes, rows, cols, packed);
        rc = pp_npy_write_codes(path, ndim, shape, rows * ((cols + 1) / 2), packed, err);
    } else if (!rc) {
        rc = pp_npy_write_codes(path, t->ndim, t->shape, t->numel, codes, err);
    }
    free(codes);
    free(packed);
    return rc;
}

// Writes the cast tensor t as OUT names: values, or codes with --packed.
static int write_out(const char *out, pp_tensor *t, int packed, pp_error *err)
{
    if (!packed) {
        t->format = t->format == PP_FMT_FP64 ? PP_FMT_FP64 : PP_FMT_FP32;  // exact
        return pp_tensor_save(out, t, err);
    }
    pp_format F = pp_format_get(t->format);
    if (F.storage_bits > 8)
        return pp_fail(err, PP_ERR_INPUT, "--packed: %s is not a format of at most 8 bits (write its values)", F.name);
    if (strstr(out, ".safetensors") && (t->format == PP_FMT_E4M3 || t->format == PP_FMT_E5M2))
        return pp_tensor_save(out, t, err);  // F8_E4M3 / F8_E5M2, safetensors' own dtypes
    if (!ends_with(out, ".npy"))
        return pp_fail(err, PP_ERR_INPUT,
                       "--packed: %s codes go to a .npy file of uint8%s", F.name,
                       t->format == PP_FMT_E4M3 || t->format == PP_FMT_E5M2 ? " or a .safetensors file" : "");
    return write_codes(out, t, err);
}

// --scaling mx: OUT gets X·P (or P's codes with --packed), --scales the X codes.
static int cast_mx(const pp_tensor *in, const pp_cast_opts *o, const char *out, const char *scales_path,
                   int packed, pp_error *err)
{
    pp_tensor P, X;
    int rc = pp_cast_mx(in, o, 32, &P, &X, err);
    if (rc)
        return rc;
    if (scales_path)
        rc = write_codes(scales_path, &X, err);
    if (!rc && packed) {
        rc = write_out(out, &P, 1, err);
    } else if (!rc) {
        int64_t cols = in->ndim ? in->shape[in->ndim - 1] : 1, nb = X.ndim ? X.shape[X.ndim - 1] : 1;
        for (int64_t i = 0; i < P.numel; i++)  // X·P: exact (a power of two times a short value)
            P.data[i] *= X.data[(i / cols) * nb + (i % cols) / 32];
        P.format = PP_FMT_FP32;
        rc = pp_tensor_save(out, &P, err);
    }
    pp_tensor_free(&P);
    pp_tensor_free(&X);
    return rc;
}

// Writes the per-tensor scale x as a 0-d float32 .npy (x is a binary32 value, or NaN).
static int write_global(const char *path, double x, pp_error *err)
{
    pp_tensor g;
    int rc = pp_tensor_alloc(&g, 0, NULL, PP_FMT_FP32, err);
    if (rc)
        return rc;
    g.data[0] = x;
    rc = pp_tensor_save(path, &g, err);
    pp_tensor_free(&g);
    return rc;
}

// --scaling tensor-current | nvfp4: OUT gets RN_32(X·P) (X = the per-tensor scale, or s·g for
// nvfp4: the exact binary64 product, rounded once to float32, as a dequantising multiply in
// binary32 would for tensor-current), or P's codes with --packed; --scales the e4m3 block scales'
// codes (nvfp4), --global-scale the per-tensor scale.
static int cast_scaled(const pp_tensor *in, const pp_cast_opts *o, pp_scaling scheme, const char *out,
                       const char *scales_path, const char *global_path, int packed, pp_error *err)
{
    pp_tensor P, S;
    double g;
    int rc = pp_cast_scaled(in, o, scheme, &P, &S, &g, err);
    if (rc)
        return rc;
    if (scales_path)
        rc = write_codes(scales_path, &S, err);
    if (!rc && global_path)
        rc = write_global(global_path, g, err);
    if (!rc && packed) {
        rc = write_out(out, &P, 1, err);
    } else if (!rc) {
        int64_t cols = in->ndim ? in->shape[in->ndim - 1] : 1;
        int64_t nb = (cols + PP_NVFP4_BLOCK - 1) / PP_NVFP4_BLOCK;
        for (int64_t i = 0; i < P.numel; i++) {
            double x = scheme == PP_SCALING_NVFP4 ? S.data[(i / cols) * nb + (i % cols) / PP_NVFP4_BLOCK] * g : g;
            P.data[i] = pp_round(PP_FMT_FP32, P.data[i] * x, PP_RND_NE, 0);  // P·x exact in binary64
        }
        P.format = PP_FMT_FP32;
        rc = pp_tensor_save(out, &P, err);
    }
    pp_tensor_free(&P);
    pp_tensor_free(&S);
    return rc;
}

int pp_cmd_cast(int argc, char **argv)
{
    const char *in_spec = NULL, *to_s = NULL, *out = NULL, *mode_s = NULL, *seed_s = NULL;
    const char *scaling_s = NULL, *scales_path = NULL, *global_path = NULL, *mx_scale_s = NULL;
    int saturate = 0, packed = 0, n_pos = 0;
    const pp_cli_opt opts_def[] = {
        {"--to", &to_s, NULL},          {"-o", &out, NULL},
        {"--rounding", &mode_s, NULL},  {"--seed", &seed_s, NULL},
        {"--saturate", NULL, &saturate}, {"--packed", NULL, &packed},
        {"--scaling", &scaling_s, NULL}, {"--scales", &scales_path, NULL},
        {"--global-scale", &global_path, NULL}, {"--mx-scale", &mx_scale_s, NULL},
    };
    int prc = pp_cli_parse("cast", argc, argv, opts_def, 10, &in_spec, 1, &n_pos);
    if (prc == 1) {
        cast_usage(stdout);
        return 0;
    }
    if (prc)
        return prc;
    if (n_pos != 1 || !to_s || !out) {
        fprintf(stderr, "precprobe cast: need IN, --to FORMAT and -o OUT (see precprobe cast --help)\n");
        return 2;
    }
    pp_cast_opts o = {.to = PP_FMT_FP32, .mode = PP_RND_NE, .saturate = saturate, .seed = 0};
    if (pp_format_from_name(to_s, &o.to)) {
        fprintf(stderr, "precprobe cast: --to: unknown format '%s' (fp64 fp32 tf32 fp16 bf16 e4m3 e5m2 e8m0 e2m1 e2m3 e3m2)\n", to_s);
        return 2;
    }
    if (mode_s) {
        const char *const names[3] = {"ne", "tz", "sr"};
        int k = 0;
        while (k < 3 && strcmp(mode_s, names[k]))
            k++;
        if (k == 3) {
            fprintf(stderr, "precprobe cast: --rounding: unknown mode '%s' (ne tz sr)\n", mode_s);
            return 2;
        }
        o.mode = (pp_rounding)k;
    }
    if (seed_s) {
        char *end;
        errno = 0;
        unsigned long long s = strtoull(seed_s, &end, 10);
        if (errno || end == seed_s || *end || seed_s[0] == '-') {
            fprintf(stderr, "precprobe cast: --seed: '%s' is not an unsigned integer\n", seed_s);
            return 2;
        }
        o.seed = (uint64_t)s;
    }
    pp_scaling scheme = PP_SCALING_NONE;
    if (scaling_s) {
        const pp_scaling all[4] = {PP_SCALING_NONE, PP_SCALING_TENSOR, PP_SCALING_MX, PP_SCALING_NVFP4};
        int k = 0;
        while (k < 4 && strcmp(scaling_s, pp_scaling_name(all[k])))
            k++;
        if (k == 4) {
            fprintf(stderr, "precprobe cast: --scaling: unknown scaling '%s' (none tensor-current mx nvfp4)\n",
                    scaling_s);
            return 2;
        }
        scheme = all[k];
    }
    int mx = scheme == PP_SCALING_MX, blocks = mx || scheme == PP_SCALING_NVFP4;
    if (mx_scale_s) {
        const pp_mx_rule rules[2] = {PP_MX_RULE_OCP, PP_MX_RULE_TE};
        int k = 0;
        while (k < 2 && strcmp(mx_scale_s, pp_mx_rule_name(rules[k])))
            k++;
        if (k == 2 || !mx) {
            fprintf(stderr, k == 2 ? "precprobe cast: --mx-scale: unknown rule '%s' (ocp te)\n"
                                   : "precprobe cast: --mx-scale %s goes with --scaling mx\n",
                    mx_scale_s);
            return 2;
        }
        o.mx_rule = rules[k];
    }
    int per_tensor = scheme == PP_SCALING_TENSOR || scheme == PP_SCALING_NVFP4;
    if (scales_path && (!blocks || !ends_with(scales_path, ".npy"))) {
        fprintf(stderr, "precprobe cast: --scales S.npy goes with --scaling mx or nvfp4\n");
        return 2;
    }
    if (global_path && (!per_tensor || !ends_with(global_path, ".npy"))) {
        fprintf(stderr, "precprobe cast: --global-scale G.npy goes with --scaling tensor-current or nvfp4\n");
        return 2;
    }
    if (packed && ((blocks && !scales_path) || (per_tensor && !global_path))) {
        fprintf(stderr, "precprobe cast: --packed with --scaling %s needs %s\n", scaling_s,
                scheme == PP_SCALING_NVFP4 ? "--scales S.npy and --global-scale G.npy"
                : mx ? "--scales S.npy" : "--global-scale G.npy");
        return 2;
    }
    pp_error err = {0};
    pp_tensor t, r;
    memset(&r, 0, sizeof r);
    if (pp_tensor_load(in_spec, &t, &err))
        return fail(&err);
    int rc = mx ? cast_mx(&t, &o, out, scales_path, packed, &err)
           : per_tensor ? cast_scaled(&t, &o, scheme, out, scales_path, global_path, packed, &err)
           : pp_cast_tensor(&t, &o, &r, &err);
    pp_tensor_free(&t);
    if (!rc && scheme == PP_SCALING_NONE)
        rc = write_out(out, &r, packed, &err);
    pp_tensor_free(&r);
    return rc ? fail(&err) : 0;
}
