// report_junit.h — junit.xml for CI systems: one testsuite per run, one testcase per comparison
// and one per gate verdict. Only gate verdicts fail: a mismatch is a measurement, which the
// testcase carries as <system-out>; whether it matters is the gate's decision.
#ifndef PP_REPORT_JUNIT_H
#define PP_REPORT_JUNIT_H

#include "error.h"
#include "core/results.h"

// Writes r as JUnit XML (UTF-8) at path, atomically (temporary file, then rename):
//   <testsuites><testsuite name=CASE> with properties op, device, seed, precprobe_version,
//   created_utc; per comparison i a <testcase classname="precprobe.CASE"
//   name="VARIANT.TENSOR vs AGAINST"> whose <system-out> holds torch's message (or a line saying
//   all elements are close) and pp_close_stats_text; per verdict a <testcase name="gate: RULE">
//   with <failure message="gate rule failed" type="gate">DETAIL</failure> when not passed, the
//   detail as <system-out> when passed. Every text is escaped; bytes that are not valid UTF-8
//   become U+FFFD, control characters XML cannot hold "\xHH".
// @param [in] messages  NULL, or r->n_comparisons strings: torch's message of comparison i
//                       ("" when close); NULL entries (or messages NULL) are computed with
//                       pp_close_message.
// Returns PP_OK, or PP_ERR_RUNTIME (out of memory, the write failed; no file is left behind and
// an existing one is unchanged).
int pp_report_junit_write(const char *path, const pp_run_result *r, const char *const *messages,
                          pp_error *err);

#endif
