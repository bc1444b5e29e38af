#!/usr/bin/env bash
# cuda.sh — the shipped small cases on the GPU: `precprobe run CASE --device cuda --cross-check`
# must exit as on the CPU (every gate holds), and every cpu-emulation comparison it adds must show
# no difference at all (0 mismatches, max abs 0, max ulp 0: precprobe's kernels are the CPU
# emulation's arithmetic in its order). Skips, exit 0, with the reason when CUDA support is not
# compiled in or no GPU is usable.   usage: tests/e2e/cuda.sh [bin/precprobe]
# (PRECPROBE_CUDA_KEEP=DIR: the reports are kept in DIR/CASE/.)
set -u
cd "$(dirname "$0")/../.."
bin=${1:-bin/precprobe}
if "$bin" --version | grep -q "cuda: not compiled in"; then
    echo "cuda: SKIPPED: CUDA support not compiled in (no nvcc at build time)"
    exit 0
fi
if [ -n "${PRECPROBE_CUDA_KEEP:-}" ]; then
    tmp=$PRECPROBE_CUDA_KEEP; mkdir -p "$tmp"
else
    tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fi
"$bin" run cases/quickstart.toml --device cuda -q --out "$tmp/probe" >/dev/null 2>"$tmp/probe.err"
if [ $? -eq 3 ]; then
    echo "cuda: SKIPPED: $(head -1 "$tmp/probe.err")"
    exit 0
fi
fail=0
for c in quickstart bloom-prescale external-gemm te-cp-small glm-softmax bloom-prescale-attn \
         external-attention adamw-small bf16-training-small fp8-attention fp8-attention-bwd fp8-gemm \
         nvfp4-gemm; do
    "$bin" run "cases/$c.toml" --device cuda --cross-check -q --out "$tmp/$c" >"$tmp/$c.out" 2>"$tmp/$c.err"
    rc=$?
    if [ $rc -ne 0 ]; then
        echo "FAIL cuda $c: exit $rc"; tail -5 "$tmp/$c.err"; fail=1; continue
    fi
    # summary rows: variant tensor against mismatch max-abs max-rel max-error ulp@scale NaN/Inf
    bad=$(awk '$3 == "cpu-emulation" && ($4 != "0.0%" || $5 != "0.0" || $7 != "0.0") { print }' "$tmp/$c/report.txt")
    rows=$(awk '$3 == "cpu-emulation"' "$tmp/$c/report.txt" | wc -l)
    if [ "$rows" -eq 0 ]; then
        echo "FAIL cuda $c: no cpu-emulation comparisons in the report"; fail=1
    elif [ -n "$bad" ]; then
        echo "FAIL cuda $c: the GPU differs from the CPU emulation:"; echo "$bad" | head -10; fail=1
    else
        echo "ok   cuda $c: $rows cpu-emulation comparisons, all identical"
    fi
done
# The range notes on the GPU equal the CPU run's, line for line: fp8 = te's backward (its notes
# come from the CPU's mask-0 binary64 pass, kernels/attention_te_bwd_exact.h: its fp8-te rows), and
# the scaled GEMMs' whole table (block scales at their limits, flushes, the fp32 accumulator: our
# kernels' notes on either device). Each entry: case, the rows compared (a grep pattern).
for entry in "fp8-attention-bwd ^fp8-te" "fp8-gemm ." "nvfp4-gemm ."; do
    set -- $entry
    c=$1 rows=$2
    "$bin" run "cases/$c.toml" --device cuda --ranges -q --no-cache --out "$tmp/rg-$c" >/dev/null 2>&1 &&
        "$bin" run "cases/$c.toml" --device cpu --ranges -q --no-cache --out "$tmp/rc-$c" >/dev/null 2>&1 ||
        { echo "FAIL cuda $c --ranges: exit $?"; fail=1; continue; }
    if ! diff <(sed -n '/^== range diagnostics/,$p' "$tmp/rg-$c/report.txt" | grep -- "$rows") \
              <(sed -n '/^== range diagnostics/,$p' "$tmp/rc-$c/report.txt" | grep -- "$rows") >"$tmp/rg-$c.diff" 2>&1; then
        echo "FAIL cuda $c --ranges: the GPU run's notes differ from the CPU's:"; head -10 "$tmp/rg-$c.diff"; fail=1
    else
        echo "ok   cuda $c --ranges: the same notes"
    fi
done
[ $fail -eq 0 ]
