#!/usr/bin/env bash
# cli.sh — command-line details that exact-output lines in cases.txt would make brittle:
# `precprobe list` states each op's allowed knob combinations.   usage: tests/e2e/cli.sh [bin]
set -u
cd "$(dirname "$0")/../.."
bin=${1:-bin/precprobe}
fail() { echo "FAIL cli: $*"; exit 1; }
"$bin" list | grep -q '^  knob combinations: kernel flash takes accumulate fp32' || fail "list: attention's knob combinations"
# (every op now has rules; adamw's since torch_kernels = "cuda-fused", which needs update = "torch")
"$bin" list | grep -q '^  knob combinations: torch_kernels cuda-fused with update torch and kahan off' ||
    fail "list: adamw's knob combinations"
# an external variant is listed with its format only, not the emulation's knobs it does not have
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$bin" run cases/external-gemm.toml --out "$tmp/ext" --device cpu -q >/dev/null || fail "run external-gemm"
grep -q '^variant:   torch-baddbmm            format=fp16 (external: outputs read from files)$' "$tmp/ext/report.txt" ||
    fail "external variant's knobs: $(grep '^variant:   torch' "$tmp/ext/report.txt")"
# cases/README.md's [matrix] example is a valid [matrix], and forms the names the example uses
{ printf '[case]\nname = "doc-matrix"\nop = "gemm"\n[op]\nm = 4\nn = 4\nk = 8\n'
  sed -n '/^\[matrix\]/,/^\[compare\]/p' cases/README.md | grep -v '^\[compare\]'
  printf '[compare]\npairs = [["pre-storage", "post-fp32"]]\n[gate]\n"pre-storage.c.inf_count" = { max = 0 }\n'
} > "$tmp/doc-matrix.toml"
"$bin" run "$tmp/doc-matrix.toml" --out "$tmp/doc" --device cpu -q --no-cache >/dev/null 2>"$tmp/doc.err" ||
    fail "cases/README.md's [matrix] example: $(cat "$tmp/doc.err")"
# PRECPROBE_TIMINGS=1: one "timing:" line per task on stderr (inputs, reference, variants, statistics),
# none without it, and the same report either way
PRECPROBE_TIMINGS=1 "$bin" run cases/quickstart.toml --out "$tmp/t1" --device cpu -q --no-cache >/dev/null 2>"$tmp/t1.err" ||
    fail "run with PRECPROBE_TIMINGS=1: $(cat "$tmp/t1.err")"
for k in inputs reference variant compare; do
    grep -Eq "^timing: $k +.* wall +[0-9.]+ s  cpu +[0-9.]+ s$" "$tmp/t1.err" || fail "PRECPROBE_TIMINGS=1: no $k line in: $(cat "$tmp/t1.err")"
done
"$bin" run cases/quickstart.toml --out "$tmp/t0" --device cpu -q --no-cache >/dev/null 2>"$tmp/t0.err" || fail "run quickstart"
! grep -q '^timing:' "$tmp/t0.err" || fail "timing lines without PRECPROBE_TIMINGS"
diff <(grep -v '^created' "$tmp/t0/report.txt") <(grep -v '^created' "$tmp/t1/report.txt") >/dev/null ||
    fail "PRECPROBE_TIMINGS changed report.txt"
# the benches refuse an argument that is not a whole number in range (they once ran `--help` as
# 0 threads), and too many arguments, with exit 2 and their usage line, before any work
for b in bench_attention_ref bench_attention_cpu bench_adamw_emu bench_adamw_ref bench_gemm_ref bench_ranges; do
    [ -x "build/rel/tools/$b" ] || fail "build/rel/tools/$b is not built (make test builds the benches)"
    for args in "--help" "0" "2 x" "1 2 3 4 5"; do
        # shellcheck disable=SC2086
        timeout 20 "build/rel/tools/$b" $args >/dev/null 2>"$tmp/bench.err"; rc=$?
        [ $rc = 2 ] && grep -q "^usage: $b" "$tmp/bench.err" || fail "$b $args: exit $rc, $(cat "$tmp/bench.err")"
    done
done
echo "ok   cli (list states knob combinations; an external variant shows its format only; the [matrix] doc example)"
echo "ok   cli (PRECPROBE_TIMINGS=1: a timing line per task, the same report)"
