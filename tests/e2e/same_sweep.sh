#!/usr/bin/env bash
# same_sweep.sh — whether two output folders of a [sweep] run hold the same sweep: its report.txt
# but the line naming the output folder, sweep.h5 (h5dump, values in hexadecimal) and report.html
# byte for byte, the same points, and each point's reports (tests/e2e/same_report.sh).
# usage: tests/e2e/same_sweep.sh DIR_A DIR_B   (exit 0 same; 1 different, what differs printed)
set -u
a=$1; b=$2; ok=0
diff <(sed '/^each point.s own reports:/d; /^created/d' "$a/report.txt") \
     <(sed '/^each point.s own reports:/d; /^created/d' "$b/report.txt") >/dev/null || { echo "report.txt differs"; ok=1; }
diff <(h5dump -m '%a' "$a/sweep.h5" | sed 1d) <(h5dump -m '%a' "$b/sweep.h5" | sed 1d) >/dev/null ||
    { echo "sweep.h5 differs"; ok=1; }
cmp -s "$a/report.html" "$b/report.html" || { echo "report.html differs"; ok=1; }
[ "$(ls "$a/points" 2>/dev/null)" = "$(ls "$b/points" 2>/dev/null)" ] || { echo "other points"; ok=1; }
for d in "$a"/points/*; do
    bash "$(dirname "$0")/same_report.sh" "$d" "$b/points/$(basename "$d")" || ok=1
done
exit $ok
