#!/usr/bin/env bash
# orders.sh — `run --orders N` (issue 15's order band): te-cp-small under 8 more admissible orders
# shows bands that are not empty, the CP conclusion (fp32 accumulation lowers the mismatch) robust,
# the bands in report.h5 (<stat>_band) and read back by show, the nominal figures unchanged, and a
# gate on <stat>_band_max.   usage: tests/e2e/orders.sh [bin]
set -u
cd "$(dirname "$0")/../.."
bin=${1:-bin/precprobe}
fail() { echo "FAIL orders: $*"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$bin" run cases/te-cp-small.toml --out "$tmp/nom" --device cpu -q --no-cache >/dev/null || fail "nominal run"
"$bin" run cases/te-cp-small.toml --out "$tmp/ord" --device cpu -q --no-cache --orders 8 >/dev/null || fail "--orders 8"
t="$tmp/ord/report.txt"
grep -q '^== order band (nominal, min-max over 9 runs' "$t" || fail "no order band section"
# the nominal run is today's: the report up to the band section is the nominal report but for its date
diff <(sed '/^created:/d; /^== order band/,$d; /^$/d' "$tmp/nom/report.txt") <(sed '/^created:/d; /^== order band/,$d; /^$/d' "$t") \
    >/dev/null || fail "--orders changed the nominal figures"
# non-empty bands: some figure's min < max
sed -n '/^== order band/,$p' "$t" | grep -oE '\([0-9.]+–[0-9.]+%\)' | tr -d '()%' |
    awk -F'–' '$1 != $2 { n++ } END { exit !(n > 0) }' || fail "every band is a single value"
grep -q '^order: cp-bf16acc vs cp-fp32acc, out@te-cp-rank:3 against non-cp: mismatch .*: robust to order$' "$t" ||
    fail "CP conclusion (out) not robust: $(grep '^order: cp-bf16acc' "$t")"
grep -q '^order: cp-bf16acc vs cp-fp32acc, cat(dq, dk, dv)@te-cp-rank:3 against non-cp: mismatch .*: robust to order$' "$t" ||
    fail "CP conclusion (grads) not robust: $(grep '^order: cp-bf16acc' "$t")"
# the verdict on every statistic, pairs against the reference included: fp32 accumulation closer
# to the non-CP run in the mismatch under every order, and closer to the exact attention too
v=$(grep '^verdict: cp-bf16acc vs cp-fp32acc, out@te-cp-rank:3 against non-cp: ' "$t") || fail "no verdict line for the CP pair"
case "$v" in *"cp-fp32acc closer, robust to order: mismatch_fraction, mismatched,"*) ;; *) fail "CP verdict: $v" ;; esac
v=$(grep '^verdict: cp-bf16acc vs cp-fp32acc, out against reference: ' "$t") || fail "no verdict against the reference"
case "$v" in *"cp-fp32acc closer, robust to order: mismatch_fraction"*) ;; *) fail "verdict against the reference: $v" ;; esac
[ "$(grep -c '^verdict: .* against reference: ' "$t")" -ge 75 ] || fail "not every pair against the reference has a verdict"
h5dump -a "/variants/cp-bf16acc/stats/out@te-cp-rank:3/non-cp/mismatch_fraction_order_verdict" "$tmp/ord/report.h5" 2>/dev/null |
    tr -d ' \n' | grep -q 'DATASPACESIMPLE{(1)/(1)}DATA{(0):-2}' || fail "report.h5: mismatch_fraction_order_verdict of the CP pair is not -2"
h5dump -a "/variants/cp-bf16acc/stats/out@te-cp-rank:3/non-cp/order_verdict_partners" "$tmp/ord/report.h5" 2>/dev/null |
    grep -q '"cp-fp32acc"' || fail "report.h5: order_verdict_partners"
"$bin" show "$tmp/ord/report.h5" --html "$tmp/ord.html" >/dev/null || fail "show --html"
grep -q '<li>cp-bf16acc vs cp-fp32acc, out@te-cp-rank:3 against non-cp: .*cp-fp32acc closer, robust to order: mismatch_fraction' \
    "$tmp/ord.html" || fail "HTML: no verdict in words beside the error bars"
if command -v xmllint >/dev/null; then xmllint --noout "$tmp/ord.html" || fail "HTML with bands and verdicts: not well-formed XML"; fi
h5dump -a "/variants/cp-bf16acc/stats/out@te-cp-rank:3/non-cp/mismatch_fraction_band" "$tmp/ord/report.h5" 2>/dev/null |
    grep -q 'DATASPACE  SIMPLE { ( 3 ) / ( 3 ) }' || fail "no mismatch_fraction_band attribute in report.h5"
"$bin" show "$tmp/ord/report.h5" | sed '/^created:/d' > "$tmp/show.txt"
diff <(sed '/^created:/d' "$t") "$tmp/show.txt" >/dev/null || fail "show does not read the bands back"
# a gate on the band's max: holds at the nominal value's bound only if every order does
sed 's/^"cp-fp32acc.out@te-cp-rank:3.non-cp.mismatch_fraction" = { max = 0.50 }/"cp-fp32acc.out@te-cp-rank:3.non-cp.mismatch_fraction_band_max" = { max = 0.50 }/' \
    cases/te-cp-small.toml > "$tmp/gate.toml"
grep -q 'mismatch_fraction_band_max' "$tmp/gate.toml" || fail "gate edit"
"$bin" run "$tmp/gate.toml" --out "$tmp/g" --device cpu -q --no-cache --orders 4 >/dev/null || fail "gate on _band_max"
grep -q '^PASS  cp-fp32acc.out@te-cp-rank:3.non-cp.mismatch_fraction_band_max <= 0.5' "$tmp/g/report.txt" ||
    fail "band_max verdict: $(grep band_max "$tmp/g/report.txt")"
# two variants of the same knobs against a third: their bands overlap, no conclusion to draw
printf '[case]\nname = "twins"\nop = "attention"\nseed = 5\n[op]\nb = 1\ns = 128\nh = 1\nd = 32\nmask = "causal"\npasses = "fwd"\n[knobs]\nformat = "bf16"\nkernel = "flash"\n[variants.base]\ncp_world = 1\n[variants.a]\ncp_world = 2\n[variants.b]\ncp_world = 2\n[compare]\npairs = [["a", "base"], ["b", "base"]]\n' \
    > "$tmp/twins.toml"
"$bin" run "$tmp/twins.toml" --out "$tmp/tw" --device cpu -q --no-cache --orders 4 >/dev/null || fail "twins run"
grep -q '^order: a vs b, out against base: mismatch .*: not robust to order$' "$tmp/tw/report.txt" ||
    fail "twins: $(grep '^order: a vs b, out' "$tmp/tw/report.txt")"
# their verdict on every statistic: equal (the same knobs give the same bits under each order), and
# never one of them closer under every order, against base or against the reference
for e in base reference; do
    v=$(grep "^verdict: a vs b, out against $e: " "$tmp/tw/report.txt") || fail "twins: no verdict against $e"
    case "$v" in *", robust to order"*|*"closer"*) fail "twins against $e: $v" ;; *"equal under every order: mismatch_fraction"*) ;;
        *) fail "twins against $e: $v" ;; esac
done
echo "ok   orders (te-cp-small --orders 8: non-empty bands, CP conclusion robust, verdict on every statistic and against the reference (text, report.h5, HTML), twins not robust, report.h5 bands, show, band_max gate)"
