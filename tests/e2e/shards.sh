#!/usr/bin/env bash
# shards.sh — `run --shard I/N` and `merge` (issue 19): for every shipped small case of make test
# and N in 1, 2, 4, the merge of the N partials (run in reverse order, sharing one reference
# cache) is the unsharded run: report.h5's every dataset and attribute bit for bit, report.txt and
# the HTML, but the creation time (tests/e2e/same_report.sh). Then what merge refuses (exit 2,
# and what it says): a missing shard (named), partials of two cases, of two run options, a shard
# given twice with different results; and what it accepts: a shard given twice with the same.
# usage: tests/e2e/shards.sh [bin]
set -u
cd "$(dirname "$0")/../.."
bin=${1:-bin/precprobe}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export PRECPROBE_CACHE="$tmp/cache"
fails=0
fail() { echo "FAIL shards: $*"; fails=$((fails + 1)); }
same=tests/e2e/same_report.sh

cases="${SHARDS_CASES:-quickstart bloom-prescale fp8-gemm external-gemm adamw-small bf16-training-small te-cp-small glm-softmax
       bloom-prescale-attn external-attention fp8-attention}"
for c in $cases; do
    full=$tmp/$c/full
    "$bin" run "cases/$c.toml" -q --device cpu --out "$full" --html "$full/report.html" >/dev/null 2>"$tmp/err"
    [ $? -le 1 ] || { fail "$c: unsharded run: $(cat "$tmp/err")"; continue; }
    for n in 1 2 4; do
        parts=()
        for i in $(seq "$n" -1 1); do  # any order
            "$bin" run "cases/$c.toml" -q --device cpu --shard "$i/$n" -o "$tmp/$c/$n/s$i" >/dev/null 2>"$tmp/err" ||
                fail "$c: shard $i/$n: $(cat "$tmp/err")"
            parts+=("$tmp/$c/$n/s$i")
        done
        m=$tmp/$c/$n/merged
        "$bin" merge "${parts[@]}" --out "$m" --html "$m/report.html" >/dev/null 2>"$tmp/err"
        [ $? -le 1 ] || { fail "$c: merge of $n: $(cat "$tmp/err")"; continue; }
        bash "$same" "$full" "$m" || fail "$c: merge of $n shards is not the unsharded run"
    done
    echo "ok   shards $c (N = 1, 2, 4)"
done
# --save-tensors: the kept inputs, references and outputs come from their owners too
for c in quickstart te-cp-small fp8-attention; do  # fp8-attention: fp8 = te keeps binary64 outputs
    full=$tmp/save-$c/full
    "$bin" run "cases/$c.toml" -q --device cpu --save-tensors --out "$full" >/dev/null 2>&1
    [ $? -le 1 ] || { fail "$c: --save-tensors run"; continue; }
    for i in 1 2 3; do
        "$bin" run "cases/$c.toml" -q --device cpu --save-tensors --shard "$i/3" -o "$tmp/save-$c/s$i" >/dev/null 2>&1 ||
            fail "$c: --save-tensors shard $i/3"
    done
    "$bin" merge "$tmp/save-$c"/s{1,2,3} --out "$tmp/save-$c/merged" >/dev/null 2>&1
    [ $? -le 1 ] || fail "$c: merge of --save-tensors shards"
    h5dump -n "$tmp/save-$c/merged/report.h5" | grep -q 'dataset */reference/' || fail "$c: no tensors kept in the merge"
    bash "$same" "$full" "$tmp/save-$c/merged" || fail "$c: --save-tensors merge of 3 shards is not the unsharded run"
done
echo "ok   shards --save-tensors (quickstart, te-cp-small, fp8-attention; N = 3)"
# the comparison can fail: two different runs are not the same
bash "$same" "$tmp/quickstart/full" "$tmp/save-quickstart/full" >/dev/null && fail "same_report.sh cannot tell two runs apart"

