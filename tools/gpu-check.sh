#!/usr/bin/env bash
# gpu-check.sh — the CUDA backend checked on a machine with nvcc and a GPU, in one call with a
# time budget: build, the CUDA unit tests, the shipped small cases with --device cuda
# --cross-check, AdamW's torch_kernels = "cuda" and "cuda-fused" flavours against torch on CUDA
# bit for bit, and the GPU benchmark. Everything is written under $OUT (default build/gpu-check): one log per step
# and summary.txt, a line per step (PASS, FAIL, SKIP or TIMEOUT, seconds, why).
#   OUT=DIR GPU_CHECK_BUDGET=540 tools/gpu-check.sh        (from anywhere; exit 1 if a step failed)
# GPU_CHECK_SKIP="STEP ...": the steps not to run (e.g. "bench-cuda te-cp-821-cuda" for a short call).
# GPU_CHECK_PREBUILT=1: no make; the binaries and libraries come from tools/gpu-pack.sh, built on a
# machine with MPFR, HDF5, cmocka and cJSON (a lent GPU machine has CUDA but none of those).
# Each step runs under `timeout`, capped at what is left of the budget (seconds, default 540), so
# the whole fits one device call. Without a GPU (or nvcc) it still runs and says, per GPU step,
# that its GPU part was skipped and why. Without an interpreter that imports torch it installs
# torch into a venv (build/gpu-check-venv) from a wheel cache ($PRECPROBE_WHEELS, a folder of .whl
# files, offline) or else from the package index, and skips the torch step, saying why, if it
# cannot.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$root/build/gpu-check}
mkdir -p "$OUT" || exit 2
OUT=$(cd "$OUT" && pwd)  # a relative OUT is the caller's, before the cd below
cd "$root" || exit 2
# the references the cases compute are kept with the build, not in the user's cache
export PRECPROBE_CACHE="${PRECPROBE_CACHE:-$root/build/gpu-check-cache}"
budget=${GPU_CHECK_BUDGET:-540}
deadline=$(($(date +%s) + budget))
jobs=${GPU_CHECK_JOBS:-$(nproc)}
summary=$OUT/summary.txt
: >"$summary"
failed=0; unstarted=0

note() { echo "$*" | tee -a "$summary"; }

# step NAME CAP CMD...: runs CMD under timeout min(CAP, time left), output in $OUT/NAME.log; sets
# rc (124: timed out) and secs. A step with under 10 s left is not started (rc 125).
step() {
    local name=$1 cap=$2; shift 2
    case " ${GPU_CHECK_SKIP:-} " in
    *" $name "*) rc=126; secs=0; echo "skipped: GPU_CHECK_SKIP names it" >"$OUT/$name.log"; return ;;
    esac
    local left=$((deadline - $(date +%s)))
    [ "$cap" -gt "$left" ] && cap=$left
    if [ "$cap" -lt 10 ]; then
        rc=125; secs=0; echo "not started: the budget of ${budget}s is spent" >"$OUT/$name.log"; return
    fi
    local t0; t0=$(date +%s)
    timeout --kill-after=10 "$cap" "$@" >"$OUT/$name.log" 2>&1
    rc=$?
    secs=$(($(date +%s) - t0))
}

# verdict NAME GPU_SKIP_WHY: one summary line from rc; GPU_SKIP_WHY non-empty makes a passing
# GPU step a SKIP (it ran, but its GPU part could not).
verdict() {
    local name=$1 why=${2:-}
    case $rc in
    0) if [ -n "$why" ]; then note "SKIP    $name (${secs}s): GPU part skipped: $why"
       else note "PASS    $name (${secs}s)"; fi ;;
    124 | 137) note "TIMEOUT $name (${secs}s): see $name.log"; failed=1 ;;
    125) note "SKIP    $name: not started, the budget of ${budget}s is spent"; unstarted=$((unstarted + 1)) ;;
    126) note "SKIP    $name: GPU_CHECK_SKIP names it" ;;
    *) note "FAIL    $name (${secs}s, exit $rc): see $name.log"; failed=1 ;;
    esac
}

note "gpu-check: $(date -u +%FT%TZ), budget ${budget}s, $jobs jobs, output in $OUT"
{ nvidia-smi 2>&1 || echo "nvidia-smi: not available"; } >"$OUT/nvidia-smi.log"
note "device: $(nvidia-smi -L 2>/dev/null | head -1 | grep . || echo "none (nvidia-smi finds no GPU)")"

