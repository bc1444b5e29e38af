// op.h — what an operation is to the pipeline: one row of the operation table (src/ops/ops.c).
// A row names the operation's parameters ([op] in a case file), its knobs with allowed values
// and defaults, its inputs and outputs with their shapes, and its CPU emulation, optional CUDA
// implementation and reference. Adding an operation = its own files + one row in src/ops/ops.c.
#ifndef PP_OP_H
#define PP_OP_H

#include <stdint.h>

#include "error.h"
#include "core/results.h"
#include "core/tensor.h"
#include "ranges.h"

#define PP_MAX_PARAMS 16
#define PP_MAX_OP_TENSORS 8

typedef enum { PP_PARAM_INT, PP_PARAM_FLOAT, PP_PARAM_CHOICE } pp_param_kind;

// A parameter of [op]: an integer extent, a real number, or one of a list of names (a string in
// the case file; its value is the index of the name in choices, and def is the default index).
typedef struct pp_param_def {
    const char *name;
    pp_param_kind kind;
    double min, max;    // allowed range, inclusive (PP_PARAM_INT, PP_PARAM_FLOAT)
    double def;         // default when not required
    int required;
    const char *doc;
    const char *const *choices;  // PP_PARAM_CHOICE: the allowed names, NULL-terminated
} pp_param_def;

// What one value of a choice knob means to the kernels: the enum value its text stands for.
// A row maps knob values to enums through these tables, by name, so that reordering a values
// list cannot silently change what a stored index means.
typedef struct pp_knob_meaning {
    const char *value;  // NULL ends a table
    int id;
} pp_knob_meaning;

// A knob: one orthogonal choice, with its allowed values (NULL-terminated), their meanings (every
// value has one; tests/test_op_knobs.c checks) and default; or, when values is NULL, an integer
// in [int_min, int_max] (tile sizes, world sizes, scaling factors).
typedef struct pp_knob_def {
    const char *name;
    const char *const *values;
    const char *def;
    const char *doc;
    int64_t int_min, int_max;  // integer knob (values NULL): the allowed range
    const pp_knob_meaning *meanings;  // choice knob: the enum value of each value, by name
    // > 0: a list knob (values NULL, def "[]"): a TOML array of at most list_max non-negative finite
    // numbers (e.g. an amax history), stored in pp_op_knobs.list; default the empty list.
    int list_max;
} pp_knob_def;

// The meanings of a storage-format knob: "fp16", "bf16", "fp32" to their pp_format_id.
extern const pp_knob_meaning pp_knob_formats[];
// The same plus the scaled storage formats e4m3, e5m2, e2m1 (a knob whose values include them).
extern const pp_knob_meaning pp_knob_formats_scaled[];

// How a reference is computed: the method (NULL: the op's default, else one of ref_methods),
// worker threads, and a progress callback the reference calls from one thread with the work
// done so far (in the op's own units, e.g. rows) and the total; progress may be NULL.
typedef struct pp_ref_ctx {
    const char *method;
    int threads;
    void (*progress)(void *progress_ctx, int64_t done, int64_t total);
    void *progress_ctx;
} pp_ref_ctx;

// Parameter values of a case, indexed like the op's params; given[i] says the case set it.
// seed is the case's seed, for operations that draw their own randoms while they run (e.g.
// gradients per optimizer step, stochastic-rounding bits) from Philox, so runs stay reproducible.
typedef struct pp_op_params {
    double v[PP_MAX_PARAMS];
    int given[PP_MAX_PARAMS];
    uint64_t seed;
    // 0: the nominal arithmetic. Else the pipeline's --orders run asks an emulated variant for
    // one admissible order of what the GPU leaves unspecified (reduction orders, approximate
    // exp), drawn from this seed; each row says which (attention.h "Order band"), or ignores it.
    uint64_t order_seed;
    // Where the CPU emulation notes its rounding sites' range diagnostics (kernels/ranges.h; the
    // pipeline's run --ranges), with range_heads(p) cells per site; NULL: not recorded. Only
    // read by run_cpu, and by run_cuda in a row with range_cuda; the outputs are the same bits
    // either way.
    pp_ranges *ranges;
    // 0: every rounding. Else `precprobe explain` (pipeline/explain.h) asks the CPU emulation to
    // make these rounding sites exact (kernels/exact_sites.h; bit s = the op's site s of
    // kernels/sites.h); each row passes it to its kernels, or refuses a mask it cannot honour.
    uint64_t exact_sites;
} pp_op_params;

