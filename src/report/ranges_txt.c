// ranges_txt.c — the range diagnostics in text (see ranges_txt.h).
#include "report/ranges_txt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// Words

typedef enum { FIND_OVERFLOW = 0, FIND_NAN, FIND_UNDERFLOW, FIND_HEADROOM, FIND_COUNT } finding;

// The headroom finding's threshold: at least 1 value in 10 within a factor 2 of the format's
// largest (a saturating FP8 cast clamps there; a non-saturating one is one doubling from Inf).
// A per-tensor scale from the current amax leaves a few values in 100 there (the shipped FP8
// cases: 2–5%), a stale one far more (fp8-te-stale-dp's dS8: 38%); block scalings (mx, nvfp4) put
// each block's largest there by design, so their quantisation rows are usually named.
#define PP_HEADROOM_SHARE 10

static int64_t cell_count(const pp_range_cell *c, finding f)
{
    if (f == FIND_HEADROOM)
        return c->near_max > 0 && c->near_max * PP_HEADROOM_SHARE >= c->count ? c->near_max : 0;
    return f == FIND_OVERFLOW ? c->overflow : f == FIND_NAN ? c->nan : c->underflow;
}

// "head 3", "heads 2, 3", "kv heads 0, 1", "blocks 0, 4, …" for the cells with finding f; ""
// for a one-cell (tensor) row.
static void heads_phrase(const pp_range_row *row, finding f, char *buf, size_t n)
{
    buf[0] = '\0';
    if (!strcmp(row->axis, "tensor"))
        return;
    int listed = 0, k = 0;
    for (int64_t h = 0; h < row->heads; h++)
        k += cell_count(&row->cells[h], f) > 0;
    const char *word = !strcmp(row->axis, "kv_head") ? "kv head" : row->axis;
    size_t len = (size_t)snprintf(buf, n, " in %s%s ", word, k == 1 ? "" : "s");
    for (int64_t h = 0; h < row->heads && len < n; h++) {
        if (cell_count(&row->cells[h], f) <= 0)
            continue;
        if (listed == 8) {
            len += (size_t)snprintf(buf + len, n - len, ", … (%d in all)", k);
            break;
        }
        len += (size_t)snprintf(buf + len, n - len, "%s%lld", listed ? ", " : "", (long long)h);
        listed++;
    }
}

static void words(pp_textbuf *b, const char *r_op, const pp_variant_result *vr)
{
    const pp_variant_ranges *vg = &vr->ranges;
    if (!vg->recorded) {
        pp_tb_printf(b, "%s: no range diagnostics (%s)\n", vr->name, vg->note[0] ? vg->note : "none recorded");
        return;
    }
    static const char *const verb[FIND_COUNT] = {"overflows to ±Inf", "holds NaN", "flushes non-zero values to zero",
                                                 "lies within a factor 2 of its format's largest"};
    int any[FIND_COUNT] = {0, 0, 0, 0};
    for (int f = 0; f < FIND_COUNT; f++)
        for (int i = 0; i < vg->n_rows; i++) {
            pp_range_cell t = pp_range_row_total(&vg->rows[i]);
            int64_t k = cell_count(&t, (finding)f);
            if (k <= 0)
                continue;
            any[f] = 1;
            char heads[256];
            heads_phrase(&vg->rows[i], (finding)f, heads, sizeof heads);
            int s = pp_site_find(r_op, vg->rows[i].site);
            const char *v = f == FIND_UNDERFLOW && s >= 0 && pp_site_get(s)->underflow ? pp_site_get(s)->underflow : verb[f];
            pp_tb_printf(b, "%s: %s %s%s (%lld of %lld values, %s)\n", vr->name, vg->rows[i].site, v, heads,
                         (long long)k, (long long)t.count, vg->rows[i].format);
        }
    if (!any[FIND_OVERFLOW] && !any[FIND_NAN])
        pp_tb_printf(b, "%s: no overflow and no NaN at any site\n", vr->name);
    else if (!any[FIND_OVERFLOW])
        pp_tb_printf(b, "%s: no overflow at any site\n", vr->name);
    else if (!any[FIND_NAN])
        pp_tb_printf(b, "%s: no NaN at any site\n", vr->name);
}

// ---------------------------------------------------------------------------------------------
// Table

// 0 overflow, 1 NaN, 2 underflow, 3 nothing to say: the order rows are printed in.
static int row_rank(const pp_range_cell *t)
{
    return t->overflow ? 0 : t->nan ? 1 : t->underflow ? 2 : 3;
}

static void num(double x, char *buf, size_t n)
{
    if (isinf(x))
        snprintf(buf, n, "%s", x > 0 ? "inf" : "-inf");
    else
        snprintf(buf, n, "%.6g", x);
}

static void table(pp_textbuf *b, const pp_run_result *r)
{
    pp_tb_printf(b, "\n%-24s %-14s %-6s %12s %9s %9s %9s %9s %9s %8s %13s %13s\n", "variant", "site", "format", "values",
                 "overflow", "inf", "nan", "underflow", "subnormal", "headroom", "amax", "min |x|>0");
    for (int rank = 0; rank < 4; rank++)
        for (int v = 0; v < r->n_variants; v++) {
            const pp_variant_ranges *vg = &r->variants[v].ranges;
            for (int i = 0; vg->recorded && i < vg->n_rows; i++) {
                pp_range_cell t = pp_range_row_total(&vg->rows[i]);
                if (row_rank(&t) != rank)
                    continue;
                char amax[32], mn[32], head[32];
                num(t.amax, amax, sizeof amax);
                num(t.min_nz, mn, sizeof mn);
                snprintf(head, sizeof head, "%.2f%%", t.count ? 100.0 * (double)t.near_max / (double)t.count : 0.0);
                pp_tb_printf(b, "%-24s %-14s %-6s %12lld %9lld %9lld %9lld %9lld %9lld %8s %13s %13s\n",
                             r->variants[v].name, vg->rows[i].site, vg->rows[i].format, (long long)t.count,
                             (long long)t.overflow, (long long)t.inf, (long long)t.nan, (long long)t.underflow,
                             (long long)t.subnormal, head, amax, mn);
                if (t.clamped)
                    pp_tb_printf(b, "%-24s %-14s %lld scale%s at the format's limits\n", "", "", (long long)t.clamped,
                                 t.clamped == 1 ? "" : "s");
            }
        }
    pp_tb_printf(b, "(headroom: the share of values within a factor 2 of the format's largest; per-head values in "
                    "report.h5 /variants/V/ranges/SITE)\n");
}

void pp_report_ranges_text(pp_textbuf *b, const pp_run_result *r, int with_table)
{
    int any = 0, recorded = 0;
    for (int v = 0; v < r->n_variants; v++) {
        any |= r->variants[v].ranges.recorded || r->variants[v].ranges.note[0];
        recorded |= r->variants[v].ranges.recorded;
    }
    if (!any)
        return;
    pp_tb_printf(b, "\n== range diagnostics (rounding sites: kernels/sites.h) ==\n");
    for (int v = 0; v < r->n_variants; v++)
        words(b, r->op, &r->variants[v]);
    if (with_table && recorded)
        table(b, r);
}
