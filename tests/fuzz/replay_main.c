// replay_main.c — runs a fuzz target's committed seed corpus through its harness, without
// libFuzzer, in the sanitizer build of `make test` (build/san/fuzz/replay_TARGET): every input
// that once crashed a parser stays in the corpus (tests/fuzz/TARGET/), so a parser change that
// brings a crash back fails the tests, not only a later fuzzing session. The harness's own checks
// (__builtin_trap) and ASan/UBSan (halt on error) turn a failure into a non-zero exit.
// usage: replay_TARGET [FILE...]   (no FILE: every file in PP_FUZZ_CORPUS, the target's corpus)
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PP_FUZZ_CORPUS
#error "build with -DPP_FUZZ_CORPUS=\"tests/fuzz/TARGET\""
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

// Reads path whole and hands it to the harness. Returns 0, or 1 when it cannot be read.
static int replay_one(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *grown = realloc(buf, cap * 2);
            if (!grown) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = grown, cap *= 2;
        }
    }
    int bad = !buf || ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        fprintf(stderr, "replay: cannot read %s\n", path);
        return 1;
    }
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            if (replay_one(argv[i]))
                return 1;
        printf("replay: %d inputs, no failure\n", argc - 1);
        return 0;
    }
    DIR *d = opendir(PP_FUZZ_CORPUS);
    if (!d) {
        fprintf(stderr, "replay: cannot open the corpus %s\n", PP_FUZZ_CORPUS);
        return 1;
    }
    // in name order, so a failure names the same input on every machine
    char **names = NULL;
    size_t count = 0, cap = 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (count == cap) {
            cap = cap ? 2 * cap : 64;
            char **grown = realloc(names, cap * sizeof *names);
            if (!grown) {
                rc = 1;
                break;
            }
            names = grown;
        }
        size_t len = strlen(PP_FUZZ_CORPUS) + strlen(e->d_name) + 2;
        if (!(names[count] = malloc(len))) {
            rc = 1;
            break;
        }
        snprintf(names[count++], len, "%s/%s", PP_FUZZ_CORPUS, e->d_name);
    }
    closedir(d);
    if (rc)
        fprintf(stderr, "replay: out of memory listing %s\n", PP_FUZZ_CORPUS);
    if (names)
        qsort(names, count, sizeof *names, by_name);
    for (size_t i = 0; i < count && !rc; i++)
        rc = replay_one(names[i]);
    for (size_t i = 0; i < count; i++)
        free(names[i]);
    free(names);
    if (!rc)
        printf("replay: %zu inputs of %s, no failure\n", count, PP_FUZZ_CORPUS);
    return rc;
}
