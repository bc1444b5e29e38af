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
int pp_cmd_explain(int argc, char **argv);

#endif
