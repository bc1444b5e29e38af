// cli.h — the subcommands of the precprobe binary, each a function taking its own argv
// (argv[0] is the command's name) and returning the process exit status.
#ifndef PP_CLI_H
#define PP_CLI_H

#include <stddef.h>

#define PP_VERSION "0.1.0"

int pp_cmd_compare(int argc, char **argv);
int pp_cmd_run(int argc, char **argv);
int pp_cmd_baseline(int argc, char **argv);
int pp_cmd_check(int argc, char **argv);
int pp_cmd_list(int argc, char **argv);
int pp_cmd_show(int argc, char **argv);
int pp_cmd_reference(int argc, char **argv);

// 1 when the CUDA backend was compiled in (nvcc found at build time).
int pp_cuda_compiled(void);
// 1 when it was, and a CUDA device and driver are usable now; name (n bytes, may be NULL) gets
// device 0's name, e.g. "NVIDIA H100 80GB HBM3".
int pp_cuda_usable(char *name, size_t n);

#endif
