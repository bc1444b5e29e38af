// sweep.h — a case file's [sweep] expanded into its points: one complete case per combination of
// the listed values of op parameters, knobs and the seed (cases/README.md, "Sweeps").
//
// Order: the keys in the order the file lists them, the last key varying fastest (as [matrix]);
// point indices count the valid points only, in that order, so point i is a function of the case
// file alone — what a shard of a sweep selects by.
//
// Each point is a case file's text of its own: the sweep file with its [sweep] table replaced by
// a [point] table holding the point's values, each on the line of its [sweep] key (every other
// line of the table left blank), so line numbers in messages are the sweep file's, and the point
// reads, runs and is stored (report.h5's case text) like any case. A case without [sweep] is a
// sweep of one point: its own text, named "".
#ifndef PP_SWEEP_H
#define PP_SWEEP_H

#include <stddef.h>

#include "error.h"
#include "pipeline/case.h"

#define PP_SWEEP_MAX_KEYS 8
#define PP_SWEEP_MAX_VALUES 64
#define PP_SWEEP_MAX_POINTS 1024
#define PP_SWEEP_NAME_MAX 256

// A swept key and its values, each as the point text writes it (TOML: 1024, "bf16", 0.5) and as
// a point's name shows it (1024, bf16, 0.5); numeric values also as a number (for charts).
typedef struct pp_sweep_key {
    char name[PP_NAME_MAX];
    int line;
    int n_values;
    char literal[PP_SWEEP_MAX_VALUES][PP_NAME_MAX];
    char text[PP_SWEEP_MAX_VALUES][PP_NAME_MAX];
    int numeric;                               // every value is an integer or a float
    double number[PP_SWEEP_MAX_VALUES];
} pp_sweep_key;

typedef struct pp_sweep_point {
    char name[PP_SWEEP_NAME_MAX];              // "s=1024,cp_world=2"; its reports: OUT/points/NAME/
    int value[PP_SWEEP_MAX_KEYS];              // per key: the index of its value
    char *text;                                // the point's case text, owned
    size_t len;
} pp_sweep_point;

typedef struct pp_sweep {
    char path[PP_PATH_MAX];
    char case_name[PP_NAME_MAX];
    int line;                                  // the [sweep] header's line; 0: no [sweep]
    int skip_invalid;                          // [sweep] skip_invalid (default true)
    int n_keys;                                // 0: a plain case (one point)
    pp_sweep_key keys[PP_SWEEP_MAX_KEYS];
    int n_points;                              // the valid points
    pp_sweep_point *points;                    // owned
    int n_skipped;                             // invalid combinations left out
    char *notes;                               // NULL, or one "FILE:LINE: note: ..." line per skipped point; owned
} pp_sweep;

// Reads the case file at path (or its text, text[0..len), named path in messages) and expands it:
// every point is read as a case (pp_case_parse) here, so a value a key cannot take is an error
// ("FILE:LINE: ..." at the [sweep] key's line), and a combination the op cannot run (a point
// whose case sets pp_case.invalid_combination: s not divisible by 2·cp_world, a view's rank past
// the world) is skipped with a note, or is an error with skip_invalid = false.
// Returns PP_OK, PP_ERR_INPUT (one line, FILE:LINE), PP_ERR_RUNTIME (out of memory).
// Free with pp_sweep_free, also after a failure.
int pp_sweep_load(const char *path, pp_sweep *s, pp_error *err);
int pp_sweep_parse(const char *text, size_t len, const char *path, pp_sweep *s, pp_error *err);
void pp_sweep_free(pp_sweep *s);

// Point i (0 <= i < n_points) read as a case (free it with pp_case_free).
int pp_sweep_point_case(const pp_sweep *s, int i, pp_case *c, pp_error *err);

// Point i's values as "s=1024 cp_world=2" (the name with spaces): for listings.
void pp_sweep_point_values(const pp_sweep *s, int i, char *buf, size_t n);

// The index of the point named name, or -1.
int pp_sweep_point_index(const pp_sweep *s, const char *name);

#endif
