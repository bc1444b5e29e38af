#!/usr/bin/env bash
# interrupt.sh — Ctrl-C on a real process: `precprobe run` on the full-size TE case (its
# reference takes minutes) gets SIGINT five seconds in, stops within seconds (the reference's
# workers poll the stop request per row), says what it interrupted and exits 130. The resume
# from the cache is tested in tests/test_interrupt.c.   usage: tests/e2e/interrupt.sh [bin]
set -u
set -m  # background jobs in their own process group, SIGINT not ignored
cd "$(dirname "$0")/../.."
bin=${1:-bin/precprobe}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL interrupt: $*"; exit 1; }
# SIGINT back to its default first: a shell that was itself started in the background hands its
# children an ignored SIGINT, which precprobe (rightly) keeps ignored
python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])' \
    "$bin" run cases/te-cp-821.toml --out "$tmp/out" --no-cache --device cpu >/dev/null 2>"$tmp/err" &
pid=$!
sleep 5
start=$(date +%s)
kill -INT $pid
wait $pid; rc=$?
took=$(( $(date +%s) - start ))
[ $rc = 130 ] || fail "exit $rc, want 130 ($(cat "$tmp/err"))"
[ $took -le 20 ] || fail "took $took s to stop after SIGINT"
grep -q '^precprobe: te-cp-821: interrupted (SIGINT) during the ' "$tmp/err" || fail "message: $(cat "$tmp/err")"
[ -e "$tmp/out/report.txt" ] && fail "an interrupted run wrote reports"
echo "ok   interrupt (SIGINT: exit 130 in ${took} s, message: $(sed 's/^precprobe: //' "$tmp/err"))"
