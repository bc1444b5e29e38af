// gate.c — the case's absolute gate rules, and the baseline comparison.
#include "pipeline/gate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/repr.h"
#include "core/statistic.h"

int pp_glob_match(const char *pattern, const char *name)
{
    if (*pattern == '\0')
        return *name == '\0';
    if (*pattern == '*')
        return pp_glob_match(pattern + 1, name) || (*name && pp_glob_match(pattern, name + 1));
    return *pattern == *name && pp_glob_match(pattern + 1, name + 1);
}

int pp_add_verdict(pp_run_result *r, const char *rule, int passed, const char *detail)
{
    pp_gate_verdict *grown = realloc(r->verdicts, (size_t)(r->n_verdicts + 1) * sizeof *grown);
    if (!grown)
        return -1;
    r->verdicts = grown;
    pp_gate_verdict *v = &r->verdicts[r->n_verdicts++];
    memset(v, 0, sizeof *v);
    snprintf(v->rule, sizeof v->rule, "%s", rule);
    v->passed = passed;
    snprintf(v->detail, sizeof v->detail, "%s", detail);
    return 0;
}

// A value is within [min, max] only when it is a number: NaN fails every bound.
static int within(const pp_gate_rule *rule, double x)
{
    if (x != x)
        return 0;
    return (!rule->has_min || x >= rule->min) && (!rule->has_max || x <= rule->max);
}

// A rule's statistic of cmp: its nominal value, or for "<stat>_band_max" the band's max (the
// nominal value when the run has no band: one order).
static double rule_value(const char *stat, const pp_comparison *cmp)
{
    int k = pp_statistic_band_max(stat);
    if (k < 0)
        return pp_statistic_value(stat, &cmp->stats);
    if (cmp->band_runs && k < cmp->n_band_stats)
        return cmp->band[k][2];
    return pp_statistic_at(k)->value(&cmp->stats);
}

int pp_gate_evaluate(const pp_case *c, pp_run_result *r)
{
    free(r->verdicts);
    r->verdicts = NULL;
    r->n_verdicts = 0;
    int failed = 0;
    for (int i = 0; i < c->n_rules; i++) {
        const pp_gate_rule *rule = &c->rules[i];
        char text[256], bound[96] = "", lo[PP_REPR_MAX], hi[PP_REPR_MAX], detail[512];
        pp_repr_double(rule->min, lo, sizeof lo);
        pp_repr_double(rule->max, hi, sizeof hi);
        if (rule->has_min && rule->has_max)
            snprintf(bound, sizeof bound, "in [%s, %s]", lo, hi);
        else if (rule->has_min)
            snprintf(bound, sizeof bound, ">= %s", lo);
        else
            snprintf(bound, sizeof bound, "<= %s", hi);
        snprintf(text, sizeof text, "%s %s", rule->text, bound);
        int matched = 0, bad = 0;
        snprintf(detail, sizeof detail, "holds");
        for (int k = 0; k < r->n_comparisons; k++) {
            const pp_comparison *cmp = &r->comparisons[k];
            if (!pp_glob_match(rule->variant, cmp->variant) || !pp_glob_match(rule->tensor, cmp->tensor) ||
                !pp_glob_match(rule->against, cmp->against))
                continue;
            matched++;
            double x = rule_value(rule->stat, cmp);
            if (!within(rule, x) && !bad++) {
                char xs[PP_REPR_MAX];
                pp_repr_double(x, xs, sizeof xs);
                snprintf(detail, sizeof detail, "%s %s vs %s: %s = %s, want %s", cmp->variant, cmp->tensor,
                         cmp->against, rule->stat, xs, bound);
            }
        }
        if (!matched) {
            bad = 1;
            snprintf(detail, sizeof detail, "the rule matches no comparison (line %d)", rule->line);
        } else if (bad > 1) {
            size_t at = strlen(detail);
            snprintf(detail + at, sizeof detail - at, " (and %d more)", bad - 1);
        }
        failed += bad > 0;
        if (pp_add_verdict(r, text, !bad, detail))
            return -1;
    }
    return failed;
}

