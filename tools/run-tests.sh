#!/usr/bin/env bash
# run-tests.sh — runs the unit test binaries, the end-to-end CLI suite, then the sanitizer build
# of the unit tests, and prints one closing line "N passed, N failed".
# usage: tools/run-tests.sh [--no-e2e] REL_TESTS... [-- SAN_TESTS...]
# The sanitizer pass runs with PRECPROBE_TEST_MULTIPLIER=0.1 (ASan+UBSan are ~5x slower; the
# exhaustive loops stay exhaustive, only random-sample counts shrink).
set -u
cd "$(dirname "$0")/.."
# The tests' references are cached in the build folder, fresh each run, not in the user's cache.
export PRECPROBE_CACHE="$PWD/build/test-cache"
rm -rf "$PRECPROBE_CACHE"
e2e=1
[ "${1:-}" = "--no-e2e" ] && { e2e=0; shift; }
rel=(); san=(); side=rel
for a in "$@"; do
    if [ "$a" = "--" ]; then side=san; continue; fi
    if [ $side = rel ]; then rel+=("$a"); else san+=("$a"); fi
done
passed=0; failed=0; failures=()
run_one() {  # label, command...
    local label=$1; shift
    local log; log=$(mktemp)
    if "$@" >"$log" 2>&1; then
        passed=$((passed + 1)); echo "PASS $label"
        # the verdict lines and why anything skipped, each once
        grep -E '^\[  (SKIPPED|PASSED|FAILED)|skipped|SKIPPED|^e2e:|png_check|table sorts' "$log" |
            awk '!seen[$0]++' | sed 's/^/    /'
    else
        failed=$((failed + 1)); failures+=("$label"); echo "FAIL $label"; sed 's/^/    /' "$log" | tail -40
    fi
    rm -f "$log"
}
for t in "${rel[@]}"; do run_one "$t" "$t"; done
if [ $e2e = 1 ] && [ -x tests/e2e/run.sh ]; then run_one "tests/e2e/run.sh" tests/e2e/run.sh bin/precprobe; fi
if [ $e2e = 1 ]; then run_one "tools/test-browser.sh (HTML in headless Chromium)" bash tools/test-browser.sh; fi
# A check in Python runs under the interpreter tools/find-python.sh picks for its modules
# (PRECPROBE_PYTHON, else python3 or /usr/bin/python3), or passes as skipped, saying which
# interpreters were tried and what each lacked.
run_py() {  # label, modules (space-separated), script and arguments...
    local label=$1 mods=$2; shift 2
    local py why
    why=$(mktemp)
    # shellcheck disable=SC2086 # mods is a list of module names
    if py=$(bash tools/find-python.sh $mods 2>"$why"); then
        run_one "$label" "$py" "$@"
    else
        run_one "$label" echo "$label: skipped ($(cat "$why"))"
    fi
    rm -f "$why"
}
# AdamW against real torch, bit for bit (on the CPU; on CUDA too where torch sees a GPU).
if [ $e2e = 1 ] && [ -x build/rel/tools/adamw_emulate ]; then
    run_py "tools/adamw_torch_parity.py" "numpy torch" tools/adamw_torch_parity.py
fi
# precprobe cast against ml_dtypes (FP4 packing, NVFP4, per-tensor scaling).
if [ $e2e = 1 ]; then run_py "tools/cast_peer.py" "numpy ml_dtypes" tools/cast_peer.py; fi
# The Python bridge (python/): numpy-only tests, torch ones where importable; skips without numpy.
if [ $e2e = 1 ]; then run_one "python/tests/run.sh (the Python bridge)" bash python/tests/run.sh; fi
for t in "${san[@]}"; do
    run_one "$t (ASan+UBSan)" env PRECPROBE_TEST_MULTIPLIER=0.1 \
        ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 "$t"
done
echo
[ $failed -gt 0 ] && printf 'failed: %s\n' "${failures[@]}"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
