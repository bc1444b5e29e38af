// sweep_html.h — a sweep's HTML page: per statistic and compared tensor, line charts of the
// statistic against each swept numeric key, one line per variant (and per value of the other
// keys), the order band as error bars where the run had --orders. Self-contained like report.html.
#ifndef PP_SWEEP_HTML_H
#define PP_SWEEP_HTML_H

#include "report/sweep_result.h"

// The page, malloc'd (NULL when out of memory).
char *pp_sweep_report_html(const pp_sweep_result *res);

#endif
