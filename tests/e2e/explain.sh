#!/usr/bin/env bash
# explain.sh — `precprobe explain` (issue 18, attribution) end to end: the known answers (te-cp-small
# cp-bf16acc against non-cp: the CP merge sites carry most of the difference; bloom-prescale
# post-storage: the accumulation site carries the Inf), report.h5's /variants/V/explain read back
# by show to the same text, the HTML chart, and bad requests (exit 2).   usage: tests/e2e/explain.sh [bin]
set -u
cd "$(dirname "$0")/../.."
bin=${1:-bin/precprobe}
fail() { echo "FAIL explain: $*"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# te-cp-small: the out table's first row is the out merge, and the CP merge sites (the merge's
# accumulator and the ring steps' partials) carry more than half of the difference; the
# gradients': both CP accumulators among the first three sites
"$bin" explain cases/te-cp-small.toml --variant cp-bf16acc --against non-cp --out "$tmp/cp" --html "$tmp/cp.html" -q \
    --no-cache > "$tmp/cp.txt" || fail "te-cp-small explain exited $?"
table() { sed -n "/^== where the error comes from: cp-bf16acc $1 vs non-cp ==/,/^share:/p" "$tmp/cp.txt"; }
table 'out@te-cp-rank:3' > "$tmp/out.t"
table 'cat(dq, dk, dv)@te-cp-rank:3' > "$tmp/grad.t"
[ -s "$tmp/out.t" ] && [ -s "$tmp/grad.t" ] || fail "no tables: $(head -5 "$tmp/cp.txt")"
first=$(sed -n '4p' "$tmp/out.t" | awk '{print $1}')
[ "$first" = cp_out_merge ] || fail "out: first site is $first, not cp_out_merge"
awk '$1 == "cp_out_merge" || $1 == "out_partial" { s += $2 } END { exit !(s > 50) }' "$tmp/out.t" ||
    fail "out: the CP merge sites carry no more than half: $(grep -E '^(cp_out_merge|out_partial) ' "$tmp/out.t")"
[ "$(sed -n '4,6p' "$tmp/grad.t" | awk '$1 == "cp_dq_acc" || $1 == "cp_dkv_acc"' | wc -l)" = 2 ] ||
    fail "grads: the CP accumulators are not both among the first three sites: $(sed -n '4,6p' "$tmp/grad.t" | cut -c1-40)"
# every site exact on both sides: out then differs by the non-CP kernel's own binary32 noise only
grep -q '^(every site) *0% (-' "$tmp/out.t" || fail "out: mismatches left with every site exact"
# report.h5: the tables, read back by show as the same text
h5dump -a "/variants/cp-bf16acc/explain/out@te-cp-rank:3/sites/cp_out_merge/share" "$tmp/cp/report.h5" >/dev/null 2>&1 ||
    fail "no /variants/cp-bf16acc/explain/.../sites/cp_out_merge/share in report.h5"
diff <(sed '/^created:/d' "$tmp/cp/report.txt") <("$bin" show "$tmp/cp/report.h5" | sed '/^created:/d') >/dev/null ||
    fail "show does not read the explain tables back"
grep -q '<h2>Where the error comes from</h2>' "$tmp/cp.html" || fail "no explain chart in the HTML report"
xmllint --noout "$tmp/cp.html" || fail "the explain page is not well-formed XML"
grep -qi 'http\|//' "$tmp/cp.html" && fail "a URL in the explain page"
# bloom-prescale post-storage: the accumulation site removes every Inf and sorts first
"$bin" explain cases/bloom-prescale.toml --variant post-storage --out "$tmp/b" -q --no-cache > "$tmp/b.txt" ||
    fail "bloom explain exited $?"
grep -qE '^accum +100\.0% .* 0 \(-[0-9]+\)' "$tmp/b.txt" || fail "bloom: accum does not carry the Inf: $(grep '^accum' "$tmp/b.txt")"
[ "$(sed -n '/^== where/{n;n;n;p;q}' "$tmp/b.txt" | awk '{print $1}')" = accum ] || fail "bloom: accum not first"
# fp8-gemm tensor-current (scaled storage): the outlier rows' per-tensor e4m3 quantisation of A
# and B carries the error, so quant_a and quant_b are the first two rows; every site exact leaves
# no mismatch
"$bin" explain cases/fp8-gemm.toml --variant tensor-current --out "$tmp/f" -q --no-cache > "$tmp/f.txt" ||
    fail "fp8-gemm explain exited $?"
[ "$(sed -n '/^== where/{n;n;n;p;n;p;q}' "$tmp/f.txt" | awk '{print $1}' | sort | tr '\n' ' ')" = "quant_a quant_b " ] ||
    fail "fp8-gemm: the quant sites are not first: $(cat "$tmp/f.txt")"
grep -q '^(every site) *0% (-' "$tmp/f.txt" || fail "fp8-gemm: mismatches left with every site exact"
# bad requests: exit 2 with one line
"$bin" explain cases/bloom-prescale.toml --variant nope -q --no-cache --out "$tmp/x" >/dev/null 2>"$tmp/e"
[ $? = 2 ] && grep -q "no variant 'nope'" "$tmp/e" || fail "unknown variant: $(cat "$tmp/e")"
"$bin" explain cases/bloom-prescale.toml --variant post-storage --against nope -q --no-cache --out "$tmp/x" \
    >/dev/null 2>"$tmp/e"
[ $? = 2 ] || fail "unknown --against: $(cat "$tmp/e")"
"$bin" explain >/dev/null 2>&1
[ $? = 2 ] || fail "no case: not exit 2"
# Ctrl-C: exit 130, one line, no reports (a run cut short is never tabulated); the full-size case,
# whose explain takes minutes, so the signal always lands mid-work
set -m
python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])' \
    "$bin" explain cases/te-cp-821.toml --variant cp-bf16acc --against non-cp --out "$tmp/int" -q --no-cache \
    >/dev/null 2>"$tmp/int.err" &
