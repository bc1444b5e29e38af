#!/usr/bin/env bash
# orders_te.sh — `run --orders N` on fp8 = "te" (kernels/attention.h "FP8 (fp8 = te)", order band):
# fp8-attention under 4 more orders has band rows for fp8-te and fp8-te-stale-s, the nominal
# figures unchanged, and fp8-te's lse band not a single value (the te kernel is re-run under
# other orders, not copied).   usage: tests/e2e/orders_te.sh [bin]
set -u
cd "$(dirname "$0")/../.."
bin=${1:-bin/precprobe}
fail() { echo "FAIL orders_te: $*"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$bin" run cases/fp8-attention.toml --out "$tmp/nom" --device cpu -q --no-cache >/dev/null || fail "nominal run"
"$bin" run cases/fp8-attention.toml --out "$tmp/ord" --device cpu -q --no-cache --orders 4 >/dev/null || fail "--orders 4"
t="$tmp/ord/report.txt"
grep -q '^== order band (nominal, min-max over 5 runs' "$t" || fail "no order band section"
diff <(sed '/^created:/d; /^== order band/,$d; /^$/d' "$tmp/nom/report.txt") <(sed '/^created:/d; /^== order band/,$d; /^$/d' "$t") \
    >/dev/null || fail "--orders changed the nominal figures"
for v in fp8-te fp8-te-stale-s; do
    for x in 'out +exact-quantised' 'lse +exact-quantised'; do
        sed -n '/^== order band/,$p' "$t" | grep -qE "^$v +$x " || fail "no band row: $v $x"
    done
done
# fp8-te's lse against its quantised inputs: the rms band's min < max (report.h5: min, median, max)
b=$(h5dump -a /variants/fp8-te/stats/lse/exact-quantised/rms_band "$tmp/ord/report.h5" 2>/dev/null | grep '(0):') ||
    fail "no rms_band for fp8-te's lse"
echo "$b" | tr -d '(0):,' | awk '{ exit !($1 < $3) }' || fail "fp8-te's lse band is a single value: $b"
echo "ok   orders_te (fp8-attention --orders 4: fp8-te band rows, nominal unchanged, fp8-te's lse band not a single value)"