# ---- build ------------------------------------------------------------------------------------
# the CUDA tests and benchmark exist only where the Makefile finds nvcc (PATH, /usr/local/cuda/bin)
cuda_tests=""; cuda_bench=""
if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
    cuda_tests=$(printf "%s\n" tests/test_*_cuda.c | sed 's#^tests/#build/rel/tests/#; s#\.c$##')
    cuda_bench=build/rel/tools/bench_cuda
fi
if [ -n "${GPU_CHECK_PREBUILT:-}" ]; then
    # built elsewhere by tools/gpu-pack.sh (a GPU machine without MPFR, HDF5, ... to build with):
    # its libraries in .gpu/lib, the machine's own CUDA libraries after them
    cuda_tests=$(printf "%s\n" tests/test_*_cuda.c | sed 's#^tests/#build/rel/tests/#; s#\.c$##')
    cuda_bench=build/rel/tools/bench_cuda
    cudalib=$(dirname "$(find / -xdev -name 'libcublas.so.1[0-9]' 2>/dev/null | head -1)" 2>/dev/null)
    export LD_LIBRARY_PATH=$root/.gpu/lib:/usr/local/cuda/lib64${cudalib:+:$cudalib}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    # shellcheck disable=SC2086
    step build 30 bash -c 'for b; do [ -x "$b" ] || { echo "missing $b (run tools/gpu-pack.sh)"; exit 1; }
        ldd "$b" | grep "not found" && exit 1; done; echo prebuilt: all found' - \
        bin/precprobe build/rel/tools/adamw_emulate $cuda_tests $cuda_bench
    verdict build
    note "        prebuilt (GPU_CHECK_PREBUILT), LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
else
    # shellcheck disable=SC2086 # lists of make targets
    step build 300 make --no-print-directory -j"$jobs" bin/precprobe build/rel/tools/adamw_emulate $cuda_tests $cuda_bench
    verdict build
fi
if [ $rc -ne 0 ] && ! [ -x bin/precprobe ]; then
    note "gpu-check: the build failed: nothing else can run"
    exit 1
fi

# ---- is there a GPU? ----------------------------------------------------------------------------
# The reason each GPU step gives when it skips (empty: a GPU is usable through precprobe).
gpu_why=""
if bin/precprobe --version | grep -q "cuda: not compiled in"; then
    gpu_why="CUDA support not compiled in (no nvcc at build time)"
else
    bin/precprobe run cases/quickstart.toml --device cuda -q --out "$OUT/probe" >/dev/null 2>"$OUT/probe.err"
    [ $? -eq 3 ] && gpu_why=$(head -1 "$OUT/probe.err")
fi
note "precprobe: $(bin/precprobe --version); GPU: ${gpu_why:-usable}"

# ---- the CUDA unit tests (each skips without a GPU) and the shipped small cases on the GPU with
# --cross-check against the CPU emulation, side by side: the GPU is shared and the CPU emulations
# they compare against spread over the machine's cores. Each writes its summary lines to its own
# file; they are added to summary.txt in a fixed order once all are done.
[ -n "$cuda_tests" ] || note "SKIP    CUDA unit tests: $gpu_why"
parallel_steps=""
for t in $cuda_tests; do
    n=$(basename "$t")
    parallel_steps="$parallel_steps $n"
    (
        summary=$OUT/$n.summary; : >"$summary"; failed=0
        step "$n" 180 "$t"
        verdict "$n" "$gpu_why" >/dev/null
        # cmocka's closing lines name each skipped or failed test once more: each once
        grep -E '^\[  (FAILED|SKIPPED) +\] [a-z]' "$OUT/$n.log" | awk '!seen[$0]++' | sed 's/^/        /' |
            head -12 >>"$summary"
        echo $failed >"$OUT/$n.failed"
    ) &
done
parallel_steps="$parallel_steps cases-cuda-cross-check"
(
    summary=$OUT/cases-cuda-cross-check.summary; : >"$summary"; failed=0
    step cases-cuda-cross-check 240 env PRECPROBE_CUDA_KEEP="$OUT/cases" bash tests/e2e/cuda.sh bin/precprobe
    verdict cases-cuda-cross-check "$gpu_why" >/dev/null
    grep -E '^(ok|FAIL) ' "$OUT/cases-cuda-cross-check.log" | sed 's/^/        /' >>"$summary"
    echo $failed >"$OUT/cases-cuda-cross-check.failed"
) &
wait
for n in $parallel_steps; do
    tee -a "$summary" <"$OUT/$n.summary"
    [ "$(cat "$OUT/$n.failed" 2>/dev/null)" = 0 ] || failed=1
    rm -f "$OUT/$n.summary" "$OUT/$n.failed"
