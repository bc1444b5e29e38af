// cli_args.c — see cli_args.h.
#include "cli/cli_args.h"

#include <stdio.h>
#include <string.h>

int pp_cli_parse(const char *cmd, int argc, char **argv, const pp_cli_opt *opts, int n_opts,
                 const char **positional, int max_pos, int *n_pos)
{
    *n_pos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            return 1;
        if (a[0] != '-' || a[1] == '\0') {
            if (*n_pos == max_pos) {
                fprintf(stderr, "precprobe %s: unexpected operand '%s' (see precprobe %s --help)\n", cmd, a, cmd);
                return 2;
            }
            positional[(*n_pos)++] = a;
            continue;
        }
        size_t len = strcspn(a, "=");
        const pp_cli_opt *o = NULL;
        for (int k = 0; k < n_opts; k++)
            if (strlen(opts[k].name) == len && !strncmp(a, opts[k].name, len))
                o = &opts[k];
        if (!o) {
            fprintf(stderr, "precprobe %s: unknown option '%.*s' (see precprobe %s --help)\n", cmd, (int)len, a, cmd);
            return 2;
        }
        if (o->flag) {
            if (a[len] == '=') {
                fprintf(stderr, "precprobe %s: option '%s' takes no value\n", cmd, o->name);
                return 2;
            }
            *o->flag = 1;
        } else if (a[len] == '=') {
            *o->value = a + len + 1;
        } else if (i + 1 < argc) {
            *o->value = argv[++i];
        } else {
            fprintf(stderr, "precprobe %s: option '%s' needs a value\n", cmd, o->name);
            return 2;
        }
    }
    return 0;
}
