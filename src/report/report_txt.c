// report_txt.c — the text report (see report_txt.h); torch's messages come from close_msg.c.
#include "report/report_txt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/repr.h"
#include "core/statistic.h"
#include "core/textbuf.h"
#include "pipeline/order_band.h"
#include "report/order_verdict.h"
#include "ops/op.h"
#include "report/ranges_txt.h"
#include "report/summary_row.h"

static void header(pp_textbuf *b, const pp_run_result *r)
{
    pp_tb_printf(b, "precprobe %s report\n", r->precprobe_version);
    pp_tb_printf(b, "case:      %s (op %s)\n", r->case_name, r->op);
    pp_tb_printf(b, "shapes:    %s\n", r->shapes ? r->shapes : "");
    pp_tb_printf(b, "device:    %s\n", r->device);
    pp_tb_printf(b, "seed:      %llu\n", (unsigned long long)r->seed);
    pp_tb_printf(b, "created:   %s\n", r->created_utc);
    for (int i = 0; i < r->n_references; i++) {
        char bound[PP_REPR_MAX];
        pp_repr_double(r->references[i].error_bound, bound, sizeof bound);
        pp_tb_printf(b, "reference: %s: %s, |error| <= %s\n", r->references[i].tensor, r->references[i].method, bound);
    }
    if (r->n_comparisons) {
        const pp_close_opts *o = &r->comparisons[0].opts;
        pp_tb_printf(b, "semantics: torch.testing.assert_close as in torch %d.%d%s\n", o->torch_major, o->torch_minor,
                  pp_close_uses_common_dtype(o) ? " (computed in the operands' common dtype)"
                                                : " (computed in float64)");
    }
    for (int v = 0; v < r->n_variants; v++) {
        const pp_variant_result *vr = &r->variants[v];
        pp_tb_printf(b, "variant:   %-24s", vr->name);
        for (int k = 0; k < vr->n_knobs; k++)
            pp_tb_printf(b, " %s=%s", vr->knobs[k].name, vr->knobs[k].value);
        const char *note = pp_op_vendor_note(pp_op_find(r->op), vr);
        pp_tb_printf(b, "%s%s%s\n", vr->external ? " (external: outputs read from files)" : "", note ? " " : "",
                  note ? note : "");
    }
}

static void comparisons(pp_textbuf *b, const pp_run_result *r)
{
    char msg[8192];
    for (int i = 0; i < r->n_comparisons; i++) {
        const pp_comparison *c = &r->comparisons[i];
        char rt[PP_REPR_MAX], at[PP_REPR_MAX];
        pp_repr_double(c->opts.rtol, rt, sizeof rt);
        pp_repr_double(c->opts.atol, at, sizeof at);
        pp_tb_printf(b, "\n== %s: %s vs %s (rtol %s, atol %s) ==\n", c->variant, c->tensor, c->against, rt, at);
        if (pp_close_message(&c->stats, &c->opts, c->ndim, c->shape, msg, sizeof msg) == 1)
            pp_tb_printf(b, "%s\n\n", msg);
        else
            pp_tb_printf(b, "close\n\n");
        // which inputs the exact result is on, after torch's message (which readers take verbatim)
        const char *label = pp_against_label(r, c);
        if (label)
            pp_tb_printf(b, "Expected:                     vs %s\n", label);
        if (pp_close_stats_text(&c->stats, &c->opts, c->ndim, c->shape, msg, sizeof msg) == 0)
            pp_tb_printf(b, "%s", msg);
    }
}

// A statistic's column heading, as the statistic table (src/core/statistic.h) names it.
static const char *heading(const char *statistic)
{
    return pp_statistic_find(statistic)->label;
}