pid=$!
sleep 3
kill -INT $pid
wait $pid
[ $? = 130 ] || fail "SIGINT: not exit 130 ($(cat "$tmp/int.err"))"
grep -q 'interrupted (SIGINT)' "$tmp/int.err" || fail "SIGINT message: $(cat "$tmp/int.err")"
[ -e "$tmp/int/report.txt" ] && fail "an interrupted explain wrote reports"
# fp8 = "te"'s sites (kernels/attention.h "Exact sites", fp8 = te): against FA3's fp8, O's e4m3
# store and P8's e4m3 store carry the difference, in that order; every variant explained, no note
"$bin" explain cases/fp8-attention.toml --variant fp8-te --against fp8-fa3 --out "$tmp/te" -q --no-cache \
    > "$tmp/te.txt" 2> "$tmp/te.err" || fail "fp8-te: explain exited $?: $(cat "$tmp/te.err")"
awk '/^== where the error comes from: fp8-te out vs fp8-fa3/ { t = 1; next }
     t && /^\(none/ { getline a; getline b; print a; print b; exit }' "$tmp/te.txt" > "$tmp/te.top"
head -1 "$tmp/te.top" | grep -q "^out " || fail "fp8-te vs fp8-fa3: out not first: $(cat "$tmp/te.top")"
tail -1 "$tmp/te.top" | grep -q "^p " || fail "fp8-te vs fp8-fa3: p not second: $(cat "$tmp/te.top")"
"$bin" explain cases/fp8-attention.toml --out "$tmp/fp8all" -q --no-cache > "$tmp/fp8all.txt" || fail "fp8-attention explain exited $?"
for v in fp8-te fp8-te-stale-s; do
    grep -q "^== where the error comes from: $v out vs reference" "$tmp/fp8all.txt" || fail "$v not explained"
done
grep -q "^note: variant " "$tmp/fp8all.txt" && fail "a variant of fp8-attention not explained: $(grep '^note' "$tmp/fp8all.txt")"
# fp8 = "fa3"'s own GEMM chains (kernels/attention.h "Exact sites", chains): every fa3 variant's out
# table has scores and pv_acc rows and no mismatch left with every site exact; under Hopper's
# truncating accumulation (mma sm90-fp8) S's chain carries more of out's error than the fp32 chain's
fa3_row() {  # the row of site $2 in variant $1's out table
    awk -v t="== where the error comes from: $1 out vs reference ==" -v s="$2" '$0 == t { f = 1; next }
        f && /^$/ { exit } f && index($0, s " ") == 1 { print; exit }' "$tmp/fp8all.txt"
}
for v in fp8-fa3 fp8-fa3-delayed fp8-fa3-mx fp8-fa3-nvfp4 fp8-fa3-sm90; do
    for s in scores pv_acc; do
        [ -n "$(fa3_row $v $s)" ] || fail "$v: no $s row in out's table"
    done
    fa3_row $v '(every site)' | grep -q '^(every site) *0% (-' || fail "$v: mismatches left with every site exact"
done
share() { fa3_row "$1" "$2" | awk '{ sub("%", "", $2); print $2 }'; }
awk -v a="$(share fp8-fa3-sm90 scores)" -v b="$(share fp8-fa3 scores)" 'BEGIN { exit !(a > b) }' ||
    fail "scores carries no more under sm90-fp8 ($(share fp8-fa3-sm90 scores)%) than under the fp32 chain ($(share fp8-fa3 scores)%)"
# against fp8-fa3 the sm90 variant's difference is S's chain: scores is out's first site, and
# with it exact on both sides lse has no mismatch left
"$bin" explain cases/fp8-attention.toml --variant fp8-fa3-sm90 --against fp8-fa3 --out "$tmp/sm90" -q --no-cache \
    > "$tmp/sm90.txt" 2> "$tmp/sm90.err" || fail "fp8-fa3-sm90 vs fp8-fa3: explain exited $?: $(cat "$tmp/sm90.err")"
sm90_top() {  # the first site row of the sm90 variant's table for output $1
    awk -v t="== where the error comes from: fp8-fa3-sm90 $1 vs fp8-fa3 ==" '$0 == t { f = 1; next }
        f && /^\(none/ { getline a; print a; exit }' "$tmp/sm90.txt"
}
sm90_top out | grep -q '^scores ' || fail "fp8-fa3-sm90 vs fp8-fa3: out's first site is not scores: $(sm90_top out)"
sm90_top lse | grep -qE '^scores +100\.0% +0% \(-' || fail "fp8-fa3-sm90 vs fp8-fa3: lse: $(sm90_top lse)"
# te's backward (kernels/attention_te_fp8_bwd_x.h): its sites are explained; dq's table names them,
# dO's e5m2 quantisation and dq's e5m2 store are its first two rows (measured: dS's e4m3 comes
# later), dv's first two are dv's store and quant_do; every site exact leaves no mismatch
"$bin" explain cases/fp8-attention-bwd.toml --variant fp8-te --out "$tmp/tebwd" -q --no-cache \
    > "$tmp/tebwd.txt" 2> "$tmp/tebwd.err" || fail "fp8-attention-bwd fp8-te: explain exited $?: $(cat "$tmp/tebwd.err")"
tebwd_top() {  # the first two site rows of fp8-te's table for output $1
    awk -v t="== where the error comes from: fp8-te $1 vs reference ==" '$0 == t { f = 1; next }
        f && /^\(none/ { getline a; getline b; print a; print b; exit }' "$tmp/tebwd.txt" | awk '{ print $1 }' | sort | tr '\n' ' '
}
[ "$(tebwd_top dq)" = "dq quant_do " ] || fail "fp8-te dq: first two sites are $(tebwd_top dq)"
[ "$(tebwd_top dv)" = "dv quant_do " ] || fail "fp8-te dv: first two sites are $(tebwd_top dv)"
for s in d dp ds dq_acc dkv_acc block_scale_ds; do
    grep -q "^$s " "$tmp/tebwd.txt" || fail "fp8-te: backward site $s not in the table"
done
[ "$(grep -c '^(every site) *0% (-' "$tmp/tebwd.txt")" = 5 ] || fail "fp8-te: mismatches left with every site exact"
h5dump -a "/variants/fp8-te/explain/dq/sites/quant_do/share" "$tmp/tebwd/report.h5" >/dev/null 2>&1 ||
    fail "fp8-te: report.h5 has no dq/sites/quant_do"
echo "ok   explain"
