// case.h — a case file (TOML) read and checked against its operation's schema: the operation,
// its parameters, inputs, variants (named and from [matrix]), comparisons and gate rules.
// Every error is "FILE:LINE: message" naming the key, with exit status 2.
#ifndef PP_CASE_H
#define PP_CASE_H

#include <stdint.h>

#include "core/close.h"
#include "error.h"
#include "pipeline/inputs.h"
#include "ops/op.h"

#define PP_MAX_VARIANTS 256
#define PP_MAX_PAIRS 64
#define PP_MAX_GATE_RULES 64
#define PP_PATH_MAX 1024

typedef struct pp_input_spec {
    pp_dist dist;                  // generated from the seed when file is empty
    char file[PP_PATH_MAX];        // a tensor spec (.npy, .safetensors:NAME, .h5:/ds, .pt:NAME), or ""
    int has_format;                // the file's values are declared to be of format
    pp_format_id format;
    int round_nearest;             // round = "nearest": the file's values rounded to the variant's format
    char layout[PP_MAX_DIMS + 1];  // the file's axis order ("bhsd"), "" = the op's
    int line;                      // the line of its file key, for messages about the file's tensor
} pp_input_spec;

#define PP_MAX_PAIR_GROUPS 8

// How a pair's outputs are compared: each group (one output, or several concatenated, written
// "cat(dq, dk, dv)") seen through a view (src/core/view.h). The comparison's tensor is named after the
// group, with "@VIEW" when a view is set: "cat(dq, dk, dv)@te-cp-rank:7".
typedef struct pp_pair_spec {
    int actual, expected;                              // variant indices
    char view[PP_NAME_MAX];                            // "" = whole tensors
    int view_world;                                    // a te-cp-rank view's world W, resolved when read
    int n_groups;                                      // 0 = every output the pair has, one by one
    int group_len[PP_MAX_PAIR_GROUPS];
    int group[PP_MAX_PAIR_GROUPS][PP_MAX_OP_TENSORS];  // output indices
    char group_name[PP_MAX_PAIR_GROUPS][PP_NAME_MAX];
} pp_pair_spec;

typedef struct pp_variant_spec {
    char name[PP_NAME_MAX];
    pp_op_knobs knobs;
    int line;                                // where it was defined: its [variants.NAME] or the [matrix]
    int from_matrix;
    int external;                            // outputs read from files
    char external_files[PP_MAX_OP_TENSORS][PP_PATH_MAX];
    // per external output: its declared format (when has_format) and axis order ("" = the op's)
    int external_has_format[PP_MAX_OP_TENSORS];
    pp_format_id external_format[PP_MAX_OP_TENSORS];
    char external_layouts[PP_MAX_OP_TENSORS][PP_MAX_DIMS + 1];
    int external_lines[PP_MAX_OP_TENSORS];   // the line of each output's file, for messages
} pp_variant_spec;

// A gate rule: a statistic of the comparisons its pattern matches must stay within [min, max].
// pattern is VARIANT.TENSOR.STAT (against the reference) or VARIANT.TENSOR.AGAINST.STAT, with
// '*' matching any run of characters within a part.
typedef struct pp_gate_rule {
    char variant[PP_NAME_MAX], tensor[PP_NAME_MAX], against[PP_NAME_MAX], stat[PP_NAME_MAX];
    char text[256];
    int has_min, has_max;
    double min, max;
    int line;
} pp_gate_rule;

// How much worse than the baseline a statistic may get before `precprobe check` fails.
typedef struct pp_slack {
    double mismatch_fraction;  // additive, as a fraction (0.005 = 0.5 percentage points)
    double max_abs_diff;       // multiplicative factor (1.10)
    double max_rel_diff;       // multiplicative factor (1.10)
    double max_ulp;            // additive, in ulps (1)
} pp_slack;

typedef struct pp_case {
    char path[PP_PATH_MAX];
    char name[PP_NAME_MAX];
    char description[512];
    const pp_op *op;
    uint64_t seed;
    pp_op_params params;
    pp_input_spec inputs[PP_MAX_OP_TENSORS];
    int n_variants;
    pp_variant_spec *variants;     // owned
    // [compare]
    int has_tolerances;
    double rtol, atol;
    int equal_nan;
    int torch_major, torch_minor;
    int n_pairs;
    pp_pair_spec pairs[PP_MAX_PAIRS];
    const char *reference_method;  // NULL: the op's default
    // [gate]
    int n_rules;
    pp_gate_rule rules[PP_MAX_GATE_RULES];
    pp_slack slack;
    char *text;                    // the file's text, owned
    char *notes;                   // NULL, or lines the reader has for the user (a skipped [matrix]
                                   // combination), each "FILE:LINE: note: ...\n"; owned
    int invalid_combination;       // after a failed read: the error was a combination of values the
                                   // op cannot run (check_params, check_knobs, a view's rank past
                                   // the world, an axis_scale's length), not a mistake in one value;
                                   // a sweep skips such a point (src/pipeline/sweep.h)
} pp_case;

// Reads and checks the case file at path. Returns PP_OK, or PP_ERR_INPUT with "FILE:LINE: ...".
int pp_case_load(const char *path, pp_case *c, pp_error *err);

// The text of the case file at path, malloc'd and NUL-terminated; its length in *len unless len
// is NULL (a file past PP_TOML_MAX_BYTES is read only far enough for the parser to refuse it).
// pp_case_load and pp_sweep_load read their files with it. Returns NULL with err set
// (PP_ERR_INPUT: "PATH: cannot read the case file: ..."; PP_ERR_RUNTIME: out of memory).
char *pp_case_read_text(const char *path, size_t *len, pp_error *err);

// The same for a case file's text already in memory (text[0..len), need not be NUL-terminated);
// path names the file in messages and anchors relative paths. The fuzz target's entry point.
int pp_case_parse(const char *text, size_t len, const char *path, pp_case *c, pp_error *err);

// Frees what the case owns.
void pp_case_free(pp_case *c);

// The keys a [sweep] (and a point's [point]) may set for op: "seed", then the op's parameters,
// then its knobs, in `precprobe list` order. names needs 1 + PP_MAX_PARAMS + PP_MAX_KNOBS slots.
// Returns how many.
int pp_sweep_key_names(const pp_op *op, const char **names);

// Index of the variant named name, or -1.
int pp_case_variant_index(const pp_case *c, const char *name);

#endif
