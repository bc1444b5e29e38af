// partial_h5.c — DIR/partial.h5 (partial_h5.h).
#include "report/partial_h5.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/textbuf.h"
#include "io/atomic_file.h"
#include "io/h5attr.h"
#include "io/h5io.h"
#include "io/h5quiet.h"
#include "report/report_h5.h"

static void partial_path(const char *dir, char *buf, size_t n)
{
    struct stat st;
    if (!stat(dir, &st) && S_ISREG(st.st_mode))
        snprintf(buf, n, "%s", dir);
    else
        snprintf(buf, n, "%s/partial.h5", dir);
}

// "3,5,9": the ids i < n with flag[i] (flags given) or the n ids in ids.
static char *id_list(const unsigned char *flag, const int *ids, int n)
{
    pp_textbuf b = {0};
    pp_tb_str(&b, "");
    int first = 1;
    for (int i = 0; i < n; i++) {
        if (flag && !flag[i])
            continue;
        pp_tb_printf(&b, "%s%d", first ? "" : ",", flag ? i : ids[i]);
        first = 0;
    }
    return pp_tb_take(&b);
}

// Parses id_list's text: each id into ids (at most max of them, each < limit). Returns the
// count, or -1 when malformed.
static int parse_ids(const char *s, int *ids, int max, int limit)
{
    int n = 0;
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 0 || v >= limit || n >= max || (*end && *end != ','))
            return -1;
        ids[n++] = (int)v;
        s = *end ? end + 1 : end;
    }
    return n;
}

static int put_manifest(hid_t g, const pp_partial *p)
{
    char *owned = id_list(p->owned, NULL, p->n_tasks), *cmp = id_list(NULL, p->cmp_task, p->r.n_comparisons);
    int bad = !owned || !cmp || pp_h5attr_put_vstr(g, "format", PP_PARTIAL_FORMAT) ||
              pp_h5attr_put_vstr(g, "precprobe_version", p->version) || pp_h5attr_put_vstr(g, "identity", p->identity) ||
              pp_h5attr_put_i64(g, "shard", p->shard) || pp_h5attr_put_i64(g, "n_shards", p->n_shards) ||
              pp_h5attr_put_vstr(g, "case_path", p->case_path) || pp_h5attr_put_vstr(g, "device", p->device) ||
              pp_h5attr_put_vstr(g, "created_utc", p->created_utc) ||
              pp_h5attr_put_vstr(g, "reference_method", p->reference_method) ||
              pp_h5attr_put_i64(g, "orders", p->orders) || pp_h5attr_put_i64(g, "cross_check", p->cross_check) ||
              pp_h5attr_put_i64(g, "save_tensors", p->save_tensors) ||
              pp_h5attr_put_vstr(g, "plan_signature", p->plan_signature) ||
              pp_h5attr_put_i64(g, "n_tasks", p->n_tasks) || pp_h5attr_put_i64(g, "n_groups", p->n_groups) ||
              pp_h5attr_put_vstr(g, "owned_tasks", owned) || pp_h5attr_put_vstr(g, "comparison_tasks", cmp);
    free(owned);
    free(cmp);
    for (int gr = 0; !bad && gr < p->n_groups; gr++)
        for (int t = 0; !bad && t < PP_MAX_OP_TENSORS; t++) {
            const pp_reference_info *ri = &p->ref_info[gr][t];
            if (!ri->method[0])
                continue;
            char name[64];
            snprintf(name, sizeof name, "reference_%d_%d_method", gr, t);
            bad = pp_h5attr_put_vstr(g, name, ri->method);
            snprintf(name, sizeof name, "reference_%d_%d_bound", gr, t);
            bad = bad || pp_h5attr_put_f64(g, name, ri->error_bound);
            snprintf(name, sizeof name, "reference_%d_%d_tensor", gr, t);
            bad = bad || pp_h5attr_put_vstr(g, name, ri->tensor);
        }
    return bad ? -1 : 0;
}

// The datasets of the kept tensors: /shard/tensors/inputs/I, refs/G/T, outs/V/T (indices, so no
// name needs escaping). Calls fn on each slot; stops at the first nonzero return.
typedef int (*tensor_fn)(const char *dataset, pp_tensor *t, void *ctx);

static int each_tensor(pp_partial *p, tensor_fn fn, void *ctx)
{
    char ds[96];
    int rc = 0;
    for (int i = 0; !rc && i < PP_MAX_OP_TENSORS; i++) {
        snprintf(ds, sizeof ds, "/shard/tensors/inputs/%d", i);
        rc = fn(ds, &p->inputs[i], ctx);
    }
    for (int g = 0; !rc && g < p->n_groups; g++)
        for (int t = 0; !rc && t < PP_MAX_OP_TENSORS; t++) {
            snprintf(ds, sizeof ds, "/shard/tensors/refs/%d/%d", g, t);
            rc = fn(ds, &p->refs[g][t], ctx);
        }
    for (int v = 0; !rc && v < p->n_outs; v++)
        for (int t = 0; !rc && t < PP_MAX_OP_TENSORS; t++) {
            snprintf(ds, sizeof ds, "/shard/tensors/outs/%d/%d", v, t);
            rc = fn(ds, &p->outs[v][t], ctx);
        }
    return rc;
}

