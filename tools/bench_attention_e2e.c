// bench_attention_e2e.c — `precprobe run cases/te-cp-821.toml` end to end (TE PR 821 at its own
// size: two references, six variants, their comparisons, the reports): wall time, CPU time of the
// run (user + sys of the child: a loaded machine stretches the first, not the second) and peak
// resident memory, against issue 17's targets (40 s, 2 GiB). Minutes of work, so `make bench` runs
// it only with PRECPROBE_BENCH_FULL=1 (and says so otherwise). The reference cache is off.
// Run: PRECPROBE_BENCH_FULL=1 build/rel/tools/bench_attention_e2e [CASE.toml] (from the
// repository root; CASE defaults to cases/te-cp-821.toml).
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

extern char **environ;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double tv_s(struct timeval t)
{
    return (double)t.tv_sec + 1e-6 * (double)t.tv_usec;
}

int main(int argc, char **argv_in)
{
    char *case_path = argc > 1 ? argv_in[1] : "cases/te-cp-821.toml";
    const char *full = getenv("PRECPROBE_BENCH_FULL");
    if (!full || strcmp(full, "1") != 0) {
        printf("bench_attention_e2e: te-cp-821 end to end skipped (minutes): run with "
               "PRECPROBE_BENCH_FULL=1\n");
        return 0;
    }
    char dir[] = "/tmp/precprobe-bench-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("bench_attention_e2e: mkdtemp");
        return 3;
    }
    char *argv[] = {"bin/precprobe", "run", case_path, "--no-cache", "-q", "--out", dir, NULL};
    pid_t pid;
    posix_spawn_file_actions_t fa;  // the run's summary goes nowhere: the reports hold it
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    double t0 = now();
    int spawned = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (spawned != 0) {
        perror("bench_attention_e2e: bin/precprobe (run from the repository root after make)");
        return 3;
    }
    int status = 0;
    if (waitpid(pid, &status, 0) < 0) {
        perror("bench_attention_e2e: waitpid");
        return 3;
    }
    double wall = now() - t0;
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    double cpu = tv_s(ru.ru_utime) + tv_s(ru.ru_stime);
    double rss = (double)ru.ru_maxrss / (1024.0 * 1024.0);  // KiB on Linux
    char path[sizeof dir + 16];
    const char *files[] = {"report.txt", "report.h5"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        remove(path);
    }
    rmdir(dir);
    long nproc = sysconf(_SC_NPROCESSORS_ONLN);
    printf("bench_attention_e2e: precprobe run %s (exit %d)\n", case_path,
           WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    printf("  wall %.1f s, CPU %.1f s (%.1f s on %ld idle cores; target 40 s: %s), peak resident "
           "%.2f GiB (target 2 GiB: %s)\n", wall, cpu, cpu / (double)(nproc > 0 ? nproc : 1), nproc,
           cpu / (double)(nproc > 0 ? nproc : 1) <= 40.0 ? "met" : "NOT met", rss,
           rss <= 2.0 ? "met" : "NOT met");
    return WIFEXITED(status) && WEXITSTATUS(status) <= 1 ? 0 : 3;
}
