// cmd_run_shard.c — `precprobe run CASE --shard I/N [-o DIR]`: shard I of N of the case's run
// (pipeline/shard.h says which tasks), written as DIR/partial.h5 for `precprobe merge`.
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "pipeline/shard.h"
#include "pipeline/shard_run.h"
#include "report/partial_h5.h"

int pp_cli_run_shard(const char *case_path, const char *shard, const char *out, const pp_run_opts *o)
{
    int i, n;
    char why[200];
    if (pp_shard_parse(shard, &i, &n, why, sizeof why)) {
        fprintf(stderr, "precprobe run: --shard %s\n", why);
        return 2;
    }
    if (pp_cli_is_sweep(case_path))  // the points' tasks, cut by one rule (cmd_sweep_shard.c)
        return pp_cli_run_sweep_shard(case_path, i, n, out, o);
    pp_error err = {0};
    pp_case c;
    pp_partial part;
    memset(&part, 0, sizeof part);
    int rc = pp_case_load(case_path, &c, &err);
    if (!rc && c.notes)
        fputs(c.notes, stderr);
    if (!rc)
        rc = pp_run_shard(&c, o, i, n, &part, &err);
    char dir[PP_PATH_MAX];
    if (!rc) {
        if (out)
            snprintf(dir, sizeof dir, "%s", out);
        else
            snprintf(dir, sizeof dir, "reports/out/%s/shard-%d-of-%d", c.name, i, n);
        rc = pp_partial_write(dir, &part, &err);
    }
    if (rc) {
        fprintf(stderr, "precprobe: %s\n", err.msg);
    } else {
        int owned = 0;
        for (int t = 0; t < part.n_tasks; t++)
            owned += part.owned[t];
        printf("%s: shard %d/%d on %s: %d of %d tasks, %d comparisons\npartial: %s/partial.h5\n", c.name, i, n,
               part.device, owned, part.n_tasks, part.r.n_comparisons, dir);
    }
    pp_partial_free(&part);
    pp_case_free(&c);
    return rc;
}
