#!/usr/bin/env bash
# cache_shared.sh — one reference cache for several processes (issue 19): two real processes
# run the same case at once on an empty cache (each both needs and may compute every
# reference): both succeed with the same report, and the cache holds one valid entry per
# reference and no temporary file. Then an entry with one byte flipped, and one truncated, are
# recomputed (said on stderr) and replaced, never trusted: the report stays the same.
# usage: tests/e2e/cache_shared.sh [bin]
set -u
cd "$(dirname "$0")/../.."
bin=${1:-bin/precprobe}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cache=$tmp/cache
fails=0
fail() { echo "FAIL cache_shared: $*"; fails=$((fails + 1)); }
same=tests/e2e/same_report.sh
run() {  # out, extra args...
    local out=$1; shift
    "$bin" run cases/te-cp-small.toml -q --device cpu --cache "$cache" --out "$out" "$@"
}
run "$tmp/a" >/dev/null 2>"$tmp/a.err" & pa=$!
run "$tmp/b" >/dev/null 2>"$tmp/b.err" & pb=$!
wait $pa; ra=$?; wait $pb; rb=$?
[ $ra -le 1 ] && [ $rb -le 1 ] || fail "concurrent runs: exit $ra and $rb: $(cat "$tmp/a.err" "$tmp/b.err")"
[ ! -s "$tmp/a.err" ] && [ ! -s "$tmp/b.err" ] || fail "concurrent runs complained: $(cat "$tmp/a.err" "$tmp/b.err")"
bash "$same" "$tmp/a" "$tmp/b" || fail "the two concurrent runs differ"
entries=$(find "$cache" -name '*.h5' | wc -l)
stray=$(find "$cache" -type f ! -name '*.h5' ! -name '*.lock' | wc -l)
[ "$entries" -ge 1 ] || fail "no cache entry"
[ "$stray" = 0 ] || fail "$stray temporary files left: $(find "$cache" -type f ! -name '*.h5' ! -name '*.lock')"
# a hit leaves the entries as they are and says nothing
before=$(cd "$cache" && sha256sum ./*.h5)
run "$tmp/c" >/dev/null 2>"$tmp/c.err" || [ $? = 1 ] || fail "cached run"
[ ! -s "$tmp/c.err" ] || fail "cached run complained: $(cat "$tmp/c.err")"
[ "$before" = "$(cd "$cache" && sha256sum ./*.h5)" ] || fail "a cached run rewrote entries"
bash "$same" "$tmp/a" "$tmp/c" || fail "the cached run differs"
# one byte flipped in the middle of an entry: recomputed and replaced
e=$(find "$cache" -name '*.h5' | sort | head -1)
size=$(stat -c %s "$e")
byte=$(od -An -tu1 -j $((size / 2)) -N1 "$e" | tr -d ' ')
printf "$(printf '\\%03o' $((byte ^ 255)))" | dd of="$e" bs=1 seek=$((size / 2)) conv=notrunc status=none
run "$tmp/d" >/dev/null 2>"$tmp/d.err" || [ $? = 1 ] || fail "run over a damaged entry"
grep -q "reference cache entry ignored (.*damaged.*); recomputing" "$tmp/d.err" ||
    fail "a damaged entry went unnoticed: $(cat "$tmp/d.err")"
bash "$same" "$tmp/a" "$tmp/d" || fail "the run over a damaged entry differs"
run "$tmp/d2" >/dev/null 2>"$tmp/d2.err" || [ $? = 1 ] || fail "run after the repair"
[ ! -s "$tmp/d2.err" ] || fail "the replaced entry is not valid: $(cat "$tmp/d2.err")"
# truncated to half: recomputed and replaced
truncate -s $((size / 2)) "$e"
run "$tmp/e" >/dev/null 2>"$tmp/e.err" || [ $? = 1 ] || fail "run over a truncated entry"
grep -q "reference cache entry ignored (.*); recomputing" "$tmp/e.err" || fail "a truncated entry went unnoticed"
bash "$same" "$tmp/a" "$tmp/e" || fail "the run over a truncated entry differs"
run "$tmp/f" >/dev/null 2>"$tmp/f.err" || [ $? = 1 ] || fail "run after the repair"
[ ! -s "$tmp/f.err" ] || fail "the repaired entry is not valid: $(cat "$tmp/f.err")"
[ $fails = 0 ] && echo "ok   cache_shared: 2 concurrent writers, $entries entries, damaged and truncated entries replaced"
[ $fails = 0 ]
