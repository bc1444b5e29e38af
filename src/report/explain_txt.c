// explain_txt.c — explain's text tables (explain_txt.h).
#include "report/explain_txt.h"

#include <math.h>
#include <stdio.h>

// A statistic and its change from the variant as is, "0.0123 (-0.0456)"; the change is omitted
// when either is not a number.
static void stat_cell(pp_textbuf *b, double now, double was, int percent, int width)
{
    char cell[96];
    double k = percent ? 100.0 : 1.0;
    const char *unit = percent ? "%" : "";
    if (now == now && was == was && isfinite(now - was))
        snprintf(cell, sizeof cell, "%.4g%s (%+.3g%s)", now * k, unit, (now - was) * k, unit);
    else
        snprintf(cell, sizeof cell, "%.4g%s", now * k, unit);
    pp_tb_printf(b, " %*s", width, cell);
}

static void count_cell(pp_textbuf *b, int64_t now, int64_t was, int width)
{
    char cell[64];
    snprintf(cell, sizeof cell, "%lld (%+lld)", (long long)now, (long long)(now - was));
    pp_tb_printf(b, " %*s", width, cell);
}

static void stats_row(pp_textbuf *b, const char *label, const char *share, const pp_explain_stats *s,
                      const pp_explain_stats *was, const pp_explain_stats *alone)
{
    pp_tb_printf(b, "%-18s %7s", label, share);
    stat_cell(b, s->mismatch_fraction, was->mismatch_fraction, 1, 22);
    stat_cell(b, s->max_abs_error, was->max_abs_error, 0, 24);
    stat_cell(b, s->rms, was->rms, 0, 24);
    stat_cell(b, s->max_ulp, was->max_ulp, 0, 20);
    count_cell(b, s->nonfinite, was->nonfinite, 16);
    if (alone)
        pp_tb_printf(b, " %12.4g %7.4g%%", alone->rms, alone->mismatch_fraction * 100.0);
    pp_tb_str(b, "\n");
}

static void table(pp_textbuf *b, const char *variant, const pp_explain_table *t)
{
    pp_tb_printf(b, "\n== where the error comes from: %s %s vs %s ==\n", variant, t->tensor, t->against);
    pp_tb_printf(b, "%-18s %7s %22s %24s %24s %20s %16s %12s %8s\n", "site made exact", "share", "mismatch (change)",
                 "max error (change)", "rms (change)", "max ulp (change)", "NaN/Inf (change)", "alone: rms",
                 "mismatch");
    stats_row(b, "(none: as is)", "", &t->nominal, &t->nominal, NULL);
    for (int s = 0; s < t->n_sites; s++) {
        const pp_explain_site *x = &t->sites[s];
        char share[32];
        stats_row(b, x->name, pp_explain_percent(share, sizeof share, x->share), &x->exact, &t->nominal, &x->alone);
    }
    stats_row(b, "(every site)", "", &t->all_exact, &t->nominal, NULL);
    char pc[2][32];
    if (t->interaction == t->interaction)
        pp_tb_printf(b, "%-18s %7s  (1 - the shares' sum: the gains of one-at-a-time exactness do not add "
                        "up to every site's)\n", "interaction", pp_explain_percent(pc[0], sizeof pc[0], t->interaction));
    if (t->band_runs > 0) {
        pp_tb_printf(b, "share over %lld orders (least to greatest):", (long long)t->band_runs);
        for (int s = 0; s < t->n_sites; s++)
            pp_tb_printf(b, "%s %s %s to %s", s ? "," : "", t->sites[s].name,
                         pp_explain_percent(pc[0], sizeof pc[0], t->sites[s].share_band[0]),
                         pp_explain_percent(pc[1], sizeof pc[1], t->sites[s].share_band[1]));
        pp_tb_str(b, "\n");
    }
    pp_tb_str(b, "share: the fraction of the squared RMS error (as is minus every site exact) that making this "
                 "site alone exact removes; alone: every other site exact, this one the only rounding\n");
}

void pp_report_explain_text(pp_textbuf *b, const pp_run_result *r)
{
    for (int v = 0; v < r->n_variants; v++)
        for (int k = 0; k < r->variants[v].n_explain; k++)
            table(b, r->variants[v].name, &r->variants[v].explain[k]);
}
