#!/usr/bin/env bash
# run.sh — the end-to-end CLI suite: runs the precprobe binary on the shipped fixtures and checks
# the exit status and the exact output.   usage: tests/e2e/run.sh [bin/precprobe]
#
# tests/e2e/cases.txt holds one case per line:  NAME | EXIT | ARGUMENTS
# ARGUMENTS are split on spaces (no quoting), run from the repository root. When
# tests/e2e/expected/NAME.out exists, stdout must equal it byte for byte; when NAME.err exists,
# stderr must equal it. Message expectations were produced by torch.testing.assert_close
# (tools/torch_e2e_expected.py), error expectations written by hand.
set -u
cd "$(dirname "$0")/../.."
bin=${1:-bin/precprobe}
[ -x "$bin" ] || { echo "run.sh: no binary at $bin (run make first)"; exit 2; }
pass=0; fail=0
rm -rf build/e2e/refcache-new  # run_cache_miss must miss
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
while IFS='|' read -r name want args; do
    case "$name" in \#*|"") continue ;; esac
    name=$(echo "$name" | tr -d ' '); want=$(echo "$want" | tr -d ' ')
    # shellcheck disable=SC2086
    "$bin" $args >"$tmp/out" 2>"$tmp/err" </dev/null; got=$?
    ok=1
    [ "$got" = "$want" ] || { ok=0; echo "FAIL $name: exit $got, want $want"; }
    if [ -f "tests/e2e/expected/$name.out" ] && ! cmp -s "$tmp/out" "tests/e2e/expected/$name.out"; then
        ok=0; echo "FAIL $name: stdout differs"; diff "tests/e2e/expected/$name.out" "$tmp/out" | head -20
    fi
    if [ -f "tests/e2e/expected/$name.err" ] && ! cmp -s "$tmp/err" "tests/e2e/expected/$name.err"; then
        ok=0; echo "FAIL $name: stderr differs"; diff "tests/e2e/expected/$name.err" "$tmp/err" | head -20
    fi
    if [ $ok = 1 ]; then pass=$((pass + 1)); echo "ok   $name"; else fail=$((fail + 1)); fi
done < tests/e2e/cases.txt
# the HTML report: its own script (xmllint, no URL, show --html redraws the same page)
if bash tests/e2e/html.sh "$bin"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
# tensors from .pt and ml_dtypes .npy files, in another layout: the same report (tests/e2e/data_in.sh)
if bash tests/e2e/data_in.sh "$bin"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
# output paths: FIFO, socket, symlink, a failing --html leaves the previous reports
if bash tests/e2e/outputs.sh "$bin"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
# CI gating: check --junit and run --junit fail exactly when the command exits 1
if bash tests/e2e/junit.sh "$bin"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
# command-line details: list, help
if bash tests/e2e/cli.sh "$bin"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
# Ctrl-C on a real process: exit 130 and a message, promptly
if bash tests/e2e/interrupt.sh "$bin"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
# --orders: te-cp-small's order bands, the CP conclusion robust to order
if bash tests/e2e/orders.sh "$bin"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
# --orders on fp8 = "te": its band rows on fp8-attention, lse's band not a single value (tests/e2e/orders_te.sh)
if bash tests/e2e/orders_te.sh "$bin"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
# run --shard I/N and merge: merge of 1, 2, 4 shards == the unsharded run; what merge refuses
if bash tests/e2e/shards.sh "$bin"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
# the same for a [sweep]: merge of 1, 2, 4 shards == the unsharded sweep
if bash tests/e2e/shards_sweep.sh "$bin"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
# one reference cache for concurrent processes; damaged and truncated entries recomputed
if bash tests/e2e/cache_shared.sh "$bin"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
# the engines: 4 shards under GNU parallel, and a job array + merge job on a one-node Slurm
if bash tests/e2e/parallel.sh "$bin"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
if bash tests/e2e/slurm.sh "$bin"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
# --ranges: glm-softmax's overflow in words, per head in report.h5, no figure changed (tests/e2e/ranges.sh)
if bash tests/e2e/ranges.sh "$bin"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
# explain: where the error comes from (issue 18's known answers, report.h5 read back, the chart)
if bash tests/e2e/explain.sh "$bin"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
# the shipped small cases on the GPU, cross-checked against the emulation (skips without one)
if bash tests/e2e/cuda.sh "$bin"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
# [sweep]: a sweep run, its report.txt, sweep.h5, report.html; a point = its plain case
if bash tests/e2e/sweep.sh "$bin"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
# fp8 = "te": the backward's amax_history_do/_dq/_dk/_dv and mma sm90-fp8 through a case (tests/e2e/te_fp8_knobs.sh)
if bash tests/e2e/te_fp8_knobs.sh "$bin"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
echo "e2e: $pass passed, $fail failed"
[ $fail -eq 0 ]