// Knob values of a variant: the index into each knob's values, or an integer knob's value, or a
// list knob's length with its numbers in list[knob][0 .. v[knob]).
#define PP_KNOB_LIST_MAX 8
typedef struct pp_op_knobs {
    int v[PP_MAX_KNOBS];
    double list[PP_MAX_KNOBS][PP_KNOB_LIST_MAX];
} pp_op_knobs;

// Optional hooks of an iterative operation (adamw) that reports per-step series. When a row sets
// them, the pipeline runs the CPU emulation and the reference through the traced forms, which also
// return an opaque trace (e.g. θ snapshots and the loss per step); series() turns a variant's
// trace and its reference's trace into named series; trace_free releases a trace.
typedef struct pp_op_series_hooks {
    int (*run_cpu)(const pp_op_params *p, const pp_op_knobs *k, const pp_tensor *in, pp_tensor *out,
                   int threads, void **trace, pp_error *err);
    int (*reference)(const pp_op_params *p, pp_format_id in_format, const pp_tensor *in, pp_tensor *out,
                     pp_reference_info *info, const pp_ref_ctx *ctx, void **trace, pp_error *err);
    int (*series)(const pp_op_params *p, const pp_op_knobs *k, const void *trace, const void *ref_trace,
                  pp_series **out, int *n, pp_error *err);
    void (*trace_free)(void *trace);
    // The CUDA implementation's traced form (NULL: none; the pipeline then runs the op's
    // run_cuda and reports no series for the variant). Same contract as run_cpu above.
    int (*run_cuda)(const pp_op_params *p, const pp_op_knobs *k, const pp_tensor *in, pp_tensor *out,
                    void **trace, pp_error *err);
} pp_op_series_hooks;

// An op row's CUDA entry points: the function where the CUDA backend is compiled in, else NULL
// (the function itself is then not compiled), so a row needs no #ifdef of its own.
#ifdef PP_HAVE_CUDA
#define PP_CUDA_FN(f) (f)
#else
#define PP_CUDA_FN(f) NULL
#endif

// The sequence-chunk map of the HTML report's chunk chart: a variant's sequence axis cut into
// equal chunks, each held by an owner (context parallelism: ring chunks and the ranks holding
// them). The chart's words come with it, so the report names no operation's concepts.
typedef struct pp_seq_chunking {
    const char *title;      // the chart's heading
    const char *svg_title;  // the chart's accessible title
    const char *x_label;    // the chunk axis
    const char *owner;      // what holds a chunk, in each bar's tooltip ("rank")
    const char *caption;
    // The number of chunks a variant cuts the sequence into, from its knob settings as text (so
    // a report read back from report.h5 draws the same chart); < 2: not cut.
    int (*n_chunks)(const pp_knob_setting *knobs, int n_knobs);
    // The owner of chunk k of n.
    int (*owner_of)(int k, int n);
} pp_seq_chunking;

// A variant's second reference (pp_op.second_reference): which exact result it is also compared
// with, so a report separates the error of storing the inputs from the error of the arithmetic.
typedef enum pp_ref2_kind {
    PP_REF2_NONE = 0,   // none: the group's reference is the exact result on what the variant read
    PP_REF2_ORIGINAL,   // its storage format rounds the inputs: also against the exact result on them
                        // in binary32, before that rounding (the binary32 group's reference)
    PP_REF2_QUANTISED   // it quantises its binary32 inputs itself (scaled storage): also against the
                        // exact result on the values it quantised them to (reference_quantised)
} pp_ref2_kind;

// Their comparisons are named PP_AGAINST_ORIGINAL and PP_AGAINST_QUANTISED (core/results.h).