done
# the attention order band's seeds on the GPU (issue 15): one test of test_attention_cuda
seeds=$(grep -E '^\[ +(OK|FAILED|SKIPPED) +\] cuda_order_seeds' "$OUT/test_attention_cuda.log" 2>/dev/null |
    head -1)
note "        order seeds on the GPU (test_attention_cuda cuda_order_seeds): ${seeds:-not run}"

# ---- AdamW's cuda flavour against torch on CUDA --------------------------------------------------
# A few seconds once torch is importable; an install may take minutes, hence after the above.
py=$(bash tools/find-python.sh numpy torch 2>"$OUT/find-python.log")
install_why=""
venv=$PWD/build/gpu-check-venv  # not under $OUT: torch is gigabytes, $OUT travels back
if [ -z "$py" ]; then
    # a venv that sees the system's packages (numpy), torch from the wheel cache (offline) or from
    # the package index (a machine without network fails fast: --timeout 10 --retries 0)
    base=$(bash tools/find-python.sh numpy 2>/dev/null || command -v python3)
    if [ -n "${PRECPROBE_WHEELS:-}" ]; then
        from="--no-index --find-links $PRECPROBE_WHEELS"; src="the wheel cache $PRECPROBE_WHEELS"
    else
        from="--timeout 10 --retries 0"; src="the package index (no PRECPROBE_WHEELS wheel cache given)"
    fi
    step torch-install 200 bash -c "'$base' -m venv --system-site-packages '$venv' &&
        '$venv/bin/pip' install -q $from torch numpy"
    if [ $rc -eq 0 ]; then
        py=$(PRECPROBE_PYTHON=$venv/bin/python bash tools/find-python.sh numpy torch 2>/dev/null)
        note "torch installed from $src (${secs}s)"
    else
        install_why="; installing it from $src failed (exit $rc, ${secs}s: $(tail -1 \
            "$OUT/torch-install.log"))"
    fi
fi
if [ -z "$py" ]; then
    note "SKIP    adamw-torch-cuda: no torch: $(cat "$OUT/find-python.log")$install_why"
else
    cuda_torch=$("$py" -c 'import torch
print(torch.__version__, "cuda" if torch.cuda.is_available() else "no-cuda")' 2>&1 | tail -1)
    step adamw-torch-cuda 180 "$py" tools/adamw_torch_parity.py
    why=""
    case "$cuda_torch" in
    *no-cuda) why="torch $cuda_torch under $py: torch.cuda.is_available() is False" ;;
    esac
    verdict adamw-torch-cuda "$why"
    grep -E '^(cuda |torch_kernels|adamw_torch_parity)' "$OUT/adamw-torch-cuda.log" | sed 's/^/        /' |
        tee -a "$summary"
fi

# ---- make bench's GPU lines (bench_cuda alone: the CPU benchmarks are make bench's) --------------
if [ -n "$cuda_bench" ]; then
    step bench-cuda 150 "$cuda_bench"
    verdict bench-cuda "$gpu_why"
else
    note "SKIP    bench-cuda: $gpu_why"
fi
[ -f "$OUT/bench-cuda.log" ] && sed 's/^/        /' "$OUT/bench-cuda.log" | head -40 >>"$summary"

# ---- the PR 821 case end to end on the GPU (issue 17's figure, with the stage timings) -----------
if [ -n "$gpu_why" ]; then
    note "SKIP    te-cp-821-cuda: $gpu_why"
else
    step te-cp-821-cuda 150 env PRECPROBE_TIMINGS=1 bin/precprobe run cases/te-cp-821.toml --device cuda \
        --out "$OUT/te-cp-821"
    verdict te-cp-821-cuda
    grep -iE 'timing|wall|cpu-s|stage' "$OUT/te-cp-821-cuda.log" | head -20 | sed 's/^/        /' >>"$summary"
fi

note "gpu-check: $([ $failed = 0 ] && echo "no step failed" || echo "FAILED: see the lines above")$(
    [ $unstarted = 0 ] || echo ", $unstarted step(s) not started (budget)"
    ) ($(($(date +%s) - deadline + budget))s)"
exit $failed
