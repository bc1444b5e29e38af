#!/usr/bin/env bash
# te_fp8_knobs.sh — fp8 = "te"'s backward delayed scales and mma = "sm90-fp8" through a case
# (kernels/attention.h "FP8 (fp8 = te)"): amax_history_do/_dq/_dk/_dv reach the run with TE's recipe
# (max over the window: [0.5, 40] is [40]; most_recent: [0.5, 40] is [0.5]; the two differ), a
# dq history moves dq only, and te with sm90-fp8 runs forward and backward, moves out and the
# gradients against te, and gives the same report on 1 and 2 threads.   usage: tests/e2e/te_fp8_knobs.sh [bin]
set -u
cd "$(dirname "$0")/../.."
bin=${1:-bin/precprobe}
fail() { echo "FAIL te_fp8_knobs: $*"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/c.toml" <<'TOML'
[case]
name = "te-fp8-knobs"
op = "attention"
seed = 5
[op]
b = 1
s = 160
h = 2
d = 32
mask = "causal"
passes = "fwd+bwd"
[knobs]
format = "bf16"
kernel = "flash"
fp8 = "te"
[variants.te]
[variants.do-window]
amax_history_do = [0.5, 40.0]
[variants.do-40]
amax_history_do = [40.0]
[variants.do-recent]
amax_compute_algo = "most_recent"
amax_history_do = [0.5, 40.0]
[variants.do-half]
amax_history_do = [0.5]
[variants.dq-stale]
amax_history_dq = [0.001]
[variants.sm90]
mma = "sm90-fp8"
[compare]
pairs = [["do-window", "do-40"], ["do-recent", "do-half"], ["do-window", "do-half"], ["dq-stale", "te"], ["sm90", "te"]]
TOML
for t in 1 2; do
    "$bin" run "$tmp/c.toml" --out "$tmp/r$t" --device cpu -q --no-cache --threads $t >/dev/null || fail "run (threads $t)"
done
diff <(sed '/^created:/d' "$tmp/r1/report.txt") <(sed '/^created:/d' "$tmp/r2/report.txt") >/dev/null ||
    fail "1 and 2 threads give different reports"
r="$tmp/r1/report.txt"
# the summary's comparison rows: VARIANT TENSOR AGAINST MISMATCH MAXABS ...
row() { awk -v a="$1" -v t="$2" -v b="$3" '$1 == a && $2 == t && $3 == b { print $4, $5; exit }' "$r"; }
same() { [ "$(row "$1" "$2" "$3")" = "0.0% 0.0" ] || fail "$1 $2 against $3: $(row "$1" "$2" "$3") (want identical)"; }
moved() { x=$(row "$1" "$2" "$3"); [ -n "$x" ] && [ "$x" != "0.0% 0.0" ] || fail "$1 $2 against $3: '$x' (want moved)"; }
for g in dq dk dv; do
    same do-window $g do-40
    same do-recent $g do-half
    moved do-window $g do-half
    moved sm90 $g te
done
same dq-stale out te; same dq-stale dk te; same dq-stale dv te; moved dq-stale dq te
moved sm90 out te
echo "ok   te_fp8_knobs (amax_history_do window max and most_recent, a dq history moves dq only, sm90-fp8 moves te's out and gradients; 1 and 2 threads the same)"