typedef struct tensor_io {
    const char *path;
    pp_error *err;
} tensor_io;

static int write_one(const char *dataset, pp_tensor *t, void *ctx)
{
    tensor_io *io = ctx;
    return t->data ? pp_h5_write(io->path, dataset, t, 0, io->err) : 0;
}

static int read_one(const char *dataset, pp_tensor *t, void *ctx)
{
    tensor_io *io = ctx;
    pp_h5_quiet q;
    pp_h5_quiet_begin(&q);
    hid_t f = H5Fopen(io->path, H5F_ACC_RDONLY, H5P_DEFAULT);
    int there = f >= 0 && H5Lexists(f, "/shard/tensors", H5P_DEFAULT) > 0;
    // each level of the path in turn: H5Lexists needs every group above to exist
    char part[96];
    for (const char *slash = dataset + strlen("/shard/tensors"); there && slash; slash = strchr(slash + 1, '/')) {
        const char *next = strchr(slash + 1, '/');
        snprintf(part, sizeof part, "%.*s", (int)(next ? (size_t)(next - dataset) : strlen(dataset)), dataset);
        there = H5Lexists(f, part, H5P_DEFAULT) > 0;
    }
    if (f >= 0)
        H5Fclose(f);
    pp_h5_quiet_end(&q);
    return there ? pp_h5_read(io->path, dataset, t, io->err) : 0;
}

