// explain_result.c — ordering and freeing explain's tables (explain_result.h).
#include "core/explain_result.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The key: fewer NaN/Inf with the site exact first (the nominal count is the same for every site,
// so this is "more removed first"), then the larger share (NaN last), then the name.
static int site_cmp(const void *pa, const void *pb)
{
    const pp_explain_site *a = pa, *b = pb;
    if (a->exact.nonfinite != b->exact.nonfinite)
        return a->exact.nonfinite < b->exact.nonfinite ? -1 : 1;
    int na = a->share != a->share, nb = b->share != b->share;
    if (na != nb)
        return na - nb;
    if (!na && a->share != b->share)
        return a->share > b->share ? -1 : 1;
    return strcmp(a->name, b->name);
}

const char *pp_explain_percent(char *buf, size_t len, double share)
{
    double pc = share * 100.0;
    if (pc != pc)
        snprintf(buf, len, "-");
    else  // |pc| < 0.05 prints as ±0.0: the sign of a rounded zero says nothing
        snprintf(buf, len, "%.1f%%", fabs(pc) < 0.05 ? 0.0 : pc);
    return buf;
}

void pp_explain_sort(pp_explain_table *t)
{
    if (t->n_sites > 1)
        qsort(t->sites, (size_t)t->n_sites, sizeof t->sites[0], site_cmp);
}

void pp_explain_tables_free(pp_explain_table *t, int n)
{
    for (int i = 0; t && i < n; i++) {
        free(t[i].sites);
        t[i].sites = NULL;
        t[i].n_sites = 0;
    }
}