# refusals, each exit 2 with its reason
expect2() {  # what, grep pattern, merge arguments...
    local what=$1 pat=$2; shift 2
    "$bin" merge "$@" --out "$tmp/refused" >/dev/null 2>"$tmp/err"; local rc=$?
    [ $rc = 2 ] || fail "$what: exit $rc, want 2"
    grep -q -- "$pat" "$tmp/err" || fail "$what: message '$(cat "$tmp/err")' lacks '$pat'"
    [ ! -e "$tmp/refused/report.txt" ] || fail "$what: wrote a report"
}
q=$tmp/quickstart/4
expect2 "missing shards" "2 of 4 shards missing: 2/4, 4/4" "$q/s1" "$q/s3"
"$bin" run cases/bloom-prescale.toml -q --device cpu --shard 2/4 -o "$tmp/bloom-s2" >/dev/null 2>&1 || fail "bloom shard"
expect2 "two cases" "are shards of different runs" "$q/s1" "$tmp/bloom-s2" "$q/s3" "$q/s4"
expect2 "two shard counts" "one run is cut one way" "$q/s1" "$tmp/quickstart/2/s2"
"$bin" run cases/quickstart.toml -q --device cpu --shard 2/4 --reference mpfr-plain -o "$tmp/other-ref" >/dev/null 2>&1 ||
    fail "shard with --reference mpfr-plain"
expect2 "two run options" "are shards of different runs" "$q/s1" "$tmp/other-ref" "$q/s3" "$q/s4"
expect2 "--save-tensors and not" "are shards of different runs" "$tmp/save-quickstart/s1" "$tmp/quickstart/2/s2"
expect2 "not a partial" "not a readable partial result" "$q/s1" "$tmp/quickstart/full/report.h5"
expect2 "no partial" "no partial result here" "$q/s1" "$tmp/nowhere"
# a shard given twice: the same results are accepted, different ones refused. The external
# variant's files change between two runs of shard 1/1 (same case text, so the same identity).
"$bin" merge "$q/s1" "$q/s2" "$q/s2" "$q/s3" "$q/s4" --out "$tmp/dup" >/dev/null 2>"$tmp/err" ||
    fail "a shard given twice with the same results: $(cat "$tmp/err")"
bash "$same" "$tmp/quickstart/full" "$tmp/dup" >/dev/null || fail "merge with a duplicate is not the run"
mkdir -p "$tmp/ext"
cp cases/external-gemm.toml "$tmp/ext/"
cp -r cases/external "$tmp/ext/"
"$bin" run "$tmp/ext/external-gemm.toml" -q --device cpu --shard 1/1 -o "$tmp/ext/a" >/dev/null 2>&1 || fail "ext shard a"
# one bit of the dump's last value flipped (the low byte of its last little-endian element)
f=$tmp/ext/external/gemm_dump.safetensors
size=$(stat -c %s "$f")
byte=$(od -An -tu1 -j $((size - 2)) -N1 "$f" | tr -d ' ')
printf "$(printf '\\%03o' $((byte ^ 1)))" | dd of="$f" bs=1 seek=$((size - 2)) conv=notrunc status=none
"$bin" run "$tmp/ext/external-gemm.toml" -q --device cpu --shard 1/1 -o "$tmp/ext/b" >/dev/null 2>&1 || fail "ext shard b"
expect2 "a shard twice, different results" "shard 1/1 is given twice with different results" "$tmp/ext/a" "$tmp/ext/b"
# usage errors
"$bin" run cases/quickstart.toml --shard 5/4 -q >/dev/null 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "need 1 <= I <= N" "$tmp/err" || fail "--shard 5/4: exit $rc, $(cat "$tmp/err")"
"$bin" run cases/quickstart.toml --shard 1/2 --html "$tmp/x.html" -q >/dev/null 2>"$tmp/err"; rc=$?
[ $rc = 2 ] || fail "--shard with --html: exit $rc"
"$bin" merge --out "$tmp/x" >/dev/null 2>&1; [ $? = 2 ] || fail "merge without partials"
[ $fails = 0 ] && echo "ok   shards: refusals and duplicates"
[ $fails = 0 ]
