#!/usr/bin/env bash
# same_report.sh — whether two report folders (report.txt, report.h5, and report.html when both
# have one) hold the same run: every report.h5 dataset and attribute (h5dump, values printed
# exactly with %a: hexadecimal binary64) but the root attribute created_utc, report.txt but its
# "created:" line, the HTML but its creation time. Used by shards.sh, parallel.sh and slurm.sh
# to say "merge == unsharded run".
# usage: tests/e2e/same_report.sh DIR_A DIR_B   (exit 0 same; 1 different, the difference printed)
set -u
a=$1; b=$2
# h5dump's text of a report with the created_utc attribute block removed; -m %a prints every
# floating-point value as its exact hexadecimal form, so a difference in the last bit shows
dump() {
    h5dump -m '%a' "$1" | sed 1d | awk '
        /ATTRIBUTE "created_utc"/ { skip = 1; depth = 0 }
        skip { depth += gsub(/\{/, "{"); depth -= gsub(/\}/, "}"); if (depth <= 0 && /\}/) skip = 0; next }
        { print }'
}
ok=0
if ! diff <(dump "$a/report.h5") <(dump "$b/report.h5") >/tmp/same_report.$$ 2>&1; then
    echo "report.h5 differs ($a, $b):"; head -20 /tmp/same_report.$$; ok=1
fi
rm -f /tmp/same_report.$$
if ! diff <(sed '/^created:/d' "$a/report.txt") <(sed '/^created:/d' "$b/report.txt") >/dev/null; then
    echo "report.txt differs ($a, $b):"; diff <(sed '/^created:/d' "$a/report.txt") <(sed '/^created:/d' "$b/report.txt") | head -20; ok=1
fi
if [ -f "$a/report.html" ] && [ -f "$b/report.html" ]; then
    stamp='s/[0-9]\{4\}-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z/CREATED/g'
    if ! cmp -s <(sed "$stamp" "$a/report.html") <(sed "$stamp" "$b/report.html"); then
        echo "report.html differs ($a, $b)"; ok=1
    fi
fi
exit $ok
