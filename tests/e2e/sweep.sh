#!/usr/bin/env bash
# sweep.sh — `precprobe run` of a [sweep] case (tests/data/cases/sweep/tiny.toml, 10 points in
# under a second): every point's reports in OUT/points/NAME/, the sweep's report.txt exactly as
# expected, sweep.h5 and a well-formed report.html with charts; a point's statistics equal to a
# plain case of the same values; the same report.txt on a second run; --orders' bands.
# usage: tests/e2e/sweep.sh [bin/precprobe]
set -u
cd "$(dirname "$0")/../.."
bin=${1:-bin/precprobe}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL sweep: $*"; fail=1; }
sweep=tests/data/cases/sweep/tiny.toml
out=build/e2e/sweep
rm -rf "$out" build/e2e/sweep2
"$bin" run "$sweep" -o "$out" --device cpu -q --no-cache >"$tmp/out" 2>"$tmp/err" || no "run exit $?"
cmp -s "$tmp/out" tests/e2e/expected/sweep_run.out || { no "stdout differs"; diff tests/e2e/expected/sweep_run.out "$tmp/out" | head; }
cmp -s "$tmp/err" tests/e2e/expected/sweep_run.err || { no "stderr differs"; diff tests/e2e/expected/sweep_run.err "$tmp/err" | head; }
cmp -s "$out/report.txt" tests/e2e/expected/sweep_report.txt ||
    { no "report.txt differs"; diff tests/e2e/expected/sweep_report.txt "$out/report.txt" | head; }
n=$(ls "$out/points" | wc -l)
[ "$n" = 10 ] || no "$n point folders, want 10"
for d in "$out"/points/*; do
    [ -s "$d/report.txt" ] && [ -s "$d/report.h5" ] || no "$d lacks its reports"
done
[ -s "$out/sweep.h5" ] || no "no sweep.h5"
if command -v xmllint >/dev/null; then
    xmllint --noout "$out/report.html" || no "report.html is not well-formed"
fi
[ "$(grep -o '<svg' "$out/report.html" | wc -l)" -ge 12 ] || no "report.html has too few charts"
! grep -q 'http' "$out/report.html" || no "report.html names a URL"
# a point is the case of its values: the same statistics as a plain case written by hand
sed -e '/^\[sweep\]/,/^seed = \[1, 2\]/d' -e 's/^seed = 3/seed = 2/' -e 's/^\[op\]/[op]\ns = 64/' \
    -e 's/^cp_flavour = "te-2024"/cp_flavour = "te-2024"\ncp_world = 4/' \
    -e 's/^cp_flavour = "pr-821"/cp_flavour = "pr-821"\ncp_world = 4/' "$sweep" >"$tmp/point.toml"
"$bin" run "$tmp/point.toml" --out "$tmp/plain" --device cpu -q --no-cache >/dev/null 2>&1 || no "plain point case failed"
grep -v '^created:' "$tmp/plain/report.txt" >"$tmp/plain.txt"
grep -v '^created:' "$out/points/s=64,cp_world=4,seed=2/report.txt" >"$tmp/point.txt"
cmp -s "$tmp/plain.txt" "$tmp/point.txt" || { no "point s=64,cp_world=4,seed=2 differs from its plain case"; diff "$tmp/plain.txt" "$tmp/point.txt" | head; }
# determinism: a second run, the same table
"$bin" run "$sweep" -o build/e2e/sweep2 --device cpu -q --no-cache >/dev/null 2>&1 || no "second run failed"
sed 's#build/e2e/sweep2/#build/e2e/sweep/#' build/e2e/sweep2/report.txt | cmp -s - "$out/report.txt" || no "second run's report.txt differs"
# --orders: each cell with its band, the charts with error bars
"$bin" run "$sweep" -o "$tmp/orders" --device cpu -q --no-cache --orders 2 >/dev/null 2>&1 || no "--orders run failed"
grep -q '% \[.*%, .*%\]' "$tmp/orders/report.txt" || no "--orders: no band in report.txt"
[ $fail = 0 ] && echo "ok   sweep (run, report.txt, sweep.h5, report.html, point = plain case, determinism, --orders)"
exit $fail
