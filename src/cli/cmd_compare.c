// cmd_compare.c — `precprobe compare ACTUAL EXPECTED`: torch.testing.assert_close on stored
// tensors (.npy, file.safetensors:NAME, file.h5:/dataset), with torch's message byte for byte.
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_args.h"
#include "core/close.h"
#include "core/repr.h"
#include "core/tensor.h"
#include "io/tensor_io.h"

static void compare_usage(FILE *f)
{
    fprintf(f,
        "usage: precprobe compare ACTUAL EXPECTED [options]\n"
        "\n"
        "Compares ACTUAL with EXPECTED as torch.testing.assert_close(actual, expected,\n"
        "check_dtype=False) does, and prints torch's message when they are not close (when\n"
        "they are, torch prints nothing; precprobe one line saying so, unless --quiet).\n"
        "\n"
        "operands:\n"
        "  FILE.npy                      a NumPy array (float16, float32, float64; C order)\n"
        "  FILE.safetensors:NAME         a tensor in a safetensors file (F64 F32 F16 BF16\n"
        "                                F8_E4M3 F8_E5M2); ':NAME' may be left out when the\n"
        "                                file holds one tensor\n"
        "  FILE.h5:/GROUP/DATASET        a floating-point HDF5 dataset\n"
        "\n"
        "options:\n"
        "  --rtol R --atol A             tolerances; both or neither, as torch insists\n"
        "                                (default: torch's for the operands' dtypes, the\n"
        "                                larger of each when they differ)\n"
        "  --equal-nan                   NaN compares equal to NaN\n"
        "  --torch-version X.Y           whose semantics: >= 2.1 (default %d.%d) compares in\n"
        "                                the operands' common dtype, so fp16/bf16 differences\n"
        "                                are fp16/bf16 values; 1.10-2.0 compares in float64\n"
        "  --actual-dtype F              the format ACTUAL's values conform to (fp64 fp32 tf32\n"
        "  --expected-dtype F            fp16 bf16 e4m3 e5m2 e8m0 e2m1 e2m3 e3m2, or torch's\n"
        "                                names: bfloat16, torch.float16, ...), e.g. bf16\n"
        "                                values stored as float32 in a .npy; sets the default\n"
        "                                tolerances, the dtype of the comparison and the ulp\n"
        "                                statistics. A value not representable in F is an\n"
        "                                error. A .npy of ml_dtypes' bfloat16/float8 (raw\n"
        "                                '<V2'/'<V1' items) needs it.\n"
        "  --stats                       also print precprobe's statistics (worst tolerance\n"
        "                                ratio, mean/RMS error, ulp histogram, NaN/Inf counts)\n"
        "  -q, --quiet                   when close, print nothing (torch's silence) instead of\n"
        "                                the line \"close: N elements within rtol R, atol A\"\n"
        "  -h, --help                    this text\n"
        "\n"
        "exit status: 0 close, 1 not close, 2 bad usage or input, 3 runtime failure\n",
        PP_TORCH_DEFAULT_MAJOR, PP_TORCH_DEFAULT_MINOR);
}

// Parses a non-negative finite tolerance; returns 0 on success.
static int parse_tolerance(const char *opt, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno == ERANGE || !isfinite(v) || v < 0) {
        fprintf(stderr, "precprobe compare: %s: '%s' is not a non-negative number\n", opt, s);
        return -1;
    }
    *out = v;
    return 0;
}

// Loads one operand and applies its declared dtype. Returns an exit status.
static int load_operand(const char *spec, const char *dtype, pp_tensor *t)
{
    pp_error err = {0};
    pp_format_id declared = PP_FMT_FP64;
    if (dtype)
        pp_format_from_name(dtype, &declared);  // validated while parsing the options
    if (pp_tensor_load_as(spec, dtype ? (int)declared : -1, t, &err)) {
        fprintf(stderr, "precprobe compare: %s\n", err.msg);
        return err.code;
    }
    if (dtype) {
        pp_format_id f;
        pp_format_from_name(dtype, &f);  // validated while parsing the options
        if (pp_tensor_check_format(t, f, spec, &err)) {
            fprintf(stderr, "precprobe compare: %s\n", err.msg);
            return err.code;
        }
        t->format = f;
    }
    return 0;
}

