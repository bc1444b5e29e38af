// sweep_result.h — a sweep's statistics in memory: per point (its name and values) every
// comparison's statistics (the statistic table's order) and order band. The sweep reports
// (sweep_txt.c, sweep_h5.c, sweep_html.c) read it; `precprobe run` of a sweep fills it one point
// at a time, and sweep.h5 stores it (reports/README.md, "sweep.h5").
#ifndef PP_SWEEP_RESULT_H
#define PP_SWEEP_RESULT_H

#include "core/results.h"
#include "pipeline/sweep.h"

// One comparison at one point.
typedef struct pp_sweep_cell {
    char variant[PP_NAME_MAX], tensor[PP_NAME_MAX], against[PP_NAME_MAX];
    double value[PP_BAND_MAX_STATS];    // per statistic of the result's list
    int band_runs;                      // --orders: the runs behind band (0: no band)
    double band[PP_BAND_MAX_STATS][3];  // min, median, max
} pp_sweep_cell;

typedef struct pp_sweep_row {
    char name[PP_SWEEP_NAME_MAX];
    int value[PP_SWEEP_MAX_KEYS];       // per key: the index of its value
    int n_cells;
    pp_sweep_cell *cells;               // owned
} pp_sweep_row;

typedef struct pp_sweep_result {
    char case_name[PP_NAME_MAX];
    char precprobe_version[32];
    char device[64];
    int n_keys;
    pp_sweep_key keys[PP_SWEEP_MAX_KEYS];  // name, values (text, number when numeric)
    int n_stats;
    char stat[PP_BAND_MAX_STATS][PP_NAME_MAX];  // the statistic table's names when the sweep ran
    int n_rows;
    pp_sweep_row *rows;                 // owned, n_rows of them (one per point, in point order)
} pp_sweep_result;

// An empty result for sweep s: its keys and the statistic table's names. Returns PP_OK or
// PP_ERR_RUNTIME (out of memory); free with pp_sweep_result_free.
int pp_sweep_result_init(pp_sweep_result *res, const pp_sweep *s, pp_error *err);

// Appends point i of s with the comparisons of its run r.
int pp_sweep_result_add(pp_sweep_result *res, const pp_sweep *s, int i, const pp_run_result *r, pp_error *err);

// The result of sweep s assembled from its points' stored reports, points_dir/NAME/report.h5 for
// every point in point order: what `precprobe run` of a sweep writes its sweep reports from, so
// that any process that has the points' report.h5 files (a merge of shards, a rerun) assembles
// the same numbers bit for bit. A missing or unreadable point is an error naming its file.
// Frees and refills res (free it with pp_sweep_result_free, also after a failure).
int pp_sweep_result_from_points(pp_sweep_result *res, const pp_sweep *s, const char *points_dir, pp_error *err);

void pp_sweep_result_free(pp_sweep_result *res);

// The cell (variant, tensor, against) of row, or NULL.
const pp_sweep_cell *pp_sweep_row_find(const pp_sweep_row *row, const char *variant, const char *tensor,
                                       const char *against);

// The columns of the sweep's tables: each distinct (tensor, against) as a group, in the order
// the rows first show them, with its variants in the same order. Fills groups (at most max) and
// returns how many; each group's variants are pointers into res.
#define PP_SWEEP_MAX_GROUP_VARIANTS 64
typedef struct pp_sweep_group {
    const char *tensor, *against;
    int n_variants;
    const char *variant[PP_SWEEP_MAX_GROUP_VARIANTS];
} pp_sweep_group;
int pp_sweep_result_groups(const pp_sweep_result *res, pp_sweep_group *groups, int max);

#endif