int pp_partial_write(const char *dir, const pp_partial *p, pp_error *err)
{
    if (pp_mkdir_p(dir))
        return pp_fail(err, PP_ERR_RUNTIME, "%s: cannot create the partial's folder: %s", dir, strerror(errno));
    char path[PP_PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/partial.h5", dir);
    char *tmp = NULL;
    int rc = pp_atomic_reserve(path, &tmp, err);
    if (!rc)
        rc = pp_report_h5_write(tmp, &p->r, err);
    if (!rc) {
        pp_h5_quiet q;
        pp_h5_quiet_begin(&q);
        hid_t f = H5Fopen(tmp, H5F_ACC_RDWR, H5P_DEFAULT);
        hid_t g = f >= 0 ? H5Gcreate2(f, "/shard", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) : H5I_INVALID_HID;
        int bad = g < 0 || put_manifest(g, p);
        if (g >= 0 && H5Gclose(g) < 0)
            bad = 1;
        if (f >= 0 && H5Fclose(f) < 0)
            bad = 1;
        pp_h5_quiet_end(&q);
        if (bad)
            rc = pp_fail(err, PP_ERR_RUNTIME, "%s: cannot write the shard's manifest", path);
    }
    if (!rc && p->save_tensors) {
        tensor_io io = {tmp, err};
        rc = each_tensor((pp_partial *)p, write_one, &io);  // reads p's tensors only
    }
    if (rc) {
        pp_atomic_discard(&tmp);
        return rc;
    }
    return pp_atomic_finish(path, &tmp, err);
}

static int get_i64(hid_t g, const char *name, int64_t *v)
{
    return pp_h5attr_get_num(g, name, H5T_INTEGER, H5T_NATIVE_INT64, v, 1, NULL);
}

static int get_str(hid_t g, const char *name, char *buf, size_t n)
{
    char *s = NULL;
    if (pp_h5attr_get_str_dup(g, name, &s))
        return -1;
    int too_long = strlen(s) >= n;
    if (!too_long)
        memcpy(buf, s, strlen(s) + 1);
    free(s);
    return too_long ? -1 : 0;
}

// The manifest's items into p; returns NULL, or the name of the first item missing or wrong.
static const char *get_manifest(hid_t g, pp_partial *p)
{
    char format[64];
    int64_t shard, n_shards, orders, cross, n_tasks, n_groups;
    if (get_str(g, "format", format, sizeof format) || strcmp(format, PP_PARTIAL_FORMAT))
        return "format";
    if (get_str(g, "precprobe_version", p->version, sizeof p->version))
        return "precprobe_version";
    if (get_str(g, "identity", p->identity, sizeof p->identity) || strlen(p->identity) != PP_IDENTITY_HEX - 1)
        return "identity";
    if (get_i64(g, "shard", &shard) || get_i64(g, "n_shards", &n_shards) || n_shards < 1 || n_shards > 1000000 ||
        shard < 1 || shard > n_shards)
        return "shard";
    p->shard = (int)shard;
    p->n_shards = (int)n_shards;
    if (get_str(g, "case_path", p->case_path, sizeof p->case_path))
        return "case_path";
    if (get_str(g, "device", p->device, sizeof p->device))
        return "device";
    if (get_str(g, "created_utc", p->created_utc, sizeof p->created_utc))
        return "created_utc";
    if (get_str(g, "reference_method", p->reference_method, sizeof p->reference_method))
        return "reference_method";
    if (get_i64(g, "orders", &orders) || orders < 0 || orders > 1000000)
        return "orders";
    if (get_i64(g, "cross_check", &cross))
        return "cross_check";
    int64_t save;
    if (get_i64(g, "save_tensors", &save))
        return "save_tensors";
    p->save_tensors = save != 0;
    p->orders = (int)orders;
    p->cross_check = cross != 0;
    if (pp_h5attr_get_str_dup(g, "plan_signature", &p->plan_signature))
        return "plan_signature";
    if (get_i64(g, "n_tasks", &n_tasks) || n_tasks < 0 || n_tasks > 100000000)
        return "n_tasks";
    if (get_i64(g, "n_groups", &n_groups) || n_groups < 0 || n_groups > PP_FMT_COUNT)
        return "n_groups";
    p->n_tasks = (int)n_tasks;
    p->n_groups = (int)n_groups;
    char *owned = NULL, *cmp = NULL;
    int *ids = malloc(sizeof *ids * (size_t)(n_tasks + 1));
    int *cmp_task = calloc((size_t)(p->r.n_comparisons + 1), sizeof *cmp_task);
    p->owned = calloc((size_t)(n_tasks + 1), 1);
    const char *bad = NULL;
    if (!ids || !cmp_task || !p->owned)
        bad = "owned_tasks (out of memory)";
    else if (pp_h5attr_get_str_dup(g, "owned_tasks", &owned))
        bad = "owned_tasks";
    else if (pp_h5attr_get_str_dup(g, "comparison_tasks", &cmp))
        bad = "comparison_tasks";
    int n_owned = bad ? -1 : parse_ids(owned, ids, p->n_tasks, p->n_tasks);
    if (!bad && n_owned < 0)
        bad = "owned_tasks";
    for (int i = 0; !bad && i < n_owned; i++)
        p->owned[ids[i]] = 1;
    if (!bad && parse_ids(cmp, cmp_task, p->r.n_comparisons, p->n_tasks) != p->r.n_comparisons)
        bad = "comparison_tasks";
    for (int i = 0; !bad && i < p->r.n_comparisons; i++)
        if (!p->owned[cmp_task[i]])
            bad = "comparison_tasks (a comparison of a task the shard does not own)";
    free(owned), free(cmp), free(ids);
    p->cmp_task = cmp_task;
    for (int gr = 0; !bad && gr < p->n_groups; gr++)
        for (int t = 0; !bad && t < PP_MAX_OP_TENSORS; t++) {
            char name[64];
            pp_reference_info *ri = &p->ref_info[gr][t];
            snprintf(name, sizeof name, "reference_%d_%d_method", gr, t);
            if (H5Aexists(g, name) <= 0)
                continue;
            if (get_str(g, name, ri->method, sizeof ri->method))
                bad = "a reference's method";
            snprintf(name, sizeof name, "reference_%d_%d_bound", gr, t);
            if (!bad && pp_h5attr_get_f64(g, name, &ri->error_bound))
                bad = "a reference's bound";
            snprintf(name, sizeof name, "reference_%d_%d_tensor", gr, t);
            if (!bad && get_str(g, name, ri->tensor, sizeof ri->tensor))
                bad = "a reference's tensor";
        }
    return bad;
}

int pp_partial_read(const char *dir, pp_partial *p, pp_error *err)
{
    memset(p, 0, sizeof *p);
    char path[PP_PATH_MAX + 16];
    partial_path(dir, path, sizeof path);
    struct stat st;
    if (stat(path, &st))
        return pp_fail(err, PP_ERR_INPUT, "%s: no partial result here (%s): did the shard finish?", dir,
                       strerror(errno));
    int rc = pp_report_h5_read(path, &p->r, err);
    if (rc) {
        pp_partial_free(p);
        return rc;
    }
    pp_h5_quiet q;
    pp_h5_quiet_begin(&q);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t g = f >= 0 && H5Lexists(f, "shard", H5P_DEFAULT) > 0 ? H5Gopen2(f, "/shard", H5P_DEFAULT)
                                                              : H5I_INVALID_HID;
    const char *bad = g < 0 ? "the /shard manifest (a report.h5, not a shard's partial?)" : get_manifest(g, p);
    if (g >= 0)
        H5Gclose(g);
    if (f >= 0)
        H5Fclose(f);
    pp_h5_quiet_end(&q);
    if (bad) {
        pp_partial_free(p);
        return pp_fail(err, PP_ERR_INPUT, "%s: not a readable partial result: %s", path, bad);
    }
    if (p->save_tensors) {
        p->n_outs = p->r.n_variants;
        p->outs = calloc((size_t)(p->n_outs ? p->n_outs : 1), sizeof *p->outs);
        tensor_io io = {path, err};
        rc = !p->outs ? pp_fail(err, PP_ERR_RUNTIME, "out of memory") : each_tensor(p, read_one, &io);
        if (rc) {
            pp_partial_free(p);
            return rc;
        }
    }
    return PP_OK;
}
