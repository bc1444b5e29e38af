// merge_same.c — two partials of one shard compared bit for bit (merge_same.h).
#include "pipeline/merge_same.h"

#include <stdio.h>
#include <string.h>

static int same_f64(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

static int same_f64s(const double *a, const double *b, int64_t n)
{
    return n <= 0 || (a && b && memcmp(a, b, sizeof *a * (size_t)n) == 0);
}

static int same_max(const pp_close_max *a, const pp_close_max *b)
{
    return same_f64(a->value, b->value) && a->index == b->index && same_f64(a->actual, b->actual) &&
           same_f64(a->expected, b->expected);
}

static int same_sum(const pp_exactsum *a, const pp_exactsum *b)
{
    return !memcmp(a->limb, b->limb, sizeof a->limb) && a->n_pinf == b->n_pinf && a->n_ninf == b->n_ninf &&
           a->n_nan == b->n_nan;
}

static int same_stats(const pp_close_stats *a, const pp_close_stats *b)
{
    return a->numel == b->numel && a->mismatched == b->mismatched && same_max(&a->abs_diff, &b->abs_diff) &&
           same_max(&a->rel_diff, &b->rel_diff) && same_max(&a->tol_ratio, &b->tol_ratio) &&
           same_max(&a->ulp_err, &b->ulp_err) && same_max(&a->abs_err, &b->abs_err) &&
           same_f64(a->ulp_scale, b->ulp_scale) && a->n_finite == b->n_finite && same_sum(&a->sum_abs, &b->sum_abs) &&
           same_sum(&a->sum_sq, &b->sum_sq) && a->nan_actual == b->nan_actual && a->inf_actual == b->inf_actual &&
           a->nan_expected == b->nan_expected && a->inf_expected == b->inf_expected &&
           !memcmp(a->ulp_hist, b->ulp_hist, sizeof a->ulp_hist);
}

static int same_opts(const pp_close_opts *a, const pp_close_opts *b)
{
    return same_f64(a->rtol, b->rtol) && same_f64(a->atol, b->atol) && a->equal_nan == b->equal_nan &&
           a->torch_major == b->torch_major && a->torch_minor == b->torch_minor &&
           a->actual_format == b->actual_format && a->expected_format == b->expected_format;
}

static int same_axes(const pp_axis_stats *a, const pp_axis_stats *b)
{
    return a->n_pos == b->n_pos && a->n_heads == b->n_heads && a->block == b->block && a->n_blocks == b->n_blocks &&
           a->pos_dim == b->pos_dim && a->head_dim == b->head_dim && same_f64s(a->pos_max, b->pos_max, a->n_pos) &&
           same_f64s(a->pos_mean, b->pos_mean, a->n_pos) &&
           same_f64s(a->head_block_max, b->head_block_max, a->n_heads * a->n_blocks);
}

static int same_comparison(const pp_comparison *a, const pp_comparison *b)
{
    if (strcmp(a->variant, b->variant) || strcmp(a->tensor, b->tensor) || strcmp(a->against, b->against) ||
        a->ndim != b->ndim || memcmp(a->shape, b->shape, sizeof *a->shape * (size_t)a->ndim))
        return 0;
    if (!same_opts(&a->opts, &b->opts) || !same_stats(&a->stats, &b->stats) || !same_axes(&a->axes, &b->axes))
        return 0;
    if (a->band_runs != b->band_runs || a->n_band_stats != b->n_band_stats)
        return 0;
    for (int k = 0; k < a->n_band_stats && k < PP_BAND_MAX_STATS; k++)
        for (int j = 0; j < 3; j++)
            if (!same_f64(a->band[k][j], b->band[k][j]))
                return 0;
    return 1;
}

static int same_series(const pp_variant_result *a, const pp_variant_result *b)
{
    if (a->n_series != b->n_series)
        return 0;
    for (int i = 0; i < a->n_series; i++) {
        const pp_series *x = &a->series[i], *y = &b->series[i];
        if (strcmp(x->name, y->name) || x->length != y->length || !same_f64s(x->step, y->step, x->length) ||
            !same_f64s(x->value, y->value, x->length))
            return 0;
    }
    return 1;
}

static int same_tensor(const pp_tensor *a, const pp_tensor *b)
{
    if (!a->data || !b->data)
        return !a->data && !b->data;
    return a->format == b->format && a->ndim == b->ndim && a->numel == b->numel &&
           !memcmp(a->shape, b->shape, sizeof *a->shape * (size_t)a->ndim) && same_f64s(a->data, b->data, a->numel);
}

// The kept tensors (--save-tensors), bit for bit.
static int same_tensors(const pp_partial *a, const pp_partial *b)
{
    if (a->save_tensors != b->save_tensors || a->n_outs != b->n_outs)
        return 0;
    for (int k = 0; k < PP_MAX_OP_TENSORS; k++) {
        if (!same_tensor(&a->inputs[k], &b->inputs[k]))
            return 0;
        for (int g = 0; g < PP_FMT_COUNT; g++)
            if (!same_tensor(&a->refs[g][k], &b->refs[g][k]))
                return 0;
        for (int v = 0; v < a->n_outs; v++)
            if (!same_tensor(&a->outs[v][k], &b->outs[v][k]))
                return 0;
    }
    return 1;
}

int pp_partial_same_results(const pp_partial *a, const pp_partial *b, char *why, size_t why_n)
{
    snprintf(why, why_n, "%s", "");
    if (a->n_tasks != b->n_tasks || memcmp(a->owned, b->owned, (size_t)a->n_tasks)) {
        snprintf(why, why_n, "they own different tasks");
        return 0;
    }
    if (a->r.n_comparisons != b->r.n_comparisons) {
        snprintf(why, why_n, "%d comparisons against %d", a->r.n_comparisons, b->r.n_comparisons);
        return 0;
    }
    for (int i = 0; i < a->r.n_comparisons; i++)
        if (a->cmp_task[i] != b->cmp_task[i] || !same_comparison(&a->r.comparisons[i], &b->r.comparisons[i])) {
            const pp_comparison *c = &a->r.comparisons[i];
            snprintf(why, why_n, "comparison %s.%s against %s differs", c->variant, c->tensor, c->against);
            return 0;
        }
    for (int g = 0; g < a->n_groups && g < PP_FMT_COUNT; g++)
        for (int t = 0; t < PP_MAX_OP_TENSORS; t++) {
            const pp_reference_info *x = &a->ref_info[g][t], *y = &b->ref_info[g][t];
            if (strcmp(x->method, y->method) || strcmp(x->tensor, y->tensor) || !same_f64(x->error_bound, y->error_bound)) {
                snprintf(why, why_n, "the reference of output %s differs", x->tensor[0] ? x->tensor : y->tensor);
                return 0;
            }
        }
    if (a->r.n_variants != b->r.n_variants) {
        snprintf(why, why_n, "%d variants against %d", a->r.n_variants, b->r.n_variants);
        return 0;
    }
    for (int v = 0; v < a->r.n_variants; v++)
        if (!same_series(&a->r.variants[v], &b->r.variants[v])) {
            snprintf(why, why_n, "variant %s's series differ", a->r.variants[v].name);
            return 0;
        }
    if (!same_tensors(a, b)) {
        snprintf(why, why_n, "the kept tensors differ");
        return 0;
    }
    return 1;
}