static void summary(pp_textbuf *b, const pp_run_result *r)
{
    pp_tb_printf(b, "\n== summary ==\n");
    // the tensor column as wide as its longest name (groups: "cat(dq, dk, dv)@te-cp-rank:7")
    int tw = 6;
    for (int i = 0; i < r->n_comparisons; i++)
        if ((int)strlen(r->comparisons[i].tensor) > tw)
            tw = (int)strlen(r->comparisons[i].tensor);
    // torch's two numbers (0.0 for a close comparison), then what every element says: the true
    // max |error| and the ulps at the tensor's scale (per-element max ulp: report.txt's body)
    pp_tb_printf(b, "%-24s %-*s %-24s %9s %22s %22s %23s %10s %8s\n", "variant", tw, "tensor", "against",
                 heading("mismatch_fraction"), heading("max_abs_diff"), heading("max_rel_diff"),
                 heading("max_abs_error"), heading("max_ulp_at_scale"), "NaN/Inf");
    for (int i = 0; i < r->n_comparisons; i++) {
        const pp_comparison *c = &r->comparisons[i];
        pp_summary_row row = pp_summary_row_of_comparison(c);
        pp_tb_printf(b, "%-24s %-*s %-24s %*s %*s %*s %*s %*s %*s\n", c->variant, tw, c->tensor, c->against,
                     pp_summary_width(row.mismatch.text, 9), row.mismatch.text,
                     pp_summary_width(row.max_abs.text, 22), row.max_abs.text,
                     pp_summary_width(row.max_rel.text, 22), row.max_rel.text,
                     pp_summary_width(row.max_err.text, 23), row.max_err.text,
                     pp_summary_width(row.ulp_scale.text, 10), row.ulp_scale.text,
                     pp_summary_width(row.nonfinite.text, 8), row.nonfinite.text);
    }
    if (r->n_verdicts) {
        int failed = 0;
        pp_tb_printf(b, "\n== gate ==\n");
        for (int i = 0; i < r->n_verdicts; i++) {
            failed += !r->verdicts[i].passed;
            pp_tb_printf(b, "%s  %s: %s\n", r->verdicts[i].passed ? "PASS" : "FAIL", r->verdicts[i].rule,
                      r->verdicts[i].detail);
        }
        pp_tb_printf(b, "gate: %d of %d rules failed\n", failed, r->n_verdicts);
    }
}

// The value of series se at step t, or NaN when it has no point there.
static double series_at(const pp_series *se, double t)
{
    for (int64_t i = 0; i < se->length; i++)
        if (se->step[i] == t)
            return se->value[i];
    return NAN;
}

// Per-step series (iterative ops): each series at steps 1, 10, 100 and the last.
static void series_table(pp_textbuf *b, const pp_run_result *r)
{
    double last = 0;
    int any = 0;
    for (int v = 0; v < r->n_variants; v++)
        for (int i = 0; i < r->variants[v].n_series; i++) {
            const pp_series *se = &r->variants[v].series[i];
            any = 1;
            if (se->length > 0 && se->step[se->length - 1] > last)
                last = se->step[se->length - 1];
        }
    if (!any)
        return;
    double at[4] = {1, 10, 100, last};
    pp_tb_printf(b, "\n== per-step series ==\n%-24s %-22s", "variant", "series");
    for (int k = 0; k < 4; k++) {
        char h[32];
        snprintf(h, sizeof h, "step %.0f", at[k]);
        pp_tb_printf(b, " %12s", h);
    }
    pp_tb_printf(b, "\n");
    for (int v = 0; v < r->n_variants; v++)
        for (int i = 0; i < r->variants[v].n_series; i++) {
            const pp_series *se = &r->variants[v].series[i];
            pp_tb_printf(b, "%-24s %-22s", r->variants[v].name, se->name);
            for (int k = 0; k < 4; k++) {
                double x = series_at(se, at[k]);
                if (x != x)
                    pp_tb_printf(b, " %12s", "-");
                else
                    pp_tb_printf(b, " %12.4g", x);
            }
            pp_tb_printf(b, "\n");
        }
}

// ---------------------------------------------------------------------------------------------
// --orders: each banded figure as "nominal (min–max)", and whether the [compare] pairs' conclusions
// survive the orders

static int stat_index(const char *name)
{
    for (int k = 0; k < pp_statistic_count(); k++)
        if (!strcmp(pp_statistic_at(k)->name, name))
            return k;
    return -1;
}

