#!/usr/bin/env bash
# parallel.sh — the README's GNU parallel one-liner (issue 19): te-cp-small, then the tiny sweep
# fixture (10 points), each sharded 4 ways, the shards run by GNU parallel two at a time sharing
# one reference cache, merged; the merge is the unsharded run (same_sweep.sh for the sweep) (tests/e2e/same_report.sh: report.h5 bit for bit, report.txt, HTML, but the
# creation time). Skips, saying why, where GNU parallel is missing (make deps installs it).
# usage: tests/e2e/parallel.sh [bin]
set -u
cd "$(dirname "$0")/../.."
bin=${1:-bin/precprobe}
if ! parallel --version 2>/dev/null | grep -q 'GNU parallel'; then
    echo "parallel.sh: skipped: GNU parallel not installed (make deps installs Debian's 'parallel')"
    exit 0
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export PRECPROBE_CACHE="$tmp/cache"
fail() { echo "FAIL parallel: $*"; exit 1; }
case_file=cases/${PARALLEL_CASE:-te-cp-small}.toml
"$bin" run "$case_file" -q --device cpu --out "$tmp/full" --html "$tmp/full/report.html" >/dev/null 2>&1
[ $? -le 1 ] || fail "unsharded run"
rm -rf "$PRECPROBE_CACHE"  # the shards compute the references themselves, sharing them
out=$tmp/out
# the README's one-liner, with this binary, the CPU and two jobs at a time on 2 cores
parallel --will-cite --halt now,fail=1 -j2 "$bin" run "$case_file" --device cpu --shard {}/4 -o "$out/shard-{}" -q ::: 1 2 3 4 \
    >"$tmp/parallel.log" 2>&1 || fail "a shard failed: $(cat "$tmp/parallel.log")"
"$bin" merge "$out"/shard-{1..4} --out "$out/merged" --html "$out/merged/report.html" >/dev/null 2>"$tmp/err"
[ $? -le 1 ] || fail "merge: $(cat "$tmp/err")"
bash tests/e2e/same_report.sh "$tmp/full" "$out/merged" || fail "merge of 4 shards under GNU parallel is not the unsharded run"
echo "ok   parallel: $case_file in 4 shards under GNU parallel == the unsharded run"
# a sweep (tests/data/cases/sweep/tiny.toml, 10 points), sharded 4 ways the same way
sweep=tests/data/cases/sweep/tiny.toml
"$bin" run "$sweep" -q --device cpu -o "$tmp/sweep-full" >/dev/null 2>&1; [ $? -le 1 ] || fail "unsharded sweep run"
rm -rf "$PRECPROBE_CACHE"
parallel --will-cite --halt now,fail=1 -j2 "$bin" run "$sweep" --device cpu --shard {}/4 -o "$tmp/sweep/shard-{}" -q ::: 1 2 3 4 \
    >"$tmp/parallel.log" 2>&1 || fail "a sweep shard failed: $(cat "$tmp/parallel.log")"
"$bin" merge "$tmp"/sweep/shard-{1..4} --out "$tmp/sweep/merged" >/dev/null 2>"$tmp/err"
[ $? -le 1 ] || fail "sweep merge: $(cat "$tmp/err")"
bash tests/e2e/same_sweep.sh "$tmp/sweep-full" "$tmp/sweep/merged" || fail "the sweep in 4 shards under GNU parallel is not the unsharded sweep"
echo "ok   parallel: $sweep (a sweep) in 4 shards under GNU parallel == the unsharded sweep"
