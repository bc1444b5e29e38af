// gate.h — the gate: the case's absolute rules on a run's comparisons, and `precprobe check`'s
// comparison with a committed baseline report, statistic by statistic, with the case's slack.
// Every rule and every regression is one verdict line. Statistics are named as in
// src/core/statistic.h.
#ifndef PP_GATE_H
#define PP_GATE_H

#include "pipeline/case.h"
#include "core/results.h"

// Evaluates the case's absolute gate rules on r's comparisons, replacing r's verdicts with one
// per rule (a stored report's verdicts are recomputed from the case's rules, not trusted).
// Returns the number of failed rules, or -1 when out of memory.
int pp_gate_evaluate(const pp_case *c, pp_run_result *r);

// Refuses (PP_ERR_INPUT, "REPORT: gate rule ... names STAT, which this report did not record ...")
// a gate rule of c whose statistic a comparison it matches in r did not record: r was read from
// report (a report.h5 written before the statistic existed), where its value would read as a
// made-up 0 and the rule would pass. PP_OK otherwise (always for a run's own result).
int pp_gate_rules_recorded(const pp_case *c, const pp_run_result *r, const char *report, pp_error *err);

// Shell-style match of name against pattern, where '*' matches any run of characters.
int pp_glob_match(const char *pattern, const char *name);

// Appends to now's verdicts one verdict per comparison and statistic checked against base
// (mismatch_fraction + slack, max_abs_diff and max_rel_diff × slack, max_ulp + slack; a
// comparison missing from now is a regression). Returns the number of regressions, -1 when
// out of memory.
int pp_gate_baseline(const pp_slack *slack, pp_run_result *now, const pp_run_result *base);

// The note a failed check adds when the baseline was made at another reference epoch than this
// build's (PP_REF_EPOCH, src/pipeline/ref_cache.h: bumped when a reference's arithmetic or a
// generated input's definition changes, so statistics can move through that alone): one line,
// no newline, into buf (n bytes). base_epoch 0: the baseline records none (written before reports
// recorded it). Returns 1 when there is a note, 0 (buf empty) when the epochs agree.
int pp_gate_epoch_note(const char *baseline, int64_t base_epoch, int64_t now_epoch, char *buf, size_t n);

// Appends a verdict to r; returns 0, or -1 when out of memory.
int pp_add_verdict(pp_run_result *r, const char *rule, int passed, const char *detail);

#endif
