#!/usr/bin/env bash
# junit.sh — CI gating in one place: `check --junit` writes one testcase per gate rule and per
# baseline statistic, its failures exactly the lines that made check exit 1; `run --junit`
# counts the failed gate rules that made run exit 1.   usage: tests/e2e/junit.sh [bin/precprobe]
set -u
cd "$(dirname "$0")/../.."
bin=${1:-bin/precprobe}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL junit: $*"; exit 1; }
"$bin" check tests/data/cases/quickstart-degraded.toml --baseline reports/baselines/quickstart.h5 \
    --allow-changed-case --junit "$tmp/check.xml" -q >"$tmp/out"; rc=$?
[ $rc = 1 ] || fail "check (degraded): exit $rc, want 1"
lines=$(grep -c ' -> ' "$tmp/out")
failures=$(grep -c '<failure ' "$tmp/check.xml")
[ "$lines" -gt 0 ] && [ "$lines" = "$failures" ] || fail "check printed $lines regressions, junit has $failures failures"
grep -q "failures=\"$failures\"" "$tmp/check.xml" || fail "check junit's failures count"
grep -q 'name="gate: baseline: fp16-fp32 c vs reference: max_ulp"' "$tmp/check.xml" || fail "check junit: no baseline testcase"
xmllint --noout "$tmp/check.xml" 2>/dev/null || ! command -v xmllint >/dev/null || fail "check junit is not XML"
"$bin" check cases/quickstart.toml --baseline reports/baselines/quickstart.h5 --junit "$tmp/pass.xml" -q >/dev/null ||
    fail "check (quickstart) failed"
grep -q 'failures="0"' "$tmp/pass.xml" || fail "a passing check's junit has failures"
"$bin" run tests/data/cases/gate_fails.toml --out "$tmp/run" --junit "$tmp/run.xml" -q >/dev/null; rc=$?
[ $rc = 1 ] || fail "run (gate fails): exit $rc, want 1"
grep -q '<testsuites name="precprobe" tests="[0-9]*" failures="1"' "$tmp/run.xml" || fail "run junit does not count the gate failure"
echo "ok   junit (check --junit: a testcase per rule and baseline statistic; run --junit counts gate failures)"
