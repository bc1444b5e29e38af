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
        "                         uint8 codes (one per byte, low bits) for any format of\n"
        "                         at most 8 bits\n"
        "  --scaling S            none (default) or mx: OCP MX v1.0 block scaling along the\n"
        "                         last dimension, blocks of 32 sharing an e8m0 scale\n"
        "                         2^(floor(log2(amax)) - emax of FORMAT), elements saturated;\n"
        "                         OUT gets scale x element (or, --packed, the element codes)\n"
        "  --scales S.npy         with --scaling mx: the scales' e8m0 codes, uint8, one per\n"
        "                         block (required with --packed)\n"
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

// Writes t's e8m0 codes (t's values are E8M0 values or NaN) to path.
static int write_codes(const char *path, const pp_tensor *t, pp_error *err)
{
    uint8_t *codes = malloc(t->numel ? (size_t)t->numel : 1);
    if (!codes)
        return pp_fail(err, PP_ERR_RUNTIME, "%s: out of memory", path);
    int rc = pp_cast_codes(t, codes, err);
    if (!rc)
        rc = pp_npy_write_codes(path, t->ndim, t->shape, t->numel, codes, err);
    free(codes);
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

int pp_cmd_cast(int argc, char **argv)
{
    const char *in_spec = NULL, *to_s = NULL, *out = NULL, *mode_s = NULL, *seed_s = NULL;
    const char *scaling_s = NULL, *scales_path = NULL;
    int saturate = 0, packed = 0, n_pos = 0;
    const pp_cli_opt opts_def[] = {
        {"--to", &to_s, NULL},          {"-o", &out, NULL},
        {"--rounding", &mode_s, NULL},  {"--seed", &seed_s, NULL},
        {"--saturate", NULL, &saturate}, {"--packed", NULL, &packed},
        {"--scaling", &scaling_s, NULL}, {"--scales", &scales_path, NULL},
    };
    int prc = pp_cli_parse("cast", argc, argv, opts_def, 8, &in_spec, 1, &n_pos);
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
    pp_cast_opts o = {PP_FMT_FP32, PP_RND_NE, saturate, 0};
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
    int mx = 0;
    if (scaling_s && !(mx = !strcmp(scaling_s, "mx")) && strcmp(scaling_s, "none")) {
        fprintf(stderr, "precprobe cast: --scaling: unknown scaling '%s' (none mx)\n", scaling_s);
        return 2;
    }
    if (scales_path && (!mx || !ends_with(scales_path, ".npy"))) {
        fprintf(stderr, "precprobe cast: --scales S.npy goes with --scaling mx\n");
        return 2;
    }
    if (mx && packed && !scales_path) {
        fprintf(stderr, "precprobe cast: --packed with --scaling mx needs --scales S.npy\n");
        return 2;
    }
    pp_error err = {0};
    pp_tensor t, r;
    memset(&r, 0, sizeof r);
    if (pp_tensor_load(in_spec, &t, &err))
        return fail(&err);
    int rc = mx ? cast_mx(&t, &o, out, scales_path, packed, &err) : pp_cast_tensor(&t, &o, &r, &err);
    pp_tensor_free(&t);
    if (!rc && !mx)
        rc = write_out(out, &r, packed, &err);
    pp_tensor_free(&r);
    return rc ? fail(&err) : 0;
}
