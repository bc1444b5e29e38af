// cmd_merge.c — `precprobe merge DIR... --out DIR`: the partial results of a sharded run
// (`precprobe run CASE --shard I/N`) assembled into the reports the unsharded run writes
// (pipeline/merge.h), then the case's gate, as `precprobe run` does.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_args.h"
#include "pipeline/gate.h"
#include "pipeline/merge.h"
#include "report/partial_h5.h"
#include "report/report_txt.h"

#define MERGE_MAX_PARTS 4096

static void merge_usage(FILE *f)
{
    fprintf(f,
        "usage: precprobe merge PARTIAL... --out DIR [options]\n"
        "\n"
        "Assembles the partial results of the N shards of one run (precprobe run CASE --shard I/N,\n"
        "each a folder holding partial.h5, or the file itself) into the reports the unsharded run\n"
        "writes: report.txt and report.h5 in DIR, with statistics bit for bit the unsharded run's.\n"
        "Refuses (exit 2) partials of different cases or run options, of another precprobe version,\n"
        "a shard given twice with different results, and names every missing shard.\n"
        "\n"
        "options:\n"
        "  -o, --out DIR            report folder (required)\n"
        "  --junit FILE             also write JUnit XML\n"
        "  --html FILE              also write the HTML report\n"
        "  -h, --help               this text\n"
        "\n"
        "exit status: 0 every [gate] rule holds, 1 one fails, 2 bad input, 3 runtime failure\n");
}

int pp_cmd_merge(int argc, char **argv)
{
    const char *out = NULL, *junit = NULL, *html = NULL;
    const char **names = calloc(MERGE_MAX_PARTS, sizeof *names);
    int n = 0;
    if (!names) {
        fprintf(stderr, "precprobe: out of memory\n");
        return 3;
    }
    const pp_cli_opt opts[] = {
        {"--out", &out, NULL}, {"-o", &out, NULL}, {"--junit", &junit, NULL}, {"--html", &html, NULL},
    };
    int rc = pp_cli_parse("merge", argc, argv, opts, 4, names, MERGE_MAX_PARTS, &n);
    if (rc == 1) {
        merge_usage(stdout);
        free(names);
        return 0;
    }
    if (!rc && (n == 0 || !out)) {
        fprintf(stderr, "precprobe merge: usage: precprobe merge PARTIAL... --out DIR (see precprobe merge --help)\n");
        rc = 2;
    }
    if (!rc && pp_cli_is_sweep_shard(names[0])) {  // shards of a [sweep] (cmd_sweep_shard.c)
        if (junit) {
            fprintf(stderr, "precprobe merge: --junit takes a case without [sweep]\n");
            rc = 2;
        } else {
            rc = pp_cli_merge_sweep(names, n, out, html);
        }
        free(names);
        return rc;
    }
    pp_partial *parts = rc ? NULL : calloc((size_t)n, sizeof *parts);
    if (!rc && !parts) {
        fprintf(stderr, "precprobe: out of memory\n");
        rc = 3;
    }
    pp_error err = {0};
    int n_read = 0;
    for (; !rc && n_read < n; n_read++)
        if ((rc = pp_partial_read(names[n_read], &parts[n_read], &err)))
            fprintf(stderr, "precprobe merge: %s\n", err.msg);
    pp_case c;
    pp_run_result r;
    memset(&c, 0, sizeof c);
    memset(&r, 0, sizeof r);
    if (!rc && (rc = pp_merge_partials(parts, names, n, &c, &r, &err)))
        fprintf(stderr, "precprobe merge: %s\n", err.msg);
    if (!rc && pp_gate_evaluate(&c, &r) < 0) {
        fprintf(stderr, "precprobe: out of memory\n");
        rc = 3;
    }
    if (!rc)
        rc = pp_cli_write_reports(&r, out, junit, html);
    if (!rc) {
        char *summary = pp_report_summary(&r);
        printf("%s: %s on %s (merged from %d shards)\n%s\nreports: %s/report.txt %s/report.h5%s%s%s%s\n", r.case_name,
               r.op, r.device, parts[0].n_shards, summary ? summary : "", out, out, junit ? " " : "",
               junit ? junit : "", html ? " " : "", html ? html : "");
        free(summary);
        for (int i = 0; i < r.n_verdicts; i++)
            rc |= !r.verdicts[i].passed;
    }
    for (int k = 0; k < n_read; k++)
        pp_partial_free(&parts[k]);
    free(parts);
    free(names);
    pp_run_result_free(&r);
    if (c.op)
        pp_case_free(&c);
    return rc;
}