int pp_cmd_compare(int argc, char **argv)
{
    const char *operand[2] = {NULL, NULL};
    const char *dtype[2] = {NULL, NULL};
    const char *rtol_s = NULL, *atol_s = NULL, *version_s = NULL;
    int equal_nan = 0, want_stats = 0, n_operands = 0, quiet = 0;

    const pp_cli_opt opts_def[] = {
        {"--rtol", &rtol_s, NULL},           {"--atol", &atol_s, NULL},
        {"--torch-version", &version_s, NULL}, {"--actual-dtype", &dtype[0], NULL},
        {"--expected-dtype", &dtype[1], NULL}, {"--equal-nan", NULL, &equal_nan},
        {"--stats", NULL, &want_stats},        {"--quiet", NULL, &quiet}, {"-q", NULL, &quiet},
    };
    int prc = pp_cli_parse("compare", argc, argv, opts_def, 9, operand, 2, &n_operands);
    if (prc == 1) {
        compare_usage(stdout);
        return 0;
    }
    if (prc)
        return prc;
    if (n_operands != 2) {
        fprintf(stderr, "precprobe compare: need two operands, ACTUAL and EXPECTED (see precprobe compare --help)\n");
        return 2;
    }
    if ((rtol_s == NULL) != (atol_s == NULL)) {
        // torch's own words for this mistake.
        fprintf(stderr, "precprobe compare: Both 'rtol' and 'atol' must be either specified or omitted, "
                        "but got no %s.\n", rtol_s ? "atol" : "rtol");
        return 2;
    }
    pp_close_opts opts;
    memset(&opts, 0, sizeof opts);
    opts.equal_nan = equal_nan;
    opts.torch_major = PP_TORCH_DEFAULT_MAJOR;
    opts.torch_minor = PP_TORCH_DEFAULT_MINOR;
    if (version_s && pp_parse_torch_version(version_s, &opts.torch_major, &opts.torch_minor)) {
        fprintf(stderr, "precprobe compare: --torch-version: '%s' is not a torch version >= 1.10 (e.g. 2.1, 1.13)\n",
                version_s);
        return 2;
    }
    for (int k = 0; k < 2; k++) {
        pp_format_id f;
        if (dtype[k] && pp_format_from_name(dtype[k], &f)) {
            fprintf(stderr, "precprobe compare: --%s-dtype: unknown format '%s' (fp64 fp32 tf32 fp16 bf16 e4m3 e5m2 e8m0 e2m1 e2m3 e3m2)\n",
                    k ? "expected" : "actual", dtype[k]);
            return 2;
        }
    }
    double rtol = 0, atol = 0;
    if (rtol_s && (parse_tolerance("--rtol", rtol_s, &rtol) || parse_tolerance("--atol", atol_s, &atol)))
        return 2;

    pp_tensor t[2];
    memset(t, 0, sizeof t);
    int rc = 0;
    for (int k = 0; k < 2 && !rc; k++)
        rc = load_operand(operand[k], dtype[k], &t[k]);
    if (!rc) {
        int same = t[0].ndim == t[1].ndim;
        for (int d = 0; same && d < t[0].ndim; d++)
            same = t[0].shape[d] == t[1].shape[d];
        if (!same) {
            char sa[200], se[200];
            pp_shape_str(t[0].ndim, t[0].shape, sa, sizeof sa);
            pp_shape_str(t[1].ndim, t[1].shape, se, sizeof se);
            fprintf(stderr, "precprobe compare: shapes differ: actual %s, expected %s\n", sa, se);
            rc = 2;
        }
    }
    if (rc) {
        pp_tensor_free(&t[0]);
        pp_tensor_free(&t[1]);
        return rc;
    }

    opts.actual_format = t[0].format;
    opts.expected_format = t[1].format;
    if (rtol_s) {
        opts.rtol = rtol;
        opts.atol = atol;
    } else {
        pp_default_tolerances(t[0].format, t[1].format, &opts.rtol, &opts.atol);
    }

    pp_close_stats stats;
    pp_close_stats_init(&stats);
    pp_close_stats_update(&stats, &opts, t[0].data, t[1].data, t[0].numel, 0);

    char msg[8192];
    int not_close = pp_close_message(&stats, &opts, t[0].ndim, t[0].shape, msg, sizeof msg);
    if (not_close) {
        printf("%s\n", msg);
    } else if (!quiet) {
        // torch says nothing when the tensors are close; one line says what was checked
        char rt[PP_REPR_MAX], at[PP_REPR_MAX];
        pp_repr_double(opts.rtol, rt, sizeof rt);
        pp_repr_double(opts.atol, at, sizeof at);
        printf("close: %lld elements within rtol %s, atol %s\n", (long long)stats.numel, rt, at);
    }
    if (want_stats) {
        if (not_close || !quiet)
            printf("\n");
        pp_close_stats_text(&stats, &opts, t[0].ndim, t[0].shape, msg, sizeof msg);
        printf("%s", msg);
    }
    pp_tensor_free(&t[0]);
    pp_tensor_free(&t[1]);
    if (fflush(stdout) || ferror(stdout)) {
        fprintf(stderr, "precprobe compare: cannot write to standard output\n");
        return 3;
    }
    return not_close ? 1 : 0;
}