typedef struct pp_op pp_op;
struct pp_op {
    const char *name;
    const char *doc;
    const pp_param_def *params;
    int n_params;
    const pp_knob_def *knobs;
    int n_knobs;
    const char *const *inputs;   // input tensor names
    int n_inputs;
    const char *const *outputs;  // output tensor names
    int n_outputs;
    // Cross-parameter checks beyond each range; writes one line to msg and returns -1 on failure.
    int (*check_params)(const pp_op_params *p, char *msg, size_t n);
    // Knob combinations a variant cannot run (NULL: every one can), checked when the case is read
    // for each variant the operation computes; writes one line to msg and returns -1 on failure.
    int (*check_knobs)(const pp_op_params *p, const pp_op_knobs *k, char *msg, size_t n);
    // The combinations check_knobs allows, in words, for `precprobe list`; required (an op whose
    // every combination runs says so; tests/test_op_knobs.c checks every row has one).
    const char *knob_rules;
    // Shape of input i (is_output 0) or output i (is_output 1).
    void (*shape)(const pp_op_params *p, int is_output, int i, int *ndim, int64_t *shape);
    // Storage format of the inputs and outputs under these knobs.
    pp_format_id (*format)(const pp_op_knobs *k);
    // Format of output i when it differs from format (e.g. attention's fp32 lse); NULL: format.
    pp_format_id (*output_format)(const pp_op_knobs *k, int i);
    // Format that holds output i's values as the variant leaves them, when some are not values of
    // output_format (attention's fp8 = "te" out: e4m3 values times a binary32 descale, exact in
    // binary64): the tag report.h5 gives the kept tensor (--save-tensors), while the comparisons
    // keep output_format's tolerances and ulps. NULL: output_format.
    pp_format_id (*saved_format)(const pp_op_params *p, const pp_op_knobs *k, int i);
    // Whether output i exists under these parameters and knobs (e.g. no gradients when the case
    // runs the forward pass only); NULL: every output. An inactive output is neither allocated,
    // computed, nor compared: its tensor is passed zeroed (data NULL) to run_* and reference.
    int (*output_active)(const pp_op_params *p, const pp_op_knobs *k, int i);
    // One line describing the shapes, for report headers.
    void (*describe)(const pp_op_params *p, char *buf, size_t n);
    // CPU emulation: outputs are allocated by the caller with the shapes and format above.
    int (*run_cpu)(const pp_op_params *p, const pp_op_knobs *k, const pp_tensor *in, pp_tensor *out,
                   int threads, pp_error *err);
    // CUDA implementation, NULL when the operation has none.
    int (*run_cuda)(const pp_op_params *p, const pp_op_knobs *k, const pp_tensor *in, pp_tensor *out,
                    pp_error *err);
    // Reference: out[i] binary64 values, info[i] the method and the max error bound (outputs
    // whose tensor has data NULL are not wanted).
    int (*reference)(const pp_op_params *p, pp_format_id in_format, const pp_tensor *in, pp_tensor *out,
                     pp_reference_info *info, const pp_ref_ctx *ctx, pp_error *err);
    const char *const *ref_methods;  // NULL-terminated; the first is the default
    // The sequence-position and head axes of output i, for the per-axis error statistics the
    // HTML report charts (src/core/axis_stats.h): sets *pos_dim and *head_dim to dimensions of the
    // output's shape, or -1 for an axis it lacks, and returns 1; returns 0 when the output has
    // neither. NULL: no output has. Attention, say: out [b, s, h, d] -> 1, 2; lse [b, h, s] -> 2, 1.
    int (*axes)(const pp_op_params *p, int output, int *pos_dim, int *head_dim);
    const pp_op_series_hooks *traced; // NULL for operations without per-step series

    // What generic code asks the row instead of naming a knob.
    // The world size W of a te-cp-rank view (src/core/view.h) over a variant's outputs when the
    // pair names none: its context-parallel ring size, 0 when the variant does not split the
    // sequence. NULL: no variant does. view_world_knob names the knob it reads, for messages.
    int (*view_world)(const pp_op_params *p, const pp_op_knobs *k);
    const char *view_world_knob;
    // The sequence-chunk map for the HTML report's chunk chart; NULL: none.
    const pp_seq_chunking *chunking;
    // What a report says beside a variant whose arithmetic is not ours to order (e.g. a vendor
    // library's reduction order), from its knob settings as text; NULL (or returning NULL): none.
    const char *(*vendor_note)(const pp_knob_setting *knobs, int n_knobs);
    // Whether the CPU emulation can run a variant with these knobs (0: a vendor path that runs
    // only on the GPU, so --cross-check has no emulation to compare with); NULL: every variant.
    int (*emulated)(const pp_op_knobs *k);
    // The axes of each input and output as letters, one per dimension in the row's order
    // (attention's q [b, s, h, d]: "bshd"), distinct within a tensor; NULL: the row names none.
    // A case may give a file holding a tensor in another order of these letters (layout =
    // "bhsd", src/core/layout.h): it is transposed into the row's order when read.
    const char *const *input_layouts;
    const char *const *output_layouts;
    // Range diagnostics (kernels/sites.h, ranges.h): the cells per site run_cpu notes into
    // (attention: heads; gemm: 1, the tensor; adamw: parameter blocks); NULL: the row records none.
    int64_t (*range_heads)(const pp_op_params *p);
    // The second reference of a variant with knobs k (pp_ref2_kind); NULL: none for any.
    int (*second_reference)(const pp_op_params *p, const pp_op_knobs *k);
    // PP_REF2_QUANTISED's reference: out[i] (binary64, allocated, data NULL when not wanted) the
    // exact result on the values variant k quantises in (the group's inputs) to, info[i] its method
    // and bound; as reference.
    int (*reference_quantised)(const pp_op_params *p, const pp_op_knobs *k, const pp_tensor *in, pp_tensor *out,
                               pp_reference_info *info, const pp_ref_ctx *ctx, pp_error *err);
    // 1: run_cuda notes them too, into the same pp_op_params.ranges (attention's, gemm's and
    // AdamW's GPU kernels: atomic notes, the CPU emulation's counters; kernels/ranges.h,
    // kernels/cuda/ranges_cuda.h); 0: the CPU emulation only.
    int range_cuda;
    // `precprobe explain` (pipeline/explain.h): the rounding sites of a variant that its CPU
    // emulation can make exact (bit s = kernels/sites.h's site s; pp_op_params.exact_sites);
    // NULL or 0: none.
    uint64_t (*explain_sites)(const pp_op_params *p, const pp_op_knobs *k);
    // Why variant knobs k offer explain no site (explain_sites 0) when the op has a reason to give
    // (a kernel it has not instrumented yet), one phrase; NULL: none (external, vendor, ...).
    const char *(*explain_none)(const pp_op_params *p, const pp_op_knobs *k);
};

