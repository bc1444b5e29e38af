#!/usr/bin/env bash
# fuzz.sh — runs a libFuzzer target on its committed seed corpus for a while, with 2 workers.
# usage: tools/fuzz.sh TARGET SECONDS      (after `make fuzz`; TARGET: npy, safetensors, pt, toml, case)
# New inputs go to a scratch corpus (removed afterwards); crashes, leaks and timeouts are saved in
# tests/fuzz/TARGET/ (git-ignored). To grow the committed corpus, minimise with -merge=1:
#   build/fuzz/fuzz_TARGET -merge=1 tests/fuzz/TARGET NEWDIR
# PP_FUZZ_BIN overrides the directory holding the binaries (default build/fuzz); PP_FUZZ_KEEP
# names a directory to keep the scratch corpus in; PP_FUZZ_WORKERS=1 runs one worker (to fuzz
# two targets at once on two cores).
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: tools/fuzz.sh TARGET SECONDS"
target=${1:?$usage}
secs=${2:?$usage}
bin=${PP_FUZZ_BIN:-build/fuzz}/fuzz_$target
seeds=tests/fuzz/$target
[ -x "$bin" ] || { echo "fuzz.sh: no $bin (run make fuzz first)" >&2; exit 2; }
[ -d "$seeds" ] || { echo "fuzz.sh: no seed corpus $seeds" >&2; exit 2; }
case $secs in '' | *[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number" >&2; exit 2 ;; esac
if [ -n "${PP_FUZZ_KEEP:-}" ]; then
    work=$PP_FUZZ_KEEP
    mkdir -p "$work"
else
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi
workers=${PP_FUZZ_WORKERS:-2}
case $workers in 1 | 2) ;; *) echo "fuzz.sh: PP_FUZZ_WORKERS must be 1 or 2" >&2; exit 2 ;; esac
# -fork=N: N worker processes sharing one corpus, the run bounded by -max_total_time overall.
"$bin" -fork="$workers" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -artifact_prefix="$seeds/" -print_final_stats=1 "$work" "$seeds"
