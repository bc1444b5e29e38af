// order_verdict.c — the order band's verdict in words (order_verdict.h).
#include "report/order_verdict.h"

#include "core/statistic.h"
#include "pipeline/order_band.h"

// The groups of a line, in the order it prints them.
enum { A_ROBUST, A_LOOSE, B_ROBUST, B_LOOSE, EQUAL_ALWAYS, EQUAL_NOMINAL, UNDECIDED, N_GROUPS };

static int group_of(const pp_comparison *a, const pp_comparison *b, int k)
{
    const pp_statistic *st = pp_statistic_at(k);
    double x = st->value(&a->stats), y = st->value(&b->stats);
    const double *bx = a->band[k], *by = b->band[k];
    switch (pp_order_verdict_of(x, bx, y, by)) {
    case PP_ORDER_LOWER_ROBUST: return A_ROBUST;
    case PP_ORDER_LOWER: return A_LOOSE;
    case PP_ORDER_HIGHER_ROBUST: return B_ROBUST;
    case PP_ORDER_HIGHER: return B_LOOSE;
    case PP_ORDER_EQUAL:  // equal under every order only when both bands are that one value
        return bx[0] == x && bx[2] == x && by[0] == x && by[2] == x ? EQUAL_ALWAYS : EQUAL_NOMINAL;
    default: return UNDECIDED;
    }
}

void pp_order_verdict_line(pp_textbuf *b, const pp_comparison *a, const pp_comparison *c)
{
    pp_tb_printf(b, "%s vs %s, %s against %s: ", a->variant, c->variant, a->tensor, a->against);
    int ns = a->n_band_stats < pp_statistic_count() ? a->n_band_stats : pp_statistic_count(), groups = 0;
    for (int g = 0; g < N_GROUPS; g++) {
        int n = 0;
        for (int k = 0; k < ns; k++) {
            if (group_of(a, c, k) != g)
                continue;
            if (!n++) {
                const char *who = g == A_ROBUST || g == A_LOOSE ? a->variant : c->variant;
                if (groups++)
                    pp_tb_str(b, "; ");
                if (g <= B_LOOSE)
                    pp_tb_printf(b, "%s closer, %s: ", who,
                                 g == A_ROBUST || g == B_ROBUST ? "robust to order" : "not robust to order");
                else
                    pp_tb_str(b, g == EQUAL_ALWAYS    ? "equal under every order: "
                                 : g == EQUAL_NOMINAL ? "equal nominally, not under every order: "
                                                      : "undecided (NaN): ");
            } else {
                pp_tb_str(b, ", ");
            }
            pp_tb_str(b, pp_statistic_at(k)->name);
        }
    }
}

int pp_order_verdict_each(const pp_run_result *r, pp_order_verdict_fn *fn, void *ctx)
{
    int n = 0;
    for (int i = 0; i < r->n_comparisons; i++)
        for (int j = i + 1; j < r->n_comparisons; j++)
            if (pp_order_pair(&r->comparisons[i], &r->comparisons[j]))
                fn(ctx, n++, &r->comparisons[i], &r->comparisons[j]);
    return n;
}
