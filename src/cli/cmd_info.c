// cmd_info.c — `precprobe list` (operations, knobs, shipped cases) and `precprobe show`
// (a stored report.h5 printed as the text report).
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>

#include "format.h"
#include "pipeline/case.h"
#include "cli/cli.h"
#include "cli/cli_args.h"
#include "core/statistic.h"
#include "ops/op.h"
#include "report/report_h5.h"
#include "report/report_html.h"
#include "report/report_txt.h"

int pp_cmd_list(int argc, char **argv)
{
    const char *pos[1];
    int n_pos;
    int rc = pp_cli_parse("list", argc, argv, NULL, 0, pos, 0, &n_pos);
    if (rc == 1) {
        printf("usage: precprobe list\n\nLists the operations, their parameters and knobs with allowed values and\n"
               "defaults, the statistics a [gate] rule can name, and the case files shipped in cases/.\n");
        return 0;
    }
    if (rc)
        return rc;
    for (int i = 0; i < pp_op_count(); i++) {
        const pp_op *op = pp_op_at(i);
        printf("op %s — %s\n  [op] parameters:\n", op->name, op->doc);
        for (int p = 0; p < op->n_params; p++) {
            const pp_param_def *d = &op->params[p];
            char choices[256] = "";
            if (d->kind == PP_PARAM_CHOICE) {
                char list[200];
                pp_choices_str(d->choices, list, sizeof list);
                snprintf(choices, sizeof choices, " {%s}, default %s", list, d->choices[(int)d->def]);
            }
            printf("    %-12s %s%s%s\n", d->name, d->doc, choices, d->required ? " (required)" : "");
        }
        printf("  knobs:\n");
        for (int k = 0; k < op->n_knobs; k++) {
            char values[256];
            pp_knob_values_str(&op->knobs[k], values, sizeof values);
            printf(op->knobs[k].values ? "    %-12s {%s}, default %s\n    %-12s %s\n"
                                       : "    %-12s %s, default %s\n    %-12s %s\n",
                   op->knobs[k].name, values, op->knobs[k].def, "",
                   op->knobs[k].doc);
        }
        printf("  knob combinations: %s\n", op->knob_rules);
        // each tensor with its axis letters, the alphabet of a case's layout = "..."
        printf("  inputs:");
        for (int t = 0; t < op->n_inputs; t++)
            printf(op->input_layouts ? " %s[%s]" : " %s", op->inputs[t],
                   op->input_layouts ? op->input_layouts[t] : "");
        printf("; outputs:");
        for (int t = 0; t < op->n_outputs; t++)
            printf(op->output_layouts ? " %s[%s]" : " %s", op->outputs[t],
                   op->output_layouts ? op->output_layouts[t] : "");
        printf("\n  reference methods:");
        for (int m = 0; op->ref_methods[m]; m++)
            printf(" %s%s", op->ref_methods[m], m ? "" : " (default)");
        printf("\n");
    }
    printf("\ngate statistics ([gate] \"VARIANT.TENSOR.STAT\" = { min = ..., max = ... }):\n");
    for (int i = 0; i < pp_statistic_count(); i++)
        printf("  %-24s %s\n", pp_statistic_at(i)->name, pp_statistic_at(i)->doc);
    // from the format table itself, so a format added there is listed here
    printf("\nformats (an input's format, compare --actual-dtype, cast --to):\n");
    for (int f = 0; f < PP_FMT_COUNT; f++) {
        pp_format F = pp_format_get((pp_format_id)f);
        printf("  %-5s %2d bits, p %2d, emin %5d, emax %4d, max %.17g%s%s%s%s\n", F.name, F.storage_bits,
               F.p, F.emin, F.emax, F.max_finite, F.has_inf ? ", Inf" : "",
               F.has_nan == PP_NAN_NONE ? ", no NaN (saturates)" : F.has_inf ? ", NaN" : ", NaN at all ones",
               F.is_signed ? "" : ", unsigned", F.has_subnormals ? "" : ", no zero or subnormals");
    }
    glob_t g;
    if (glob("cases/*.toml", 0, NULL, &g) == 0) {
        printf("\nshipped cases:\n");
        for (size_t i = 0; i < g.gl_pathc; i++) {
            pp_case c;
            pp_error err = {0};
            if (pp_case_load(g.gl_pathv[i], &c, &err) == 0)
                printf("  %-32s %s: %s\n", g.gl_pathv[i], c.op->name, c.description);
            else
                printf("  %-32s (does not load: %s)\n", g.gl_pathv[i], err.msg);
            pp_case_free(&c);
        }
        globfree(&g);
    }
    return 0;
}

int pp_cmd_show(int argc, char **argv)
{
    const char *pos[1], *html = NULL;
    int n_pos;
    const pp_cli_opt opts[] = {{"--html", &html, NULL}};
    int rc = pp_cli_parse("show", argc, argv, opts, 1, pos, 1, &n_pos);
    if (rc == 1) {
        printf("usage: precprobe show REPORT.h5 [--html FILE]\n\nPrints a stored report as the text report of the "
               "run that wrote it;\nwith --html, writes its HTML report (charts included) to FILE instead.\n");
        return 0;
    }
    if (rc)
        return rc;
    if (n_pos != 1) {
        fprintf(stderr, "precprobe show: usage: precprobe show REPORT.h5 [--html FILE]\n");
        return 2;
    }
    pp_run_result r;
    pp_error err = {0};
    if ((rc = pp_report_h5_read(pos[0], &r, &err))) {
        fprintf(stderr, "precprobe: %s\n", err.msg);
        return rc;
    }
    if (html) {
        rc = pp_report_html_write(html, &r, &err);
        if (rc)
            fprintf(stderr, "precprobe: %s\n", err.msg);
        else
            printf("%s\n", html);
        pp_run_result_free(&r);
        return rc;
    }
    char *text = pp_report_text(&r);
    if (text)
        fputs(text, stdout);
    free(text);
    pp_run_result_free(&r);
    return text ? 0 : 3;
}
