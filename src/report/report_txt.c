// report_txt.c — the text report (see report_txt.h); torch's messages come from close_msg.c.
#include "report/report_txt.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/repr.h"
#include "core/statistic.h"
#include "ops/op.h"

typedef struct strbuf {
    char *s;
    size_t len, cap;
    int oom;
} strbuf;

__attribute__((format(printf, 2, 3))) static void sb_printf(strbuf *b, const char *fmt, ...)
{
    if (b->oom)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = 1;
            return;
        }
        if (b->s && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap : 4096;
        while (cap <= b->len + (size_t)n)
            cap *= 2;
        char *grown = realloc(b->s, cap);
        if (!grown) {
            b->oom = 1;
            return;
        }
        b->s = grown;
        b->cap = cap;
    }
}

static char *sb_finish(strbuf *b)
{
    if (b->oom) {
        free(b->s);
        return NULL;
    }
    if (!b->s)
        return strdup("");
    return b->s;
}

static void header(strbuf *b, const pp_run_result *r)
{
    sb_printf(b, "precprobe %s report\n", r->precprobe_version);
    sb_printf(b, "case:      %s (op %s)\n", r->case_name, r->op);
    sb_printf(b, "shapes:    %s\n", r->shapes ? r->shapes : "");
    sb_printf(b, "device:    %s\n", r->device);
    sb_printf(b, "seed:      %llu\n", (unsigned long long)r->seed);
    sb_printf(b, "created:   %s\n", r->created_utc);
    for (int i = 0; i < r->n_references; i++) {
        char bound[PP_REPR_MAX];
        pp_repr_double(r->references[i].error_bound, bound, sizeof bound);
        sb_printf(b, "reference: %s: %s, |error| <= %s\n", r->references[i].tensor, r->references[i].method, bound);
    }
    if (r->n_comparisons) {
        const pp_close_opts *o = &r->comparisons[0].opts;
        sb_printf(b, "semantics: torch.testing.assert_close as in torch %d.%d%s\n", o->torch_major, o->torch_minor,
                  pp_close_uses_common_dtype(o) ? " (computed in the operands' common dtype)"
                                                : " (computed in float64)");
    }
    for (int v = 0; v < r->n_variants; v++) {
        const pp_variant_result *vr = &r->variants[v];
        sb_printf(b, "variant:   %-24s", vr->name);
        for (int k = 0; k < vr->n_knobs; k++)
            sb_printf(b, " %s=%s", vr->knobs[k].name, vr->knobs[k].value);
        const char *note = pp_op_vendor_note(pp_op_find(r->op), vr);
        sb_printf(b, "%s%s%s\n", vr->external ? " (external: outputs read from files)" : "", note ? " " : "",
                  note ? note : "");
    }
}

static void comparisons(strbuf *b, const pp_run_result *r)
{
    char msg[8192];
    for (int i = 0; i < r->n_comparisons; i++) {
        const pp_comparison *c = &r->comparisons[i];
        char rt[PP_REPR_MAX], at[PP_REPR_MAX];
        pp_repr_double(c->opts.rtol, rt, sizeof rt);
        pp_repr_double(c->opts.atol, at, sizeof at);
        sb_printf(b, "\n== %s: %s vs %s (rtol %s, atol %s) ==\n", c->variant, c->tensor, c->against, rt, at);
        if (pp_close_message(&c->stats, &c->opts, c->ndim, c->shape, msg, sizeof msg) == 1)
            sb_printf(b, "%s\n\n", msg);
        else
            sb_printf(b, "close\n\n");
        if (pp_close_stats_text(&c->stats, &c->opts, c->ndim, c->shape, msg, sizeof msg) == 0)
            sb_printf(b, "%s", msg);
    }
}

// A statistic's column heading, as the statistic table (src/core/statistic.h) names it.
static const char *heading(const char *statistic)
{
    return pp_statistic_find(statistic)->label;
}

static void summary(strbuf *b, const pp_run_result *r)
{
    sb_printf(b, "\n== summary ==\n");
    // the tensor column as wide as its longest name (groups: "cat(dq, dk, dv)@te-cp-rank:7")
    int tw = 6;
    for (int i = 0; i < r->n_comparisons; i++)
        if ((int)strlen(r->comparisons[i].tensor) > tw)
            tw = (int)strlen(r->comparisons[i].tensor);
    sb_printf(b, "%-24s %-*s %-24s %9s %22s %22s %10s %8s\n", "variant", tw, "tensor", "against",
              heading("mismatch_fraction"), heading("max_abs_diff"), heading("max_rel_diff"), heading("max_ulp"),
              "NaN/Inf");
    for (int i = 0; i < r->n_comparisons; i++) {
        const pp_comparison *c = &r->comparisons[i];
        const pp_close_stats *s = &c->stats;
        char pct[32], ma[PP_REPR_MAX] = "0.0", mr[PP_REPR_MAX] = "0.0", mu[32] = "0";
        if (pp_format_percent((double)s->mismatched, (double)s->numel, pct, sizeof pct) < 0)
            snprintf(pct, sizeof pct, "-");
        if (s->abs_diff.index >= 0)
            pp_repr_double(s->abs_diff.value, ma, sizeof ma);
        if (s->rel_diff.index >= 0)
            pp_repr_double(s->rel_diff.value, mr, sizeof mr);
        if (s->ulp_err.index >= 0)
            snprintf(mu, sizeof mu, "%.4g", s->ulp_err.value);
        sb_printf(b, "%-24s %-*s %-24s %9s %22s %22s %10s %8lld\n", c->variant, tw, c->tensor, c->against, pct, ma,
                  mr, mu, (long long)(s->nan_actual + s->inf_actual));
    }
    if (r->n_verdicts) {
        int failed = 0;
        sb_printf(b, "\n== gate ==\n");
        for (int i = 0; i < r->n_verdicts; i++) {
            failed += !r->verdicts[i].passed;
            sb_printf(b, "%s  %s: %s\n", r->verdicts[i].passed ? "PASS" : "FAIL", r->verdicts[i].rule,
                      r->verdicts[i].detail);
        }
        sb_printf(b, "gate: %d of %d rules failed\n", failed, r->n_verdicts);
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
static void series_table(strbuf *b, const pp_run_result *r)
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
    sb_printf(b, "\n== per-step series ==\n%-24s %-22s", "variant", "series");
    for (int k = 0; k < 4; k++) {
        char h[32];
        snprintf(h, sizeof h, "step %.0f", at[k]);
        sb_printf(b, " %12s", h);
    }
    sb_printf(b, "\n");
    for (int v = 0; v < r->n_variants; v++)
        for (int i = 0; i < r->variants[v].n_series; i++) {
            const pp_series *se = &r->variants[v].series[i];
            sb_printf(b, "%-24s %-22s", r->variants[v].name, se->name);
            for (int k = 0; k < 4; k++) {
                double x = series_at(se, at[k]);
                if (x != x)
                    sb_printf(b, " %12s", "-");
                else
                    sb_printf(b, " %12.4g", x);
            }
            sb_printf(b, "\n");
        }
}

char *pp_report_text(const pp_run_result *r)
{
    strbuf b = {0};
    header(&b, r);
    comparisons(&b, r);
    series_table(&b, r);
    summary(&b, r);
    return sb_finish(&b);
}

char *pp_report_summary(const pp_run_result *r)
{
    strbuf b = {0};
    summary(&b, r);
    return sb_finish(&b);
}
