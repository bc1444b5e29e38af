// cmd_reference.c — `precprobe reference CASE -o OUT.h5`: a case's inputs and its certified
// reference written to HDF5, so a user can inspect the truth the variants are measured against.
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/atomic_file.h"
#include "pipeline/case.h"
#include "cli/cli.h"
#include "core/progress.h"
#include "cli/cli_args.h"
#include "io/h5attr.h"
#include "io/h5io.h"
#include "pipeline/ref_cache.h"
#include "pipeline/run.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: precprobe reference CASE.toml -o OUT.h5 [options]\n"
        "\n"
        "Computes the case's inputs and its reference (the exact operation on the rounded inputs,\n"
        "each value within one binary64 ulp of the exact result) and writes them to OUT.h5:\n"
        "  /inputs/<name>      the inputs as the variants see them (their storage format)\n"
        "  /reference/<name>   binary64, with attributes error_bound (a proven bound on\n"
        "                      |value - exact| over the tensor, absolute) and method\n"
        "  root attributes     case_name, op, format, seed, precprobe_version\n"
        "\n"
        "options:\n"
        "  -o, --output FILE        where to write (atomically)\n"
        "  --format F               the storage format of the inputs (default: the first variant's)\n"
        "  --reference METHOD       the reference method (precprobe list names each op's)\n"
        "  --threads N              worker threads (default: one per CPU)\n"
        "  -q, --quiet              no progress (a bar when stderr is a terminal, else a line every 10 s)\n"
        "  --cache DIR, --no-cache  the reference cache, as for precprobe run\n"
        "  -h, --help               this text\n");
}

// The attributes pp_h5_write cannot set: on the reference datasets and the root.
static int annotate(const char *path, const pp_case *c, pp_format_id f, const pp_reference_info *info,
                    const pp_tensor *refs, pp_error *err)
{
    hid_t file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (file < 0)
        return pp_fail(err, PP_ERR_RUNTIME, "%s: cannot reopen to annotate", path);
    int bad = pp_h5attr_put_str(file, "case_name", c->name) || pp_h5attr_put_str(file, "op", c->op->name) ||
              pp_h5attr_put_str(file, "format", pp_format_get(f).name) ||
              pp_h5attr_put_str(file, "precprobe_version", PP_VERSION) || pp_h5attr_put_f64(file, "seed", (double)c->seed);
    for (int t = 0; !bad && t < c->op->n_outputs; t++) {
        if (!refs[t].data)
            continue;
        char ds[PP_NAME_MAX + 16];
        snprintf(ds, sizeof ds, "/reference/%s", c->op->outputs[t]);
        hid_t d = H5Dopen2(file, ds, H5P_DEFAULT);
        bad = d < 0 || pp_h5attr_put_f64(d, "error_bound", info[t].error_bound) || pp_h5attr_put_str(d, "method", info[t].method);
        if (d >= 0)
            H5Dclose(d);
    }
    if (H5Fclose(file) < 0)
        bad = 1;
    return bad ? pp_fail(err, PP_ERR_RUNTIME, "%s: cannot write the attributes", path) : PP_OK;
}

static int write_all(const char *output, const pp_case *c, pp_format_id f, const pp_tensor *in, const pp_tensor *refs,
                     const pp_reference_info *info, pp_error *err)
{
    char *tmp = NULL;
    int rc = pp_atomic_reserve(output, &tmp, err);
    if (rc)
        return rc;
    int first = 1;
    char ds[PP_NAME_MAX + 16];
    for (int i = 0; !rc && i < c->op->n_inputs; i++, first = 0) {
        snprintf(ds, sizeof ds, "/inputs/%s", c->op->inputs[i]);
        rc = pp_h5_write(tmp, ds, &in[i], first, err);
    }
    for (int t = 0; !rc && t < c->op->n_outputs; t++) {
        if (!refs[t].data)
            continue;
        snprintf(ds, sizeof ds, "/reference/%s", c->op->outputs[t]);
        rc = pp_h5_write(tmp, ds, &refs[t], first, err);
        first = 0;
    }
    if (!rc)
        rc = annotate(tmp, c, f, info, refs, err);
    if (rc) {
        pp_atomic_discard(&tmp);
        return rc;
    }
    return pp_atomic_finish(output, &tmp, err);
}

