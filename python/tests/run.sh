#!/usr/bin/env bash
# python/tests/run.sh — the Python bridge's tests (stdlib unittest), run by tools/run-tests.sh
# (so by make test). They run once under each distinct interpreter among $PRECPROBE_PYTHON,
# python3 and /usr/bin/python3 that can import numpy (Debian's python3-numpy); tests needing torch,
# h5py, h5dump or pytest skip with a message where these are absent. With no interpreter that has
# numpy, everything skips with a message and the script passes.
set -u
cd "$(dirname "$0")/../.."
export PRECPROBE_BIN="${PRECPROBE_BIN:-$PWD/bin/precprobe}"   # the binary just built, not one on PATH
export PRECPROBE_CACHE="${PRECPROBE_CACHE:-$PWD/build/test-cache}"
export PYTHONDONTWRITEBYTECODE=1
seen=" "; ran=0; rc=0
for py in ${PRECPROBE_PYTHON:-} python3 /usr/bin/python3; do
    command -v "$py" >/dev/null 2>&1 || continue
    prefix=$("$py" -c 'import sys, numpy; print(sys.prefix)' 2>/dev/null) || {
        echo "python bridge: $py cannot import numpy: skipped with it"; continue; }
    case "$seen" in *" $prefix "*) continue ;; esac
    seen="$seen$prefix "
    ran=$((ran + 1))
    echo "python bridge: tests under $py ($prefix)"
    (cd python/tests && "$py" -m unittest -v test_tensors test_capture test_readers test_assertion test_torch test_capture_optim) 2>&1 || rc=1
done
if [ $ran = 0 ]; then
    echo "python bridge tests skipped: no interpreter here imports numpy (Debian: apt-get install python3-numpy)"
fi
exit $rc
