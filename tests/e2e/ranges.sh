#!/usr/bin/env bash
# ranges.sh — `run --ranges` (issue 18's range diagnostics): glm-softmax says in words that
# fp16-softmax's scores overflow in head 3 (at scaled_scores, after the layer-scaling multiply)
# and that fp32-softmax has no overflow; the per-head counts are in report.h5 and show prints them
# back; recording changes no figure of the report; the counters do not depend on the thread
# count; gemm's post-scaling with fp16 accumulation overflows at accum, and AdamW bf16 plain
# stalls at its θ store.   usage: tests/e2e/ranges.sh [bin]
set -u
cd "$(dirname "$0")/../.."
bin=${1:-bin/precprobe}
fail() { echo "FAIL ranges: $*"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$bin" run cases/glm-softmax.toml --out "$tmp/off" --device cpu -q --no-cache >/dev/null || fail "run without --ranges"
"$bin" run cases/glm-softmax.toml --out "$tmp/on" --device cpu -q --no-cache --ranges --threads 2 >"$tmp/stdout" ||
    fail "run --ranges"
t="$tmp/on/report.txt"
grep -q '^== range diagnostics' "$t" || fail "no range diagnostics section"
grep -q '^fp16-softmax: scaled_scores overflows to ±Inf in head 3 ([0-9]* of [0-9]* values, fp16)$' "$t" ||
    fail "fp16-softmax's overflow in head 3 not said: $(grep '^fp16-softmax:' "$t" | head -3)"
grep -q '^fp32-softmax: no overflow and no NaN at any site$' "$t" || fail "fp32-softmax's clean bill not said"
grep -q '^no-layer-scaling: scores overflows to ±Inf in head 3 ' "$t" || fail "no-layer-scaling's score overflow not said"
grep -q '^fp16-softmax: scaled_scores overflows to ±Inf in head 3' "$tmp/stdout" || fail "the run's summary lacks the words"
[ "$(grep -c '^fp16-softmax: .*overflows' "$t")" = 1 ] || fail "fp16-softmax overflows at more than one site"
# per head in report.h5: head 3 only
h5dump -d /variants/fp16-softmax/ranges/scaled_scores/overflow "$tmp/on/report.h5" 2>/dev/null |
    grep -qE '\(0\): 0, 0, 0, [1-9][0-9]*$' || fail "report.h5 overflow per head is not 0, 0, 0, >0"
# recording changes no figure: the reports are equal but for the date and the ranges section
diff <(sed '/^created:/d; /^== range diagnostics/,$d; /^$/d' "$tmp/off/report.txt") \
     <(sed '/^created:/d; /^== range diagnostics/,$d; /^$/d' "$t") >/dev/null || fail "--ranges changed the report's figures"
# show of the stored report prints the same text
"$bin" show "$tmp/on/report.h5" > "$tmp/show.txt" || fail "show"
diff <(sed '/^created:/d' "$t") <(sed '/^created:/d' "$tmp/show.txt") >/dev/null || fail "show does not print the ranges back"
# the HTML report: a heat strip per variant (sites x heads), well-formed, redrawn by show --html
"$bin" run cases/glm-softmax.toml --out "$tmp/html" --device cpu -q --no-cache --ranges --html "$tmp/page.html" \
    >/dev/null || fail "run --ranges --html"
grep -q '<h2>Range diagnostics</h2>' "$tmp/page.html" || fail "no range diagnostics in the HTML report"
grep -q '<title>fp16-softmax: sites x heads</title>' "$tmp/page.html" || fail "no heat strip for fp16-softmax"
xmllint --noout "$tmp/page.html" || fail "the HTML report is not well-formed"
"$bin" show "$tmp/html/report.h5" --html "$tmp/show.html" >/dev/null && cmp -s "$tmp/page.html" "$tmp/show.html" ||
    fail "show --html draws another page"
# the thread count changes nothing
"$bin" run cases/glm-softmax.toml --out "$tmp/one" --device cpu -q --no-cache --ranges --threads 1 >/dev/null ||
    fail "run --threads 1"
diff <(sed -n '/^== range diagnostics/,$p' "$t") <(sed -n '/^== range diagnostics/,$p' "$tmp/one/report.txt") >/dev/null ||
    fail "the counters depend on the thread count"
# gemm: post-scaling with fp16 accumulation overflows at the accumulator, pre-scaling does not
"$bin" run cases/bloom-prescale.toml --out "$tmp/bloom" --device cpu -q --no-cache --ranges >/dev/null || fail "bloom run"
grep -q '^post-storage: accum overflows to ±Inf ([0-9]* of [0-9]* values, fp16)$' "$tmp/bloom/report.txt" ||
    fail "post-storage's accumulator overflow not said"
grep -q '^pre-storage: no overflow and no NaN at any site$' "$tmp/bloom/report.txt" || fail "pre-storage not clean"
# adamw: bf16 plain stalls at the θ store (the update site's lost increments); fp32 does not
"$bin" run cases/adamw-small.toml --out "$tmp/adamw" --device cpu -q --no-cache --ranges >/dev/null || fail "adamw run"
grep -q '^bf16-plain: update loses non-zero increments in the θ store' "$tmp/adamw/report.txt" || fail "bf16 stall not said"
grep -q '^fp32-torch: update loses' "$tmp/adamw/report.txt" && fail "fp32 said to stall"
# --ranges with --shard: refused in one line, exit 2 (a partial result holds no range counters)
"$bin" run cases/adamw-small.toml --shard 1/2 --ranges --out "$tmp/sh" -q --no-cache >/dev/null 2>"$tmp/sh.err"
[ $? = 2 ] || fail "--ranges --shard: not exit 2"
grep -q -- '--ranges does not combine with --shard' "$tmp/sh.err" || fail "--ranges --shard: $(cat "$tmp/sh.err")"
[ -e "$tmp/sh/partial.h5" ] && fail "--ranges --shard wrote a partial"
# fp8 = te's backward (kernels/attention_te_bwd_exact.h): its intermediates are noted; with scale_dP
# from dP's amax, dS8 flushes values to zero and stays far below e4m3's max; from dS's amax it
# reaches 448; dO's e5m2 quantisation and the chains have rows of their own
"$bin" run cases/fp8-attention-bwd.toml --ranges --out "$tmp/tebwd" -q --no-cache >/dev/null || fail "fp8-attention-bwd --ranges"
t="$tmp/tebwd/report.txt"
grep -q '^fp8-te: ds flushes non-zero values to zero in heads 0, 1, 2, 3 ' "$t" || fail "fp8-te's dS8 flush not said"
awk '$1 == "fp8-te" && $2 == "ds" { exit !($NF + 0 > 0 && $(NF - 1) + 0 < 64) }' "$t" || fail "fp8-te's dS8 amax not < 64"
awk '$1 == "fp8-te-ds-amax" && $2 == "ds" { exit !($(NF - 1) == 448) }' "$t" || fail "fp8-te-ds-amax's dS8 amax not 448"
# little headroom in words: the stale scale_dP puts dS8 near e4m3's 448 (1 in 10 is enough)
grep -q "^fp8-te-stale-dp: ds lies within a factor 2 of its format's largest in heads " "$t" ||
    fail "fp8-te-stale-dp's dS8 headroom not said"
grep -q "^fp8-te: ds lies within a factor 2" "$t" && fail "fp8-te's dS8 said to lack headroom"
for s in quant_do block_scale_do block_scale_ds dq_acc dkv_acc exp p d dp; do
    grep -q "^fp8-te  *$s " "$t" || fail "fp8-te: no range row for $s"
done
echo "ok   ranges"
