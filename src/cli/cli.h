// cli.h — the subcommands of the precprobe binary, each a function taking its own argv
// (argv[0] is the command's name) and returning the process exit status.
#ifndef PP_CLI_H
#define PP_CLI_H

#include "core/build_info.h"

int pp_cmd_compare(int argc, char **argv);
int pp_cmd_run(int argc, char **argv);
int pp_cmd_baseline(int argc, char **argv);
int pp_cmd_check(int argc, char **argv);
int pp_cmd_list(int argc, char **argv);
int pp_cmd_show(int argc, char **argv);
int pp_cmd_reference(int argc, char **argv);
int pp_cmd_cast(int argc, char **argv);
int pp_cmd_merge(int argc, char **argv);

// `precprobe run CASE --shard I/N`: runs the slice, writes DIR/partial.h5 (cmd_run_shard.c);
// returns the exit status.
struct pp_run_opts;
int pp_cli_run_shard(const char *case_path, const char *shard, const char *out, const struct pp_run_opts *o);

// The reports of a run as `precprobe run` writes them, all or none (report.txt, report.h5 in dir,
// and junit/html when non-NULL); prints the error. Returns 0 or the exit status (cmd_run.c).
struct pp_run_result;
int pp_cli_write_reports(const struct pp_run_result *r, const char *dir, const char *junit, const char *html);

#endif
