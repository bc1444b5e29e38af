// main.c — the precprobe command line: dispatches to one function per subcommand.
// usage: precprobe COMMAND [options]; precprobe --help
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "error.h"
#include "interrupt.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: precprobe COMMAND [options]\n"
            "\n"
            "How far is a low-precision kernel's answer from the true answer?\n"
            "\n"
            "commands:\n"
            "  run CASE...               run a case file's variants, compare with the reference,\n"
            "                            write report.txt and report.h5\n"
            "  check CASE --baseline B   the CI gate: fail when a statistic got worse than B\n"
            "  baseline CASE -o B        write a baseline report\n"
            "  compare ACTUAL EXPECTED   torch.testing.assert_close on two stored tensors\n"
            "  list                      operations, their knobs, shipped cases\n"
            "  show REPORT.h5            print a stored report\n"
            "  reference CASE -o OUT.h5  write a case's inputs and its certified reference\n"
            "  cast IN --to F -o OUT     round a stored tensor into a format (values or codes)\n"
            "  list-points CASE          the points of a case's [sweep], with their work\n"
            "  merge PARTIAL... --out D  assemble a sharded run's partial results (run --shard I/N)\n"
            "  explain CASE              where a variant's error comes from: each rounding site\n"
            "                            made exact in turn (--variant V, --against X)\n"
            "\n"
            "options:\n"
            "  --help, -h                this text ('precprobe COMMAND --help' or 'precprobe help\n"
            "                            COMMAND' for a command)\n"
            "  --version                 version and build features\n"
            "\n"
            "exit status: 0 pass/close, 1 not close or gate failed, 2 bad usage or input,\n"
            "             3 runtime failure (I/O, CUDA), 130 interrupted (Ctrl-C; finished\n"
            "             references stay in the cache, so a rerun resumes)\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    // "precprobe help COMMAND" is "precprobe COMMAND --help"
    char help_opt[] = "--help";
    char *help_argv[] = {argv[0], argc > 2 ? argv[2] : NULL, help_opt, NULL};
    if (!strcmp(cmd, "help") && argc > 2) {
        argv = help_argv;
        argc = 3;
        cmd = argv[1];
    }
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("precprobe %s (cuda: %s)\n", PP_VERSION, pp_cuda_compiled() ? "compiled in" : "not compiled in");
        return 0;
    }
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } commands[] = {
        {"compare", pp_cmd_compare}, {"run", pp_cmd_run},   {"check", pp_cmd_check},
        {"baseline", pp_cmd_baseline}, {"list", pp_cmd_list}, {"show", pp_cmd_show},
        {"reference", pp_cmd_reference}, {"cast", pp_cmd_cast}, {"merge", pp_cmd_merge},
        {"list-points", pp_cmd_list_points}, {"explain", pp_cmd_explain},
    };
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(cmd, commands[i].name))
            continue;
        // The commands that compute references stop cleanly on Ctrl-C: what finished stays in
        // the reference cache and the run says what it cut short (base/interrupt.h); the others
        // are quick and keep the default action.
        int stoppable = !strcmp(cmd, "run") || !strcmp(cmd, "check") || !strcmp(cmd, "baseline") ||
                        !strcmp(cmd, "reference") || !strcmp(cmd, "explain");
        if (stoppable)
            pp_interrupt_install();
        int status = commands[i].fn(argc - 1, argv + 1);
        if (stoppable && pp_interrupted() && status != PP_ERR_INTERRUPTED) {
            fprintf(stderr, "precprobe: interrupted\n");  // after the work that polls: 130 all the same
            status = PP_ERR_INTERRUPTED;
        }
        return status;
    }
    fprintf(stderr, "precprobe: unknown command '%s' (see precprobe --help)\n", cmd);
    return 2;
}
