#!/usr/bin/env bash
# cli.sh — command-line details that exact-output lines in cases.txt would make brittle:
# `precprobe list` states each op's allowed knob combinations.   usage: tests/e2e/cli.sh [bin]
set -u
cd "$(dirname "$0")/../.."
bin=${1:-bin/precprobe}
fail() { echo "FAIL cli: $*"; exit 1; }
"$bin" list | grep -q '^  knob combinations: kernel flash takes accumulate fp32' || fail "list: attention's knob combinations"
"$bin" list | grep -q '^  knob combinations: every one runs' || fail "list: an op whose combinations all run"
echo "ok   cli (list states knob combinations)"
