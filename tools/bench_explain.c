// bench_explain.c — issue 18's bound on `precprobe explain`: the explain of TE PR 821's question
// (`explain CASE --variant cp-bf16acc --against non-cp`) within 10× the case's own run
// (`run CASE --no-cache`: every variant and the reference). Runs both as child processes, one
// after the other, and prints each one's wall time, CPU time (user + sys of that child, from
// wait4: a loaded machine stretches the first, not the second) and peak resident memory, and the
// explain's time as a ratio to the run's — the baseline measured in the same process. te-cp-small
// by default (seconds); te-cp-821, the size the bound is stated at, with PRECPROBE_BENCH_FULL=1
// (about eight minutes on two cores). The reference cache is off for the run; the explain needs
// no reference (against a variant).
// Run: build/rel/tools/bench_explain [CASE.toml] (from the repository root, after make).
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_clock.h"

extern char **environ;

typedef struct child_cost {
    double wall, cpu, peak_gib;
} child_cost;

// Runs argv (output to /dev/null) and measures it; 0, or 3 when it cannot run or fails.
static int measure(char *const argv[], child_cost *c)
{
    pid_t pid;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    double t0 = pp_bench_now();
    int spawned = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (spawned != 0) {
        perror("bench_explain: bin/precprobe (run from the repository root after make)");
        return 3;
    }
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) {
        perror("bench_explain: wait4");
        return 3;
    }
    c->wall = pp_bench_now() - t0;
    c->cpu = pp_bench_tv_s(ru.ru_utime) + pp_bench_tv_s(ru.ru_stime);
    c->peak_gib = (double)ru.ru_maxrss / (1024.0 * 1024.0);  // ru_maxrss: KiB on Linux
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "bench_explain: `%s %s %s` failed (status %d)\n", argv[0], argv[1], argv[2], status);
        return 3;
    }
    return 0;
}

int main(int argc, char **argv_in)
{
    const char *full = getenv("PRECPROBE_BENCH_FULL");
    int is_full = full && !strcmp(full, "1");
    char *case_path = argc > 1 ? argv_in[1] : is_full ? "cases/te-cp-821.toml" : "cases/te-cp-small.toml";
    char dir[] = "/tmp/precprobe-bench-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("bench_explain: mkdtemp");
        return 3;
    }
    char run_out[sizeof dir + 8], explain_out[sizeof dir + 16];
    snprintf(run_out, sizeof run_out, "%s/run", dir);
    snprintf(explain_out, sizeof explain_out, "%s/explain", dir);
    char *run[] = {"bin/precprobe", "run", case_path, "--no-cache", "-q", "--out", run_out, NULL};
    char *explain[] = {"bin/precprobe", "explain",  case_path, "--variant", "cp-bf16acc", "--against",
                       "non-cp",        "-q",       "--out",   explain_out, NULL};
    child_cost r, e;
    int rc = measure(run, &r);
    if (!rc)
        rc = measure(explain, &e);
    if (rc)
        return rc;
    printf("bench_explain: %s (%s)\n", case_path,
           is_full ? "full size" : "small; PRECPROBE_BENCH_FULL=1 for te-cp-821, the size the bound is stated at");
    printf("  run --no-cache:                         %8.1f s wall %8.1f s CPU  peak %.2f GiB\n", r.wall, r.cpu,
           r.peak_gib);
    printf("  explain cp-bf16acc --against non-cp:    %8.1f s wall %8.1f s CPU  peak %.2f GiB\n", e.wall, e.cpu,
           e.peak_gib);
    printf("  explain / run:                          %8.2fx wall %7.2fx CPU   (issue 18's bound: 10x)\n",
           e.wall / r.wall, e.cpu / r.cpu);
    char cmd[sizeof dir + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_explain: could not remove %s\n", dir);
    return 0;
}
