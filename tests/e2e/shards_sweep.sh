#!/usr/bin/env bash
# shards_sweep.sh — `run --shard I/N` and `merge` of a case with [sweep] (issue 19): the tiny
# sweep fixture (tests/data/cases/sweep/tiny.toml, 10 points) cut into N = 1, 2, 4 shards (run in
# reverse order, one shared reference cache) and merged is the unsharded sweep run: every point's
# report.h5 (every dataset and attribute), report.txt and HTML but the creation time
# (same_report.sh), the sweep's sweep.h5 (h5dump, values in hexadecimal) and report.html byte for
# byte, its report.txt but the line naming the output folder. Then merge's refusals: a missing
# shard (named), shards of two different sweeps.
# usage: tests/e2e/shards_sweep.sh [bin]
set -u
cd "$(dirname "$0")/../.."
bin=${1:-bin/precprobe}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export PRECPROBE_CACHE="$tmp/cache"
fails=0
fail() { echo "FAIL shards_sweep: $*"; fails=$((fails + 1)); }
sweep=tests/data/cases/sweep/tiny.toml
same_sweep() { bash tests/e2e/same_sweep.sh "$@"; }
"$bin" run "$sweep" -o "$tmp/full" --device cpu -q >/dev/null 2>&1; [ $? -le 1 ] || fail "unsharded sweep run"
for n in 1 2 4; do
    parts=()
    for i in $(seq "$n" -1 1); do
        "$bin" run "$sweep" --device cpu -q --shard "$i/$n" -o "$tmp/$n/s$i" >/dev/null 2>"$tmp/err" ||
            fail "shard $i/$n: $(cat "$tmp/err")"
        parts+=("$tmp/$n/s$i")
    done
    "$bin" merge "${parts[@]}" --out "$tmp/$n/merged" >/dev/null 2>"$tmp/err"
    [ $? -le 1 ] || { fail "merge of $n: $(cat "$tmp/err")"; continue; }
    same_sweep "$tmp/full" "$tmp/$n/merged" || fail "merge of $n sweep shards is not the unsharded sweep"
done
same_sweep "$tmp/full" "$tmp/4/s1" >/dev/null 2>&1 && fail "same_sweep cannot tell a merge from a shard"
"$bin" merge "$tmp/4/s1" "$tmp/4/s3" --out "$tmp/refused" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "2 of 4 shards missing: 2/4, 4/4" "$tmp/err" || fail "missing sweep shards: exit $rc, $(cat "$tmp/err")"
mkdir -p "$tmp/other"
sed 's/^seed = \[1, 2\]/seed = [1, 3]/' "$sweep" > "$tmp/other/tiny.toml"
cmp -s "$sweep" "$tmp/other/tiny.toml" && fail "the other sweep is the same sweep (fixture changed?)"
"$bin" run "$tmp/other/tiny.toml" --device cpu -q --shard 2/2 -o "$tmp/other/s2" >/dev/null 2>&1 || fail "other sweep's shard"
"$bin" merge "$tmp/2/s1" "$tmp/other/s2" --out "$tmp/refused" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "are shards of different sweeps" "$tmp/err" || fail "two sweeps: exit $rc, $(cat "$tmp/err")"
[ ! -e "$tmp/refused/report.txt" ] || fail "a refused merge wrote a report"
[ $fails = 0 ] && echo "ok   shards_sweep: the tiny sweep in 1, 2, 4 shards == the unsharded sweep; refusals"
[ $fails = 0 ]