int pp_gate_rules_recorded(const pp_case *c, const pp_run_result *r, const char *report, pp_error *err)
{
    for (int i = 0; i < c->n_rules; i++) {
        const pp_gate_rule *rule = &c->rules[i];
        int k = pp_statistic_band_max(rule->stat);
        if (k < 0)
            k = (int)(pp_statistic_find(rule->stat) - pp_statistic_at(0));
        for (int j = 0; j < r->n_comparisons; j++) {
            const pp_comparison *cmp = &r->comparisons[j];
            if (!pp_glob_match(rule->variant, cmp->variant) || !pp_glob_match(rule->tensor, cmp->tensor) ||
                !pp_glob_match(rule->against, cmp->against) || pp_statistic_recorded(cmp, k))
                continue;
            return pp_fail(err, PP_ERR_INPUT,
                           "%s: gate rule '%s' (%s:%d) names %s, which this report did not record for %s %s vs "
                           "%s (it was written before the statistic existed): run the case again to measure it",
                           report, rule->text, c->path, rule->line, pp_statistic_at(k)->name, cmp->variant,
                           cmp->tensor, cmp->against);
        }
    }
    return PP_OK;
}

int pp_gate_baseline(const pp_slack *slack, pp_run_result *now, const pp_run_result *base)
{
    int regressions = 0;
    for (int i = 0; i < base->n_comparisons; i++) {
        const pp_comparison *b = &base->comparisons[i];
        const pp_comparison *n = pp_run_result_find(now, b->variant, b->tensor, b->against);
        char rule[256], detail[512];
        snprintf(rule, sizeof rule, "baseline: %s %s vs %s", b->variant, b->tensor, b->against);
        if (!n) {
            snprintf(detail, sizeof detail, "%s %s vs %s: in the baseline, missing from this run", b->variant,
                     b->tensor, b->against);
            regressions++;
            if (pp_add_verdict(now, rule, 0, detail))
                return -1;
            continue;
        }
        static const char *const stats[] = {"mismatch_fraction", "max_abs_diff", "max_rel_diff", "max_ulp"};
        for (int s = 0; s < 4; s++) {
            double was = pp_statistic_value(stats[s], &b->stats), is = pp_statistic_value(stats[s], &n->stats);
            double allowed = s == 0 ? was + slack->mismatch_fraction
                           : s == 1 ? was * slack->max_abs_diff
                           : s == 2 ? was * slack->max_rel_diff
                                    : was + slack->max_ulp;
            // Worse: above the allowance, or NaN where the baseline had a number.
            int worse = (is != is && was == was) || is > allowed;
            char ws[PP_REPR_MAX], is_s[PP_REPR_MAX], as[PP_REPR_MAX];
            pp_repr_double(was, ws, sizeof ws);
            pp_repr_double(is, is_s, sizeof is_s);
            pp_repr_double(allowed, as, sizeof as);
            snprintf(detail, sizeof detail, "%s %s vs %s: %s %s -> %s (allowed up to %s)", b->variant, b->tensor,
                     b->against, stats[s], ws, is_s, as);
            char srule[300];
            snprintf(srule, sizeof srule, "%s: %s", rule, stats[s]);
            regressions += worse;
            if (pp_add_verdict(now, srule, !worse, detail))
                return -1;
        }
    }
    return regressions;
}

int pp_gate_epoch_note(const char *baseline, int64_t base_epoch, int64_t now_epoch, char *buf, size_t n)
{
    if (n)
        buf[0] = '\0';
    if (base_epoch == now_epoch)
        return 0;
    char was[96];
    if (base_epoch == 0)
        snprintf(was, sizeof was, "records no reference epoch (written before reports recorded one)");
    else
        snprintf(was, sizeof was, "was written at reference epoch %lld", (long long)base_epoch);
    snprintf(buf, n,
             "note: %s %s; this build is at epoch %lld. A new epoch changes references or generated inputs "
             "(reports/README.md lists what each epoch changed), so statistics can move "
             "through that alone: if that is why, regenerate the baseline",
             baseline, was, (long long)now_epoch);
    return 1;
}