// The operation named name, or NULL.
const pp_op *pp_op_find(const char *name);
// The number of operations and the i-th.
int pp_op_count(void);
const pp_op *pp_op_at(int i);

// Whether the CPU emulation can run a variant with knobs k (the row's emulated, else 1).
int pp_op_emulated(const pp_op *op, const pp_op_knobs *k);

// Index of the parameter / knob named name in op, or -1.
int pp_op_param_index(const pp_op *op, const char *name);
int pp_op_knob_index(const pp_op *op, const char *name);
// The stored value of a knob spelled value (index into values, or an integer knob's number), or
// -1 when not allowed. A storage-format knob (meanings pp_knob_formats) also takes the names
// pp_format_from_name knows ("bfloat16", "torch.float16").
int pp_knob_value_index(const pp_knob_def *knob, const char *value);
// The knob's allowed values joined with ", " into buf, or "an integer from A to B".
void pp_knob_values_str(const pp_knob_def *knob, char *buf, size_t n);
// The enum value a choice knob's stored value v stands for, looked up by the value's text in the
// knob's meanings; -1 when it has none (tests/test_op_knobs.c checks every value has one).
int pp_knob_id(const pp_knob_def *knob, int v);
// The text of stored value v ("fp32", "64").
void pp_knob_text(const pp_knob_def *knob, int v, char *buf, size_t n);
// The text of knob ki of variant knobs k, for every kind: pp_knob_text's, or a list knob's TOML
// spelling "[1.5, 300]" (each number %.17g). Returns the length snprintf would write.
int pp_knob_setting_text(const pp_knob_def *knob, const pp_op_knobs *k, int ki, char *buf, size_t n);
// Whether knob ki has the same value in a and b (a list knob: the same numbers, bit for bit).
int pp_knob_same(const pp_knob_def *knob, const pp_op_knobs *a, const pp_op_knobs *b, int ki);

// Parameter i's value (its default when not given); for PP_PARAM_CHOICE the choice's index.
double pp_op_param(const pp_op *op, const pp_op_params *p, const char *name);

// Index of name among a NULL-terminated list of choices, or -1; the list joined with ", ".
int pp_choice_index(const char *const *choices, const char *name);
void pp_choices_str(const char *const *choices, char *buf, size_t n);

// The value text of the knob named name among a variant's settings (a run's or a stored report's),
// or NULL.
const char *pp_knob_setting_value(const pp_knob_setting *knobs, int n_knobs, const char *name);

// The row's hooks with their defaults: the world of a te-cp-rank view over the pair of variants a
// and e (the larger of the two; 0 when the op's variants are not split), the vendor note of a
// variant (NULL: none), the chunk map of the operation named op_name (NULL: none).
int pp_op_view_world(const pp_op *op, const pp_op_params *p, const pp_op_knobs *a, const pp_op_knobs *e);
const char *pp_op_vendor_note(const pp_op *op, const pp_variant_result *vr);
const pp_seq_chunking *pp_op_chunking(const char *op_name);

// Format of output i under knobs k (output_format, else format).
pp_format_id pp_op_output_format(const pp_op *op, const pp_op_knobs *k, int i);
// Format of output i's values as the variant leaves them (saved_format, else output_format).
pp_format_id pp_op_saved_format(const pp_op *op, const pp_op_params *p, const pp_op_knobs *k, int i);
// Whether output i is active (output_active, else 1).
int pp_op_output_active(const pp_op *op, const pp_op_params *p, const pp_op_knobs *k, int i);

#endif
