// cmd_list_points.c — `precprobe list-points CASE`: the points a case's [sweep] expands into
// (src/pipeline/sweep.h), one per line, with how much work each is (its run plan's tasks).
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_args.h"
#include "pipeline/plan.h"
#include "pipeline/sweep.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: precprobe list-points CASE.toml [--format text|tsv]\n"
            "\n"
            "Lists the points of a case's [sweep] in their order (keys in file order, the last\n"
            "varying fastest; skipped combinations are left out and noted on stderr): index, name\n"
            "(the folder of its reports: OUT/points/NAME/), values, and its work as planned on\n"
            "the CPU: variants, references (one per input format), comparisons, tasks. A case\n"
            "without [sweep] is one point, named \"-\".\n"
            "\n"
            "options:\n"
            "  --format text|tsv        aligned columns (default), or tab-separated with a header\n"
            "                           line, for scripts (shards, job arrays)\n"
            "  -h, --help               this text\n");
}

// The work of one point: its plan on the CPU, counted by task kind.
typedef struct point_work {
    int variants, references, comparisons, tasks;
} point_work;

static int work_of(const pp_sweep *s, int i, point_work *w, pp_error *err)
{
    memset(w, 0, sizeof *w);
    pp_case c;
    int rc = pp_sweep_point_case(s, i, &c, err);
    if (rc) {
        pp_case_free(&c);
        return rc;
    }
    pp_run_opts o = {.device = "cpu", .threads = 1};
    pp_run_plan plan;
    rc = pp_run_plan_make(&c, &o, &plan, err);
    for (int t = 0; !rc && t < plan.n_tasks; t++) {
        pp_task_kind k = plan.tasks[t].kind;
        w->variants += k == PP_TASK_VARIANT;
        w->references += k == PP_TASK_REFERENCE || k == PP_TASK_REFERENCE_QUANTISED;
        w->comparisons += k == PP_TASK_COMPARE || k == PP_TASK_COMPARE_PAIR;
    }
    w->tasks = rc ? 0 : plan.n_tasks;
    pp_run_plan_free(&plan);
    pp_case_free(&c);
    return rc;
}

int pp_cmd_list_points(int argc, char **argv)
{
    const char *format = NULL, *pos[1];
    int n_pos = 0;
    const pp_cli_opt opts[] = {{"--format", &format, NULL}};
    int rc = pp_cli_parse("list-points", argc, argv, opts, 1, pos, 1, &n_pos);
    if (rc == 1) {
        usage(stdout);
        return 0;
    }
    if (rc)
        return rc;
    if (n_pos != 1) {
        fprintf(stderr, "precprobe list-points: name one case file (see precprobe list-points --help)\n");
        return 2;
    }
    int tsv = format && !strcmp(format, "tsv");
    if (format && !tsv && strcmp(format, "text")) {
        fprintf(stderr, "precprobe list-points: --format: '%s' is not text or tsv\n", format);
        return 2;
    }
    pp_sweep s;
    pp_error err = {0};
    if ((rc = pp_cli_load_sweep(pos[0], &s)))
        return rc;
    if (tsv)
        printf("index\tname\tvalues\tvariants\treferences\tcomparisons\ttasks\n");
    else
        printf("%5s  %-32s %-40s %8s %10s %11s %5s\n", "index", "name", "values", "variants", "references",
               "comparisons", "tasks");
    for (int i = 0; i < s.n_points; i++) {
        point_work w;
        if ((rc = work_of(&s, i, &w, &err))) {
            fprintf(stderr, "precprobe: %s\n", err.msg);
            break;
        }
        char values[PP_SWEEP_NAME_MAX];
        pp_sweep_point_values(&s, i, values, sizeof values);
        const char *name = s.n_keys ? s.points[i].name : "-";
        if (tsv)
            printf("%d\t%s\t%s\t%d\t%d\t%d\t%d\n", i, name, s.n_keys ? values : "-", w.variants, w.references,
                   w.comparisons, w.tasks);
        else
            printf("%5d  %-32s %-40s %8d %10d %11d %5d\n", i, name, s.n_keys ? values : "-", w.variants,
                   w.references, w.comparisons, w.tasks);
    }
    pp_sweep_free(&s);
    return rc;
}