// "62.1% (61.83–62.42%)" for a fraction (the band one digit finer than the figure: orders move
// a mismatch by hundredths of a percent), "0.0019 (0.00098–0.0020)" otherwise.
static void band_cell(const pp_comparison *c, int k, const pp_close_stats *s, int percent, char *buf, size_t n)
{
    double x = pp_statistic_at(k)->value(s);
    const double *b = c->band[k];
    if (percent)
        snprintf(buf, n, "%.1f%% (%.2f–%.2f%%)", 100.0 * x, 100.0 * b[0], 100.0 * b[2]);
    else
        snprintf(buf, n, "%.4g (%.4g–%.4g)", x, b[0], b[2]);
}

static void order_bands(pp_textbuf *b, const pp_run_result *r)
{
    int runs = 0, km = stat_index("mismatch_fraction"), ke = stat_index("max_abs_error");
    for (int i = 0; i < r->n_comparisons; i++)
        if (r->comparisons[i].band_runs > runs)
            runs = r->comparisons[i].band_runs;
    if (!runs || km < 0 || ke < 0)
        return;
    pp_tb_printf(b, "\n== order band (nominal, min-max over %d runs: the nominal order and %d others) ==\n", runs,
                 runs - 1);
    pp_tb_printf(b, "%-24s %-30s %-24s %-26s %s\n", "variant", "tensor", "against", "mismatch", "max error");
    for (int i = 0; i < r->n_comparisons; i++) {
        const pp_comparison *c = &r->comparisons[i];
        if (!c->band_runs || c->n_band_stats <= km || c->n_band_stats <= ke)
            continue;
        char m[96], e[96];
        band_cell(c, km, &c->stats, 1, m, sizeof m);
        band_cell(c, ke, &c->stats, 0, e, sizeof e);
        pp_tb_printf(b, "%-24s %-30s %-24s %-26s %s\n", c->variant, c->tensor, c->against, m, e);
    }
    // two variants against the same other variant and tensor (the [compare] pairs): is the one's
    // mismatch below the other's under every order, or do the bands overlap?
    for (int i = 0; i < r->n_comparisons; i++)
        for (int j = i + 1; j < r->n_comparisons; j++) {
            const pp_comparison *x = &r->comparisons[i], *y = &r->comparisons[j];
            if (!x->band_runs || !y->band_runs || x->n_band_stats <= km || y->n_band_stats <= km ||
                !strcmp(x->against, "reference") || strcmp(x->against, y->against) || strcmp(x->tensor, y->tensor) ||
                !strcmp(x->variant, y->variant))
                continue;
            char mx[96], my[96];
            band_cell(x, km, &x->stats, 1, mx, sizeof mx);
            band_cell(y, km, &y->stats, 1, my, sizeof my);
            int robust = !pp_band_overlap(x->band[km], y->band[km]);
            pp_tb_printf(b, "order: %s vs %s, %s against %s: mismatch %s vs %s: %s\n", x->variant, y->variant,
                         x->tensor, x->against, mx, my, robust ? "robust to order" : "not robust to order");
        }
}

// --orders: the verdict on every statistic for every pair of banded comparisons of one tensor
// against the same expected tensor, the reference included (report/order_verdict.h)
static void order_verdict(void *ctx, int k, const pp_comparison *x, const pp_comparison *y)
{
    pp_textbuf *b = ctx;
    if (!k)
        pp_tb_printf(b, "\n== order verdict (per pair, each statistic: which variant is closer, and whether "
                        "under every order; lower is closer) ==\n");
    pp_tb_str(b, "verdict: ");
    pp_order_verdict_line(b, x, y);
    pp_tb_str(b, "\n");
}

static void order_verdicts(pp_textbuf *b, const pp_run_result *r)
{
    pp_order_verdict_each(r, order_verdict, b);
}

char *pp_report_text(const pp_run_result *r)
{
    pp_textbuf b = {0};
    header(&b, r);
    comparisons(&b, r);
    series_table(&b, r);
    summary(&b, r);
    order_bands(&b, r);
    order_verdicts(&b, r);
    pp_report_ranges_text(&b, r, 1);
    return pp_tb_take(&b);
}

char *pp_report_summary(const pp_run_result *r)
{
    pp_textbuf b = {0};
    summary(&b, r);
    order_bands(&b, r);
    pp_report_ranges_text(&b, r, 0);
    return pp_tb_take(&b);
}
