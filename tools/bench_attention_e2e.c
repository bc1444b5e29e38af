// bench_attention_e2e.c — `precprobe run cases/te-cp-821.toml` end to end (TE PR 821 at its own
// size: two references, six variants, their comparisons, the reports): wall time, CPU time of the
// run (user + sys of the child: a loaded machine stretches the first, not the second) and peak
// resident memory, against issue 17's targets (40 s, 2 GiB); and where the CPU time goes (the
// run's PRECPROBE_TIMINGS=1 lines summed per stage: inputs, references, variants, statistics),
// each stage also as a ratio to an anchor measured in the same process just before: plain
// binary64 dot products (d = 128, one per visible (query, key) pair, scalar loop) on a slice of the
// case's pairs, scaled to all of them — a model of the same work count, so a loaded machine moves
// the ratios less than the seconds. Minutes of work, so `make bench` runs it only with
// PRECPROBE_BENCH_FULL=1 (and says so otherwise). The reference cache is off.
// Run: PRECPROBE_BENCH_FULL=1 build/rel/tools/bench_attention_e2e [CASE.toml] (from the
// repository root; CASE defaults to cases/te-cp-821.toml, whose shape the anchor assumes).
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

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// te-cp-821's shape: the anchor's work count (two format groups, each h·s(s+1)/2 visible pairs).
#define E2E_S 4096
#define E2E_H 12
#define E2E_D 128
#define E2E_GROUPS 2

// The anchor: CPU seconds of one plain binary64 dot product (d = 128, scalar loop, no
// compensation) per visible pair of the case, measured on causal rows [0, 1024) of one head
// against 4096 keys and scaled by the pair count. The sink keeps the loop from being removed.
static double anchor_s(void)
{
    static double q[1024][E2E_D], k[E2E_S][E2E_D];
    for (int i = 0; i < E2E_S; i++)
        for (int l = 0; l < E2E_D; l++) {
            k[i][l] = (double)((i * 131 + l * 7) % 257) / 256.0 - 0.5;
            if (i < 1024)
                q[i][l] = (double)((i * 17 + l * 29) % 263) / 262.0 - 0.5;
        }
    double sink = 0.0, best = 1e300;
    for (int rep = 0; rep < 3; rep++) {  // the best of three: another process's burst only slows
        double c0 = cpu_now();
        for (int i = 0; i < 1024; i++)
            for (int j = 0; j <= i; j++) {
                double a = 0.0;
                for (int l = 0; l < E2E_D; l++)
                    a += q[i][l] * k[j][l];
                sink += a;
            }
        double c = cpu_now() - c0;
        best = c < best ? c : best;
    }
    if (sink == 1.2345)
        printf(" ");
    double slice = 1024.0 * 1025.0 / 2.0, all = (double)E2E_S * (E2E_S + 1.0) / 2.0 * E2E_H * E2E_GROUPS;
    return best * all / slice;
}

// Sums the run's "timing: KIND ... cpu X s" lines per stage (PRECPROBE_TIMINGS=1).
static void stage_split(const char *path, double cpu[4])
{
    static const char *const kinds[4] = {"inputs", "reference", "variant", "compare"};
    FILE *f = fopen(path, "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        char kind[64];
        const char *c = strstr(line, " cpu ");
        if (strncmp(line, "timing: ", 8) != 0 || !c || sscanf(line + 8, "%63s", kind) != 1)
            continue;
        for (int i = 0; i < 4; i++)
            if (!strncmp(kind, kinds[i], strlen(kinds[i])))  // compare and compare-pair: statistics
                cpu[i] += strtod(c + 5, NULL);
    }
    if (f)
        fclose(f);
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
    double anchor = anchor_s();
    char *argv[] = {"bin/precprobe", "run", case_path, "--no-cache", "-q", "--out", dir, NULL};
    char tpath[sizeof dir + 16];
    snprintf(tpath, sizeof tpath, "%s/timings.txt", dir);
    setenv("PRECPROBE_TIMINGS", "1", 1);  // one line per task on the run's stderr
    pid_t pid;
    posix_spawn_file_actions_t fa;  // the run's summary goes nowhere: the reports hold it
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, tpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    double t0 = pp_bench_now();
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
    double wall = pp_bench_now() - t0;
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    double cpu = pp_bench_tv_s(ru.ru_utime) + pp_bench_tv_s(ru.ru_stime);
    double rss = (double)ru.ru_maxrss / (1024.0 * 1024.0);  // KiB on Linux
    double stage[4] = {0, 0, 0, 0};
    stage_split(tpath, stage);
    char path[sizeof dir + 16];
    const char *files[] = {"report.txt", "report.h5", "timings.txt"};
    for (int i = 0; i < 3; i++) {
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
    const char *names[4] = {"inputs", "references", "variants (emulation)", "statistics"};
    double rest = cpu;
    printf("  anchor: plain binary64 dots, one per visible pair of both format groups: %.2f s of CPU\n", anchor);
    for (int i = 0; i < 4; i++) {
        printf("  %-22s CPU %7.1f s  %5.1f%%  %6.2f x anchor\n", names[i], stage[i], 100.0 * stage[i] / cpu,
               stage[i] / anchor);
        rest -= stage[i];
    }
    printf("  %-22s CPU %7.1f s  %5.1f%%  %6.2f x anchor\n", "rest (plan, reports)", rest, 100.0 * rest / cpu,
           rest / anchor);
    printf("  %-22s CPU %7.1f s          %6.2f x anchor\n", "whole run", cpu, cpu / anchor);
    return WIFEXITED(status) && WEXITSTATUS(status) <= 1 ? 0 : 3;
}
