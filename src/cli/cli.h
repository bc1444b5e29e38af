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
int pp_cmd_list_points(int argc, char **argv);  // cmd_list_points.c: a [sweep]'s points


// cmd_run.c: a run's report.txt and report.h5 in dir (and junit, html when not NULL), written as
// one atomic set. Returns 0, or an exit status after printing the error.
typedef struct pp_run_result pp_run_result;
int pp_cli_write_reports(const pp_run_result *r, const char *dir, const char *junit, const char *html);

// cmd_run_sweep.c: whether the case file at path has a [sweep] table (0 when it cannot be read:
// the plain run then says why), and `precprobe run` of such a case: every point run into
// DIR/points/NAME/, then DIR/report.txt, DIR/sweep.h5 and the HTML page (html, default
// DIR/report.html). DIR is out, else OUT_ROOT/CASE-NAME (out_root default reports/out).
// Returns the exit status.
typedef struct pp_run_opts pp_run_opts;
int pp_cli_is_sweep(const char *path);
int pp_cli_run_sweep(const char *path, const pp_run_opts *o, const char *out, const char *out_root, const char *html);

// The sweep's report.txt, sweep.h5 and report.html (html, default DIR/report.html) in dir from the
// points' reports in DIR/points/NAME/report.h5 (a merge of shards calls this too). Returns the
// exit status after printing any error (a missing point names its file).
typedef struct pp_sweep pp_sweep;
int pp_cli_write_sweep_reports(const pp_sweep *s, const char *dir, const char *html);

// cmd_run_sweep.c: pp_sweep_load of the case file at path, its notes (the points skipped, which
// an error may speak of) on stderr either way, and on an error its message, the sweep freed.
// Returns PP_OK or the error's exit status.
int pp_cli_load_sweep(const char *path, pp_sweep *s);

// cmd_merge.c: `precprobe merge PARTIAL... --out DIR`, the partial results of a sharded run.
int pp_cmd_merge(int argc, char **argv);

// cmd_run_shard.c: `precprobe run CASE --shard I/N`: runs the slice, writes DIR/partial.h5 (a
// case with [sweep]: cmd_sweep_shard.c); returns the exit status.
struct pp_run_opts;
int pp_cli_run_shard(const char *case_path, const char *shard, const char *out, const struct pp_run_opts *o);

// cmd_sweep_shard.c: shards and merge of a case with [sweep]: whether dir holds a sweep shard
// (its manifest), shard i of n of the sweep at path written under DIR/points/NAME/, and the
// merge of such shard folders into OUT (each point's reports, then the sweep's). Each returns
// the exit status.
int pp_cli_is_sweep_shard(const char *dir);
int pp_cli_run_sweep_shard(const char *path, int i, int n, const char *out, const struct pp_run_opts *o);
int pp_cli_merge_sweep(const char *const *names, int n, const char *out, const char *html);

#endif
