#!/usr/bin/env bash
# outputs.sh — output paths end to end: `reference -o FIFO` and `run --html SOCKET` exit 3 and
# leave the FIFO/socket as it was; a symlinked -o stays a link to the replaced file; a failing
# --html leaves the previous report.txt and report.h5 unchanged (all reports renamed together).
#   usage: tests/e2e/outputs.sh [bin/precprobe]
set -u
cd "$(dirname "$0")/../.."
bin=${1:-bin/precprobe}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL outputs: $*"; exit 1; }
mkfifo "$tmp/fifo"
"$bin" reference cases/quickstart.toml -o "$tmp/fifo" -q --no-cache >/dev/null 2>"$tmp/err"; rc=$?
[ $rc = 3 ] || fail "reference -o FIFO: exit $rc, want 3"
[ -p "$tmp/fifo" ] || fail "reference -o FIFO replaced the FIFO"
grep -q "a FIFO, not a regular file" "$tmp/err" || fail "reference -o FIFO: message: $(cat "$tmp/err")"
ln -s real.h5 "$tmp/link.h5"
"$bin" reference cases/quickstart.toml -o "$tmp/link.h5" -q --no-cache >/dev/null || fail "reference -o LINK failed"
[ -L "$tmp/link.h5" ] && [ -f "$tmp/real.h5" ] || fail "reference -o LINK did not keep the link"
python3 -c "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" "$tmp/sock"
"$bin" run cases/quickstart.toml --out "$tmp/out" -q --no-cache >/dev/null || fail "first run failed"
echo old > "$tmp/out/report.txt"; cp "$tmp/out/report.h5" "$tmp/old.h5"
"$bin" run cases/quickstart.toml --out "$tmp/out" --html "$tmp/sock" -q --no-cache >/dev/null 2>"$tmp/err"; rc=$?
[ $rc = 3 ] || fail "run --html SOCKET: exit $rc, want 3"
[ -S "$tmp/sock" ] || fail "run --html SOCKET replaced the socket"
[ "$(cat "$tmp/out/report.txt")" = old ] || fail "a failing --html replaced report.txt"
cmp -s "$tmp/out/report.h5" "$tmp/old.h5" || fail "a failing --html replaced report.h5"
"$bin" run cases/quickstart.toml --out "$tmp/out" --html "$tmp/no/such/dir/x.html" -q --no-cache >/dev/null 2>&1
[ "$(cat "$tmp/out/report.txt")" = old ] || fail "an unwritable --html replaced report.txt"
ls "$tmp/out" | grep -q '\.tmp-' && fail "a temporary file was left"
# --save-tensors keeps each output tagged with the format of its values: fp8 = "te" stores out and
# the gradients in FP8 and reports the scaled codes (binary64 values, not bf16 ones), which the
# report's own check refused before (exit 2); bf16 flash's out stays bf16
fmt() { h5dump -a "$2/precprobe_format" "$1" | sed -n 's/^ *(0): "\(.*\)"$/\1/p'; }
for c in fp8-attention fp8-attention-bwd; do
    "$bin" run "cases/$c.toml" -q --device cpu --save-tensors --out "$tmp/$c" >/dev/null 2>"$tmp/err"; rc=$?
    [ $rc -le 1 ] || fail "$c --save-tensors: exit $rc: $(tail -c 300 "$tmp/err")"
    [ "$(fmt "$tmp/$c/report.h5" /variants/fp8-te/outputs/out)" = fp64 ] || fail "$c: fp8-te's kept out is not tagged fp64"
    [ "$(fmt "$tmp/$c/report.h5" /variants/fp8-te/outputs/lse)" = fp32 ] || fail "$c: fp8-te's kept lse is not tagged fp32"
    [ "$(fmt "$tmp/$c/report.h5" /variants/bf16/outputs/out)" = bf16 ] || fail "$c: bf16's kept out is not tagged bf16"
done
[ "$(fmt "$tmp/fp8-attention-bwd/report.h5" /variants/fp8-te/outputs/dq)" = fp64 ] || fail "fp8-te's kept dq is not tagged fp64"
"$bin" compare "$tmp/fp8-attention/report.h5:/variants/fp8-te/outputs/out" \
    "$tmp/fp8-attention/report.h5:/variants/fp8-te/outputs/out" >/dev/null 2>"$tmp/err" ||
    fail "the kept fp8-te out cannot be read back: $(cat "$tmp/err")"
echo "ok   outputs (FIFO, socket, symlink, a failing --html leaves the set; --save-tensors of fp8 = te)"
