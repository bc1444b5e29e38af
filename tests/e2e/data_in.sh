#!/usr/bin/env bash
# data_in.sh — the same tensors read another way give the same report: each case of
# tests/data/cases/data_in/attn_*.toml reads cases/external-attention.toml's tensors from .pt or
# ml_dtypes .npy files in SDPA's [b, h, s, d] layout (some off the bf16 grid, rounded on read),
# and its report.txt must equal that case's but for the creation time.
#   usage: tests/e2e/data_in.sh [bin/precprobe]
set -u
cd "$(dirname "$0")/../.."
bin=${1:-bin/precprobe}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$bin" run cases/external-attention.toml --out "$tmp/base" -q --no-cache >/dev/null 2>"$tmp/err" ||
    { echo "FAIL data_in: the base case failed: $(cat "$tmp/err")"; exit 1; }
grep -v '^created:' "$tmp/base/report.txt" >"$tmp/base.txt"
fail=0
# `precprobe list` names each tensor's axis letters, the alphabet of layout = "..."
if ! "$bin" list | grep -qF "inputs: q[bshd] k[bshd] v[bshd] dout[bshd]; outputs: out[bshd] lse[bhs] dq[bshd]"; then
    echo "FAIL data_in: precprobe list does not name the attention tensors' axes"; fail=1
fi
for c in tests/data/cases/data_in/attn_*.toml; do
    n=$(basename "$c" .toml)
    if ! "$bin" run "$c" --out "$tmp/$n" -q --no-cache >/dev/null 2>"$tmp/err"; then
        echo "FAIL data_in $n: $(cat "$tmp/err")"; fail=1; continue
    fi
    if ! diff <(grep -v '^created:' "$tmp/$n/report.txt") "$tmp/base.txt" >"$tmp/diff"; then
        echo "FAIL data_in $n: its report differs from cases/external-attention.toml's"; head -10 "$tmp/diff"; fail=1
        continue
    fi
    echo "ok   data_in_$n"
done
exit $fail