int pp_cmd_reference(int argc, char **argv)
{
    const char *output = NULL, *format_s = NULL, *method = NULL, *threads_s = NULL, *cache_s = NULL, *pos[1];
    int n_pos = 0, quiet = 0, no_cache = 0;
    const pp_cli_opt opts[] = {
        {"-o", &output, NULL},          {"--output", &output, NULL},     {"--format", &format_s, NULL},
        {"--reference", &method, NULL}, {"--threads", &threads_s, NULL}, {"--quiet", NULL, &quiet},
        {"-q", NULL, &quiet},           {"--cache", &cache_s, NULL},     {"--no-cache", NULL, &no_cache},
    };
    int rc = pp_cli_parse("reference", argc, argv, opts, 9, pos, 1, &n_pos);
    if (rc == 1) {
        usage(stdout);
        return 0;
    }
    if (rc)
        return rc;
    if (n_pos != 1 || !output) {
        fprintf(stderr, "precprobe reference: usage: precprobe reference CASE.toml -o OUT.h5\n");
        return 2;
    }
    int threads = 0;
    if (threads_s) {
        char *end;
        long v = strtol(threads_s, &end, 10);
        if (end == threads_s || *end || v < 1 || v > 1024) {
            fprintf(stderr, "precprobe: --threads: '%s' is not a number from 1 to 1024\n", threads_s);
            return 2;
        }
        threads = (int)v;
    }
    pp_error err = {0};
    pp_case c;
    if ((rc = pp_case_load(pos[0], &c, &err))) {
        fprintf(stderr, "precprobe: %s\n", err.msg);
        return rc;
    }
    pp_format_id f = c.op->format(&c.variants[0].knobs);
    if (format_s && pp_format_from_name(format_s, &f)) {
        fprintf(stderr, "precprobe reference: --format: unknown format '%s'\n", format_s);
        pp_case_free(&c);
        return 2;
    }
    char cache[PP_PATH_MAX] = "";
    if (!no_cache)
        cache_s ? (void)snprintf(cache, sizeof cache, "%s", cache_s) : pp_ref_cache_default_dir(cache, sizeof cache);
    pp_run_opts o = {.device = "cpu",
                     .threads = threads,
                     .progress = quiet ? PP_PROGRESS_OFF : isatty(2) ? PP_PROGRESS_BAR : PP_PROGRESS_LOG,
                     .reference_method = method,
                     .cache_dir = cache};
    pp_tensor in[PP_MAX_OP_TENSORS], refs[PP_MAX_OP_TENSORS];
    pp_reference_info info[PP_MAX_OP_TENSORS];
    memset(in, 0, sizeof in);
    memset(refs, 0, sizeof refs);
    memset(info, 0, sizeof info);
    rc = pp_run_reference(&c, &o, f, in, refs, info, &err);
    if (!rc)
        rc = write_all(output, &c, f, in, refs, info, &err);
    if (rc) {
        fprintf(stderr, "precprobe: %s\n", err.msg);
    } else {
        printf("reference of %s (%s inputs) written to %s\n", c.name, pp_format_get(f).name, output);
        for (int t = 0; t < c.op->n_outputs; t++)
            if (refs[t].data)
                printf("  /reference/%-8s method %s, error bound %.3g\n", c.op->outputs[t], info[t].method,
                       info[t].error_bound);
    }
    for (int i = 0; i < PP_MAX_OP_TENSORS; i++) {
        pp_tensor_free(&in[i]);
        pp_tensor_free(&refs[i]);
    }
    pp_case_free(&c);
    return rc;
}
