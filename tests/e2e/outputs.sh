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
echo "ok   outputs (FIFO, socket, symlink, a failing --html leaves the set)"
