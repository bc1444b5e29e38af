// cli_args.h — the one option parser of every subcommand: --name VALUE, --name=VALUE, flags,
// positional operands; unknown options are named in the error.
#ifndef PP_CLI_ARGS_H
#define PP_CLI_ARGS_H

typedef struct pp_cli_opt {
    const char *name;     // "--rtol"; also "-o" style short names
    const char **value;   // set for options taking a value (NULL for flags)
    int *flag;            // set to 1 for flags (NULL for valued options)
} pp_cli_opt;

// Parses argv[1..argc) of subcommand cmd. Positional operands go to positional[0..max_pos).
// Returns 0 on success; 1 when --help/-h was given (the caller prints usage, exits 0);
// 2 after printing a one-line error ("precprobe CMD: unknown option '--x' ...").
int pp_cli_parse(const char *cmd, int argc, char **argv, const pp_cli_opt *opts, int n_opts,
                 const char **positional, int max_pos, int *n_pos);

#endif
